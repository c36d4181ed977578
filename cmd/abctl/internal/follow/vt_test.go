package follow

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// vt is a small terminal emulator for the live view's tests: it applies
// what the view writes (text, line feeds, the cursor movements, line
// insertions and erasures of the bubbletea renderer) to a screen of fixed
// size with a scrollback, and tells what a person would then read. Colours,
// modes, hyperlinks and queries are ignored. A line feed also returns the
// carriage, as a terminal that maps NL to CR-NL does (the renderer assumes
// so when its input is not a terminal, as in the tests).
type vt struct {
	cols, rows int
	screen     [][]rune
	wrapped    []bool // the row continues the one above (a soft wrap)
	scrollback []string
	sbWrapped  []bool
	x, y       int
	last       rune
	saveX      int
	saveY      int
}

func newVT(cols, rows int) *vt {
	v := &vt{cols: cols, rows: rows}
	for range rows {
		v.screen = append(v.screen, v.blank())
		v.wrapped = append(v.wrapped, false)
	}
	return v
}

func (v *vt) blank() []rune {
	r := make([]rune, v.cols)
	for i := range r {
		r[i] = ' '
	}
	return r
}

func (v *vt) lineFeed() {
	if v.y < v.rows-1 {
		v.y++
		return
	}
	v.scrollback = append(v.scrollback, string(v.screen[0]))
	v.sbWrapped = append(v.sbWrapped, v.wrapped[0])
	v.screen = append(v.screen[1:], v.blank())
	v.wrapped = append(v.wrapped[1:], false)
}

func (v *vt) put(r rune) {
	if v.x >= v.cols {
		v.x = 0
		v.lineFeed()
		v.wrapped[v.y] = true
	}
	v.screen[v.y][v.x] = r
	v.x++
	v.last = r
}

func clamp(n, lo, hi int) int { return max(lo, min(n, hi)) }

// Write applies the bytes; escape sequences are expected whole within one
// call, as the renderer writes them.
func (v *vt) Write(p []byte) (int, error) {
	s := string(p)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\x1b' && i+1 < len(s) && s[i+1] == '[':
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			if j < len(s) {
				v.csi(s[i+2:j], s[j])
			}
			i = j + 1
		case c == '\x1b' && i+1 < len(s) && (s[i+1] == ']' || s[i+1] == 'P' || s[i+1] == '_'):
			// OSC, DCS, APC: up to BEL or ST.
			j := i + 2
			for j < len(s) && s[j] != '\a' && !(s[j] == '\x1b' && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			if j < len(s) && s[j] == '\x1b' {
				j++
			}
			i = j + 1
		case c == '\x1b' && i+1 < len(s):
			switch s[i+1] {
			case '7':
				v.saveX, v.saveY = v.x, v.y
			case '8':
				v.x, v.y = v.saveX, v.saveY
			case 'M':
				if v.y > 0 {
					v.y--
				}
			}
			i += 2
		case c == '\r':
			v.x = 0
			i++
		case c == '\n':
			v.x = 0
			v.lineFeed()
			i++
		case c == '\b':
			v.x = max(0, v.x-1)
			i++
		case c == '\t':
			v.x = min(v.cols-1, (v.x/8+1)*8)
			i++
		case c < 0x20 || c == 0x7f:
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			v.put(r)
			i += size
		}
	}
	return len(p), nil
}

