package boltstore

import (
	"bytes"
	"encoding/json"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/storetest"
)

// apply applies a change as the test organization and fails on error.
func (f *fixture) apply(wpid string, ch store.TagChange) []client.Tag {
	f.t.Helper()
	return storetest.ApplyTags(f.t, f.Store, f.org.ID, wpid, ch)
}

func TestLikeMatch(t *testing.T) {
	cases := []struct {
		pattern, text string
		want          bool
	}{
		{"", "", true},
		{"", "anything", true},
		{"abc", "xxabcxx", true},
		{"abc", "ab", false},
		{"a_c", "xabcx", true},
		{"a_c", "xacx", false},
		{"a%c", "a long way to c", true},
		{"a%c", "c then a", false},
		{"first_name", "firstxname", true},
		{"%", "", true},
		{"_", "", false},
		{"é_", "café!", true},    // '_' is one character, not one byte
		{"caf_!", "café!", true}, // the same, in the middle
		{"%%a%%", "bab", true},
		{"a%b%c", "aXbYbZc", true},
		{"a%b%c", "aXcYb", false},
		{"ab%", "a", false},
	}
	for _, c := range cases {
		if got := likeMatch(c.pattern, c.text); got != c.want {
			t.Errorf("likeMatch(%q, %q) = %v, want %v", c.pattern, c.text, got, c.want)
		}
	}
}

// TestMigrationAddsTagBuckets opens a file written before tags existed
// (schema 1: organizations without tag buckets) and uses tags in it.
func TestMigrationAddsTagBuckets(t *testing.T) {
	f := newFixture(t)
	a := f.create(f.org.ID, storetest.AgentDef("Old"))
	err := f.db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketOrgData).Bucket([]byte(f.org.ID))
		for _, name := range [][]byte{bucketTagKeys, bucketTagValues, bucketTags, bucketTagIndex, bucketTagEvents} {
			if err := root.DeleteBucket(name); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, u64(1))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f.Store, err = Open(f.path, store.Options{Now: f.clock.Now}); err != nil {
		t.Fatal(err)
	}
	_ = f.db.View(func(tx *bolt.Tx) error {
		if got := tx.Bucket(bucketMeta).Get(keySchemaVersion); !bytes.Equal(got, u64(SchemaVersion())) {
			t.Errorf("schema %x after reopening", got)
		}
		return nil
	})
	if tags := f.apply(a.WorkflowPermanentID, store.TagChange{Set: storetest.TagSets("env:prod")}); len(tags) != 1 {
		t.Fatalf("tags after the migration: %v", storetest.TagStrings(tags))
	}
}

// checkTagInvariants verifies, for one organization, that the index holds
// exactly the current tags turned around, that every current tag's event
// is a live SET of the same tag, that every other SET is superseded, and
// that every grouped tag's key and pair are registered.
func checkTagInvariants(t *testing.T, o *orgTx) {
	t.Helper()
	wantIndex := map[string]bool{}
	current := map[string]bool{} // event keys of current tags
	_ = o.tags().ForEach(func(k, v []byte) error {
		var r tagRow
		if err := json.Unmarshal(v, &r); err != nil {
			t.Errorf("tag row %q: %v", k, err)
			return nil
		}
		subject := string(k[:bytes.IndexByte(k, 0)])
		if !bytes.Equal(k, slotKey(subject, r.Key, r.Value)) {
			t.Errorf("tag row %q holds %s:%s", k, r.Key, r.Value)
		}
		for _, ik := range indexKeys(subject, r.Key, r.Value) {
			wantIndex[string(ik)] = true
		}
		current[string(r.Event)] = true
		var ev client.TagEvent
		if raw := o.tagEvents().Get(r.Event); raw == nil || json.Unmarshal(raw, &ev) != nil {
			t.Errorf("tag %q: event missing", k)
		} else if ev.EventType != client.TagEventSet || ev.SupersededAt != nil || *ev.Value != r.Value {
			t.Errorf("tag %q: event %s is not its live SET", k, mustJSON(t, ev))
		}
		if r.Key != "" {
			if o.tagKeys().Get([]byte(r.Key)) == nil {
				t.Errorf("key %s of %s not registered", r.Key, subject)
			}
			if o.tagValues().Get(tagValueKey(r.Key, r.Value)) == nil {
				t.Errorf("pair %s:%s of %s not registered", r.Key, r.Value, subject)
			}
		}
		return nil
	})
	n := 0
	_ = o.tagIndex().ForEach(func(k, _ []byte) error {
		n++
		if !wantIndex[string(k)] {
			t.Errorf("stray index entry %q", k)
		}
		return nil
	})
	if n != len(wantIndex) {
		t.Errorf("index has %d entries, want %d", n, len(wantIndex))
	}
	_ = o.tagEvents().ForEach(func(k, v []byte) error {
		var ev client.TagEvent
		if err := json.Unmarshal(v, &ev); err != nil {
			t.Errorf("event %q: %v", k, err)
			return nil
		}
		if ev.EventType == client.TagEventSet && !current[string(k)] && ev.SupersededAt == nil {
			t.Errorf("SET event %s is neither current nor superseded", ev.TagEventID)
		}
		if ev.EventType == client.TagEventDelete && ev.SupersededAt != nil {
			t.Errorf("DELETE event %s superseded", ev.TagEventID)
		}
		return nil
	})
}
