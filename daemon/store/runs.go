package store

// Runs. Each run is one record in its organization's runs bucket, written
// at every move of its life (see RunRecord). While a run is not terminal,
// or is terminal with a webhook URL but no delivery recorded yet, it also
// has an entry in the top-level runs_pending bucket, so that a daemon
// starting after a crash finds, without reading every run, the ones it must
// resume or end and the webhooks it must still send.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/internal/jsonenc"
)

// Runs are the runs of the organizations. Get it with Store.Runs.
type Runs struct{ s *Store }

// RunFile is the record of a file a run produced (or of an uploaded file),
// which the run's record keeps. Package daemon/artifacts keeps the file
// itself, and makes this record of it.
type RunFile struct {
	ID        string              `json:"id"`                // a_<snowflake>
	Type      client.ArtifactType `json:"type"`              // what the file is
	Name      string              `json:"name"`              // base name in the run directory
	Size      int64               `json:"size"`              // bytes
	SHA256    string              `json:"sha256"`            // lowercase hex of the content's SHA-256
	CreatedAt client.Time         `json:"created_at"`        // when it was recorded
	StepID    string              `json:"step_id,omitempty"` // the step it shows (stp_), "" for none
}

// WebhookDelivery is the outcome of sending a run's webhook.
type WebhookDelivery struct {
	URL        string      `json:"url"`
	At         client.Time `json:"at"`
	StatusCode int         `json:"status_code,omitempty"` // 0: no response
	LatencyMS  int64       `json:"latency_ms"`
	Error      string      `json:"error,omitempty"` // "" when delivered (2xx)
}

// RunRecord is everything the daemon keeps of a run: what it answers in
// GET /v1/runs/{id} (package daemon/runview builds the answer from it),
// what the executor needs, and what the webhook needs.
type RunRecord struct {
	ID        string           `json:"id"`
	OrgID     string           `json:"org_id"`
	Type      client.RunType   `json:"type"`
	Status    client.RunStatus `json:"status"`
	CreatedAt client.Time      `json:"created_at"`
	// ModifiedAt is set by the store at every write.
	ModifiedAt client.Time  `json:"modified_at"`
	QueuedAt   *client.Time `json:"queued_at,omitempty"`
	StartedAt  *client.Time `json:"started_at,omitempty"`
	FinishedAt *client.Time `json:"finished_at,omitempty"`

	// RunRequest is the request as the API echoes it in run_request.
	RunRequest json.RawMessage `json:"run_request,omitempty"`
	// Task is the request of a task run.
	Task *client.TaskRunRequest `json:"task,omitempty"`
	// AgentID and AgentVersion name the agent version an agent run
	// executes; Parameters holds every workflow parameter's value.
	AgentID      string `json:"agent_id,omitempty"`
	AgentVersion int    `json:"agent_version,omitempty"`
	// AgentVersionID is that version's id (wf_...), which the agent run
	// lists answer as workflow_id; "" in runs stored before it was kept.
	AgentVersionID string                     `json:"agent_version_id,omitempty"`
	Parameters     map[string]json.RawMessage `json:"parameters,omitempty"`
	// BrowserProfileID is the browser profile the run starts from ("" for
	// none: a fresh browser, or the state its agent kept).
	BrowserProfileID string `json:"browser_profile_id,omitempty"`
	// BrowserSessionID is the browser session the run executes in ("" for
	// a browser of its own).
	BrowserSessionID string `json:"browser_session_id,omitempty"`
	// Definition is the definition an agent run executes when no stored
	// agent backs it (AgentID is then ""): the sign-in of
	// POST /v1/run/tasks/login.
	Definition *client.WorkflowDefinition `json:"definition,omitempty"`
	Title      string                     `json:"title,omitempty"`
	// Trigger says what started the run ("api", "mcp"); "" for runs
	// stored before it was recorded, which the run list shows as null.
	Trigger client.RunTriggerType `json:"trigger,omitempty"`
	// ParentRunID is the run whose workflow_trigger block started this one
	// ("" for none); TriggerDepth counts the runs of that chain above it
	// (1 for a run an API-started run triggered), which bounds it.
	ParentRunID  string `json:"parent_run_id,omitempty"`
	TriggerDepth int    `json:"trigger_depth,omitempty"`
	// ScheduleID is the schedule that started the run, whose Trigger is
	// then "scheduled" and which carries the tag schedule:<id>
	// (schedules.go); "" for other runs.
	ScheduleID string `json:"schedule_id,omitempty"`
	// ScheduledFor is the fire time of the schedule that the run is for
	// (set by Schedules.Fire); nil for other runs.
	ScheduledFor *client.Time `json:"scheduled_for,omitempty"`

	// RunWith is how an agent run executes: "agent" (the model decides
	// every step) or "code" (the recorded script of its agent and cache
	// key replays, package script); "" means the agent's own run_with.
	// AIFallback is the request's ai_fallback (nil: the agent's).
	RunWith    string `json:"run_with,omitempty"`
	AIFallback *bool  `json:"ai_fallback,omitempty"`
	// ScriptID pins the script an agent run replays
	// (POST /v1/scripts/{id}/run); "" chooses by agent and cache key.
	ScriptID string `json:"script_id,omitempty"`
	// ScriptRun says which script version the run replayed or recorded,
	// and whether the model had to take over (script_run in answers); nil
	// when the run used no script.
	ScriptRun *client.ScriptRun `json:"script_run,omitempty"`

	MaxSteps          int `json:"max_steps,omitempty"`           // 0: the executor's default
	MaxElapsedMinutes int `json:"max_elapsed_minutes,omitempty"` // 0: no wall-clock limit

	// WebhookURL is where the terminal webhook goes ("" for none).
	WebhookURL string `json:"webhook_url,omitempty"`
	// KeyHash is the SHA-256 of the API key that started the run, which
	// signs its webhooks (SigningKey).
	KeyHash []byte `json:"key_hash,omitempty"`
	// BaseURL is the address the run was started through; URLs in its
	// webhook point there.
	BaseURL string `json:"base_url,omitempty"`

	Output        json.RawMessage `json:"output,omitempty"`
	FailureReason string          `json:"failure_reason,omitempty"`
	// Summary says, for people, what the run did (the executor's); it
	// goes into the webhook's summary.
	Summary   string            `json:"summary,omitempty"`
	Errors    []json.RawMessage `json:"errors,omitempty"`
	StepCount *int              `json:"step_count,omitempty"`
	Files     []RunFile         `json:"files,omitempty"` // in the order produced
	// Human is the latest question the run's human_interaction blocks
	// asked, with its answer once given (package runner, human.go); nil
	// when none asked.
	Human *client.HumanInteraction `json:"human,omitempty"`

	// Webhook is the delivery of the terminal webhook; nil until sent (or
	// when there was none to send). Retries are recorded in
	// WebhookRetries, newest last.
	Webhook        *WebhookDelivery  `json:"webhook,omitempty"`
	WebhookRetries []WebhookDelivery `json:"webhook_retries,omitempty"`
	// WebhookFailureReason says why the terminal webhook (Webhook) could
	// not be delivered, as the hosted service's webhook_failure_reason
	// does; "" while it was not sent or once it was delivered. It is kept
	// apart from FailureReason so that a receiver being down never hides
	// why the run itself failed (see runner's finish). Retries do not
	// change it.
	WebhookFailureReason string `json:"webhook_failure_reason,omitempty"`
}

