package python

import (
	"bytes"
	"strings"
)

// CodeOnly returns src with its comments and the contents of its
// string literals blanked (newlines kept), so that names are looked for in
// code only.
func CodeOnly(src string) string {
	b := []byte(src)
	out := make([]byte, len(b))
	copy(out, b)
	blank := func(from, to int) {
		for k := from; k < to && k < len(out); k++ {
			if out[k] != '\n' {
				out[k] = ' '
			}
		}
	}
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '#':
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				j = len(b) - i
			}
			blank(i, i+j)
			i += j
		case c == '\'' || c == '"':
			quote := string(c)
			if i+2 < len(b) && b[i+1] == c && b[i+2] == c {
				quote = strings.Repeat(quote, 3)
			}
			j := i + len(quote)
			for j < len(b) {
				if b[j] == '\\' {
					j += 2
					continue
				}
				if strings.HasPrefix(string(b[j:]), quote) {
					break
				}
				if len(quote) == 1 && b[j] == '\n' {
					break // an unterminated literal: Python's error
				}
				j++
			}
			blank(i+len(quote), min(j, len(b)))
			i = min(j+len(quote), len(b))
		default:
			i++
		}
	}
	return string(out)
}
