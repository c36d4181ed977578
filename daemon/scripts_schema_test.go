package daemon_test

import (
	"testing"

	"github.com/abctl/abctl/client"
)

// The script operations, checked against the upstream schema by
// TestResponsesMatchTheUpstreamSchema with the rest.
func init() {
	served = append(served,
		"POST /v1/scripts",
		"GET /v1/scripts",
		"GET /v1/scripts/{script_id}",
		"POST /v1/scripts/{script_id}/deploy",
		"POST /v1/scripts/{script_id}/run",
	)
	moreExercises = append(moreExercises, exerciseScripts)
}

func exerciseScripts(t *testing.T, c *client.Client, raw func(method, path, body string) int) {
	ctx := t.Context()
	agent := agentForSchedules(t, c)
	wpid := agent.WorkflowPermanentID
	file := handScript(wpid, "default", "recorded by hand")
	created, err := c.Scripts.Create(ctx, &client.CreateScriptRequest{WorkflowID: wpid, RunID: "wr_1",
		Files: []client.ScriptFile{client.ScriptFileFromBytes("script.yaml", file)}})
	if err != nil {
		t.Fatalf("create a script: %v", err)
	}
	id := created.ScriptID
	loose, err := c.Scripts.Create(ctx, &client.CreateScriptRequest{Files: []client.ScriptFile{
		{Path: "script.yaml", Content: string(handScript("", "default", "loose")), Encoding: client.FileEncodingUTF8}}})
	if err != nil {
		t.Fatalf("create a script of no agent: %v", err)
	}
	for _, o := range []*client.ListScriptsOptions{nil, {Page: 2, PageSize: 1}, {AgentID: wpid}} {
		if _, err := c.Scripts.List(ctx, o); err != nil {
			t.Errorf("list scripts %+v: %v", o, err)
		}
	}
	if _, err := c.Scripts.Get(ctx, id); err != nil {
		t.Errorf("get a script: %v", err)
	}
	if _, err := c.Scripts.Deploy(ctx, id, &client.DeployScriptRequest{Files: []client.ScriptFile{client.ScriptFileFromBytes("script.yaml", file)}}); err != nil {
		t.Errorf("deploy a script: %v", err)
	}
	if _, err := c.Scripts.Run(ctx, id, nil); err != nil {
		t.Errorf("run a script: %v", err)
	}

	// Failures: 422 for a Python script, files without script.yaml, a
	// bad page, a script of no agent run; 404 for unknown ids.
	python := `{"files":[{"path":"main.py","content":"cHJpbnQoIkhlbGxvIik="}]}`
	for _, tc := range []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/v1/scripts", python, 422},
		{"POST", "/v1/scripts", `{"files":[{"path":"requirements.txt","content":"eA=="}]}`, 422},
		{"POST", "/v1/scripts", `{"files":[{"path":"script.yaml"}]}`, 422},
		{"GET", "/v1/scripts?page=0", "", 422},
		{"POST", "/v1/scripts/" + id + "/deploy", python, 422},
		{"POST", "/v1/scripts/" + id + "/deploy", `{}`, 422},
		{"POST", "/v1/scripts/" + loose.ScriptID + "/run", "", 422},
		{"GET", "/v1/scripts/s_404", "", 404},
		{"POST", "/v1/scripts/s_404/deploy", `{"files":[{"path":"script.yaml","content":"` + client.ScriptFileFromBytes("script.yaml", file).Content + `"}]}`, 404},
		{"POST", "/v1/scripts/s_404/run", "", 404},
	} {
		if got := raw(tc.method, tc.path, tc.body); got != tc.want {
			t.Errorf("%s %s %s: %d, want %d", tc.method, tc.path, tc.body, got, tc.want)
		}
	}
}
