package totp

import (
	"regexp"
	"strings"
)

var (
	wholeCode = regexp.MustCompile(`^[0-9]{4,10}$`)
	sixDigits = regexp.MustCompile(`(?:^|[^0-9])([0-9]{6})(?:[^0-9]|$)`)
	someCode  = regexp.MustCompile(`(?:^|[^0-9])([0-9]{4,8})(?:[^0-9]|$)`)
	aLink     = regexp.MustCompile(`https?://[^\s"'<>]+`)
)

// FindCode finds the one-time code in a message (an e-mail, a text, what a
// verification endpoint answered): the whole message when it is a code of
// 4 to 10 digits; else its first six-digit number, else its first number
// of 4 to 8 digits; else its first link, a sign-in link (link is then
// true). ok is false when the message holds none of these.
func FindCode(message string) (code string, link bool, ok bool) {
	c := strings.TrimSpace(message)
	if wholeCode.MatchString(c) {
		return c, false, true
	}
	if m := sixDigits.FindStringSubmatch(c); m != nil {
		return m[1], false, true
	}
	if m := someCode.FindStringSubmatch(c); m != nil {
		return m[1], false, true
	}
	if m := aLink.FindString(c); m != "" {
		return m, true, true
	}
	return "", false, false
}
