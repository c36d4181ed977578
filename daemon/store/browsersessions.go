package store

import ()

// The statuses of a browser session.
const (
	SessionRunning        = "running"
	SessionClosed         = "closed"
	SessionTimedOut       = "timed_out"
	SessionEndedByRestart = "ended_by_restart"
)
