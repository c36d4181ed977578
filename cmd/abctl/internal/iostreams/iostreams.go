// Package iostreams is where abctl's commands read and write: the three
// standard streams, whether each is a terminal, whether colour is wanted, and
// how wide the terminal is.
//
// The rules every command follows through it:
//
//   - stdout carries data only (tables, JSON, YAML, a run's output), so that
//     it can be piped; everything else (progress, the live view, warnings,
//     hints, errors) goes to stderr;
//   - a prompt is shown only when stdin and stderr are both terminals
//     (CanPrompt); otherwise a command that would ask fails, saying which flag
//     answers the question;
//   - colour is used only on a terminal, unless NO_COLOR is set (off),
//     CLICOLOR=0 (off) or CLICOLOR_FORCE is set to a non-zero value (on even
//     when piped); TERM=dumb turns it off too;
//   - ABCTL_FORCE_TTY makes abctl behave as on a terminal (its value, when a
//     number, is the width), for demos and tests.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"strconv"

	"github.com/charmbracelet/x/term"
)

// DefaultWidth is the terminal width assumed when it cannot be read.
const DefaultWidth = 80

// IOStreams are the streams of one abctl invocation.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY, stdoutTTY, stderrTTY bool
	color, colorErr                bool
	width                          int
}

// Getenv reads an environment variable; tests pass a map's lookup.
type Getenv func(string) string

// System returns the process's standard streams, their terminal state read
// once, with the colour rules of the package comment applied to getenv.
func System(getenv Getenv) *IOStreams {
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	s.stdinTTY = isTerminal(os.Stdin)
	s.stdoutTTY = isTerminal(os.Stdout)
	s.stderrTTY = isTerminal(os.Stderr)
	s.width = DefaultWidth
	for _, f := range []*os.File{os.Stdout, os.Stderr} {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 0 {
			s.width = w
			break
		}
	}
	s.applyEnv(getenv)
	return s
}

// Test returns streams over buffers, none a terminal, and the buffers.
func Test() (s *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, width: DefaultWidth}, in, out, errOut
}

// New returns streams over the given readers and writers, none a terminal,
// with getenv's colour and ABCTL_FORCE_TTY rules applied.
func New(in io.Reader, out, errOut io.Writer, getenv Getenv) *IOStreams {
	s := &IOStreams{In: in, Out: out, ErrOut: errOut, width: DefaultWidth}
	s.applyEnv(getenv)
	return s
}

func (s *IOStreams) applyEnv(getenv Getenv) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if v := getenv("ABCTL_FORCE_TTY"); v != "" && v != "0" && v != "false" {
		s.stdinTTY, s.stdoutTTY, s.stderrTTY = true, true, true
		if w, err := strconv.Atoi(v); err == nil && w > 1 {
			s.width = w
		}
	}
	s.color, s.colorErr = s.stdoutTTY, s.stderrTTY
	switch {
	case getenv("NO_COLOR") != "", getenv("TERM") == "dumb", getenv("CLICOLOR") == "0":
		s.color, s.colorErr = false, false
	case getenv("CLICOLOR_FORCE") != "" && getenv("CLICOLOR_FORCE") != "0":
		s.color, s.colorErr = true, true
	}
}

// SetTTY sets whether each stream counts as a terminal (tests).
func (s *IOStreams) SetTTY(stdin, stdout, stderr bool) {
	s.stdinTTY, s.stdoutTTY, s.stderrTTY = stdin, stdout, stderr
}

// SetColor turns colour on stdout and stderr on or off (tests).
func (s *IOStreams) SetColor(on bool) { s.color, s.colorErr = on, on }

// SetWidth sets the terminal width (tests).
func (s *IOStreams) SetWidth(w int) { s.width = w }

// IsStdinTTY reports whether stdin is a terminal.
func (s *IOStreams) IsStdinTTY() bool { return s.stdinTTY }

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// CanPrompt reports whether a question may be asked: stdin and stderr are
// both terminals.
func (s *IOStreams) CanPrompt() bool { return s.stdinTTY && s.stderrTTY }

// ColorEnabled reports whether stdout may carry colour.
func (s *IOStreams) ColorEnabled() bool { return s.color }

// ColorEnabledErr reports whether stderr may carry colour.
func (s *IOStreams) ColorEnabledErr() bool { return s.colorErr }

// Width is the terminal's width in columns (DefaultWidth when unknown).
func (s *IOStreams) Width() int {
	if s.width <= 0 {
		return DefaultWidth
	}
	return s.width
}

func isTerminal(f *os.File) bool { return term.IsTerminal(f.Fd()) }
