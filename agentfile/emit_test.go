package agentfile

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/abctl/abctl/internal/yamljson"
)

// checkEmit writes v as YAML and reads it back with yaml.v3: the values
// must be the same (compared as JSON values).
func checkEmit(t *testing.T, v *jvalue) {
	t.Helper()
	out, err := encodeYAML(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := yamljson.Decode(out)
	if err != nil {
		t.Fatalf("the YAML does not read back as JSON: %v\n%s", err, out)
	}
	var buf bytes.Buffer
	writeJSON(&buf, v, "")
	var want any
	if err := json.Unmarshal(buf.Bytes(), &want); err != nil {
		t.Fatalf("%v in %s", err, buf.Bytes())
	}
	if !reflect.DeepEqual(got, want) {
		gotJSON, _ := json.Marshal(got)
		t.Fatalf("read back as\n%s\nwant\n%s\nYAML:\n%s", gotJSON, buf.Bytes(), out)
	}
}

func str(s string) *jvalue { return &jvalue{kind: 's', s: s} }

// textDocument puts s everywhere a text can be: a key, a value, a list
// item, a nested value.
func textDocument(s string) *jvalue {
	if s == "k" || s == "list" || s == "nested" {
		s += "!" // a key of its own
	}
	return &jvalue{kind: 'o',
		keys: []string{"k", s, "list", "nested"},
		vals: []*jvalue{
			str(s), str("v"),
			{kind: 'a', items: []*jvalue{str(s), {kind: 'a', items: []*jvalue{str(s)}}, {kind: 'o', keys: []string{"in"}, vals: []*jvalue{str(s)}}}},
			{kind: 'o', keys: []string{"deeper"}, vals: []*jvalue{{kind: 'o', keys: []string{"x"}, vals: []*jvalue{str(s)}}}},
		}}
}

func TestEmitTexts(t *testing.T) {
	for _, s := range []string{
		"plain", "two words", "{{ url }}", "a: b", "a #b", "#c", "- x", "yes", "No", "null", "~", "1", "1.5", "0x1F",
		"2024-01-02", "", " lead", "trail ", "line\nbreak", "two\nlines\n", "three\n\n\n", "\n\nleading", "  indented\nblock",
		"tab\tin", "cr\r\nlf", "nel\u0085x", "ls\u2028x", "bom\ufeffx", "ünïcödé", "emoji 😀", "ctrl\x01", "bad\xffutf8",
		"quote\"s", `back\slash`, "'single'", "ends:", "---", "...", "<<", "=", "@at", "`tick", "%pct", "!tag", "&anchor", "*alias",
		"|pipe", ">gt", "[x]", "{x}", "?q", ",c", "lines with trailing \nspace", "\ttab first\nline",
	} {
		checkEmit(t, textDocument(s))
	}
	checkEmit(t, &jvalue{kind: 'o', keys: []string{"n", "f", "b", "z", "e", "ea"}, vals: []*jvalue{
		{kind: 'n', s: "12"}, {kind: 'n', s: "-1.5e-07"}, {kind: 'b', b: true}, {kind: 'z'}, {kind: 'o'}, {kind: 'a'},
	}})
}

// FuzzEmitYAML: any text, in any place of a document, reads back the same.
func FuzzEmitYAML(f *testing.F) {
	f.Add("plain")
	f.Add("multi\nline\n")
	f.Add("  x\n y")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 2048 {
			return
		}
		checkEmit(t, textDocument(s))
	})
}
