package daemon_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

// TestRunActionOnCurrentPage: an action that names its workflow run needs
// no url (missing, null or empty): the engine gets none and acts on the
// page the run's browser is on. A first action still needs one.
func TestRunActionOnCurrentPage(t *testing.T) {
	f := &fakeActions{open: map[string]*fakeSession{}}
	c, base, _ := startActionsDaemon(t, t.TempDir(), f)
	const key = "abk_actions_test_key"
	first, err := c.Actions.Run(t.Context(), &client.RunActionRequest{URL: "https://example.test/form", Action: client.Action{Type: client.ActionInputText, Selector: "#name", Value: "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	wr := first.WorkflowRunID
	for i, body := range []string{
		`{"workflow_run_id":"` + wr + `","action":{"type":"ai_click","selector":"#a"}}`,
		`{"url":null,"workflow_run_id":"` + wr + `","action":{"type":"ai_click","selector":"#b"}}`,
		`{"url":" ","workflow_run_id":"` + wr + `","action":{"type":"ai_click","selector":"#c"}}`,
	} {
		status, got := rawPost(t, base, key, "/v1/sdk/run_action", body)
		var res client.RunActionResponse
		if status != http.StatusOK || json.Unmarshal(got, &res) != nil || res.WorkflowRunID != wr {
			t.Errorf("%s: %d %s", body, status, got)
			continue
		}
		f.mu.Lock()
		call := f.calls[len(f.calls)-1]
		f.mu.Unlock()
		if want := "#" + string("abc"[i]); call.URL != "" || call.WorkflowRunID != wr || call.Action.Selector != want {
			t.Errorf("%s: the engine got %+v", body, call)
		}
	}
	// Without a run, a url is still required.
	status, got := rawPost(t, base, key, "/v1/sdk/run_action", `{"url":"","action":{"type":"ai_click","selector":"a"}}`)
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(got), `"url"`) {
		t.Errorf("a first action without a url: %d %s", status, got)
	}
}
