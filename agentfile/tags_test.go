package agentfile_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
)

// TestTagProblem: TagProblem accepts exactly the tags a file's tags key
// may hold, with the message a file with that tag gets.
func TestTagProblem(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		reserved   bool
	}{
		{"team", "billing", false},
		{"env.region", "eu/west", false},
		{"abctl.name", "contact-form", true},
		{"Skyvern.source", "x", true},
		{"-bad", "x", false},
		{strings.Repeat("k", 65), "x", false},
		{"team", "", false},
		{"team", "a,b", false},
		{"team", strings.Repeat("v", 257), false},
	} {
		file := "title: T\ntags: {" + strconv.Quote(tc.key) + ": " + strconv.Quote(tc.value) + "}\nworkflow_definition:\n  parameters: []\n  blocks: []\n"
		_, err := agentfile.Parse("t.yaml", []byte(file))
		msg := agentfile.TagProblem(tc.key, tc.value)
		switch {
		case err == nil && msg != "":
			t.Errorf("%s=%s: a file takes it, TagProblem says %q", tc.key, tc.value, msg)
		case err != nil && (msg == "" || !strings.Contains(err.Error(), msg)):
			t.Errorf("%s=%s: the file has %q, TagProblem says %q", tc.key, tc.value, err, msg)
		}
		if got := agentfile.ReservedTagKey(tc.key); got != tc.reserved {
			t.Errorf("ReservedTagKey(%q) = %v", tc.key, got)
		}
	}
}