func (v *vt) csi(params string, final byte) {
	if params != "" && strings.ContainsAny(params[:1], "?<>=") || strings.ContainsAny(params, "$ ") {
		return // private modes, queries, keyboard protocols
	}
	var ns []int
	for _, f := range strings.Split(params, ";") {
		n, _ := strconv.Atoi(f)
		ns = append(ns, n)
	}
	arg := func(i, def int) int {
		if i < len(ns) && ns[i] > 0 {
			return ns[i]
		}
		return def
	}
	x := min(v.x, v.cols-1)
	switch final {
	case 'A':
		v.y = clamp(v.y-arg(0, 1), 0, v.rows-1)
	case 'B':
		v.y = clamp(v.y+arg(0, 1), 0, v.rows-1)
	case 'C':
		v.x = clamp(x+arg(0, 1), 0, v.cols-1)
	case 'D':
		v.x = clamp(x-arg(0, 1), 0, v.cols-1)
	case 'E':
		v.x, v.y = 0, clamp(v.y+arg(0, 1), 0, v.rows-1)
	case 'F':
		v.x, v.y = 0, clamp(v.y-arg(0, 1), 0, v.rows-1)
	case 'G', '`':
		v.x = clamp(arg(0, 1)-1, 0, v.cols-1)
	case 'd':
		v.y = clamp(arg(0, 1)-1, 0, v.rows-1)
	case 'H', 'f':
		v.y, v.x = clamp(arg(0, 1)-1, 0, v.rows-1), clamp(arg(1, 1)-1, 0, v.cols-1)
	case 'J':
		switch arg(0, 0) {
		case 0:
			v.eraseLine(v.y, x, v.cols)
			for y := v.y + 1; y < v.rows; y++ {
				v.eraseLine(y, 0, v.cols)
			}
		case 1:
			for y := 0; y < v.y; y++ {
				v.eraseLine(y, 0, v.cols)
			}
			v.eraseLine(v.y, 0, x+1)
		default:
			for y := range v.rows {
				v.eraseLine(y, 0, v.cols)
			}
		}
	case 'K':
		switch arg(0, 0) {
		case 0:
			v.eraseLine(v.y, x, v.cols)
		case 1:
			v.eraseLine(v.y, 0, x+1)
		default:
			v.eraseLine(v.y, 0, v.cols)
		}
	case 'X':
		v.eraseLine(v.y, x, min(v.cols, x+arg(0, 1)))
	case 'L':
		for range min(arg(0, 1), v.rows-v.y) {
			v.screen = append(v.screen[:v.y], append([][]rune{v.blank()}, v.screen[v.y:v.rows-1]...)...)
			v.wrapped = append(v.wrapped[:v.y], append([]bool{false}, v.wrapped[v.y:v.rows-1]...)...)
		}
		v.x = 0
	case 'M':
		for range min(arg(0, 1), v.rows-v.y) {
			v.screen = append(append(v.screen[:v.y:v.y], v.screen[v.y+1:]...), v.blank())
			v.wrapped = append(append(v.wrapped[:v.y:v.y], v.wrapped[v.y+1:]...), false)
		}
		v.x = 0
	case '@':
		n := min(arg(0, 1), v.cols-x)
		row := v.screen[v.y]
		copy(row[x+n:], row[x:v.cols-n])
		for i := x; i < x+n; i++ {
			row[i] = ' '
		}
	case 'P':
		n := min(arg(0, 1), v.cols-x)
		row := v.screen[v.y]
		copy(row[x:], row[x+n:])
		for i := v.cols - n; i < v.cols; i++ {
			row[i] = ' '
		}
	case 'b':
		for range arg(0, 1) {
			v.put(v.last)
		}
	case 'S':
		for range arg(0, 1) {
			y := v.y
			v.y = v.rows - 1
			v.lineFeed()
			v.y = y
		}
	}
}

func (v *vt) eraseLine(y, from, to int) {
	for i := from; i < to; i++ {
		v.screen[y][i] = ' '
	}
}

// text is everything a person can read, scrollback then screen, with the
// soft-wrapped rows joined into their lines, trailing blanks and blank
// lines at the end removed.
func (v *vt) text() string {
	rows := append(append([]string(nil), v.scrollback...), func() []string {
		var s []string
		for _, r := range v.screen {
			s = append(s, string(r))
		}
		return s
	}()...)
	wrapped := append(append([]bool(nil), v.sbWrapped...), v.wrapped...)
	var lines []string
	for i, r := range rows {
		if wrapped[i] && len(lines) > 0 {
			lines[len(lines)-1] += r
			continue
		}
		lines = append(lines, r)
	}
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// TestVT checks the emulator itself on the sequences the tests rely on.
func TestVT(t *testing.T) {
	v := newVT(10, 3)
	v.Write([]byte("one\ntwo\nthree\nabcdefghijkl\n"))
	if got, want := v.text(), "one\ntwo\nthree\nabcdefghijkl"; got != want {
		t.Errorf("scrolling and wrapping:\n%q\nwant\n%q", got, want)
	}
	v = newVT(10, 4)
	v.Write([]byte("a\nb\nc\x1b[1A\x1b[Lnew\x1b[K\r\n"))
	if got, want := v.text(), "a\nnew\nb\nc"; got != want {
		t.Errorf("insert line:\n%q\nwant\n%q", got, want)
	}
	v.Write([]byte("\x1b[J"))
	if got, want := v.text(), "a\nnew"; got != want {
		t.Errorf("erase below:\n%q\nwant\n%q", got, want)
	}
}
