package boltstore

// Group commit. Every write of the store goes through Store.update, which
// hands it to the committer: writes that arrive while a commit is being
// made (and fsynced) wait, and the next commit makes them all, in one
// bbolt transaction and one fsync. A write is acknowledged (update returns)
// only once the commit that holds it is durable; nothing is acknowledged
// early.
//
// An idle store commits a lone write at once. Under concurrent writes a
// commit gathers first: the writers of the last groups are answered
// together, come back together a moment later (the time to read, decode
// and encode their next request), and without gathering the first of them
// back would be committed alone, paying a whole fsync, while the others
// pile up behind it. So when the queue holds fewer writes than the recent
// groups did, the committer waits for them, until as many are queued or
// gatherDelay has passed, whichever comes first. A lone writer (recent
// groups of one) never waits, nor does a queue that holds enough; a lone
// write just after a burst waits at most gatherDelay, for the few commits
// it takes the recent size to decay to one. Durability is unchanged: the
// wait comes before the commit, and every write is still answered only
// once its commit is on disk.
//
// The write functions of a group run one after another in the same
// transaction, so each sees the ones before it, and a check and the write
// it guards (the idempotent agent create) stay atomic. A function that
// fails (or panics) would leave its partial writes in the shared
// transaction, so the group is rolled back and made again without it, and
// the failed function is run alone, in its own transaction, by its caller:
// its error (or its panic) is then its own, as if there were no group. A
// write function may therefore run more than once, and must change nothing
// but the transaction and the variables it sets afresh on each run.

import (
	"errors"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// maxGroup bounds the writes of one commit, so that one transaction does
// not grow without end under a flood of writes.
const maxGroup = 1000

// errAlone tells a caller that its write failed in a group and must run
// alone.
var errAlone = errors.New("store: run this write alone")

type pendingWrite struct {
	fn   func(*bolt.Tx) error
	done chan error // buffered: the committer never waits on a caller
}

// gatherDelay bounds how long a commit waits for the writers of the
// recent groups to come back: bench/ceiling's group commit (db.Batch)
// waits up to its MaxBatchDelay of 1 ms for every batch, idle or not.
const gatherDelay = time.Millisecond

type committer struct {
	db *bolt.DB

	mu      sync.Mutex
	queue   []*pendingWrite
	running bool // a goroutine is committing the queue
	// recent is the size of the recent groups: the largest of the last
	// ones, decaying, so that a burst's writers are waited for while they
	// write and not long after.
	recent int
	// full is signalled (when gathering is true) once the queue holds
	// recent writes.
	gathering bool
	full      chan struct{}
	// commits and writes count the commits made and the writes they held
	// (CommitStats).
	commits, writes uint64
}

// write makes fn durable, in a group with the writes that arrive at the
// same time, and returns fn's error.
func (c *committer) write(fn func(*bolt.Tx) error) error {
	w := &pendingWrite{fn: fn, done: make(chan error, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, w)
	if c.gathering && len(c.queue) >= c.recent {
		c.gathering = false
		c.full <- struct{}{} // buffered, and drained before gathering again
	}
	if !c.running {
		c.running = true
		go c.loop()
	}
	c.mu.Unlock()
	err := <-w.done
	if err == errAlone {
		return c.db.Update(fn)
	}
	return err
}

// loop commits the queue, a group at a time, until it is empty.
func (c *committer) loop() {
	for {
		c.mu.Lock()
		if n := len(c.queue); n > 0 && n < c.recent {
			c.gather()
		}
		n := min(len(c.queue), maxGroup)
		if n == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		// The recent size: this group's, or the last one's decayed by a
		// quarter (rounding down, so that it reaches 1).
		c.recent = max(n, c.recent-c.recent/4-1)
		c.commits++
		c.writes += uint64(n)
		group := c.queue[:n:n]
		c.queue = c.queue[n:]
		if len(c.queue) == 0 {
			c.queue = nil // let the backing array go
		}
		c.mu.Unlock()
		c.commit(group)
	}
}

// gather waits, with c.mu held on entry and on return, until the queue
// holds c.recent writes or gatherDelay has passed.
func (c *committer) gather() {
	if c.full == nil {
		c.full = make(chan struct{}, 1)
	}
	c.gathering = true
	c.mu.Unlock()
	t := time.NewTimer(gatherDelay)
	select {
	case <-c.full:
	case <-t.C:
	}
	t.Stop()
	c.mu.Lock()
	c.gathering = false
	select {
	case <-c.full: // sent after the timer fired
	default:
	}
}

// commit makes one group durable: all its writes in one transaction, or,
// when one fails, the others again without it, the failed one sent back
// to run alone.
func (c *committer) commit(group []*pendingWrite) {
	for len(group) > 0 {
		failed := -1
		err := c.db.Update(func(tx *bolt.Tx) error {
			for i, w := range group {
				if err := callSafely(w.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if failed >= 0 {
			group[failed].done <- errAlone
			group = append(group[:failed:failed], group[failed+1:]...)
			continue
		}
		// The commit (or its fsync) failed, or all went in: every write
		// of the group has that outcome.
		for _, w := range group {
			w.done <- err
		}
		return
	}
}

// callSafely calls fn, turning a panic into an error, so that one bad write
// does not stop the committer; its caller runs it again alone, where the
// panic is its own.
func callSafely(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("store: a write panicked: %v", p)
		}
	}()
	return fn(tx)
}

// CommitStats returns how many commits the store has made since it opened
// and how many writes they held: writes ÷ commits is the mean group, what
// group commit gains (benchmarks report it).
func (s *Store) CommitStats() (commits, writes uint64) {
	c := s.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commits, c.writes
}
