// Package webui benchmarks the daemon's web UI (package daemon/webui) in
// process, beside the API call each page is built on, in the same run:
// the daemon's whole handler (api.NewServer, with the web UI under /ui/,
// as daemon.Run wires it) over a real bbolt store holding BENCH_UI_RUNS
// finished runs (default 100,000), driven with httptest recorders, no
// network:
//
//	nice -n 10 go test ./bench/webui -run '^$' -bench . -benchtime 2s
//	go test ./bench/webui -run '^$' -bench 'WebUI/ui-run$' -cpuprofile cpu.out
//	go tool pprof -top -cum cpu.out
//
// The target is 50 ms of server time for each page; each page reports its
// time as a ratio of GET /v1/runs's first page ("x-v1-runs"), measured
// first in the same benchmark.
//
// The runs are written through the store directly, many writers at once,
// which the store's group commit turns into commits of up to a thousand
// writes: about half a minute for 100,000 runs on two cores. The store is
// seeded once per process; with BENCH_UI_DIR set, it is kept in that
// directory and reused by the next process (delete the directory to seed
// again). It is its own package, not bench/inproc, so that its TestMain
// can remove the store it made without touching the other benchmarks'.
package webui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/api"
	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/runner"
	"github.com/abctl/abctl/daemon/runview"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/daemon/webhooks"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// env is the seeded daemon the benchmarks share, built once per process.
var env struct {
	once    sync.Once
	err     error
	tempDir string // removed at the end when the process made it
	st      store.Store
	files   *artifacts.Store
	rn      *runner.Runner
	srv     http.Handler
	key     string
	cookie  string // a web UI session of the organization
	detail  string // a finished run with ten steps, for the run page
	runs    int
}

func TestMain(m *testing.M) {
	code := m.Run()
	if env.rn != nil {
		env.rn.Stop()
	}
	if env.files != nil {
		env.files.Close()
	}
	if env.st != nil {
		env.st.Close()
	}
	if env.tempDir != "" {
		os.RemoveAll(env.tempDir)
	}
	os.Exit(code)
}

func setup(b *testing.B) {
	b.Helper()
	env.once.Do(func() { env.err = build() })
	if env.err != nil {
		b.Fatal(env.err)
	}
}

// keyFile and detailFile keep, beside a store kept in BENCH_UI_DIR, the
// organization's API key and the id of the run the run page shows.
const (
	keyFile    = "bench-key"
	detailFile = "bench-detail-run"
)

func build() error {
	n := 100000
	if s := os.Getenv("BENCH_UI_RUNS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			return fmt.Errorf("BENCH_UI_RUNS=%q", s)
		}
	}
	env.runs = n
	dir := os.Getenv("BENCH_UI_DIR")
	if dir == "" {
		d, err := os.MkdirTemp("", "abctl-bench-webui-")
		if err != nil {
			return err
		}
		dir, env.tempDir = d, d
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ctx := context.Background()
	secret := bytes.Repeat([]byte{7}, store.SecretSize)
	st, err := boltstore.Open(filepath.Join(dir, datadir.StoreFileName), store.Options{Secret: secret, RunViews: runview.Views{}})
	if err != nil {
		return err
	}
	env.st = st

	key, errKey := os.ReadFile(filepath.Join(dir, keyFile))
	detail, errDetail := os.ReadFile(filepath.Join(dir, detailFile))
	if errKey == nil && errDetail == nil {
		env.key, env.detail = string(key), string(detail)
	} else {
		start := time.Now()
		if err := seed(ctx, st, n); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "seeded %d runs in %v\n", n, time.Since(start).Round(time.Millisecond))
		if err := os.WriteFile(filepath.Join(dir, keyFile), []byte(env.key), 0o600); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, detailFile), []byte(env.detail), 0o600); err != nil {
			return err
		}
	}

	// The handler as daemon.Run wires it, request lines logged as text
	// (and that cost kept); the runner has nothing to run.
	files, err := artifacts.NewStore(filepath.Join(dir, datadir.ArtifactsDirName))
	if err != nil {
		return err
	}
	env.files = files
	signer, err := artifacts.NewSigner(secret)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	links := &runview.Links{Signer: signer}
	hooks := &runner.Webhooks{Store: st, Sender: &webhooks.Sender{}, Links: links}
	env.rn = runner.New(runner.Config{Store: st, Executor: &scripted.Executor{Forget: true}, Files: files, Notifier: hooks, Logger: logger})
	runs := &api.Runs{Runner: env.rn, Files: files, Links: links, Webhooks: hooks}
	env.srv = api.NewServer(st, logger, api.WithRuns(runs), api.WithAccessLog(logger))
	if err := env.rn.Start(ctx); err != nil {
		return err
	}
	return signIn()
}

// seed writes n finished task runs of a new organization, newest last,
// through the store, by many writers at once, and one more run with ten
// steps (env.detail).
func seed(ctx context.Context, st store.Store, n int) error {
	org, key, err := st.CreateOrganization(ctx, "default")
	if err != nil {
		return err
	}
	env.key = key
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for range 128 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if _, err := seedRun(ctx, st, org.ID, i, 0); err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	env.detail, err = seedRun(ctx, st, org.ID, n, 10)
	return err
}

