package boltstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// Scripts are the organizations' recorded scripts (package script): a
// script belongs to an agent and one value of the agent's cache key, and
// keeps a version per change. Get it with Store.Scripts.
//
// The store keeps a script's file, script.yaml, as the bytes it is given
// and never reads it: checking it is package script's (the API's and the
// runner's callers do). A script of an agent is found by (agent, cache
// key) through script_index, which always names the script that runs of
// the agent with that cache key replay and record into.
type Scripts struct{ s *Store }

// Scripts returns the recorded scripts of the organizations.
func (s *Store) Scripts() store.Scripts { return &Scripts{s} }

// scriptRecord and scriptVersionRecord are the stored forms of a script
// and of one of its versions (records.Script, records.ScriptVersion).
// Content is in a version's record only in versions written before the
// version buckets (below); a version bucket keeps it apart, as it is.
type (
	scriptRecord        = records.Script
	scriptVersionRecord = records.ScriptVersion
)

// scriptDigest is records.ScriptDigest, under the name this package's
// tests use.
var scriptDigest = records.ScriptDigest

// A version of a script is a bucket of its own under its key in
// script_versions, holding its record without the content
// (versionRecordKey) and the content as it is (versionContentKey). A
// script may be several MB: in a bucket of its own its content sits in
// pages that later writes do not touch, where side by side in one bucket
// (bbolt keeps at least two entries a page) every new version copied the
// one before it, through memory, at every write. Versions written before
// are one scriptVersionRecord JSON value with the content inside, and are
// read as they are.
var (
	versionRecordKey  = []byte("record")
	versionContentKey = []byte("content")
)

