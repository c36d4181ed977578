package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/runview"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/webhooks"
	"github.com/abctl/abctl/internal/totp"
)

// Webhooks sends runs' webhooks: the run as GET /v1/runs/{id} answers it
// (package daemon/runview, with URLs under the address the run was started
// through), with what a payload adds (package daemon/webhooks), signed with
// the API key that started it. It is the runner's Notifier, and serves
// POST /v1/runs/{id}/retry_webhook (Replay). package daemon builds one and
// hands it to both.
type Webhooks struct {
	Store  store.Store
	Sender *webhooks.Sender
	// Links makes the run's URLs, as the API's answers have them; nil
	// leaves the file URLs out.
	Links *runview.Links
	// Logger records the retries (Replay) that fail; nil discards. The
	// runner logs the failures of the terminal webhooks it sends.
	Logger *slog.Logger
}

func (n *Webhooks) log() *slog.Logger {
	if n.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return n.Logger
}

// Notify implements Notifier.
func (n *Webhooks) Notify(ctx context.Context, rec *store.RunRecord) *store.WebhookDelivery {
	if rec.WebhookURL == "" {
		return nil
	}
	d := n.send(ctx, rec, rec.WebhookURL, "")
	return &d
}

// send delivers rec's webhook to url, signed with key or, when key is "",
// with the key that started the run.
func (n *Webhooks) send(ctx context.Context, rec *store.RunRecord, url, key string) store.WebhookDelivery {
	d := n.prepare(ctx, rec, url, key)
	if d.Err == "" {
		d = n.Sender.Deliver(ctx, d)
	}
	return delivery(d)
}

func (n *Webhooks) prepare(ctx context.Context, rec *store.RunRecord, url, key string) webhooks.Delivery {
	if key == "" {
		k, err := n.Store.SigningKey(ctx, rec.KeyHash)
		if err != nil {
			return webhooks.Delivery{URL: url, At: time.Now(), Err: "No API key to sign the webhook with: " + err.Error()}
		}
		key = k
	}
	body, err := webhooks.Payload(n.Links.Run(rec, rec.BaseURL), info(rec))
	if err != nil {
		return webhooks.Delivery{URL: url, At: time.Now(), Err: "The webhook payload could not be built: " + err.Error()}
	}
	d := n.Sender.Prepare(url, key, body)
	d.OrgID = rec.OrgID // through the egress guard of the run's organization
	return d
}

// Replay serves retry_webhook: it signs the payload (with the caller's
// key, as the hosted service does), answers at once with what it will
// send, and delivers in the background, recording the result in the run's
// WebhookRetries. Whatever the outcome, a retry changes nothing else on
// the run: not its status, failure_reason or webhook_failure_reason, which
// describe the run's end and its terminal webhook (a retry is the
// receiver's second chance, not a new end of the run). A retry that fails
// is logged, after its delivery is recorded.
func (n *Webhooks) Replay(ctx context.Context, rec *store.RunRecord, url, callerKey string) *client.WebhookReplay {
	d := n.prepare(ctx, rec, url, callerKey)
	if d.Err != "" {
		// Nothing to send (no key, a payload that cannot be built, an
		// invalid URL): the answer says why; nothing is recorded.
		n.logRetryFailure(rec.ID, d)
	} else {
		go func() {
			bg := context.WithoutCancel(ctx)
			sent := n.Sender.Deliver(bg, d)
			done := delivery(sent)
			_, err := n.Store.Runs().Update(bg, rec.OrgID, rec.ID, func(r *store.RunRecord) error {
				r.WebhookRetries = append(r.WebhookRetries, done)
				return nil
			})
			if err != nil {
				n.log().Error("record webhook retry", "run_id", rec.ID, "error", err)
			}
			if sent.Err != "" {
				n.logRetryFailure(rec.ID, sent)
			}
		}()
	}
	return webhooks.Replay(rec.ID, rec.Type, rec.WebhookURL, d)
}

// logRetryFailure logs a retry whose delivery failed, with the same
// message and attributes as the runner's line for a terminal webhook, the
// URL's host only (see webhooks.LogHost).
func (n *Webhooks) logRetryFailure(runID string, d webhooks.Delivery) {
	n.log().Warn("webhook delivery failed", "run_id", runID, "retry", true,
		"webhook_host", webhooks.LogHost(d.URL), "status_code", d.StatusCode,
		"error", webhooks.LogError(d.URL, d.Err))
}

// info is what a payload needs beyond the run response.
func info(rec *store.RunRecord) webhooks.Info {
	info := webhooks.Info{OrganizationID: rec.OrgID, Parameters: rec.Parameters, Summary: rec.Summary}
	if rec.Task != nil {
		info.Prompt, info.URL = rec.Task.Prompt, rec.Task.URL
	}
	if rec.Type == client.RunTypeWorkflowRun {
		info.WorkflowRunID = rec.ID
		info.WorkflowID = rec.AgentID
		info.WorkflowPermanentID = rec.AgentID
		info.WorkflowTitle = rec.Title
	}
	return info
}

func delivery(d webhooks.Delivery) store.WebhookDelivery {
	return store.WebhookDelivery{
		URL: d.URL, At: client.NewTime(d.At), StatusCode: d.StatusCode,
		LatencyMS: d.Latency.Milliseconds(), Error: d.Err,
	}
}

var _ Notifier = (*Webhooks)(nil)

// FetchCode asks a run's totp_verification_url for a one-time code, as the
// hosted service does: a POST of {"workflow_run_id" or "task_id",
// "workflow_permanent_id"}, signed with the key that started the run as its
// webhooks are; the answer's "verification_code" is the code, or a message
// holding one. It returns "" while the endpoint has none.
func (n *Webhooks) FetchCode(ctx context.Context, rec *store.RunRecord, url string) (string, error) {
	key, err := n.Store.SigningKey(ctx, rec.KeyHash)
	if err != nil {
		return "", fmt.Errorf("no API key to sign the request to %s with: %w", url, err)
	}
	body := map[string]string{}
	if rec.Type == client.RunTypeWorkflowRun {
		body["workflow_run_id"] = rec.ID
	} else {
		body["task_id"] = rec.ID
	}
	if rec.AgentID != "" {
		body["workflow_permanent_id"] = rec.AgentID
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	d := n.Sender.Prepare(url, key, payload)
	d.OrgID = rec.OrgID // through the egress guard of the run's organization
	d = n.Sender.Deliver(ctx, d)
	if !d.OK() {
		return "", fmt.Errorf("the totp_verification_url %s: %s", url, d.Err)
	}
	var answer struct {
		Code json.RawMessage `json:"verification_code"`
	}
	if err := json.Unmarshal([]byte(d.ResponseBody), &answer); err != nil {
		return "", fmt.Errorf("the totp_verification_url %s answered something other than JSON with a verification_code", url)
	}
	var text string
	if err := json.Unmarshal(answer.Code, &text); err != nil {
		var num json.Number
		if json.Unmarshal(answer.Code, &num) != nil {
			return "", nil // null or absent: no code yet
		}
		text = num.String()
	}
	if text == "" {
		return "", nil
	}
	code, _, ok := totp.FindCode(text)
	if !ok {
		return "", fmt.Errorf("the totp_verification_url %s answered a verification_code holding no code", url)
	}
	return code, nil
}
