package engine_test

// pdf_fill and split_pdf, which use the PDF library (pdfcpu, see
// engine/blocks/pdflib.go).

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// membershipForm is a one-page form: a text field (full_name, tooltip
// "Full name"), a checkbox (newsletter) and radio buttons (plan: basic or
// pro).
const membershipForm = `{"paper":"A4P","origin":"LowerLeft",
"fonts":{"label":{"name":"Helvetica","size":12},"input":{"name":"Helvetica","size":12}},
"pages":{"1":{"content":{
 "text":[{"value":"Membership form","pos":[50,780],"font":{"name":"Helvetica","size":16}}],
 "textfield":[{"id":"full_name","tip":"Full name","pos":[150,700],"width":200,"label":{"value":"Name:","width":80,"gap":10,"pos":"left","font":{"name":"$label"}}}],
 "checkbox":[{"id":"newsletter","pos":[150,660],"width":12,"label":{"value":"Newsletter","width":80,"gap":10,"pos":"left","font":{"name":"$label"}}}],
 "radiobuttongroup":[{"id":"plan","pos":[150,620],"width":12,"orientation":"hor",
   "buttons":{"values":["basic","pro"],"label":{"value":"plan","width":50,"gap":5,"pos":"right","font":{"name":"$label"}}},
   "label":{"value":"Plan:","width":80,"gap":10,"pos":"left","font":{"name":"$label"}}}]
}}}}`

func init() { api.DisableConfigDir() }

