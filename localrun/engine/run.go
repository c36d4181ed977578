package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"

	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/executor"
)

// run is one execution (a task or agent run, or a
// run_action workflow run): its browser side, its step log and its agent.
// Its methods are not safe for concurrent use.
type run struct {
	log     *slog.Logger
	dir     string
	tag     string // the random tag of the run's page markers
	browser *runbrowser.Browser
	files   *runbrowser.Files
	steps   *steplog.Log
	agent   *agent.Agent
	ended   bool
	// keepState: the result carries the browser state the run ends with.
	keepState bool
	state     []byte
	// release gives a kept browser session back when the run ends.
	release func()
	// unlist takes the run off the engine's Frame as it ends; nil when it
	// is not on it.
	unlist func()
	// cancel ends the run's context (openRun) with a cause: its browser
	// went away (BrowserLostError); nil for a run_action run. done is
	// closed by finish.
	cancel context.CancelCauseFunc
	done   chan struct{}
	// started tells the run's Progress, once, that the run started
	// (executor.StartReporter): when it has what it needs to begin.
	started func()
	// guard decides what the run may reach (nil: no policy); its
	// refusals go to the step log.
	guard *egress.Guard
	// egress is the proxy of the run's browser context (nil: none); the
	// run hears of its refusals while it executes.
	egress *browserEgress
}

// newRun assembles a run whose browser context opens through open when
// the run first needs it (runbrowser.New); the recording starts then.
// limit bounds the steps of the whole run (0: none). shared: the browser
// context outlives the run (a kept browser session), which leaves it open
// when it ends. guard is the egress guard of the run's organization; open
// gives the egress proxy of the browser context with it (nil: none).
func (e *Engine) newRun(guard *egress.Guard, dir string, progress executor.Progress, limit int, shared bool, open browserOpener) *run {
	r := &run{log: e.log, dir: dir, tag: newTag(), done: make(chan struct{}), started: sync.OnceFunc(func() { executor.Started(progress) })}
	r.steps = steplog.New(progress, e.log, limit)
	r.guard = guard.WithReport(r.refused)
	r.browser = runbrowser.New(runbrowser.Options{Dir: dir, Progress: progress, Logger: e.log, FFmpeg: e.ffmpeg, HTTP: e.http, Shared: shared,
		Guard: r.guard, Recorded: r.steps.SetRecordingStart}, func(ctx context.Context) (*browser.Context, *runbrowser.Refusals, error) {
		bs, be, err := open(ctx)
		if err != nil {
			return nil, nil, err
		}
		r.egress = be
		be.follow(r.refused)
		r.watch(bs)
		return bs, be.runRefusals(), nil
	})
	r.files = r.browser.Files()
	r.agent = agent.New(r.browser.AgentView(), r.steps, agent.Config{Tag: r.tag, Logger: e.log, AllowPrivateURLs: e.cfg.AllowPrivateURLs})
	return r
}

// browserOpener opens the browser context of a run, with its egress proxy
// (nil: none).
type browserOpener func(ctx context.Context) (*browser.Context, *browserEgress, error)

// openedBrowser is the opener of a browser context that is open already.
func openedBrowser(bs *browser.Context, be *browserEgress) browserOpener {
	return func(context.Context) (*browser.Context, *browserEgress, error) { return bs, be, nil }
}

// openRun assembles a task or agent run, and returns the context the run
// executes in: ctx, ended at once with a BrowserLostError as the cause
// when the run's browser goes away. In a browser session, the run takes
// the session's browser at once; otherwise its browser context opens when
// the run first needs it (a task run at once, an agent run when its first
// block that touches a page starts), restored from the job's browser
// state. A run that never needs one places nothing on the pool: no local
// Chromium starts, no fleet endpoint is taken, nothing is recorded.
func (e *Engine) openRun(ctx context.Context, job *executor.Job, progress executor.Progress, limit int) (*run, context.Context, error) {
	if job.BrowserSessionID != "" {
		if _, err := e.browserPool(ctx); err != nil {
			return nil, nil, errors.New(text.UpperFirst(err.Error()))
		}
		bs, be, release, err := e.useBrowserSession(ctx, job.OrgID, job.BrowserSessionID)
		if err != nil {
			return nil, nil, err
		}
		r := e.newRun(e.guard(job.OrgID), job.Dir, progress, limit, true, openedBrowser(bs, be))
		ctx, r.cancel = context.WithCancelCause(ctx)
		r.release = release
		r.keepState = job.KeepBrowserState
		r.browser.Acquire(ctx) // open already: it cannot fail
		e.listFrames(job.RunID, r)
		return r, ctx, nil
	}
	r := e.newRun(e.guard(job.OrgID), job.Dir, progress, limit, false, func(ctx context.Context) (*browser.Context, *browserEgress, error) {
		return e.openBrowser(ctx, job)
	})
	ctx, r.cancel = context.WithCancelCause(ctx)
	r.keepState = job.KeepBrowserState
	e.listFrames(job.RunID, r)
	return r, ctx, nil
}

