// Package secrets keeps a run's credentials out of everything but the
// fields they are typed into.
//
// A credential parameter's value, as templates and the model see it, is a
// map of its fields where every secret field is a placeholder,
// <secret:KEY.FIELD> ("<secret:portal.password>"). The model types the
// placeholder; the engine reveals the real value at the last moment, as
// it types it into the page (Reveal), and every text that leaves the
// engine afterwards (an action's result, an observation of the page) has
// the revealed values replaced by their placeholders again (Scrub). So a
// secret never reaches the model, the step log, the timeline, a webhook or
// an error message.
//
// The totp field of a password credential is a one-time code, made when it
// is typed: from the credential's authenticator secret (RFC 6238,
// internal/totp), or else the newest code pushed for its totp_identifier
// since the run started (POST /v1/credentials/totp), waited for up to
// CodeWait.
package secrets

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/totp"
	"github.com/abctl/abctl/localrun/executor"
)

// DefaultCodeWait is how long Reveal waits for a pushed one-time code.
const DefaultCodeWait = 3 * time.Minute

// Placeholder is what the model and templates see in place of a secret
// field of the credential parameter key.
func Placeholder(key, field string) string { return "<secret:" + key + "." + field + ">" }

// Mask is how every typed secret is shown, wherever it is shown: the
// step log, the timeline, logs, the answers of the API and the results of
// actions. It is the same for every secret (a password, a one-time code, a
// credential's field typed through its placeholder, a password field's
// value) and says nothing of the secret: neither its length nor which
// field of which credential it was.
const Mask = "********"

// Shown returns text as it may be shown outside the engine: Mask when
// text is a secret (secret is true, as for the text typed into a password
// field, and text is not empty) or holds a placeholder, text otherwise.
// Every place that shows a typed text goes through it, so that every
// secret is shown the one way.
func Shown(text string, secret bool) string {
	if (secret && text != "") || Has(text) {
		return Mask
	}
	return text
}

var placeholderRE = regexp.MustCompile(`<secret:([A-Za-z_][A-Za-z0-9_]*)\.([a-z_]+)>`)

// The secret fields of each type of credential; the others (a username, a
// card's brand and holder, a secret's label) are shown as they are.
var secretFields = map[client.CredentialType][]string{
	client.CredentialTypePassword:   {"password", "totp"},
	client.CredentialTypeCreditCard: {"card_number", "card_cvv", "card_exp_month", "card_exp_year"},
	client.CredentialTypeSecret:     {"secret_value"},
}

// Set is the credentials of one run. A nil *Set has none: Reveal and
// Scrub give their text back unchanged. A Set is safe for concurrent use.
type Set struct {
	vault executor.Vault
	run   Run
	// CodeWait bounds the wait for a pushed one-time code; 0 means
	// DefaultCodeWait.
	CodeWait time.Duration
	// URLInterval is how often the totp_verification_url is asked (it is
	// an endpoint of the user's); 0 means DefaultURLInterval.
	URLInterval time.Duration
	// Now is the clock of one-time codes; nil means time.Now.
	Now func() time.Time

	mu       sync.Mutex
	creds    map[string]*credential // by parameter key
	revealed map[string]string      // value given out -> its placeholder
}

type credential struct {
	id     string
	typ    client.CredentialType
	fields map[string]string
}

// Run is the run a Set belongs to: where its one-time codes come from.
type Run struct {
	OrgID   string
	RunID   string
	AgentID string    // the run's agent, "" for none
	Start   time.Time // pushed codes older than this are not the run's
	// TOTPURL is the run's totp_verification_url, asked for codes the
	// credentials do not make themselves; "" for none.
	TOTPURL string
}

// NewSet returns the credentials of a run.
func NewSet(v executor.Vault, run Run) *Set {
	return &Set{vault: v, run: run, creds: map[string]*credential{}, revealed: map[string]string{}}
}

// Add makes the credential id the value of the parameter key, reading it
// from the vault now (an unknown credential fails the run before it
// starts), and returns the value templates and the model see: the
// credential's fields, its secret ones as placeholders.
func (s *Set) Add(ctx context.Context, key, id string) (map[string]any, error) {
	if s == nil || s.vault == nil {
		return nil, errors.New("this engine has no credential store")
	}
	typ, data, err := s.vault.Credential(ctx, s.run.OrgID, id)
	if err != nil {
		return nil, fmt.Errorf("credential parameter %q: credential %s: %w", key, id, err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("credential parameter %q: credential %s cannot be read", key, id)
	}
	c := &credential{id: id, typ: typ, fields: map[string]string{}}
	for k, v := range raw {
		if str, ok := v.(string); ok {
			c.fields[k] = str
		}
	}
	shown := map[string]any{}
	secret := map[string]bool{}
	for _, f := range secretFields[typ] {
		secret[f] = true
	}
	for k, v := range c.fields {
		switch {
		case k == "totp" || k == "totp_type" || k == "totp_identifier":
			// The second factor is shown as one field, below.
		case secret[k]:
			shown[k] = Placeholder(key, k)
		default:
			shown[k] = v
		}
	}
	if typ == client.CredentialTypePassword && (c.fields["totp"] != "" || c.fields["totp_identifier"] != "" || s.run.TOTPURL != "") {
		shown["totp"] = Placeholder(key, "totp")
	}
	s.mu.Lock()
	s.creds[key] = c
	s.mu.Unlock()
	return shown, nil
}

// UseIdentifier makes identifier where the one-time codes of the
// credential parameter key are pushed, when the credential names none of
// its own (a login block's totp_identifier).
func (s *Set) UseIdentifier(key, identifier string) {
	if s == nil || identifier == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.creds[key]; c != nil && c.fields["totp"] == "" && c.fields["totp_identifier"] == "" {
		c.fields["totp_identifier"] = identifier
	}
}

// UseVerificationURL makes url the run's totp_verification_url (a login
// block's), asked for codes the credentials do not make themselves.
func (s *Set) UseVerificationURL(url string) {
	if s == nil || url == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.run.TOTPURL = url
}

// Keys returns the parameter keys of the set's credentials, sorted.
func (s *Set) Keys() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.creds))
	for k := range s.creds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Has reports whether text holds a placeholder.
