package client

import (
	"bytes"
	"fmt"
	"time"
)

// Time is a timestamp as the API writes it: ISO 8601 in UTC without a zone
// suffix, with six digits of microseconds when they are not zero and none
// when they are (2026-01-31T15:20:42.160725, 2026-01-31T15:21:02).
//
// The hosted service stores naive UTC datetimes, so its responses carry no
// zone even though its documentation shows a trailing "Z". Go's time.Time
// refuses that form in JSON; Time reads it as UTC, and reads RFC 3339 (with
// "Z" or an offset) as well. It always writes the zone-less form, truncated
// to microseconds, because that is what receivers of the hosted service
// expect byte for byte.
type Time struct {
	time.Time
}

// wireLayout is the zone-less layout; Go's ".999999" fraction writes no
// digits for zero microseconds, but it also trims trailing zeros, so
// MarshalText formats the fraction itself.
const (
	wireSeconds = "2006-01-02T15:04:05"
	zonelessIn  = "2006-01-02T15:04:05.999999999"
)

// NewTime returns t as a Time in UTC, truncated to microseconds, the
// precision the API keeps.
func NewTime(t time.Time) Time {
	return Time{t.UTC().Truncate(time.Microsecond)}
}

// Now returns the current time as a Time.
func Now() Time { return NewTime(time.Now()) }

// TimePtr returns a pointer to NewTime(t), for the nullable timestamp fields.
func TimePtr(t time.Time) *Time {
	v := NewTime(t)
	return &v
}

// String returns the wire form.
func (t Time) String() string { return string(t.appendWire(nil)) }

func (t Time) appendWire(b []byte) []byte {
	u := t.Time.UTC()
	b = u.AppendFormat(b, wireSeconds)
	if us := u.Nanosecond() / 1000; us != 0 {
		b = fmt.Appendf(b, ".%06d", us)
	}
	return b
}

// MarshalText writes the zone-less wire form.
func (t Time) MarshalText() ([]byte, error) { return t.appendWire(nil), nil }

// MarshalJSON writes the zone-less wire form as a JSON string.
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 28)
	b = append(b, '"')
	b = t.appendWire(b)
	return append(b, '"'), nil
}

// UnmarshalText reads the zone-less form (as UTC) or RFC 3339.
func (t *Time) UnmarshalText(b []byte) error {
	parsed, err := ParseTime(string(b))
	if err != nil {
		return err
	}
	*t = parsed
	return nil
}

// UnmarshalJSON reads a JSON string in either accepted form; null leaves t
// unchanged, as encoding/json does for other types.
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("client: timestamp must be a JSON string, got %s", truncateForError(b))
	}
	return t.UnmarshalText(b[1 : len(b)-1])
}

// ParseTime parses a timestamp in the API's zone-less form (taken as UTC) or
// in RFC 3339. The result is in UTC.
func ParseTime(s string) (Time, error) {
	if hasZone(s) {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return Time{}, fmt.Errorf("client: invalid timestamp %q: want 2006-01-02T15:04:05[.ffffff] with an optional zone", s)
		}
		return Time{v.UTC()}, nil
	}
	v, err := time.ParseInLocation(zonelessIn, s, time.UTC)
	if err != nil {
		return Time{}, fmt.Errorf("client: invalid timestamp %q: want 2006-01-02T15:04:05[.ffffff] with an optional zone", s)
	}
	return Time{v}, nil
}

// hasZone reports whether s ends in "Z" or a numeric offset after the time.
func hasZone(s string) bool {
	if len(s) <= len(wireSeconds) {
		return false
	}
	if s[len(s)-1] == 'Z' || s[len(s)-1] == 'z' {
		return true
	}
	tail := s[len(wireSeconds):]
	for i := 0; i < len(tail); i++ {
		if tail[i] == '+' || tail[i] == '-' {
			return true
		}
	}
	return false
}

func truncateForError(b []byte) string {
	const max = 64
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