func formPDF(t *testing.T) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := api.Create(nil, strings.NewReader(membershipForm), &out, nil); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func encryptedPDF(t *testing.T, pdf []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := api.Encrypt(bytes.NewReader(pdf), &out, model.NewAESConfiguration("user-pw", "owner-pw", 256)); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// formValues reads back the values of a PDF's form, by field name.
func formValues(t *testing.T, pdf []byte) map[string]any {
	t.Helper()
	fg, err := api.ExportForm(bytes.NewReader(pdf), "filled.pdf", nil)
	if err != nil {
		t.Fatal(err)
	}
	f := fg.Forms[0]
	got := map[string]any{}
	for _, x := range f.TextFields {
		got[x.Name] = x.Value
	}
	for _, x := range f.CheckBoxes {
		got[x.Name] = x.Value
	}
	for _, x := range f.RadioButtonGroups {
		got[x.Name] = x.Value
	}
	return got
}

func pageCount(t *testing.T, pdf []byte) int {
	t.Helper()
	n, err := api.PageCount(bytes.NewReader(pdf), nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPDFFill: pdf_fill fills a form from a payload keyed by field names
// (templates rendered, a credential's value written in the file and never
// in the output or the step log) without a model, and from prose with the
// model; unknown fields, values a field cannot take, flat, encrypted and
// malformed PDFs fail the run with the cause.
func TestPDFFill(t *testing.T) {
	needBrowser(t)
	const secret = "AB-123-secret-member-code"
	srv := serveFiles(t, map[string][]byte{
		"/membership.pdf": formPDF(t),
		"/flat.pdf":       textPDF("No form here"),
		"/locked.pdf":     encryptedPDF(t, formPDF(t)),
		"/broken.pdf":     []byte("%PDF-1.7\nnot a PDF"),
	})
	cfg := engine.Config{Vault: vault{"cred_code": &client.SecretCredential{SecretValue: secret}}}
	e := newEngine(t, cfg)
	fill := func(file, payload string) client.WorkflowDefinition {
		b := &client.PDFFillBlock{BlockBase: base("fill"), FileURL: srv.URL + file, Prompt: "Fill in the membership form."}
		if payload != "" {
			b.Payload = json.RawMessage(payload)
		}
		return client.WorkflowDefinition{
			Parameters: []client.Parameter{jsonParam("member"), {Key: "code", ParameterType: client.ParameterTypeCredential, CredentialID: "cred_code"}},
			Blocks:     client.Blocks{b},
		}
	}
	member := map[string]any{"member": map[string]any{"name": "Ada Lovelace", "plan": "Pro"}}

	j := job(t, fill("/membership.pdf", `{"Full name": "{{ member.name }} {{ code.secret_value }}", "newsletter": "yes", "plan": "{{ member.plan }}"}`), member)
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", res.Status, res.FailureReason)
	}
	out, _ := outputOf(t, res)["fill_output"].(map[string]any)
	if out["file_name"] != "membership_filled.pdf" || out["mapped_by"] != "payload" || out["fill_mode"] != "acroform" {
		t.Errorf("fill_output %v", out)
	}
	if f, _ := out["fields"].(map[string]any); f["plan"] != "pro" || f["newsletter"] != true {
		t.Errorf("fields %v", out["fields"])
	}
	filled := readFile(t, j.Dir, "membership_filled.pdf")
	got := formValues(t, filled)
	if got["full_name"] != "Ada Lovelace "+secret || got["newsletter"] != true || got["plan"] != "pro" {
		t.Errorf("the filled PDF holds %v", got)
	}
	if strings.Contains(string(res.Output), secret) {
		t.Errorf("the output holds the secret: %s", res.Output)
	}
	if b, err := os.ReadFile(filepath.Join(j.Dir, steplog.FileName)); err == nil && bytes.Contains(b, []byte(secret)) {
		t.Errorf("the step log holds the secret")
	}

	for _, tc := range []struct {
		name string
		def  client.WorkflowDefinition
		want string
	}{
		{"an unknown field", fill("/membership.pdf", `{"full_name": "Ada", "surname": "Lovelace"}`),
			`Block "fill" (pdf_fill) failed: the form has no field named "surname" (its fields: "full_name", "newsletter", "plan")`},
		{"an option the field lacks", fill("/membership.pdf", `{"plan": "gold"}`), `the field "plan" takes one of "basic", "pro", not "gold"`},
		{"a flat PDF", fill("/flat.pdf", `{"full_name": "Ada"}`), "the PDF has no form fields to fill"},
		{"an encrypted PDF", fill("/locked.pdf", `{"full_name": "Ada"}`), "the PDF is protected by a password"},
		{"a malformed PDF", fill("/broken.pdf", `{"full_name": "Ada"}`), `Block "fill" (pdf_fill) failed: the file is not a readable PDF`},
		{"a missing file", fill("/gone.pdf", `{"full_name": "Ada"}`), "The file_url answered HTTP 404"},
		{"prose without a model", fill("/membership.pdf", `"Ada Lovelace, pro plan"`), `block "fill" (pdf_fill) needs a language model`},
	} {
		res := e.Execute(t.Context(), job(t, tc.def, member), &progress{})
		if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, tc.want) {
			t.Errorf("%s: %s %q, want a failure with %q", tc.name, res.Status, res.FailureReason, tc.want)
		}
	}

	// With a model, prose is mapped to the fields; a field it invents is
	// skipped with the reason.
	llmSrv := llmtest.New(t, llmtest.Step{Kind: llm.KindPrompt, Match: `(?s)Fill in the fields of a PDF form.*Grace Hopper.*"name":"newsletter"`,
		Reply: llmtest.JSON(map[string]any{"fields": map[string]any{"full_name": "Grace Hopper", "plan": "basic", "newsletter": false, "age": 85}})})
	me := modelEngine(t, llmSrv, cfg)
	j = job(t, fill("/membership.pdf", `"Grace Hopper, the basic plan, no newsletter"`), member)
	res = me.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("with a model: %s: %s", res.Status, res.FailureReason)
	}
	out, _ = outputOf(t, res)["fill_output"].(map[string]any)
	if skipped, _ := out["skipped_fields"].([]any); out["mapped_by"] != "model" || len(skipped) != 1 {
		t.Errorf("fill_output with a model %v", out)
	}
	got = formValues(t, readFile(t, j.Dir, "membership_filled.pdf"))
	if got["full_name"] != "Grace Hopper" || got["newsletter"] != false || got["plan"] != "basic" {
		t.Errorf("the PDF filled by the model's mapping holds %v", got)
	}
}

