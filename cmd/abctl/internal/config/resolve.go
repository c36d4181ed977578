package config

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Settings are the resolved settings of one invocation. The *From fields
// say where each value came from, for `abctl config view` and for hints.
type Settings struct {
	Profile     string
	ProfileFrom string

	BaseURL     string
	BaseURLFrom string
	// BaseURLGiven is true when the base URL came from a flag, the
	// environment or the profile, not from the default. A given base URL
	// is used as given; only the default one is looked up in the local
	// daemon's state file.
	BaseURLGiven bool
	// LocalBaseURL is the local daemon's own address (Defaults.LocalBaseURL):
	// the base URL of a local profile that names none, and the only one at
	// which abctl starts the daemon inside a command.
	LocalBaseURL string

	// APIKey is the key, "" when none was found (a local profile's key is
	// read later from the key file in DataDir, by whoever makes the
	// client). Never print it.
	APIKey     string
	APIKeyFrom string
	// APIKeyEnv is the variable the profile names for its key, for hints
	// when it is empty.
	APIKeyEnv string

	// Local is true for a local daemon's profile; DataDir is then its data
	// directory, which holds the file of its default key.
	Local   bool
	DataDir string
	// Embed allows starting the local daemon inside abctl when it is not
	// running. It is false when the base URL is not LocalBaseURL: an
	// address given explicitly is used as given, never taken over by a
	// daemon abctl starts. EmbedFrom says why it is what it is.
	Embed     bool
	EmbedFrom string
}

// Defaults are the built-in values that Resolve falls back to, which
// belong to the local daemon: the caller, which knows it, gives them (tests
// give the daemon an address of their own, so as never to reach the
// user's).
type Defaults struct {
	// LocalBaseURL is the local daemon's own address, as a base URL
	// (http://127.0.0.1:8780); required.
	LocalBaseURL string
}

// Global flag names that Resolve reads.
const (
	FlagProfile = "profile"
	FlagBaseURL = "base-url"
	FlagAPIKey  = "api-key"
)

// Environment variables that Resolve reads.
const (
	EnvProfile = "ABCTL_PROFILE"
	EnvBaseURL = "ABCTL_BASE_URL"
	EnvAPIKey  = "ABCTL_API_KEY"
	EnvDataDir = "ABCTL_DATA_DIR"
	EnvEmbed   = "ABCTL_EMBED"
)

