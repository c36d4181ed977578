package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// testLocalBaseURL stands for the local daemon's own address, which the
// callers of Resolve know and give it.
const testLocalBaseURL = "http://127.0.0.1:41234"

// resolve is Resolve with the local daemon at testLocalBaseURL.
func resolve(flags *pflag.FlagSet, getenv Getenv, f *File) (*Settings, error) {
	return Resolve(flags, getenv, f, Defaults{LocalBaseURL: testLocalBaseURL})
}

func env(m map[string]string) Getenv {
	return func(k string) string { return m[k] }
}

func writeFile(t *testing.T, content string) *File {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return f
}

func flags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("abctl", pflag.ContinueOnError)
	fs.String(FlagProfile, "", "")
	fs.String(FlagBaseURL, "", "")
	fs.String(FlagAPIKey, "", "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

const twoProfiles = `# my settings
current_profile: cloud
profiles:
  cloud:
    base_url: https://api.example.com
    api_key_env: CLOUD_KEY   # keep the key out of the file
  lab:
    base_url: http://10.0.0.5:8780
    api_key: lab-key-in-file
  local:
    data_dir: /srv/abctl
`

// TestPrecedence is the table of the issue: flags > environment > file >
// defaults, for the profile, the base URL and the key.
func TestPrecedence(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		env       map[string]string
		args      []string
		profile   string
		baseURL   string
		baseFrom  string
		key       string
		keyFrom   string
		local     bool
		dataDir   string
		wantError string
	}{
		{
			name: "defaults: the local daemon", env: map[string]string{"HOME": "/home/u"},
			profile: "local", baseURL: testLocalBaseURL, baseFrom: "default", local: true, dataDir: "/home/u/.local/share/abctl",
		},
		{
			name: "XDG data home", env: map[string]string{"XDG_DATA_HOME": "/x"},
			profile: "local", baseURL: testLocalBaseURL, baseFrom: "default", local: true, dataDir: "/x/abctl",
		},
		{
			name: "file: current profile and its key variable", file: twoProfiles, env: map[string]string{"CLOUD_KEY": "k-env"},
			profile: "cloud", baseURL: "https://api.example.com", baseFrom: `profile "cloud"`, key: "k-env", keyFrom: "environment CLOUD_KEY (api_key_env of profile \"cloud\")",
		},
		{
			name: "environment beats the file", file: twoProfiles,
			env:     map[string]string{"CLOUD_KEY": "k-env", EnvProfile: "lab", EnvBaseURL: "http://env:1"},
			profile: "lab", baseURL: "http://env:1", baseFrom: "environment ABCTL_BASE_URL", key: "lab-key-in-file", keyFrom: `profile "lab" (api_key)`,
		},
		{
			name: "ABCTL_API_KEY beats the profile's key", file: twoProfiles,
			env:     map[string]string{EnvProfile: "lab", EnvAPIKey: "k-abctl"},
			profile: "lab", baseURL: "http://10.0.0.5:8780", baseFrom: `profile "lab"`, key: "k-abctl", keyFrom: "environment ABCTL_API_KEY",
		},
		{
			name: "flags beat the environment", file: twoProfiles,
			env:     map[string]string{EnvProfile: "lab", EnvBaseURL: "http://env:1", EnvAPIKey: "k-abctl"},
			args:    []string{"--profile", "cloud", "--base-url", "http://flag:2", "--api-key", "k-flag"},
			profile: "cloud", baseURL: "http://flag:2", baseFrom: "flag --base-url", key: "k-flag", keyFrom: "flag --api-key",
		},
		{
			name: "a local profile of the file", file: twoProfiles, args: []string{"--profile", "local"},
			profile: "local", baseURL: testLocalBaseURL, baseFrom: "default", local: true, dataDir: "/srv/abctl",
		},
		{
			name: "ABCTL_DATA_DIR beats the profile's", file: twoProfiles, args: []string{"--profile", "local"},
			env:     map[string]string{EnvDataDir: "/env/data"},
			profile: "local", baseURL: testLocalBaseURL, baseFrom: "default", local: true, dataDir: "/env/data",
		},
		{
			name: "an unknown profile", file: twoProfiles, args: []string{"--profile", "nope"},
			wantError: `no profile named "nope" (from flag --profile); the profiles are: [cloud lab local]`,
		},
		{
			name: "a bad profile name", env: map[string]string{EnvProfile: "a b"},
			wantError: `profile name "a b" is not valid`,
		},
		{
			name: "key variable empty", file: twoProfiles,
			profile: "cloud", baseURL: "https://api.example.com", baseFrom: `profile "cloud"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &File{}
			if tt.file != "" {
				f = writeFile(t, tt.file)
			}
			if tt.env == nil {
				tt.env = map[string]string{}
			}
			s, err := resolve(flags(t, tt.args...), env(tt.env), f)
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Profile != tt.profile || s.BaseURL != tt.baseURL || s.BaseURLFrom != tt.baseFrom ||
				s.APIKey != tt.key || s.APIKeyFrom != tt.keyFrom || s.Local != tt.local || s.DataDir != tt.dataDir {
				t.Errorf("got %+v\nwant profile=%s base=%s (%s) key=%q (%s) local=%v data=%s",
					s, tt.profile, tt.baseURL, tt.baseFrom, tt.key, tt.keyFrom, tt.local, tt.dataDir)
			}
		})
	}
}

func TestEmbedSetting(t *testing.T) {
	f := writeFile(t, "profiles:\n  local:\n    embed: false\n")
	s, err := resolve(nil, env(nil), f)
	if err != nil {
		t.Fatal(err)
	}
	if s.Embed {
		t.Error("embed: false in the profile was ignored")
	}
	s, err = resolve(nil, env(map[string]string{EnvEmbed: "true"}), f)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Embed {
		t.Error("ABCTL_EMBED=true did not win over the profile")
	}
	if _, err := resolve(nil, env(map[string]string{EnvEmbed: "maybe"}), f); err == nil || !strings.Contains(err.Error(), "ABCTL_EMBED") {
		t.Errorf("a bad ABCTL_EMBED gave %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	for _, tc := range []struct{ content, want string }{
		{"profiles:\n  cloud:\n    base_ur: x\n", "line 3: field base_ur not found"},
		{"current_profile: [\n", "config.yaml"},
		{"profiles:\n  'bad name':\n    base_url: x\n", `profile name "bad name" is not valid`},
	} {
		if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%q) = %v, want an error containing %q", tc.content, err, tc.want)
		}
	}
	f, err := Load(filepath.Join(dir, "missing.yaml"))
	if err != nil || len(f.Profiles) != 0 {
		t.Errorf("a missing file gave %v, %+v; want an empty configuration", err, f)
	}
}

// TestWriteKeepsComments checks that editing the file keeps what the user
// wrote around the edit.
func TestWriteKeepsComments(t *testing.T) {
	f := writeFile(t, twoProfiles)
	if err := f.SetProfile("staging", Profile{BaseURL: "https://staging.example.com", APIKeyEnv: "STAGING_KEY"}); err != nil {
		t.Fatal(err)
	}
	f.SetCurrentProfile("staging")
	if !f.DeleteProfile("lab") {
		t.Fatal("DeleteProfile(lab) = false")
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{"# my settings", "# keep the key out of the file", "current_profile: staging", "staging:", "api_key_env: STAGING_KEY"} {
		if !strings.Contains(text, want) {
			t.Errorf("saved file lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "lab-key-in-file") {
		t.Errorf("deleted profile still in the file:\n%s", text)
	}
	info, err := os.Stat(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", info.Mode().Perm())
	}
	again, err := Load(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	if again.CurrentProfile != "staging" || again.Profiles["staging"].APIKeyEnv != "STAGING_KEY" || len(again.Profiles) != 3 {
		t.Errorf("reloaded: %+v", again)
	}
}

func TestDir(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"ABCTL_CONFIG_DIR": "/c", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/c"},
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/abctl"},
		{map[string]string{"HOME": "/h"}, "/h/.config/abctl"},
	} {
		if got := Dir(env(tc.env)); got != tc.want {
			t.Errorf("Dir(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

// TestPathsComeFromGetenvOnly: without HOME (nor XDG_*) in the environment
// abctl is given, the paths do not fall back to the process's own home,
// which a test's or an embedder's environment does not describe.
func TestPathsComeFromGetenvOnly(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("the home directory is not $HOME there")
	}
	if got := DefaultDataDir(env(nil)); got != "abctl-data" {
		t.Errorf("DefaultDataDir without HOME = %q, want the relative abctl-data (not the process's home)", got)
	}
	if got, want := Dir(env(nil)), filepath.Join(".config", "abctl"); got != want {
		t.Errorf("Dir without HOME = %q, want %q (not the process's home)", got, want)
	}
}

// TestEmbedOnlyAtTheLocalAddress: a local profile may start its daemon
// inside a command only at the local daemon's own address; a base URL given
// explicitly elsewhere turns that off, saying why.
func TestEmbedOnlyAtTheLocalAddress(t *testing.T) {
	const local = "http://127.0.0.1:41234"
	for _, tc := range []struct {
		name      string
		file      string
		env       map[string]string
		args      []string
		baseURL   string
		embed     bool
		embedFrom string
	}{
		{name: "default", baseURL: local, embed: true, embedFrom: "default"},
		{name: "flag elsewhere", args: []string{"--base-url", "http://127.0.0.1:9999"}, baseURL: "http://127.0.0.1:9999",
			embedFrom: "off: the base URL (from flag --base-url) is not the local daemon's own address " + local},
		{name: "environment elsewhere", env: map[string]string{EnvBaseURL: "http://127.0.0.1:9999"}, baseURL: "http://127.0.0.1:9999",
			embedFrom: "off: the base URL (from environment ABCTL_BASE_URL) is not the local daemon's own address " + local},
		{name: "profile elsewhere", file: "profiles:\n  local:\n    base_url: http://127.0.0.1:9999\n", baseURL: "http://127.0.0.1:9999",
			embedFrom: `off: the base URL (from profile "local") is not the local daemon's own address ` + local},
		{name: "given, but the local address", env: map[string]string{EnvBaseURL: local + "/"}, baseURL: local + "/", embed: true, embedFrom: "default"},
		{name: "profile embed false", file: "profiles:\n  local:\n    embed: false\n", baseURL: local, embedFrom: `profile "local" (embed)`},
		{name: "environment embed false", env: map[string]string{EnvEmbed: "false"}, baseURL: local, embedFrom: "environment ABCTL_EMBED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &File{}
			if tc.file != "" {
				f = writeFile(t, tc.file)
			}
			s, err := Resolve(flags(t, tc.args...), env(tc.env), f, Defaults{LocalBaseURL: local})
			if err != nil {
				t.Fatal(err)
			}
			if s.BaseURL != tc.baseURL || s.LocalBaseURL != local || s.Embed != tc.embed || s.EmbedFrom != tc.embedFrom {
				t.Errorf("base URL %q, local %q, embed %v from %q; want %q, %q, %v from %q",
					s.BaseURL, s.LocalBaseURL, s.Embed, s.EmbedFrom, tc.baseURL, local, tc.embed, tc.embedFrom)
			}
		})
	}
}

