package pgstore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// Scripts are the organizations' recorded scripts and their versions
// (bbolt: daemon/store/scripts.go). A version's content, script.yaml, is
// kept as the bytes it was given in a column of its own.
type Scripts struct{ s *Store }

// Scripts returns the recorded scripts of the organizations.
func (s *Store) Scripts() store.Scripts { return &Scripts{s} }

// getScript returns a script that is not deleted.
func getScript(ctx context.Context, q querier, orgID, id string, lock bool) (*records.Script, error) {
	doc, err := getDoc(ctx, q, "scripts", orgID, id, lock, store.RecordScript)
	if err != nil {
		return nil, err
	}
	rec, err := decodeDoc[records.Script](doc, store.RecordScript, id)
	if err != nil {
		return nil, err
	}
	if rec.DeletedAt != nil {
		return nil, &store.NotFoundError{Record: store.RecordScript, ID: id}
	}
	return rec, nil
}

// getScriptVersion returns one version of a script, with its content;
// NotFoundError with the version when it has none such.
func getScriptVersion(ctx context.Context, q querier, orgID, id string, version int) (*records.ScriptVersion, error) {
	nf := &store.NotFoundError{Record: store.RecordScript, ID: id, Version: version}
	if version <= 0 || int64(version) > math.MaxInt32 {
		return nil, nf
	}
	var doc, content []byte
	err := q.QueryRow(ctx, `SELECT doc, content FROM script_versions WHERE org_id = $1 AND script_id = $2 AND version = $3`,
		orgID, id, version).Scan(&doc, &content)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nf
	}
	if err != nil {
		return nil, fmt.Errorf("store: version %d of script %s: %w", version, id, err)
	}
	v := new(records.ScriptVersion)
	if err := json.Unmarshal(doc, v); err != nil {
		return nil, fmt.Errorf("store: version %d of script %s: %w", version, id, err)
	}
	v.Content = content
	return v, nil
}

// putScript writes the script's record (insert or replace).
func putScript(ctx context.Context, q querier, orgID string, rec *records.Script) error {
	doc, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("store: encode %s: %w", rec.ID, err)
	}
	_, err = q.Exec(ctx, `
		INSERT INTO scripts (org_id, id, agent_id, latest, modified_at, deleted, doc) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (org_id, id) DO UPDATE SET latest = excluded.latest, modified_at = excluded.modified_at,
			deleted = excluded.deleted, doc = excluded.doc`,
		orgID, rec.ID, rec.AgentID, rec.Latest, rec.ModifiedAt.Time, rec.DeletedAt != nil, doc)
	if err != nil {
		return fmt.Errorf("store: script %s: %w", rec.ID, err)
	}
	return nil
}