// Terminal reports whether the run has ended.
func (r *RunRecord) Terminal() bool { return IsTerminal(r.Status) }

// IsTerminal reports whether status is one a run ends in.
func IsTerminal(status client.RunStatus) bool {
	switch status {
	case client.RunStatusCompleted, client.RunStatusFailed, client.RunStatusTerminated,
		client.RunStatusTimedOut, client.RunStatusCanceled:
		return true
	}
	return false
}

// RunRef names a run of an organization.
type RunRef struct{ OrgID, RunID string }

func runNotFound(id string) error { return notFound(RecordRun, id) }

func pendingKey(orgID, runID string) []byte {
	return append(append([]byte(orgID), 0), runID...)
}

// NewID returns a new id for a run of the given type: wr_ for agent runs,
// tsk_v2_ for task v2, tsk_ for the other task engines.
func (r *Runs) NewID(t client.RunType) string {
	switch t {
	case client.RunTypeWorkflowRun:
		return r.s.ids.Next(ids.PrefixWorkflowRun)
	case client.RunTypeTaskV2:
		return r.s.ids.Next(ids.PrefixTaskV2)
	}
	return r.s.ids.Next(ids.PrefixTask)
}

// NewBlockID returns a new id for a block execution of a run (wrb_).
func (r *Runs) NewBlockID() string { return r.s.ids.Next(ids.PrefixWorkflowRunBlock) }

// NewStepID returns a new id for a step of a run (stp_), which the step's
// screenshots carry.
func (r *Runs) NewStepID() string { return r.s.ids.Next(ids.PrefixStep) }

func getRun(o *orgTx, id string) (*RunRecord, error) {
	return getJSON[RunRecord](o.runs(), RecordRun, id)
}

// decodeRun decodes the record stored under key id.
func decodeRun(id, v []byte) (*RunRecord, error) {
	rec := new(RunRecord)
	if err := json.Unmarshal(v, rec); err != nil {
		return nil, fmt.Errorf("store: run %s: %w", id, err)
	}
	return rec, nil
}

