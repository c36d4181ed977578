package daemon_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// roundTripDefinition is a workflow_definition with a value for every
// property of the hosted service's WorkflowDefinition schema, and for the
// keys its copilot adds to definitions it exports (code_artifact_metadata,
// completion_contract).
const roundTripDefinition = `{
  "version": 2,
  "parameters": [
    {"key": "status_url", "parameter_type": "workflow", "workflow_parameter_type": "string", "description": "Where the export's status is"}
  ],
  "blocks": [
    {"block_type": "http_request", "label": "check", "method": "GET", "url": "{{ status_url }}"},
    {"block_type": "conditional", "label": "is_ready", "branch_conditions": [
      {"criteria": {"criteria_type": "jinja2_template", "expression": "{{ check_output.body.ready }}"}, "next_block_label": "done"},
      {"is_default": true, "next_block_label": "pause"}
    ]},
    {"block_type": "wait", "label": "pause", "wait_sec": 5, "next_block_label": "check"},
    {"block_type": "wait", "label": "done", "wait_sec": 1}
  ],
  "finally_block_label": "done",
  "error_code_mapping": {"EXPORT_FAILED": "The status page says the export failed"},
  "workflow_system_prompt": "Be brief.",
  "code_artifact_metadata": {"blocks": [{"label": "check", "generated": true, "functions": ["poll"]}], "version": 3},
  "completion_contract": {"criteria": [{"description": "the export is ready"}]}
}`

// TestWorkflowDefinitionRoundTrip: every property of the hosted service's
// workflow definition, and the copilot's code_artifact_metadata and
// completion_contract, come back from GET /v1/agents/{id} as they went into
// POST /v1/agents (as JSON and as YAML) and POST /v1/agents/{id}; what the
// service adds (its output parameters, the blocks' output_parameter and
// the records' ids and times) aside.
func TestWorkflowDefinitionRoundTrip(t *testing.T) {
	var want map[string]any
	if err := json.Unmarshal([]byte(roundTripDefinition), &want); err != nil {
		t.Fatal(err)
	}
	// A property the upstream schema gains is a failure here until the
	// definition above has a value for it.
	if path := upstreamSpecPath(t); path != "" {
		for _, p := range upstreamProperties(t, path, "WorkflowDefinition") {
			if _, ok := want[p]; !ok {
				t.Errorf("the upstream WorkflowDefinition has %q, which roundTripDefinition does not set", p)
			}
		}
	} else {
		t.Logf("the hosted service's OpenAPI description (%s) is missing: the definition's properties are not checked against it", upstreamSpecName)
	}

	e := newEnv(t)
	create := func(name, contentType, body string) string {
		t.Helper()
		status, answer := e.raw("POST", "/v1/agents", contentType, body)
		if status != 200 {
			t.Fatalf("%s: %d %s", name, status, answer)
		}
		var a struct {
			WPID string `json:"workflow_permanent_id"`
		}
		if err := json.Unmarshal([]byte(answer), &a); err != nil {
			t.Fatal(err)
		}
		return a.WPID
	}
	check := func(name, wpid string) {
		t.Helper()
		status, answer := e.raw("GET", "/v1/agents/"+wpid, "", "")
		if status != 200 {
			t.Fatalf("%s: get: %d %s", name, status, answer)
		}
		var got struct {
			Def map[string]any `json:"workflow_definition"`
		}
		if err := json.Unmarshal([]byte(answer), &got); err != nil {
			t.Fatal(err)
		}
		// The service lists an output parameter per block after the
		// parameters given.
		params, _ := got.Def["parameters"].([]any)
		got.Def["parameters"] = slices.DeleteFunc(params, func(p any) bool {
			m, _ := p.(map[string]any)
			return m["parameter_type"] == "output"
		})
		for k, v := range want {
			if !holds(got.Def[k], v) {
				g, _ := json.Marshal(got.Def[k])
				w, _ := json.Marshal(v)
				t.Errorf("%s: workflow_definition.%s came back as %s, went in as %s", name, k, g, w)
			}
		}
	}

	jsonBody := `{"json_definition": {"title": "Export", "workflow_definition": ` + roundTripDefinition + `}}`
	wpid := create("JSON", "application/json", jsonBody)
	check("created from JSON", wpid)

	// JSON is YAML: the same definition as a yaml_definition.
	yamlBody, _ := json.Marshal(map[string]string{"yaml_definition": "title: Export\nworkflow_definition: " + strings.ReplaceAll(roundTripDefinition, "\n", " ")})
	check("created from YAML", create("YAML", "application/json", string(yamlBody)))

	if status, answer := e.raw("POST", "/v1/agents/"+wpid, "application/json", jsonBody); status != 200 {
		t.Fatalf("update: %d %s", status, answer)
	}
	check("updated", wpid)
}

// holds reports whether got has everything want has: the same scalars,
// lists of the same length whose items hold, objects with want's keys
// holding (got may have more keys: what the service adds).
func holds(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !holds(g[k], v) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !holds(g[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(got, want)
	}
}

// upstreamProperties lists the properties of a schema object of the
// upstream OpenAPI description, sorted.
func upstreamProperties(t *testing.T, path, schema string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	s, ok := spec.Components.Schemas[schema]
	if !ok || len(s.Properties) == 0 {
		t.Fatalf("%s has no schema %s with properties", path, schema)
	}
	var names []string
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
