package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/totp"
	"github.com/abctl/abctl/localrun/executor"
)

// vault is an organization's credentials and a queue of pushed codes.
type vault struct {
	mu    sync.Mutex
	creds map[string]client.CredentialData
	codes []*client.TOTPCode // handed out in order, once each
	asks  int
	// onAsk runs as TakeTOTPCode is called for the nth time.
	onAsk func(n int)
	// onFetch answers the nth FetchTOTPCode.
	onFetch func(n int) (string, error)
	fetches int
}

func (v *vault) Credential(_ context.Context, org, id string) (client.CredentialType, []byte, error) {
	c, ok := v.creds[org+"/"+id]
	if !ok {
		return "", nil, errors.New("credential not found")
	}
	b, err := json.Marshal(c)
	return c.CredentialType(), b, err
}

func (v *vault) FetchTOTPCode(_ context.Context, org, runID, url string) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.fetches++
	if v.onFetch != nil {
		return v.onFetch(v.fetches)
	}
	return "", nil
}

func (v *vault) TakeTOTPCode(_ context.Context, org, identifier string, f executor.CodeFilter) (*client.TOTPCode, error) {
	since := f.Since
	v.mu.Lock()
	defer v.mu.Unlock()
	v.asks++
	if v.onAsk != nil {
		v.onAsk(v.asks)
	}
	for i, c := range v.codes {
		if c != nil && c.TOTPIdentifier == identifier && !c.CreatedAt.Before(since) {
			v.codes[i] = nil
			return c, nil
		}
	}
	return nil, nil
}

func TestPlaceholdersRevealAndScrub(t *testing.T) {
	v := &vault{creds: map[string]client.CredentialData{
		"o_1/cred_pw":   &client.PasswordCredential{Username: "ada@example.com", Password: "hunter2-long", TOTP: "JBSWY3DPEHPK3PXP"},
		"o_1/cred_card": &client.CreditCardCredential{CardNumber: "4111111111111111", CardCVV: "737", CardExpMonth: "12", CardExpYear: "2030", CardBrand: "visa", CardHolderName: "Ada"},
	}}
	now := time.Unix(1_700_000_000, 0) // 20 s into its 30 s step
	set := NewSet(v, Run{OrgID: "o_1", RunID: "wr_1", Start: now})
	set.Now = func() time.Time { return now }
	shown, err := set.Add(t.Context(), "portal", "cred_pw")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"username": "ada@example.com", "password": "<secret:portal.password>", "totp": "<secret:portal.totp>"}
	if b, w := mustJSON(shown), mustJSON(want); b != w {
		t.Errorf("shown %s, want %s", b, w)
	}
	card, err := set.Add(t.Context(), "card", "cred_card")
	if err != nil || card["card_number"] != "<secret:card.card_number>" || card["card_brand"] != "visa" || card["card_holder_name"] != "Ada" {
		t.Errorf("card shown as %v %v", card, err)
	}
	if _, err := set.Add(t.Context(), "gone", "cred_gone"); err == nil || !strings.Contains(err.Error(), `credential parameter "gone": credential cred_gone`) {
		t.Errorf("an unknown credential: %v", err)
	}

	k, _ := totp.Parse("JBSWY3DPEHPK3PXP")
	out, secret, err := set.Reveal(t.Context(), "<secret:portal.password> then <secret:portal.totp>")
	if err != nil || !secret || out != "hunter2-long then "+k.Code(now) {
		t.Errorf("Reveal: %q %v %v", out, secret, err)
	}
	if got := set.Scrub("the field holds hunter2-long and " + k.Code(now)); got != "the field holds <secret:portal.password> and <secret:portal.totp>" {
		t.Errorf("Scrub: %q", got)
	}
	if out, secret, err := set.Reveal(t.Context(), "no placeholder here"); out != "no placeholder here" || secret || err != nil {
		t.Errorf("plain text: %q %v %v", out, secret, err)
	}
	for text, msg := range map[string]string{
		"<secret:other.password>":  "<secret:other.password> names no credential parameter",
		"<secret:portal.pin_code>": "credential cred_pw has no pin_code",
	} {
		if _, _, err := set.Reveal(t.Context(), text); err == nil || !strings.Contains(err.Error(), msg) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: %v", text, err)
		}
	}
	var none *Set
	if _, _, err := none.Reveal(t.Context(), "<secret:portal.password>"); err == nil {
		t.Error("a run without credentials revealed a placeholder")
	}
	if none.Scrub("x") != "x" || none.Revealed() {
		t.Error("a nil set changed text")
	}
}

