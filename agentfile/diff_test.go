package agentfile_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
)

// applyDiff applies a unified diff to old, checking every context and
// deleted line against it, and returns the new text.
func applyDiff(old, diff string) (string, error) {
	lines := strings.SplitAfter(diff, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", errors.New("no ---/+++ header")
	}
	src := strings.SplitAfter(old, "\n")
	if src[len(src)-1] == "" {
		src = src[:len(src)-1]
	}
	var out []string
	next := 0 // the next line of src to copy
	var last *string
	for _, l := range lines[2:] {
		switch {
		case l == "":
		case strings.HasPrefix(l, "@@ -"):
			var aStart, aLen, bStart, bLen int
			fields := strings.Fields(l)
			aStart, aLen = parseRange(fields[1][1:])
			bStart, bLen = parseRange(fields[2][1:])
			_, _ = bStart, bLen
			from := aStart - 1
			if aLen == 0 {
				from = aStart
			}
			if from < next {
				return "", fmt.Errorf("hunk %q goes back", l)
			}
			out = append(out, src[next:from]...)
			next = from
		case l == "\\ No newline at end of file\n":
			if last == nil {
				return "", errors.New("no line before a no-newline mark")
			}
			*last = strings.TrimSuffix(*last, "\n")
		case l[0] == ' ' || l[0] == '-':
			if next >= len(src) || strings.TrimSuffix(src[next], "\n") != strings.TrimSuffix(l[1:], "\n") {
				return "", fmt.Errorf("line %d is not %q", next+1, l)
			}
			if l[0] == ' ' {
				out = append(out, l[1:])
				last = &out[len(out)-1]
			} else {
				last = new(string)
			}
			next++
		case l[0] == '+':
			out = append(out, l[1:])
			last = &out[len(out)-1]
		default:
			return "", fmt.Errorf("unexpected line %q", l)
		}
	}
	out = append(out, src[next:]...)
	return strings.Join(out, ""), nil
}

func parseRange(s string) (start, n int) {
	a, b, found := strings.Cut(s, ",")
	start, _ = strconv.Atoi(a)
	n = 1
	if found {
		n, _ = strconv.Atoi(b)
	}
	return start, n
}

func countChanges(diff string) (del, ins int) {
	for i, l := range strings.Split(diff, "\n") {
		if i < 2 || l == "" {
			continue
		}
		switch l[0] {
		case '-':
			del++
		case '+':
			ins++
		}
	}
	return del, ins
}

func TestDiffBasics(t *testing.T) {
	if d := agentfile.Diff("a", "b", []byte("same\n"), []byte("same\n")); d != "" {
		t.Errorf("equal texts: %q", d)
	}
	got := agentfile.Diff("live", "file", []byte("a\nb\nc\nd\ne\nf\ng\nh\n"), []byte("a\nb\nc\nD\ne\nf\ng\nh\n"))
	want := "--- live\n+++ file\n@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got = agentfile.Diff("a", "b", nil, []byte("x\ny"))
	want = "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n"
	if got != want {
		t.Errorf("from nothing: got\n%s\nwant\n%s", got, want)
	}
}

// randomText makes a text of n lines from a small alphabet, so that lines
// repeat and the edit script is ambiguous in many places.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(string(rune('a' + r.IntN(5))))
		b.WriteByte('\n')
	}
	return b.String()
}

func mutate(r *rand.Rand, s string) string {
	lines := strings.SplitAfter(s, "\n")
	lines = lines[:len(lines)-1]
	for range r.IntN(6) + 1 {
		i := r.IntN(len(lines) + 1)
		switch r.IntN(3) {
		case 0:
			lines = append(lines[:i], append([]string{"new " + strconv.Itoa(r.IntN(100)) + "\n"}, lines[i:]...)...)
		case 1:
			if i < len(lines) {
				lines = append(lines[:i], lines[i+1:]...)
			}
		case 2:
			if i < len(lines) {
				lines[i] = "changed\n"
			}
		}
	}
	out := strings.Join(lines, "")
	if r.IntN(4) == 0 {
		out = strings.TrimSuffix(out, "\n")
	}
	return out
}

// TestDiffAgainstGNUDiff compares Diff with `diff -u --minimal` on texts
// with many repeated lines: both must change the same number of lines
// (the minimum), the same hunks when the script is unique, and Diff's
// output must turn the old text into the new one.
func TestDiffAgainstGNUDiff(t *testing.T) {
	diffProg, err := exec.LookPath("diff")
	if err != nil {
		t.Skip("the diff program (GNU diffutils) is not installed")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 120 {
		old := randomText(r, 5+r.IntN(60))
		new := mutate(r, old)
		mine := agentfile.Diff("old", "new", []byte(old), []byte(new))
		if mine == "" {
			if old != new {
				t.Fatalf("case %d: no diff for different texts", i)
			}
			continue
		}
		applied, err := applyDiff(old, mine)
		if err != nil || applied != new {
			t.Fatalf("case %d: applying the diff: %v\nold:\n%s\nnew:\n%s\ndiff:\n%s\napplied:\n%s", i, err, old, new, mine, applied)
		}
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		if err := os.WriteFile(a, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(b, []byte(new), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(diffProg, "-u", "--minimal", "--label", "old", "--label", "new", a, b).Output()
		gnu := string(out)
		md, mi := countChanges(mine)
		gd, gi := countChanges(gnu)
		if md != gd || mi != gi {
			t.Errorf("case %d: Diff changes -%d +%d lines, diff -u -%d +%d\nmine:\n%s\ngnu:\n%s", i, md, mi, gd, gi, mine, gnu)
		}
	}
	// Where the edit script is unique the output is the same to the byte.
	old := "title: T\nworkflow_definition:\n  blocks:\n    - label: a\n      block_type: wait\n      wait_sec: 1\n    - label: b\n      block_type: wait\n"
	new := strings.Replace(old, "wait_sec: 1", "wait_sec: 2", 1) + "    - label: c\n      block_type: goto_url\n      url: https://example.com/\n"
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b"), []byte(new), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(diffProg, "-u", "--label", "live/a", "--label", "a.yaml", filepath.Join(dir, "a"), filepath.Join(dir, "b")).Output()
	if mine := agentfile.Diff("live/a", "a.yaml", []byte(old), []byte(new)); mine != string(out) {
		t.Errorf("Diff:\n%s\ndiff -u:\n%s", mine, out)
	}
}

// FuzzDiff: the diff of any two texts turns the first into the second.
func FuzzDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Add("", "x")
	f.Add("x\ny", "x\ny\n")
	f.Fuzz(func(t *testing.T, old, new string) {
		if len(old)+len(new) > 4096 {
			return
		}
		d := agentfile.Diff("a", "b", []byte(old), []byte(new))
		if (d == "") != (old == new) {
			t.Fatalf("Diff(%q, %q) = %q", old, new, d)
		}
		if d == "" {
			return
		}
		got, err := applyDiff(old, d)
		if err != nil || got != new {
			t.Fatalf("Diff(%q, %q) = %q applies as %q, %v", old, new, d, got, err)
		}
	})
}
