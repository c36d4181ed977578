package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/executor"
)

// TestModelFreeStepsAreReported: every step a run of model-free blocks
// counts is also reported (StepDetail) and written to the step log, in
// order, with its block, what it did and how it ended, so that a run's
// timeline lists as many steps as its step count says.
func TestModelFreeStepsAreReported(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	// The default selector timeout: #link-form must be found however slow
	// the machine (a short one failed under load); the missing element
	// costs its whole wait.
	e := newEngine(t, engine.Config{})
	missing := click("find_missing", "#no-such-element")
	missing.ContinueOnFailure = true
	withURL := click("open_and_click", "#link-form")
	withURL.URL = "{{ site }}" + testsite.PageIndex
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site"), jsonParam("items")},
		Blocks: client.Blocks{
			gotoBlock("open_index", "{{ site }}"+testsite.PageIndex),
			withURL, // two steps: the page, then the click
			missing, // fails, and the run goes on
			&client.ForLoopBlock{BlockBase: base("visit_two"), LoopOverParameterKey: "items",
				// The loop's iteration read through its label, as the
				// hosted service registers it.
				LoopBlocks: client.Blocks{gotoBlock("visit", "{{ site }}"+testsite.PageForm+"?item={{ visit_two.current_value }}")}},
			&client.HTTPRequestBlock{BlockBase: base("fetch_export"), URL: "{{ site }}" + testsite.FileExport},
			&client.PrintPageBlock{BlockBase: base("print_form")},
			&client.FileDownloadBlock{BlockBase: base("download_notes"), URL: "{{ site }}" + testsite.FileNotes},
			&client.WaitBlock{BlockBase: base("pause")},
		},
	}
	p := &stepDetails{}
	j := job(t, def, map[string]any{"site": site.URL(""), "items": []string{"a", "b"}})
	res := e.Execute(t.Context(), j, p)
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}

	want := []struct{ block, decision, action string }{
		{"open_index", "done", `goto_url "` + site.URL("") + `/": ok`},
		{"open_and_click", "done", "goto_url"},
		{"open_and_click", "done", `click "#link-form": ok`},
		{"find_missing", "failed", `click "#no-such-element": FAILED, no element matches`},
		{"visit", "done", "?item=a"},
		{"visit", "done", "?item=b"},
		{"fetch_export", "done", "http_request \"GET " + site.URL("") + testsite.FileExport + `": ok, HTTP 200 OK`},
		{"print_form", "done", "print_page: ok, saved "},
		{"download_notes", "done", "download \"" + site.URL("") + testsite.FileNotes + `": ok, downloaded ` + testsite.NotesFilename},
		{"pause", "done", `wait "0 s": ok`},
	}
	details := p.details()
	if res.StepCount != len(want) || len(details) != res.StepCount {
		t.Fatalf("%d steps counted, %d reported, want %d:\n%s", res.StepCount, len(details), len(want), describeInfos(details))
	}
	for i, d := range details {
		w := want[i]
		if d.Step != i+1 || d.Block != w.block || d.Decision != w.decision || len(d.Actions) != 1 || !strings.Contains(d.Actions[0], w.action) {
			t.Errorf("step %d: %d %q %q %q, want block %q, decision %q, an action with %q", i+1, d.Step, d.Block, d.Decision, d.Actions, w.block, w.decision, w.action)
		}
	}
	if d := details[0]; d.URL != site.URL("")+"/" {
		t.Errorf("the first step's URL is %q", d.URL)
	}

	// Every block execution is reported as it starts and as it ends, a
	// loop's inner blocks inside it, each step in its block.
	type exec struct {
		label      string
		status     executor.BlockStatus
		parent     int
		index      int // current_index + 1; 0 outside loops
		firstSteps int // the first step in it; 0 for none
	}
	wantBlocks := []exec{
		{"open_index", executor.BlockCompleted, 0, 0, 1},
		{"open_and_click", executor.BlockCompleted, 0, 0, 2},
		{"find_missing", executor.BlockFailed, 0, 0, 4},
		{"visit_two", executor.BlockCompleted, 0, 0, 0},
		{"visit", executor.BlockCompleted, 4, 1, 5},
		{"visit", executor.BlockCompleted, 4, 2, 6},
		{"fetch_export", executor.BlockCompleted, 0, 0, 7},
		{"print_form", executor.BlockCompleted, 0, 0, 8},
		{"download_notes", executor.BlockCompleted, 0, 0, 9},
		{"pause", executor.BlockCompleted, 0, 0, 10},
	}
	ended := map[int]executor.BlockInfo{}
	started := map[int]executor.BlockInfo{}
	for _, b := range p.blockReports() {
		if b.Status == executor.BlockRunning {
			started[b.Seq] = b
		} else {
			ended[b.Seq] = b
		}
	}
	if len(started) != len(wantBlocks) || len(ended) != len(wantBlocks) {
		t.Fatalf("%d block executions started, %d ended, want %d:\n%s", len(started), len(ended), len(wantBlocks), describeInfos(p.blockReports()))
	}
	for i, w := range wantBlocks {
		seq := i + 1
		b, s := ended[seq], started[seq]
		index := 0
		if b.CurrentIndex != nil {
			index = *b.CurrentIndex + 1
		}
		if b.Label != w.label || s.Label != w.label || b.Status != w.status || b.ParentSeq != w.parent || index != w.index ||
			s.Started.IsZero() || b.Ended.Before(b.Started) || (w.status == executor.BlockFailed) != (b.FailureReason != "") {
			t.Errorf("block execution %d: %+v, want %+v", seq, b, w)
		}
		if w.firstSteps > 0 && details[w.firstSteps-1].BlockSeq != seq {
			t.Errorf("step %d is in block execution %d, want %d", w.firstSteps, details[w.firstSteps-1].BlockSeq, seq)
		}
	}
	if loop := ended[4]; fmt.Sprint(loop.LoopValues) != "[a b]" || ended[5].CurrentValue != "a" || ended[6].CurrentValue != "b" {
		t.Errorf("the loop's values %v, its iterations' values %v, %v", loop.LoopValues, ended[5].CurrentValue, ended[6].CurrentValue)
	}
	if out := string(ended[7].Output); !strings.Contains(out, `"status_code":200`) {
		t.Errorf("fetch_export's output as reported: %s", out)
	}

	// The step log has them too.
	logged := readSteps(t, j.Dir).Steps
	if len(logged) != len(want) {
		t.Fatalf("the step log has %d steps, want %d", len(logged), len(want))
	}
	for i, s := range logged {
		if s.Step != i+1 || s.Block != want[i].block || s.Decision != want[i].decision {
			t.Errorf("logged step %d: %+v", i+1, s)
		}
	}
}

