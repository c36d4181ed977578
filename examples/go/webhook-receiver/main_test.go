package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// A real daemon sends the webhook of a run to the example receiver, which
// verifies it and handles it once, even when it is sent again.
func TestWebhookReceiver(t *testing.T) {
	const key = "example-key"
	addr, stopDaemon := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: key, Executor: &scripted.Executor{}})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	out, logs := &syncBuffer{}, &syncBuffer{}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, func(k string) string { return map[string]string{"ABCTL_API_KEY": key}[k] },
			out, logs, func(a string) { ready <- a })
	}()
	hook := "http://" + <-ready + "/hooks/abctl"

	r, err := c.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: `script: steps=1;output={"total":3}`, WebhookURL: hook})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, out, r.RunID+" completed {\"total\":3}\n")
	// A re-send is acknowledged but not handled twice.
	if _, err := c.Runs.RetryWebhook(t.Context(), r.RunID, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, logs, "repeat delivery")
	if n := strings.Count(out.String(), r.RunID); n != 1 {
		t.Errorf("run handled %d times:\n%s", n, out.String())
	}
	// Signed with another key: refused.
	other, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey("some-other-key"))
	if err == nil {
		_, err = other.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: "script: steps=1", WebhookURL: hook})
	}
	if err == nil {
		t.Error("a second key was accepted by a daemon that has one key")
	}
	// Stop the daemon first: it closes its kept-alive connections to the
	// receiver. (A connection that a client opened but never sent a request
	// on counts as busy for 5 s in a graceful shutdown, the receiver's whole
	// shutdown budget.)
	if err := stopDaemon(); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
}

func waitFor(t *testing.T, b *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %q in:\n%s", want, b.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
