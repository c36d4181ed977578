package pgstore

// Tags of agents and runs, and the organization's tag registry, as the
// bbolt store keeps them (daemon/store/tags.go): the current tags (tags),
// every change as an event (tag_events), and the registry of keys and
// (key, value) pairs (tag_keys, tag_values). All change together in the
// transaction of each operation. The changes of one subject's tags take a
// transaction-level advisory lock on the subject, so that two daemons
// changing the same subject's tags do so one after the other.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
	"github.com/abctl/abctl/daemon/tagquery"
)

// Tags are the tags of agents and runs, and the organizations' tag
// registries. Get it with Store.Tags.
type Tags struct{ s *Store }

// Tags returns the store's tags.
func (s *Store) Tags() store.Tags { return &Tags{s} }

// tagLockClass is the first key of the subjects' advisory locks ("tags"),
// the second being a hash of the organization and subject: the two-key
// locks never meet the one-key lock of the migrations.
const tagLockClass int32 = 0x74616773

// tagRow is a current tag of a subject.
type tagRow struct {
	Key    string // "" for a standalone label
	Value  string
	Source client.TagSource
	SetAt  client.Time
	SetBy  string
	Event  int64 // the seq of its SET event
}

// label is the row's label column: its value for a standalone label, ""
// for a grouped tag (whose key names its slot).
func (r *tagRow) label() string {
	if r.Key == "" {
		return r.Value
	}
	return ""
}

func (r *tagRow) tag() client.Tag {
	t := client.Tag{Value: r.Value, Source: r.Source, SetAt: r.SetAt, SetBy: r.SetBy}
	if r.Key != "" {
		k := r.Key
		t.Key = &k
	}
	return t
}

func tagsOf(rows []tagRow) []client.Tag {
	out := make([]client.Tag, len(rows))
	for i := range rows {
		out[i] = rows[i].tag()
	}
	return out
}

func subjectNotFound(subj store.TagSubject) error {
	if subj.Kind == store.RunSubject {
		return &store.NotFoundError{Record: store.RecordWorkflowRun, ID: subj.ID}
	}
	return records.AgentNotFound(subj.ID)
}

func tagKeyNotFound(key string) error {
	return &store.NotFoundError{Record: store.RecordTagKey, ID: key}
}

func tagValueNotFound(key, value string) error {
	return &store.NotFoundError{Record: store.RecordTagValue, ID: key, Value: value}
}

// checkSubject returns a NotFoundError unless the subject exists in the
// organization (and, for an agent, is not deleted).
func checkSubject(ctx context.Context, q querier, orgID string, subj store.TagSubject) error {
	if !validKey(subj.ID) {
		return subjectNotFound(subj)
	}
	var found bool
	var err error
	switch subj.Kind {
	case store.AgentSubject:
		err = q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM agents WHERE org_id = $1 AND wpid = $2 AND NOT deleted)`,
			orgID, subj.ID).Scan(&found)
	case store.RunSubject:
		// Only workflow runs carry tags; a task run is not a subject.
		if strings.HasPrefix(subj.ID, ids.PrefixWorkflowRun+"_") {
			err = q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE org_id = $1 AND id = $2)`, orgID, subj.ID).Scan(&found)
		}
	}
	if err != nil {
		return fmt.Errorf("store: tag subject %s: %w", subj.ID, err)
	}
	if !found {
		return subjectNotFound(subj)
	}
	return nil
}

// readSubject is checkSubject for the reads outside a transaction: an
// unknown organization answers its own NotFoundError.
func readSubject(ctx context.Context, q querier, orgID string, subj store.TagSubject) error {
	if !validKey(orgID) {
		return needOrg(ctx, q, orgID)
	}
	err := checkSubject(ctx, q, orgID, subj)
	var nf *store.NotFoundError
	if errors.As(err, &nf) {
		return orgOr(ctx, q, orgID, err)
	}
	return err
}

