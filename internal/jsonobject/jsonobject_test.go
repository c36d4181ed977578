package jsonobject

import (
	"encoding/json"
	"testing"
)

func TestSplitJoinKeepsOrderAndBytes(t *testing.T) {
	raw := `{"z":1,"a":{"n":[1, 2]},"m":"x\u00e9","e":null}`
	ms, err := Split([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range ms {
		keys = append(keys, m.Key)
	}
	if got := len(keys); got != 4 || keys[0] != "z" || keys[1] != "a" || keys[2] != "m" || keys[3] != "e" {
		t.Fatalf("keys %v", keys)
	}
	if string(ms[1].Value) != `{"n":[1, 2]}` || string(ms[2].Value) != `"x\u00e9"` {
		t.Fatalf("values not kept as written: %s %s", ms[1].Value, ms[2].Value)
	}
	want := `{"z":1,"a":{"n":[1, 2]},"m":"x\u00e9","e":null}`
	if got := string(Join(ms)); got != want {
		t.Fatalf("Join: %s, want %s", got, want)
	}
	if got := string(Join(nil)); got != `{}` {
		t.Fatalf("Join(nil) = %s", got)
	}
	if !json.Valid(Join([]Member{{Key: `a"b`, Value: json.RawMessage(`1`)}})) {
		t.Fatal("a key needing escapes made invalid JSON")
	}
}

func TestSplitRejectsNonObjects(t *testing.T) {
	for _, raw := range []string{``, `[]`, `1`, `"x"`, `{"a":}`, `{"a":1`, `{"a" 1}`} {
		if _, err := Split([]byte(raw)); err == nil {
			t.Errorf("Split(%q) did not fail", raw)
		}
	}
}
