// Package cli is the abctl command line: the command tree, and the one place where
// errors become exit codes.
//
// Data goes to stdout; errors, hints and progress go to stderr.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes.
const (
	ExitOK    = 0 // success
	ExitError = 1 // the command failed
	ExitUsage = 2 // the command line was wrong: unknown command or flag, bad arguments
)

// Main runs abctl with the process's arguments and standard streams and returns the
// exit code. An interrupt or SIGTERM cancels the context the commands run with.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
}

// Run executes the command line args (without the program name) and returns the
// exit code. It writes only to stdout and stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if args == nil {
		args = []string{} // cobra falls back to os.Args on nil
	}
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return exitCode(root.ExecuteContext(ctx), stderr)
}

// exitCode reports err on stderr and maps it to an exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(stderr, "abctl: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", ue.cmdPath)
		return ExitUsage
	}
	return ExitError
}

// usageError marks an error in the command line itself.
type usageError struct {
	cmdPath string // the command whose help to point at, e.g. "abctl"
	err     error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }
