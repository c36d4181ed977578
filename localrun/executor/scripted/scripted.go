// Package scripted is an executor.Executor that drives no browser: each run
// follows a small script, chosen by the run's request or by the test, that
// says how many steps to report, which files to write, whether to wait at a
// gate, and how the run ends. The daemon's tests use it to reach every
// state and failure path over real HTTP; benchmarks use its instant mode,
// which completes a run at once.
//
// # Where a run's script comes from
//
//  1. Executor.Choose, when set and returning non-nil;
//  2. the request: a task run whose prompt starts with Prefix ("script:")
//     holds its script after the prefix; an agent run takes the string
//     value of its workflow parameter ParamKey ("script"), with or without
//     the prefix;
//  3. Executor.Default, when set;
//  4. Instant: one step, completed, nothing written.
//
// A script that does not parse fails the run, with the parse error as its
// failure reason.
//
// # Script text
//
// Pairs separated by ';', spaces around them ignored:
//
//	steps=3                  execute 3 steps, reporting each (Progress.Step)
//	sleep=50ms               pause before each step (ctx ends it)
//	screenshots=2            a PNG after each of the first 2 steps
//	                         (reported by Progress.Screenshot; raises steps to 2)
//	recording                write recording.webm at the end (also recording=true)
//	downloads=2              write download_1.txt and download_2.txt at the end
//	block                    after the steps, wait until Release(run id)
//	block=g1                 ... or until Release("g1"), or until ctx ends
//	status=terminated        the final status (default completed)
//	reason=some text         the failure reason (no ';' in it)
//	output={"a":1}           the output: one JSON value
//	errors=[{"x":1}]         the errors: a JSON array of values
//	details                  report each step's details (StepDetails) to a
//	                         Progress that implements executor.StepReporter;
//	                         in an agent run, step i runs in a block
//	                         execution (Seq i) of the agent's top-level
//	                         blocks in turn, reported to a Progress that
//	                         implements executor.BlockReporter
//	stepshots                with details, each step writes a screenshot of the
//	                         page before it and one after it (StepShotName),
//	                         reported by Progress.Screenshot and named in
//	                         its details with the box of the element it
//	                         clicked (StepElement); with recording too, each
//	                         step's details say it started (i-1) seconds into
//	                         the recording
//	summary=some text        the run's summary (no ';' in it)
//	log                      write the step log LogName at the end and name
//	                         it in Result.Logs (also log=true)
//
// for example "script: steps=3;sleep=50ms;screenshots=2;output={"a":1}".
//
// Step details are reported as the engine reports them: Progress.Step(i)
// as step i starts, its details once it is done. Step i clicks element
// e<i>, a button named "Step <i>", with decision "continue", except the
// last step of a run that completes or is terminated (see StepDetails).
//
// The executor honours ctx everywhere it waits and then returns at once
// with what the run produced so far; it honours Job.MaxSteps: a script
// with more steps executes MaxSteps of them and ends timed_out. It counts
// concurrent executions (Running, Peak), remembers the jobs it was given
// (Job, Order) and lets a test wait for a run to reach its gate
// (WaitBlocked).
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor"
)

// Prefix starts a task prompt that holds a script.
const Prefix = "script:"

// ParamKey is the workflow parameter of an agent run that holds its script.
const ParamKey = "script"

// File names the executor writes in Job.Dir.
const (
	RecordingName = "recording.webm"
	LogName       = "steps.json"
)

// ScreenshotName is the name of the i-th screenshot (from 1).
func ScreenshotName(i int) string { return fmt.Sprintf("screenshot_%03d.png", i) }

// DownloadName is the name of the i-th download (from 1).
func DownloadName(i int) string { return fmt.Sprintf("download_%d.txt", i) }

