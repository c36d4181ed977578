// Command webhook-receiver receives the webhooks runs send when they end,
// verifies their signatures, and handles each run once.
//
//	ABCTL_API_KEY=$(cat ~/.local/share/abctl/api-key) go run ./examples/go/webhook-receiver -addr 127.0.0.1:9000
//	abctl run --prompt ... --webhook-url http://127.0.0.1:9000/hooks/abctl
//
// The signature (x-skyvern-signature) is the HMAC-SHA256 of the body's exact
// bytes, keyed with the API key that started the run: webhook.Handler
// checks it on the raw bytes before anything is decoded, and answers 401 to
// a request that does not verify. A payload can arrive more than once (a
// webhook retry, a sender's own retry): run_id is the idempotency key, so a
// repeat is acknowledged and not handled again. Handle quickly and answer
// 2xx: the sender waits 10 s at most.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/abctl/abctl/client/webhook"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-receiver:", err)
		os.Exit(1)
	}
}

// seenRuns remembers which runs were handled. A real receiver keeps this
// where its work is recorded (a unique key in its database), so that the
// check and the work commit together.
type seenRuns struct {
	mu   sync.Mutex
	runs map[string]bool
}

// first reports whether runID is seen for the first time, and marks it.
func (s *seenRuns) first(runID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs[runID] {
		return false
	}
	s.runs[runID] = true
	return true
}

// run serves until ctx ends. ready, when set, gets the address listened on.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready func(addr string)) error {
	fs := flag.NewFlagSet("webhook-receiver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9000", "address to listen on")
	path := fs.String("path", "/hooks/abctl", "path of the webhook URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	key := getenv("ABCTL_API_KEY")
	if key == "" {
		return errors.New("set ABCTL_API_KEY to the API key that starts the runs: it signs their webhooks")
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	seen := &seenRuns{runs: map[string]bool{}}
	var out sync.Mutex

	mux := http.NewServeMux()
	mux.Handle("POST "+*path, webhook.Handler(key, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := webhook.PayloadFromContext(r.Context()) // verified by webhook.Handler
		if !seen.first(p.RunID) {
			log.Info("repeat delivery, already handled", "run_id", p.RunID)
			w.WriteHeader(http.StatusOK)
			return
		}
		// The work: here, one line per finished run on stdout.
		out.Lock()
		fmt.Fprintf(stdout, "%s %s %s\n", p.RunID, p.Status, p.Output)
		out.Unlock()
		w.WriteHeader(http.StatusOK)
	})))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	log.Info("listening", "url", "http://"+ln.Addr().String()+*path)
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
