package runner_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/runner"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// deadline bounds every wait of these tests: generous, since the machine
// may be slow; no test expects to come near it.
const deadline = 20 * time.Second

// files keeps run directories under a temporary directory.
type files struct{ root string }

func (f files) RunDir(orgID, runID string) (string, error) {
	dir := filepath.Join(f.root, orgID, runID)
	return dir, os.MkdirAll(dir, 0o700)
}

func (f files) Record(orgID, runID, name string, typ client.ArtifactType) (store.RunFile, error) {
	b, err := os.ReadFile(filepath.Join(f.root, orgID, runID, name))
	if err != nil {
		return store.RunFile{}, err
	}
	sum := sha256.Sum256(b)
	return store.RunFile{ID: "a_" + name, Type: typ, Name: name, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:]), CreatedAt: client.Now()}, nil
}

// notifier counts the webhooks of each run and the statuses they carried;
// with fail set, every delivery fails.
type notifier struct {
	mu       sync.Mutex
	statuses map[string][]client.RunStatus
	fail     bool
}

func (n *notifier) Notify(_ context.Context, rec *store.RunRecord) *store.WebhookDelivery {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.statuses == nil {
		n.statuses = map[string][]client.RunStatus{}
	}
	n.statuses[rec.ID] = append(n.statuses[rec.ID], rec.Status)
	d := &store.WebhookDelivery{URL: "http://127.0.0.1:1/hook", At: client.Now(), StatusCode: 200}
	if n.fail {
		d.StatusCode, d.Error = 500, "Webhook failed with status code 500, error message: boom"
	}
	return d
}

func (n *notifier) sent(runID string) []client.RunStatus {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.statuses[runID])
}

type env struct {
	t     *testing.T
	st    store.Store
	exec  *scripted.Executor
	notes *notifier
	cfg   runner.Config
	r     *runner.Runner
}

func newEnv(t *testing.T, workers int) *env {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "abctl.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return newEnvOn(t, st, workers)
}

// newEnvOn is newEnv on a store of the caller's, which the test's cleanup
// closes.
func newEnvOn(t *testing.T, st store.Store, workers int) *env {
	t.Helper()
	e := &env{t: t, st: st, exec: &scripted.Executor{}, notes: &notifier{}}
	e.cfg = runner.Config{Store: st, Executor: e.exec, Files: files{root: t.TempDir()}, Notifier: e.notes, Workers: workers}
	// Cleanups run last in, first out: release the gates, stop the
	// runner, then close the store.
	t.Cleanup(func() { st.Close() })
	t.Cleanup(func() {
		if e.r != nil {
			e.r.Stop()
		}
	})
	t.Cleanup(e.exec.ReleaseAll)
	return e
}

