package engine_test

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/engine"
	"github.com/abctl/abctl/internal/testsite"
)

// smtpServer is an SMTP server on loopback that takes one account and
// keeps every message it receives.
type smtpServer struct {
	addr     string
	mu       sync.Mutex
	messages []smtpMessage
}

type smtpMessage struct {
	from string
	to   []string
	data []byte
}

type smtpSession struct {
	s   *smtpServer
	msg smtpMessage
}

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != "robot" || pass != smtpPassword {
			return errors.New("invalid credentials")
		}
		return nil
	}), nil
}
func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error { s.msg.from = from; return nil }
func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.msg.to = append(s.msg.to, to)
	return nil
}
func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.msg.data = b
	s.s.mu.Lock()
	s.s.messages = append(s.s.messages, s.msg)
	s.s.mu.Unlock()
	return nil
}
func (s *smtpSession) Reset()        { s.msg = smtpMessage{} }
func (s *smtpSession) Logout() error { return nil }

func (s *smtpServer) NewSession(*smtp.Conn) (smtp.Session, error) { return &smtpSession{s: s}, nil }

const smtpPassword = "smtp-pa55word-secret"

func startSMTP(t *testing.T) *smtpServer {
	t.Helper()
	s := &smtpServer{}
	srv := smtp.NewServer(s)
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

// TestSendEmail: a send_email block sends through an SMTP server on
// loopback, signing in with a password kept as a credential, a file the
// run made attached; a refused sign-in fails the block with the server's
// answer and never the password.
func TestSendEmail(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	server := startSMTP(t)
	host, portText, _ := net.SplitHostPort(server.addr)
	port, _ := strconv.Atoi(portText)
	e := newEngine(t, engine.Config{Vault: vault{
		"cred_smtp":  &client.SecretCredential{SecretValue: smtpPassword},
		"cred_wrong": &client.SecretCredential{SecretValue: "not-the-password"},
	}})
	def := func(cred string) client.WorkflowDefinition {
		return client.WorkflowDefinition{
			Parameters: []client.Parameter{stringParam("site"), {Key: "smtp_pw", ParameterType: client.ParameterTypeCredential, CredentialID: cred}},
			Blocks: client.Blocks{
				gotoBlock("open", "{{ site }}"+testsite.PageProducts),
				&client.PrintPageBlock{BlockBase: base("print"), CustomFilename: "products", IncludeTimestamp: new(false)},
				&client.SendEmailBlock{BlockBase: base("mail"), Sender: "robot@example.com", Recipients: []string{"ada@example.com, bob@example.com"},
					Subject: "Products of the day", Body: "Attached: {{ print_output.downloaded_files[0].filename }}",
					FileAttachments: []string{"{{ print_output.downloaded_files[0].filename }}"},
					CustomSMTPHost:  host, CustomSMTPPort: port, CustomSMTPUsername: "robot", SMTPPasswordSecretParameterKey: "smtp_pw"},
			},
		}
	}
	j := job(t, def("cred_smtp"), map[string]any{"site": site.URL("")})
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", res.Status, res.FailureReason)
	}
	server.mu.Lock()
	msgs := append([]smtpMessage(nil), server.messages...)
	server.mu.Unlock()
	if len(msgs) != 1 || msgs[0].from != "robot@example.com" || strings.Join(msgs[0].to, ",") != "ada@example.com,bob@example.com" {
		t.Fatalf("the server received %+v", msgs)
	}
	m, err := mail.ReadMessage(bytes.NewReader(msgs[0].data))
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.Get("Subject") != "Products of the day" {
		t.Errorf("subject %q", m.Header.Get("Subject"))
	}
	mt, params, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if mt != "multipart/mixed" {
		t.Fatalf("content type %q", mt)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	var parts []string
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		body, _ := io.ReadAll(p)
		parts = append(parts, p.FileName()+":"+strconv.Itoa(len(body)))
	}
	if len(parts) != 2 || !strings.HasPrefix(parts[1], "products.pdf:") || parts[1] == "products.pdf:0" {
		t.Errorf("parts %v", parts)
	}
	noSecretIn(t, j.Dir, smtpPassword)

	j = job(t, def("cred_wrong"), map[string]any{"site": site.URL("")})
	res = e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, "refused the email") || strings.Contains(res.FailureReason, "not-the-password") {
		t.Errorf("a refused sign-in: %s %s", res.Status, res.FailureReason)
	}
}