// TestSplitPDF: split_pdf cuts a PDF by the page ranges of its prompt
// without a model, into files of the run a later block (pdf_parser) reads
// by name; by the model's plan from a prompt in words; ranges past the
// last page, encrypted PDFs (for pdf_parser too) and prose without a model
// fail with the cause.
func TestSplitPDF(t *testing.T) {
	needBrowser(t)
	needPdftotext(t)
	bundle := textPDF("Cover letter", "Invoice 1 page 1", "Invoice 1 page 2", "Receipt")
	srv := serveFiles(t, map[string][]byte{"/bundle.pdf": bundle, "/locked.pdf": encryptedPDF(t, bundle)})
	e := newEngine(t, engine.Config{})
	split := func(file, prompt string, more ...client.Block) client.WorkflowDefinition {
		return client.WorkflowDefinition{Blocks: append(client.Blocks{&client.SplitPDFBlock{BlockBase: base("split"), FileURL: srv.URL + file, Prompt: prompt}}, more...)}
	}
	j := job(t, split("/bundle.pdf", "cover: 1\n2-3; 4-end",
		&client.PDFParserBlock{BlockBase: base("read"), FileURL: "{{ split_output.documents[1].file_name }}"}), nil)
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", res.Status, res.FailureReason)
	}
	out := outputOf(t, res)
	so, _ := out["split_output"].(map[string]any)
	docs, _ := so["documents"].([]any)
	if len(docs) != 3 || so["source_page_count"] != float64(4) || so["planned_by"] != "prompt" {
		t.Fatalf("split_output %v", so)
	}
	for i, want := range []struct {
		name  string
		pages int
	}{{"cover.pdf", 1}, {"bundle_pages_2-3.pdf", 2}, {"bundle_page_4.pdf", 1}} {
		d, _ := docs[i].(map[string]any)
		if d["file_name"] != want.name || d["page_count"] != float64(want.pages) {
			t.Errorf("document %d: %v, want %s of %d pages", i, d, want.name, want.pages)
			continue
		}
		if n := pageCount(t, readFile(t, j.Dir, want.name)); n != want.pages {
			t.Errorf("%s has %d pages, want %d", want.name, n, want.pages)
		}
	}
	if r, _ := out["read_output"].(map[string]any); r["text"] != "Invoice 1 page 1\n\nInvoice 1 page 2" {
		t.Errorf("read_output %v", out["read_output"])
	}

	for _, tc := range []struct {
		name, file, prompt, want string
	}{
		{"a range past the end", "/bundle.pdf", "1-2, 3-9", `Block "split" (split_pdf) failed: the page range 3-9 is not within the PDF's 4 pages`},
		{"an encrypted PDF", "/locked.pdf", "1-2", "the PDF is protected by a password"},
		{"prose without a model", "/bundle.pdf", "one file per invoice", `block "split" (split_pdf) needs a language model`},
		{"no prompt", "/bundle.pdf", "", `block "split" (split_pdf) has no prompt`},
	} {
		res := e.Execute(t.Context(), job(t, split(tc.file, tc.prompt), nil), &progress{})
		if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, tc.want) {
			t.Errorf("%s: %s %q, want a failure with %q", tc.name, res.Status, res.FailureReason, tc.want)
		}
	}

	// A PDF that needs a password to open has no text to read either.
	res = e.Execute(t.Context(), job(t, client.WorkflowDefinition{Blocks: client.Blocks{
		&client.PDFParserBlock{BlockBase: base("read"), FileURL: srv.URL + "/locked.pdf"}}}, nil), &progress{})
	if want := `Block "read" (pdf_parser) failed: the PDF is protected by a password`; res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, want) {
		t.Errorf("pdf_parser of an encrypted PDF: %s %q, want a failure with %q", res.Status, res.FailureReason, want)
	}

	// With a model, a prompt in words is planned from the pages' text; a
	// document past the last page is skipped with the reason.
	llmSrv := llmtest.New(t, llmtest.Step{Kind: llm.KindPrompt, Match: `(?s)one file per invoice.*"page_number":3,"text":"Invoice 1 page 2"`,
		Reply: llmtest.JSON(map[string]any{"documents": []any{
			map[string]any{"name": "invoice-1", "start_page": 2, "end_page": 3},
			map[string]any{"name": "ghost", "start_page": 4, "end_page": 6},
		}})})
	me := modelEngine(t, llmSrv, engine.Config{})
	j = job(t, split("/bundle.pdf", "one file per invoice"), nil)
	res = me.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("with a model: %s: %s", res.Status, res.FailureReason)
	}
	so, _ = outputOf(t, res)["split_output"].(map[string]any)
	docs, _ = so["documents"].([]any)
	skipped, _ := so["skipped"].([]any)
	if len(docs) != 1 || len(skipped) != 1 || so["planned_by"] != "model" {
		t.Fatalf("split_output with a model %v", so)
	}
	if n := pageCount(t, readFile(t, j.Dir, "invoice-1.pdf")); n != 2 {
		t.Errorf("invoice-1.pdf has %d pages, want 2", n)
	}
}
