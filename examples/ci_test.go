package examples

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
)

const workflowFile = "ci/github-actions.yml"

// workflow is the part of a GitHub Actions workflow the test reads.
type workflow struct {
	On map[string]*struct {
		Branches []string `yaml:"branches"`
	} `yaml:"on"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		If    string `yaml:"if"`
		Steps []struct {
			Name  string `yaml:"name"`
			Run   string `yaml:"run"`
			Shell string `yaml:"shell"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// ciJob is a job of the workflow that runs abctl: the shell scripts of
// its steps that do, and the abctl command lines in them.
type ciJob struct {
	name     string
	scripts  []string
	commands [][]string // the words of each abctl command, without redirections
}

// TestGitHubActionsWorkflow keeps the CI snippet working: it reads the
// workflow, checks its triggers and where the key comes from, then runs its
// abctl steps against a real daemon with examples/agents as the repository's
// agents/: the review step's diff exits 1 before the first apply (and the
// step still passes), the apply on main creates every agent and prunes one
// that has no file any more, the diff exits 0 afterwards, and a broken agent
// file makes the review step fail.
func TestGitHubActionsWorkflow(t *testing.T) {
	bash := needBash(t)
	review, apply := readWorkflow(t)

	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: daemonKey})
	env := cliEnv(t, "http://"+addr, daemonKey)
	// A repository checkout: the example agents as agents/.
	repo := t.TempDir()
	examples, err := filepath.Glob(filepath.Join(agentsDir, "*.yaml"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no example agents (%v)", err)
	}
	var names []string
	for _, f := range examples {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(repo, "agents", filepath.Base(f)), string(b))
		names = append(names, agentfile.NameFromFile(f))
	}
	abctl := func(words []string) result {
		t.Helper()
		return run(t, repo, env, filepath.Join(abctlBinary(t), "abctl"), words[1:]...)
	}
	// A step's script, as GitHub runs a bash step.
	step := func(script, summary string) result {
		t.Helper()
		path := filepath.Join(t.TempDir(), "step.sh")
		writeFile(t, path, script)
		return run(t, repo, append(env, "GITHUB_STEP_SUMMARY="+summary), bash, "--noprofile", "--norc", "-eo", "pipefail", path)
	}
	diff, applyCmd := review.commands[0], apply.commands[0]

	// An agent applied earlier whose file has since been deleted: apply
	// on main prunes it.
	writeFile(t, filepath.Join(repo, "old", "retired.yaml"),
		"title: Retired\nworkflow_definition:\n  blocks:\n    - {block_type: wait, label: pause, wait_sec: 1}\n")
	if res := run(t, repo, env, filepath.Join(abctlBinary(t), "abctl"), "apply", "-f", "old/"); res.code != 0 {
		t.Fatalf("applying the retired agent: %s", res)
	}
	if err := os.RemoveAll(filepath.Join(repo, "old")); err != nil {
		t.Fatal(err)
	}

	// The pull request that adds the agents: differences, shown.
	res := abctl(diff)
	if res.code != 1 {
		t.Fatalf("%s before apply: want exit status 1 (differences)\n%s", strings.Join(diff, " "), res)
	}
	for _, n := range names {
		if !strings.Contains(res.stdout, "agent/"+n) {
			t.Errorf("the diff does not show agent/%s:\n%s", n, res.stdout)
		}
	}
	summary := filepath.Join(t.TempDir(), "summary.md")
	for _, script := range review.scripts {
		if res := step(script, summary); res.code != 0 {
			t.Fatalf("the review step failed on differences; it must pass:\n%s", res)
		} else if !strings.Contains(res.stdout, "+title:") {
			t.Errorf("the review step's log does not show the diff:\n%s", res.stdout)
		}
	}
	if b, _ := os.ReadFile(summary); !strings.Contains(string(b), "```diff") || !strings.Contains(string(b), "agent/"+names[0]) {
		t.Errorf("the job summary does not hold the diff:\n%s", b)
	}

	// The merge: apply creates them all and prunes the retired one.
	res = abctl(applyCmd)
	if res.code != 0 {
		t.Fatalf("%s: want exit status 0\n%s", strings.Join(applyCmd, " "), res)
	}
	for _, n := range names {
		if !strings.Contains(res.stdout, "agent/"+n+" created\n") {
			t.Errorf("apply did not create agent/%s:\n%s", n, res.stdout)
		}
	}
	if !strings.Contains(res.stdout, "agent/retired pruned\n") {
		t.Errorf("apply --prune did not delete the retired agent:\n%s", res.stdout)
	}
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(daemonKey))
	if err != nil {
		t.Fatal(err)
	}
	if agents, err := c.Agents.List(t.Context(), &client.ListAgentsOptions{PageSize: 100}); err != nil || len(agents) != len(names) {
		t.Errorf("the service has %d agents (%v), want the %d of the files", len(agents), err, len(names))
	}

	// Nothing left to change: diff exits 0, both jobs pass.
	if res := abctl(diff); res.code != 0 || res.stdout != "" {
		t.Errorf("%s after apply: want exit status 0 and no output\n%s", strings.Join(diff, " "), res)
	}
	for _, script := range review.scripts {
		if res := step(script, summary); res.code != 0 {
			t.Errorf("the review step with no differences:\n%s", res)
		}
	}
	for _, script := range apply.scripts {
		if res := step(script, summary); res.code != 0 || strings.Count(res.stdout, " unchanged\n") != len(names) {
			t.Errorf("the apply step again: want every agent unchanged\n%s", res)
		}
	}

	// A pull request with a broken file: the review fails, naming it.
	writeFile(t, filepath.Join(repo, "agents", "broken.yaml"),
		"title: Broken\nworkflow_definition:\n  blocks:\n    - {block_type: goto_url, label: open, urll: https://example.com}\n")
	for _, script := range review.scripts {
		if res := step(script, summary); res.code < 2 || !strings.Contains(res.stderr, "broken.yaml:4") {
			t.Errorf("the review step with a broken agent file: want it to fail (exit status 2 or more) naming broken.yaml:4\n%s", res)
		}
	}
}

