// Command serve serves the engine's test site on this machine, for trying
// abctl by hand and for the examples:
//
//	go run ./internal/testsite/serve              # http://127.0.0.1:8000
//	go run ./internal/testsite/serve -addr 127.0.0.1:0
//	go run ./internal/testsite/serve -smtp 127.0.0.1:2525
//	go run ./internal/testsite/serve -sftp 127.0.0.1:2222
//
// It prints the site's address on stdout (one line, so that scripts can read
// it) and serves until interrupted. With -smtp it also takes mail there, from
// anyone, and prints a summary of each message it receives on stderr (for
// the send_email examples). With -sftp it also serves SFTP there to the
// account testsite.SFTPUser, keeping the files in memory, with a host key
// whose fingerprint is always testsite.SFTPHostKeyFingerprint (for the
// storage example). The same pages are served on a second
// origin, localhost at another port, for the cross-origin frame. It serves
// loopback addresses only and contacts nothing.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/abctl/abctl/internal/mailtest"
	"github.com/abctl/abctl/internal/sftptest"
	"github.com/abctl/abctl/internal/testsite"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8000", "loopback address of the main origin (port 0: a free one)")
	smtpAddr := flag.String("smtp", "", "also take mail on this loopback address (such as 127.0.0.1:2525) and print each message")
	sftpAddr := flag.String("sftp", "", "also serve SFTP on this loopback address (such as 127.0.0.1:2222), files in memory, and print each file written")
	flag.Parse()
	if *sftpAddr != "" {
		s, err := sftptest.Start(*sftpAddr, testsite.SFTPUser, testsite.SFTPPassword,
			sftptest.WithHostKeySeed(testsite.SFTPHostKeySeed()),
			sftptest.OnWrite(func(p string) { fmt.Fprintf(os.Stderr, "sftp: receiving %s\n", p) }))
		if err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
		defer s.Close()
		fmt.Fprintf(os.Stderr, "serving SFTP at %s to %s (password %s), host key %s\n", s.Addr(), testsite.SFTPUser, testsite.SFTPPassword, s.Fingerprint())
	}
	if *smtpAddr != "" {
		s, err := mailtest.StartSMTP(*smtpAddr, mailtest.OnMessage(printMessage))
		if err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
		defer s.Close()
		fmt.Fprintf(os.Stderr, "taking mail at %s\n", s.Addr())
	}
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

// printMessage prints who sent a message to whom, its subject and its
// parts on stderr.
func printMessage(m mailtest.Message) {
	fmt.Fprintf(os.Stderr, "mail from %s to %s", m.From, strings.Join(m.To, ", "))
	pm, err := m.Parse()
	if err != nil {
		fmt.Fprintf(os.Stderr, " (unreadable: %v)\n", err)
		return
	}
	fmt.Fprintf(os.Stderr, ": %q", pm.Header.Get("Subject"))
	if parts := mailtest.Parts(pm); len(parts) > 0 {
		var names []string
		for _, p := range parts {
			if p.Filename != "" {
				names = append(names, fmt.Sprintf("%s (%d bytes)", p.Filename, len(p.Body)))
			}
		}
		if len(names) > 0 {
			fmt.Fprintf(os.Stderr, ", attached: %s", strings.Join(names, ", "))
		}
	}
	fmt.Fprintln(os.Stderr)
}
