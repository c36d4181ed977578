package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// execute runs one queued run to its end: the executor, which reports
// when the run starts (Progress.Started moves it from queued to running),
// the terminal state with what it produced, the webhook. A run that ends
// before it started (its browser never came, it was canceled meanwhile)
// goes from queued to its end without a started_at. ctx is the run's own
// context (canceled by Cancel and Stop); store writes use a context
// without that cancellation, since a canceled run must still be recorded.
func (r *Runner) execute(ctx context.Context, ref store.RunRef) {
	bg := context.WithoutCancel(ctx)
	rec, err := r.cfg.Store.Runs().Get(bg, ref.OrgID, ref.RunID)
	if err != nil {
		r.log.Error("start run", "run_id", ref.RunID, "error", err)
		return
	}
	if rec.Status != client.RunStatusQueued && rec.Status != client.RunStatusCreated {
		return // canceled (or ended) while queued
	}
	if rec.CancelRequested {
		// Canceled through another daemon as this one claimed it.
		r.end(bg, rec, executor.Result{Status: client.RunStatusCanceled}, nil)
		return
	}
	r.log.Info("run taken", "run_id", rec.ID, "org_id", rec.OrgID, "run_type", rec.Type)

	job, err := r.job(bg, rec)
	var rs *runScript
	if err == nil {
		if rs, err = r.scriptJob(bg, rec, job.Agent); rs != nil {
			job.Script = rs.job
		}
	}
	if err != nil {
		r.end(bg, rec, executor.Result{Status: client.RunStatusFailed, FailureReason: err.Error()}, nil)
		return
	}
	p := r.newProgress(bg, rec)
	p.behind = &behind{}
	if h, ok := job.Human.(*humanAsker); ok {
		h.flush = p.flush // a run pauses from running: its start is recorded first
	}
	if rec.MaxElapsedMinutes > 0 {
		// The time limit counts from the run's start (Progress.Started),
		// not from the time it waited for a browser.
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		limit := time.Duration(rec.MaxElapsedMinutes) * r.cfg.Minute
		p.onStart = func() { p.limit = time.AfterFunc(limit, func() { cancel(errTimeLimit) }) }
		defer p.stopLimit()
	}
	res := r.cfg.Executor.Execute(ctx, job, p)
	p.flush()

	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errCanceled):
		res.Status = client.RunStatusCanceled
	case errors.Is(cause, errTimeLimit):
		res.Status = client.RunStatusTimedOut
		res.FailureReason = fmt.Sprintf("The run exceeded its time limit of %d minutes (max_elapsed_time_minutes).", rec.MaxElapsedMinutes)
	case errors.Is(cause, errShutdown):
		res.Status = client.RunStatusFailed
		res.FailureReason = "The daemon shut down while this run was executing, so it did not finish."
	case errors.Is(cause, errLeaseLost):
		res.Status = client.RunStatusFailed
		res.FailureReason = "The daemon executing this run could not reach its database to renew its lease on the run for longer than the lease, " +
			"so it stopped the run rather than let another daemon execute it a second time."
	case res.Status == "":
		res.Status = client.RunStatusFailed
		if res.FailureReason == "" {
			res.FailureReason = "The executor ended the run without a status."
		}
	case !store.IsTerminal(res.Status):
		res.FailureReason = fmt.Sprintf("The executor ended the run with status %q, which is not a final status.", res.Status)
		res.Status = client.RunStatusFailed
	}
	r.keepScript(bg, rec, rs, &res)
	r.end(bg, rec, res, p)
}

