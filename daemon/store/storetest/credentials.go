package storetest

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// testCredentials: credentials keep their secrets (sealed: that the
// stored bytes never hold one is each backend's own test), list newest
// first with filters and pages, are kept apart by organization and never
// reachable through another organization's id; a store without a secret
// refuses them.
func testCredentials(t *testing.T, o opener) {
	s := o.open(t, secretOpts(newClock(), 5))
	org, _, _ := s.CreateOrganization(ctx, "test")
	other, _, _ := s.CreateOrganization(ctx, "other")
	c := s.Credentials()
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
	typ, got, err := c.Secret(ctx, org.ID, pw.CredentialID)
	if err != nil || typ != client.CredentialTypePassword || !bytes.Equal(got, secret) {
		t.Errorf("Secret = %s %s %v", typ, got, err)
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
	_, err = c.Get(ctx, org.ID, "bad\x00id")
	wantNotFound(t, "a bad id", err, store.RecordCredential, "bad\x00id")
	_, err = c.Get(ctx, "o_404", pw.CredentialID)
	wantNotFound(t, "an unknown organization", err, store.RecordOrganization, "o_404")
	_, err = c.List(ctx, "o_404", store.CredentialQuery{})
	wantNotFound(t, "the list of an unknown organization", err, store.RecordOrganization, "o_404")
	_, err = c.Create(ctx, "o_404", &store.CredentialInput{Type: client.CredentialTypePassword})
	wantNotFound(t, "create in an unknown organization", err, store.RecordOrganization, "o_404")

	if err := c.Delete(ctx, org.ID, pw.CredentialID); err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(ctx, org.ID, pw.CredentialID)
	wantNotFound(t, "deleted", err, store.RecordCredential, pw.CredentialID)

	plain := o.open(t, store.Options{})
	p, _, _ := plain.CreateOrganization(ctx, "o")
	if _, err := plain.Credentials().Create(ctx, p.ID, &store.CredentialInput{Type: client.CredentialTypePassword}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a credential without a secret: %v", err)
	}
}

// testTOTPCodes: a pushed code is taken once, newest first, only by the
// run it admits; expired codes are never given.
func testTOTPCodes(t *testing.T, o opener) {
	f := newFixture(t, o) // its clock reads 2026-01-31 15:20:42
	c := f.Credentials()
	base := time.Date(2026, 1, 31, 15, 0, 0, 0, time.UTC)
	put := func(id string, created time.Time, expires time.Duration, run *string) {
		t.Helper()
		exp := client.NewTime(created.Add(expires))
		code := &client.TOTPCode{TOTPIdentifier: "ada@example.com", TOTPCodeID: id, Code: "code-" + id,
			CreatedAt: client.NewTime(created), ExpiredAt: &exp, WorkflowRunID: run}
		if err := c.PutTOTPCode(ctx, f.org.ID, code); err != nil {
			t.Fatal(err)
		}
	}
	put("totp_old", base.Add(-time.Hour), time.Minute, nil)
	put("totp_1", base, time.Hour, nil)
	put("totp_2", base.Add(time.Minute), time.Hour, ptr("wr_other"))
	put("totp_3", base.Add(2*time.Minute), time.Hour, nil)
	put("totp_expired", base.Add(3*time.Minute), time.Minute, nil) // expired by the store's clock
	filter := executor.CodeFilter{Since: base, RunID: "wr_mine"}
	var taken []string
	for range 4 {
		code, err := c.TakeTOTPCode(ctx, f.org.ID, "ada@example.com", filter)
		if err != nil {
			t.Fatal(err)
		}
		if code != nil {
			taken = append(taken, code.TOTPCodeID)
		}
	}
	if !slices.Equal(taken, []string{"totp_3", "totp_1"}) {
		t.Errorf("taken %v, want totp_3 then totp_1 (totp_2 is another run's, totp_expired expired)", taken)
	}
	if code, err := c.TakeTOTPCode(ctx, f.org.ID, "ada@example.com", executor.CodeFilter{RunID: "wr_other"}); err != nil || code == nil || code.TOTPCodeID != "totp_2" {
		t.Errorf("the other run takes %+v %v", code, err)
	}
	if code, err := c.TakeTOTPCode(ctx, f.newOrg("other").ID, "ada@example.com", executor.CodeFilter{}); err != nil || code != nil {
		t.Errorf("another organization takes %+v %v", code, err)
	}
	if err := c.PutTOTPCode(ctx, f.org.ID, &client.TOTPCode{TOTPIdentifier: "a\x00b"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("an identifier with NUL: %v", err)
	}
	if code, err := c.TakeTOTPCode(ctx, f.org.ID, "a\x00b", filter); code != nil || err != nil {
		t.Errorf("take with a NUL identifier: %v %v", code, err)
	}
	_, err := c.TakeTOTPCode(ctx, "o_404", "x", filter)
	wantNotFound(t, "take in an unknown organization", err, store.RecordOrganization, "o_404")
}
