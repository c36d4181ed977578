package boltstore

import (
	"encoding/json"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store/storetest"
)

// steps reads a run's steps, newest first, and decodes them.
func (f *fixture) steps(orgID, runID string) []client.RunStep {
	f.t.Helper()
	rows, err := f.Runs().StepsJSON(ctx, orgID, runID)
	if err != nil {
		f.t.Fatal(err)
	}
	out := make([]client.RunStep, len(rows))
	for i, raw := range rows {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			f.t.Fatalf("step %d: %v: %s", i, err, raw)
		}
	}
	return out
}

// TestRunStepsUnwrapped: migration 6 rewrites the steps schema 5 stored
// (each wrapped in the timeline entry it was answered as) to the steps
// themselves, keeping the entry's created_at, and creates the blocks
// bucket.
func TestRunStepsUnwrapped(t *testing.T) {
	f := newFixture(t)
	run := f.newRun(client.RunTypeWorkflowRun, nil)
	old := `{"type":"step","step":{"number":3,"block_label":"login","url":"http://127.0.0.1:1/","thought":"Sign in.","actions":["click [e5]: ok"],"decision":"continue","timings_ms":{"settle":1,"observe":2,"model":3,"act":4},"tokens":{"input":5,"output":6}},"created_at":"2026-01-31T15:20:44.5","modified_at":"2026-01-31T15:20:44.5"}`
	err := f.db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketOrgData).Bucket([]byte(f.org.ID))
		if err := root.DeleteBucket(bucketRunBlocks); err != nil {
			return err
		}
		if err := root.Bucket(bucketRunSteps).Put(runItemKey(run.ID, 3), []byte(old)); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, u64(5))
	})
	if err != nil {
		t.Fatal(err)
	}
	f.closeAndOpen(storetest.TestViews{})
	steps := f.steps(f.org.ID, run.ID)
	if len(steps) != 1 {
		t.Fatalf("steps after the migration: %+v", steps)
	}
	s := steps[0]
	if s.Number != 3 || *s.BlockLabel != "login" || s.Thought != "Sign in." || len(s.Actions) != 1 || s.TimingsMS.Act != 4 ||
		s.Tokens.Output != 6 || s.CreatedAt.String() != "2026-01-31T15:20:44.500000" {
		t.Errorf("the step after the migration: %s", mustJSON(t, s))
	}
	if err := f.Runs().PutBlock(ctx, f.org.ID, run.ID, 1, &client.RunBlock{BlockType: client.BlockTypeWait}); err != nil {
		t.Errorf("a block in the migrated store: %v", err)
	}
}
