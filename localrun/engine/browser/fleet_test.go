package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/internal/chromiumtest"
)

// The fleet tests run three Chromium processes of their own, each behind a
// TCP forwarder on 127.0.0.1:0 (package internal/chromiumtest): the
// endpoint's address is the forwarder's, so a Chromium restarted on
// another port is the same endpoint again.

type fleetMember = chromiumtest.Member

func startFleetMember(t *testing.T) *fleetMember {
	if noChromium != nil {
		t.Skipf("no Chromium binary found, fleet test skipped: %v", noChromium)
	}
	return chromiumtest.StartMember(t)
}

// newFleetPool makes a pool of endpoints a, b, c... on the members with the
// capacities; it needs no Chromium binary.
func newFleetPool(t *testing.T, o Options, members []*fleetMember, capacities ...int) *Pool {
	t.Helper()
	for i, m := range members {
		o.Endpoints = append(o.Endpoints, Endpoint{URL: m.URL(), Capacity: capacities[i], Name: string(rune('a' + i))})
	}
	o.ChromiumPath = "/nonexistent"
	o.Logger = testLogger()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := NewPool(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// endpointStatus returns the status of the named endpoint.
func endpointStatus(t *testing.T, p *Pool, name string) EndpointStatus {
	t.Helper()
	for _, e := range p.Status().Endpoints {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no endpoint %q in %+v", name, p.Status())
	return EndpointStatus{}
}

// byEndpoint counts sessions per endpoint.
func byEndpoint(sessions []*Context) map[string]int {
	n := make(map[string]int)
	for _, s := range sessions {
		n[s.Endpoint()]++
	}
	return n
}

// acquireAsync runs Acquire in the background; the result arrives on the channel.
func acquireAsync(t *testing.T, p *Pool, ctx context.Context, o ContextOptions) <-chan acquired {
	ch := make(chan acquired, 1)
	go func() {
		s, err := p.Acquire(ctx, o)
		if s != nil {
			t.Cleanup(func() { s.Close(context.Background()) })
		}
		ch <- acquired{s, err}
	}()
	return ch
}

type acquired struct {
	s   *Context
	err error
}

// receive waits up to 30 s for an acquireAsync result.
func receive(t *testing.T, ch <-chan acquired, what string) acquired {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: Acquire did not return within 30 s", what)
		return acquired{}
	}
}

// navigates checks that a session still drives its browser.
func navigates(t *testing.T, s *Context, url, title string) {
	t.Helper()
	run(t, s.Tab(), chromedp.Navigate(url+"/title?t="+title))
	if got := eval[string](t, s.Tab(), "document.title"); got != title {
		t.Fatalf("session on %q: title = %q, want %q", s.Endpoint(), got, title)
	}
}

func TestFleetSpreadByCapacity(t *testing.T) {
	members := []*fleetMember{startFleetMember(t), startFleetMember(t), startFleetMember(t)}
	p := newFleetPool(t, Options{}, members, 1, 2, 3)
	site := newSite(t)

	var sessions []*Context
	for i := range 6 {
		sessions = append(sessions, acquire(t, p, ContextOptions{RunID: fmt.Sprintf("spread-%d", i)}))
	}
	if n := byEndpoint(sessions); n["a"] != 1 || n["b"] != 2 || n["c"] != 3 {
		t.Fatalf("sessions per endpoint = %v, want a:1 b:2 c:3", n)
	}
	for _, e := range p.Status().Endpoints {
		if e.InUse != e.Capacity || e.Placed != uint64(e.Capacity) || !e.Healthy {
			t.Errorf("status of a full endpoint: %+v", e)
		}
	}
	navigates(t, sessions[5], site.URL, "spread")

	// The fleet is full: the next runs wait, and get the places in the order
	// they came.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seventh := acquireAsync(t, p, ctx, ContextOptions{RunID: "spread-7"})
	waitFor(t, "the 7th run to queue", func() bool { return p.Status().Queued == 1 })
	eighth := acquireAsync(t, p, ctx, ContextOptions{RunID: "spread-8"})
	waitFor(t, "the 8th run to queue", func() bool { return p.Status().Queued == 2 })
	var onB *Context
	for _, s := range sessions {
		if s.Endpoint() == "b" {
			onB = s
		}
	}
	if err := onB.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got := receive(t, seventh, "7th run")
	if got.err != nil || got.s.Endpoint() != "b" {
		t.Fatalf("7th run: endpoint %q, err %v; want the freed place on b", got.s.Endpoint(), got.err)
	}
	navigates(t, got.s, site.URL, "seventh")
	if st := p.Status(); st.Queued != 1 || st.QueueWaits != 2 {
		t.Fatalf("after the first free place: %+v, want the 8th still queued", st)
	}
	sessions[0].Close(ctx) // the place on a
	got = receive(t, eighth, "8th run")
	if got.err != nil || got.s.Endpoint() != "a" {
		t.Fatalf("8th run: endpoint %q, err %v", got.s.Endpoint(), got.err)
	}
	if st := p.Status(); st.Queued != 0 || st.QueueTimeouts != 0 {
		t.Fatalf("status: %+v", st)
	}
}

func TestFleetLeastLoaded(t *testing.T) {
	members := []*fleetMember{startFleetMember(t), startFleetMember(t), startFleetMember(t)}
	p := newFleetPool(t, Options{}, members, 2, 2, 2)
	var sessions []*Context
	for i := range 3 {
		sessions = append(sessions, acquire(t, p, ContextOptions{RunID: fmt.Sprintf("least-%d", i)}))
	}
	if n := byEndpoint(sessions); n["a"] != 1 || n["b"] != 1 || n["c"] != 1 {
		t.Fatalf("sessions per endpoint = %v, want one on each", n)
	}
	// A closed session gives its place back.
	sessions[1].Close(context.Background())
	if e := endpointStatus(t, p, "b"); e.InUse != 0 || e.Placed != 1 {
		t.Fatalf("b after Close: %+v", e)
	}
	if s := acquire(t, p, ContextOptions{RunID: "least-again"}); s.Endpoint() != "b" {
		t.Fatalf("next run on %q, want the empty b", s.Endpoint())
	}
}

func TestFleetKill(t *testing.T) {
	members := []*fleetMember{startFleetMember(t), startFleetMember(t), startFleetMember(t)}
	p := newFleetPool(t, Options{HealthInterval: 100 * time.Millisecond}, members, 3, 3, 3)
	site := newSite(t)
	var sessions []*Context
	for i := range 6 {
		sessions = append(sessions, acquire(t, p, ContextOptions{RunID: fmt.Sprintf("kill-%d", i)}))
	}
	if n := byEndpoint(sessions); n["a"] != 2 || n["b"] != 2 || n["c"] != 2 {
		t.Fatalf("sessions per endpoint = %v", n)
	}

	members[1].Browser.Kill()
	for _, s := range sessions {
		if s.Endpoint() != "b" {
			continue
		}
		select {
		case <-s.Done():
		case <-time.After(15 * time.Second):
			t.Fatal("a session on the killed endpoint is not done after 15 s")
		}
		if err := s.Err(); err == nil || !strings.Contains(err.Error(), `the browser endpoint "b" (`+members[1].URL()+`) went away`) {
			t.Fatalf("Err of a session on the killed endpoint = %v", err)
		}
	}
	waitFor(t, "b to be marked down", func() bool { return !endpointStatus(t, p, "b").Healthy })
	if e := endpointStatus(t, p, "b"); e.Failures != 2 || e.InUse != 0 || e.LastError == "" {
		t.Fatalf("status of the killed endpoint: %+v", e)
	}
	for _, s := range sessions {
		if s.Endpoint() != "b" {
			navigates(t, s, site.URL, "alive-"+s.Endpoint())
		}
	}
	// New runs go to the others.
	for i := range 2 {
		s := acquire(t, p, ContextOptions{RunID: fmt.Sprintf("kill-new-%d", i)})
		if s.Endpoint() == "b" {
			t.Fatal("a new run went to the killed endpoint")
		}
		navigates(t, s, site.URL, "new")
	}

	// Restarted behind the same address, b is taken back and takes the next run
	// (a and c are full now).
	members[1].Restart(t)
	waitFor(t, "b to be taken back", func() bool { return endpointStatus(t, p, "b").Healthy })
	s := acquire(t, p, ContextOptions{RunID: "kill-back"})
	if s.Endpoint() != "b" {
		t.Fatalf("the run after the restart went to %q, want b", s.Endpoint())
	}
	navigates(t, s, site.URL, "back")
	if st := p.Status(); st.Queued != 0 || st.QueueWaits != 0 {
		t.Fatalf("status: %+v", st)
	}
}

// deadAddress is an http:// address where nothing listens.
func deadAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func TestFleetAllDown(t *testing.T) {
	a, b := deadAddress(t), deadAddress(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := NewPool(ctx, Options{
		Endpoints:    []Endpoint{{URL: a, Name: "a"}, {URL: b, Name: "b", Capacity: 2}},
		QueueTimeout: 500 * time.Millisecond, ChromiumPath: "/nonexistent", Logger: testLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if st := p.Status(); len(st.Endpoints) != 2 || st.Endpoints[0].Healthy || st.Endpoints[1].Healthy ||
		st.Endpoints[0].Capacity != DefaultEndpointCapacity || st.Endpoints[1].URL != b {
		t.Fatalf("status of a dead fleet: %+v", st)
	}
	started := time.Now()
	pending := acquireAsync(t, p, ctx, ContextOptions{RunID: "all-down"})
	got := receive(t, pending, "all down")
	if got.err == nil {
		t.Fatal("Acquire on a dead fleet worked")
	}
	t.Logf("error after %s: %v", time.Since(started).Round(time.Millisecond), got.err)
	want := fmt.Sprintf(`browser endpoint "a" (%s) is down: connection refused; "b" (%s) is down: connection refused`, a, b)
	if !errors.Is(got.err, ErrQueueTimeout) || !strings.Contains(got.err.Error(), want) {
		t.Fatalf("error = %v\nwant ErrQueueTimeout with %q", got.err, want)
	}
	if time.Since(started) < 500*time.Millisecond {
		t.Fatal("Acquire gave up before QueueTimeout")
	}
	if st := p.Status(); st.Queued != 0 || st.QueueWaits != 1 || st.QueueTimeouts != 1 {
		t.Fatalf("queue after the timeout: %+v", st)
	}
}

func TestFleetQueueFull(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := NewPool(ctx, Options{
		Endpoints: []Endpoint{{URL: deadAddress(t), Name: "a"}},
		MaxQueue:  1, QueueTimeout: time.Minute, ChromiumPath: "/nonexistent", Logger: testLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	waitCtx, stopWaiting := context.WithCancel(ctx)
	first := acquireAsync(t, p, waitCtx, ContextOptions{RunID: "queued"})
	waitFor(t, "the first run to queue", func() bool { return p.Status().Queued == 1 })
	started := time.Now()
	if _, err := p.Acquire(ctx, ContextOptions{RunID: "one too many"}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("Acquire beyond MaxQueue: %v, want ErrQueueFull", err)
	} else if took := time.Since(started); took > 5*time.Second {
		t.Fatalf("Acquire beyond MaxQueue took %s, want at once", took)
	}
	stopWaiting()
	if got := receive(t, first, "queued run"); !errors.Is(got.err, context.Canceled) {
		t.Fatalf("queued run after its context ended: %v", got.err)
	}
	if st := p.Status(); st.Queued != 0 || st.QueueWaits != 1 || st.QueueTimeouts != 0 {
		t.Fatalf("status: %+v", st)
	}
	// Close ends a wait too.
	third := acquireAsync(t, p, ctx, ContextOptions{RunID: "until close"})
	waitFor(t, "the run to queue", func() bool { return p.Status().Queued == 1 })
	p.Close()
	if got := receive(t, third, "queued at Close"); !errors.Is(got.err, ErrPoolClosed) {
		t.Fatalf("queued run at Close: %v", got.err)
	}
}

func TestFleetOwnBrowserAddress(t *testing.T) {
	members := []*fleetMember{startFleetMember(t)}
	other := chromiumtest.Start(t)
	p := newFleetPool(t, Options{QueueTimeout: 200 * time.Millisecond}, members, 1)
	site := newSite(t)
	acquire(t, p, ContextOptions{RunID: "fills the fleet"})
	s := acquire(t, p, ContextOptions{RunID: "own", BrowserAddress: "http://127.0.0.1:" + strconv.Itoa(other.Port())})
	if s.Endpoint() != "" {
		t.Fatalf("a run with its own browser runs on endpoint %q", s.Endpoint())
	}
	navigates(t, s, site.URL, "own")
	if st := p.Status(); st.Endpoints[0].InUse != 1 || st.Endpoints[0].Placed != 1 || st.QueueWaits != 0 {
		t.Fatalf("status: %+v", st)
	}
}

func TestFleetHeaders(t *testing.T) {
	b := chromiumtest.Start(t)
	const token = "Bearer fleet-test-token"
	// Both forwarders want the token: "good" on every request, "bad" on the
	// websocket upgrade only, so that its health checks pass but connecting
	// without the token fails.
	good := chromiumtest.NewForwarder(t, b.Port(), token, false)
	bad := chromiumtest.NewForwarder(t, b.Port(), token, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := NewPool(ctx, Options{
		Endpoints: []Endpoint{
			{URL: bad.URL(), Name: "bad", Capacity: 1},
			{URL: good.URL(), Name: "good", Capacity: 1, Headers: map[string]string{"authorization": token}},
		},
		HealthInterval: time.Hour, QueueTimeout: time.Second, ChromiumPath: "/nonexistent", Logger: testLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if st := p.Status(); !st.Endpoints[0].Healthy || !st.Endpoints[1].Healthy {
		t.Fatalf("both endpoints answer /json/version: %+v", st)
	}
	// The run goes to "bad" first (the first of equals), fails to connect
	// there and lands on "good".
	s := acquire(t, p, ContextOptions{RunID: "headers"})
	if s.Endpoint() != "good" {
		t.Fatalf("the run is on %q, want good", s.Endpoint())
	}
	navigates(t, s, newSite(t).URL, "token")
	e := endpointStatus(t, p, "bad")
	if e.Healthy || e.Failures != 1 || e.Placed != 0 || !strings.Contains(e.LastError, "401") {
		t.Fatalf("status of the endpoint without the token: %+v", e)
	}
	t.Logf("bad: %s", e.LastError)
	// The next run waits: "bad" answers its check again, fails the run's
	// connect once more, and "good" stays full until the timeout.
	_, err = p.Acquire(ctx, ContextOptions{RunID: "no room"})
	t.Logf("next run: %v", err)
	if !errors.Is(err, ErrQueueTimeout) || !strings.Contains(err.Error(), `browser endpoint "bad" (`+bad.URL()+`) failed for this run: `) ||
		!strings.Contains(err.Error(), `; "good" is full (1 of 1)`) {
		t.Fatalf("Acquire with bad down and good full: %v", err)
	}

	// A websocket address is dialed as given, with the headers; the health
	// check asks /json/version at the root of its host, with the headers too.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, good.URL()+"/json/version", nil)
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var version struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	err = json.NewDecoder(resp.Body).Decode(&version)
	resp.Body.Close()
	if err != nil || !strings.HasPrefix(version.WebSocketDebuggerURL, "ws://"+strings.TrimPrefix(good.URL(), "http://")+"/devtools/browser/") {
		t.Fatalf("/json/version through the forwarder: %+v, %v", version, err)
	}
	p2, err := NewPool(ctx, Options{
		Endpoints: []Endpoint{
			{URL: version.WebSocketDebuggerURL, Name: "ws", Headers: map[string]string{"Authorization": token}},
			{URL: good.URL() + "/", Name: "no token"},
		},
		HealthInterval: time.Hour, QueueTimeout: time.Second, ChromiumPath: "/nonexistent", Logger: testLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if e := endpointStatus(t, p2, "no token"); e.Healthy || !strings.Contains(e.LastError, "401 Unauthorized") {
		t.Fatalf("endpoint without its token: %+v", e)
	}
	s2 := acquire(t, p2, ContextOptions{RunID: "ws headers"})
	if s2.Endpoint() != "ws" || !endpointStatus(t, p2, "ws").Healthy {
		t.Fatalf("the run is on %q: %+v", s2.Endpoint(), p2.Status())
	}
	navigates(t, s2, newSite(t).URL, "ws")
}

func TestFleetHidesTokens(t *testing.T) {
	// A service that answers its health checks but takes no websocket.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/json/version" {
			fmt.Fprint(w, "{}")
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr := "ws://" + srv.Listener.Addr().String() + "/?token=fleet-secret"
	p, err := NewPool(ctx, Options{Endpoints: []Endpoint{{URL: addr}}, ChromiumPath: "/nonexistent", Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Acquire(ctx, ContextOptions{RunID: "secret"})
	t.Logf("Acquire: %v", err)
	e := p.Status().Endpoints[0]
	want := "ws://" + srv.Listener.Addr().String() + "/"
	if err == nil || strings.Contains(err.Error(), "fleet-secret") || !strings.Contains(err.Error(), `"`+want+`" failed for this run`) {
		t.Fatalf("Acquire on an endpoint that takes no websocket: %v", err)
	}
	if e.Name != want || e.URL != want || e.Healthy || e.Failures != 1 || strings.Contains(e.LastError, "fleet-secret") {
		t.Fatalf("status: %+v", e)
	}
}

// TestFleetKeepsConnection: the connection to an endpoint outlives its
// last browser context, so that the next run does not connect again; once
// idle for fleetIdleKeep (closeIdle, called here as its timer would) it
// closes, and the next run connects anew.
func TestFleetKeepsConnection(t *testing.T) {
	members := []*fleetMember{startFleetMember(t)}
	p := newFleetPool(t, Options{}, members, 1)
	site := newSite(t)
	ctx := context.Background()

	first := acquire(t, p, ContextOptions{RunID: "keep-1"})
	inst := first.inst
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	second := acquire(t, p, ContextOptions{RunID: "keep-2"})
	if second.inst != inst {
		t.Fatal("the second run connected again; want the first run's connection")
	}
	navigates(t, second, site.URL, "kept")
	p.mu.Lock()
	gen := inst.idleGen
	p.mu.Unlock()
	p.closeIdle(inst, gen) // in use again since: stays
	if !inst.alive() {
		t.Fatal("closeIdle closed a connection in use")
	}
	if err := second.Close(ctx); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	gen = inst.idleGen
	p.mu.Unlock()
	p.closeIdle(inst, gen-1) // an earlier release's timer: stays
	if !inst.alive() {
		t.Fatal("an earlier release's timer closed the connection")
	}
	p.closeIdle(inst, gen)
	waitFor(t, "the idle connection to close", func() bool { return !inst.alive() })
	third := acquire(t, p, ContextOptions{RunID: "keep-3"})
	if third.inst == inst {
		t.Fatal("the third run is on the closed connection")
	}
	navigates(t, third, site.URL, "again")
	if e := endpointStatus(t, p, "a"); !e.Healthy || e.Failures != 0 || e.Placed != 3 {
		t.Fatalf("endpoint status: %+v", e)
	}
}