// Resolve layers flags over environment over the file's profile over the
// defaults d. flags may be nil; of FlagProfile, FlagBaseURL and FlagAPIKey
// it reads those it defines.
//
// viper does the layering. The environment enters it through getenv rather
// than viper's own os.Getenv, so that tests (and embedders) can give abctl
// an environment without touching the process's: the environment's values
// fill viper's config layer, which ranks under flags and over defaults, and
// the file's profile fills the defaults.
func Resolve(flags *pflag.FlagSet, getenv Getenv, f *File, d Defaults) (*Settings, error) {
	if d.LocalBaseURL == "" {
		return nil, errors.New("resolve the settings: the local daemon's address is not known (Defaults.LocalBaseURL)")
	}
	if f == nil {
		f = &File{}
	}
	v := viper.New()
	env := map[string]any{}
	for key, name := range map[string]string{
		"profile": EnvProfile, "base_url": EnvBaseURL, "api_key": EnvAPIKey,
		"data_dir": EnvDataDir, "embed": EnvEmbed,
	} {
		if val := getenv(name); val != "" {
			env[key] = val
		}
	}
	if err := v.MergeConfigMap(env); err != nil {
		return nil, err
	}
	if flags != nil {
		for key, name := range map[string]string{"profile": FlagProfile, "base_url": FlagBaseURL, "api_key": FlagAPIKey} {
			if fl := flags.Lookup(name); fl != nil {
				if err := v.BindPFlag(key, fl); err != nil {
					return nil, err
				}
			}
		}
	}
	from := func(key, flag, envName, fallback string) string {
		switch {
		case flags != nil && flags.Changed(flag):
			return "flag --" + flag
		case env[key] != nil:
			return "environment " + envName
		}
		return fallback
	}

	s := &Settings{LocalBaseURL: d.LocalBaseURL}
	v.SetDefault("profile", LocalProfile)
	profileFrom := "default"
	if f.CurrentProfile != "" {
		v.SetDefault("profile", f.CurrentProfile)
		profileFrom = "configuration file " + f.path
	}
	s.Profile = v.GetString("profile")
	s.ProfileFrom = from("profile", FlagProfile, EnvProfile, profileFrom)
	if err := ValidateProfileName(s.Profile); err != nil {
		return nil, fmt.Errorf("%v (from %s)", err, s.ProfileFrom)
	}
	p, ok := f.Profile(s.Profile)
	if !ok {
		return nil, &UnknownProfileError{Name: s.Profile, From: s.ProfileFrom, Known: f.ProfileNames()}
	}
	s.Local = f.IsLocal(s.Profile, p)
	profileRef := fmt.Sprintf("profile %q", s.Profile)

	baseDefault, baseFrom := d.LocalBaseURL, "default"
	if p.BaseURL != "" {
		baseDefault, baseFrom = p.BaseURL, profileRef
	} else if !s.Local {
		return nil, fmt.Errorf("profile %q has no base_url: set one with 'abctl config set-profile %s --base-url URL'", s.Profile, s.Profile)
	}
	v.SetDefault("base_url", baseDefault)
	s.BaseURL = v.GetString("base_url")
	s.BaseURLFrom = from("base_url", FlagBaseURL, EnvBaseURL, baseFrom)
	s.BaseURLGiven = s.BaseURLFrom != "default"

	s.APIKeyEnv = p.APIKeyEnv
	keyDefault, keyFrom := "", ""
	switch {
	case p.APIKey != "":
		keyDefault, keyFrom = p.APIKey, profileRef+" (api_key)"
	case p.APIKeyEnv != "" && getenv(p.APIKeyEnv) != "":
		keyDefault, keyFrom = getenv(p.APIKeyEnv), "environment "+p.APIKeyEnv+" (api_key_env of "+profileRef+")"
	}
	v.SetDefault("api_key", keyDefault)
	s.APIKey = v.GetString("api_key")
	s.APIKeyFrom = from("api_key", FlagAPIKey, EnvAPIKey, keyFrom)
	if s.APIKey == "" {
		s.APIKeyFrom = ""
	}

	if s.Local {
		dataDefault := p.DataDir
		if dataDefault == "" {
			dataDefault = DefaultDataDir(getenv)
		}
		v.SetDefault("data_dir", dataDefault)
		s.DataDir = v.GetString("data_dir")
		embed, embedFrom := true, "default"
		if p.Embed != nil {
			embed, embedFrom = *p.Embed, profileRef+" (embed)"
		}
		v.SetDefault("embed", embed)
		if raw, ok := env["embed"].(string); ok {
			if _, err := strconv.ParseBool(raw); err != nil {
				return nil, fmt.Errorf("%s=%q is not a boolean (use true or false)", EnvEmbed, raw)
			}
		}
		s.Embed = v.GetBool("embed")
		s.EmbedFrom = from("embed", "", EnvEmbed, embedFrom)
		if s.Embed && !SameBaseURL(s.BaseURL, s.LocalBaseURL) {
			s.Embed = false
			s.EmbedFrom = fmt.Sprintf("off: the base URL (from %s) is not the local daemon's own address %s", s.BaseURLFrom, s.LocalBaseURL)
		}
	}
	return s, nil
}

// SameBaseURL reports whether two base URLs name the same service: the
// same scheme, host and port, and path but for a trailing slash.
func SameBaseURL(a, b string) bool {
	ua, err := url.Parse(strings.TrimSpace(a))
	if err != nil {
		return false
	}
	ub, err := url.Parse(strings.TrimSpace(b))
	if err != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host) &&
		strings.TrimRight(ua.Path, "/") == strings.TrimRight(ub.Path, "/")
}

// UnknownProfileError is the error for a profile that does not exist.
type UnknownProfileError struct {
	Name, From string
	Known      []string
}

func (e *UnknownProfileError) Error() string {
	return fmt.Sprintf("no profile named %q (from %s); the profiles are: %v. Create it with 'abctl config set-profile %s --base-url URL'",
		e.Name, e.From, e.Known, e.Name)
}