func currentTags(ctx context.Context, q querier, orgID, subject string) ([]tagRow, error) {
	rows, err := q.Query(ctx, `
		SELECT key, value, source, set_at, set_by, event_seq FROM tags
		WHERE org_id = $1 AND subject = $2 ORDER BY key, label`, orgID, subject)
	if err != nil {
		return nil, fmt.Errorf("store: tags of %s: %w", subject, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tagRow, error) {
		var t tagRow
		var source string
		var at time.Time
		err := r.Scan(&t.Key, &t.Value, &source, &at, &t.SetBy, &t.Event)
		t.Source, t.SetAt = client.TagSource(source), client.NewTime(at)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: tags of %s: %w", subject, err)
	}
	return out, nil
}

// tagWork is one transaction's work on tags: the organization, the time
// and who acts.
type tagWork struct {
	s     *Store
	tx    pgx.Tx
	orgID string
	now   client.Time
	setBy string
}

// lock takes the subject's advisory lock for the rest of the transaction.
func (t *tagWork) lock(ctx context.Context, subject string) error {
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, tagLockClass, t.orgID+" "+subject); err != nil {
		return fmt.Errorf("store: lock the tags of %s: %w", subject, err)
	}
	return nil
}

// newEvent records an event of the subject and returns its seq.
func (t *tagWork) newEvent(ctx context.Context, subj store.TagSubject, ev client.TagEvent) (int64, error) {
	n := t.s.ids.NextInt()
	prefix := records.PrefixAgentTagEvent
	if subj.Kind == store.RunSubject {
		prefix = records.PrefixRunTagEvent
	}
	ev.TagEventID = prefix + "_" + strconv.FormatInt(n, 10)
	ev.Source = client.TagSourceManual
	ev.SetAt = t.now
	ev.SetBy = t.setBy
	data, err := json.Marshal(ev)
	if err != nil {
		return 0, fmt.Errorf("store: encode tag event: %w", err)
	}
	if _, err := t.tx.Exec(ctx, `INSERT INTO tag_events (org_id, subject, seq, set_at, key, event) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.orgID, subj.ID, n, t.now.Time, ev.Key, data); err != nil {
		return 0, fmt.Errorf("store: tag event of %s: %w", subj.ID, err)
	}
	return n, nil
}

// supersede marks the subject's SET event seq as replaced now.
func (t *tagWork) supersede(ctx context.Context, subject string, seq int64) error {
	var raw []byte
	err := t.tx.QueryRow(ctx, `SELECT event FROM tag_events WHERE org_id = $1 AND subject = $2 AND seq = $3`,
		t.orgID, subject, seq).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("store: tag event %d of %s missing", seq, subject)
	}
	if err != nil {
		return fmt.Errorf("store: tag event of %s: %w", subject, err)
	}
	var ev client.TagEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return fmt.Errorf("store: tag event: %w", err)
	}
	now := t.now
	ev.SupersededAt = &now
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("store: encode tag event: %w", err)
	}
	if _, err := t.tx.Exec(ctx, `UPDATE tag_events SET event = $4 WHERE org_id = $1 AND subject = $2 AND seq = $3`,
		t.orgID, subject, seq, data); err != nil {
		return fmt.Errorf("store: tag event of %s: %w", subject, err)
	}
	return nil
}

// set puts a tag on the subject, replacing the value of a grouped tag.
func (t *tagWork) set(ctx context.Context, subj store.TagSubject, key, value string, prev *tagRow) error {
	if prev != nil {
		if err := t.unset(ctx, subj, prev); err != nil {
			return err
		}
	}
	seq, err := t.newEvent(ctx, subj, client.TagEvent{Key: records.StrPtr(key), Value: &value, EventType: client.TagEventSet})
	if err != nil {
		return err
	}
	row := tagRow{Key: key, Value: value}
	if _, err := t.tx.Exec(ctx, `
		INSERT INTO tags (org_id, subject, key, label, value, source, set_at, set_by, event_seq)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		t.orgID, subj.ID, key, row.label(), value, string(client.TagSourceManual), t.now.Time, t.setBy, seq); err != nil {
		return fmt.Errorf("store: tag %s of %s: %w", key+":"+value, subj.ID, err)
	}
	return nil
}