// job builds what the executor needs of a run.
func (r *Runner) job(ctx context.Context, rec *store.RunRecord) (*executor.Job, error) {
	dir, err := r.cfg.Files.RunDir(rec.OrgID, rec.ID)
	if err != nil {
		return nil, fmt.Errorf("The daemon could not make the run's directory: %v", err)
	}
	job := &executor.Job{
		RunID: rec.ID, OrgID: rec.OrgID, RunType: rec.Type,
		Task: rec.Task, Parameters: rec.Parameters,
		MaxSteps: rec.MaxSteps, Dir: dir, Vault: newVault(r.cfg),
		BrowserSessionID: rec.BrowserSessionID,
		Trigger:          r.starter(ctx, rec),
		LocalFiles:       r.cfg.LocalFiles,
	}
	// The organization's custom models, keys unsealed: the job carries
	// them to the executor and nothing logs them.
	if job.CustomModels, err = r.cfg.Store.CustomLLMs().Models(ctx, rec.OrgID); err != nil {
		return nil, fmt.Errorf("The daemon could not read the organization's custom models: %v", err)
	}
	if rec.Type == client.RunTypeWorkflowRun {
		job.Human = &humanAsker{r: r, rec: rec}
	}
	if rec.Type == client.RunTypeWorkflowRun && rec.AgentID == "" && rec.Definition != nil {
		job.Agent = &client.Agent{Title: rec.Title, WorkflowDefinition: *rec.Definition}
		return job, nil
	}
	if rec.Type == client.RunTypeWorkflowRun {
		agent, err := r.cfg.Store.Agents().Get(ctx, rec.OrgID, rec.AgentID, rec.AgentVersion)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil, fmt.Errorf("The agent %s (version %d) was deleted before the run started.", rec.AgentID, rec.AgentVersion)
			}
			return nil, err
		}
		job.Agent = agent
	}
	if err := r.browserState(ctx, rec, job); err != nil {
		return nil, err
	}
	return job, nil
}

// newVault returns the vault of the runner configured by cfg.
func newVault(cfg Config) vault {
	hooks, _ := cfg.Notifier.(*Webhooks)
	return vault{st: cfg.Store, hooks: hooks}
}

// browserState gives the job the browser state the run starts from: its
// browser profile's (the run's, else its agent's default); else, for an
// agent with persist_browser_session, the state its previous run kept,
// which the run keeps again.
func (r *Runner) browserState(ctx context.Context, rec *store.RunRecord, job *executor.Job) error {
	profile := rec.BrowserProfileID
	persist := false
	if a := job.Agent; a != nil && rec.AgentID != "" {
		persist = a.PersistBrowserSession
		if profile == "" && a.BrowserProfileID != nil {
			profile = *a.BrowserProfileID
		}
	}
	job.KeepBrowserState = persist
	if rec.BrowserSessionID != "" {
		return nil // the session's browser has its own state
	}
	var err error
	switch {
	case profile != "":
		job.BrowserState, err = r.cfg.Store.Profiles().State(ctx, rec.OrgID, profile)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("The browser profile %s was deleted before the run started.", profile)
		}
	case persist:
		job.BrowserState, err = r.cfg.Store.Profiles().AgentState(ctx, rec.OrgID, rec.AgentID)
	}
	return err
}

// vault gives executors the organizations' credentials and the one-time
// codes pushed for their runs, from the store, and asks runs'
// totp_verification_url for codes (through the webhooks' sender).
type vault struct {
	st    store.Store
	hooks *Webhooks // nil: no totp_verification_url is asked
}

func (v vault) Credential(ctx context.Context, orgID, id string) (client.CredentialType, []byte, error) {
	return v.st.Credentials().Secret(ctx, orgID, id)
}

func (v vault) TakeTOTPCode(ctx context.Context, orgID, identifier string, f executor.CodeFilter) (*client.TOTPCode, error) {
	return v.st.Credentials().TakeTOTPCode(ctx, orgID, identifier, f)
}

func (v vault) FetchTOTPCode(ctx context.Context, orgID, runID, url string) (string, error) {
	if v.hooks == nil {
		return "", errors.New("this daemon sends no requests to a totp_verification_url")
	}
	rec, err := v.st.Runs().Get(ctx, orgID, runID)
	if err != nil {
		return "", err
	}
	return v.hooks.FetchCode(ctx, rec, url)
}

