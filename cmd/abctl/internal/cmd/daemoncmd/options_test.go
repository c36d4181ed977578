package daemoncmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
)

// TestDaemonOptions: the flags, the configuration file's llm section and
// the environment make the daemon's configuration, which is not started.
func TestDaemonOptions(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, map[string]string{llm.EnvBaseURL: "http://127.0.0.1:9000/v1"})
	if err := os.MkdirAll(f.Getenv("ABCTL_CONFIG_DIR"), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := "llm:\n  provider: openai-compatible\n  model: from-file\n"
	if err := os.WriteFile(filepath.Join(f.Getenv("ABCTL_CONFIG_DIR"), "config.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	var got *DaemonOptions
	cmd := NewCmdDaemon(f, func(o *DaemonOptions) error { got = o; return nil })
	err := cmdtest.Exec(cmd, "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--api-key", "abk_ci", "--workers", "3",
		"--webhook-timeout", "4s", "--no-recording", "--llm-timeout", "20s", "--pprof")
	if err != nil {
		t.Fatal(err)
	}
	c := got.Config
	if c.Addr != "127.0.0.1:0" || c.DataDir != dataDir || c.APIKey != "abk_ci" || c.Workers != 3 || c.WebhookTimeout != 4*time.Second || c.Stderr != f.IO.ErrOut || !c.Pprof {
		t.Errorf("config %+v", c)
	}
	e := c.Engine
	if !e.NoRecording || e.ActionIdle != executor.DefaultActionIdle || e.Getenv == nil {
		t.Errorf("engine %+v", e)
	}
	if e.LLM.Provider != llm.ProviderOpenAICompatible || e.LLM.Model != "from-file" || e.LLM.BaseURL != "http://127.0.0.1:9000/v1" || e.LLM.Timeout != 20*time.Second {
		t.Errorf("model %+v", e.LLM)
	}
	if got.Serve == nil {
		t.Error("no Serve")
	}
}

// TestDaemonStoreOptions: --store and --artifacts, else ABCTL_STORE and
// ABCTL_ARTIFACTS, give the daemon's store and run files' directory; the
// flags win.
func TestDaemonStoreOptions(t *testing.T) {
	const fromEnv, fromFlag = "postgres://env@db.example/abctl", "postgresql://flag@db.example/abctl"
	f, _ := cmdtest.NewFactory(t, map[string]string{EnvStore: fromEnv, EnvArtifacts: "/mnt/env-artifacts"})
	var got *DaemonOptions
	run := func(args ...string) daemon.Config {
		t.Helper()
		got = nil
		if err := cmdtest.Exec(NewCmdDaemon(f, func(o *DaemonOptions) error { got = o; return nil }), append([]string{"--data-dir", t.TempDir()}, args...)...); err != nil {
			t.Fatal(err)
		}
		return got.Config
	}
	if c := run(); c.Store != fromEnv || c.ArtifactsDir != "/mnt/env-artifacts" {
		t.Errorf("from the environment: store %q, artifacts %q", c.Store, c.ArtifactsDir)
	}
	if c := run("--store", fromFlag, "--artifacts", "/mnt/shared"); c.Store != fromFlag || c.ArtifactsDir != "/mnt/shared" {
		t.Errorf("from the flags: store %q, artifacts %q", c.Store, c.ArtifactsDir)
	}
	// An empty flag says "the embedded store" over the environment.
	if c := run("--store", "", "--artifacts", ""); c.Store != "" || c.ArtifactsDir != "" {
		t.Errorf("empty flags: store %q, artifacts %q", c.Store, c.ArtifactsDir)
	}
	// A bucket, whose keys the daemon reads from the command's environment.
	if c := run("--artifacts", "s3://abctl-runs/team"); c.ArtifactsDir != "s3://abctl-runs/team" || c.ArtifactsEnv == nil {
		t.Errorf("a bucket: artifacts %q, environment %v", c.ArtifactsDir, c.ArtifactsEnv != nil)
	}
}

// TestDaemonStoreErrors: a store that is not a PostgreSQL URL is a usage
// error that names the flag or the variable and the value, without its
// password.
func TestDaemonStoreErrors(t *testing.T) {
	const bad = "mysql://me:hunter2@db.example/abctl"
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want []string
	}{
		{nil, []string{"--store", bad}, []string{"--store: mysql://me:xxxxx@db.example/abctl is not a store", "postgres://"}},
		{map[string]string{EnvStore: bad}, nil, []string{EnvStore + " (set in the environment): mysql://me:xxxxx@db.example/abctl"}},
		{nil, []string{"--store", "/var/lib/abctl"}, []string{"--store: ", "is not a store abctl knows", "nothing for the embedded store"}},
		{nil, []string{"--artifacts", file}, []string{"--artifacts " + file + " is a file, not a directory"}},
		{nil, []string{"--artifacts", "s3://"}, []string{"--artifacts: ", "names no bucket", "s3://bucket/prefix"}},
		{nil, []string{"--artifacts", "s3:///runs"}, []string{"--artifacts: ", "names no bucket"}},
		{nil, []string{"--artifacts", "s3://Runs_Bucket/p"}, []string{"--artifacts: ", "not a valid bucket name"}},
		{nil, []string{"--artifacts", "s3://AKIA:hunter2@runs/p"}, []string{"--artifacts: ", "carries no keys", "AWS_ACCESS_KEY_ID"}},
		{nil, []string{"--artifacts", "gs://runs"}, []string{"--artifacts: gs:// is not a place", "s3://bucket or s3://bucket/prefix", "give a directory"}},
		{map[string]string{EnvArtifacts: "https://me:hunter2@files.example/runs"}, nil,
			[]string{EnvArtifacts + " (set in the environment): ", "s3://bucket"}},
	} {
		f, _ := cmdtest.NewFactory(t, tc.env)
		var got *DaemonOptions
		err := cmdtest.Exec(NewCmdDaemon(f, func(o *DaemonOptions) error { got = o; return nil }), append([]string{"--data-dir", t.TempDir()}, tc.args...)...)
		if got != nil || !cmdtest.IsUsage(err) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%v %v: %v, want a usage error without the password", tc.env, tc.args, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v %v: %v lacks %q", tc.env, tc.args, err, w)
			}
		}
	}
	// The orgs commands refuse it the same way.
	f, _ := cmdtest.NewFactory(t, nil)
	dataDir, store := t.TempDir(), bad
	err := cmdtest.Exec(NewCmdOrgsList(f, &dataDir, &store, nil))
	if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "--store: mysql://me:xxxxx@") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("orgs list --store %s: %v", bad, err)
	}
}

