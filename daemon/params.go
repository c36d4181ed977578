package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/abctl/abctl/client"
)

// resolveParameters gives each workflow parameter of the agent its value
// for a run: the request's, checked against the parameter's type (and
// converted where the hosted service converts: "5" for an integer, "true"
// for a boolean), or else the default. A parameter with neither is a 400
// naming it. Keys the agent does not declare are ignored, as the service
// ignores them.
func resolveParameters(agent *client.Agent, given map[string]any) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	var missing, wrong []string
	for _, p := range agent.WorkflowDefinition.Parameters {
		if p.ParameterType != client.ParameterTypeWorkflow {
			continue
		}
		v, ok := given[p.Key]
		if !ok || v == nil {
			if def := bytes.TrimSpace(p.DefaultValue); len(def) > 0 && string(def) != "null" {
				out[p.Key] = json.RawMessage(def)
				continue
			}
			missing = append(missing, fmt.Sprintf("%s (%s)", p.Key, p.WorkflowParameterType))
			continue
		}
		raw, err := convertParameter(p.WorkflowParameterType, v)
		if err != nil {
			wrong = append(wrong, fmt.Sprintf("%s: %v", p.Key, err))
			continue
		}
		out[p.Key] = raw
	}
	sort.Strings(missing)
	sort.Strings(wrong)
	var msgs []string
	if len(missing) > 0 {
		msgs = append(msgs, "missing required parameters without a default: "+strings.Join(missing, ", "))
	}
	if len(wrong) > 0 {
		msgs = append(msgs, "invalid parameter values: "+strings.Join(wrong, "; "))
	}
	if len(msgs) > 0 {
		return nil, errorf(KindBadRequest, "Invalid agent run request for %s: %s", agent.WorkflowPermanentID, strings.Join(msgs, "; "))
	}
	return out, nil
}

// convertParameter checks a JSON-decoded value against a workflow
// parameter type and returns its JSON encoding.
func convertParameter(t client.WorkflowParameterType, v any) (json.RawMessage, error) {
	enc := func(x any) (json.RawMessage, error) { return json.Marshal(x) }
	switch t {
	case client.WorkflowParameterString, client.WorkflowParameterFileURL, client.WorkflowParameterCredentialID:
		switch x := v.(type) {
		case string:
			return enc(x)
		case float64, bool:
			return enc(fmt.Sprint(x)) // a scalar reads as its text
		}
		return nil, fmt.Errorf("expected a string, got %s", jsonKind(v))
	case client.WorkflowParameterInteger:
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
	case client.WorkflowParameterFloat:
		switch x := v.(type) {
		case float64:
			return enc(x)
		case string:
			if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return enc(f)
			}
		}
		return nil, fmt.Errorf("expected a number, got %s", jsonKind(v))
	case client.WorkflowParameterBoolean:
		switch x := v.(type) {
		case bool:
			return enc(x)
		case string:
			if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
				return enc(b)
			}
		}
		return nil, fmt.Errorf("expected a boolean, got %s", jsonKind(v))
	}
	// json, and types this daemon does not know: any JSON value.
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
