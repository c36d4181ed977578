// Command runsd exists only for benchmarks (bench/runs.sh, bench/daemon.sh,
// bench/daemons.sh): it is the abctl daemon (daemon.Run, the same server,
// store, runner and webhook sender as `abctl daemon`) with the scripted
// executor in its instant mode, which completes every run at once with one
// step and no browser. It is not shipped and does nothing a user would
// want.
//
//	runsd -data-dir DIR -api-key KEY [-addr 127.0.0.1:0] [-workers N]
//	      [-store postgres://... -artifacts DIR]
//
// With -store the records are kept in that PostgreSQL database, which
// several runsd may share, as `abctl daemon --store` does; they must then
// have the same secret, given as 64 hex digits in ABCTL_DAEMON_SECRET (as `abctl
// daemon` reads it), and the same -artifacts directory.
//
// It listens on loopback only, prints "listening on ADDR" on stdout once it
// accepts requests (with port 0 the kernel picks a free one), logs like the
// daemon on stderr, and stops cleanly on SIGINT or SIGTERM: in-flight
// requests finish, runs in progress end, their webhooks are sent and the
// store closes, so that the store can be opened afterwards (runs records).
package main

import (
	"context"
	"encoding/hex"
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
	storeURL := flag.String("store", "", "PostgreSQL database several runsd share (default: the bbolt file in -data-dir)")
	artifactsDir := flag.String("artifacts", "", "directory of the run files, shared by the runsd of one -store (default: in -data-dir)")
	flag.Parse()
	if *dataDir == "" || *apiKey == "" || *workers < 0 {
		flag.Usage()
		os.Exit(2)
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		log.Fatalf("runsd: -addr %q is not a loopback address", *addr)
	}
	var secret []byte // nil: the data directory's secret file
	if v := os.Getenv("ABCTL_DAEMON_SECRET"); v != "" {
		if secret, err = hex.DecodeString(v); err != nil {
			log.Fatalf("runsd: ABCTL_DAEMON_SECRET is not hex digits") // the value stays out of the message
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = daemon.Run(ctx, daemon.Config{
		Addr:           *addr,
		DataDir:        *dataDir,
		Store:          *storeURL,
		ArtifactsDir:   *artifactsDir,
		Secret:         secret,
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