// putScriptVersion stores version rec.Latest+1 of the script made now
// with content, and the script record that says so. The caller holds the
// script's row locked (or made it in its transaction), so that two
// versions never take one number.
func putScriptVersion(ctx context.Context, tx pgx.Tx, orgID string, rec *records.Script, revisionID, runID string, content []byte, now client.Time) (*records.ScriptVersion, error) {
	v := rec.NextVersion(revisionID, runID, content, now)
	doc, err := records.Encode(fmt.Sprintf("version %d of script %s", v.Version, rec.ID), v.WithoutContent())
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO script_versions (org_id, script_id, version, doc, content) VALUES ($1, $2, $3, $4, $5)`,
		orgID, rec.ID, v.Version, doc, v.Content); err != nil {
		return nil, fmt.Errorf("store: version %d of script %s: %w", v.Version, rec.ID, err)
	}
	rec.Latest, rec.ModifiedAt = v.Version, now
	if err := putScript(ctx, tx, orgID, rec); err != nil {
		return nil, err
	}
	return v, nil
}

// agentOf resolves what names an agent in a ScriptInput: a live agent's
// wpid, or the workflow_id (w_) of one of its versions. NotFoundError of
// the agent otherwise.
func (sc *Scripts) agentOf(ctx context.Context, q querier, orgID, id string) (string, error) {
	nf := &store.NotFoundError{Record: store.RecordAgent, ID: id}
	if !records.ValidID(id) {
		return "", nf
	}
	live, err := sc.s.liveAgents(ctx, q, orgID, []string{id})
	if err != nil {
		return "", err
	}
	if live[id] {
		return id, nil
	}
	if !strings.HasPrefix(id, ids.PrefixAgentVersion+"_") {
		return "", nf
	}
	found, err := sc.s.agentOfVersion(ctx, q, orgID, id)
	if err != nil {
		return "", err
	}
	if found == "" {
		return "", nf
	}
	if live, err = sc.s.liveAgents(ctx, q, orgID, []string{found}); err != nil {
		return "", err
	}
	if !live[found] {
		return "", nf
	}
	return found, nil
}

// newScript stores a new script, version 1, and points the index entry
// of its agent's cache key at it.
func (sc *Scripts) newScript(ctx context.Context, tx pgx.Tx, orgID, scriptID, revisionID, wpid, cacheKey, runID string, content []byte) (*store.ScriptRevision, error) {
	now := sc.s.clock()
	rec := &records.Script{ID: scriptID, AgentID: wpid, CacheKey: cacheKey, CreatedAt: now}
	v, err := putScriptVersion(ctx, tx, orgID, rec, revisionID, runID, content, now)
	if err != nil {
		return nil, err
	}
	if wpid != "" {
		if _, err := tx.Exec(ctx, `INSERT INTO script_index (org_id, agent_id, cache_key, script_id) VALUES ($1, $2, $3, $4)
			ON CONFLICT (org_id, agent_id, cache_key) DO UPDATE SET script_id = excluded.script_id`,
			orgID, wpid, []byte(cacheKey), scriptID); err != nil {
			return nil, fmt.Errorf("store: the script of agent %s: %w", wpid, err)
		}
	}
	return rec.Revision(orgID, v), nil
}

// Create stores a new script, version 1. When in names an agent, the agent
// must be the organization's and not deleted (ErrNotFound otherwise), and
// the script becomes the one of the agent's cache key in.CacheKey,
// replacing any earlier script of that pair for the runs to come.
func (sc *Scripts) Create(ctx context.Context, orgID string, in store.ScriptInput) (*store.ScriptRevision, error) {
	if err := records.CheckScriptContent(in.Content); err != nil {
		return nil, err
	}
	cacheKey := cmp.Or(in.CacheKey, store.DefaultCacheKey)
	scriptID, revisionID := sc.s.ids.Next(ids.PrefixScript), sc.s.ids.Next(ids.PrefixScriptRevision)
	var out *store.ScriptRevision
	err := sc.s.tx(ctx, func(tx pgx.Tx) error {
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		wpid := ""
		if in.WorkflowPermanentID != "" {
			var err error
			if wpid, err = sc.agentOf(ctx, tx, orgID, in.WorkflowPermanentID); err != nil {
				return err
			}
		}
		var err error
		out, err = sc.newScript(ctx, tx, orgID, scriptID, revisionID, wpid, cacheKey, in.RunID, in.Content)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Deploy stores content as a new version of a script (its latest + 1),
// even when it equals the latest.
func (sc *Scripts) Deploy(ctx context.Context, orgID, scriptID string, content []byte, runID string) (*store.ScriptRevision, error) {
	if err := records.CheckScriptContent(content); err != nil {
		return nil, err
	}
	revisionID := sc.s.ids.Next(ids.PrefixScriptRevision)
	var out *store.ScriptRevision
	err := sc.s.tx(ctx, func(tx pgx.Tx) error {
		rec, err := getScript(ctx, tx, orgID, scriptID, true)
		if err != nil {
			return err
		}
		v, err := putScriptVersion(ctx, tx, orgID, rec, revisionID, runID, content, sc.s.clock())
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

// scriptPairLock is the advisory lock of an agent's cache key in an
// organization, which Record holds while it finds or makes the pair's
// script, so that daemons recording for one pair at once make one script.
func scriptPairLock(orgID, wpid, cacheKey string) int64 {
	sum := sha256.Sum256([]byte("script_index\x00" + orgID + "\x00" + wpid + "\x00" + cacheKey))
	return int64(binary.BigEndian.Uint64(sum[:8]))
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
	digest := records.ScriptDigest(content)
	scriptID, revisionID := sc.s.ids.Next(ids.PrefixScript), sc.s.ids.Next(ids.PrefixScriptRevision)
	err = sc.s.tx(ctx, func(tx pgx.Tx) error {
		rev, created = nil, false
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		if err := sc.s.checkLiveAgent(ctx, tx, orgID, wpid); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, scriptPairLock(orgID, wpid, cacheKey)); err != nil {
			return fmt.Errorf("store: lock the script of agent %s: %w", wpid, err)
		}
		rec, err := indexedScript(ctx, tx, orgID, wpid, cacheKey, true)
		if err != nil {
			return err
		}
		if rec == nil {
			created = true
			rev, err = sc.newScript(ctx, tx, orgID, scriptID, revisionID, wpid, cacheKey, runID, content)
			return err
		}
		latest, err := getScriptVersion(ctx, tx, orgID, rec.ID, rec.Latest)
		if err != nil {
			return err
		}
		if latest.SHA256 == digest && bytes.Equal(latest.Content, content) {
			rev = rec.Revision(orgID, latest)
			return nil
		}
		v, err := putScriptVersion(ctx, tx, orgID, rec, revisionID, runID, content, sc.s.clock())
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
// key, nil when none (or when it was deleted); locked FOR UPDATE when lock
// is set.
func indexedScript(ctx context.Context, q querier, orgID, wpid, cacheKey string, lock bool) (*records.Script, error) {
	if !records.ValidID(wpid) {
		return nil, nil
	}
	var id string
	err := q.QueryRow(ctx, `SELECT script_id FROM script_index WHERE org_id = $1 AND agent_id = $2 AND cache_key = $3`,
		orgID, wpid, []byte(cacheKey)).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: the script of agent %s: %w", wpid, err)
	}
	rec, err := getScript(ctx, q, orgID, id, lock)
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
	rec, err := getScript(ctx, sc.s.pool, orgID, scriptID, false)
	if err != nil {
		return nil, err
	}
	if version == 0 {
		version = rec.Latest
	}
	v, err := getScriptVersion(ctx, sc.s.pool, orgID, rec.ID, version)
	if err != nil {
		return nil, err
	}
	return rec.Revision(orgID, v), nil
}

// ForAgent returns the latest version of the script of agent wpid's cache
// key cacheKey ("": DefaultCacheKey): the one a run with run_with "code"
// replays. ErrNotFound when there is none.
func (sc *Scripts) ForAgent(ctx context.Context, orgID, wpid, cacheKey string) (*store.ScriptRevision, error) {
	cacheKey = cmp.Or(cacheKey, store.DefaultCacheKey)
	if err := resOrg(ctx, sc.s.pool, orgID); err != nil {
		return nil, err
	}
	rec, err := indexedScript(ctx, sc.s.pool, orgID, wpid, cacheKey, false)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, &store.NotFoundError{Record: store.RecordScript, ID: wpid + " (cache key " + cacheKey + ")"}
	}
	v, err := getScriptVersion(ctx, sc.s.pool, orgID, rec.ID, rec.Latest)
	if err != nil {
		return nil, err
	}
	return rec.Revision(orgID, v), nil
}

// List returns one page (from 1) of the organization's scripts, the
// latest version of each, most recently changed first (ids, numbers of one
// prefix, break ties); wpid, when not "", keeps the scripts of that agent.
func (sc *Scripts) List(ctx context.Context, orgID string, page, pageSize int, wpid string) ([]*store.ScriptRevision, error) {
	if err := resOrg(ctx, sc.s.pool, orgID); err != nil {
		return nil, err
	}
	out := []*store.ScriptRevision{}
	offset, limit, ok := records.Offset(page, pageSize)
	if !ok || strings.IndexByte(wpid, 0) >= 0 {
		return out, nil
	}
	rows, err := sc.s.pool.Query(ctx, `
		SELECT s.id, s.doc, v.doc, v.content
		FROM scripts s JOIN script_versions v ON v.org_id = s.org_id AND v.script_id = s.id AND v.version = s.latest
		WHERE s.org_id = $1 AND NOT s.deleted AND ($2 = '' OR s.agent_id = $2)
		ORDER BY s.modified_at DESC, length(s.id) DESC, s.id COLLATE "C" DESC
		OFFSET $3 LIMIT $4`, orgID, wpid, offset, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list the scripts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var doc, vdoc, content []byte
		if err := rows.Scan(&id, &doc, &vdoc, &content); err != nil {
			return nil, fmt.Errorf("store: list the scripts: %w", err)
		}
		rec, err := decodeDoc[records.Script](doc, store.RecordScript, id)
		if err != nil {
			return nil, err
		}
		v := new(records.ScriptVersion)
		if err := json.Unmarshal(vdoc, v); err != nil {
			return nil, fmt.Errorf("store: version %d of script %s: %w", rec.Latest, id, err)
		}
		v.Content = content
		out = append(out, rec.Revision(orgID, v))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list the scripts: %w", err)
	}
	return out, nil
}
