package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

const contactForm = `title: Contact form
description: Fills the contact form of a site
workflow_definition:
  parameters:
    - key: site
      parameter_type: workflow
      workflow_parameter_type: string
      description: The site's base URL
    - key: script
      parameter_type: workflow
      workflow_parameter_type: string
      default_value: "steps=1"
  blocks:
    - block_type: goto_url
      label: open
      url: "{{site}}/form.html"
    - block_type: wait
      label: pause
      wait_sec: 1
`

const twoAgents = `name: search
title: Search the catalogue
workflow_definition:
  parameters: []
  blocks:
    - {block_type: goto_url, label: open, url: "http://127.0.0.1:1/"}
---
name: export
title: Export the orders
tags: {team: billing}
workflow_definition:
  parameters: []
  blocks:
    - {block_type: print_page, label: save}
`

// TestApplyLifecycle walks the GitOps verbs as a pipeline would: apply,
// apply again (unchanged, no new version), change a file (configured),
// dry run, diff, get -o yaml round trip, prune.
func TestApplyLifecycle(t *testing.T) {
	e := newCLIEnv(t)
	e.write("agents/contact-form.yaml", contactForm)
	e.write("agents/more/two.yaml", twoAgents)
	dir := e.dir + "/agents"

	r := e.run("", "apply", "-f", dir).expect(t, 2)
	contains(t, "stderr", r.stderr, "add -R")

	r = e.run("", "apply", "-f", dir, "-R").expect(t, 0)
	golden(t, "apply-created.txt", r.stdout)

	r = e.run("", "apply", "-f", dir, "-R").expect(t, 0)
	golden(t, "apply-unchanged.txt", r.stdout)
	r = e.run("", "diff", "-f", dir, "-R").expect(t, 0)
	if r.stdout != "" {
		t.Errorf("diff of unchanged files printed:\n%s", r.stdout)
	}

	// The ids follow the names (agentfile's rule): the name tag is set.
	agents, err := e.client.Agents.List(t.Context(), &client.ListAgentsOptions{PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(agents) != 3 {
		t.Fatalf("%d agents, want 3", len(agents))
	}
	org := agents[0].OrganizationID
	contact, err := e.client.Agents.Get(t.Context(), agentfile.AgentID(org, "contact-form"), nil)
	if err != nil {
		t.Fatalf("the agent of contact-form.yaml is not at its derived id: %v", err)
	}
	if contact.Version != 1 {
		t.Errorf("version %d after an unchanged apply, want 1", contact.Version)
	}
	if name := agentref.Name(t.Context(), e.client, contact.WorkflowPermanentID); name != "contact-form" {
		t.Errorf("abctl.name tag = %q", name)
	}
	tags, err := e.client.Agents.GetTags(t.Context(), agentfile.AgentID(org, "export"))
	if err != nil {
		t.Fatal(err)
	}
	if !hasTag(tags.Tags, "team", "billing") {
		t.Errorf("export's tags %+v lack team=billing", tags.Tags)
	}

	// A change: diff shows it (exit 1), apply configures a new version.
	e.write("agents/contact-form.yaml", strings.Replace(contactForm, "wait_sec: 1", "wait_sec: 3", 1))
	r = e.run("", "diff", "-f", dir, "-R").expect(t, 1)
	golden(t, "diff-changed.txt", strings.ReplaceAll(r.stdout, e.dir, "<dir>"))
	r = e.run("", "apply", "-f", dir, "-R", "--dry-run").expect(t, 0)
	contains(t, "dry run", r.stdout, "agent/contact-form configured (dry run)", "agent/search unchanged (dry run)")
	if a, _ := e.client.Agents.Get(t.Context(), contact.WorkflowPermanentID, nil); a.Version != 1 {
		t.Errorf("a dry run made version %d", a.Version)
	}
	r = e.run("", "apply", "-f", dir, "-R").expect(t, 0)
	contains(t, "apply", r.stdout, "agent/contact-form configured", "agent/export unchanged")
	if a, _ := e.client.Agents.Get(t.Context(), contact.WorkflowPermanentID, nil); a.Version != 2 {
		t.Errorf("version %d after a change, want 2", a.Version)
	}

	// get -o yaml writes a file that applies as unchanged.
	r = e.run("", "get", "agent", "contact-form", "-o", "yaml").expect(t, 0)
	golden(t, "get-agent.yaml", r.stdout)
	exported := e.write("exported/contact.yaml", r.stdout)
	r = e.run("", "apply", "-f", exported).expect(t, 0)
	if r.stdout != "agent/contact-form unchanged\n" {
		t.Errorf("apply of get -o yaml: %q", r.stdout)
	}
	// The whole list as a stream of documents, on stdin.
	all := e.run("", "get", "agents", "-o", "yaml").expect(t, 0)
	r = e.run(all.stdout, "apply", "-f", "-").expect(t, 0)
	if strings.Count(r.stdout, "unchanged") != 3 {
		t.Errorf("apply of get agents -o yaml:\n%s", r.stdout)
	}

	// Prune: without the two-agent file, its agents go.
	r = e.run("", "apply", "-f", dir+"/contact-form.yaml", "--prune").expect(t, 2)
	contains(t, "stderr", r.stderr, "--yes")
	r = e.run("", "apply", "-f", dir+"/contact-form.yaml", "--prune", "--yes").expect(t, 0)
	golden(t, "apply-prune.txt", r.stdout)
	if _, err := e.client.Agents.Get(t.Context(), agentfile.AgentID(org, "export"), nil); err == nil {
		t.Error("export still exists after the prune")
	}
	// Applying it again revives it under the same id.
	r = e.run("", "apply", "-f", dir, "-R").expect(t, 0)
	contains(t, "apply after prune", r.stdout, "agent/export configured", "agent/search configured")
	if a, err := e.client.Agents.Get(t.Context(), agentfile.AgentID(org, "export"), nil); err != nil || a.DeletedAt != nil {
		t.Errorf("export not revived: %v %+v", err, a)
	}
}

func hasTag(tags []client.Tag, key, value string) bool {
	for _, t := range tags {
		if t.Key != nil && *t.Key == key && t.Value == value {
			return true
		}
	}
	return false
}

// TestAgentFileProblems: every problem of every file is reported at once,
// with file and line; nothing is applied; the exit status is 2, for diff
// too.
func TestAgentFileProblems(t *testing.T) {
	e := newCLIEnv(t)
	bad := e.write("bad.yaml", `title: Broken
workflow_definition:
  parameters: []
  blocks:
    - block_type: goto_url
      label: open
      urll: "{{missing}}"
    - block_type: goto_url
      label: open
      url: x
`)
	good := e.write("good.yaml", contactForm)
	for _, verb := range []string{"apply", "diff"} {
		r := e.run("", verb, "-f", good, "-f", bad).expect(t, 2)
		contains(t, verb+" stderr", r.stderr, "bad.yaml:7", `unknown key "urll"`, "bad.yaml:9", "open")
		if r.stdout != "" {
			t.Errorf("%s printed on stdout:\n%s", verb, r.stdout)
		}
	}
	if agents, _ := e.client.Agents.List(t.Context(), nil); len(agents) != 0 {
		t.Errorf("%d agents exist after a failed apply", len(agents))
	}
}

// TestGetFormats checks the list tables (piped: no header, tabs), wide,
// name and JSON output.
func TestGetFormats(t *testing.T) {
	e := newCLIEnv(t)
	e.write("agents/contact-form.yaml", contactForm)
	e.write("agents/two.yaml", twoAgents)
	e.run("", "apply", "-f", e.dir+"/agents").expect(t, 0)

	r := e.run("", "get", "agents").expect(t, 0)
	golden(t, "get-agents.txt", r.stdout)
	r = e.runIO("", func(ios *iostreams.IOStreams) { ios.SetTTY(false, true, true); ios.SetWidth(100) }, "get", "agents").expect(t, 0)
	golden(t, "get-agents-tty.txt", r.stdout)
	r = e.run("", "get", "agents", "-o", "wide").expect(t, 0)
	golden(t, "get-agents-wide.txt", r.stdout)
	r = e.run("", "get", "agents", "-o", "name").expect(t, 0)
	golden(t, "get-agents-name.txt", r.stdout)
	r = e.run("", "get", "agent", "search", "-o", "json").expect(t, 0)
	var a client.Agent
	if err := json.Unmarshal([]byte(r.stdout), &a); err != nil || a.Title != "Search the catalogue" {
		t.Errorf("get agent -o json: %v %+v", err, a)
	}
	r = e.run("", "get", "agents", "--tag", "team:billing", "-o", "name").expect(t, 0)
	if r.stdout != "agent/export\n" {
		t.Errorf("--tag team:billing: %q", r.stdout)
	}
	r = e.run("", "get", "agent", "nope").expect(t, 1)
	contains(t, "stderr", r.stderr, `no agent "nope"`)
	r = e.run("", "get", "agents", "-o", "xml").expect(t, 2)
	contains(t, "stderr", r.stderr, `-o "xml"`, "table, wide, json, yaml, name")
}

func TestDeleteAgents(t *testing.T) {
	e := newCLIEnv(t)
	path := e.write("two.yaml", twoAgents)
	e.run("", "apply", "-f", path).expect(t, 0)
	r := e.run("", "delete", "agent", "search").expect(t, 2)
	contains(t, "stderr", r.stderr, "--yes")
	r = e.run("", "delete", "agent", "search", "--yes").expect(t, 0)
	if r.stdout != "agent/search deleted\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	r = e.run("", "delete", "-f", path, "--yes").expect(t, 1)
	contains(t, "stderr", r.stderr, "agent/search")
	r = e.run("", "delete", "-f", path, "--yes", "--ignore-not-found").expect(t, 0)
	if agents, _ := e.client.Agents.List(t.Context(), nil); len(agents) != 0 {
		t.Errorf("%d agents left", len(agents))
	}
}

// TestAdoptAgentMadeElsewhere: an agent created through the API (no name)
// exported with get -o yaml carries its id; the file applies as unchanged
// and leaves the agent nameless, and a change updates that very agent.
func TestAdoptAgentMadeElsewhere(t *testing.T) {
	e := newCLIEnv(t)
	made, err := e.client.Agents.CreateYAML(t.Context(), "title: Made in the editor\nworkflow_definition:\n  parameters: []\n  blocks:\n    - {block_type: wait, label: pause, wait_sec: 1}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := e.run("", "get", "agent", made.WorkflowPermanentID, "-o", "yaml").expect(t, 0)
	contains(t, "get -o yaml", r.stdout, "id: "+made.WorkflowPermanentID)
	path := e.write("editor-agent.yaml", r.stdout)
	// The file has the id and no name: it is the same agent, unchanged,
	// and it is not named after the file.
	for _, which := range []string{"first", "second"} {
		r = e.run("", "apply", "-f", path).expect(t, 0)
		if r.stdout != "agent/"+made.WorkflowPermanentID+" unchanged\n" {
			t.Errorf("%s apply: %q", which, r.stdout)
		}
	}
	r = e.run("", "get", "agents").expect(t, 0)
	if strings.Contains(r.stdout, "editor-agent") {
		t.Errorf("the agent was named after the file:\n%s", r.stdout)
	}
	e.write("editor-agent.yaml", strings.Replace(readFile(t, path), "wait_sec: 1", "wait_sec: 2", 1))
	e.run("", "apply", "-f", path).expect(t, 0)
	a, err := e.client.Agents.Get(t.Context(), made.WorkflowPermanentID, nil)
	if err != nil || a.Version != 2 {
		t.Fatalf("the adopted agent: %v, version %d, want 2", err, a.Version)
	}
	if agents, _ := e.client.Agents.List(t.Context(), nil); len(agents) != 1 {
		t.Errorf("%d agents: apply made a new one instead of updating the adopted one", len(agents))
	}
	// An id that names no agent is an error, not a creation.
	e.write("ghost.yaml", "id: wpid_1\ntitle: Ghost\nworkflow_definition:\n  blocks: []\n")
	r = e.run("", "apply", "-f", e.dir+"/ghost.yaml").expect(t, 1)
	contains(t, "stderr", r.stderr, "wpid_1 names no agent")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestApplyWithoutTags: against a service that refuses tags (the hosted
// service's tagging gate answers 403), apply still creates the agents,
// warns once, and a second apply reports them unchanged.
func TestApplyWithoutTags(t *testing.T) {
	e := newCLIEnv(t)
	target, err := url.Parse(e.baseURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/tags") || strings.HasSuffix(r.URL.Path, "/workflow-tags") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"detail":"Workflow tagging is not enabled for this organization."}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(gate.Close)
	e.vars["ABCTL_BASE_URL"] = gate.URL
	path := e.write("two.yaml", twoAgents)
	r := e.run("", "apply", "-f", path).expect(t, 0)
	if strings.Count(r.stdout, " created\n") != 2 {
		t.Errorf("first apply:\n%s", r.stdout)
	}
	contains(t, "stderr", r.stderr, "refused to tag")
	r = e.run("", "apply", "-f", path).expect(t, 0)
	if strings.Count(r.stdout, " unchanged\n") != 2 {
		t.Errorf("second apply:\n%s", r.stdout)
	}
	e.run("", "diff", "-f", path).expect(t, 0)
}