// BrowserLostError is the cause of the end of a run's context when the
// run's browser went away (browser.Context.Lost): the run ends at once,
// failed, whatever it was doing (a wait, a model call), rather than when
// it next touches the page.
type BrowserLostError struct {
	Err error // why, as the browser context says it (browser.Context.Err)
}

func (e *BrowserLostError) Error() string {
	why := "no reason given"
	if e.Err != nil {
		why = e.Err.Error()
	}
	return "The run's browser went away: " + why
}

func (e *BrowserLostError) Unwrap() error { return e.Err }

// lostBrowser returns the BrowserLostError that ended ctx, nil when ctx did
// not end for that.
func lostBrowser(ctx context.Context) *BrowserLostError {
	var lost *BrowserLostError
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &lost) {
		return lost
	}
	return nil
}

// watch ends the run's context, with a BrowserLostError, as soon as its
// browser context bs is lost; it stops watching when the run finishes.
func (r *run) watch(bs *browser.Context) {
	if r.cancel == nil {
		return
	}
	cancel, done := r.cancel, r.done
	go func() {
		select {
		case <-bs.Lost():
			cancel(&BrowserLostError{Err: bs.Err()})
		case <-done:
		}
	}()
}

// openBrowser opens the browser context of a task or agent run, with the
// job's browser state.
func (e *Engine) openBrowser(ctx context.Context, job *executor.Job) (*browser.Context, *browserEgress, error) {
	pool, err := e.browserPool(ctx)
	if err != nil {
		return nil, nil, err
	}
	bs, be, err := e.acquire(ctx, pool, job.OrgID, browser.ContextOptions{RunID: job.RunID, DownloadDir: job.Dir})
	if err != nil {
		return nil, nil, errors.New("the browser session could not be opened: " + err.Error())
	}
	if len(job.BrowserState) > 0 {
		var st browser.State
		err := json.Unmarshal(job.BrowserState, &st)
		if err == nil {
			err = browser.RestoreState(ctx, bs, &st)
		}
		if err != nil {
			bs.Close(context.WithoutCancel(ctx))
			return nil, nil, errors.New("the browser profile could not be loaded: " + err.Error())
		}
	}
	return bs, be, nil
}

// refused records a refusal of the run's egress in its step log.
func (r *run) refused(e *egress.Error) { r.steps.AddRefusal(e.Error()) }

// newTag returns the random tag of a run's page markers.
func newTag() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// finish ends the run: the browser side closes (see runbrowser.Browser.Close), the
// step log is written, and the result lists the run's files. A second call
// returns the result again.
func (r *run) finish(ctx context.Context) executor.Result {
	if r.ended {
		return r.result()
	}
	r.ended = true
	if r.unlist != nil {
		r.unlist()
	}
	if r.keepState && r.browser.Opened() {
		// Read before the browser context goes; a failure loses the state,
		// not the run. A run that opened no browser keeps none: the state
		// it started from stays the one to keep.
		if st, err := r.browser.BrowserState(context.WithoutCancel(ctx)); err != nil {
			r.log.Warn("the browser state was not kept", "error", err)
		} else if r.state, err = json.Marshal(st); err != nil {
			r.log.Warn("the browser state was not kept", "error", err)
		}
	}
	recording := r.browser.Close(ctx)
	r.egress.follow(nil)
	if r.release != nil {
		r.release()
	}
	var logs []string
	if !r.steps.Empty() {
		name := r.stepsName()
		if err := r.steps.Write(r.dir, name); err != nil {
			r.log.Warn("the step log was not written", "error", err)
		} else {
			logs = append(logs, name)
		}
	}
	res := r.result()
	res.Recording = recording
	res.Logs = logs
	close(r.done)
	if r.cancel != nil {
		r.cancel(nil)
	}
	return res
}

// stepsName is the name of the step log: StepsName, unless the page
// downloaded a file of that name.
func (r *run) stepsName() string {
	for _, d := range r.files.Downloads() {
		if d == StepsName {
			return "steps-" + r.tag + ".json"
		}
	}
	return StepsName
}

func (r *run) result() executor.Result {
	return executor.Result{
		StepCount:    r.steps.Count(),
		Screenshots:  r.files.Screenshots(),
		Downloads:    r.files.Downloads(),
		Errors:       r.steps.Errors(),
		BrowserState: r.state,
	}
}
