package boltstore

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
)

// TestCustomLLMKeyNotInFile: a model's key is sealed: the file holds its
// configuration but never the key, the first one or a replaced one. (What
// the key answers is the conformance suite's CustomLLMs.)
func TestCustomLLMKeyNotInFile(t *testing.T) {
	const key = "sk-custom-0123456789-abcdef"
	path := filepath.Join(t.TempDir(), "abctl.db")
	clock := newClock()
	secret := bytes.Repeat([]byte{9}, store.SecretSize)
	s, err := Open(path, store.Options{Now: clock.Now, IDs: ids.NewWithClock(1, clock.Now), Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	a, _, _ := s.CreateOrganization(ctx, "a")
	c := s.CustomLLMs()
	cfg := client.CustomLLMConfig{DisplayName: "Local Qwen", Provider: client.CustomLLMProviderOpenAICompatible, ModelName: "qwen2.5"}
	first, err := c.Create(ctx, a.ID, c.NewID(), &store.CustomLLMInput{Config: cfg, Key: ptr(key), Valid: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Update(ctx, a.ID, first.ID, &store.CustomLLMInput{Config: cfg, Key: ptr(key + "-2")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(key)) || !bytes.Contains(raw, []byte("Local Qwen")) {
		t.Error("the store file holds the key in plain text, or the search proves nothing")
	}
}
