package iostreams

import (
	"bytes"
	"testing"
)

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

// TestEnvironment: the colour and terminal rules of the package comment.
func TestEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name             string
		vars             map[string]string
		tty, color       bool
		width            int
		prompt, colorErr bool
	}{
		{name: "piped", width: DefaultWidth},
		{name: "forced terminal", vars: map[string]string{"ABCTL_FORCE_TTY": "1"}, tty: true, color: true, colorErr: true, prompt: true, width: DefaultWidth},
		{name: "forced width", vars: map[string]string{"ABCTL_FORCE_TTY": "132"}, tty: true, color: true, colorErr: true, prompt: true, width: 132},
		{name: "forced off", vars: map[string]string{"ABCTL_FORCE_TTY": "false"}, width: DefaultWidth},
		{name: "NO_COLOR", vars: map[string]string{"ABCTL_FORCE_TTY": "1", "NO_COLOR": "1"}, tty: true, prompt: true, width: DefaultWidth},
		{name: "TERM=dumb", vars: map[string]string{"ABCTL_FORCE_TTY": "1", "TERM": "dumb"}, tty: true, prompt: true, width: DefaultWidth},
		{name: "CLICOLOR=0", vars: map[string]string{"ABCTL_FORCE_TTY": "1", "CLICOLOR": "0"}, tty: true, prompt: true, width: DefaultWidth},
		{name: "CLICOLOR_FORCE", vars: map[string]string{"CLICOLOR_FORCE": "1"}, color: true, colorErr: true, width: DefaultWidth},
		{name: "CLICOLOR_FORCE=0", vars: map[string]string{"CLICOLOR_FORCE": "0"}, width: DefaultWidth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(&bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}, env(tc.vars))
			if s.IsStdoutTTY() != tc.tty || s.IsStdinTTY() != tc.tty || s.IsStderrTTY() != tc.tty {
				t.Errorf("terminal: %v %v %v, want %v", s.IsStdinTTY(), s.IsStdoutTTY(), s.IsStderrTTY(), tc.tty)
			}
			if s.ColorEnabled() != tc.color || s.ColorEnabledErr() != tc.colorErr {
				t.Errorf("colour: %v/%v, want %v/%v", s.ColorEnabled(), s.ColorEnabledErr(), tc.color, tc.colorErr)
			}
			if s.CanPrompt() != tc.prompt || s.Width() != tc.width {
				t.Errorf("prompt %v width %d, want %v %d", s.CanPrompt(), s.Width(), tc.prompt, tc.width)
			}
		})
	}
	if s := New(nil, nil, nil, nil); s.ColorEnabled() || s.Width() != DefaultWidth {
		t.Error("a nil environment is not an empty one")
	}
}

// TestCanPrompt: a question needs stdin and stderr both on a terminal.
func TestCanPrompt(t *testing.T) {
	s, _, _, _ := Test()
	for _, tc := range []struct{ in, out, err, want bool }{
		{true, false, true, true},
		{true, true, false, false},
		{false, true, true, false},
	} {
		s.SetTTY(tc.in, tc.out, tc.err)
		if s.CanPrompt() != tc.want {
			t.Errorf("SetTTY(%v, %v, %v): CanPrompt %v", tc.in, tc.out, tc.err, s.CanPrompt())
		}
	}
	s.SetWidth(0)
	if s.Width() != DefaultWidth {
		t.Errorf("width 0 gives %d", s.Width())
	}
}

// TestColorScheme: a scheme paints only when colour is on, and never ""
// (which would leave stray escapes).
func TestColorScheme(t *testing.T) {
	s, _, _, _ := Test()
	if got := s.ColorScheme().Red("x"); got != "x" {
		t.Errorf("without colour: %q", got)
	}
	s.SetColor(true)
	cs := s.ColorScheme()
	if !cs.Enabled() || !s.ColorSchemeErr().Enabled() {
		t.Fatal("SetColor(true) left the schemes off")
	}
	for _, tc := range []struct{ got, want string }{
		{cs.Bold("b"), "\x1b[1mb\x1b[0m"},
		{cs.Gray("g"), "\x1b[90mg\x1b[0m"},
		{cs.Green("g"), "\x1b[32mg\x1b[0m"},
		{cs.Yellow("y"), "\x1b[33my\x1b[0m"},
		{cs.Cyan("c"), "\x1b[36mc\x1b[0m"},
		{cs.Red(""), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}
