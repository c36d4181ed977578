package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrNoJSON is wrapped by the error ParseJSON returns, and by Complete's
// error when a schema'd answer holds no JSON.
var ErrNoJSON = errors.New("no JSON value in the answer")

// maxStarts bounds how many opening brackets ParseJSON tries per
// candidate text, so that long prose full of brackets costs little.
const maxStarts = 8

// ParseJSON finds the JSON value in a model's answer and returns it as
// compact JSON. It is the last line of defence for models that do not
// follow the format they were asked for, and accepts:
//
//   - the value inside a ```json code fence, or prose around the value
//     (the first object or array that can be read is taken);
//   - trailing commas, a missing comma or colon between members, // and
//     /* */ comments, single-quoted strings, unquoted keys, Python's
//     True/False/None, raw line breaks and bad escapes inside strings;
//   - an answer cut off at the token limit: the unfinished part is dropped
//     (a string, number or member that was being written, and a whole
//     array element that was not finished, so that a list of actions
//     keeps only complete actions) and the open brackets are closed.
//
// Text that is already valid JSON (a scalar included) is returned as is,
// compacted. Otherwise the error wraps ErrNoJSON.
func ParseJSON(text string) (json.RawMessage, error) {
	s := strings.TrimSpace(strings.TrimPrefix(text, "\ufeff"))
	if json.Valid([]byte(s)) {
		return compact([]byte(s)), nil
	}
	for _, cand := range candidates(s) {
		starts := 0
		for i := 0; i < len(cand) && starts < maxStarts; i++ {
			if cand[i] != '{' && cand[i] != '[' {
				continue
			}
			starts++
			if out, ok := repairJSON(cand[i:]); ok && json.Valid(out) {
				return compact(out), nil
			}
		}
	}
	return nil, fmt.Errorf("%w (%d characters, starting %q)", ErrNoJSON, len(text), preview(text, 60))
}

func compact(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return json.RawMessage(b)
	}
	return buf.Bytes()
}

// preview is the first n runes of s on one line.
func preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// candidates are the texts to search: the contents of code fences that
// hold a bracket (an unclosed last fence runs to the end), then the whole
// text.
func candidates(s string) []string {
	var out []string
	rest := s
	for range 4 {
		i := strings.Index(rest, "```")
		if i < 0 {
			break
		}
		rest = rest[i+3:]
		// Skip the info string ("json") up to the end of the line.
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 && !strings.ContainsAny(rest[:nl], "{[") {
			rest = rest[nl+1:]
		}
		body := rest
		if j := strings.Index(rest, "```"); j >= 0 {
			body, rest = rest[:j], rest[j+3:]
		} else {
			rest = ""
		}
		if strings.ContainsAny(body, "{[") {
			out = append(out, body)
		}
	}
	return append(out, s)
}

// Parser states of an open container.
const (
	stKey        = iota // object: a key or the end
	stColon             // object: the colon after a key
	stValue             // object: a member's value
	stObjNext           // object: a comma or the end
	stElem              // array: an element or the end
	stArrNext           // array: a comma or the end
	stTopDone           // the top-level value is complete
	stTopPending        // before the top-level value
)

type frame struct {
	kind  byte // '{' or '['
	state int
	// elem is true for a container that is an element of an array: cut
	// off, it is dropped whole.
	elem bool
}

// repairer rewrites a JSON-like text into JSON, see ParseJSON.
type repairer struct {
	s     string
	i     int
	out   []byte
	stack []frame
	// openElems counts the open frames with elem set; a cut is allowed
	// only where it is zero.
	openElems int
	// safeLen and safeDepth are the output length and the stack depth at
	// the last point where cutting and closing the open frames gives JSON
	// with nothing half-written.
	safeLen, safeDepth int
	hasSafe            bool
}

// repairJSON reads one value starting at s[0] ('{' or '[') and returns it
// as JSON, or false when s does not hold one.
func repairJSON(s string) ([]byte, bool) {
	r := &repairer{s: s, out: make([]byte, 0, len(s)+8)}
	if !r.run() {
		return nil, false
	}
	return r.out, true
}

func (r *repairer) state() int {
	if len(r.stack) == 0 {
		if len(r.out) == 0 {
			return stTopPending
		}
		return stTopDone
	}
	return r.stack[len(r.stack)-1].state
}

func (r *repairer) setState(st int) {
	if len(r.stack) > 0 {
		r.stack[len(r.stack)-1].state = st
	}
}

