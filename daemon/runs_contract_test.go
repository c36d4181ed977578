package daemon_test

// Contract tests of the run routes: the client against a daemon over real
// HTTP on loopback, with a real bbolt file, real artifact files and the
// scripted executor, through every transition and failure path. Webhook
// receivers are httptest servers on loopback that verify every delivery
// with client/webhook on the raw bytes.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/client/webhook"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/api"
	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/runner"
	"github.com/abctl/abctl/daemon/runview"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/daemon/webhooks"
	"github.com/abctl/abctl/internal/loopback"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// runsDeadline bounds every wait of the run tests. It is generous because
// the machine may be slow; no test comes near it when things work.
const runsDeadline = 20 * time.Second

// pollFor polls cond until it holds, failing the test at runsDeadline.
func pollFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(runsDeadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("gave up after %v waiting for %s", runsDeadline, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runsEnvConfig configures newRunsEnv.
type runsEnvConfig struct {
	Workers        int
	WebhookTimeout time.Duration
	Minute         time.Duration
	// Executor executes the runs; nil means the env's scripted executor.
	Executor executor.Executor
}

// runsEnv is the daemon's handler with runs, wired as daemon.Run wires it,
// served by httptest on loopback, with the store at hand so that tests can
// read what the API does not show (webhook deliveries). It has two
// organizations, A and B, and a client for each.
type runsEnv struct {
	t      testing.TB
	url    string
	st     store.Store
	exec   *scripted.Executor
	runner *runner.Runner
	keyA   string
	keyB   string
	orgA   string
	a, b   *client.Client
}

func newRunsEnv(t testing.TB, cfg runsEnvConfig) *runsEnv {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	secret := make([]byte, store.SecretSize)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	st, err := boltstore.Open(filepath.Join(dir, datadir.StoreFileName), store.Options{Secret: secret, RunViews: runview.Views{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	orgA, keyA, err := st.CreateOrganization(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	_, keyB, err := st.CreateOrganization(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	files, err := artifacts.NewStore(filepath.Join(dir, datadir.ArtifactsDirName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	signer, err := artifacts.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	exec := &scripted.Executor{}
	links := &runview.Links{Signer: signer}
	hooks := &runner.Webhooks{Store: st, Sender: &webhooks.Sender{Timeout: cfg.WebhookTimeout, Client: loopback.Client()}, Links: links}
	var ex executor.Executor = exec
	if cfg.Executor != nil {
		ex = cfg.Executor
	}
	rn := runner.New(runner.Config{
		Store: st, Executor: ex, Files: files, Notifier: hooks,
		Workers: max(cfg.Workers, 1), Minute: cfg.Minute,
	})
	runs := &api.Runs{Runner: rn, Files: files, Links: links, Webhooks: hooks}
	srv := httptest.NewServer(api.NewServer(st, nil, api.WithRuns(runs)))
	if err := rn.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// Cleanups run last in, first out: open the gates, close the server,
	// stop the runner, then close the files and the store (above).
	t.Cleanup(rn.Stop)
	t.Cleanup(srv.Close)
	t.Cleanup(exec.ReleaseAll)
	mk := func(key string) *client.Client {
		c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey(key), client.WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return &runsEnv{t: t, url: srv.URL, st: st, exec: exec, runner: rn,
		keyA: keyA, keyB: keyB, orgA: orgA.ID, a: mk(keyA), b: mk(keyB)}
}

// task starts a task run of organization A whose prompt is script.
func (e *runsEnv) task(script string, mod ...func(*client.TaskRunRequest)) *client.Run {
	e.t.Helper()
	req := &client.TaskRunRequest{Prompt: scripted.Prefix + " " + script}
	for _, m := range mod {
		m(req)
	}
	run, err := e.a.Runs.StartTask(e.t.Context(), req)
	if err != nil {
		e.t.Fatalf("StartTask(%q): %v", script, err)
	}
	return run
}

// blocked waits until the run waits at its gate.
func (e *runsEnv) blocked(gate string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), runsDeadline)
	defer cancel()
	if err := e.exec.WaitBlocked(ctx, gate); err != nil {
		e.t.Fatal(err)
	}
}

// progressed returns run id of organization A once shown reports what its
// executor reported: the run writes its progress (its start, steps,
// screenshots, blocks) behind it, so it shows a moment after the executor
// reported it. It fails the test after runsDeadline.
func (e *runsEnv) progressed(id string, shown func(*client.Run) bool) *client.Run {
	e.t.Helper()
	deadline := time.Now().Add(runsDeadline)
	for {
		r, err := e.a.Runs.Get(e.t.Context(), id)
		if err != nil {
			e.t.Fatal(err)
		}
		if shown(r) {
			return r
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("run %s after %v: status %s, %d steps, %d screenshots: not what its executor reported", id, runsDeadline, r.Status, r.GetStepCount(), len(r.ScreenshotURLs))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// record reads a run of organization A from the store.
func (e *runsEnv) record(id string) *store.RunRecord {
	e.t.Helper()
	rec, err := e.st.Runs().Get(context.Background(), e.orgA, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return rec
}

// settled waits until a run of organization A is terminal with its webhook
// delivery recorded (or none to send), and returns it as GET answers.
func (e *runsEnv) settled(id string) *client.Run {
	e.t.Helper()
	pollFor(e.t, "run "+id+" to end and record its webhook", func() bool {
		rec := e.record(id)
		return rec.Terminal() && (rec.WebhookURL == "" || rec.Webhook != nil)
	})
	run, err := e.a.Runs.Get(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return run
}

// waitRun waits with the client until the run is terminal.
func waitRun(t *testing.T, c *client.Client, id string) *client.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runsDeadline)
	defer cancel()
	run, err := c.Runs.Wait(ctx, id, &client.WaitOptions{Interval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("Wait(%s): %v (last seen %+v)", id, err, run)
	}
	return run
}

// apiStatus returns the HTTP status of a client error, or 0.
func apiStatus(err error) int {
	var ae *client.Error
	if errors.As(err, &ae) {
		return ae.StatusCode
	}
	return 0
}

// rawPost sends a request by hand, for bodies the client does not send.
func rawPost(t *testing.T, base, key, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// fetch GETs a URL (an artifact's signed URL) with no key and returns the
// body.
func fetch(t *testing.T, url string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return b
}

// deadURL returns a loopback URL nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/hook"
}

// sinkDelivery is one webhook a sink received and verified.
type sinkDelivery struct {
	Raw       []byte
	Signature string
	Payload   webhook.Payload
}

// webhookSink is a webhook receiver on loopback: it verifies every
// delivery on the raw bytes with webhook.Handler and again with
// webhook.Verify, records it, and answers as told: 200 (the default),
// another status, never (until the sender gives up), or after hold is
// released.
type webhookSink struct {
	t    *testing.T
	key  string
	srv  *httptest.Server
	URL  string
	quit chan struct{}

	mu       sync.Mutex
	status   int
	hang     bool
	hold     chan struct{}
	hits     int
	rejected int
	got      []sinkDelivery
}

func newWebhookSink(t *testing.T, key string) *webhookSink {
	t.Helper()
	s := &webhookSink{t: t, key: key, status: http.StatusOK, quit: make(chan struct{})}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		sig := r.Header.Get(webhook.SignatureHeader)
		if err := webhook.Verify(s.key, raw, sig); err != nil {
			t.Errorf("webhook.Verify after webhook.Handler: %v", err)
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		p, ok := webhook.PayloadFromContext(r.Context())
		if !ok {
			t.Error("webhook.Handler passed no payload")
			return
		}
		s.mu.Lock()
		s.got = append(s.got, sinkDelivery{Raw: raw, Signature: sig, Payload: *p})
		status, hang, hold := s.status, s.hang, s.hold
		s.mu.Unlock()
		if hang || hold != nil {
			timer := time.NewTimer(runsDeadline)
			defer timer.Stop()
			select {
			case <-hold: // nil when hanging: never ready
			case <-r.Context().Done():
				return
			case <-s.quit:
				return
			case <-timer.C:
				return
			}
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "receiver answers %d", status)
	})
	verified := webhook.Handler(key, inner)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits++
		s.mu.Unlock()
		verified.ServeHTTP(w, r)
	}))
	s.URL = s.srv.URL + "/hook"
	t.Cleanup(func() {
		close(s.quit)
		s.srv.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.hits != len(s.got) {
			t.Errorf("webhook sink: %d requests, %d verified deliveries", s.hits, len(s.got))
		}
	})
	return s
}

func (s *webhookSink) answer(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

func (s *webhookSink) hangUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = true
}

// holdAnswers makes the sink hold its answers until the returned function
// is called.
func (s *webhookSink) holdAnswers() (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	s.hold = ch
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.hold = nil
			s.mu.Unlock()
			close(ch)
		})
	}
}

// count returns how many deliveries the sink verified.
func (s *webhookSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

// forRun returns the deliveries received for a run.
func (s *webhookSink) forRun(id string) []sinkDelivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sinkDelivery
	for _, d := range s.got {
		if d.Payload.RunID == id {
			out = append(out, d)
		}
	}
	return out
}

// wait waits until the sink has received n deliveries for a run, and
// returns them.
func (s *webhookSink) wait(id string, n int) []sinkDelivery {
	s.t.Helper()
	pollFor(s.t, fmt.Sprintf("%d webhooks of %s", n, id), func() bool { return len(s.forRun(id)) >= n })
	return s.forRun(id)
}

// TestStartRunsAnswerQueued: runs start at once in status queued with the
// request echoed; the engine decides the run type and the id prefix;
// POST /v1/runs is POST /v1/run/tasks.
func TestStartRunsAnswerQueued(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 2})
	ctx := t.Context()
	cases := []struct {
		engine client.RunEngine
		typ    client.RunType
		prefix string
	}{
		{"", client.RunTypeTaskV1, "tsk_"},
		{client.EngineSkyvernV1, client.RunTypeTaskV1, "tsk_"},
		{client.EngineSkyvernV2, client.RunTypeTaskV2, "tsk_v2_"},
	}
	for _, tc := range cases {
		run := e.task("steps=1", func(r *client.TaskRunRequest) {
			r.Engine, r.URL, r.Title = tc.engine, "example.com/start", "a title"
		})
		if run.Status != client.RunStatusQueued || run.RunType != tc.typ || !strings.HasPrefix(run.RunID, tc.prefix) ||
			(tc.typ == client.RunTypeTaskV1 && strings.HasPrefix(run.RunID, "tsk_v2_")) {
			t.Errorf("engine %q: status %s type %s id %s", tc.engine, run.Status, run.RunType, run.RunID)
		}
		if run.QueuedAt == nil || run.StartedAt != nil || run.FinishedAt != nil || run.GetAppURL() != e.url+"/v1/runs/"+run.RunID {
			t.Errorf("engine %q: queued_at %v started_at %v finished_at %v app_url %q", tc.engine, run.QueuedAt, run.StartedAt, run.FinishedAt, run.GetAppURL())
		}
		echo, err := run.TaskRequest()
		if err != nil || echo == nil || echo.Prompt != scripted.Prefix+" steps=1" || echo.URL != "https://example.com/start" || echo.Title != "a title" {
			t.Errorf("engine %q: run_request %s (%v)", tc.engine, run.RunRequest, err)
		}
		if done := waitRun(t, e.a, run.RunID); done.Status != client.RunStatusCompleted {
			t.Errorf("engine %q: ended %s %q", tc.engine, done.Status, done.GetFailureReason())
		}
	}
	for _, engine := range []client.RunEngine{client.EngineSkyvernV3, client.EngineOpenAICUA, "bogus"} {
		_, err := e.a.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: "x", Engine: engine})
		var ae *client.Error
		if !errors.As(err, &ae) || ae.StatusCode != 400 || !strings.Contains(ae.Detail, "invalid agent engine") {
			t.Errorf("engine %q: %v, want 400 invalid agent engine", engine, err)
		}
	}

	// POST /v1/runs, as in the authentication example.
	code, body := rawPost(t, e.url, e.keyA, "/v1/runs", `{"url":"https://example.com","prompt":"script: steps=2"}`)
	var run client.Run
	if code != 200 || json.Unmarshal(body, &run) != nil {
		t.Fatalf("POST /v1/runs: %d %s", code, body)
	}
	if run.Status != client.RunStatusQueued || run.RunType != client.RunTypeTaskV1 || !strings.HasPrefix(run.RunID, "tsk_") {
		t.Errorf("POST /v1/runs: %s", body)
	}
	if echo, _ := run.TaskRequest(); echo == nil || echo.Prompt != "script: steps=2" {
		t.Errorf("POST /v1/runs echo: %s", run.RunRequest)
	}
	if done := waitRun(t, e.a, run.RunID); done.Status != client.RunStatusCompleted || done.GetStepCount() != 2 {
		t.Errorf("POST /v1/runs run: %s, %d steps", done.Status, done.GetStepCount())
	}
	if code, body := rawPost(t, e.url, e.keyA, "/v1/runs", `{"url":"https://example.com"}`); code != 422 {
		t.Errorf("POST /v1/runs without a prompt: %d %s", code, body)
	}
	if code, body := rawPost(t, e.url, e.keyA, "/v1/runs", `{"prompt":"x","engine":"ui-tars"}`); code != 400 || !strings.Contains(string(body), "invalid agent engine") {
		t.Errorf("POST /v1/runs with another engine: %d %s", code, body)
	}
}

// TestRunLifecycleAndResults follows a run through queued, running and
// completed, and reads everything it produced: output, errors, steps,
// screenshots newest first, the recording and downloads, each openable
// through its signed URL with the bytes the executor wrote.
func TestRunLifecycleAndResults(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	ctx := t.Context()
	run := e.task(`steps=3;screenshots=2;block;recording;downloads=2;errors=[{"error_code":"soft","reasoning":"a note"}];output={"price":"12.50","n":3}`)
	id := run.RunID

	// Running: started, not finished, what it has produced so far shown
	// (written behind the run: soon after the executor reported it).
	e.blocked(id)
	mid := e.progressed(id, func(r *client.Run) bool { return r.GetStepCount() == 3 && len(r.ScreenshotURLs) == 2 })
	if mid.Status != client.RunStatusRunning || mid.StartedAt == nil || mid.FinishedAt != nil || mid.GetStepCount() != 3 || len(mid.ScreenshotURLs) != 2 {
		t.Errorf("while running: status %s started %v finished %v steps %d screenshots %d", mid.Status, mid.StartedAt, mid.FinishedAt, mid.GetStepCount(), len(mid.ScreenshotURLs))
	}
	e.exec.Release(id)
	done := waitRun(t, e.a, id)

	if done.Status != client.RunStatusCompleted || done.FailureReason != nil {
		t.Fatalf("ended %s %q", done.Status, done.GetFailureReason())
	}
	var out struct {
		Price string `json:"price"`
		N     int    `json:"n"`
	}
	if err := done.DecodeOutput(&out); err != nil || out.Price != "12.50" || out.N != 3 {
		t.Errorf("output %s: %v", done.Output, err)
	}
	if len(done.Errors) != 1 || !strings.Contains(string(done.Errors[0]), `"error_code":"soft"`) {
		t.Errorf("errors %s", done.Errors)
	}
	if done.GetStepCount() != 3 {
		t.Errorf("step_count %d", done.GetStepCount())
	}
	if done.GetAppURL() != e.url+"/v1/runs/"+id {
		t.Errorf("app_url %q", done.GetAppURL())
	}
	if done.QueuedAt == nil || done.StartedAt == nil || done.FinishedAt == nil ||
		done.QueuedAt.Before(done.CreatedAt.Time) || done.StartedAt.Before(done.QueuedAt.Time) || done.FinishedAt.Before(done.StartedAt.Time) {
		t.Errorf("timestamps created %v queued %v started %v finished %v", done.CreatedAt, done.QueuedAt, done.StartedAt, done.FinishedAt)
	}

	job, ok := e.exec.Job(id)
	if !ok {
		t.Fatal("the executor never saw the run")
	}
	file := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(job.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if len(done.ScreenshotURLs) != 2 {
		t.Fatalf("screenshot_urls %v", done.ScreenshotURLs)
	}
	for i, url := range done.ScreenshotURLs { // newest first
		want := file(scripted.ScreenshotName(2 - i))
		if got := fetch(t, url); !bytes.Equal(got, want) {
			t.Errorf("screenshot_urls[%d] serves %d bytes, not screenshot %d", i, len(got), 2-i)
		}
	}
	if got := fetch(t, done.GetRecordingURL()); !bytes.Equal(got, file(scripted.RecordingName)) {
		t.Errorf("recording_url serves %q", got)
	}
	if len(done.DownloadedFiles) != 2 {
		t.Fatalf("downloaded_files %+v", done.DownloadedFiles)
	}
	for i, f := range done.DownloadedFiles {
		want := file(scripted.DownloadName(i + 1))
		if got := fetch(t, f.URL); !bytes.Equal(got, want) {
			t.Errorf("downloaded_files[%d] serves %q", i, got)
		}
		if f.Filename == nil || *f.Filename != scripted.DownloadName(i+1) || f.FileSize == nil || *f.FileSize != int64(len(want)) || f.Checksum == nil || len(*f.Checksum) != 64 {
			t.Errorf("downloaded_files[%d] = %+v", i, f)
		}
	}

	arts, err := e.a.Runs.ListArtifacts(ctx, id, nil)
	if err != nil || len(arts) != 5 {
		t.Fatalf("artifacts: %d, %v", len(arts), err)
	}
	shots, err := e.a.Runs.ListArtifacts(ctx, id, &client.ListArtifactsOptions{Types: []client.ArtifactType{client.ArtifactScreenshot}})
	if err != nil || len(shots) != 2 {
		t.Errorf("screenshot artifacts: %d, %v", len(shots), err)
	}

	// Failures report their status and reason.
	for _, tc := range []struct {
		script string
		status client.RunStatus
	}{
		{"steps=2;status=terminated;reason=The login is blocked", client.RunStatusTerminated},
		{"steps=1;status=failed;reason=The browser crashed", client.RunStatusFailed},
	} {
		run := waitRun(t, e.a, e.task(tc.script).RunID)
		if run.Status != tc.status || !strings.Contains(run.GetFailureReason(), "The ") || run.FinishedAt == nil {
			t.Errorf("%s: %s %q", tc.script, run.Status, run.GetFailureReason())
		}
	}

	// The task's step limit reaches the executor, which ends the run
	// timed_out.
	limited := waitRun(t, e.a, e.task("steps=10;screenshots=10", func(r *client.TaskRunRequest) { r.MaxSteps = client.Ptr(3) }).RunID)
	if limited.Status != client.RunStatusTimedOut || limited.GetStepCount() != 3 || len(limited.ScreenshotURLs) != 3 || limited.GetFailureReason() == "" {
		t.Errorf("step limit: %s, %d steps, %d screenshots, %q", limited.Status, limited.GetStepCount(), len(limited.ScreenshotURLs), limited.GetFailureReason())
	}
	if job, _ := e.exec.Job(limited.RunID); job.MaxSteps != 3 {
		t.Errorf("Job.MaxSteps %d, want 3", job.MaxSteps)
	}
}

// agentForRuns creates an agent of organization A with a script parameter
// (default one step), a required integer and a boolean with a default.
func agentForRuns(t testing.TB, c *client.Client, hook string) *client.Agent {
	t.Helper()
	def := &client.AgentDefinition{
		Title:              "Scripted agent",
		WebhookCallbackURL: hook,
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: []client.Parameter{
				{Key: scripted.ParamKey, ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterString, DefaultValue: json.RawMessage(`"steps=1"`)},
				{Key: "count", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterInteger},
				{Key: "flag", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterBoolean, DefaultValue: json.RawMessage(`true`)},
			},
			Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"}},
		},
	}
	agent, err := c.Agents.Create(t.Context(), def, nil)
	if err != nil {
		t.Fatal(err)
	}
	return agent
}

// TestAgentRuns: parameters are checked and defaulted, both names of the
// agent id are accepted, the request's webhook_url overrides the agent's,
// x-max-steps-override reaches the executor, and a run whose agent was
// deleted before it started fails with its webhook sent.
func TestAgentRuns(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	ctx := t.Context()
	agentHook, runHook := newWebhookSink(t, e.keyA), newWebhookSink(t, e.keyA)
	agent := agentForRuns(t, e.a, agentHook.URL)
	wpid := agent.WorkflowPermanentID

	for _, tc := range []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"missing required", map[string]any{}, "count"},
		{"wrong type", map[string]any{"count": "many"}, "count"},
		{"wrong boolean", map[string]any{"count": 1, "flag": "perhaps"}, "flag"},
	} {
		_, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: wpid, Parameters: tc.params})
		var ae *client.Error
		if !errors.As(err, &ae) || ae.StatusCode != 400 || !strings.Contains(ae.Detail, tc.want) {
			t.Errorf("%s: %v, want 400 naming %s", tc.name, err, tc.want)
		}
	}
	if _, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: "wpid_1"}); apiStatus(err) != 404 {
		t.Errorf("unknown agent: %v", err)
	}

	// Defaults applied, "5" read as an integer, the agent's webhook.
	run, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: wpid, Parameters: map[string]any{"count": "5"}})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != client.RunStatusQueued || run.RunType != client.RunTypeWorkflowRun || !strings.HasPrefix(run.RunID, "wr_") {
		t.Errorf("agent run: %s %s %s", run.Status, run.RunType, run.RunID)
	}
	if echo, err := run.AgentRequest(); err != nil || echo == nil || echo.AgentID != wpid {
		t.Errorf("run_request %s (%v)", run.RunRequest, err)
	}
	if done := e.settled(run.RunID); done.Status != client.RunStatusCompleted {
		t.Errorf("agent run ended %s %q", done.Status, done.GetFailureReason())
	}
	job, _ := e.exec.Job(run.RunID)
	if job.Agent == nil || job.Agent.WorkflowPermanentID != wpid || string(job.Parameters["count"]) != "5" ||
		string(job.Parameters["flag"]) != "true" || string(job.Parameters[scripted.ParamKey]) != `"steps=1"` || job.MaxSteps != 0 {
		t.Errorf("job: agent %v parameters %s max steps %d", job.Agent != nil, job.Parameters, job.MaxSteps)
	}
	if d := agentHook.wait(run.RunID, 1); d[0].Payload.Status != client.RunStatusCompleted || d[0].Payload.RunID != run.RunID {
		t.Errorf("agent webhook payload %s", d[0].Raw)
	}

	// agent_id, the other name; webhook_url overrides; the step limit
	// header reaches the executor, which ends the run timed_out.
	code, body := rawPost(t, e.url, e.keyA, "/v1/run/agents",
		fmt.Sprintf(`{"agent_id":%q,"parameters":{"count":1,"script":"steps=6"},"webhook_url":%q}`, wpid, runHook.URL))
	if code != 200 {
		t.Fatalf("agent_id: %d %s", code, body)
	}
	var viaAlias client.Run
	if err := json.Unmarshal(body, &viaAlias); err != nil || viaAlias.RunType != client.RunTypeWorkflowRun {
		t.Fatalf("agent_id: %s", body)
	}
	e.settled(viaAlias.RunID)
	if d := runHook.wait(viaAlias.RunID, 1); d[0].Payload.Status != client.RunStatusCompleted {
		t.Errorf("override webhook: %s", d[0].Raw)
	}

	limited, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: wpid, WebhookURL: runHook.URL,
		Parameters: map[string]any{"count": 2, "script": "steps=6;screenshots=6"}, MaxStepsOverride: client.Ptr(2)})
	if err != nil {
		t.Fatal(err)
	}
	if done := e.settled(limited.RunID); done.Status != client.RunStatusTimedOut || done.GetStepCount() != 2 || len(done.ScreenshotURLs) != 2 {
		t.Errorf("step limit: %s, %d steps, %d screenshots", done.Status, done.GetStepCount(), len(done.ScreenshotURLs))
	}
	if job, _ := e.exec.Job(limited.RunID); job.MaxSteps != 2 {
		t.Errorf("Job.MaxSteps %d, want 2", job.MaxSteps)
	}
	if d := runHook.wait(limited.RunID, 1); d[0].Payload.Status != client.RunStatusTimedOut || d[0].Payload.StepCount == nil || *d[0].Payload.StepCount != 2 {
		t.Errorf("step limit webhook: %s", d[0].Raw)
	}
	if n := len(agentHook.forRun(viaAlias.RunID)) + len(agentHook.forRun(limited.RunID)); n != 0 {
		t.Errorf("the agent's webhook got %d deliveries of runs that overrode it", n)
	}

	// The agent is deleted while its run waits in the queue.
	blocker := e.task("block")
	e.blocked(blocker.RunID)
	orphan, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: wpid, Parameters: map[string]any{"count": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.a.Agents.Delete(ctx, wpid); err != nil {
		t.Fatal(err)
	}
	e.exec.Release(blocker.RunID)
	done := e.settled(orphan.RunID)
	if done.Status != client.RunStatusFailed || !strings.Contains(done.GetFailureReason(), "deleted") {
		t.Errorf("run of a deleted agent: %s %q", done.Status, done.GetFailureReason())
	}
	if _, ok := e.exec.Job(orphan.RunID); ok {
		t.Error("the run of a deleted agent was executed")
	}
	if d := agentHook.wait(orphan.RunID, 1); d[0].Payload.Status != client.RunStatusFailed || d[0].Payload.FailureReason == nil {
		t.Errorf("deleted agent's run webhook: %s", d[0].Raw)
	}

	e.runner.Stop()
	for _, s := range []*webhookSink{agentHook, runHook} {
		for _, id := range []string{run.RunID, viaAlias.RunID, limited.RunID, orphan.RunID} {
			if n := len(s.forRun(id)); n > 1 {
				t.Errorf("%s: %d webhooks", id, n)
			}
		}
	}
}

