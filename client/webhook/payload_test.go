package webhook_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/client/webhook"
)

// fullPayload holds the values of the "full-payload" vector.
func fullPayload() webhook.Payload {
	at := func(sec, usec int) *client.Time {
		return client.TimePtr(time.Date(2026, 1, 31, 15, 20, sec, usec*1000, time.UTC))
	}
	return webhook.Payload{
		RunID:                "tsk_v2_490440779503357994",
		TaskID:               "tsk_v2_490440779503357994",
		Status:               client.RunStatusCompleted,
		Output:               json.RawMessage(`{"title": "Hello", "price": 19.0}`),
		Summary:              "Opened the page and read the title.",
		Prompt:               "Read the title",
		URL:                  "https://example.com/",
		DownloadedFiles:      []client.FileInfo{},
		RecordingURL:         nil,
		ScreenshotURLs:       []string{"http://127.0.0.1:8780/a/2.png"},
		FailureReason:        nil,
		Errors:               []json.RawMessage{},
		StepCount:            client.Ptr(3),
		RunType:              client.RunTypeTaskV2,
		AppURL:               "http://127.0.0.1:8780/runs/wr_1",
		OrganizationID:       "o_485917350850524254",
		WorkflowRunID:        "wr_1",
		WorkflowID:           "w_1",
		WorkflowPermanentID:  "wpid_1",
		ProxyLocation:        client.Proxy(client.ProxyResidential),
		WebhookCallbackURL:   "http://127.0.0.1:9/hook",
		WebhookFailureReason: nil,
		CreatedAt:            *at(42, 160725),
		ModifiedAt:           client.NewTime(time.Date(2026, 1, 31, 15, 21, 2, 0, time.UTC)),
		QueuedAt:             at(42, 200001),
		StartedAt:            at(43, 100),
		FinishedAt:           client.TimePtr(time.Date(2026, 1, 31, 15, 21, 2, 0, time.UTC)),
	}
}

func TestBodyFullPayload(t *testing.T) {
	v := vectorNamed(t, "full-payload")
	body, err := webhook.Body(fullPayload())
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != v.Body {
		t.Fatalf("Body(payload)\n got %s\nwant %s", body, v.Body)
	}
	if sig := webhook.Sign(v.APIKey, body); sig != v.Signature {
		t.Errorf("Sign(Body(payload)) = %s, want %s", sig, v.Signature)
	}
	// A pointer encodes the same.
	p := fullPayload()
	if body2, err := webhook.Body(&p); err != nil || string(body2) != v.Body {
		t.Errorf("Body(&payload) = %s, %v", body2, err)
	}
}

