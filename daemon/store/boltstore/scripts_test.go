package boltstore

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/storetest"
)

func scriptFile(agent, note string) []byte {
	return []byte("format: abctl.script/v1\nagent: " + agent + "\ncache_key: default\nblocks:\n  - label: search\n    mode: model\n    reason: " + note + "\n")
}

// TestScriptsMigration: a file of schema version 10, whose organizations
// have no script buckets, gets them when opened, and scripts work in it.
func TestScriptsMigration(t *testing.T) {
	f := newFixture(t)
	wpid := f.create(f.org.ID, storetest.AgentDef("Search")).WorkflowPermanentID
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// Make the file what version 10 wrote.
	db, err := bolt.Open(f.path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketOrgData).Bucket([]byte(f.org.ID))
		for _, name := range [][]byte{bucketScripts, bucketScriptVersions, bucketScriptIndex} {
			if err := root.DeleteBucket(name); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, u64(10))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err := Open(f.path, store.Options{Now: f.clock.Now, RunViews: storetest.TestViews{}})
	if err != nil {
		t.Fatal(err)
	}
	f.Store = s
	var version uint64
	s.db.View(func(tx *bolt.Tx) error {
		version = binary.BigEndian.Uint64(tx.Bucket(bucketMeta).Get(keySchemaVersion))
		return nil
	})
	if version != SchemaVersion() || version < 11 {
		t.Errorf("schema version %d after the migration, want %d", version, SchemaVersion())
	}
	rev, created, err := s.Scripts().Record(ctx, f.org.ID, wpid, "", "wr_1", scriptFile(wpid, "a"))
	if err != nil || !created || rev.Version != 1 {
		t.Fatalf("record after the migration: %+v %v %v", rev, created, err)
	}
}

// TestScriptVersionBuckets: a version is written as a bucket of its own,
// its content kept as it is beside its record; a version written before
// (one JSON value, the content inside) is still read as it was.
func TestScriptVersionBuckets(t *testing.T) {
	f := newFixture(t)
	sc := f.Scripts()
	one, two := scriptFile("", "one"), scriptFile("", "two")
	first, err := sc.Create(ctx, f.org.ID, store.ScriptInput{Content: one})
	if err != nil {
		t.Fatal(err)
	}
	// Version 1 as a daemon before the version buckets wrote it.
	err = f.Store.db.Update(func(tx *bolt.Tx) error {
		versions := tx.Bucket(bucketOrgData).Bucket([]byte(f.org.ID)).Bucket(bucketScriptVersions)
		key := scriptVersionKey(first.ScriptID, 1)
		if err := versions.DeleteBucket(key); err != nil {
			return err
		}
		return putJSON(versions, key, &scriptVersionRecord{RevisionID: first.RevisionID, Version: 1, CreatedAt: first.CreatedAt,
			Content: one, SHA256: scriptDigest(one)})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Deploy(ctx, f.org.ID, first.ScriptID, two, "wr_2"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		version int
		content []byte
		runID   string
	}{{1, one, ""}, {2, two, "wr_2"}} {
		rev, err := sc.Version(ctx, f.org.ID, first.ScriptID, want.version)
		if err != nil || !bytes.Equal(rev.Content, want.content) || rev.SHA256 != scriptDigest(want.content) || rev.RunID != want.runID {
			t.Errorf("version %d: %+v %v", want.version, rev, err)
		}
	}
	f.Store.db.View(func(tx *bolt.Tx) error {
		versions := tx.Bucket(bucketOrgData).Bucket([]byte(f.org.ID)).Bucket(bucketScriptVersions)
		b := versions.Bucket(scriptVersionKey(first.ScriptID, 2))
		if b == nil {
			t.Fatal("version 2 is not a bucket")
		}
		if !bytes.Equal(b.Get(versionContentKey), two) || bytes.Contains(b.Get(versionRecordKey), []byte("content")) {
			t.Errorf("version 2 holds content %q and record %s", b.Get(versionContentKey), b.Get(versionRecordKey))
		}
		return nil
	})
}
