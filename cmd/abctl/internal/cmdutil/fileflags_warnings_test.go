package cmdutil

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// contactForm is an agent file with a key the service ignores.
const contactForm = `title: Fill the contact form
tags: {team: web}
workflow_definition:
  parameters:
    - {key: site, parameter_type: workflow, workflow_parameter_type: string}
  blocks:
    - {block_type: goto_url, label: open, url: "{{site}}/form.html"}
    - {block_type: wait, label: pause, wait_sec: 1}
`

// TestLoadWarnings: the warnings of the agents that load are written, one
// per line, even when another file has an error; problems are an error of
// exit status 2.
func TestLoadWarnings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("contact-form.yaml", strings.Replace(contactForm, "wait_sec: 1}", "wait_sec: 1, cache_actions: true}", 1))
	bad := write("bad.yaml", "title: Bad\nworkflow_definition:\n  blocks:\n    - {block_type: goto_url, label: open, urll: x}\n")

	var warn bytes.Buffer
	agents, err := (&FileFlags{Files: []string{good}}).Load(nil, &warn)
	if err != nil || len(agents) != 1 || agents[0].Name != "contact-form" {
		t.Fatalf("Load: %v, %v", agents, err)
	}
	if want := good + `:8:53: `; !strings.HasPrefix(warn.String(), want) || !strings.Contains(warn.String(), `warning: agent "contact-form", block "pause": unknown key "cache_actions"`) ||
		strings.Count(warn.String(), "\n") != 1 {
		t.Errorf("warnings:\n%s", warn.String())
	}

	warn.Reset()
	_, err = (&FileFlags{Files: []string{good, bad}}).Load(nil, &warn)
	var ce *CodeError
	if !errors.As(err, &ce) || ce.Code != ExitUsage || !strings.Contains(err.Error(), `unknown key "urll" (did you mean "url"?)`) {
		t.Errorf("a bad file: %v", err)
	}
	if !strings.Contains(warn.String(), "cache_actions") {
		t.Errorf("the warnings of the good file were not written: %q", warn.String())
	}

	_, err = (&FileFlags{}).Load(nil, &warn)
	if err == nil || !strings.Contains(err.Error(), "give the agent files with -f") {
		t.Errorf("no -f: %v", err)
	}
}
