package webhook

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is the deepest nesting of arrays and objects Normalize accepts.
// It is the limit of encoding/json, so that Normalize accepts exactly the
// texts json.Valid accepts.
const maxDepth = 10000

// SyntaxError reports JSON text that Normalize cannot read. It is returned
// as a pointer, so callers can find the position with errors.As.
type SyntaxError struct {
	// Offset is the 0-based byte offset in the input of the byte that
	// made the text invalid, or the input length when the text ended early.
	Offset int64
	msg    string
}

// Error describes the problem and where it is.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("webhook: invalid JSON at byte offset %d: %s", e.Offset, e.msg)
}

// Normalize rewrites the JSON text raw into the bytes the hosted service
// signs, which are those of Python's json.dumps(v, separators=(",", ":"),
// ensure_ascii=False) after every float with an integral value has been
// turned into an int:
//
//   - no whitespace between tokens;
//   - object keys in the order given, never sorted; a repeated key is kept
//     as it is (Python would keep only the last value, at the first key's
//     position, but no sender produces repeated keys);
//   - strings in raw UTF-8, escaping only '"', '\' and the control
//     characters below U+0020 (as \n, \r, \t, \b, \f or lowercase \u00xx);
//     '/', '<', '>', '&', U+007F, U+2028 and U+2029 are written raw.
//     Invalid UTF-8 and unpaired surrogate escapes become U+FFFD, as they
//     do when encoding/json decodes the text;
//   - an integer literal is kept as written, except that -0 becomes 0;
//   - a number with a fraction or an exponent is read as a float64; an
//     integral value is written as the exact integer value of that float
//     (1e23 gives 99999999999999991611392), any other in Python's float
//     repr (0.1, 1e-05, 2.5e-07, 123456789.123). A literal too large for
//     a float64 (1e400) is kept as written: Python would write Infinity,
//     which is not JSON.
//
// Normalize accepts exactly the texts json.Valid accepts (any JSON value,
// surrounded by optional whitespace, nested at most 10000 deep) and returns
// a *SyntaxError for the others. Its output is a fixed point:
// Normalize(Normalize(x)) equals Normalize(x).
func Normalize(raw []byte) ([]byte, error) {
	return appendNormalized(make([]byte, 0, len(raw)+16), raw)
}

// Parser states of the scanner's loop.
const (
	stateValue      = iota // a value is expected
	stateKey               // an object key (or the end of an empty object) is expected
	stateAfterValue        // a value was just written
)

// appendNormalized appends the normalized form of src to dst. It is a single
// forward pass with an explicit stack, so nesting depth costs heap, not
// goroutine stack, and no intermediate tree is built.
func appendNormalized(dst, src []byte) ([]byte, error) {
	var stackBuf [64]byte
	stack := stackBuf[:0] // '{' or '[' per open container
	i := 0
	state := stateValue
	for {
		i = skipSpace(src, i)
		switch state {
		case stateValue:
			if i >= len(src) {
				return nil, errEOF(src)
			}
			c := src[i]
			switch {
			case c == '{' || c == '[':
				if len(stack) >= maxDepth {
					return nil, errAt(i, "exceeded maximum nesting depth of 10000")
				}
				stack = append(stack, c)
				dst = append(dst, c)
				i++
				if c == '{' {
					state = stateKey
					continue
				}
				if j := skipSpace(src, i); j < len(src) && src[j] == ']' {
					dst = append(dst, ']')
					stack = stack[:len(stack)-1]
					i = j + 1
					state = stateAfterValue
				}
				continue
			case c == '"':
				var err error
				if dst, i, err = appendString(dst, src, i); err != nil {
					return nil, err
				}
			case c == '-' || ('0' <= c && c <= '9'):
				var err error
				if dst, i, err = appendNumber(dst, src, i); err != nil {
					return nil, err
				}
			case c == 't':
				if i, dst = literal(src, i, "true", dst); i < 0 {
					return nil, errLiteral(src, -i-1)
				}
			case c == 'f':
				if i, dst = literal(src, i, "false", dst); i < 0 {
					return nil, errLiteral(src, -i-1)
				}
			case c == 'n':
				if i, dst = literal(src, i, "null", dst); i < 0 {
					return nil, errLiteral(src, -i-1)
				}
			default:
				return nil, errAt(i, "invalid character "+quoteChar(c)+" looking for beginning of value")
			}
			state = stateAfterValue

		case stateKey:
			// Only reached right after '{' or ','; an empty object is
			// allowed only in the first case, which the last byte of dst
			// tells.
			if i >= len(src) {
				return nil, errEOF(src)
			}
			c := src[i]
			if c == '}' && dst[len(dst)-1] == '{' {
				dst = append(dst, '}')
				stack = stack[:len(stack)-1]
				i++
				state = stateAfterValue
				continue
			}
			if c != '"' {
				return nil, errAt(i, "invalid character "+quoteChar(c)+" looking for beginning of object key string")
			}
			var err error
			if dst, i, err = appendString(dst, src, i); err != nil {
				return nil, err
			}
			i = skipSpace(src, i)
			if i >= len(src) {
				return nil, errEOF(src)
			}
			if src[i] != ':' {
				return nil, errAt(i, "invalid character "+quoteChar(src[i])+" after object key")
			}
			dst = append(dst, ':')
			i++
			state = stateValue

		case stateAfterValue:
			if len(stack) == 0 {
				if i < len(src) {
					return nil, errAt(i, "invalid character "+quoteChar(src[i])+" after top-level value")
				}
				return dst, nil
			}
			if i >= len(src) {
				return nil, errEOF(src)
			}
			c, top := src[i], stack[len(stack)-1]
			switch {
			case c == ',':
				dst = append(dst, ',')
				i++
				if top == '{' {
					state = stateKey
				} else {
					state = stateValue
				}
			case top == '{' && c == '}', top == '[' && c == ']':
				dst = append(dst, c)
				stack = stack[:len(stack)-1]
				i++
			case top == '{':
				return nil, errAt(i, "invalid character "+quoteChar(c)+" after object key:value pair")
			default:
				return nil, errAt(i, "invalid character "+quoteChar(c)+" after array element")
			}
		}
	}
}