func Has(text string) bool { return placeholderRE.MatchString(text) }

// Reveal returns text with every placeholder replaced by its value;
// secret reports whether it held any. A placeholder of a credential the
// run does not have, or of a field the credential lacks, is an error that
// names the placeholder (never a value).
func (s *Set) Reveal(ctx context.Context, text string) (out string, secret bool, err error) {
	if !Has(text) {
		return text, false, nil
	}
	if s == nil {
		return "", true, fmt.Errorf("%s names a credential, and this run has none", placeholderRE.FindString(text))
	}
	var firstErr error
	out = placeholderRE.ReplaceAllStringFunc(text, func(ph string) string {
		if firstErr != nil {
			return ph
		}
		m := placeholderRE.FindStringSubmatch(ph)
		v, err := s.value(ctx, m[1], m[2])
		if err != nil {
			firstErr = err
			return ph
		}
		s.mu.Lock()
		if len(v) >= 3 {
			s.revealed[v] = ph
		}
		s.mu.Unlock()
		return v
	})
	if firstErr != nil {
		return "", true, firstErr
	}
	return out, true, nil
}

func (s *Set) value(ctx context.Context, key, field string) (string, error) {
	s.mu.Lock()
	c := s.creds[key]
	s.mu.Unlock()
	if c == nil {
		return "", fmt.Errorf("%s names no credential parameter of this run", Placeholder(key, field))
	}
	if field == "totp" && c.typ == client.CredentialTypePassword {
		return s.code(ctx, key, c)
	}
	v, ok := c.fields[field]
	if !ok || v == "" {
		return "", fmt.Errorf("%s: credential %s has no %s", Placeholder(key, field), c.id, field)
	}
	return v, nil
}

func (s *Set) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// code makes or fetches the one-time code of a password credential.
func (s *Set) code(ctx context.Context, key string, c *credential) (string, error) {
	if secret := c.fields["totp"]; secret != "" {
		k, err := totp.Parse(secret)
		if err != nil {
			return "", fmt.Errorf("%s: credential %s: %v", Placeholder(key, "totp"), c.id, err)
		}
		now := s.now()
		// A code about to change would reach the site stale: wait for the
		// next one.
		if r := k.Remaining(now); r < 3*time.Second {
			select {
			case <-time.After(r):
			case <-ctx.Done():
				return "", ctx.Err()
			}
			now = s.now()
		}
		return k.Code(now), nil
	}
	s.mu.Lock()
	id := c.fields["totp_identifier"]
	url := s.run.TOTPURL
	s.mu.Unlock()
	if id == "" && url == "" {
		return "", fmt.Errorf("%s: credential %s has no second factor (neither an authenticator secret nor a totp_identifier), and the run has no totp_verification_url", Placeholder(key, "totp"), c.id)
	}
	wait := s.CodeWait
	if wait <= 0 {
		wait = DefaultCodeWait
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	filter := executor.CodeFilter{Since: s.run.Start, RunID: s.run.RunID, AgentID: s.run.AgentID}
	var lastAsked time.Time
	var urlErr error
	for {
		if id != "" {
			code, err := s.vault.TakeTOTPCode(ctx, s.run.OrgID, id, filter)
			if err != nil {
				return "", err
			}
			if code != nil {
				return code.Code, nil
			}
		}
		// The verification URL is an endpoint of the user's: asked every
		// few seconds, not at every tick.
		if url != "" && (lastAsked.IsZero() || time.Since(lastAsked) >= cmp.Or(s.URLInterval, DefaultURLInterval)) {
			lastAsked = time.Now()
			code, err := s.vault.FetchTOTPCode(ctx, s.run.OrgID, s.run.RunID, url)
			switch {
			case err != nil:
				urlErr = err
			case code != "":
				return code, nil
			}
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			var from []string
			if id != "" {
				from = append(from, "was pushed for "+id+" (POST /v1/credentials/totp, or `abctl credentials totp send`)")
			}
			if url != "" {
				msg := "came from the totp_verification_url"
				if urlErr != nil {
					msg += " (its last answer: " + urlErr.Error() + ")"
				}
				from = append(from, msg)
			}
			return "", fmt.Errorf("no one-time code %s within %v", strings.Join(from, ", nor "), wait)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// DefaultURLInterval is how often a totp_verification_url is asked.
const DefaultURLInterval = 3 * time.Second

// Scrub returns text with every value Reveal gave out replaced by its
// placeholder.
func (s *Set) Scrub(text string) string {
	if s == nil || text == "" {
		return text
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.revealed) == 0 {
		return text
	}
	// Longest first, so that a value holding another is replaced whole.
	vals := make([]string, 0, len(s.revealed))
	for v := range s.revealed {
		vals = append(vals, v)
	}
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	for _, v := range vals {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, s.revealed[v])
		}
	}
	return text
}

// Revealed reports whether Reveal gave out any value, so that callers
// scrub only then.
func (s *Set) Revealed() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.revealed) > 0
}
