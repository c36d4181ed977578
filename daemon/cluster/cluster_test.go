//go:build !windows

package cluster_test

// Three daemon processes on one PostgreSQL database. Each is this test
// binary run again (TestMain hands it to daemonProcess when envDataDir is
// set): daemon.Run with the database as its store, a data directory of its
// own, the artifacts directory, secret and API key the three share, two
// workers, a short lease, and the scripted executor wrapped so that it
// appends "start <run id>" and "end <run id> <status>" to a file of the
// daemon's as it executes runs. Those files are how the test knows, across
// processes, which daemon executed which run and how often.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/pgstore"
	"github.com/abctl/abctl/internal/pgtest"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// The environment of a daemon process.
const (
	envDataDir    = "ABCTL_CLUSTER_DATA_DIR" // its data directory; set only in a daemon process
	envStore      = "ABCTL_CLUSTER_STORE"    // the database's URL
	envArtifacts  = "ABCTL_CLUSTER_ARTIFACTS"
	envKey        = "ABCTL_CLUSTER_KEY"
	envSecret     = "ABCTL_CLUSTER_SECRET"     // hex
	envExecutions = "ABCTL_CLUSTER_EXECUTIONS" // the file its executor appends to
	addrLine      = "ABCTL_CLUSTER_ADDR="      // the line on stdout that says where it listens
)

const (
	apiKey  = "abk_cluster_test_key"
	workers = 2 // runs each daemon executes at once
	// lease is the daemons' QueueLease: short, so that a killed daemon's
	// runs are taken over soon, yet long enough (a renewal every 2 s) that
	// a live daemon's leases do not lapse on a machine busy with the whole
	// suite under -race: that would need a daemon stalled for 4 s.
	lease = 6 * time.Second
	// processLife bounds a daemon process however the test leaves it.
	processLife = 5 * time.Minute
	// hangGuard bounds the whole test: past it, the daemons are killed,
	// which fails every wait at once.
	hangGuard = 4 * time.Minute
	// bound is how long a wait on one condition may take: only a hang
	// meets it, never a slow machine.
	bound = 2 * time.Minute
	// scheduleFor is how long the per-second schedule fires.
	scheduleFor = 20 * time.Second
)

// daemonProcess is one daemon of the cluster, run by TestMain in a
// subprocess. It prints its address on stdout once it serves, and stops
// when its stdin closes (the test ended or died), on SIGTERM, or after
// processLife. It returns the process's exit code.
func daemonProcess() int {
	ctx, cancel := context.WithTimeout(context.Background(), processLife)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "cluster daemon process:", err)
		return 1
	}
	secret, err := hex.DecodeString(os.Getenv(envSecret))
	if err != nil {
		return fail(fmt.Errorf("%s: %w", envSecret, err))
	}
	f, err := os.OpenFile(os.Getenv(envExecutions), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	ex := &recordingExecutor{Executor: &scripted.Executor{Forget: true}, file: f}
	err = daemon.Run(ctx, daemon.Config{
		Addr:         "127.0.0.1:0",
		DataDir:      os.Getenv(envDataDir),
		Store:        os.Getenv(envStore),
		ArtifactsDir: os.Getenv(envArtifacts),
		APIKey:       os.Getenv(envKey),
		Secret:       secret,
		Executor:     ex,
		Workers:      workers,
		QueueLease:   lease,
		Stderr:       os.Stderr,
		Logger:       slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Ready:        func(addr string) { fmt.Printf("%s%s\n", addrLine, addr) },
	})
	ex.ReleaseAll()
	if err != nil {
		return fail(err)
	}
	return 0
}

// recordingExecutor is the scripted executor, noting in file each run it
// starts and ends. A note is one write of one line to a file opened for
// appending: it is in the file as soon as the write returns, whatever
// happens to the process afterwards.
type recordingExecutor struct {
	*scripted.Executor
	mu   sync.Mutex
	file *os.File
}

func (e *recordingExecutor) Execute(ctx context.Context, job *executor.Job, progress executor.Progress) executor.Result {
	e.note("start " + job.RunID)
	res := e.Executor.Execute(ctx, job, progress)
	e.note("end " + job.RunID + " " + string(res.Status))
	return res
}

func (e *recordingExecutor) note(line string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.file.WriteString(line + "\n"); err != nil {
		fmt.Fprintln(os.Stderr, "cluster daemon process: note an execution:", err)
	}
}

// node is one daemon process of the cluster, seen from the test.
type node struct {
	name       string
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	logs       *lockedBuffer
	out        *addrWriter
	executions string // the file its executor notes runs in
	exited     chan struct{}
	addr       string
	c          *client.Client
}

