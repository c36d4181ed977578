package definition

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
)

// clock starts at a fixed time and moves 1ms forward at every reading, so
// that every version of a test has its own created_at.
var clock = struct {
	sync.Mutex
	t time.Time
}{t: time.Date(2026, 1, 31, 15, 20, 42, 160725000, time.UTC)}

func now() time.Time {
	clock.Lock()
	defer clock.Unlock()
	clock.t = clock.t.Add(time.Millisecond)
	return clock.t
}

var gen = ids.NewWithClock(42, now)

// version makes a new version of def as the daemon does before storing it:
// a copy of def (which is left alone) with a new workflow_id, created_at
// and its definition expanded.
func version(t *testing.T, def *client.Agent) *client.Agent {
	t.Helper()
	var a client.Agent
	if err := json.Unmarshal([]byte(mustJSON(t, def)), &a); err != nil {
		t.Fatal(err)
	}
	NewVersion(&a, gen, client.NewTime(now()))
	return &a
}

func workflowParam(key, description string, def any) client.Parameter {
	p := client.Parameter{ParameterType: client.ParameterTypeWorkflow, Key: key, Description: description,
		WorkflowParameterType: client.WorkflowParameterString}
	if def != nil {
		p.DefaultValue, _ = json.Marshal(def)
	}
	return p
}

// agentDef is a definition with one navigation block, as the API decodes
// it.
func agentDef(title string, params ...client.Parameter) *client.Agent {
	return &client.Agent{
		Title:  title,
		Status: client.AgentStatusPublished,
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: params,
			Blocks: client.Blocks{&client.NavigationBlock{
				BlockBase:      client.BlockBase{Label: "open"},
				NavigationGoal: "Open the page and log in",
				URL:            "{{url}}",
			}},
		},
		RunWith: "agent",
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

// responseDef is a definition with two workflow parameters, a credential,
// a context parameter reading a block's output, a task block, a for_loop
// over that output with an extraction block inside, and a block of a type
// the client does not know.
func responseDef(title string) *client.Agent {
	return &client.Agent{
		Title:  title,
		Status: client.AgentStatusPublished,
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: []client.Parameter{
				workflowParam("url", "Portal address", "https://example.com"),
				workflowParam("email", "Where replies go", nil),
				{ParameterType: client.ParameterTypeCredential, Key: "login", Description: "Portal login", CredentialID: "cred_1"},
				{ParameterType: client.ParameterTypeContext, Key: "rows", SourceParameterKey: "fill_output"},
			},
			Blocks: client.Blocks{
				&client.TaskBlock{
					BlockBase:      client.BlockBase{Label: "fill"},
					URL:            "{{url}}",
					NavigationGoal: "Log in and open the invoices",
					ParameterKeys:  []string{"url", "login"},
				},
				&client.ForLoopBlock{
					BlockBase:            client.BlockBase{Label: "each"},
					LoopOverParameterKey: "fill_output",
					LoopBlocks: client.Blocks{&client.ExtractionBlock{
						BlockBase:          client.BlockBase{Label: "pick"},
						DataExtractionGoal: "Extract the invoice number",
						ParameterKeys:      []string{"email", "rows"},
					}},
				},
				&client.UnknownBlock{Type: "future_block",
					Raw: json.RawMessage(`{"block_type":"future_block","label":"notify","parameter_keys":["email"],"extra":[1,2]}`)},
			},
		},
		RunWith: "agent",
	}
}

