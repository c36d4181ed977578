package store

import (
	"errors"
	"testing"

	"github.com/abctl/abctl/client"
)

// TestTypedErrors: the errors about a record say which, in typed values
// that match their sentinel.
func TestTypedErrors(t *testing.T) {
	f := newFixture(t)
	a := f.create(f.org.ID, agentDef("typed"))
	task := f.newRun(client.RunTypeTaskV1, nil)
	if _, err := f.Tags().CreateValue(ctx, f.org.ID, "env", "qa", ""); err != nil {
		t.Fatal(err)
	}
	notFound := func(err error, want NotFoundError) {
		t.Helper()
		var nf *NotFoundError
		if !errors.As(err, &nf) || *nf != want || !errors.Is(err, ErrNotFound) {
			t.Errorf("error %v (%#v), want %#v", err, nf, want)
		}
	}
	_, err := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, 3)
	notFound(err, NotFoundError{Record: RecordAgent, ID: a.WorkflowPermanentID, Version: 3})
	_, err = f.Agents().Get(ctx, f.org.ID, "wpid_404", 0)
	notFound(err, NotFoundError{Record: RecordAgent, ID: "wpid_404"})
	_, err = f.Folders().Get(ctx, f.org.ID, "fld_404")
	notFound(err, NotFoundError{Record: RecordFolder, ID: "fld_404"})
	_, err = f.Runs().Get(ctx, f.org.ID, "tsk_404")
	notFound(err, NotFoundError{Record: RecordRun, ID: "tsk_404"})
	_, err = f.Tags().Get(ctx, f.org.ID, TagSubject{Kind: RunSubject, ID: task.ID})
	notFound(err, NotFoundError{Record: RecordWorkflowRun, ID: task.ID})
	_, err = f.Tags().UpdateKey(ctx, f.org.ID, "team", nil)
	notFound(err, NotFoundError{Record: RecordTagKey, ID: "team"})
	_, err = f.Tags().RecolorValue(ctx, f.org.ID, "env", "prod", client.TagColor("red"))
	notFound(err, NotFoundError{Record: RecordTagValue, ID: "env", Value: "prod"})
	_, err = f.Folders().List(ctx, "o_404", 1, 10, "")
	notFound(err, NotFoundError{Record: RecordOrganization, ID: "o_404"})

	_, err = f.Tags().CreateValue(ctx, f.org.ID, "env", "qa", "")
	var cf *ConflictError
	if !errors.As(err, &cf) || *cf != (ConflictError{Record: RecordTagValue, ID: "env", Value: "qa"}) || !errors.Is(err, ErrConflict) {
		t.Errorf("conflict %v", err)
	}
	err = f.Runs().Create(ctx, &RunRecord{ID: task.ID, OrgID: f.org.ID, Type: client.RunTypeTaskV1, Status: client.RunStatusQueued})
	if !errors.As(err, &cf) || *cf != (ConflictError{Record: RecordRun, ID: task.ID}) {
		t.Errorf("conflict %v", err)
	}

	var set []TagSet
	for i := range MaxTagsPerSubject + 1 {
		set = append(set, TagSet{Value: string(rune('a' + i))})
	}
	_, err = f.Tags().Apply(ctx, f.org.ID, TagSubject{Kind: AgentSubject, ID: a.WorkflowPermanentID}, TagChange{Set: set})
	var many *TooManyTagsError
	if !errors.As(err, &many) || many.Tags != MaxTagsPerSubject+1 || many.Max != MaxTagsPerSubject ||
		many.Subject.ID != a.WorkflowPermanentID || !errors.Is(err, ErrInvalid) {
		t.Errorf("too many tags %v", err)
	}
}
