package script

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// minParamValue is the shortest parameter value that Templatize replaces
// inside a longer text: shorter ones ("1", "en") would turn unrelated text
// into references. A text equal to a value is replaced at any length.
const minParamValue = 3

// Templatize writes s with the run's parameter values replaced by
// references to them ({{ key }}), so that a replay with other parameters
// types, loads and expects what they say. params are the values as text
// (strings, and numbers as JSON writes them); a credential's placeholder
// (<secret:…>) is left as it is. A text that already holds "{{" is kept
// as a literal with its braces escaped.
func Templatize(s string, params map[string]string) string {
	if s == "" {
		return s
	}
	s = escapeBraces(s)
	keys := make([]string, 0, len(params))
	for k, v := range params {
		if v != "" && validKey(k) {
			keys = append(keys, k)
		}
	}
	// Longest values first, so that "New York City" wins over "York";
	// then by key, for the same output every time.
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(len(params[b]), len(params[a])); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, k := range keys {
		if escapeBraces(params[k]) == s {
			return ref(k)
		}
	}
	for _, k := range keys {
		v := escapeBraces(params[k])
		if len(v) < minParamValue || !strings.Contains(s, v) {
			continue
		}
		s = replaceOutsideRefs(s, v, ref(k))
	}
	return s
}

func ref(key string) string { return "{{ " + key + " }}" }

// validKey reports whether a parameter key can be referenced as a plain
// name in a template.
func validKey(k string) bool { return plainKey.MatchString(k) }

// escapeBraces keeps a literal "{{" from reading as a reference.
func escapeBraces(s string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	return strings.ReplaceAll(s, "{{", `{{ "{{" }}`)
}

// replaceOutsideRefs replaces old by new in s, except inside the
// references already written.
func replaceOutsideRefs(s, old, new string) string {
	var b strings.Builder
	for s != "" {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(strings.ReplaceAll(s, old, new))
			break
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			b.WriteString(strings.ReplaceAll(s, old, new))
			break
		}
		b.WriteString(strings.ReplaceAll(s[:i], old, new))
		b.WriteString(s[i : i+j+2])
		s = s[i+j+2:]
	}
	return b.String()
}

// ParamText is a parameter value as Templatize compares it: strings as
// they are, numbers and booleans as JSON writes them; "" for the others
// (objects, lists, null), which are not replaced.
func ParamText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64, bool, int, int64:
		return fmt.Sprint(x)
	}
	return ""
}
