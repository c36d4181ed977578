package agentfile_test

import (
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
