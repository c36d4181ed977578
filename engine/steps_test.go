package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/engine"
	"github.com/abctl/abctl/internal/testsite"
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
				LoopBlocks: client.Blocks{gotoBlock("visit", "{{ site }}"+testsite.PageForm+"?item={{ current_value }}")}},
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

// TestDaemonTimelineOfModelFreeRun: through the daemon, the timeline of a
// run of model-free blocks lists each of the steps its step_count counts
// (what `abctl get run ID --steps` shows), newest first.
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
	tl, err := c.Runs.Timeline(ctx, run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range tl {
		if e.Step != nil && e.Step.BlockLabel != nil {
			got = append(got, fmt.Sprintf("%d %s %s", e.Step.Number, *e.Step.BlockLabel, e.Step.Decision))
		}
	}
	if want := "3 pause done, 2 open_form done, 1 open_index done"; strings.Join(got, ", ") != want {
		t.Errorf("timeline %q, want %q", strings.Join(got, ", "), want)
	}
}
