package follow

import (
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

func TestScriptLine(t *testing.T) {
	id := "s_1"
	for _, c := range []struct {
		run  client.Run
		want string
	}{
		{client.Run{Status: client.RunStatusCompleted}, ""},
		{client.Run{Status: client.RunStatusCompleted, ScriptRun: &client.ScriptRun{ScriptID: &id}}, "script: s_1; abctl scripts get s_1 shows it"},
		{client.Run{Status: client.RunStatusCompleted, ScriptRun: &client.ScriptRun{ScriptID: &id, AIFallbackTriggered: true}}, "a new version was recorded"},
		{client.Run{Status: client.RunStatusFailed, ScriptRun: &client.ScriptRun{ScriptID: &id, AIFallbackTriggered: true}}, "(the model took over what could not be replayed);"},
	} {
		got := scriptLine(&c.run)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s %+v: %q, want %q", c.run.Status, c.run.ScriptRun, got, c.want)
		}
	}
	failed := client.Run{Status: client.RunStatusFailed, ScriptRun: &client.ScriptRun{ScriptID: &id, AIFallbackTriggered: true}}
	if strings.Contains(scriptLine(&failed), "recorded") {
		t.Error("a failed run claims a new version")
	}
}

// TestEndLinesSayWhatARunWithoutOutputDid: a completed run that extracted
// nothing ends with its summary; one with data, or one that failed, does
// not repeat it.
func TestEndLinesSayWhatARunWithoutOutputDid(t *testing.T) {
	did := "Submitted the contact form; the site thanked us."
	for _, c := range []struct {
		run  client.Run
		want bool
	}{
		{client.Run{Status: client.RunStatusCompleted, Summary: &did}, true},
		{client.Run{Status: client.RunStatusCompleted, Summary: &did, Output: []byte(" null")}, true},
		{client.Run{Status: client.RunStatusCompleted, Summary: &did, Output: []byte(`{"n":1}`)}, false},
		{client.Run{Status: client.RunStatusFailed, Summary: &did}, false},
		{client.Run{Status: client.RunStatusCompleted}, false},
	} {
		got := strings.Join(endLines(&c.run), "\n")
		if strings.Contains(got, "done: "+did) != c.want {
			t.Errorf("%s, output %q: end lines %q", c.run.Status, c.run.Output, got)
		}
	}
}
