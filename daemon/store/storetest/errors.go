package storetest

import (
	"errors"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// testTypedErrors: the errors about a record say which, in typed values
// that match their sentinel.
func testTypedErrors(t *testing.T, o opener) {
	f := newFixture(t, o)
	a := f.create(f.org.ID, AgentDef("typed"))
	task := f.newRun(client.RunTypeTaskV1, nil)
	if _, err := f.Tags().CreateValue(ctx, f.org.ID, "env", "qa", ""); err != nil {
		t.Fatal(err)
	}
	notFound := func(err error, want store.NotFoundError) {
		t.Helper()
		var nf *store.NotFoundError
		if !errors.As(err, &nf) || *nf != want || !errors.Is(err, store.ErrNotFound) {
			t.Errorf("error %v (%#v), want %#v", err, nf, want)
		}
	}
	_, err := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, 3)
	notFound(err, store.NotFoundError{Record: store.RecordAgent, ID: a.WorkflowPermanentID, Version: 3})
	_, err = f.Agents().Get(ctx, f.org.ID, "wpid_404", 0)
	notFound(err, store.NotFoundError{Record: store.RecordAgent, ID: "wpid_404"})
	_, err = f.Folders().Get(ctx, f.org.ID, "fld_404")
	notFound(err, store.NotFoundError{Record: store.RecordFolder, ID: "fld_404"})
	_, err = f.Runs().Get(ctx, f.org.ID, "tsk_404")
	notFound(err, store.NotFoundError{Record: store.RecordRun, ID: "tsk_404"})
	_, err = f.Tags().Get(ctx, f.org.ID, store.TagSubject{Kind: store.RunSubject, ID: task.ID})
	notFound(err, store.NotFoundError{Record: store.RecordWorkflowRun, ID: task.ID})
	_, err = f.Tags().UpdateKey(ctx, f.org.ID, "team", nil)
	notFound(err, store.NotFoundError{Record: store.RecordTagKey, ID: "team"})
	_, err = f.Tags().RecolorValue(ctx, f.org.ID, "env", "prod", client.TagColor("red"))
	notFound(err, store.NotFoundError{Record: store.RecordTagValue, ID: "env", Value: "prod"})
	_, err = f.Folders().List(ctx, "o_404", 1, 10, "")
	notFound(err, store.NotFoundError{Record: store.RecordOrganization, ID: "o_404"})

	_, err = f.Tags().CreateValue(ctx, f.org.ID, "env", "qa", "")
	var cf *store.ConflictError
	if !errors.As(err, &cf) || *cf != (store.ConflictError{Record: store.RecordTagValue, ID: "env", Value: "qa"}) || !errors.Is(err, store.ErrConflict) {
		t.Errorf("conflict %v", err)
	}
	err = f.Runs().Create(ctx, &store.RunRecord{ID: task.ID, OrgID: f.org.ID, Type: client.RunTypeTaskV1, Status: client.RunStatusQueued})
	if !errors.As(err, &cf) || *cf != (store.ConflictError{Record: store.RecordRun, ID: task.ID}) {
		t.Errorf("conflict %v", err)
	}

	var set []store.TagSet
	for i := range store.MaxTagsPerSubject + 1 {
		set = append(set, store.TagSet{Value: string(rune('a' + i))})
	}
	_, err = f.Tags().Apply(ctx, f.org.ID, store.TagSubject{Kind: store.AgentSubject, ID: a.WorkflowPermanentID}, store.TagChange{Set: set})
	var many *store.TooManyTagsError
	if !errors.As(err, &many) || many.Tags != store.MaxTagsPerSubject+1 || many.Max != store.MaxTagsPerSubject ||
		many.Subject.ID != a.WorkflowPermanentID || !errors.Is(err, store.ErrInvalid) {
		t.Errorf("too many tags %v", err)
	}
}
