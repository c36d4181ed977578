package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
)

func TestFolders(t *testing.T) {
	e := newCLIEnv(t)
	r := e.run("", "folders", "create", "Billing", "--description", "Invoices").expect(t, 0)
	id := strings.TrimPrefix(strings.TrimSpace(r.stdout), "folder/")
	if !strings.HasPrefix(id, "fld_") {
		t.Fatalf("folders create printed %q", r.stdout)
	}
	e.run("", "folders", "update", id, "--title", "Payments").expect(t, 0)
	r = e.run("", "get", "folders", "-o", "json").expect(t, 0)
	var folders []client.Folder
	if err := json.Unmarshal([]byte(r.stdout), &folders); err != nil || len(folders) != 1 || folders[0].Title != "Payments" || *folders[0].Description != "Invoices" {
		t.Errorf("get folders -o json: %v %+v", err, folders)
	}
	r = e.run("", "get", "folder", id).expect(t, 0)
	golden(t, "get-folder.txt", r.stdout)
	r = e.run("", "folders", "update", id).expect(t, 2)
	contains(t, "stderr", r.stderr, "--title, --description")
	r = e.run("", "folders", "delete", id, "--delete-agents").expect(t, 2)
	contains(t, "stderr", r.stderr, "--yes")
	e.run("", "folders", "delete", id).expect(t, 0)
	r = e.run("", "get", "folder", id).expect(t, 1)
	contains(t, "stderr", r.stderr, "404", "not found")
}

func TestTags(t *testing.T) {
	e := newCLIEnv(t)
	e.run("", "apply", "-f", e.write("contact-form.yaml", contactForm)).expect(t, 0)
	r := e.run("", "tags", "set", "contact-form", "env=prod", "urgent", "--color", "env=green").expect(t, 0)
	golden(t, "tags-set.txt", r.stdout)
	r = e.run("", "tags", "values", "env", "-o", "json").expect(t, 0)
	var values []client.TagValue
	if err := json.Unmarshal([]byte(r.stdout), &values); err != nil || len(values) != 1 || values[0].Color != "green" || values[0].WorkflowCount != 1 {
		t.Errorf("tags values env: %v %+v", err, values)
	}
	e.run("", "tags", "keys", "env", "--describe", "Where it runs").expect(t, 0)
	r = e.run("", "tags", "keys").expect(t, 0)
	contains(t, "tags keys", r.stdout, "env\t1\tWhere it runs", "abctl.name\t1")
	e.run("", "tags", "rename", "env", "prod", "production").expect(t, 0)
	r = e.run("", "get", "agents", "--tag", "env:production", "-o", "name").expect(t, 0)
	if r.stdout != "agent/contact-form\n" {
		t.Errorf("after the rename: %q", r.stdout)
	}
	e.run("", "tags", "unset", "contact-form", "env", "urgent").expect(t, 0)
	r = e.run("", "tags", "get", "contact-form", "-o", "name").expect(t, 0)
	if r.stdout != "abctl.name=contact-form\n" {
		t.Errorf("tags after unset: %q", r.stdout)
	}
	r = e.run("", "tags", "history", "contact-form", "--key", "env").expect(t, 0)
	if n := strings.Count(r.stdout, "\n"); n < 2 {
		t.Errorf("history of env has %d events:\n%s", n, r.stdout)
	}
	r = e.run("", "tags", "set", "contact-form", "env=").expect(t, 2)
	contains(t, "stderr", r.stderr, "key=value")
	r = e.run("", "tags", "set", "contact-form", "x=y", "--color", "x=mauve").expect(t, 2)
	contains(t, "stderr", r.stderr, "palette", "green")
	r = e.run("", "tags", "set", "tsk_1", "x=y").expect(t, 1)
	contains(t, "stderr", r.stderr, "only agent runs")
	r = e.run("", "tags", "delete", "env").expect(t, 2)
	e.run("", "tags", "delete", "env", "--yes").expect(t, 0)

	// Run tags.
	r = e.run("", "run", "--agent", "contact-form", "--detach", "--param", "site=http://127.0.0.1:1").expect(t, 0)
	run := strings.TrimSpace(r.stdout)
	e.run("", "tags", "set", run, "reviewed", "by=ci").expect(t, 0)
	r = e.run("", "tags", "get", "run/"+run, "-o", "name").expect(t, 0)
	if r.stdout != "reviewed\nby=ci\n" {
		t.Errorf("run tags: %q", r.stdout)
	}
}

