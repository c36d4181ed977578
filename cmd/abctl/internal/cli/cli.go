// Package cli is the abctl command line: the command tree, the one place
// where errors become exit codes and messages, and the program's wiring.
//
// Each command lives in its package under cmd/, which imports no other
// command's; what they share is in cmdutil, follow, listing and the other
// packages beside this one. The wiring (NewFactory) is what gives the
// commands the local daemon of package daemon, to start inside a command:
// apart from `abctl daemon` itself (cmd/daemoncmd), no command package
// links the server.
//
// Data goes to stdout; errors, hints and progress go to stderr.
package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/config"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// Exit codes, re-exported for the tests and main.
const (
	ExitOK    = cmdutil.ExitOK
	ExitError = cmdutil.ExitError
	ExitUsage = cmdutil.ExitUsage
)

// Main runs abctl with the process's arguments, environment and standard
// streams and returns the exit code. An interrupt or SIGTERM cancels the
// context the commands run with.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return RunIO(ctx, os.Args[1:], iostreams.System(os.Getenv), os.Getenv)
}

// RunIO executes the command line args with the given streams and
// environment and returns the exit code. getenv is the whole environment
// abctl sees: nothing is read from the process's own.
func RunIO(ctx context.Context, args []string, ios *iostreams.IOStreams, getenv config.Getenv) int {
	return RunFactory(ctx, args, NewFactory(ios, getenv))
}

// RunFactory executes the command line args with the dependencies of f and
// returns the exit code. It stops what f started (an embedded daemon)
// before returning.
func RunFactory(ctx context.Context, args []string, f *cmdutil.Factory) int {
	if args == nil {
		args = []string{} // cobra falls back to os.Args on nil
	}
	root := NewRootCmd(f)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	cmd, err := root.ExecuteContextC(ctx)
	if cerr := f.Close(); cerr != nil && err == nil {
		err = cerr
	}
	// A usage error that does not name its command is the command's that
	// ran: its help is the one to point at.
	var ue *cmdutil.UsageError
	if errors.As(err, &ue) && ue.CmdPath == "" && cmd != nil {
		ue.CmdPath = cmd.CommandPath()
	}
	return exitCode(ctx, err, f)
}

// exitCode reports err on stderr and maps it to an exit code.
func exitCode(ctx context.Context, err error, f *cmdutil.Factory) int {
	if err == nil {
		return ExitOK
	}
	stderr := f.IO.ErrOut
	cs := f.IO.ColorSchemeErr()
	var ce *cmdutil.CodeError
	if errors.As(err, &ce) {
		if ce.Err != nil {
			fmt.Fprintf(stderr, "abctl: %v\n", ce.Err)
		}
		return ce.Code
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, ctx.Err())) {
		fmt.Fprintln(stderr, "abctl: interrupted")
		return cmdutil.ExitInterrupt
	}
	var ue *cmdutil.UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "abctl: %v\n", err)
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", ue.CmdPath)
		return ExitUsage
	}
	var nk *cmdutil.NoKeyError
	if errors.As(err, &nk) {
		fmt.Fprintf(stderr, "abctl: %v\n", err)
		return cmdutil.ExitAuth
	}
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Fprintf(stderr, "abctl: %s\n", describeAPIError(err, apiErr))
		if apiErr.RequestID != "" {
			fmt.Fprintln(stderr, cs.Gray("request id: "+apiErr.RequestID))
		}
		if apiErr.StatusCode == 403 || apiErr.StatusCode == 401 {
			fmt.Fprintln(stderr, authHint(f))
			return cmdutil.ExitAuth
		}
		return ExitError
	}
	fmt.Fprintf(stderr, "abctl: %v\n", err)
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		if hint := reachHint(f, urlErr); hint != "" {
			fmt.Fprintln(stderr, hint)
		}
	}
	return ExitError
}

// reachHint says, for a request to the service that got no answer, which
// base URL abctl used and where that came from: the error names the
// address, the hint the setting to change.
func reachHint(f *cmdutil.Factory, e *url.Error) string {
	base, from := f.Target()
	if base == "" || !strings.HasPrefix(e.URL, strings.TrimRight(base, "/")) {
		return ""
	}
	profile := ""
	if s, err := f.Settings(); err == nil {
		profile = fmt.Sprintf(", profile %q", s.Profile)
	}
	return fmt.Sprintf("Hint: the service's base URL %s came from %s%s; check that the service runs there, or set another with --base-url or %s. "+
		"'abctl config view' shows where each setting comes from.", base, from, profile, config.EnvBaseURL)
}

// describeAPIError says what the service answered: the status, its detail,
// and each validation entry with its location. The context the command
// added ("get agent x: ...") stays in front.
func describeAPIError(err error, e *client.Error) string {
	var b strings.Builder
	msg := err.Error()
	if prefix, ok := strings.CutSuffix(msg, e.Error()); ok {
		b.WriteString(prefix)
	}
	fmt.Fprintf(&b, "the service answered %d", e.StatusCode)
	if len(e.Validation) > 0 {
		b.WriteString(": the request is not valid:")
		for _, v := range e.Validation {
			loc := make([]string, len(v.Loc))
			for i, l := range v.Loc {
				loc[i] = fmt.Sprint(l)
			}
			fmt.Fprintf(&b, "\n  %s: %s", strings.Join(loc, "."), v.Msg)
		}
		return b.String()
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// authHint says which profile and key were used, and how to set the key.
func authHint(f *cmdutil.Factory) string {
	s, err := f.Settings()
	if err != nil {
		return "Hint: check the API key (ABCTL_API_KEY, or the profile's api_key_env)."
	}
	from := s.APIKeyFrom
	if from == "" && s.Local {
		from = "the local daemon's key file in " + s.DataDir
	}
	base := s.BaseURL
	if target, _ := f.Target(); target != "" {
		base = target // the local daemon's, found in its state file, say
	}
	return fmt.Sprintf("Hint: profile %q (%s) sent the key from %s, which the service refused.\n"+
		"Set the right one with ABCTL_API_KEY, or 'abctl config set-profile %s --api-key-env VAR'; "+
		"'abctl config view' shows where each setting comes from.", s.Profile, base, from, s.Profile)
}
