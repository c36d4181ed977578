package ids

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable clock for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func number(t *testing.T, id, prefix string) int64 {
	t.Helper()
	if !strings.HasPrefix(id, prefix+"_") {
		t.Fatalf("id %q lacks prefix %q", id, prefix+"_")
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(id, prefix+"_"), 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", id, err)
	}
	return n
}

func TestLayout(t *testing.T) {
	at := time.Date(2026, 1, 31, 15, 20, 42, 0, time.UTC)
	c := &clock{t: at}
	g := NewWithClock(0x1ABCDE, c.now)
	n := number(t, g.Next(PrefixWorkflowRun), PrefixWorkflowRun)
	if got, want := n>>32, at.Unix()-Epoch; got != want {
		t.Errorf("seconds = %d, want %d", got, want)
	}
	if got := n >> 11 & (1<<21 - 1); got != 0x1ABCDE {
		t.Errorf("worker = %#x, want 0x1abcde", got)
	}
	if got := n >> 1 & 1023; got != 0 {
		t.Errorf("sequence = %d, want 0", got)
	}
	if n&1 != 0 {
		t.Errorf("version bit set in %d", n)
	}
	n2 := number(t, g.Next(PrefixTask), PrefixTask)
	if got := n2 >> 1 & 1023; got != 1 {
		t.Errorf("second id's sequence = %d, want 1", got)
	}
	if !Time(n).Equal(at) {
		t.Errorf("Time = %v, want %v", Time(n), at)
	}
	// Today's ids have 18 digits, like the hosted service's.
	if d := len(strconv.FormatInt(n, 10)); d != 18 {
		t.Errorf("id %d has %d digits, want 18", n, d)
	}
}

func TestWorkerMasked(t *testing.T) {
	g := New(0xFFFFFFFF)
	if g.Worker() != 1<<21-1 {
		t.Fatalf("Worker = %#x, want the low 21 bits", g.Worker())
	}
	n := number(t, g.Next(PrefixFolder), PrefixFolder)
	if n < 0 {
		t.Fatalf("negative id %d", n)
	}
	if got := n >> 11 & (1<<21 - 1); got != 1<<21-1 {
		t.Errorf("worker = %#x", got)
	}
	if n>>32 <= 0 {
		t.Errorf("worker bits leaked into the seconds: %d", n>>32)
	}
}

func TestPrefixes(t *testing.T) {
	g := New(7)
	for _, p := range []string{PrefixAgent, PrefixAgentVersion, PrefixFolder, PrefixOrganization,
		PrefixWorkflowParameter, PrefixOutputParameter, PrefixWorkflowRun, PrefixTask, PrefixTaskV2} {
		id := g.Next(p)
		prefix, n, ok := Parse(id)
		if !ok || prefix != p || n <= 0 {
			t.Errorf("Parse(%q) = %q, %d, %v", id, prefix, n, ok)
		}
	}
	for _, bad := range []string{"", "wr", "wr_", "_12", "wr_12a", "wr_-1", "wpid_" + strings.Repeat("a", 64), "wr_99999999999999999999"} {
		if _, _, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) ok", bad)
		}
	}
}

// TestSequenceExhaustion uses up a second without the clock moving: the
// generator borrows the next second and stays monotonic, then resumes
// from the borrowed second until the real clock passes it.
func TestSequenceExhaustion(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	c := &clock{t: start}
	g := NewWithClock(3, c.now)
	base := start.Unix() - Epoch
	var last int64 = -1
	for i := 0; i < 3*1024+5; i++ {
		n := g.NextInt()
		if n <= last {
			t.Fatalf("id %d: %d not above %d", i, n, last)
		}
		last = n
		if want := base + int64(i/1024); n>>32 != want {
			t.Fatalf("id %d: second %d, want %d", i, n>>32, want)
		}
		if want := int64(i % 1024); n>>1&1023 != want {
			t.Fatalf("id %d: sequence %d, want %d", i, n>>1&1023, want)
		}
	}
	// The real clock reaches the second that was borrowed (base+3): the
	// generator keeps counting there instead of starting that second over.
	c.set(start.Add(3 * time.Second))
	n := g.NextInt()
	if n <= last || n>>32 != base+3 {
		t.Fatalf("after catching up: %d (second %d), last %d", n, n>>32, last)
	}
	last = n
	// Once the clock is ahead, the sequence restarts at 0.
	c.set(start.Add(10 * time.Second))
	n = g.NextInt()
	if n <= last || n>>32 != base+10 || n>>1&1023 != 0 {
		t.Fatalf("new second: %d", n)
	}
}

func TestClockBackwards(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	c := &clock{t: start}
	g := NewWithClock(3, c.now)
	a := g.NextInt()
	c.set(start.Add(-time.Hour))
	b := g.NextInt()
	if b <= a {
		t.Fatalf("clock stepped back: %d after %d", b, a)
	}
	// A clock before the epoch does not make negative ids.
	g2 := NewWithClock(1, func() time.Time { return time.Unix(0, 0) })
	if n := g2.NextInt(); n < 0 || n>>32 != 0 {
		t.Fatalf("pre-epoch clock: %d", n)
	}
}

func TestConcurrentUnique(t *testing.T) {
	c := &clock{t: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	g := NewWithClock(9, c.now)
	const workers, each = 8, 1000 // 8000 ids in one frozen second: borrows seconds
	out := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				out[w] = append(out[w], g.NextInt())
			}
		}()
	}
	wg.Wait()
	seen := make(map[int64]bool, workers*each)
	for _, ns := range out {
		for i, n := range ns {
			if seen[n] {
				t.Fatalf("duplicate id %d", n)
			}
			seen[n] = true
			if i > 0 && n <= ns[i-1] {
				t.Fatalf("not monotonic within a goroutine: %d after %d", n, ns[i-1])
			}
		}
	}
}

func BenchmarkNext(b *testing.B) {
	g := New(1)
	for b.Loop() {
		_ = g.Next(PrefixWorkflowRun)
	}
}
