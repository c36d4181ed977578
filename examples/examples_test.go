// Package examples holds the tests that keep the project's examples honest:
// every agent file of examples/agents runs, with the very command its header
// comment gives, through the real abctl binary against a real daemon that
// drives a real Chromium on the project's test site; the GitHub Actions
// snippet of examples/ci has its abctl steps run against a real daemon.
//
// The test site is the static directory internal/testsite/site,
// served here by http.FileServer as `python3 -m http.server` serves it for
// a person trying the examples (the Go test site of that package is
// internal to the module). The language model is llmtest's scripted server:
// its replies name elements by their text, never by id, so a script reads
// like what a model would answer.
//
// abctl is built once per test binary with `go build` (the CLI's packages are
// internal to cmd/abctl and cannot be imported from here), which also checks
// that the commands written in the examples work as typed.
package examples

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Paths relative to this package's directory, where tests run.
const (
	repoRoot  = ".."
	agentsDir = "agents"
	siteDir   = "../internal/testsite/site"
	// exampleSite is the address the examples' comments serve the test
	// site on; the tests replace it with their own server's.
	exampleSite = "http://127.0.0.1:8000"
	// serveCommand is how the examples' comments serve the test site.
	serveCommand = "go run ./internal/testsite/serve"
)

// commandTimeout bounds one abctl invocation (a whole agent run included).
const commandTimeout = 3 * time.Minute

var binDir string // holds the abctl binary, built by abctlBinary

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "abctl-examples-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "examples:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildErr  error
)

// abctlBinary builds cmd/abctl once and returns the directory holding the
// binary, for PATH. It skips the test when the go command is missing.
func abctlBinary(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: it is needed to build abctl for the examples")
	}
	buildOnce.Do(func() {
		cmd := exec.Command(goCmd, "build", "-o", filepath.Join(binDir, "abctl"), "./cmd/abctl")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/abctl: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

// needBash skips the test when bash, which runs the examples' commands as
// a person would paste them, is missing.
func needBash(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not on PATH: it runs the examples' shell commands")
	}
	return p
}

// cliEnv is the environment abctl runs with against one daemon: its own
// configuration directory, the daemon's address and key, plain output.
func cliEnv(t *testing.T, baseURL, key string) []string {
	t.Helper()
	home := t.TempDir()
	return []string{
		"PATH=" + abctlBinary(t) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"ABCTL_CONFIG_DIR=" + filepath.Join(home, "config"),
		"ABCTL_BASE_URL=" + baseURL,
		"ABCTL_API_KEY=" + key,
		"ABCTL_EMBED=false", // never start a daemon of its own
		"CI=true",           // plain lines instead of the live view
		"NO_COLOR=1",
	}
}

// result is what one command did.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit status %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// run executes a program in dir with env and returns its exit status and
// outputs; a program that cannot be started fails the test.
func run(t *testing.T, dir string, env []string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	return collect(t, ctx, cmd, name+" "+strings.Join(args, " "))
}

// collect runs cmd, made with ctx, and returns its exit status and
// outputs; a program that cannot be started, or that ctx ended, fails the
// test, named as what.
func collect(t *testing.T, ctx context.Context, cmd *exec.Cmd, what string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && ctx.Err() == nil:
		res.code = exit.ExitCode()
	default:
		t.Fatalf("%s: %v\n%s", what, err, res)
	}
	return res
}

// header returns the leading comment of an example file, without the "#"
// marks.
func header(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		lines = append(lines, strings.TrimSpace(strings.TrimPrefix(line, "#")))
	}
	if len(lines) == 0 {
		t.Fatalf("%s does not start with a comment saying what it does and how to run it", path)
	}
	return lines
}

// runCommands returns the `abctl run` commands of an example file's
// header, checking that the header also says how to serve the test site
// and what to change for a real website.
func runCommands(t *testing.T, path string) []string {
	t.Helper()
	lines := header(t, path)
	text := strings.Join(lines, "\n")
	if !strings.Contains(text, serveCommand) {
		t.Errorf("%s: the header does not say how to serve the test site (%q)", path, serveCommand)
	}
	if !strings.Contains(text, "For a real website") {
		t.Errorf("%s: the header does not say what to change for a real website", path)
	}
	var cmds []string
	for _, l := range lines {
		if strings.HasPrefix(l, "abctl run ") {
			cmds = append(cmds, l)
		}
	}
	if len(cmds) == 0 {
		t.Fatalf("%s: the header has no `abctl run` command", path)
	}
	return cmds
}

