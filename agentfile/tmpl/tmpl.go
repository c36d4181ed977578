// Package tmpl renders the {{ ... }} references of agent blocks: a block's
// url, goals, prompts, selectors and request bodies may name a workflow
// parameter ({{ url }}) or the output of an earlier block
// ({{ login_output }}, {{ extract_output.items[0].price }}).
//
// The hosted service renders these with Jinja2. Agents use the simple
// form, a dotted path with list indexes, and that is all Render accepts;
// anything else (filters, expressions, statements) is an error that names
// the reference, as is a path that names nothing. The criteria of
// conditional blocks are expressions: Truth and Eval evaluate
// the part of Jinja2 they use. An error is
// better than Jinja's silent empty string: a URL rendered as "" sends the
// browser nowhere, far from the typo that caused it.
package tmpl

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Error is a reference that could not be rendered.
type Error struct {
	Ref string // the reference as written, with its braces
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("template %s: %s", e.Ref, e.Msg) }

// Render replaces every {{ path }} in s with the value path names in vars.
// A string value is inserted as it is; any other value as compact JSON. A
// text without "{{" is returned unchanged.
func Render(s string, vars map[string]any) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	var b strings.Builder
	for {
		start, end := findRef(s)
		if start < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if end < 0 {
			return "", &Error{Ref: s[start:], Msg: "the reference is not closed with }}"}
		}
		b.WriteString(s[:start])
		ref := s[start:end]
		v, err := Lookup(strings.TrimSpace(s[start+2:end-2]), vars)
		if err != nil {
			return "", &Error{Ref: ref, Msg: err.Error()}
		}
		b.WriteString(text(v))
		s = s[end:]
	}
}

// findRef returns where the first reference of s starts (its "{{") and
// ends (just after its "}}"): start is -1 when s has none, end is -1 when
// it is not closed.
func findRef(s string) (start, end int) {
	start = strings.Index(s, "{{")
	if start < 0 {
		return -1, -1
	}
	end = strings.Index(s[start:], "}}")
	if end < 0 {
		return start, -1
	}
	return start, start + end + 2
}

// Ref is one {{ ... }} reference of a template, as References finds it.
type Ref struct {
	Text   string // as written, braces included
	Offset int    // the byte offset of its "{{" in the template
	// Root is the name the reference starts with: "login_output" in
	// {{ login_output.url }}. It is "" when the reference does not start
	// with a name.
	Root string
	// Err tells why Render would refuse the reference (not closed, not a
	// plain path); nil when Render accepts its form.
	Err error
}

// References lists the references of s in order, without rendering them:
// what a loader checks against the names an agent defines before any run.
// An unclosed "{{" is the last reference, with an Err.
func References(s string) []Ref {
	var refs []Ref
	offset := 0
	for {
		start, end := findRef(s)
		if start < 0 {
			return refs
		}
		if end < 0 {
			return append(refs, Ref{Text: s[start:], Offset: offset + start, Err: &Error{Ref: s[start:], Msg: "the reference is not closed with }}"}})
		}
		ref := Ref{Text: s[start:end], Offset: offset + start}
		path := strings.TrimSpace(s[start+2 : end-2])
		ref.Root = path[:nameEnd(path, 0)]
		if _, err := parsePath(path); err != nil {
			ref.Err = &Error{Ref: ref.Text, Msg: err.Error()}
		}
		refs = append(refs, ref)
		offset += end
		s = s[end:]
	}
}

