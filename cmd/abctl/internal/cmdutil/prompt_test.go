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
