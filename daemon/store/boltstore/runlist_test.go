package boltstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/storetest"
)

// listIDs lists the organization's runs with q and returns their ids.
func (f *fixture) listIDs(orgID string, q store.RunQuery) []string {
	f.t.Helper()
	items, err := f.Runs().List(ctx, orgID, q)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		if it.TaskRunID != it.RunID {
			f.t.Errorf("task_run_id %s of run %s", it.TaskRunID, it.RunID)
		}
		out = append(out, it.RunID)
	}
	return out
}

// TestRunListMigration opens a store of schema 4 (runs without list
// entries or a steps bucket) and finds every run listed, as its record
// says.
func TestRunListMigration(t *testing.T) {
	f := newFixture(t)
	other := f.newOrg("other")
	var ids []string
	for i := range 6 {
		rec := f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) { r.Title = fmt.Sprint("run ", i) })
		if i%2 == 0 {
			f.updateRun(rec.ID, func(r *store.RunRecord) { r.Status = client.RunStatusRunning })
		}
		ids = append(ids, rec.ID)
	}
	want, err := f.Runs().List(ctx, f.org.ID, store.RunQuery{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	// Back to schema 4.
	err = f.db.Update(func(tx *bolt.Tx) error {
		for _, org := range []string{f.org.ID, other.ID} {
			root := tx.Bucket(bucketOrgData).Bucket([]byte(org))
			for _, name := range [][]byte{bucketRunOrder, bucketRunSteps} {
				if err := root.DeleteBucket(name); err != nil {
					return err
				}
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, u64(4))
	})
	if err != nil {
		t.Fatal(err)
	}
	f.closeAndOpen(storetest.TestViews{})
	_ = f.db.View(func(tx *bolt.Tx) error {
		if got := tx.Bucket(bucketMeta).Get(keySchemaVersion); !bytes.Equal(got, u64(SchemaVersion())) || SchemaVersion() < 5 {
			t.Errorf("schema %x after reopening, want %d", got, SchemaVersion())
		}
		return nil
	})
	got, err := f.Runs().List(ctx, f.org.ID, store.RunQuery{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if mustJSON(t, got) != mustJSON(t, want) || len(got) != len(ids) {
		t.Errorf("after the migration:\n got %s\nwant %s", mustJSON(t, got), mustJSON(t, want))
	}
	if got := f.listIDs(other.ID, store.RunQuery{}); got != nil {
		t.Errorf("the other organization lists %v", got)
	}
	// Steps can be added to the migrated store.
	if err := f.Runs().AddStep(ctx, f.org.ID, ids[0], &client.RunStep{Number: 1}); err != nil {
		t.Fatal(err)
	}
}

// sampleRuns are runs with every field of a record set, a task run and an
// agent run, and a bare queued one.
func sampleRuns() []*store.RunRecord {
	at := func(sec int) *client.Time {
		return client.TimePtr(time.Date(2026, 1, 31, 15, 20, sec, 160725000, time.UTC))
	}
	steps, scrolls := 3, 2
	full := &store.RunRecord{
		ID: "tsk_1", OrgID: "o_1", Type: client.RunTypeTaskV1, Status: client.RunStatusCompleted,
		CreatedAt: *at(1), ModifiedAt: *at(5), QueuedAt: at(2), StartedAt: at(3), FinishedAt: at(4),
		RunRequest: json.RawMessage(`{"prompt":"p <&>","url":"https://example.com/"}`),
		Task: &client.TaskRunRequest{Prompt: "p", MaxScreenshotScrolls: &scrolls,
			BrowserSessionID: "pbs_1", BrowserProfileID: "bp_1"},
		Output: json.RawMessage(`{"a":[1,"<é>"]}`), FailureReason: "why \"not\"",
		WebhookFailureReason: "Webhook failed with status code 500",
		Errors:               []json.RawMessage{json.RawMessage(`{"e":1}`)}, StepCount: &steps,
		Files: []store.RunFile{
			{ID: "a_1", Type: client.ArtifactScreenshotAction, Name: "s1.jpg", Size: 1, SHA256: "00", CreatedAt: *at(3)},
			{ID: "a_2", Type: client.ArtifactRecording, Name: "r.webm", Size: 2, SHA256: "01", CreatedAt: *at(4)},
		},
	}
	agent := *full
	agent.ID, agent.Type, agent.Task = "wr_1", client.RunTypeWorkflowRun, nil
	bare := &store.RunRecord{ID: "tsk_v2_1", OrgID: "o_1", Type: client.RunTypeTaskV2, Status: client.RunStatusQueued,
		CreatedAt: *at(1), ModifiedAt: *at(1), QueuedAt: at(1)}
	return []*store.RunRecord{full, &agent, bare}
}

// TestRunSummaryEncoding: summaries read back as written; damaged bytes
// are refused, never misread.
func TestRunSummaryEncoding(t *testing.T) {
	for _, rec := range sampleRuns() {
		rec.Title, rec.AgentID, rec.Trigger = "tïtle", "wpid_1", "mcp"
		b := encodeRunSummary(rec)
		s, ok := readRunSummary(b)
		if !ok || string(s.id) != rec.ID || string(s.status) != string(rec.Status) || string(s.typ) != string(rec.Type) ||
			string(s.title) != rec.Title || string(s.agent) != rec.AgentID || string(s.trigger) != "mcp" ||
			s.created != rec.CreatedAt.UnixMicro() || s.hasStarted != (rec.StartedAt != nil) || s.hasFinished != (rec.FinishedAt != nil) {
			t.Errorf("%s: read back %+v (%v)", rec.ID, s, ok)
		}
		for i := range len(b) {
			if _, ok := readRunSummary(b[:i]); ok {
				t.Errorf("%s: a summary cut at %d reads", rec.ID, i)
			}
		}
		if _, ok := readRunSummary(append(b, 0)); ok {
			t.Errorf("%s: a summary with a trailing byte reads", rec.ID)
		}
	}
}

// FuzzRunSummary: any bytes are read or refused without panicking, and
// what reads has its fields within the input.
func FuzzRunSummary(f *testing.F) {
	for _, rec := range sampleRuns() {
		f.Add(encodeRunSummary(rec))
	}
	f.Add([]byte{runSummaryVersion, 3, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, ok := readRunSummary(b)
		if !ok {
			return
		}
		if len(s.id)+len(s.title)+len(s.agent)+len(s.status)+len(s.typ)+len(s.trigger) > len(b) {
			t.Fatalf("fields longer than the input")
		}
	})
}
