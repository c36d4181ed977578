package engine_test

// End to end through a real daemon (daemon.Run on loopback, a real store,
// the artifact store) with the engine as its executor and run_action
// engine, driven with the client.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
)

const testKey = "abk_engine_e2e_key"

// startDaemon runs a daemon with the engine and returns a client of it.
func startDaemon(t *testing.T, e *engine.Engine) (*client.Client, func() error) {
	t.Helper()
	addr, stop := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: testKey, Executor: e, Workers: 2})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return c, stop
}

// get fetches a URL (an artifact's signed URL) and returns its body.
func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer discard(resp.Body)
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return b
}

// TestDaemonRunsAnAgent: an agent of model-free blocks created and run
// through the daemon, with its screenshots, recording and downloaded files
// reachable from the run.
func TestDaemonRunsAnAgent(t *testing.T) {
	needBrowser(t)
	needFFmpeg(t)
	site := testsite.Start(t)
	c, _ := startDaemon(t, newEngine(t, engine.Config{Record: true}))
	ctx := t.Context()

	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site"), jsonParam("pages")},
		Blocks: client.Blocks{
			gotoBlock("open_banner", "{{ site }}"+testsite.PageCookieBanner),
			click("accept_cookies", "#accept-cookies"),
			&client.ForLoopBlock{
				BlockBase: base("visit_pages"), LoopOverParameterKey: "pages",
				LoopBlocks: client.Blocks{
					gotoBlock("visit", "{{ site }}{{ current_value.path }}"),
					click("click_it", "{{ current_value.click }}"),
				},
			},
			gotoBlock("open_downloads", "{{ site }}"+testsite.PageDownload),
			&client.ActionBlock{BlockBase: base("download_report"), Selector: "#report-link", CompleteOnDownload: true},
			&client.PrintPageBlock{BlockBase: base("print_downloads"), CustomFilename: "downloads"},
		},
	}
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Site tour", WorkflowDefinition: def}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{
		"site": site.URL(""), "pages": []any{map[string]any{"path": testsite.PageShadow, "click": "#shadow-button"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 200 * time.Millisecond, MaxInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(done.Output, &out); err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"open_banner", "accept_cookies", "visit_pages", "visit", "click_it", "open_downloads", "download_report", "print_downloads"} {
		if _, ok := out[label+"_output"]; !ok {
			t.Errorf("output lacks %s_output: %s", label, done.Output)
		}
	}
	waitEvent(t, site, testsite.EventShadowClick)
	if done.StepCount == nil || *done.StepCount < 7 {
		t.Errorf("step_count %v", done.StepCount)
	}

	if len(done.ScreenshotURLs) < 5 {
		t.Fatalf("%d screenshot_urls", len(done.ScreenshotURLs))
	}
	if b := get(t, done.ScreenshotURLs[0]); !isJPEG(b) {
		t.Errorf("the newest screenshot is not a JPEG: % x", b[:min(8, len(b))])
	}
	if done.RecordingURL == nil {
		t.Fatal("no recording_url")
	}
	video := get(t, *done.RecordingURL)
	if !isWebM(video) {
		t.Fatalf("the recording is not WebM: % x", video[:min(8, len(video))])
	}
	path := filepath.Join(t.TempDir(), "recording.webm")
	if err := os.WriteFile(path, video, 0o600); err != nil {
		t.Fatal(err)
	}
	if pr := ffprobe(t, path); pr.Codec != "vp8" || pr.Seconds <= 0 {
		t.Errorf("recording %+v", pr)
	}
	var report, pdf *client.FileInfo
	for i, f := range done.DownloadedFiles {
		switch {
		case f.Filename != nil && *f.Filename == testsite.ReportFilename:
			report = &done.DownloadedFiles[i]
		case f.Filename != nil && strings.HasPrefix(*f.Filename, "downloads_") && strings.HasSuffix(*f.Filename, ".pdf"):
			pdf = &done.DownloadedFiles[i]
		}
	}
	if report == nil || pdf == nil {
		t.Fatalf("downloaded_files %+v", done.DownloadedFiles)
	}
	if got := get(t, report.URL); string(got) != testsite.ReportCSV {
		t.Errorf("the report reads %q", got)
	}
	if report.FileSize == nil || *report.FileSize != int64(len(testsite.ReportCSV)) || report.Checksum == nil || *report.Checksum == "" {
		t.Errorf("report info %+v", report)
	}
	if got := get(t, pdf.URL); !bytes.HasPrefix(got, []byte("%PDF-")) {
		t.Errorf("the PDF starts with %q", got[:min(8, len(got))])
	}
}

// apiError returns err as a *client.Error, failing the test otherwise.
func apiError(t *testing.T, err error, status int) *client.Error {
	t.Helper()
	var ae *client.Error
	if !errors.As(err, &ae) || ae.StatusCode != status {
		t.Fatalf("want a %d, got %v", status, err)
	}
	return ae
}

// closedURL is a loopback URL where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/"
}

