package cli

import (
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/localrun/llm"
)

// TestHelpEnvironmentDefaults: the defaults 'abctl help environment' gives
// are the ones the code uses: the local daemon's address, and a local
// Ollama for the model (not the test site's port of the README's walk).
func TestHelpEnvironmentDefaults(t *testing.T) {
	code, stdout, stderr := run(t, "help", "environment")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	contains(t, "help environment", stdout,
		`for "local", `+"http://"+datadir.DefaultAddr,
		"base_url: "+"http://"+datadir.DefaultAddr,
		"provider: "+string(llm.ProviderOllama),
		"base_url: "+llm.DefaultOllamaBaseURL,
		"model: "+llm.DefaultOllamaModel,
		"Default: a local Ollama at "+llm.DefaultOllamaBaseURL)
	if strings.Contains(stdout, "127.0.0.1:8000") {
		t.Errorf("help environment gives the test site's address 127.0.0.1:8000 as a model's:\n%s", stdout)
	}
}
