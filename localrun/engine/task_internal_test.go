package engine

import (
	"encoding/json"
	"testing"
)

func TestWithErrorCode(t *testing.T) {
	for in, want := range map[string]string{
		``:                  `{"error":"login_failed"}`,
		`null`:              `{"error":"login_failed"}`,
		`{"a":1}`:           `{"a":1,"error":"login_failed"}`,
		`[1,2]`:             `{"error":"login_failed"}`,
		`{"error":"other"}`: `{"error":"login_failed"}`,
	} {
		if got := string(withErrorCode(json.RawMessage(in), "login_failed")); got != want {
			t.Errorf("withErrorCode(%s) = %s, want %s", in, got, want)
		}
	}
}
