package client

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// identifier is the form of parameter keys and block labels: a Python
// identifier, as the service requires.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks what the service checks in a definition beyond its
// shape, before it stores it: a title, max_elapsed_time_minutes in range,
// parameter keys and block labels that are identifiers, unique keys and
// labels (loop blocks included), no parameter key taken by a block's
// <label>_output, no hand-made output parameters, a workflow parameter
// with its value type, and a finally_block_label that names a top-level
// block.
//
// It returns every problem at once, nil when there is none. Each Loc is
// relative to the definition (["workflow_definition", "blocks", 2,
// "label"]); the daemon prefixes it with where the definition sits in the
// request body, and the agentfile package maps it to a line of the file.
// Types and messages are the service's.
func (d *AgentDefinition) Validate() []ValidationError {
	var errs []ValidationError
	add := func(typ, msg string, input any, loc ...any) {
		v := ValidationError{Type: typ, Loc: loc, Msg: msg}
		if input != nil {
			v.Input, _ = json.Marshal(input)
		}
		errs = append(errs, v)
	}
	if strings.TrimSpace(d.Title) == "" {
		add("string_too_short", "String should have at least 1 character", d.Title, "title")
	}
	if m := d.MaxElapsedTimeMinutes; m != nil && (*m < 1 || *m > 480) {
		add("value_error", "max_elapsed_time_minutes must be between 1 and 480", *m, "max_elapsed_time_minutes")
	}

	wd := &d.WorkflowDefinition
	paramKeys := map[string]bool{}
	for i, p := range wd.Parameters {
		at := func(f string) []any { return []any{"workflow_definition", "parameters", i, f} }
		switch {
		case p.Key == "":
			add("missing", "Field required", nil, at("key")...)
		case !identifier.MatchString(p.Key):
			add("value_error", fmt.Sprintf("Parameter key %q must be an identifier: letters, digits and _, not starting with a digit", p.Key), p.Key, at("key")...)
		case paramKeys[p.Key]:
			add("value_error", fmt.Sprintf("Duplicate parameter key %q", p.Key), p.Key, at("key")...)
		}
		paramKeys[p.Key] = true
		switch p.ParameterType {
		case "":
			add("missing", "Field required", nil, at("parameter_type")...)
		case ParameterTypeOutput:
			add("value_error", "Cannot manually create output parameters", p.Key, at("parameter_type")...)
		case ParameterTypeWorkflow:
			if p.WorkflowParameterType == "" {
				add("missing", "Field required", nil, at("workflow_parameter_type")...)
			}
		}
	}

	labels := map[string]bool{}
	var walk func(blocks Blocks, path []any)
	walk = func(blocks Blocks, path []any) {
		for i, b := range blocks {
			if isNilBlock(b) {
				continue
			}
			at := func(more ...any) []any { return append(append(append([]any{}, path...), i), more...) }
			label := b.Base().Label
			switch {
			case label == "":
				add("missing", "Field required", nil, at("label")...)
			case !identifier.MatchString(label):
				add("value_error", fmt.Sprintf("Block label %q must be an identifier: letters, digits and _, not starting with a digit", label), label, at("label")...)
			case labels[label]:
				add("value_error", fmt.Sprintf("Duplicate block label %q", label), label, at("label")...)
			case paramKeys[label+"_output"]:
				add("value_error", fmt.Sprintf("Parameter key %q is reserved for the output of block %q", label+"_output", label), label, at("label")...)
			}
			labels[label] = true
			switch lb := b.(type) {
			case *ForLoopBlock:
				walk(lb.LoopBlocks, at("loop_blocks"))
			case *WhileLoopBlock:
				walk(lb.LoopBlocks, at("loop_blocks"))
			}
		}
	}
	walk(wd.Blocks, []any{"workflow_definition", "blocks"})

	if f := wd.FinallyBlockLabel; f != "" {
		found := false
		for _, b := range wd.Blocks {
			found = found || !isNilBlock(b) && b.Base().Label == f
		}
		if !found {
			add("value_error", fmt.Sprintf("finally_block_label %q does not name a top-level block", f), f, "workflow_definition", "finally_block_label")
		}
	}
	return errs
}
