// Package text holds the engine's small string helpers: cutting a text to a
// budget, squashing it onto one line, and starting a reason with a capital.
package text

import "strings"

// Clip cuts s to n bytes (on a rune boundary), marking the cut with "…".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// OneLine squashes runs of white space, line breaks included, into one
// space.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// UpperFirst upper-cases the first byte of s, so that an error's text reads
// as a failure reason (the engine's texts start with an ASCII letter).
func UpperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
