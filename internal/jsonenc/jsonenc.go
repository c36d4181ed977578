// Package jsonenc encodes JSON the way the daemon writes its answers and
// stores its records: compact, with text kept as its own UTF-8 bytes.
// encoding/json's Marshal escapes <, > and & for embedding in HTML; an API
// answer is not HTML, and a record whose bytes change on the way in would
// not read back as it was written.
package jsonenc

import (
	"bytes"
	"encoding/json"
)

// Marshal encodes v as json.Marshal does, except that <, > and & are
// written as they are, not as \u003c, \u003e and \u0026. The result has no
// trailing newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
