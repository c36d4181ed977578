package client

import "iter"

// paginate walks a page-numbered list, for the All methods of the
// services. fetch requests one page: number *page of *pageSize items, read
// from the options that page and pageSize point into. paginate starts at
// page 1 unless the caller chose another, sets *pageSize to defaultSize
// when the caller left it zero (fewer round trips than the server
// default), moves *page on after each full page, and stops after the
// first error or a page shorter than the page size, which is how the end
// shows in an API without cursors.
func paginate[T any](page, pageSize *int, defaultSize int, fetch func() ([]T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		if *page < 1 {
			*page = 1
		}
		if *pageSize < 1 {
			*pageSize = defaultSize
		}
		for {
			items, err := fetch()
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