func describeInfos[T any](infos []T) string {
	var b strings.Builder
	for _, i := range infos {
		fmt.Fprintf(&b, "  %+v\n", i)
	}
	return b.String()
}

// TestDaemonTimelineOfModelFreeRun: through the daemon, the steps of a
// run of model-free blocks are each of the steps its step_count counts
// (what `abctl get run ID --steps` shows), newest first, and its timeline
// has one block entry per block, newest first, each step a thought in its
// block.
func TestDaemonTimelineOfModelFreeRun(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	c, _ := startDaemon(t, newEngine(t, engine.Config{}))
	ctx := t.Context()
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site")},
		Blocks: client.Blocks{
			gotoBlock("open_index", "{{ site }}"+testsite.PageIndex),
			click("open_form", "#link-form"),
			&client.WaitBlock{BlockBase: base("pause")},
		},
	}
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Three steps", WorkflowDefinition: def}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{"site": site.URL("")}})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != client.RunStatusCompleted || done.GetStepCount() != 3 {
		t.Fatalf("%s, %d steps: %s", done.Status, done.GetStepCount(), done.GetFailureReason())
	}
	steps, err := c.Runs.Steps(ctx, run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range steps {
		if s.BlockLabel != nil {
			got = append(got, fmt.Sprintf("%d %s %s", s.Number, *s.BlockLabel, s.Decision))
		}
	}
	if want := "3 pause done, 2 open_form done, 1 open_index done"; strings.Join(got, ", ") != want {
		t.Errorf("steps %q, want %q", strings.Join(got, ", "), want)
	}

	tl, err := c.Runs.Timeline(ctx, run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, e := range tl {
		if e.Type != client.TimelineBlockEntry || e.Block == nil || e.Block.Label == nil || e.Block.Status == nil {
			t.Fatalf("timeline entry %+v", e)
		}
		line := fmt.Sprintf("%s %s %s", *e.Block.Label, e.Block.BlockType, *e.Block.Status)
		for _, ch := range e.Children {
			if ch.Thought != nil && ch.Thought.Answer != nil {
				line += " [" + strings.SplitN(*ch.Thought.Answer, " ", 2)[0] + "]"
			}
		}
		got = append(got, line)
	}
	if want := "pause wait completed [wait], open_form action completed [click], open_index goto_url completed [goto_url]"; strings.Join(got, ", ") != want {
		t.Errorf("timeline %q, want %q", strings.Join(got, ", "), want)
	}
}