// end records the terminal state of an executed run with what it produced,
// sends its webhook, and logs the run's final status.
func (r *Runner) end(ctx context.Context, rec *store.RunRecord, res executor.Result, p *Progress) {
	if len(res.BrowserState) > 0 {
		// The run's state, for a profile made from it; and its agent's,
		// which the agent's next run starts from.
		if err := r.cfg.Store.Profiles().KeepRunState(ctx, rec.OrgID, rec.ID, rec.AgentID, res.BrowserState); err != nil {
			r.log.Error("keep the browser state of a run", "run_id", rec.ID, "error", err)
		}
	}
	files := r.ResultFiles(rec, res, p)
	ended := false
	final, err := r.cfg.Store.Runs().Update(ctx, rec.OrgID, rec.ID, func(rec *store.RunRecord) error {
		if rec.Terminal() {
			// Ended already, by a daemon that took the run over while
			// this one was stalled (shared.go): its end stands.
			ended = true
			return store.ErrUnchanged
		}
		rec.Status = res.Status
		rec.Output = res.Output
		rec.FailureReason = res.FailureReason
		rec.Summary = res.Summary
		rec.Errors = res.Errors
		if res.StepCount > 0 || rec.StepCount == nil {
			n := res.StepCount
			rec.StepCount = &n
		}
		rec.Files = append(rec.Files, files...)
		return nil
	})
	if err != nil {
		r.log.Error("record the end of a run", "run_id", rec.ID, "error", err)
		return
	}
	if ended {
		r.log.Warn("run ended already, by the daemon that took it over; its end here is dropped", "run_id", rec.ID, "status", res.Status)
		return
	}
	// Logged once the webhook's outcome is known, which may turn a
	// completed run failed (see finish): the status logged is the one the
	// API reports.
	final = r.finish(final)
	r.log.Info("run ended", "run_id", final.ID, "status", final.Status)
}

// ResultFiles records the files a run's result names (screenshots, the
// recording, downloads, logs) that p, the run's progress (nil for none),
// has not recorded yet, and returns their records for the run's record.
// A file that cannot be recorded is logged and left out.
func (r *Runner) ResultFiles(rec *store.RunRecord, res executor.Result, p *Progress) []store.RunFile {
	var files []store.RunFile
	record := func(name string, typ client.ArtifactType) {
		if name == "" || (p != nil && p.seen(name)) {
			return
		}
		f, err := r.cfg.Files.Record(rec.OrgID, rec.ID, name, typ)
		if err != nil {
			r.log.Warn("run file not recorded", "run_id", rec.ID, "file", name, "error", err)
			return
		}
		files = append(files, f)
	}
	for _, name := range res.Screenshots {
		record(name, client.ArtifactScreenshot)
	}
	record(res.Recording, client.ArtifactRecording)
	for _, name := range res.Downloads {
		record(name, client.ArtifactDownload)
	}
	// The executor's logs for people (the agent's steps.json): the
	// hosted service's name for the agent's log.
	for _, name := range res.Logs {
		record(name, client.ArtifactSkyvernLog)
	}
	return files
}

// Progress records what a run reports as it executes (an executor's run,
// or a run_action session's): its start, step count and screenshots on its
// record, and its steps (StepDetail) and block executions (Block) in the
// store, which GET /v1/runs/{id}/steps and /timeline answer. For a run the
// runner executes, they are written behind the run (see behind), and
// flush waits for them; a run_action session's are written before each
// call returns.
type Progress struct {
	r   *Runner
	ctx context.Context
	rec *store.RunRecord
	// behind writes the records behind the run; nil: each is written
	// before its call returns.
	behind *behind

	mu       sync.Mutex
	recorded map[string]bool // screenshot names already recorded
	blockIDs map[int]string  // the ids (wrb_) of the run's block executions, by Seq
	started  bool            // Started was called
	// onStart arms the run's time limit when it starts; limit is its
	// timer (nil: none armed).
	onStart func()
	limit   *time.Timer
}

// stopLimit stops the timer of the run's time limit, if one was armed.
func (p *Progress) stopLimit() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onStart = nil
	if p.limit != nil {
		p.limit.Stop()
	}
}

// NewProgress returns the progress of a run that is not executed by the
// runner's executor (a run_action session's), recorded in the background
// context.
func (r *Runner) NewProgress(rec *store.RunRecord) *Progress {
	return r.newProgress(context.Background(), rec)
}

func (r *Runner) newProgress(ctx context.Context, rec *store.RunRecord) *Progress {
	return &Progress{r: r, ctx: ctx, rec: rec, recorded: map[string]bool{}}
}

// Started implements executor.StartReporter: the run moves from queued to
// running, and the store stamps its started_at. Only the first call
// counts; a run that is no longer queued (canceled meanwhile, or a
// run_action session's, running from the start) is left as it is.
func (p *Progress) Started() {
	p.mu.Lock()
	first := !p.started
	p.started = true
	if first && p.onStart != nil {
		p.onStart()
	}
	p.mu.Unlock()
	if !first {
		return
	}
	p.write(p.recordStart)
}