// unset takes a current tag off the subject without an event of its own:
// its SET event is superseded and its row goes.
func (t *tagWork) unset(ctx context.Context, subj store.TagSubject, row *tagRow) error {
	if err := t.supersede(ctx, subj.ID, row.Event); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM tags WHERE org_id = $1 AND subject = $2 AND key = $3 AND label = $4`,
		t.orgID, subj.ID, row.Key, row.label()); err != nil {
		return fmt.Errorf("store: tags of %s: %w", subj.ID, err)
	}
	return nil
}

// remove deletes a current tag and records a DELETE event: with the key
// and no value for a grouped tag, with the value for a label.
func (t *tagWork) remove(ctx context.Context, subj store.TagSubject, row *tagRow) error {
	if err := t.unset(ctx, subj, row); err != nil {
		return err
	}
	ev := client.TagEvent{EventType: client.TagEventDelete}
	if row.Key != "" {
		ev.Key = records.StrPtr(row.Key)
	} else {
		ev.Value = records.StrPtr(row.Value)
	}
	_, err := t.newEvent(ctx, subj, ev)
	return err
}

func (t *tagWork) registerKey(ctx context.Context, key string) error {
	if _, err := t.tx.Exec(ctx, `INSERT INTO tag_keys (org_id, key, description, created_at) VALUES ($1, $2, NULL, $3) ON CONFLICT DO NOTHING`,
		t.orgID, key, t.now.Time); err != nil {
		return fmt.Errorf("store: tag key %s: %w", key, err)
	}
	return nil
}

// registerValue registers the pair unless it is; inserted says whether it
// was not.
func (t *tagWork) registerValue(ctx context.Context, key, value string, color client.TagColor) (inserted bool, err error) {
	if color == "" {
		color = client.TagColors[rand.IntN(len(client.TagColors))]
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO tag_values (org_id, key, value, color, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
		t.orgID, key, value, string(color), t.now.Time)
	if err != nil {
		return false, fmt.Errorf("store: tag value %s:%s: %w", key, value, err)
	}
	return tag.RowsAffected() == 1, nil
}

// apply makes one change to a subject's tags (see the bbolt store's
// tagTx.apply): within the change a grouped tag is keyed by its key (the
// last value wins) and a label by its value; a set and a delete of the
// same slot resolve to the set; setting what is already there and
// deleting what is absent change nothing.
func (t *tagWork) apply(ctx context.Context, subj store.TagSubject, ch store.TagChange) error {
	for _, s := range ch.Set {
		if !storable(s.Key, s.Value) {
			return fmt.Errorf("store: tag %q:%q of %s: a tag must be UTF-8 without NUL bytes", s.Key, s.Value, subj.ID)
		}
	}
	if err := t.lock(ctx, subj.ID); err != nil {
		return err
	}
	rows, err := currentTags(ctx, t.tx, t.orgID, subj.ID)
	if err != nil {
		return err
	}
	deletes, sets, err := records.PlanTagChange(subj, rows, func(r *tagRow) (string, string) { return r.Key, r.Value }, ch)
	if err != nil {
		return err
	}
	for _, row := range deletes {
		if err := t.remove(ctx, subj, row); err != nil {
			return err
		}
	}
	for _, st := range sets {
		if err := t.set(ctx, subj, st.Key, st.Value, st.Prev); err != nil {
			return err
		}
		if st.Key != "" {
			if err := t.registerKey(ctx, st.Key); err != nil {
				return err
			}
			if _, err := t.registerValue(ctx, st.Key, st.Value, ch.Colors[st.Key]); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyTags applies ch to subj in tx, as Tags.Apply does, stamping now and
// setBy, and returns the subject's tags afterwards. A NotFoundError when
// the subject does not exist (tx sees a run it inserted itself).
func (s *Store) applyTags(ctx context.Context, tx pgx.Tx, orgID string, now client.Time, setBy string, subj store.TagSubject, ch store.TagChange) ([]client.Tag, error) {
	if err := checkSubject(ctx, tx, orgID, subj); err != nil {
		return nil, err
	}
	t := &tagWork{s: s, tx: tx, orgID: orgID, now: now, setBy: setBy}
	if err := t.apply(ctx, subj, ch); err != nil {
		return nil, err
	}
	rows, err := currentTags(ctx, tx, orgID, subj.ID)
	if err != nil {
		return nil, err
	}
	return tagsOf(rows), nil
}

// Apply changes a subject's tags atomically (see store.TagChange) and
// returns its tags afterwards: labels first by value, then grouped tags by
// key. ErrNotFound when the subject does not exist; a TooManyTagsError
// (which matches ErrInvalid) when it would carry more than
// MaxTagsPerSubject tags.
func (tg *Tags) Apply(ctx context.Context, orgID string, subj store.TagSubject, ch store.TagChange) ([]client.Tag, error) {
	var out []client.Tag
	err := tg.s.tx(ctx, func(tx pgx.Tx) error {
		if err := needOrg(ctx, tx, orgID); err != nil {
			return err
		}
		var err error
		out, err = tg.s.applyTags(ctx, tx, orgID, tg.s.clock(), ch.SetBy, subj, ch)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Get returns a subject's current tags, ordered as Apply returns them.
func (tg *Tags) Get(ctx context.Context, orgID string, subj store.TagSubject) ([]client.Tag, error) {
	if err := readSubject(ctx, tg.s.pool, orgID, subj); err != nil {
		return nil, err
	}
	rows, err := currentTags(ctx, tg.s.pool, orgID, subj.ID)
	if err != nil {
		return nil, err
	}
	return tagsOf(rows), nil
}

// History returns a subject's tag events, newest first (by set_at, then
// by event id), superseded SETs included.
func (tg *Tags) History(ctx context.Context, orgID string, subj store.TagSubject, q store.TagHistoryQuery) ([]client.TagEvent, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	if err := readSubject(ctx, tg.s.pool, orgID, subj); err != nil {
		return nil, err
	}
	out := []client.TagEvent{}
	if !storable(q.Key) {
		return out, nil // no event has such a key
	}
	args := []any{orgID, subj.ID, limit}
	sql := `SELECT event FROM tag_events WHERE org_id = $1 AND subject = $2`
	if q.Since != nil {
		// Event times are whole microseconds: an event is at or after
		// Since when it is at or after Since rounded up to one.
		since := q.Since.UTC()
		if r := since.Sub(since.Truncate(time.Microsecond)); r > 0 {
			since = since.Add(time.Microsecond - r)
		}
		args = append(args, since)
		sql += fmt.Sprintf(` AND set_at >= $%d`, len(args))
	}
	if q.Key != "" {
		args = append(args, q.Key)
		sql += fmt.Sprintf(` AND key = $%d`, len(args))
	}
	sql += ` ORDER BY set_at DESC, seq DESC LIMIT $3`
	rows, err := tg.s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("store: tag events of %s: %w", subj.ID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("store: tag events of %s: %w", subj.ID, err)
		}
		var ev client.TagEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("store: tag event of %s: %w", subj.ID, err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: tag events of %s: %w", subj.ID, err)
	}
	return out, nil
}

// Batch returns the current tags of many subjects of one kind. Every
// requested id is in the result; one that does not exist in the
// organization (or a deleted agent) has an empty list, as the hosted
// service answers.
func (tg *Tags) Batch(ctx context.Context, orgID string, kind store.SubjectKind, idList []string) (map[string][]client.TagItem, error) {
	out := make(map[string][]client.TagItem, len(idList))
	var ask []string
	for _, id := range idList {
		out[id] = []client.TagItem{}
		if !validKey(id) || kind == store.RunSubject && !strings.HasPrefix(id, ids.PrefixWorkflowRun+"_") {
			continue
		}
		ask = append(ask, id)
	}
	if !validKey(orgID) {
		return nil, needOrg(ctx, tg.s.pool, orgID)
	}
	var live []string
	if len(ask) > 0 {
		sql := `SELECT wpid FROM agents WHERE org_id = $1 AND wpid = ANY($2) AND NOT deleted`
		if kind == store.RunSubject {
			sql = `SELECT id FROM runs WHERE org_id = $1 AND id = ANY($2)`
		}
		rows, err := tg.s.pool.Query(ctx, sql, orgID, ask)
		if err != nil {
			return nil, fmt.Errorf("store: tag subjects: %w", err)
		}
		if live, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return nil, fmt.Errorf("store: tag subjects: %w", err)
		}
	}
	if len(live) == 0 {
		if err := needOrg(ctx, tg.s.pool, orgID); err != nil {
			return nil, err
		}
		return out, nil
	}
	rows, err := tg.s.pool.Query(ctx, `SELECT subject, key, value FROM tags WHERE org_id = $1 AND subject = ANY($2) ORDER BY subject, key, label`,
		orgID, live)
	if err != nil {
		return nil, fmt.Errorf("store: tags: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var subject, key, value string
		if err := rows.Scan(&subject, &key, &value); err != nil {
			return nil, fmt.Errorf("store: tags: %w", err)
		}
		out[subject] = append(out[subject], client.TagItem{Key: records.StrPtr(key), Value: value})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: tags: %w", err)
	}
	return out, nil
}

// Counts of the agents (not deleted) carrying a registered key, and a
// registered (key, value) pair, in the registry's queries.
const (
	keyCountSQL = `(SELECT count(*) FROM tags t JOIN agents a ON a.org_id = t.org_id AND a.wpid = t.subject
		WHERE t.org_id = k.org_id AND t.key = k.key AND t.key <> '' AND NOT a.deleted)`
	valueCountSQL = `(SELECT count(*) FROM tags t JOIN agents a ON a.org_id = t.org_id AND a.wpid = t.subject
		WHERE t.org_id = v.org_id AND t.key = v.key AND t.value = v.value AND t.key <> '' AND NOT a.deleted)`
)

// Keys returns the registered tag keys, ordered by key, each with the
// number of agents (not deleted) carrying it.
func (tg *Tags) Keys(ctx context.Context, orgID string) ([]*client.TagKey, error) {
	if err := needOrg(ctx, tg.s.pool, orgID); err != nil {
		return nil, err
	}
	rows, err := tg.s.pool.Query(ctx, `SELECT k.key, k.description, `+keyCountSQL+` FROM tag_keys k WHERE k.org_id = $1 ORDER BY k.key`, orgID)
	if err != nil {
		return nil, fmt.Errorf("store: tag keys: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*client.TagKey, error) {
		k := new(client.TagKey)
		return k, r.Scan(&k.Key, &k.Description, &k.WorkflowCount)
	})
	if err != nil {
		return nil, fmt.Errorf("store: tag keys: %w", err)
	}
	if out == nil {
		out = []*client.TagKey{}
	}
	return out, nil
}

// getTagKey answers the registered key (with its count), its row locked
// with lock.
func getTagKey(ctx context.Context, q querier, orgID, key string, lock bool) (*client.TagKey, error) {
	if !validKey(key) {
		return nil, tagKeyNotFound(key)
	}
	sql := `SELECT k.key, k.description, ` + keyCountSQL + ` FROM tag_keys k WHERE k.org_id = $1 AND k.key = $2`
	if lock {
		sql += ` FOR UPDATE`
	}
	k := new(client.TagKey)
	err := q.QueryRow(ctx, sql, orgID, key).Scan(&k.Key, &k.Description, &k.WorkflowCount)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, tagKeyNotFound(key)
	}
	if err != nil {
		return nil, fmt.Errorf("store: tag key %s: %w", key, err)
	}
	return k, nil
}

// getTagValue answers the registered pair (with its count), its row
// locked with lock.
func getTagValue(ctx context.Context, q querier, orgID, key, value string, lock bool) (*client.TagValue, error) {
	if !storable(key, value) {
		return nil, tagValueNotFound(key, value)
	}
	sql := `SELECT v.key, v.value, v.color, ` + valueCountSQL + ` FROM tag_values v WHERE v.org_id = $1 AND v.key = $2 AND v.value = $3`
	if lock {
		sql += ` FOR UPDATE`
	}
	v := new(client.TagValue)
	var color string
	err := q.QueryRow(ctx, sql, orgID, key, value).Scan(&v.Key, &v.Value, &color, &v.WorkflowCount)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, tagValueNotFound(key, value)
	}
	if err != nil {
		return nil, fmt.Errorf("store: tag value %s:%s: %w", key, value, err)
	}
	v.Color = client.TagColor(color)
	return v, nil
}

// UpdateKey sets a registered key's description; nil clears it.
func (tg *Tags) UpdateKey(ctx context.Context, orgID, key string, description *string) (*client.TagKey, error) {
	var out *client.TagKey
	err := tg.s.tx(ctx, func(tx pgx.Tx) error {
		if err := needOrg(ctx, tx, orgID); err != nil {
			return err
		}
		if !validKey(key) {
			return tagKeyNotFound(key)
		}
		tag, err := tx.Exec(ctx, `UPDATE tag_keys SET description = $3 WHERE org_id = $1 AND key = $2`, orgID, key, description)
		if err != nil {
			return fmt.Errorf("store: tag key %s: %w", key, err)
		}
		if tag.RowsAffected() == 0 {
			return tagKeyNotFound(key)
		}
		out, err = getTagKey(ctx, tx, orgID, key, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// carriers returns the subjects carrying the grouped key, or the pair
// (key, value) when value is not nil.
func carriers(ctx context.Context, q querier, orgID, key string, value *string) ([]string, error) {
	sql := `SELECT subject FROM tags WHERE org_id = $1 AND key = $2 AND key <> '' ORDER BY value, subject`
	args := []any{orgID, key}
	if value != nil {
		sql = `SELECT subject FROM tags WHERE org_id = $1 AND key = $2 AND value = $3 AND key <> '' ORDER BY subject`
		args = append(args, *value)
	}
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("store: carriers of tag key %s: %w", key, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: carriers of tag key %s: %w", key, err)
	}
	return out, nil
}

// removeFromCarriers deletes the grouped tag key from every subject in
// subjects, with a DELETE event each, and counts the agents (deleted ones
// too: their tags changed) and the runs affected.
func (t *tagWork) removeFromCarriers(ctx context.Context, subjects []string, key string) (agents, runs int, err error) {
	return records.RemoveKey(subjects, key, func(subj store.TagSubject, ch store.TagChange) error {
		return t.apply(ctx, subj, ch)
	})
}

// DeleteKey removes a key from the registry, with its values, and the tag
// from every agent and run carrying it.
func (tg *Tags) DeleteKey(ctx context.Context, orgID, key, setBy string) (*client.TagKeyDeleteResponse, error) {
	var out *client.TagKeyDeleteResponse
	err := tg.s.tx(ctx, func(tx pgx.Tx) error {
		if err := needOrg(ctx, tx, orgID); err != nil {
			return err
		}
		if _, err := getTagKey(ctx, tx, orgID, key, true); err != nil {
			return err
		}
		t := &tagWork{s: tg.s, tx: tx, orgID: orgID, now: tg.s.clock(), setBy: setBy}
		subjects, err := carriers(ctx, tx, orgID, key, nil)
		if err != nil {
			return err
		}
		agents, runs, err := t.removeFromCarriers(ctx, subjects, key)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM tag_values WHERE org_id = $1 AND key = $2`, orgID, key); err != nil {
			return fmt.Errorf("store: tag key %s: %w", key, err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM tag_keys WHERE org_id = $1 AND key = $2`, orgID, key); err != nil {
			return fmt.Errorf("store: tag key %s: %w", key, err)
		}
		out = &client.TagKeyDeleteResponse{Key: key, RemovedFromWorkflowCount: agents, RemovedFromRunCount: runs, RemovedCount: agents + runs}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Values returns the registered (key, value) pairs, ordered by key then
// value, only those of key when it is not empty, each with the number of
// agents (not deleted) carrying it.
func (tg *Tags) Values(ctx context.Context, orgID, key string) ([]*client.TagValue, error) {
	if err := needOrg(ctx, tg.s.pool, orgID); err != nil {
		return nil, err
	}
	out := []*client.TagValue{}
	if !storable(key) {
		return out, nil
	}
	sql := `SELECT v.key, v.value, v.color, ` + valueCountSQL + ` FROM tag_values v WHERE v.org_id = $1`
	args := []any{orgID}
	if key != "" {
		sql += ` AND v.key = $2`
		args = append(args, key)
	}
	rows, err := tg.s.pool.Query(ctx, sql+` ORDER BY v.key, v.value`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: tag values: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		v := new(client.TagValue)
		var color string
		if err := rows.Scan(&v.Key, &v.Value, &color, &v.WorkflowCount); err != nil {
			return nil, fmt.Errorf("store: tag values: %w", err)
		}
		v.Color = client.TagColor(color)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: tag values: %w", err)
	}
	return out, nil
}

// CreateValue registers a (key, value) pair, and its key when new, before
// any subject carries it; color "" means a random palette colour. A
// ConflictError (which matches ErrConflict) when the pair is registered
// already.
func (tg *Tags) CreateValue(ctx context.Context, orgID, key, value string, color client.TagColor) (*client.TagValue, error) {
	var out *client.TagValue
	err := tg.s.tx(ctx, func(tx pgx.Tx) error {
		if err := needOrg(ctx, tx, orgID); err != nil {
			return err
		}
		t := &tagWork{s: tg.s, tx: tx, orgID: orgID, now: tg.s.clock()}
		inserted, err := t.registerValue(ctx, key, value, color)
		if err != nil {
			return err
		}
		if !inserted {
			return &store.ConflictError{Record: store.RecordTagValue, ID: key, Value: value}
		}
		if err := t.registerKey(ctx, key); err != nil {
			return err
		}
		out, err = getTagValue(ctx, tx, orgID, key, value, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RecolorValue changes the colour of a registered (key, value) pair.
func (tg *Tags) RecolorValue(ctx context.Context, orgID, key, value string, color client.TagColor) (*client.TagValue, error) {
	var out *client.TagValue
	err := tg.s.tx(ctx, func(tx pgx.Tx) error {
		if err := needOrg(ctx, tx, orgID); err != nil {
			return err
		}
		if !storable(key, value) {
			return tagValueNotFound(key, value)
		}
		tag, err := tx.Exec(ctx, `UPDATE tag_values SET color = $4 WHERE org_id = $1 AND key = $2 AND value = $3`,
			orgID, key, value, string(color))
		if err != nil {
			return fmt.Errorf("store: tag value %s:%s: %w", key, value, err)
		}
		if tag.RowsAffected() == 0 {
			return tagValueNotFound(key, value)
		}
		out, err = getTagValue(ctx, tx, orgID, key, value, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteValue removes a (key, value) pair from the registry and the tag
// from every agent and run carrying that value.
func (tg *Tags) DeleteValue(ctx context.Context, orgID, key, value, setBy string) (*client.TagValueDeleteResponse, error) {
	var out *client.TagValueDeleteResponse
	err := tg.s.tx(ctx, func(tx pgx.Tx) error {
		if err := needOrg(ctx, tx, orgID); err != nil {
			return err
		}
		if _, err := getTagValue(ctx, tx, orgID, key, value, true); err != nil {
			return err
		}
		t := &tagWork{s: tg.s, tx: tx, orgID: orgID, now: tg.s.clock(), setBy: setBy}
		subjects, err := carriers(ctx, tx, orgID, key, &value)
		if err != nil {
			return err
		}
		agents, runs, err := t.removeFromCarriers(ctx, subjects, key)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM tag_values WHERE org_id = $1 AND key = $2 AND value = $3`, orgID, key, value); err != nil {
			return fmt.Errorf("store: tag value %s:%s: %w", key, value, err)
		}
		out = &client.TagValueDeleteResponse{
			Key: key, Value: value,
			RemovedFromWorkflowCount: agents, RemovedFromRunCount: runs, RemovedCount: agents + runs,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RenameValue renames (key, value) to (key, newValue): the new pair takes
// the old one's colour and every carrier is re-tagged, with a SET event
// each. A ConflictError when newValue is registered for the key already.
func (tg *Tags) RenameValue(ctx context.Context, orgID, key, value, newValue, setBy string) (*client.TagValueRenameResponse, error) {
	var out *client.TagValueRenameResponse
	err := tg.s.tx(ctx, func(tx pgx.Tx) error {
		if err := needOrg(ctx, tx, orgID); err != nil {
			return err
		}
		old, err := getTagValue(ctx, tx, orgID, key, value, true)
		if err != nil {
			return err
		}
		if !storable(newValue) {
			return fmt.Errorf("store: tag value %q: a tag must be UTF-8 without NUL bytes", newValue)
		}
		t := &tagWork{s: tg.s, tx: tx, orgID: orgID, now: tg.s.clock(), setBy: setBy}
		inserted, err := t.registerValue(ctx, key, newValue, old.Color)
		if err != nil {
			return err
		}
		if !inserted {
			return &store.ConflictError{Record: store.RecordTagValue, ID: key, Value: newValue}
		}
		subjects, err := carriers(ctx, tx, orgID, key, &value)
		if err != nil {
			return err
		}
		renamed := 0
		for _, id := range subjects {
			subj := records.SubjectOf(id)
			if err := t.apply(ctx, subj, store.TagChange{Set: []store.TagSet{{Key: key, Value: newValue}}}); err != nil {
				return err
			}
			if subj.Kind == store.AgentSubject {
				renamed++
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM tag_values WHERE org_id = $1 AND key = $2 AND value = $3`, orgID, key, value); err != nil {
			return fmt.Errorf("store: tag value %s:%s: %w", key, value, err)
		}
		out = &client.TagValueRenameResponse{Key: key, Value: newValue, Color: old.Color, RenamedWorkflowCount: renamed}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// tagQuerySQL returns the SQL condition that the subject named by the
// column col satisfies q (each term some current tag of the subject's),
// appending its parameters to args, whose $1 must be the organization's
// id. A query without terms matches nothing, as the bbolt store's does.
func tagQuerySQL(col string, q *tagquery.Query, args []any) (string, []any) {
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	var conds []string
	exists := func(cond string) {
		conds = append(conds, `EXISTS (SELECT 1 FROM tags t WHERE t.org_id = $1 AND t.subject = `+col+` AND `+cond+`)`)
	}
	for _, label := range q.Labels {
		if !storable(label) {
			conds = append(conds, "FALSE")
			continue
		}
		// A label term: a standalone label, or any group's value.
		exists(`t.value = ` + arg(label))
	}
	for _, key := range q.Groups {
		if key == "" || !storable(key) {
			conds = append(conds, "FALSE")
			continue
		}
		exists(`t.key = ` + arg(key))
	}
	for _, ex := range q.Exact {
		var values []string
		for _, v := range ex.Values {
			if storable(v) {
				values = append(values, v)
			}
		}
		if ex.Key == "" || !storable(ex.Key) || len(values) == 0 {
			conds = append(conds, "FALSE")
			continue
		}
		exists(`t.key = ` + arg(ex.Key) + ` AND t.value = ANY(` + arg(values) + `)`)
	}
	if len(conds) == 0 {
		return "FALSE", args
	}
	return "(" + strings.Join(conds, " AND ") + ")", args
}

// subjectsMatching returns the subjects of one kind (agents by wpid, or
// workflow runs by id) whose current tags satisfy query.
func (s *Store) subjectsMatching(ctx context.Context, q querier, orgID string, query *tagquery.Query, kind store.SubjectKind) (map[string]bool, error) {
	cond, args := tagQuerySQL("s.subject", query, []any{orgID})
	rows, err := q.Query(ctx, `SELECT DISTINCT s.subject FROM tags s WHERE s.org_id = $1 AND `+cond, args...)
	if err != nil {
		return nil, fmt.Errorf("store: match tags: %w", err)
	}
	subjects, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: match tags: %w", err)
	}
	out := map[string]bool{}
	for _, id := range subjects {
		if records.SubjectOf(id).Kind == kind {
			out[id] = true
		}
	}
	return out, nil
}
