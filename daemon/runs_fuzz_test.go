package daemon_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// FuzzRunRequests sends arbitrary bodies and step-limit headers to the run
// routes that read them: the daemon answers 2xx or 4xx with a detail, never
// 5xx, and a run it accepts comes back queued with an id of its type.
func FuzzRunRequests(f *testing.F) {
	seeds := []string{
		`{"prompt":"script: steps=2;screenshots=1","url":"example.com"}`,
		`{"prompt":"x","engine":"skyvern-2.0","max_steps":3,"webhook_url":"http://127.0.0.1:1/h"}`,
		`{"prompt":"x","engine":"skyvern-9.0"}`,
		`{"prompt":"x","max_steps":0,"totp_url":"ftp://x"}`,
		`{"prompt":"x","start_fresh_browser":true,"browser_session_id":"pbs_1"}`,
		`{"prompt":"x","max_screenshot_scrolls":-5,"cdp_connect_headers":{"a":"b"}}`,
		`{"workflow_id":"WPID","parameters":{"count":"7"}}`,
		`{"agent_id":"WPID","parameters":{"count":1.5,"flag":"yes"},"max_elapsed_time_minutes":0}`,
		`{"workflow_id":"WPID","parameters":{"count":1},"run_metadata":{"k":"v"},"webhook_url":"not a url"}`,
		`{"run_ids":["tsk_1","wr_2"]}`, `{"run_ids":null}`, `{"webhook_url":"http://127.0.0.1:1/h"}`,
		`{}`, `[]`, `null`, `{"prompt":`, "\xff", `{"prompt":"` + strings.Repeat("é", 500) + `"}`,
	}
	for _, s := range seeds {
		f.Add(s, "")
		f.Add(s, "3")
	}
	f.Add(`{"workflow_id":"WPID","parameters":{"count":2}}`, "-1")
	f.Add(`{"workflow_id":"WPID","parameters":{"count":2}}`, "x")

	e := newRunsEnv(f, runsEnvConfig{Workers: 2})
	// The fuzzer judges the answers to run requests, not what runs do: the
	// runs it starts complete at once, whatever script a mutated prompt or
	// parameter names (a mutated "steps=3" of millions of steps, a gate
	// that never opens, thousands of files), which would otherwise pile up
	// across executions and starve the fuzzing process.
	e.exec.Choose = func(*executor.Job) *scripted.Script { return &scripted.Script{Steps: 1} }
	agent := agentForRuns(f, e.a, "")
	wpid := agent.WorkflowPermanentID
	done, err := e.a.Runs.StartTask(f.Context(), &client.TaskRunRequest{Prompt: "script: steps=1"})
	if err != nil {
		f.Fatal(err)
	}
	e.settled(done.RunID)
	routes := []struct {
		path   string
		starts client.RunType // "" for routes that start no run
	}{
		{"/v1/run/tasks", "task"}, {"/v1/runs", "task"}, {"/v1/run/agents", client.RunTypeWorkflowRun},
		{"/v1/runs/cancel", ""}, {"/v1/runs/" + done.RunID + "/retry_webhook", ""},
	}
	f.Fuzz(func(t *testing.T, body, maxSteps string) {
		body = strings.ReplaceAll(body, "WPID", wpid)
		for _, rt := range routes {
			req, err := http.NewRequest(http.MethodPost, e.url+rt.path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Api-Key", e.keyA)
			req.Header.Set("Content-Type", "application/json")
			if maxSteps != "" {
				req.Header.Set("X-Max-Steps-Override", maxSteps)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				if strings.ContainsAny(maxSteps, "\r\n\x00") || !isHeaderValue(maxSteps) {
					continue // not a header the transport sends
				}
				t.Fatal(err)
			}
			var out struct {
				Detail  json.RawMessage `json:"detail"`
				RunID   string          `json:"run_id"`
				Status  string          `json:"status"`
				RunType client.RunType  `json:"run_type"`
			}
			decErr := json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			switch {
			case resp.StatusCode >= 500 || resp.StatusCode < 200:
				t.Fatalf("POST %s answered %d", rt.path, resp.StatusCode)
			case resp.StatusCode >= 400:
				if decErr != nil || len(out.Detail) == 0 {
					t.Fatalf("POST %s answered %d without a detail (%v)", rt.path, resp.StatusCode, decErr)
				}
			case rt.starts != "":
				if decErr != nil || out.Status != string(client.RunStatusQueued) || out.RunID == "" ||
					(rt.starts == client.RunTypeWorkflowRun) != (out.RunType == client.RunTypeWorkflowRun) {
					t.Fatalf("POST %s accepted a run as %+v (%v)", rt.path, out, decErr)
				}
			}
		}
	})
}

// isHeaderValue reports whether v can be sent as a header value.
func isHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
