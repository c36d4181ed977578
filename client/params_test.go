package client

import (
	"strings"
	"testing"
)

func TestConvertParameterValue(t *testing.T) {
	for _, tc := range []struct {
		typ  WorkflowParameterType
		in   any
		want string // the JSON, or "error: <part of the message>"
	}{
		{WorkflowParameterString, "x", `"x"`},
		{WorkflowParameterString, 5.0, `"5"`},
		{WorkflowParameterString, []any{}, "error: expected a string, got an array"},
		{WorkflowParameterInteger, "5", `5`},
		{WorkflowParameterInteger, 2.5, "error: expected an integer, got 2.5"},
		{WorkflowParameterFloat, " 2.5", `2.5`},
		{WorkflowParameterBoolean, "true", `true`},
		{WorkflowParameterBoolean, "perhaps", `error: expected a boolean, got "perhaps"`},
		// A json parameter: decoded values as they are, text parsed as
		// JSON, as the hosted service parses it.
		{WorkflowParameterJSON, map[string]any{"a": 1.0}, `{"a":1}`},
		{WorkflowParameterJSON, []any{"x"}, `["x"]`},
		{WorkflowParameterJSON, 3.0, `3`},
		{WorkflowParameterJSON, ` {"b": [1, 2], "a": null} `, `{"b":[1,2],"a":null}`},
		{WorkflowParameterJSON, `"quoted"`, `"quoted"`},
		{WorkflowParameterJSON, "notjson", `error: expected JSON, got "notjson", which does not parse: invalid character 'o'`},
		{WorkflowParameterJSON, "", `error: expected JSON, got "", which does not parse`},
		{WorkflowParameterJSON, "{a:1}", `error: expected JSON, got "{a:1}"`},
		{"future_type", "x", `"x"`},
	} {
		got, err := ConvertParameterValue(tc.typ, tc.in)
		if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s %#v: %s, %v; want an error with %q", tc.typ, tc.in, got, err, want)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s %#v: %s, %v; want %s", tc.typ, tc.in, got, err, tc.want)
		}
	}
}
