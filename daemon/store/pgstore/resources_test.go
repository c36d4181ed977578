package pgstore_test

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/pgstore"
	"github.com/abctl/abctl/localrun/executor"
)

// clock starts at a fixed time and moves 1ms at every reading, so that
// every record has its own time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 31, 15, 20, 42, 160725000, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

var testSecret = bytes.Repeat([]byte{5}, store.SecretSize)

// twoDaemons opens two stores on one new database with one secret and
// clock, as two daemons sharing it, and makes an organization.
func twoDaemons(t *testing.T) (a, b *pgstore.Store, org store.Organization) {
	t.Helper()
	url := newDatabase(t)
	c := newClock()
	a = open(t, url, store.Options{Secret: testSecret, Now: c.Now})
	b = open(t, url, store.Options{Secret: testSecret, Now: c.Now})
	org, _, err := a.CreateOrganization(t.Context(), "test")
	if err != nil {
		t.Fatal(err)
	}
	return a, b, org
}

func ptr[T any](v T) *T { return &v }

// TestTOTPCodeTakenOnceByTwoDaemons: daemons that take the codes of one
// identifier at the same time each get a different code, and every code
// goes to exactly one of them.
func TestTOTPCodeTakenOnceByTwoDaemons(t *testing.T) {
	a, b, org := twoDaemons(t)
	ctx := t.Context()
	created := time.Date(2026, 1, 31, 15, 0, 0, 0, time.UTC)
	const codes = 10
	for i := range codes {
		exp := client.NewTime(created.Add(24 * time.Hour))
		code := &client.TOTPCode{TOTPIdentifier: "shared", TOTPCodeID: fmt.Sprintf("totp_%02d", i), Code: fmt.Sprint(i),
			CreatedAt: client.NewTime(created.Add(time.Duration(i) * time.Second)), ExpiredAt: &exp}
		if err := a.Credentials().PutTOTPCode(ctx, org.ID, code); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for i := range 2 * codes {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, err := st.Credentials().TakeTOTPCode(ctx, org.ID, "shared", executor.CodeFilter{})
			if err != nil {
				t.Error(err)
				return
			}
			if code != nil {
				mu.Lock()
				seen[code.TOTPCodeID]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != codes {
		t.Errorf("%d codes taken, want %d: %v", len(seen), codes, seen)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("code %s taken %d times", id, n)
		}
	}
}

// TestBrowserSessionUpdatesAcrossDaemons: two daemons adding to one
// session's timeout at once change it one after the other, under the
// row's lock: every change lands; EndOpen from either ends the sessions
// once.
func TestBrowserSessionUpdatesAcrossDaemons(t *testing.T) {
	a, b, org := twoDaemons(t)
	ctx := t.Context()
	s := a.BrowserSessions()
	first := &client.BrowserSession{BrowserSessionID: s.NewID(), Status: ptr(store.SessionRunning)}
	if err := s.Create(ctx, org.ID, first); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.BrowserSessions().Update(ctx, org.ID, first.BrowserSessionID, func(bs *client.BrowserSession) error {
				n := 0
				if bs.Timeout != nil {
					n = *bs.Timeout
				}
				bs.Timeout = ptr(n + 1)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := b.BrowserSessions().Get(ctx, org.ID, first.BrowserSessionID)
	if err != nil || got.Timeout == nil || *got.Timeout != 20 {
		t.Errorf("after 20 concurrent updates: %+v %v", got, err)
	}
	if n, err := b.BrowserSessions().EndOpen(ctx, store.SessionEndedByRestart); err != nil || n != 1 {
		t.Errorf("EndOpen = %d %v, want 1", n, err)
	}
	if n, err := a.BrowserSessions().EndOpen(ctx, store.SessionEndedByRestart); err != nil || n != 0 {
		t.Errorf("EndOpen from the other daemon = %d %v, want 0", n, err)
	}
}

// TestDeploysAcrossDaemons: two daemons deploying to one script at once
// each get a version number of their own, and the latest is the last.
func TestDeploysAcrossDaemons(t *testing.T) {
	a, b, org := twoDaemons(t)
	ctx := t.Context()
	file := func(note string) []byte { return []byte("format: abctl.script/v1\nnote: " + note + "\n") }
	first, err := a.Scripts().Create(ctx, org.ID, store.ScriptInput{RunID: "wr_1", Content: file("one")})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var versions []int
	for i := range 10 {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rev, err := st.Scripts().Deploy(ctx, org.ID, first.ScriptID, file(fmt.Sprint(i)), "")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			versions = append(versions, rev.Version)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(versions)
	if want := []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; !slices.Equal(versions, want) {
		t.Errorf("concurrent deploys made versions %v, want %v", versions, want)
	}
	latest, err := b.Scripts().Get(ctx, org.ID, first.ScriptID)
	if err != nil || latest.Version != 11 {
		t.Fatalf("get %+v %v", latest, err)
	}
	v1, err := b.Scripts().Version(ctx, org.ID, first.ScriptID, 1)
	if err != nil || !bytes.Equal(v1.Content, file("one")) || !v1.ModifiedAt.Equal(latest.CreatedAt.Time) {
		t.Fatalf("version 1 %+v %v", v1, err)
	}
	if list, err := a.Scripts().List(ctx, org.ID, 1, 10, ""); err != nil || len(list) != 1 || list[0].Version != 11 {
		t.Errorf("list %+v %v", list, err)
	}
}