// cluster is the daemons and their database.
type cluster struct {
	url    string
	secret []byte
	nodes  []*node
}

// startCluster starts n daemon processes at once on a new database and
// waits until they all serve.
func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	cl := &cluster{url: pgtest.Shared(t).NewDatabase(t), secret: make([]byte, store.SecretSize)}
	_, _ = rand.Read(cl.secret)
	artifacts := t.TempDir()
	for i := range n {
		cl.nodes = append(cl.nodes, startNode(t, i, cl, artifacts))
	}
	guard := time.AfterFunc(hangGuard, func() {
		t.Errorf("hang guard: the test did not end within %v; killing the daemons", hangGuard)
		for _, nd := range cl.nodes {
			_ = nd.cmd.Process.Kill()
		}
	})
	t.Cleanup(func() { guard.Stop() })

	deadline := time.After(bound)
	for _, nd := range cl.nodes {
		select {
		case nd.addr = <-nd.out.addr:
		case <-nd.exited:
			t.Fatalf("%s exited before serving; its output:\n%s", nd.name, nd.logs.tail())
		case <-deadline:
			t.Fatalf("%s did not serve within %v; its output:\n%s", nd.name, bound, nd.logs.tail())
		}
		c, err := client.New(client.WithBaseURL("http://"+nd.addr), client.WithAPIKey(apiKey), client.WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		nd.c = c
	}
	return cl
}

// startNode starts daemon process i of cl. The process is stopped when the
// test ends: asked to (stdin closed), then killed if it does not exit.
func startNode(t *testing.T, i int, cl *cluster, artifacts string) *node {
	t.Helper()
	dir := t.TempDir()
	nd := &node{
		name:       fmt.Sprintf("daemon %d", i),
		logs:       &lockedBuffer{},
		out:        &addrWriter{addr: make(chan string, 1)},
		executions: filepath.Join(dir, "executions.txt"),
		exited:     make(chan struct{}),
	}
	nd.cmd = exec.Command(os.Args[0], "-test.run=^$")
	nd.cmd.Env = append(os.Environ(),
		envDataDir+"="+filepath.Join(dir, "data"), envStore+"="+cl.url, envArtifacts+"="+artifacts,
		envKey+"="+apiKey, envSecret+"="+hex.EncodeToString(cl.secret), envExecutions+"="+nd.executions)
	nd.cmd.Stdout = nd.out
	nd.cmd.Stderr = nd.logs
	var err error
	if nd.stdin, err = nd.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := nd.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = nd.cmd.Wait()
		close(nd.exited)
	}()
	t.Cleanup(func() {
		nd.stdin.Close()
		select {
		case <-nd.exited:
		case <-time.After(bound):
			t.Errorf("%s did not stop within %v of being asked to; killing it", nd.name, bound)
			_ = nd.cmd.Process.Kill()
			<-nd.exited
		}
		if t.Failed() {
			t.Logf("%s's output (the end of it):\n%s", nd.name, nd.logs.tail())
		}
	})
	return nd
}

// kill kills the daemon process with SIGKILL and waits until it is gone.
func (nd *node) kill(t *testing.T) {
	t.Helper()
	if err := nd.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill %s: %v", nd.name, err)
	}
	select {
	case <-nd.exited:
	case <-time.After(bound):
		t.Fatalf("%s did not exit within %v of SIGKILL", nd.name, bound)
	}
}

// executions is what the daemons' executors noted: for each run id, the
// daemons (indexes, one per start) that started it, and how each ended.
type executions struct {
	started map[string][]int
	ended   map[string][]string
}

// executions reads the notes of every daemon. A line not yet ended by a
// newline (being written) is left for the next read.
func (cl *cluster) executions(t *testing.T) executions {
	t.Helper()
	ex := executions{started: map[string][]int{}, ended: map[string][]string{}}
	for i, nd := range cl.nodes {
		b, err := os.ReadFile(nd.executions)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if j := bytes.LastIndexByte(b, '\n'); j >= 0 {
			b = b[:j+1]
		} else {
			b = nil
		}
		for line := range strings.Lines(string(b)) {
			f := strings.Fields(line)
			switch {
			case len(f) == 2 && f[0] == "start":
				ex.started[f[1]] = append(ex.started[f[1]], i)
			case len(f) == 3 && f[0] == "end":
				ex.ended[f[1]] = append(ex.ended[f[1]], f[2])
			default:
				t.Fatalf("%s noted %q", nd.name, line)
			}
		}
	}
	return ex
}

