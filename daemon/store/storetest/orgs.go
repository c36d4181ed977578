package storetest

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon/store"
)

func testCreateOrganization(t *testing.T, o opener) {
	f := newFixture(t, o)
	if !strings.HasPrefix(f.org.ID, "o_") || f.org.Name != "test" || f.org.CreatedAt.IsZero() {
		t.Fatalf("org %+v", f.org)
	}
	if !strings.HasPrefix(f.key, "abk_") {
		t.Fatalf("key %q", f.key)
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(f.key, "abk_"))
	if err != nil || len(raw) != 32 {
		t.Fatalf("key %q: %d bytes, %v", f.key, len(raw), err)
	}
	org, err := f.Authenticate(ctx, f.key)
	if err != nil || org != f.org {
		t.Fatalf("Authenticate: %+v, %v", org, err)
	}
	got, err := f.Organization(ctx, f.org.ID)
	if err != nil || got != f.org {
		t.Fatalf("Organization: %+v, %v", got, err)
	}
	if _, err := f.Organization(ctx, "o_1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Organization(unknown): %v", err)
	}
	// Two organizations get different keys.
	_, key2, err := f.CreateOrganization(ctx, "second")
	if err != nil || key2 == f.key {
		t.Fatalf("second key %q, %v", key2, err)
	}
}

func testAuthenticateUnknown(t *testing.T, o opener) {
	f := newFixture(t, o)
	for _, key := range []string{"", "abk_nope", f.key + "x", strings.ToUpper(f.key)} {
		if _, err := f.Authenticate(ctx, key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Authenticate(%q): %v", key, err)
		}
	}
}

// testAPIKeyKept: an added key authenticates after a reopen (that the
// key itself is not stored is each backend's own test: it reads what is
// stored).
func testAPIKeyKept(t *testing.T, o opener) {
	f := newFixture(t, o)
	const given = "given-key-0123456789-abcdefghijklmnop"
	if err := f.AddAPIKey(ctx, f.org.ID, given); err != nil {
		t.Fatal(err)
	}
	f.reopenWith(store.Options{Now: f.clock.Now})
	if org, err := f.Authenticate(ctx, given); err != nil || org != f.org {
		t.Fatalf("Authenticate after reopen: %+v, %v", org, err)
	}
}

func testAddAPIKey(t *testing.T, o opener) {
	f := newFixture(t, o)
	other := f.newOrg("other")
	if err := f.AddAPIKey(ctx, f.org.ID, "k1"); err != nil {
		t.Fatal(err)
	}
	// Idempotent on the same organization.
	if err := f.AddAPIKey(ctx, f.org.ID, "k1"); err != nil {
		t.Fatalf("second AddAPIKey: %v", err)
	}
	// The organization's first key still works alongside.
	for _, k := range []string{"k1", f.key} {
		if org, err := f.Authenticate(ctx, k); err != nil || org.ID != f.org.ID {
			t.Fatalf("Authenticate(%s): %+v, %v", k, org, err)
		}
	}
	// Another organization cannot take it.
	err := f.AddAPIKey(ctx, other.ID, "k1")
	wantErr(t, err, store.ErrConflict, other.ID)
	if org, _ := f.Authenticate(ctx, "k1"); org.ID != f.org.ID {
		t.Fatal("conflicting AddAPIKey moved the key")
	}
	if err := f.AddAPIKey(ctx, other.ID, "k2"); err != nil {
		t.Fatal(err)
	}
	if org, _ := f.Authenticate(ctx, "k2"); org.ID != other.ID {
		t.Fatalf("k2 authenticates as %s", org.ID)
	}
	wantErr(t, f.AddAPIKey(ctx, "o_404", "k3"), store.ErrNotFound, "o_404")
	if _, err := f.Authenticate(ctx, "k3"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("a key for an unknown organization was registered")
	}
	if err := f.AddAPIKey(ctx, f.org.ID, ""); err == nil {
		t.Fatal("empty key accepted")
	}
}

func testOrganizationsOrder(t *testing.T, o opener) {
	f := newFixture(t, o)
	b := f.newOrg("b")
	c := f.newOrg("c")
	orgs, err := f.Organizations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(orgs) != 3 || orgs[0] != f.org || orgs[1] != b || orgs[2] != c {
		t.Fatalf("Organizations = %+v", orgs)
	}
	def, err := f.DefaultOrganization(ctx)
	if err != nil || def != f.org {
		t.Fatalf("DefaultOrganization = %+v, %v", def, err)
	}
}

func testDefaultOrganizationNone(t *testing.T, o opener) {
	s := o.open(t, store.Options{})
	if _, err := s.DefaultOrganization(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DefaultOrganization on an empty store: %v", err)
	}
	orgs, err := s.Organizations(ctx)
	if err != nil || orgs == nil || len(orgs) != 0 {
		t.Fatalf("Organizations = %#v, %v", orgs, err)
	}
}

// testOrganizationCount: OrganizationCount follows creations and
// survives a reopen.
func testOrganizationCount(t *testing.T, o opener) {
	f := newFixture(t, o)
	if n := f.OrganizationCount(); n != 1 {
		t.Fatalf("count %d, want 1 (the fixture's)", n)
	}
	f.newOrg("second")
	f.newOrg("third")
	if n := f.OrganizationCount(); n != 3 {
		t.Fatalf("count %d, want 3", n)
	}
	f.reopen()
	if n := f.OrganizationCount(); n != 3 {
		t.Fatalf("count after reopen %d, want 3", n)
	}
}

// testSigningKeys: a store with a secret gives back the API keys it
// registered, by their SHA-256, to sign webhooks with; a store without a
// secret gives none; a key registered while the store had no secret is
// sealed the next time it is used with one.
func testSigningKeys(t *testing.T, o opener) {
	clock := newClock()
	s := o.open(t, store.Options{Now: clock.Now})
	_, plainKey, err := s.CreateOrganization(ctx, "plain")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SigningKey(ctx, sha256Sum(plainKey)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a store without a secret signs: %v", err)
	}

	opts := secretOpts(clock, 3)
	s = o.reopen(t, s, opts)
	if _, err := s.SigningKey(ctx, sha256Sum(plainKey)); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "next time the key is used") {
		t.Errorf("before the key is used: %v", err)
	}
	if _, err := s.Authenticate(ctx, plainKey); err != nil {
		t.Fatal(err)
	}
	if got, err := s.SigningKey(ctx, sha256Sum(plainKey)); err != nil || got != plainKey {
		t.Errorf("after the key was used: %v", err)
	}

	org, key, err := s.CreateOrganization(ctx, "sealed")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddAPIKey(ctx, org.ID, "extra-key"); err != nil {
		t.Fatal(err)
	}
	var nf *store.NotFoundError
	if err := s.AddAPIKey(ctx, "o_404", "k"); !errors.As(err, &nf) || nf.Record != store.RecordOrganization {
		t.Errorf("a key for no organization: %v", err)
	}
	s = o.reopen(t, s, opts)
	for _, k := range []string{key, "extra-key", plainKey} {
		if got, err := s.SigningKey(ctx, sha256Sum(k)); err != nil || got != k {
			t.Errorf("SigningKey of %q: %q, %v", k, got, err)
		}
	}
	if _, err := s.SigningKey(ctx, sha256Sum("never registered")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SigningKey of an unknown key: %v", err)
	}
}

func sha256Sum(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}
