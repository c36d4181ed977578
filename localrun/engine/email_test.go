package engine_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/mailtest"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
)

const smtpPassword = "smtp-pa55word-secret"

// TestSendEmail: a send_email block sends through an SMTP server on
// loopback, signing in with a password kept as a credential, a file the
// run made attached; a refused sign-in fails the block with the server's
// answer and never the password.
func TestSendEmail(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	server, err := mailtest.StartSMTP("127.0.0.1:0", mailtest.WithAccount("robot", smtpPassword))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	host, port := server.HostPort()
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
	msgs := server.Messages()
	if len(msgs) != 1 || msgs[0].From != "robot@example.com" || strings.Join(msgs[0].To, ",") != "ada@example.com,bob@example.com" {
		t.Fatalf("the server received %+v", msgs)
	}
	m, err := msgs[0].Parse()
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.Get("Subject") != "Products of the day" {
		t.Errorf("subject %q", m.Header.Get("Subject"))
	}
	parts := mailtest.Parts(m)
	if len(parts) != 2 || parts[0].ContentType != "text/plain" || !strings.Contains(string(parts[0].Body), "Attached: products.pdf") ||
		parts[1].Filename != "products.pdf" || !bytes.HasPrefix(parts[1].Body, []byte("%PDF-")) {
		t.Errorf("parts %+v", parts)
	}
	noSecretIn(t, j.Dir, smtpPassword)

	j = job(t, def("cred_wrong"), map[string]any{"site": site.URL("")})
	res = e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, "refused the email") || strings.Contains(res.FailureReason, "not-the-password") {
		t.Errorf("a refused sign-in: %s %s", res.Status, res.FailureReason)
	}
}
