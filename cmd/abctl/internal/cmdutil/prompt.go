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
