package blocks

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

func TestCheck(t *testing.T) {
	nav := &client.NavigationBlock{BlockBase: client.BlockBase{Label: "find"}, NavigationGoal: "Find it"}
	for _, tc := range []struct {
		def      client.WorkflowDefinition
		hasModel bool
		want     string
	}{
		{def: client.WorkflowDefinition{Blocks: client.Blocks{nav}}, hasModel: true},
		{def: client.WorkflowDefinition{Blocks: client.Blocks{nav}}, want: `block "find" (navigation) needs a language model`},
		{def: client.WorkflowDefinition{Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}}}}, want: `block "open" (goto_url) has no url`},
		{def: client.WorkflowDefinition{FinallyBlockLabel: "last", Blocks: client.Blocks{nav}}, hasModel: true, want: `finally_block_label "last" names no top-level block`},
		{def: client.WorkflowDefinition{Blocks: client.Blocks{&client.ForLoopBlock{BlockBase: client.BlockBase{Label: "each"}, LoopOverParameterKey: "items",
			LoopBlocks: client.Blocks{nav}}}}, want: `block "find" (navigation) needs a language model`},
	} {
		err := Check(&tc.def, tc.hasModel)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.def, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want %q", tc.def, err, tc.want)
		}
	}
}

func TestAsList(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want []any
	}{
		{nil, nil},
		{[]any{1.0, "a"}, []any{1.0, "a"}},
		{`["x","y"]`, []any{"x", "y"}},
		{json.RawMessage(`[1,2]`), []any{1.0, 2.0}},
		{"one", []any{"one"}},
		{" ", nil},
		{map[string]any{"k": 1.0}, []any{map[string]any{"k": 1.0}}},
	} {
		if got := asList(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("asList(%#v) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func TestMergeCodes(t *testing.T) {
	got := mergeCodes(map[string]string{"a": "block"}, map[string]string{"a": "def", "b": "def"})
	if want := map[string]string{"a": "block", "b": "def"}; !reflect.DeepEqual(got, want) {
		t.Errorf("mergeCodes = %v", got)
	}
}
