package daemoncmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/datadir"
)

// probeTimeout bounds each request that asks what holds a taken address.
const probeTimeout = 2 * time.Second

// listenFailure is the error of a daemon that could not take its address:
// the listener's error, then what holds the address and what to do.
type listenFailure struct {
	err  error
	hint string
}

func (e *listenFailure) Error() string { return e.err.Error() + "\n" + e.hint }
func (e *listenFailure) Unwrap() error { return e.err }

// explainListen adds to err, when it is the daemon's failure to listen on
// addr, what holds that address (the daemon of dataDir, another abctl
// daemon, or something else) and what to do about it. Other errors come
// back as they are.
func explainListen(ctx context.Context, err error, addr, dataDir string) error {
	if !errors.Is(err, daemon.ErrListen) {
		return err
	}
	other := "another address, such as --addr " + nextPort(addr)
	version, isDaemon := probeDaemon(ctx, addr)
	var hint string
	switch {
	case isDaemon && stateNames(dataDir, addr):
		hint = fmt.Sprintf("Hint: the daemon of %s already runs at %s (its state file %s says so): the commands use it; there is nothing to start.",
			dataDir, addr, filepath.Join(dataDir, datadir.StateFileName))
	case isDaemon:
		hint = fmt.Sprintf("Hint: another abctl daemon (version %s), over another data directory than %s, listens at %s. "+
			"Stop it, or start this one on %s: the commands of this data directory find it through %s.",
			version, dataDir, addr, other, filepath.Join(dataDir, datadir.StateFileName))
	default:
		hint = fmt.Sprintf("Hint: %s is taken by a program that is not an abctl daemon (it does not answer GET /healthz and /v1/version as one). "+
			"Stop it, or start the daemon on %s: the commands find it through %s.",
			addr, other, filepath.Join(dataDir, datadir.StateFileName))
	}
	return &listenFailure{err: err, hint: hint}
}

// probeDaemon reports whether an abctl daemon answers at addr: GET /healthz
// answers {"status": "ok"} and GET /v1/version a version, which it returns.
func probeDaemon(ctx context.Context, addr string) (version string, ok bool) {
	var health struct {
		Status string `json:"status"`
	}
	var v struct {
		Version string `json:"version"`
	}
	base := "http://" + reachable(addr)
	if getJSON(ctx, base+"/healthz", &health) != nil || health.Status != "ok" {
		return "", false
	}
	if getJSON(ctx, base+"/v1/version", &v) != nil || v.Version == "" {
		return "", false
	}
	return v.Version, true
}

// getJSON decodes the JSON answer of GET url into into; an answer other
// than 200 is an error.
func getJSON(ctx context.Context, url string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(into)
}

// stateNames reports whether the state file of dataDir names addr as the
// address its daemon listens on.
func stateNames(dataDir, addr string) bool {
	st, err := admin.ReadState(dataDir)
	return err == nil && reachable(st.Addr) == reachable(addr)
}

// reachable is addr with an unspecified host (":8780", "0.0.0.0:8780")
// made the loopback address, which reaches it from this machine.
func reachable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// nextPort is addr with the port after its own, as a suggestion of an
// address to listen on instead.
func nextPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "127.0.0.1:8781"
	}
	var n int
	if _, err := fmt.Sscan(port, &n); err != nil || n <= 0 || n >= 65535 {
		return net.JoinHostPort(host, "8781")
	}
	return net.JoinHostPort(host, fmt.Sprint(n+1))
}
