package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/executor"
)

// TestAgentOfModelFreeBlocks runs an agent through the test site's pages
// and checks its output, events, screenshots, recording and downloads.
func TestAgentOfModelFreeBlocks(t *testing.T) {
	needBrowser(t)
	needFFmpeg(t)
	site := testsite.Start(t)
	e := newEngine(t, engine.Config{Record: true})
	j := job(t, siteAgent(), map[string]any{"site": site.URL(""), "user": "alice", "pages": loopPagesParam()})
	p := &progress{}
	res := e.Execute(t.Context(), j, p)
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}

	var out map[string]any
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	for _, label := range siteAgentLabels {
		if _, ok := out[label+"_output"]; !ok {
			t.Errorf("no %s_output in %s", label, res.Output)
		}
	}
	if got := out["continue_output"].(map[string]any)["selector"]; got != "xpath=//button[@id='continue-button']" {
		t.Errorf("continue_output.selector = %v", got)
	}
	loop := out["visit_pages_output"].([]any)
	if len(loop) != len(loopPages) {
		t.Fatalf("visit_pages_output has %d iterations, want %d", len(loop), len(loopPages))
	}
	for i, it := range loop {
		sel := it.(map[string]any)["click_it_output"].(map[string]any)["selector"]
		if sel != loopPages[i]["click"] {
			t.Errorf("iteration %d clicked %v", i, sel)
		}
	}
	fetch := out["fetch_export_output"].(map[string]any)
	if fetch["status_code"] != float64(200) || fetch["body"].(map[string]any)["export"] != "abctl-test-site" {
		t.Errorf("fetch_export_output = %v", fetch)
	}
	if got := out["print_products_output"].(map[string]any)["downloaded_files"].([]any)[0].(map[string]any)["filename"]; got != "products-alice.pdf" {
		t.Errorf("print_products file %v", got)
	}
	report := out["download_report_output"].(map[string]any)["downloaded_files"].([]any)[0].(map[string]any)
	if report["filename"] != testsite.ReportFilename || report["file_size"] != float64(len(testsite.ReportCSV)) {
		t.Errorf("download_report_output file %v", report)
	}

	// What the browser did, as the site saw it.
	for _, kind := range []string{testsite.EventCookieAccept, testsite.EventBannerContinue} {
		waitEvent(t, site, kind)
	}
	for _, pg := range loopPages {
		if pg["event"] != "" {
			waitEvent(t, site, pg["event"])
		}
	}
	ev := waitEvent(t, site, "http-block")
	var posted map[string]string
	if err := json.Unmarshal(ev.Body, &posted); err != nil || posted["user"] != "alice" || posted["export"] != "abctl-test-site" || posted["pages"] != "#shadow-button" {
		t.Errorf("http_request posted %s (%v)", ev.Body, err)
	}
	if sub := waitEvent(t, site, testsite.EventSubmit); sub.Form.Get("form_id") != "popup-form" {
		t.Errorf("the popup form was not submitted: %v", sub.Form)
	}

	// Files.
	if len(res.Screenshots) < 15 {
		t.Errorf("%d screenshots", len(res.Screenshots))
	}
	if !slices.Equal(p.screenshots(), res.Screenshots) {
		t.Errorf("progress reported %v, the result says %v", p.screenshots(), res.Screenshots)
	}
	for _, name := range res.Screenshots {
		if b := readFile(t, j.Dir, name); !isJPEG(b) {
			t.Errorf("%s is not a JPEG", name)
		}
	}
	if res.StepCount < len(siteAgentLabels) || p.steps != res.StepCount {
		t.Errorf("step count %d (progress %d)", res.StepCount, p.steps)
	}
	for _, want := range []string{testsite.ReportFilename, testsite.NotesFilename, "products-alice.pdf"} {
		if !slices.Contains(res.Downloads, want) {
			t.Errorf("downloads %v lack %q", res.Downloads, want)
		}
	}
	if got := string(readFile(t, j.Dir, testsite.ReportFilename)); got != testsite.ReportCSV {
		t.Errorf("report content %q", got)
	}
	if got := string(readFile(t, j.Dir, testsite.NotesFilename)); got != testsite.NotesTXT {
		t.Errorf("notes content %q", got)
	}
	if b := readFile(t, j.Dir, "products-alice.pdf"); !strings.HasPrefix(string(b), "%PDF-") {
		t.Errorf("the PDF starts with %q", b[:min(len(b), 8)])
	}
	if res.Recording != engine.RecordingName {
		t.Fatalf("recording %q", res.Recording)
	}
	pr := ffprobe(t, filepath.Join(j.Dir, res.Recording))
	if pr.Codec != "vp8" || !strings.Contains(pr.Format, "webm") || pr.Seconds < 1 || pr.Width == 0 {
		t.Errorf("recording %+v", pr)
	}
}