// checkOnce reports every run that was started more than once, on any
// daemons.
func (ex executions) checkOnce(t *testing.T) {
	t.Helper()
	for id, on := range ex.started {
		if len(on) > 1 {
			t.Errorf("run %s executed %d times, on daemons %v", id, len(on), on)
		}
	}
}

// waitUntil calls cond until it reports done, failing the test, with
// cond's last account of what it waits for, after bound.
func waitUntil(t *testing.T, what string, cond func() (done bool, status string)) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		done, status := cond()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %s", what, bound, status)
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-t.Context().Done():
			t.Fatalf("%s: %v", what, t.Context().Err())
		}
	}
}

// runsOf lists, through c, the runs among ids (all runs when ids is nil)
// that o selects.
func runsOf(t *testing.T, c *client.Client, o *client.ListRunsOptions, ids map[string]bool) map[string]*client.RunListItem {
	t.Helper()
	o.PageSize = 100
	out := map[string]*client.RunListItem{}
	for r, err := range c.Runs.All(t.Context(), o) {
		if err != nil {
			t.Fatalf("list runs: %v", err)
		}
		if ids == nil || ids[r.RunID] {
			out[r.RunID] = r
		}
	}
	return out
}

// waitTerminal waits until every run of ids is terminal, as listed
// through c, and returns them.
func waitTerminal(t *testing.T, what string, c *client.Client, ids []string) map[string]*client.RunListItem {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var runs map[string]*client.RunListItem
	waitUntil(t, what, func() (bool, string) {
		runs = runsOf(t, c, &client.ListRunsOptions{}, want)
		counts := map[client.RunStatus]int{}
		for _, id := range ids {
			if r, ok := runs[id]; ok {
				counts[r.Status]++
			} else {
				counts["not listed"]++
			}
		}
		for st := range counts {
			if !st.IsTerminal() {
				return false, fmt.Sprintf("%d runs by status: %v", len(ids), counts)
			}
		}
		return true, ""
	})
	return runs
}