// TestPayloadRoundTrip decodes the vector's body and encodes it again. This
// is not how receivers verify (they verify the raw bytes), but it shows that
// Payload loses nothing of a documented payload.
func TestPayloadRoundTrip(t *testing.T) {
	v := vectorNamed(t, "full-payload")
	var p webhook.Payload
	if err := json.Unmarshal([]byte(v.Body), &p); err != nil {
		t.Fatal(err)
	}
	if p.RunID != "tsk_v2_490440779503357994" || p.Status != client.RunStatusCompleted || *p.StepCount != 3 ||
		p.ProxyLocation.Name != client.ProxyResidential || p.StartedAt.String() != "2026-01-31T15:20:43.000100" {
		t.Errorf("decoded payload has wrong values: %+v", p)
	}
	body, err := webhook.Body(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != v.Body {
		t.Errorf("Body(decoded payload)\n got %s\nwant %s", body, v.Body)
	}
}

func TestPayloadNullsAreWritten(t *testing.T) {
	body, err := webhook.Body(webhook.Payload{RunID: "tsk_1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"output", "recording_url", "failure_reason", "step_count", "proxy_location", "webhook_failure_reason", "queued_at", "started_at", "finished_at", "errors", "downloaded_files", "screenshot_urls"} {
		if !strings.Contains(string(body), `"`+key+`":null`) {
			t.Errorf("zero Payload body lacks %q: null: %s", key, body)
		}
	}
	var keys []string
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.Token() // {
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	want := "run_id task_id status output summary prompt url downloaded_files recording_url screenshot_urls failure_reason errors step_count run_type app_url organization_id workflow_run_id workflow_id workflow_permanent_id proxy_location webhook_callback_url webhook_failure_reason created_at modified_at queued_at started_at finished_at"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("key order\n got %s\nwant %s", got, want)
	}
}

// TestPayloadDecodesOtherRunTypes feeds payloads shaped like those of other
// run types (missing fields, extra fields, other key order, a proxy object,
// nulls in string fields, timestamps with a zone) and expects them to decode.
func TestPayloadDecodesOtherRunTypes(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		check func(*webhook.Payload) bool
	}{
		{
			name: "workflow run",
			body: `{"workflow_id":"wpid_9","workflow_run_id":"wr_9","status":"failed","failure_reason":"boom","proxy_location":{"country":"US","subdivision":"CA"},"parameters":{"a":1},"outputs":{"b_output":[1]},"total_cost":0.25,"queued_at":null,"created_at":"2026-01-31T15:20:42Z","modified_at":"2026-01-31T15:20:42.5","run_id":"wr_9","output":{"b_output":[1]},"run_type":"workflow_run","run_request":{"workflow_id":"wpid_9"}}`,
			check: func(p *webhook.Payload) bool {
				return p.RunID == "wr_9" && p.RunType == client.RunTypeWorkflowRun && p.WorkflowID == "wpid_9" &&
					p.ProxyLocation != nil && p.ProxyLocation.Country == "US" && p.ProxyLocation.Subdivision == "CA" &&
					*p.FailureReason == "boom" && p.QueuedAt == nil && p.TaskID == "" &&
					p.ModifiedAt.Nanosecond() == 500000000 && string(p.Output) == `{"b_output":[1]}`
			},
		},
		{
			name: "task v1",
			body: `{"task_id":"tsk_5","status":"completed","created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:42","extracted_information":{"x":1},"downloaded_files":[{"url":"https://f/1","checksum":null,"filename":"a.pdf","file_size":10,"modified_at":null}],"errors":[{"error_code":"E1"}],"step_count":7,"run_id":"tsk_5","output":{"x":1},"run_type":"task_v1"}`,
			check: func(p *webhook.Payload) bool {
				return p.RunID == "tsk_5" && p.Prompt == "" && len(p.DownloadedFiles) == 1 && *p.DownloadedFiles[0].Filename == "a.pdf" &&
					len(p.Errors) == 1 && string(p.Errors[0]) == `{"error_code":"E1"}` && *p.StepCount == 7
			},
		},
		{
			name:  "nulls in string fields",
			body:  `{"run_id":"tsk_v2_1","summary":null,"prompt":null,"url":null,"app_url":null,"workflow_id":null}`,
			check: func(p *webhook.Payload) bool { return p.RunID == "tsk_v2_1" && p.Summary == "" && p.URL == "" },
		},
		{
			name:  "empty object",
			body:  `{}`,
			check: func(p *webhook.Payload) bool { return p.RunID == "" && p.Output == nil },
		},
	}
	for _, tc := range tests {
		var p webhook.Payload
		if err := json.Unmarshal([]byte(tc.body), &p); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !tc.check(&p) {
			t.Errorf("%s: unexpected values %+v", tc.name, p)
		}
	}
}

func TestBodyErrors(t *testing.T) {
	if _, err := webhook.Body(map[string]any{"c": make(chan int)}); err == nil {
		t.Error("Body(unencodable value) did not fail")
	}
	// Maps are sorted by encoding/json; Body documents that, and this pins it.
	body, err := webhook.Body(map[string]any{"b": 1.0, "a": "<&>\u2028", "c": 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"a\":\"<&>\u2028\",\"b\":1,\"c\":1e-05}"; string(body) != want {
		t.Errorf("Body(map) = %s, want %s", body, want)
	}
}
