// Package admin is the admin protocol of `abctl daemon`: the Unix socket a
// running daemon serves the admin routes on, the state file it publishes
// in its data directory, the organizations the admin routes create and
// list, and the client `abctl daemon orgs` uses. The routes themselves are
// served by package daemon/api (AdminHandler).
//
// The admin routes let `abctl daemon orgs` manage organizations while a
// daemon holds the store (bbolt allows one process per file).
//
// Protocol. As Docker and containerd do, the daemon serves the admin routes
// on a Unix socket in its data directory, <data-dir>/admin.sock
// (datadir.AdminSocketName), with mode 0600, and on nothing else: its TCP
// port answers /admin/... as any unknown path (404 to a valid API key,
// 403 without one). Connecting to the socket is the authentication: the
// file's mode lets only the daemon's user (and root) connect, the same
// people who can open the store directly, so the routes give no one more
// than they already had, and nothing that reaches the TCP port (a run's
// http_request block, a page a run's browser loads, another machine)
// reaches them. Listen makes the socket in a private directory, sets its
// mode and only then moves it into place, so that it is never reachable
// with a looser mode; it replaces a socket left by a daemon that crashed,
// but refuses to start while something answers on it. The socket is
// removed on shutdown.
//
// A Unix socket path is short (107 bytes on Linux, 103 on macOS and the
// BSDs): a daemon whose data directory's path is too long to hold it
// refuses to start, saying so.
//
// The state file. While the daemon serves, <data-dir>/daemon.json (mode
// 0600) holds the TCP address it listens on and its process id:
//
//	{"addr": "127.0.0.1:8780", "pid": 4242}
//
// and it is removed on a clean shutdown. It holds no secret.
//
// The routes, on the socket:
//
//	POST /admin/organizations  {"name": "acme"}
//	    200 {"organization_id": "o_...", "api_key": "abk_..."}
//	    422 {"detail": [{type, loc, msg, input}]} for a bad body or name
//	GET  /admin/organizations
//	    200 [{"organization_id": "o_...", "name": "...", "created_at": "..."}], oldest first
//
// By hand: curl --unix-socket <data-dir>/admin.sock http://abctl/admin/organizations
package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/datadir"
)

// MaxOrganizationNameLength is the longest organization name, in characters.
const MaxOrganizationNameLength = 255

// State is the content of the state file of a running daemon.
type State struct {
	Addr string `json:"addr"` // the TCP address listened on, as the listener reports it
	PID  int    `json:"pid"`
}

// CreatedOrganization is the answer to POST /admin/organizations. The key
// is shown only this once: the store keeps its hash.
type CreatedOrganization struct {
	OrganizationID string `json:"organization_id"`
	APIKey         string `json:"api_key"`
}

// Organization is one entry of GET /admin/organizations.
type Organization struct {
	OrganizationID string      `json:"organization_id"`
	Name           string      `json:"name"`
	CreatedAt      client.Time `json:"created_at"`
}

// ValidateOrganizationName returns name without surrounding white space, or
// an error saying why it cannot name an organization: it must not be empty,
// must be valid UTF-8 of at most MaxOrganizationNameLength characters, and
// must hold no control characters.
func ValidateOrganizationName(name string) (string, error) {
	name, _, msg := CheckOrganizationName(name)
	if msg != "" {
		return "", errors.New(msg)
	}
	return name, nil
}

// CheckOrganizationName returns the trimmed name, or the type and message
// of the validation error (the hosted service's vocabulary).
func CheckOrganizationName(name string) (trimmed, typ, msg string) {
	if !utf8.ValidString(name) {
		return "", "string_unicode", "organization name is not valid UTF-8"
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return "", "string_too_short", "organization name is empty"
	}
	if n := utf8.RuneCountInString(name); n > MaxOrganizationNameLength {
		return "", "string_too_long", fmt.Sprintf("organization name has %d characters, at most %d are allowed", n, MaxOrganizationNameLength)
	}
	if i := strings.IndexFunc(name, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(name[i:])
		return "", "value_error", fmt.Sprintf("organization name holds the control character %U", r)
	}
	return name, "", ""
}