func (cl *cluster) openStore(t *testing.T) *pgstore.Store {
	t.Helper()
	st, err := pgstore.Open(t.Context(), cl.url, store.Options{Secret: cl.secret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// startTasks makes a task run of script through each daemon in turn, n in
// all, several at once, and returns their ids in order.
func (cl *cluster) startTasks(t *testing.T, n int, script string) []string {
	t.Helper()
	ids := make([]string, n)
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				run, err := cl.nodes[i%len(cl.nodes)].c.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: scripted.Prefix + " " + script})
				if err != nil {
					errs[i] = fmt.Errorf("start run %d through %s: %w", i, cl.nodes[i%len(cl.nodes)].name, err)
					continue
				}
				ids[i] = run.RunID
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// TestThreeDaemonsOneDatabase is the test: three daemon processes
// on one database, started at once.
func TestThreeDaemonsOneDatabase(t *testing.T) {
	began := time.Now()
	cl := startCluster(t, 3)
	t.Logf("three daemons serving after %v", time.Since(began).Round(time.Millisecond))

	// Each registered the API key for the default organization, all at
	// once: there is one organization, which the key opens on each.
	t.Run("one organization", func(t *testing.T) {
		orgs, err := cl.openStore(t).Organizations(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(orgs) != 1 {
			t.Errorf("%d organizations after three daemons started at once, want 1: %+v", len(orgs), orgs)
		}
		for _, nd := range cl.nodes {
			if _, err := nd.c.Runs.List(t.Context(), nil); err != nil {
				t.Errorf("the API key through %s: %v", nd.name, err)
			}
		}
	})

	// 300 runs made through the three daemons in turn each execute once,
	// on whichever daemon claimed it.
	t.Run("300 runs execute once each", func(t *testing.T) {
		start := time.Now()
		ids := cl.startTasks(t, 300, "steps=1")
		made := time.Since(start)
		runs := waitTerminal(t, "300 runs end", cl.nodes[0].c, ids)
		t.Logf("300 runs made in %v, all ended after %v", made.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		for _, id := range ids {
			if r := runs[id]; r.Status != client.RunStatusCompleted {
				t.Errorf("run %s: %s", id, r.Status)
			}
		}
		ex := cl.executions(t)
		ex.checkOnce(t)
		per := make([]int, len(cl.nodes))
		for _, id := range ids {
			on := ex.started[id]
			if len(on) == 0 {
				t.Errorf("run %s completed, but no daemon noted executing it", id)
				continue
			}
			per[on[0]]++
			if !slices.Equal(ex.ended[id], []string{string(client.RunStatusCompleted)}) {
				t.Errorf("run %s: the executor's ends %v", id, ex.ended[id])
			}
		}
		// How the runs spread over the daemons depends on who claims
		// first; it is reported, not asserted (the kill test below
		// asserts a spread it can make certain).
		t.Logf("runs executed per daemon: %v", per)
	})

	// A schedule firing every second, created through one daemon, with
	// all three planning it: no fire time starts two runs.
	t.Run("schedule fires once per second", func(t *testing.T) {
		cl.checkSchedule(t)
	})

	// Six runs that block fill the six workers, two on each daemon (no
	// daemon executes more than its workers, and a blocked run never
	// ends); six more wait behind them. One daemon is killed with SIGKILL:
	// its two runs end failed, saying that their daemon stopped. The
	// survivors' blocked runs are canceled, each through the daemon that
	// does not execute it; the waiting runs, two of them made through the
	// killed daemon, then complete on the survivors.
	t.Run("kill -9 and cancel through another daemon", func(t *testing.T) {
		cl.checkKillAndCancel(t)
	})

	cl.executions(t).checkOnce(t)
	t.Logf("whole test: %v", time.Since(began).Round(time.Millisecond))
}

func (cl *cluster) checkSchedule(t *testing.T) {
	ctx := t.Context()
	c0, c1, c2 := cl.nodes[0].c, cl.nodes[1].c, cl.nodes[2].c
	agent, err := c0.Agents.Create(ctx, &client.AgentDefinition{
		Title: "Every second",
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: []client.Parameter{{Key: scripted.ParamKey, ParameterType: client.ParameterTypeWorkflow,
				WorkflowParameterType: client.WorkflowParameterString, DefaultValue: json.RawMessage(`"steps=1"`)}},
			Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"}},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	agentID := agent.WorkflowPermanentID
	created := time.Now()
	s, err := c1.Schedules.Create(ctx, agentID, &client.ScheduleRequest{CronExpression: "* * * * * *", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	id := s.Schedule.WorkflowScheduleID
	// The experiment lasts scheduleFor; nothing waits on its timing.
	select {
	case <-time.After(scheduleFor):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	if _, err := c2.Schedules.Disable(ctx, agentID, id); err != nil {
		t.Fatal(err)
	}
	seconds := time.Since(created).Seconds()

	// Once disabled, the schedule starts nothing more (the store refuses
	// the fire time of a disabled schedule, whichever daemon planned it):
	// its runs are all there.
	var ids []string
	for rid := range runsOf(t, c0, &client.ListRunsOptions{Tags: []string{client.ScheduleTag(id)}}, nil) {
		ids = append(ids, rid)
	}
	waitTerminal(t, "the schedule's runs end", c0, ids)

	st := cl.openStore(t)
	org, err := st.DefaultOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[time.Time]string{}
	var first, last time.Time
	for _, rid := range ids {
		rec, err := st.Runs().Get(ctx, org.ID, rid)
		if err != nil {
			t.Fatal(err)
		}
		if rec.ScheduleID != id || rec.ScheduledFor == nil {
			t.Errorf("run %s: schedule %q, fire time %v", rid, rec.ScheduleID, rec.ScheduledFor)
			continue
		}
		at := rec.ScheduledFor.Time
		if !at.Equal(at.Truncate(time.Second)) {
			t.Errorf("run %s: fire time %v is not a whole second", rid, at)
		}
		if other, twice := seen[at]; twice {
			t.Errorf("fire time %v has two runs: %s and %s", at, other, rid)
		}
		seen[at] = rid
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
		if rec.Status != client.RunStatusCompleted {
			t.Errorf("run %s of the schedule: %s %q", rid, rec.Status, rec.FailureReason)
		}
	}
	if least := int(seconds / 2); len(seen) < least {
		t.Errorf("%d fire times started runs in %.1f s, want at least %d", len(seen), seconds, least)
	}
	ex := cl.executions(t)
	per := make([]int, len(cl.nodes))
	for _, rid := range ids {
		if on := ex.started[rid]; len(on) > 0 {
			per[on[0]]++
		}
	}
	after, err := c0.Schedules.Get(ctx, agentID, id)
	if err != nil {
		t.Fatal(err)
	}
	a := after.Schedule.ScheduleActivity
	t.Logf("schedule: %d runs, each for a fire time of its own, from %s to %s, in %.1f s enabled; skipped %d, missed %d; executed per daemon %v",
		len(seen), first.Format(time.TimeOnly), last.Format(time.TimeOnly), seconds, a.SkippedFires, a.MissedFires, per)
}

func (cl *cluster) checkKillAndCancel(t *testing.T) {
	ctx := t.Context()
	const victim = 2
	n := len(cl.nodes)
	blocked := cl.startTasks(t, workers*n, "block")
	where := map[string]int{}
	waitUntil(t, "every worker executes a blocked run", func() (bool, string) {
		ex := cl.executions(t)
		started := 0
		for _, id := range blocked {
			if on := ex.started[id]; len(on) > 0 {
				where[id] = on[0]
				started++
			}
		}
		return started == len(blocked), fmt.Sprintf("%d of %d blocked runs started", started, len(blocked))
	})
	per := make([]int, n)
	for _, id := range blocked {
		per[where[id]]++
	}
	for _, k := range per {
		if k != workers {
			t.Fatalf("blocked runs executing per daemon: %v, want %d on each", per, workers)
		}
	}
	waiting := cl.startTasks(t, workers*n, "steps=1")

	killed := time.Now()
	cl.nodes[victim].kill(t)
	c0 := cl.nodes[0].c

	// The victim's runs: taken over once their leases lapse, and ended
	// failed, with a reason that says why.
	var lost []string
	for _, id := range blocked {
		if where[id] == victim {
			lost = append(lost, id)
		}
	}
	waitTerminal(t, "the killed daemon's runs end", c0, lost)
	t.Logf("the killed daemon's runs ended %v after SIGKILL (lease %v)", time.Since(killed).Round(time.Millisecond), lease)
	for _, id := range lost {
		r, err := c0.Runs.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != client.RunStatusFailed || !strings.Contains(r.GetFailureReason(), "stopped") {
			t.Errorf("run %s of the killed daemon: %s %q, want failed saying its daemon stopped", id, r.Status, r.GetFailureReason())
		}
	}

	// The survivors' blocked runs, each canceled through the other
	// survivor.
	var survivors []string
	for _, id := range blocked {
		if where[id] == victim {
			continue
		}
		survivors = append(survivors, id)
		through := cl.nodes[1-where[id]]
		if err := through.c.Runs.Cancel(ctx, id); err != nil {
			t.Fatalf("cancel run %s (on %s) through %s: %v", id, cl.nodes[where[id]].name, through.name, err)
		}
	}
	canceled := time.Now()
	runs := waitTerminal(t, "the canceled runs end", c0, survivors)
	t.Logf("runs canceled through another daemon ended %v after the cancel", time.Since(canceled).Round(time.Millisecond))
	for _, id := range survivors {
		if runs[id].Status != client.RunStatusCanceled {
			t.Errorf("run %s on %s, canceled through another daemon: %s", id, cl.nodes[where[id]].name, runs[id].Status)
		}
	}

	// The runs that waited complete on the survivors, those made through
	// the killed daemon too.
	runs = waitTerminal(t, "the waiting runs end", c0, waiting)
	ex := cl.executions(t)
	for i, id := range waiting {
		if runs[id].Status != client.RunStatusCompleted {
			t.Errorf("waiting run %s (made through %s): %s", id, cl.nodes[i%n].name, runs[id].Status)
		}
		if on := ex.started[id]; len(on) != 1 || on[0] == victim {
			t.Errorf("waiting run %s (made through %s) executed on daemons %v, want once on a survivor", id, cl.nodes[i%n].name, on)
		}
	}
	ex.checkOnce(t)

	// Nothing of the cluster is left unfinished.
	unfinished := runsOf(t, c0, &client.ListRunsOptions{Status: []client.RunStatus{
		client.RunStatusCreated, client.RunStatusQueued, client.RunStatusRunning, client.RunStatusPaused}}, nil)
	for id, r := range unfinished {
		t.Errorf("run %s is still %s", id, r.Status)
	}
}

// addrWriter is a daemon process's stdout: it hands on the address line
// and drops the rest.
type addrWriter struct {
	mu    sync.Mutex
	buf   []byte
	found bool
	addr  chan string
}

func (w *addrWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.found {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		if a, ok := strings.CutPrefix(line, addrLine); ok {
			w.found, w.buf = true, nil
			w.addr <- a
			return len(p), nil
		}
	}
}

// lockedBuffer collects a daemon process's logs, for a failure's message.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// tail returns the last 20 KiB of the logs.
func (l *lockedBuffer) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.b.Bytes()
	if len(b) > 20<<10 {
		b = b[len(b)-20<<10:]
	}
	return string(b)
}