// TestMissingTemplateKey: a reference to nothing fails the run, naming it.
func TestMissingTemplateKey(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	e := newEngine(t, engine.Config{})
	def := client.WorkflowDefinition{Blocks: client.Blocks{
		gotoBlock("home", "{{ site }}/"),
		gotoBlock("open_page", "{{ site }}/{{ page_name }}"),
	}}
	res := e.Execute(t.Context(), job(t, def, map[string]any{"site": site.URL("")}), &progress{})
	if res.Status != client.RunStatusFailed {
		t.Fatalf("status %s", res.Status)
	}
	for _, want := range []string{`"open_page"`, `"page_name" is not defined`, "site"} {
		if !strings.Contains(res.FailureReason, want) {
			t.Errorf("reason %q lacks %q", res.FailureReason, want)
		}
	}
	if !strings.Contains(string(res.Output), "home_output") {
		t.Errorf("output %s", res.Output)
	}
}

// TestBlocksNeedingAModelFailBeforeStart: on an engine without a model,
// the run fails at once, naming the block, without a browser.
func TestBlocksNeedingAModelFailBeforeStart(t *testing.T) {
	// No browser: the check comes first, so even a missing one is not
	// reached.
	e := newEngine(t, engine.Config{Chromium: filepath.Join(t.TempDir(), "no-chromium")})
	for _, tc := range []struct {
		block client.Block
		want  string
	}{
		{&client.ExtractionBlock{BlockBase: base("extract_prices"), DataExtractionGoal: "prices"},
			`block "extract_prices" (extraction) needs a language model, but this daemon has no language model configured`},
		{&client.ActionBlock{BlockBase: base("smart_click"), NavigationGoal: "click the blue button"},
			`block "smart_click" (action) needs a language model`},
		{&client.TextPromptBlock{BlockBase: base("summarize"), Prompt: "Summarize"}, `block "summarize" (text_prompt) needs a language model`},
		{&client.ConditionalBlock{BlockBase: base("route"), BranchConditions: []client.BranchCondition{
			{Criteria: json.RawMessage(`{"criteria_type":"prompt","expression":"the cart is full"}`)}}},
			`block "route" (conditional): branch 1 has criteria in prose (criteria_type prompt), which a language model judges, but this daemon has no language model configured`},
		{&client.FileDownloadBlock{BlockBase: base("get_file"), NavigationGoal: "find the invoice"},
			`block "get_file" (file_download) needs a language model`},
	} {
		def := client.WorkflowDefinition{Blocks: client.Blocks{
			gotoBlock("first", "http://127.0.0.1:1/"),
			&client.ForLoopBlock{BlockBase: base("loop"), LoopVariableReference: "items", LoopBlocks: client.Blocks{tc.block}},
		}}
		p := &progress{}
		res := e.Execute(t.Context(), job(t, def, nil), p)
		if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, tc.want) {
			t.Errorf("%s: %s %q", tc.block.BlockType(), res.Status, res.FailureReason)
		}
		if p.steps != 0 || res.StepCount != 0 || len(res.Screenshots) != 0 {
			t.Errorf("%s: the run did something: %+v", tc.block.BlockType(), res)
		}
	}

	// Without the check failing, the missing browser is the reason.
	res := e.Execute(t.Context(), job(t, client.WorkflowDefinition{Blocks: client.Blocks{gotoBlock("a", "http://127.0.0.1:1/")}}, nil), &progress{})
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, "apt-get install chromium") {
		t.Errorf("no browser: %s %q", res.Status, res.FailureReason)
	}
	// Task runs need a model.
	task := &executor.Job{RunID: "tsk_1", OrgID: "o_1", RunType: client.RunTypeTaskV1,
		Task: &client.TaskRunRequest{Prompt: "find the price"}, Dir: t.TempDir()}
	res = e.Execute(t.Context(), task, &progress{})
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, "no language model configured") {
		t.Errorf("task run: %s %q", res.Status, res.FailureReason)
	}
}

