package webhooks_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/client/webhook"
	"github.com/abctl/abctl/daemon/webhooks"
)

const testKey = "abk_test_0123456789abcdef"

// outputIn is a run's output as the daemon stores it; outputOut is what the
// payload must carry: compact, 3.0 written as 3, raw UTF-8.
const (
	outputIn  = `{"price": 3.0, "name": "Café ☕ <b>&</b>", "ratio": 0.5, "items": [1.0, 2.5, {"n": -0.0}], "big": 1e20}`
	outputOut = `{"price":3,"name":"Café ☕ <b>&</b>","ratio":0.5,"items":[1,2.5,{"n":0}],"big":100000000000000000000}`
)

// superset is the documented key order of every payload.
var superset = []string{
	"run_id", "task_id", "status", "output", "summary", "prompt", "url",
	"downloaded_files", "recording_url", "screenshot_urls", "failure_reason",
	"errors", "step_count", "run_type", "app_url", "organization_id",
	"workflow_run_id", "workflow_id", "workflow_permanent_id", "proxy_location",
	"webhook_callback_url", "webhook_failure_reason", "created_at",
	"modified_at", "queued_at", "started_at", "finished_at",
	"recording_archived", "browser_session_id", "browser_profile_id",
	"max_screenshot_scrolls", "script_run", "totp_verification_url",
	"totp_identifier", "workflow_title", "parameters", "run_with",
	"ai_fallback", "script_id", "run_request",
}

var (
	created  = time.Date(2026, 1, 31, 15, 20, 42, 160725000, time.UTC)
	started  = created.Add(2 * time.Second)
	finished = created.Add(20 * time.Second)
)

func taskRun(id string, t client.RunType) *client.Run {
	return &client.Run{
		RunID:        id,
		Status:       client.RunStatusCompleted,
		Output:       json.RawMessage(outputIn),
		RecordingURL: client.Ptr("http://127.0.0.1:8000/v1/artifacts/art_1/content"),
		ScreenshotURLs: []string{
			"http://127.0.0.1:8000/v1/artifacts/art_3/content",
			"http://127.0.0.1:8000/v1/artifacts/art_2/content",
		},
		CreatedAt:  client.NewTime(created),
		ModifiedAt: client.NewTime(finished),
		QueuedAt:   client.TimePtr(created),
		StartedAt:  client.TimePtr(started),
		FinishedAt: client.TimePtr(finished),
		AppURL:     client.Ptr("http://127.0.0.1:8000/runs/" + id),
		StepCount:  client.Ptr(4),
		RunType:    t,
		RunRequest: json.RawMessage(`{"prompt":"Find the price – in €","url":"https://example.com/","webhook_url":"http://127.0.0.1:9/hook","proxy_location":"RESIDENTIAL"}`),
	}
}

func workflowRun() *client.Run {
	r := taskRun("wr_490440779503357994", client.RunTypeWorkflowRun)
	r.Output = json.RawMessage(`{"extract_output": {"price": 3.0}, "extracted_information": [{"price": 3.0}]}`)
	r.RunRequest = json.RawMessage(`{"workflow_id":"wpid_123","parameters":{"n":1.0,"city":"Zürich"},"proxy_location":"NONE","webhook_url":"http://127.0.0.1:9/agent-hook","totp_identifier":"me@example.com"}`)
	r.RunWith = client.Ptr("agent")
	r.AIFallback = client.Ptr(false)
	return r
}

// decode returns the payload's top-level keys in order and its values.
func decode(t *testing.T, body []byte) ([]string, map[string]json.RawMessage) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("payload does not decode: %v\n%s", err, body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("payload is not an object: %v %v", tok, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys, m
}

func str(t *testing.T, m map[string]json.RawMessage, key string) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(m[key], &s); err != nil {
		t.Fatalf("%s = %s, want a string", key, m[key])
	}
	return s
}