func skipSpace(src []byte, i int) int {
	for i < len(src) {
		switch src[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// literal matches the keyword word at src[i:]. It returns the index after
// it, or -(offset of the first wrong byte)-1 on a mismatch.
func literal(src []byte, i int, word string, dst []byte) (int, []byte) {
	for k := 0; k < len(word); k++ {
		if i+k >= len(src) || src[i+k] != word[k] {
			return -(i + k) - 1, dst
		}
	}
	return i + len(word), append(dst, word...)
}

func errLiteral(src []byte, off int) error {
	if off >= len(src) {
		return errEOF(src)
	}
	return errAt(off, "invalid character "+quoteChar(src[off])+" in literal")
}

func errAt(off int, msg string) error {
	return &SyntaxError{Offset: int64(off), msg: msg}
}

func errEOF(src []byte) error {
	return &SyntaxError{Offset: int64(len(src)), msg: "unexpected end of JSON input"}
}

// quoteChar formats c for an error message, as encoding/json does.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

const hexDigits = "0123456789abcdef"

// appendString reads the string literal at src[i] (an opening quote),
// appends its normalized form to dst and returns the index after the
// closing quote. Runs of bytes that need no change are copied in one go.
func appendString(dst, src []byte, i int) ([]byte, int, error) {
	dst = append(dst, '"')
	i++
	run := i // start of the pending run of bytes copied unchanged
	for {
		if i >= len(src) {
			return nil, 0, errEOF(src)
		}
		c := src[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, src[run:i]...)
				dst = append(dst, "\uFFFD"...)
				i++
				run = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, src[run:i]...)
		switch c {
		case '"':
			return append(dst, '"'), i + 1, nil
		case '\\':
			var err error
			if dst, i, err = appendEscape(dst, src, i); err != nil {
				return nil, 0, err
			}
			run = i
		default: // a control character
			return nil, 0, errAt(i, "invalid character "+quoteChar(c)+" in string literal")
		}
	}
}

// appendEscape decodes the escape sequence at src[i] (a backslash), appends
// the character in its normalized spelling and returns the index after the
// sequence. Surrogates are paired the way encoding/json pairs them: a high
// surrogate escape followed by a low one gives one character, anything else
// gives U+FFFD and leaves the following escape to be read on its own.
func appendEscape(dst, src []byte, i int) ([]byte, int, error) {
	if i+1 >= len(src) {
		return nil, 0, errEOF(src)
	}
	switch c := src[i+1]; c {
	case '"':
		return append(dst, '\\', '"'), i + 2, nil
	case '\\':
		return append(dst, '\\', '\\'), i + 2, nil
	case '/':
		return append(dst, '/'), i + 2, nil
	case 'b', 'f', 'n', 'r', 't':
		return append(dst, '\\', c), i + 2, nil
	case 'u':
		// Handled below.
	default:
		return nil, 0, errAt(i+1, "invalid character "+quoteChar(c)+" in string escape code")
	}
	r, err := hex4(src, i+2)
	if err != nil {
		return nil, 0, err
	}
	i += 6
	if utf16.IsSurrogate(r) {
		r2 := rune(-1)
		if i+1 < len(src) && src[i] == '\\' && src[i+1] == 'u' {
			if v, err := hex4(src, i+2); err == nil {
				r2 = v
			}
		}
		if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
			r = pair
			i += 6
		} else {
			r = utf8.RuneError
		}
	}
	return appendRune(dst, r), i, nil
}

// hex4 reads the four hex digits of a \u escape starting at src[i].
func hex4(src []byte, i int) (rune, error) {
	var r rune
	for k := i; k < i+4; k++ {
		if k >= len(src) {
			return 0, errEOF(src)
		}
		c := src[k]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, errAt(k, "invalid character "+quoteChar(c)+" in \\u hexadecimal character escape")
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

// appendRune writes a character that came from an escape sequence in the
// spelling of Python's json.dumps with ensure_ascii=False.
func appendRune(dst []byte, r rune) []byte {
	switch r {
	case '"', '\\':
		return append(dst, '\\', byte(r))
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	if r < 0x20 {
		return append(dst, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xF])
	}
	return utf8.AppendRune(dst, r)
}

// appendNumber reads the number literal at src[i], checking the JSON
// grammar, appends its normalized form and returns the index after it.
func appendNumber(dst, src []byte, i int) ([]byte, int, error) {
	start := i
	if src[i] == '-' {
		i++
	}
	if i >= len(src) {
		return nil, 0, errEOF(src)
	}
	switch c := src[i]; {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		i = skipDigits(src, i+1)
	default:
		return nil, 0, errAt(i, "invalid character "+quoteChar(c)+" in numeric literal")
	}
	integer := true
	if i < len(src) && src[i] == '.' {
		integer = false
		i++
		if i >= len(src) {
			return nil, 0, errEOF(src)
		}
		if !isDigit(src[i]) {
			return nil, 0, errAt(i, "invalid character "+quoteChar(src[i])+" after decimal point in numeric literal")
		}
		i = skipDigits(src, i)
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		integer = false
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i >= len(src) {
			return nil, 0, errEOF(src)
		}
		if !isDigit(src[i]) {
			return nil, 0, errAt(i, "invalid character "+quoteChar(src[i])+" in exponent of numeric literal")
		}
		i = skipDigits(src, i)
	}
	lit := src[start:i]
	if integer {
		// Python reads an integer literal as an int of any size and writes
		// it back unchanged; only "-0" has another spelling.
		if len(lit) == 2 && lit[0] == '-' && lit[1] == '0' {
			return append(dst, '0'), i, nil
		}
		return append(dst, lit...), i, nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		// The grammar is checked, so this is a range error: the value
		// overflows to an infinity. Keep the literal (see Normalize).
		return append(dst, lit...), i, nil
	}
	return appendFloat(dst, f), i, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func skipDigits(src []byte, i int) int {
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	return i
}

// appendFloat writes the finite float f as the hosted service does: an
// integral value as the exact integer it holds, any other value in Python's
// repr.
func appendFloat(dst []byte, f float64) []byte {
	if f == math.Trunc(f) {
		return appendExactInt(dst, f)
	}
	return appendRepr(dst, f)
}

// appendExactInt writes the integral float f with all its digits. Python's
// int(f) is exact, so 1e23 becomes 99999999999999991611392, not the
// shortest decimal that reads back as the same float (1e+23), which is what
// strconv's shortest formatting would start from.
func appendExactInt(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // also for -0.0: int(-0.0) is 0
	}
	if math.Abs(f) < 1<<63 {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	n, _ := new(big.Float).SetFloat64(f).Int(nil)
	return n.Append(dst, 10)
}

// appendRepr writes the finite float f as Python's repr does: the shortest
// digits that read back as f (the same digits strconv chooses), in fixed
// notation when the decimal exponent e of d.ddd×10^e satisfies -4 <= e < 16,
// otherwise as d.ddde±XX with at least two exponent digits.
func appendRepr(dst []byte, f float64) []byte {
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // [-]d[.ddd]e±XX
	if b[0] == '-' {
		dst = append(dst, '-')
		b = b[1:]
	}
	mark := len(b) - 1
	for b[mark] != 'e' {
		mark--
	}
	exp, _ := strconv.Atoi(string(b[mark+1:]))
	if exp < -4 || exp >= 16 {
		// strconv's form already has Python's layout: "1e-05", "2.5e-07".
		return append(dst, b...)
	}
	var digits [24]byte
	nd := 0
	for _, c := range b[:mark] {
		if c != '.' {
			digits[nd] = c
			nd++
		}
	}
	if exp < 0 {
		dst = append(dst, '0', '.')
		for k := exp + 1; k < 0; k++ {
			dst = append(dst, '0')
		}
		return append(dst, digits[:nd]...)
	}
	if nd <= exp+1 {
		// An integral value; appendFloat does not send those here, but
		// repr would write 1e15 as 1000000000000000.0.
		dst = append(dst, digits[:nd]...)
		for k := nd; k < exp+1; k++ {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	}
	dst = append(dst, digits[:exp+1]...)
	dst = append(dst, '.')
	return append(dst, digits[exp+1:nd]...)
}