// TestRetriesAndContinueOnFailure: max_retries tries a block again;
// continue_on_failure lets the run go on; any other failure ends it,
// naming the block.
func TestRetriesAndContinueOnFailure(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	e := newEngine(t, engine.Config{SelectorTimeout: 300 * time.Millisecond})

	missing := click("missing", "#no-such-element")
	missing.MaxRetries = 2
	missing.ContinueOnFailure = true
	def := client.WorkflowDefinition{Blocks: client.Blocks{
		gotoBlock("home", site.URL("/")),
		missing,
		gotoBlock("after", site.URL(testsite.PageProducts)),
	}}
	res := e.Execute(t.Context(), job(t, def, nil), &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("continue_on_failure: %s %q", res.Status, res.FailureReason)
	}
	if res.StepCount != 5 { // home, three attempts of missing, after
		t.Errorf("step count %d, want 5", res.StepCount)
	}
	var out map[string]any
	json.Unmarshal(res.Output, &out)
	if _, ok := out["after_output"]; !ok {
		t.Errorf("output %s", res.Output)
	}
	if _, ok := out["missing_output"]; ok {
		t.Errorf("a failed block has an output: %s", res.Output)
	}

	// The SPA renders its button when the test opens its gate: after the
	// second attempt (300 ms each) has failed, so that a retry finds it.
	// Steps: spa 1, late_button 2, 3, then 4 starts once 3 has failed.
	late := click("late_button", "#open-detail")
	late.MaxRetries = 100 // attempts until the button is there, however slow the machine
	def = client.WorkflowDefinition{Blocks: client.Blocks{
		gotoBlock("spa", site.URL(testsite.PageLateSPA+"?gate=late")),
		late,
		click("fatal", "#not-there-either"),
		gotoBlock("never", site.URL("/")),
	}}
	res = e.Execute(t.Context(), job(t, def, nil), &progress{onStep: func(n int) {
		if n == 4 {
			site.OpenGate("late")
		}
	}})
	if res.Status != client.RunStatusFailed {
		t.Fatalf("status %s", res.Status)
	}
	for _, want := range []string{`Block "fatal" (action) failed`, `no element matches the selector "#not-there-either" within 300 ms`} {
		if !strings.Contains(res.FailureReason, want) {
			t.Errorf("reason %q lacks %q", res.FailureReason, want)
		}
	}
	json.Unmarshal(res.Output, &out)
	if _, ok := out["late_button_output"]; !ok || res.StepCount < 5 {
		t.Errorf("the retried block: steps %d, output %s", res.StepCount, res.Output)
	}
	if _, ok := out["never_output"]; ok {
		t.Errorf("the run went on after a failure: %s", res.Output)
	}
	waitEvent(t, site, testsite.EventSPADetail)
}

// TestCancelStopsPromptly: a canceled run returns without sitting out its
// wait, keeping what it produced.
func TestCancelStopsPromptly(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	e := newEngine(t, engine.Config{})
	def := client.WorkflowDefinition{Blocks: client.Blocks{
		gotoBlock("home", site.URL("/")),
		&client.WaitBlock{BlockBase: base("long_wait"), WaitSec: engine.MaxWaitSec},
		gotoBlock("never", site.URL("/")),
	}}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var canceledAt time.Time
	p := &progress{onStep: func(n int) {
		if n == 2 { // the wait began
			canceledAt = time.Now()
			cancel()
		}
	}}
	res := e.Execute(ctx, job(t, def, nil), p)
	if canceledAt.IsZero() {
		t.Fatalf("the wait never began: %+v", res)
	}
	// A hang guard only, however busy the machine: well under the wait's
	// 5 minutes, which a run that ignored the cancel would sit out.
	if d := time.Since(canceledAt); d > 2*time.Minute {
		t.Errorf("Execute returned %s after the cancel", d)
	}
	if len(res.Screenshots) == 0 || !strings.Contains(string(res.Output), "home_output") {
		t.Errorf("what the run produced was lost: %+v", res)
	}
	if strings.Contains(string(res.Output), "never_output") {
		t.Errorf("the run went on: %s", res.Output)
	}
}
