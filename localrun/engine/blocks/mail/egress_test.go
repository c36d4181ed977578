package mail

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/internal/egress/egresstest"
	"github.com/abctl/abctl/internal/mailtest"
)

// sharedGuard is the guard of an organization of a daemon serving
// several, whose API listens at apiAddr (a test server playing it).
func sharedGuard(t *testing.T, apiAddr string) *egress.Guard {
	return egresstest.Shared(t, nil, apiAddr, "the daemon's API").For("o_1")
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

// TestSendMailThroughGuard: an SMTP server a block names is refused on the
// daemon's address, reached by a single organization's daemon.
func TestSendMailThroughGuard(t *testing.T) {
	srv, err := mailtest.StartSMTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	host, _ := srv.HostPort()
	msg := Compose("robot@example.com", []string{"ada@example.com"}, "Hi", "Hello", nil, time.Now())
	err = Send(t.Context(), sharedGuard(t, srv.Addr()).DialContext, srv.Addr(), host, nil, "robot@example.com", []string{"ada@example.com"}, msg)
	wantRefusal(t, "smtp", err, srv.Addr(), srv.Addr())
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("%d messages sent", n)
	}
	if err := Send(t.Context(), singleGuard().DialContext, srv.Addr(), host, nil, "robot@example.com", []string{"ada@example.com"}, msg); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Errorf("%d messages sent, want 1", n)
	}
}

// TestIMAPThroughGuard: the IMAP server of a block's provider is refused
// on the daemon's address, reached by a single organization's daemon (TLS
// and STARTTLS).
func TestIMAPThroughGuard(t *testing.T) {
	for _, startTLS := range []bool{false, true} {
		addr, roots := startIMAPServer(t, startTLS)
		acct := Account{Address: addr, StartTLS: startTLS, TLS: &tls.Config{RootCAs: roots}, Username: "robot@example.com", Password: "pw"}
		acct.Dial = sharedGuard(t, addr).DialContext
		_, err := ReadMailbox(t.Context(), acct, Query{Folder: "INBOX", Max: 5})
		wantRefusal(t, "imap", err, addr, addr)
		acct.Dial = singleGuard().DialContext
		if _, err := ReadMailbox(t.Context(), acct, Query{Folder: "INBOX", Max: 5}); err != nil {
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
