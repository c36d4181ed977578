package cmdutil

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
)

// Exit codes of abctl (abctl help exit-codes prints this table).
const (
	ExitOK        = 0   // success
	ExitError     = 1   // the command failed; a run ended failed, terminated or canceled
	ExitUsage     = 2   // the command line or an agent file was wrong
	ExitTimedOut  = 3   // a run ended timed_out
	ExitAuth      = 4   // the service refused the API key (403)
	ExitPending   = 8   // a run was still going when --timeout expired or the wait was left
	ExitInterrupt = 130 // interrupted (Ctrl-C) before anything could be reported
)

// UsageError is an error in the command line itself: exit code 2 and a
// pointer to the command's help.
type UsageError struct {
	// CmdPath is the command whose help to point at, e.g. "abctl get"; ""
	// means the command that ran, which the root fills in.
	CmdPath string
	Err     error
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError of cmd.
func Usagef(cmd *cobra.Command, format string, args ...any) error {
	return &UsageError{CmdPath: cmd.CommandPath(), Err: fmt.Errorf(format, args...)}
}

// UsageErrorf returns a UsageError of the command that runs: what the
// Validate methods of command options and the code behind them return,
// without the command at hand.
func UsageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// CodeError ends abctl with Code. When Err is nil nothing more is printed:
// the command already said what there was to say.
type CodeError struct {
	Code int
	Err  error
}

func (e *CodeError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}
func (e *CodeError) Unwrap() error { return e.Err }

// Silent returns an error that exits with code and prints nothing.
func Silent(code int) error { return &CodeError{Code: code} }

// ErrCanceled is returned when the user declined a confirmation.
var ErrCanceled = errors.New("canceled")

// NoArgs rejects positional arguments, as a usage error. For a command
// with subcommands ("abctl get agnts") the argument can only be a mistyped
// subcommand, and the error suggests the nearest, as GroupArgs does.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && cmd.HasAvailableSubCommands() {
		return GroupArgs(cmd, args)
	}
	if len(args) > 0 {
		return Usagef(cmd, "%q takes no arguments, got %q", cmd.CommandPath(), args[0])
	}
	return nil
}

// ExactArgs requires n positional arguments, named in what (e.g. "a run id").
func ExactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return Usagef(cmd, "%q takes %s; got %d argument(s)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}

// MinArgs requires at least n positional arguments, named in what.
func MinArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return Usagef(cmd, "%q takes %s", cmd.CommandPath(), what)
		}
		return nil
	}
}

// GroupArgs rejects positional arguments to a command that only groups
// others (the root, abctl daemon): they can only be a mistyped command
// name, for which it suggests the nearest.
func GroupArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return unknownCommand(cmd, args[0])
}

// DetachWithEmbeddedDaemon is the usage error of --detach when the daemon
// runs inside this abctl process, which would stop the run as it exits.
func DetachWithEmbeddedDaemon() error {
	return UsageErrorf("--detach needs a daemon that outlives this command: the daemon runs inside abctl here and would stop the run as abctl exits; start 'abctl daemon' first")
}

// DiffError is what a command that exits as diff(1) does (0 no
// differences, 1 differences, Silent(1)) makes of its errors: each exits
// with 2 or more, so that none reads as "differences". Errors that already
// exit with 2 or more (usage, an invalid file, a refused key) keep their
// status and message; any other exits with ExitUsage.
func DiffError(err error) error {
	var ce *CodeError
	var ue *UsageError
	var nk *NoKeyError
	var api *client.Error
	switch {
	case errors.As(err, &ce) && ce.Code >= 2, errors.As(err, &ue), errors.As(err, &nk):
		return err
	case errors.As(err, &api) && (api.StatusCode == 401 || api.StatusCode == 403):
		return err
	}
	return &CodeError{Code: ExitUsage, Err: err}
}

// DetachableClient returns the client of a command that starts a run and,
// with --detach (detach), leaves it running. Such a run needs a daemon
// that outlives the command: when client started one inside this process
// (embedded reports it), --detach is a usage error.
func DetachableClient(ctx context.Context, client func(context.Context) (*client.Client, error), embedded func() bool, detach bool) (*client.Client, error) {
	c, err := client(ctx)
	if err != nil {
		return nil, err
	}
	if detach && embedded != nil && embedded() {
		return nil, DetachWithEmbeddedDaemon()
	}
	return c, nil
}
