package client

import "iter"

// allPageSize is the page size the All methods ask for when the caller's
// options leave it zero: fewer round trips than the server default.
const allPageSize = 100

// listOptions are the options of a page-numbered list: a pointer to a
// List...Options struct, which says where its Page and PageSize fields are.
type listOptions[O any] interface {
	*O
	pageFields() (page, pageSize *int)
}

// paginate walks a page-numbered list, for the All methods of the
// services. list requests one page with the options it is given: a copy
// of *o (nil means the zero options), so that the caller's stay as they
// were. paginate starts at page 1 unless the caller chose another, asks
// for allPageSize items a page unless the caller chose a size, moves to
// the next page after each full page, and stops after the first error or
// a page shorter than the page size, which is how the end shows in an API
// without cursors.
func paginate[O any, P listOptions[O], T any](o *O, list func(*O) ([]T, error)) iter.Seq2[T, error] {
	var opts O
	if o != nil {
		opts = *o
	}
	page, pageSize := P(&opts).pageFields()
	return func(yield func(T, error) bool) {
		if *page < 1 {
			*page = 1
		}
		if *pageSize < 1 {
			*pageSize = allPageSize
		}
		for {
			items, err := list(&opts)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if len(items) < *pageSize {
				return
			}
			*page++
		}
	}
}
