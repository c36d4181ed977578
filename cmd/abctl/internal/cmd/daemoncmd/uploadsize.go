package daemoncmd

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is the value of --max-upload-size: a number of bytes, written
// as a plain number or with a unit (KB, MB, GB are powers of 1000; KiB,
// MiB, GiB and the bare K, M, G are powers of 1024). 0 leaves the daemon's
// default.
type byteSize int64

// sizeUnits are the units a byteSize accepts, longest first so that "MiB"
// is not read as "B".
var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30},
	{"B", 1},
}

func (b *byteSize) String() string {
	if *b == 0 {
		return ""
	}
	for _, u := range []struct {
		suffix string
		factor int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if int64(*b)%u.factor == 0 {
			return strconv.FormatInt(int64(*b)/u.factor, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(*b), 10)
}

func (b *byteSize) Set(s string) error {
	text := strings.TrimSpace(s)
	factor := int64(1)
	for _, u := range sizeUnits {
		if n := len(text) - len(u.suffix); n > 0 && strings.EqualFold(text[n:], u.suffix) {
			text, factor = strings.TrimSpace(text[:n]), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < 0 || (factor > 1 && n > (1<<62)/factor) {
		return fmt.Errorf("%q is not a size: write a number of bytes, such as 104857600, or one with a unit, such as 100MiB or 2GB", s)
	}
	*b = byteSize(n * factor)
	return nil
}

func (b *byteSize) Type() string { return "size" }