// Script is what the executor does for one run. Its zero value executes
// no step and completes.
type Script struct {
	Steps       int           // steps to execute, each reported through Progress.Step
	Sleep       time.Duration // pause before each step
	Screenshots int           // a screenshot after each of the first Screenshots steps
	Recording   bool          // write RecordingName at the end
	Downloads   int           // write DownloadName(1..Downloads) at the end
	// Block makes the run wait, after its steps, until its gate is released
	// (Executor.Release) or ctx ends. Gate names the gate; "" means the run
	// id.
	Block bool
	Gate  string
	// Status is the final status; "" means completed.
	Status client.RunStatus
	Reason string            // the failure reason
	Output json.RawMessage   // the output; nil for none
	Errors []json.RawMessage // the errors
	// Details reports each step's details (StepDetails) to a Progress
	// that implements executor.StepReporter.
	Details bool
	// StepShots makes each step write the screenshots of the page before
	// and after it and name them in its details, with the element it
	// clicked.
	StepShots bool
	Summary   string // the run's summary
	Log       bool   // write LogName at the end and name it in Result.Logs
}

// Instant is the script of a run that says nothing: one step, completed at
// once.
var Instant = Script{Steps: 1, Status: client.RunStatusCompleted}

// Parse reads a script's text (see the package comment); a leading Prefix
// is allowed.
func Parse(text string) (Script, error) {
	var s Script
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), Prefix))
	for rest != "" {
		var pair string
		key, val, hasVal := "", "", false
		// The key is up to '=' or ';', whichever comes first.
		end := strings.IndexAny(rest, "=;")
		if end < 0 || rest[end] == ';' {
			if end < 0 {
				pair, rest = rest, ""
			} else {
				pair, rest = rest[:end], rest[end+1:]
			}
			key = strings.TrimSpace(pair)
		} else {
			key = strings.TrimSpace(rest[:end])
			rest = rest[end+1:]
			hasVal = true
			if key == "output" || key == "errors" {
				// A JSON value, which may hold ';'.
				dec := json.NewDecoder(strings.NewReader(rest))
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return Script{}, fmt.Errorf("scripted: %s: %v", key, err)
				}
				val = string(raw)
				rest = strings.TrimSpace(rest[dec.InputOffset():])
				if rest != "" {
					if rest[0] != ';' {
						return Script{}, fmt.Errorf("scripted: %s: unexpected %q after the JSON value", key, rest)
					}
					rest = rest[1:]
				}
			} else if i := strings.IndexByte(rest, ';'); i >= 0 {
				val, rest = strings.TrimSpace(rest[:i]), rest[i+1:]
			} else {
				val, rest = strings.TrimSpace(rest), ""
			}
		}
		rest = strings.TrimSpace(rest)
		if key == "" {
			if hasVal {
				return Script{}, errors.New("scripted: a value without a key")
			}
			continue // an empty pair: ";;"
		}
		if err := s.set(key, val, hasVal); err != nil {
			return Script{}, err
		}
	}
	return s, nil
}

func (s *Script) set(key, val string, hasVal bool) error {
	count := func() (int, error) {
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("scripted: %s=%q: want a count", key, val)
		}
		return n, nil
	}
	need := func() error {
		if !hasVal {
			return fmt.Errorf("scripted: %s needs a value", key)
		}
		return nil
	}
	var err error
	switch key {
	case "steps":
		if err = need(); err == nil {
			s.Steps, err = count()
		}
	case "screenshots", "screenshot":
		if err = need(); err == nil {
			s.Screenshots, err = count()
		}
	case "downloads":
		if err = need(); err == nil {
			s.Downloads, err = count()
		}
	case "sleep":
		if err = need(); err == nil {
			s.Sleep, err = time.ParseDuration(val)
			if err != nil || s.Sleep < 0 {
				err = fmt.Errorf("scripted: sleep=%q: want a duration such as 50ms", val)
			}
		}
	case "recording":
		s.Recording = true
		if hasVal {
			s.Recording, err = strconv.ParseBool(val)
			if err != nil {
				err = fmt.Errorf("scripted: recording=%q: want true or false", val)
			}
		}
	case "block":
		s.Block, s.Gate = true, val
	case "status":
		if err = need(); err == nil {
			s.Status = client.RunStatus(val)
		}
	case "reason":
		s.Reason = val
	case "summary":
		s.Summary = val
	case "details":
		s.Details = true
		if hasVal {
			s.Details, err = strconv.ParseBool(val)
			if err != nil {
				err = fmt.Errorf("scripted: details=%q: want true or false", val)
			}
		}
	case "stepshots":
		s.StepShots = true
		if hasVal {
			s.StepShots, err = strconv.ParseBool(val)
			if err != nil {
				err = fmt.Errorf("scripted: stepshots=%q: want true or false", val)
			}
		}
	case "log":
		s.Log = true
		if hasVal {
			s.Log, err = strconv.ParseBool(val)
			if err != nil {
				err = fmt.Errorf("scripted: log=%q: want true or false", val)
			}
		}
	case "output":
		if err = need(); err == nil {
			s.Output = json.RawMessage(val)
		}
	case "errors":
		if err = need(); err == nil {
			err = json.Unmarshal([]byte(val), &s.Errors)
			if err != nil {
				err = fmt.Errorf("scripted: errors: want a JSON array: %v", err)
			}
		}
	default:
		err = fmt.Errorf("scripted: unknown key %q", key)
	}
	return err
}