// recordStart moves the run from queued to running.
func (p *Progress) recordStart() {
	moved := false
	rec, err := p.r.cfg.Store.Runs().Update(p.ctx, p.rec.OrgID, p.rec.ID, func(rec *store.RunRecord) error {
		if rec.Status != client.RunStatusQueued && rec.Status != client.RunStatusCreated {
			return store.ErrUnchanged
		}
		rec.Status, moved = client.RunStatusRunning, true
		return nil
	})
	if err != nil {
		p.r.log.Error("record the start of a run", "run_id", p.rec.ID, "error", err)
		return
	}
	if moved {
		p.r.log.Info("run started", "run_id", rec.ID, "org_id", rec.OrgID, "run_type", rec.Type)
	}
}

// write makes one progress record: behind the run, or at once.
func (p *Progress) write(fn func()) {
	if p.behind == nil {
		fn()
		return
	}
	p.behind.do(fn)
}

// flush returns once every record reported so far is written.
func (p *Progress) flush() {
	if p.behind != nil {
		p.behind.wait()
	}
}

func (p *Progress) seen(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.recorded[name]
}

func (p *Progress) Step(count int) {
	p.write(func() {
		_, err := p.r.cfg.Store.Runs().Update(p.ctx, p.rec.OrgID, p.rec.ID, func(rec *store.RunRecord) error {
			if rec.StepCount != nil && *rec.StepCount >= count {
				return store.ErrUnchanged
			}
			rec.StepCount = &count
			return nil
		})
		if err != nil {
			p.r.log.Warn("record a step", "run_id", p.rec.ID, "error", err)
		}
	})
}

// Screenshot records a screenshot the run took on its record. One that
// cannot be recorded now is left to the run's end (ResultFiles).
func (p *Progress) Screenshot(name string) {
	p.write(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.recorded[name] {
			return
		}
		f, err := p.r.cfg.Files.Record(p.rec.OrgID, p.rec.ID, name, client.ArtifactScreenshot)
		if err != nil {
			p.r.log.Warn("screenshot not recorded", "run_id", p.rec.ID, "file", name, "error", err)
			return
		}
		_, err = p.r.cfg.Store.Runs().Update(p.ctx, p.rec.OrgID, p.rec.ID, func(rec *store.RunRecord) error {
			rec.Files = append(rec.Files, f)
			return nil
		})
		if err != nil {
			p.r.log.Warn("record a screenshot", "run_id", p.rec.ID, "error", err)
			return
		}
		p.recorded[name] = true
	})
}

// StepDetail implements executor.StepReporter: it records the step, which
// the run's steps and its timeline show. A step that cannot be recorded is
// logged and the run goes on: they are for people watching, not part of
// the result.
func (p *Progress) StepDetail(info executor.StepInfo) {
	step := runStep(info)
	if info.BlockSeq > 0 {
		step.WorkflowRunBlockID = p.blockID(info.BlockSeq)
	}
	if info.Before != "" || info.After != "" {
		step.StepID = p.r.cfg.Store.Runs().NewStepID()
	}
	p.write(func() {
		p.stepShot(step.StepID, info.Before, client.ArtifactScreenshotLLM)
		p.stepShot(step.StepID, info.After, client.ArtifactScreenshotAction)
		if err := p.r.cfg.Store.Runs().AddStep(p.ctx, p.rec.OrgID, p.rec.ID, step); err != nil {
			p.r.log.Warn("record a step's details", "run_id", p.rec.ID, "step", info.Step, "error", err)
		}
	})
}

// stepShot records the screenshot name as step stepID's, of type typ (the
// page before the step or after it). A screenshot already recorded as a
// plain one (Screenshot) becomes the step's; one already another step's
// (the page after one step is the page before the next) gets a second
// record. As with steps, one that cannot be recorded is logged.
func (p *Progress) stepShot(stepID, name string, typ client.ArtifactType) {
	if name == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var f store.RunFile
	_, err := p.r.cfg.Store.Runs().Update(p.ctx, p.rec.OrgID, p.rec.ID, func(rec *store.RunRecord) error {
		for i := range rec.Files {
			g := &rec.Files[i]
			if g.Name == name && g.StepID == "" && g.Type == client.ArtifactScreenshot {
				g.Type, g.StepID = typ, stepID
				return nil
			}
		}
		if f.ID == "" {
			var err error
			if f, err = p.r.cfg.Files.Record(p.rec.OrgID, p.rec.ID, name, typ); err != nil {
				return err
			}
			f.StepID = stepID
		}
		rec.Files = append(rec.Files, f)
		return nil
	})
	if err != nil {
		p.r.log.Warn("record a step's screenshot", "run_id", p.rec.ID, "file", name, "error", err)
		return
	}
	p.recorded[name] = true
}

