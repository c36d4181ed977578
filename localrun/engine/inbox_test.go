package engine_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/blocks"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

const (
	imapUser     = "robot@example.com"
	imapPassword = "imap-pa55word-secret"
)

// imapServer is an in-memory IMAP server on loopback: TLS from the start,
// or STARTTLS, with a certificate for 127.0.0.1 that roots trusts.
type imapServer struct {
	addr  string
	user  *imapmemserver.User
	roots *x509.CertPool
}

func startIMAP(t *testing.T, startTLS bool) *imapServer {
	t.Helper()
	cert, roots := loopbackCert(t)
	mem := imapmemserver.New()
	user := imapmemserver.NewUser(imapUser, imapPassword)
	if err := user.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	mem.AddUser(user)
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}}
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:      imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
		TLSConfig: tlsConfig,
		Logger:    discardLogger{},
	})
	var ln net.Listener
	var err error
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
	return &imapServer{addr: ln.Addr().String(), user: user, roots: roots}
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// deliver puts a message in the inbox, received at the given time.
func (s *imapServer) deliver(t *testing.T, received time.Time, raw string) {
	t.Helper()
	raw = strings.ReplaceAll(raw, "\n", "\r\n")
	if _, err := s.user.Append("INBOX", literal{strings.NewReader(raw), int64(len(raw))}, &imap.AppendOptions{Time: received}); err != nil {
		t.Fatal(err)
	}
}

type literal struct {
	*strings.Reader
	n int64
}

func (l literal) Size() int64 { return l.n }

// loopbackCert makes a certificate for 127.0.0.1 and the pool that trusts
// it.
func loopbackCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "imap test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(parsed)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, roots
}

func mailMessage(from, subject string, date time.Time, body string) string {
	return fmt.Sprintf("From: %s\nTo: robot@example.com\nSubject: %s\nDate: %s\nMessage-Id: <%d@example.com>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n%s\n",
		from, subject, date.Format(time.RFC1123Z), date.UnixNano(), body)
}

// fillInbox delivers three invoices from billing (the newest with a CSV
// attached, the second in HTML only), one from someone else, one of
// another subject and one invoice too old for newer_than_days 30.
func fillInbox(t *testing.T, s *imapServer) {
	now := time.Now()
	at := func(d time.Duration) time.Time { return now.Add(-d) }
	s.deliver(t, at(60*24*time.Hour), mailMessage("Billing <billing@shop.example>", "Invoice 1", at(60*24*time.Hour), "Amount: 10 EUR"))
	s.deliver(t, at(5*time.Hour), mailMessage("Billing <billing@shop.example>", "Invoice 2", at(5*time.Hour), "Amount: 20 EUR"))
	s.deliver(t, at(4*time.Hour), mailMessage("Eve <eve@elsewhere.example>", "Invoice 9", at(4*time.Hour), "Pay me"))
	s.deliver(t, at(3*time.Hour), fmt.Sprintf("From: Billing <billing@shop.example>\nTo: robot@example.com\nSubject: Invoice 3\nDate: %s\nMIME-Version: 1.0\nContent-Type: text/html; charset=utf-8\n\n<html><body><p>Amount: <b>30&nbsp;EUR</b></p><script>x()</script></body></html>\n", at(3*time.Hour).Format(time.RFC1123Z)))
	s.deliver(t, at(2*time.Hour), mailMessage("Billing <billing@shop.example>", "Newsletter", at(2*time.Hour), "News"))
	s.deliver(t, at(time.Hour), fmt.Sprintf(`From: Billing <billing@shop.example>
To: Robot <robot@example.com>, boss@example.com
Subject: Invoice 4
Date: %s
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b1"

--b1
Content-Type: text/plain; charset=utf-8

Amount: 40 EUR, details attached.
--b1
Content-Type: text/csv
Content-Disposition: attachment; filename="invoice-4.csv"

item,amount
paper,15
ink,25
--b1--
`, at(time.Hour).Format(time.RFC1123Z)))
}

func inboxBlock(label, cred string) *client.EmailInboxBlock {
	return &client.EmailInboxBlock{BlockBase: base(label), EmailClient: "gmail", CredentialID: cred,
		Sender: "billing@shop.example", Subject: "Invoice", NewerThanDays: new(30), MaxResults: 2}
}

