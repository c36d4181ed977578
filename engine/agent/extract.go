package agent

// Extraction against a JSON schema (data_extraction_schema, a block's
// data_schema, text_prompt's json_schema, run_action's extract_schema).
//
// The schema is sent to the model as its structured-output format (the
// llm package words it for each provider) and shown in the prompt. The
// answer is validated with a JSON Schema validator (draft 2020-12 unless
// the schema names another, no remote references). An answer that does not
// validate gets one repair call that shows the model its answer and the
// validation errors; what still does not validate is kept as it is, and
// the errors are recorded in the run's errors. A schema given as a string
// that is not JSON, or as a list, is a description of the wanted shape:
// it goes in the prompt and nothing is validated. A schema that does not
// compile is used as a description too, and recorded.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/abctl/abctl/engine/internal/text"
	"github.com/abctl/abctl/engine/page"
	"github.com/abctl/abctl/llm"
)

// maxValidationErrors caps the validation errors reported.
const maxValidationErrors = 20

// Schema is the shape extracted data must have.
type Schema struct {
	// raw is the schema as JSON (an object), nil for a description.
	raw json.RawMessage
	// compiled validates; nil when the schema is a description or did not
	// compile (compileErr says why).
	compiled   *jsonschema.Schema
	compileErr error
	// description is a schema given as prose (or a list): shown, not
	// checked.
	description string
}

// ParseSchema reads a schema field. Empty and null give nil.
func ParseSchema(raw json.RawMessage) *Schema {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" {
		return nil
	}
	switch t[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return &Schema{description: t}
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil
		}
		if strings.HasPrefix(s, "{") && json.Valid([]byte(s)) {
			return ParseSchema(json.RawMessage(s))
		}
		return &Schema{description: s}
	case '{':
		ds := &Schema{raw: json.RawMessage(t)}
		ds.compiled, ds.compileErr = compileSchema(ds.raw)
		return ds
	}
	return &Schema{description: t}
}

// compileSchema compiles a JSON Schema without loading anything: a $ref to
// a file or URL fails to compile rather than reading it.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("the schema is not valid JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	const loc = "urn:abctl:data-schema"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("the schema cannot be used: %v", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("the schema cannot be used: %v", text.OneLine(err.Error()))
	}
	return s, nil
}

// llmSchema is the schema as a structured-output format, nil when there
// is no JSON schema to send.
func (s *Schema) llmSchema() *llm.Schema {
	if s == nil || s.raw == nil || s.compiled == nil {
		return nil
	}
	return &llm.Schema{Name: "extracted_data", Description: "the data extracted from the page", JSON: s.raw}
}

// promptText is how the schema reads in a prompt.
func (s *Schema) promptText() string {
	switch {
	case s == nil:
		return ""
	case s.description != "":
		return s.description
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, s.raw, "", " "); err != nil {
		return string(s.raw)
	}
	return buf.String()
}

// validate returns what data violates in the schema ("at /items/0/price:
// got string, want number"), nil when it is valid or nothing can be
// checked.
func (s *Schema) validate(data json.RawMessage) []string {
	if s == nil || s.compiled == nil {
		return nil
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	if err != nil {
		return []string{"the data is not valid JSON: " + err.Error()}
	}
	err = s.compiled.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var out []string
	var walk func(u *jsonschema.OutputUnit)
	walk = func(u *jsonschema.OutputUnit) {
		if u.Error != nil && len(u.Errors) == 0 {
			loc := u.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			out = append(out, fmt.Sprintf("at %s: %s", loc, u.Error.String()))
		}
		for i := range u.Errors {
			walk(&u.Errors[i])
		}
	}
	walk(ve.BasicOutput())
	sort.Strings(out)
	out = compactStrings(out)
	if len(out) == 0 {
		out = []string{text.OneLine(ve.Error())}
	}
	if len(out) > maxValidationErrors {
		out = append(out[:maxValidationErrors], fmt.Sprintf("and %d more", len(out)-maxValidationErrors))
	}
	return out
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// Extract asks the model for the data of the page. It returns the data
// and, when it still does not fit the schema after the repair call, the
// validation errors (also recorded in the run's errors).
func (a *Agent) Extract(ctx context.Context, m llm.Model, what string, schema *Schema, details map[string]any, obs *page.Observation, label string) (json.RawMessage, []string, *llm.Response, error) {
	var b promptBuilder
	b.section("What to extract", text.Clip(what, goalBudget))
	if st := schema.promptText(); st != "" {
		b.section("Shape of the answer (JSON Schema)", text.Clip(st, 12000))
	} else {
		b.line("Answer with a JSON object whose fields name what you extracted.")
	}
	b.section("User details (JSON)", DetailsJSON(details))
	b.pageBlock(a.tag, obs, planElementBudget, extractTextBudget, false)
	req := &llm.Request{
		Kind: llm.KindExtract, System: extractSystem,
		Messages: []llm.Message{userPartsUnmarked(m, b.String(), obs)},
		Schema:   schema.llmSchema(),
	}
	if req.Schema == nil {
		req.Schema = &llm.Schema{Name: "extracted_data", JSON: json.RawMessage(`{}`)}
	}
	resp, err := a.call(ctx, m, req, label)
	if err != nil {
		return nil, nil, resp, answerErr(ctx, resp, err)
	}
	data, verrs, err := a.checkAndRepair(ctx, m, req, resp, schema, label)
	return data, verrs, resp, err
}

// checkAndRepair validates an answer and, when it does not fit, asks once
// for a corrected one. The errors that remain are recorded in the run's
// errors and returned.
func (a *Agent) checkAndRepair(ctx context.Context, m llm.Model, req *llm.Request, resp *llm.Response, schema *Schema, label string) (json.RawMessage, []string, error) {
	data := resp.JSON
	if schema != nil && schema.compileErr != nil {
		a.steps.AddError(map[string]any{"error_type": "data_schema_invalid", "block_label": label, "message": schema.compileErr.Error()})
	}
	verrs := schema.validate(data)
	if len(verrs) == 0 {
		return data, nil, nil
	}
	fix := *req
	fix.Kind = llm.KindRepair
	fix.Messages = append(append([]llm.Message(nil), req.Messages...),
		llm.AssistantText(string(data)),
		llm.UserText("Your answer does not match the schema:\n- "+strings.Join(verrs, "\n- ")+
			"\n\nAnswer again with the corrected JSON only. Use null where the page does not show a value."))
	fixed, err := a.call(ctx, m, &fix, label)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, nil, ctx.Err()
	case err != nil:
		var le *llm.Error
		if errors.As(err, &le) {
			return nil, nil, &ModelError{err}
		}
		// An unusable repair: keep the first answer.
	default:
		if again := schema.validate(fixed.JSON); len(again) < len(verrs) || len(again) == 0 {
			data, verrs = fixed.JSON, again
		}
	}
	if len(verrs) > 0 {
		a.steps.AddError(map[string]any{"error_type": "extraction_schema_mismatch", "block_label": label,
			"message": "the extracted data does not match the schema (kept as the model gave it)", "errors": verrs})
	}
	return data, verrs, nil
}
