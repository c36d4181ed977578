package store

// Group commit. Every write of the store goes through Store.update, which
// hands it to the committer: writes that arrive while a commit is being
// made (and fsynced) wait, and the next commit makes them all, in one
// bbolt transaction and one fsync. A write is acknowledged (update returns)
// only once the commit that holds it is durable; nothing is acknowledged
// early. An idle store commits a lone write at once: there is no delay to
// gather a group, the group is whatever arrived during the previous fsync.
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

type committer struct {
	db *bolt.DB

	mu      sync.Mutex
	queue   []*pendingWrite
	running bool // a goroutine is committing the queue
}

// write makes fn durable, in a group with the writes that arrive at the
// same time, and returns fn's error.
func (c *committer) write(fn func(*bolt.Tx) error) error {
	w := &pendingWrite{fn: fn, done: make(chan error, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, w)
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
		n := min(len(c.queue), maxGroup)
		if n == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		group := c.queue[:n:n]
		c.queue = c.queue[n:]
		if len(c.queue) == 0 {
			c.queue = nil // let the backing array go
		}
		c.mu.Unlock()
		c.commit(group)
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
