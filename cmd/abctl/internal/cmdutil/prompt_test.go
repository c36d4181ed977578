package cmdutil

import (
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
