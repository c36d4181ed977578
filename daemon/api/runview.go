package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/runner"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/webhooks"
	"github.com/abctl/abctl/executor"
)

// Runs is what the server needs to start, cancel and show runs.
type Runs struct {
	Runner   *runner.Runner
	Files    *artifacts.Store
	Signer   *artifacts.Signer
	Notifier *Notifier
	// Actions runs single actions (POST /v1/sdk/run_action); nil answers
	// 503 to them.
	Actions executor.Actions
	// Now is the clock of URL expiry; nil means time.Now.
	Now func() time.Time
}

func (rs *Runs) now() time.Time {
	if rs != nil && rs.Now != nil {
		return rs.Now()
	}
	return time.Now()
}

// runResponse is a stored run as GET /v1/runs/{id} answers it, with the
// URLs of its files under base (the address the client reached the daemon
// on), valid for artifacts.DefaultLifetime.
func (s *Server) runResponse(rec *store.RunRecord, base string) *client.Run {
	return runView(s.runs, rec, base)
}

func runView(rs *Runs, rec *store.RunRecord, base string) *client.Run {
	return rec.Response(appURL(base, rec.ID), rs.fileURLs(base, rec.OrgID, rec.ID))
}

// appURL is a run's app_url: the run itself under the daemon's address.
func appURL(base, runID string) string { return base + "/v1/runs/" + runID }

// fileURLs makes the URLs of a run's files in one answer: signed, under
// base, valid for artifacts.DefaultLifetime from now. nil when the daemon
// cannot sign URLs; the answer then has none.
func (rs *Runs) fileURLs(base, orgID, runID string) artifacts.URLFunc {
	if rs == nil || rs.Signer == nil {
		return nil
	}
	exp := rs.now().Add(artifacts.DefaultLifetime)
	return func(f store.RunFile) string {
		return artifacts.SignedURL(base, rs.Signer, orgID, runID, f, exp)
	}
}

// writeRun answers GET /v1/runs/{id} from the run's stored view, the
// encoded answer with its URLs filled in for this request, and builds the
// answer from the record only for a run without a usable view (see
// store.ErrNoRunView).
func (s *Server) writeRun(w http.ResponseWriter, r *http.Request, orgID, runID string) {
	base := baseURL(r)
	err := writeAppended(w, func(dst []byte) ([]byte, error) {
		return s.store.AppendRunJSON(r.Context(), dst, orgID, runID, appURL(base, runID), s.runs.fileURLs(base, orgID, runID))
	})
	if err == nil {
		return
	}
	if !errors.Is(err, store.ErrNoRunView) {
		s.error(w, r, err)
		return
	}
	rec, err := s.store.GetRun(r.Context(), orgID, runID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.runResponse(rec, base))
}

// runArtifacts lists a run's files as GET /v1/runs/{id}/artifacts answers,
// only those of the given types when types is not empty.
func (s *Server) runArtifacts(rec *store.RunRecord, base string, types map[client.ArtifactType]bool) []client.Artifact {
	if s.runs == nil || s.runs.Signer == nil {
		return []client.Artifact{}
	}
	var keep []client.ArtifactType
	for t := range types {
		keep = append(keep, t)
	}
	files := artifacts.FilterTypes(rec.Files, keep...)
	return artifacts.ListItems(base, s.runs.Signer, rec.OrgID, rec.ID, files, s.runs.now().Add(artifacts.DefaultLifetime))
}

// Notifier sends runs' webhooks: the run as GET answers it (with URLs
// under the address the run was started through), signed with the API key
// that started it.
type Notifier struct {
	Store  *store.Store
	Sender *webhooks.Sender
	// Logger records the retries (retry_webhook) that fail; nil discards.
	// The runner logs the failures of the terminal webhooks it sends.
	Logger *slog.Logger
	runs   *Runs
}

func (n *Notifier) log() *slog.Logger {
	if n.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return n.Logger
}

// Notify implements runner.Notifier.
func (n *Notifier) Notify(ctx context.Context, rec *store.RunRecord) *store.WebhookDelivery {
	if rec.WebhookURL == "" {
		return nil
	}
	d := n.send(ctx, rec, rec.WebhookURL, "")
	return &d
}

// send delivers rec's webhook to url, signed with key or, when key is "",
// with the key that started the run.
func (n *Notifier) send(ctx context.Context, rec *store.RunRecord, url, key string) store.WebhookDelivery {
	d := n.prepare(ctx, rec, url, key)
	if d.Err == "" {
		d = n.Sender.Deliver(ctx, d)
	}
	return delivery(d)
}

func (n *Notifier) prepare(ctx context.Context, rec *store.RunRecord, url, key string) webhooks.Delivery {
	if key == "" {
		k, err := n.Store.SigningKey(ctx, rec.KeyHash)
		if err != nil {
			return webhooks.Delivery{URL: url, At: time.Now(), Err: "No API key to sign the webhook with: " + err.Error()}
		}
		key = k
	}
	body, err := webhooks.Payload(runView(n.runs, rec, rec.BaseURL), n.info(ctx, rec))
	if err != nil {
		return webhooks.Delivery{URL: url, At: time.Now(), Err: "The webhook payload could not be built: " + err.Error()}
	}
	return n.Sender.Prepare(url, key, body)
}

// Replay serves retry_webhook: it signs the payload (with the caller's
// key, as the hosted service does), answers at once with what it will
// send, and delivers in the background, recording the result in the run's
// WebhookRetries. Whatever the outcome, a retry changes nothing else on
// the run: not its status, failure_reason or webhook_failure_reason, which
// describe the run's end and its terminal webhook (contract-notes.md
// §7.5). A retry that fails is logged, after its delivery is recorded.
func (n *Notifier) Replay(ctx context.Context, rec *store.RunRecord, url, callerKey string) *client.WebhookReplay {
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
			_, err := n.Store.UpdateRun(bg, rec.OrgID, rec.ID, func(r *store.RunRecord) error {
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
func (n *Notifier) logRetryFailure(runID string, d webhooks.Delivery) {
	n.log().Warn("webhook delivery failed", "run_id", runID, "retry", true,
		"webhook_host", webhooks.LogHost(d.URL), "status_code", d.StatusCode,
		"error", webhooks.LogError(d.URL, d.Err))
}

// info is what a payload needs beyond the run response.
func (n *Notifier) info(ctx context.Context, rec *store.RunRecord) webhooks.Info {
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

var _ runner.Notifier = (*Notifier)(nil)
