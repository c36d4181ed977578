package daemoncmd

import (
	"testing"
	"time"
)

// SetLockedWait makes the orgs commands wait d, until t ends, for a store
// that is locked without a daemon's state file.
func SetLockedWait(t testing.TB, d time.Duration) {
	saved := lockedWait
	lockedWait = d
	t.Cleanup(func() { lockedWait = saved })
}
