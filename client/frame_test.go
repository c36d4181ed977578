package client_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
)

// TestRunFrame: the frame comes back as its bytes with the time of its
// header; a run that is over is ErrConflict with the daemon's detail, an
// unknown one ErrNotFound.
func TestRunFrame(t *testing.T) {
	ts := newTestServer(t)
	jpeg := []byte{0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 0xff, 0xd9}
	ts.mux.HandleFunc("GET /v1/runs/{id}/frame", func(w http.ResponseWriter, r *http.Request) {
		switch r.PathValue("id") {
		case "wr_1":
			w.Header().Set("Content-Type", "image/jpeg")
			w.Header().Set(client.FrameTakenHeader, "2025-03-01T12:00:00.250Z")
			w.Write(jpeg)
		case "wr_2":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"detail":"Run wr_2 is over (completed): it has no browser to show any more."}`))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"detail":"Run wr_3 not found"}`))
		}
	})
	ctx := t.Context()
	f, err := ts.client.Runs.Frame(ctx, "wr_1")
	if err != nil {
		t.Fatal(err)
	}
	if string(f.JPEG) != string(jpeg) || !f.Taken.Equal(time.Date(2025, 3, 1, 12, 0, 0, 250e6, time.UTC)) {
		t.Errorf("frame: % x taken %v", f.JPEG, f.Taken)
	}
	if _, err := ts.client.Runs.Frame(ctx, "wr_2"); !errors.Is(err, client.ErrConflict) || !strings.Contains(err.Error(), "is over") {
		t.Errorf("a finished run: %v", err)
	}
	if _, err := ts.client.Runs.Frame(ctx, "wr_3"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("unknown: %v", err)
	}
	if _, err := ts.client.Runs.Frame(ctx, ""); err == nil {
		t.Error("an empty id: no error")
	}
	reqs := ts.requests()
	if len(reqs) != 3 || reqs[0].Path != "/v1/runs/wr_1/frame" || reqs[0].Header.Get("X-Api-Key") != testAPIKey {
		t.Errorf("requests: %+v", reqs)
	}
}
