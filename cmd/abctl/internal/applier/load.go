package applier

import (
	"fmt"
	"io"
	"strings"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
)

// ValidateUsage is the help of the --validate flag of apply and diff,
// which set an agentfile.Validation (a pflag.Value) from it.
const ValidateUsage = "how agent files are checked: strict (keys, block types and references abctl " +
	"does not know are errors), warn (they are warnings on stderr; likely typos stay errors) or " +
	"ignore (the service alone judges them)"

// LoadFiles reads the agents of the files -f and -R name, as
// cmdutil.FileFlags.Load does, checking them as v says (--validate). It
// writes the warnings of the agents that load to warn, one per line, in
// the form of the problems (file:line:column: warning: ...), so that data
// on standard output stays data. Problems in the files are an error of
// exit status 2 that lists every one with its file and line; so is a set
// of files that holds no agent.
func LoadFiles(ff cmdutil.FileFlags, in io.Reader, v agentfile.Validation, warn io.Writer) ([]*agentfile.Agent, error) {
	if err := ff.Require(); err != nil {
		return nil, err
	}
	agents, err := agentfile.Load(ff.Files, agentfile.LoadOptions{Recursive: ff.Recursive, Stdin: in, Validation: v})
	// The warnings of the agents that load are written even when others
	// do not: the report is complete at once.
	for _, a := range agents {
		for _, w := range a.Warnings {
			if _, werr := fmt.Fprintln(warn, w); werr != nil {
				return nil, werr
			}
		}
	}
	if err != nil {
		return nil, &cmdutil.CodeError{Code: cmdutil.ExitUsage, Err: err}
	}
	if len(agents) == 0 {
		return nil, &cmdutil.CodeError{Code: cmdutil.ExitUsage, Err: fmt.Errorf("no agent files in %s", strings.Join(ff.Files, ", "))}
	}
	return agents, nil
}
