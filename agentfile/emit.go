package agentfile

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// The YAML of normalized definitions and rendered files is written here
// rather than by yaml.v3's encoder, which costs more than all the rest of
// Normalize together (it allocates some 60 KB per small agent). The
// output is block style indented by two spaces, and conservative about
// scalars: a string is written plain only when it cannot read as anything
// else, as a literal block when it has several lines that a block keeps
// exactly, and double-quoted otherwise.

// encodeYAML writes v (an object) as a YAML document.
func encodeYAML(v *jvalue) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(1024)
	e := &emitter{buf: &buf}
	if v.kind == 'o' && len(v.keys) > 0 {
		e.mapping(v, 0)
	} else {
		e.flowOrScalar(v, 0)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

type emitter struct {
	buf *bytes.Buffer
}

func (e *emitter) indent(n int) {
	for range n {
		e.buf.WriteByte(' ')
	}
}

// mapping writes the keys of v at indentation ind, the first one where the
// cursor is (after "- " for a list item), each line ending with "\n".
func (e *emitter) mapping(v *jvalue, ind int) {
	for i, k := range v.keys {
		if i > 0 {
			e.indent(ind)
		}
		start := e.buf.Len()
		e.key(k)
		if e.buf.Len()-start > maxImplicitKey {
			// Too long for an implicit key: "? key" on its line, then
			// ": value".
			key := append([]byte(nil), e.buf.Bytes()[start:]...)
			e.buf.Truncate(start)
			e.buf.WriteString("? ")
			e.buf.Write(key)
			e.buf.WriteByte('\n')
			e.indent(ind)
		}
		e.buf.WriteByte(':')
		e.nested(v.vals[i], ind)
	}
}

// maxImplicitKey is the longest key written as "key: value"; YAML allows
// 1024 characters in such a key.
const maxImplicitKey = 1000

// sequence writes the items of v, each "- " at indentation ind.
func (e *emitter) sequence(v *jvalue, ind int) {
	for i, it := range v.items {
		if i > 0 {
			e.indent(ind)
		}
		e.buf.WriteString("- ")
		switch {
		case it.kind == 'o' && len(it.keys) > 0:
			e.mapping(it, ind+2)
		case it.kind == 'a' && len(it.items) > 0:
			e.sequence(it, ind+2)
		default:
			e.flowOrScalar(it, ind+2)
			e.buf.WriteByte('\n')
		}
	}
}

// nested writes the value of a key whose line is at indentation ind.
func (e *emitter) nested(v *jvalue, ind int) {
	switch {
	case v.kind == 'o' && len(v.keys) > 0:
		e.buf.WriteByte('\n')
		e.indent(ind + 2)
		e.mapping(v, ind+2)
	case v.kind == 'a' && len(v.items) > 0:
		e.buf.WriteByte('\n')
		e.indent(ind + 2)
		e.sequence(v, ind+2)
	default:
		e.buf.WriteByte(' ')
		e.flowOrScalar(v, ind+2)
		e.buf.WriteByte('\n')
	}
}

// flowOrScalar writes an empty collection or a scalar; a literal block's
// lines are indented by ind.
func (e *emitter) flowOrScalar(v *jvalue, ind int) {
	switch v.kind {
	case 'o':
		e.buf.WriteString("{}")
	case 'a':
		e.buf.WriteString("[]")
	case 's':
		e.str(v.s, ind)
	case 'n':
		e.buf.WriteString(v.s)
	case 'b':
		if v.b {
			e.buf.WriteString("true")
		} else {
			e.buf.WriteString("false")
		}
	default:
		e.buf.WriteString("null")
	}
}

func (e *emitter) key(s string) {
	if plainSafe(s) {
		e.buf.WriteString(s)
	} else {
		e.quoted(s)
	}
}

func (e *emitter) str(s string, ind int) {
	switch {
	case plainSafe(s):
		e.buf.WriteString(s)
	case literalSafe(s):
		e.literal(s, ind)
	default:
		e.quoted(s)
	}
}

// literal writes s as a literal block (|), its chomping indicator keeping
// the trailing line breaks exactly.
func (e *emitter) literal(s string, ind int) {
	body := strings.TrimRight(s, "\n")
	switch trailing := len(s) - len(body); trailing {
	case 0:
		e.buf.WriteString("|-")
	case 1:
		e.buf.WriteString("|")
	default:
		e.buf.WriteString("|+")
	}
	for _, line := range strings.Split(s[:len(s)-min(len(s)-len(body), 1)], "\n") {
		e.buf.WriteByte('\n')
		if line != "" {
			e.indent(ind)
			e.buf.WriteString(line)
		}
	}
}

// quoted writes s double-quoted, escaping what YAML would not keep as it
// is: quotes, backslashes, and every character outside YAML's printable
// set or that YAML reads as a line break.
func (e *emitter) quoted(s string) {
	const hex = "0123456789ABCDEF"
	e.buf.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			e.buf.WriteByte('\\')
			e.buf.WriteByte(byte(r))
		case r == '\n':
			e.buf.WriteString(`\n`)
		case r == '\t':
			e.buf.WriteString(`\t`)
		case r == '\r':
			e.buf.WriteString(`\r`)
		case r == utf8.RuneError && size == 1:
			e.buf.WriteString(`\uFFFD`)
		case !yamlPrintable(r) || r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xFEFF:
			if r <= 0xFFFF {
				e.buf.WriteString(`\u`)
				for shift := 12; shift >= 0; shift -= 4 {
					e.buf.WriteByte(hex[(r>>shift)&0xF])
				}
			} else {
				e.buf.WriteString(`\U`)
				for shift := 28; shift >= 0; shift -= 4 {
					e.buf.WriteByte(hex[(r>>shift)&0xF])
				}
			}
		default:
			e.buf.WriteString(s[i : i+size])
		}
		i += size
	}
	e.buf.WriteByte('"')
}

// yamlPrintable reports whether r is in YAML's printable set (which
// includes tab and the line breaks; those are handled apart).
func yamlPrintable(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0x7E || r == 0x85 ||
		r >= 0xA0 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD && r != 0xFEFF || r >= 0x10000 && r <= 0x10FFFF
}

// plainSafe reports whether s can be written as a plain scalar and read
// back as the same string: printable ASCII, not starting with an
// indicator, a digit or a sign (numbers, dates), without ": " or " #", and
// not a word YAML reads as a boolean or null.
func plainSafe(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' || s[len(s)-1] == ':' {
		return false
	}
	if strings.ContainsRune("-?:,[]{}#&*!|>'\"%@`<=~.+0123456789", rune(s[0])) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7E {
			return false
		}
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") {
		return false
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null":
		return false
	}
	return true
}

// literalSafe reports whether a text of several lines reads back the same
// from a literal block: printable, no carriage return (a block reads it
// as a line break), no spaces at the end of a line (kept, but invisible),
// and a first line that does not start with a space (the block's
// indentation is taken from it).
func literalSafe(s string) bool {
	if !strings.Contains(strings.TrimRight(s, "\n"), "\n") {
		return false
	}
	for _, r := range s {
		if r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r == utf8.RuneError || !yamlPrintable(r) {
			return false
		}
	}
	lines := strings.Split(s, "\n")
	for _, l := range lines {
		if strings.HasSuffix(l, " ") || strings.HasSuffix(l, "\t") {
			return false
		}
	}
	for _, l := range lines {
		if l != "" {
			return l[0] != ' ' && l[0] != '\t'
		}
	}
	return false
}
