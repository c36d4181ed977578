package cli

// What get writes and what run and the other commands accept: parameter
// values checked before a run starts (and before an agent file is
// applied), agents named by their names in messages, get -o yaml and -o
// json complete (names and tags), and every -o name line accepted back as
// an argument.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
)

// pagesAgent has a required string parameter and a json one.
const pagesAgent = `title: Visit pages
workflow_definition:
  parameters:
    - {key: site, parameter_type: workflow, workflow_parameter_type: string}
    - {key: pages, parameter_type: workflow, workflow_parameter_type: json}
    - {key: script, parameter_type: workflow, workflow_parameter_type: string, default_value: "steps=1"}
  blocks:
    - {block_type: goto_url, label: visit, url: "{{ site }}/{{ pages[0] }}"}
`

// TestRunChecksParameterValues: every --param value is read as its
// parameter's type before anything happens (a json parameter's text must
// parse); problems exit 2 naming the parameter and the agent by its name
// and file, never by its 64-hex id.
func TestRunChecksParameterValues(t *testing.T) {
	e := newCLIEnv(t)
	file := e.write("agents/visit.yaml", pagesAgent)
	who := `agent "visit" (` + file + `)`

	r := e.run("", "run", file, "--param", "site=http://127.0.0.1:1", "--param", "pages=notjson").expect(t, 2)
	contains(t, "stderr", r.stderr, "parameters of "+who, `pages (json): expected JSON, got "notjson", which does not parse`)
	r = e.run("", "run", file, "--param", "pages=[1]").expect(t, 2)
	contains(t, "stderr", r.stderr, who+` needs parameter "site"`, "site (string) has no default: give --param site=...")
	params := e.write("params.yaml", "site: http://127.0.0.1:1\npages: '{a: 1}'\n")
	r = e.run("", "run", file, "--params-file", params).expect(t, 2)
	contains(t, "stderr", r.stderr, who, `pages (json): expected JSON, got "{a: 1}"`)
	// Nothing was applied, nothing ran.
	if agents, err := e.client.Agents.List(t.Context(), nil); err != nil || len(agents) != 0 {
		t.Errorf("a rejected command line applied %d agent(s) (%v)", len(agents), err)
	}
	if jobs := e.exec.Order(); len(jobs) != 0 {
		t.Errorf("a rejected command line started %d run(s)", len(jobs))
	}

	// JSON text is the value: the run gets the list.
	r = e.run("", "run", file, "--param", "site=http://127.0.0.1:1", "--param", `pages=["a", "b"]`).expect(t, 0)
	jobs := e.exec.Order()
	if len(jobs) != 1 {
		t.Fatalf("%d runs, want 1", len(jobs))
	}
	job, _ := e.exec.Job(jobs[0])
	if got := string(job.Parameters["pages"]); got != `["a","b"]` {
		t.Errorf("pages reached the run as %s", got)
	}

	// An agent that exists, by name, by agent/NAME or by id: its name.
	agents, err := e.client.Agents.List(t.Context(), nil)
	if err != nil || len(agents) != 1 {
		t.Fatalf("agents %v, %v", agents, err)
	}
	id := agents[0].WorkflowPermanentID
	for _, ref := range []string{"visit", "agent/visit", id} {
		r = e.run("", "run", "--agent", ref, "--param", "pages=[]").expect(t, 2)
		contains(t, "stderr", r.stderr, `agent "visit" needs parameter "site"`)
		r = e.run("", "run", "--agent", ref, "--param", "site=x", "--param", "pages=notjson").expect(t, 2)
		contains(t, "stderr", r.stderr, `parameters of agent "visit"`, `pages (json): expected JSON, got "notjson"`)
		r = e.run("", "run", "--agent", ref, "--param", "colour=red").expect(t, 2)
		contains(t, "stderr", r.stderr, `agent "visit" has no parameter "colour"`, "pages (json)")
		if strings.Contains(r.stderr, "wpid_") {
			t.Errorf("--agent %s: the message names the agent by its id:\n%s", ref, r.stderr)
		}
	}
	if jobs := e.exec.Order(); len(jobs) != 1 {
		t.Errorf("rejected command lines started %d more run(s)", len(jobs)-1)
	}
}

