package agentfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// A small JSON tree that keeps the order of object keys, which
// encoding/json's maps lose: normalized definitions keep the client's key
// order, and are written as YAML or JSON from it.

// jvalue is a JSON value that keeps the order of object keys.
type jvalue struct {
	kind  byte // 'z' null, 'b' bool, 'n' number, 's' string, 'a' array, 'o' object
	s     string
	b     bool
	items []*jvalue
	keys  []string
	vals  []*jvalue
}

func (v *jvalue) get(key string) *jvalue {
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// decodeOrdered reads JSON (valid: the client wrote it) into a tree that
// keeps the order of object keys. It scans the bytes directly, as
// encoding/json's token API costs several times more.
func decodeOrdered(data []byte) (*jvalue, error) {
	d := &jsonScanner{data: data}
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	if d.skipSpace(); d.i != len(d.data) {
		return nil, fmt.Errorf("agentfile: JSON has data after its value at byte %d", d.i)
	}
	return v, nil
}

type jsonScanner struct {
	data []byte
	i    int
}

func (d *jsonScanner) skipSpace() {
	for d.i < len(d.data) && (d.data[d.i] == ' ' || d.data[d.i] == '\n' || d.data[d.i] == '\t' || d.data[d.i] == '\r') {
		d.i++
	}
}

func (d *jsonScanner) fail() error {
	return fmt.Errorf("agentfile: unexpected JSON at byte %d", d.i)
}

func (d *jsonScanner) value() (*jvalue, error) {
	d.skipSpace()
	if d.i >= len(d.data) {
		return nil, d.fail()
	}
	switch c := d.data[d.i]; {
	case c == '{':
		d.i++
		v := &jvalue{kind: 'o'}
		for first := true; ; first = false {
			d.skipSpace()
			if d.i < len(d.data) && d.data[d.i] == '}' {
				d.i++
				return v, nil
			}
			if !first {
				if d.data[d.i] != ',' {
					return nil, d.fail()
				}
				d.i++
				d.skipSpace()
			}
			key, err := d.str()
			if err != nil {
				return nil, err
			}
			if d.skipSpace(); d.i >= len(d.data) || d.data[d.i] != ':' {
				return nil, d.fail()
			}
			d.i++
			val, err := d.value()
			if err != nil {
				return nil, err
			}
			v.keys = append(v.keys, key)
			v.vals = append(v.vals, val)
		}
	case c == '[':
		d.i++
		v := &jvalue{kind: 'a'}
		for first := true; ; first = false {
			d.skipSpace()
			if d.i < len(d.data) && d.data[d.i] == ']' {
				d.i++
				return v, nil
			}
			if !first {
				if d.i >= len(d.data) || d.data[d.i] != ',' {
					return nil, d.fail()
				}
				d.i++
			}
			item, err := d.value()
			if err != nil {
				return nil, err
			}
			v.items = append(v.items, item)
		}
	case c == '"':
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		return &jvalue{kind: 's', s: s}, nil
	case c == 't' && bytes.HasPrefix(d.data[d.i:], []byte("true")):
		d.i += 4
		return &jvalue{kind: 'b', b: true}, nil
	case c == 'f' && bytes.HasPrefix(d.data[d.i:], []byte("false")):
		d.i += 5
		return &jvalue{kind: 'b'}, nil
	case c == 'n' && bytes.HasPrefix(d.data[d.i:], []byte("null")):
		d.i += 4
		return &jvalue{kind: 'z'}, nil
	case c == '-' || c >= '0' && c <= '9':
		start := d.i
		for d.i < len(d.data) && strings.IndexByte("+-.eE0123456789", d.data[d.i]) >= 0 {
			d.i++
		}
		return &jvalue{kind: 'n', s: string(d.data[start:d.i])}, nil
	}
	return nil, d.fail()
}

// str reads a string; one with escapes is decoded by encoding/json.
func (d *jsonScanner) str() (string, error) {
	if d.i >= len(d.data) || d.data[d.i] != '"' {
		return "", d.fail()
	}
	start, escaped := d.i, false
	for d.i++; d.i < len(d.data); d.i++ {
		switch d.data[d.i] {
		case '\\':
			escaped = true
			d.i++
		case '"':
			d.i++
			if !escaped {
				return string(d.data[start+1 : d.i-1]), nil
			}
			var s string
			if err := json.Unmarshal(d.data[start:d.i], &s); err != nil {
				return "", err
			}
			return s, nil
		}
	}
	return "", d.fail()
}

// canonical returns user data with object keys sorted and numbers in one
// spelling.
func canonical(v *jvalue) *jvalue {
	switch v.kind {
	case 'n':
		return &jvalue{kind: 'n', s: canonicalNumber(v.s)}
	case 'a':
		out := &jvalue{kind: 'a', items: make([]*jvalue, len(v.items))}
		for i, it := range v.items {
			out.items[i] = canonical(it)
		}
		return out
	case 'o':
		out := &jvalue{kind: 'o', keys: append([]string(nil), v.keys...), vals: make([]*jvalue, len(v.vals))}
		for i, it := range v.vals {
			out.vals[i] = canonical(it)
		}
		return sortKeys(out)
	}
	return v
}

// canonicalNumber writes a number one way: integers as they are, other
// numbers as the shortest text of their float64 value (1.0 is 1, 1e-05 and
// 0.00001 are the same).
func canonicalNumber(s string) string {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func sortKeys(v *jvalue) *jvalue {
	idx := make([]int, len(v.keys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v.keys[idx[a]] < v.keys[idx[b]] })
	keys := make([]string, len(idx))
	vals := make([]*jvalue, len(idx))
	for i, j := range idx {
		keys[i], vals[i] = v.keys[j], v.vals[j]
	}
	v.keys, v.vals = keys, vals
	return v
}

// jsonText is the compact JSON of a scalar, for comparing with defaults.
func jsonText(v *jvalue) string {
	switch v.kind {
	case 's':
		b, _ := json.Marshal(v.s)
		return string(b)
	case 'n':
		return v.s
	case 'b':
		return strconv.FormatBool(v.b)
	case 'z':
		return "null"
	}
	return ""
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v *jvalue, indent string) {
	var write func(v *jvalue, prefix string)
	write = func(v *jvalue, prefix string) {
		switch v.kind {
		case 'a':
			if len(v.items) == 0 {
				io.WriteString(w, "[]")
				return
			}
			io.WriteString(w, "[\n")
			for i, it := range v.items {
				io.WriteString(w, prefix+indent)
				write(it, prefix+indent)
				if i < len(v.items)-1 {
					io.WriteString(w, ",")
				}
				io.WriteString(w, "\n")
			}
			io.WriteString(w, prefix+"]")
		case 'o':
			if len(v.keys) == 0 {
				io.WriteString(w, "{}")
				return
			}
			io.WriteString(w, "{\n")
			for i, k := range v.keys {
				io.WriteString(w, prefix+indent)
				var buf bytes.Buffer
				appendJSONString(&buf, k)
				w.Write(buf.Bytes())
				io.WriteString(w, ": ")
				write(v.vals[i], prefix+indent)
				if i < len(v.keys)-1 {
					io.WriteString(w, ",")
				}
				io.WriteString(w, "\n")
			}
			io.WriteString(w, prefix+"}")
		case 's':
			var buf bytes.Buffer
			appendJSONString(&buf, v.s)
			w.Write(buf.Bytes())
		default:
			io.WriteString(w, jsonText(v))
		}
	}
	write(v, "")
	io.WriteString(w, "\n")
}
