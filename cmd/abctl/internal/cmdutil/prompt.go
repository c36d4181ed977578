package cmdutil

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

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