// TestGetWritesWhatApplyReads: get -o yaml writes the agent's name and its
// tags (the ones a file can hold; a label is named on stderr), so the file
// applies back as unchanged and a change of a tag in it is applied; -o json
// carries each agent's name.
func TestGetWritesWhatApplyReads(t *testing.T) {
	e := newCLIEnv(t)
	e.run("", "apply", "-f", e.write("two.yaml", twoAgents)).expect(t, 0)
	agents, err := e.client.Agents.List(t.Context(), nil)
	if err != nil || len(agents) != 2 {
		t.Fatalf("agents %v, %v", agents, err)
	}
	exportID := agentfile.AgentID(agents[0].OrganizationID, "export")
	if _, err := e.client.Agents.ApplyTags(t.Context(), exportID, &client.TagApplyRequest{Tags: []client.TagInput{
		{Key: "env", Value: "prod"}, {Value: "urgent"},
	}}); err != nil {
		t.Fatal(err)
	}

	r := e.run("", "get", "agent", "export", "-o", "yaml").expect(t, 0)
	contains(t, "stderr", r.stderr, `agent/export: label "urgent" is not in the file`)
	if strings.Contains(r.stdout, "abctl.") {
		t.Errorf("the file carries abctl's own tag:\n%s", r.stdout)
	}
	path := e.write("exported/export.yaml", r.stdout)
	loaded, err := agentfile.Load([]string{path}, agentfile.LoadOptions{})
	if err != nil || len(loaded) != 1 {
		t.Fatalf("the exported file does not load: %v\n%s", err, r.stdout)
	}
	if got := loaded[0].Tags; loaded[0].Name != "export" || len(got) != 2 || got["team"] != "billing" || got["env"] != "prod" {
		t.Errorf("the exported file: name %q, tags %v\n%s", loaded[0].Name, got, r.stdout)
	}
	if r := e.run("", "apply", "-f", path).expect(t, 0); r.stdout != "agent/export unchanged\n" {
		t.Errorf("apply of get -o yaml: %q", r.stdout)
	}
	e.write("exported/export.yaml", strings.Replace(r.stdout, "env: prod", "env: staging", 1))
	if r := e.run("", "apply", "-f", path).expect(t, 0); r.stdout != "agent/export configured\n" {
		t.Errorf("apply of a changed tag: %q", r.stdout)
	}
	tags, err := e.client.Agents.GetTags(t.Context(), exportID)
	if err != nil || !hasTag(tags.Tags, "env", "staging") {
		t.Errorf("after the apply: %+v, %v", tags, err)
	}

	// -o json: the service's records, each with its name; an agent made
	// elsewhere has none.
	made, err := e.client.Agents.CreateYAML(t.Context(), "title: Made elsewhere\nworkflow_definition:\n  parameters: []\n  blocks:\n    - {block_type: wait, label: pause}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	r = e.run("", "get", "agents", "-o", "json").expect(t, 0)
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 3 {
		t.Fatalf("get agents -o json: %v\n%s", err, r.stdout)
	}
	names := map[string]any{}
	for _, a := range list {
		names[a["workflow_permanent_id"].(string)] = a["name"]
	}
	if names[exportID] != "export" || names[agentfile.AgentID(agents[0].OrganizationID, "search")] != "search" || names[made.WorkflowPermanentID] != nil {
		t.Errorf("names in get agents -o json: %v", names)
	}
	r = e.run("", "get", "agent", "search", "-o", "json").expect(t, 0)
	var one map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &one); err != nil || one["name"] != "search" || one["title"] != "Search the catalogue" {
		t.Errorf("get agent search -o json: %v\n%s", err, r.stdout)
	}
}