func TestConfigCommands(t *testing.T) {
	e := newCLIEnv(t)
	e.vars["SKYVERN_KEY"] = "sk-secret-value"
	e.run("", "config", "set-profile", "cloud", "--base-url", "https://api.example.com", "--api-key-env", "SKYVERN_KEY").expect(t, 0)
	e.run("", "config", "set-profile", "filekey", "--base-url", "https://b.example.com", "--api-key", "in-file-secret").expect(t, 0)
	e.run("", "config", "use-profile", "cloud").expect(t, 0)
	delete(e.vars, "ABCTL_BASE_URL")
	delete(e.vars, "ABCTL_API_KEY")
	r := e.run("", "config", "view").expect(t, 0)
	golden(t, "config-view.txt", strings.ReplaceAll(r.stdout, e.vars["HOME"], "<home>"))
	r = e.run("", "config", "profiles").expect(t, 0)
	golden(t, "config-profiles.txt", r.stdout)
	for _, out := range []string{r.stdout, e.run("", "config", "view", "-o", "json").stdout, e.run("", "config", "view", "--profile", "filekey").stdout} {
		if strings.Contains(out, "sk-secret-value") || strings.Contains(out, "in-file-secret") {
			t.Errorf("a key was printed:\n%s", out)
		}
	}
	data, err := os.ReadFile(filepath.Join(e.vars["ABCTL_CONFIG_DIR"], "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	contains(t, "config.yaml", string(data), "current_profile: cloud", "api_key_env: SKYVERN_KEY")
	r = e.run("", "config", "use-profile", "nope").expect(t, 1)
	contains(t, "stderr", r.stderr, `no profile named "nope"`)
	r = e.run("", "config", "set-profile", "x").expect(t, 2)
	contains(t, "stderr", r.stderr, "--base-url")
	e.run("", "config", "delete-profile", "filekey").expect(t, 0)
	r = e.run("", "get", "agents", "--profile", "filekey").expect(t, 1)
	contains(t, "stderr", r.stderr, `no profile named "filekey"`)
}

// TestEnvOverridesProfileAndWrongKey: ABCTL_API_KEY beats the profile; a
// wrong key exits 4 with the hint.
func TestWrongKey(t *testing.T) {
	e := newCLIEnv(t)
	e.vars["ABCTL_API_KEY"] = "abk_wrong"
	r := e.run("", "get", "agents").expect(t, 4)
	contains(t, "stderr", r.stderr, "403", "Invalid credentials", "environment ABCTL_API_KEY")
}

func TestHelpTopicsAndCompletion(t *testing.T) {
	e := newCLIEnv(t)
	r := e.run("", "help", "environment").expect(t, 0)
	contains(t, "help environment", r.stdout, "ABCTL_PROFILE", "NO_COLOR", "CLICOLOR_FORCE", "config.yaml")
	r = e.run("", "help", "exit-codes").expect(t, 0)
	contains(t, "help exit-codes", r.stdout, "3    'abctl run'", "8    'abctl run'", "diff(1)")
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		r = e.run("", "completion", sh).expect(t, 0)
		if len(r.stdout) < 500 {
			t.Errorf("completion %s is %d bytes", sh, len(r.stdout))
		}
	}
	// Dynamic completion of agent names, from the service.
	e.run("", "apply", "-f", e.write("contact-form.yaml", contactForm)).expect(t, 0)
	r = e.run("", "__complete", "get", "agent", "con").expect(t, 0)
	contains(t, "completion", r.stdout, "contact-form\tContact form")
	r = e.run("", "__complete", "get", "agents", "-o", "").expect(t, 0)
	contains(t, "completion", r.stdout, "yaml", "wide")
}

func TestColor(t *testing.T) {
	e := newCLIEnv(t)
	e.run("", "apply", "-f", e.write("contact-form.yaml", contactForm)).expect(t, 0)
	tty := func(ios *iostreams.IOStreams) { ios.SetTTY(false, true, true); ios.SetColor(true) }
	r := e.runIO("", tty, "get", "agents")
	if !strings.Contains(r.stdout, "\x1b[1m") {
		t.Errorf("no bold header on a colour terminal:\n%q", r.stdout)
	}
	e.vars["NO_COLOR"] = "1"
	r = e.runIO("", func(ios *iostreams.IOStreams) { ios.SetTTY(false, true, true) }, "get", "agents")
	if strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("colour with NO_COLOR:\n%q", r.stdout)
	}
}

