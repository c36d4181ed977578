// Package yamljson turns YAML, of which JSON is a subset, into JSON: for
// the inputs that may be written in either format and are then read as
// JSON (a definition sent as YAML, a file of run parameters).
//
// Agent files are not read this way: package agentfile walks their YAML
// nodes itself, to check every value against the schema with its line.
package yamljson

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"
)

// ToJSON returns the JSON of the first YAML document of data: null when
// there is none. Anchors, aliases and merge keys are resolved, and an
// unquoted date or time (2024-01-02) becomes an RFC 3339 time string, as
// yaml.v3 reads it as a time. A mapping with a key that is not a string
// is an error that says where the mapping is, as JSON objects have only
// string keys; so is a number JSON cannot hold (.nan, .inf).
func ToJSON(data []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	v, err := jsonValue(v, "")
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Decode returns the value of the first YAML document of data as
// encoding/json decodes its JSON (see ToJSON) into an any: objects as
// map[string]any, arrays as []any, numbers as float64.
func Decode(data []byte) (any, error) {
	b, err := ToJSON(data)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// jsonValue replaces, in what yaml.v3 decodes into an any, each mapping
// whose keys are not all strings by one keyed by strings, or reports the
// first key (in the order of the keys' text) that is not a string. path is
// where v is, for the message.
func jsonValue(v any, path string) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			e, err := jsonValue(t[k], join(path, k))
			if err != nil {
				return nil, err
			}
			t[k] = e
		}
		return t, nil
	case map[any]any:
		keys := slices.SortedFunc(maps.Keys(t), func(a, b any) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		out := make(map[string]any, len(t))
		for _, k := range keys {
			s, ok := k.(string)
			if !ok {
				if path == "" {
					return nil, fmt.Errorf("mapping key %v is not a string", k)
				}
				return nil, fmt.Errorf("at %s: mapping key %v is not a string", path, k)
			}
			e, err := jsonValue(t[k], join(path, s))
			if err != nil {
				return nil, err
			}
			out[s] = e
		}
		return out, nil
	case []any:
		for i, e := range t {
			e, err := jsonValue(e, path+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			t[i] = e
		}
		return t, nil
	}
	return v, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
