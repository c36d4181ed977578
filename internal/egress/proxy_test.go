package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// proxyClient sends its requests through the proxy, as a browser does.
func proxyClient(t *testing.T, p *Proxy, tlsConfig *tls.Config) *http.Client {
	t.Helper()
	u, _ := url.Parse(p.URL())
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: tlsConfig}}
}

func TestProxy(t *testing.T) {
	// "The daemon": a server the policy protects.
	daemon := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "admin token 0123456789")
	}))
	defer daemon.Close()
	// The site the run may reach, which redirects to the daemon.
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-daemon":
			http.Redirect(w, r, daemon.URL+"/admin", http.StatusFound)
		case "/upgrade":
			if r.Header.Get("Upgrade") != "echo" {
				http.Error(w, "want an upgrade", http.StatusBadRequest)
				return
			}
			c, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer c.Close()
			io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
			line, _ := buf.ReadString('\n')
			io.WriteString(c, "echo "+line)
		default:
			io.WriteString(w, "the site at "+r.Host)
		}
	}))
	defer site.Close()
	tlsSite := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure site")
	}))
	defer tlsSite.Close()

	siteAddr := strings.TrimPrefix(site.URL, "http://")
	tlsAddr := strings.TrimPrefix(tlsSite.URL, "https://")
	policy := New(Config{
		Shared: func() bool { return true },
		Allow:  mustPatterns(t, siteAddr, tlsAddr),
	})
	if err := policy.Protect(strings.TrimPrefix(daemon.URL, "http://"), "the daemon's API"); err != nil {
		t.Fatal(err)
	}
	var refusals []string
	g := policy.For("o_b").WithReport(func(e *Error) { refusals = append(refusals, e.Error()) })
	p, err := g.StartProxy("127.0.0.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := proxyClient(t, p, tlsSite.Client().Transport.(*http.Transport).TLSClientConfig)

	get := func(u string) (int, string, http.Header) {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			return 0, err.Error(), nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}

	t.Run("allowed http", func(t *testing.T) {
		status, body, _ := get(site.URL + "/page")
		if status != 200 || body != "the site at "+siteAddr {
			t.Fatalf("got %d %q", status, body)
		}
	})
	t.Run("allowed https through CONNECT", func(t *testing.T) {
		status, body, _ := get(tlsSite.URL + "/")
		if status != 200 || body != "secure site" {
			t.Fatalf("got %d %q", status, body)
		}
	})
	t.Run("the daemon, directly", func(t *testing.T) {
		status, body, h := get(daemon.URL + "/admin")
		if status != http.StatusForbidden || h.Get("X-Abctl-Egress") != "refused" || !strings.Contains(body, "the daemon&#39;s API is never reachable") {
			t.Fatalf("got %d %q", status, body)
		}
		if strings.Contains(body, "0123456789") {
			t.Fatal("the daemon's answer came through")
		}
	})
	t.Run("the daemon, through a redirect from an allowed site", func(t *testing.T) {
		status, body, _ := get(site.URL + "/to-daemon")
		if status != http.StatusForbidden || strings.Contains(body, "0123456789") {
			t.Fatalf("got %d %q", status, body)
		}
	})
	t.Run("loopback not allowed", func(t *testing.T) {
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other") }))
		defer other.Close()
		status, body, _ := get(other.URL)
		if status != http.StatusForbidden || !strings.Contains(body, "loopback address is refused") {
			t.Fatalf("got %d %q", status, body)
		}
		// CONNECT is refused the same way.
		_, err := c.Get(strings.Replace(other.URL, "http://", "https://", 1))
		if err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Fatalf("CONNECT got %v, want Forbidden", err)
		}
	})
	t.Run("the proxy itself", func(t *testing.T) {
		if err := g.CheckURL(context.Background(), p.URL()); err == nil || !strings.Contains(err.Error(), "egress proxy") {
			t.Fatalf("the proxy's own address: %v", err)
		}
	})
	t.Run("upgrade", func(t *testing.T) {
		conn, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, "GET "+site.URL+"/upgrade HTTP/1.1\r\nHost: "+siteAddr+"\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("status %d", resp.StatusCode)
		}
		io.WriteString(conn, "ping\n")
		line, err := br.ReadString('\n')
		if err != nil || line != "echo ping\n" {
			t.Fatalf("got %q, %v", line, err)
		}
	})
	if len(refusals) < 3 {
		t.Errorf("reported %d refusals, want every one: %q", len(refusals), refusals)
	}
	// Closed, the proxy takes no more connections and its port is no
	// longer protected.
	addr := p.Addr()
	p.Close()
	if _, err := http.Get("http://" + addr); err == nil {
		t.Error("the closed proxy still answers")
	}
	if got := policy.Protected(); len(got) != 1 {
		t.Errorf("protected after close: %v", got)
	}
}