// WriteState writes the state file atomically, with mode 0600: readers see
// the old file or the whole new one.
func WriteState(dataDir string, st State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dataDir, ".daemon-*.json") // mode 0600
	if err != nil {
		return fmt.Errorf("daemon: write %s: %w", datadir.StateFileName, err)
	}
	tmp := f.Name()
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dataDir, datadir.StateFileName))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("daemon: write %s: %w", datadir.StateFileName, err)
	}
	return nil
}

// RemoveState removes the state file if it still holds st (another
// daemon's is left alone).
func RemoveState(dataDir string, st State) error {
	path := filepath.Join(dataDir, datadir.StateFileName)
	cur, err := ReadState(dataDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err == nil && cur != st {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("daemon: remove %s: %w", path, err)
	}
	return nil
}

// ReadState reads the state file of the daemon using dataDir. The error
// matches os.ErrNotExist when there is none (no daemon has started there,
// or the last one stopped cleanly).
func ReadState(dataDir string) (State, error) {
	path := filepath.Join(dataDir, datadir.StateFileName)
	b, err := os.ReadFile(path)
	if err != nil {
		return State{}, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return State{}, fmt.Errorf("%s is not a daemon state file: %w", path, err)
	}
	if st.Addr == "" {
		return State{}, fmt.Errorf("%s is not a daemon state file: addr missing", path)
	}
	return st, nil
}

// SocketPath is the path of the admin socket of the daemon over dataDir.
func SocketPath(dataDir string) string {
	return filepath.Join(dataDir, datadir.AdminSocketName)
}

// MaxSocketPath is the longest path, in bytes, that a Unix socket can be
// bound to or reached at on this system (sun_path less its final NUL).
func MaxSocketPath() int {
	switch runtime.GOOS {
	case "linux", "android", "windows":
		return 107
	default: // macOS, the BSDs
		return 103
	}
}

// privateDirPattern names the directory Listen makes the socket in before
// moving it into place; tmpSocketPath is the longest path the socket has
// there (os.MkdirTemp puts up to 10 digits in place of the star).
const privateDirPattern = ".admin-*"

func tmpSocketPath(dataDir string) string {
	return filepath.Join(dataDir, strings.Replace(privateDirPattern, "*", "4294967295", 1), "s")
}

// CheckSocketPath returns an error when the data directory's path is too
// long for a Unix socket in it (see MaxSocketPath).
func CheckSocketPath(dataDir string) error {
	extra := len(tmpSocketPath(dataDir)) - len(dataDir)
	if limit := MaxSocketPath() - extra; len(dataDir) > limit {
		return fmt.Errorf("daemon: the data directory %s has a path of %d bytes, too long for the admin socket in it "+
			"(a Unix socket path has at most %d bytes here, which leaves %d for the directory): choose a data directory with a shorter path",
			dataDir, len(dataDir), MaxSocketPath(), limit)
	}
	return nil
}

// Listen listens on the admin socket of dataDir, with mode 0600. A socket
// file left there by a daemon that stopped without removing it (a crash) is
// replaced; one on which something answers is not, and Listen fails naming
// it. Closing the listener removes the socket, unless another has taken
// its place.
func Listen(dataDir string) (net.Listener, error) {
	if err := CheckSocketPath(dataDir); err != nil {
		return nil, err
	}
	path := SocketPath(dataDir)
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	// The socket is bound in a directory only this user can enter (mode
	// 0700), given its mode there, and then renamed into place: no one
	// else can connect in between, whatever the mode of the data
	// directory and the umask.
	dir, err := os.MkdirTemp(dataDir, privateDirPattern)
	if err != nil {
		return nil, fmt.Errorf("daemon: make the admin socket %s: %w", path, err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("daemon: listen on the admin socket %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false) // the socket moves: Close removes it by its final path
	err = os.Chmod(tmp, 0o600)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	var fi os.FileInfo
	if err == nil {
		fi, err = os.Lstat(path)
	}
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("daemon: make the admin socket %s: %w", path, err)
	}
	return &socketListener{UnixListener: ln, path: path, fi: fi}, nil
}

// removeStaleSocket removes the socket at path when nothing answers on it.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("daemon: the admin socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("daemon: %s is where the daemon serves its admin routes, but it is not a socket (%v): move it away", path, fi.Mode().Type())
	}
	conn, err := net.DialTimeout("unix", path, 5*time.Second)
	if err == nil {
		conn.Close()
		return fmt.Errorf("daemon: something already answers on the admin socket %s: is another daemon running over %s? Stop it first",
			path, filepath.Dir(path))
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("daemon: cannot tell whether a daemon still answers on the admin socket %s, so it is left alone: %w", path, err)
	}
	// Refused: no one listens. A daemon that crashed left it.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("daemon: remove the stale admin socket %s: %w", path, err)
	}
	return nil
}

