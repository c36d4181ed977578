package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine"
)

// needPdftotext skips the test when pdftotext is missing (CI installs
// poppler-utils).
func needPdftotext(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("skipped: pdftotext is missing (apt-get install poppler-utils)")
	}
}

// textPDF writes a PDF with one page a text, a line a line of the text,
// in Helvetica.
func textPDF(pages ...string) []byte {
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	b.WriteString("%PDF-1.4\n")
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	for i, text := range pages {
		var content strings.Builder
		content.WriteString("BT /F1 14 Tf 72 760 Td 18 TL\n")
		for _, line := range strings.Split(text, "\n") {
			r := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`)
			fmt.Fprintf(&content, "(%s) Tj T*\n", r.Replace(line))
		}
		content.WriteString("ET")
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

// serveFiles serves files by their path on loopback.
func serveFiles(t *testing.T, files map[string][]byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestPDFParser: pdf_parser and file_url_parser read a PDF's text, page by
// page, without a model; a malformed PDF, a missing file and a file_url
// that is neither a URL nor a run's file fail the run naming the block and
// the cause.
func TestPDFParser(t *testing.T) {
	needBrowser(t)
	needPdftotext(t)
	srv := serveFiles(t, map[string][]byte{
		"/invoice.pdf": textPDF("Invoice 42\nNorthwind Traders", "Total: 120.50 EUR"),
		"/scan":        textPDF("Found by its content"),
		"/broken.pdf":  []byte("%PDF-1.7\nthis is not a PDF at all"),
	})
	e := newEngine(t, engine.Config{})
	run := func(b client.Block) (client.RunStatus, string, any) {
		res := e.Execute(t.Context(), job(t, client.WorkflowDefinition{Blocks: client.Blocks{b}}, nil), &progress{})
		if res.Status != client.RunStatusCompleted {
			return res.Status, res.FailureReason, nil
		}
		return res.Status, "", outputOf(t, res)["parse_output"]
	}
	for _, tc := range []struct {
		name  string
		block client.Block
		want  string
	}{
		{"pdf_parser", &client.PDFParserBlock{BlockBase: base("parse"), FileURL: srv.URL + "/invoice.pdf"},
			`{"page_count":2,"text":"Invoice 42\nNorthwind Traders\n\nTotal: 120.50 EUR"}`},
		{"file_url_parser by content", &client.FileURLParserBlock{BlockBase: base("parse"), FileURL: srv.URL + "/scan"},
			`{"page_count":1,"text":"Found by its content"}`},
		{"pdf_parser with a schema matched", &client.PDFParserBlock{BlockBase: base("parse"), FileURL: srv.URL + "/invoice.pdf",
			JSONSchema: json.RawMessage(`{"type":"object","required":["text"]}`)},
			`{"page_count":2,"text":"Invoice 42\nNorthwind Traders\n\nTotal: 120.50 EUR"}`},
	} {
		status, reason, out := run(tc.block)
		if status != client.RunStatusCompleted {
			t.Errorf("%s: %s %s", tc.name, status, reason)
			continue
		}
		if got, _ := json.Marshal(out); string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name  string
		block client.Block
		want  string
	}{
		{"a malformed PDF", &client.PDFParserBlock{BlockBase: base("parse"), FileURL: srv.URL + "/broken.pdf"},
			`Block "parse" (pdf_parser) failed: the file is not a readable PDF (pdftotext: `},
		{"a malformed PDF found by its name", &client.FileURLParserBlock{BlockBase: base("parse"), FileURL: srv.URL + "/broken.pdf"},
			`Block "parse" (file_url_parser) failed: the file is not a readable PDF`},
		{"a missing file", &client.PDFParserBlock{BlockBase: base("parse"), FileURL: srv.URL + "/nothing.pdf"},
			`Block "parse" (pdf_parser) failed: The file_url answered HTTP 404`},
		{"neither a URL nor a run's file", &client.PDFParserBlock{BlockBase: base("parse"), FileURL: "report.pdf"},
			`file_url "report.pdf" is neither an http(s) URL nor the name of a file this run downloaded or saved`},
		{"a schema not matched", &client.PDFParserBlock{BlockBase: base("parse"), FileURL: srv.URL + "/invoice.pdf",
			JSONSchema: json.RawMessage(`{"type":"object","required":["invoice_number"]}`)}, "does not match json_schema"},
		{"no file_url", &client.PDFParserBlock{BlockBase: base("parse")}, `block "parse" (pdf_parser) has no file_url`},
	} {
		status, reason, _ := run(tc.block)
		if status != client.RunStatusFailed || !strings.Contains(reason, tc.want) {
			t.Errorf("%s: %s %q, want a failure with %q", tc.name, status, reason, tc.want)
		}
	}
}
