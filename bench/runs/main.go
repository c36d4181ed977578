// Command runs drives the run benchmarks of bench/runs.sh against a daemon
// whose executor completes runs at once (bench/runsd), through the Go SDK:
//
//	runs seed-runs -url U -key K [-n 1000] -out FILE
//	    starts n task runs (no webhook), waits until every one has ended,
//	    and writes /v1/runs/<id>, one per line, to FILE: the paths the wrk
//	    rows of GET /v1/runs/{id} pick from
//
//	runs latency -url U -key K [-n 200]
//	    n task runs, one after the other: POST /v1/run/tasks, then GET
//	    /v1/runs/{id} in a tight loop (no pause, at most 5 s) until the
//	    status is no longer queued, then on until the run has ended, so
//	    that the next run starts on an idle daemon. It measures the POST's
//	    round trip, the time from the POST's answer to the first GET that
//	    shows running or later (its resolution is one GET's round trip),
//	    and created_at to started_at as the daemon stamped them
//
//	runs webhooks -url U[,U2,...] -key K [-n 1000] [-concurrency 8] [-deadline 120s] [-ids FILE]
//	    starts a webhook receiver on 127.0.0.1 that checks every delivery's
//	    signature with webhook.Verify over the raw bytes and counts unique
//	    run ids, duplicates and bad signatures; starts n task runs whose
//	    webhook_url points at it, from -concurrency clients; waits until
//	    every run's webhook arrived (or -deadline); then reads every run
//	    back with GET and checks that it completed. Elapsed is from the
//	    first POST to the last webhook. Several URLs (daemons sharing one
//	    store, bench/daemons.sh) take the runs in turn: run i goes to the
//	    (i mod count)-th, and is read back through the next one.
//
//	runs commit -url CEILING [-n 200]
//	    n POST /record to bench/ceiling, one after the other, each storing a
//	    task request's JSON in its own durable bbolt commit: the floor of
//	    the POST and accepted-to-running rows (a run is created, then
//	    marked running, in a commit each)
//
//	runs records -data-dir D -ids FILE
//	    opens the store of a stopped daemon and checks that every run in
//	    FILE completed and has its webhook delivery recorded (2xx, no
//	    error); the API does not show deliveries
//
// Results go to stdout as "name value" lines (durations in milliseconds),
// for bench/runs.sh to read; a summary for people goes to stderr. A
// subcommand whose checks fail exits with status 1 after printing them.
// Every loop is bounded, and the addresses must be loopback ones.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/client/webhook"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("runs: ")
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: runs seed-runs|latency|webhooks|commit|records [flags] (see the package comment)")
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	var ok bool
	switch cmd {
	case "seed-runs":
		ok = seedRuns(args)
	case "latency":
		ok = latency(args)
	case "webhooks":
		ok = webhooks(args)
	case "commit":
		ok = commit(args)
	case "records":
		ok = records(args)
	default:
		log.Fatalf("unknown subcommand %q: want seed-runs, latency, webhooks, commit or records", cmd)
	}
	if !ok {
		os.Exit(1)
	}
}

// target holds the flags every subcommand that talks to the daemon has.
type target struct {
	url, key string
}

func (t *target) flags(fs *flag.FlagSet) {
	fs.StringVar(&t.url, "url", "", "the daemon's base URL, http://127.0.0.1:PORT (required)")
	fs.StringVar(&t.key, "key", "", "API key (required)")
}

