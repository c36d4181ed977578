package cmdutil

import "strings"

// Params reads the values of a repeatable --param key=value flag into the
// parameters of a run, all as strings: the service converts each to its
// parameter's declared type. No flag gives nil.
func Params(flags []string) (map[string]any, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := map[string]any{}
	for _, kv := range flags {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, UsageErrorf("--param %q: write key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}
