package boltstore

import "github.com/abctl/abctl/daemon/store"

// notFound is the error of a lookup by id that found nothing.
func notFound(r store.Record, id string) error { return &store.NotFoundError{Record: r, ID: id} }

// lockedError is Open's error when another process holds the file: it
// matches store.ErrLocked and bbolt's timeout, and its message reads well
// on its own.
type lockedError struct {
	cause error
	msg   string
}

func (e *lockedError) Error() string { return e.msg }

func (e *lockedError) Unwrap() []error { return []error{store.ErrLocked, e.cause} }