// scriptVersionKey is the key of one version: the script id, 0x00, the
// version (uint32 BE), as agentKey lays out agent versions.
func scriptVersionKey(id string, version int) []byte {
	k := make([]byte, 0, len(id)+5)
	k = append(k, id...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint32(k, uint32(version))
}

// scriptIndexKey is the key of the index entry of an agent's cache key.
// A wpid holds no NUL (validID), so the key splits one way only.
func scriptIndexKey(wpid, cacheKey string) []byte {
	k := make([]byte, 0, len(wpid)+1+len(cacheKey))
	k = append(k, wpid...)
	k = append(k, 0)
	return append(k, cacheKey...)
}

// getScript returns a script that is not deleted.
func getScript(o *orgTx, id string) (*scriptRecord, error) {
	rec, err := getJSON[scriptRecord](o.scripts(), store.RecordScript, id)
	if err != nil {
		return nil, err
	}
	if rec.DeletedAt != nil {
		return nil, notFound(store.RecordScript, id)
	}
	return rec, nil
}

// getScriptVersion returns one version of a script; NotFoundError with
// the version when it has none such.
func getScriptVersion(o *orgTx, id string, version int) (*scriptVersionRecord, error) {
	if version <= 0 || int64(version) > math.MaxUint32 {
		return nil, &store.NotFoundError{Record: store.RecordScript, ID: id, Version: version}
	}
	key := scriptVersionKey(id, version)
	rec := new(scriptVersionRecord)
	if b := o.scriptVersions().Bucket(key); b != nil {
		if err := json.Unmarshal(b.Get(versionRecordKey), rec); err != nil {
			return nil, fmt.Errorf("store: version %d of script %s: %w", version, id, err)
		}
		// The bytes of the store are valid only inside its transaction.
		rec.Content = bytes.Clone(b.Get(versionContentKey))
		return rec, nil
	}
	v := o.scriptVersions().Get(key)
	if v == nil {
		return nil, &store.NotFoundError{Record: store.RecordScript, ID: id, Version: version}
	}
	if err := json.Unmarshal(v, rec); err != nil {
		return nil, fmt.Errorf("store: version %d of script %s: %w", version, id, err)
	}
	return rec, nil
}

// putScriptVersion stores version rec.Latest+1 of the script made now
// with content, and the script record that says so.
func (sc *Scripts) putScriptVersion(o *orgTx, rec *scriptRecord, revisionID, runID string, content []byte, now client.Time) (*scriptVersionRecord, error) {
	v := rec.NextVersion(revisionID, runID, content, now)
	b, err := o.scriptVersions().CreateBucket(scriptVersionKey(rec.ID, v.Version))
	if err != nil {
		return nil, fmt.Errorf("store: version %d of script %s: %w", v.Version, rec.ID, err)
	}
	if err := putJSON(b, versionRecordKey, v.WithoutContent()); err != nil {
		return nil, err
	}
	if err := b.Put(versionContentKey, v.Content); err != nil {
		return nil, err
	}
	rec.Latest, rec.ModifiedAt = v.Version, now
	if err := putJSON(o.scripts(), []byte(rec.ID), rec); err != nil {
		return nil, err
	}
	return v, nil
}

// agentOf resolves what names an agent in a ScriptInput: a live agent's
// wpid, or the workflow_id (w_) of one of its versions, which is looked up
// among the version rows. NotFoundError of the agent otherwise.
func agentOf(o *orgTx, id string) (string, error) {
	if !validID(id) {
		return "", agentNotFound(id)
	}
	if liveAgent(o, id) {
		return id, nil
	}
	if !strings.HasPrefix(id, ids.PrefixAgentVersion+"_") {
		return "", agentNotFound(id)
	}
	needle := []byte(`"workflow_id":"` + id + `"`)
	var found string
	err := o.agents().ForEach(func(k, v []byte) error {
		if found != "" || !bytes.Contains(v, needle) {
			return nil
		}
		a, err := decodeAgent(v)
		if err != nil {
			return err
		}
		if a.WorkflowID == id {
			found = a.WorkflowPermanentID
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if found == "" || !liveAgent(o, found) {
		return "", agentNotFound(id)
	}
	return found, nil
}

// newScript stores a new script, version 1, and points the index entry
// of its agent's cache key at it.
func (sc *Scripts) newScript(o *orgTx, scriptID, revisionID, wpid, cacheKey, runID string, content []byte) (*store.ScriptRevision, error) {
	now := sc.s.clock()
	rec := &scriptRecord{ID: scriptID, AgentID: wpid, CacheKey: cacheKey, CreatedAt: now}
	v, err := sc.putScriptVersion(o, rec, revisionID, runID, content, now)
	if err != nil {
		return nil, err
	}
	if wpid != "" {
		if err := o.scriptIndex().Put(scriptIndexKey(wpid, cacheKey), []byte(scriptID)); err != nil {
			return nil, err
		}
	}
	return rec.Revision(o.id, v), nil
}

// Create stores a new script, version 1. When in names an agent, the agent
// must be the organization's and not deleted (ErrNotFound otherwise), and
// the script becomes the one of the agent's cache key in.CacheKey,
// replacing any earlier script of that pair for the runs to come (the
// earlier one stays, and can still be read and run by id).
func (sc *Scripts) Create(ctx context.Context, orgID string, in store.ScriptInput) (*store.ScriptRevision, error) {
	if err := records.CheckScriptContent(in.Content); err != nil {
		return nil, err
	}
	cacheKey := cmp.Or(in.CacheKey, store.DefaultCacheKey)
	scriptID, revisionID := sc.s.ids.Next(ids.PrefixScript), sc.s.ids.Next(ids.PrefixScriptRevision)
	var out *store.ScriptRevision
	err := sc.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		wpid := ""
		if in.WorkflowPermanentID != "" {
			var err error
			if wpid, err = agentOf(o, in.WorkflowPermanentID); err != nil {
				return err
			}
		}
		var err error
		out, err = sc.newScript(o, scriptID, revisionID, wpid, cacheKey, in.RunID, in.Content)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Deploy stores content as a new version of a script (its latest + 1),
// even when it equals the latest: a deploy is a deliberate act, and its
// version number is what the caller is told.
func (sc *Scripts) Deploy(ctx context.Context, orgID, scriptID string, content []byte, runID string) (*store.ScriptRevision, error) {
	if err := records.CheckScriptContent(content); err != nil {
		return nil, err
	}
	revisionID := sc.s.ids.Next(ids.PrefixScriptRevision)
	var out *store.ScriptRevision
	err := sc.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getScript(o, scriptID)
		if err != nil {
			return err
		}
		v, err := sc.putScriptVersion(o, rec, revisionID, runID, content, sc.s.clock())
		if err != nil {
			return err
		}
		out = rec.Revision(orgID, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Record is what a run that recorded a script stores, in one transaction:
// a new version of the script of agent wpid's cache key cacheKey ("":
// DefaultCacheKey), creating the script when there is none, unless content
// equals that script's latest version: then Record answers that version
// with created false and writes nothing. The agent must be the
// organization's and not deleted (ErrNotFound otherwise).
func (sc *Scripts) Record(ctx context.Context, orgID, wpid, cacheKey, runID string, content []byte) (rev *store.ScriptRevision, created bool, err error) {
	if err := records.CheckScriptContent(content); err != nil {
		return nil, false, err
	}
	cacheKey = cmp.Or(cacheKey, store.DefaultCacheKey)
	digest := scriptDigest(content)
	scriptID, revisionID := sc.s.ids.Next(ids.PrefixScript), sc.s.ids.Next(ids.PrefixScriptRevision)
	err = sc.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		rev, created = nil, false
		if err := checkLiveAgent(o, wpid); err != nil {
			return err
		}
		rec, err := indexedScript(o, wpid, cacheKey)
		if err != nil {
			return err
		}
		if rec == nil {
			created = true
			rev, err = sc.newScript(o, scriptID, revisionID, wpid, cacheKey, runID, content)
			return err
		}
		latest, err := getScriptVersion(o, rec.ID, rec.Latest)
		if err != nil {
			return err
		}
		if latest.SHA256 == digest && bytes.Equal(latest.Content, content) {
			rev = rec.Revision(orgID, latest)
			return nil
		}
		v, err := sc.putScriptVersion(o, rec, revisionID, runID, content, sc.s.clock())
		if err != nil {
			return err
		}
		created, rev = true, rec.Revision(orgID, v)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return rev, created, nil
}

// indexedScript returns the script the index names for an agent's cache
// key, nil when none (or when it was deleted).
func indexedScript(o *orgTx, wpid, cacheKey string) (*scriptRecord, error) {
	if !validID(wpid) {
		return nil, nil
	}
	id := o.scriptIndex().Get(scriptIndexKey(wpid, cacheKey))
	if id == nil {
		return nil, nil
	}
	rec, err := getScript(o, string(id))
	if err == nil {
		return rec, nil
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return nil, err
}

// Get returns the latest version of a script.
func (sc *Scripts) Get(ctx context.Context, orgID, scriptID string) (*store.ScriptRevision, error) {
	return sc.Version(ctx, orgID, scriptID, 0)
}

// Version returns one version of a script; 0 means the latest. An unknown
// version is a NotFoundError that names it.
func (sc *Scripts) Version(ctx context.Context, orgID, scriptID string, version int) (*store.ScriptRevision, error) {
	var out *store.ScriptRevision
	err := sc.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getScript(o, scriptID)
		if err != nil {
			return err
		}
		if version == 0 {
			version = rec.Latest
		}
		v, err := getScriptVersion(o, rec.ID, version)
		if err != nil {
			return err
		}
		out = rec.Revision(orgID, v)
		return nil
	})
	return out, err
}

// ForAgent returns the latest version of the script of agent wpid's cache
// key cacheKey ("": DefaultCacheKey): the one a run with run_with "code"
// replays. ErrNotFound when there is none.
func (sc *Scripts) ForAgent(ctx context.Context, orgID, wpid, cacheKey string) (*store.ScriptRevision, error) {
	cacheKey = cmp.Or(cacheKey, store.DefaultCacheKey)
	var out *store.ScriptRevision
	err := sc.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := indexedScript(o, wpid, cacheKey)
		if err != nil {
			return err
		}
		if rec == nil {
			return &store.NotFoundError{Record: store.RecordScript, ID: wpid + " (cache key " + cacheKey + ")"}
		}
		v, err := getScriptVersion(o, rec.ID, rec.Latest)
		if err != nil {
			return err
		}
		out = rec.Revision(orgID, v)
		return nil
	})
	return out, err
}

// List returns one page (from 1) of the organization's scripts, the
// latest version of each, most recently changed first; wpid, when not "",
// keeps the scripts of that agent.
func (sc *Scripts) List(ctx context.Context, orgID string, page, pageSize int, wpid string) ([]*store.ScriptRevision, error) {
	var out []*store.ScriptRevision
	err := sc.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var recs []*scriptRecord
		err := o.scripts().ForEach(func(k, v []byte) error {
			rec := new(scriptRecord)
			if err := json.Unmarshal(v, rec); err != nil {
				return fmt.Errorf("store: script %s: %w", k, err)
			}
			if rec.DeletedAt == nil && (wpid == "" || rec.AgentID == wpid) {
				recs = append(recs, rec)
			}
			return nil
		})
		if err != nil {
			return err
		}
		slices.SortFunc(recs, func(a, b *scriptRecord) int {
			return cmp.Or(b.ModifiedAt.Compare(a.ModifiedAt.Time), compareIDs(b.ID, a.ID))
		})
		start, end := records.Window(len(recs), page, pageSize)
		recs = recs[start:end]
		out = make([]*store.ScriptRevision, 0, len(recs))
		for _, rec := range recs {
			v, err := getScriptVersion(o, rec.ID, rec.Latest)
			if err != nil {
				return err
			}
			out = append(out, rec.Revision(orgID, v))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