// TestDaemonDefaults: the address is the Factory's local address, the data
// directory the default one.
func TestDaemonDefaults(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, map[string]string{"XDG_DATA_HOME": "/xdg"})
	var got *DaemonOptions
	if err := cmdtest.Exec(NewCmdDaemon(f, func(o *DaemonOptions) error { got = o; return nil })); err != nil {
		t.Fatal(err)
	}
	if got.Config.Addr != f.LocalAddr || got.Config.DataDir != "/xdg/abctl" || got.Config.Engine.LLM.Provider != llm.ProviderOllama || got.Config.Pprof {
		t.Errorf("defaults %+v, engine %+v", got.Config, got.Config.Engine)
	}
}

func TestDaemonUsageErrors(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "-1"}, "--workers must be 1 or more"},
		{[]string{"--webhook-timeout", "-1s"}, "--webhook-timeout must be positive"},
		{[]string{"--action-idle", "0s"}, "--action-idle must be positive"},
		{[]string{"--llm-provider", "bogus"}, "--llm-provider"},
		{[]string{"serve"}, `unknown command "serve" for "daemon"`},
	} {
		var got *DaemonOptions
		err := cmdtest.Exec(NewCmdDaemon(f, func(o *DaemonOptions) error { got = o; return nil }), tc.args...)
		if got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("daemon %q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}

func TestOrgsOptions(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	dataDir := "/srv/abctl"
	var created *OrgsCreateOptions
	if err := cmdtest.Exec(NewCmdOrgsCreate(f, &dataDir, nil, func(o *OrgsCreateOptions) error { created = o; return nil }), "  Team B ", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if created.Name != "Team B" || created.DataDir != dataDir || created.Output != "json" {
		t.Errorf("create %+v", created)
	}
	var listed *OrgsListOptions
	if err := cmdtest.Exec(NewCmdOrgsList(f, &dataDir, nil, func(o *OrgsListOptions) error { listed = o; return nil })); err != nil {
		t.Fatal(err)
	}
	if listed.DataDir != dataDir || listed.Output != "text" {
		t.Errorf("list %+v", listed)
	}
	if err := cmdtest.Exec(NewCmdOrgsCreate(f, &dataDir, nil, nil), "acme", "-o", "yaml"); !cmdtest.IsUsage(err) {
		t.Errorf("-o yaml: %v", err)
	}
	if err := cmdtest.Exec(NewCmdOrgsCreate(f, &dataDir, nil, nil), "a\x00b"); !cmdtest.IsUsage(err) {
		t.Errorf("a NUL in the name: %v", err)
	}
}
