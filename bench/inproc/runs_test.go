package inproc

// The run benchmarks of bench/runs.sh without the network: where the time
// of GET /v1/runs/{id} goes, beside the same read ceiling.
//
//	go test ./bench/inproc -run '^$' -bench 'Run' -benchtime 2s -count 3
//	go test ./bench/inproc -run '^$' -bench 'BenchmarkGetRun$' -benchtime 5s -cpuprofile cpu.out
//	go tool pprof -top -cum -focus=BenchmarkGetRun cpu.out
//
// Each benchmark builds its own daemon handler (store, runner with the
// instant scripted executor, artifacts, webhooks, as daemon.Run wires them)
// in b.TempDir() and starts BENCH_RUNS runs (default 200) through it, the
// same task requests as bench/runs seed-runs, waiting until each has
// completed; it does not seed the agents of the other benchmarks.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

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

// runsEnv is one benchmark's daemon with completed runs.
type runsEnv struct {
	st      store.Store
	srv     http.Handler
	key     string
	org     string
	ids     []string
	ceiling *bolt.DB
}

// runRequest is the i-th run's request, as bench/runs sends it.
func runRequest(i int) []byte {
	sites := []string{"the carrier portal", "the supplier extranet", "the county clerk site", "the payroll system"}
	docs := []string{"invoices", "purchase orders", "timesheets", "shipping labels", "expense reports", "claims"}
	site, doc := sites[i%len(sites)], docs[i%len(docs)]
	steps := 10
	body, _ := json.Marshal(&client.TaskRunRequest{
		Prompt: fmt.Sprintf("Sign in to %s with the stored credentials, open the list of %s, filter it to the last "+
			"30 days and extract, for every row, the document number, its date, the counterparty and the total "+
			"amount with its currency. Stop when the list ends; if a page asks for a one-time code, wait for it. "+
			"Report COMPLETE with the rows as JSON (batch %d).", site, doc, i),
		URL:                  fmt.Sprintf("https://portal%d.example.com/signin", i%40),
		Title:                fmt.Sprintf("Collect %s from %s #%d", doc, site, i),
		DataExtractionSchema: json.RawMessage(`{"type":"array","items":{"type":"object","properties":{"number":{"type":"string"},"date":{"type":"string"},"counterparty":{"type":"string"},"total":{"type":"number"},"currency":{"type":"string"}}}}`),
		MaxSteps:             &steps,
	})
	return body
}

func newRunsEnv(b *testing.B) *runsEnv {
	b.Helper()
	n := 200
	if s := os.Getenv("BENCH_RUNS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			b.Fatalf("BENCH_RUNS=%q", s)
		}
	}
	dir := b.TempDir()
	ctx := context.Background()
	secret := bytes.Repeat([]byte{7}, store.SecretSize)
	st, err := boltstore.Open(filepath.Join(dir, datadir.StoreFileName), store.Options{Secret: secret, RunViews: runview.Views{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	org, key, err := st.CreateOrganization(ctx, "default")
	if err != nil {
		b.Fatal(err)
	}
	files, err := artifacts.NewStore(filepath.Join(dir, datadir.ArtifactsDirName))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { files.Close() })
	signer, err := artifacts.NewSigner(secret)
	if err != nil {
		b.Fatal(err)
	}
	// As daemon.Run wires them; request lines are logged as text, and
	// that cost kept.
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	links := &runview.Links{Signer: signer}
	hooks := &runner.Webhooks{Store: st, Sender: &webhooks.Sender{}, Links: links}
	rn := runner.New(runner.Config{Store: st, Executor: &scripted.Executor{Forget: true},
		Files: files, Notifier: hooks, Logger: logger})
	runs := &api.Runs{Runner: rn, Files: files, Links: links, Webhooks: hooks}
	srv := api.NewServer(st, logger, api.WithRuns(runs), api.WithAccessLog(logger))
	if err := rn.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rn.Stop)
	e := &runsEnv{st: st, srv: srv, key: key, org: org.ID}

	for i := range n {
		w := e.serve("POST", "/v1/run/tasks", bytes.NewReader(runRequest(i)))
		var r client.Run
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &r) != nil {
			b.Fatalf("POST /v1/run/tasks: %d %s", w.Code, w.Body)
		}
		e.ids = append(e.ids, r.RunID)
	}
	deadline := time.Now().Add(time.Minute)
	for _, id := range e.ids {
		for {
			rec, err := st.Runs().Get(ctx, org.ID, id)
			if err != nil {
				b.Fatal(err)
			}
			if rec.Status == client.RunStatusCompleted {
				break
			}
			if rec.Terminal() || time.Now().After(deadline) {
				b.Fatalf("run %s is %s", id, rec.Status)
			}
			time.Sleep(time.Millisecond)
		}
	}

	// The ceiling: 10,000 records of 1 KiB, as bench/ceiling.
	if e.ceiling, err = bolt.Open(filepath.Join(dir, "ceiling.db"), 0o600, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.ceiling.Close() })
	rec := bytes.Repeat([]byte("x"), 1024)
	err = e.ceiling.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucket([]byte("records"))
		if err != nil {
			return err
		}
		for i := uint64(1); i <= 10000; i++ {
			if err := bk.Put(binary.BigEndian.AppendUint64(nil, i), rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func (e *runsEnv) serve(method, path string, body io.Reader) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, body)
	r.Header.Set("x-api-key", e.key)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	e.srv.ServeHTTP(w, r)
	return w
}

