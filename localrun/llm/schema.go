package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/abctl/abctl/internal/jsonobject"
)

// wireSchema is a Request.Schema prepared for a provider.
type wireSchema struct {
	name, description string
	// schema is what is sent: an object root, the caller's schema wrapped
	// as the "data" property when its root was not an object.
	schema  json.RawMessage
	wrapped bool
	// strict is true when the schema meets OpenAI's strict-mode rules, so
	// that the server can be asked to enforce it exactly.
	strict bool
}

// prepareSchema checks s and gives it an object root.
func prepareSchema(s *Schema) (*wireSchema, error) {
	if s == nil {
		return nil, nil
	}
	w := &wireSchema{name: schemaName(s.Name), description: s.Description}
	var root any
	if err := json.Unmarshal(s.JSON, &root); err != nil {
		return nil, fmt.Errorf("llm: schema %q is not valid JSON: %v", w.name, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, s.JSON); err != nil {
		return nil, fmt.Errorf("llm: schema %q is not valid JSON: %v", w.name, err)
	}
	// The schema is sent as written, member order included: with
	// enforced schemas, models write properties in the schema's order,
	// and callers put reasoning before decisions on purpose.
	w.schema = compact.Bytes()
	obj, ok := root.(map[string]any)
	switch {
	case ok && isObjectSchema(obj):
	case ok || root == true:
		if root == true {
			w.schema = []byte("{}")
		}
		w.schema, root = wrapSchema(w.schema, obj)
		w.wrapped = true
	default:
		return nil, fmt.Errorf("llm: schema %q must be a JSON object (or true)", w.name)
	}
	w.strict = strictCompatible(root, 0)
	return w, nil
}

// wrapSchema makes a schema whose root is not an object the "data"
// property of an object schema, keeping $defs at the root, where the
// schema's "#/$defs/..." references look for them.
func wrapSchema(schema []byte, parsed map[string]any) ([]byte, any) {
	members, _ := jsonobject.Split(schema) // valid JSON object, checked by the caller
	var inner, defs []jsonobject.Member
	for _, m := range members {
		if m.Key == "$defs" || m.Key == "definitions" {
			defs = append(defs, m)
		} else {
			inner = append(inner, m)
		}
	}
	out := []jsonobject.Member{
		{Key: "type", Value: json.RawMessage(`"object"`)},
		{Key: "properties", Value: jsonobject.Join([]jsonobject.Member{{Key: "data", Value: jsonobject.Join(inner)}})},
		{Key: "required", Value: json.RawMessage(`["data"]`)},
		{Key: "additionalProperties", Value: json.RawMessage(`false`)},
	}
	out = append(out, defs...)
	innerParsed := map[string]any{}
	wrapper := map[string]any{
		"type": "object", "properties": map[string]any{"data": innerParsed},
		"required": []any{"data"}, "additionalProperties": false,
	}
	for k, v := range parsed {
		if k == "$defs" || k == "definitions" {
			wrapper[k] = v
		} else {
			innerParsed[k] = v
		}
	}
	return jsonobject.Join(out), wrapper
}

func isObjectSchema(m map[string]any) bool {
	switch t := m["type"].(type) {
	case string:
		return t == "object"
	case nil:
		_, hasProps := m["properties"]
		return hasProps
	}
	return false
}

// schemaName keeps the letters, digits, _ and - of name (at most 64), as
// both protocols require; "answer" when nothing is left.
func schemaName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case r == ' ' || r == '.':
			b.WriteByte('_')
		}
		if b.Len() >= 64 {
			break
		}
	}
	if b.Len() == 0 {
		return "answer"
	}
	return b.String()
}

// strictUnsupported are keywords OpenAI's strict mode rejects.
var strictUnsupported = []string{"allOf", "oneOf", "not", "if", "then", "else", "patternProperties",
	"dependentRequired", "dependentSchemas", "unevaluatedProperties", "propertyNames"}

// strictCompatible reports whether every object in the schema lists all
// its properties as required and forbids others, and no keyword outside
// strict mode's subset is used. Such schemas are sent with strict: true;
// others with strict: false (the server then treats the schema as a
// strong hint), so a caller's extraction schema is never rejected for its
// style.
func strictCompatible(v any, depth int) bool {
	if depth > 64 {
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		_, isBool := v.(bool)
		return !isBool // true/false schemas are not allowed in strict mode
	}
	for _, k := range strictUnsupported {
		if _, has := m[k]; has {
			return false
		}
	}
	if props, ok := m["properties"].(map[string]any); ok || m["type"] == "object" {
		if _, typed := m["type"]; !typed || m["additionalProperties"] != false {
			return false
		}
		req := map[string]bool{}
		if list, ok := m["required"].([]any); ok {
			for _, r := range list {
				if s, ok := r.(string); ok {
					req[s] = true
				}
			}
		}
		for k, p := range props {
			if !req[k] || !strictCompatible(p, depth+1) {
				return false
			}
		}
	}
	if items, ok := m["items"]; ok && !strictCompatible(items, depth+1) {
		return false
	}
	if list, ok := m["anyOf"].([]any); ok {
		for _, s := range list {
			if !strictCompatible(s, depth+1) {
				return false
			}
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		if defs, ok := m[k].(map[string]any); ok {
			for _, d := range defs {
				if !strictCompatible(d, depth+1) {
					return false
				}
			}
		}
	}
	return true
}

// schemaInstruction is the text that asks for the schema in the prompt, for
// the modes where the provider does not enforce it.
func schemaInstruction(w *wireSchema) string {
	var b strings.Builder
	b.WriteString("Answer with one JSON object and nothing else: no prose before or after it, no code fences. It must validate against this JSON Schema")
	if w.description != "" {
		b.WriteString(" (")
		b.WriteString(w.description)
		b.WriteString(")")
	}
	b.WriteString(":\n")
	b.Write(w.schema)
	return b.String()
}

// decodeAnswer parses the model's text for a schema'd request and unwraps
// the "data" property of a wrapped schema.
func decodeAnswer(w *wireSchema, text string) (json.RawMessage, bool, error) {
	raw, err := ParseJSON(text)
	if err != nil {
		return nil, false, err
	}
	repaired := !bytes.Equal(raw, compactOrNil(text))
	if w.wrapped {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) == nil {
			if d, ok := obj["data"]; ok && len(obj) == 1 {
				return d, repaired, nil
			}
		}
		// A model that answered with the bare value (prompt mode) is
		// taken at its word.
	}
	return raw, repaired, nil
}

func compactOrNil(s string) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(strings.TrimSpace(s))) != nil {
		return nil
	}
	return buf.Bytes()
}
