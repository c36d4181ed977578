package cmdutil

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/agentfile"
)

// FileFlags are -f/--filename and -R/--recursive: the agent files that
// apply, diff and delete read (run takes its one file as an argument and
// reads it with Load too), and how strictly they are checked (--validate
// on apply and diff; the default, warn, elsewhere).
type FileFlags struct {
	Files      []string
	Recursive  bool
	Validation agentfile.Validation
}

// ValidateUsage is the help of the --validate flag (AddValidate).
const ValidateUsage = "how agent files are checked: strict (keys, block types and references abctl " +
	"does not know are errors), warn (they are warnings on stderr; likely typos stay errors) or " +
	"ignore (the service alone judges them)"

// Add adds -f and -R to cmd.
func (ff *FileFlags) Add(cmd *cobra.Command) {
	cmd.Flags().StringArrayVarP(&ff.Files, "filename", "f", nil, "agent file (YAML or JSON), directory, or - for stdin (repeatable)")
	cmd.Flags().BoolVarP(&ff.Recursive, "recursive", "R", false, "read the directories given with -f and their subdirectories")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
}

// AddValidate adds --validate=strict|warn|ignore to cmd.
// A bare --validate means strict, as kubectl's does.
func (ff *FileFlags) AddValidate(cmd *cobra.Command) {
	cmd.Flags().Var(&ff.Validation, "validate", ValidateUsage)
	cmd.Flags().Lookup("validate").NoOptDefVal = agentfile.ValidateStrict.String()
}

// Require is the usage error of a command that needs -f when none was
// given, else nil.
func (ff *FileFlags) Require() error {
	if len(ff.Files) == 0 {
		return UsageErrorf("give the agent files with -f FILE, -f DIR (with -R for subdirectories) or -f - (stdin)")
	}
	return nil
}

// Read reads the agents of the files given, none when none was given; in
// is read for "-". They are checked as ff.Validation says; the warnings of
// the agents that load are written to warn (nil: dropped), one per line in
// the form of the problems (file:line:column: warning: ...), even when
// other files fail, so that the report is complete at once and data on
// standard output stays data. Problems in the files are an error of exit
// status 2 that lists every one with its file and line.
func (ff *FileFlags) Read(in io.Reader, warn io.Writer) ([]*agentfile.Agent, error) {
	if len(ff.Files) == 0 {
		return nil, nil
	}
	agents, err := agentfile.Load(ff.Files, agentfile.LoadOptions{Recursive: ff.Recursive, Stdin: in, Validation: ff.Validation})
	if warn != nil {
		for _, a := range agents {
			for _, w := range a.Warnings {
				if _, werr := fmt.Fprintln(warn, w); werr != nil {
					return nil, werr
				}
			}
		}
	}
	if err != nil {
		return nil, &CodeError{Code: ExitUsage, Err: err}
	}
	return agents, nil
}

// Load is Read for a command that needs agents: no -f, and files that
// hold none, are errors of exit status 2 too.
func (ff *FileFlags) Load(in io.Reader, warn io.Writer) ([]*agentfile.Agent, error) {
	if err := ff.Require(); err != nil {
		return nil, err
	}
	agents, err := ff.Read(in, warn)
	if err != nil {
		return nil, err
	}
	if len(agents) == 0 {
		return nil, &CodeError{Code: ExitUsage, Err: fmt.Errorf("no agent files in %s", strings.Join(ff.Files, ", "))}
	}
	return agents, nil
}
