package cmdutil

import (
	"context"
	"errors"
	"testing"

	"github.com/spf13/cobra"
)

type checkedOptions struct{ err error }

func (o *checkedOptions) Validate() error { return o.err }

type plainOptions struct{ n int }

// TestRun: options are validated when they can be, then go to the test's
// hook when there is one, and are run otherwise.
func TestRun(t *testing.T) {
	cmd := &cobra.Command{}
	cmd.SetContext(context.Background())
	bad := errors.New("bad")
	var hooked, ran int
	hook := func(*checkedOptions) error { hooked++; return nil }
	run := func(context.Context, *checkedOptions) error { ran++; return nil }
	if err := Run(cmd, &checkedOptions{err: bad}, hook, run); err != bad || hooked+ran != 0 {
		t.Errorf("invalid options: %v, hooked %d, ran %d", err, hooked, ran)
	}
	if err := Run(cmd, &checkedOptions{}, hook, run); err != nil || hooked != 1 || ran != 0 {
		t.Errorf("with a hook: %v, hooked %d, ran %d", err, hooked, ran)
	}
	if err := Run(cmd, &checkedOptions{}, nil, run); err != nil || hooked != 1 || ran != 1 {
		t.Errorf("without a hook: %v, hooked %d, ran %d", err, hooked, ran)
	}
	got := 0
	if err := Run(cmd, &plainOptions{n: 7}, nil, func(_ context.Context, o *plainOptions) error { got = o.n; return nil }); err != nil || got != 7 {
		t.Errorf("options without Validate: %v, ran with %d", err, got)
	}
}
