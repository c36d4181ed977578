// Command serve serves the engine's test site on this machine, for trying
// abctl by hand and for the examples:
//
//	go run ./internal/testsite/serve              # http://127.0.0.1:8000
//	go run ./internal/testsite/serve -addr 127.0.0.1:0
//
// It prints the site's address on stdout (one line, so that scripts can read
// it) and serves until interrupted. The same pages are served on a second
// origin, localhost at another port, for the cross-origin frame. It serves
// loopback addresses only and contacts nothing.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/abctl/abctl/internal/testsite"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8000", "loopback address of the main origin (port 0: a free one)")
	flag.Parse()
	site, stop, err := testsite.Serve(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
	defer stop()
	fmt.Println(site.URL("/"))
	fmt.Fprintf(os.Stderr, "serving the test site at %s and %s; Ctrl-C stops it\n", site.URL("/"), site.OtherURL("/"))
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	<-ctx.Done()
}
