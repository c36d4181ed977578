package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/executor"
)

// needBrowser skips the test when Chromium is missing (CI has it).
func needBrowser(t testing.TB) {
	t.Helper()
	if _, err := browser.FindChromium(""); err != nil {
		t.Skipf("skipped: Chromium is missing: %v", err)
	}
}

// needFFmpeg skips the test when ffmpeg or ffprobe is missing (CI has
// them).
func needFFmpeg(t testing.TB) {
	t.Helper()
	for _, name := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(name); err != nil {
			t.Skipf("skipped: %s is missing (apt-get install ffmpeg)", name)
		}
	}
}

// newEngine returns an engine that the test closes at its end.
func newEngine(t testing.TB, cfg engine.Config) *engine.Engine {
	t.Helper()
	if cfg.Logger == nil {
		if testing.Verbose() {
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		} else {
			cfg.Logger = slog.New(slog.DiscardHandler)
		}
	}
	e, err := engine.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// progress records what an execution reports.
type progress struct {
	mu     sync.Mutex
	steps  int
	shots  []string
	onStep func(int)
}

func (p *progress) Step(n int) {
	p.mu.Lock()
	p.steps = n
	f := p.onStep
	p.mu.Unlock()
	if f != nil {
		f(n)
	}
}

func (p *progress) Screenshot(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shots = append(p.shots, name)
}

func (p *progress) screenshots() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.shots...)
}

// job returns the job of an agent run of def with the given parameter
// values, in a fresh directory.
func job(t testing.TB, def client.WorkflowDefinition, params map[string]any) *executor.Job {
	t.Helper()
	raw := map[string]json.RawMessage{}
	for k, v := range params {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		raw[k] = b
	}
	return &executor.Job{
		RunID: "wr_1", OrgID: "o_1", RunType: client.RunTypeWorkflowRun,
		Agent:      &client.Agent{Title: "test", WorkflowDefinition: def},
		Parameters: raw, Dir: t.TempDir(),
	}
}

func base(label string) client.BlockBase { return client.BlockBase{Label: label} }

func gotoBlock(label, url string) *client.GotoURLBlock {
	return &client.GotoURLBlock{BlockBase: base(label), URL: url}
}

func click(label, selector string) *client.ActionBlock {
	return &client.ActionBlock{BlockBase: base(label), Selector: selector}
}

func stringParam(key string) client.Parameter {
	return client.Parameter{ParameterType: client.ParameterTypeWorkflow, Key: key, WorkflowParameterType: client.WorkflowParameterString}
}

func jsonParam(key string) client.Parameter {
	return client.Parameter{ParameterType: client.ParameterTypeWorkflow, Key: key, WorkflowParameterType: client.WorkflowParameterJSON}
}

// loopPages are the pages the site agent visits in its loop: the element
// it clicks on each and the event the click makes the page report.
var loopPages = []map[string]string{
	{"path": testsite.PageIndex, "click": "#link-form", "event": ""},
	{"path": testsite.PageShadow, "click": "#shadow-button", "event": testsite.EventShadowClick},
	{"path": testsite.PageFrames, "click": "#frame-button", "event": testsite.EventFrameClick},
	{"path": testsite.PageDialogs, "click": "#confirm-button", "event": testsite.EventDialog},
	{"path": testsite.PageLateSPA, "click": "#open-detail", "event": testsite.EventSPADetail},
	{"path": testsite.PageBig, "click": "#button-442", "event": testsite.EventBigClick},
	{"path": testsite.PageRerender, "click": "#select-item-3", "event": testsite.EventRerenderClick},
}

func loopPagesParam() []any {
	out := make([]any, len(loopPages))
	for i, p := range loopPages {
		out[i] = map[string]any{"path": p["path"], "click": p["click"]}
	}
	return out
}