// String writes the script as text that Parse reads back.
func (s Script) String() string {
	var parts []string
	add := func(k string, v any) { parts = append(parts, fmt.Sprintf("%s=%v", k, v)) }
	add("steps", s.Steps)
	if s.Sleep > 0 {
		add("sleep", s.Sleep)
	}
	if s.Screenshots > 0 {
		add("screenshots", s.Screenshots)
	}
	if s.Recording {
		parts = append(parts, "recording")
	}
	if s.Downloads > 0 {
		add("downloads", s.Downloads)
	}
	if s.Block {
		if s.Gate == "" {
			parts = append(parts, "block")
		} else {
			add("block", s.Gate)
		}
	}
	if s.Status != "" {
		add("status", s.Status)
	}
	if s.Reason != "" {
		add("reason", s.Reason)
	}
	if s.Details {
		parts = append(parts, "details")
	}
	if s.StepShots {
		parts = append(parts, "stepshots")
	}
	if s.Summary != "" {
		add("summary", s.Summary)
	}
	if s.Log {
		parts = append(parts, "log")
	}
	if len(s.Errors) > 0 {
		b, _ := json.Marshal(s.Errors)
		add("errors", string(b))
	}
	if len(s.Output) > 0 {
		add("output", string(s.Output))
	}
	return strings.Join(parts, ";")
}

// Executor executes runs by their scripts. Its zero value is ready: every
// run without a script completes at once (Instant), which is what
// benchmarks use. It is safe for concurrent use; set its fields before the
// first Execute.
type Executor struct {
	// Default is the script of runs whose request holds none; nil means
	// Instant.
	Default *Script
	// Choose, when set, picks the script of every run ahead of its
	// request; returning nil falls back to the request's.
	Choose func(job *executor.Job) *Script
	// Forget makes the executor keep no jobs (Job, Order), so that a long
	// benchmark does not grow its memory; the counts are kept.
	Forget bool

	mu         sync.Mutex
	running    int
	peak       int
	calls      int
	order      []string
	jobs       map[string]executor.Job
	gates      map[string]*gate
	releaseAll bool
}

type gate struct {
	reached  chan struct{} // closed when a run waits at the gate
	released chan struct{} // closed by Release
}

func (e *Executor) gate(name string) *gate {
	if e.gates == nil {
		e.gates = map[string]*gate{}
	}
	g := e.gates[name]
	if g == nil {
		g = &gate{reached: make(chan struct{}), released: make(chan struct{})}
		if e.releaseAll {
			close(g.released)
		}
		e.gates[name] = g
	}
	return g
}

// Release opens the gate name (a run id, or a Script.Gate): runs waiting
// there go on, and runs reaching it later pass at once.
func (e *Executor) Release(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	g := e.gate(name)
	select {
	case <-g.released:
	default:
		close(g.released)
	}
}

