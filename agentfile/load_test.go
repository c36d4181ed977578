package agentfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
)

const minimalAgent = `title: %s
workflow_definition:
  blocks:
    - label: open
      block_type: goto_url
      url: https://example.com
`

func agentText(title string) string { return strings.Replace(minimalAgent, "%s", title, 1) }

// writeTree writes files (path relative to dir -> content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func names(agents []*agentfile.Agent) []string {
	var out []string
	for _, a := range agents {
		out = append(out, a.Name)
	}
	return out
}

func problemsOf(t *testing.T, err error) agentfile.Problems {
	t.Helper()
	if err == nil {
		return nil
	}
	var ps agentfile.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v (%T) is not Problems", err, err)
	}
	return ps
}

func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"b-second.yml":         agentText("B"),
		"a_first.yaml":         agentText("A"),
		"C Third.json":         `{"title": "C", "workflow_definition": {"parameters": [], "blocks": []}}`,
		"notes.txt":            "not an agent",
		".hidden.yaml":         "not: [an agent",
		".git/config.yaml":     "not: [an agent",
		"nested/deep.yaml":     agentText("Deep"),
		"nested/more/x.yaml":   agentText("X"),
		"nested/.cache/y.yaml": "not: [an agent",
	})

	// Without -R: the top-level files in lexical order, and a problem that
	// names the subdirectory.
	agents, err := agentfile.Load([]string{dir}, agentfile.LoadOptions{})
	if got, want := names(agents), []string{"c-third", "a_first", "b-second"}; !slices.Equal(got, want) {
		t.Errorf("agents %v, want %v", got, want)
	}
	ps := problemsOf(t, err)
	if len(ps) != 1 || ps[0].File != dir || !strings.Contains(ps[0].Msg, "subdirectories (nested)") || !strings.Contains(ps[0].Msg, "-R") {
		t.Errorf("problems %v, want one about the subdirectory that suggests -R", ps)
	}
	if agents[0].File != filepath.Join(dir, "C Third.json") || agents[0].Line != 1 {
		t.Errorf("first agent at %s:%d", agents[0].File, agents[0].Line)
	}

	// With -R: the whole tree, hidden files and directories left out.
	agents, err = agentfile.Load([]string{dir}, agentfile.LoadOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(agents), []string{"c-third", "a_first", "b-second", "deep", "x"}; !slices.Equal(got, want) {
		t.Errorf("agents %v, want %v", got, want)
	}

	// A directory without agent files is a mistake worth a word.
	empty := filepath.Join(dir, "empty")
	writeTree(t, empty, map[string]string{"README.md": "agents go here", ".keep.yaml": "x: ["})
	_, err = agentfile.Load([]string{empty}, agentfile.LoadOptions{Recursive: true})
	if ps := problemsOf(t, err); len(ps) != 1 || ps[0].File != empty || !strings.Contains(ps[0].Msg, "no agent file") {
		t.Errorf("problems of a directory without agent files: %v", ps)
	}
}

func TestLoadStdinAndFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"one.yaml": agentText("One")})
	stdin := strings.NewReader("name: piped\n" + agentText("Piped") + "---\nname: piped-too\n" + agentText("Piped too"))
	one := filepath.Join(dir, "one.yaml")
	// The same file twice is read once.
	agents, err := agentfile.Load([]string{one, "-", one}, agentfile.LoadOptions{Stdin: stdin})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(agents), []string{"one", "piped", "piped-too"}; !slices.Equal(got, want) {
		t.Fatalf("agents %v, want %v", got, want)
	}
	if agents[1].File != "<stdin>" || agents[1].Line != 1 || agents[2].Line != 9 {
		t.Errorf("stdin agents at %s:%d and :%d", agents[1].File, agents[1].Line, agents[2].Line)
	}
	if agents[0].Definition.Title != "One" || agents[2].Definition.Title != "Piped too" {
		t.Errorf("titles %q, %q", agents[0].Definition.Title, agents[2].Definition.Title)
	}

	// Standard input without a name: there is no file name to take.
	_, err = agentfile.Load([]string{"-"}, agentfile.LoadOptions{Stdin: strings.NewReader(agentText("Anonymous"))})
	if ps := problemsOf(t, err); len(ps) != 1 || ps[0].File != "<stdin>" || !strings.Contains(ps[0].Msg, "standard input") {
		t.Errorf("problems %v", ps)
	}
	_, err = agentfile.Load([]string{"-"}, agentfile.LoadOptions{})
	if ps := problemsOf(t, err); len(ps) != 1 || !strings.Contains(ps[0].Msg, "no standard input") {
		t.Errorf("problems without stdin: %v", ps)
	}
}

// TestLoadCollectsEverything: problems of every file come back together,
// in file order, and the agents without problems are still returned.
func TestLoadCollectsEverything(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a/login.yaml":   agentText("Login"),
		"b/login.yaml":   agentText("Login again"),
		"c/broken.yaml":  "title: [",
		"d/good.yaml":    agentText("Good"),
		"e/typo.yaml":    strings.Replace(agentText("Typo"), "url:", "ulr:", 1),
		"f/empty/.keep":  "",
		"g/shared.yaml":  "name: shared\n" + agentText("One") + "---\nname: shared\n" + agentText("Two"),
		"h/invalid.yaml": "name: login\ntitle: 5\nworkflow_definition: {blocks: []}\n",
	})
	missing := filepath.Join(dir, "missing.yaml")
	agents, err := agentfile.Load([]string{dir, missing}, agentfile.LoadOptions{Recursive: true})
	if got, want := names(agents), []string{"good"}; !slices.Equal(got, want) {
		t.Errorf("agents %v, want %v", got, want)
	}
	ps := problemsOf(t, err)
	var got []string
	for _, p := range ps {
		rel, _ := filepath.Rel(dir, p.File)
		got = append(got, rel+": "+p.Msg)
	}
	want := []string{
		`b/login.yaml: the name "login" is also the name of the agent at ` + filepath.Join(dir, "a/login.yaml") + `:1; names must be unique`,
		`c/broken.yaml: syntax error: did not find expected node content`,
		`e/typo.yaml: missing required key "url"`,
		`e/typo.yaml: unknown key "ulr" (did you mean "url"?)`,
		`g/shared.yaml: the name "shared" is also the name of the agent at ` + filepath.Join(dir, "g/shared.yaml") + `:1; names must be unique`,
		`h/invalid.yaml: the name "login" is also the name of the agent at ` + filepath.Join(dir, "a/login.yaml") + `:1; names must be unique`,
		`h/invalid.yaml: "title" must be a string, not a number`,
		`missing.yaml: no such file or directory`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
