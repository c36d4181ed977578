package yamljson

import (
	"reflect"
	"strings"
	"testing"
)

func TestToJSON(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"mapping", "title: T\nn: 3\nf: 1.5\nok: true\nnone: null\nlist: [a, 2]\n", `{"f":1.5,"list":["a",2],"n":3,"none":null,"ok":true,"title":"T"}`},
		{"JSON", `{"b": [1, {"c": "d"}], "a": "x"}`, `{"a":"x","b":[1,{"c":"d"}]}`},
		{"empty", "", "null"},
		{"comments only", "# nothing\n", "null"},
		{"scalar", "just text", `"just text"`},
		{"list at the top", "- 1\n- two\n", `[1,"two"]`},
		{"dates are times", "d: 2024-01-02\nq: '2024-01-02'\n", `{"d":"2024-01-02T00:00:00Z","q":"2024-01-02"}`},
		{"YAML spellings of numbers", "hex: 0x1F\nu: 1_000\n", `{"hex":31,"u":1000}`},
		{"aliases and merge keys", "base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n", `{"base":{"x":1,"y":2},"use":{"x":1,"y":3}}`},
		{"the first document", "a: 1\n---\nb: 2\n", `{"a":1}`},
		{"HTML characters", "s: <a & b>\n", `{"s":"\u003ca \u0026 b\u003e"}`},
		{"a nested non-string-keyed mapping with string keys", "m: {a: 1, b: {c: 2}}\n", `{"m":{"a":1,"b":{"c":2}}}`},
	} {
		got, err := ToJSON([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: ToJSON = %s, %v; want %s", c.name, got, err, c.want)
		}
	}
}

func TestToJSONErrors(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"key not a string at the top", "1: one\n", "mapping key 1 is not a string"},
		{"key not a string inside", "a:\n  list:\n    - x: 1\n      true: 2\n", "at a.list[0]: mapping key true is not a string"},
		{"the first bad key in order", "a: {2: x, 1: y}\n", "at a: mapping key 1 is not a string"},
		{"NaN", "n: .nan\n", "unsupported value"},
		{"syntax", "a: [1, 2\n", "yaml:"},
	} {
		_, err := ToJSON([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if _, derr := Decode([]byte(c.in)); derr == nil || derr.Error() != err.Error() {
			t.Errorf("%s: Decode error %v, want ToJSON's %v", c.name, derr, err)
		}
	}
}

func TestDecode(t *testing.T) {
	got, err := Decode([]byte("n: 3\nlist: [1.5, x, {k: [true, null]}]\n"))
	want := map[string]any{"n": 3.0, "list": []any{1.5, "x", map[string]any{"k": []any{true, nil}}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Decode = %#v, %v; want %#v", got, err, want)
	}
	if got, err := Decode(nil); got != nil || err != nil {
		t.Errorf("Decode(nil) = %#v, %v; want nil, nil", got, err)
	}
}
