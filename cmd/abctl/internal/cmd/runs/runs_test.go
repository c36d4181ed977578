package runs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/follow"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

func TestWatch(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *WatchOptions
	cmd := NewCmdWatch(f, func(o *WatchOptions) error { got = o; return nil })
	if err := cmdtest.Exec(cmd, "run/wr_1", "--timeout", "2m", "--no-tui"); err != nil {
		t.Fatal(err)
	}
	if got.RunID != "wr_1" || got.Follow.Timeout != 2*time.Minute || !got.Follow.NoTUI || got.Watch == nil {
		t.Errorf("options %+v", got)
	}
	got = nil
	for _, args := range [][]string{{"agent/x"}, {}, {"a", "b"}} {
		err := cmdtest.Exec(NewCmdWatch(f, func(o *WatchOptions) error { got = o; return nil }), args...)
		if got != nil || !cmdtest.IsUsage(err) {
			t.Errorf("watch %q: %v, want a usage error", args, err)
		}
	}
}

// TestWatchRun: watch follows the run it was given with the follow flags,
// and returns the exit status the Watcher chose.
func TestWatchRun(t *testing.T) {
	c, err := client.New(client.WithBaseURL("http://127.0.0.1:1"), client.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	var followed string
	var flags follow.Flags
	opts := &WatchOptions{
		Client: func(context.Context) (*client.Client, error) { return c, nil },
		Watch: func(_ context.Context, got *client.Client, id string, fl follow.Flags) error {
			if got != c {
				t.Error("another client")
			}
			followed, flags = id, fl
			return fmt.Errorf("ended: %w", errors.ErrUnsupported)
		},
		RunID:  "wr_9",
		Follow: follow.Flags{Timeout: time.Second},
	}
	if err := runWatch(t.Context(), opts); !errors.Is(err, errors.ErrUnsupported) || followed != "wr_9" || flags.Timeout != time.Second {
		t.Errorf("%v; followed %q with %+v", err, followed, flags)
	}
}

func TestCancel(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *CancelOptions
	if err := cmdtest.Exec(NewCmdCancel(f, func(o *CancelOptions) error { got = o; return nil }), "wr_1", "run/wr_2", "runs/tsk_3"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.RunIDs, ",") != "wr_1,wr_2,tsk_3" {
		t.Errorf("ids %q", got.RunIDs)
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("wr_%d", i)
	}
	got = nil
	err := cmdtest.Exec(NewCmdCancel(f, func(o *CancelOptions) error { got = o; return nil }), many...)
	if got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "at most 100 runs can be canceled at once, got 101") {
		t.Errorf("101 runs: %v", err)
	}
	if err := cmdtest.Exec(NewCmdCancel(f, nil)); !cmdtest.IsUsage(err) {
		t.Errorf("no run: %v", err)
	}
}

func TestCancelAll(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *CancelAllOptions
	run := func(args ...string) error {
		got = nil
		return cmdtest.Exec(NewCmdCancelAll(f, func(o *CancelAllOptions) error { got = o; return nil }), args...)
	}
	if err := run("--agent", "form"); got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "cancel-all needs --yes") {
		t.Errorf("without --yes or a terminal: %v", err)
	}
	if err := run("--agent", "form", "-y"); err != nil || got.Agent != "form" || !got.Yes || got.Stdin {
		t.Errorf("--agent -y: %+v %v", got, err)
	}
	if err := run("--stdin", "--yes"); err != nil || !got.Stdin {
		t.Errorf("--stdin: %+v %v", got, err)
	}
	if err := run("--stdin", "--agent", "x", "--yes"); got != nil || err == nil {
		t.Errorf("--stdin with --agent: %v", err)
	}
	f.IO.SetTTY(true, false, true)
	if err := run(); err != nil || got.Yes {
		t.Errorf("on a terminal, without --yes: %+v %v", got, err)
	}
}

func TestRetryAndArtifacts(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var retry *RetryOptions
	if err := cmdtest.Exec(NewCmdRetry(f, func(o *RetryOptions) error { retry = o; return nil }), "run/wr_1", "--url", "https://hook"); err != nil {
		t.Fatal(err)
	}
	if retry.RunID != "wr_1" || retry.URL != "https://hook" {
		t.Errorf("retry %+v", retry)
	}
	var arts *ArtifactsOptions
	if err := cmdtest.Exec(NewCmdArtifacts(f, func(o *ArtifactsOptions) error { arts = o; return nil }), "wr_1", "-o", "yaml"); err != nil {
		t.Fatal(err)
	}
	if arts.RunID != "wr_1" || arts.Format != printer.YAML {
		t.Errorf("artifacts %+v", arts)
	}
	arts = nil
	err := cmdtest.Exec(NewCmdArtifacts(f, func(o *ArtifactsOptions) error { arts = o; return nil }), "wr_1", "-o", "name")
	if arts != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "use one of: table, json, yaml") {
		t.Errorf("artifacts -o name: %v", err)
	}
}

func TestGroup(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	cmd := NewCmdRuns(f)
	for _, path := range [][]string{{"watch"}, {"cancel"}, {"cancel-all"}, {"retry"}, {"webhook", "retry"}, {"artifacts"}} {
		if c, _, err := cmd.Find(path); err != nil || c.Name() != path[len(path)-1] {
			t.Errorf("runs %q: %v", path, err)
		}
	}
}
