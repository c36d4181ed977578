// Package completion is abctl's shell completion: the `abctl completion`
// command, whose bash script works in a plain bash as well as with the
// bash-completion package, and the functions that complete arguments from
// the service (agent names, run ids) and resource kinds.
//
// Cobra's bash script calls two helpers of the bash-completion package,
// _get_comp_words_by_ref and _filedir, which a stock Debian bash does not
// have (`_get_comp_words_by_ref: command not found` on every Tab). The
// script abctl writes calls its own two functions instead, which use
// bash-completion's when they are defined and otherwise do the same work
// themselves: split the line into words the way completion needs (keeping
// "--output=json" and "http://host" whole), and list files and
// directories, by extension when asked.
package completion

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
)

// NewCmdCompletion returns `abctl completion`, which writes the script of the
// command tree it belongs to.
func NewCmdCompletion() *cobra.Command {
	var noDesc bool
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script of bash, zsh, fish or PowerShell",
		Long: "completion prints a script that makes the shell complete abctl's commands, flags and\n" +
			"arguments, agent names and run ids included: those come from the service of the current\n" +
			"profile when it answers within a second (a local daemon is never started for them).",
		Args:              cmdutil.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	shells := []struct {
		name, long string
		gen        func(root *cobra.Command, w *bytes.Buffer, desc bool) error
	}{
		{"bash", "The script works with or without the bash-completion package.\n\n" +
			"In the current shell:\n\n  source <(abctl completion bash)\n\n" +
			"In every new shell: add that line to ~/.bashrc, or\n\n" +
			"  abctl completion bash > ~/.local/share/bash-completion/completions/abctl\n\n" +
			"where bash-completion is installed (it loads the file when abctl is first completed).",
			func(root *cobra.Command, w *bytes.Buffer, desc bool) error {
				s, err := BashScript(root, desc)
				w.WriteString(s)
				return err
			}},
		{"zsh", "In the current shell (compinit loaded):\n\n  source <(abctl completion zsh)\n\n" +
			"In every new shell:\n\n  abctl completion zsh > \"${fpath[1]}/_abctl\"",
			func(root *cobra.Command, w *bytes.Buffer, desc bool) error {
				if desc {
					return root.GenZshCompletion(w)
				}
				return root.GenZshCompletionNoDesc(w)
			}},
		{"fish", "In the current shell:\n\n  abctl completion fish | source\n\n" +
			"In every new shell:\n\n  abctl completion fish > ~/.config/fish/completions/abctl.fish",
			func(root *cobra.Command, w *bytes.Buffer, desc bool) error {
				return root.GenFishCompletion(w, desc)
			}},
		{"powershell", "In the current shell:\n\n  abctl completion powershell | Out-String | Invoke-Expression\n\n" +
			"In every new shell: add that line to your PowerShell profile.",
			func(root *cobra.Command, w *bytes.Buffer, desc bool) error {
				if desc {
					return root.GenPowerShellCompletionWithDesc(w)
				}
				return root.GenPowerShellCompletion(w)
			}},
	}
	for _, sh := range shells {
		sub := &cobra.Command{
			Use:                   sh.name,
			Short:                 "Print the completion script of " + sh.name,
			Long:                  "Prints the completion script of " + sh.name + " on stdout.\n\n" + sh.long,
			Args:                  cmdutil.NoArgs,
			DisableFlagsInUseLine: true,
			ValidArgsFunction:     cobra.NoFileCompletions,
			RunE: func(cmd *cobra.Command, _ []string) error {
				var buf bytes.Buffer
				if err := sh.gen(cmd.Root(), &buf, !noDesc); err != nil {
					return err
				}
				_, err := cmd.OutOrStdout().Write(buf.Bytes())
				return err
			},
		}
		sub.Flags().BoolVar(&noDesc, "no-descriptions", false, "complete without the descriptions of the candidates")
		cmd.AddCommand(sub)
	}
	return cmd
}

// filedirCall matches the calls of bash-completion's _filedir in cobra's
// script (after a blank or a quote).
var filedirCall = regexp.MustCompile(`([\s"])_filedir\b`)

