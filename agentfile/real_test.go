package agentfile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
)

// The tests of this file load definitions shaped like real ones, written
// for or exported from the hosted service (testdata/real), which the
// loader used to refuse or change.

func parseOne(t *testing.T, file string, data []byte, v agentfile.Validation) *agentfile.Agent {
	t.Helper()
	agents, err := agentfile.ParseWith(file, data, v)
	if err != nil {
		t.Fatalf("%s does not load: %v", file, err)
	}
	if len(agents) != 1 {
		t.Fatalf("%s holds %d agents", file, len(agents))
	}
	return agents[0]
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// blockJSON is the JSON the client sends for the i-th top-level block.
func blockJSON(t *testing.T, def *client.AgentDefinition, i int) map[string]any {
	t.Helper()
	b, err := json.Marshal(def.WorkflowDefinition.Blocks[i])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestIgnoredKeysAreLeftOut: keys the service ignores load with a warning
// each (file, line, key) and are not sent; what the block means is.
func TestIgnoredKeysAreLeftOut(t *testing.T) {
	const path = "testdata/real/ignored-keys.yaml"
	a := parseOne(t, path, readFile(t, path), agentfile.ValidateWarn)
	var keys []string
	for _, w := range a.Warnings {
		if w.File != path || w.Line == 0 || w.Column == 0 || w.Severity != agentfile.SeverityWarning {
			t.Errorf("warning not placed: %+v", w)
		}
		keys = append(keys, w.Path)
	}
	want := []string{
		"code_artifact_metadata",
		"workflow_definition.blocks[0].parameters",
		"workflow_definition.blocks[1].error_code_mapping",
		"workflow_definition.blocks[1].cache_actions",
		"workflow_definition.blocks[1].screenshot_policy",
	}
	if !slices.Equal(keys, want) {
		t.Errorf("warnings at %v, want %v", keys, want)
	}
	sent, err := json.Marshal(a.Definition)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"code_artifact_metadata", "error_code_mapping", "cache_actions", "screenshot_policy"} {
		if strings.Contains(string(sent), k) {
			t.Errorf("%s is sent: %s", k, sent)
		}
	}
	if login := blockJSON(t, a.Definition, 0); login["parameters"] != nil {
		t.Errorf("the login block's parameters are sent: %v", login)
	}
	login := a.Definition.WorkflowDefinition.Blocks[0].(*client.LoginBlock)
	if !slices.Equal(login.ParameterKeys, []string{"login_credentials"}) || login.Parameters != nil {
		t.Errorf("login block: parameter_keys %v, parameters %v", login.ParameterKeys, login.Parameters)
	}
	if goal := a.Definition.WorkflowDefinition.Blocks[1].(*client.ExtractionBlock).DataExtractionGoal; goal != "List the open positions" {
		t.Errorf("extraction goal %q", goal)
	}
}

// TestUnknownBlockTypeRoundTrips: a block of a type abctl does not know
// (browser_task) loads with a warning, is sent as written, and comes back
// from the daemon, through get -o yaml (Render) and a new load, to the same
// canonical form: applying the exported file changes nothing.
func TestUnknownBlockTypeRoundTrips(t *testing.T) {
	const path = "testdata/real/browser-task.yaml"
	a := parseOne(t, path, readFile(t, path), agentfile.ValidateWarn)
	if len(a.Warnings) != 1 || a.Warnings[0].Path != "workflow_definition.blocks[0].loop_blocks[0].block_type" ||
		a.Warnings[0].Block != "fetch" || !strings.Contains(a.Warnings[0].Msg, `"browser_task"`) {
		t.Fatalf("warnings %v", a.Warnings)
	}
	loop := a.Definition.WorkflowDefinition.Blocks[0].(*client.ForLoopBlock)
	u, ok := loop.LoopBlocks[0].(*client.UnknownBlock)
	if !ok {
		t.Fatalf("the browser_task block is a %T", loop.LoopBlocks[0])
	}
	var sent map[string]any
	if err := json.Unmarshal(u.Raw, &sent); err != nil {
		t.Fatal(err)
	}
	if sent["block_type"] != "browser_task" || sent["label"] != "fetch" || sent["max_steps"] != 10.0 ||
		sent["prompt"] != "Download the invoice {{ download_invoice.current_value }}" || len(sent) != 4 {
		t.Errorf("the block is not sent as written: %v", sent)
	}

	want := mustNormalize(t, a.Definition)
	if !strings.Contains(string(want), "block_type: browser_task") {
		t.Fatalf("the normalized form lost the block:\n%s", want)
	}
	c := newDaemonClient(t)
	created, err := c.Agents.Create(t.Context(), a.Definition, nil)
	if err != nil {
		t.Fatal(err)
	}
	fetched, err := c.Agents.Get(t.Context(), created.WorkflowPermanentID, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "fetched", want, mustNormalizeAgent(t, fetched))
	checkRender(t, fetched, a.Name, nil)
}

// TestURLNamingAParameterIsKept: a block url that names a parameter
// (url: website_url, which the service reads as that parameter's value)
// is not a URL: normalizing, and so get -o yaml, keep it as written, while
// a bare host still gets its scheme and "/".
func TestURLNamingAParameterIsKept(t *testing.T) {
	const path = "testdata/real/references.yaml"
	a := parseOne(t, path, readFile(t, path), agentfile.ValidateWarn)
	norm := string(mustNormalize(t, a.Definition))
	if !strings.Contains(norm, "\n      url: website_url\n") || strings.Contains(norm, "https://website_url") {
		t.Errorf("the url naming a parameter was changed:\n%s", norm)
	}
	fetched := &client.Agent{Title: "t", WorkflowPermanentID: "wpid_1", WorkflowDefinition: client.WorkflowDefinition{
		Blocks: client.Blocks{
			&client.ExtractionBlock{BlockBase: client.BlockBase{Label: "get_data"}, URL: "website_url", DataExtractionGoal: "g"},
			&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "example.com"},
		},
	}}
	file, err := agentfile.Render(fetched, "report", nil, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(file), "url: website_url\n") || !strings.Contains(string(file), "url: https://example.com/\n") {
		t.Errorf("get -o yaml wrote:\n%s", file)
	}
	checkRender(t, fetched, "report", nil)
}