func TestExpand(t *testing.T) {
	a := version(t, responseDef("Invoices"))
	wd := a.WorkflowDefinition

	// Parameters: the ones sent, in order, then one output parameter per
	// block, a loop before its blocks.
	wantKeys := []string{"url", "email", "login", "rows", "fill_output", "each_output", "pick_output", "notify_output"}
	if got := paramKeys(wd.Parameters); !slices.Equal(got, wantKeys) {
		t.Fatalf("parameter keys %v, want %v", got, wantKeys)
	}
	wantPrefix := []string{"wp", "wp", "cp", "", "op", "op", "op", "op"}
	seen := map[string]bool{}
	for i, p := range wd.Parameters {
		id := p.ID()
		if wantPrefix[i] == "" {
			if id != "" {
				t.Errorf("%s: id %q", p.Key, id)
			}
			continue
		}
		if prefix, _, ok := ids.Parse(id); !ok || prefix != wantPrefix[i] {
			t.Errorf("%s: id %q, want prefix %s", p.Key, id, wantPrefix[i])
		}
		if seen[id] {
			t.Errorf("%s: id %q used twice", p.Key, id)
		}
		seen[id] = true
		if p.WorkflowID != a.WorkflowID || !p.CreatedAt.Equal(a.CreatedAt.Time) || !p.ModifiedAt.Equal(a.CreatedAt.Time) || p.DeletedAt != nil {
			t.Errorf("%s: workflow_id %q, times %v %v %v", p.Key, p.WorkflowID, p.CreatedAt, p.ModifiedAt, p.DeletedAt)
		}
	}
	byKey := map[string]client.Parameter{}
	for _, p := range wd.Parameters {
		byKey[p.Key] = p
	}
	for _, label := range []string{"fill", "each", "pick", "notify"} {
		p := byKey[label+"_output"]
		if p.ParameterType != client.ParameterTypeOutput || p.Description != "Output parameter for block "+label {
			t.Errorf("%s_output: %+v", label, p)
		}
	}
	if p := byKey["login"]; p.CredentialID != "cred_1" || p.WorkflowParameterID != "" || p.OutputParameterID != "" {
		t.Errorf("credential parameter %+v", p)
	}
	// A context parameter has no record of its own: it carries its source.
	if p := byKey["rows"]; p.Source == nil || mustJSON(t, *p.Source) != mustJSON(t, byKey["fill_output"]) ||
		p.SourceParameterKey != "" || p.WorkflowID != "" || !p.CreatedAt.IsZero() {
		t.Errorf("context parameter %s", mustJSON(t, p))
	}

	same := func(what string, got, want any) {
		t.Helper()
		if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
			t.Errorf("%s:\n got %s\nwant %s", what, g, w)
		}
	}
	task := wd.Blocks[0].(*client.TaskBlock)
	same("task output_parameter", task.OutputParameter, byKey["fill_output"])
	same("task parameters", task.Parameters, []client.Parameter{byKey["url"], byKey["login"]})
	if task.ParameterKeys != nil || task.TaskType != "general" || task.IncludeExtractedText == nil || !*task.IncludeExtractedText {
		t.Errorf("task block: keys %v, task_type %q, include_extracted_text %v", task.ParameterKeys, task.TaskType, task.IncludeExtractedText)
	}
	loop := wd.Blocks[1].(*client.ForLoopBlock)
	same("loop output_parameter", loop.OutputParameter, byKey["each_output"])
	same("loop_over", loop.LoopOver, byKey["fill_output"])
	if loop.LoopOverParameterKey != "" || loop.Parameters != nil {
		t.Errorf("loop: key %q, parameters %v", loop.LoopOverParameterKey, loop.Parameters)
	}
	pick := loop.LoopBlocks[0].(*client.ExtractionBlock)
	same("extraction output_parameter", pick.OutputParameter, byKey["pick_output"])
	same("extraction parameters", pick.Parameters, []client.Parameter{byKey["email"], byKey["rows"]})
	if pick.TaskType != "general" || pick.IncludeExtractedText == nil || *pick.IncludeExtractedText {
		t.Errorf("extraction: task_type %q, include_extracted_text %v", pick.TaskType, pick.IncludeExtractedText)
	}
	var notify map[string]any
	if err := json.Unmarshal(wd.Blocks[2].(*client.UnknownBlock).Raw, &notify); err != nil {
		t.Fatal(err)
	}
	same("unknown block output_parameter", notify["output_parameter"], asAny(t, byKey["notify_output"]))
	same("unknown block parameters", notify["parameters"], asAny(t, []client.Parameter{byKey["email"]}))
	if _, ok := notify["parameter_keys"]; ok || notify["extra"] == nil || notify["label"] != "notify" {
		t.Errorf("unknown block %v", notify)
	}
	if wd.Blocks[2].Base().OutputParameter == nil {
		t.Error("the unknown block's view of its common fields is stale")
	}
	if wd.Version == nil || *wd.Version != 1 {
		t.Errorf("definition version %v", wd.Version)
	}

	// The wire form has no request-only fields.
	var wire any
	if err := json.Unmarshal([]byte(mustJSON(t, a)), &wire); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"parameter_keys", "loop_over_parameter_key", "source_parameter_key"} {
		if path := findKey(wire, k, "$"); path != "" {
			t.Errorf("the response has %s at %s", k, path)
		}
	}

	// The version reads back from its JSON form, the form it is stored
	// in, unchanged.
	var back client.Agent
	if err := json.Unmarshal([]byte(mustJSON(t, a)), &back); err != nil || mustJSON(t, &back) != mustJSON(t, a) {
		t.Fatalf("decoded: %v\n%s\n%s", err, mustJSON(t, &back), mustJSON(t, a))
	}

}

