package client

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// identifier is the form of parameter keys and block labels: a Python
// identifier, as the service requires.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks what the service checks in a definition beyond its
// shape, before it stores it: a title, max_elapsed_time_minutes in range,
// a proxy_location name the service knows, parameter keys and block labels
// that are identifiers, unique keys and labels (loop blocks included), no
// parameter key taken by a block's <label>_output, no hand-made output
// parameters, a workflow parameter with its value type, parameter_keys and
// loop_over_parameter_key that name a parameter or a block's output, a
// for_loop with something to loop over, and a finally_block_label that
// names a top-level block.
//
// It returns every problem at once, nil when there is none. Each Loc is
// relative to the definition (["workflow_definition", "blocks", 2,
// "label"]); the daemon prefixes it with where the definition sits in the
// request body, and the agentfile package maps it to a line of the file.
// The types are the service's (missing, value_error, enum, ...), and so is
// the status the daemon answers them with (422); the messages say what is
// wrong in the terms of the definition's fields.
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
	if p := d.ProxyLocation; p != nil && isProxyName(p) && !slices.Contains(proxyLocationNames, p.Name) {
		errs = append(errs, unknownProxyLocation(p.Name))
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

	// What a block may name in parameter_keys or loop_over_parameter_key:
	// a parameter, or the output parameter of any block (the service
	// makes every block's <label>_output before it reads the blocks).
	defined := map[string]bool{}
	for _, p := range wd.Parameters {
		if p.Key != "" {
			defined[p.Key] = true
		}
	}
	wd.Blocks.Walk(func(b Block) {
		if l := b.Base().Label; l != "" {
			defined[l+"_output"] = true
		}
	})
	undefined := func(field, key string) string {
		return fmt.Sprintf("Undefined parameter %q: %s must name a parameter of the workflow or the output of a block (<label>_output)", key, field)
	}

	labels := map[string]bool{}
	var walk func(blocks Blocks, path []any)
	walk = func(blocks Blocks, path []any) {
		for i, b := range blocks {
			if IsNilBlock(b) {
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
			for _, k := range b.Base().missing {
				add("missing", "Field required", nil, at(k)...)
			}
			for j, k := range parameterKeysOf(b) {
				if !defined[k] {
					add("value_error", undefined("parameter_keys", k), k, at("parameter_keys", j)...)
				}
			}
			switch lb := b.(type) {
			case *ForLoopBlock:
				switch k := lb.LoopOverParameterKey; {
				case k != "" && !defined[k]:
					add("value_error", undefined("loop_over_parameter_key", k), k, at("loop_over_parameter_key")...)
				case k == "" && lb.LoopVariableReference == "" && lb.LoopOver == nil:
					// A response-shaped loop (a fetched agent sent back)
					// carries the record of its parameter in loop_over.
					add("value_error", "A for_loop needs something to loop over: set loop_over_parameter_key or loop_variable_reference", nil, at("loop_over_parameter_key")...)
				}
				walk(lb.LoopBlocks, at("loop_blocks"))
			case *WhileLoopBlock:
				walk(lb.LoopBlocks, at("loop_blocks"))
			}
		}
		errs = append(errs, checkRouting(blocks, path)...)
	}
	walk(wd.Blocks, []any{"workflow_definition", "blocks"})

	if f := wd.FinallyBlockLabel; f != "" {
		found := false
		for _, b := range wd.Blocks {
			found = found || !IsNilBlock(b) && b.Base().Label == f
		}
		if !found {
			add("value_error", fmt.Sprintf("finally_block_label %q does not name a top-level block", f), f, "workflow_definition", "finally_block_label")
		}
	}
	return errs
}

// checkRouting checks the routing of one list of blocks: every
// next_block_label (of a block, or of a conditional's branch) names a block
// of the same list. Routes back to an earlier block are allowed (a
// conditional that routes back through a wait is a retry loop, which the
// hosted service accepts): the engine bounds how often a block runs again
// when followed.
func checkRouting(blocks Blocks, path []any) []ValidationError {
	var errs []ValidationError
	labels := map[string]bool{}
	for _, b := range blocks {
		if !IsNilBlock(b) && b.Base().Label != "" {
			labels[b.Base().Label] = true
		}
	}
	check := func(label string, loc []any) {
		if label == "" || labels[label] {
			return
		}
		v := ValidationError{Type: "value_error", Loc: loc,
			Msg: fmt.Sprintf("next_block_label %q names no block of the same list (a block can route only to its siblings)", label)}
		v.Input, _ = json.Marshal(label)
		errs = append(errs, v)
	}
	at := func(more ...any) []any { return append(append([]any{}, path...), more...) }
	for i, b := range blocks {
		if IsNilBlock(b) {
			continue
		}
		if c, ok := b.(*ConditionalBlock); ok && len(c.BranchConditions) > 0 {
			for j, bc := range c.BranchConditions {
				check(bc.NextBlockLabel, at(i, "branch_conditions", j, "next_block_label"))
			}
			continue
		}
		check(b.Base().NextBlockLabel, at(i, "next_block_label"))
	}
	return errs
}

// isProxyName reports whether p was given as a name (possibly an empty
// one) rather than as a mapping.
func isProxyName(p *ProxyLocation) bool {
	return p.Country == "" && p.URL == "" && len(p.Raw) == 0
}

// unknownProxyLocation is the error of a location name the service does
// not know, in the form of the service's enum errors: the names it
// expects, quoted, the last after "or".
func unknownProxyLocation(name string) ValidationError {
	quoted := make([]string, len(proxyLocationNames))
	for i, n := range proxyLocationNames {
		quoted[i] = "'" + n + "'"
	}
	expected := strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
	v := ValidationError{Type: "enum", Loc: []any{"proxy_location"}, Msg: "Input should be " + expected}
	v.Input, _ = json.Marshal(name)
	v.Ctx, _ = json.Marshal(map[string]string{"expected": expected})
	return v
}

// Walk calls fn for every block of bs, the blocks of loops included, a
// loop before its blocks; nil blocks are skipped.
func (bs Blocks) Walk(fn func(Block)) {
	for _, b := range bs {
		if IsNilBlock(b) {
			continue
		}
		fn(b)
		switch x := b.(type) {
		case *ForLoopBlock:
			x.LoopBlocks.Walk(fn)
		case *WhileLoopBlock:
			x.LoopBlocks.Walk(fn)
		}
	}
}

// parameterKeysOf returns a block's parameter_keys: the ParameterKeys field
// of the block types that have one, or the parameter_keys member of an
// UnknownBlock's JSON; nil for a block without any.
func parameterKeysOf(b Block) []string {
	if u, ok := b.(*UnknownBlock); ok {
		var v struct {
			ParameterKeys []string `json:"parameter_keys"`
		}
		_ = json.Unmarshal(u.Raw, &v) // a block that is not an object, or keys of another shape: none
		return v.ParameterKeys
	}
	if keys := BlockParameterKeys(b); keys != nil {
		return *keys
	}
	return nil
}
