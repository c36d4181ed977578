package store

// Run views. Every write of a run can also store a view of it: bytes that
// the layer above makes of the record, so that the daemon's most frequent
// read, GET /v1/runs/{id}, sends them without decoding the record (package
// daemon/runview makes the daemon's: the run's answer, encoded, with holes
// for the URLs that depend on the request). A backend neither makes nor
// reads them: Options.RunViews makes them, in the write of the record, so
// that a view is never older than its record; Runs.View hands them to a
// reader. When the way views are made changes (another Format), a backend's
// Open makes every stored view again.

import "errors"

// RunViews makes the views stored with runs.
type RunViews interface {
	// Format identifies how views are made: a backend's Open makes every
	// stored view again when the Format recorded with them differs.
	Format() ([]byte, error)
	// Encode makes the view of rec. An error leaves the run without a
	// view until its next write.
	Encode(rec *RunRecord) ([]byte, error)
}

// ErrNoRunView is View's answer for a run that exists but has no stored
// view: the store that wrote it last had no RunViews, or they could not
// make one of it.
var ErrNoRunView = errors.New("store: the run has no stored view")
