package webhooks_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/abctl/abctl/daemon/webhooks"
	"github.com/abctl/abctl/internal/egress"
)

// TestDeliveryThroughGuard: a webhook (or totp_verification_url) delivery
// made for an organization goes through its guard: the daemon's API
// address is refused on a shared daemon, naming the URL (without its
// query), the address and the rule, and nothing reaches it; a single
// organization's daemon reaches the same loopback receiver; a Client of
// the caller's sends, and the guard still checks its URLs.
func TestDeliveryThroughGuard(t *testing.T) {
	var hits atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"ok": true}`))
	}))
	defer api.Close()
	apiAddr := strings.TrimPrefix(api.URL, "http://")
	shared := egress.New(egress.Config{Shared: func() bool { return true }})
	if err := shared.Protect(apiAddr, "the daemon's API"); err != nil {
		t.Fatal(err)
	}
	single := egress.New(egress.Config{Shared: func() bool { return false }})

	deliver := func(s *webhooks.Sender) webhooks.Delivery {
		d := s.Prepare(api.URL+"/v1/admin/orgs?token=s3cret", "key", []byte(`{}`))
		d.OrgID = "o_1"
		return s.Deliver(t.Context(), d)
	}
	s := &webhooks.Sender{Guard: shared.For}
	defer s.CloseIdleConnections()
	d := deliver(s)
	for _, want := range []string{"Could not reach URL: refused to reach " + api.URL + "/v1/admin/orgs", "(" + apiAddr + ")", "the daemon's API is never reachable by a run"} {
		if !strings.Contains(d.Err, want) {
			t.Errorf("%q does not say %q", d.Err, want)
		}
	}
	if strings.Contains(d.Err, "s3cret") || d.StatusCode != 0 || hits.Load() != 0 {
		t.Errorf("delivery %+v, %d requests received", d, hits.Load())
	}

	s = &webhooks.Sender{Guard: single.For}
	defer s.CloseIdleConnections()
	if d := deliver(s); !d.OK() || hits.Load() != 1 {
		t.Errorf("a single organization's daemon: %+v", d)
	}

	// A Client of the caller's sends, and the guard still checks.
	s = &webhooks.Sender{Guard: shared.For, Client: &http.Client{}}
	if d := deliver(s); d.OK() || !strings.Contains(d.Err, "the daemon's API is never reachable") || hits.Load() != 1 {
		t.Errorf("with a Client of the caller's: %+v", d)
	}
	s = &webhooks.Sender{Guard: single.For, Client: &http.Client{}}
	if d := deliver(s); !d.OK() || hits.Load() != 2 {
		t.Errorf("with a Client of the caller's, one organization: %+v", d)
	}
}
