package cmdutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

const agentFile = `title: Open a page
workflow_definition:
  parameters: []
  blocks:
    - block_type: goto_url
      label: open
      url: https://example.com/
`

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFileFlags: -f (repeatable) and -R, with file name completion.
func TestFileFlags(t *testing.T) {
	var ff FileFlags
	cmd := &cobra.Command{Use: "apply"}
	ff.Add(cmd)
	if err := cmd.ParseFlags([]string{"-f", "a.yaml", "--filename", "dir", "-R"}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ff.Files, ",") != "a.yaml,dir" || !ff.Recursive {
		t.Errorf("parsed %+v", ff)
	}
	if ann := cmd.Flags().Lookup("filename").Annotations[cobra.BashCompFilenameExt]; strings.Join(ann, ",") != "yaml,yml,json" {
		t.Errorf("completion of -f: %v", ann)
	}
}

func TestFileFlagsLoad(t *testing.T) {
	dir, tree := t.TempDir(), t.TempDir()
	write(t, dir, "open.yaml", agentFile)
	write(t, tree, "top.yaml", agentFile)
	write(t, tree, "sub/deeper.yaml", strings.Replace(agentFile, "Open a page", "Deeper", 1))
	empty := t.TempDir()

	var none FileFlags
	if err := none.Require(); err == nil || !strings.Contains(err.Error(), "give the agent files with -f") {
		t.Errorf("Require without -f: %v", err)
	}
	var ue *UsageError
	if _, err := none.Load(nil, nil); !errors.As(err, &ue) {
		t.Errorf("Load without -f: %v, want a usage error", err)
	}
	if agents, err := none.Read(nil, nil); err != nil || agents != nil {
		t.Errorf("Read without -f: %v %v, want nothing", agents, err)
	}

	flat := FileFlags{Files: []string{dir}}
	agents, err := flat.Load(nil, nil)
	if err != nil || len(agents) != 1 || agents[0].Name != "open" {
		t.Fatalf("Load of a directory: %v %v", agents, err)
	}
	deep := FileFlags{Files: []string{tree}, Recursive: true}
	if agents, err := deep.Load(nil, nil); err != nil || len(agents) != 2 {
		t.Errorf("Load -R: %d agents, %v", len(agents), err)
	}
	var ce *CodeError
	shallow := FileFlags{Files: []string{tree}}
	if _, err := shallow.Load(nil, nil); !errors.As(err, &ce) || ce.Code != ExitUsage || !strings.Contains(err.Error(), "add -R") {
		t.Errorf("Load of subdirectories without -R: %v", err)
	}
	stdin := FileFlags{Files: []string{"-"}}
	if agents, err := stdin.Load(strings.NewReader("name: piped\n"+agentFile), nil); err != nil || len(agents) != 1 || agents[0].Name != "piped" {
		t.Errorf("Load of stdin: %v %v", agents, err)
	}

	bad := FileFlags{Files: []string{write(t, t.TempDir(), "bad.yaml", "title: [\n")}}
	if _, err := bad.Load(nil, nil); !errors.As(err, &ce) || ce.Code != ExitUsage || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("a broken file: %v, want exit status 2 naming the file", err)
	}
	nothing := FileFlags{Files: []string{empty}}
	if _, err := nothing.Load(nil, nil); !errors.As(err, &ce) || ce.Code != ExitUsage || !strings.Contains(err.Error(), "no agent file") {
		t.Errorf("Load of an empty directory: %v", err)
	}
	blank := FileFlags{Files: []string{"-"}}
	if _, err := blank.Load(strings.NewReader(""), nil); !errors.As(err, &ce) || ce.Code != ExitUsage || !strings.Contains(err.Error(), "<stdin>") {
		t.Errorf("Load of nothing on stdin: %v", err)
	}
}
