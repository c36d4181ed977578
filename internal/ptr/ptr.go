// Package ptr reads optional values: the fields the API's wire types keep
// as pointers, nil when the JSON had null or nothing. To make such a
// pointer, write new(v).
package ptr

// Value returns what p points to, or the zero value of T when p is nil.
func Value[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
