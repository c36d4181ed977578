package tmpl

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func vars() map[string]any {
	var extracted any
	_ = json.Unmarshal([]byte(`{"items":[{"name":"Widget","price":9.5},{"name":"Gadget","price":12}],"count":2}`), &extracted)
	return map[string]any{
		"url":            "https://example.com/login",
		"user":           "ada",
		"retries":        3.0,
		"extract_output": extracted,
		"raw_output":     json.RawMessage(`{"ok":true,"list":[1,2]}`),
		"empty":          nil,
	}
}

func TestRender(t *testing.T) {
	cases := []struct{ in, want string }{
		{"no references", "no references"},
		{"{{url}}", "https://example.com/login"},
		{"Log in as {{ user }} at {{url}}.", "Log in as ada at https://example.com/login."},
		{"{{ retries }} tries", "3 tries"},
		{"{{ extract_output.items[1].name }}", "Gadget"},
		{"{{ extract_output.items[0].price }}", "9.5"},
		{"{{extract_output.items[0]}}", `{"name":"Widget","price":9.5}`},
		{"{{ raw_output.list[1] }}", "2"},
		{"{{ raw_output }}", `{"ok":true,"list":[1,2]}`},
		{"[{{empty}}]", "[]"},
		{"{{ extract_output.items[ 1 ].price }}", "12"},
	}
	for _, c := range cases {
		got, err := Render(c.in, vars())
		if err != nil || got != c.want {
			t.Errorf("Render(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"{{ missing }}", `"missing" is not defined; defined here: empty, extract_output`},
		{"go to {{ url", "not closed"},
		{"{{}}", "empty"},
		{"{{ url | upper }}", "no filters or expressions"},
		{"{{ extract_output.nope }}", `extract_output has no field "nope"; it has: count, items`},
		{"{{ extract_output.items[5] }}", "extract_output.items has 2 items, so [5] is out of range"},
		{"{{ user.name }}", "user is a string, not an object"},
		{"{{ extract_output.count[0] }}", "extract_output.count is a number, not a list"},
		{"{{ extract_output.items[x] }}", "not a whole number"},
		{"{{ 1abc }}", "expected a name"},
	}
	for _, c := range cases {
		_, err := Render(c.in, vars())
		var te *Error
		if !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Render(%q) error %v; want one containing %q", c.in, err, c.want)
		}
	}
}

func TestRenderJSON(t *testing.T) {
	out, err := RenderJSON(json.RawMessage(`{"q":"{{user}}","n":[1,"{{ extract_output.items[0].name }}"],"keep":true}`), vars())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(out, &got)
	if got["q"] != "ada" || got["n"].([]any)[1] != "Widget" || got["keep"] != true {
		t.Fatalf("RenderJSON: %s", out)
	}
	if _, err := RenderJSON(json.RawMessage(`{"q":"{{nope}}"}`), vars()); err == nil {
		t.Fatal("a missing key in a JSON body rendered")
	}
	same := json.RawMessage(`{"plain":1}`)
	if out, _ := RenderJSON(same, vars()); string(out) != string(same) {
		t.Fatalf("a body without references changed: %s", out)
	}
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{"{{url}}", "{{ a.b[0].c }}", "{{", "}}{{", "{{ x | y }}", "{{extract_output.items[1].name}} and {{user}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Render(s, vars())
		if err == nil && !strings.Contains(s, "{{") && out != s {
			t.Fatalf("text without references changed: %q -> %q", s, out)
		}
	})
}

func TestReferences(t *testing.T) {
	s := "Go to {{ site }}{{current_value.path}} as {{ user | upper }}, {{ 'x' }} and {{ open"
	refs := References(s)
	type want struct {
		text, root string
		offset     int
		err        string
	}
	wants := []want{
		{"{{ site }}", "site", 6, ""},
		{"{{current_value.path}}", "current_value", 16, ""},
		{"{{ user | upper }}", "user", 42, "no filters or expressions"},
		{"{{ 'x' }}", "", 62, "expected a name"},
		{"{{ open", "", 76, "not closed"},
	}
	if len(refs) != len(wants) {
		t.Fatalf("References(%q) = %+v, want %d references", s, refs, len(wants))
	}
	for i, w := range wants {
		r := refs[i]
		if r.Text != w.text || r.Root != w.root || r.Offset != w.offset || s[r.Offset:r.Offset+len(r.Text)] != r.Text {
			t.Errorf("reference %d = %+v, want %+v", i, r, w)
		}
		if (w.err == "") != (r.Err == nil) || r.Err != nil && !strings.Contains(r.Err.Error(), w.err) {
			t.Errorf("reference %d error %v, want %q", i, r.Err, w.err)
		}
	}
	if refs := References("no references {here}"); refs != nil {
		t.Errorf("References of a plain text = %+v", refs)
	}
}
