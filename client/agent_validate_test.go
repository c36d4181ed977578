package client_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/abctl/abctl/client"
)

func TestValidateAcceptsAValidDefinition(t *testing.T) {
	def := &client.AgentDefinition{
		Title:                 "Contact forms",
		MaxElapsedTimeMinutes: client.Ptr(480),
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: []client.Parameter{
				{ParameterType: client.ParameterTypeWorkflow, Key: "website_url", WorkflowParameterType: client.WorkflowParameterString},
				{ParameterType: client.ParameterTypeCredential, Key: "login", CredentialID: "cred_1"},
			},
			Blocks: client.Blocks{
				&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "{{website_url}}"},
				&client.ForLoopBlock{BlockBase: client.BlockBase{Label: "each"}, LoopBlocks: client.Blocks{
					&client.WaitBlock{BlockBase: client.BlockBase{Label: "_pause2"}},
				}},
				&client.SendEmailBlock{BlockBase: client.BlockBase{Label: "Notify"}},
			},
			FinallyBlockLabel: "Notify",
		},
	}
	if errs := def.Validate(); errs != nil {
		t.Errorf("Validate() = %v, want nil", errs)
	}
}

// TestValidateFindsEveryProblem: one definition with every problem the
// validator knows gets all of them at once, each at its location relative
// to the definition.
func TestValidateFindsEveryProblem(t *testing.T) {
	def := &client.AgentDefinition{
		Title:                 "   ",
		MaxElapsedTimeMinutes: client.Ptr(0),
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: []client.Parameter{
				{ParameterType: client.ParameterTypeWorkflow, Key: "1st", WorkflowParameterType: client.WorkflowParameterString},
				{ParameterType: client.ParameterTypeWorkflow, Key: "x"},
				{ParameterType: client.ParameterTypeWorkflow, Key: "x", WorkflowParameterType: client.WorkflowParameterString},
				{ParameterType: client.ParameterTypeOutput, Key: "made_output"},
				{Key: "open_output"},
				{ParameterType: client.ParameterTypeAWSSecret},
			},
			Blocks: client.Blocks{
				&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}},
				&client.WhileLoopBlock{BlockBase: client.BlockBase{Label: "loop"}, LoopBlocks: client.Blocks{
					&client.WaitBlock{BlockBase: client.BlockBase{Label: "open"}},
					&client.WaitBlock{BlockBase: client.BlockBase{Label: "has space"}},
					&client.WaitBlock{},
				}},
			},
			FinallyBlockLabel: "nowhere",
		},
	}
	type want struct {
		typ, loc, input string
	}
	wants := []want{
		{"string_too_short", "title", `"   "`},
		{"value_error", "max_elapsed_time_minutes", `0`},
		{"value_error", "workflow_definition.parameters.0.key", `"1st"`},
		{"missing", "workflow_definition.parameters.1.workflow_parameter_type", ``},
		{"value_error", "workflow_definition.parameters.2.key", `"x"`},
		{"value_error", "workflow_definition.parameters.3.parameter_type", `"made_output"`},
		{"missing", "workflow_definition.parameters.4.parameter_type", ``},
		{"missing", "workflow_definition.parameters.5.key", ``},
		{"value_error", "workflow_definition.blocks.0.label", `"open"`},
		{"value_error", "workflow_definition.blocks.1.loop_blocks.0.label", `"open"`},
		{"value_error", "workflow_definition.blocks.1.loop_blocks.1.label", `"has space"`},
		{"missing", "workflow_definition.blocks.1.loop_blocks.2.label", ``},
		{"value_error", "workflow_definition.finally_block_label", `"nowhere"`},
	}
	errs := def.Validate()
	var got []want
	for _, e := range errs {
		got = append(got, want{e.Type, e.Path(), string(e.Input)})
		if e.Msg == "" {
			t.Errorf("%s: no message", e.Path())
		}
	}
	if !slices.Equal(got, wants) {
		t.Errorf("Validate() found\n%v\nwant\n%v", got, wants)
	}
	// The messages are the service's; spot-check the ones users see most.
	msgs := map[string]string{}
	for _, e := range errs {
		msgs[e.Path()] = e.Msg
	}
	for path, msg := range map[string]string{
		"workflow_definition.parameters.2.key":                     `Duplicate parameter key "x"`,
		"workflow_definition.parameters.3.parameter_type":          "Cannot manually create output parameters",
		"workflow_definition.blocks.0.label":                       `Parameter key "open_output" is reserved for the output of block "open"`,
		"workflow_definition.blocks.1.loop_blocks.0.label":         `Duplicate block label "open"`,
		"workflow_definition.blocks.1.loop_blocks.2.label":         "Field required",
		"workflow_definition.finally_block_label":                  `finally_block_label "nowhere" does not name a top-level block`,
		"workflow_definition.blocks.1.loop_blocks.1.label":         `Block label "has space" must be an identifier: letters, digits and _, not starting with a digit`,
		"workflow_definition.parameters.1.workflow_parameter_type": "Field required",
	} {
		if msgs[path] != msg {
			t.Errorf("%s: %q, want %q", path, msgs[path], msg)
		}
	}
	// Locations hold list indexes as ints, as decoded replies do.
	if _, ok := errs[2].Loc[2].(int); !ok {
		t.Errorf("index in %v is a %T", errs[2].Loc, errs[2].Loc[2])
	}
}

// TestValidateFinallyBlockIsTopLevel: a finally block must be a block of
// the top-level list, not one inside a loop.
func TestValidateFinallyBlockIsTopLevel(t *testing.T) {
	def := &client.AgentDefinition{Title: "t", WorkflowDefinition: client.WorkflowDefinition{
		Blocks: client.Blocks{&client.ForLoopBlock{BlockBase: client.BlockBase{Label: "loop"}, LoopBlocks: client.Blocks{
			&client.WaitBlock{BlockBase: client.BlockBase{Label: "inner"}},
		}}},
		FinallyBlockLabel: "inner",
	}}
	errs := def.Validate()
	if len(errs) != 1 || errs[0].Path() != "workflow_definition.finally_block_label" {
		t.Fatalf("Validate() = %v", errs)
	}
	var input string
	if err := json.Unmarshal(errs[0].Input, &input); err != nil || input != "inner" {
		t.Errorf("input %s", errs[0].Input)
	}
}
