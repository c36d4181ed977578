package daemon_test

// Credentials and one-time codes through the client over real HTTP, on a
// real bbolt file: what answers show, what they never show, organizations
// kept apart, bad input, the sealed store and its secret.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/localrun/executor"
)

// The plaintexts the tests put in and then look for everywhere.
const (
	leakPassword = "correct-horse-battery-staple"
	leakTOTP     = "JBSWY3DPEHPK3PXPJBSWY3DP"
	leakCard     = "4111111111111111"
	leakCVV      = "737"
	leakSecret   = "sk-live-0123456789abcdef"
)

// recorder keeps every response body the client received.
type recorder struct{ bodies bytes.Buffer }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	resp.Body.Close()
	r.bodies.Write(b.Bytes())
	resp.Body = io.NopCloser(bytes.NewReader(b.Bytes()))
	return resp, nil
}

func TestCredentials(t *testing.T) {
	var logs syncBuffer
	e := newEnvLogging(t, &logs)
	rec := &recorder{}
	a, err := client.New(client.WithBaseURL(e.url), client.WithAPIKey(e.key), client.WithMaxRetries(0), client.WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	create := func(name string, data client.CredentialData) *client.Credential {
		t.Helper()
		c, err := a.Credentials.Create(ctx, &client.CredentialRequest{Name: name, Credential: data})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		return c
	}
	pw := create("Billing portal", &client.PasswordCredential{Username: "ada@example.com", Password: leakPassword, TOTP: leakTOTP})
	card := create("Company card", &client.CreditCardCredential{CardNumber: "4111 1111 1111 1111", CardCVV: leakCVV, CardExpMonth: "12", CardExpYear: "2030", CardBrand: "visa", CardHolderName: "Ada Lovelace"})
	sec := create("Weather API", &client.SecretCredential{SecretValue: leakSecret, SecretLabel: "API key"})

	// What answers show: the upstream shapes, never a secret.
	for _, tc := range []struct {
		c    *client.Credential
		typ  client.CredentialType
		want string
	}{
		{pw, client.CredentialTypePassword, `{"username":"ada@example.com","totp_type":"authenticator","totp_identifier":null}`},
		{card, client.CredentialTypeCreditCard, `{"last_four":"1111","brand":"visa"}`},
		{sec, client.CredentialTypeSecret, `{"secret_label":"API key"}`},
	} {
		got, err := a.Credentials.Get(ctx, tc.c.CredentialID)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(got.Credential)
		if got.CredentialType != tc.typ || string(data) != tc.want || !strings.HasPrefix(got.CredentialID, "cred_") || got.VaultType == nil || *got.VaultType != client.CredentialVaultSkyvern {
			t.Errorf("%s: %s %s %+v", tc.c.Name, got.CredentialType, data, got)
		}
	}

	// The list: newest first, by type, by search, paged.
	names := func(o *client.ListCredentialsOptions) []string {
		t.Helper()
		var out []string
		for c, err := range a.Credentials.All(ctx, o) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c.Name)
		}
		return out
	}
	if got, want := names(nil), []string{"Weather API", "Company card", "Billing portal"}; !slices.Equal(got, want) {
		t.Errorf("list: %v, want newest first %v", got, want)
	}
	if got := names(&client.ListCredentialsOptions{CredentialType: client.CredentialTypeCreditCard, PageSize: 1}); !slices.Equal(got, []string{"Company card"}) {
		t.Errorf("cards: %v", got)
	}
	if got := names(&client.ListCredentialsOptions{Search: "ADA@"}); !slices.Equal(got, []string{"Billing portal"}) {
		t.Errorf("search by username: %v", got)
	}
	if got := names(&client.ListCredentialsOptions{VaultType: client.CredentialVaultBitwarden}); len(got) != 0 {
		t.Errorf("the bitwarden vault lists %v; the daemon keeps none there", got)
	}

	// Update keeps the id; the type cannot change.
	up, err := a.Credentials.Update(ctx, pw.CredentialID, &client.CredentialRequest{Name: "Billing portal (new)",
		Credential: &client.PasswordCredential{Username: "ada@example.com", Password: leakPassword + "-2", TOTPIdentifier: "ada@example.com", TOTPType: client.TOTPTypeEmail}})
	if err != nil || up.CredentialID != pw.CredentialID || up.Name != "Billing portal (new)" || up.Credential.TOTPType != client.TOTPTypeEmail {
		t.Errorf("update: %+v %v", up, err)
	}
	_, err = a.Credentials.Update(ctx, pw.CredentialID, &client.CredentialRequest{Name: "x", Credential: &client.SecretCredential{SecretValue: "v"}})
	if !isStatus(err, 422, "cannot change") {
		t.Errorf("a type change: %v", err)
	}

	// The engine's way in: the secret, unsealed.
	typ, secret, err := e.store.Credentials().Secret(ctx, e.orgA, pw.CredentialID)
	if err != nil || typ != client.CredentialTypePassword || !strings.Contains(string(secret), leakPassword+"-2") {
		t.Errorf("Secret: %s %q %v", typ, secret, err)
	}

	// Another organization sees none of it.
	if got, err := e.b.Credentials.List(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("organization B lists %v %v", got, err)
	}
	for name, call := range map[string]func() error{
		"get": func() error { _, err := e.b.Credentials.Get(ctx, pw.CredentialID); return err },
		"update": func() error {
			_, err := e.b.Credentials.Update(ctx, pw.CredentialID, &client.CredentialRequest{Name: "x", Credential: &client.SecretCredential{SecretValue: "v"}})
			return err
		},
		"delete": func() error { return e.b.Credentials.Delete(ctx, pw.CredentialID) },
	} {
		if err := call(); !isStatus(err, 404, "Credential "+pw.CredentialID+" not found") {
			t.Errorf("organization B's %s of A's credential: %v", name, err)
		}
	}

	// Delete: 204, then 404.
	if err := a.Credentials.Delete(ctx, sec.CredentialID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Credentials.Get(ctx, sec.CredentialID); !isStatus(err, 404, "not found") {
		t.Errorf("get after delete: %v", err)
	}

	// Bad input: a 422 that says what and where, and never repeats a secret.
	for _, tc := range []struct {
		name, body, loc, msg string
	}{
		{"unknown type", `{"name":"x","credential_type":"token","credential":{"secret_value":"` + leakSecret + `"}}`, "body.credential_type", "'password', 'credit_card' or 'secret'"},
		{"TOTP secret not base32", `{"name":"x","credential_type":"password","credential":{"username":"u","password":"` + leakPassword + `","totp":"` + leakTOTP + `!1"}}`, "body.credential.totp", "not base32"},
		{"authenticator without a secret", `{"name":"x","credential_type":"password","credential":{"username":"u","password":"p","totp_type":"authenticator"}}`, "body.credential.totp", "authenticator secret"},
		{"empty password", `{"name":"x","credential_type":"password","credential":{"username":"u","password":""}}`, "body.credential.password", "at least 1 character"},
		{"card failing its check digit", `{"name":"x","credential_type":"credit_card","credential":{"card_number":"4111111111111112","card_cvv":"` + leakCVV + `","card_exp_month":"12","card_exp_year":"2030","card_brand":"visa","card_holder_name":"A"}}`, "body.credential.card_number", "Luhn"},
		{"card month 13", `{"name":"x","credential_type":"credit_card","credential":{"card_number":"` + leakCard + `","card_cvv":"` + leakCVV + `","card_exp_month":"13","card_exp_year":"2030","card_brand":"visa","card_holder_name":"A"}}`, "body.credential.card_exp_month", "1 to 12"},
		{"external vault", `{"name":"x","credential_type":"secret","vault_type":"bitwarden","credential":{"secret_value":"` + leakSecret + `"}}`, "body.vault_type", "keeps credentials itself"},
		{"no credential", `{"name":"x","credential_type":"secret"}`, "body.credential", "Field required"},
	} {
		status, body := e.raw("POST", "/v1/credentials", "application/json", tc.body)
		rec.bodies.WriteString(body)
		if status != 422 || !strings.Contains(body, tc.msg) || !strings.Contains(body, locJSON(tc.loc)) {
			t.Errorf("%s: %d %s; want 422 at %s saying %q", tc.name, status, body, tc.loc, tc.msg)
		}
	}

	// One-time codes: the code is read from the message, used once, and
	// an expired one is never handed out.
	code, err := a.Credentials.SendTOTPCode(ctx, &client.TOTPCodeRequest{TOTPIdentifier: "ada@example.com", Content: "Your sign-in code is 482913. It expires in 10 minutes."})
	if err != nil || code.Code != "482913" || code.OTPType == nil || *code.OTPType != client.OTPTypeTOTP || code.ExpiredAt == nil || !strings.HasPrefix(code.TOTPCodeID, "totp_") {
		t.Fatalf("push: %+v %v", code, err)
	}
	link, err := a.Credentials.SendTOTPCode(ctx, &client.TOTPCodeRequest{TOTPIdentifier: "bob@example.com", Content: "Sign in: https://app.example.com/magic?t=abc"})
	if err != nil || link.Code != "https://app.example.com/magic?t=abc" || *link.OTPType != client.OTPTypeMagicLink {
		t.Errorf("a magic link: %+v %v", link, err)
	}
	org := e.orgA
	since := executor.CodeFilter{Since: time.Now().Add(-time.Minute), RunID: "wr_1"}
	if got, err := e.store.Credentials().TakeTOTPCode(ctx, org, "ada@example.com", since); err != nil || got == nil || got.Code != "482913" {
		t.Errorf("take: %+v %v", got, err)
	}
	if got, _ := e.store.Credentials().TakeTOTPCode(ctx, org, "ada@example.com", since); got != nil {
		t.Errorf("a code was handed out twice: %+v", got)
	}
	past := client.NewTime(time.Now().Add(-time.Second))
	if _, err := a.Credentials.SendTOTPCode(ctx, &client.TOTPCodeRequest{TOTPIdentifier: "ada@example.com", Content: "111222", ExpiredAt: &past}); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.store.Credentials().TakeTOTPCode(ctx, org, "ada@example.com", since); got != nil {
		t.Errorf("an expired code was handed out: %+v", got)
	}
	// A code tied to another run is not this run's.
	other := "wr_other"
	if _, err := a.Credentials.SendTOTPCode(ctx, &client.TOTPCodeRequest{TOTPIdentifier: "ada@example.com", Content: "333444", WorkflowRunID: other}); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.store.Credentials().TakeTOTPCode(ctx, org, "ada@example.com", since); got != nil {
		t.Errorf("a code of run %s went to run %s: %+v", other, since.RunID, got)
	}
	mine := since
	mine.RunID = other
	if got, _ := e.store.Credentials().TakeTOTPCode(ctx, org, "ada@example.com", mine); got == nil || got.Code != "333444" {
		t.Errorf("the run the code was pushed for: %+v", got)
	}
	if got, _ := e.store.Credentials().TakeTOTPCode(ctx, e.orgB, "bob@example.com", since); got != nil {
		t.Errorf("organization B took A's code: %+v", got)
	}
	if _, err := a.Credentials.SendTOTPCode(ctx, &client.TOTPCodeRequest{TOTPIdentifier: "ada@example.com", Content: "no code here"}); !isStatus(err, 422, "no one-time code") {
		t.Errorf("a message without a code: %v", err)
	}

	// Nothing the daemon wrote holds a secret: the store file, the logs,
	// every answer.
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(e.store.Path())
	if err != nil {
		t.Fatal(err)
	}
	for what, data := range map[string][]byte{"the store file": file, "the logs": []byte(logs.String()), "the answers": rec.bodies.Bytes()} {
		for _, s := range []string{leakPassword, leakTOTP, leakCard, "4111 1111", leakSecret} {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s hold the secret %q", what, s)
			}
		}
	}
	if !bytes.Contains(rec.bodies.Bytes(), []byte(`"last_four":"1111"`)) || logs.String() == "" {
		t.Error("the leak search saw no answers or no logs: it proves nothing")
	}
}

