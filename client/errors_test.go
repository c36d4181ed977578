package client_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

func TestErrorReplies(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		body       string
		header     [2]string
		sentinel   error
		detail     string
		validation int
	}{
		{"403 invalid key", 403, `{"detail":"Invalid credentials"}`, [2]string{}, client.ErrForbidden, "Invalid credentials", 0},
		{"404 string detail", 404, `{"detail":"Task run not found tsk_1"}`, [2]string{"X-Request-Id", "req-77"}, client.ErrNotFound, "Task run not found tsk_1", 0},
		{"404 empty body", 404, ``, [2]string{}, client.ErrNotFound, "", 0},
		{"409 conflict", 409, `{"detail":"Workflow creation with this idempotency key is still in progress."}`, [2]string{}, client.ErrConflict, "Workflow creation with this idempotency key is still in progress.", 0},
		{"400 bad request", 400, `{"detail":"Invalid agent engine: warp-9"}`, [2]string{}, client.ErrBadRequest, "Invalid agent engine: warp-9", 0},
		{"422 validation list", 422, `{"detail":[{"type":"missing","loc":["body","prompt"],"msg":"Field required","input":{}},{"type":"too_long","loc":["body","run_ids",100],"msg":"List should have at most 100 items","input":[],"ctx":{"max_length":100}}]}`,
			[2]string{}, client.ErrValidation, "body.prompt: Field required; body.run_ids.100: List should have at most 100 items", 2},
		{"422 string detail", 422, `{"detail":"Idempotency-Key must contain 1 to 255 visible ASCII bytes."}`, [2]string{}, client.ErrValidation, "Idempotency-Key must contain 1 to 255 visible ASCII bytes.", 0},
		{"500 error member", 500, `{"error":"Unexpected error: TaskAlreadyTimeout"}`, [2]string{}, client.ErrServer, "Unexpected error: TaskAlreadyTimeout", 0},
		{"500 plain text", 500, `Internal Server Error`, [2]string{}, client.ErrServer, "Internal Server Error", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, client.WithMaxRetries(0))
			ts.mux.HandleFunc("POST /v1/run/tasks", func(w http.ResponseWriter, r *http.Request) {
				if tc.header[0] != "" {
					w.Header().Set(tc.header[0], tc.header[1])
				}
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			})
			run, err := ts.client.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: "p"})
			if run != nil {
				t.Errorf("a result came with the error: %+v", run)
			}
			var apiErr *client.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %T %v, want *client.Error", err, err)
			}
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("errors.Is(%v, %v) is false", err, tc.sentinel)
			}
			for _, other := range []error{client.ErrNotFound, client.ErrForbidden, client.ErrConflict, client.ErrValidation, client.ErrRateLimited} {
				if other != tc.sentinel && errors.Is(err, other) {
					t.Errorf("error also matches %v", other)
				}
			}
			if apiErr.StatusCode != tc.status || apiErr.Detail != tc.detail || len(apiErr.Validation) != tc.validation {
				t.Errorf("status %d detail %q validation %d", apiErr.StatusCode, apiErr.Detail, len(apiErr.Validation))
			}
			if apiErr.Method != "POST" || !strings.HasSuffix(apiErr.URL, basePath+"/v1/run/tasks") {
				t.Errorf("request %s %s", apiErr.Method, apiErr.URL)
			}
			if tc.header[0] == "X-Request-Id" && (apiErr.RequestID != "req-77" || !strings.Contains(err.Error(), "req-77")) {
				t.Errorf("request id %q not kept or not shown in %q", apiErr.RequestID, err)
			}
			if strings.Contains(err.Error(), testAPIKey) || strings.Contains(string(apiErr.Body), testAPIKey) {
				t.Error("the API key appears in the error")
			}
			if !strings.Contains(err.Error(), tc.detail) {
				t.Errorf("message %q lacks the detail", err)
			}
		})
	}
}

func TestValidationErrorLocations(t *testing.T) {
	ts := newTestServer(t)
	ts.reply("POST /v1/runs/cancel", 422, `{"detail":[{"type":"too_long","loc":["body","run_ids",100],"msg":"too long","input":null}]}`)
	_, err := ts.client.Runs.CancelMany(t.Context(), []string{"x"})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || len(apiErr.Validation) != 1 {
		t.Fatalf("error %v", err)
	}
	v := apiErr.Validation[0]
	if !reflect.DeepEqual(v.Loc, []any{"body", "run_ids", 100}) || v.Path() != "body.run_ids.100" || v.Type != "too_long" {
		t.Errorf("validation entry %+v", v)
	}
	if string(apiErr.RawDetail) == "" || !json.Valid(apiErr.RawDetail) {
		t.Errorf("raw detail %q", apiErr.RawDetail)
	}
}

