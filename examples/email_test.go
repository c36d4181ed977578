package examples

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/mailtest"
)

// testEmailReport: the email example saves the page as a PDF and sends it,
// attached, through the SMTP server its parameters name (one the test
// starts, where the header's command says 2525), without the model.
func testEmailReport(t *testing.T, e *exampleEnv, file string, cmds []string) {
	p := params(t, cmds[0])
	if p["smtp_port"] != "2525" || p["to"] == "" {
		t.Fatalf("the command gives no smtp_port=2525 and to: %s", cmds[0])
	}
	server, err := mailtest.StartSMTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	_, port := server.HostPort()
	cmd := strings.Replace(cmds[0], "smtp_port=2525", fmt.Sprintf("smtp_port=%d", port), 1)
	before := len(e.model.Calls())
	res, r := e.abctlRun(t, cmd)
	if res.code != 0 || r.Status != client.RunStatusCompleted {
		t.Fatalf("run %s: %s\n%s", r.Status, r.GetFailureReason(), res)
	}
	if n := len(e.model.Calls()) - before; n != 0 {
		t.Errorf("the model-free example called the model %d times", n)
	}
	msgs := server.Messages()
	if len(msgs) != 1 || strings.Join(msgs[0].To, ",") != p["to"] {
		t.Fatalf("the server received %d messages: %+v", len(msgs), msgs)
	}
	m, err := msgs[0].Parse()
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Header.Get("Subject"); got != "The page /products.html, as of today" {
		t.Errorf("subject %q", got)
	}
	parts := mailtest.Parts(m)
	if len(parts) != 2 || !strings.Contains(string(parts[0].Body), "Attached: products.pdf, saved from "+e.site.URL+"/products.html") ||
		parts[1].Filename != "products.pdf" || !bytes.HasPrefix(parts[1].Body, []byte("%PDF-")) {
		t.Errorf("the message's parts: %+v", parts)
	}
	// The attachment is the file the run kept.
	for _, f := range r.DownloadedFiles {
		if f.Filename != nil && *f.Filename == "products.pdf" && !bytes.Equal(fetch(t, f.URL), parts[len(parts)-1].Body) {
			t.Error("the attachment differs from the run's products.pdf")
		}
	}
}