// putRun writes rec, its view (runview.go) and its entry in the run list
// (runlist.go), and keeps its runs_pending entry in step with its status
// and its webhook: a run leaves runs_pending once it is terminal and its
// webhook, if it has one, was sent (its delivery recorded).
func (r *Runs) putRun(tx *bolt.Tx, o *orgTx, rec *RunRecord) error {
	// Encoded without HTML escaping, as answers are, so that the raw JSON
	// a record carries (the request's echo, the output) reads back as it
	// was written, and as its view shows it.
	data, err := jsonenc.Marshal(rec)
	if err != nil {
		return fmt.Errorf("store: encode run %s: %w", rec.ID, err)
	}
	if err := o.runs().Put([]byte(rec.ID), data); err != nil {
		return err
	}
	if err := putRunView(o, r.s.views, rec); err != nil {
		return err
	}
	if err := putRunSummary(o, rec); err != nil {
		return err
	}
	pending := tx.Bucket(bucketRunsPending)
	k := pendingKey(rec.OrgID, rec.ID)
	if rec.Terminal() && (rec.WebhookURL == "" || rec.Webhook != nil) {
		return pending.Delete(k)
	}
	return pending.Put(k, nil)
}

// Create stores a new run. rec.ID (from NewID), OrgID, Type and Status
// (created or queued) are the caller's; the store sets CreatedAt and
// ModifiedAt, and QueuedAt when the status is queued.
func (r *Runs) Create(ctx context.Context, rec *RunRecord) error {
	if rec == nil || rec.ID == "" || !validID(rec.ID) {
		return fmt.Errorf("store: Runs.Create: the run needs an id from NewID")
	}
	if rec.Status != client.RunStatusCreated && rec.Status != client.RunStatusQueued {
		return fmt.Errorf("store: Runs.Create: a new run is created or queued, not %q", rec.Status)
	}
	return r.s.update(ctx, func(tx *bolt.Tx) error {
		o, err := openOrg(tx, rec.OrgID)
		if err != nil {
			return err
		}
		if o.runs().Get([]byte(rec.ID)) != nil {
			return &ConflictError{Record: RecordRun, ID: rec.ID}
		}
		now := r.s.clock()
		rec.CreatedAt, rec.ModifiedAt = now, now
		if rec.Status == client.RunStatusQueued {
			rec.QueuedAt = &now
		}
		return r.putRun(tx, o, rec)
	})
}

// Get returns a run of the organization, or ErrNotFound.
func (r *Runs) Get(ctx context.Context, orgID, id string) (*RunRecord, error) {
	var rec *RunRecord
	err := r.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		rec, err = getRun(o, id)
		return err
	})
	return rec, err
}

// Update reads a run, lets change modify it and writes it back, in one
// write transaction: concurrent updates of a run never lose each other's
// changes. The store stamps ModifiedAt, and QueuedAt, StartedAt and
// FinishedAt when the status enters queued, running or a terminal state
// and they are not set yet. A change returning an error writes nothing;
// returning ErrUnchanged (see below) writes nothing either and returns the
// record as read. change may be called more than once (the store's writes
// are committed in groups, commit.go): it must change nothing but rec.
func (r *Runs) Update(ctx context.Context, orgID, id string, change func(rec *RunRecord) error) (*RunRecord, error) {
	var out *RunRecord
	err := r.s.update(ctx, func(tx *bolt.Tx) error {
		o, err := openOrg(tx, orgID)
		if err != nil {
			return err
		}
		rec, err := getRun(o, id)
		if err != nil {
			return err
		}
		if err := change(rec); err != nil {
			if errors.Is(err, ErrUnchanged) {
				out = rec
				return nil
			}
			return err
		}
		now := r.s.clock()
		rec.ModifiedAt = now
		switch {
		case rec.Status == client.RunStatusQueued && rec.QueuedAt == nil:
			rec.QueuedAt = &now
		case rec.Status == client.RunStatusRunning && rec.StartedAt == nil:
			rec.StartedAt = &now
		case rec.Terminal() && rec.FinishedAt == nil:
			rec.FinishedAt = &now
		}
		out = rec
		return r.putRun(tx, o, rec)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ErrUnchanged, returned by the change function of Runs.Update, means
// there is nothing to write.
var ErrUnchanged = errors.New("store: run unchanged")

// Pending returns every run that is not terminal, or is terminal with its
// webhook not sent yet (see putRun), of every organization, oldest first
// (run ids are time-ordered snowflakes).
func (r *Runs) Pending(ctx context.Context) ([]RunRef, error) {
	var out []RunRef
	err := r.s.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRunsPending).ForEach(func(k, _ []byte) error {
			i := bytes.IndexByte(k, 0)
			if i < 0 {
				return fmt.Errorf("store: corrupt pending run key %q", k)
			}
			out = append(out, RunRef{OrgID: string(k[:i]), RunID: string(k[i+1:])})
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b RunRef) int { return compareRunIDs(a.RunID, b.RunID) })
	return out, nil
}

// compareRunIDs orders run ids by their snowflake (creation time), whatever
// their prefix.
func compareRunIDs(a, b string) int {
	_, na, oka := ids.Parse(a)
	_, nb, okb := ids.Parse(b)
	if oka && okb && na != nb {
		if na < nb {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}
