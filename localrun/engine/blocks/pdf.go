package blocks

// The PDF blocks:
//
//   - pdf_parser (and file_url_parser with a PDF, see fileparse.go): the
//     PDF's text, read by poppler's pdftotext (Debian package
//     poppler-utils), run as a process with a time limit;
//   - pdf_fill: the PDF's form (AcroForm) filled in, saved as a file of
//     the run. A payload whose keys name the form's fields fills them as
//     they are, without a model; anything else (prose, keys that are not
//     field names) is mapped to the fields by the model;
//   - split_pdf: the PDF cut into documents of consecutive pages, each
//     saved as a file of the run. A prompt that lists page ranges
//     ("1-2, 3, 4-end", each optionally named: "invoice: 1-2") is cut as
//     it says, without a model; a prompt in prose is planned by the model
//     from the text of each page.
//
// Reading and writing the PDFs is package blocks/pdf's; file_url is an
// http(s) URL or the name of a file the run downloaded or saved.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/blocks/pdf"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// pdfPageTextBudget bounds the text of all pages a model reads to plan a
// split; each page gets its share, at least pdfMinPageText characters.
const (
	pdfPageTextBudget = 60000
	pdfMinPageText    = 1000
)

// checkPDF checks a PDF block before the run: its required fields, the
// programs and library it needs, and a model when it needs one.
func checkPDF(b client.Block, hasModel bool) error {
	label, typ := b.Base().Label, b.BlockType()
	fail := func(err error) error { return fmt.Errorf("block %q (%s): %w", label, typ, err) }
	missing := func(what string) error { return fmt.Errorf("block %q (%s) has no %s", label, typ, what) }
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	switch x := b.(type) {
	case *client.PDFParserBlock:
		if blank(x.FileURL) {
			return missing("file_url")
		}
		if err := pdf.HavePdftotext(); err != nil {
			return fail(err)
		}
	case *client.PDFFillBlock:
		if blank(x.FileURL) {
			return missing("file_url")
		}
		if !hasModel && !explicitPayload(x.Payload) {
			return fmt.Errorf("%w (without a model, give payload as an object whose keys are the names of the form's fields)", needsModel(b))
		}
	case *client.SplitPDFBlock:
		if blank(x.FileURL) {
			return missing("file_url")
		}
		if blank(x.Prompt) {
			return missing("prompt (the page ranges to cut, such as \"1-2, 3-end\", or how to split in words)")
		}
		if strings.Contains(x.Prompt, "{{") {
			return nil // known when it renders
		}
		if _, err := pdf.ParsePageRanges(x.Prompt); err == nil {
			return nil
		}
		if !hasModel {
			return fmt.Errorf("%w (without a model, give prompt as page ranges, such as \"1-2, 3-end\" or \"invoice: 1-2; receipt: 3\")", needsModel(b))
		}
		if err := pdf.HavePdftotext(); err != nil {
			return fail(fmt.Errorf("planning a split in words needs the text of the pages: %w", err))
		}
	}
	return nil
}

// pdf.HavePdftotext says why a PDF's text cannot be read on this machine; nil
// when it can.

// explicitPayload reports whether a pdf_fill payload may fill the form
// without a model: an object, or a template (it may render to one).
func explicitPayload(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" {
		return false
	}
	if t[0] == '{' {
		return true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		s = strings.TrimSpace(s)
		return strings.Contains(s, "{{") || (strings.HasPrefix(s, "{") && json.Valid([]byte(s)))
	}
	return false
}

// parsePDFText is the output of a PDF parsed as a file: its text, pages
// apart by an empty line, and its number of pages.
func parsePDFText(ctx context.Context, path string) (any, error) {
	pages, err := pdf.PagesText(ctx, path, maxParsedBytes)
	if err != nil {
		return nil, err
	}
	return map[string]any{"text": strings.Join(pages, "\n\n"), "page_count": len(pages)}, nil
}

