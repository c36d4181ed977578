package daemon_test

// What a webhook that cannot be delivered does to a run, through daemon.Run
// as `abctl daemon` wires it (issue 13): the run keeps its own status and
// failure_reason unless it had completed; the delivery failure is recorded
// on the run and logged with the receiver's host only; retry_webhook
// changes nothing on the run.

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

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

// records returns the records with message msg about run id for which
// match (nil: any) holds.
func (c *logCapture) records(t *testing.T, msg, id string, match func(map[string]any) bool) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(c.text()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg && rec["run_id"] == id && (match == nil || match(rec)) {
			out = append(out, rec)
		}
	}
	return out
}

// wait waits until a matching record was logged and returns the first.
func (c *logCapture) wait(t *testing.T, msg, id string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	var recs []map[string]any
	pollFor(t, "the log line "+msg+" of "+id, func() bool {
		recs = c.records(t, msg, id, match)
		return len(recs) > 0
	})
	return recs[0]
}

func isRetry(rec map[string]any) bool { return rec["retry"] == true }

// TestWebhookFailureKeepsRunReason: a run that failed on its own keeps its
// failure_reason when its webhook cannot be sent; a completed run whose
// receiver answers 500 turns failed, saying so; both record
// webhook_failure_reason; the log has a line per failed delivery (retries
// included) naming the run and the receiver's host, never the URL's path
// or query nor the key; "run ended" shows the status the API answers; a
// failed retry changes nothing on the run.
func TestWebhookFailureKeepsRunReason(t *testing.T) {
	const (
		key    = "abk_webhook_failure_test_key"
		secret = "s3cr3t-receiver-token"
		lookup = "could not load https://example.com/contact: net::ERR_NAME_NOT_RESOLVED"
	)
	exec := &scripted.Executor{}
	t.Cleanup(exec.ReleaseAll)
	var logs logCapture
	dir := t.TempDir()
	addr, stop := daemontest.Start(t, dir, daemon.Config{APIKey: key, Executor: exec, Workers: 2, Logger: logs.logger()})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	withSecret := func(u string) string { return u + "/" + secret + "?token=" + secret }
	hostOf := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return u.Host
	}
	dead := withSecret(deadURL(t))
	down := newWebhookSink(t, key)
	down.answer(500)
	downURL := withSecret(down.URL)

	failed, err := c.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: "script: steps=1;status=failed;reason=" + lookup, WebhookURL: dead})
	if err != nil {
		t.Fatal(err)
	}
	completed, err := c.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: `script: steps=1;output={"a":1}`, WebhookURL: downURL})
	if err != nil {
		t.Fatal(err)
	}

	// "run ended" is logged once the webhook's outcome is recorded.
	if got := logs.wait(t, "run ended", failed.RunID, nil); got["status"] != "failed" {
		t.Errorf("run ended line of the failed run: %v", got)
	}
	run, err := c.Runs.Get(ctx, failed.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != client.RunStatusFailed || run.GetFailureReason() != lookup {
		t.Errorf("the failed run with an unreachable webhook: %s %q, want failed %q", run.Status, run.GetFailureReason(), lookup)
	}
	if !strings.Contains(run.GetWebhookFailureReason(), "Could not reach URL") {
		t.Errorf("the failed run's webhook_failure_reason: %q", run.GetWebhookFailureReason())
	}

	if got := logs.wait(t, "run ended", completed.RunID, nil); got["status"] != "failed" {
		t.Errorf("run ended line of the completed run: %v", got)
	}
	run, err = c.Runs.Get(ctx, completed.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if r := run.GetFailureReason(); run.Status != client.RunStatusFailed || !strings.Contains(r, "webhook could not be sent") ||
		!strings.Contains(r, "status code 500") || string(run.Output) != `{"a":1}` {
		t.Errorf("the completed run whose receiver answers 500: %s %q, output %s", run.Status, r, run.Output)
	}
	if run.GetWebhookFailureReason() != run.GetFailureReason() {
		t.Errorf("the completed run: webhook_failure_reason %q, failure_reason %q", run.GetWebhookFailureReason(), run.GetFailureReason())
	}

	for _, tc := range []struct {
		id, host, why string
	}{
		{failed.RunID, hostOf(dead), "Could not reach URL"},
		{completed.RunID, hostOf(downURL), "status code 500"},
	} {
		lines := logs.records(t, "webhook delivery failed", tc.id, nil)
		if len(lines) != 1 || lines[0]["webhook_host"] != tc.host || !strings.Contains(lines[0]["error"].(string), tc.why) {
			t.Errorf("%s: log lines of the failed delivery: %v", tc.id, lines)
		}
	}

	// A retry that fails, to another unreachable URL: logged; the run
	// stays as it was.
	other := withSecret(deadURL(t))
	replay, err := c.Runs.RetryWebhook(ctx, failed.RunID, &client.RetryWebhookRequest{WebhookURL: other})
	if err != nil {
		t.Fatal(err)
	}
	if replay.TargetWebhookURL != other {
		t.Errorf("retry target %q, want %q", replay.TargetWebhookURL, other)
	}
	if got := logs.wait(t, "webhook delivery failed", failed.RunID, isRetry); got["webhook_host"] != hostOf(other) {
		t.Errorf("log line of the failed retry: %v", got)
	}
	run, err = c.Runs.Get(ctx, failed.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != client.RunStatusFailed || run.GetFailureReason() != lookup {
		t.Errorf("after a failed retry: %s %q, want failed %q", run.Status, run.GetFailureReason(), lookup)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	text := logs.text()
	for _, s := range []string{secret, key} {
		if strings.Contains(text, s) {
			t.Errorf("the log holds %q:\n%s", s, text)
		}
	}

	// What the API does not show: the recorded deliveries, read from the
	// store once the daemon is gone.
	sec, err := os.ReadFile(filepath.Join(dir, datadir.SecretFileName))
	if err != nil {
		t.Fatal(err)
	}
	st, err := boltstore.Open(filepath.Join(dir, datadir.StoreFileName), store.Options{Secret: sec})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, err := st.DefaultOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.Runs().Get(ctx, org.ID, failed.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Webhook == nil || rec.Webhook.URL != dead || !strings.Contains(rec.WebhookFailureReason, "Could not reach URL") ||
		!strings.Contains(rec.WebhookFailureReason, rec.Webhook.Error) {
		t.Errorf("the failed run: delivery %+v, webhook_failure_reason %q", rec.Webhook, rec.WebhookFailureReason)
	}
	if len(rec.WebhookRetries) != 1 || rec.WebhookRetries[0].URL != other || rec.WebhookRetries[0].Error == "" {
		t.Errorf("the failed run's retries: %+v", rec.WebhookRetries)
	}
	rec, err = st.Runs().Get(ctx, org.ID, completed.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.WebhookFailureReason == "" || rec.WebhookFailureReason != rec.FailureReason {
		t.Errorf("the completed run: webhook_failure_reason %q, failure_reason %q", rec.WebhookFailureReason, rec.FailureReason)
	}
}
