package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/config"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/localrun/executor"
)

// NewFactory returns the Factory of abctl over ios and getenv, with what
// it knows of the local daemon filled in from package daemon: its default
// address, the name of its key file, and the daemon itself, which a
// command starts inside abctl when its local profile's daemon is not
// running. Only this package, the wiring, links the server into commands.
func NewFactory(ios *iostreams.IOStreams, getenv config.Getenv) *cmdutil.Factory {
	f := cmdutil.NewFactory(ios, getenv)
	f.LocalAddr = datadir.DefaultAddr
	f.KeyFileName = datadir.KeyFileName
	f.StartDaemon = embeddedDaemon(daemon.Run)
	return f
}

// stopTimeout bounds how long an embedded daemon may take to stop.
const stopTimeout = 20 * time.Second

// embeddedDaemon returns the cmdutil.DaemonStarter that runs the daemon
// with run (daemon.Run) inside abctl: its warnings and errors only on the
// command's stderr (request lines would bury the command's own output),
// the browser engine with its defaults and the given model.
func embeddedDaemon(run func(context.Context, daemon.Config) error) cmdutil.DaemonStarter {
	return func(ctx context.Context, c cmdutil.DaemonConfig) (string, func() error, error) {
		// The daemon's context is not the command's: the command may still
		// need it after an interrupt (to cancel a run); stop ends it.
		dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		ready := make(chan string, 1)
		done := make(chan error, 1)
		cfg := daemon.Config{
			Addr:    c.Addr,
			DataDir: c.DataDir,
			Logger:  slog.New(slog.NewTextHandler(c.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn})),
			Stderr:  c.ErrOut,
			Ready:   func(a string) { ready <- a },
			Engine:  &daemon.EngineConfig{ActionIdle: executor.DefaultActionIdle, LLM: c.LLM, Getenv: c.Getenv},
		}
		go func() { done <- run(dctx, cfg) }()
		select {
		case a := <-ready:
			stop := func() error {
				cancel()
				select {
				case err := <-done:
					return err
				case <-time.After(stopTimeout):
					return fmt.Errorf("the embedded daemon did not stop within %s", stopTimeout)
				}
			}
			return a, stop, nil
		case err := <-done:
			cancel()
			if errors.Is(err, daemon.ErrListen) {
				return "", nil, cmdutil.ListenError(err)
			}
			return "", nil, err
		case <-ctx.Done():
			cancel()
			<-done
			return "", nil, ctx.Err()
		}
	}
}
