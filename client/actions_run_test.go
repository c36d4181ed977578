package client_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

// TestRunActionOnCurrentPage: an action that continues a run needs no URL
// (it runs on the page the run's browser is on); the request then carries
// no url member.
func TestRunActionOnCurrentPage(t *testing.T) {
	ts := newTestServer(t)
	ts.reply("POST /v1/sdk/run_action", http.StatusOK, `{"workflow_run_id":"wr_9","result":"Ada"}`)
	res, err := ts.client.Actions.Run(t.Context(), &client.RunActionRequest{
		WorkflowRunID: "wr_9",
		Action:        client.Action{Type: client.ActionInputText, Selector: "#name", Value: "Ada"},
	})
	if err != nil {
		t.Fatalf("Actions.Run with a run and no URL: %v", err)
	}
	if res.WorkflowRunID != "wr_9" || string(res.Result) != `"Ada"` {
		t.Errorf("answer %+v", res)
	}
	if body := string(ts.only().Body); body != `{"action":{"type":"ai_input_text","selector":"#name","value":"Ada"},"workflow_run_id":"wr_9"}` {
		t.Errorf("body %s", body)
	}
}

// TestRunActionRequestChecks: a request the service would refuse fails
// before it is sent, saying what is missing.
func TestRunActionRequestChecks(t *testing.T) {
	ts := newTestServer(t)
	for _, tc := range []struct {
		req  *client.RunActionRequest
		want string
	}{
		{nil, "no request"},
		{&client.RunActionRequest{URL: "http://x", Action: client.Action{Selector: "a"}}, "Action.Type is required"},
		{&client.RunActionRequest{Action: client.Action{Type: client.ActionClick, Selector: "a"}}, "URL is required for a new run (a request without WorkflowRunID)"},
	} {
		_, err := ts.client.Actions.Run(t.Context(), tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one saying %q", tc.req, err, tc.want)
		}
	}
	if n := len(ts.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
