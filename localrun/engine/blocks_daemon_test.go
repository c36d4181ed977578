package engine_test

import (
	"bytes"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/blocks"
)

// TestDaemonFilesMailAndStorage: the file, mail and storage blocks through
// the daemon, as a user drives them: an email_inbox block signs in with a
// credential stored through the API and saves an invoice's attachment,
// file_url_parser reads it, the products page is printed and pdf_parser
// reads the PDF back, and upload_to_s3 stores it in the daemon's bucket.
// The run's answer holds no password.
func TestDaemonFilesMailAndStorage(t *testing.T) {
	needBrowser(t)
	needPdftotext(t)
	site := testsite.Start(t)
	mail := startIMAP(t, false)
	fillInbox(t, mail)
	s3 := startS3(t, []string{"AKIADAEMON"}, "runs")
	e := newEngine(t, engine.Config{
		IMAP: blocks.IMAPConfig{Address: mail.addr, TLS: &tls.Config{RootCAs: mail.roots}},
		S3: blocks.S3Config{Endpoint: s3.url, Region: "us-east-1", PathStyle: true, Bucket: "runs",
			AccessKeyID: "AKIADAEMON", SecretAccessKey: daemonS3Secret},
	})
	c, _ := startDaemon(t, e)
	ctx := t.Context()
	cred, err := c.Credentials.Create(ctx, &client.CredentialRequest{Name: "Invoices mailbox",
		Credential: &client.PasswordCredential{Username: imapUser, Password: imapPassword}})
	if err != nil {
		t.Fatal(err)
	}
	inbox := inboxBlock("mail", "mailbox")
	inbox.MaxResults = 1
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site"),
			{Key: "mailbox", ParameterType: client.ParameterTypeCredential, CredentialID: cred.CredentialID}},
		Blocks: client.Blocks{
			inbox,
			&client.FileURLParserBlock{BlockBase: base("lines"), FileURL: "{{ mail_output.emails[0].attachments[0].filename }}"},
			gotoBlock("open", "{{ site }}"+testsite.PageProducts),
			&client.PrintPageBlock{BlockBase: base("save"), CustomFilename: "products", IncludeTimestamp: new(false)},
			&client.PDFParserBlock{BlockBase: base("read_pdf"), FileURL: "{{ save_output.downloaded_files[0].filename }}"},
			&client.UploadToS3Block{BlockBase: base("store"), Path: "{{ save_output.downloaded_files[0].filename }}"},
		},
	}
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Invoices and products", WorkflowDefinition: def}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{"site": site.URL("")}})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
	}
	var out struct {
		Mail struct {
			Emails []struct{ Subject string } `json:"emails"`
		} `json:"mail_output"`
		Lines   []map[string]string `json:"lines_output"`
		ReadPDF struct {
			Text      string `json:"text"`
			PageCount int    `json:"page_count"`
		} `json:"read_pdf_output"`
		Store []string `json:"store_output"`
	}
	if err := done.DecodeOutput(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Mail.Emails) != 1 || out.Mail.Emails[0].Subject != "Invoice 4" {
		t.Errorf("mail_output %+v, want the newest invoice", out.Mail)
	}
	if len(out.Lines) != 2 || out.Lines[0]["item"] != "paper" || out.Lines[1]["amount"] != "25" {
		t.Errorf("lines_output %v, want the attachment's two rows", out.Lines)
	}
	if out.ReadPDF.PageCount < 1 || !strings.Contains(out.ReadPDF.Text, "Trail Running Shoes") {
		t.Errorf("read_pdf_output: %d pages, text %.200q", out.ReadPDF.PageCount, out.ReadPDF.Text)
	}
	if len(out.Store) != 1 || !strings.HasSuffix(out.Store[0], "/products.pdf") || !bytes.HasPrefix(s3.object(t, out.Store[0]), []byte("%PDF-")) {
		t.Errorf("store_output %v", out.Store)
	}
	if strings.Contains(string(done.Output), imapPassword) || strings.Contains(string(done.Output), daemonS3Secret) {
		t.Error("the run's output holds a secret")
	}
}
