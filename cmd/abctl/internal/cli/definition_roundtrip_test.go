package cli

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// exportAgent is an agent file whose workflow_definition has a value for
// every property of the hosted service's WorkflowDefinition schema (but
// version, which the service computes from the blocks), and the keys its
// copilot adds to the definitions it exports. It sets no key to its
// default value, which get -o yaml leaves out.
const exportAgent = `name: export
title: Wait for the export
workflow_definition:
  parameters:
    - key: status_url
      parameter_type: workflow
      workflow_parameter_type: string
  blocks:
    - block_type: http_request
      label: check
      method: POST
      url: "{{ status_url }}"
    - block_type: conditional
      label: is_ready
      branch_conditions:
        - criteria: {expression: "{{ check_output.body.ready }}"}
          next_block_label: done
        - is_default: true
          next_block_label: pause
    - block_type: wait
      label: pause
      wait_sec: 5
      next_block_label: check
    - block_type: wait
      label: done
      wait_sec: 1
  finally_block_label: done
  error_code_mapping:
    EXPORT_FAILED: The status page says the export failed
  workflow_system_prompt: Be brief.
  code_artifact_metadata:
    blocks:
      - {label: check, generated: true, functions: [poll]}
    version: 3
  completion_contract:
    criteria:
      - {description: the export is ready}
`

// TestApplyKeepsTheDefinitionsKeys: what abctl apply sends of a
// workflow_definition, a retry loop and code_artifact_metadata included,
// comes back from abctl get -o yaml as it was written, without a warning;
// and that file applies as unchanged.
func TestApplyKeepsTheDefinitionsKeys(t *testing.T) {
	e := newCLIEnv(t)
	file := e.write("agents/export.yaml", exportAgent)
	r := e.run("", "apply", "-f", file).expect(t, 0)
	if r.stdout != "agent/export created\n" || r.stderr != "" {
		t.Errorf("apply: %q %q", r.stdout, r.stderr)
	}
	r = e.run("", "get", "agent", "export", "-o", "yaml").expect(t, 0)
	var want, got struct {
		Def map[string]any `yaml:"workflow_definition"`
	}
	if err := yaml.Unmarshal([]byte(exportAgent), &want); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("get -o yaml: %v\n%s", err, r.stdout)
	}
	for k, v := range want.Def {
		if !reflect.DeepEqual(got.Def[k], v) {
			g, _ := yaml.Marshal(got.Def[k])
			w, _ := yaml.Marshal(v)
			t.Errorf("workflow_definition.%s came back as\n%s\nwent in as\n%s", k, g, w)
		}
	}
	exported := e.write("exported/export.yaml", r.stdout)
	r = e.run("", "apply", "-f", exported).expect(t, 0)
	if r.stdout != "agent/export unchanged\n" || strings.Contains(r.stderr, "warning") {
		t.Errorf("apply of get -o yaml: %q %q", r.stdout, r.stderr)
	}
}
