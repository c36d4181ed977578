package agentfile

import (
	"fmt"
	"strings"
)

// Diff returns the unified diff (diff -u, three lines of context) that
// turns old into new, with oldName and newName in the --- and +++
// headers; "" when they are equal. It compares lines with Myers'
// algorithm, which finds a shortest edit script.
func Diff(oldName, newName string, old, new []byte) string {
	if string(old) == string(new) {
		return ""
	}
	a, b := splitLines(string(old)), splitLines(string(new))
	ops := diffLines(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	for _, h := range hunks(ops, 3) {
		writeHunk(&out, h, a, b)
	}
	return out.String()
}

// line is one line of a text; noEOL marks a last line without its "\n".
type line struct {
	text  string
	noEOL bool
}

func splitLines(s string) []line {
	if s == "" {
		return nil
	}
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	lines := make([]line, len(parts))
	for i, p := range parts {
		lines[i] = line{text: strings.TrimSuffix(p, "\n"), noEOL: !strings.HasSuffix(p, "\n")}
	}
	return lines
}

// op is one step of an edit script: keep a[i] (== b[j]), delete a[i], or
// insert b[j].
type op struct {
	kind byte // ' ', '-', '+'
	i, j int  // the line in a and in b (the next one, for an insert or a delete)
}

// diffLines returns the edit script from a to b: the common prefix and
// suffix are kept as they are, and Myers' greedy search runs on the middle,
// keeping the frontier of each round to trace the path back.
func diffLines(a, b []line) []op {
	prefix := 0
	for prefix < len(a) && prefix < len(b) && a[prefix] == b[prefix] {
		prefix++
	}
	suffix := 0
	for suffix < len(a)-prefix && suffix < len(b)-prefix && a[len(a)-1-suffix] == b[len(b)-1-suffix] {
		suffix++
	}
	var ops []op
	for k := range prefix {
		ops = append(ops, op{' ', k, k})
	}
	ops = append(ops, myers(a[prefix:len(a)-suffix], b[prefix:len(b)-suffix], prefix)...)
	for k := range suffix {
		ops = append(ops, op{' ', len(a) - suffix + k, len(b) - suffix + k})
	}
	return ops
}

// myers returns the shortest edit script from a to b; off is added to
// every line number.
func myers(a, b []line, off int) []op {
	n, m := len(a), len(b)
	maxD := n + m
	if maxD == 0 {
		return nil
	}
	// v[k+maxD] is the furthest x reached on diagonal k (y = x - k).
	v := make([]int32, 2*maxD+2)
	var trace [][]int32
	var found bool
	for d := 0; d <= maxD && !found; d++ {
		// Only diagonals -d..d are reachable in round d; keep just those.
		snapshot := make([]int32, 2*d+1)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[k-1+maxD] < v[k+1+maxD] {
				x = int(v[k+1+maxD]) // down: an insert
			} else {
				x = int(v[k-1+maxD]) + 1 // right: a delete
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[k+maxD] = int32(x)
			if x >= n && y >= m {
				found = true
			}
		}
		for k := -d; k <= d; k++ {
			snapshot[k+d] = v[k+maxD]
		}
		trace = append(trace, snapshot)
	}

	// Walk back from (n, m) through the rounds.
	var rev []op
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		k := x - y
		at := func(round, diag int) int {
			if diag < -round || diag > round {
				return -1
			}
			return int(trace[round][diag+round])
		}
		if d == 0 {
			for x > 0 && y > 0 {
				x, y = x-1, y-1
				rev = append(rev, op{' ', x + off, y + off})
			}
			break
		}
		var prevK int
		if k == -d || k != d && at(d-1, k-1) < at(d-1, k+1) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := at(d-1, prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			rev = append(rev, op{' ', x + off, y + off})
		}
		if prevK == k+1 {
			rev = append(rev, op{'+', x + off, prevY + off})
		} else {
			rev = append(rev, op{'-', prevX + off, y + off})
		}
		x, y = prevX, prevY
	}
	ops := make([]op, len(rev))
	for i, o := range rev {
		ops[len(rev)-1-i] = o
	}
	return ops
}

// hunks groups an edit script into hunks with ctx lines of context around
// the changes; hunks whose context would touch are merged.
func hunks(ops []op, ctx int) [][]op {
	var out [][]op
	start, end := -1, -1 // the ops of the current hunk
	for i, o := range ops {
		if o.kind == ' ' {
			continue
		}
		lo := max(i-ctx, 0)
		if start >= 0 && lo <= end+1 {
			end = min(i+ctx, len(ops)-1)
			continue
		}
		if start >= 0 {
			out = append(out, ops[start:end+1])
		}
		start, end = lo, min(i+ctx, len(ops)-1)
	}
	if start >= 0 {
		out = append(out, ops[start:end+1])
	}
	return out
}

func writeHunk(out *strings.Builder, h []op, a, b []line) {
	aStart, bStart, aLen, bLen := -1, -1, 0, 0
	for _, o := range h {
		if o.kind != '+' {
			if aStart < 0 {
				aStart = o.i
			}
			aLen++
		}
		if o.kind != '-' {
			if bStart < 0 {
				bStart = o.j
			}
			bLen++
		}
	}
	// An empty range is written as the line before it (0 at the start).
	if aStart < 0 {
		aStart = h[0].i
	}
	if bStart < 0 {
		bStart = h[0].j
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
	for _, o := range h {
		var l line
		switch o.kind {
		case '+':
			l = b[o.j]
		default:
			l = a[o.i]
		}
		out.WriteByte(o.kind)
		out.WriteString(l.text)
		out.WriteByte('\n')
		if l.noEOL {
			out.WriteString("\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats the start (0-based) and length of a hunk's side as
// diff -u does: "start,len" 1-based, "start" alone for one line, and the
// line before for an empty side.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