func TestExpandNewIDsPerVersion(t *testing.T) {
	v1 := version(t, responseDef("Invoices"))
	v2 := version(t, responseDef("Invoices"))
	ids1, ids2 := recordIDs(t, v1), recordIDs(t, v2)
	if len(ids1) != 7 || len(ids2) != 7 {
		t.Fatalf("ids: %v / %v", ids1, ids2)
	}
	for id := range ids2 {
		if ids1[id] {
			t.Errorf("id %s in both versions", id)
		}
	}
	for i, p := range v2.WorkflowDefinition.Parameters {
		if p.ParameterType != client.ParameterTypeContext && (p.WorkflowID != v2.WorkflowID || !p.CreatedAt.Equal(v2.CreatedAt.Time)) {
			t.Errorf("v2 parameter %d: workflow_id %q, created_at %v", i, p.WorkflowID, p.CreatedAt)
		}
	}
	same := mustJSON(t, normalized(t, v1.WorkflowDefinition)) == mustJSON(t, normalized(t, v2.WorkflowDefinition))
	if !same {
		t.Errorf("v1 and v2 differ beyond ids and times:\n%s\n%s", mustJSON(t, normalized(t, v1.WorkflowDefinition)), mustJSON(t, normalized(t, v2.WorkflowDefinition)))
	}
}

// TestExpandRoundTrip: the request-shaped definition of a version, made
// into a version again, gives the same agent (up to ids and times).
func TestExpandRoundTrip(t *testing.T) {
	a := version(t, responseDef("Invoices"))
	d := a.Definition()
	wd := d.WorkflowDefinition
	if got := paramKeys(wd.Parameters); !slices.Equal(got, []string{"url", "email", "login", "rows"}) {
		t.Fatalf("Definition parameters %v", got)
	}
	if p := wd.Parameters[3]; p.SourceParameterKey != "fill_output" || p.Source != nil {
		t.Errorf("context parameter %+v", p)
	}
	task := wd.Blocks[0].(*client.TaskBlock)
	if !slices.Equal(task.ParameterKeys, []string{"url", "login"}) || task.Parameters != nil || task.OutputParameter != nil || task.TaskType != "" {
		t.Errorf("task block %s", mustJSON(t, task))
	}
	loop := wd.Blocks[1].(*client.ForLoopBlock)
	if loop.LoopOverParameterKey != "fill_output" || loop.LoopOver != nil {
		t.Errorf("loop %s", mustJSON(t, loop))
	}

	b := version(t, fromDefinition(d))
	if g, w := mustJSON(t, normalized(t, b.WorkflowDefinition)), mustJSON(t, normalized(t, a.WorkflowDefinition)); g != w {
		t.Errorf("round trip:\n got %s\nwant %s", g, w)
	}
	if g, w := mustJSON(t, b.Definition()), mustJSON(t, d); g != w {
		t.Errorf("Definition after a round trip:\n got %s\nwant %s", g, w)
	}
}