// TestCancelRuns: a queued run is canceled at once, a running one soon,
// keeping what it produced; an ended one stays as it was; bulk cancel
// takes at most 100 ids and tells cancelled from failed. Each canceled run
// sends one webhook.
func TestCancelRuns(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	ctx := t.Context()
	sink := newWebhookSink(t, e.keyA)
	hook := func(r *client.TaskRunRequest) { r.WebhookURL = sink.URL }

	running := e.task("steps=2;screenshots=2;block", hook)
	e.blocked(running.RunID)
	queued := e.task("steps=1", hook)

	if err := e.a.Runs.Cancel(ctx, queued.RunID); err != nil {
		t.Fatal(err)
	}
	got, err := e.a.Runs.Get(ctx, queued.RunID)
	if err != nil || got.Status != client.RunStatusCanceled || got.FinishedAt == nil {
		t.Fatalf("queued run right after cancel: %+v %v", got, err)
	}

	if err := e.a.Runs.Cancel(ctx, running.RunID); err != nil {
		t.Fatal(err)
	}
	// The contract: a running run reaches canceled within 2 s.
	end := time.Now().Add(2 * time.Second)
	for {
		got, err = e.a.Runs.Get(ctx, running.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == client.RunStatusCanceled || time.Now().After(end) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got.Status != client.RunStatusCanceled || got.GetStepCount() != 2 || len(got.ScreenshotURLs) != 2 || got.FinishedAt == nil {
		t.Fatalf("running run 2 s after cancel: %s, %d steps, %d screenshots", got.Status, got.GetStepCount(), len(got.ScreenshotURLs))
	}
	job, _ := e.exec.Job(running.RunID)
	if b := fetch(t, got.ScreenshotURLs[0]); !bytes.Equal(b, scripted.ScreenshotPNG(running.RunID, 2)) || job.Dir == "" {
		t.Error("the canceled run's newest screenshot does not open")
	}
	for _, id := range []string{queued.RunID, running.RunID} {
		if d := sink.wait(id, 1); d[0].Payload.Status != client.RunStatusCanceled {
			t.Errorf("%s webhook: %s", id, d[0].Raw)
		}
	}
	if _, ok := e.exec.Job(queued.RunID); ok {
		t.Error("the run canceled while queued was executed")
	}

	// Canceling an ended run is a 200 no-op.
	ended := e.settled(e.task("steps=1;output={\"kept\":true}", hook).RunID)
	if err := e.a.Runs.Cancel(ctx, ended.RunID); err != nil {
		t.Errorf("cancel of an ended run: %v", err)
	}
	if again, _ := e.a.Runs.Get(ctx, ended.RunID); again.Status != client.RunStatusCompleted || string(again.Output) != `{"kept":true}` {
		t.Errorf("an ended run changed on cancel: %s %s", again.Status, again.Output)
	}
	if err := e.a.Runs.Cancel(ctx, "tsk_404"); apiStatus(err) != 404 {
		t.Errorf("cancel of an unknown run: %v", err)
	}

	// Bulk.
	blocker := e.task("block", hook)
	e.blocked(blocker.RunID)
	q1, q2 := e.task("steps=1", hook), e.task("steps=1", hook)
	res, err := e.a.Runs.CancelMany(ctx, []string{q1.RunID, q2.RunID, ended.RunID, "tsk_404", q1.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Cancelled, []string{q1.RunID, q2.RunID, ended.RunID}) || !slices.Equal(res.Failed, []string{"tsk_404"}) {
		t.Errorf("bulk cancel: %+v", res)
	}
	for _, id := range []string{q1.RunID, q2.RunID} {
		if r, _ := e.a.Runs.Get(ctx, id); r.Status != client.RunStatusCanceled {
			t.Errorf("%s after bulk cancel: %s", id, r.Status)
		}
	}
	if r, _ := e.a.Runs.Get(ctx, ended.RunID); r.Status != client.RunStatusCompleted {
		t.Errorf("ended run after bulk cancel: %s", r.Status)
	}
	ids := make([]string, 101)
	for i := range ids {
		ids[i] = fmt.Sprintf("tsk_%d", i+1)
	}
	if _, err := e.a.Runs.CancelMany(ctx, ids); apiStatus(err) != 422 {
		t.Errorf("bulk cancel of 101 ids: %v, want 422", err)
	}
	if res, err := e.a.Runs.CancelMany(ctx, ids[:100]); err != nil || len(res.Failed) != 100 || len(res.Cancelled) != 0 {
		t.Errorf("bulk cancel of 100 unknown ids: %v", err)
	}
	if code, body := rawPost(t, e.url, e.keyA, "/v1/runs/cancel", `{}`); code != 422 {
		t.Errorf("bulk cancel without run_ids: %d %s", code, body)
	}
	e.exec.Release(blocker.RunID)
	e.settled(blocker.RunID)

	e.runner.Stop()
	for _, id := range []string{running.RunID, queued.RunID, ended.RunID, q1.RunID, q2.RunID, blocker.RunID} {
		if n := len(sink.forRun(id)); n != 1 {
			t.Errorf("%s: %d webhooks, want 1", id, n)
		}
	}
}

// TestWebhookDelivery: a delivery is signed with the key that started the
// run and verifies on the raw bytes; a receiver that answers 500, never
// answers (within a short WebhookTimeout) or cannot be reached turns the
// run failed with a reason saying why, keeping its output. One webhook per
// run.
func TestWebhookDelivery(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 2})
	// The short timeout has its own daemon, so that no answer that is
	// merely slow on a busy machine counts as a timeout.
	short := newRunsEnv(t, runsEnvConfig{Workers: 1, WebhookTimeout: 300 * time.Millisecond})
	ok, fails, hangs := newWebhookSink(t, e.keyA), newWebhookSink(t, e.keyA), newWebhookSink(t, short.keyA)
	fails.answer(http.StatusInternalServerError)
	hangs.hangUp()
	const output = `{"answer":42}`
	startIn := func(e *runsEnv, url string) string {
		return e.task("steps=1;screenshots=1;output="+output, func(r *client.TaskRunRequest) { r.WebhookURL = url }).RunID
	}
	start := func(url string) string { return startIn(e, url) }

	good := start(ok.URL)
	run := e.settled(good)
	if run.Status != client.RunStatusCompleted {
		t.Errorf("delivered: %s %q", run.Status, run.GetFailureReason())
	}
	d := ok.wait(good, 1)[0]
	if err := webhook.Verify(e.keyA, d.Raw, d.Signature); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if webhook.Verify(e.keyB, d.Raw, d.Signature) == nil {
		t.Error("the delivery verifies with another organization's key")
	}
	var p webhook.Payload
	if err := json.Unmarshal(d.Raw, &p); err != nil || p.RunID != good || p.Status != client.RunStatusCompleted ||
		string(p.Output) != output || len(p.ScreenshotURLs) != 1 || p.RunType != client.RunTypeTaskV1 {
		t.Errorf("payload %s (%v)", d.Raw, err)
	}
	if rec := e.record(good); rec.Webhook == nil || rec.Webhook.StatusCode != 200 || rec.Webhook.Error != "" || rec.Webhook.URL != ok.URL {
		t.Errorf("recorded delivery %+v", rec.Webhook)
	}

	for _, tc := range []struct {
		name, url string
		e         *runsEnv
		want      []string
	}{
		{"500", fails.URL, e, []string{"500", "receiver answers 500"}},
		{"timeout", hangs.URL, short, []string{"timed out after 0.3 seconds"}},
		{"unreachable", deadURL(t), e, []string{"Could not reach"}},
	} {
		id := startIn(tc.e, tc.url)
		run := tc.e.settled(id)
		reason := run.GetFailureReason()
		if run.Status != client.RunStatusFailed || !strings.Contains(reason, "webhook could not be sent") || !strings.Contains(reason, tc.url) {
			t.Errorf("%s: %s %q", tc.name, run.Status, reason)
		}
		for _, w := range tc.want {
			if !strings.Contains(reason, w) {
				t.Errorf("%s: failure_reason %q lacks %q", tc.name, reason, w)
			}
		}
		if string(run.Output) != output || run.GetStepCount() != 1 || len(run.ScreenshotURLs) != 1 {
			t.Errorf("%s: the run lost what it produced: output %s", tc.name, run.Output)
		}
		if rec := tc.e.record(id); rec.Webhook == nil || rec.Webhook.Error == "" {
			t.Errorf("%s: recorded delivery %+v", tc.name, rec.Webhook)
		}
	}
	if n := fails.count() + hangs.count(); n != 2 {
		t.Errorf("the failing receivers got %d deliveries, want 2", n)
	}

	e.runner.Stop()
	short.runner.Stop()
	for _, s := range []*webhookSink{ok, fails, hangs} {
		s.mu.Lock()
		if s.hits != 1 {
			t.Errorf("a receiver got %d requests, want 1", s.hits)
		}
		s.mu.Unlock()
	}
}

// TestRetryWebhook: retry_webhook re-sends the webhook of an ended run, to
// its URL or another, answers before the receiver does, and records the
// delivery; not before the run ends, not without a URL.
func TestRetryWebhook(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	ctx := t.Context()
	first, other := newWebhookSink(t, e.keyA), newWebhookSink(t, e.keyA)

	id := e.task(`steps=1;output={"a":1}`, func(r *client.TaskRunRequest) { r.WebhookURL = first.URL }).RunID
	e.settled(id)
	orig := first.wait(id, 1)[0]

	// To another URL: the answer comes while the receiver still holds its
	// reply.
	release := other.holdAnswers()
	defer release()
	replay, err := e.a.Runs.RetryWebhook(ctx, id, &client.RetryWebhookRequest{WebhookURL: other.URL})
	if err != nil {
		t.Fatal(err)
	}
	if replay == nil || replay.RunID != id || replay.TargetWebhookURL != other.URL || replay.DefaultWebhookURL == nil || *replay.DefaultWebhookURL != first.URL {
		t.Fatalf("replay %+v", replay)
	}
	got := other.wait(id, 1)[0]
	if rec := e.record(id); len(rec.WebhookRetries) != 0 {
		t.Errorf("a retry recorded before the receiver answered: %+v", rec.WebhookRetries)
	}
	release()
	if string(got.Raw) != replay.Payload {
		t.Errorf("the receiver got\n%s\nthe answer said\n%s", got.Raw, replay.Payload)
	}
	if got.Payload.Status != client.RunStatusCompleted || string(got.Payload.Output) != `{"a":1}` || got.Payload.RunID != orig.Payload.RunID {
		t.Errorf("retried payload %s", got.Raw)
	}
	pollFor(t, "the retry's delivery to be recorded", func() bool { return len(e.record(id).WebhookRetries) == 1 })
	if r := e.record(id).WebhookRetries[0]; r.URL != other.URL || r.StatusCode != 200 || r.Error != "" {
		t.Errorf("recorded retry %+v", r)
	}

	// To its own URL, with no body.
	if _, err := e.a.Runs.RetryWebhook(ctx, id, nil); err != nil {
		t.Fatal(err)
	}
	first.wait(id, 2)
	pollFor(t, "the second retry to be recorded", func() bool { return len(e.record(id).WebhookRetries) == 2 })

	// A failing target is recorded too; the run stays as it was.
	if _, err := e.a.Runs.RetryWebhook(ctx, id, &client.RetryWebhookRequest{WebhookURL: deadURL(t)}); err != nil {
		t.Fatal(err)
	}
	pollFor(t, "the failed retry to be recorded", func() bool { return len(e.record(id).WebhookRetries) == 3 })
	if rec := e.record(id); rec.WebhookRetries[2].Error == "" || rec.Status != client.RunStatusCompleted {
		t.Errorf("failed retry: %+v, run %s", rec.WebhookRetries[2], rec.Status)
	}

	// Not before the run ends; not without a URL.
	blocked := e.task("block", func(r *client.TaskRunRequest) { r.WebhookURL = first.URL })
	e.blocked(blocked.RunID)
	if _, err := e.a.Runs.RetryWebhook(ctx, blocked.RunID, nil); apiStatus(err) != 400 {
		t.Errorf("retry of a running run: %v, want 400", err)
	}
	e.exec.Release(blocked.RunID)
	e.settled(blocked.RunID)
	silent := e.settled(e.task("steps=1").RunID)
	if _, err := e.a.Runs.RetryWebhook(ctx, silent.RunID, nil); apiStatus(err) != 400 {
		t.Errorf("retry without a URL: %v, want 400", err)
	}
	if _, err := e.a.Runs.RetryWebhook(ctx, silent.RunID, &client.RetryWebhookRequest{WebhookURL: other.URL}); err != nil {
		t.Errorf("retry of a run without a URL, to a URL: %v", err)
	}
	other.wait(silent.RunID, 1)
	if _, err := e.a.Runs.RetryWebhook(ctx, "tsk_404", nil); apiStatus(err) != 404 {
		t.Errorf("retry of an unknown run: %v", err)
	}
	pollFor(t, "the last retry to be recorded", func() bool { return len(e.record(silent.RunID).WebhookRetries) == 1 })
}

// TestRunRoutesIsolateOrganizations: another organization's run is 404 on
// every run route, bulk cancel lists it as failed, and none of it touches
// the run.
func TestRunRoutesIsolateOrganizations(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	ctx := t.Context()
	sink := newWebhookSink(t, e.keyA)
	hook := func(r *client.TaskRunRequest) { r.WebhookURL = sink.URL }
	running := e.task("steps=1;screenshots=1;block", hook)
	e.blocked(running.RunID)
	queued := e.task("steps=1", hook)
	ended := e.task("steps=1", hook) // ends after the others

	for _, id := range []string{running.RunID, queued.RunID} {
		if _, err := e.b.Runs.Get(ctx, id); !errors.Is(err, client.ErrNotFound) {
			t.Errorf("get %s: %v", id, err)
		}
		if err := e.b.Runs.Cancel(ctx, id); !errors.Is(err, client.ErrNotFound) {
			t.Errorf("cancel %s: %v", id, err)
		}
		if _, err := e.b.Runs.ListArtifacts(ctx, id, nil); !errors.Is(err, client.ErrNotFound) {
			t.Errorf("artifacts %s: %v", id, err)
		}
		if _, err := e.b.Runs.RetryWebhook(ctx, id, &client.RetryWebhookRequest{WebhookURL: sink.URL}); !errors.Is(err, client.ErrNotFound) {
			t.Errorf("retry_webhook %s: %v", id, err)
		}
	}
	res, err := e.b.Runs.CancelMany(ctx, []string{running.RunID, queued.RunID})
	if err != nil || len(res.Cancelled) != 0 || len(res.Failed) != 2 {
		t.Errorf("bulk cancel of another organization's runs: %+v %v", res, err)
	}
	for _, id := range []string{running.RunID, queued.RunID} {
		if r, err := e.a.Runs.Get(ctx, id); err != nil || r.Status.IsTerminal() {
			t.Errorf("%s after the other organization's cancels: %v %v", id, r.Status, err)
		}
	}
	e.exec.Release(running.RunID)
	for _, id := range []string{running.RunID, queued.RunID, ended.RunID} {
		if r := e.settled(id); r.Status != client.RunStatusCompleted {
			t.Errorf("%s ended %s %q", id, r.Status, r.GetFailureReason())
		}
	}
	if _, err := e.b.Runs.RetryWebhook(ctx, ended.RunID, &client.RetryWebhookRequest{WebhookURL: sink.URL}); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("retry_webhook of another organization's ended run: %v", err)
	}
	e.runner.Stop()
	for _, id := range []string{running.RunID, queued.RunID, ended.RunID} {
		if n := len(sink.forRun(id)); n != 1 {
			t.Errorf("%s: %d webhooks", id, n)
		}
	}
}