// TestNameOutputIsAnArgument: each line -o name prints (agent/NAME,
// run/ID, folder/ID) is accepted back by every command that takes that
// kind; a line of another kind is a usage error naming both kinds.
func TestNameOutputIsAnArgument(t *testing.T) {
	e := newCLIEnv(t)
	ids, _ := startedRuns(t, e)
	lines := func(s string) []string { return strings.Fields(s) }

	runs := lines(e.run("", "get", "runs", "-o", "name").expect(t, 0).stdout)
	if len(runs) != len(ids) {
		t.Fatalf("get runs -o name: %q", runs)
	}
	for i, name := range runs {
		if r := e.run("", "get", "run", name, "-o", "name").expect(t, 0); r.stdout != name+"\n" {
			t.Errorf("get run %s: %q", name, r.stdout)
		}
		e.run("", "get", "run", name, "--steps").expect(t, 0)
		r := e.run("", "runs", "artifacts", name, "-o", "json").expect(t, 0)
		if !strings.HasPrefix(r.stdout, "[") {
			t.Errorf("runs artifacts %s: %q", name, r.stdout)
		}
		code := 0
		if ids[i] == ids[2] {
			code = 1 // terminated
		}
		e.run("", "runs", "watch", name).expect(t, code)
		e.run("", "runs", "cancel", name).expect(t, 0)
		// No webhook URL: the service says so, about the run it found.
		r = e.run("", "runs", "webhook", "retry", name).expect(t, 1)
		if strings.Contains(r.stderr, "not found") {
			t.Errorf("runs webhook retry %s: %s", name, r.stderr)
		}
	}
	e.run("", "tags", "get", runs[0]).expect(t, 0) // an agent run (wr_)
	r := e.run(strings.Join(runs, "\n")+"\n", "runs", "cancel-all", "--stdin", "--yes").expect(t, 0)
	contains(t, "stderr", r.stderr, "Cancel requested for "+ids[0])

	folder := strings.TrimSpace(e.run("", "folders", "create", "Billing", "-o", "name").expect(t, 0).stdout)
	if r := e.run("", "get", "folders", "-o", "name").expect(t, 0); r.stdout != folder+"\n" {
		t.Fatalf("folders create printed %q, get folders -o name %q", folder, r.stdout)
	}
	if r := e.run("", "get", "folder", folder, "-o", "name").expect(t, 0); r.stdout != folder+"\n" {
		t.Errorf("get folder %s: %q", folder, r.stdout)
	}
	e.run("", "folders", "update", folder, "--title", "Payments").expect(t, 0)
	e.run("", "get", "agents", "--folder", folder).expect(t, 0)
	e.run("", "folders", "delete", folder).expect(t, 0)

	agents := lines(e.run("", "get", "agents", "-o", "name").expect(t, 0).stdout)
	if len(agents) != 1 || agents[0] != "agent/scripted" {
		t.Fatalf("get agents -o name: %q", agents)
	}
	if r := e.run("", "get", "agent", agents[0], "-o", "name").expect(t, 0); r.stdout != "agent/scripted\n" {
		t.Errorf("get agent agent/scripted: %q", r.stdout)
	}
	e.run("", "tags", "set", agents[0], "env=prod").expect(t, 0)
	e.run("", "get", "runs", "--agent", agents[0], "-o", "name").expect(t, 0)
	e.run("", "run", "--agent", agents[0], "--param", "script=steps=1").expect(t, 0)
	if r := e.run("", "delete", agents[0], "--yes").expect(t, 0); r.stdout != "agent/scripted deleted\n" {
		t.Errorf("delete agent/scripted: %q", r.stdout)
	}

	// Another kind than the command takes: exit 2, both kinds named.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "artifacts", "agent/scripted"}, `"agent/scripted" names an agent, not a run`},
		{[]string{"runs", "watch", folder}, `names a folder, not a run`},
		{[]string{"get", "run", "folder/fld_1"}, `"folder/fld_1" names a folder, not a run`},
		{[]string{"get", "folder", runs[0]}, `names a run, not a folder`},
		{[]string{"folders", "delete", "agent/x"}, `names an agent, not a folder`},
		{[]string{"get", "agent", runs[0]}, `names a run, not an agent`},
		{[]string{"get", "agents", "--folder", "run/wr_1"}, `names a run, not a folder`},
		{[]string{"delete", "run/wr_1", "--yes"}, `names a run, not an agent`},
		{[]string{"runs", "cancel", "run/"}, `"run/" names no run`},
	} {
		r := e.run("", tc.args...).expect(t, 2)
		contains(t, strings.Join(tc.args, " "), r.stderr, tc.want)
	}
}
