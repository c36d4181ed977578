package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/pgstore"
	"github.com/abctl/abctl/localrun/executor"
)

// clock starts at a fixed time and moves 1ms at every reading, so that
// every record has its own time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 31, 15, 20, 42, 160725000, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

var testSecret = bytes.Repeat([]byte{5}, store.SecretSize)

// twoDaemons opens two stores on one new database with one secret and
// clock, as two daemons sharing it, and makes an organization.
func twoDaemons(t *testing.T) (a, b *pgstore.Store, org store.Organization) {
	t.Helper()
	url := newDatabase(t)
	c := newClock()
	a = open(t, url, store.Options{Secret: testSecret, Now: c.Now})
	b = open(t, url, store.Options{Secret: testSecret, Now: c.Now})
	org, _, err := a.CreateOrganization(t.Context(), "test")
	if err != nil {
		t.Fatal(err)
	}
	return a, b, org
}

func ptr[T any](v T) *T { return &v }

// wantNotFound checks that err is a NotFoundError of record r and id.
func wantNotFound(t *testing.T, what string, err error, r store.Record, id string) {
	t.Helper()
	var nf *store.NotFoundError
	if !errors.As(err, &nf) || nf.Record != r || nf.ID != id {
		t.Errorf("%s: %v, want %s %s not found", what, err, r, id)
	}
}