// ReleaseAll opens every gate, now and later; tests call it in cleanup so
// that nothing stays blocked.
func (e *Executor) ReleaseAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.releaseAll = true
	for _, g := range e.gates {
		select {
		case <-g.released:
		default:
			close(g.released)
		}
	}
}

// Reached returns a channel closed once a run waits at gate name (after
// reporting its steps and screenshots).
func (e *Executor) Reached(name string) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gate(name).reached
}

// WaitBlocked waits until a run waits at gate name, or ctx ends.
func (e *Executor) WaitBlocked(ctx context.Context, name string) error {
	select {
	case <-e.Reached(name):
		return nil
	case <-ctx.Done():
		return fmt.Errorf("scripted: no run reached gate %q: %w", name, context.Cause(ctx))
	}
}

// Running returns how many executions are under way.
func (e *Executor) Running() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running
}

// Peak returns the largest number of executions that were under way at
// once.
func (e *Executor) Peak() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.peak
}

// Calls returns how many times Execute was called.
func (e *Executor) Calls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls
}

// Order returns the run ids in the order Execute was called for them.
func (e *Executor) Order() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.order...)
}

// Job returns a copy of the last job executed for runID, and whether there
// was one.
func (e *Executor) Job(runID string) (executor.Job, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j, ok := e.jobs[runID]
	return j, ok
}

// ScriptOf returns the script of job (see the package comment).
func (e *Executor) ScriptOf(job *executor.Job) (Script, error) {
	if e.Choose != nil {
		if s := e.Choose(job); s != nil {
			return *s, nil
		}
	}
	if job.Task != nil {
		if p := strings.TrimSpace(job.Task.Prompt); strings.HasPrefix(p, Prefix) {
			return Parse(p)
		}
	}
	if raw, ok := job.Parameters[ParamKey]; ok {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return Script{}, fmt.Errorf("scripted: parameter %s is not a string", ParamKey)
		}
		return Parse(text)
	}
	if e.Default != nil {
		return *e.Default, nil
	}
	return Instant, nil
}

// Execute implements executor.Executor.
func (e *Executor) Execute(ctx context.Context, job *executor.Job, progress executor.Progress) executor.Result {
	e.mu.Lock()
	e.calls++
	e.running++
	e.peak = max(e.peak, e.running)
	if !e.Forget {
		e.order = append(e.order, job.RunID)
		if e.jobs == nil {
			e.jobs = map[string]executor.Job{}
		}
		e.jobs[job.RunID] = *job
	}
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.running--
		e.mu.Unlock()
	}()

	// A script needs nothing to begin: the run starts at once.
	executor.Started(progress)
	s, err := e.ScriptOf(job)
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: err.Error()}
	}
	return e.run(ctx, job, progress, s)
}

// interrupted is the result of a run whose ctx ended: what it produced so
// far; the daemon sets the status.
func interrupted(ctx context.Context, res executor.Result) executor.Result {
	res.Status = client.RunStatusFailed
	res.FailureReason = "scripted: interrupted: " + context.Cause(ctx).Error()
	return res
}

