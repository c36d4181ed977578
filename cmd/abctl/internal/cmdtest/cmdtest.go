// Package cmdtest helps the tests of abctl's command packages check the way
// from flags to options without a service: a Factory that reaches nothing,
// and the execution of one command on its own, as the root would run it.
package cmdtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// Now is the clock of the Factories of NewFactory.
var Now = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

// Streams are the buffers behind a Factory's streams.
type Streams struct {
	In, Out, ErrOut *bytes.Buffer
}

// NewFactory returns a Factory over test streams (none a terminal) and vars
// as the whole environment, with HOME and the configuration directory in
// t's temporary directory. The local daemon's address is a loopback port
// where nothing listens, and it starts no daemon.
func NewFactory(t testing.TB, vars map[string]string) (*cmdutil.Factory, *Streams) {
	t.Helper()
	env := map[string]string{"HOME": t.TempDir()}
	env["ABCTL_CONFIG_DIR"] = filepath.Join(env["HOME"], "config")
	for k, v := range vars {
		env[k] = v
	}
	ios, in, out, errOut := iostreams.Test()
	f := cmdutil.NewFactory(ios, func(k string) string { return env[k] })
	f.Now = func() time.Time { return Now }
	f.LocalAddr = "127.0.0.1:1"
	f.KeyFileName = "api-key"
	return f, &Streams{In: in, Out: out, ErrOut: errOut}
}

// Exec runs cmd alone with args, its flag errors usage errors as under
// abctl's root, and returns its error.
func Exec(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(args)
	cmd.SetIn(bytes.NewReader(nil))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetFlagErrorFunc(cmdutil.FlagError)
	_, err := cmd.ExecuteC()
	return err
}

// IsUsage reports whether err is a usage error: exit status 2, with a
// pointer to the command's help.
func IsUsage(err error) bool {
	var ue *cmdutil.UsageError
	return errors.As(err, &ue)
}

// ExitCode is the exit status err asks for, as far as the command packages
// decide it: 0 for nil, the code of a CodeError, 2 for a usage error, else
// 1.
func ExitCode(err error) int {
	var ce *cmdutil.CodeError
	switch {
	case err == nil:
		return cmdutil.ExitOK
	case errors.As(err, &ce):
		return ce.Code
	case IsUsage(err):
		return cmdutil.ExitUsage
	}
	return cmdutil.ExitError
}

// NoClient is a Client getter that fails t when called: for the checks
// that must end before the service is asked anything.
func NoClient(t testing.TB) func(context.Context) (*client.Client, error) {
	return func(context.Context) (*client.Client, error) {
		t.Helper()
		t.Error("the command asked for a client")
		return nil, errors.New("no client in this test")
	}
}