func TestPayloadPerRunType(t *testing.T) {
	tests := []struct {
		name   string
		run    *client.Run
		info   webhooks.Info
		output string
		want   map[string]string // key -> exact JSON value
	}{
		{
			name:   "task_v1",
			run:    taskRun("tsk_490440779503357994", client.RunTypeTaskV1),
			info:   webhooks.Info{OrganizationID: "o_1"},
			output: outputOut,
			want: map[string]string{
				"run_id": `"tsk_490440779503357994"`, "task_id": `"tsk_490440779503357994"`,
				"status": `"completed"`, "run_type": `"task_v1"`,
				"prompt": `"Find the price – in €"`, "url": `"https://example.com/"`,
				"summary": `""`, "organization_id": `"o_1"`,
				"workflow_run_id": `""`, "workflow_id": `""`, "workflow_permanent_id": `""`,
				"webhook_callback_url": `"http://127.0.0.1:9/hook"`,
				"proxy_location":       `"RESIDENTIAL"`,
				"parameters":           `null`, "workflow_title": `null`, "run_request": `null`,
			},
		},
		{
			name: "task_v2",
			run:  taskRun("tsk_v2_490440779503357994", client.RunTypeTaskV2),
			info: webhooks.Info{
				OrganizationID: "o_1", Prompt: "explicit prompt", URL: "https://example.org/",
				Summary: "Found it.", WorkflowRunID: "wr_7", WorkflowID: "w_7", WorkflowPermanentID: "wpid_7",
				WebhookCallbackURL: "http://127.0.0.1:9/explicit",
			},
			output: outputOut,
			want: map[string]string{
				"run_id": `"tsk_v2_490440779503357994"`, "task_id": `"tsk_v2_490440779503357994"`,
				"run_type": `"task_v2"`, "prompt": `"explicit prompt"`, "url": `"https://example.org/"`,
				"summary": `"Found it."`, "workflow_run_id": `"wr_7"`, "workflow_id": `"w_7"`,
				"workflow_permanent_id": `"wpid_7"`, "webhook_callback_url": `"http://127.0.0.1:9/explicit"`,
				"run_request": `null`,
			},
		},
		{
			name: "workflow_run",
			run:  workflowRun(),
			info: webhooks.Info{
				OrganizationID: "o_1", WorkflowTitle: "Prices",
				WebhookCallbackURL: "http://127.0.0.1:9/agent-default",
			},
			output: `{"extract_output":{"price":3},"extracted_information":[{"price":3}]}`,
			want: map[string]string{
				"run_id": `"wr_490440779503357994"`, "task_id": `"wr_490440779503357994"`,
				"run_type": `"workflow_run"`, "prompt": `""`, "url": `""`,
				"workflow_run_id": `"wr_490440779503357994"`, "workflow_id": `"wpid_123"`,
				"workflow_permanent_id": `"wpid_123"`, "workflow_title": `"Prices"`,
				"parameters":           `{"city":"Zürich","n":1}`,
				"webhook_callback_url": `"http://127.0.0.1:9/agent-default"`,
				"proxy_location":       `"NONE"`, "totp_identifier": `"me@example.com"`,
				"totp_verification_url": `null`, "run_with": `"agent"`, "ai_fallback": `false`,
				"run_request": `{"workflow_id":"wpid_123","parameters":{"n":1,"city":"Zürich"},"proxy_location":"NONE","webhook_url":"http://127.0.0.1:9/agent-hook","totp_identifier":"me@example.com"}`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := webhooks.Payload(tc.run, tc.info)
			if err != nil {
				t.Fatal(err)
			}
			keys, m := decode(t, body)
			if !reflect.DeepEqual(keys, superset) {
				t.Errorf("keys:\n got %q\nwant %q", keys, superset)
			}
			if got := string(m["output"]); got != tc.output {
				t.Errorf("output = %s\nwant %s", got, tc.output)
			}
			common := map[string]string{
				"status": `"completed"`, "downloaded_files": `[]`, "errors": `[]`,
				"failure_reason": `null`, "webhook_failure_reason": `null`, "step_count": `4`,
				"created_at": `"2026-01-31T15:20:42.160725"`, "finished_at": `"2026-01-31T15:21:02.160725"`,
				"app_url":            `"http://127.0.0.1:8000/runs/` + tc.run.RunID + `"`,
				"recording_url":      `"http://127.0.0.1:8000/v1/artifacts/art_1/content"`,
				"screenshot_urls":    `["http://127.0.0.1:8000/v1/artifacts/art_3/content","http://127.0.0.1:8000/v1/artifacts/art_2/content"]`,
				"recording_archived": `false`, "browser_session_id": `null`, "script_run": `null`,
			}
			for k, v := range common {
				if _, ok := tc.want[k]; !ok {
					tc.want[k] = v
				}
			}
			for k, want := range tc.want {
				if got := string(m[k]); got != want {
					t.Errorf("%s = %s, want %s", k, got, want)
				}
			}
			if str(t, m, "run_id") != tc.run.RunID {
				t.Errorf("run_id is not the run's id")
			}
			// Raw UTF-8, never \u escapes; & < > not HTML-escaped.
			raw := "Café ☕ <b>&</b>"
			if tc.run.RunType.IsWorkflow() {
				raw = `"city":"Zürich"`
			}
			if bytes.Contains(body, []byte(`\u`)) || !bytes.Contains(body, []byte(raw)) {
				t.Errorf("body is not raw UTF-8 (want %q): %s", raw, body)
			}
			// The bytes are a fixed point of the signed form.
			if norm, err := webhook.Normalize(body); err != nil || !bytes.Equal(norm, body) {
				t.Errorf("body is not normalised: %v\n%s\n%s", err, body, norm)
			}
			// The official receiver type decodes it.
			var p webhook.Payload
			if err := json.Unmarshal(body, &p); err != nil || p.RunID != tc.run.RunID || p.RunType != tc.run.RunType {
				t.Errorf("webhook.Payload decode: %v %+v", err, p)
			}
			// RetryPayload sends the same bytes.
			again, err := webhooks.RetryPayload(tc.run, tc.info)
			if err != nil || !bytes.Equal(again, body) {
				t.Errorf("RetryPayload differs: %v\n%s\n%s", err, again, body)
			}
		})
	}
}

