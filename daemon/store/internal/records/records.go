// Package records holds the documents both store backends keep, byte for
// byte the same, and the pure rules on them; no database. The bbolt store
// (daemon/store/boltstore) and the PostgreSQL store (daemon/store/pgstore)
// both store these types as JSON and both call these functions, so that a
// rule (a default, a validation, the result a record answers, the order of
// ids) exists once and the two backends cannot drift apart. Values that the
// store's callers see stay in package store.
package records

import (
	"encoding/json"
	"fmt"

	"github.com/abctl/abctl/daemon/store"
)

// ValidID reports whether id can name a record: not empty, at most 512
// bytes, and without a NUL byte (ids the store makes are printable ASCII;
// a NUL byte would break bbolt's composite keys and cannot be a PostgreSQL
// text parameter). Ids that fail it name nothing.
func ValidID(id string) bool {
	if id == "" || len(id) > 512 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] == 0 {
			return false
		}
	}
	return true
}

// Decode decodes the stored document of record r id into a new T.
func Decode[T any](doc []byte, r store.Record, id string) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(doc, v); err != nil {
		return nil, fmt.Errorf("store: %s %s: %w", r, id, err)
	}
	return v, nil
}

// Encode encodes v, the record stored under key, as both backends store
// it (encoding/json).
func Encode[K ~string | ~[]byte](key K, v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("store: encode %s: %w", key, err)
	}
	return data, nil
}
