package blocks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

func TestCheckWorkflowTrigger(t *testing.T) {
	for _, tc := range []struct {
		block *client.WorkflowTriggerBlock
		want  string
	}{
		{&client.WorkflowTriggerBlock{WorkflowPermanentID: "wpid_1"}, ""},
		{&client.WorkflowTriggerBlock{WorkflowPermanentID: "{{ agent }}", Payload: json.RawMessage(`{"a": "{{ b }}"}`)}, ""},
		{&client.WorkflowTriggerBlock{WorkflowPermanentID: "wpid_1", Payload: json.RawMessage(`null`)}, ""},
		{&client.WorkflowTriggerBlock{WorkflowPermanentID: "  "}, `block "go" (workflow_trigger) has no workflow_permanent_id`},
		{&client.WorkflowTriggerBlock{WorkflowPermanentID: "wpid_1", Payload: json.RawMessage(`["a"]`)}, `block "go" (workflow_trigger): payload must be an object`},
	} {
		tc.block.Label = "go"
		def := client.WorkflowDefinition{Blocks: client.Blocks{tc.block}}
		err := Check(&def, false)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.block, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want %q", tc.block, err, tc.want)
		}
	}
}
