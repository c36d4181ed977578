package llm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseJSON(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"valid object", `{"a": 1, "b": [true, null]}`, `{"a":1,"b":[true,null]}`},
		{"valid scalar", ` 42 `, `42`},
		{"valid string", `"hello"`, `"hello"`},
		{"code fence", "Here you go:\n```json\n{\"a\": 1}\n```\nAnything else?", `{"a":1}`},
		{"fence without info", "```\n[1, 2]\n```", `[1,2]`},
		{"unclosed fence", "```json\n{\"a\": \"x\"}", `{"a":"x"}`},
		{"prose around", `I think the answer is {"done": true} as requested.`, `{"done":true}`},
		{"prose with braces first", `Options {maybe}: {"a": 2}`, `{"a":2}`},
		{"trailing commas", `{"a": [1, 2, ], "b": {"c": 3,},}`, `{"a":[1,2],"b":{"c":3}}`},
		{"comments", "{\n // the plan\n \"a\": 1, /* why */ \"b\": 2\n}", `{"a":1,"b":2}`},
		{"single quotes", `{'a': 'it\'s "x"'}`, `{"a":"it's \"x\""}`},
		{"unquoted keys", `{action: "click", element_id: "e3"}`, `{"action":"click","element_id":"e3"}`},
		{"python literals", `{"ok": True, "no": False, "x": None}`, `{"ok":true,"no":false,"x":null}`},
		{"raw newline in string", "{\"a\": \"line1\nline2\"}", `{"a":"line1\nline2"}`},
		{"bad escape", `{"path": "C:\dir"}`, `{"path":"C:\\dir"}`},
		{"missing comma", `{"a": 1 "b": 2}`, `{"a":1,"b":2}`},
		{"missing colon", `{"a" 1}`, `{"a":1}`},
		{"double comma", `[1,,2]`, `[1,2]`},
		{"truncated actions keep complete ones", `{"reasoning": "fill the form", "actions": [{"type": "click", "id": "e1"}, {"type": "input_text", "id": "e2", "text": "Ali`,
			`{"reasoning":"fill the form","actions":[{"type":"click","id":"e1"}]}`},
		{"truncated inside nested element", `{"actions": [{"type": "click", "id": "e1"}, {"type": "select", "option": {"label": "Fr`,
			`{"actions":[{"type":"click","id":"e1"}]}`},
		{"truncated after comma", `{"a": [1, 2,`, `{"a":[1,2]}`},
		{"truncated number", `{"a": [1, 23`, `{"a":[1]}`},
		{"truncated keyword", `{"a": 1, "b": tr`, `{"a":1}`},
		{"truncated key", `{"a": 1, "bb`, `{"a":1}`},
		{"truncated after key", `{"a": 1, "b":`, `{"a":1}`},
		{"truncated nested object member", `{"a": {"b": 1, "c": "x`, `{"a":{"b":1}}`},
		{"truncated first member", `{"a": "never closed`, `{}`},
		{"truncated empty array", `{"items": [`, `{"items":[]}`},
		{"truncated in fence", "```json\n{\"a\": [1, 2", `{"a":[1]}`},
		{"array root", `Result: [{"n": 1}, {"n": 2}]`, `[{"n":1},{"n":2}]`},
		{"escaped unicode kept", `{"a": "\u00e9"} trailing`, `{"a":"\u00e9"}`},
		{"html not escaped", `{"a": "<b>&</b>"},`, `{"a":"<b>&</b>"}`},
		{"second value ignored", `{"a":1} {"b":2}`, `{"a":1}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseJSON(c.in)
			if err != nil {
				t.Fatalf("ParseJSON(%q): %v", c.in, err)
			}
			if string(got) != c.want {
				t.Fatalf("ParseJSON(%q)\n got %s\nwant %s", c.in, got, c.want)
			}
		})
	}
}

func TestParseJSONFails(t *testing.T) {
	for _, in := range []string{
		"",
		"I cannot help with that.",
		"[the answer]",
		`{"a": 1 2}`,
		`{]`,
	} {
		got, err := ParseJSON(in)
		if err == nil {
			t.Errorf("ParseJSON(%q) = %s, want an error", in, got)
			continue
		}
		if !errors.Is(err, ErrNoJSON) {
			t.Errorf("ParseJSON(%q): error %v does not wrap ErrNoJSON", in, err)
		}
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, 2, {"b": "c"}]}`,
		"```json\n{\"a\": 1,}\n```",
		`{'a': True, b: None, "c": [1,,2,]}`,
		`{"actions": [{"type": "click"}, {"type": "inp`,
		`text {"x": "\u00`,
		"{\"a\": \"\\",
		`[[[[[[`,
		`{"a":1}}}`,
		"/* c */ {\"a\"\n:\n-1.5e+3 // x\n}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseJSON(s)
		if err != nil {
			if !errors.Is(err, ErrNoJSON) {
				t.Fatalf("error %v does not wrap ErrNoJSON", err)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("ParseJSON(%q) = %q: not valid JSON", s, got)
		}
		// Valid input comes back as the same value.
		if json.Valid([]byte(s)) {
			var a, b any
			_ = json.Unmarshal([]byte(s), &a)
			_ = json.Unmarshal(got, &b)
			if !jsonEqual(a, b) {
				t.Fatalf("valid input %q came back as %q", s, got)
			}
		}
	})
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestParseJSONLargeIsLinear(t *testing.T) {
	// A long truncated list of actions and long prose full of brackets are
	// read without trouble (a guard against quadratic rescans).
	var b strings.Builder
	b.WriteString(`{"actions": [`)
	for i := 0; i < 20000; i++ {
		b.WriteString(`{"type": "click", "id": "e1"},`)
	}
	b.WriteString(`{"type": "cl`)
	got, err := ParseJSON(b.String())
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Actions []map[string]string }
	if err := json.Unmarshal(got, &v); err != nil || len(v.Actions) != 20000 {
		t.Fatalf("got %d actions (%v), want 20000", len(v.Actions), err)
	}
	prose := strings.Repeat("see [note] and {this} ", 5000)
	if _, err := ParseJSON(prose); err == nil {
		t.Fatal("prose parsed as JSON")
	}
}