// TestDaemonRunAction: single actions with selectors through the daemon,
// continuing in one workflow run, with their failures, and the sessions'
// end (as at the end of their idle period) with their files.
// TestDaemonRunActionIdle checks the idle period itself: one short enough
// to end this test's sessions could end them between two of its actions on
// a busy machine.
func TestDaemonRunAction(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	e := newEngine(t, engine.Config{Record: true, ActionIdle: time.Hour})
	c, _ := startDaemon(t, e)
	ctx := t.Context()
	form := site.URL(testsite.PageForm)

	// A new workflow run: type into the form, then in the same run (and
	// page) choose a country and submit.
	first, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: form, Action: client.Action{
		Type: client.ActionInputText, Selector: "#text", Value: "Ada Lovelace",
	}})
	if err != nil {
		t.Fatal(err)
	}
	wr := first.WorkflowRunID
	if !strings.HasPrefix(wr, "wr_") || string(first.Result) != `"Ada Lovelace"` {
		t.Fatalf("first action: %+v (%s)", first, first.Result)
	}
	res, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: form, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionSelectOption, Selector: "xpath=//select[@id='country']", Value: "Japan",
	}})
	if err != nil || string(res.Result) != `"Japan"` || res.WorkflowRunID != wr {
		t.Fatalf("select: %+v %v", res, err)
	}
	res, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: form, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionClick, Selector: "#submit-button",
	}})
	if err != nil || string(res.Result) != `"#submit-button"` {
		t.Fatalf("click: %+v %v", res, err)
	}
	sub := waitEvent(t, site, testsite.EventSubmit)
	if sub.Form.Get("text") != "Ada Lovelace" || sub.Form.Get("country") != "jp" {
		t.Errorf("the site received %v", sub.Form)
	}

	// Nothing matches within the timeout: 422 with the reason.
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: form, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionClick, Selector: "#does-not-exist", Timeout: new(300.0),
	}})
	if ae := apiError(t, err, http.StatusUnprocessableEntity); !strings.Contains(ae.Detail, `No element matches the selector "#does-not-exist" within 300 ms`) {
		t.Errorf("detail %q", ae.Detail)
	}
	// A model-driven action: a clear 400, and the session stays.
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: form, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionExtract, Prompt: "the title",
	}})
	if ae := apiError(t, err, http.StatusBadRequest); !strings.Contains(ae.Detail, "needs a language model") {
		t.Errorf("detail %q", ae.Detail)
	}
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: form, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionClick, Intention: "the submit button",
	}})
	if ae := apiError(t, err, http.StatusBadRequest); !strings.Contains(ae.Detail, "without a selector needs a language model") {
		t.Errorf("detail %q", ae.Detail)
	}

	// The run, while its session is open.
	run, err := c.Runs.Get(ctx, wr)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != client.RunStatusRunning || run.RunType != client.RunTypeWorkflowRun || len(run.ScreenshotURLs) == 0 ||
		run.StepCount == nil || *run.StepCount < 4 {
		t.Errorf("the open run: %s %s shots %d steps %v", run.Status, run.RunType, len(run.ScreenshotURLs), run.StepCount)
	}
	if !strings.Contains(string(run.RunRequest), testsite.PageForm) {
		t.Errorf("run_request %s", run.RunRequest)
	}

	// Sign in and upload in a second run (it has its own session).
	login := site.URL(testsite.PageLogin)
	second, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: login, Action: client.Action{Type: client.ActionInputText, Selector: "#username", Value: "grace"}})
	if err != nil {
		t.Fatal(err)
	}
	if second.WorkflowRunID == wr {
		t.Fatal("a request without workflow_run_id continued the first run")
	}
	for _, a := range []client.Action{
		{Type: client.ActionInputText, Selector: "#password", Value: "hopper"},
		{Type: client.ActionClick, Selector: "#login-button"},
	} {
		if _, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: login, WorkflowRunID: second.WorkflowRunID, Action: a}); err != nil {
			t.Fatalf("%s: %v", a.Type, err)
		}
	}
	if ev := waitEvent(t, site, testsite.EventLogin); ev.Form.Get("username") != "grace" {
		t.Errorf("login %v", ev.Form)
	}
	upload := site.URL(testsite.PageUpload)
	for _, a := range []client.Action{
		{Type: client.ActionUploadFile, Selector: "#single-file", FileURL: site.URL(testsite.FileReport)},
		{Type: client.ActionClick, Selector: "#upload-button"},
	} {
		if _, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: upload, WorkflowRunID: second.WorkflowRunID, Action: a}); err != nil {
			t.Fatalf("%s: %v", a.Type, err)
		}
	}
	if ev := waitEvent(t, site, testsite.EventUpload); len(ev.Files) != 1 || ev.Files[0].Name != testsite.ReportFilename || ev.Files[0].Size != int64(len(testsite.ReportCSV)) {
		t.Errorf("upload %+v", ev.Files)
	}
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: upload, WorkflowRunID: second.WorkflowRunID, Action: client.Action{
		Type: client.ActionUploadFile, Selector: "#single-file", FileURL: "file:///etc/passwd",
	}})
	if ae := apiError(t, err, http.StatusBadRequest); ae.Detail != "Unsupported file url" {
		t.Errorf("detail %q", ae.Detail)
	}

	// An unreachable url: 400, and the run it created ends failed.
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: closedURL(t), Action: client.Action{Type: client.ActionClick, Selector: "a"}})
	if ae := apiError(t, err, http.StatusBadRequest); !strings.Contains(ae.Detail, "ERR_CONNECTION_REFUSED") {
		t.Errorf("detail %q", ae.Detail)
	}
	// An unknown run: 404.
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: form, WorkflowRunID: "wr_123", Action: client.Action{Type: client.ActionClick, Selector: "a"}})
	apiError(t, err, http.StatusNotFound)

	// The sessions close (as their idle period would close them) and the
	// runs complete with their files.
	e.EndActionRuns(ctx)
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	run, err = c.Runs.Wait(wctx, wr, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != client.RunStatusCompleted {
		t.Fatalf("after the sessions closed: %s %q", run.Status, run.GetFailureReason())
	}
	if run.RecordingURL == nil || !isWebM(get(t, *run.RecordingURL)) {
		t.Errorf("recording %v", run.RecordingURL)
	}
	if len(run.ScreenshotURLs) < 3 || !isJPEG(get(t, run.ScreenshotURLs[0])) {
		t.Errorf("%d screenshots", len(run.ScreenshotURLs))
	}
	if e.ActionRunOpen(wr) {
		t.Error("the session is still open")
	}
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: form, WorkflowRunID: wr, Action: client.Action{Type: client.ActionClick, Selector: "#submit-button"}})
	if ae := apiError(t, err, http.StatusBadRequest); !strings.Contains(ae.Detail, "has ended") {
		t.Errorf("detail %q", ae.Detail)
	}
}

