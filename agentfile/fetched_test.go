package agentfile_test

import (
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
)

// TestFileTags: the name comes from abctl.name, key: value tags go in the
// file, labels and keys a file cannot hold are told, and the service's and
// abctl's own keys stay out silently.
func TestFileTags(t *testing.T) {
	key := func(s string) *string { return &s }
	name, tags, left := agentfile.FileTags([]client.TagItem{
		{Key: key(agentfile.NameTag), Value: "contact-form"},
		{Key: key("env"), Value: "prod"},
		{Value: "urgent"},
		{Key: key("bad key!"), Value: "x"},
		{Key: key("abctl.other"), Value: "y"},
	})
	if name != "contact-form" {
		t.Errorf("name %q, want contact-form", name)
	}
	if len(tags) != 1 || tags["env"] != "prod" {
		t.Errorf("file tags %v, want env: prod only", tags)
	}
	if len(left) != 2 || left[0].Tag.Value != "urgent" || left[0].Why == "" || *left[1].Tag.Key != "bad key!" || left[1].Why == "" {
		t.Errorf("left out %+v, want the label urgent and the key \"bad key!\", each with why", left)
	}
}
