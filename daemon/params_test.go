package daemon_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// TestAgentRunJSONParameter: a json parameter's value is checked before
// the run exists. A string is JSON text, as the hosted service reads it: it
// must parse (else 400 naming the parameter, the service's status for an
// invalid workflow parameter), and the run gets the parsed value; an object
// or list is taken as it is.
func TestAgentRunJSONParameter(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	ctx := t.Context()
	agent, err := e.a.Agents.Create(ctx, &client.AgentDefinition{
		Title: "Pages",
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: []client.Parameter{
				{Key: scripted.ParamKey, ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterString, DefaultValue: json.RawMessage(`"steps=1"`)},
				{Key: "pages", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterJSON},
			},
			Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/{{ pages[0] }}"}},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"notjson", "", "[1, 2"} {
		_, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{"pages": bad}})
		var ae *client.Error
		if !errors.As(err, &ae) || ae.StatusCode != 400 || !strings.Contains(ae.Detail, `pages: expected JSON, got `+quoted(bad)) {
			t.Errorf("pages=%q: %v, want 400 naming the parameter and its value", bad, err)
		}
	}
	if items, err := e.a.Runs.List(ctx, nil); err != nil || len(items) != 0 {
		t.Errorf("rejected requests made runs: %d, %v", len(items), err)
	}

	for given, want := range map[any]string{`["a", "b"]`: `["a","b"]`, `"one"`: `"one"`} {
		run, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{"pages": given}})
		if err != nil {
			t.Fatalf("pages=%v: %v", given, err)
		}
		waitRun(t, e.a, run.RunID)
		job, ok := e.exec.Job(run.RunID)
		if !ok {
			t.Fatalf("the executor saw no job for %s", run.RunID)
		}
		if got := string(job.Parameters["pages"]); got != want {
			t.Errorf("pages=%v reached the executor as %s, want %s", given, got, want)
		}
	}
}

func quoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
