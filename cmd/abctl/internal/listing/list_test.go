package listing

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// testListOptions are a list command's options with a filter of its own.
type testListOptions struct {
	ListOptions
	Search string
}

// TestNewListCmd: the command is also ls, takes no arguments, checks -o
// and --limit (through the embedded Validate) before it runs, and has
// --limit only when it is given a noun for it.
func TestNewListCmd(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *testListOptions
	newCmd := func(limitOf string) *cobra.Command {
		opts := &testListOptions{}
		cmd := NewListCmd(f, &opts.ListOptions, limitOf, &cobra.Command{Use: "list"}, func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Run(cmd, opts, func(o *testListOptions) error { got = o; return nil }, nil)
		})
		cmd.Flags().StringVar(&opts.Search, "search", "", "")
		return cmd
	}
	cmd := newCmd("folders")
	if strings.Join(cmd.Aliases, ",") != "ls" || cmd.Flags().Lookup("limit").Usage != "at most this many folders (0: all)" {
		t.Errorf("aliases %q, --limit %q", cmd.Aliases, cmd.Flags().Lookup("limit").Usage)
	}
	if err := cmdtest.Exec(cmd, "--limit", "3", "--search", "x", "-o", "name"); err != nil || got == nil ||
		got.Limit != 3 || got.Search != "x" || got.Format != printer.Name || got.IO != f.IO || got.Client == nil || got.Now == nil {
		t.Fatalf("list: %v, options %+v", err, got)
	}
	for _, args := range [][]string{{"--limit", "-1"}, {"-o", "wide"}, {"extra"}} {
		got = nil
		if err := cmdtest.Exec(newCmd("folders"), args...); got != nil || !cmdtest.IsUsage(err) {
			t.Errorf("list %q: %v, want a usage error and nothing run", args, err)
		}
	}
	if newCmd("").Flags().Lookup("limit") != nil {
		t.Error("--limit without a noun for it")
	}
	withArgs := NewListCmd(f, &ListOptions{}, "", &cobra.Command{Use: "list [AGENT]", Args: cobra.MaximumNArgs(1)}, func(*cobra.Command, []string) error { return nil })
	if err := cmdtest.Exec(withArgs, "agent"); err != nil {
		t.Errorf("a list that takes an argument: %v", err)
	}
}

// TestRead: the page size follows the limit, the list stops at it, and a
// failure says what was being listed.
func TestRead(t *testing.T) {
	ok := func(context.Context) (*client.Client, error) { return nil, nil }
	var pageSize int
	all := func(fail error) func(*client.Client, int) iter.Seq2[int, error] {
		return func(_ *client.Client, n int) iter.Seq2[int, error] {
			pageSize = n
			return func(yield func(int, error) bool) {
				for i := 1; i <= 5; i++ {
					if !yield(i, nil) {
						return
					}
				}
				yield(0, fail)
			}
		}
	}
	got, err := Read(t.Context(), &ListOptions{Client: ok, Limit: 2}, "numbers", all(errors.New("boom")))
	if err != nil || len(got) != 2 || pageSize != 2 {
		t.Errorf("limit 2: %v %v, page size %d", got, err, pageSize)
	}
	if _, err := Read(t.Context(), &ListOptions{Client: ok}, "numbers", all(errors.New("boom"))); err == nil || err.Error() != "list the numbers: boom" || pageSize != 100 {
		t.Errorf("all: %v, page size %d", err, pageSize)
	}
	noClient := func(context.Context) (*client.Client, error) { return nil, errors.New("no daemon") }
	if _, err := Read(t.Context(), &ListOptions{Client: noClient}, "numbers", all(nil)); err == nil || err.Error() != "no daemon" {
		t.Errorf("without a client: %v", err)
	}
}