// RenderJSON renders every string inside a JSON value (object keys
// excepted), as the hosted service renders templated request bodies.
func RenderJSON(raw json.RawMessage, vars map[string]any) (json.RawMessage, error) {
	if len(raw) == 0 || !strings.Contains(string(raw), "{{") {
		return raw, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("template: not JSON: %w", err)
	}
	out, err := renderValue(v, vars)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

func renderValue(v any, vars map[string]any) (any, error) {
	switch x := v.(type) {
	case string:
		return Render(x, vars)
	case []any:
		for i := range x {
			r, err := renderValue(x[i], vars)
			if err != nil {
				return nil, err
			}
			x[i] = r
		}
	case map[string]any:
		for k, e := range x {
			r, err := renderValue(e, vars)
			if err != nil {
				return nil, err
			}
			x[k] = r
		}
	}
	return v, nil
}

// text is how a value reads inside a text.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case json.RawMessage:
		var s string
		if json.Unmarshal(x, &s) == nil {
			return s
		}
		return string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Lookup returns the value a path names: a name, then any number of
// ".field" and "[index]" steps. Values may be Go values as encoding/json
// decodes them, or json.RawMessage (decoded on the way).
func Lookup(path string, vars map[string]any) (any, error) {
	steps, err := parsePath(path)
	if err != nil {
		return nil, err
	}
	v, ok := vars[steps[0].field]
	if !ok {
		return nil, fmt.Errorf("%q is not defined; defined here: %s", steps[0].field, names(vars))
	}
	at := steps[0].field
	for _, st := range steps[1:] {
		if raw, isRaw := v.(json.RawMessage); isRaw {
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("%s is not valid JSON", at)
			}
		}
		if st.field != "" {
			m, isMap := v.(map[string]any)
			if !isMap {
				return nil, fmt.Errorf("%s is %s, not an object, so it has no field %q", at, kind(v), st.field)
			}
			if v, ok = m[st.field]; !ok {
				return nil, fmt.Errorf("%s has no field %q; it has: %s", at, st.field, names(m))
			}
			at += "." + st.field
			continue
		}
		list, isList := v.([]any)
		if !isList {
			return nil, fmt.Errorf("%s is %s, not a list, so it has no item [%d]", at, kind(v), st.index)
		}
		if st.index < 0 || st.index >= len(list) {
			return nil, fmt.Errorf("%s has %d items, so [%d] is out of range", at, len(list), st.index)
		}
		v = list[st.index]
		at += "[" + strconv.Itoa(st.index) + "]"
	}
	return v, nil
}

type step struct {
	field string // "" for an index step
	index int
}

// parsePath reads name(.field|[index])*.
func parsePath(path string) ([]step, error) {
	if path == "" {
		return nil, fmt.Errorf("the reference is empty")
	}
	var steps []step
	i := 0
	ident := func() (string, error) {
		j := nameEnd(path, i)
		if j == i {
			return "", fmt.Errorf("expected a name at %q; only names, .fields and [indexes] are supported (no filters or expressions)", path[i:])
		}
		name := path[i:j]
		i = j
		return name, nil
	}
	name, err := ident()
	if err != nil {
		return nil, err
	}
	steps = append(steps, step{field: name})
	for i < len(path) {
		switch path[i] {
		case '.':
			i++
			name, err := ident()
			if err != nil {
				return nil, err
			}
			steps = append(steps, step{field: name})
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("an index is not closed with ]")
			}
			n, err := strconv.Atoi(strings.TrimSpace(path[i+1 : i+end]))
			if err != nil {
				return nil, fmt.Errorf("index %q is not a whole number", path[i+1:i+end])
			}
			steps = append(steps, step{index: n})
			i += end + 1
		default:
			return nil, fmt.Errorf("unexpected %q; only names, .fields and [indexes] are supported (no filters or expressions)", path[i:])
		}
	}
	return steps, nil
}

// nameEnd returns the end of the name that starts at path[i]: letters,
// digits and _, not starting with a digit. It returns i when there is none.
func nameEnd(path string, i int) int {
	j := i
	for j < len(path) && (path[j] == '_' || path[j] >= 'a' && path[j] <= 'z' || path[j] >= 'A' && path[j] <= 'Z' || j > i && path[j] >= '0' && path[j] <= '9') {
		j++
	}
	return j
}

func names[V any](m map[string]V) string {
	if len(m) == 0 {
		return "nothing"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > 20 {
		keys = append(keys[:20], "…")
	}
	return strings.Join(keys, ", ")
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64, int, int64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