func TestPayloadStatuses(t *testing.T) {
	for _, st := range []client.RunStatus{
		client.RunStatusCompleted, client.RunStatusFailed, client.RunStatusTerminated,
		client.RunStatusTimedOut, client.RunStatusCanceled,
	} {
		run := taskRun("tsk_1", client.RunTypeTaskV1)
		run.Status = st
		run.Output = nil
		run.StartedAt = nil // e.g. failed before executing
		if st != client.RunStatusCompleted {
			run.FailureReason = client.Ptr("Something went wrong: “quoted”")
		}
		body, err := webhooks.Payload(run, webhooks.Info{})
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		_, m := decode(t, body)
		if str(t, m, "status") != string(st) || string(m["output"]) != "null" || string(m["started_at"]) != "null" {
			t.Errorf("%s: status %s output %s started_at %s", st, m["status"], m["output"], m["started_at"])
		}
		if st != client.RunStatusCompleted && str(t, m, "failure_reason") != "Something went wrong: “quoted”" {
			t.Errorf("%s: failure_reason %s", st, m["failure_reason"])
		}
	}
}

func TestPayloadRejects(t *testing.T) {
	if _, err := webhooks.Payload(nil, webhooks.Info{}); err == nil {
		t.Error("nil run accepted")
	}
	run := taskRun("tsk_1", client.RunTypeTaskV1)
	run.Status = client.RunStatusRunning
	if _, err := webhooks.Payload(run, webhooks.Info{}); err == nil || !strings.Contains(err.Error(), "terminal") {
		t.Errorf("running run: err = %v", err)
	}
	run.Status = client.RunStatusCompleted
	run.Output = json.RawMessage(`{"broken":`)
	if _, err := webhooks.Payload(run, webhooks.Info{}); err == nil {
		t.Error("invalid output accepted")
	}
}

func TestPayloadEdgeValues(t *testing.T) {
	run := taskRun("tsk_1", client.RunTypeTaskV1)
	run.RunRequest = json.RawMessage(`not json`) // ignored
	run.Output = json.RawMessage(`"a string\u2028output"`)
	run.Errors = []json.RawMessage{json.RawMessage(`{"error_code": "E1", "score": 2.0}`)}
	run.DownloadedFiles = []client.FileInfo{{URL: "http://127.0.0.1:8000/f", FileSize: client.Ptr(int64(12))}}
	info := webhooks.Info{
		ProxyLocation: &client.ProxyLocation{}, // would not encode: dropped
		Parameters:    map[string]json.RawMessage{"empty": nil, "x": json.RawMessage(`2.0`)},
	}
	body, err := webhooks.Payload(run, info)
	if err != nil {
		t.Fatal(err)
	}
	_, m := decode(t, body)
	want := map[string]string{
		"output":           "\"a string\u2028output\"",
		"errors":           `[{"error_code":"E1","score":2}]`,
		"downloaded_files": `[{"url":"http://127.0.0.1:8000/f","checksum":null,"filename":null,"file_size":12,"modified_at":null}]`,
		"proxy_location":   `null`,
		"prompt":           `""`,
		"parameters":       `{"empty":null,"x":2}`,
	}
	for k, w := range want {
		if got := string(m[k]); got != w {
			t.Errorf("%s = %s, want %s", k, got, w)
		}
	}
}