func (e *Executor) run(ctx context.Context, job *executor.Job, progress executor.Progress, s Script) executor.Result {
	var res executor.Result
	steps := max(s.Steps, s.Screenshots)
	limited := job.MaxSteps > 0 && steps > job.MaxSteps
	if limited {
		steps = job.MaxSteps
	}
	var details []executor.StepInfo
	if s.Details || s.Log {
		details = StepDetails(s, steps, limited)
	}
	reporter, _ := progress.(executor.StepReporter)
	blocks, _ := progress.(executor.BlockReporter)
	if !s.Details {
		reporter, blocks = nil, nil
	}
	var agentBlocks client.Blocks
	if job.Agent != nil {
		agentBlocks = job.Agent.WorkflowDefinition.Blocks
	}
	for i := 1; i <= steps; i++ {
		if s.Sleep > 0 {
			t := time.NewTimer(s.Sleep)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return interrupted(ctx, res)
			}
		} else if ctx.Err() != nil {
			return interrupted(ctx, res)
		}
		res.StepCount = i
		progress.Step(i)
		if i <= s.Screenshots {
			name := ScreenshotName(i)
			if err := os.WriteFile(filepath.Join(job.Dir, name), ScreenshotPNG(job.RunID, i), 0o600); err != nil {
				return failed(res, err)
			}
			res.Screenshots = append(res.Screenshots, name)
			progress.Screenshot(name)
		}
		var block executor.BlockInfo
		if blocks != nil && len(agentBlocks) > 0 {
			b := agentBlocks[(i-1)%len(agentBlocks)]
			block = executor.BlockInfo{Seq: i, Label: b.Base().Label, Type: b.BlockType(), Status: executor.BlockRunning, Started: time.Now()}
			blocks.Block(block)
			details[i-1].Block, details[i-1].BlockSeq = block.Label, block.Seq
		}
		if reporter != nil && s.StepShots {
			d := &details[i-1]
			for _, when := range []string{"before", "after"} {
				name := StepShotName(i, when)
				if err := os.WriteFile(filepath.Join(job.Dir, name), StepShotPNG(i, when), 0o600); err != nil {
					return failed(res, err)
				}
				res.Screenshots = append(res.Screenshots, name)
				progress.Screenshot(name)
			}
			d.Before, d.After = StepShotName(i, "before"), StepShotName(i, "after")
			d.Element = StepElement(i)
			if s.Recording {
				at := time.Duration(i-1) * time.Second
				d.RecordingOffset = &at
			}
		}
		if reporter != nil {
			reporter.StepDetail(details[i-1])
		}
		if block.Seq > 0 {
			block.Status, block.Ended = executor.BlockCompleted, time.Now()
			if i == steps {
				switch {
				case limited:
					block.Status = executor.BlockTimedOut
				case s.Status == client.RunStatusFailed:
					block.Status, block.FailureReason = executor.BlockFailed, s.Reason
				case s.Status == client.RunStatusTerminated:
					block.Status, block.FailureReason = executor.BlockTerminated, s.Reason
				}
			}
			blocks.Block(block)
		}
	}
	if s.Log {
		// Written before the gate, so that a run canceled there keeps it.
		b, _ := json.MarshalIndent(map[string]any{"summary": s.Summary, "steps": details}, "", "  ")
		if err := os.WriteFile(filepath.Join(job.Dir, LogName), b, 0o600); err != nil {
			return failed(res, err)
		}
		res.Logs = append(res.Logs, LogName)
	}
	if limited {
		res.Status = client.RunStatusTimedOut
		res.FailureReason = fmt.Sprintf("The run reached its step limit of %d steps.", job.MaxSteps)
		return res
	}
	if s.Block {
		name := s.Gate
		if name == "" {
			name = job.RunID
		}
		e.mu.Lock()
		g := e.gate(name)
		select {
		case <-g.reached:
		default:
			close(g.reached)
		}
		e.mu.Unlock()
		select {
		case <-g.released:
		case <-ctx.Done():
			return interrupted(ctx, res)
		}
	}
	if s.Recording {
		if err := os.WriteFile(filepath.Join(job.Dir, RecordingName), RecordingBytes(job.RunID), 0o600); err != nil {
			return failed(res, err)
		}
		res.Recording = RecordingName
	}
	for i := 1; i <= s.Downloads; i++ {
		name := DownloadName(i)
		if err := os.WriteFile(filepath.Join(job.Dir, name), DownloadBytes(job.RunID, i), 0o600); err != nil {
			return failed(res, err)
		}
		res.Downloads = append(res.Downloads, name)
	}
	res.Status = s.Status
	if res.Status == "" {
		res.Status = client.RunStatusCompleted
	}
	res.FailureReason = s.Reason
	res.Summary = s.Summary
	res.Output = s.Output
	res.Errors = s.Errors
	return res
}