// readWorkflow reads the snippet and checks what does not run: the
// triggers, the key from a secret, which job runs on which event. It
// returns the review job (pull requests) and the apply job (main).
func readWorkflow(t *testing.T) (review, apply ciJob) {
	t.Helper()
	b, err := os.ReadFile(workflowFile)
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("%s: %v", workflowFile, err)
	}
	if _, ok := wf.On["pull_request"]; !ok {
		t.Errorf("%s does not run on pull requests", workflowFile)
	}
	if push := wf.On["push"]; push == nil || !slices.Contains(push.Branches, "main") {
		t.Errorf("%s does not run on pushes to main", workflowFile)
	}
	if got := wf.Env["ABCTL_API_KEY"]; got != "${{ secrets.ABCTL_API_KEY }}" {
		t.Errorf("ABCTL_API_KEY is %q, want the repository secret", got)
	}
	if got := wf.Env["ABCTL_BASE_URL"]; !strings.Contains(got, "ABCTL_BASE_URL") {
		t.Errorf("ABCTL_BASE_URL is %q, want it from the repository's settings", got)
	}

	for name, job := range wf.Jobs {
		j := ciJob{name: name}
		for _, s := range job.Steps {
			if s.Shell != "" && s.Shell != "bash" {
				t.Errorf("job %s, step %q: the test runs steps with bash, not %s", name, s.Name, s.Shell)
			}
			found := false
			for _, line := range strings.Split(s.Run, "\n") {
				words, err := shellWords(strings.TrimSpace(line))
				if err != nil || len(words) == 0 || words[0] != "abctl" {
					continue
				}
				for i, w := range words {
					if w != "" && strings.ContainsAny(w[:1], "|&;><") {
						words = words[:i]
						break
					}
				}
				j.commands, found = append(j.commands, words), true
			}
			if found {
				j.scripts = append(j.scripts, s.Run)
			}
		}
		switch {
		case len(j.commands) == 0:
		case strings.Contains(job.If, "pull_request"):
			review = j
		case strings.Contains(job.If, "push") && strings.Contains(job.If, "refs/heads/main"):
			apply = j
		default:
			t.Errorf("job %s runs abctl but is neither for pull requests nor for pushes to main (if: %q)", name, job.If)
		}
	}
	if len(review.commands) != 1 || strings.Join(review.commands[0][:2], " ") != "abctl diff" {
		t.Fatalf("the pull-request job should run one abctl diff; it runs %q", review.commands)
	}
	if len(apply.commands) != 1 || strings.Join(apply.commands[0][:2], " ") != "abctl apply" || !slices.Contains(apply.commands[0], "--prune") {
		t.Fatalf("the main job should run one abctl apply --prune; it runs %q", apply.commands)
	}
	return review, apply
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
