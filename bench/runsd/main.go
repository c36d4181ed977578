// Command runsd exists only for benchmarks (bench/runs.sh): it is the abctl
// daemon (daemon.Run, the same server, store, runner and webhook sender as
// `abctl daemon`) with the scripted executor in its instant mode, which
// completes every run at once with one step and no browser. It is not
// shipped and does nothing a user would want.
//
//	runsd -data-dir DIR -api-key KEY [-addr 127.0.0.1:0] [-workers N]
//
// It listens on loopback only, prints "listening on ADDR" on stdout once it
// accepts requests (with port 0 the kernel picks a free one), logs like the
// daemon on stderr, and stops cleanly on SIGINT or SIGTERM: in-flight
// requests finish, runs in progress end, their webhooks are sent and the
// store closes, so that the store can be opened afterwards (runs records).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	dataDir := flag.String("data-dir", "", "data directory (required; created if missing)")
	apiKey := flag.String("api-key", "", "API key to register for the default organization (required)")
	workers := flag.Int("workers", 0, "runs that execute at once (0: one per CPU core, as the daemon)")
	webhookTimeout := flag.Duration("webhook-timeout", 10*time.Second, "how long a webhook receiver has to answer")
	flag.Parse()
	if *dataDir == "" || *apiKey == "" || *workers < 0 {
		flag.Usage()
		os.Exit(2)
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		log.Fatalf("runsd: -addr %q is not a loopback address", *addr)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = daemon.Run(ctx, daemon.Config{
		Addr:           *addr,
		DataDir:        *dataDir,
		APIKey:         *apiKey,
		Executor:       &scripted.Executor{Forget: true}, // instant; keeps no jobs
		Workers:        *workers,
		WebhookTimeout: *webhookTimeout,
		Ready:          func(a string) { fmt.Printf("listening on %s\n", a) },
	})
	if err != nil {
		log.Fatalf("runsd: %v", err)
	}
}
