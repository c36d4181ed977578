package client

import (
	"context"
	"errors"
	"net/url"
	"strconv"
)

// RunsService starts, reads, waits for and cancels runs, re-sends their
// webhooks, lists their artifacts and manages workflow-run tags.
type RunsService service

func (s *RunsService) tags() tagResource {
	return tagResource{client: s.client, kind: "run id", prefix: "/v1/runs/%s"}
}

// StartTask starts a task run (POST /v1/run/tasks) and returns at once with
// the run in its first status; use Wait to get its result. Only the prompt
// is required.
//
// Starting a run is not retried after a reply that may mean it started
// (a timeout, a 502), because a retry could start a second run; pass
// WithIdempotencyKey to a service that honours it to make retries safe.
func (s *RunsService) StartTask(ctx context.Context, req *TaskRunRequest, opts ...Option) (*Run, error) {
	if req == nil || req.Prompt == "" {
		return nil, errors.New("client: StartTask: the request's Prompt is required")
	}
	r := request{method: "POST", path: "/v1/run/tasks", body: req}
	if req.UserAgent != "" {
		r.header = map[string]string{"X-User-Agent": req.UserAgent}
	}
	out := new(Run)
	_, err := s.client.do(ctx, r, out, opts)
	return nil2(out, err)
}

// StartAgent starts a run of a saved agent (POST /v1/run/agents) and returns
// at once with the run in its first status (normally created or queued).
// Parameters are checked by the service against the agent's declared
// parameters. Retries follow the rule of StartTask.
func (s *RunsService) StartAgent(ctx context.Context, req *AgentRunRequest, opts ...Option) (*Run, error) {
	if req == nil || req.AgentID == "" {
		return nil, errors.New("client: StartAgent: the request's AgentID is required")
	}
	r := request{method: "POST", path: "/v1/run/agents", body: req}
	if req.Template {
		r.query = url.Values{"template": {"true"}}
	}
	r.header = map[string]string{}
	if req.MaxStepsOverride != nil {
		r.header["X-Max-Steps-Override"] = strconv.Itoa(*req.MaxStepsOverride)
	}
	if req.UserAgent != "" {
		r.header["X-User-Agent"] = req.UserAgent
	}
	out := new(Run)
	_, err := s.client.do(ctx, r, out, opts)
	return nil2(out, err)
}

// Get returns a task run or a workflow run (GET /v1/runs/{run_id}); its
// RunType tells which. An unknown id is an *Error matching ErrNotFound.
func (s *RunsService) Get(ctx context.Context, runID string, opts ...Option) (*Run, error) {
	if err := requireID("run id", runID); err != nil {
		return nil, err
	}
	out := new(Run)
	_, err := s.client.do(ctx, request{method: "GET", path: pathf("/v1/runs/%s", runID), idempotent: true}, out, opts)
	return nil2(out, err)
}

// Cancel stops a run (POST /v1/runs/{run_id}/cancel). A queued run is
// cancelled at once and a running one soon after; what it produced so far
// is kept. Services differ on runs that already ended (the hosted service
// answers 400 for some run types); the abctl daemon answers 200 and leaves
// the status unchanged.
func (s *RunsService) Cancel(ctx context.Context, runID string, opts ...Option) error {
	if err := requireID("run id", runID); err != nil {
		return err
	}
	_, err := s.client.do(ctx, request{method: "POST", path: pathf("/v1/runs/%s/cancel", runID), idempotent: true}, nil, opts)
	return err
}

// CancelMany cancels up to 100 runs of any type in one call
// (POST /v1/runs/cancel) and reports which were cancelled and which not.
func (s *RunsService) CancelMany(ctx context.Context, runIDs []string, opts ...Option) (*BulkCancelResponse, error) {
	if len(runIDs) == 0 {
		return nil, errors.New("client: CancelMany: no run ids given")
	}
	out := new(BulkCancelResponse)
	body := struct {
		RunIDs []string `json:"run_ids"`
	}{runIDs}
	_, err := s.client.do(ctx, request{method: "POST", path: "/v1/runs/cancel", body: body, idempotent: true}, out, opts)
	return nil2(out, err)
}

