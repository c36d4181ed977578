package runs

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// TestFrameFlags: the run id and --out are read; stdout that is a terminal
// needs --out.
func TestFrameFlags(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *FrameOptions
	if err := cmdtest.Exec(NewCmdFrame(f, func(o *FrameOptions) error { got = o; return nil }), "run/wr_1", "-o", "now.jpg"); err != nil {
		t.Fatal(err)
	}
	if got.RunID != "wr_1" || got.Out != "now.jpg" {
		t.Errorf("options %+v", got)
	}
	f.IO.SetTTY(false, true, true)
	got = nil
	err := cmdtest.Exec(NewCmdFrame(f, func(o *FrameOptions) error { got = o; return nil }), "wr_1")
	if got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "--out") {
		t.Errorf("to a terminal: %v, want a usage error naming --out", err)
	}
	for _, args := range [][]string{{"agent/x"}, {}} {
		got = nil
		err := cmdtest.Exec(NewCmdFrame(f, func(o *FrameOptions) error { got = o; return nil }), args...)
		if got != nil || !cmdtest.IsUsage(err) {
			t.Errorf("frame %q: %v, want a usage error", args, err)
		}
	}
}

// TestFrameRun: the JPEG goes to the file or to stdout, the time it was
// taken to stderr; the daemon's refusal comes back with its detail.
func TestFrameRun(t *testing.T) {
	jpeg := []byte{0xff, 0xd8, 0xff, 0xe0, 7, 0xff, 0xd9}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/runs/wr_1/frame" {
			w.Header().Set("Content-Type", "image/jpeg")
			w.Header().Set(client.FrameTakenHeader, "2025-03-01T12:00:00.250Z")
			w.Write(jpeg)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		w.Write([]byte(`{"detail":"Run wr_2 is over (completed): it has no browser to show any more."}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey("k"), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	ios, _, out, errOut := iostreams.Test()
	opts := func(id, file string) *FrameOptions {
		return &FrameOptions{IO: ios, Client: func(context.Context) (*client.Client, error) { return c, nil }, RunID: id, Out: file}
	}
	if err := runFrame(t.Context(), opts("wr_1", "")); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), jpeg) || !strings.Contains(errOut.String(), "The page of run wr_1 as it was at ") {
		t.Errorf("stdout % x, stderr %q", out.Bytes(), errOut.String())
	}
	file := filepath.Join(t.TempDir(), "now.jpg")
	if err := runFrame(t.Context(), opts("wr_1", file)); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(file); err != nil || !bytes.Equal(b, jpeg) {
		t.Errorf("file: % x %v", b, err)
	}
	err = runFrame(t.Context(), opts("wr_2", ""))
	if !errors.Is(err, client.ErrConflict) || !strings.Contains(err.Error(), "is over") {
		t.Errorf("a finished run: %v", err)
	}
}