func TestMalformedSuccessReply(t *testing.T) {
	ts := newTestServer(t)
	ts.reply("GET /v1/runs/{id}", 200, `{"run_id": "wr_1", "status": `)
	_, err := ts.client.Runs.Get(t.Context(), "wr_1")
	if err == nil || !strings.Contains(err.Error(), "decode reply of GET") {
		t.Errorf("error %v, want a decode error naming the request", err)
	}
}

func TestOptionsAreValidated(t *testing.T) {
	cases := map[string]client.Option{
		"scheme":          client.WithBaseURL("ftp://example.com"),
		"no host":         client.WithBaseURL("http://"),
		"credentials":     client.WithBaseURL("https://user:pw@example.com"),
		"query":           client.WithBaseURL("https://example.com/?a=1"),
		"key newline":     client.WithAPIKey("abc\ndef"),
		"key spaces":      client.WithAPIKey(" abc"),
		"nil http client": client.WithHTTPClient(nil),
		"negative retry":  client.WithMaxRetries(-1),
		"backoff":         client.WithRetryBackoff(2, 1),
		"nil logger":      client.WithLogger(nil),
		"timeout":         client.WithRequestTimeout(-1),
		"managed header":  client.WithHeader("x-api-key", "v"),
		"empty idem key":  client.WithIdempotencyKey(""),
		"idem key space":  client.WithIdempotencyKey("a b"),
		"idem key long":   client.WithIdempotencyKey(strings.Repeat("a", 256)),
		"nil response":    client.WithResponseInto(nil),
	}
	for name, opt := range cases {
		if _, err := client.New(opt); err == nil {
			t.Errorf("%s: New accepted a bad option", name)
		}
	}
	if _, err := client.New(client.WithAPIKey("secret-1"), client.WithAPIKey("bad\n")); err == nil || strings.Contains(err.Error(), "secret-1") {
		t.Errorf("error %v: want an error that does not show the key", err)
	}
}

func TestCallOptionsOverrideClientOptions(t *testing.T) {
	ts := newTestServer(t, client.WithHeader("X-Trace", "client"), client.WithUserAgent("mytool/1.0"))
	ts.reply("GET /v1/runs/{id}", 200, fixture(t, "run_workflow.json"))
	var resp *http.Response
	_, err := ts.client.Runs.Get(t.Context(), "wr_1", client.WithHeader("X-Trace", "call"), client.WithAPIKey("other-key"), client.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	req := ts.only()
	if req.Header.Get("X-Trace") != "call" || req.Header.Get("X-Api-Key") != "other-key" {
		t.Errorf("headers %v", req.Header)
	}
	if ua := req.Header.Get("User-Agent"); !strings.HasPrefix(ua, "mytool/1.0 abctl-go/") {
		t.Errorf("user agent %q", ua)
	}
	if resp == nil || resp.StatusCode != 200 {
		t.Errorf("WithResponseInto: %v", resp)
	}
	// The call's options did not leak into the client.
	if _, err := ts.client.Runs.Get(t.Context(), "wr_1"); err != nil {
		t.Fatal(err)
	}
	if h := ts.requests()[1].Header; h.Get("X-Trace") != "client" || h.Get("X-Api-Key") != testAPIKey {
		t.Errorf("second call headers %v", h)
	}
}

func TestEmptyIDsAreRejectedBeforeSending(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client
	ctx := t.Context()
	calls := map[string]error{}
	_, calls["Runs.Get"] = c.Runs.Get(ctx, "")
	calls["Runs.Cancel"] = c.Runs.Cancel(ctx, " ")
	_, calls["Agents.Get"] = c.Agents.Get(ctx, "", nil)
	_, calls["Agents.Update"] = c.Agents.Update(ctx, "", &client.AgentDefinition{})
	_, calls["Folders.Delete"] = c.Folders.Delete(ctx, "", nil)
	_, calls["Tags.DeleteKey"] = c.Tags.DeleteKey(ctx, "")
	_, calls["Runs.DeleteTag"] = c.Runs.DeleteTag(ctx, "wr_1", "")
	_, calls["Runs.StartTask"] = c.Runs.StartTask(ctx, &client.TaskRunRequest{})
	_, calls["Runs.StartAgent"] = c.Runs.StartAgent(ctx, &client.AgentRunRequest{})
	for name, err := range calls {
		if err == nil {
			t.Errorf("%s accepted an empty id", name)
		}
	}
	if n := len(ts.requests()); n != 0 {
		t.Errorf("%d requests were sent", n)
	}
}

func TestIDsAreEscapedAsOneSegment(t *testing.T) {
	ts := newTestServer(t)
	ts.reply("GET /v1/runs/{id}", 200, fixture(t, "run_workflow.json"))
	if _, err := ts.client.Runs.Get(t.Context(), "wr_1/../../agents?x=1"); err != nil {
		t.Fatal(err)
	}
	if p := ts.only().Path; p != "/v1/runs/wr_1%2F..%2F..%2Fagents%3Fx=1" {
		t.Errorf("path %q: the id was not escaped as a single segment", p)
	}
}
