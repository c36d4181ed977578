package runner

import "sync"

// behind writes a run's progress records (its start, steps, screenshots
// and block executions) behind the run, in the order they were reported,
// on a goroutine of its own: the run goes on with its browser while they
// are made durable, rather than holding its place on the browser for an
// fsync at each. Nothing is acknowledged by them (they are for people
// watching the run), and the run's end is recorded only after all of them
// (wait), so the run as the API answers it once it ended holds every one.
type behind struct {
	mu      sync.Mutex
	queue   []func()
	running bool          // a goroutine is writing the queue
	idle    chan struct{} // closed when the queue empties; nil while none waits
}

// do queues write; it never waits for the store.
func (b *behind) do(write func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queue = append(b.queue, write)
	if !b.running {
		b.running = true
		go b.drain()
	}
}

// drain writes the queue until it is empty.
func (b *behind) drain() {
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.running = false
			if b.idle != nil {
				close(b.idle)
				b.idle = nil
			}
			b.mu.Unlock()
			return
		}
		write := b.queue[0]
		b.queue[0] = nil
		b.queue = b.queue[1:]
		b.mu.Unlock()
		write()
	}
}

// wait returns once every write queued before the call is made.
func (b *behind) wait() {
	b.mu.Lock()
	if !b.running {
		b.mu.Unlock()
		return
	}
	if b.idle == nil {
		b.idle = make(chan struct{})
	}
	idle := b.idle
	b.mu.Unlock()
	<-idle
}
