package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ConvertParameterValue checks a JSON-decoded value (string, float64, bool,
// []any, map[string]any or nil) against a workflow parameter's type and
// returns its JSON encoding, converting where the hosted service converts:
// a number or boolean for a string parameter reads as its text, "5" for an
// integer, "2.5" for a float, "true" for a boolean, and a string for a json
// parameter is JSON text ("[1, 2]" is the list), which must parse, as the
// service parses it; other values of a json parameter are taken as they
// are. The error says what was expected and what was given.
//
// The daemon checks the parameters of a run request with it (a value that
// does not convert is a 400, as the hosted service answers), and abctl
// checks --param values with it before it starts a run.
func ConvertParameterValue(t WorkflowParameterType, v any) (json.RawMessage, error) {
	enc := func(x any) (json.RawMessage, error) { return json.Marshal(x) }
	switch t {
	case WorkflowParameterString, WorkflowParameterFileURL, WorkflowParameterCredentialID:
		switch x := v.(type) {
		case string:
			return enc(x)
		case float64, bool:
			return enc(fmt.Sprint(x)) // a scalar reads as its text
		}
		return nil, fmt.Errorf("expected a string, got %s", jsonKind(v))
	case WorkflowParameterInteger:
		switch x := v.(type) {
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return enc(int64(x))
			}
		case string:
			if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
				return enc(n)
			}
		}
		return nil, fmt.Errorf("expected an integer, got %s", jsonKind(v))
	case WorkflowParameterFloat:
		switch x := v.(type) {
		case float64:
			return enc(x)
		case string:
			if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return enc(f)
			}
		}
		return nil, fmt.Errorf("expected a number, got %s", jsonKind(v))
	case WorkflowParameterBoolean:
		switch x := v.(type) {
		case bool:
			return enc(x)
		case string:
			if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
				return enc(b)
			}
		}
		return nil, fmt.Errorf("expected a boolean, got %s", jsonKind(v))
	case WorkflowParameterJSON:
		x, ok := v.(string)
		if !ok {
			return enc(v)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(x)); err != nil {
			return nil, fmt.Errorf("expected JSON, got %s, which does not parse: %v", jsonKind(v), err)
		}
		return buf.Bytes(), nil
	}
	// Types this client does not know: any JSON value.
	return enc(v)
}

// jsonKind describes a decoded JSON value for an error message.
func jsonKind(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return strconv.Quote(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}
