package daemon_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/api"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
)

const responseShapeYAML = `title: Invoices
workflow_definition:
  parameters:
    - key: website_url
      parameter_type: workflow
      workflow_parameter_type: string
      default_value: https://example.com
    - key: email
      description: where replies go
      parameter_type: workflow
      workflow_parameter_type: string
    - key: portal_login
      parameter_type: credential
      credential_id: cred_1
  blocks:
    - label: Log_In
      block_type: task
      url: "{{website_url}}"
      navigation_goal: Log in with the credential.
      parameter_keys: [website_url, portal_login]
    - label: each_invoice
      block_type: for_loop
      loop_over_parameter_key: Log_In_output
      loop_blocks:
        - label: Extract_Number
          block_type: extraction
          data_extraction_goal: Extract the invoice number
          parameter_keys: [email]
`

// TestAgentResponseDefinition checks the response-side definition as a
// client that is not written in Go sees it: the JSON of POST /v1/agents.
func TestAgentResponseDefinition(t *testing.T) {
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "abctl.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	_, key, err := st.CreateOrganization(t.Context(), "response-shape")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(st, nil))
	t.Cleanup(srv.Close)

	call := func(method, path, contentType, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Api-Key", key)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
		return out
	}

	agent := call("POST", "/v1/agents", "text/plain", responseShapeYAML)
	workflowID, _ := agent["workflow_id"].(string)
	if !strings.HasPrefix(workflowID, "w_") {
		t.Fatalf("workflow_id %v", agent["workflow_id"])
	}
	wd, _ := agent["workflow_definition"].(map[string]any)
	if wd["version"] != 1.0 {
		t.Errorf("workflow_definition.version %v", wd["version"])
	}
	params, _ := wd["parameters"].([]any)
	byKey := map[string]map[string]any{}
	var keys []string
	for _, p := range params {
		m, _ := p.(map[string]any)
		k, _ := m["key"].(string)
		byKey[k] = m
		keys = append(keys, k)
	}
	wantKeys := []string{"website_url", "email", "portal_login", "Log_In_output", "each_invoice_output", "Extract_Number_output"}
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Fatalf("parameter keys %v, want %v", keys, wantKeys)
	}
	idField := map[string]string{
		"website_url": "workflow_parameter_id", "email": "workflow_parameter_id", "portal_login": "credential_parameter_id",
		"Log_In_output": "output_parameter_id", "each_invoice_output": "output_parameter_id", "Extract_Number_output": "output_parameter_id",
	}
	idPrefix := map[string]string{"workflow_parameter_id": "wp_", "credential_parameter_id": "cp_", "output_parameter_id": "op_"}
	for k, m := range byKey {
		field := idField[k]
		if id, _ := m[field].(string); !strings.HasPrefix(id, idPrefix[field]) {
			t.Errorf("%s: %s = %v", k, field, m[field])
		}
		if m["workflow_id"] != workflowID || m["created_at"] != agent["created_at"] || m["modified_at"] != agent["created_at"] {
			t.Errorf("%s: workflow_id %v, created_at %v, modified_at %v", k, m["workflow_id"], m["created_at"], m["modified_at"])
		}
	}
	for _, label := range []string{"Log_In", "each_invoice", "Extract_Number"} {
		m := byKey[label+"_output"]
		if m["parameter_type"] != "output" || m["description"] != "Output parameter for block "+label {
			t.Errorf("%s_output: %v", label, m)
		}
	}

	blocks, _ := wd["blocks"].([]any)
	if len(blocks) != 2 {
		t.Fatalf("blocks %v", blocks)
	}
	task, _ := blocks[0].(map[string]any)
	if !reflect.DeepEqual(task["output_parameter"], byKey["Log_In_output"]) {
		t.Errorf("task output_parameter %v, want %v", task["output_parameter"], byKey["Log_In_output"])
	}
	if want := []any{byKey["website_url"], byKey["portal_login"]}; !reflect.DeepEqual(task["parameters"], want) {
		t.Errorf("task parameters %v, want %v", task["parameters"], want)
	}
	if _, ok := task["parameter_keys"]; ok {
		t.Error("the task block has parameter_keys")
	}
	if task["task_type"] != "general" || task["include_extracted_text"] != true {
		t.Errorf("task_type %v, include_extracted_text %v", task["task_type"], task["include_extracted_text"])
	}
	loop, _ := blocks[1].(map[string]any)
	if !reflect.DeepEqual(loop["loop_over"], byKey["Log_In_output"]) || loop["loop_over_parameter_key"] != nil {
		t.Errorf("loop_over %v, loop_over_parameter_key %v", loop["loop_over"], loop["loop_over_parameter_key"])
	}
	inner, _ := loop["loop_blocks"].([]any)
	if len(inner) != 1 {
		t.Fatalf("loop_blocks %v", loop["loop_blocks"])
	}
	extract, _ := inner[0].(map[string]any)
	if !reflect.DeepEqual(extract["output_parameter"], byKey["Extract_Number_output"]) ||
		!reflect.DeepEqual(extract["parameters"], []any{byKey["email"]}) || extract["include_extracted_text"] != false {
		t.Errorf("extraction block %v", extract)
	}

	// GET answers the same definition.
	wpid, _ := agent["workflow_permanent_id"].(string)
	got := call("GET", "/v1/agents/"+wpid, "", "")
	if !reflect.DeepEqual(got["workflow_definition"], agent["workflow_definition"]) {
		t.Errorf("GET definition differs from the POST answer")
	}

	// The SDK's request-shaped definition of the fetched agent, sent as an
	// update, gives the same definition with new ids.
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	fetched, err := c.Agents.Get(t.Context(), wpid, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Agents.Update(t.Context(), wpid, fetched.Definition()); err != nil {
		t.Fatal(err)
	}
	v2 := call("GET", "/v1/agents/"+wpid, "", "")
	if v2["version"] != 2.0 || v2["workflow_id"] == workflowID {
		t.Fatalf("update: version %v, workflow_id %v", v2["version"], v2["workflow_id"])
	}
	v2wd, _ := v2["workflow_definition"].(map[string]any)
	v2params, _ := v2wd["parameters"].([]any)
	if len(v2params) != len(params) {
		t.Fatalf("version 2 has %d parameters, version 1 %d", len(v2params), len(params))
	}
	for i, p := range v2params {
		m, _ := p.(map[string]any)
		if old := params[i].(map[string]any); m[idField[m["key"].(string)]] == old[idField[m["key"].(string)]] {
			t.Errorf("%v: the id of version 1 was kept", m["key"])
		}
	}
	if a, b := withoutIDs(agent["workflow_definition"]), withoutIDs(v2["workflow_definition"]); !reflect.DeepEqual(a, b) {
		a1, _ := json.Marshal(a)
		b1, _ := json.Marshal(b)
		t.Errorf("definition after a round trip through the SDK:\n got %s\nwant %s", b1, a1)
	}
}

// withoutIDs returns v with record ids, workflow ids and timestamps
// removed, in place.
func withoutIDs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if strings.HasSuffix(k, "parameter_id") || k == "workflow_id" || k == "created_at" || k == "modified_at" {
				delete(x, k)
				continue
			}
			withoutIDs(e)
		}
	case []any:
		for _, e := range x {
			withoutIDs(e)
		}
	}
	return v
}
