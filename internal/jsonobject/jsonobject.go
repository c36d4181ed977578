// Package jsonobject edits JSON objects member by member while keeping the
// members' order and their values byte for byte, which encoding/json's maps
// cannot do. The client uses it to turn an unknown block of a response back
// into a request, and the daemon's store to do the reverse.
package jsonobject

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Member is one key of an object with its value as written.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Split returns the members of the JSON object raw, in order. It fails when
// raw is not one valid JSON object.
func Split(raw []byte) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("jsonobject: not a JSON object")
	}
	var out []Member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, Member{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	return out, nil
}

// Join writes members as one JSON object, in order. Values must be valid
// JSON (as Split returns them, or from json.Marshal).
func Join(members []Member) []byte {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key) // a string always encodes
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(m.Value)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}
