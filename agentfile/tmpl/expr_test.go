package tmpl

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTruth(t *testing.T) {
	vars := map[string]any{
		"total": 120.0, "currency": "EUR", "status": "failed", "items": []any{"a", "b", "c"},
		"Extract_Email_output": map[string]any{"email": "ada@example.com", "phones": []any{}},
		"empty_output":         map[string]any{"email": nil},
		"count":                "7",
		"raw":                  json.RawMessage(`{"ok": true}`),
	}
	for expr, want := range map[string]bool{
		"{{ Extract_Email_output.email }}":             true,
		"{{ empty_output.email }}":                     false,
		"{{ no_such_block_output.email }}":             false, // undefined is falsy, as in Jinja
		"{{ total > 100 and currency == \"EUR\" }}":    true,
		"{{ total > 100 and currency == 'USD' }}":      false,
		"{{ not (status in ['failed', 'canceled']) }}": false,
		"{{ status not in ['completed'] }}":            true,
		"{{ items | length >= 3 }}":                    true,
		"{{ Extract_Email_output.phones | length }}":   false,
		"{{ count | int + 1 == 8 }}":                   true,
		"{{ 'ada' in Extract_Email_output.email }}":    true,
		"{{ items[0] == 'a' and items[-1] == 'c' }}":   true,
		"{{ raw.ok }}":                                     true,
		"{{ missing | default('x') == 'x' }}":              true,
		"{{ (total - 20) * 2 % 7 == 4 }}":                  true,
		"{{ status | upper == 'FAILED' }}":                 true,
		"{{ true or undefined.thing }}":                    true,
		"{{ none }}":                                       false,
		"Status: {{ status }}":                             true,
		"{{ empty_output.email }}{{ empty_output.email }}": false,
	} {
		got, err := Truth(expr, vars)
		if err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", expr, got, err, want)
		}
	}
	for expr, msg := range map[string]string{
		"{{ total > }}":          "ends where a value was expected",
		"{{ total >> 3 }}":       "unexpected",
		"{{ 'open }}":            "not closed",
		"{{ items | shout }}":    "unknown filter \"shout\"",
		"{{ currency > 3 }}":     "only numbers, or texts, can be ordered",
		"{{ total / 0 }}":        "division by zero",
		"{{ status not items }}": "expected \"in\" after \"not\"",
		"{{ 3 in total }}":       "\"in\" needs a list",
	} {
		if _, err := Truth(expr, vars); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want an error with %q", expr, err, msg)
		}
	}
}
