package scripted_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

func TestParse(t *testing.T) {
	s, err := scripted.Parse(`script: steps=3; sleep=50ms;screenshots=2;recording;downloads=1;block=g;status=terminated;reason=gave up;details;summary=Gave up on it.;log=true;errors=[{"a":";"}];output={"a":1,"b":"x;y"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := scripted.Script{Steps: 3, Sleep: 50 * time.Millisecond, Screenshots: 2, Recording: true, Downloads: 1,
		Block: true, Gate: "g", Status: client.RunStatusTerminated, Reason: "gave up",
		Details: true, Summary: "Gave up on it.", Log: true,
		Errors: []json.RawMessage{json.RawMessage(`{"a":";"}`)}, Output: json.RawMessage(`{"a":1,"b":"x;y"}`)}
	if s.String() != want.String() {
		t.Errorf("parsed\n%s\nwant\n%s", s, want)
	}
	back, err := scripted.Parse(s.String())
	if err != nil || back.String() != s.String() {
		t.Errorf("round trip: %s, %v", back, err)
	}
	if s, err := scripted.Parse("block;;steps=1"); err != nil || !s.Block || s.Gate != "" || s.Steps != 1 {
		t.Errorf("block without a gate: %+v %v", s, err)
	}
	for _, bad := range []string{"steps=x", "steps=-1", "sleep=soon", "nope=1", "output={", "output=1 2", "errors={}", "=3", "steps", "status", "details=maybe", "log=2"} {
		if _, err := scripted.Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

type progress struct {
	mu          sync.Mutex
	steps       []int
	screenshots []string
}

// reporter is a progress that wants step details; events interleaves the
// steps ("step 2") and details ("detail 2") in the order reported.
type reporter struct {
	progress
	details []executor.StepInfo
	events  []string
}

func (r *reporter) Step(n int) {
	r.progress.Step(n)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprint("step ", n))
}

func (r *reporter) StepDetail(info executor.StepInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.details = append(r.details, info)
	r.events = append(r.events, fmt.Sprint("detail ", info.Step))
}

// TestExecuteReportsDetails: with details, each step's details follow it,
// as the engine reports them; with log, the step log is written and named;
// the summary is the result's.
func TestExecuteReportsDetails(t *testing.T) {
	var e scripted.Executor
	job := taskJob(t, "tsk_1", `script: steps=3;details;log;summary=Clicked three buttons.`)
	r := &reporter{}
	res := e.Execute(t.Context(), job, r)
	if res.Status != client.RunStatusCompleted || res.Summary != "Clicked three buttons." || !slices.Equal(res.Logs, []string{scripted.LogName}) {
		t.Fatalf("result %+v", res)
	}
	if want := []string{"step 1", "detail 1", "step 2", "detail 2", "step 3", "detail 3"}; !slices.Equal(r.events, want) {
		t.Errorf("events %v, want %v", r.events, want)
	}
	want := scripted.StepDetails(scripted.Script{Steps: 3}, 3, false)
	if len(r.details) != 3 || r.details[1].Actions[0] != `click [e2] button "Step 2": ok` || r.details[1].Decision != "continue" ||
		r.details[2].Decision != "complete" || r.details[2].Model != 3*time.Millisecond || r.details[2].InputTokens != 300 {
		t.Errorf("details %+v", r.details)
	}
	if fmt.Sprint(r.details) != fmt.Sprint(want) {
		t.Errorf("details %+v, want StepDetails' %+v", r.details, want)
	}
	var log struct {
		Summary string
		Steps   []executor.StepInfo
	}
	b, err := os.ReadFile(filepath.Join(job.Dir, scripted.LogName))
	if err != nil || json.Unmarshal(b, &log) != nil || log.Summary != res.Summary || len(log.Steps) != 3 {
		t.Errorf("step log %s: %v", b, err)
	}

	// Without details, a reporter hears of steps only. The last step of a
	// terminated run decides "terminate"; of a failed one, "continue".
	r = &reporter{}
	res = e.Execute(t.Context(), taskJob(t, "tsk_2", `script: steps=2;status=terminated`), r)
	if len(r.details) != 0 || res.Summary != "" || res.Logs != nil {
		t.Errorf("without details: %+v, %+v", r.details, res)
	}
	if d := scripted.StepDetails(scripted.Script{Status: client.RunStatusTerminated}, 2, false); d[1].Decision != "terminate" {
		t.Errorf("the last step of a terminated run: %+v", d[1])
	}
	if d := scripted.StepDetails(scripted.Script{Status: client.RunStatusFailed}, 2, false); d[1].Decision != "continue" {
		t.Errorf("the last step of a failed run: %+v", d[1])
	}
	if d := scripted.StepDetails(scripted.Script{}, 2, true); d[1].Decision != "continue" {
		t.Errorf("the last step of a run at its step limit: %+v", d[1])
	}
}

func (p *progress) Step(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.steps = append(p.steps, n)
}

func (p *progress) Screenshot(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.screenshots = append(p.screenshots, name)
}

func taskJob(t *testing.T, id, prompt string) *executor.Job {
	return &executor.Job{RunID: id, OrgID: "o_1", RunType: client.RunTypeTaskV1, Task: &client.TaskRunRequest{Prompt: prompt}, Dir: t.TempDir()}
}

func TestExecuteWritesFilesAndReports(t *testing.T) {
	var e scripted.Executor
	job := taskJob(t, "tsk_1", `script: steps=3;screenshots=2;recording;downloads=2;output={"a":1}`)
	p := &progress{}
	res := e.Execute(t.Context(), job, p)
	if res.Status != client.RunStatusCompleted || res.StepCount != 3 || string(res.Output) != `{"a":1}` ||
		!slices.Equal(res.Screenshots, []string{scripted.ScreenshotName(1), scripted.ScreenshotName(2)}) ||
		res.Recording != scripted.RecordingName || len(res.Downloads) != 2 {
		t.Fatalf("result %+v", res)
	}
	if !slices.Equal(p.steps, []int{1, 2, 3}) || !slices.Equal(p.screenshots, res.Screenshots) {
		t.Errorf("progress %v %v", p.steps, p.screenshots)
	}
	b, err := os.ReadFile(filepath.Join(job.Dir, res.Screenshots[1]))
	if err != nil || !bytes.Equal(b, scripted.ScreenshotPNG("tsk_1", 2)) {
		t.Fatalf("screenshot file: %v", err)
	}
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		t.Errorf("not a PNG: %v", err)
	}
	if bytes.Equal(scripted.ScreenshotPNG("tsk_1", 1), scripted.ScreenshotPNG("tsk_1", 2)) {
		t.Error("two screenshots are equal")
	}
	if b, _ := os.ReadFile(filepath.Join(job.Dir, res.Downloads[0])); !bytes.Equal(b, scripted.DownloadBytes("tsk_1", 1)) {
		t.Errorf("download %q", b)
	}
	if e.Calls() != 1 || e.Running() != 0 || e.Peak() != 1 {
		t.Errorf("calls %d running %d peak %d", e.Calls(), e.Running(), e.Peak())
	}
	if j, ok := e.Job("tsk_1"); !ok || j.Task.Prompt != job.Task.Prompt {
		t.Errorf("job %+v", j)
	}
}

func TestExecuteSourcesOfScripts(t *testing.T) {
	e := scripted.Executor{Default: &scripted.Script{Steps: 2, Status: client.RunStatusTerminated}}
	if res := e.Execute(t.Context(), taskJob(t, "tsk_1", "find the price"), &progress{}); res.Status != client.RunStatusTerminated || res.StepCount != 2 {
		t.Errorf("default: %+v", res)
	}
	agent := &executor.Job{RunID: "wr_1", RunType: client.RunTypeWorkflowRun, Dir: t.TempDir(),
		Parameters: map[string]json.RawMessage{scripted.ParamKey: json.RawMessage(`"steps=4;status=failed;reason=boom"`)}}
	if res := e.Execute(t.Context(), agent, &progress{}); res.Status != client.RunStatusFailed || res.StepCount != 4 || res.FailureReason != "boom" {
		t.Errorf("agent parameter: %+v", res)
	}
	if res := e.Execute(t.Context(), taskJob(t, "tsk_2", "script: steps=x"), &progress{}); res.Status != client.RunStatusFailed || res.FailureReason == "" {
		t.Errorf("bad script: %+v", res)
	}
	e.Choose = func(job *executor.Job) *scripted.Script {
		if job.RunID == "tsk_3" {
			return &scripted.Script{Steps: 5}
		}
		return nil
	}
	if res := e.Execute(t.Context(), taskJob(t, "tsk_3", "script: steps=1"), &progress{}); res.Status != client.RunStatusCompleted || res.StepCount != 5 {
		t.Errorf("Choose: %+v", res)
	}
	var zero scripted.Executor
	if res := zero.Execute(t.Context(), taskJob(t, "tsk_4", "anything"), &progress{}); res.Status != client.RunStatusCompleted || res.StepCount != 1 {
		t.Errorf("instant: %+v", res)
	}
}

func TestExecuteHonoursMaxSteps(t *testing.T) {
	var e scripted.Executor
	job := taskJob(t, "tsk_1", "script: steps=10;screenshots=10")
	job.MaxSteps = 3
	p := &progress{}
	res := e.Execute(t.Context(), job, p)
	if res.Status != client.RunStatusTimedOut || res.StepCount != 3 || len(res.Screenshots) != 3 || res.FailureReason == "" {
		t.Errorf("%+v", res)
	}
}

func TestExecuteBlocksUntilReleasedOrCanceled(t *testing.T) {
	var e scripted.Executor
	t.Cleanup(e.ReleaseAll)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	done := make(chan executor.Result, 1)
	go func() {
		done <- e.Execute(ctx, taskJob(t, "tsk_1", "script: steps=1;screenshots=1;block"), &progress{})
	}()
	if err := e.WaitBlocked(ctx, "tsk_1"); err != nil {
		t.Fatal(err)
	}
	if e.Running() != 1 {
		t.Errorf("running %d", e.Running())
	}
	e.Release("tsk_1")
	if res := <-done; res.Status != client.RunStatusCompleted {
		t.Errorf("released: %+v", res)
	}

	// Released before it is reached: passes at once.
	e.Release("g")
	if res := e.Execute(ctx, taskJob(t, "tsk_2", "script: block=g"), &progress{}); res.Status != client.RunStatusCompleted {
		t.Errorf("pre-released: %+v", res)
	}

	runCtx, stop := context.WithCancel(ctx)
	go func() {
		done <- e.Execute(runCtx, taskJob(t, "tsk_3", "script: steps=2;screenshots=1;block"), &progress{})
	}()
	if err := e.WaitBlocked(ctx, "tsk_3"); err != nil {
		t.Fatal(err)
	}
	stop()
	select {
	case res := <-done:
		if res.StepCount != 2 || len(res.Screenshots) != 1 {
			t.Errorf("canceled: %+v", res)
		}
	case <-ctx.Done():
		t.Fatal("Execute did not return after its context ended")
	}

	// A sleeping run returns when its context ends too.
	runCtx, stop = context.WithCancel(ctx)
	stop()
	if res := e.Execute(runCtx, taskJob(t, "tsk_4", "script: steps=3;sleep=1h"), &progress{}); res.StepCount != 0 {
		t.Errorf("sleeping: %+v", res)
	}
}

// BenchmarkInstant measures the executor's own cost per run in its instant
// mode, as daemon benchmarks use it.
func BenchmarkInstant(b *testing.B) {
	e := scripted.Executor{Forget: true}
	job := &executor.Job{RunID: "tsk_1", Task: &client.TaskRunRequest{Prompt: "find the price"}, Dir: b.TempDir()}
	p := &progress{}
	for b.Loop() {
		if res := e.Execute(context.Background(), job, p); res.Status != client.RunStatusCompleted {
			b.Fatal(res)
		}
		p.steps = p.steps[:0]
	}
	if len(e.Order()) != 0 {
		b.Error("Forget kept the jobs")
	}
}