// TestModelSettings: the model's settings and where each comes from; the
// key is only said to be set.
func TestModelSettings(t *testing.T) {
	f := writeFile(t, "llm:\n  base_url: http://127.0.0.1:9000\n  model: m-file\n  api_key: secret-in-file\n")
	m, err := f.ModelSettings(env(map[string]string{"ABCTL_LLM_MODEL": "m-env"}))
	if err != nil {
		t.Fatal(err)
	}
	fromFile := "configuration file " + f.Path()
	want := ModelSettings{
		Provider: "openai-compatible", ProviderFrom: "default (inferred from the other settings)",
		BaseURL: "http://127.0.0.1:9000/v1", BaseURLFrom: fromFile + " (llm.base_url)",
		Model: "m-env", ModelFrom: "environment ABCTL_LLM_MODEL",
		APIKeySet: true, APIKeyFrom: fromFile + " (llm.api_key)",
	}
	if m != want {
		t.Errorf("ModelSettings =\n%+v, want\n%+v", m, want)
	}
	if _, err := f.ModelSettings(env(map[string]string{"ABCTL_LLM_TIMEOUT": "soon"})); err == nil || !strings.Contains(err.Error(), "ABCTL_LLM_TIMEOUT") {
		t.Errorf("a bad ABCTL_LLM_TIMEOUT gave %v", err)
	}
}

// TestResolveNeedsTheLocalAddress: the local daemon's address is its
// callers' to give; without it nothing resolves.
func TestResolveNeedsTheLocalAddress(t *testing.T) {
	if _, err := Resolve(nil, env(nil), &File{}, Defaults{}); err == nil || !strings.Contains(err.Error(), "Defaults.LocalBaseURL") {
		t.Errorf("Resolve without the local address: %v", err)
	}
}
