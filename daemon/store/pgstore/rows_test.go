package pgstore_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/internal/jsonenc"
)

// What the tables hold: the tests that read rows (the conformance suite
// tests what the store answers).

// TestSealedValuesInTheRows: credentials, model keys and browser states
// are sealed: the rows never hold them, and a sealed value is bound to its
// record: copied to another, it does not open.
func TestSealedValuesInTheRows(t *testing.T) {
	st, _, org := twoDaemons(t)
	ctx := t.Context()

	c := st.Credentials()
	pw, err := c.Create(ctx, org.ID, &store.CredentialInput{Name: "Billing portal", Type: client.CredentialTypePassword,
		Secret: []byte(`{"password":"hunter2-p4ss"}`)})
	if err != nil {
		t.Fatal(err)
	}
	card, err := c.Create(ctx, org.ID, &store.CredentialInput{Name: "Company card", Type: client.CredentialTypeCreditCard,
		Secret: []byte(`{"number":"4242424242424242"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var raw []byte
	if err := st.Pool().QueryRow(ctx, `SELECT doc FROM credentials WHERE id = $1`, pw.CredentialID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("hunter2")) {
		t.Errorf("the stored credential holds its secret in clear: %s", raw)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE credentials SET doc = $1 WHERE id = $2`,
		bytes.Replace(raw, []byte(pw.CredentialID), []byte(card.CredentialID), 1), card.CredentialID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Secret(ctx, org.ID, card.CredentialID); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a moved secret opens: %v", err)
	}

	const key = "sk-custom-0123456789-abcdef"
	m := st.CustomLLMs()
	model, err := m.Create(ctx, org.ID, m.NewID(), &store.CustomLLMInput{Key: ptr(key), Config: client.CustomLLMConfig{DisplayName: "Local Qwen",
		Provider: client.CustomLLMProviderOpenAICompatible, ModelName: "qwen2.5", APIKey: ptr("ignored")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Pool().QueryRow(ctx, `SELECT doc FROM custom_llms WHERE id = $1`, model.ID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(key)) || bytes.Contains(raw, []byte("ignored")) {
		t.Errorf("the stored model holds its key: %s", raw)
	}

	p := st.Profiles()
	state := []byte(`{"cookies":[{"name":"sid","value":"c00kie-v4lue-0123"}],"origins":[]}`)
	if err := p.KeepRunState(ctx, org.ID, "wr_1", "wpid_1", state); err != nil {
		t.Fatal(err)
	}
	var found bool
	if err := st.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM browser_states WHERE position('c00kie'::bytea IN sealed) > 0)`).Scan(&found); err != nil || found {
		t.Errorf("a stored browser state holds a cookie in clear (%v)", err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE browser_states SET sealed = (SELECT sealed FROM browser_states WHERE key = $1) WHERE key = $2`,
		[]byte("r\x00wr_1"), []byte("a\x00wpid_1")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AgentState(ctx, org.ID, "wpid_1"); err == nil || strings.Contains(err.Error(), "c00kie") {
		t.Errorf("a moved state opens: %v", err)
	}
}

// TestDocumentsAsBboltStoresThem: the bytes of a run's record and an
// upload's document are the bbolt store's: encoded without HTML escaping.
func TestDocumentsAsBboltStoresThem(t *testing.T) {
	f := newRunFixture(t)
	ctx := t.Context()
	rec := f.newRun(client.RunTypeTaskV2, func(r *store.RunRecord) { r.Status = client.RunStatusQueued })
	var stored []byte
	if err := f.st.Pool().QueryRow(ctx, `SELECT record FROM runs WHERE id = $1`, rec.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if want, _ := jsonenc.Marshal(rec); !bytes.Equal(stored, want) || !bytes.Contains(stored, []byte(`<the> price &`)) {
		t.Errorf("stored %s\nwant %s", stored, want)
	}
	up := &store.Upload{ID: "a_1", Dir: f.st.Uploads().NewDir(), Name: "invoices.csv", Size: 42, SHA256: "ab"}
	if err := f.st.Uploads().Create(ctx, f.org.ID, up); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Pool().QueryRow(ctx, `SELECT doc FROM uploads`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(up); !bytes.Equal(stored, want) {
		t.Errorf("stored %s, want %s", stored, want)
	}
}

// TestExpiredTOTPCodesDropped: a put drops the codes that expired by the
// store's clock.
func TestExpiredTOTPCodesDropped(t *testing.T) {
	st, _, org := twoDaemons(t) // their clock reads 2026-01-31 15:20:42
	ctx := t.Context()
	base := time.Date(2026, 1, 31, 15, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		id      string
		created time.Time
	}{{"totp_old", base.Add(-time.Hour)}, {"totp_1", base}, {"totp_2", base.Add(time.Minute)}} {
		exp := client.NewTime(c.created.Add(time.Hour))
		if c.id == "totp_old" {
			exp = client.NewTime(c.created.Add(time.Minute))
		}
		if err := st.Credentials().PutTOTPCode(ctx, org.ID, &client.TOTPCode{TOTPIdentifier: "ada@example.com", TOTPCodeID: c.id,
			Code: "code-" + c.id, CreatedAt: client.NewTime(c.created), ExpiredAt: &exp}); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM totp_codes`).Scan(&n); err != nil || n != 2 {
		t.Errorf("%d codes stored (%v), want 2: the expired one dropped", n, err)
	}
}

// TestRunTitleOfInvalidUTF8: a title that is not UTF-8 is found by its
// bytes and listed as given. (Not in the conformance suite: the bbolt
// store's run index keeps the title as given while its record keeps it as
// JSON made it, so that the two disagree.)
func TestRunTitleOfInvalidUTF8(t *testing.T) {
	f := newRunFixture(t)
	f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) { r.Title = "plain" })
	odd := f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) { r.Title = "ÜBERWEISUNGEN a\x00b \xff 100%_\\" })
	if got := f.ids(f.org.ID, store.RunQuery{SearchKey: "a\x00b \xff 100%_\\"}, true); !slices.Equal(got, []string{odd.ID}) {
		t.Errorf("search odd bytes: %v", got)
	}
	items, err := f.st.Runs().List(t.Context(), f.org.ID, store.RunQuery{})
	if err != nil || len(items) != 2 || *items[0].Title != odd.Title {
		t.Errorf("items %+v %v", items, err)
	}
}