// TestEmbeddedDaemon: with the default profile and no daemon running over
// its data directory, a command runs one inside itself on that directory,
// says so, and leaves nothing running; with a daemon running over it (on
// any port), the command finds it through its state file and reads its
// key file.
//
// Another daemon answers at the local daemon's own address all along (as
// the README's walk leaves one on 127.0.0.1:8780, over another data
// directory): no command may use it, nor even look at it.
func TestEmbeddedDaemon(t *testing.T) {
	var strayRequests atomic.Int64
	stray := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		strayRequests.Add(1)
		w.Write([]byte(`{"status":"ok"}`)) // a healthy daemon, of another data directory
	}))
	defer stray.Close()
	data := t.TempDir()
	vars := map[string]string{"HOME": t.TempDir(), "XDG_DATA_HOME": data}
	runCLI := func(args ...string) result {
		ios, _, out, errOut := iostreams.Test()
		f := newTestFactory(t, ios, vars)
		f.LocalAddr = stray.Listener.Addr().String()
		code := RunFactory(t.Context(), args, f)
		return result{code: code, stdout: out.String(), stderr: errOut.String()}
	}
	r := runCLI("apply", "-f", writeTemp(t, "contact-form.yaml", contactForm)).expect(t, 0)
	contains(t, "stderr", r.stderr, "this command runs one on "+filepath.Join(data, "abctl"), "created organization")
	// The local daemon's own address is taken (by the stray daemon): the
	// command's daemon is on a port of its own, whose links die with it,
	// and it says so (issue 30).
	contains(t, "stderr", r.stderr, stray.Listener.Addr().String()+" is taken by something else", "the links it prints stop working when it exits", "abctl daemon --addr ADDR")
	if r.stdout != "agent/contact-form created\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(data, "abctl", datadir.StateFileName)); !os.IsNotExist(err) {
		t.Errorf("the embedded daemon's state file is still there (%v): it did not stop", err)
	}
	r = runCLI("get", "agents", "-o", "name").expect(t, 0)
	if r.stdout != "agent/contact-form\n" {
		t.Errorf("second command: %q", r.stdout)
	}

	// A daemon started on its own, on a port of its choosing.
	addr, stop := daemontest.Start(t, filepath.Join(data, "abctl"), daemon.Config{})
	r = runCLI("get", "agents", "-o", "name").expect(t, 0)
	if strings.Contains(r.stderr, "runs one") || r.stdout != "agent/contact-form\n" {
		t.Errorf("with a daemon at %s: stdout %q, stderr %q", addr, r.stdout, r.stderr)
	}
	stop()
	vars["ABCTL_EMBED"] = "false"
	r = runCLI("get", "agents").expect(t, 1)
	contains(t, "stderr", r.stderr, "no daemon is running over "+filepath.Join(data, "abctl"), "environment ABCTL_EMBED",
		"abctl daemon --data-dir "+filepath.Join(data, "abctl"))
	if n := strayRequests.Load(); n != 0 {
		t.Errorf("the commands sent %d request(s) to the daemon at the local daemon's own address, which is not theirs", n)
	}
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