// BenchmarkRunsCeilingGet is the read ceiling of bench/ceiling without
// the network (as BenchmarkCeilingGet, without the agents' setup).
func BenchmarkRunsCeilingGet(b *testing.B) {
	e := newRunsEnv(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w := httptest.NewRecorder()
		var val []byte
		e.ceiling.View(func(tx *bolt.Tx) error {
			val = append([]byte(nil), tx.Bucket([]byte("records")).Get(binary.BigEndian.AppendUint64(nil, uint64(i%10000+1)))...)
			return nil
		})
		w.Header().Set("Content-Type", "application/json")
		w.Write(val)
	}
}

// BenchmarkGetRun is GET /v1/runs/{id} of a completed run.
func BenchmarkGetRun(b *testing.B) {
	e := newRunsEnv(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if w := e.serve("GET", "/v1/runs/"+e.ids[(i*7919)%len(e.ids)], nil); w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkUnknownRun is authentication, routing, one run lookup and a 404:
// the fixed cost of GET /v1/runs/{id}.
func BenchmarkUnknownRun(b *testing.B) {
	e := newRunsEnv(b)
	b.ReportAllocs()
	for b.Loop() {
		if w := e.serve("GET", "/v1/runs/tsk_1", nil); w.Code != http.StatusNotFound {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkRunStoreGet is store.Runs.Get alone: a read transaction and the
// record's JSON decoded into a store.RunRecord (what GET /v1/runs/{id} did
// before runs had stored answers, and still does for a run without one).
func BenchmarkRunStoreGet(b *testing.B) {
	e := newRunsEnv(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := e.st.Runs().Get(ctx, e.org, e.ids[(i*7919)%len(e.ids)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunStoreView is runview's Links.AppendJSON alone: a read
// transaction and the run's stored answer copied out with its app_url
// filled in, what GET /v1/runs/{id} now does instead of Runs.Get and an
// encoding.
func BenchmarkRunStoreView(b *testing.B) {
	e := newRunsEnv(b)
	ctx := context.Background()
	var links *runview.Links // no signer: the runs have no files
	var buf []byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		id := e.ids[(i*7919)%len(e.ids)]
		var err error
		if buf, err = links.AppendJSON(ctx, e.st.Runs(), buf[:0], "http://127.0.0.1:8780", e.org, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunRecordDecode and BenchmarkRunRecordEncode are the JSON of
// one stored run record, decoded and encoded alone; BenchmarkRunViewEncode
// is the client.Run that GET answers, encoded.
func BenchmarkRunRecordDecode(b *testing.B) {
	e := newRunsEnv(b)
	rec, err := e.st.Runs().Get(context.Background(), e.org, e.ids[0])
	if err != nil {
		b.Fatal(err)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var r store.RunRecord
		if err := json.Unmarshal(data, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRunRecordEncode(b *testing.B) {
	e := newRunsEnv(b)
	rec, err := e.st.Runs().Get(context.Background(), e.org, e.ids[0])
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(rec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRunViewEncode(b *testing.B) {
	e := newRunsEnv(b)
	w := e.serve("GET", "/v1/runs/"+e.ids[0], nil)
	var run client.Run
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &run) != nil {
		b.Fatalf("%d %s", w.Code, w.Body)
	}
	b.SetBytes(int64(w.Body.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(&run); err != nil {
			b.Fatal(err)
		}
	}
}
