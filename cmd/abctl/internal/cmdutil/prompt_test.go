package cmdutil

import (
	"errors"
	"strings"
	"testing"

	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

func TestConfirm(t *testing.T) {
	ios, in, _, errOut := iostreams.Test()
	if _, err := Confirm(ios, "Delete?"); err == nil || !strings.Contains(err.Error(), "--yes") {
		t.Errorf("without a terminal: %v, want an error naming --yes", err)
	}
	ios.SetTTY(true, false, true)
	for _, tc := range []struct {
		answer string
		want   bool
	}{
		{"y\n", true},
		{" YES \n", true},
		{"n\n", false},
		{"\n", false},
		{"", false},
		{"sure\n", false},
	} {
		in.Reset()
		errOut.Reset()
		in.WriteString(tc.answer)
		ok, err := Confirm(ios, "Delete 2 agents?")
		if err != nil || ok != tc.want {
			t.Errorf("answer %q: %v %v, want %v", tc.answer, ok, err, tc.want)
		}
		if errOut.String() != "Delete 2 agents? [y/N] " {
			t.Errorf("question %q", errOut.String())
		}
	}
}

// TestConfirmOrStop: only a yes goes on; anything else, or no terminal,
// exits 1 silently.
func TestConfirmOrStop(t *testing.T) {
	ios, in, _, _ := iostreams.Test()
	var ce *CodeError
	if err := ConfirmOrStop(ios, "Delete?"); !errors.As(err, &ce) || ce.Code != ExitError || ce.Err != nil {
		t.Errorf("without a terminal: %v, want a silent exit 1", err)
	}
	ios.SetTTY(true, false, true)
	in.WriteString("y\n")
	if err := ConfirmOrStop(ios, "Delete?"); err != nil {
		t.Errorf("yes: %v", err)
	}
	in.WriteString("n\n")
	if err := ConfirmOrStop(ios, "Delete?"); !errors.As(err, &ce) || ce.Code != ExitError {
		t.Errorf("no: %v, want a silent exit 1", err)
	}
}

// TestCanConfirm: --yes or a terminal; otherwise a usage error that says
// why first.
func TestCanConfirm(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	if err := CanConfirm(ios, true, "deleting x cannot be undone"); err != nil {
		t.Errorf("--yes: %v", err)
	}
	err := CanConfirm(ios, false, "deleting x cannot be undone")
	var ue *UsageError
	if !errors.As(err, &ue) || err.Error() != "deleting x cannot be undone: add --yes when no terminal can confirm" {
		t.Errorf("no terminal: %v", err)
	}
	ios.SetTTY(true, false, true)
	if err := CanConfirm(ios, false, "deleting x cannot be undone"); err != nil {
		t.Errorf("a terminal: %v", err)
	}
}

// TestDeletion: --yes deletes at once and names the id; otherwise the
// question names the described resource and its consequence, and only a
// yes deletes. Errors say which resource.
func TestDeletion(t *testing.T) {
	ios, in, _, errOut := iostreams.Test()
	deleted := 0
	d := Deletion{IO: ios, Yes: true, Noun: "browser profile", ID: "bp_1", Consequence: "Runs break.",
		Describe: func() (string, error) { return `bp_1 ("Billing")`, nil },
		Delete:   func() error { deleted++; return nil }}
	if err := d.Run(); err != nil || deleted != 1 || errOut.String() != "Browser profile bp_1 deleted.\n" {
		t.Errorf("--yes: %v, deleted %d, said %q", err, deleted, errOut.String())
	}
	ios.SetTTY(true, false, true)
	d.Yes = false
	errOut.Reset()
	in.WriteString("n\n")
	var ce *CodeError
	if err := d.Run(); !errors.As(err, &ce) || ce.Code != ExitError || deleted != 1 {
		t.Errorf("no: %v, deleted %d", err, deleted)
	}
	if want := `Delete browser profile bp_1 ("Billing")? Runs break. [y/N] `; errOut.String() != want {
		t.Errorf("question %q, want %q", errOut.String(), want)
	}
	errOut.Reset()
	in.WriteString("y\n")
	if err := d.Run(); err != nil || deleted != 2 || !strings.HasSuffix(errOut.String(), "Browser profile bp_1 (\"Billing\") deleted.\n") {
		t.Errorf("yes: %v, deleted %d, said %q", err, deleted, errOut.String())
	}
	d.Describe = func() (string, error) { return "", errors.New("not found") }
	if err := d.Run(); err == nil || err.Error() != "get browser profile bp_1: not found" || deleted != 2 {
		t.Errorf("describe fails: %v", err)
	}
	d.Yes, d.Delete = true, func() error { return errors.New("refused") }
	if err := d.Run(); err == nil || err.Error() != "delete browser profile bp_1: refused" {
		t.Errorf("delete fails: %v", err)
	}
}

// TestHiddenReaderWithoutATerminal: with ABCTL_FORCE_TTY over a pipe,
// the reader prompts on stderr and reads plain lines, one a call.
func TestHiddenReaderWithoutATerminal(t *testing.T) {
	ios, in, out, errOut := iostreams.Test()
	in.WriteString("one\r\ntwo")
	read := HiddenReader(ios)
	a, err1 := read(t.Context(), "First: ")
	b, err2 := read(t.Context(), "Second: ")
	_, err3 := read(t.Context(), "Third: ")
	if a != "one" || b != "two" || err1 != nil || err2 != nil || err3 == nil || !strings.Contains(err3.Error(), "stdin ended") {
		t.Errorf("read %q %v, %q %v, then %v", a, err1, b, err2, err3)
	}
	if errOut.String() != "First: Second: Third: " || out.Len() != 0 {
		t.Errorf("prompts on stderr %q, stdout %q", errOut.String(), out.String())
	}
}

func TestTrimNewline(t *testing.T) {
	for in, want := range map[string]string{"key": "key", "key\n": "key", "key\r\n": "key", "key\n\n": "key\n", "key\r": "key\r", "": ""} {
		if got := TrimNewline(in); got != want {
			t.Errorf("TrimNewline(%q) = %q, want %q", in, got, want)
		}
	}
}
