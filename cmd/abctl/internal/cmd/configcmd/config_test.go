package configcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/config"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

func TestSetProfileOptions(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *SetProfileOptions
	run := func(args ...string) error {
		got = nil
		return cmdtest.Exec(NewCmdSetProfile(f, func(o *SetProfileOptions) error { got = o; return nil }), args...)
	}
	if err := run("cloud", "--base-url", "https://api.example.com", "--api-key-env", "KEY", "--embed", "false"); err != nil {
		t.Fatal(err)
	}
	if got.Name != "cloud" || *got.BaseURL != "https://api.example.com" || *got.APIKeyEnv != "KEY" || got.APIKey != nil || got.DataDir != nil || *got.Embed != "false" {
		t.Errorf("options %+v", got)
	}
	// A flag not given leaves the profile's setting alone, even empty.
	if err := run("local", "--data-dir", ""); err != nil || got.DataDir == nil || *got.DataDir != "" || got.BaseURL != nil || got.Embed != nil {
		t.Errorf("--data-dir \"\": %+v %v", got, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bad name"}, `profile name "bad name" is not valid`},
		{[]string{"lab", "--embed", "maybe"}, `--embed must be true or false, not "maybe"`},
		{[]string{"lab", "--api-key", "k", "--api-key-env", "K"}, "none of the others can be"},
	} {
		if err := run(tc.args...); got != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("set-profile %q: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestProfilesInTheFile: set-profile, use-profile and delete-profile
// change the configuration file.
func TestProfilesInTheFile(t *testing.T) {
	f, s := cmdtest.NewFactory(t, nil)
	set := &SetProfileOptions{IO: f.IO, ConfigFile: f.ConfigFile, Name: "lab", BaseURL: new("http://10.0.0.5:8780"), Embed: new("false")}
	if err := runSetProfile(set); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.ErrOut.String(), `Profile "lab" saved in`) || !strings.Contains(s.ErrOut.String(), "use-profile lab") {
		t.Errorf("stderr %q", s.ErrOut.String())
	}
	if err := runUseProfile(&UseProfileOptions{IO: f.IO, ConfigFile: f.ConfigFile, Name: "lab"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(f.Getenv("ABCTL_CONFIG_DIR"), config.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if y := string(data); !strings.Contains(y, "current_profile: lab") || !strings.Contains(y, "base_url: http://10.0.0.5:8780") || !strings.Contains(y, "embed: false") {
		t.Errorf("the file:\n%s", y)
	}
	if err := runUseProfile(&UseProfileOptions{IO: f.IO, ConfigFile: f.ConfigFile, Name: "nope"}); err == nil || !strings.Contains(err.Error(), `no profile named "nope"`) {
		t.Errorf("use-profile nope: %v", err)
	}
	noURL := &SetProfileOptions{IO: f.IO, ConfigFile: f.ConfigFile, Name: "empty"}
	if err := runSetProfile(noURL); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "needs --base-url") {
		t.Errorf("a profile without a base URL: %v", err)
	}
	del := &DeleteProfileOptions{IO: f.IO, ConfigFile: f.ConfigFile, Name: "lab"}
	if err := runDeleteProfile(del); err != nil {
		t.Fatal(err)
	}
	if err := runDeleteProfile(del); err == nil || !strings.Contains(err.Error(), `has no profile "lab"`) {
		t.Errorf("deleting it again: %v", err)
	}
}

// TestView: the local profile's key is said to come from the daemon's key
// file, named as the Factory knows it.
func TestView(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	f, s := cmdtest.NewFactory(t, map[string]string{"ABCTL_DATA_DIR": dataDir})
	var got *ViewOptions
	if err := cmdtest.Exec(NewCmdView(f, func(o *ViewOptions) error { got = o; return nil }), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if got.Format != printer.JSON || got.KeyFileName != "api-key" {
		t.Errorf("options %+v", got)
	}
	if err := runView(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"profile": "local"`, `"base_url": "http://127.0.0.1:1"`, `"api_key": "(from the daemon's key file)"`,
		`"api_key_from": "` + dataDir + `/api-key"`, `"provider": "ollama"`} {
		if !strings.Contains(s.Out.String(), want) {
			t.Errorf("view lacks %s:\n%s", want, s.Out.String())
		}
	}
}

func TestProfiles(t *testing.T) {
	f, s := cmdtest.NewFactory(t, nil)
	var got *ProfilesOptions
	if err := cmdtest.Exec(NewCmdProfiles(f, func(o *ProfilesOptions) error { got = o; return nil }), "-o", "name"); err != nil {
		t.Fatal(err)
	}
	got.Format = printer.Table
	if err := runProfiles(got); err != nil {
		t.Fatal(err)
	}
	if s.Out.String() != "*\tlocal\thttp://127.0.0.1:1\t(the daemon's key file)\n" {
		t.Errorf("profiles: %q", s.Out.String())
	}
	if err := cmdtest.Exec(NewCmdProfiles(f, nil), "-o", "wide"); !cmdtest.IsUsage(err) {
		t.Errorf("-o wide: %v", err)
	}
}
