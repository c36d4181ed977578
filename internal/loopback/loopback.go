// Package loopback gives the tests an HTTP client that reaches this
// machine's loopback addresses only. The daemon sends webhooks wherever a
// request says; a test (a fuzzer above all) can make it aim at any host,
// and a host name would be looked up in DNS, which a test must never
// contact (and which, on a machine without a network, can take seconds to
// fail). This client refuses such a target at once, without a lookup.
package loopback

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Client returns an HTTP client that connects to loopback IP addresses
// (and "localhost", as 127.0.0.1) only, refusing any other host at once
// with an error that names it; like the daemon's webhook client, it
// ignores proxy settings and does not follow redirects.
func Client() *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{
		Transport: &http.Transport{
			Proxy: nil,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				host, port, err := net.SplitHostPort(addr)
				if err != nil {
					return nil, err
				}
				if host == "localhost" {
					host = "127.0.0.1"
				}
				if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
					return nil, fmt.Errorf("loopback: %s is not a loopback address; tests contact this machine only", addr)
				}
				return d.DialContext(ctx, network, net.JoinHostPort(host, port))
			},
			MaxIdleConnsPerHost: 16,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
