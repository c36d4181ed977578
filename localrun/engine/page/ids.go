package page

import (
	"fmt"
	"strings"
)

// Element ids are written with consonants only, at least two of them
// ("bb", "bc", ..., "zz", then "bbb"): a model reads a page and its element
// list together, and an id with digits ("e430") was taken for the item
// numbered 430 on the page. Without digits an id cannot be read as a
// number of the page, and without vowels (y is left out too) it is not a
// word of any language a page is likely to be in; a one-letter id would be
// too easily read as a checkbox mark ("[x]") or an initial. Two letters
// name 400 elements, three 8,000 more: ids stay short for the prompt's
// budget (about as many tokens as "e430"). The letters encode the Page's
// counter, which is never reset, so that decoding an id tells an id of an
// earlier page from one that was never issued.
const idAlphabet = "bcdfghjklmnpqrstvwxz"

// minIDLetters is the length of the shortest ids.
const minIDLetters = 2

// encodeID returns the id of element number n (n >= 1).
func encodeID(n uint64) string {
	k := uint64(len(idAlphabet))
	i := n - 1
	length := minIDLetters
	span := pow(k, length)
	for i >= span {
		i -= span
		length++
		span = pow(k, length)
	}
	b := make([]byte, length)
	for j := length - 1; j >= 0; j-- {
		b[j] = idAlphabet[i%k]
		i /= k
	}
	return string(b)
}

// decodeID returns the element number of an id, false when id is not of
// the form encodeID writes.
func decodeID(id string) (uint64, bool) {
	if len(id) < minIDLetters || len(id) > 12 {
		return 0, false
	}
	k := uint64(len(idAlphabet))
	var n, base uint64
	for length := minIDLetters; length < len(id); length++ {
		base += pow(k, length)
	}
	for j := 0; j < len(id); j++ {
		d := strings.IndexByte(idAlphabet, id[j])
		if d < 0 {
			return 0, false
		}
		n = n*k + uint64(d)
	}
	return base + n + 1, true
}

func pow(k uint64, e int) uint64 {
	r := uint64(1)
	for ; e > 0; e-- {
		r *= k
	}
	return r
}

// CleanID returns an element id as a model or a user may write it, in the
// form the Page issues: without surrounding spaces, brackets or quotes
// ("[bq]", " bq ", "'bq'", "BQ", `[bq] button "Sign in"` all give "bq").
// It does not check that the id exists.
func CleanID(id string) string {
	id = strings.TrimSpace(id)
	// A whole element line copied from the list: `[bq] button "Sign in"`.
	if strings.HasPrefix(id, "[") {
		if i := strings.IndexByte(id, ']'); i > 0 {
			id = id[:i+1]
		}
	}
	for len(id) >= 2 {
		first, last := id[0], id[len(id)-1]
		if (first == '[' && last == ']') || (first == '"' && last == '"') || (first == '\'' && last == '\'') || (first == '`' && last == '`') {
			id = strings.TrimSpace(id[1 : len(id)-1])
			continue
		}
		break
	}
	// A lone bracket left over from "[bq" or "bq]".
	id = strings.TrimSpace(strings.Trim(id, "[]"))
	return strings.ToLower(id)
}

// oldFormID reports whether id has the form of the ids of earlier versions
// ("e12"), which a step log or a model copying one may still show.
func oldFormID(id string) bool {
	if len(id) < 2 || id[0] != 'e' {
		return false
	}
	for _, c := range id[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// idForm describes the id form for error messages.
func idForm() string {
	return fmt.Sprintf("element ids are %d or more of the letters %s, such as %s", minIDLetters, idAlphabet, encodeID(42))
}
