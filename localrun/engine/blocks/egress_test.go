package blocks

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"golang.org/x/crypto/ssh"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/internal/egress/egresstest"
	"github.com/abctl/abctl/internal/mailtest"
	"github.com/abctl/abctl/internal/sftptest"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// sharedGuard is the guard of an organization of a daemon serving
// several, whose API listens at apiAddr (a test server playing it); allow
// are the operator's --egress-allow patterns.
func sharedGuard(t *testing.T, apiAddr string, allow ...string) *egress.Guard {
	return egresstest.Shared(t, allow, apiAddr, "the daemon's API").For("o_1")
}

// singleGuard is the guard of a daemon serving one organization, which
// reaches loopback.
func singleGuard() *egress.Guard { return egresstest.Single().For("o_1") }

// wantRefusal checks that err names the target, the address and the rule.
func wantRefusal(t *testing.T, what string, err error, target, addr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: not refused", what)
	}
	t.Logf("%s: %v", what, err)
	for _, want := range []string{"refused to reach " + target, addr, "the daemon's API is never reachable by a run"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not say %q", what, err, want)
		}
	}
}

// netInterpreter is an interpreter of def, with no browser, whose blocks
// connect through guard.
func netInterpreter(def *client.WorkflowDefinition, guard *egress.Guard) *Interpreter {
	logger := slog.New(slog.DiscardHandler)
	in := &Interpreter{
		env: Env{Logger: logger, HTTP: &http.Client{}}, steps: steplog.New(noProgress{}, logger, 0),
		def: def, params: map[string]any{}, outputs: newOutputs(), labels: blockLabels(def.Blocks), guard: guard,
	}
	giveFamilies(in)
	return in
}

// TestHTTPRequestThroughGuard: an http_request block to the daemon's API
// fails naming the URL (without its query), the address and the rule, and
// so does one redirected there by a server the operator allows; a single
// organization's daemon reaches the same loopback server.
func TestHTTPRequestThroughGuard(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"tabs": ["another organization's"]}`))
	}))
	defer api.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, api.URL+"/json/list", http.StatusFound)
	}))
	defer other.Close()
	apiAddr, otherAddr := strings.TrimPrefix(api.URL, "http://"), strings.TrimPrefix(other.URL, "http://")
	get := func(u string) *client.WorkflowDefinition {
		return &client.WorkflowDefinition{Blocks: client.Blocks{&client.HTTPRequestBlock{BlockBase: client.BlockBase{Label: "get"}, URL: u}}}
	}

	shared := sharedGuard(t, apiAddr, otherAddr)
	in := netInterpreter(get(api.URL+"/json/list?key=s3cret"), shared)
	fail := in.Execute(t.Context())
	if fail == nil {
		t.Fatal("the daemon's API was reached")
	}
	wantRefusal(t, "direct", errors.New(fail.Reason()), api.URL+"/json/list", "("+apiAddr+")")
	if strings.Contains(fail.Reason(), "s3cret") {
		t.Errorf("%q shows the query", fail.Reason())
	}
	// The step log says so too.
	dir := t.TempDir()
	if err := in.steps.Write(dir, "steps.json"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "steps.json")); !strings.Contains(string(b), "the daemon's API is never reachable by a run") {
		t.Errorf("the step log does not hold the refusal: %s", b)
	}
	fail = netInterpreter(get(other.URL+"/start"), shared).Execute(t.Context())
	if fail == nil {
		t.Fatal("the redirect to the daemon's API was followed")
	}
	wantRefusal(t, "redirect", errors.New(fail.Reason()), api.URL+"/json/list", apiAddr)

	in = netInterpreter(get(api.URL+"/json/list"), singleGuard())
	if fail := in.Execute(t.Context()); fail != nil {
		t.Fatalf("a single organization's daemon: %s", fail.Reason())
	}
	if out := blockOutput(t, in, "get"); out["status_code"] != 200.0 {
		t.Errorf("output %v", out)
	}
}

// TestSendMailThroughGuard: an SMTP server a block names is refused on the
// daemon's address, reached by a single organization's daemon.
func TestSendMailThroughGuard(t *testing.T) {
	srv, err := mailtest.StartSMTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	host, _ := srv.HostPort()
	msg := composeMail("robot@example.com", []string{"ada@example.com"}, "Hi", "Hello", nil, time.Now())
	err = sendMail(t.Context(), sharedGuard(t, srv.Addr()), srv.Addr(), host, nil, "robot@example.com", []string{"ada@example.com"}, msg)
	wantRefusal(t, "smtp", err, srv.Addr(), srv.Addr())
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("%d messages sent", n)
	}
	if err := sendMail(t.Context(), singleGuard(), srv.Addr(), host, nil, "robot@example.com", []string{"ada@example.com"}, msg); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Errorf("%d messages sent, want 1", n)
	}
}

// TestSFTPThroughGuard: an SFTP server a block names is refused on the
// daemon's address, reached by a single organization's daemon.
func TestSFTPThroughGuard(t *testing.T) {
	srv, err := sftptest.Start("127.0.0.1:0", "robot", "pw")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	host, port := srv.HostPort()
	file := filepath.Join(t.TempDir(), "report.csv")
	if err := os.WriteFile(file, []byte("a,b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := sftpTarget{host: host, port: port, user: "robot", password: "pw", dir: "/up",
		hostKey: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(srv.HostKey())))}
	target.guard = sharedGuard(t, srv.Addr())
	_, err = sftpPut(t.Context(), target, []string{file})
	wantRefusal(t, "sftp", err, srv.Addr(), srv.Addr())
	if srv.SignIns() != 0 {
		t.Errorf("%d sign-ins", srv.SignIns())
	}
	target.guard = singleGuard()
	if _, err := sftpPut(t.Context(), target, []string{file}); err != nil {
		t.Fatal(err)
	}
	if b, err := srv.ReadFile("/up/report.csv"); err != nil || string(b) != "a,b\n" {
		t.Errorf("the server holds %q (%v)", b, err)
	}
}

// TestIMAPThroughGuard: the IMAP server of a block's provider is refused
// on the daemon's address, reached by a single organization's daemon (TLS
// and STARTTLS).
func TestIMAPThroughGuard(t *testing.T) {
	for _, startTLS := range []bool{false, true} {
		addr, roots := startIMAPServer(t, startTLS)
		acct := mailAccount{address: addr, startTLS: startTLS, tls: &tls.Config{RootCAs: roots}, username: "robot@example.com", password: "pw"}
		acct.guard = sharedGuard(t, addr)
		_, err := readMailbox(t.Context(), acct, mailQuery{folder: "INBOX", max: 5})
		wantRefusal(t, "imap", err, addr, addr)
		acct.guard = singleGuard()
		if _, err := readMailbox(t.Context(), acct, mailQuery{folder: "INBOX", max: 5}); err != nil {
			t.Fatalf("startTLS %v: %v", startTLS, err)
		}
	}
}

func startIMAPServer(t *testing.T, startTLS bool) (string, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "imap test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	parsed, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(parsed)
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	mem := imapmemserver.New()
	user := imapmemserver.NewUser("robot@example.com", "pw")
	if err := user.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	mem.AddUser(user)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
		TLSConfig:    tlsConfig,
		InsecureAuth: false,
	})
	var ln net.Listener
	if startTLS {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	} else {
		ln, err = tls.Listen("tcp", "127.0.0.1:0", tlsConfig)
	}
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), roots
}