// TestEmailInbox: an email_inbox block signs in with a credential over
// TLS, finds the newest invoices from billing of the last 30 days, and
// outputs them with their text and attachments, saved as files of the run
// that a later block parses. Nothing of the run holds the password.
func TestEmailInbox(t *testing.T) {
	needBrowser(t)
	server := startIMAP(t, false)
	fillInbox(t, server)
	e := newEngine(t, engine.Config{
		IMAP:  blocks.IMAPConfig{Address: server.addr, TLS: &tls.Config{RootCAs: server.roots}},
		Vault: vault{"cred_mail": &client.PasswordCredential{Username: imapUser, Password: imapPassword}},
	})
	b := inboxBlock("mail", "cred_mail")
	b.Sender, b.MaxResults = "{{ supplier }}", 5
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("supplier")},
		Blocks: client.Blocks{
			b,
			&client.FileURLParserBlock{BlockBase: base("lines"), FileURL: "{{ mail_output.emails[0].attachments[0].filename }}"},
		},
	}
	j := job(t, def, map[string]any{"supplier": "billing@shop.example"})
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", res.Status, res.FailureReason)
	}
	out := outputOf(t, res)
	mail, _ := out["mail_output"].(map[string]any)
	emails, _ := mail["emails"].([]any)
	var subjects []string
	for _, m := range emails {
		subjects = append(subjects, m.(map[string]any)["subject"].(string))
	}
	// Not Invoice 1 (60 days old), 9 (from Eve) or the newsletter.
	if strings.Join(subjects, ", ") != "Invoice 4, Invoice 3, Invoice 2" || mail["count"] != 3.0 || mail["folder"] != "INBOX" {
		t.Fatalf("the block read %v: %v", subjects, mail)
	}
	first, second := emails[0].(map[string]any), emails[1].(map[string]any)
	if first["from"] != `"Billing" <billing@shop.example>` && first["from"] != "Billing <billing@shop.example>" {
		t.Errorf("from %v", first["from"])
	}
	if to := fmt.Sprint(first["to"]); !strings.Contains(to, "robot@example.com") || !strings.Contains(to, "boss@example.com") {
		t.Errorf("to %v", first["to"])
	}
	if first["body"] != "Amount: 40 EUR, details attached." || second["body"] != "Amount: 30 EUR" {
		t.Errorf("bodies %q, %q", first["body"], second["body"])
	}
	if d, _ := first["date"].(string); d == "" {
		t.Errorf("no date: %v", first)
	}
	atts, _ := first["attachments"].([]any)
	if len(atts) != 1 || atts[0].(map[string]any)["filename"] != "invoice-4.csv" || atts[0].(map[string]any)["content_type"] != "text/csv" {
		t.Errorf("attachments %v", first["attachments"])
	}
	rows, _ := out["lines_output"].([]any)
	if len(rows) != 2 || rows[1].(map[string]any)["amount"] != "25" {
		t.Errorf("the saved attachment parses as %v", out["lines_output"])
	}
	noSecretIn(t, j.Dir, imapPassword)
	if strings.Contains(string(res.Output), imapPassword) {
		t.Error("the output holds the password")
	}
}