// StepDetails returns the details a run of script s reports for its
// first n steps (limited: the run stops at its step limit after them):
// step i clicks element e<i>, a button named "Step <i>", on page
// http://127.0.0.1/step/<i>, taking i ms of model time and 100·i input and
// 10·i output tokens; its decision is "continue", but for the last step of
// a run that completes "complete", and of one that is terminated
// "terminate".
func StepDetails(s Script, n int, limited bool) []executor.StepInfo {
	out := make([]executor.StepInfo, n)
	for i := 1; i <= n; i++ {
		d := executor.StepInfo{
			Step: i, URL: fmt.Sprintf("http://127.0.0.1/step/%d", i),
			Thought:  fmt.Sprintf("Step %d of %d.", i, n),
			Actions:  []string{fmt.Sprintf(`click [e%d] button "Step %d": ok`, i, i)},
			Decision: "continue",
			Settle:   time.Duration(i) * 100 * time.Microsecond, Observe: time.Duration(i) * 200 * time.Microsecond,
			Model: time.Duration(i) * time.Millisecond, Act: time.Duration(i) * 300 * time.Microsecond,
			InputTokens: 100 * i, OutputTokens: 10 * i,
		}
		if i == n && !limited {
			switch s.Status {
			case "", client.RunStatusCompleted:
				d.Decision = "complete"
			case client.RunStatusTerminated:
				d.Decision = "terminate"
			}
		}
		out[i-1] = d
	}
	return out
}

func failed(res executor.Result, err error) executor.Result {
	res.Status = client.RunStatusFailed
	res.FailureReason = "scripted: " + err.Error()
	return res
}

// ScreenshotPNG returns the bytes of the i-th screenshot of run runID: a
// small PNG whose colours depend on both, so that every screenshot differs.
func ScreenshotPNG(runID string, i int) []byte {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d", runID, i)
	sum := h.Sum32()
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for y := range 16 {
		for x := range 16 {
			img.Set(x, y, color.RGBA{R: byte(sum) ^ byte(x*16), G: byte(sum >> 8), B: byte(sum>>16) ^ byte(y*16), A: 255})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// StepShotName is the name of the screenshot of the page before step i
// (when is "before") or after it ("after").
func StepShotName(i int, when string) string { return fmt.Sprintf("step_%03d_%s.png", i, when) }

// StepShotSize is the width and height of the screenshots of stepshots,
// which show the whole viewport (in CSS pixels at a ratio of 1).
var StepShotSize = client.StepSize{Width: 320, Height: 200}

// StepElement is the element step i clicks in a run with stepshots: the
// button "Step <i>", at a place of its own on the page.
func StepElement(i int) *client.StepElement {
	return &client.StepElement{
		Name:     fmt.Sprintf(`[e%d] button "Step %d"`, i, i),
		Box:      client.StepBox{X: float64(20 + 30*((i-1)%8)), Y: 80, Width: 96, Height: 32},
		Viewport: StepShotSize,
	}
}

// StepShotPNG returns the screenshot of the page before step i (when is
// "before") or after it: a light page with step i's button drawn where
// StepElement puts it, pale before and dark after the click.
func StepShotPNG(i int, when string) []byte {
	w, h := int(StepShotSize.Width), int(StepShotSize.Height)
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw := color.RGBA{R: 200, G: 220, B: 255, A: 255}
	if when == "after" {
		draw = color.RGBA{R: 20, G: 60, B: 160, A: 255}
	}
	b := StepElement(i).Box
	for y := range h {
		for x := range w {
			c := color.RGBA{R: 250, G: 250, B: 245, A: 255}
			if float64(x) >= b.X && float64(x) < b.X+b.Width && float64(y) >= b.Y && float64(y) < b.Y+b.Height {
				c = draw
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// RecordingBytes returns the bytes of a run's recording: a WebM (EBML)
// header and the run id; nothing plays it, the bytes only need to be
// recognisable.
func RecordingBytes(runID string) []byte {
	return append([]byte{0x1a, 0x45, 0xdf, 0xa3}, "scripted recording of "+runID+"\n"...)
}

// DownloadBytes returns the content of the i-th download of run runID.
func DownloadBytes(runID string, i int) []byte {
	return fmt.Appendf(nil, "scripted download %d of %s\n", i, runID)
}

var _ executor.Executor = (*Executor)(nil)
