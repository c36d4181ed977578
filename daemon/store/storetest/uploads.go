package storetest

import (
	"errors"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// testUploads: an upload's record survives a reopen, is its
// organization's only, and an unknown id is a NotFoundError of an
// artifact.
func testUploads(t *testing.T, o opener) {
	f := newFixture(t, o)
	other := f.newOrg("other")
	up := &store.Upload{ID: "a_1", Dir: f.Uploads().NewDir(), Name: "invoices.csv", Size: 42, SHA256: "ab"}
	if err := f.Uploads().Create(ctx, f.org.ID, up); err != nil {
		t.Fatal(err)
	}
	if up.CreatedAt.IsZero() || len(up.Dir) < 5 || up.Dir[:4] != store.PrefixUploadDir+"_" {
		t.Errorf("created %+v", up)
	}
	f.reopen()
	got, err := f.Uploads().Get(ctx, f.org.ID, "a_1")
	if err != nil || *got != *up {
		t.Fatalf("get: %+v %v", got, err)
	}
	for _, tc := range []struct{ org, id string }{{other.ID, "a_1"}, {f.org.ID, "a_2"}, {f.org.ID, ""}, {f.org.ID, "a\x00"}} {
		_, err := f.Uploads().Get(ctx, tc.org, tc.id)
		var nf *store.NotFoundError
		if !errors.As(err, &nf) || nf.Record != store.RecordArtifact || nf.ID != tc.id {
			t.Errorf("get %s in %s: %v", tc.id, tc.org, err)
		}
	}
	if err := f.Uploads().Create(ctx, f.org.ID, &store.Upload{ID: ""}); err == nil {
		t.Error("an upload without an id was stored")
	}
	if err := f.Uploads().Create(ctx, "o_404", &store.Upload{ID: "a_3"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an upload of an unknown organization: %v", err)
	}
}

// testFindFile: a run's file is found by its artifact id in its
// organization only, also when the id appears elsewhere in another run.
func testFindFile(t *testing.T, o opener) {
	f := newFixture(t, o)
	other := f.newOrg("other")
	decoy := &store.RunRecord{ID: f.Runs().NewID(client.RunTypeTaskV1), OrgID: f.org.ID, Type: client.RunTypeTaskV1,
		Status: client.RunStatusQueued, Title: "mentions a_7 in its title: \"a_7\""}
	run := &store.RunRecord{ID: f.Runs().NewID(client.RunTypeTaskV1), OrgID: f.org.ID, Type: client.RunTypeTaskV1,
		Status: client.RunStatusQueued, Files: []store.RunFile{{ID: "a_6", Name: "one.png"}, {ID: "a_7", Type: client.ArtifactDownload, Name: "report.csv"}}}
	for _, r := range []*store.RunRecord{decoy, run} {
		if err := f.Runs().Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	runID, file, err := f.Runs().FindFile(ctx, f.org.ID, "a_7")
	if err != nil || runID != run.ID || file.Name != "report.csv" || file.Type != client.ArtifactDownload {
		t.Fatalf("find a_7: %s %+v %v", runID, file, err)
	}
	for _, tc := range []struct{ org, id string }{{other.ID, "a_7"}, {f.org.ID, "a_8"}, {f.org.ID, ""}, {f.org.ID, "a\x00"}} {
		_, _, err := f.Runs().FindFile(ctx, tc.org, tc.id)
		wantNotFoundError(t, "find "+tc.id+" in "+tc.org, err, store.NotFoundError{Record: store.RecordArtifact, ID: tc.id})
	}
	_, _, err = f.Runs().FindFile(ctx, "o_404", "a_7")
	wantNotFoundError(t, "find in an unknown organization", err, store.NotFoundError{Record: store.RecordOrganization, ID: "o_404"})
}