// TestEmailInboxStartTLSAndParameter: the credential as a credential
// parameter of the agent, STARTTLS, include_body false, and a prompt the
// model answers about the messages.
func TestEmailInboxStartTLSAndParameter(t *testing.T) {
	needBrowser(t)
	server := startIMAP(t, true)
	fillInbox(t, server)
	srv := llmtest.New(t, llmtest.Step{Kind: llm.KindPrompt, Match: `(?s)How much is due.*Invoice 4.*Invoice 3`, Reply: llmtest.Text("70 EUR")})
	e := modelEngine(t, srv, engine.Config{
		IMAP:  blocks.IMAPConfig{Address: server.addr, StartTLS: true, TLS: &tls.Config{RootCAs: server.roots}},
		Vault: vault{"cred_mail": &client.PasswordCredential{Username: imapUser, Password: imapPassword}},
	})
	b := inboxBlock("mail", "{{ mailbox }}")
	b.IncludeBody, b.Prompt = new(false), "How much is due?"
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{{Key: "mailbox", ParameterType: client.ParameterTypeCredential, CredentialID: "cred_mail"}},
		Blocks:     client.Blocks{b},
	}
	j := job(t, def, nil)
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", res.Status, res.FailureReason)
	}
	mail, _ := outputOf(t, res)["mail_output"].(map[string]any)
	emails, _ := mail["emails"].([]any)
	if len(emails) != 2 || emails[0].(map[string]any)["subject"] != "Invoice 4" || mail["llm_response"] != "70 EUR" {
		t.Fatalf("mail_output %v", mail)
	}
	if _, ok := emails[0].(map[string]any)["body"]; ok {
		t.Errorf("include_body false, and the output has a body: %v", emails[0])
	}
	for _, c := range srv.Calls() {
		if strings.Contains(c.LastUserText(), imapPassword) {
			t.Error("the model was shown the password")
		}
	}
	noSecretIn(t, j.Dir, imapPassword)
}

// TestEmailInboxFailures: a wrong password, a server that does not
// answer, a folder that does not exist and a prompt without a model each
// fail the run with a reason naming the block and the cause, never the
// password.
func TestEmailInboxFailures(t *testing.T) {
	needBrowser(t)
	server := startIMAP(t, false)
	fillInbox(t, server)
	const wrong = "not-the-imap-password"
	creds := vault{
		"cred_mail":  &client.PasswordCredential{Username: imapUser, Password: imapPassword},
		"cred_wrong": &client.PasswordCredential{Username: imapUser, Password: wrong},
	}
	good := newEngine(t, engine.Config{Vault: creds, IMAP: blocks.IMAPConfig{Address: server.addr, TLS: &tls.Config{RootCAs: server.roots}}})
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	unreachable := newEngine(t, engine.Config{Vault: creds, IMAP: blocks.IMAPConfig{Address: closedAddr}})

	run := func(e *engine.Engine, b *client.EmailInboxBlock) (client.RunStatus, string, string) {
		j := job(t, client.WorkflowDefinition{Blocks: client.Blocks{b}}, nil)
		res := e.Execute(t.Context(), j, &progress{})
		t.Log(res.FailureReason)
		if !strings.HasPrefix(res.FailureReason, "The agent cannot run") {
			noSecretIn(t, j.Dir, wrong, imapPassword)
		}
		return res.Status, res.FailureReason, j.Dir
	}
	status, reason, _ := run(good, inboxBlock("mail", "cred_wrong"))
	if status != client.RunStatusFailed || !strings.Contains(reason, `Block "mail" (email_inbox) failed`) ||
		!strings.Contains(reason, "authentication failed") || strings.Contains(reason, wrong) {
		t.Errorf("a wrong password: %s: %s", status, reason)
	}
	status, reason, _ = run(unreachable, inboxBlock("mail", "cred_mail"))
	if status != client.RunStatusFailed || !strings.Contains(reason, `Block "mail" (email_inbox) failed`) ||
		!strings.Contains(reason, "cannot reach the IMAP server "+closedAddr) {
		t.Errorf("an unreachable server: %s: %s", status, reason)
	}
	folder := inboxBlock("mail", "cred_mail")
	folder.Folder = "Archive/2019"
	status, reason, _ = run(good, folder)
	if status != client.RunStatusFailed || !strings.Contains(reason, `the folder "Archive/2019"`) {
		t.Errorf("a missing folder: %s: %s", status, reason)
	}
	prompt := inboxBlock("mail", "cred_mail")
	prompt.Prompt = "Summarize"
	status, reason, _ = run(good, prompt)
	if status != client.RunStatusFailed || !strings.HasPrefix(reason, "The agent cannot run: ") ||
		!strings.Contains(reason, `block "mail" (email_inbox) has a prompt, which needs a language model`) {
		t.Errorf("a prompt without a model: %s: %s", status, reason)
	}
	unknown := inboxBlock("mail", "cred_nobody")
	status, reason, _ = run(good, unknown)
	if status != client.RunStatusFailed || !strings.Contains(reason, "cred_nobody") {
		t.Errorf("an unknown credential: %s: %s", status, reason)
	}
}
