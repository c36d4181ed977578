package engine_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine"
)

// TestFileURLParser: file_url_parser reads CSV, TSV, Excel, JSON, Word
// and text files from their URL, by their name or content, without a
// model; json_schema checks the result; a malformed PDF fails with the
// cause and an archive is refused with a reason (PDF text: pdf_test.go).
func TestFileURLParser(t *testing.T) {
	needBrowser(t)
	needPdftotext(t)
	xlsx := excelize.NewFile()
	xlsx.SetSheetRow("Sheet1", "A1", &[]any{"supplier", "amount"})
	xlsx.SetSheetRow("Sheet1", "A2", &[]any{"Northwind", 120.5})
	xlsx.SetSheetRow("Sheet1", "A3", &[]any{"Contoso", 80})
	var xb bytes.Buffer
	if err := xlsx.Write(&xb); err != nil {
		t.Fatal(err)
	}
	var db bytes.Buffer
	zw := zip.NewWriter(&db)
	w, _ := zw.Create("word/document.xml")
	w.Write([]byte(`<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
		`<w:p><w:r><w:t>Invoice 42</w:t></w:r></w:p><w:p><w:r><w:t xml:space="preserve">Total: </w:t></w:r><w:r><w:t>120.50 EUR</w:t></w:r></w:p></w:body></w:document>`))
	zw.Close()
	files := map[string][]byte{
		"/invoices.csv": []byte("\ufeffsupplier,amount\nNorthwind,120.50\n\"Contoso, Ltd\",80\n"),
		"/invoices.tsv": []byte("supplier\tamount\nNorthwind\t120.50\n"),
		"/book.xlsx":    xb.Bytes(),
		"/data":         []byte(`{"total": 2, "ok": true}`), // no extension: JSON by its content
		"/letter.docx":  db.Bytes(),
		"/notes.txt":    []byte("call back on Monday"),
		"/scan.pdf":     []byte("%PDF-1.7 ..."),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	e := newEngine(t, engine.Config{})
	parse := func(path, typ, schema string) client.Block {
		b := &client.FileURLParserBlock{BlockBase: base("parse"), FileURL: srv.URL + path, FileType: typ}
		if schema != "" {
			b.JSONSchema = json.RawMessage(schema)
		}
		return b
	}
	for _, tc := range []struct {
		name  string
		block client.Block
		want  string
	}{
		{"csv", parse("/invoices.csv", "", ""), `[{"amount":"120.50","supplier":"Northwind"},{"amount":"80","supplier":"Contoso, Ltd"}]`},
		{"tsv", parse("/invoices.tsv", "", ""), `[{"amount":"120.50","supplier":"Northwind"}]`},
		{"excel", parse("/book.xlsx", "excel", ""), `[{"amount":"120.5","supplier":"Northwind"},{"amount":"80","supplier":"Contoso"}]`},
		{"json by content", parse("/data", "", `{"type":"object","required":["total"]}`), `{"ok":true,"total":2}`},
		{"docx", parse("/letter.docx", "", ""), `{"text":"Invoice 42\nTotal: 120.50 EUR"}`},
		{"text", parse("/notes.txt", "", ""), `{"text":"call back on Monday"}`},
	} {
		def := client.WorkflowDefinition{Blocks: client.Blocks{tc.block}}
		res := e.Execute(t.Context(), job(t, def, nil), &progress{})
		if res.Status != client.RunStatusCompleted {
			t.Errorf("%s: %s %s", tc.name, res.Status, res.FailureReason)
			continue
		}
		got, _ := json.Marshal(outputOf(t, res)["parse_output"])
		if string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name  string
		block client.Block
		want  string
	}{
		{"a malformed PDF found by content", parse("/scan.pdf", "", ""), "the file is not a readable PDF"},
		{"a malformed PDF named", parse("/scan.pdf", "pdf", ""), "the file is not a readable PDF"},
		{"an archive named", parse("/scan.pdf", "zip", ""), "file_type zip is not read by this daemon's engine yet"},
		{"a schema not matched", parse("/invoices.csv", "", `{"type":"object"}`), "does not match json_schema"},
		{"a missing file", parse("/nothing.csv", "", ""), "404"},
	} {
		res := e.Execute(t.Context(), job(t, client.WorkflowDefinition{Blocks: client.Blocks{tc.block}}, nil), &progress{})
		if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, tc.want) {
			t.Errorf("%s: %s %s, want a failure with %q", tc.name, res.Status, res.FailureReason, tc.want)
		}
	}
}