// TestReferencesByLabel: the service registers every block label as a
// template variable (its output, and for a loop current_value,
// current_index and current_item): references to them load without a
// word, even in strict mode; a name nothing defines is a warning that
// names file, line and name, and an error only in strict mode.
func TestReferencesByLabel(t *testing.T) {
	const file = `title: Invoices
workflow_definition:
  parameters:
    - {key: invoices, parameter_type: workflow, workflow_parameter_type: json}
  blocks:
    - label: get_data
      block_type: extraction
      data_extraction_goal: Read the totals
    - label: download_invoice
      block_type: for_loop
      loop_over_parameter_key: invoices
      loop_blocks:
        - label: fetch
          block_type: navigation
          navigation_goal: |
            Download {{ download_invoice.current_value }} ({{ download_invoice.current_index }}),
            item {{ download_invoice.current_item.number }}, checked against {{ get_data.output }}
    - label: notify
      block_type: text_prompt
      prompt: "Tell {{ fetch.output }} and {{ download_invoice.output | length }} on {{ invoice_date }}"
`
	a := parseOne(t, "invoices.yaml", []byte(file), agentfile.ValidateWarn)
	if len(a.Warnings) != 1 {
		t.Fatalf("warnings %v, want one about invoice_date", a.Warnings)
	}
	w := a.Warnings[0]
	if w.Line != 20 || w.Block != "notify" || !strings.Contains(w.Msg, "{{ invoice_date }}") || !strings.Contains(w.String(), "invoices.yaml:20:") {
		t.Errorf("warning %+v (%s)", w, w)
	}
	if _, err := agentfile.ParseWith("invoices.yaml", []byte(file), agentfile.ValidateStrict); err == nil ||
		!strings.Contains(err.Error(), "invoice_date") || strings.Contains(err.Error(), "get_data") || strings.Contains(err.Error(), "download_invoice") {
		t.Errorf("strict: %v", err)
	}
	strictFile := strings.Replace(file, " on {{ invoice_date }}", "", 1)
	if a := parseOne(t, "invoices.yaml", []byte(strictFile), agentfile.ValidateStrict); a.Warnings != nil {
		t.Errorf("strict warnings %v", a.Warnings)
	}
}

// TestLoadValidation: Load reads with the mode of its options; the
// warnings of an agent that loads are in Agent.Warnings and not in the
// error, those of an agent that does not load are in the error with its
// errors.
func TestLoadValidation(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"ok.yaml":     "title: OK\nworkflow_definition:\n  blocks:\n    - {label: open, block_type: goto_url, url: example.com, cache_actions: true}\n",
		"broken.yaml": "title: Broken\nretries: 3\nworkflow_definition:\n  blocks:\n    - {label: open, block_type: goto_url}\n",
	})
	agents, err := agentfile.Load([]string{dir}, agentfile.LoadOptions{})
	if got := names(agents); !slices.Equal(got, []string{"ok"}) {
		t.Fatalf("loaded %v", got)
	}
	if len(agents[0].Warnings) != 1 || !strings.Contains(agents[0].Warnings[0].Msg, `"cache_actions"`) {
		t.Errorf("warnings of ok.yaml: %v", agents[0].Warnings)
	}
	ps := problemsOf(t, err)
	if len(ps) != 2 || ps[0].Severity != agentfile.SeverityWarning || !strings.Contains(ps[0].Msg, `"retries"`) ||
		ps[1].Severity != agentfile.SeverityError || !strings.Contains(ps[1].Msg, `missing required key "url"`) {
		t.Errorf("problems %v", ps)
	}
	if strings.Contains(err.Error(), "cache_actions") || !strings.Contains(err.Error(), filepath.Join(dir, "broken.yaml")+":2:1: warning: ") {
		t.Errorf("error:\n%v", err)
	}

	agents, err = agentfile.Load([]string{filepath.Join(dir, "ok.yaml")}, agentfile.LoadOptions{Validation: agentfile.ValidateStrict})
	if len(agents) != 0 || err == nil || !strings.Contains(err.Error(), `unknown key "cache_actions"`) {
		t.Errorf("strict: %v, %v", names(agents), err)
	}
	agents, err = agentfile.Load([]string{filepath.Join(dir, "ok.yaml")}, agentfile.LoadOptions{Validation: agentfile.ValidateIgnore})
	if err != nil || len(agents) != 1 || agents[0].Warnings != nil {
		t.Errorf("ignore: %v, %v", agents, err)
	}

	// An agent dropped for a name another agent has: its warnings join
	// the problems.
	writeTree(t, dir, map[string]string{"dup.yaml": "name: ok\ntitle: Dup\nextra_key: 1\nworkflow_definition: {blocks: []}\n"})
	_, err = agentfile.Load([]string{filepath.Join(dir, "ok.yaml"), filepath.Join(dir, "dup.yaml")}, agentfile.LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), `unknown key "extra_key"`) || !strings.Contains(err.Error(), "names must be unique") {
		t.Errorf("duplicate names: %v", err)
	}
}
