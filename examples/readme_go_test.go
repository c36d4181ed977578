package examples

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
)

// goBlock is a ```go block of a Markdown file.
type goBlock struct {
	line    int    // the line of its first line of code
	section string // the heading above it
	code    string
}

// goBlocks returns the ```go blocks of the Markdown file at path.
func goBlocks(t *testing.T, path string) []goBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []goBlock
	var cur *goBlock
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(l, "#"):
			section = strings.TrimSpace(strings.TrimLeft(l, "#"))
		case cur == nil && strings.TrimSpace(l) == "```go":
			cur = &goBlock{line: n + 1, section: section}
		case cur != nil && strings.TrimSpace(l) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.code += l + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: a ```go block that never ends", path, cur.line-1)
	}
	return blocks
}

// TestREADMEGoPrograms: every ```go block of the repository's README is a
// whole program that compiles as written (go vet, in a directory of this
// module, so that it uses the SDK as it is); the SDK's program, run
// against a service that does not answer, says what failed and exits 1
// instead of panicking; and, run with the README's command line against a
// daemon without a model (its key in the data directory where the README
// says the daemon writes it) and the test site, it completes its run and
// prints the output.
func TestREADMEGoPrograms(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: it is needed to vet README.md's Go programs")
	}
	blocks := goBlocks(t, filepath.Join(repoRoot, "README.md"))
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```go block: this test has nothing to check")
	}
	dir, err := os.MkdirTemp(repoRoot, ".readme-go-") // a leading dot: ./... leaves it out
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var pkgs []string
	sdk := "" // the package of the Go SDK section's program
	for i, b := range blocks {
		if !strings.HasPrefix(b.code, "package ") {
			t.Errorf("README.md:%d: a Go block that is not a whole program: start it with its package clause, "+
				"imports and func main, so that it compiles as written", b.line)
			continue
		}
		pkg := filepath.Join(dir, "block"+strconv.Itoa(i))
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "main.go"), []byte(b.code), 0o644); err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(repoRoot, pkg)
		if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(rel))
		if b.section == "The Go SDK" {
			sdk = pkgs[len(pkgs)-1]
		}
	}
	if len(pkgs) == 0 {
		return
	}
	vet := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	vet.Dir = repoRoot
	if out, err := vet.CombinedOutput(); err != nil {
		t.Fatalf("go vet of README.md's Go blocks: %v\n%s", err, readmeLines(string(out), dir, blocks))
	}

	if sdk == "" {
		t.Fatal("README.md's section \"The Go SDK\" has no Go program")
	}
	bin := filepath.Join(t.TempDir(), "sdk")
	build := exec.Command("go", "build", "-o", bin, sdk)
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of README.md's SDK program: %v\n%s", err, readmeLines(string(out), dir, blocks))
	}
	// It reads examples/agents/quickstart.yaml from the clone's root, as
	// the README says, and the service it is given refuses connections.
	run := exec.Command(bin)
	run.Dir = repoRoot
	run.Env = []string{"ABCTL_BASE_URL=http://" + refusingAddr(t), "ABCTL_API_KEY=abk_readme_test"}
	out, err := run.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || strings.Contains(string(out), "panic") || !strings.Contains(string(out), "connection refused") {
		t.Errorf("README.md's SDK program against a service that does not answer: %v, want exit status 1 and a message "+
			"that says why (no panic):\n%s", err, out)
	}

	runREADMESDKCommand(t, sdk)
}

// runREADMESDKCommand runs the README's command line of the SDK program
// (the package pkg, a path from the repository's root) as a person would
// paste it, against a daemon with a real browser and no model, whose key is
// where the README says it is, and the test site: the run completes and
// the program prints its output.
func runREADMESDKCommand(t *testing.T, pkg string) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const keyFile = "~/.local/share/abctl/api-key"
	var command string
	for l := range strings.Lines(string(readme)) {
		if strings.Contains(l, "go run ./try-sdk") {
			command = strings.TrimSpace(l)
			break
		}
	}
	if command == "" || !strings.Contains(command, "ABCTL_API_KEY=$(cat "+keyFile+")") || !strings.Contains(command, "ABCTL_BASE_URL="+readmeDaemon) {
		t.Fatalf("README.md shows no command line that runs its SDK program (go run ./try-sdk) against the "+
			"local daemon (ABCTL_BASE_URL=%s), with the key the daemon writes (ABCTL_API_KEY=$(cat %s)): %q",
			readmeDaemon, keyFile, command)
	}
	chromium := needChromium(t)
	bash := needBash(t)
	site := startSite(t)
	const key = "abk_readme_sdk_test_key_0123456789"
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{
		APIKey: key, Workers: 1,
		Engine: &daemon.EngineConfig{Chromium: chromium, NoRecording: true}, // no model
	})
	home := t.TempDir()
	dataDir := filepath.Join(home, ".local", "share", "abctl")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, "api-key"), []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	command = strings.ReplaceAll(command, readmeDaemon, "http://"+addr)
	command = strings.ReplaceAll(command, "./try-sdk", pkg)
	env := append(os.Environ(), "HOME="+home, "SITE="+site.URL)
	// The go command's caches stay where they are, not under the new HOME.
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", v, err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	res := run(t, repoRoot, env, bash, "-c", command)
	if res.code != 0 || !strings.Contains(res.stdout, `"save_pages_output"`) || !strings.Contains(res.stdout, site.URL+"/form.html") {
		t.Errorf("README.md's SDK program, run as the README says (%s) against a daemon without a model and "+
			"the test site: want exit status 0 and the quickstart agent's output\n%s", command, res)
	}
}

// readmeDaemon is the local daemon's address in the README.
const readmeDaemon = "http://127.0.0.1:8780"

// readmeLines rewrites the positions in the go tool's output from the
// files written for the blocks to README.md's lines.
func readmeLines(out, dir string, blocks []goBlock) string {
	re := regexp.MustCompile(regexp.QuoteMeta(filepath.Base(dir)) + `/block(\d+)/main\.go:(\d+)`)
	return re.ReplaceAllStringFunc(out, func(m string) string {
		sub := re.FindStringSubmatch(m)
		i, _ := strconv.Atoi(sub[1])
		l, _ := strconv.Atoi(sub[2])
		return fmt.Sprintf("README.md:%d", blocks[i].line+l-1)
	})
}

// refusingAddr is a loopback address where nothing listens: a port the
// kernel chose, then closed.
func refusingAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
