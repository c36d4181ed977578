package agentfile

import (
	"fmt"
	"sort"
	"strings"
)

// Severity tells whether a problem keeps its agent from loading.
type Severity uint8

const (
	// SeverityError is a problem the service would refuse, or one that
	// makes the file unreadable: the agent is not loaded.
	SeverityError Severity = iota
	// SeverityWarning is something the service accepts but abctl cannot
	// vouch for: a key it ignores, a block type abctl does not know, a
	// reference to a name the agent does not define. The agent loads; its
	// warnings are in Agent.Warnings.
	SeverityWarning
)

// Problem is one thing wrong with an agent file, placed as precisely as the
// file allows.
type Problem struct {
	Severity Severity
	File     string // the path as given ("<stdin>" for standard input)
	Line     int    // 1-based; 0 when the problem is about the whole file
	Column   int    // 1-based; 0 when unknown
	Agent    string // the agent's name, when known
	Block    string // the label of the innermost block the problem is in, if any
	// Path is where in the agent the problem is, in the API's field names:
	// workflow_definition.blocks[2].url. Empty for problems of the file.
	Path string
	Msg  string
}

// String formats p as file:line:column: agent "name", block "label": msg,
// leaving out what is unknown; a warning has "warning: " after its place,
// as compilers write theirs.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
		if p.Column > 0 {
			fmt.Fprintf(&b, ":%d", p.Column)
		}
	}
	b.WriteString(": ")
	if p.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	switch {
	case p.Agent != "" && p.Block != "":
		fmt.Fprintf(&b, "agent %q, block %q: ", p.Agent, p.Block)
	case p.Agent != "":
		fmt.Fprintf(&b, "agent %q: ", p.Agent)
	case p.Block != "":
		fmt.Fprintf(&b, "block %q: ", p.Block)
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is every problem found in a set of agent files. It is the error
// Load and Parse return, so that a caller reports all of them at once: the
// errors, and the warnings of the agents that did not load (the warnings
// of an agent that loads are in its Agent.Warnings).
type Problems []Problem

// hasErrors reports whether one of the problems is an error.
func (ps Problems) hasErrors() bool {
	for _, p := range ps {
		if p.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Error lists the problems one per line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// tidy orders the problems of one file by line and column, keeping the
// order they were found in for equal positions, and drops repeats (a
// problem inside a YAML anchor is found at every use of it).
func (ps Problems) tidy() Problems {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Line != ps[j].Line {
			return ps[i].Line < ps[j].Line
		}
		return ps[i].Column < ps[j].Column
	})
	type place struct {
		line, column int
		severity     Severity
		msg          string
	}
	seen := make(map[place]bool, len(ps))
	var out Problems
	for _, p := range ps {
		k := place{p.Line, p.Column, p.Severity, p.Msg}
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}

// errorOrNil returns ps as an error, or nil when it is empty (a nil
// Problems in an error interface would not be nil).
func (ps Problems) errorOrNil() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// suggest returns ` (did you mean "x"?)` for the candidate closest to
// word, or "" when none is close enough to be a likely typo.
func suggest(word string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	// One edit in three characters is the most that still reads as a typo
	// rather than another word; two edits are always allowed.
	if bestDist < 0 || bestDist > max(2, len(word)/3) || bestDist >= len(word) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance of a and b, counting a swap of
// two neighbouring characters as one edit (the commonest typo).
func editDistance(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		return max(len(a), len(b)) // not a typo of a key; spare the quadratic work
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