// socketListener removes its socket when closed.
type socketListener struct {
	*net.UnixListener
	path string
	fi   os.FileInfo // the socket as bound, to remove it only if still there

	once sync.Once
	err  error
}

// Addr is the socket's final path (the listener was bound to its
// temporary one).
func (l *socketListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

func (l *socketListener) Close() error {
	l.once.Do(func() {
		l.err = l.UnixListener.Close()
		if fi, err := os.Lstat(l.path); err == nil && os.SameFile(fi, l.fi) {
			if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) && l.err == nil {
				l.err = fmt.Errorf("daemon: remove the admin socket %s: %w", l.path, err)
			}
		}
	})
	return l.err
}

// Client calls the admin routes of a running daemon, on its admin socket.
type Client struct {
	socket string
	hc     *http.Client
}

// NewClient returns a client of the admin routes served on the Unix socket
// at socketPath (SocketPath of the daemon's data directory). It connects
// to that socket only, never over TCP nor through a proxy.
func NewClient(socketPath string) *Client {
	var d net.Dialer
	return &Client{
		socket: socketPath,
		hc: &http.Client{
			Timeout: 30 * time.Second,
			Transport: &http.Transport{
				Proxy:             nil,
				DisableKeepAlives: true,
				DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					if n := len(socketPath); n > MaxSocketPath() {
						return nil, fmt.Errorf("the admin socket path %s has %d bytes, more than the %d a Unix socket path may have here", socketPath, n, MaxSocketPath())
					}
					return d.DialContext(ctx, "unix", socketPath)
				},
			},
		},
	}
}

// Socket returns the path of the socket the client connects to.
func (c *Client) Socket() string { return c.socket }

// Error is a non-2xx answer of an admin route.
type Error struct {
	StatusCode int
	Detail     string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Detail)
}

// CreateOrganization creates an organization and returns its id and first
// API key.
func (c *Client) CreateOrganization(ctx context.Context, name string) (CreatedOrganization, error) {
	var out CreatedOrganization
	body, _ := json.Marshal(map[string]string{"name": name})
	err := c.do(ctx, http.MethodPost, "/admin/organizations", body, &out)
	return out, err
}

// Organizations lists the organizations, oldest first.
func (c *Client) Organizations(ctx context.Context) ([]Organization, error) {
	var out []Organization
	err := c.do(ctx, http.MethodGet, "/admin/organizations", nil, &out)
	return out, err
}

func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	// The host is a name only: the transport connects to the socket.
	req, err := http.NewRequestWithContext(ctx, method, "http://abctl"+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL names no real host
		}
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &Error{StatusCode: resp.StatusCode, Detail: errorDetail(b)}
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: unexpected answer: %w", method, path, err)
	}
	return nil
}

// errorDetail returns the detail of an error body: the string, or the
// messages of a validation list joined.
func errorDetail(b []byte) string {
	var e struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(b, &e) == nil && len(e.Detail) > 0 {
		var s string
		if json.Unmarshal(e.Detail, &s) == nil {
			return s
		}
		var list []client.ValidationError
		if json.Unmarshal(e.Detail, &list) == nil && len(list) > 0 {
			msgs := make([]string, len(list))
			for i, v := range list {
				msgs[i] = v.String()
			}
			return strings.Join(msgs, "; ")
		}
	}
	return strings.TrimSpace(string(b))
}
