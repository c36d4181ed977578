package agentfile_test

import (
	"os"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
)

func mustNormalize(t *testing.T, def *client.AgentDefinition) []byte {
	t.Helper()
	b, err := agentfile.Normalize(def)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustNormalizeAgent(t *testing.T, a *client.Agent) []byte {
	t.Helper()
	b, err := agentfile.NormalizeAgent(a)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkSame(t *testing.T, what string, want, got []byte) {
	t.Helper()
	if d := agentfile.Diff("file", what, want, got); d != "" {
		t.Errorf("%s agent does not normalize like its definition:\n%s", what, d)
	}
}

// checkRender writes the agent as a file in both formats, loads it back
// and checks that it normalizes like the agent.
func checkRender(t *testing.T, a *client.Agent, name string, tags map[string]string) {
	t.Helper()
	want := mustNormalizeAgent(t, a)
	for _, format := range []string{"yaml", "json"} {
		file, err := agentfile.Render(a, name, tags, format)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := agentfile.Parse("rendered."+format, file)
		if err != nil {
			t.Fatalf("the rendered %s file does not load: %v\n%s", format, err, file)
		}
		if len(parsed) != 1 || parsed[0].Name != name || !sameTags(parsed[0].Tags, tags) {
			t.Fatalf("the rendered %s file loads as %+v", format, parsed)
		}
		checkSame(t, "rendered "+format, want, mustNormalize(t, parsed[0].Definition))
	}
}

func sameTags(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// writeLoaded adds to a report a line per agent that loaded, then its
// warnings, one per line.
func writeLoaded(got *strings.Builder, agents []*agentfile.Agent) {
	for _, a := range agents {
		got.WriteString("loaded: " + a.Name + "\n")
		for _, w := range a.Warnings {
			got.WriteString(w.String() + "\n")
		}
	}
}

// checkGolden compares a report with the file golden, or writes the file
// with -update; test names the test that -update is given to.
func checkGolden(t *testing.T, golden, got, test string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to write it)", err, test)
	}
	if d := agentfile.Diff(golden, "got", want, []byte(got)); d != "" {
		t.Errorf("the report differs from %s:\n%s", golden, d)
	}
}