// blockID is the id of the run's block execution seq, made the first time
// it is asked for.
func (p *Progress) blockID(seq int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.blockIDs[seq]
	if !ok {
		if p.blockIDs == nil {
			p.blockIDs = map[int]string{}
		}
		id = p.r.cfg.Store.Runs().NewBlockID()
		p.blockIDs[seq] = id
	}
	return id
}

// Block implements executor.BlockReporter: it records the block execution
// as it starts and again as it ends, for the run's timeline. As with
// steps, one that cannot be recorded is logged and the run goes on.
func (p *Progress) Block(info executor.BlockInfo) {
	b := runBlock(info, p.rec)
	b.WorkflowRunBlockID = p.blockID(info.Seq)
	if info.ParentSeq > 0 {
		b.ParentWorkflowRunBlockID = client.Ptr(p.blockID(info.ParentSeq))
	}
	p.write(func() {
		if err := p.r.cfg.Store.Runs().PutBlock(p.ctx, p.rec.OrgID, p.rec.ID, info.Seq, b); err != nil {
			p.r.log.Warn("record a block", "run_id", p.rec.ID, "block", info.Label, "error", err)
		}
	})
}

// runStep is a step as the run's steps show it.
func runStep(info executor.StepInfo) *client.RunStep {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	s := &client.RunStep{
		Number: info.Step, URL: info.URL, Thought: info.Thought,
		Actions: info.Actions, Decision: info.Decision,
		TimingsMS: client.StepTimings{Settle: ms(info.Settle), Observe: ms(info.Observe), Model: ms(info.Model), Act: ms(info.Act)},
		Tokens:    client.StepTokens{Input: info.InputTokens, Output: info.OutputTokens},
	}
	if info.Block != "" {
		s.BlockLabel = client.Ptr(info.Block)
	}
	if info.Element != nil {
		el := *info.Element
		s.Element = &el
	}
	if info.RecordingOffset != nil {
		s.RecordingOffsetMS = client.Ptr(max(info.RecordingOffset.Milliseconds(), 0))
	}
	if s.Actions == nil {
		s.Actions = []string{}
	}
	return s
}

// runBlock is a block execution as the run's timeline shows it, without
// its ids.
func runBlock(info executor.BlockInfo, rec *store.RunRecord) *client.RunBlock {
	text := func(s string) *string {
		if s == "" {
			return nil
		}
		return client.Ptr(s)
	}
	b := &client.RunBlock{
		WorkflowRunID: rec.ID, OrganizationID: rec.OrgID,
		BlockType: info.Type, Label: text(info.Label), Status: text(string(info.Status)),
		Output: info.Output, ContinueOnFailure: info.ContinueOnFailure,
		FailureReason: text(info.FailureReason), ErrorCodes: []string{},
		URL: text(info.URL), NavigationGoal: text(info.NavigationGoal),
		DataExtractionGoal: text(info.DataExtractionGoal), Prompt: text(info.Prompt),
		LoopValues: info.LoopValues, CurrentIndex: info.CurrentIndex,
	}
	if info.CurrentValue != nil {
		// The service's current_value is text: a string as it is, any
		// other value as JSON.
		if s, ok := info.CurrentValue.(string); ok {
			b.CurrentValue = &s
		} else if data, err := json.Marshal(info.CurrentValue); err == nil {
			b.CurrentValue = client.Ptr(string(data))
		}
	}
	if !info.Ended.IsZero() && !info.Started.IsZero() {
		b.Duration = client.Ptr(info.Ended.Sub(info.Started).Seconds())
	}
	return b
}

var (
	_ executor.StartReporter = (*Progress)(nil)
	_ executor.StepReporter  = (*Progress)(nil)
	_ executor.BlockReporter = (*Progress)(nil)
)