// start makes and starts the runner.
func (e *env) start() *runner.Runner {
	e.t.Helper()
	e.r = runner.New(e.cfg)
	if err := e.r.Start(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
	return e.r
}

func (e *env) org(name string) string {
	e.t.Helper()
	org, _, err := e.st.CreateOrganization(e.t.Context(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return org.ID
}

// create stores a queued task run whose prompt is the script.
func (e *env) create(orgID, script string) string {
	e.t.Helper()
	rec := &store.RunRecord{
		ID: e.st.Runs().NewID(client.RunTypeTaskV1), OrgID: orgID, Type: client.RunTypeTaskV1,
		Status: client.RunStatusQueued, Task: &client.TaskRunRequest{Prompt: scripted.Prefix + script},
	}
	if err := e.st.Runs().Create(e.t.Context(), rec); err != nil {
		e.t.Fatal(err)
	}
	return rec.ID
}

// submit stores a run and hands it to the runner.
func (e *env) submit(orgID, script string) string {
	id := e.create(orgID, script)
	e.r.Submit(orgID, id)
	return id
}

func (e *env) get(orgID, id string) *store.RunRecord {
	e.t.Helper()
	rec, err := e.st.Runs().Get(context.Background(), orgID, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return rec
}

// until polls cond until it holds, failing the test at the deadline.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("gave up after %v waiting for %s", deadline, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ended waits until the run is terminal and its webhook was sent, and
// returns it.
func (e *env) ended(orgID, id string) *store.RunRecord {
	e.t.Helper()
	var rec *store.RunRecord
	until(e.t, "run "+id+" to end and send its webhook", func() bool {
		rec = e.get(orgID, id)
		return rec.Terminal() && rec.Webhook != nil
	})
	return rec
}

func (e *env) blocked(gate string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), deadline)
	defer cancel()
	if err := e.exec.WaitBlocked(ctx, gate); err != nil {
		e.t.Fatal(err)
	}
}

// TestFairOrderFromStart: the queue rebuilt at Start serves organizations
// round-robin, each in its own order.
func TestFairOrderFromStart(t *testing.T) {
	e := newEnv(t, 1)
	a, b, c := e.org("a"), e.org("b"), e.org("c")
	a1, a2, a3, a4 := e.create(a, "steps=1"), e.create(a, "steps=1"), e.create(a, "steps=1"), e.create(a, "steps=1")
	b1, c1, c2 := e.create(b, "steps=1"), e.create(c, "steps=1"), e.create(c, "steps=1")
	e.start()
	e.ended(a, a4)
	e.ended(c, c2)
	want := []string{a1, b1, c1, a2, c2, a3, a4}
	if got := e.exec.Order(); !slices.Equal(got, want) {
		t.Errorf("order\n%v\nwant\n%v", got, want)
	}
}

// TestFairOrderOfSubmissions: an organization that submits many runs does
// not delay another's single run behind all of them.
func TestFairOrderOfSubmissions(t *testing.T) {
	e := newEnv(t, 1)
	a, b := e.org("a"), e.org("b")
	e.start()
	first := e.submit(a, "block")
	e.blocked(first)
	var many []string
	for range 10 {
		many = append(many, e.submit(a, "steps=1"))
	}
	single := e.submit(b, "steps=1")
	e.exec.Release(first)
	e.ended(b, single)
	e.ended(a, many[len(many)-1])
	order := e.exec.Order()
	if i := slices.Index(order, single); i < 0 || i > 2 {
		t.Errorf("the other organization's run executed in position %d of %v, want within the first 3", i, order)
	}
	if got := slices.DeleteFunc(slices.Clone(order), func(id string) bool { return id == single || id == first }); !slices.Equal(got, many) {
		t.Errorf("one organization's runs out of order: %v, want %v", got, many)
	}
}

// TestCancelKeepsRoundRobinTurn: canceling the last queued run of an
// organization served before the current turn does not skip the next
// organization.
func TestCancelKeepsRoundRobinTurn(t *testing.T) {
	e := newEnv(t, 2)
	z, a, b, c := e.org("z"), e.org("a"), e.org("b"), e.org("c")
	z1 := e.create(z, "block")
	a1, a2 := e.create(a, "block"), e.create(a, "steps=1")
	b1, b2 := e.create(b, "steps=1"), e.create(b, "steps=1")
	c1, c2 := e.create(c, "steps=1"), e.create(c, "steps=1")
	e.start()
	// Both workers are busy: z1 and a1 executing; a2, b1, b2, c1, c2
	// queued, and it is b's turn.
	e.blocked(z1)
	e.blocked(a1)
	if rec, err := e.r.Cancel(t.Context(), a, a2); err != nil || rec.Status != client.RunStatusCanceled {
		t.Fatalf("cancel a2: %v %v", rec, err)
	}
	e.exec.Release(a1)
	e.ended(c, c2)
	e.ended(b, b2)
	order := e.exec.Order()
	if got := order[2:]; !slices.Equal(got, []string{b1, c1, b2, c2}) {
		t.Errorf("after the cancel: %v, want %v", got, []string{b1, c1, b2, c2})
	}
	e.exec.Release(z1)
	e.ended(z, z1)
}

// TestWorkerBound: never more executions at once than Workers.
func TestWorkerBound(t *testing.T) {
	const workers = 3
	e := newEnv(t, workers)
	orgs := []string{e.org("a"), e.org("b")}
	e.start()
	type ref struct{ org, id string }
	var runs []ref
	for i := range 12 {
		org := orgs[i%2]
		runs = append(runs, ref{org, e.submit(org, "steps=2;sleep=5ms")})
	}
	for _, r := range runs {
		if rec := e.ended(r.org, r.id); rec.Status != client.RunStatusCompleted {
			t.Errorf("%s: %s %q", r.id, rec.Status, rec.FailureReason)
		}
	}
	if p := e.exec.Peak(); p > workers || p < 1 {
		t.Errorf("peak of %d executions at once with %d workers", p, workers)
	}
	if n := e.exec.Calls(); n != len(runs) {
		t.Errorf("%d executions of %d runs", n, len(runs))
	}
}

// TestStopEndsExecutingRuns: Stop ends the executing runs failed (their
// webhooks sent), leaves queued runs queued for the next start, which
// executes them.
func TestStopEndsExecutingRuns(t *testing.T) {
	e := newEnv(t, 2)
	org := e.org("a")
	e.start()
	r1 := e.submit(org, "steps=1;screenshots=1;block")
	r2 := e.submit(org, "block")
	e.blocked(r1)
	e.blocked(r2)
	queued := e.submit(org, "steps=1")
	e.r.Stop()
	for _, id := range []string{r1, r2} {
		rec := e.get(org, id)
		if rec.Status != client.RunStatusFailed || !strings.Contains(rec.FailureReason, "shut down") {
			t.Errorf("%s after Stop: %s %q", id, rec.Status, rec.FailureReason)
		}
		if got := e.notes.sent(id); !slices.Equal(got, []client.RunStatus{client.RunStatusFailed}) {
			t.Errorf("%s webhooks: %v", id, got)
		}
	}
	if rec := e.get(org, r1); len(rec.Files) != 1 || rec.StepCount == nil || *rec.StepCount != 1 {
		t.Errorf("the stopped run lost what it produced: files %v steps %v", rec.Files, rec.StepCount)
	}
	if rec := e.get(org, queued); rec.Status != client.RunStatusQueued || len(e.notes.sent(queued)) != 0 {
		t.Errorf("queued run after Stop: %s, %d webhooks", rec.Status, len(e.notes.sent(queued)))
	}
	e.start()
	if rec := e.ended(org, queued); rec.Status != client.RunStatusCompleted {
		t.Errorf("queued run after restart: %s %q", rec.Status, rec.FailureReason)
	}
}

// TestStartResumesUnfinishedRuns: a run left running by a crash ends
// failed saying the daemon restarted; queued and created runs execute.
func TestStartResumesUnfinishedRuns(t *testing.T) {
	e := newEnv(t, 1)
	org := e.org("a")
	ctx := t.Context()
	interrupted := e.create(org, "steps=1")
	if _, err := e.st.Runs().Update(ctx, org, interrupted, func(r *store.RunRecord) error {
		r.Status = client.RunStatusRunning
		r.Output = json.RawMessage(`{"partial":true}`)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	queued := e.create(org, "steps=2")
	// A run that ended just before the crash, its webhook not sent yet.
	unsent := &store.RunRecord{ID: e.st.Runs().NewID(client.RunTypeTaskV1), OrgID: org, Type: client.RunTypeTaskV1,
		Status: client.RunStatusQueued, Task: &client.TaskRunRequest{Prompt: "script: steps=1"}, WebhookURL: "http://127.0.0.1:1/hook"}
	if err := e.st.Runs().Create(ctx, unsent); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Runs().Update(ctx, org, unsent.ID, func(r *store.RunRecord) error {
		r.Status = client.RunStatusCompleted
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// One that ended with no webhook to send is not pending.
	quiet := e.create(org, "steps=1")
	if _, err := e.st.Runs().Update(ctx, org, quiet, func(r *store.RunRecord) error {
		r.Status = client.RunStatusCompleted
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	created := &store.RunRecord{ID: e.st.Runs().NewID(client.RunTypeTaskV1), OrgID: org, Type: client.RunTypeTaskV1,
		Status: client.RunStatusCreated, Task: &client.TaskRunRequest{Prompt: "script: steps=1"}}
	if err := e.st.Runs().Create(ctx, created); err != nil {
		t.Fatal(err)
	}
	pending, err := e.st.Runs().Pending(ctx)
	if err != nil || len(pending) != 4 || slices.ContainsFunc(pending, func(r store.RunRef) bool { return r.RunID == quiet }) {
		t.Errorf("pending before the restart: %v %v", pending, err)
	}
	e.start()

	if rec := e.ended(org, unsent.ID); rec.Status != client.RunStatusCompleted || rec.Webhook == nil {
		t.Errorf("run with an unsent webhook: %s %+v", rec.Status, rec.Webhook)
	}
	rec := e.ended(org, interrupted)
	if rec.Status != client.RunStatusFailed || !strings.Contains(rec.FailureReason, "restarted") || string(rec.Output) != `{"partial":true}` {
		t.Errorf("interrupted run: %s %q output %s", rec.Status, rec.FailureReason, rec.Output)
	}
	for _, id := range []string{queued, created.ID} {
		if rec := e.ended(org, id); rec.Status != client.RunStatusCompleted || rec.StartedAt == nil || rec.FinishedAt == nil {
			t.Errorf("%s: %s", id, rec.Status)
		}
	}
	if _, ok := e.exec.Job(interrupted); ok {
		t.Error("the interrupted run was executed again")
	}
	if pending, err := e.st.Runs().Pending(ctx); err != nil || len(pending) != 0 {
		t.Errorf("pending after recovery: %v %v", pending, err)
	}
	if _, ok := e.exec.Job(unsent.ID); ok {
		t.Error("the ended run was executed again")
	}
	if n := len(e.notes.sent(quiet)); n != 0 {
		t.Errorf("the run without a webhook to send: %d webhooks", n)
	}
	for _, id := range []string{interrupted, queued, created.ID, unsent.ID} {
		if n := len(e.notes.sent(id)); n != 1 {
			t.Errorf("%s: %d webhooks", id, n)
		}
	}
}

// TestCancel: a queued run is canceled at once, an executing one as soon
// as its executor returns, keeping what it produced; an ended run stays as
// it was.
func TestCancel(t *testing.T) {
	e := newEnv(t, 1)
	org := e.org("a")
	e.start()
	running := e.submit(org, "steps=2;screenshots=2;block")
	e.blocked(running)
	queued := e.submit(org, "steps=1")

	// Another organization names the runs: nothing happens to them.
	other := e.org("b")
	for _, id := range []string{running, queued} {
		if _, err := e.r.Cancel(t.Context(), other, id); err == nil {
			t.Errorf("another organization canceled %s", id)
		}
		if rec := e.get(org, id); rec.Terminal() {
			t.Errorf("%s after another organization's cancel: %s", id, rec.Status)
		}
	}

	rec, err := e.r.Cancel(t.Context(), org, queued)
	if err != nil || rec.Status != client.RunStatusCanceled || rec.FinishedAt == nil {
		t.Fatalf("cancel queued: %+v %v", rec, err)
	}
	if _, err := e.r.Cancel(t.Context(), org, running); err != nil {
		t.Fatal(err)
	}
	rec = e.ended(org, running)
	if rec.Status != client.RunStatusCanceled || len(rec.Files) != 2 || rec.StepCount == nil || *rec.StepCount != 2 {
		t.Errorf("canceled running run: %s files %d steps %v", rec.Status, len(rec.Files), rec.StepCount)
	}
	e.ended(org, queued)
	if _, ok := e.exec.Job(queued); ok {
		t.Error("the run canceled while queued was executed")
	}

	done := e.submit(org, "steps=1")
	e.ended(org, done)
	if rec, err := e.r.Cancel(t.Context(), org, done); err != nil || rec.Status != client.RunStatusCompleted {
		t.Errorf("cancel of an ended run: %v %v", rec, err)
	}
	if _, err := e.r.Cancel(t.Context(), org, "tsk_1"); err == nil {
		t.Error("cancel of an unknown run: no error")
	}
	e.r.Stop()
	for _, id := range []string{running, queued, done} {
		if n := len(e.notes.sent(id)); n != 1 {
			t.Errorf("%s: %d webhooks", id, n)
		}
	}
}

// TestCancelRaces cancels runs at every moment of their life (before they
// are queued, as a worker takes them, while they execute, after they end):
// every run ends in exactly one terminal state, with exactly one webhook
// that carries it.
func TestCancelRaces(t *testing.T) {
	e := newEnv(t, 2)
	orgs := []string{e.org("a"), e.org("b")}
	e.start()
	const n = 60
	type ref struct{ org, id string }
	runs := make([]ref, n)
	var wg sync.WaitGroup
	for i := range n {
		org := orgs[i%2]
		script := []string{"steps=1", "steps=2;sleep=1ms", "steps=1;screenshots=1", "steps=3"}[i%4]
		id := e.create(org, script)
		runs[i] = ref{org, id}
		go0 := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-go0
			if i%5 == 4 {
				time.Sleep(time.Duration(i%3) * time.Millisecond) // spread cancels over the run's life
			}
			if _, err := e.r.Cancel(context.Background(), org, id); err != nil {
				t.Errorf("cancel %s: %v", id, err)
			}
		}()
		if i%7 == 6 {
			close(go0) // canceled before it is submitted
			wg.Wait()
			e.r.Submit(org, id)
			continue
		}
		close(go0)
		e.r.Submit(org, id)
	}
	wg.Wait()
	final := map[string]client.RunStatus{}
	for _, r := range runs {
		rec := e.ended(r.org, r.id)
		if rec.Status != client.RunStatusCanceled && rec.Status != client.RunStatusCompleted {
			t.Errorf("%s ended %s %q", r.id, rec.Status, rec.FailureReason)
		}
		final[r.id] = rec.Status
	}
	e.r.Stop()
	for _, r := range runs {
		if got := e.notes.sent(r.id); !slices.Equal(got, []client.RunStatus{final[r.id]}) {
			t.Errorf("%s ended %s, webhooks %v", r.id, final[r.id], got)
		}
		if rec := e.get(r.org, r.id); rec.Status != final[r.id] {
			t.Errorf("%s moved from %s to %s after its webhook", r.id, final[r.id], rec.Status)
		}
	}
	if e.exec.Running() != 0 {
		t.Errorf("%d executions still running", e.exec.Running())
	}
}

// TestWebhookFailureFailsRun: a failed delivery turns the run failed with
// a reason that says so, keeping its output.
func TestWebhookFailureFailsRun(t *testing.T) {
	e := newEnv(t, 1)
	e.notes.fail = true
	org := e.org("a")
	e.start()
	id := e.submit(org, `steps=1;output={"a":1}`)
	rec := e.ended(org, id)
	if rec.Status != client.RunStatusFailed || rec.FailureReason != runner.WebhookFailureReason(rec.Webhook) ||
		!strings.Contains(rec.FailureReason, "could not be sent") || string(rec.Output) != `{"a":1}` {
		t.Errorf("%s %q output %s", rec.Status, rec.FailureReason, rec.Output)
	}
	if got := e.notes.sent(id); !slices.Equal(got, []client.RunStatus{client.RunStatusCompleted}) {
		t.Errorf("webhooks %v", got)
	}
}

// TestLimitsAndExecutorMistakes: the time limit ends a run timed_out; a
// workflow run whose agent is gone fails before executing; a status that
// is not final counts as failed.
func TestLimitsAndExecutorMistakes(t *testing.T) {
	e := newEnv(t, 2)
	e.cfg.Minute = 20 * time.Millisecond
	org := e.org("a")
	e.start()
	ctx := t.Context()

	limited := e.create(org, "steps=1;screenshots=1;block")
	if _, err := e.st.Runs().Update(ctx, org, limited, func(r *store.RunRecord) error { r.MaxElapsedMinutes = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	e.r.Submit(org, limited)
	rec := e.ended(org, limited)
	// Whether the screenshot came before the 20 ms limit depends on the
	// machine's load: the files a run that ends early keeps are checked
	// deterministically by TestCancel's canceled running run.
	if rec.Status != client.RunStatusTimedOut || !strings.Contains(rec.FailureReason, "time limit") || rec.StartedAt == nil {
		t.Errorf("time limit: %s %q started %v", rec.Status, rec.FailureReason, rec.StartedAt)
	}

	orphan := &store.RunRecord{ID: e.st.Runs().NewID(client.RunTypeWorkflowRun), OrgID: org, Type: client.RunTypeWorkflowRun,
		Status: client.RunStatusQueued, AgentID: "wpid_1", AgentVersion: 1}
	if err := e.st.Runs().Create(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	e.r.Submit(org, orphan.ID)
	rec = e.ended(org, orphan.ID)
	if rec.Status != client.RunStatusFailed || !strings.Contains(rec.FailureReason, "deleted") {
		t.Errorf("agent gone: %s %q", rec.Status, rec.FailureReason)
	}
	if _, ok := e.exec.Job(orphan.ID); ok {
		t.Error("a run without its agent was executed")
	}

	for _, status := range []string{"running", "queued", "bogus"} {
		id := e.submit(org, "steps=1;status="+status)
		if rec := e.ended(org, id); rec.Status != client.RunStatusFailed || !strings.Contains(rec.FailureReason, fmt.Sprintf("%q", status)) {
			t.Errorf("status %s: %s %q", status, rec.Status, rec.FailureReason)
		}
	}
}

// executorFunc is an executor.Executor made of a function, for runs that
// report what the scripted executor does not (block labels).
type executorFunc func(ctx context.Context, job *executor.Job, p executor.Progress) executor.Result

func (f executorFunc) Execute(ctx context.Context, job *executor.Job, p executor.Progress) executor.Result {
	executor.Started(p)
	return f(ctx, job, p)
}

// TestStepDetailsSummaryAndLogs: the runner's progress records the
// details of each step (a block's label included) and each block as it
// starts and ends, each step under its block,
// and the end of the run keeps the executor's summary and records its
// logs as skyvern_log files.
func TestStepDetailsSummaryAndLogs(t *testing.T) {
	e := newEnv(t, 1)
	e.cfg.Executor = executorFunc(func(ctx context.Context, job *executor.Job, p executor.Progress) executor.Result {
		sr, ok := p.(executor.StepReporter)
		if !ok {
			t.Error("the runner's progress does not take step details")
			return executor.Result{Status: client.RunStatusFailed}
		}
		br, ok := p.(executor.BlockReporter)
		if !ok {
			t.Error("the runner's progress does not take blocks")
			return executor.Result{Status: client.RunStatusFailed}
		}
		started := time.Now()
		login := executor.BlockInfo{Seq: 1, Label: "login", Type: client.BlockTypeNavigation, Status: executor.BlockRunning,
			URL: "http://127.0.0.1:1/login", NavigationGoal: "Sign in.", Started: started}
		br.Block(login)
		p.Step(1)
		sr.StepDetail(executor.StepInfo{Step: 1, Block: "login", BlockSeq: 1, URL: "http://127.0.0.1:1/login", Thought: "Sign in.",
			Actions: []string{`click [e5] button "Sign in": ok`}, Decision: "continue",
			Settle: 1500 * time.Microsecond, Model: 2 * time.Second, InputTokens: 10, OutputTokens: 2})
		login.Status, login.Output, login.Ended = executor.BlockCompleted, json.RawMessage(`{"signed_in":true}`), started.Add(1500*time.Millisecond)
		br.Block(login)
		p.Step(2)
		sr.StepDetail(executor.StepInfo{Step: 2, Decision: "complete"}) // no actions, no block
		sr.StepDetail(executor.StepInfo{Step: 0})                       // refused by the store: logged, the run goes on
		if err := os.WriteFile(filepath.Join(job.Dir, "steps.json"), []byte(`{"steps":[]}`), 0o600); err != nil {
			t.Error(err)
		}
		return executor.Result{Status: client.RunStatusCompleted, StepCount: 2, Summary: "Signed in.", Logs: []string{"steps.json"}}
	})
	e.start()
	org := e.org("a")
	id := e.submit(org, "")
	rec := e.ended(org, id)
	if rec.Status != client.RunStatusCompleted || rec.Summary != "Signed in." || len(rec.Files) != 1 ||
		rec.Files[0].Type != client.ArtifactSkyvernLog || rec.Files[0].Name != "steps.json" {
		t.Errorf("the ended run: status %s, summary %q, files %+v", rec.Status, rec.Summary, rec.Files)
	}
	rows, err := e.st.Runs().StepsJSON(t.Context(), org, id)
	if err != nil || len(rows) != 2 {
		t.Fatalf("steps %s, %v", rows, err)
	}
	var newest, oldest client.RunStep
	if json.Unmarshal(rows[0], &newest) != nil || json.Unmarshal(rows[1], &oldest) != nil {
		t.Fatalf("steps %s", rows)
	}
	s := &oldest
	if s.Number != 1 || s.BlockLabel == nil || *s.BlockLabel != "login" || s.TimingsMS.Settle != 1.5 ||
		s.TimingsMS.Model != 2000 || s.Tokens.Input != 10 || s.Tokens.Output != 2 || len(s.Actions) != 1 {
		t.Errorf("step 1: %s", rows[1])
	}
	trace, err := e.st.Runs().Trace(t.Context(), org, id)
	if err != nil || len(trace.Blocks) != 1 || len(trace.Steps) != 2 {
		t.Fatalf("trace %+v, %v", trace, err)
	}
	b := trace.Blocks[0]
	if !strings.HasPrefix(b.WorkflowRunBlockID, "wrb_") || b.WorkflowRunID != id || b.OrganizationID != org ||
		b.BlockType != client.BlockTypeNavigation || *b.Label != "login" || *b.Status != "completed" ||
		string(b.Output) != `{"signed_in":true}` || *b.NavigationGoal != "Sign in." || b.Duration == nil || *b.Duration != 1.5 ||
		b.CreatedAt.IsZero() || b.ModifiedAt.Before(b.CreatedAt.Time) || b.ParentWorkflowRunBlockID != nil {
		t.Errorf("the block, as recorded when it ended: %+v", b)
	}
	if trace.Steps[0].WorkflowRunBlockID != b.WorkflowRunBlockID || trace.Steps[1].WorkflowRunBlockID != "" {
		t.Errorf("the steps' blocks: %q, %q; want %q, \"\"", trace.Steps[0].WorkflowRunBlockID, trace.Steps[1].WorkflowRunBlockID, b.WorkflowRunBlockID)
	}
	if s := &newest; s.Number != 2 || s.BlockLabel != nil || s.Actions == nil || len(s.Actions) != 0 || s.Decision != "complete" {
		t.Errorf("step 2: %s", rows[0])
	}
}