// siteAgent is an agent of model-free blocks that goes through the test
// site's pages. Its parameters: site (the origin), user, pages (a list of
// {path, click}).
func siteAgent() client.WorkflowDefinition {
	return client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site"), stringParam("user"), jsonParam("pages")},
		Blocks: client.Blocks{
			gotoBlock("open_login", "{{ site }}"+testsite.PageLogin),
			gotoBlock("open_banner", "{{site}}"+testsite.PageCookieBanner),
			click("accept_cookies", "#accept-cookies"),
			click("continue", "xpath=//button[@id='continue-button']"),
			&client.ForLoopBlock{
				BlockBase:            base("visit_pages"),
				LoopOverParameterKey: "pages",
				LoopBlocks: client.Blocks{
					gotoBlock("visit", "{{ site }}{{ current_value.path }}"),
					click("click_it", "{{ current_value.click }}"),
				},
			},
			&client.HTTPRequestBlock{BlockBase: base("fetch_export"), URL: "{{ site }}" + testsite.FileExport},
			&client.HTTPRequestBlock{
				BlockBase: base("post_event"), Method: "post",
				URL:  "{{ site }}/event?kind=http-block&path=/agent",
				Body: json.RawMessage(`{"user":"{{ user }}","export":"{{ fetch_export_output.body.export }}","pages":"{{ visit_pages_output[1].click_it_output.selector }}"}`),
			},
			gotoBlock("open_products", "{{ site }}"+testsite.PageProducts),
			&client.PrintPageBlock{BlockBase: base("print_products"), CustomFilename: "products-{{ user }}", IncludeTimestamp: new(false)},
			gotoBlock("open_downloads", "{{ site }}"+testsite.PageDownload),
			&client.ActionBlock{BlockBase: base("download_report"), Selector: "#report-link", CompleteOnDownload: true},
			&client.FileDownloadBlock{BlockBase: base("download_notes"), URL: "{{ site }}" + testsite.FileNotes, NavigationGoal: "Download the notes"},
			gotoBlock("open_popup", "{{ site }}"+testsite.PagePopup),
			click("open_window", "#open-popup"),
			click("sign_up", "#popup-submit"),
			gotoBlock("open_slow", "{{ site }}"+testsite.SlowPath(200)),
			&client.WaitBlock{BlockBase: base("pause"), WaitSec: 1},
		},
	}
}

// siteAgentLabels are the top-level labels of siteAgent (each has an
// output) and the labels of its loop.
var siteAgentLabels = []string{
	"open_login", "open_banner", "accept_cookies", "continue", "visit_pages", "fetch_export", "post_event",
	"open_products", "print_products", "open_downloads", "download_report", "download_notes",
	"open_popup", "open_window", "sign_up", "open_slow", "pause", "visit", "click_it",
}

// isJPEG reports whether b starts like a JPEG file.
func isJPEG(b []byte) bool { return len(b) > 3 && bytes.Equal(b[:3], []byte{0xFF, 0xD8, 0xFF}) }

// isWebM reports whether b starts like a Matroska/WebM file.
func isWebM(b []byte) bool { return len(b) > 4 && bytes.Equal(b[:4], []byte{0x1A, 0x45, 0xDF, 0xA3}) }

type probe struct {
	Format, Codec string
	Width, Height int
	Seconds       float64
}

// ffprobe reads the first video stream of a file.
func ffprobe(t testing.TB, path string) probe {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0",
		"-show_entries", "stream=codec_name,width,height:format=format_name,duration",
		"-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var v struct {
		Streams []struct {
			CodecName     string `json:"codec_name"`
			Width, Height int
		}
		Format struct {
			FormatName string `json:"format_name"`
			Duration   string
		}
	}
	if err := json.Unmarshal(out, &v); err != nil || len(v.Streams) != 1 {
		t.Fatalf("ffprobe output %s: %v", out, err)
	}
	p := probe{Format: v.Format.FormatName, Codec: v.Streams[0].CodecName, Width: v.Streams[0].Width, Height: v.Streams[0].Height}
	p.Seconds, _ = strconv.ParseFloat(v.Format.Duration, 64)
	return p
}

// readFile reads a file of dir.
func readFile(t testing.TB, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitEvent waits for the site to record an event of kind, bounded by a
// deadline that only catches a hang (a click's request can take seconds to
// reach the site on a busy machine).
func waitEvent(t testing.TB, site *testsite.Site, kind string) testsite.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := site.WaitEvent(ctx, kind)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// discard drains and closes a body.
func discard(r io.ReadCloser) {
	io.Copy(io.Discard, r)
	r.Close()
}
