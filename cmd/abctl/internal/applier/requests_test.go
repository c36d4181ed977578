package applier

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
)

// TestRequestsDoNotGrowWithTheOrganization counts the requests of applying
// one agent file as `abctl run FILE` and `abctl apply -f FILE` do (New,
// then Apply), and of planning it as `abctl diff -f FILE` does (New, then
// Plan), in an organization of 50 agents and again after it has grown to
// 500: the requests are the same, and they are those of the lookup of one
// agent (the organization's id from a one-agent page of the list, the
// agent at the id its name maps to, its tags) and of the writes the file
// needs.
func TestRequestsDoNotGrowWithTheOrganization(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 500 agents")
	}
	s := startService(t, nil)
	ctx := t.Context()

	files := [2]*agentfile.Agent{
		parseAgent(t, "agents/contact-form.yaml", contactForm),
		parseAgent(t, "agents/contact-form.yaml", strings.Replace(contactForm, "wait_sec: 1", "wait_sec: 2", 1)),
	}
	// An agent made elsewhere (no name, so no derived id), which a file
	// adopts by its id.
	made, err := s.plain.Agents.CreateYAML(ctx, editorAgent, nil)
	if err != nil {
		t.Fatal(err)
	}
	adopted := parseAgent(t, "agents/editor.yaml", "id: "+made.WorkflowPermanentID+"\n"+editorAgent)
	if res := applyOnce(t, s.plain, files[0]); res.Action != Created {
		t.Fatalf("first apply: %s", res.Action)
	}
	if res := applyOnce(t, s.plain, adopted); res.Action != Unchanged {
		t.Fatalf("first apply of the adopted agent: %s (want unchanged: a file of its id alone gives it no name)", res.Action)
	}

	const (
		org     = "GET /v1/agents?page_size=1" // the organization's id
		agent   = "GET /v1/agents/{id}"        // the file's agent (200, or 404 for a new one)
		tags    = "GET /v1/workflow-tags"      // its tags
		update  = "POST /v1/agents/{id}"       // a new version
		create  = "POST /v1/agents"            // with the name's Idempotency-Key
		tagging = "POST /v1/agents/{id}/tags"  // abctl.name and the file's tags
	)
	want := map[string][]string{
		"apply, unchanged":                {org, agent, tags},
		"apply, changed":                  {org, agent, tags, update},
		"plan, unchanged":                 {org, agent, tags},
		"plan, changed":                   {org, agent, tags},
		"apply, new":                      {org, agent, create, tagging},
		"apply, adopted by id, unchanged": {org, agent, tags},
	}
	counts := map[string]map[int][]string{}
	current := 0 // the index of the file the service holds
	seeded := 0
	for _, n := range []int{50, 500} {
		s.seed(seeded, n-2) // with contact-form and the adopted agent: n agents
		seeded = n - 2
		got := map[string][]string{}
		var bytes int64
		got["apply, unchanged"], bytes = s.rec.count(func() {
			if res := applyOnce(t, s.counted, files[current]); res.Action != Unchanged {
				t.Errorf("%d agents: the unchanged file: %s", n, res.Action)
			}
		})
		t.Logf("%d agents: an unchanged file: %d requests, %d bytes of answers", n, len(got["apply, unchanged"]), bytes)
		got["plan, changed"], _ = s.rec.count(func() {
			action, have, want, err := s.newApplier().Plan(t.Context(), files[1-current])
			if err != nil || action != Configured || string(have) == string(want) {
				t.Errorf("%d agents: plan of the changed file: %s, %v", n, action, err)
			}
		})
		got["apply, changed"], bytes = s.rec.count(func() {
			if res := applyOnce(t, s.counted, files[1-current]); res.Action != Configured {
				t.Errorf("%d agents: the changed file: %s", n, res.Action)
			}
		})
		t.Logf("%d agents: a changed file: %d requests, %d bytes of answers", n, len(got["apply, changed"]), bytes)
		current = 1 - current
		got["plan, unchanged"], _ = s.rec.count(func() {
			action, have, want, err := s.newApplier().Plan(t.Context(), files[current])
			if err != nil || action != Unchanged || string(have) != string(want) {
				t.Errorf("%d agents: plan of the unchanged file: %s, %v", n, action, err)
			}
		})
		fresh := parseAgent(t, fmt.Sprintf("agents/new-%d.yaml", n), contactForm)
		got["apply, new"], _ = s.rec.count(func() {
			if res := applyOnce(t, s.counted, fresh); res.Action != Created {
				t.Errorf("%d agents: a new file: %s", n, res.Action)
			}
		})
		got["apply, adopted by id, unchanged"], _ = s.rec.count(func() {
			if res := applyOnce(t, s.counted, adopted); res.Action != Unchanged || res.ID != made.WorkflowPermanentID {
				t.Errorf("%d agents: the adopted file: %s %s", n, res.Action, res.ID)
			}
		})
		for what, reqs := range got {
			if counts[what] == nil {
				counts[what] = map[int][]string{}
			}
			counts[what][n] = reqs
		}
		seeded++ // new-<n> is one more agent
	}
	// The organization really grew, and the changes were made.
	var all int
	for _, err := range s.plain.Agents.All(ctx, &client.ListAgentsOptions{PageSize: 100}) {
		if err != nil {
			t.Fatal(err)
		}
		all++
	}
	if all < 500 {
		t.Fatalf("the organization has %d agents, want at least 500", all)
	}
	if a := s.get(agentfile.AgentID(made.OrganizationID, "contact-form")); a == nil || a.Version != 3 {
		t.Errorf("contact-form after two changes: %+v, want version 3", a)
	}
	for what, w := range want {
		small, large := counts[what][50], counts[what][500]
		if !slices.Equal(small, large) {
			t.Errorf("%s: the requests changed as the organization grew from 50 to 500 agents:\n  50: %s\n 500: %s",
				what, strings.Join(small, ", "), strings.Join(large, ", "))
		}
		if !slices.Equal(large, w) {
			t.Errorf("%s: %d requests (%s), want %d (%s)", what, len(large), strings.Join(large, ", "), len(w), strings.Join(w, ", "))
		}
	}
}
