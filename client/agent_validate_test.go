package client_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
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
				&client.ForLoopBlock{BlockBase: client.BlockBase{Label: "each"}, LoopOverParameterKey: "open_output", LoopBlocks: client.Blocks{
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
		Blocks: client.Blocks{&client.ForLoopBlock{BlockBase: client.BlockBase{Label: "loop"}, LoopVariableReference: "{{ items }}",
			LoopBlocks: client.Blocks{&client.WaitBlock{BlockBase: client.BlockBase{Label: "inner"}}},
		}},
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

// TestValidateUndefinedParameters: parameter_keys and
// loop_over_parameter_key must name a parameter or a block's output, as
// the service requires (it answers WorkflowDefinitionHasUndefinedParameters,
// 422); every name it knows is accepted, in any block at any depth.
func TestValidateUndefinedParameters(t *testing.T) {
	// A block of a type this package does not know is checked from its
	// JSON, as the service checks every block.
	var unknown client.Blocks
	if err := json.Unmarshal([]byte(`[{"block_type":"browser_task","label":"browse","parameter_keys":["portal_url","site"]}]`), &unknown); err != nil {
		t.Fatal(err)
	}
	def := &client.AgentDefinition{Title: "Invoices", WorkflowDefinition: client.WorkflowDefinition{
		Parameters: []client.Parameter{
			{ParameterType: client.ParameterTypeWorkflow, Key: "portal_url", WorkflowParameterType: client.WorkflowParameterString},
			{ParameterType: client.ParameterTypeWorkflow, Key: "suppliers", WorkflowParameterType: client.WorkflowParameterJSON},
			{ParameterType: client.ParameterTypeContext, Key: "supplier", SourceParameterKey: "suppliers"},
		},
		Blocks: client.Blocks{
			// A login block naming a credential that was never declared.
			&client.LoginBlock{BlockBase: client.BlockBase{Label: "log_in"}, ParameterKeys: []string{"portal_url", "login_credentials"}},
			&client.ForLoopBlock{BlockBase: client.BlockBase{Label: "each"}, LoopOverParameterKey: "invoices", LoopBlocks: client.Blocks{
				// Outputs of blocks before and after, inside and outside
				// the loop, and a context parameter are all defined.
				&client.NavigationBlock{BlockBase: client.BlockBase{Label: "open"},
					ParameterKeys: []string{"supplier", "log_in_output", "summary_output", "open_output", "invoice_date"}},
			}},
			&client.ForLoopBlock{BlockBase: client.BlockBase{Label: "again"}, LoopOverParameterKey: "open_output"},
			&client.TextPromptBlock{BlockBase: client.BlockBase{Label: "summary"}, ParameterKeys: []string{"each_output"}},
			unknown[0],
		},
	}}
	var got []string
	for _, e := range def.Validate() {
		var input string
		if err := json.Unmarshal(e.Input, &input); err != nil {
			t.Errorf("%s: input %s", e.Path(), e.Input)
		}
		if e.Type != "value_error" || !strings.Contains(e.Msg, strings.Trim(string(e.Input), `"`)) {
			t.Errorf("%s: %s %q does not name the key", e.Path(), e.Type, e.Msg)
		}
		got = append(got, e.Path()+"="+input)
	}
	want := []string{
		"workflow_definition.blocks.0.parameter_keys.1=login_credentials",
		"workflow_definition.blocks.1.loop_over_parameter_key=invoices",
		"workflow_definition.blocks.1.loop_blocks.0.parameter_keys.4=invoice_date",
		"workflow_definition.blocks.4.parameter_keys.1=site",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Validate() found\n%v\nwant\n%v", got, want)
	}
	if errs := def.Validate(); len(errs) > 0 && !strings.Contains(errs[0].Msg, "parameter_keys") {
		t.Errorf("the message does not name the field: %q", errs[0].Msg)
	}
}

// TestValidateForLoopNeedsSomethingToLoopOver: the service refuses a
// for_loop with neither loop_over_parameter_key nor
// loop_variable_reference; a loop fetched back from a response carries
// its parameter's record in loop_over instead, which is enough.
func TestValidateForLoopNeedsSomethingToLoopOver(t *testing.T) {
	items := client.Parameter{ParameterType: client.ParameterTypeWorkflow, Key: "items", WorkflowParameterType: client.WorkflowParameterJSON}
	for _, tc := range []struct {
		name string
		loop *client.ForLoopBlock
		ok   bool
	}{
		{"nothing", &client.ForLoopBlock{}, false},
		{"a parameter key", &client.ForLoopBlock{LoopOverParameterKey: "items"}, true},
		{"a reference", &client.ForLoopBlock{LoopVariableReference: "{{ items }}"}, true},
		{"a reference to a block's output", &client.ForLoopBlock{LoopVariableReference: "get_data.output"}, true},
		{"the record of a response", &client.ForLoopBlock{LoopOver: &items}, true},
	} {
		tc.loop.Label = "download_invoice"
		tc.loop.LoopBlocks = client.Blocks{&client.WaitBlock{BlockBase: client.BlockBase{Label: "pause"}}}
		def := &client.AgentDefinition{Title: "t", WorkflowDefinition: client.WorkflowDefinition{
			Parameters: []client.Parameter{items},
			Blocks:     client.Blocks{&client.WaitBlock{BlockBase: client.BlockBase{Label: "first"}}, tc.loop},
		}}
		errs := def.Validate()
		if tc.ok {
			if errs != nil {
				t.Errorf("%s: Validate() = %v, want nil", tc.name, errs)
			}
			continue
		}
		if len(errs) != 1 || errs[0].Path() != "workflow_definition.blocks.1.loop_over_parameter_key" || errs[0].Type != "value_error" ||
			!strings.Contains(errs[0].Msg, "loop_over_parameter_key") || !strings.Contains(errs[0].Msg, "loop_variable_reference") {
			t.Errorf("%s: Validate() = %v, want one error at the loop naming both fields", tc.name, errs)
		}
	}
}

// TestValidateProxyLocation: a location name must be one the service
// knows (an enum error, as the service's); a mapping is not checked, as
// the service accepts any.
func TestValidateProxyLocation(t *testing.T) {
	def := func(p *client.ProxyLocation) *client.AgentDefinition {
		return &client.AgentDefinition{Title: "t", ProxyLocation: p}
	}
	for _, name := range client.ProxyLocationNames() {
		if errs := def(client.Proxy(name)).Validate(); errs != nil {
			t.Errorf("%s: %v", name, errs)
		}
	}
	for _, p := range []*client.ProxyLocation{
		nil,
		{Country: "US", Subdivision: "CA"},
		{URL: "http://user:pw@proxy.example.com:3128"},
		{Raw: json.RawMessage(`{"country":"USA"}`)},
	} {
		if errs := def(p).Validate(); errs != nil {
			t.Errorf("%+v: %v", p, errs)
		}
	}
	for _, name := range []string{"MARS", "residential", ""} {
		errs := def(client.Proxy(name)).Validate()
		if len(errs) != 1 {
			t.Fatalf("%q: Validate() = %v, want one error", name, errs)
		}
		e := errs[0]
		var input string
		var ctx struct{ Expected string }
		if e.Type != "enum" || e.Path() != "proxy_location" || json.Unmarshal(e.Input, &input) != nil || input != name ||
			json.Unmarshal(e.Ctx, &ctx) != nil || !strings.HasPrefix(e.Msg, "Input should be 'RESIDENTIAL', 'US-CA'") ||
			!strings.HasSuffix(e.Msg, "'RESIDENTIAL_ISP' or 'NONE'") || e.Msg != "Input should be "+ctx.Expected {
			t.Errorf("%q: %+v (input %s, ctx %s)", name, e, e.Input, e.Ctx)
		}
	}
	// The list is a copy.
	names := client.ProxyLocationNames()
	names[0] = "MARS"
	if errs := def(client.Proxy("MARS")).Validate(); errs == nil {
		t.Error("changing the returned list changed what Validate accepts")
	}
}

// TestValidateAcceptsTheTestdata: the definitions of testdata, which the
// service accepts, pass.
func TestValidateAcceptsTheTestdata(t *testing.T) {
	for _, tc := range []struct{ file, member string }{
		{"testdata/agent_request.json", "json_definition"},
		{"testdata/agent_yaml_example.json", ""},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if tc.member != "" {
			var wrapper map[string]json.RawMessage
			if err := json.Unmarshal(data, &wrapper); err != nil {
				t.Fatal(err)
			}
			data = wrapper[tc.member]
		}
		var def client.AgentDefinition
		if err := json.Unmarshal(data, &def); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if errs := def.Validate(); errs != nil {
			t.Errorf("%s: Validate() = %v", tc.file, errs)
		}
	}
}

// TestValidateRouting: next_block_label (of a block, or of a conditional's
// branch) must name a block of the same list; forward jumps, branches and
// routes back to an earlier block (a retry loop, bounded when run) are
// fine, and so is a block routing to itself.
func TestValidateRouting(t *testing.T) {
	wait := func(label, next string) client.Block {
		return &client.WaitBlock{BlockBase: client.BlockBase{Label: label, NextBlockLabel: next}}
	}
	branch := func(next string, def bool) client.BranchCondition {
		if def {
			return client.BranchCondition{IsDefault: true, NextBlockLabel: next}
		}
		return client.BranchCondition{Criteria: json.RawMessage(`{"expression":"{{ x }}"}`), NextBlockLabel: next}
	}
	def := func(bs ...client.Block) *client.AgentDefinition {
		return &client.AgentDefinition{Title: "t", WorkflowDefinition: client.WorkflowDefinition{Blocks: bs}}
	}
	for name, tc := range map[string]struct {
		d    *client.AgentDefinition
		want string // "" for valid
	}{
		"forward jumps": {def(wait("a", "c"), wait("b", ""), wait("c", "")), ""},
		"branches forward": {def(&client.ConditionalBlock{BlockBase: client.BlockBase{Label: "route"}, BranchConditions: []client.BranchCondition{branch("c", false), branch("", true)}},
			wait("b", ""), wait("c", "")), ""},
		"a label that names nothing": {def(wait("a", "nowhere")), `next_block_label "nowhere" names no block of the same list`},
		"a branch to nowhere": {def(&client.ConditionalBlock{BlockBase: client.BlockBase{Label: "route"}, BranchConditions: []client.BranchCondition{branch("gone", true)}}),
			`"gone" names no block`},
		"a jump back":   {def(wait("a", ""), wait("b", "a")), ""},
		"a branch back": {def(wait("a", ""), &client.ConditionalBlock{BlockBase: client.BlockBase{Label: "route"}, BranchConditions: []client.BranchCondition{branch("a", false), branch("", true)}}), ""},
		"a retry loop": {def(&client.ConditionalBlock{BlockBase: client.BlockBase{Label: "route"}, BranchConditions: []client.BranchCondition{branch("done", false), branch("pause", true)}},
			wait("pause", "route"), wait("done", "")), ""},
		"a block routing to itself": {def(wait("a", "a")), ""},
		"a retry loop routing to nowhere": {def(&client.ConditionalBlock{BlockBase: client.BlockBase{Label: "route"}, BranchConditions: []client.BranchCondition{branch("done", false), branch("pause", true)}},
			wait("pause", "rout")), `next_block_label "rout" names no block`},
		"a loop's block routing out": {def(&client.ForLoopBlock{BlockBase: client.BlockBase{Label: "each"}, LoopVariableReference: "x",
			LoopBlocks: client.Blocks{wait("inner", "outer")}}, wait("outer", "")), `"outer" names no block of the same list`},
	} {
		var msgs []string
		for _, e := range tc.d.Validate() {
			msgs = append(msgs, e.Msg)
		}
		got := strings.Join(msgs, "; ")
		switch {
		case tc.want == "" && got != "":
			t.Errorf("%s: %s", name, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

// TestValidateRequiredBlockKeys: a block without a key the service's
// definition schema requires of its type (or with it null) is refused,
// each missing key at its place, inside loops too; the same blocks
// encoded by the client (an agent fetched and sent back) keep them all.
func TestValidateRequiredBlockKeys(t *testing.T) {
	const body = `{"title": "t", "workflow_definition": {"parameters": [], "blocks": [
		{"block_type": "send_email", "label": "mail", "sender": "a@example.com", "recipients": ["b@example.com"], "body": null},
		{"block_type": "for_loop", "label": "each", "loop_variable_reference": "mail", "loop_blocks": [
			{"block_type": "goto_url", "label": "open"},
			{"block_type": "text_prompt", "label": "ask", "prompt": ""}
		]},
		{"block_type": "extraction", "label": "read", "data_schema": {"type": "object"}},
		{"block_type": "file_download", "label": "get", "url": "https://example.com/a.csv"}
	]}}`
	var d client.AgentDefinition
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range d.Validate() {
		if e.Type != "missing" {
			t.Errorf("unexpected: %+v", e)
			continue
		}
		got = append(got, strings.TrimSpace(fmt.Sprintln(e.Loc...)))
	}
	want := []string{
		"workflow_definition blocks 0 subject",
		"workflow_definition blocks 0 body",
		"workflow_definition blocks 1 loop_blocks 0 url",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("missing keys at\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Encoded by the client, the blocks carry every required key: an
	// empty prompt is present, as it was.
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var again client.AgentDefinition
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatal(err)
	}
	if errs := again.Validate(); len(errs) != 0 {
		t.Errorf("the client's own encoding is refused: %+v", errs)
	}
}