// TestDaemonRunActionIdle: a run_action session that no action follows
// closes at the end of its idle period, and its run completes; a later
// follow-up is refused, saying why.
func TestDaemonRunActionIdle(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	e := newEngine(t, engine.Config{ActionIdle: time.Second})
	c, _ := startDaemon(t, e)
	ctx := t.Context()
	form := site.URL(testsite.PageForm)
	first, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: form, Action: client.Action{
		Type: client.ActionInputText, Selector: "#text", Value: "Ada Lovelace",
	}})
	if err != nil {
		t.Fatal(err)
	}
	wr := first.WorkflowRunID
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute) // catches a hang only
	defer cancel()
	run, err := c.Runs.Wait(wctx, wr, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != client.RunStatusCompleted {
		t.Fatalf("after the idle period: %s %q", run.Status, run.GetFailureReason())
	}
	if e.ActionRunOpen(wr) {
		t.Error("the session is still open")
	}
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: form, WorkflowRunID: wr, Action: client.Action{Type: client.ActionClick, Selector: "#submit-button"}})
	if ae := apiError(t, err, http.StatusBadRequest); !strings.Contains(ae.Detail, "has ended") {
		t.Errorf("detail %q", ae.Detail)
	}
}

// TestDaemonRunActionStaysOnThePage: a follow-up run_action acts on the
// page it finds unless its url names another document: the url the first
// action asked for (which redirected), the page's url with the fragment a
// router added, and the page's url without it all keep the page, and what
// was typed with it; the Enter typed last adds the item. Another document
// is loaded.
func TestDaemonRunActionStaysOnThePage(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	c, _ := startDaemon(t, newEngine(t, engine.Config{}))
	ctx := t.Context()
	app := site.URL(testsite.PageTodosApp)
	first, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: app, Action: client.Action{
		Type: client.ActionInputText, Selector: "#new-todo", Value: "Buy milk",
	}})
	if err != nil {
		t.Fatal(err)
	}
	wr := first.WorkflowRunID
	for _, u := range []string{app, site.URL(testsite.PageTodos) + "#/all", site.URL(testsite.PageTodos)} {
		if _, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: u, WorkflowRunID: wr, Action: client.Action{
			Type: client.ActionClick, Selector: "#new-todo",
		}}); err != nil {
			t.Fatalf("a follow-up on %s: %v", u, err)
		}
	}
	if _, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: app, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionInputText, Selector: "#new-todo", Value: "\n",
	}}); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, site, testsite.EventTodoAdded); ev.Form.Get("title") != "Buy milk" {
		t.Errorf("added %q: the page was reloaded and lost what was typed", ev.Form.Get("title"))
	}
	// Another document is loaded.
	if _, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: site.URL(testsite.PageForm), WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionInputText, Selector: "#text", Value: "Ada",
	}}); err != nil {
		t.Fatalf("an action on another document: %v", err)
	}
	steps, err := c.Runs.Steps(ctx, wr)
	if err != nil {
		t.Fatal(err)
	}
	var loads []string
	for _, s := range steps {
		if len(s.Actions) > 0 && strings.HasPrefix(s.Actions[0], "goto_url") {
			loads = append(loads, s.Actions[0])
		}
	}
	if len(loads) != 2 || !strings.Contains(loads[0], testsite.PageForm) || !strings.Contains(loads[1], testsite.PageTodosApp) {
		t.Errorf("pages loaded, newest first: %q; want the form, then the todo app once", loads)
	}
}
