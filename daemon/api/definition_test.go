package api

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

// postDefinition reads body as POST /v1/agents does and answers it as the
// daemon would: the status, and the validation entries of a 422 (nil for
// any other answer).
func postDefinition(t *testing.T, contentType, body string) (*client.AgentDefinition, int, []client.ValidationError) {
	t.Helper()
	req := httptest.NewRequest("POST", "/v1/agents", strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	def, err := readDefinition(req)
	if err == nil {
		return def, 200, nil
	}
	rec := httptest.NewRecorder()
	writeError(rec, req, slog.New(slog.DiscardHandler), err)
	var answer struct {
		Detail []client.ValidationError `json:"detail"`
	}
	if e := json.Unmarshal(rec.Body.Bytes(), &answer); e != nil {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, e)
	}
	return nil, rec.Code, answer.Detail
}

// TestDefinitionRefusals: what the hosted service refuses when an agent is
// created is refused here too, with its status (422) and an entry that
// says what is wrong and where, under the place the definition has in the
// request: parameter_keys naming an undeclared parameter (upstream
// WorkflowDefinitionHasUndefinedParameters), a for_loop with nothing to
// loop over, an unknown proxy_location name.
func TestDefinitionRefusals(t *testing.T) {
	const refused = `{
	  "title": "Invoices",
	  "proxy_location": "MARS",
	  "workflow_definition": {
	    "parameters": [{"key": "portal_url", "parameter_type": "workflow", "workflow_parameter_type": "string"}],
	    "blocks": [
	      {"block_type": "login", "label": "log_in", "url": "{{ portal_url }}",
	       "parameter_keys": ["portal_url", "login_credentials"]},
	      {"block_type": "for_loop", "label": "download_invoice",
	       "loop_blocks": [{"block_type": "wait", "label": "pause", "wait_sec": 1}]}
	    ]}}`
	wantAt := map[string]string{
		"proxy_location": "MARS",
		"workflow_definition.blocks.0.parameter_keys.1":        "login_credentials",
		"workflow_definition.blocks.1.loop_over_parameter_key": "",
	}
	for _, tc := range []struct {
		name, contentType, body, prefix string
	}{
		{"wrapped", "application/json", `{"json_definition": ` + refused + `}`, "body.json_definition."},
		{"bare", "application/json", refused, "body."},
		{"yaml", "application/yaml", refused, "body."}, // JSON is YAML
	} {
		_, status, detail := postDefinition(t, tc.contentType, tc.body)
		if status != 422 || len(detail) != len(wantAt) {
			t.Errorf("%s: %d %+v, want 422 with %d entries", tc.name, status, detail, len(wantAt))
			continue
		}
		for _, d := range detail {
			path, ok := strings.CutPrefix(d.Path(), tc.prefix)
			input, known := wantAt[path]
			if !ok || !known || d.Msg == "" {
				t.Errorf("%s: an entry at %s: %+v", tc.name, d.Path(), d)
				continue
			}
			if input != "" && (!strings.Contains(d.Msg, input) && d.Type != "enum" || string(d.Input) != `"`+input+`"`) {
				t.Errorf("%s: %s: %q (input %s) does not name %q", tc.name, path, d.Msg, d.Input, input)
			}
		}
	}
}

// TestDefinitionsTheServiceAccepts: keys the service ignores and block
// types the client does not know are accepted, the way definitions
// exported from or written for the service carry them.
func TestDefinitionsTheServiceAccepts(t *testing.T) {
	const def = `{
	  "title": "Real definitions",
	  "code_artifact_metadata": {"generated": true},
	  "proxy_location": "RESIDENTIAL_GB",
	  "workflow_definition": {
	    "parameters": [{"key": "website_url", "parameter_type": "workflow", "workflow_parameter_type": "string"},
	                   {"key": "invoices", "parameter_type": "workflow", "workflow_parameter_type": "json"}],
	    "blocks": [
	      {"block_type": "extraction", "label": "get_data", "url": "website_url", "data_extraction_goal": "Read the totals",
	       "error_code_mapping": {"NO_DATA": "The page shows no totals"}, "cache_actions": true},
	      {"block_type": "for_loop", "label": "download_invoice", "loop_over_parameter_key": "invoices",
	       "loop_blocks": [{"block_type": "browser_task", "label": "fetch", "prompt": "Download {{ download_invoice.current_value }}",
	                        "parameter_keys": ["get_data_output"]}]},
	      {"block_type": "for_loop", "label": "each_total", "loop_variable_reference": "{{ get_data.output }}",
	       "loop_blocks": [{"block_type": "wait", "label": "pause", "wait_sec": 1}]}
	    ]}}`
	got, status, detail := postDefinition(t, "application/json", `{"json_definition": `+def+`}`)
	if status != 200 {
		t.Fatalf("%d %+v", status, detail)
	}
	loop := got.WorkflowDefinition.Blocks[1].(*client.ForLoopBlock)
	u, ok := loop.LoopBlocks[0].(*client.UnknownBlock)
	if !ok || u.Type != "browser_task" {
		t.Fatalf("the browser_task block is a %T", loop.LoopBlocks[0])
	}
	var kept struct {
		Prompt        string   `json:"prompt"`
		ParameterKeys []string `json:"parameter_keys"`
	}
	if err := json.Unmarshal(u.Raw, &kept); err != nil || kept.Prompt != "Download {{ download_invoice.current_value }}" ||
		len(kept.ParameterKeys) != 1 || kept.ParameterKeys[0] != "get_data_output" {
		t.Errorf("the browser_task block was not kept as written: %s (%v)", u.Raw, err)
	}
	if url := got.WorkflowDefinition.Blocks[0].(*client.ExtractionBlock).URL; url != "website_url" {
		t.Errorf("url %q", url)
	}
}

