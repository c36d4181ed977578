package mcpserver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/mcpserver"
)

// TestBrowserProfiles: the tools create (empty), list, show and delete
// profiles, and a run that kept no browser state makes none. (A profile
// that holds a sign-in needs a real browser; engine/login_test.go's
// TestDaemonKeepsASignIn makes one.)
func TestBrowserProfiles(t *testing.T) {
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		ctx := t.Context()
		created := call[mcpserver.BrowserProfileInfo](t, s, "skyvern_browser_profile_create",
			map[string]any{"name": "Billing, signed in", "description": "the billing portal"})
		if !strings.HasPrefix(created.BrowserProfileID, "bp_") || created.Name != "Billing, signed in" || created.Description != "the billing portal" ||
			created.WorkflowPermanentID != "" || created.CreatedAt == "" || created.DeletedAt != "" {
			t.Fatalf("browser_profile_create = %+v", created)
		}
		if p, err := e.c.BrowserProfiles.Get(ctx, created.BrowserProfileID); err != nil || p.Name != "Billing, signed in" {
			t.Fatalf("the profile the tool made reads as %+v (%v)", p, err)
		}
		other, err := e.c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "Fresh"})
		if err != nil {
			t.Fatal(err)
		}

		list := call[mcpserver.BrowserProfileList](t, s, "skyvern_browser_profile_list", nil)
		if len(list.BrowserProfiles) != 2 || list.Page != 1 || list.PageSize != 10 || list.HasMore {
			t.Fatalf("browser_profile_list = %+v", list)
		}
		byID := map[string]mcpserver.BrowserProfileInfo{}
		for _, p := range list.BrowserProfiles {
			byID[p.BrowserProfileID] = p
		}
		if byID[created.BrowserProfileID] != created || byID[other.BrowserProfileID].Name != "Fresh" {
			t.Errorf("browser_profile_list shows %+v", list.BrowserProfiles)
		}
		found := call[mcpserver.BrowserProfileList](t, s, "skyvern_browser_profile_list", map[string]any{"search_key": "BILLING"})
		if len(found.BrowserProfiles) != 1 || found.BrowserProfiles[0].BrowserProfileID != created.BrowserProfileID {
			t.Errorf("browser_profile_list by search_key = %+v", found)
		}
		page2 := call[mcpserver.BrowserProfileList](t, s, "skyvern_browser_profile_list", map[string]any{"page": 2, "page_size": 1})
		if len(page2.BrowserProfiles) != 1 || page2.Page != 2 || page2.PageSize != 1 || !page2.HasMore {
			t.Errorf("browser_profile_list page 2 = %+v", page2)
		}

		if got := call[mcpserver.BrowserProfileInfo](t, s, "skyvern_browser_profile_get", map[string]any{"browser_profile_id": created.BrowserProfileID}); got != created {
			t.Errorf("browser_profile_get = %+v\nwant %+v", got, created)
		}

		// A run that kept no browser state makes no profile: the scripted
		// executor keeps none, even for an agent with persist_browser_session.
		agent, err := e.c.Agents.Create(ctx, &client.AgentDefinition{Title: "Invoices", PersistBrowserSession: true, WorkflowDefinition: client.WorkflowDefinition{
			Blocks: client.Blocks{&client.WaitBlock{BlockBase: client.BlockBase{Label: "pause"}}},
		}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		run, err := e.c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.Runs.Wait(ctx, run.RunID, fastPoll); err != nil {
			t.Fatal(err)
		}
		msg := callError(t, s, "skyvern_browser_profile_create", map[string]any{"name": "x", "workflow_run_id": run.RunID})
		if !strings.Contains(msg, "400") || !strings.Contains(msg, "kept no browser state") || !strings.Contains(msg, "persist_browser_session") {
			t.Errorf("a profile from a run that kept nothing: %q", msg)
		}

		del := call[mcpserver.BrowserProfileDeleteResult](t, s, "skyvern_browser_profile_delete", map[string]any{"browser_profile_id": created.BrowserProfileID})
		if !del.Deleted || del.BrowserProfileID != created.BrowserProfileID {
			t.Errorf("browser_profile_delete = %+v", del)
		}
		if _, err := e.c.BrowserProfiles.Get(ctx, created.BrowserProfileID); !errors.Is(err, client.ErrNotFound) {
			t.Errorf("the deleted profile reads as %v, want 404", err)
		}
		if l := call[mcpserver.BrowserProfileList](t, s, "skyvern_browser_profile_list", nil); len(l.BrowserProfiles) != 1 {
			t.Errorf("after the delete, browser_profile_list = %+v", l)
		}
		withDeleted := call[mcpserver.BrowserProfileList](t, s, "skyvern_browser_profile_list", map[string]any{"include_deleted": true})
		var deletedAt string
		for _, p := range withDeleted.BrowserProfiles {
			if p.BrowserProfileID == created.BrowserProfileID {
				deletedAt = p.DeletedAt
			}
		}
		if len(withDeleted.BrowserProfiles) != 2 || deletedAt == "" {
			t.Errorf("browser_profile_list with include_deleted = %+v", withDeleted)
		}

		for _, tc := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"skyvern_browser_profile_get", map[string]any{"browser_profile_id": "bp_404"}, "404"},
			{"skyvern_browser_profile_delete", map[string]any{"browser_profile_id": created.BrowserProfileID}, "404"},
			{"skyvern_browser_profile_get", map[string]any{}, "browser_profile_id"},
			{"skyvern_browser_profile_get", map[string]any{"browser_profile_id": ""}, "browser_profile_id"},
			{"skyvern_browser_profile_create", map[string]any{}, "name"},
			{"skyvern_browser_profile_create", map[string]any{"name": ""}, "name"},
			{"skyvern_browser_profile_create", map[string]any{"name": "x", "workflow_run_id": "wr_404"}, "404"},
			{"skyvern_browser_profile_create", map[string]any{"name": "x", "workflow_run_id": "tsk_1"}, "task runs keep no browser state"},
			{"skyvern_browser_profile_list", map[string]any{"page_size": 1000}, "page_size"},
			{"skyvern_browser_profile_list", map[string]any{"page": 0}, "page"},
		} {
			if msg := callError(t, s, tc.tool, tc.args); !strings.Contains(msg, tc.want) {
				t.Errorf("%s(%v): error %q does not mention %q", tc.tool, tc.args, msg, tc.want)
			}
		}
	})
}
