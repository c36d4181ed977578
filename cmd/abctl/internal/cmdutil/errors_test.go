package cmdutil

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func tree() (root, get *cobra.Command) {
	root = &cobra.Command{Use: "abctl"}
	get = &cobra.Command{Use: "get", Run: func(*cobra.Command, []string) {}}
	root.AddCommand(get, &cobra.Command{Use: "version", Run: func(*cobra.Command, []string) {}})
	return root, get
}

func TestUsageErrors(t *testing.T) {
	_, get := tree()
	err := fmt.Errorf("wrapped: %w", Usagef(get, "bad %s", "flag"))
	var ue *UsageError
	if !errors.As(err, &ue) || ue.CmdPath != "abctl get" || ue.Error() != "bad flag" {
		t.Errorf("Usagef: %#v", ue)
	}
	err = UsageErrorf("--limit %d", -1)
	if !errors.As(err, &ue) || ue.CmdPath != "" || err.Error() != "--limit -1" {
		t.Errorf("UsageErrorf: %#v", ue)
	}
	inner := errors.New("inner")
	if !errors.Is(&UsageError{Err: inner}, inner) || !errors.Is(&CodeError{Code: 2, Err: inner}, inner) {
		t.Error("the errors do not unwrap")
	}
	if s := Silent(ExitPending); s.Error() != "exit status 8" || errors.Unwrap(s) != nil {
		t.Errorf("Silent: %q", s.Error())
	}
}

func TestArgs(t *testing.T) {
	_, get := tree()
	for _, tc := range []struct {
		name string
		fn   cobra.PositionalArgs
		args []string
		want string // "" for no error
	}{
		{"no args", NoArgs, nil, ""},
		{"no args given one", NoArgs, []string{"x"}, `"abctl get" takes no arguments, got "x"`},
		{"exact", ExactArgs(1, "a run id"), []string{"a"}, ""},
		{"exact short", ExactArgs(1, "a run id"), nil, `"abctl get" takes a run id; got 0 argument(s)`},
		{"min", MinArgs(2, "a target and tags"), []string{"a", "b", "c"}, ""},
		{"min short", MinArgs(2, "a target and tags"), []string{"a"}, `"abctl get" takes a target and tags`},
	} {
		err := tc.fn(get, tc.args)
		var ue *UsageError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.As(err, &ue) || err.Error() != tc.want || ue.CmdPath != "abctl get"):
			t.Errorf("%s: %v, want the usage error %q", tc.name, err, tc.want)
		}
	}
}

// TestGroupArgs: an argument to a command that only groups others is a
// mistyped command, for which the nearest is suggested.
func TestGroupArgs(t *testing.T) {
	root, _ := tree()
	root.SuggestionsMinimumDistance = 2
	if err := GroupArgs(root, nil); err != nil {
		t.Errorf("no argument: %v", err)
	}
	err := GroupArgs(root, []string{"verison"})
	if !strings.Contains(err.Error(), `unknown command "verison" for "abctl"; did you mean version?`) {
		t.Errorf("suggestion: %v", err)
	}
	err = GroupArgs(root, []string{"frobnicate"})
	var ue *UsageError
	if !errors.As(err, &ue) || ue.CmdPath != "abctl" || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("no suggestion: %v", err)
	}
}
