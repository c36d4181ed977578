package boltstore

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon/store"
)

func TestCreateOrganization(t *testing.T) {
	f := newFixture(t)
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

func TestAuthenticateUnknown(t *testing.T) {
	f := newFixture(t)
	for _, key := range []string{"", "abk_nope", f.key + "x", strings.ToUpper(f.key)} {
		if _, err := f.Authenticate(ctx, key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Authenticate(%q): %v", key, err)
		}
	}
}

// TestAPIKeysStoredHashed: the key itself never reaches the file.
func TestAPIKeysStoredHashed(t *testing.T) {
	f := newFixture(t)
	const given = "given-key-0123456789-abcdefghijklmnop"
	if err := f.AddAPIKey(ctx, f.org.ID, given); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{f.key, strings.TrimPrefix(f.key, "abk_"), given} {
		if bytes.Contains(data, []byte(k)) {
			t.Errorf("the file contains the key %q", k)
		}
	}
	f.reopen2()
	if _, err := f.Authenticate(ctx, given); err != nil {
		t.Fatal(err)
	}
}

// reopen2 opens the file again after the test closed it itself.
func (f *fixture) reopen2() {
	f.t.Helper()
	s, err := Open(f.path, store.Options{Now: f.clock.Now})
	if err != nil {
		f.t.Fatal(err)
	}
	f.Store = s
}

func TestAddAPIKey(t *testing.T) {
	f := newFixture(t)
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

func TestOrganizationsOrder(t *testing.T) {
	f := newFixture(t)
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

func TestDefaultOrganizationNone(t *testing.T) {
	s, err := Open(t.TempDir()+"/abctl.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.DefaultOrganization(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DefaultOrganization on an empty store: %v", err)
	}
	orgs, err := s.Organizations(ctx)
	if err != nil || orgs == nil || len(orgs) != 0 {
		t.Fatalf("Organizations = %#v, %v", orgs, err)
	}
}

func TestCompareIDs(t *testing.T) {
	if compareIDs("o_9", "o_10") >= 0 || compareIDs("o_10", "o_9") <= 0 || compareIDs("o_5", "o_5") != 0 {
		t.Fatal("compareIDs is not numeric")
	}
}

// OrganizationCount follows creations and survives a reopen.
func TestOrganizationCount(t *testing.T) {
	f := newFixture(t)
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
