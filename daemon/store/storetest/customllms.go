package storetest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// testCustomLLMs: a model's key is sealed, given back only to Models and
// Model of its own organization, kept or replaced or removed on update;
// answers never carry it; models list newest first; another
// organization's ids are not found; the key survives a reopen. (That the
// stored bytes never hold the key is each backend's own test.)
func testCustomLLMs(t *testing.T, o opener) {
	const key = "sk-custom-0123456789-abcdef"
	clock := newClock()
	secret := bytes.Repeat([]byte{9}, store.SecretSize)
	opts := store.Options{Now: clock.Now, IDs: ids.NewWithClock(1, clock.Now), Secret: secret}
	s := o.open(t, opts)
	a, _, _ := s.CreateOrganization(ctx, "a")
	b, _, _ := s.CreateOrganization(ctx, "b")
	c := s.CustomLLMs()

	if executor.CustomModelIDPrefix != ids.PrefixCustomLLM+"_" {
		t.Fatalf("executor.CustomModelIDPrefix %q does not match ids.PrefixCustomLLM %q", executor.CustomModelIDPrefix, ids.PrefixCustomLLM)
	}
	base := "http://127.0.0.1:8000/v1"
	cfg := client.CustomLLMConfig{DisplayName: "Local Qwen", Provider: client.CustomLLMProviderOpenAICompatible, ModelName: "qwen2.5",
		APIBase: &base, APIKey: ptr("ignored: the key goes in Key")}
	first, err := c.Create(ctx, a.ID, c.NewID(), &store.CustomLLMInput{Config: cfg, Key: ptr(key), Valid: true})
	if err != nil {
		t.Fatal(err)
	}
	if first.Config.APIKey != nil || first.OrganizationID != a.ID || !first.Valid || first.Config.DisplayName != "Local Qwen" {
		t.Errorf("created: %+v", first)
	}
	second, err := c.Create(ctx, a.ID, c.NewID(), &store.CustomLLMInput{Config: client.CustomLLMConfig{DisplayName: "Ollama", Provider: client.CustomLLMProviderOllama, ModelName: "llama3"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, a.ID, first.ID, &store.CustomLLMInput{Config: cfg}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("create under a taken id: %v", err)
	}
	if _, err := c.Create(ctx, a.ID, "cred_1", &store.CustomLLMInput{Config: cfg}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("create under another kind's id: %v", err)
	}

	list, err := c.List(ctx, a.ID)
	if err != nil || len(list) != 2 || list[0].ID != second.ID || list[1].ID != first.ID {
		t.Fatalf("list: %+v %v", list, err)
	}
	if list, err := c.List(ctx, b.ID); err != nil || list == nil || len(list) != 0 {
		t.Errorf("organization B lists %+v %v", list, err)
	}
	ms, err := c.Models(ctx, a.ID)
	if err != nil || len(ms) != 2 || ms[1].APIKey != key || ms[0].APIKey != "" || ms[1].APIBase != base || !ms[1].Vision {
		t.Fatalf("models: %v %v", ms, err)
	}
	if ms, err := c.Models(ctx, b.ID); err != nil || len(ms) != 0 {
		t.Errorf("organization B's runs get %v %v", ms, err)
	}
	for name, call := range map[string]func() error{
		"get":    func() error { _, err := c.Get(ctx, b.ID, first.ID); return err },
		"model":  func() error { _, err := c.Model(ctx, b.ID, first.ID); return err },
		"update": func() error { _, err := c.Update(ctx, b.ID, first.ID, &store.CustomLLMInput{Config: cfg}); return err },
		"delete": func() error { return c.Delete(ctx, b.ID, first.ID) },
	} {
		var nf *store.NotFoundError
		if err := call(); !errors.As(err, &nf) || nf.Record != store.RecordCustomLLM || nf.ID != first.ID {
			t.Errorf("organization B's %s of A's model: %v", name, err)
		}
	}

	// Update: nil keeps the key, a new one replaces it, "" removes it.
	no := false
	cfg.SupportsVision = &no
	if _, err := c.Update(ctx, a.ID, first.ID, &store.CustomLLMInput{Config: cfg, Valid: false}); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Model(ctx, a.ID, first.ID); err != nil || m.APIKey != key || m.Vision {
		t.Errorf("after an update without a key: %v %v", m, err)
	}
	if got, _ := c.Get(ctx, a.ID, first.ID); got.Valid || got.Config.SupportsVision == nil || *got.Config.SupportsVision {
		t.Errorf("after an update: %+v", got)
	}
	if _, err := c.Update(ctx, a.ID, first.ID, &store.CustomLLMInput{Config: cfg, Key: ptr(key + "-2")}); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Model(ctx, a.ID, first.ID); m.APIKey != key+"-2" {
		t.Errorf("a replaced key reads %q", m.APIKey)
	}

	// The key survives a reopen.
	s = o.reopen(t, s, opts)
	c = s.CustomLLMs()
	if m, err := c.Model(ctx, a.ID, first.ID); err != nil || m.APIKey != key+"-2" {
		t.Errorf("after a reopen: %v %v", m, err)
	}
	if _, err := c.Update(ctx, a.ID, first.ID, &store.CustomLLMInput{Config: cfg, Key: ptr("")}); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Model(ctx, a.ID, first.ID); m.APIKey != "" {
		t.Errorf("a removed key reads %q", m.APIKey)
	}

	if err := c.Delete(ctx, a.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, a.ID, first.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if ms, _ := c.Models(ctx, a.ID); len(ms) != 1 || ms[0].ID != second.ID {
		t.Errorf("models after delete: %v", ms)
	}
	_, err = c.List(ctx, "o_404")
	wantNotFound(t, "an unknown organization", err, store.RecordOrganization, "o_404")
}

// testCustomLLMKeyNeedsASecret: a store without a secret stores models
// without keys, and refuses a key rather than keep it in the clear.
func testCustomLLMKeyNeedsASecret(t *testing.T, o opener) {
	f := newFixture(t, o)
	c := f.CustomLLMs()
	cfg := client.CustomLLMConfig{DisplayName: "x", Provider: client.CustomLLMProviderOllama, ModelName: "m"}
	if _, err := c.Create(ctx, f.org.ID, c.NewID(), &store.CustomLLMInput{Config: cfg}); err != nil {
		t.Errorf("a model without a key: %v", err)
	}
	if _, err := c.Create(ctx, f.org.ID, c.NewID(), &store.CustomLLMInput{Config: cfg, Key: ptr("sk-1")}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a key without a secret: %v", err)
	}
}
