//go:build !windows

package daemon_test

// Crash safety: a real daemon process, killed with SIGKILL while a run
// executes and others wait, leaves a store that opens cleanly, and the
// next daemon finishes what the first left: every acknowledged run is
// there, the one that was executing ends failed saying the daemon
// restarted (its webhook sent), the queued ones execute, a webhook the
// crash cut short is sent again, nothing stays queued or running.
//
// The daemon process is this test binary run again: TestMain (main_test.go)
// hands it to crashDaemonProcess when crashDirEnv names its data directory.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

const (
	crashDirEnv   = "ABCTL_TEST_DAEMON_DIR"
	crashKeyEnv   = "ABCTL_TEST_DAEMON_KEY"
	crashAddrLine = "ABCTL_TEST_DAEMON_ADDR="
	// crashProcessLife bounds the daemon process however it is left.
	crashProcessLife = 2 * time.Minute
)

// crashDaemonProcess is the daemon process of TestCrashRecovery, run by
// TestMain in a subprocess whose crashDirEnv names the data directory. It
// serves on loopback with two workers, the scripted executor and a long
// webhook timeout (so that a delivery is still in flight when the test
// kills it), prints its address on stdout, and exits when its stdin closes
// (the test process went away), on SIGTERM, or after crashProcessLife. It
// returns the process's exit code.
func crashDaemonProcess(dir string) int {
	ctx, cancel := context.WithTimeout(context.Background(), crashProcessLife)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	exec := &scripted.Executor{}
	err := daemon.Run(ctx, daemon.Config{
		Addr: "127.0.0.1:0", DataDir: dir, APIKey: os.Getenv(crashKeyEnv),
		Executor: exec, Workers: 2, WebhookTimeout: crashProcessLife, Stderr: os.Stderr,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Ready:  func(addr string) { fmt.Printf("%s%s\n", crashAddrLine, addr) },
	})
	exec.ReleaseAll()
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash daemon process:", err)
		return 1
	}
	return 0
}

// lockedBuffer collects a subprocess's stderr for the failure message.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startDaemonProcess runs the daemon as a subprocess over dir and returns
// its address and the process; the process is killed when the test ends.
func startDaemonProcess(t *testing.T, dir, key string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.timeout="+crashProcessLife.String())
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashKeyEnv+"="+key)
	stdin, err := cmd.StdinPipe() // closed by the test's end or death: the daemon exits
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitOnce sync.Once
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		stdin.Close()
		waitOnce.Do(func() { _ = cmd.Wait() })
		if t.Failed() {
			t.Logf("daemon process output:\n%s", logs.String())
		}
	})
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), crashAddrLine); ok {
				addrc <- a
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case addr := <-addrc:
		return addr, cmd
	case <-time.After(runsDeadline):
		t.Fatalf("the daemon process did not start within %v; its output:\n%s", runsDeadline, logs.String())
	}
	return "", nil
}