// wordsCall is the one call of _get_comp_words_by_ref in cobra's script.
const wordsCall = `_get_comp_words_by_ref "$@" cur prev words cword`

// BashScript returns cobra's bash completion script (V2) for root, made to
// work without the bash-completion package (see the package comment).
func BashScript(root *cobra.Command, descriptions bool) (string, error) {
	var buf bytes.Buffer
	if err := root.GenBashCompletionV2(&buf, descriptions); err != nil {
		return "", err
	}
	script := buf.String()
	name := root.Name()
	if strings.Count(script, wordsCall) != 1 || !filedirCall.MatchString(script) {
		// A cobra whose script changed: it must be looked at again.
		return "", fmt.Errorf("completion: cobra's bash script no longer has the calls abctl replaces (%s, _filedir)", wordsCall)
	}
	script = strings.Replace(script, wordsCall, "__"+name+wordsCall, 1)
	script = filedirCall.ReplaceAllString(script, "${1}__"+name+"_filedir")
	header, rest, _ := strings.Cut(script, "\n")
	return header + "\n" + strings.ReplaceAll(bashHelpers, "__PROG", "__"+name) + rest, nil
}

// bashHelpers stand in for the two helpers of the bash-completion package
// that cobra's script uses, when that package is not loaded. __PROG is the
// functions' prefix.
const bashHelpers = `
# Without the bash-completion package, these two functions do the work of
# the two helpers of it that this script needs; with it, they call them.

# __PROG_get_comp_words_by_ref sets cur, prev, words and cword as
# bash-completion's _get_comp_words_by_ref -n =: does: the words of the
# line up to the cursor, where a word that bash split at "=" or ":" (as in
# --output=json or http://host:8000) is whole again.
__PROG_get_comp_words_by_ref()
{
    if declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
        _get_comp_words_by_ref "$@"
        return
    fi
    local line=${COMP_LINE:0:COMP_POINT} rest i w glue
    words=()
    cword=-1
    for ((i = 0; i <= COMP_CWORD && i < ${#COMP_WORDS[@]}; i++)); do
        w=${COMP_WORDS[i]}
        rest=${line#"${line%%[![:blank:]]*}"}
        glue=0
        if ((i > 0)) && [[ $rest == "$line" ]]; then
            # Nothing between this word and the one before: bash split them
            # at a word break; keep them together if it was = or :.
            case "${words[cword]}" in *[=:]) glue=1 ;; esac
            case "$w" in [=:]*) glue=1 ;; esac
        fi
        if ((i == COMP_CWORD)); then
            w=$rest # the word up to the cursor
        fi
        if ((glue)); then
            words[cword]+=$w
        else
            words+=("$w")
            cword=$((${#words[@]} - 1))
        fi
        line=${rest#"$w"}
    done
    cur=${words[cword]}
    prev=
    if ((cword > 0)); then
        prev=${words[cword - 1]}
    fi
    return 0
}

# __PROG_filedir adds the files and directories that start with $cur to
# COMPREPLY, as bash-completion's _filedir does: "-d" directories only; an
# argument "yaml|yml|" keeps the files with one of those extensions.
__PROG_filedir()
{
    if declare -F _filedir >/dev/null 2>&1; then
        _filedir "$@"
        return
    fi
    local IFS=$'\n' f e
    local -a exts=()
    if [[ $1 != -d && -n ${1%|} ]]; then
        IFS='|' read -ra exts <<< "${1%|}"
    fi
    compopt -o filenames 2>/dev/null
    for f in $(compgen -f -- "${cur}"); do
        if [[ -d $f ]]; then
            COMPREPLY+=("$f")
        elif [[ $1 != -d ]]; then
            if ((${#exts[@]} == 0)); then
                COMPREPLY+=("$f")
                continue
            fi
            for e in "${exts[@]}"; do
                if [[ $f == *."$e" ]]; then
                    COMPREPLY+=("$f")
                    break
                fi
            done
        fi
    done
}
`