// TestFairSchedulingOverHTTP: with one worker, an organization that
// submits many runs does not starve another's single run.
func TestFairSchedulingOverHTTP(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	ctx := t.Context()
	first := e.task("block")
	e.blocked(first.RunID)
	var many []string
	for range 8 {
		many = append(many, e.task("steps=1").RunID)
	}
	single, err := e.b.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: "script: steps=1"})
	if err != nil {
		t.Fatal(err)
	}
	e.exec.Release(first.RunID)
	waitRun(t, e.b, single.RunID)
	for _, id := range many {
		waitRun(t, e.a, id)
	}
	order := e.exec.Order()
	if i := slices.Index(order, single.RunID); i < 1 || i > 2 {
		t.Errorf("the other organization's run executed at position %d of %d", i, len(order))
	}
}

// TestRunConfigThroughDaemonRun starts a real daemon.Run on loopback with
// the scripted executor: Workers bounds concurrent executions, Minute
// shortens time limits, WebhookTimeout bounds deliveries (only to a
// receiver that never answers: others could be slow on a busy machine).
func TestRunConfigThroughDaemonRun(t *testing.T) {
	const key = "abk_runs_contract_test_key"
	exec := &scripted.Executor{}
	t.Cleanup(exec.ReleaseAll)
	addr, stop := daemontest.Start(t, t.TempDir(), daemon.Config{
		APIKey: key, Executor: exec, Workers: 2,
		Minute: 50 * time.Millisecond, WebhookTimeout: 300 * time.Millisecond,
	})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	var ids []string
	for range 8 {
		run, err := c.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: "script: steps=3;sleep=10ms"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.RunID)
	}
	for _, id := range ids {
		if run := waitRun(t, c, id); run.Status != client.RunStatusCompleted {
			t.Errorf("%s: %s %q", id, run.Status, run.GetFailureReason())
		}
	}
	if p := exec.Peak(); p < 1 || p > 2 {
		t.Errorf("%d executions at once with Workers 2", p)
	}

	// max_elapsed_time_minutes 1 lasts 50ms here.
	agent := agentForRuns(t, c, "")
	run, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, MaxElapsedTimeMinutes: client.Ptr(1),
		Parameters: map[string]any{"count": 1, "script": "steps=1;screenshots=1;block"}})
	if err != nil {
		t.Fatal(err)
	}
	done := waitRun(t, c, run.RunID)
	if done.Status != client.RunStatusTimedOut || !strings.Contains(done.GetFailureReason(), "time limit") || len(done.ScreenshotURLs) != 1 {
		t.Errorf("time limit: %s %q, %d screenshots", done.Status, done.GetFailureReason(), len(done.ScreenshotURLs))
	}

	// A receiver that never answers, within the short timeout.
	hangs := newWebhookSink(t, key)
	hangs.hangUp()
	slow, err := c.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: "script: steps=1", WebhookURL: hangs.URL})
	if err != nil {
		t.Fatal(err)
	}
	var last *client.Run
	pollFor(t, "the run to fail on its webhook", func() bool {
		last, err = c.Runs.Get(ctx, slow.RunID)
		return err == nil && last.Status == client.RunStatusFailed
	})
	if r := last.GetFailureReason(); !strings.Contains(r, "timed out after 0.3 seconds") {
		t.Errorf("webhook timeout: %q", r)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := hangs.count(); n != 1 {
		t.Errorf("the silent receiver got %d deliveries", n)
	}
}

// TestDefaultExecutorFailsRuns: a daemon without an engine fails every run
// at once, saying so, and sends its webhook.
func TestDefaultExecutorFailsRuns(t *testing.T) {
	const key = "abk_runs_contract_default_key"
	addr, stop := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: key})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	sink := newWebhookSink(t, key)
	run, err := c.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: "find the price", WebhookURL: sink.URL})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != client.RunStatusQueued {
		t.Errorf("started %s", run.Status)
	}
	done := waitRun(t, c, run.RunID)
	if done.Status != client.RunStatusFailed || !strings.Contains(done.GetFailureReason(), "no browser engine") {
		t.Errorf("%s %q", done.Status, done.GetFailureReason())
	}
	d := sink.wait(run.RunID, 1)
	if d[0].Payload.Status != client.RunStatusFailed || d[0].Payload.FailureReason == nil || !strings.Contains(*d[0].Payload.FailureReason, "no browser engine") {
		t.Errorf("webhook %s", d[0].Raw)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := len(sink.forRun(run.RunID)); n != 1 {
		t.Errorf("%d webhooks", n)
	}
}