// TestExpandResponseShapedInput: a definition that is already in the
// response shape (a fetched agent sent back, as JSON) is not expanded
// twice: no output parameter twice, block parameters standing for
// parameter_keys, new ids.
func TestExpandResponseShapedInput(t *testing.T) {
	a := version(t, responseDef("Invoices"))

	var back client.Agent // the GET body, decoded as the daemon would
	if err := json.Unmarshal([]byte(mustJSON(t, a)), &back); err != nil {
		t.Fatal(err)
	}
	b := version(t, &back)
	if got, want := paramKeys(b.WorkflowDefinition.Parameters), paramKeys(a.WorkflowDefinition.Parameters); !slices.Equal(got, want) {
		t.Fatalf("parameters %v, want %v", got, want)
	}
	if g, w := mustJSON(t, normalized(t, b.WorkflowDefinition)), mustJSON(t, normalized(t, a.WorkflowDefinition)); g != w {
		t.Errorf("sent back:\n got %s\nwant %s", g, w)
	}
	for id := range recordIDs(t, b) {
		if recordIDs(t, a)[id] {
			t.Errorf("id %s reused", id)
		}
	}

	// Edited by hand: the output parameters removed, a block's parameters
	// changed (their records are stale), the context parameter's source
	// given as a record.
	edited := responseDef("Invoices")
	edited.WorkflowDefinition = back.WorkflowDefinition
	wd := &edited.WorkflowDefinition
	wd.Parameters = slices.DeleteFunc(slices.Clone(wd.Parameters), func(p client.Parameter) bool {
		return p.ParameterType == client.ParameterTypeOutput
	})
	task := wd.Blocks[0].(*client.TaskBlock)
	task.Parameters = []client.Parameter{{ParameterType: client.ParameterTypeWorkflow, Key: "email", WorkflowParameterID: "wp_1"}}
	c := version(t, edited)
	byKey := map[string]client.Parameter{}
	for _, p := range c.WorkflowDefinition.Parameters {
		byKey[p.Key] = p
	}
	if got := paramKeys(c.WorkflowDefinition.Parameters); len(got) != 8 {
		t.Fatalf("parameters %v", got)
	}
	ctask := c.WorkflowDefinition.Blocks[0].(*client.TaskBlock)
	if g, w := mustJSON(t, ctask.Parameters), mustJSON(t, []client.Parameter{byKey["email"]}); g != w {
		t.Errorf("task parameters:\n got %s\nwant %s", g, w)
	}
	if ctask.OutputParameter == nil || ctask.OutputParameter.OutputParameterID != byKey["fill_output"].OutputParameterID {
		t.Errorf("task output_parameter %+v", ctask.OutputParameter)
	}
}

func TestExpandEdgeCases(t *testing.T) {
	def := agentDef("edges", workflowParam("url", "", nil),
		// An output parameter of no block is kept, as a new record.
		client.Parameter{ParameterType: client.ParameterTypeOutput, Key: "gone_output", Description: "old", OutputParameterID: "op_1"},
		client.Parameter{ParameterType: client.ParameterTypeContext, Key: "dangling", SourceParameterKey: "nowhere"})
	def.WorkflowDefinition.Blocks = append(def.WorkflowDefinition.Blocks,
		// A key that names no parameter: parameter_keys stays.
		&client.NavigationBlock{BlockBase: client.BlockBase{Label: "second", NextBlockLabel: "open"},
			NavigationGoal: "g", ParameterKeys: []string{"url", "missing"}},
		&client.WaitBlock{BlockBase: client.BlockBase{Label: "pause"}, WaitSec: 5},
	)
	a := version(t, def)
	wd := a.WorkflowDefinition
	if got := paramKeys(wd.Parameters); !slices.Equal(got, []string{"url", "gone_output", "dangling", "open_output", "second_output", "pause_output"}) {
		t.Fatalf("parameters %v", got)
	}
	if p := wd.Parameters[1]; p.OutputParameterID == "op_1" || !strings.HasPrefix(p.OutputParameterID, "op_") || p.Description != "old" {
		t.Errorf("orphan output parameter %+v", p)
	}
	if p := wd.Parameters[2]; p.SourceParameterKey != "nowhere" || p.Source != nil {
		t.Errorf("dangling context parameter %+v", p)
	}
	nav := wd.Blocks[1].(*client.NavigationBlock)
	if !slices.Equal(nav.ParameterKeys, []string{"url", "missing"}) || nav.Parameters != nil || nav.OutputParameter == nil {
		t.Errorf("unresolved block %s", mustJSON(t, nav))
	}
	if w := wd.Blocks[2].(*client.WaitBlock); w.OutputParameter == nil || w.OutputParameter.Key != "pause_output" || w.Parameters != nil {
		t.Errorf("wait block %s", mustJSON(t, w))
	}
	// next_block_label routes: version 2. An explicit version is kept.
	if wd.Version == nil || *wd.Version != 2 {
		t.Errorf("version %v", wd.Version)
	}
	def.WorkflowDefinition.Version = new(1)
	if b := version(t, def); *b.WorkflowDefinition.Version != 1 {
		t.Errorf("explicit version became %d", *b.WorkflowDefinition.Version)
	}
}

func fromDefinition(d *client.AgentDefinition) *client.Agent {
	return &client.Agent{
		Title:              d.Title,
		Status:             d.Status,
		WorkflowDefinition: d.WorkflowDefinition,
		RunWith:            d.RunWith,
	}
}

