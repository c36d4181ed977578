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
	"github.com/abctl/abctl/internal/jsonenc"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/llm"
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
		b.line("No schema is given: answer with " + dataShape)
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
	if schema == nil {
		data = normalizeData(data)
	}
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

// maxSchemaDepth bounds the walk through a schema's $refs and
// combinations, which a schema may make circular.
const maxSchemaDepth = 32

// numberTypeAt is what the schema says the numbers at path (a script
// field's path, $.products[0].price) are: script.TypeNumber when it allows
// any number there, script.TypeInteger when only whole ones, "" when there
// is no schema, it says nothing of that place, or it allows no number
// there. Nullable types (["number", "null"]) count as their number type;
// the branches of anyOf, oneOf and allOf are all looked at, so a place
// where one branch allows any number is a number.
func (s *Schema) numberTypeAt(path string) string {
	if s == nil || s.raw == nil {
		return ""
	}
	parts, err := script.ParsePath(path)
	if err != nil {
		return ""
	}
	var root any
	if json.Unmarshal(s.raw, &root) != nil {
		return ""
	}
	types := map[string]bool{}
	schemaTypesAt(root, root, parts, types, 0)
	switch {
	case types["number"]:
		return script.TypeNumber
	case types["integer"]:
		return script.TypeInteger
	}
	return ""
}

// schemaTypesAt adds to types the JSON types node (a part of the schema
// root) gives the values at parts below it.
func schemaTypesAt(root, node any, parts []script.PathPart, types map[string]bool, depth int) {
	n, ok := node.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return
	}
	if ref, ok := n["$ref"].(string); ok {
		if target := localRef(root, ref); target != nil {
			schemaTypesAt(root, target, parts, types, depth+1)
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := n[k].([]any); ok {
			for _, sub := range list {
				schemaTypesAt(root, sub, parts, types, depth+1)
			}
		}
	}
	if len(parts) == 0 {
		switch t := n["type"].(type) {
		case string:
			types[t] = true
		case []any:
			for _, x := range t {
				if s, ok := x.(string); ok {
					types[s] = true
				}
			}
		}
		return
	}
	p, rest := parts[0], parts[1:]
	if p.IsKey {
		if props, ok := n["properties"].(map[string]any); ok {
			if sub, ok := props[p.Key]; ok {
				schemaTypesAt(root, sub, rest, types, depth+1)
				return
			}
		}
		schemaTypesAt(root, n["additionalProperties"], rest, types, depth+1)
		return
	}
	// An item of a list: its own schema in prefixItems (or a draft-07 list
	// of items), else the schema of every item.
	if prefix, ok := n["prefixItems"].([]any); ok && p.Index < len(prefix) {
		schemaTypesAt(root, prefix[p.Index], rest, types, depth+1)
		return
	}
	switch items := n["items"].(type) {
	case map[string]any:
		schemaTypesAt(root, items, rest, types, depth+1)
	case []any:
		if p.Index < len(items) {
			schemaTypesAt(root, items[p.Index], rest, types, depth+1)
		}
	}
}

// localRef returns the part of root a reference inside the schema names
// ("#/$defs/price"), nil for any other reference.
func localRef(root any, ref string) any {
	if ref == "#" {
		return root
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	node := root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		if node, ok = m[tok]; !ok {
			return nil
		}
	}
	return node
}

// dataShape is the shape asked of data when the user gave no schema, so
// that two runs of one task answer alike ("$18.00" from one, 18 from the
// next is what models do without it).
const dataShape = `a JSON object whose fields are named for what was asked (snake_case). Numbers are JSON numbers, without currency symbols or thousands separators (18.5, not "$18.50"); when the currency matters, give it as its own field ("currency": "USD"). Dates are ISO 8601 (2024-03-15, 2024-03-15T14:30). Several items are an array of objects with the same fields. Use null for what the page does not show.`

// plainNumber is a number written as a string the way a JSON number would
// be, or with thousands separators ("18.00", "-3.5", "1,299.50"): no
// leading zero, which a postal code or an identifier may have.
var plainNumber = regexp.MustCompile(`^-?(?:0|[1-9][0-9]{0,2}(?:,[0-9]{3})+|[1-9][0-9]*)(?:\.[0-9]+)?$`)

// numberOfString is the number a string of extracted data holds when it is
// nothing but a number, the way the data contract asks for numbers: ok is
// false for anything else, and for what could be read two ways ("1,299"
// is 1299 in English and 1.299 in German; with cents, "1,299.00", or a
// second group, "1,299,000", it is not ambiguous) or loses digits as a
// JSON number (more than 15 digits, such as a card number).
func numberOfString(s string) (json.Number, bool) {
	if !plainNumber.MatchString(s) {
		return "", false
	}
	if groups := strings.Count(s, ","); groups == 1 && !strings.Contains(s, ".") {
		return "", false
	}
	plain := strings.ReplaceAll(s, ",", "")
	if digits := strings.Count(plain, "") - 1 - strings.Count(plain, "-") - strings.Count(plain, "."); digits > 15 {
		return "", false
	}
	return json.Number(plain), true
}

// normalizeData brings data extracted without a schema to the data
// contract where that is safe: a string that holds nothing but a number
// ("18.00") becomes the number. Nothing is added or removed, keys keep
// their order, and a string that says more than a number ("$18.00", a
// date, a postal code "02139") stays as it is. Data that is not JSON is
// returned unchanged.
func normalizeData(data json.RawMessage) json.RawMessage {
	if len(data) == 0 {
		return data
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out bytes.Buffer
	changed := false
	// inObject says, for each open container, whether it is an object;
	// keyNext whether an object's next token is a key.
	var inObject, keyNext []bool
	comma := false // a value was written in the current container
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return data
		}
		isKey := len(inObject) > 0 && inObject[len(inObject)-1] && keyNext[len(keyNext)-1]
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			out.WriteByte(byte(d))
			inObject, keyNext = inObject[:len(inObject)-1], keyNext[:len(keyNext)-1]
			comma = true
			afterValue(inObject, keyNext)
			continue
		}
		if comma && (isKey || len(inObject) > 0 && !inObject[len(inObject)-1]) {
			out.WriteByte(',')
		}
		comma = false
		switch t := tok.(type) {
		case json.Delim:
			out.WriteByte(byte(t))
			inObject, keyNext = append(inObject, t == '{'), append(keyNext, true)
			continue
		case string:
			if n, ok := numberOfString(t); ok && !isKey {
				out.WriteString(n.String())
				changed = true
				break
			}
			b, _ := jsonenc.Marshal(t)
			out.Write(b)
			if isKey {
				out.WriteByte(':')
				keyNext[len(keyNext)-1] = false
				continue
			}
		case json.Number:
			out.WriteString(t.String())
		case bool:
			out.WriteString(strconv.FormatBool(t))
		case nil:
			out.WriteString("null")
		}
		comma = true
		afterValue(inObject, keyNext)
	}
	if !changed {
		return data
	}
	return json.RawMessage(out.Bytes())
}

// afterValue notes that a value ended in the innermost container: an
// object's next token is a key again.
func afterValue(inObject, keyNext []bool) {
	if n := len(inObject); n > 0 && inObject[n-1] {
		keyNext[n-1] = true
	}
}