// seedRun writes the i-th run: created, then finished as most runs end
// (completed; one in 20 failed, one in 50 terminated, one in 100
// canceled), with steps steps recorded in between (a run with steps
// completes).
func seedRun(ctx context.Context, st store.Store, org string, i, steps int) (string, error) {
	sites := []string{"the carrier portal", "the supplier extranet", "the county clerk site", "the payroll system"}
	docs := []string{"invoices", "purchase orders", "timesheets", "shipping labels", "expense reports", "claims"}
	site, doc := sites[i%len(sites)], docs[i%len(docs)]
	req := &client.TaskRunRequest{
		Prompt: fmt.Sprintf("Sign in to %s with the stored credentials, open the list of %s, filter it to the last "+
			"30 days and extract, for every row, the document number, its date, the counterparty and the total "+
			"amount with its currency (batch %d).", site, doc, i),
		URL:   fmt.Sprintf("https://portal%d.example.com/signin", i%40),
		Title: fmt.Sprintf("Collect %s from %s #%d", doc, site, i),
	}
	echo, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	runs := st.Runs()
	rec := &store.RunRecord{ID: runs.NewID(client.RunTypeTaskV1), OrgID: org, Type: client.RunTypeTaskV1,
		Status: client.RunStatusQueued, RunRequest: echo, Task: req, Title: req.Title, Trigger: "api",
		BaseURL: "http://127.0.0.1:8780"}
	if err := runs.Create(ctx, rec); err != nil {
		return "", err
	}
	for k := 1; k <= steps; k++ {
		err := runs.AddStep(ctx, org, rec.ID, &client.RunStep{Number: k, URL: fmt.Sprintf("https://portal%d.example.com/list?page=%d", i%40, k),
			Thought: "The list shows the rows of the month; read them and go to the next page.",
			Actions: []string{fmt.Sprintf(`click [kd] button "Next page": ok, loaded /list?page=%d`, k+1)}, Decision: "continue",
			TimingsMS: client.StepTimings{Settle: 40, Observe: 12, Model: 900, Act: 35}, Tokens: client.StepTokens{Input: 1800, Output: 90}})
		if err != nil {
			return "", err
		}
	}
	_, err = runs.Update(ctx, org, rec.ID, func(r *store.RunRecord) error {
		started := client.Time{Time: r.CreatedAt.Add(20 * time.Millisecond)}
		finished := client.Time{Time: started.Add(time.Duration(5+i%50) * time.Second)}
		count := max(steps, 3+i%8)
		r.StartedAt, r.FinishedAt, r.StepCount = &started, &finished, &count
		switch {
		case steps > 0: // the run page's: completed
			r.Status = client.RunStatusCompleted
			r.Output = json.RawMessage(fmt.Sprintf(`[{"number":"INV-%d","date":"2026-11-02","counterparty":"Acme","total":120.5,"currency":"EUR"}]`, i))
		case i%20 == 0:
			r.Status, r.FailureReason = client.RunStatusFailed, "The sign-in page refused the stored password."
		case i%50 == 1:
			r.Status, r.FailureReason = client.RunStatusTerminated, "The list needs a one-time code that never came."
		case i%100 == 2:
			r.Status = client.RunStatusCanceled
		default:
			r.Status = client.RunStatusCompleted
			r.Output = json.RawMessage(fmt.Sprintf(`[{"number":"INV-%d","date":"2026-11-02","counterparty":"Acme","total":120.5,"currency":"EUR"}]`, i))
		}
		return nil
	})
	return rec.ID, err
}

// signIn signs in to the web UI with the organization's key, as the
// sign-in form does, and keeps the session's cookie.
func signIn() error {
	r := httptest.NewRequest("POST", "/ui/sign-in", strings.NewReader(url.Values{"api_key": {env.key}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	env.srv.ServeHTTP(w, r)
	for _, c := range w.Result().Cookies() {
		if c.Name == "abctl_session" && c.Value != "" {
			env.cookie = c.Name + "=" + c.Value
			return nil
		}
	}
	return errors.New("signing in to the web UI gave no session: " + w.Result().Status)
}

// get serves GET path: with the API key for /v1/, with the session's
// cookie for /ui/.
func get(path string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", path, nil)
	if strings.HasPrefix(path, "/v1/") {
		r.Header.Set("x-api-key", env.key)
	} else {
		r.Header.Set("Cookie", env.cookie)
	}
	w := httptest.NewRecorder()
	env.srv.ServeHTTP(w, r)
	return w
}

// BenchmarkWebUI serves each page of the runs, after the API's own list
// call: the first page of the list, the 100th (the last the API serves),
// the failed runs, and a finished run's page. Each sub-benchmark after
// the first reports its time as a multiple of the first's (x-v1-runs)
// and checks what it served.
func BenchmarkWebUI(b *testing.B) {
	setup(b)
	var base float64 // ns per GET /v1/runs
	for _, bc := range []struct {
		name, path string
		want       string // text the answer holds
	}{
		{"v1-runs", "/v1/runs?page=1&page_size=25", `"run_id"`},
		{"ui-runs", "/ui/runs", "Page 1"},
		{"v1-runs-page-100", "/v1/runs?page=100&page_size=25", `"run_id"`},
		{"ui-runs-page-100", "/ui/runs?page=100", "Page 100"},
		{"v1-runs-failed", "/v1/runs?page=1&page_size=25&status=failed", `"failed"`},
		{"ui-runs-failed", "/ui/runs?status=failed", "status-failed"},
		{"v1-run", "/v1/runs/" + env.detail, `"completed"`},
		{"ui-run", "/ui/runs/" + env.detail, "Step 10"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if w := get(bc.path); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), bc.want) {
				b.Fatalf("GET %s: %d, want 200 with %q:\n%.2000s", bc.path, w.Code, bc.want, w.Body)
			}
			b.ReportAllocs()
			for b.Loop() {
				if w := get(bc.path); w.Code != http.StatusOK {
					b.Fatalf("GET %s: %d", bc.path, w.Code)
				}
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if bc.name == "v1-runs" {
				base = ns
			} else if base > 0 {
				b.ReportMetric(ns/base, "x-v1-runs")
			}
			b.ReportMetric(ns/1e6, "ms/op")
		})
	}
}