// RetryWebhook re-sends the terminal webhook of a run, to its configured URL
// or to req.WebhookURL (POST /v1/runs/{run_id}/retry_webhook); req may be
// nil. The hosted service delivers at once and describes the attempt in a
// WebhookReplay; a service that delivers in the background answers with an
// empty body, and the result is then nil with a nil error.
func (s *RunsService) RetryWebhook(ctx context.Context, runID string, req *RetryWebhookRequest, opts ...Option) (*WebhookReplay, error) {
	if err := requireID("run id", runID); err != nil {
		return nil, err
	}
	if req == nil {
		req = &RetryWebhookRequest{}
	}
	out := new(WebhookReplay)
	empty, err := s.client.do(ctx, request{method: "POST", path: pathf("/v1/runs/%s/retry_webhook", runID), body: req}, out, opts)
	if err != nil || empty {
		return nil, err
	}
	return out, nil
}

// ListArtifactsOptions filters the artifacts of a run.
type ListArtifactsOptions struct {
	Types []ArtifactType // only artifacts of these types; all when empty
}

// ListArtifacts returns the artifacts of a run: screenshots, the recording,
// downloaded files, logs (GET /v1/runs/{run_id}/artifacts).
func (s *RunsService) ListArtifacts(ctx context.Context, runID string, o *ListArtifactsOptions, opts ...Option) ([]*Artifact, error) {
	if err := requireID("run id", runID); err != nil {
		return nil, err
	}
	q := url.Values{}
	if o != nil {
		addEach(q, "artifact_type", o.Types)
	}
	var out []*Artifact
	_, err := s.client.do(ctx, request{method: "GET", path: pathf("/v1/runs/%s/artifacts", runID), query: q, idempotent: true}, &out, opts)
	return out, err
}

// ApplyTags sets and deletes tags of a workflow run in one transaction
// (POST /v1/runs/{run_id}/tags); when a key is both set and deleted, the
// set wins. It returns the run's tags afterwards.
func (s *RunsService) ApplyTags(ctx context.Context, runID string, req *TagApplyRequest, opts ...Option) (*RunTags, error) {
	out := new(RunTags)
	return nil2(out, s.tags().apply(ctx, runID, req, out, opts))
}

// GetTags returns the current tags of a workflow run (GET /v1/runs/{run_id}/tags).
func (s *RunsService) GetTags(ctx context.Context, runID string, opts ...Option) (*RunTags, error) {
	out := new(RunTags)
	return nil2(out, s.tags().get(ctx, runID, out, opts))
}

// DeleteTag removes the grouped tag with this key from a workflow run and
// returns its tags afterwards; an absent tag is not an error
// (DELETE /v1/runs/{run_id}/tags/{key}).
func (s *RunsService) DeleteTag(ctx context.Context, runID, key string, opts ...Option) (*RunTags, error) {
	out := new(RunTags)
	return nil2(out, s.tags().delete(ctx, runID, key, out, opts))
}

// TagHistory returns the tag events of a workflow run, newest first
// (GET /v1/runs/{run_id}/tags/history); o may be nil.
func (s *RunsService) TagHistory(ctx context.Context, runID string, o *TagHistoryOptions, opts ...Option) (*RunTagHistory, error) {
	out := new(RunTagHistory)
	return nil2(out, s.tags().history(ctx, runID, o, out, opts))
}

// BatchGetTags returns the current tags of many workflow runs, by run id
// (GET /v1/run-tags).
func (s *RunsService) BatchGetTags(ctx context.Context, runIDs []string, opts ...Option) (map[string][]TagItem, error) {
	var out struct {
		RunTags map[string][]TagItem `json:"run_tags"`
	}
	err := batchTags(ctx, s.client, "/v1/run-tags", "workflow_run_ids", runIDs, &out, opts)
	return out.RunTags, err
}

// nil2 returns nil for the value when err is set, so that callers never see
// a half-decoded result next to an error.
func nil2[T any](v *T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return v, nil
}