// markSafe records the current point as a cut point when it is one.
func (r *repairer) markSafe() {
	if r.openElems == 0 && len(r.stack) > 0 {
		r.safeLen, r.safeDepth, r.hasSafe = len(r.out), len(r.stack), true
	}
}

// valueDone moves the enclosing container past a complete value.
func (r *repairer) valueDone() {
	switch r.state() {
	case stValue:
		r.setState(stObjNext)
	case stElem:
		r.setState(stArrNext)
	}
	r.markSafe()
}

func (r *repairer) run() bool {
	for {
		if len(r.stack) == 0 && len(r.out) > 0 {
			return true // the top-level value is complete; the rest is prose
		}
		if !r.skipSpace() {
			return r.truncated()
		}
		c := r.s[r.i]
		st := r.state()
		switch {
		case c == '}' || c == ']':
			if !r.close(c) {
				return false
			}
		case c == ',':
			switch st {
			case stObjNext:
				r.out = append(r.out, ',')
				r.setState(stKey)
			case stArrNext:
				r.out = append(r.out, ',')
				r.setState(stElem)
			case stKey, stElem:
				// A doubled comma: ignore it.
			default:
				return false
			}
			r.i++
		case c == ':':
			if st != stColon {
				return false
			}
			r.out = append(r.out, ':')
			r.setState(stValue)
			r.i++
		default:
			if !r.token(st) {
				return false
			}
		}
		if r.i > len(r.s) {
			return false
		}
	}
}

// token reads a key or a value in state st.
func (r *repairer) token(st int) bool {
	c := r.s[r.i]
	// A missing comma or colon is put back where the next token shows it
	// was meant.
	switch st {
	case stObjNext:
		if c != '"' && c != '\'' && !isIdentStart(c) {
			return false
		}
		r.out = append(r.out, ',')
		st = stKey
		r.setState(stKey)
	case stArrNext:
		r.out = append(r.out, ',')
		st = stElem
		r.setState(stElem)
	case stColon:
		r.out = append(r.out, ':')
		st = stValue
		r.setState(stValue)
	}
	if st == stKey {
		var ok bool
		switch {
		case c == '"' || c == '\'':
			ok = r.str()
		case isIdentStart(c):
			ok = r.ident()
		}
		if !ok {
			return ok || r.truncatedHere()
		}
		r.setState(stColon)
		return true
	}
	// A value.
	switch {
	case c == '{' || c == '[':
		elem := st == stElem
		first := stKey
		if c == '[' {
			first = stElem
		}
		r.stack = append(r.stack, frame{kind: c, state: first, elem: elem})
		if elem {
			r.openElems++
		}
		r.out = append(r.out, c)
		r.i++
		r.markSafe()
		return true
	case c == '"' || c == '\'':
		if !r.str() {
			return r.truncatedHere()
		}
	default:
		ok, complete := r.literal()
		if !ok {
			return false
		}
		if !complete {
			return r.truncatedHere()
		}
	}
	r.valueDone()
	return true
}

// close handles '}' or ']'.
func (r *repairer) close(c byte) bool {
	if len(r.stack) == 0 {
		return false
	}
	top := r.stack[len(r.stack)-1]
	want := byte('}')
	if top.kind == '[' {
		want = ']'
	}
	if c != want {
		return false
	}
	switch top.state {
	case stKey, stObjNext, stElem, stArrNext:
	default:
		return false // a key without a value
	}
	if n := len(r.out); n > 0 && r.out[n-1] == ',' {
		r.out = r.out[:n-1] // trailing comma
	}
	r.out = append(r.out, c)
	r.i++
	r.stack = r.stack[:len(r.stack)-1]
	if top.elem {
		r.openElems--
	}
	r.valueDone()
	return true
}

// skipSpace skips white space and comments; false at the end of the text.
func (r *repairer) skipSpace() bool {
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			r.i++
		case c == '/' && r.i+1 < len(r.s) && r.s[r.i+1] == '/':
			if nl := strings.IndexByte(r.s[r.i:], '\n'); nl >= 0 {
				r.i += nl + 1
			} else {
				r.i = len(r.s)
			}
		case c == '/' && r.i+1 < len(r.s) && r.s[r.i+1] == '*':
			if end := strings.Index(r.s[r.i+2:], "*/"); end >= 0 {
				r.i += end + 4
			} else {
				r.i = len(r.s)
			}
		default:
			return true
		}
	}
	return false
}