// TestPushedCodes: a credential without an authenticator secret waits for
// a code pushed for its identifier since the run started; an older code,
// or another identifier's, is not its own; the wait is bounded.
func TestPushedCodes(t *testing.T) {
	start := time.Now()
	v := &vault{creds: map[string]client.CredentialData{
		"o_1/cred_mail": &client.PasswordCredential{Username: "ada", Password: "pw-secret", TOTPIdentifier: "ada@example.com", TOTPType: client.TOTPTypeEmail},
	}, codes: []*client.TOTPCode{
		{TOTPIdentifier: "ada@example.com", Code: "111111", CreatedAt: client.NewTime(start.Add(-time.Hour))},
		{TOTPIdentifier: "bob@example.com", Code: "222222", CreatedAt: client.NewTime(start)},
	}}
	// The code arrives while the run waits: it is pushed as the vault is
	// asked the second time.
	v.onAsk = func(n int) {
		if n == 2 {
			v.codes = append(v.codes, &client.TOTPCode{TOTPIdentifier: "ada@example.com", Code: "482913", CreatedAt: client.NewTime(time.Now())})
		}
	}
	set := NewSet(v, Run{OrgID: "o_1", RunID: "wr_1", Start: start})
	set.CodeWait = time.Minute
	if _, err := set.Add(t.Context(), "mail", "cred_mail"); err != nil {
		t.Fatal(err)
	}
	out, _, err := set.Reveal(t.Context(), "<secret:mail.totp>")
	if err != nil || out != "482913" || v.asks != 2 {
		t.Errorf("the pushed code: %q %v (asked %d times)", out, err, v.asks)
	}
	set.CodeWait = time.Millisecond
	if _, _, err := set.Reveal(t.Context(), "<secret:mail.totp>"); err == nil || !strings.Contains(err.Error(), "no one-time code was pushed for ada@example.com") {
		t.Errorf("a code used twice, or a wait that did not end: %v", err)
	}
}

// TestVerificationURL: a credential without a second factor of its own
// gets its code from the run's totp_verification_url, asked until it has
// one; an endpoint that keeps failing is named when the wait ends.
func TestVerificationURL(t *testing.T) {
	v := &vault{creds: map[string]client.CredentialData{
		"o_1/cred_pw": &client.PasswordCredential{Username: "ada", Password: "pw-secret"},
	}}
	v.onFetch = func(n int) (string, error) {
		if n < 3 {
			return "", nil // no code yet
		}
		return "771204", nil
	}
	set := NewSet(v, Run{OrgID: "o_1", RunID: "wr_1", Start: time.Now(), TOTPURL: "http://127.0.0.1:9/codes"})
	set.URLInterval, set.CodeWait = time.Nanosecond, time.Minute
	shown, err := set.Add(t.Context(), "portal", "cred_pw")
	if err != nil || shown["totp"] != "<secret:portal.totp>" {
		t.Fatalf("shown %v %v", shown, err)
	}
	if out, _, err := set.Reveal(t.Context(), "<secret:portal.totp>"); err != nil || out != "771204" || v.fetches != 3 {
		t.Errorf("the code from the URL: %q %v (asked %d times)", out, err, v.fetches)
	}
	v.onFetch = func(int) (string, error) { return "", errors.New("status 500") }
	set.CodeWait = time.Millisecond
	if _, _, err := set.Reveal(t.Context(), "<secret:portal.totp>"); err == nil || !strings.Contains(err.Error(), "its last answer: status 500") {
		t.Errorf("a failing endpoint: %v", err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
