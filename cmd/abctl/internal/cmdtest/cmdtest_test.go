package cmdtest

import (
	"errors"
	"testing"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
)

func TestExecAndExitCode(t *testing.T) {
	var got []string
	cmd := &cobra.Command{Use: "x", RunE: func(_ *cobra.Command, args []string) error { got = args; return nil }}
	cmd.Flags().Int("n", 0, "")
	if err := Exec(cmd, "a", "b"); err != nil || len(got) != 2 {
		t.Fatalf("Exec = %v, args %q", err, got)
	}
	err := Exec(cmd, "--n", "many")
	if !IsUsage(err) || ExitCode(err) != cmdutil.ExitUsage {
		t.Errorf("a bad flag gave %v (exit %d), want a usage error", err, ExitCode(err))
	}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("boom"), 1},
		{cmdutil.Silent(8), 8},
		{cmdutil.UsageErrorf("bad"), 2},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestNewFactory(t *testing.T) {
	f, s := NewFactory(t, map[string]string{"X": "y"})
	if f.Getenv("X") != "y" || f.Getenv("HOME") == "" || f.Getenv("ABCTL_CONFIG_DIR") == "" {
		t.Errorf("environment: X=%q HOME=%q ABCTL_CONFIG_DIR=%q", f.Getenv("X"), f.Getenv("HOME"), f.Getenv("ABCTL_CONFIG_DIR"))
	}
	if f.IO.CanPrompt() || f.StartDaemon != nil || !f.Now().Equal(Now) {
		t.Errorf("the factory can prompt (%v), start a daemon (%v), or has another clock", f.IO.CanPrompt(), f.StartDaemon != nil)
	}
	f.IO.Out.Write([]byte("out"))
	if s.Out.String() != "out" {
		t.Errorf("stdout buffer = %q", s.Out.String())
	}
}