// TestCredentialsNeedTheirSecret: a store given another secret than the
// one its values were sealed with (a replaced secret file, or a new one made
// for a lost one) refuses to open, saying so, and changes nothing.
func TestCredentialsNeedTheirSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "abctl.db")
	secret := make([]byte, store.SecretSize)
	rand.Read(secret)
	st, err := boltstore.Open(path, store.Options{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	org, _, err := st.CreateOrganization(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	cred, err := st.Credentials().Create(t.Context(), org.ID, &store.CredentialInput{Name: "n", Type: client.CredentialTypeSecret, Secret: []byte(`{"secret_value":"v"}`)})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	before, _ := os.ReadFile(path)

	other := make([]byte, store.SecretSize)
	rand.Read(other)
	if _, err := boltstore.Open(path, store.Options{Secret: other}); err == nil || !strings.Contains(err.Error(), "not the secret they were sealed with") {
		t.Errorf("another secret: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a refused open changed the store file")
	}
	// Without a secret (the offline organization commands) the store
	// opens but cannot unseal.
	st, err = boltstore.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Credentials().Secret(t.Context(), org.ID, cred.CredentialID); err == nil || !strings.Contains(err.Error(), "no secret") {
		t.Errorf("unsealing without a secret: %v", err)
	}
	st.Close()
	st, err = boltstore.Open(path, store.Options{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, data, err := st.Credentials().Secret(t.Context(), org.ID, cred.CredentialID); err != nil || string(data) != `{"secret_value":"v"}` {
		t.Errorf("the right secret: %q %v", data, err)
	}
}

// isStatus reports whether err is an API error with that status whose
// text holds want.
func isStatus(err error, status int, want string) bool {
	var apiErr *client.Error
	return errors.As(err, &apiErr) && apiErr.StatusCode == status && strings.Contains(err.Error(), want)
}

// locJSON is a dotted loc as it appears in a 422 body: "body.credential"
// is "loc":["body","credential"].
func locJSON(dotted string) string {
	parts := strings.Split(dotted, ".")
	b, _ := json.Marshal(parts)
	return `"loc":` + string(b)
}

// TestProfilesAndSessionsAreTheirOrganizations: another organization's
// browser profile, browser session or agent answers 404 on every route, and
// its lists show none of them.
func TestProfilesAndSessionsAreTheirOrganizations(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	profile, err := e.a.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "Billing"})
	if err != nil {
		t.Fatal(err)
	}
	running := store.SessionRunning
	session := &client.BrowserSession{BrowserSessionID: e.store.BrowserSessions().NewID(), Status: &running}
	if err := e.store.BrowserSessions().Create(ctx, e.orgA, session); err != nil {
		t.Fatal(err)
	}
	agent, err := e.a.Agents.Create(ctx, definition("Billing"), nil)
	if err != nil {
		t.Fatal(err)
	}
	pid, sid := profile.BrowserProfileID, session.BrowserSessionID
	for name, call := range map[string]func() error{
		"get profile": func() error { _, err := e.b.BrowserProfiles.Get(ctx, pid); return err },
		"update profile": func() error {
			_, err := e.b.BrowserProfiles.Update(ctx, pid, &client.BrowserProfileUpdateRequest{Name: client.Ptr("x")})
			return err
		},
		"delete profile": func() error { return e.b.BrowserProfiles.Delete(ctx, pid) },
		"get session":    func() error { _, err := e.b.BrowserSessions.Get(ctx, sid); return err },
		"update session": func() error { _, err := e.b.BrowserSessions.SetGenerateProfile(ctx, sid, true); return err },
		"close session":  func() error { return e.b.BrowserSessions.Close(ctx, sid) },
		"reset profile":  func() error { return e.b.Agents.ResetProfile(ctx, agent.WorkflowPermanentID) },
	} {
		if err := call(); !isStatus(err, 404, "not found") {
			t.Errorf("organization B's %s of A's: %v", name, err)
		}
	}
	if ps, err := e.b.BrowserProfiles.List(ctx, nil); err != nil || len(ps) != 0 {
		t.Errorf("B lists profiles %v %v", ps, err)
	}
	if ss, err := e.b.BrowserSessions.List(ctx); err != nil || len(ss) != 0 {
		t.Errorf("B lists sessions %v %v", ss, err)
	}
	// A's own are there, untouched.
	if got, err := e.a.BrowserSessions.Get(ctx, sid); err != nil || *got.Status != store.SessionRunning {
		t.Errorf("A's session: %+v %v", got, err)
	}
	if got, err := e.a.BrowserProfiles.Get(ctx, pid); err != nil || got.Name != "Billing" {
		t.Errorf("A's profile: %+v %v", got, err)
	}
}

// TestGivenSecret: a daemon given its secret (as the environment gives it)
// keeps no secret file, seals its credentials with it, and refuses to start
// on the same data directory with another secret, saying so.
func TestGivenSecret(t *testing.T) {
	dir := t.TempDir()
	secret := bytes.Repeat([]byte{0x5a}, store.SecretSize)
	const key = "abk_given_secret_test_key_0123456789"
	addr, stop := daemontest.Start(t, dir, daemon.Config{APIKey: key, Secret: secret})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Credentials.Create(t.Context(), &client.CredentialRequest{Name: "n", Credential: &client.SecretCredential{SecretValue: leakSecret}}); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, datadir.SecretFileName)); !os.IsNotExist(err) {
		t.Errorf("a secret file was written beside a given secret: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err = daemon.Run(ctx, daemon.Config{DataDir: dir, Addr: "127.0.0.1:0", Secret: bytes.Repeat([]byte{0x11}, store.SecretSize),
		Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "not the secret they were sealed with") {
		t.Errorf("another secret: %v", err)
	}
	if err := daemon.Run(ctx, daemon.Config{DataDir: dir, Addr: "127.0.0.1:0", Secret: []byte("short"), Stderr: io.Discard}); err == nil || !strings.Contains(err.Error(), "must be 32") {
		t.Errorf("a short secret: %v", err)
	}
}
