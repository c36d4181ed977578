package cmdutil

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// FlagError turns an error of parsing cmd's flags into the usage error
// abctl prints. Two mistakes get a better message than the parser's:
//
//   - a mistyped command followed by flags ("abctl aply -f x"): the parser
//     stops at the flag the mistyped command does not know; when the words
//     before that flag are arguments cmd does not take, their error comes
//     first (for a mistyped command, its nearest names, as GroupArgs says);
//   - an unknown long flag ("--parm"): the message suggests the nearest
//     flags of the command, its own and those it inherits.
//
// The root installs it with SetFlagErrorFunc, which every command inherits.
func FlagError(cmd *cobra.Command, err error) error {
	// The words the parser saw before the flag it failed on.
	if args := cmd.Flags().Args(); len(args) > 0 {
		if aerr := cmd.ValidateArgs(args); aerr != nil {
			var ue *UsageError
			if !errors.As(aerr, &ue) {
				aerr = &UsageError{CmdPath: cmd.CommandPath(), Err: aerr}
			}
			return aerr
		}
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		if s := FlagSuggestions(cmd, name); len(s) > 0 {
			msg += "; did you mean --" + strings.Join(s, " or --") + "?"
		}
		err = errors.New(msg)
	}
	return &UsageError{CmdPath: cmd.CommandPath(), Err: err}
}

// FlagSuggestions returns the names of cmd's flags (its own and the ones it
// inherits, hidden ones left out) nearest to name: those within two edits of
// it, or that it starts or ends, nearest first.
func FlagSuggestions(cmd *cobra.Command, name string) []string {
	type near struct {
		name string
		dist int
	}
	var found []near
	seen := map[string]bool{}
	consider := func(fl *pflag.Flag) {
		if fl.Hidden || seen[fl.Name] {
			return
		}
		seen[fl.Name] = true
		d := editDistance(strings.ToLower(name), fl.Name)
		if d <= 2 || (len(name) >= 3 && (strings.HasPrefix(fl.Name, name) || strings.HasPrefix(name, fl.Name))) {
			found = append(found, near{fl.Name, d})
		}
	}
	cmd.LocalFlags().VisitAll(consider)
	cmd.InheritedFlags().VisitAll(consider)
	sort.SliceStable(found, func(i, j int) bool { return found[i].dist < found[j].dist })
	names := make([]string, 0, 3)
	for i := 0; i < len(found) && i < 3; i++ {
		names = append(names, found[i].name)
	}
	return names
}

// editDistance is the number of single-character insertions, deletions and
// substitutions that turn a into b (Levenshtein's distance).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// unknownCommand is the message of GroupArgs and NoArgs for a word that can
// only be a mistyped subcommand of cmd.
func unknownCommand(cmd *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	if s := CommandSuggestions(cmd, word); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return &UsageError{CmdPath: cmd.CommandPath(), Err: errors.New(msg)}
}

// CommandSuggestions returns the names of cmd's subcommands nearest to word:
// those whose name or an alias is within two edits of it or starts with it,
// and those that list it in SuggestFor. Cobra's own SuggestionsFor only
// measures the distance on a command that sets SuggestionsMinimumDistance,
// which the subcommands of abctl's root do not.
func CommandSuggestions(cmd *cobra.Command, word string) []string {
	lower := strings.ToLower(word)
	var names []string
	for _, sub := range cmd.Commands() {
		if !sub.IsAvailableCommand() {
			continue
		}
		for _, name := range append([]string{sub.Name()}, append(sub.Aliases, sub.SuggestFor...)...) {
			if editDistance(lower, strings.ToLower(name)) <= 2 || strings.HasPrefix(strings.ToLower(name), lower) {
				names = append(names, sub.Name())
				break
			}
		}
	}
	return names
}
