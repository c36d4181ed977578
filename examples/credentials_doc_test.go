package examples

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/internal/testsite"
)

// TestCredentialsDocWalk follows docs/credentials.md's "Signing in with a
// credential" as a reader would: its agent file (examples/login, shown on
// the page as it is) and its commands (the
// credential created with the secrets piped in, then the run), against the
// test site's secure sign-in and a daemon with the real engine and no
// model. The run signs in (password, then the authenticator's code) and
// reaches the page behind the sign-in.
func TestCredentialsDocWalk(t *testing.T) {
	chromium := needChromium(t)
	bash := needBash(t)
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "credentials.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	if i := strings.Index(section, "## Signing in with a credential"); i >= 0 {
		section = section[i:]
	} else {
		t.Fatal(`docs/credentials.md has no "Signing in with a credential" section`)
	}
	blocks := regexp.MustCompile("(?s)```(yaml|sh)\n(.*?)```").FindAllStringSubmatch(section, 2)
	if len(blocks) != 2 || blocks[0][1] != "yaml" || blocks[1][1] != "sh" {
		t.Fatalf("the section's first blocks are not the agent file and its commands: %q", blocks)
	}
	// The page shows the agent file as it is in the repository.
	const agentFile = "examples/login/invoices.yaml"
	file, err := os.ReadFile(filepath.Join(repoRoot, agentFile))
	if err != nil {
		t.Fatal(err)
	}
	shown := strings.TrimPrefix(blocks[0][2], "# "+agentFile+"\n")
	if !strings.HasSuffix(string(file), shown) {
		t.Errorf("docs/credentials.md shows another agent than %s:\n%s", agentFile, shown)
	}
	// The commands, joined where a line ends with a pipe, without the
	// test site's start (the test serves it) and the comment lines.
	var cmds []string
	pending := ""
	for _, l := range strings.Split(blocks[1][2], "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "go run ./internal/testsite/serve") {
			continue
		}
		pending += l
		if strings.HasSuffix(l, "|") {
			pending += " "
			continue
		}
		cmds = append(cmds, pending)
		pending = ""
	}
	if len(cmds) != 2 || !strings.Contains(cmds[0], "abctl credentials create") || !strings.HasPrefix(cmds[1], "abctl run "+agentFile) {
		t.Fatalf("the commands: %q", cmds)
	}

	site, stop, err := testsite.Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: daemonKey, Workers: 1,
		Engine: &daemon.EngineConfig{Chromium: chromium, NoRecording: true}})
	env := cliEnv(t, "http://"+addr, daemonKey)

	created := run(t, repoRoot, env, bash, "-c", cmds[0])
	id := regexp.MustCompile(`credential/(cred_\S+)`).FindStringSubmatch(created.stdout)
	if created.code != 0 || id == nil {
		t.Fatalf("creating the credential: %s", created)
	}
	if strings.Contains(created.stdout+created.stderr, testsite.DemoPassword) {
		t.Errorf("abctl repeated the password: %s", created)
	}
	cmd := strings.ReplaceAll(cmds[1], "http://127.0.0.1:8000", strings.TrimSuffix(site.URL("/"), "/"))
	cmd = regexp.MustCompile(`cred_[0-9]+`).ReplaceAllString(cmd, id[1])
	res := run(t, repoRoot, env, bash, "-c", cmd)
	m := runStarted.FindStringSubmatch(res.stderr)
	if res.code != 0 || m == nil {
		t.Fatalf("the run: %s", res)
	}
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(daemonKey))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Runs.Wait(t.Context(), m[1], &client.WaitOptions{Interval: 200 * time.Millisecond, MaxInterval: time.Second})
	if err != nil || r.Status != client.RunStatusCompleted {
		t.Fatalf("run %v: %v", r, err)
	}
	if n := site.SignIns(testsite.DemoUser); n != 1 {
		t.Errorf("the demo account signed in %d times", n)
	}
	if strings.Contains(res.stdout+res.stderr, testsite.DemoPassword) {
		t.Errorf("the run's output shows the password: %s", res)
	}
}
