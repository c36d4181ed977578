package jsonenc

import (
	"encoding/json"
	"testing"
)

func TestMarshal(t *testing.T) {
	v := map[string]any{
		"html":  "<a href=\"x\">&</a>",
		"raw":   json.RawMessage(`{"k": [1, 2]}`),
		"text":  "Grüße\u2028",
		"empty": []int{},
	}
	got, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	// Keys sorted as encoding/json sorts them, raw JSON compacted, <, >
	// and & kept, U+2028 escaped (encoding/json always escapes it), no
	// trailing newline.
	want := `{"empty":[],"html":"<a href=\"x\">&</a>","raw":{"k":[1,2]},"text":"Grüße\u2028"}`
	if string(got) != want {
		t.Errorf("Marshal = %s\nwant      %s", got, want)
	}
	std, _ := json.Marshal(map[string]string{"a": "plain"})
	if got, _ := Marshal(map[string]string{"a": "plain"}); string(got) != string(std) {
		t.Errorf("without HTML characters Marshal = %s, json.Marshal = %s", got, std)
	}
}

func TestMarshalError(t *testing.T) {
	if _, err := Marshal(make(chan int)); err == nil {
		t.Error("Marshal(chan) succeeded")
	}
}
