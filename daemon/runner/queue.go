package runner

import (
	"slices"

	"github.com/abctl/abctl/daemon/store"
)

// runQueue holds the runs waiting for a worker: first in, first out within
// an organization and round-robin across organizations, so that one
// organization submitting a thousand runs does not starve another's single
// run. It is not safe for concurrent use: the Runner's mu guards it.
type runQueue struct {
	queues map[string][]string // organization id -> run ids, oldest first
	orgs   []string            // organizations with queued runs, in round-robin order
	next   int                 // index in orgs of the next organization served
}

// push adds a run at the end of its organization's queue.
func (q *runQueue) push(orgID, runID string) {
	if q.queues == nil {
		q.queues = map[string][]string{}
	}
	runs, had := q.queues[orgID]
	q.queues[orgID] = append(runs, runID)
	if !had {
		q.orgs = append(q.orgs, orgID)
	}
}

// pop removes the oldest run of the organization whose turn it is, and
// passes the turn on; ok is false when no run is queued.
func (q *runQueue) pop() (ref store.RunRef, ok bool) {
	if len(q.orgs) == 0 {
		return ref, false
	}
	if q.next >= len(q.orgs) {
		q.next = 0
	}
	org := q.orgs[q.next]
	runs := q.queues[org]
	ref = store.RunRef{OrgID: org, RunID: runs[0]}
	if len(runs) == 1 {
		delete(q.queues, org)
		q.orgs = slices.Delete(q.orgs, q.next, q.next+1)
	} else {
		q.queues[org] = runs[1:]
		q.next++
	}
	return ref, true
}

// remove takes a run out of the queue, if it is there, keeping the turn
// of the organization that has it, and reports whether it was there.
func (q *runQueue) remove(orgID, runID string) bool {
	runs, ok := q.queues[orgID]
	if !ok {
		return false
	}
	i := slices.Index(runs, runID)
	if i < 0 {
		return false
	}
	runs = slices.Delete(runs, i, i+1)
	if len(runs) > 0 {
		q.queues[orgID] = runs
		return true
	}
	delete(q.queues, orgID)
	j := slices.Index(q.orgs, orgID)
	q.orgs = slices.Delete(q.orgs, j, j+1)
	if j < q.next {
		q.next-- // keep the turn of the organization that had it
	}
	return true
}

// len returns how many organizations have queued runs.
func (q *runQueue) len() int { return len(q.orgs) }

// wakeup holds a token when the queue may have work for a waiting worker.
type wakeup chan struct{}

// signal wakes a waiting worker, or leaves the token for the next one to
// wait.
func (w wakeup) signal() {
	select {
	case w <- struct{}{}:
	default:
	}
}
