package runner_test

// Tests of what a failed webhook delivery does to a run (issue 13): it is
// recorded in the run's WebhookFailureReason and logged; it replaces the
// status and failure_reason only of a run that completed. The webhooks are
// real HTTP requests on loopback, sent by webhooks.Sender.

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/runner"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/webhooks"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// hookSecret is part of every webhook URL of these tests, as a receiver's
// token in the path and the query: no log line may contain it.
const hookSecret = "s3cr3t-receiver-token"

// httpNotifier sends each run's webhook to the run's WebhookURL over HTTP
// with webhooks.Sender, as Webhooks does, with a small body
// (these tests are about the outcome, not the payload).
type httpNotifier struct{ sender webhooks.Sender }

func (n *httpNotifier) Notify(ctx context.Context, rec *store.RunRecord) *store.WebhookDelivery {
	if rec.WebhookURL == "" {
		return nil
	}
	body, _ := json.Marshal(map[string]any{"run_id": rec.ID, "status": rec.Status})
	d := n.sender.Send(ctx, rec.WebhookURL, "abk_runner_test_signing_key", body)
	return &store.WebhookDelivery{URL: d.URL, At: client.NewTime(d.At), StatusCode: d.StatusCode,
		LatencyMS: d.Latency.Milliseconds(), Error: d.Err}
}

// logCapture keeps what a slog.Logger writes, as JSON lines.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *logCapture) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(c, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (c *logCapture) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// records returns the records with message msg about run id.
func (c *logCapture) records(t *testing.T, msg, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(c.text()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg && rec["run_id"] == id {
			out = append(out, rec)
		}
	}
	return out
}

// wait waits until a record with message msg about run id was logged and
// returns the first.
func (c *logCapture) wait(t *testing.T, msg, id string) map[string]any {
	t.Helper()
	var recs []map[string]any
	until(t, "the log line "+msg+" of "+id, func() bool {
		recs = c.records(t, msg, id)
		return len(recs) > 0
	})
	return recs[0]
}

// unreachable returns a loopback URL nothing listens on, with hookSecret in
// its path and query.
func unreachable(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/hooks/" + hookSecret + "?token=" + hookSecret
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// createWithHook stores a queued task run whose prompt is the script and
// whose webhook goes to hook.
func (e *env) createWithHook(orgID, script, hook string) string {
	e.t.Helper()
	rec := &store.RunRecord{
		ID: e.st.Runs().NewID(client.RunTypeTaskV1), OrgID: orgID, Type: client.RunTypeTaskV1,
		Status: client.RunStatusQueued, Task: &client.TaskRunRequest{Prompt: scripted.Prefix + script},
		WebhookURL: hook,
	}
	if err := e.st.Runs().Create(e.t.Context(), rec); err != nil {
		e.t.Fatal(err)
	}
	return rec.ID
}

// TestWebhookFailureKeepsTheRunsOwnReason: a run that ended failed,
// terminated, timed_out or canceled keeps its status and failure_reason
// when its webhook cannot be delivered; the delivery failure goes to
// WebhookFailureReason and to the log, with the URL's host only, and the
// "run ended" line shows the status the run keeps.
func TestWebhookFailureKeepsTheRunsOwnReason(t *testing.T) {
	e := newEnv(t, 2)
	var logs logCapture
	e.cfg.Logger = logs.logger()
	e.cfg.Notifier = &httpNotifier{}
	org := e.org("a")
	e.start()
	dead := unreachable(t)

	const lookup = "could not load https://example.com/contact: net::ERR_NAME_NOT_RESOLVED"
	type ending struct {
		script string
		status client.RunStatus
		reason string // "": the executor's, whatever it is
	}
	cases := []ending{
		{"steps=1;status=failed;reason=" + lookup, client.RunStatusFailed, lookup},
		{"steps=1;status=terminated;reason=The page says the shop is closed.", client.RunStatusTerminated, "The page says the shop is closed."},
		{"steps=1;status=timed_out;reason=The run reached its step limit.", client.RunStatusTimedOut, "The run reached its step limit."},
	}
	ids := make([]string, len(cases))
	for i, tc := range cases {
		ids[i] = e.createWithHook(org, tc.script, dead)
		e.r.Submit(org, ids[i])
	}
	// A run canceled while it executes.
	canceled := e.createWithHook(org, "steps=1;block", dead)
	e.r.Submit(org, canceled)
	e.blocked(canceled)
	if _, err := e.r.Cancel(t.Context(), org, canceled); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, canceled)
	cases = append(cases, ending{"canceled", client.RunStatusCanceled, ""})

	for i, tc := range cases {
		id := ids[i]
		rec := e.ended(org, id)
		// Whatever the executor's reason is, it is not about the webhook.
		ownReason := rec.FailureReason == tc.reason || (tc.reason == "" && !strings.Contains(rec.FailureReason, "webhook"))
		if rec.Status != tc.status || !ownReason {
			t.Errorf("%s: the run ended %s %q, want %s %q", tc.script, rec.Status, rec.FailureReason, tc.status, tc.reason)
		}
		if rec.Webhook == nil || !strings.Contains(rec.Webhook.Error, "Could not reach URL") {
			t.Errorf("%s: recorded delivery %+v", tc.script, rec.Webhook)
		} else if rec.WebhookFailureReason != runner.WebhookFailureReason(rec.Webhook) {
			t.Errorf("%s: webhook_failure_reason %q, want %q", tc.script, rec.WebhookFailureReason, runner.WebhookFailureReason(rec.Webhook))
		}

		ended := logs.wait(t, "run ended", id)
		if ended["status"] != string(tc.status) {
			t.Errorf("%s: the run ended log line says status %v, want %s", tc.script, ended["status"], tc.status)
		}
		failed := logs.records(t, "webhook delivery failed", id)
		if len(failed) != 1 {
			t.Errorf("%s: %d log lines of a failed delivery, want 1", tc.script, len(failed))
			continue
		}
		if failed[0]["webhook_host"] != hostOf(t, dead) || !strings.Contains(failed[0]["error"].(string), "Could not reach URL") {
			t.Errorf("%s: the failed delivery's log line: %v", tc.script, failed[0])
		}
	}
	if text := logs.text(); strings.Contains(text, hookSecret) {
		t.Errorf("the log holds the webhook URL's secret:\n%s", text)
	}
}

