package cmdutil

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// Confirm asks question on stderr and reads a yes or no from stdin. It
// fails when no terminal can answer: callers check CanPrompt first and
// otherwise require --yes.
func Confirm(io *iostreams.IOStreams, question string) (bool, error) {
	if !io.CanPrompt() {
		return false, errors.New("cannot ask for confirmation: stdin or stderr is not a terminal (use --yes)")
	}
	fmt.Fprintf(io.ErrOut, "%s [y/N] ", question)
	line, err := bufio.NewReader(io.In).ReadString('\n')
	if err != nil && line == "" {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// ConfirmOrStop asks question as Confirm does; anything but a yes ends
// the command with exit code 1 and no further message.
func ConfirmOrStop(io *iostreams.IOStreams, question string) error {
	ok, err := Confirm(io, question)
	if err != nil || !ok {
		return Silent(ExitError)
	}
	return nil
}

// CanConfirm checks that what a command is about to do, which needs a
// confirmation, can have one: yes (--yes) was given, or a terminal can
// answer the question. Otherwise it is a usage error that starts with why
// ("deleting a credential cannot be undone").
func CanConfirm(io *iostreams.IOStreams, yes bool, why string) error {
	if !yes && !io.CanPrompt() {
		return UsageErrorf("%s: add --yes when no terminal can confirm", why)
	}
	return nil
}

// HiddenReader returns a reader of secrets typed at a terminal: each call
// writes prompt on stderr, then reads a line from stdin without echo and
// returns it without its line ending. An interrupt (Ctrl-C cancels ctx)
// gives the terminal back its echo before the call returns ctx's error.
// Over a stdin that is not a terminal (ABCTL_FORCE_TTY), there is no echo
// to turn off: the lines are read as they come, one a call.
func HiddenReader(ios *iostreams.IOStreams) func(ctx context.Context, prompt string) (string, error) {
	var plain *bufio.Reader
	return func(ctx context.Context, prompt string) (string, error) {
		fmt.Fprint(ios.ErrOut, prompt)
		f, ok := ios.In.(*os.File)
		if !ok || !term.IsTerminal(f.Fd()) {
			if plain == nil {
				plain = bufio.NewReader(ios.In)
			}
			line, err := plain.ReadString('\n')
			if err != nil && line == "" {
				if errors.Is(err, io.EOF) {
					return "", errors.New("stdin ended before a line was read")
				}
				return "", err
			}
			return TrimNewline(line), nil
		}
		return readNoEcho(ctx, f.Fd(), ios.ErrOut)
	}
}

// readNoEcho reads a line from the terminal fd with its echo off.
func readNoEcho(ctx context.Context, fd uintptr, errOut io.Writer) (string, error) {
	state, err := term.GetState(fd)
	if err != nil {
		return "", err
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := term.ReadPassword(fd)
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		fmt.Fprintln(errOut) // the Enter that ended the line was not echoed either
		return string(r.b), r.err
	case <-ctx.Done():
		_ = term.Restore(fd, state)
		fmt.Fprintln(errOut)
		return "", ctx.Err()
	}
}

// TrimNewline removes one line ending ("\n" or "\r\n") at the end of s.
func TrimNewline(s string) string {
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		return strings.TrimSuffix(t, "\r")
	}
	return s
}
