// Package config reads and writes abctl's configuration file and resolves the
// settings of one invocation from flags, environment, file and defaults, in
// that order of precedence.
//
// # The file
//
// $ABCTL_CONFIG_DIR/config.yaml, else $XDG_CONFIG_HOME/abctl/config.yaml, else
// ~/.config/abctl/config.yaml (%AppData%\abctl\config.yaml on Windows):
//
//	current_profile: local
//	profiles:
//	  local:                      # a daemon on this machine
//	    base_url: http://127.0.0.1:8780
//	    data_dir: /home/me/.local/share/abctl
//	  cloud:                      # the hosted service
//	    base_url: https://api.skyvern.com
//	    api_key_env: SKYVERN_API_KEY
//	llm:                          # the local daemon's language model
//	  provider: ollama            # the default: a local Ollama
//	  base_url: http://127.0.0.1:11434/v1
//	  model: qwen2.5vl:7b
//
// A profile has a base URL and a way to find the API key: api_key (the key
// itself, in a file only its owner reads), or api_key_env (the name of an
// environment variable holding it). A profile with a data_dir, and the
// built-in "local" profile, is a local daemon: its key is read from
// <data_dir>/api-key, where `abctl daemon` writes it on first start, and when
// that daemon is not running the commands start it inside abctl for their
// own duration (unless embed: false). They do so only for the local
// daemon's own address (Defaults.LocalBaseURL): a base URL given explicitly
// elsewhere (flag, environment, the profile's base_url) is used as given.
//
// Out of the box, with no file, the profile is "local": the daemon at its
// own address (http://127.0.0.1:8780 unless the caller says otherwise) with
// the default data directory. The address and the daemon's file names are
// the daemon's, which this package does not link: its callers pass them in.
//
// Every path and setting is found through the Getenv it is given, never
// through the process's own environment, so that tests (and embedders) can
// run abctl without touching the user's files.
//
// # Precedence
//
// For each setting: the flag (--profile, --base-url; abctl has no --api-key
// flag, so that keys stay out of shell history, but Resolve reads one from a
// flag set that defines it), then the environment (ABCTL_PROFILE,
// ABCTL_BASE_URL, ABCTL_API_KEY, ABCTL_DATA_DIR, ABCTL_EMBED), then the
// chosen profile in the file, then the defaults. The
// layering is viper's; the file itself is read with yaml.v3 so that profile
// names keep their case and unknown keys are reported with their line.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/abctl/abctl/localrun/llm"
)

// FileName is the configuration file's name inside the configuration
// directory.
const FileName = "config.yaml"

// LocalProfile is the name of the built-in profile of the local daemon.
const LocalProfile = "local"

// Profile is one named way to reach the service.
type Profile struct {
	BaseURL string `yaml:"base_url,omitempty"`
	// APIKey is the key itself. Prefer APIKeyEnv: a file is easily shared.
	APIKey string `yaml:"api_key,omitempty"`
	// APIKeyEnv names an environment variable that holds the key.
	APIKeyEnv string `yaml:"api_key_env,omitempty"`
	// DataDir makes the profile a local daemon's: the key is read from its
	// api-key file and the daemon may be embedded.
	DataDir string `yaml:"data_dir,omitempty"`
	// Embed, when false, never starts the local daemon inside abctl.
	Embed *bool `yaml:"embed,omitempty"`
}

// File is the content of the configuration file.
type File struct {
	CurrentProfile string             `yaml:"current_profile,omitempty"`
	Profiles       map[string]Profile `yaml:"profiles,omitempty"`
	// LLM is the language model of the local daemon (abctl daemon, and the
	// daemon a command starts inside itself), under its ABCTL_LLM_*
	// environment and --llm-* flags.
	LLM *llm.Config `yaml:"llm,omitempty"`

	// path is where the file was read from (or will be written).
	path string
	// doc keeps the parsed document, so that writing it back keeps the
	// user's comments and order.
	doc *yaml.Node
}

// Path is where the file lives.
func (f *File) Path() string { return f.path }

// Getenv reads an environment variable.
type Getenv func(string) string

// Dir is the configuration directory: $ABCTL_CONFIG_DIR, else
// $XDG_CONFIG_HOME/abctl, else %AppData%\abctl on Windows, else
// ~/.config/abctl.
func Dir(getenv Getenv) string {
	if d := getenv("ABCTL_CONFIG_DIR"); d != "" {
		return d
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "abctl")
	}
	if runtime.GOOS == "windows" {
		if d := getenv("AppData"); d != "" {
			return filepath.Join(d, "abctl")
		}
	}
	return filepath.Join(homeDir(getenv), ".config", "abctl")
}

// DefaultDataDir is where `abctl daemon` keeps its data by default:
// $XDG_DATA_HOME/abctl, else ~/.local/share/abctl.
func DefaultDataDir(getenv Getenv) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "abctl")
	}
	home := homeDir(getenv)
	if home == "" {
		return "abctl-data"
	}
	return filepath.Join(home, ".local", "share", "abctl")
}

// homeDir is the user's home directory as getenv tells it, the way
// os.UserHomeDir reads it from the process's environment: $HOME, or
// %USERPROFILE% on Windows, $home on Plan 9. It is "" when unset: never the
// process's own, which getenv may not be.
func homeDir(getenv Getenv) string {
	switch runtime.GOOS {
	case "windows":
		return getenv("USERPROFILE")
	case "plan9":
		return getenv("home")
	}
	return getenv("HOME")
}

// profileName is what a profile may be called.
var profileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ValidateProfileName checks a profile's name.
func ValidateProfileName(name string) error {
	if !profileName.MatchString(name) {
		return fmt.Errorf("profile name %q is not valid: use 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit", name)
	}
	return nil
}

// Load reads the configuration file at path. A missing file is an empty
// configuration, not an error.
func Load(path string) (*File, error) {
	f := &File{path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the configuration: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(f); err != nil {
		return nil, fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	f.doc = &doc
	for name := range f.Profiles {
		if err := ValidateProfileName(name); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	}
	return f, nil
}

// Profile returns the named profile: the file's, or the built-in local one.
// ok is false when there is no such profile.
func (f *File) Profile(name string) (p Profile, ok bool) {
	if p, ok := f.Profiles[name]; ok {
		return p, true
	}
	if name == LocalProfile {
		return Profile{}, true
	}
	return Profile{}, false
}

// ProfileNames lists the profiles, the built-in local one included, sorted.
func (f *File) ProfileNames() []string {
	names := []string{}
	seenLocal := false
	for n := range f.Profiles {
		names = append(names, n)
		seenLocal = seenLocal || n == LocalProfile
	}
	if !seenLocal {
		names = append(names, LocalProfile)
	}
	sort.Strings(names)
	return names
}

// IsLocal reports whether the named profile is a local daemon's.
func (f *File) IsLocal(name string, p Profile) bool {
	return p.DataDir != "" || (name == LocalProfile && p.APIKey == "" && p.APIKeyEnv == "")
}

// ModelConfig is the local daemon's language model from the file's llm
// section under the ABCTL_LLM_* environment, before flags and defaults
// (llm.Config.Merge, then WithDefaults).
func (f *File) ModelConfig(getenv Getenv) (llm.Config, error) {
	env, err := llm.ReadEnv(getenv)
	if err != nil {
		return llm.Config{}, err
	}
	var base llm.Config
	if f.LLM != nil {
		base = *f.LLM
	}
	return base.Merge(env), nil
}