// str copies a string in double or single quotes as a JSON string; false
// when the text ends inside it.
func (r *repairer) str() bool {
	q := r.s[r.i]
	r.i++
	r.out = append(r.out, '"')
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == q:
			r.i++
			r.out = append(r.out, '"')
			return true
		case c == '\\':
			if r.i+1 >= len(r.s) {
				r.i++
				return false
			}
			e := r.s[r.i+1]
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				r.out = append(r.out, '\\', e)
			case 'u':
				if r.i+6 > len(r.s) {
					r.i = len(r.s)
					return false
				}
				if isHex4(r.s[r.i+2 : r.i+6]) {
					r.out = append(r.out, r.s[r.i:r.i+6]...)
					r.i += 4
				} else {
					r.out = append(r.out, '\\', '\\', 'u')
				}
			case '\'':
				r.out = append(r.out, '\'')
			default:
				r.out = append(r.out, '\\', '\\') // a lone backslash, kept
				r.i++
				continue
			}
			r.i += 2
		case c == '"': // inside a single-quoted string
			r.out = append(r.out, '\\', '"')
			r.i++
		case c < 0x20:
			switch c {
			case '\n':
				r.out = append(r.out, '\\', 'n')
			case '\r':
				r.out = append(r.out, '\\', 'r')
			case '\t':
				r.out = append(r.out, '\\', 't')
			default:
				r.out = append(r.out, fmt.Sprintf(`\u%04x`, c)...)
			}
			r.i++
		default:
			r.out = append(r.out, c)
			r.i++
		}
	}
	return false
}

func isHex4(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return len(s) == 4
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentPart(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '-'
}

// ident copies an unquoted key as a string; false when the text ends in it.
func (r *repairer) ident() bool {
	j := r.i
	for j < len(r.s) && isIdentPart(r.s[j]) {
		j++
	}
	if j == len(r.s) {
		r.i = j
		return false
	}
	r.out = append(r.out, '"')
	r.out = append(r.out, r.s[r.i:j]...)
	r.out = append(r.out, '"')
	r.i = j
	return true
}

// literal copies a number or a keyword. ok is false when the token is not
// one; complete is false when the text ends in it (a number cut short could
// have had more digits).
func (r *repairer) literal() (ok, complete bool) {
	j := r.i
	for j < len(r.s) && (isIdentPart(r.s[j]) || r.s[j] == '.' || r.s[j] == '+') {
		j++
	}
	tok := r.s[r.i:j]
	if tok == "" {
		return false, false
	}
	atEnd := j == len(r.s)
	var lit string
	switch tok {
	case "true", "True":
		lit = "true"
	case "false", "False":
		lit = "false"
	case "null", "None", "undefined", "NaN":
		lit = "null"
	default:
		if !json.Valid([]byte(tok)) || tok[0] == '"' {
			if atEnd && isPrefixOfKeyword(tok) {
				r.i = j
				return true, false
			}
			if atEnd && json.Valid([]byte(strings.TrimRight(tok, ".eE+-")+"0")) {
				r.i = j
				return true, false
			}
			return false, false
		}
		if atEnd {
			r.i = j
			return true, false
		}
		lit = tok
	}
	r.out = append(r.out, lit...)
	r.i = j
	return true, true
}

func isPrefixOfKeyword(tok string) bool {
	for _, k := range []string{"true", "True", "false", "False", "null", "None"} {
		if strings.HasPrefix(k, tok) {
			return true
		}
	}
	return false
}

// truncatedHere handles the end of the text in the middle of a token.
func (r *repairer) truncatedHere() bool {
	if r.i < len(r.s) {
		return false
	}
	return r.truncated()
}

// truncated ends a text cut off inside the value: back to the last safe
// point, then the open frames are closed.
func (r *repairer) truncated() bool {
	if len(r.stack) == 0 {
		return len(r.out) > 0
	}
	if !r.hasSafe {
		return false
	}
	out := r.out[:r.safeLen]
	if n := len(out); n > 0 && out[n-1] == ',' {
		out = out[:n-1]
	}
	for k := r.safeDepth - 1; k >= 0; k-- {
		if r.stack[k].kind == '{' {
			out = append(out, '}')
		} else {
			out = append(out, ']')
		}
	}
	r.out = out
	r.stack = nil
	return true
}
