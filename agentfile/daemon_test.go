package agentfile_test

import (
	"slices"
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
)

// newDaemonClient starts a real daemon (real bbolt in a temporary
// directory, real HTTP on loopback) and returns a client of it.
func newDaemonClient(t *testing.T) *client.Client {
	t.Helper()
	const key = "abk_agentfile_test_key"
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: key, Workers: 1})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestNormalizeAgainstDaemon is the property apply relies on: an agent
// created from a file's definition, fetched back, normalizes to the bytes
// of the file's definition; also after an update; and the file Render
// writes for it loads back to the same bytes.
func TestNormalizeAgainstDaemon(t *testing.T) {
	c := newDaemonClient(t)
	agents, err := agentfile.Load([]string{"testdata/agents"}, agentfile.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		t.Run(a.Name, func(t *testing.T) {
			ctx := t.Context()
			want := mustNormalize(t, a.Definition)
			created, err := c.Agents.Create(ctx, a.Definition, nil, client.WithIdempotencyKey(agentfile.IdempotencyKey(a.Name)))
			if err != nil {
				t.Fatal(err)
			}
			if id := agentfile.AgentID(created.OrganizationID, a.Name); created.WorkflowPermanentID != id {
				t.Errorf("created %s, but AgentID gives %s", created.WorkflowPermanentID, id)
			}
			fetched, err := c.Agents.Get(ctx, created.WorkflowPermanentID, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkSame(t, "created", want, mustNormalizeAgent(t, created))
			checkSame(t, "fetched", want, mustNormalizeAgent(t, fetched))
			checkRender(t, fetched, a.Name, a.Tags)

			// An update: the same definition with a new title and one
			// block less.
			upd := *a.Definition
			upd.Title += " (v2)"
			blocks := upd.WorkflowDefinition.Blocks
			gone := blocks[len(blocks)-1].Base().Label
			upd.WorkflowDefinition.Blocks = slices.Clone(blocks[:len(blocks)-1])
			upd.WorkflowDefinition.FinallyBlockLabel = ""
			// A branch that routed to the removed block goes on instead.
			for i, b := range upd.WorkflowDefinition.Blocks {
				if c, ok := b.(*client.ConditionalBlock); ok {
					cp := *c
					cp.BranchConditions = slices.Clone(c.BranchConditions)
					for j := range cp.BranchConditions {
						if cp.BranchConditions[j].NextBlockLabel == gone {
							cp.BranchConditions[j].NextBlockLabel = ""
						}
					}
					upd.WorkflowDefinition.Blocks[i] = &cp
				}
			}
			if _, err := c.Agents.Update(ctx, created.WorkflowPermanentID, &upd); err != nil {
				t.Fatal(err)
			}
			fetched, err = c.Agents.Get(ctx, created.WorkflowPermanentID, nil)
			if err != nil {
				t.Fatal(err)
			}
			if fetched.Version != 2 {
				t.Errorf("version %d after an update", fetched.Version)
			}
			updWant := mustNormalize(t, &upd)
			checkSame(t, "updated", updWant, mustNormalizeAgent(t, fetched))
			if string(updWant) == string(want) {
				t.Error("the update normalizes like the original")
			}
			checkRender(t, fetched, a.Name, nil)

			// Creating again with the same name gives the same agent.
			again, err := c.Agents.Create(ctx, a.Definition, nil, client.WithIdempotencyKey(agentfile.IdempotencyKey(a.Name)))
			if err != nil {
				t.Fatal(err)
			}
			if again.WorkflowPermanentID != created.WorkflowPermanentID {
				t.Errorf("a second create with the same name made %s, not %s", again.WorkflowPermanentID, created.WorkflowPermanentID)
			}
		})
	}
}