// shellWords splits a command line as a POSIX shell does for the simple
// cases the examples use: blanks separate words; single quotes keep
// everything; double quotes keep everything but \" \\ \$ \`; a backslash
// outside quotes keeps the next character. Anything else (variables,
// operators) is taken literally.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unclosed ' in %q", s)
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, fmt.Errorf("unclosed \" in %q", s)
			}
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
		default:
			w.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// params returns the --param key=value pairs of a command line.
func params(t *testing.T, command string) map[string]string {
	t.Helper()
	words, err := shellWords(command)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for i, w := range words {
		var kv string
		switch {
		case (w == "--param" || w == "-p") && i+1 < len(words):
			kv = words[i+1]
		case strings.HasPrefix(w, "--param="):
			kv = strings.TrimPrefix(w, "--param=")
		default:
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

// testSite serves the static test site as `python3 -m http.server` does,
// and records what the pages post: the form page's submit (a static server
// refuses it; this one records it first) and the reports the pages' scripts
// send to /event.
type testSite struct {
	URL string

	mu      sync.Mutex
	posts   []post
	changed chan struct{}
}

// post is one POST the browser sent to the site.
type post struct {
	Path string
	Kind string // the kind= of an /event report
	Form url.Values
}

func startSite(t *testing.T) *testSite {
	t.Helper()
	s := &testSite{changed: make(chan struct{})}
	files := http.FileServer(http.Dir(siteDir))
	mux := http.NewServeMux()
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.record(post{Path: r.URL.Path, Kind: r.URL.Query().Get("kind"), Form: r.PostForm})
		// What python's http.server answers to any POST.
		http.Error(w, "Unsupported method ('POST')", http.StatusNotImplemented)
	})
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		// Go's table may not know .csv; python's does, and Chromium
		// downloads text/csv rather than showing it.
		if strings.HasSuffix(r.URL.Path, ".csv") {
			w.Header().Set("Content-Type", "text/csv")
		}
		files.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func (s *testSite) record(p post) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.posts = append(s.posts, p)
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitPost returns the first post to path (and of kind, for /event) made
// after the first `after` posts, waiting up to 10 s for it: a page's
// report may still be in flight when its run ends.
func (s *testSite) waitPost(t *testing.T, after int, path, kind string) post {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		for _, p := range s.posts[min(after, len(s.posts)):] {
			if p.Path == path && p.Kind == kind {
				s.mu.Unlock()
				return p
			}
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("the browser posted nothing to %s (kind %q)", path, kind)
		}
	}
}

// postCount is how many posts the site has received so far.
func (s *testSite) postCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.posts)
}

var runStarted = regexp.MustCompile(`Run (\S+) started`)

// readmeText is examples/README.md with its continued lines (a backslash at
// the end) joined, so that a command reads as on one line.
func readmeText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(` *\\\n\s*`).ReplaceAllString(string(b), " ")
}

// TestREADME: every example has its section in examples/README.md.
func TestREADME(t *testing.T) {
	readme := readmeText(t)
	var examples []string
	for _, pattern := range []string{"agents/*.yaml", "go/*", "ci/*"} {
		m, err := filepath.Glob(pattern)
		if err != nil || len(m) == 0 {
			t.Fatalf("no examples match %s (%v)", pattern, err)
		}
		examples = append(examples, m...)
	}
	for _, ex := range examples {
		name := filepath.ToSlash(ex)
		if strings.HasPrefix(name, "agents/") {
			name = strings.TrimPrefix(name, "agents/")
		}
		if !strings.Contains(readme, "### `"+name+"`") {
			t.Errorf("examples/README.md has no section for %s (a heading ### `%s`)", ex, name)
		}
	}
}