// TestCredentials: credentials are sealed, listed newest first with
// filters and pages, kept apart by organization, and never reachable
// through another organization's id.
func TestCredentials(t *testing.T) {
	st, _, org := twoDaemons(t)
	ctx := t.Context()
	other, _, _ := st.CreateOrganization(ctx, "other")
	c := st.Credentials()
	secret := []byte(`{"password":"hunter2-p4ss","totp":"JBSWY3DPEHPK3PXP"}`)
	pw, err := c.Create(ctx, org.ID, &store.CredentialInput{Name: "Billing portal", Type: client.CredentialTypePassword,
		Info: client.CredentialInfo{Username: "Ada@Example.com"}, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	card, err := c.Create(ctx, org.ID, &store.CredentialInput{Name: "Company card", Type: client.CredentialTypeCreditCard,
		Info: client.CredentialInfo{LastFour: "4242", Brand: "visa"}, Secret: []byte(`{"number":"4242424242424242"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if pw.VaultType == nil || pw.Credential.Username != "Ada@Example.com" || !strings.HasPrefix(pw.CredentialID, "cred_") {
		t.Errorf("created %+v", pw)
	}
	var raw []byte
	if err := st.Pool().QueryRow(ctx, `SELECT doc FROM credentials WHERE id = $1`, pw.CredentialID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("hunter2")) {
		t.Errorf("the stored credential holds its secret in clear: %s", raw)
	}
	typ, got, err := c.Secret(ctx, org.ID, pw.CredentialID)
	if err != nil || typ != client.CredentialTypePassword || !bytes.Equal(got, secret) {
		t.Errorf("Secret = %s %s %v", typ, got, err)
	}
	// The sealed value is bound to its record: copied to another, it does
	// not open.
	if _, err := st.Pool().Exec(ctx, `UPDATE credentials SET doc = $1 WHERE id = $2`,
		bytes.Replace(raw, []byte(pw.CredentialID), []byte(card.CredentialID), 1), card.CredentialID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Secret(ctx, org.ID, card.CredentialID); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a moved secret opens: %v", err)
	}

	list, err := c.List(ctx, org.ID, store.CredentialQuery{Page: 1, PageSize: 10})
	if err != nil || len(list) != 2 || list[0].CredentialID != card.CredentialID || list[1].CredentialID != pw.CredentialID {
		t.Errorf("list %+v %v", list, err)
	}
	for _, tc := range []struct {
		q    store.CredentialQuery
		want []string
	}{
		{store.CredentialQuery{Page: 1, PageSize: 10, Search: "ada@"}, []string{pw.CredentialID}},
		{store.CredentialQuery{Page: 1, PageSize: 10, Search: "COMPANY"}, []string{card.CredentialID}},
		{store.CredentialQuery{Page: 1, PageSize: 10, Search: "%"}, nil},
		{store.CredentialQuery{Page: 1, PageSize: 10, Type: client.CredentialTypePassword}, []string{pw.CredentialID}},
		{store.CredentialQuery{Page: 2, PageSize: 1}, []string{pw.CredentialID}},
		{store.CredentialQuery{Page: 3, PageSize: 1}, nil},
		{store.CredentialQuery{Page: 1 << 60, PageSize: 1 << 40}, nil},
		{store.CredentialQuery{}, []string{card.CredentialID}},
	} {
		list, err := c.List(ctx, org.ID, tc.q)
		var ids []string
		for _, cr := range list {
			ids = append(ids, cr.CredentialID)
		}
		if err != nil || list == nil || !slices.Equal(ids, tc.want) {
			t.Errorf("list %+v = %v %v, want %v", tc.q, ids, err, tc.want)
		}
	}

	if _, err := c.Update(ctx, org.ID, pw.CredentialID, &store.CredentialInput{Name: "x", Type: client.CredentialTypeSecret}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a change of type: %v", err)
	}
	up, err := c.Update(ctx, org.ID, pw.CredentialID, &store.CredentialInput{Name: "Renamed", Type: client.CredentialTypePassword, Secret: []byte(`{"password":"new"}`)})
	if err != nil || up.Name != "Renamed" {
		t.Fatalf("update %+v %v", up, err)
	}
	if _, got, _ := c.Secret(ctx, org.ID, pw.CredentialID); string(got) != `{"password":"new"}` {
		t.Errorf("the updated secret %s", got)
	}

	for name, call := range map[string]func() error{
		"get":    func() error { _, err := c.Get(ctx, other.ID, pw.CredentialID); return err },
		"secret": func() error { _, _, err := c.Secret(ctx, other.ID, pw.CredentialID); return err },
		"update": func() error {
			_, err := c.Update(ctx, other.ID, pw.CredentialID, &store.CredentialInput{Type: client.CredentialTypePassword})
			return err
		},
		"delete": func() error { return c.Delete(ctx, other.ID, pw.CredentialID) },
	} {
		wantNotFound(t, "another organization's "+name, call(), store.RecordCredential, pw.CredentialID)
	}
	wantNotFound(t, "a bad id", func() error { _, err := c.Get(ctx, org.ID, "bad\x00id"); return err }(), store.RecordCredential, "bad\x00id")
	wantNotFound(t, "an unknown organization", func() error { _, err := c.Get(ctx, "o_404", pw.CredentialID); return err }(), store.RecordOrganization, "o_404")
	wantNotFound(t, "the list of an unknown organization", func() error { _, err := c.List(ctx, "o_404", store.CredentialQuery{}); return err }(), store.RecordOrganization, "o_404")
	wantNotFound(t, "create in an unknown organization", func() error {
		_, err := c.Create(ctx, "o_404", &store.CredentialInput{Type: client.CredentialTypePassword})
		return err
	}(), store.RecordOrganization, "o_404")

	if err := c.Delete(ctx, org.ID, pw.CredentialID); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "deleted", func() error { _, err := c.Get(ctx, org.ID, pw.CredentialID); return err }(), store.RecordCredential, pw.CredentialID)

	plain := open(t, newDatabase(t), store.Options{})
	o, _, _ := plain.CreateOrganization(ctx, "o")
	if _, err := plain.Credentials().Create(ctx, o.ID, &store.CredentialInput{Type: client.CredentialTypePassword}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a credential without a secret: %v", err)
	}
}

// TestTOTPCodes: a pushed code is taken once, newest first, only by the
// run it admits, and expired codes go.
func TestTOTPCodes(t *testing.T) {
	st, _, org := twoDaemons(t)
	ctx := t.Context()
	c := st.Credentials()
	base := time.Date(2026, 1, 31, 15, 0, 0, 0, time.UTC)
	put := func(id string, created time.Time, expires time.Duration, run *string) {
		t.Helper()
		exp := client.NewTime(created.Add(expires))
		code := &client.TOTPCode{TOTPIdentifier: "ada@example.com", TOTPCodeID: id, Code: "code-" + id,
			CreatedAt: client.NewTime(created), ExpiredAt: &exp, WorkflowRunID: run}
		if err := c.PutTOTPCode(ctx, org.ID, code); err != nil {
			t.Fatal(err)
		}
	}
	// The store's clock reads 2026-01-31 15:20:42: codes expiring before
	// are dropped.
	put("totp_old", base.Add(-time.Hour), time.Minute, nil) // dropped by the next put
	put("totp_1", base, time.Hour, nil)
	put("totp_2", base.Add(time.Minute), time.Hour, ptr("wr_other"))
	put("totp_3", base.Add(2*time.Minute), time.Hour, nil)
	var n int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM totp_codes`).Scan(&n); err != nil || n != 3 {
		t.Errorf("%d codes stored (%v), want 3: the expired one dropped", n, err)
	}
	f := executor.CodeFilter{Since: base, RunID: "wr_mine"}
	var taken []string
	for range 4 {
		code, err := c.TakeTOTPCode(ctx, org.ID, "ada@example.com", f)
		if err != nil {
			t.Fatal(err)
		}
		if code != nil {
			taken = append(taken, code.TOTPCodeID)
		}
	}
	if !slices.Equal(taken, []string{"totp_3", "totp_1"}) {
		t.Errorf("taken %v, want totp_3 then totp_1 (totp_2 is another run's)", taken)
	}
	if code, err := c.TakeTOTPCode(ctx, org.ID, "ada@example.com", executor.CodeFilter{RunID: "wr_other"}); err != nil || code == nil || code.TOTPCodeID != "totp_2" {
		t.Errorf("the other run takes %+v %v", code, err)
	}
	if err := c.PutTOTPCode(ctx, org.ID, &client.TOTPCode{TOTPIdentifier: "a\x00b"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("an identifier with NUL: %v", err)
	}
	if code, err := c.TakeTOTPCode(ctx, org.ID, "a\x00b", f); code != nil || err != nil {
		t.Errorf("take with a NUL identifier: %v %v", code, err)
	}
	wantNotFound(t, "take in an unknown organization", func() error {
		_, err := c.TakeTOTPCode(ctx, "o_404", "x", f)
		return err
	}(), store.RecordOrganization, "o_404")
}

// TestTOTPCodeTakenOnceByTwoDaemons: daemons that take the codes of one
// identifier at the same time each get a different code, and every code
// goes to exactly one of them.
func TestTOTPCodeTakenOnceByTwoDaemons(t *testing.T) {
	a, b, org := twoDaemons(t)
	ctx := t.Context()
	created := time.Date(2026, 1, 31, 15, 0, 0, 0, time.UTC)
	const codes = 10
	for i := range codes {
		exp := client.NewTime(created.Add(24 * time.Hour))
		code := &client.TOTPCode{TOTPIdentifier: "shared", TOTPCodeID: fmt.Sprintf("totp_%02d", i), Code: fmt.Sprint(i),
			CreatedAt: client.NewTime(created.Add(time.Duration(i) * time.Second)), ExpiredAt: &exp}
		if err := a.Credentials().PutTOTPCode(ctx, org.ID, code); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for i := range 2 * codes {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, err := st.Credentials().TakeTOTPCode(ctx, org.ID, "shared", executor.CodeFilter{})
			if err != nil {
				t.Error(err)
				return
			}
			if code != nil {
				mu.Lock()
				seen[code.TOTPCodeID]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != codes {
		t.Errorf("%d codes taken, want %d: %v", len(seen), codes, seen)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("code %s taken %d times", id, n)
		}
	}
}

// TestCustomLLMs: as storetest's CustomLLMs: keys sealed, models newest
// first, organizations apart, keys kept, replaced and removed.
func TestCustomLLMs(t *testing.T) {
	const key = "sk-custom-0123456789-abcdef"
	st, b, org := twoDaemons(t)
	ctx := t.Context()
	other, _, _ := st.CreateOrganization(ctx, "other")
	c := st.CustomLLMs()
	base := "http://127.0.0.1:8000/v1"
	cfg := client.CustomLLMConfig{DisplayName: "Local Qwen", Provider: client.CustomLLMProviderOpenAICompatible, ModelName: "qwen2.5",
		APIBase: &base, APIKey: ptr("ignored")}
	first, err := c.Create(ctx, org.ID, c.NewID(), &store.CustomLLMInput{Config: cfg, Key: ptr(key), Valid: true})
	if err != nil {
		t.Fatal(err)
	}
	if first.Config.APIKey != nil || first.OrganizationID != org.ID || !first.Valid {
		t.Errorf("created %+v", first)
	}
	var raw []byte
	if err := st.Pool().QueryRow(ctx, `SELECT doc FROM custom_llms WHERE id = $1`, first.ID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(key)) || bytes.Contains(raw, []byte("ignored")) {
		t.Errorf("the stored model holds its key: %s", raw)
	}
	second, err := c.Create(ctx, org.ID, c.NewID(), &store.CustomLLMInput{Config: client.CustomLLMConfig{DisplayName: "Ollama", Provider: client.CustomLLMProviderOllama, ModelName: "llama3"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, org.ID, first.ID, &store.CustomLLMInput{Config: cfg}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("create under a taken id: %v", err)
	}
	if _, err := c.Create(ctx, org.ID, "cred_1", &store.CustomLLMInput{Config: cfg}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("create under another kind's id: %v", err)
	}
	list, err := b.CustomLLMs().List(ctx, org.ID)
	if err != nil || len(list) != 2 || list[0].ID != second.ID || list[1].ID != first.ID {
		t.Fatalf("list %+v %v", list, err)
	}
	ms, err := b.CustomLLMs().Models(ctx, org.ID)
	if err != nil || len(ms) != 2 || ms[1].APIKey != key || ms[0].APIKey != "" || ms[1].APIBase != base || !ms[1].Vision {
		t.Fatalf("models %v %v", ms, err)
	}
	if ms, err := c.Models(ctx, other.ID); err != nil || len(ms) != 0 {
		t.Errorf("another organization's models %v %v", ms, err)
	}
	if list, err := c.List(ctx, other.ID); err != nil || list == nil || len(list) != 0 {
		t.Errorf("another organization's list %v %v", list, err)
	}
	for name, call := range map[string]func() error{
		"get":   func() error { _, err := c.Get(ctx, other.ID, first.ID); return err },
		"model": func() error { _, err := c.Model(ctx, other.ID, first.ID); return err },
		"update": func() error {
			_, err := c.Update(ctx, other.ID, first.ID, &store.CustomLLMInput{Config: cfg})
			return err
		},
		"delete": func() error { return c.Delete(ctx, other.ID, first.ID) },
	} {
		wantNotFound(t, "another organization's "+name, call(), store.RecordCustomLLM, first.ID)
	}
	no := false
	cfg.SupportsVision = &no
	if _, err := c.Update(ctx, org.ID, first.ID, &store.CustomLLMInput{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Model(ctx, org.ID, first.ID); err != nil || m.APIKey != key || m.Vision {
		t.Errorf("after an update without a key: %v %v", m, err)
	}
	if _, err := c.Update(ctx, org.ID, first.ID, &store.CustomLLMInput{Config: cfg, Key: ptr("")}); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Model(ctx, org.ID, first.ID); m.APIKey != "" {
		t.Errorf("a removed key reads %q", m.APIKey)
	}
	if err := c.Delete(ctx, org.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	if ms, _ := c.Models(ctx, org.ID); len(ms) != 1 || ms[0].ID != second.ID {
		t.Errorf("models after delete %v", ms)
	}
	wantNotFound(t, "an unknown organization", func() error { _, err := c.List(ctx, "o_404"); return err }(), store.RecordOrganization, "o_404")
}

// TestProfilesAndKeptStates: as storetest's ProfilesAndKeptStates, and the
// kept states of sessions.
func TestProfilesAndKeptStates(t *testing.T) {
	st, b, org := twoDaemons(t)
	ctx := t.Context()
	other, _, _ := st.CreateOrganization(ctx, "other")
	state := []byte(`{"cookies":[{"name":"sid","value":"c00kie-v4lue-0123"}],"origins":[]}`)
	p := st.Profiles()
	if err := p.KeepRunState(ctx, org.ID, "wr_1", "wpid_1", state); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Profiles().RunState(ctx, org.ID, "wr_1"); err != nil || !bytes.Equal(got, state) {
		t.Errorf("the run's state %s %v", got, err)
	}
	if got, err := p.AgentState(ctx, org.ID, "wpid_1"); err != nil || !bytes.Equal(got, state) {
		t.Errorf("the agent's state %s %v", got, err)
	}
	if got, err := p.RunState(ctx, other.ID, "wr_1"); err != nil || got != nil {
		t.Errorf("another organization reads %s %v", got, err)
	}
	if err := p.KeepSessionState(ctx, org.ID, "pbs_1", state); err != nil {
		t.Fatal(err)
	}
	if got, err := p.SessionState(ctx, org.ID, "pbs_1"); err != nil || !bytes.Equal(got, state) {
		t.Errorf("the session's state %s %v", got, err)
	}
	if got, err := p.SessionState(ctx, org.ID, "pbs\x00odd"); err != nil || got != nil {
		t.Errorf("an odd session id: %s %v", got, err)
	}
	// A state is bound to its owner: the run's copied to the agent's place
	// does not open.
	if _, err := st.Pool().Exec(ctx, `UPDATE browser_states SET sealed = (SELECT sealed FROM browser_states WHERE key = $1) WHERE key = $2`,
		[]byte("r\x00wr_1"), []byte("a\x00wpid_1")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AgentState(ctx, org.ID, "wpid_1"); err == nil || strings.Contains(err.Error(), "c00kie") {
		t.Errorf("a moved state opens: %v", err)
	}

	full, err := p.Create(ctx, org.ID, "Billing", "signed in", state, "wpid_1")
	if err != nil {
		t.Fatal(err)
	}
	empty, err := p.Create(ctx, org.ID, "Blank", "", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.State(ctx, org.ID, full.BrowserProfileID); err != nil || !bytes.Equal(got, state) {
		t.Errorf("the profile's state %s %v", got, err)
	}
	if got, err := p.State(ctx, org.ID, empty.BrowserProfileID); got != nil || err != nil {
		t.Errorf("an empty profile's state %s %v", got, err)
	}
	wantNotFound(t, "another organization's profile", func() error { _, err := p.Get(ctx, other.ID, full.BrowserProfileID); return err }(), store.RecordProfile, full.BrowserProfileID)
	list, _ := p.List(ctx, org.ID, store.ProfileQuery{PageSize: 10})
	if len(list) != 2 || list[0].Name != "Blank" || list[1].Name != "Billing" {
		t.Errorf("list %v", list)
	}
	if found, _ := p.List(ctx, org.ID, store.ProfileQuery{PageSize: 10, Search: "SIGNED"}); len(found) != 1 || found[0].Name != "Billing" {
		t.Errorf("search by description %v", found)
	}
	if page, err := p.List(ctx, org.ID, store.ProfileQuery{Page: 1 << 60, PageSize: 1 << 40}); err != nil || page == nil || len(page) != 0 {
		t.Errorf("a page past the end %v %v", page, err)
	}
	up, err := p.Update(ctx, org.ID, empty.BrowserProfileID, ptr("Renamed"), ptr(""))
	if err != nil || up.Name != "Renamed" || up.Description != nil {
		t.Errorf("update %+v %v", up, err)
	}
	if err := p.Delete(ctx, org.ID, full.BrowserProfileID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.State(ctx, org.ID, full.BrowserProfileID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted profile's state %v", err)
	}
	if err := p.Delete(ctx, org.ID, full.BrowserProfileID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a second delete %v", err)
	}
	if all, _ := p.List(ctx, org.ID, store.ProfileQuery{PageSize: 10, IncludeDeleted: true}); len(all) != 2 || all[1].DeletedAt == nil {
		t.Errorf("include_deleted %v", all)
	}
	if live, _ := p.List(ctx, org.ID, store.ProfileQuery{PageSize: 10}); len(live) != 1 || live[0].Name != "Renamed" {
		t.Errorf("without the deleted %v", live)
	}
	if err := p.ResetAgentState(ctx, org.ID, "wpid_1"); err != nil {
		t.Fatal(err)
	}
	if got, err := p.AgentState(ctx, org.ID, "wpid_1"); got != nil || err != nil {
		t.Errorf("after reset the agent starts from %s %v", got, err)
	}
	wantNotFound(t, "an unknown organization", func() error { _, err := p.RunState(ctx, "o_404", "wr_1"); return err }(), store.RecordOrganization, "o_404")
}

// TestBrowserSessions: records made, listed newest first, changed one
// daemon after the other under the row's lock, and ended when open.
func TestBrowserSessions(t *testing.T) {
	a, b, org := twoDaemons(t)
	ctx := t.Context()
	other, _, _ := a.CreateOrganization(ctx, "other")
	s := a.BrowserSessions()
	first := &client.BrowserSession{BrowserSessionID: s.NewID(), Status: ptr(store.SessionRunning)}
	second := &client.BrowserSession{BrowserSessionID: s.NewID(), Status: ptr(store.SessionRunning)}
	inOther := &client.BrowserSession{BrowserSessionID: s.NewID(), Status: ptr(store.SessionRunning)}
	for _, c := range []struct {
		org string
		bs  *client.BrowserSession
	}{{org.ID, first}, {org.ID, second}, {other.ID, inOther}} {
		if err := s.Create(ctx, c.org, c.bs); err != nil {
			t.Fatal(err)
		}
	}
	if first.OrganizationID != org.ID || first.CreatedAt.IsZero() {
		t.Errorf("created %+v", first)
	}
	list, err := b.BrowserSessions().List(ctx, org.ID)
	if err != nil || len(list) != 2 || list[0].BrowserSessionID != second.BrowserSessionID {
		t.Errorf("list %+v %v", list, err)
	}
	wantNotFound(t, "another organization's", func() error { _, err := s.Get(ctx, other.ID, first.BrowserSessionID); return err }(), store.RecordSession, first.BrowserSessionID)

	// Two daemons add to one session's timeout at once: every change
	// lands.
	var wg sync.WaitGroup
	for i := range 20 {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.BrowserSessions().Update(ctx, org.ID, first.BrowserSessionID, func(bs *client.BrowserSession) error {
				n := 0
				if bs.Timeout != nil {
					n = *bs.Timeout
				}
				bs.Timeout = ptr(n + 1)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := s.Get(ctx, org.ID, first.BrowserSessionID)
	if err != nil || got.Timeout == nil || *got.Timeout != 20 {
		t.Errorf("after 20 concurrent updates: %+v %v", got, err)
	}
	same, err := s.Update(ctx, org.ID, first.BrowserSessionID, func(*client.BrowserSession) error { return store.ErrUnchanged })
	if err != nil || !same.ModifiedAt.Equal(got.ModifiedAt.Time) {
		t.Errorf("an unchanged update %+v %v", same, err)
	}
	boom := errors.New("boom")
	if _, err := s.Update(ctx, org.ID, first.BrowserSessionID, func(*client.BrowserSession) error { return boom }); err != boom {
		t.Errorf("the change's error: %v", err)
	}
	if _, err := s.Update(ctx, org.ID, second.BrowserSessionID, func(bs *client.BrowserSession) error {
		bs.Status = ptr(store.SessionClosed)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n, err := b.BrowserSessions().EndOpen(ctx, store.SessionEndedByRestart)
	if err != nil || n != 2 {
		t.Errorf("EndOpen = %d %v, want 2 (one per organization)", n, err)
	}
	if got, _ := s.Get(ctx, other.ID, inOther.BrowserSessionID); *got.Status != store.SessionEndedByRestart || got.CompletedAt == nil {
		t.Errorf("ended %+v", got)
	}
	if got, _ := s.Get(ctx, org.ID, second.BrowserSessionID); *got.Status != store.SessionClosed {
		t.Errorf("a closed session changed: %+v", got)
	}
	if n, err := s.EndOpen(ctx, store.SessionEndedByRestart); err != nil || n != 0 {
		t.Errorf("EndOpen again = %d %v", n, err)
	}
	wantNotFound(t, "an unknown organization", func() error { _, err := s.List(ctx, "o_404"); return err }(), store.RecordOrganization, "o_404")
}

// TestUploads: as storetest's Uploads.
func TestUploads(t *testing.T) {
	st, b, org := twoDaemons(t)
	ctx := t.Context()
	other, _, _ := st.CreateOrganization(ctx, "other")
	up := &store.Upload{ID: "a_1", Dir: st.Uploads().NewDir(), Name: "invoices.csv", Size: 42, SHA256: "ab"}
	if err := st.Uploads().Create(ctx, org.ID, up); err != nil {
		t.Fatal(err)
	}
	if up.CreatedAt.IsZero() || !strings.HasPrefix(up.Dir, store.PrefixUploadDir+"_") {
		t.Errorf("created %+v", up)
	}
	got, err := b.Uploads().Get(ctx, org.ID, "a_1")
	if err != nil || *got != *up {
		t.Fatalf("get %+v %v", got, err)
	}
	var raw []byte
	if err := st.Pool().QueryRow(ctx, `SELECT doc FROM uploads`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(up); !bytes.Equal(raw, want) {
		t.Errorf("stored %s, want %s", raw, want)
	}
	for _, tc := range []struct{ org, id string }{{other.ID, "a_1"}, {org.ID, "a_2"}, {org.ID, ""}, {org.ID, "a\x00"}} {
		_, err := st.Uploads().Get(ctx, tc.org, tc.id)
		wantNotFound(t, "get "+tc.id, err, store.RecordArtifact, tc.id)
	}
	if err := st.Uploads().Create(ctx, org.ID, &store.Upload{ID: ""}); err == nil {
		t.Error("an upload without an id was stored")
	}
	if err := st.Uploads().Create(ctx, "o_404", &store.Upload{ID: "a_3"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an upload of an unknown organization: %v", err)
	}
}

// TestScriptsOfNoAgent: scripts, their versions, pages and organizations,
// with scripts that belong to no agent (those of agents need pg1's
// agents: see TestScriptsOfAgents).
func TestScriptsOfNoAgent(t *testing.T) {
	st, b, org := twoDaemons(t)
	ctx := t.Context()
	other, _, _ := st.CreateOrganization(ctx, "other")
	sc := st.Scripts()
	file := func(note string) []byte { return []byte("format: abctl.script/v1\nnote: " + note + "\n") }
	first, err := sc.Create(ctx, org.ID, store.ScriptInput{RunID: "wr_1", Content: file("one")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.ScriptID, "s_") || !strings.HasPrefix(first.RevisionID, "sr_") || first.Version != 1 ||
		first.CacheKey != store.DefaultCacheKey || first.OrgID != org.ID || !first.ModifiedAt.Equal(first.CreatedAt.Time) {
		t.Fatalf("created %+v", first)
	}
	// Two daemons deploy to one script at once: every deploy gets its own
	// version number.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var versions []int
	for i := range 10 {
		s := st
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rev, err := s.Scripts().Deploy(ctx, org.ID, first.ScriptID, file(fmt.Sprint(i)), "")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			versions = append(versions, rev.Version)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(versions)
	if want := []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; !slices.Equal(versions, want) {
		t.Errorf("concurrent deploys made versions %v, want %v", versions, want)
	}
	latest, err := sc.Get(ctx, org.ID, first.ScriptID)
	if err != nil || latest.Version != 11 {
		t.Fatalf("get %+v %v", latest, err)
	}
	v1, err := b.Scripts().Version(ctx, org.ID, first.ScriptID, 1)
	if err != nil || !bytes.Equal(v1.Content, file("one")) || v1.RevisionID != first.RevisionID || v1.RunID != "wr_1" ||
		!v1.CreatedAt.Equal(first.CreatedAt.Time) || !v1.ModifiedAt.Equal(latest.CreatedAt.Time) {
		t.Fatalf("version 1 %+v %v", v1, err)
	}
	for _, v := range []int{12, -1, 1 << 40} {
		_, err := sc.Version(ctx, org.ID, first.ScriptID, v)
		var nf *store.NotFoundError
		if !errors.As(err, &nf) || nf.Version != v || !strings.Contains(err.Error(), fmt.Sprintf("version %d of script", v)) {
			t.Errorf("version %d: %v", v, err)
		}
	}
	wantNotFound(t, "an unknown script", func() error { _, err := sc.Get(ctx, org.ID, "s_404"); return err }(), store.RecordScript, "s_404")
	second, err := sc.Create(ctx, org.ID, store.ScriptInput{Content: file("two")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Create(ctx, org.ID, store.ScriptInput{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("create without content: %v", err)
	}
	ids := func(revs []*store.ScriptRevision) []string {
		out := []string{}
		for _, r := range revs {
			out = append(out, r.ScriptID)
		}
		return out
	}
	list, err := sc.List(ctx, org.ID, 1, 10, "")
	if want := []string{second.ScriptID, first.ScriptID}; err != nil || !slices.Equal(ids(list), want) || list[1].Version != 11 {
		t.Errorf("list %v %v, want %v", ids(list), err, want)
	}
	if list, _ := sc.List(ctx, org.ID, 2, 1, ""); !slices.Equal(ids(list), []string{first.ScriptID}) {
		t.Errorf("page 2 %v", ids(list))
	}
	if list, err := sc.List(ctx, org.ID, 1<<60, 1<<40, ""); err != nil || list == nil || len(list) != 0 {
		t.Errorf("a page far past the end %v %v", list, err)
	}
	if list, err := sc.List(ctx, org.ID, 1, 10, "wpid_404"); err != nil || len(list) != 0 {
		t.Errorf("list of an agent without scripts %v %v", list, err)
	}
	wantNotFound(t, "another organization's script", func() error { _, err := sc.Get(ctx, other.ID, first.ScriptID); return err }(), store.RecordScript, first.ScriptID)
	wantNotFound(t, "deploy to another organization's", func() error {
		_, err := sc.Deploy(ctx, other.ID, first.ScriptID, file("x"), "")
		return err
	}(), store.RecordScript, first.ScriptID)
	if list, err := sc.List(ctx, other.ID, 1, 10, ""); err != nil || len(list) != 0 {
		t.Errorf("another organization's list %v %v", list, err)
	}
	if _, err := sc.ForAgent(ctx, org.ID, "", ""); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "(cache key default)") {
		t.Errorf("the script of no agent: %v", err)
	}
	wantNotFound(t, "an unknown organization", func() error { _, err := sc.List(ctx, "o_404", 1, 10, ""); return err }(), store.RecordOrganization, "o_404")
}

// TestResourcesCanceled: a canceled context fails with context.Canceled.
func TestResourcesCanceled(t *testing.T) {
	st, _, org := twoDaemons(t)
	ctx, cancel := contextWithCancel(t)
	cancel()
	if _, err := st.Credentials().List(ctx, org.ID, store.CredentialQuery{}); !errors.Is(err, errCanceled) {
		t.Errorf("credentials: %v", err)
	}
	if _, err := st.Schedules().Enabled(ctx); !errors.Is(err, errCanceled) {
		t.Errorf("schedules: %v", err)
	}
	if err := st.Uploads().Create(ctx, org.ID, &store.Upload{ID: "a_1"}); !errors.Is(err, errCanceled) {
		t.Errorf("uploads: %v", err)
	}
}

var errCanceled = context.Canceled

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}