// pdfModel is the model of a pdf_fill or split_pdf block: its own, else
// its llm_key, else the agent's, else the default.
func (in pdfBlocks) pdfModel(own client.Model, llmKey string) ([]client.Model, bool) {
	models := []client.Model{own}
	if strings.TrimSpace(llmKey) != "" {
		models = append(models, client.Model{"name": llmKey})
	}
	return append(models, in.agentModel), in.models.Configured()
}

// renderJSON renders the templates in every text of a JSON value.
func renderJSON(v any, sc *scope) (any, error) {
	switch x := v.(type) {
	case string:
		return sc.render(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			var err error
			if out[k], err = renderJSON(e, sc); err != nil {
				return nil, err
			}
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			var err error
			if out[i], err = renderJSON(e, sc); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}

// readSource reads the file a block's file_url names; path is where it
// is on this machine.
func (in pdfBlocks) readSource(ctx context.Context, ref string) (path string, data []byte, err error) {
	if path, err = in.sourceFile(ctx, ref); err != nil {
		return "", nil, err
	}
	data, err = os.ReadFile(path)
	return path, data, err
}

// stem is a file name without its directory and extension.
func stem(path string) string {
	base := filepath.Base(path)
	if s := strings.TrimSuffix(base, filepath.Ext(base)); s != "" && s != "." {
		return s
	}
	return "document"
}

// renderFileAndPrompt renders the file_url and the prompt of a PDF block.
func renderFileAndPrompt(sc *scope, fileURL, prompt string) (ref, renderedPrompt string, err error) {
	if ref, err = sc.renderURL(fileURL); err != nil {
		return "", "", err
	}
	if renderedPrompt, err = sc.render(prompt); err != nil {
		return "", "", err
	}
	return ref, renderedPrompt, nil
}

func (in pdfBlocks) pdfFill(ctx context.Context, b *client.PDFFillBlock, sc *scope) (any, error) {
	ref, prompt, err := renderFileAndPrompt(sc, b.FileURL, b.Prompt)
	if err != nil {
		return nil, err
	}
	var payload any
	if t := strings.TrimSpace(string(b.Payload)); t != "" && t != "null" {
		if err := json.Unmarshal(b.Payload, &payload); err != nil {
			return nil, fmt.Errorf("payload is not valid JSON: %v", err)
		}
		if payload, err = renderJSON(payload, sc); err != nil {
			return nil, err
		}
		// A template that renders to a JSON object is that object.
		if s, ok := payload.(string); ok {
			var obj map[string]any
			if strings.HasPrefix(strings.TrimSpace(s), "{") && json.Unmarshal([]byte(s), &obj) == nil {
				payload = obj
			}
		}
	}
	return in.step(b.Label, steplog.Action{Type: "fill_pdf", Text: steplog.ShownURL(ref)}, func() (any, string, error) {
		return in.fillPDF(ctx, b, sc, ref, prompt, payload)
	})
}

func (in pdfBlocks) fillPDF(ctx context.Context, b *client.PDFFillBlock, sc *scope, ref, prompt string, payload any) (any, string, error) {
	path, data, err := in.readSource(ctx, ref)
	if err != nil {
		return nil, "", err
	}
	fields, err := pdf.FormFields(data)
	if err != nil {
		return nil, "", err
	}
	if len(fields) == 0 {
		return nil, "", errors.New("the PDF has no form fields to fill (writing text on a PDF without a form needs OCR, which this daemon does not do)")
	}
	values, mappedBy, skipped, err := in.fillValues(ctx, b, sc, prompt, payload, fields)
	if err != nil {
		return nil, "", err
	}
	// Credentials' placeholders become their values in the file only; the
	// output keeps the placeholders.
	written := make(map[string]any, len(values))
	for name, v := range values {
		if s, ok := v.(string); ok {
			real, _, err := in.secrets.Reveal(ctx, s)
			if err != nil {
				return nil, "", err
			}
			v = real
		}
		written[name] = v
	}
	filled, err := pdf.FillForm(data, written)
	if err != nil {
		return nil, "", err
	}
	saved, err := in.files.Save(stem(path)+"_filled.pdf", "filled.pdf", filled)
	if err != nil {
		return nil, "", fmt.Errorf("saving the filled PDF: %v", err)
	}
	out := map[string]any{
		"fill_mode":        "acroform",
		"mapped_by":        mappedBy,
		"fields":           values,
		"skipped_fields":   skipped,
		"file_name":        saved,
		"file_size":        len(filled),
		"downloaded_files": []any{in.files.Info(saved)},
	}
	return out, fmt.Sprintf("filled %d fields into %s", len(values), saved), nil
}

// fillValues decides the value of each field to fill: the payload's own,
// when its keys name the form's fields, else the model's mapping. mappedBy
// says which ("payload" or "model"); skipped are the model's proposals
// that could not be used.
func (in pdfBlocks) fillValues(ctx context.Context, b *client.PDFFillBlock, sc *scope, prompt string, payload any, fields []pdf.Field) (values map[string]any, mappedBy string, skipped []any, err error) {
	models, hasModel := in.pdfModel(b.Model, b.LLMKey)
	skipped = []any{}
	if obj, ok := payload.(map[string]any); ok && len(obj) > 0 {
		values, unknown, err := pdf.ExplicitValues(obj, fields)
		if err != nil {
			return nil, "", nil, err
		}
		if len(unknown) == 0 {
			return values, "payload", skipped, nil
		}
		if !hasModel {
			return nil, "", nil, fmt.Errorf("the form has no field named %s (its fields: %s); matching the payload's keys to other names needs a language model, and %v",
				strings.Join(pdf.Quoted(unknown), " or "), pdf.FieldNames(fields), agent.ErrNoModel)
		}
	} else if !hasModel {
		return nil, "", nil, fmt.Errorf("without a model, payload must be an object whose keys are the names of the form's fields (its fields: %s); %v", pdf.FieldNames(fields), agent.ErrNoModel)
	}
	m, err := in.models.Pick(models...)
	if err != nil {
		return nil, "", nil, err
	}
	details, err := sc.details(b.ParameterKeys)
	if err != nil {
		return nil, "", nil, err
	}
	var msg strings.Builder
	msg.WriteString("Fill in the fields of a PDF form.\n")
	if strings.TrimSpace(prompt) != "" {
		fmt.Fprintf(&msg, "\nInstructions:\n%s\n", prompt)
	}
	if payload != nil {
		pb, _ := json.Marshal(payload)
		fmt.Fprintf(&msg, "\nThe data to fill in (JSON):\n%s\n", text.Clip(string(pb), pdfPageTextBudget))
	}
	if len(b.ParameterKeys) > 0 && len(details) > 0 {
		fmt.Fprintf(&msg, "\nValues (JSON):\n%s\n", agent.DetailsJSON(details))
	}
	fb, _ := json.Marshal(fields)
	fmt.Fprintf(&msg, "\nThe form's fields (JSON):\n%s\n", fb)
	msg.WriteString("\nAnswer with a JSON object {\"fields\": {FIELD NAME: VALUE}} naming only fields of this list, exactly as they are named, and only those the data gives a value for. " +
		"A checkbox takes true or false; a radio, combobox or listbox field one of its options (a listbox a list of them); other fields a text.")
	schema := agent.ParseSchema(json.RawMessage(`{"type":"object","properties":{"fields":{"type":"object"}},"required":["fields"]}`))
	data, _, err := in.agent.Prompt(ctx, m, msg.String(), schema, b.Label)
	if err != nil {
		return nil, "", nil, err
	}
	var answer struct {
		Fields map[string]any `json:"fields"`
	}
	if err := json.Unmarshal(data, &answer); err != nil {
		return nil, "", nil, fmt.Errorf("the model's mapping of the data to the form's fields is not a JSON object: %v", err)
	}
	values, skipped = pdf.MapValues(answer.Fields, fields)
	if len(values) == 0 {
		reasons := make([]string, 0, len(skipped))
		for _, s := range skipped {
			m := s.(map[string]any)
			reasons = append(reasons, fmt.Sprintf("%s: %s", m["field_name"], m["reason"]))
		}
		if len(reasons) == 0 {
			reasons = append(reasons, "it proposed none")
		}
		return nil, "", nil, fmt.Errorf("the model mapped no value to the form's fields (%s)", strings.Join(reasons, "; "))
	}
	return values, "model", skipped, nil
}

func (in pdfBlocks) splitPDF(ctx context.Context, b *client.SplitPDFBlock, sc *scope) (any, error) {
	ref, prompt, err := renderFileAndPrompt(sc, b.FileURL, b.Prompt)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(prompt) == "" {
		return nil, errors.New("the prompt is empty: give the page ranges to cut, such as \"1-2, 3-end\"")
	}
	return in.step(b.Label, steplog.Action{Type: "split_pdf", Text: steplog.ShownURL(ref)}, func() (any, string, error) {
		return in.cutPDF(ctx, b, sc, ref, prompt)
	})
}

func (in pdfBlocks) cutPDF(ctx context.Context, b *client.SplitPDFBlock, sc *scope, ref, prompt string) (any, string, error) {
	path, data, err := in.readSource(ctx, ref)
	if err != nil {
		return nil, "", err
	}
	total, err := pdf.PageCount(data)
	if err != nil {
		return nil, "", err
	}
	skipped := []any{}
	plannedBy := "prompt"
	parts, rangeErr := pdf.ParsePageRanges(prompt)
	if rangeErr == nil {
		for i := range parts {
			p := &parts[i]
			if p.Thru == 0 {
				p.Thru = total
			}
			if p.From < 1 || p.Thru < p.From || p.Thru > total {
				return nil, "", fmt.Errorf("the page range %d-%d is not within the PDF's %d pages", p.From, p.Thru, total)
			}
		}
	} else {
		plannedBy = "model"
		if parts, skipped, err = in.planSplit(ctx, b, sc, path, prompt, total, rangeErr); err != nil {
			return nil, "", err
		}
	}
	base := stem(path)
	docs := make([]any, 0, len(parts))
	var names []string
	for i, p := range parts {
		cut, err := pdf.Pages(data, p.From, p.Thru)
		if err != nil {
			return nil, "", err
		}
		name := strings.TrimSpace(p.Name)
		if name == "" {
			name = fmt.Sprintf("%s_pages_%d-%d", base, p.From, p.Thru)
			if p.From == p.Thru {
				name = fmt.Sprintf("%s_page_%d", base, p.From)
			}
		}
		if !strings.EqualFold(filepath.Ext(name), ".pdf") {
			name += ".pdf"
		}
		saved, err := in.files.Save(name, fmt.Sprintf("document_%d.pdf", i+1), cut)
		if err != nil {
			return nil, "", fmt.Errorf("saving the document of pages %d-%d: %v", p.From, p.Thru, err)
		}
		names = append(names, saved)
		docs = append(docs, map[string]any{
			"name":       name,
			"file_name":  saved,
			"page_range": []int{p.From, p.Thru},
			"page_count": p.Thru - p.From + 1,
			"file_size":  len(cut),
		})
	}
	out := map[string]any{
		"documents":         docs,
		"document_count":    len(docs),
		"skipped":           skipped,
		"source_page_count": total,
		"planned_by":        plannedBy,
		"downloaded_files":  in.files.Infos(names),
	}
	return out, fmt.Sprintf("cut %d pages into %d documents", total, len(docs)), nil
}

// planSplit asks the model how to split the PDF, from the prompt and the
// text of each page. skipped are the documents it proposed that cannot be
// cut, with the reason.
func (in pdfBlocks) planSplit(ctx context.Context, b *client.SplitPDFBlock, sc *scope, path, prompt string, total int, rangeErr error) ([]pdf.Part, []any, error) {
	models, hasModel := in.pdfModel(b.Model, b.LLMKey)
	if !hasModel {
		return nil, nil, fmt.Errorf("the prompt is not a list of page ranges (%v), and splitting by a prompt in words needs a language model: %v", rangeErr, agent.ErrNoModel)
	}
	m, err := in.models.Pick(models...)
	if err != nil {
		return nil, nil, err
	}
	pages, err := pdf.PagesText(ctx, path, maxParsedBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the pages' text to plan the split: %w", err)
	}
	details, err := sc.details(b.ParameterKeys)
	if err != nil {
		return nil, nil, err
	}
	share := max(pdfMinPageText, pdfPageTextBudget/max(1, total))
	type pageText struct {
		Page int    `json:"page_number"`
		Text string `json:"text"`
	}
	texts := make([]pageText, 0, len(pages))
	for i, p := range pages {
		texts = append(texts, pageText{Page: i + 1, Text: text.Clip(p, share)})
	}
	tb, _ := json.Marshal(texts)
	var msg strings.Builder
	fmt.Fprintf(&msg, "Split a PDF of %d pages into documents of consecutive pages.\n\nInstructions:\n%s\n", total, prompt)
	if len(b.ParameterKeys) > 0 && len(details) > 0 {
		fmt.Fprintf(&msg, "\nValues (JSON):\n%s\n", agent.DetailsJSON(details))
	}
	fmt.Fprintf(&msg, "\nThe text of each page (JSON):\n%s\n", tb)
	msg.WriteString("\nAnswer with a JSON object {\"documents\": [{\"name\": FILE NAME, \"start_page\": FIRST PAGE, \"end_page\": LAST PAGE}]}, pages counted from 1.")
	schema := agent.ParseSchema(json.RawMessage(`{"type":"object","properties":{"documents":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"start_page":{"type":"integer"},"end_page":{"type":"integer"}},"required":["start_page","end_page"]}}},"required":["documents"]}`))
	data, _, err := in.agent.Prompt(ctx, m, msg.String(), schema, b.Label)
	if err != nil {
		return nil, nil, err
	}
	var answer struct {
		Documents []json.RawMessage `json:"documents"`
	}
	if err := json.Unmarshal(data, &answer); err != nil {
		return nil, nil, fmt.Errorf("the model's plan of the split is not a JSON object: %v", err)
	}
	var parts []pdf.Part
	skipped := []any{}
	for i, raw := range answer.Documents {
		var d struct {
			Name  any `json:"name"`
			Start any `json:"start_page"`
			End   any `json:"end_page"`
		}
		json.Unmarshal(raw, &d)
		from, ok1 := d.Start.(float64)
		thru, ok2 := d.End.(float64)
		switch {
		case !ok1 || !ok2 || from != float64(int(from)) || thru != float64(int(thru)):
			skipped = append(skipped, map[string]any{"index": i, "reason": "start_page and end_page must be whole numbers", "document": jsonValue(raw)})
		case from < 1 || thru < from || int(thru) > total:
			skipped = append(skipped, map[string]any{"index": i, "reason": fmt.Sprintf("the pages %v-%v are not within the PDF's %d pages", from, thru, total), "document": jsonValue(raw)})
		default:
			name, _ := pdf.ScalarText(d.Name)
			parts = append(parts, pdf.Part{Name: name, From: int(from), Thru: int(thru)})
		}
	}
	if len(parts) == 0 {
		var reasons []string
		for _, s := range skipped {
			reasons = append(reasons, s.(map[string]any)["reason"].(string))
		}
		if len(reasons) == 0 {
			reasons = append(reasons, "it proposed none")
		}
		return nil, nil, fmt.Errorf("the model planned no document that can be cut (%s)", strings.Join(reasons, "; "))
	}
	return parts, skipped, nil
}