// TestWebhookFailureFailsCompletedRun: a completed run whose webhook gets a
// 500 turns failed with a reason that says so, keeps its output, records
// the failure in WebhookFailureReason, and its "run ended" log line shows
// failed, the status the API then reports.
func TestWebhookFailureFailsCompletedRun(t *testing.T) {
	e := newEnv(t, 1)
	var logs logCapture
	e.cfg.Logger = logs.logger()
	e.cfg.Notifier = &httpNotifier{}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "receiver is down", http.StatusInternalServerError)
	}))
	t.Cleanup(receiver.Close)
	hook := receiver.URL + "/hooks/" + hookSecret + "?token=" + hookSecret
	org := e.org("a")
	e.start()

	id := e.createWithHook(org, `steps=1;output={"a":1}`, hook)
	e.r.Submit(org, id)
	rec := e.ended(org, id)
	if rec.Status != client.RunStatusFailed || rec.Webhook == nil || rec.Webhook.StatusCode != 500 ||
		rec.FailureReason != runner.WebhookFailureReason(rec.Webhook) || string(rec.Output) != `{"a":1}` {
		t.Fatalf("the run ended %s %q, output %s, delivery %+v", rec.Status, rec.FailureReason, rec.Output, rec.Webhook)
	}
	if rec.WebhookFailureReason != rec.FailureReason || !strings.Contains(rec.WebhookFailureReason, "status code 500") {
		t.Errorf("webhook_failure_reason %q", rec.WebhookFailureReason)
	}

	ended := logs.wait(t, "run ended", id)
	if ended["status"] != string(client.RunStatusFailed) {
		t.Errorf("the run ended log line says status %v, want failed", ended["status"])
	}
	failed := logs.records(t, "webhook delivery failed", id)
	if len(failed) != 1 || failed[0]["webhook_host"] != hostOf(t, hook) || failed[0]["status_code"] != float64(500) {
		t.Errorf("the failed delivery's log lines: %v", failed)
	}
	if text := logs.text(); strings.Contains(text, hookSecret) {
		t.Errorf("the log holds the webhook URL's secret:\n%s", text)
	}
}
