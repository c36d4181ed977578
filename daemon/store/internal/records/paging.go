package records

import "math"

// The lists that take a page and a page size (page from 1, 0 meaning 1;
// a size below 1 meaning 1) answer the same page on every backend, and
// never overflow on a page far past the end: (page-1)*size of two large
// numbers does not fit an int.

// Window returns the bounds of the page within n sorted items:
// items[start:end], empty (start == end == n) past the end.
func Window(n, page, size int) (start, end int) {
	page, size = max(page, 1), max(size, 1)
	if page-1 >= (n+size-1)/size { // at or past the first page after the last item
		return n, n
	}
	start = (page - 1) * size
	return start, start + min(size, n-start)
}

// Offset returns the page as SQL's OFFSET and LIMIT; ok is false for a
// page beyond any row an int64 offset can reach (the page is empty).
func Offset(page, size int) (offset, limit int64, ok bool) {
	p, n := int64(max(page, 1)), int64(max(size, 1))
	if p-1 > math.MaxInt64/n {
		return 0, 0, false
	}
	return (p - 1) * n, n, true
}