// client returns an SDK client for the daemon with conns keep-alive
// connections and no retries: a failed request is a failure to report.
func (t *target) client(conns int) *client.Client {
	if t.url == "" || t.key == "" {
		log.Fatal("-url and -key are required")
	}
	if u, err := url.Parse(t.url); err != nil || !net.ParseIP(u.Hostname()).IsLoopback() {
		log.Fatalf("-url %q is not a loopback address", t.url)
	}
	hc := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: conns}}
	c, err := client.New(client.WithBaseURL(t.url), client.WithAPIKey(t.key), client.WithHTTPClient(hc),
		client.WithMaxRetries(0), client.WithRequestTimeout(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// clients returns a client of each of the comma-separated URLs of -url,
// each with conns keep-alive connections.
func (t *target) clients(conns int) []*client.Client {
	var cs []*client.Client
	for u := range strings.SplitSeq(t.url, ",") {
		one := *t
		one.url = u
		cs = append(cs, one.client(conns))
	}
	return cs
}

func parse(fs *flag.FlagSet, args []string) {
	if err := fs.Parse(args); err != nil {
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		log.Fatalf("%s: unexpected arguments %q", fs.Name(), fs.Args())
	}
}

var (
	sites = []string{"the carrier portal", "the supplier extranet", "the county clerk site", "the payroll system",
		"the insurer dashboard", "the customs office", "the utility account", "the HR portal"}
	docs = []string{"invoices", "purchase orders", "timesheets", "shipping labels", "expense reports", "claims"}
)

// taskRequest is the i-th run's request: a prompt, a URL, a title, a
// small extraction schema and a step limit, as a script would send them.
// Its run record (with the request's echo) is about 1.5 KB.
func taskRequest(i int, webhookURL string) *client.TaskRunRequest {
	site, doc := sites[i%len(sites)], docs[i%len(docs)]
	steps := 10
	return &client.TaskRunRequest{
		Prompt: fmt.Sprintf("Sign in to %s with the stored credentials, open the list of %s, filter it to the last "+
			"30 days and extract, for every row, the document number, its date, the counterparty and the total "+
			"amount with its currency. Stop when the list ends; if a page asks for a one-time code, wait for it. "+
			"Report COMPLETE with the rows as JSON (batch %d).", site, doc, i),
		URL:                  fmt.Sprintf("https://portal%d.example.com/signin", i%40),
		Title:                fmt.Sprintf("Collect %s from %s #%d", doc, site, i),
		DataExtractionSchema: json.RawMessage(`{"type":"array","items":{"type":"object","properties":{"number":{"type":"string"},"date":{"type":"string"},"counterparty":{"type":"string"},"total":{"type":"number"},"currency":{"type":"string"}}}}`),
		MaxSteps:             &steps,
		WebhookURL:           webhookURL,
	}
}

// started reports whether a run has left the queue: running or later.
func started(s client.RunStatus) bool {
	return s != client.RunStatusQueued && s != client.RunStatusCreated
}

// waitEnded reads run id until it has ended, for at most d.
func waitEnded(ctx context.Context, c *client.Client, id string, d time.Duration) (*client.Run, error) {
	deadline := time.Now().Add(d)
	for {
		r, err := c.Runs.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if r.IsTerminal() {
			return r, nil
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("run %s still %s after %s", id, r.Status, d)
		}
		time.Sleep(time.Millisecond)
	}
}

// parallel calls f(i) for i in [0, n) from conc goroutines and returns
// the first error; after an error no new call starts.
func parallel(n, conc int, f func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err; failed.Store(true) })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pct returns the q-quantile (nearest rank) of sorted ds.
func pct(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

// report prints name_p50, name_p90 and name_max to stdout.
func report(name string, ds []time.Duration) {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	fmt.Printf("%s_p50 %.3f\n%s_p90 %.3f\n%s_max %.3f\n", name, ms(pct(ds, 0.5)), name, ms(pct(ds, 0.9)), name, ms(ds[len(ds)-1]))
	fmt.Fprintf(os.Stderr, "  %-26s p50 %7.3f ms  p90 %7.3f ms  max %7.3f ms\n", name, ms(pct(ds, 0.5)), ms(pct(ds, 0.9)), ms(ds[len(ds)-1]))
}

func seedRuns(args []string) bool {
	fs := flag.NewFlagSet("seed-runs", flag.ExitOnError)
	var t target
	t.flags(fs)
	n := fs.Int("n", 1000, "runs to create")
	conc := fs.Int("concurrency", 8, "concurrent clients")
	out := fs.String("out", "", "file to write the paths /v1/runs/<id> to (required)")
	parse(fs, args)
	if *n < 1 || *conc < 1 || *out == "" {
		log.Fatal("seed-runs: -n and -concurrency must be positive, and -out is required")
	}
	c := t.client(*conc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	start := time.Now()
	ids := make([]string, *n)
	err := parallel(*n, *conc, func(i int) error {
		r, err := c.Runs.StartTask(ctx, taskRequest(i, ""))
		if err != nil {
			return fmt.Errorf("start run %d: %w", i, err)
		}
		ids[i] = r.RunID
		return nil
	})
	if err == nil {
		// Every record is read in its final form by the benchmark.
		err = parallel(*n, *conc, func(i int) error {
			r, err := waitEnded(ctx, c, ids[i], time.Minute)
			if err == nil && r.Status != client.RunStatusCompleted {
				err = fmt.Errorf("run %s ended %s: %s", r.RunID, r.Status, r.GetFailureReason())
			}
			return err
		})
	}
	if err != nil {
		log.Printf("seed-runs: %v", err)
		return false
	}
	took := time.Since(start)

	var b strings.Builder
	for _, id := range ids {
		b.WriteString("/v1/runs/" + id + "\n")
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
	// The size of the answer the wrk rows read.
	size, err := bodySize(ctx, t, "/v1/runs/"+ids[len(ids)/2])
	if err != nil {
		log.Printf("seed-runs: %v", err)
		return false
	}
	fmt.Printf("seed_runs %d\nseed_s %.2f\nrun_json_bytes %d\n", *n, took.Seconds(), size)
	fmt.Fprintf(os.Stderr, "seeded %d completed runs in %.1f s (%.0f runs/s, %d clients); GET /v1/runs/{id} answers %d bytes\n",
		*n, took.Seconds(), float64(*n)/took.Seconds(), *conc, size)
	return true
}

// bodySize returns the length of the answer to GET path.
func bodySize(ctx context.Context, t target, path string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", t.url+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("x-api-key", t.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return len(body), nil
}

func latency(args []string) bool {
	fs := flag.NewFlagSet("latency", flag.ExitOnError)
	var t target
	t.flags(fs)
	n := fs.Int("n", 200, "runs to measure")
	warmup := fs.Int("warmup", 10, "runs before the measured ones, not counted")
	parse(fs, args)
	if *n < 1 || *warmup < 0 {
		log.Fatal("latency: -n must be positive and -warmup not negative")
	}
	c := t.client(1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	var post, accept, daemonLag []time.Duration
	var polls []int
	for i := -*warmup; i < *n; i++ {
		t0 := time.Now()
		r, err := c.Runs.StartTask(ctx, taskRequest(i+*warmup, ""))
		accepted := time.Now()
		if err != nil {
			log.Printf("latency: start run: %v", err)
			return false
		}
		// Poll without pause until the run has left the queue.
		seen, np := r, 0
		deadline := accepted.Add(5 * time.Second)
		for !started(seen.Status) {
			if time.Now().After(deadline) {
				log.Printf("latency: run %s still %s 5 s after it was accepted", r.RunID, seen.Status)
				return false
			}
			if seen, err = c.Runs.Get(ctx, r.RunID); err != nil {
				log.Printf("latency: %v", err)
				return false
			}
			np++
		}
		observed := time.Now()
		if np == 0 {
			observed = accepted // the POST's answer already showed it
		}
		if seen.StartedAt == nil {
			log.Printf("latency: run %s is %s without started_at", r.RunID, seen.Status)
			return false
		}
		end, err := waitEnded(ctx, c, r.RunID, 10*time.Second)
		if err == nil && end.Status != client.RunStatusCompleted {
			err = fmt.Errorf("run %s ended %s: %s", end.RunID, end.Status, end.GetFailureReason())
		}
		if err != nil {
			log.Printf("latency: %v", err)
			return false
		}
		if i < 0 {
			continue
		}
		post = append(post, accepted.Sub(t0))
		accept = append(accept, observed.Sub(accepted))
		daemonLag = append(daemonLag, seen.StartedAt.Sub(seen.CreatedAt.Time))
		polls = append(polls, np)
	}
	slices.Sort(polls)
	fmt.Printf("latency_runs %d\n", *n)
	fmt.Fprintf(os.Stderr, "%d runs one after the other (after %d not counted):\n", *n, *warmup)
	report("post_rtt", post)
	report("accept_to_running", accept)
	report("created_to_started", daemonLag)
	fmt.Printf("polls_p50 %d\n", polls[len(polls)/2])
	fmt.Fprintf(os.Stderr, "  GETs until running: median %d, max %d\n", polls[len(polls)/2], polls[len(polls)-1])
	return true
}

// receiver is the webhook receiver of the webhooks subcommand.
type receiver struct {
	key string

	mu       sync.Mutex
	arrived  map[string]time.Time // run id -> first delivery
	dups     int
	badSig   int
	badBody  int
	notDone  int // deliveries of a run not completed
	last     time.Time
	requests int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	now := time.Now()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.requests++
	if err != nil || r.Method != http.MethodPost {
		rc.badBody++
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if err := webhook.Verify(rc.key, raw, r.Header.Get(webhook.SignatureHeader)); err != nil {
		rc.badSig++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var p struct {
		RunID  string           `json:"run_id"`
		Status client.RunStatus `json:"status"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.RunID == "" {
		rc.badBody++
		http.Error(w, "no run_id", http.StatusBadRequest)
		return
	}
	if p.Status != client.RunStatusCompleted {
		rc.notDone++
	}
	if _, dup := rc.arrived[p.RunID]; dup {
		rc.dups++
	} else {
		rc.arrived[p.RunID] = now
		rc.last = now
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.arrived)
}

func webhooks(args []string) bool {
	fs := flag.NewFlagSet("webhooks", flag.ExitOnError)
	var t target
	t.flags(fs)
	n := fs.Int("n", 1000, "runs to start")
	conc := fs.Int("concurrency", 8, "concurrent clients starting runs")
	wait := fs.Duration("deadline", 120*time.Second, "how long to wait for every webhook, from the first POST")
	idsOut := fs.String("ids", "", "file to write the run ids to, for the records subcommand")
	parse(fs, args)
	if *n < 1 || *conc < 1 || *wait <= 0 {
		log.Fatal("webhooks: -n, -concurrency and -deadline must be positive")
	}
	cs := t.clients(*conc)

	rc := &receiver{key: t.key, arrived: make(map[string]time.Time, *n)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	hook := "http://" + ln.Addr().String() + "/hook"

	ctx, cancel := context.WithTimeout(context.Background(), *wait+time.Minute)
	defer cancel()
	start := time.Now()
	deadline := start.Add(*wait)
	ids := make([]string, *n)
	var accepted atomic.Int64
	if err := parallel(*n, *conc, func(i int) error {
		r, err := cs[i%len(cs)].Runs.StartTask(ctx, taskRequest(i, hook))
		if err != nil {
			return fmt.Errorf("start run %d: %w", i, err)
		}
		ids[i] = r.RunID
		accepted.Add(1)
		return nil
	}); err != nil {
		log.Printf("webhooks: %v (%d runs accepted)", err, accepted.Load())
		return false
	}
	submitted := time.Since(start)
	for rc.count() < *n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}

	rc.mu.Lock()
	unique, last := len(rc.arrived), rc.last
	lost, unknown := 0, 0
	for _, id := range ids {
		if _, ok := rc.arrived[id]; !ok {
			lost++
		}
	}
	submittedIDs := make(map[string]bool, len(ids))
	for _, id := range ids {
		submittedIDs[id] = true
	}
	for id := range rc.arrived {
		if !submittedIDs[id] {
			unknown++
		}
	}
	rc.mu.Unlock()
	elapsed := last.Sub(start)

	// Every run read back: completed.
	var notCompleted atomic.Int64
	getErr := parallel(*n, *conc, func(i int) error {
		r, err := cs[(i+1)%len(cs)].Runs.Get(ctx, ids[i])
		if err != nil {
			return err
		}
		if r.Status != client.RunStatusCompleted {
			notCompleted.Add(1)
			log.Printf("webhooks: run %s is %s: %s", r.RunID, r.Status, r.GetFailureReason())
		}
		return nil
	})
	if getErr != nil {
		log.Printf("webhooks: reading the runs back: %v", getErr)
	}

	if *idsOut != "" {
		if err := os.WriteFile(*idsOut, []byte(strings.Join(ids, "\n")+"\n"), 0o644); err != nil {
			log.Fatal(err)
		}
	}

	rc.mu.Lock()
	dups, badSig, badBody, notDone, reqs := rc.dups, rc.badSig, rc.badBody, rc.notDone, rc.requests
	rc.mu.Unlock()
	fmt.Printf("webhook_runs %d\nwebhook_unique %d\nwebhook_lost %d\nwebhook_unknown %d\nwebhook_duplicates %d\n"+
		"webhook_bad_signatures %d\nwebhook_bad_bodies %d\nwebhook_not_completed_payloads %d\nruns_not_completed %d\n"+
		"webhook_elapsed_s %.3f\nwebhook_submit_s %.3f\nwebhook_runs_per_s %.1f\n",
		*n, unique, lost, unknown, dups, badSig, badBody, notDone, notCompleted.Load(),
		elapsed.Seconds(), submitted.Seconds(), float64(unique)/elapsed.Seconds())
	fmt.Fprintf(os.Stderr, "%d runs from %d clients to %d daemons: %d webhooks arrived (%d requests), lost %d, duplicates %d, bad signatures %d; "+
		"all POSTs answered in %.2f s, last webhook at %.2f s (%.0f runs/s); runs not completed on GET: %d\n",
		*n, *conc, len(cs), unique, reqs, lost, dups, badSig, submitted.Seconds(), elapsed.Seconds(),
		float64(unique)/elapsed.Seconds(), notCompleted.Load())
	return getErr == nil && lost == 0 && unknown == 0 && dups == 0 && badSig == 0 && badBody == 0 &&
		notDone == 0 && notCompleted.Load() == 0
}

func records(args []string) bool {
	fs := flag.NewFlagSet("records", flag.ExitOnError)
	dataDir := fs.String("data-dir", "", "the stopped daemon's data directory (required)")
	idsFile := fs.String("ids", "", "file of run ids, one per line (required)")
	parse(fs, args)
	if *dataDir == "" || *idsFile == "" {
		log.Fatal("records: -data-dir and -ids are required")
	}
	data, err := os.ReadFile(*idsFile)
	if err != nil {
		log.Fatal(err)
	}
	ids := strings.Fields(string(data))
	st, err := boltstore.Open(filepath.Join(*dataDir, datadir.StoreFileName), store.Options{LockTimeout: 10 * time.Second})
	if err != nil {
		log.Fatalf("records: %v (is the daemon still running?)", err)
	}
	defer st.Close()
	ctx := context.Background()
	org, err := st.DefaultOrganization(ctx)
	if err != nil {
		log.Fatal(err)
	}
	delivered, bad, retries := 0, 0, 0
	var lat []time.Duration
	for _, id := range ids {
		rec, err := st.Runs().Get(ctx, org.ID, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			bad++
			log.Printf("records: run %s not found", id)
			continue
		case err != nil:
			log.Fatal(err)
		}
		d := rec.Webhook
		if rec.Status != client.RunStatusCompleted || d == nil || d.Error != "" || d.StatusCode < 200 || d.StatusCode > 299 {
			bad++
			log.Printf("records: run %s: status %s, delivery %+v", id, rec.Status, d)
			continue
		}
		delivered++
		retries += len(rec.WebhookRetries)
		lat = append(lat, time.Duration(d.LatencyMS)*time.Millisecond)
	}
	fmt.Printf("records_checked %d\nrecords_delivered %d\nrecords_bad %d\n", len(ids), delivered, bad)
	fmt.Fprintf(os.Stderr, "%d run records: %d completed with their webhook recorded as delivered, %d not, %d retries\n",
		len(ids), delivered, bad, retries)
	if len(lat) > 0 {
		report("recorded_delivery_latency", lat)
	}
	return bad == 0 && len(ids) > 0
}

func commit(args []string) bool {
	fs := flag.NewFlagSet("commit", flag.ExitOnError)
	base := fs.String("url", "", "bench/ceiling's base URL, http://127.0.0.1:PORT (required)")
	n := fs.Int("n", 200, "commits to measure")
	warmup := fs.Int("warmup", 10, "commits before the measured ones, not counted")
	parse(fs, args)
	if u, err := url.Parse(*base); *base == "" || err != nil || !net.ParseIP(u.Hostname()).IsLoopback() {
		log.Fatalf("commit: -url %q is not a loopback address", *base)
	}
	if *n < 1 || *warmup < 0 {
		log.Fatal("commit: -n must be positive and -warmup not negative")
	}
	body, err := json.Marshal(taskRequest(0, ""))
	if err != nil {
		log.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 30 * time.Second}
	var rtt []time.Duration
	for i := -*warmup; i < *n; i++ {
		t0 := time.Now()
		resp, err := hc.Post(*base+"/record", "application/json", strings.NewReader(string(body)))
		if err != nil {
			log.Printf("commit: %v", err)
			return false
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(t0)
		if err != nil || resp.StatusCode != http.StatusOK {
			log.Printf("commit: POST /record: %s %v", resp.Status, err)
			return false
		}
		if i >= 0 {
			rtt = append(rtt, d)
		}
	}
	fmt.Fprintf(os.Stderr, "%d POST /record to the ceiling, one after the other:\n", *n)
	report("commit_rtt", rtt)
	return true
}
