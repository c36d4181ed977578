// Package admin is the admin protocol of `abctl daemon`: the state file a
// running daemon publishes in its data directory, the organizations the
// admin routes create and list, and the client `abctl daemon orgs` uses.
// The routes themselves are served by package daemon/api.
//
// The admin routes let `abctl daemon orgs` manage organizations while a
// daemon holds the store (bbolt allows one process per file).
//
// Protocol. On start, daemon.Run writes <data-dir>/daemon.json (mode 0600):
//
//	{"addr": "127.0.0.1:8780", "pid": 4242, "admin_token": "<64 hex digits>"}
//
// with a fresh random token, and removes the file on a clean shutdown. A
// request to /admin/... is answered only when it comes from a loopback
// address and carries the header x-admin-token with that token (compared in
// constant time); otherwise it is 403. Reading the token takes read access
// to the data directory, which is what opening the store directly takes, so
// the routes give no one more than they already had. An api.Server
// without a token (EnableAdmin never called) answers 404 there, as for any unknown
// path.
//
//	POST /admin/organizations  {"name": "acme"}
//	    200 {"organization_id": "o_...", "api_key": "abk_..."}
//	    422 {"detail": [{type, loc, msg, input}]} for a bad body or name
//	GET  /admin/organizations
//	    200 [{"organization_id": "o_...", "name": "...", "created_at": "..."}], oldest first
package admin

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/datadir"
)

// TokenHeader carries the admin token on requests to /admin/.
const TokenHeader = "X-Admin-Token"

// MaxOrganizationNameLength is the longest organization name, in characters.
const MaxOrganizationNameLength = 255

// State is the content of the state file of a running daemon.
type State struct {
	Addr       string `json:"addr"` // the address listened on, as the listener reports it
	PID        int    `json:"pid"`
	AdminToken string `json:"admin_token"`
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

// NewToken returns 32 random bytes, hex-encoded.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("daemon: make an admin token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
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

// RemoveState removes the state file if it is still the one holding token.
func RemoveState(dataDir, token string) error {
	path := filepath.Join(dataDir, datadir.StateFileName)
	st, err := ReadState(dataDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err == nil && subtle.ConstantTimeCompare([]byte(st.AdminToken), []byte(token)) != 1 {
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
	if st.Addr == "" || st.AdminToken == "" {
		return State{}, fmt.Errorf("%s is not a daemon state file: addr or admin_token missing", path)
	}
	return st, nil
}

// Client calls the admin routes of a running daemon.
type Client struct {
	baseURL string
	token   string
	hc      *http.Client
}

// NewClient returns a client of the daemon described by st. A daemon
// listening on all interfaces is reached through loopback; one listening
// only on another address cannot be reached, since the admin routes answer
// only loopback.
func NewClient(st State) (*Client, error) {
	host, port, err := net.SplitHostPort(st.Addr)
	if err != nil {
		return nil, fmt.Errorf("daemon address %q: %w", st.Addr, err)
	}
	ip, err := netip.ParseAddr(host)
	switch {
	case err != nil:
		if host != "localhost" {
			return nil, fmt.Errorf("daemon address %q is not an IP address", st.Addr)
		}
		host = "127.0.0.1"
	case ip.IsUnspecified() && ip.Is4():
		host = "127.0.0.1"
	case ip.IsUnspecified():
		host = "::1"
	case !ip.Unmap().IsLoopback():
		return nil, fmt.Errorf("the daemon listens on %s, not on loopback, and its admin routes answer only loopback", st.Addr)
	}
	return &Client{
		baseURL: "http://" + net.JoinHostPort(host, port),
		token:   st.AdminToken,
		hc: &http.Client{
			Timeout: 30 * time.Second,
			// Never through a proxy: the token goes to the daemon only.
			Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		},
	}, nil
}

// Addr returns the address the client sends to ("127.0.0.1:8780").
func (c *Client) Addr() string { return strings.TrimPrefix(c.baseURL, "http://") }

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
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set(TokenHeader, c.token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
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