// TestQuickDefinitionAgrees: the one-pass reading of a JSON request
// (quickDefinition) takes only requests the careful path (the envelope,
// then the typed decoding) reads the same way, and leaves every other
// request, whose answer is an error or depends on a key it does not read,
// to the careful path.
func TestQuickDefinitionAgrees(t *testing.T) {
	const def = `{"title": "Invoices", "workflow_definition": {"parameters": [
	    {"key": "portal_url", "parameter_type": "workflow", "workflow_parameter_type": "string"}],
	  "blocks": [{"block_type": "navigation", "label": "open", "url": "{{ portal_url }}", "navigation_goal": "Open it"}]}}`
	for _, tc := range []struct {
		name, body string
		quick      bool
		loc        []any
	}{
		{"bare", def, true, []any{"body"}},
		{"wrapped", `{"json_definition": ` + def + `}`, true, []any{"body", "json_definition"}},
		{"wrapped, with YAML beside it", `{"json_definition": ` + def + `, "yaml_definition": "title: x"}`, false, nil},
		{"yaml null beside a bare definition", `{"yaml_definition": null, "title": "Invoices", "workflow_definition": {"parameters": [], "blocks": []}}`, false, nil},
		{"json_definition null beside a bare definition", `{"json_definition": null, "title": "Invoices", "workflow_definition": {"parameters": [], "blocks": []}}`, false, nil},
		{"no title", `{"workflow_definition": {"parameters": [], "blocks": []}}`, false, nil},
		{"empty title", `{"title": "", "workflow_definition": {"parameters": [], "blocks": []}}`, false, nil},
		{"no parameters", `{"title": "Invoices", "workflow_definition": {"blocks": []}}`, false, nil},
		{"null blocks", `{"title": "Invoices", "workflow_definition": {"parameters": [], "blocks": null}}`, false, nil},
		{"empty lists", `{"title": "Invoices", "workflow_definition": {"parameters": [], "blocks": []}}`, true, []any{"body"}},
		{"a title of the wrong type", `{"title": 7, "workflow_definition": {"parameters": [], "blocks": []}}`, false, nil},
		{"not an object", `[1]`, false, nil},
		{"not JSON", `{"title": `, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, loc, ok := quickDefinition([]byte(tc.body))
			if ok != tc.quick {
				t.Fatalf("quickDefinition took it: %v, want %v", ok, tc.quick)
			}
			if !ok {
				return
			}
			// The careful path, as readDefinition takes it when the quick
			// one declines.
			env, err := readEnvelope([]byte(tc.body), "body")
			if err != nil {
				t.Fatalf("the careful path refuses what the quick one took: %v", err)
			}
			var careful *client.AgentDefinition
			if env.JSONDefinition != nil {
				careful, err = definitionFromJSON(env.JSONDefinition, "body", "json_definition")
			} else {
				careful, err = definitionFrom([]byte(tc.body), env, "body")
			}
			if err != nil {
				t.Fatalf("the careful path refuses what the quick one took: %v", err)
			}
			if !slices.Equal(loc, tc.loc) {
				t.Errorf("loc = %v, want %v", loc, tc.loc)
			}
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(careful)
			if string(a) != string(b) {
				t.Errorf("quick reading:\n%s\ncareful reading:\n%s", a, b)
			}
		})
	}
}