func paramKeys(ps []client.Parameter) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Key)
	}
	return out
}

// recordIDs collects the parameter record ids of an agent's definition,
// blocks included, by walking its JSON.
func recordIDs(t *testing.T, a *client.Agent) map[string]bool {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(mustJSON(t, a.WorkflowDefinition)), &v); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && strings.HasSuffix(k, "parameter_id") {
					out[s] = true
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// normalized is the JSON form of v with record ids, workflow ids and
// timestamps blanked.
func normalized(t *testing.T, v any) any {
	t.Helper()
	out := asAny(t, v)
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				switch {
				case strings.HasSuffix(k, "parameter_id"), k == "workflow_id", k == "created_at", k == "modified_at":
					x[k] = "*"
				default:
					walk(e)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(out)
	return out
}

// asAny is v as encoding/json decodes its JSON form into an any.
func asAny(t *testing.T, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(mustJSON(t, v)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// findKey returns the path of the first member named key in v, "" if none.
func findKey(v any, key, path string) string {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x[key]; ok {
			return path + "." + key
		}
		for k, e := range x {
			if p := findKey(e, key, path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range x {
			if p := findKey(e, key, path+"["+strconv.Itoa(i)+"]"); p != "" {
				return p
			}
		}
	}
	return ""
}

// TestExpandIgnoresBlockParametersOfNoRecord: a block's parameters in a
// definition, when they are not the records of the definition's own
// parameters (a login block written with a parameters list, which the
// service ignores), are dropped, not made into parameter_keys that the run
// would then fail to find. The same for a block of a type the client does
// not know.
func TestExpandIgnoresBlockParametersOfNoRecord(t *testing.T) {
	const def = `{"title": "Log in", "workflow_definition": {
	  "parameters": [{"key": "site", "parameter_type": "workflow", "workflow_parameter_type": "string"}],
	  "blocks": [
	    {"block_type": "login", "label": "log_in", "url": "{{ site }}", "navigation_goal": "Log in",
	     "parameters": [{"key": "login_credentials", "parameter_type": "credential", "credential_id": "cred_1"}]},
	    {"block_type": "login", "label": "again", "url": "{{ site }}",
	     "parameters": [{"key": "site", "parameter_type": "workflow", "workflow_parameter_type": "string"},
	                    {"key": "login_credentials", "parameter_type": "credential", "credential_id": "cred_1"}]},
	    {"block_type": "browser_task", "label": "browse", "prompt": "Look around",
	     "parameters": [{"key": "login_credentials", "parameter_type": "credential", "credential_id": "cred_1"}]}
	  ]}}`
	var in client.Agent
	if err := json.Unmarshal([]byte(def), &in); err != nil {
		t.Fatal(err)
	}
	a := version(t, &in)
	for _, i := range []int{0, 1} {
		login := a.WorkflowDefinition.Blocks[i].(*client.LoginBlock)
		if login.ParameterKeys != nil || login.Parameters != nil {
			t.Errorf("%s: parameter_keys %v, parameters %s", login.Label, login.ParameterKeys, mustJSON(t, login.Parameters))
		}
		if login.OutputParameter == nil || login.OutputParameter.Key != login.Label+"_output" {
			t.Errorf("%s: output_parameter %+v", login.Label, login.OutputParameter)
		}
	}
	var browse map[string]any
	if err := json.Unmarshal(a.WorkflowDefinition.Blocks[2].(*client.UnknownBlock).Raw, &browse); err != nil {
		t.Fatal(err)
	}
	if _, ok := browse["parameters"]; ok {
		t.Errorf("the unknown block kept its parameters: %v", browse)
	}
	if _, ok := browse["parameter_keys"]; ok {
		t.Errorf("the unknown block's parameters became parameter_keys: %v", browse)
	}
	if browse["prompt"] != "Look around" || browse["output_parameter"] == nil {
		t.Errorf("the unknown block lost its members: %v", browse)
	}
	// The definition read back has no parameter_keys either: nothing that
	// a run would look up.
	back := a.Definition()
	if keys := back.WorkflowDefinition.Blocks[0].(*client.LoginBlock).ParameterKeys; keys != nil {
		t.Errorf("Definition() of the stored version has parameter_keys %v", keys)
	}
}
