package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/abctl/abctl/client"
)

// resolveParameters gives each workflow parameter of the agent its value
// for a run: the request's, checked against the parameter's type (and
// converted where the hosted service converts: "5" for an integer, "true"
// for a boolean, JSON text for a json parameter; client.ConvertParameterValue,
// which abctl checks --param values with too), or else the default. A
// parameter with neither, or with a value that does not convert, is a 400
// naming it, the hosted service's status for an invalid workflow parameter. Keys the agent does not declare are ignored, as the service
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
		raw, err := client.ConvertParameterValue(p.WorkflowParameterType, v)
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