func TestCrashRecovery(t *testing.T) {
	const key = "abk_crash_test_key"
	dir := t.TempDir()
	ctx := t.Context()
	sink, held := newWebhookSink(t, key), newWebhookSink(t, key)
	releaseHeld := held.holdAnswers()
	defer releaseHeld()

	addr, cmd := startDaemonProcess(t, dir, key)
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	startTo := func(hook, script string) string {
		t.Helper()
		run, err := c.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: scripted.Prefix + " " + script, WebhookURL: hook})
		if err != nil {
			t.Fatal(err)
		}
		return run.RunID
	}
	start := func(script string) string { t.Helper(); return startTo(sink.URL, script) }

	// Before the crash: one run completed and one canceled (without
	// webhooks: whether the daemon had recorded a delivery when it was
	// killed cannot be told from outside), one completed whose webhook is
	// being delivered (its receiver holds the answer, which keeps a worker
	// busy), one executing (the other worker), three waiting.
	completed := startTo("", `steps=1;output={"before":"crash"}`)
	if run := waitRun(t, c, completed); run.Status != client.RunStatusCompleted {
		t.Fatalf("completed run: %s %q", run.Status, run.GetFailureReason())
	}
	unsent := startTo(held.URL, `steps=1;output={"held":true}`)
	held.wait(unsent, 1)
	executing := start("steps=1;screenshots=1;block")
	pollFor(t, "the run to execute and take its screenshot", func() bool {
		run, err := c.Runs.Get(ctx, executing)
		return err == nil && run.Status == client.RunStatusRunning && len(run.ScreenshotURLs) == 1
	})
	var queued []string
	for range 3 {
		queued = append(queued, start("steps=2;screenshots=1"))
	}
	canceled := startTo("", "steps=1")
	if err := c.Runs.Cancel(ctx, canceled); err != nil {
		t.Fatal(err)
	}
	acknowledged := append([]string{completed, executing, canceled, unsent}, queued...)

	// Writers create agents concurrently (their writes are committed in
	// groups) while the kill lands: every create acknowledged before it
	// must be in the store after.
	var (
		writersMu sync.Mutex
		created   []string
		writers   sync.WaitGroup
	)
	for range 8 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range 5000 { // ended by the kill long before
				def := &client.AgentDefinition{Title: fmt.Sprint("Crash writer ", i), WorkflowDefinition: client.WorkflowDefinition{
					Blocks: client.Blocks{&client.WaitBlock{BlockBase: client.BlockBase{Label: "pause"}}}}}
				a, err := c.Agents.Create(context.WithoutCancel(ctx), def, nil)
				if err != nil {
					return
				}
				writersMu.Lock()
				created = append(created, a.WorkflowPermanentID)
				writersMu.Unlock()
			}
		}()
	}
	pollFor(t, "the writers to have 40 agents acknowledged", func() bool {
		writersMu.Lock()
		defer writersMu.Unlock()
		return len(created) >= 40
	})

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	writers.Wait()
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the daemon process did not die of SIGKILL: %v", err)
	}

	// The store is intact and holds every acknowledged run as the crash
	// left it.
	dbPath := filepath.Join(dir, datadir.StoreFileName)
	db, err := bolt.Open(dbPath, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("the store does not open after the crash: %v", err)
	}
	if err := db.View(func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}); err != nil {
		t.Errorf("the store is inconsistent after the crash: %v", err)
	}
	db.Close()
	st, err := boltstore.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	org, err := st.DefaultOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]client.RunStatus{completed: client.RunStatusCompleted, canceled: client.RunStatusCanceled,
		executing: client.RunStatusRunning, unsent: client.RunStatusCompleted}
	for _, id := range queued {
		want[id] = client.RunStatusQueued
	}
	for id, status := range want {
		rec, err := st.Runs().Get(ctx, org.ID, id)
		if err != nil || rec.Status != status {
			t.Errorf("after the crash, %s: %v %v, want %s", id, rec, err, status)
		}
	}
	for _, wpid := range created {
		if _, err := st.Agents().Get(ctx, org.ID, wpid, 0); err != nil {
			t.Errorf("agent %s was acknowledged before the crash but is not in the store: %v", wpid, err)
		}
	}
	t.Logf("%d agents were acknowledged by concurrent writers before the kill; all are in the store", len(created))
	pending, err := st.Runs().Pending(ctx)
	if err != nil || len(pending) != 2+len(queued) {
		t.Errorf("pending runs after the crash: %v %v", pending, err)
	}
	st.Close()

	// A new daemon on the same data directory; the held receiver now
	// answers.
	releaseHeld()
	exec2 := &scripted.Executor{}
	t.Cleanup(exec2.ReleaseAll)
	addr2, stop := daemontest.Start(t, dir, daemon.Config{APIKey: key, Executor: exec2, Workers: 1})
	c2, err := client.New(client.WithBaseURL("http://"+addr2), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range acknowledged {
		run := waitRun(t, c2, id)
		switch id {
		case executing:
			if run.Status != client.RunStatusFailed || !strings.Contains(run.GetFailureReason(), "restarted") {
				t.Errorf("the interrupted run: %s %q", run.Status, run.GetFailureReason())
			}
			if run.GetStepCount() != 1 || len(run.ScreenshotURLs) != 1 || run.FinishedAt == nil {
				t.Errorf("the interrupted run lost what it produced: %d steps, %d screenshots", run.GetStepCount(), len(run.ScreenshotURLs))
			} else if b := fetch(t, run.ScreenshotURLs[0]); !bytes.Equal(b, scripted.ScreenshotPNG(executing, 1)) {
				t.Error("the interrupted run's screenshot does not open after the restart")
			}
			d := sink.wait(id, 1)
			if d[0].Payload.Status != client.RunStatusFailed || d[0].Payload.FailureReason == nil || !strings.Contains(*d[0].Payload.FailureReason, "restarted") {
				t.Errorf("the interrupted run's webhook: %s", d[0].Raw)
			}
			if len(d[0].Payload.ScreenshotURLs) != 1 {
				t.Errorf("the interrupted run's webhook shows %d screenshots, want 1: %s", len(d[0].Payload.ScreenshotURLs), d[0].Raw)
			}
		case unsent:
			if run.Status != client.RunStatusCompleted || string(run.Output) != `{"held":true}` {
				t.Errorf("the run whose webhook the crash cut short: %s %s", run.Status, run.Output)
			}
			if d := held.wait(id, 2); d[1].Payload.Status != client.RunStatusCompleted || string(d[1].Payload.Output) != `{"held":true}` {
				t.Errorf("its webhook sent again: %s", d[1].Raw)
			}
		case completed, canceled:
			if run.Status != want[id] {
				t.Errorf("%s changed across the restart: %s", id, run.Status)
			}
		default:
			if run.Status != client.RunStatusCompleted || run.GetStepCount() != 2 {
				t.Errorf("queued run %s after the restart: %s %q", id, run.Status, run.GetFailureReason())
			}
			if d := sink.wait(id, 1); d[0].Payload.Status != client.RunStatusCompleted {
				t.Errorf("queued run %s webhook: %s", id, d[0].Raw)
			}
		}
	}
	if _, ok := exec2.Job(executing); ok {
		t.Error("the interrupted run executed again")
	}
	for _, id := range queued {
		if _, ok := exec2.Job(id); !ok {
			t.Errorf("queued run %s was not executed by the new daemon", id)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	for _, id := range acknowledged {
		want := 1
		switch id {
		case completed, canceled:
			want = 0
		case unsent:
			want = 2 // the one the crash cut short, and the one after
		}
		if n := len(sink.forRun(id)) + len(held.forRun(id)); n != want {
			t.Errorf("%s: %d webhooks, want %d", id, n, want)
		}
	}
	st, err = boltstore.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if pending, err := st.Runs().Pending(ctx); err != nil || len(pending) != 0 {
		t.Errorf("runs left unfinished: %v %v", pending, err)
	}
	if rec, err := st.Runs().Get(ctx, org.ID, unsent); err != nil || rec.Webhook == nil || rec.Webhook.StatusCode != 200 || rec.Status != client.RunStatusCompleted {
		t.Errorf("the resent webhook's delivery: %+v %v", rec, err)
	}
}
