package boltstore

// Tags of agents and runs, and the organization's tag registry.
//
// A tag is either grouped (a key and a value, "env:prod"; at most one value
// per key on a subject) or a standalone label (a value alone, "urgent").
// The subject carrying it is an agent (by wpid) or a workflow run (wr_).
// Four buckets hold them (see the package comment):
//
//   - tags: the current tags, one row per subject and slot, where the slot
//     is the key of a grouped tag or the value of a label;
//   - tag_index: the same tags turned around (who carries key k, value v),
//     which the list filter and the registry's cascades read;
//   - tag_events: every change as an event, never deleted, which the
//     history reads; a SET event gets superseded_at when a later change
//     replaces it;
//   - tag_keys and tag_values: the registry of keys (with descriptions)
//     and of grouped (key, value) pairs (with palette colours).
//
// All four change together in the write transaction of each operation.
// The store trusts the daemon to have validated keys and values (shape,
// length, reserved prefix); it only relies on them not containing NUL,
// which its composite keys use as the separator.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
	"github.com/abctl/abctl/daemon/tagquery"
)

// Tags are the tags of agents and runs, and the organizations' tag
// registries. Get it with Store.Tags.
type Tags struct{ s *Store }

// tagRow is a current tag of a subject.
type tagRow struct {
	Key    string           `json:"key,omitempty"` // "" for a standalone label
	Value  string           `json:"value"`
	Source client.TagSource `json:"source"`
	SetAt  client.Time      `json:"set_at"`
	SetBy  string           `json:"set_by"`
	Event  []byte           `json:"event"` // the tag_events key of its SET event
}

func (r *tagRow) tag() client.Tag {
	t := client.Tag{Value: r.Value, Source: r.Source, SetAt: r.SetAt, SetBy: r.SetBy}
	if r.Key != "" {
		k := r.Key
		t.Key = &k
	}
	return t
}

// tagKeyRecord is a registered tag key.
type tagKeyRecord struct {
	Key         string      `json:"key"`
	Description *string     `json:"description"`
	CreatedAt   client.Time `json:"created_at"`
}

// tagValueRecord is a registered (key, value) pair.
type tagValueRecord struct {
	Key       string          `json:"key"`
	Value     string          `json:"value"`
	Color     client.TagColor `json:"color"`
	CreatedAt client.Time     `json:"created_at"`
}

// Keys of the tag buckets.

func subjectPrefix(subject string) []byte {
	return append([]byte(subject), 0)
}

func slotKey(subject, key, value string) []byte {
	k := subjectPrefix(subject)
	if key == "" {
		return append(append(k, 0), value...)
	}
	return append(append(k, 1), key...)
}

// indexKeys are the tag_index entries of one tag.
func indexKeys(subject, key, value string) [][]byte {
	out := make([][]byte, 0, 2)
	if key != "" {
		out = append(out, join3('k', key, value, subject))
	}
	return append(out, join3('v', value, key, subject))
}

func join3(kind byte, a, b, subject string) []byte {
	k := make([]byte, 0, 3+len(a)+len(b)+len(subject))
	k = append(k, kind)
	k = append(k, a...)
	k = append(k, 0)
	k = append(k, b...)
	k = append(k, 0)
	return append(k, subject...)
}

// Index prefixes: every carrier of a key, of a (key, value) pair, and of a
// value in any group or none.
func keyCarriersPrefix(key string) []byte { return append(append([]byte{'k'}, key...), 0) }
func pairCarriersPrefix(key, value string) []byte {
	return append(append(keyCarriersPrefix(key), value...), 0)
}
func valueCarriersPrefix(value string) []byte { return append(append([]byte{'v'}, value...), 0) }

func tagValueKey(key, value string) []byte {
	return append(append([]byte(key), 0), value...)
}

func eventKey(subject string, setAt int64, id uint64) []byte {
	k := subjectPrefix(subject)
	k = binary.BigEndian.AppendUint64(k, uint64(setAt)^(1<<63))
	return binary.BigEndian.AppendUint64(k, id)
}

// carriers returns the subjects of the index entries under prefix.
func carriers(o *orgTx, prefix []byte) []string {
	var out []string
	c := o.tagIndex().Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if i := bytes.LastIndexByte(k, 0); i >= 0 {
			out = append(out, string(k[i+1:]))
		}
	}
	return out
}

// checkSubject returns a NotFoundError unless the subject exists (and, for
// an agent, is not deleted).
func checkSubject(o *orgTx, subj store.TagSubject) error {
	if !validID(subj.ID) {
		return subjectNotFound(subj)
	}
	switch subj.Kind {
	case store.AgentSubject:
		if liveAgent(o, subj.ID) {
			return nil
		}
	case store.RunSubject:
		// Only workflow runs carry tags; a task run is not a subject.
		if strings.HasPrefix(subj.ID, ids.PrefixWorkflowRun+"_") && o.runs().Get([]byte(subj.ID)) != nil {
			return nil
		}
	}
	return subjectNotFound(subj)
}

func subjectNotFound(subj store.TagSubject) error {
	if subj.Kind == store.RunSubject {
		return notFound(store.RecordWorkflowRun, subj.ID)
	}
	return agentNotFound(subj.ID)
}

func currentTags(o *orgTx, subject string) ([]tagRow, error) {
	var out []tagRow
	prefix := subjectPrefix(subject)
	c := o.tags().Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var r tagRow
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, fmt.Errorf("store: tag %q of %s: %w", k[len(prefix):], subject, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func tagsOf(rows []tagRow) []client.Tag {
	out := make([]client.Tag, len(rows))
	for i := range rows {
		out[i] = rows[i].tag()
	}
	return out
}

// tagTx is one write transaction's work on tags: the organization's
// buckets, the time and who acts.
type tagTx struct {
	s     *Store
	o     *orgTx
	now   client.Time
	setBy string
}

func (t *tagTx) newEvent(subj store.TagSubject, ev client.TagEvent) ([]byte, error) {
	n := t.s.ids.NextInt()
	prefix := records.PrefixAgentTagEvent
	if subj.Kind == store.RunSubject {
		prefix = records.PrefixRunTagEvent
	}
	ev.TagEventID = prefix + "_" + strconv.FormatInt(n, 10)
	ev.Source = client.TagSourceManual
	ev.SetAt = t.now
	ev.SetBy = t.setBy
	k := eventKey(subj.ID, t.now.UnixNano(), uint64(n))
	return k, putJSON(t.o.tagEvents(), k, ev)
}

// supersede marks the SET event at key as replaced now.
func (t *tagTx) supersede(key []byte) error {
	raw := t.o.tagEvents().Get(key)
	if raw == nil {
		return fmt.Errorf("store: tag event %x missing", key)
	}
	var ev client.TagEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return fmt.Errorf("store: tag event: %w", err)
	}
	now := t.now
	ev.SupersededAt = &now
	return putJSON(t.o.tagEvents(), key, ev)
}

// set puts a tag on the subject, replacing the value of a grouped tag.
func (t *tagTx) set(subj store.TagSubject, key, value string, prev *tagRow) error {
	if prev != nil {
		if err := t.unset(subj, prev); err != nil {
			return err
		}
	}
	ev, err := t.newEvent(subj, client.TagEvent{Key: records.StrPtr(key), Value: &value, EventType: client.TagEventSet})
	if err != nil {
		return err
	}
	row := tagRow{Key: key, Value: value, Source: client.TagSourceManual, SetAt: t.now, SetBy: t.setBy, Event: ev}
	if err := putJSON(t.o.tags(), slotKey(subj.ID, key, value), row); err != nil {
		return err
	}
	for _, k := range indexKeys(subj.ID, key, value) {
		if err := t.o.tagIndex().Put(k, nil); err != nil {
			return err
		}
	}
	return nil
}

// unset takes a current tag off the subject without an event of its own:
// its SET event is superseded and its row and index entries go.
func (t *tagTx) unset(subj store.TagSubject, row *tagRow) error {
	if err := t.supersede(row.Event); err != nil {
		return err
	}
	if err := t.o.tags().Delete(slotKey(subj.ID, row.Key, row.Value)); err != nil {
		return err
	}
	for _, k := range indexKeys(subj.ID, row.Key, row.Value) {
		if err := t.o.tagIndex().Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes a current tag and records a DELETE event: with the key
// and no value for a grouped tag, with the value for a label.
func (t *tagTx) remove(subj store.TagSubject, row *tagRow) error {
	if err := t.unset(subj, row); err != nil {
		return err
	}
	ev := client.TagEvent{EventType: client.TagEventDelete}
	if row.Key != "" {
		ev.Key = records.StrPtr(row.Key)
	} else {
		ev.Value = records.StrPtr(row.Value)
	}
	_, err := t.newEvent(subj, ev)
	return err
}

func (t *tagTx) registerKey(key string) error {
	if t.o.tagKeys().Get([]byte(key)) != nil {
		return nil
	}
	return putJSON(t.o.tagKeys(), []byte(key), tagKeyRecord{Key: key, CreatedAt: t.now})
}

func (t *tagTx) registerValue(key, value string, color client.TagColor) error {
	k := tagValueKey(key, value)
	if t.o.tagValues().Get(k) != nil {
		return nil
	}
	if color == "" {
		color = client.TagColors[rand.IntN(len(client.TagColors))]
	}
	return putJSON(t.o.tagValues(), k, tagValueRecord{Key: key, Value: value, Color: color, CreatedAt: t.now})
}

// apply makes one change to a subject's tags. Within the change a grouped
// tag is keyed by its key (the last value wins) and a label by its value;
// a set and a delete of the same slot resolve to the set; setting what is
// already there and deleting what is absent change nothing.
func (t *tagTx) apply(subj store.TagSubject, ch store.TagChange) error {
	rows, err := currentTags(t.o, subj.ID)
	if err != nil {
		return err
	}
	deletes, sets, err := records.PlanTagChange(subj, rows, func(r *tagRow) (string, string) { return r.Key, r.Value }, ch)
	if err != nil {
		return err
	}
	for _, row := range deletes {
		if err := t.remove(subj, row); err != nil {
			return err
		}
	}
	for _, st := range sets {
		if err := t.set(subj, st.Key, st.Value, st.Prev); err != nil {
			return err
		}
		if st.Key != "" {
			if err := t.registerKey(st.Key); err != nil {
				return err
			}
			if err := t.registerValue(st.Key, st.Value, ch.Colors[st.Key]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Apply changes a subject's tags atomically (see TagChange) and returns
// its tags afterwards: labels first by value, then grouped tags by key.
// ErrNotFound when the subject does not exist; a TooManyTagsError (which
// matches ErrInvalid) when it would carry more than MaxTagsPerSubject tags.
func (tg *Tags) Apply(ctx context.Context, orgID string, subj store.TagSubject, ch store.TagChange) ([]client.Tag, error) {
	var out []client.Tag
	err := tg.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if err := checkSubject(o, subj); err != nil {
			return err
		}
		t := &tagTx{s: tg.s, o: o, now: tg.s.clock(), setBy: ch.SetBy}
		if err := t.apply(subj, ch); err != nil {
			return err
		}
		rows, err := currentTags(o, subj.ID)
		out = tagsOf(rows)
		return err
	})
	return out, err
}

// Get returns a subject's current tags, ordered as Apply returns them.
func (tg *Tags) Get(ctx context.Context, orgID string, subj store.TagSubject) ([]client.Tag, error) {
	var out []client.Tag
	err := tg.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		if err := checkSubject(o, subj); err != nil {
			return err
		}
		rows, err := currentTags(o, subj.ID)
		out = tagsOf(rows)
		return err
	})
	return out, err
}

// History returns a subject's tag events, newest first (by set_at, then
// by event id), superseded SETs included.
func (tg *Tags) History(ctx context.Context, orgID string, subj store.TagSubject, q store.TagHistoryQuery) ([]client.TagEvent, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	out := []client.TagEvent{}
	err := tg.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		if err := checkSubject(o, subj); err != nil {
			return err
		}
		prefix := subjectPrefix(subj.ID)
		end := append([]byte(subj.ID), 1) // just past every key of the subject
		c := o.tagEvents().Cursor()
		k, v := c.Seek(end)
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		for ; k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, v = c.Prev() {
			if q.Since != nil && len(k) >= len(prefix)+8 {
				at := int64(binary.BigEndian.Uint64(k[len(prefix):]) ^ (1 << 63))
				if at < q.Since.UnixNano() {
					break // older events follow
				}
			}
			var ev client.TagEvent
			if err := json.Unmarshal(v, &ev); err != nil {
				return fmt.Errorf("store: tag event of %s: %w", subj.ID, err)
			}
			if q.Key != "" && (ev.Key == nil || *ev.Key != q.Key) {
				continue
			}
			out = append(out, ev)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Batch returns the current tags of many subjects of one kind. Every
// requested id is in the result; one that does not exist in the
// organization (or a deleted agent) has an empty list, as the hosted
// service answers.
func (tg *Tags) Batch(ctx context.Context, orgID string, kind store.SubjectKind, idList []string) (map[string][]client.TagItem, error) {
	out := make(map[string][]client.TagItem, len(idList))
	err := tg.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		for _, id := range idList {
			items := []client.TagItem{}
			if checkSubject(o, store.TagSubject{Kind: kind, ID: id}) == nil {
				rows, err := currentTags(o, id)
				if err != nil {
					return err
				}
				for _, r := range rows {
					items = append(items, client.TagItem{Key: records.StrPtr(r.Key), Value: r.Value})
				}
			}
			out[id] = items
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// countLiveAgents counts the agents that are not deleted among subjects.
func countLiveAgents(o *orgTx, subjects []string) int {
	n := 0
	for _, id := range subjects {
		if records.SubjectOf(id).Kind == store.AgentSubject && liveAgent(o, id) {
			n++
		}
	}
	return n
}

func tagValueNotFound(key, value string) error {
	return &store.NotFoundError{Record: store.RecordTagValue, ID: key, Value: value}
}

func getTagKey(o *orgTx, key string) (*tagKeyRecord, error) {
	return getJSON[tagKeyRecord](o.tagKeys(), store.RecordTagKey, key)
}

func getTagValue(o *orgTx, key, value string) (*tagValueRecord, error) {
	raw := o.tagValues().Get(tagValueKey(key, value))
	if raw == nil {
		return nil, tagValueNotFound(key, value)
	}
	rec := new(tagValueRecord)
	if err := json.Unmarshal(raw, rec); err != nil {
		return nil, fmt.Errorf("store: tag value %s:%s: %w", key, value, err)
	}
	return rec, nil
}

func (rec *tagKeyRecord) result(o *orgTx) *client.TagKey {
	return &client.TagKey{
		Key: rec.Key, Description: rec.Description,
		WorkflowCount: countLiveAgents(o, carriers(o, keyCarriersPrefix(rec.Key))),
	}
}

func (rec *tagValueRecord) result(o *orgTx) *client.TagValue {
	return &client.TagValue{
		Key: rec.Key, Value: rec.Value, Color: rec.Color,
		WorkflowCount: countLiveAgents(o, carriers(o, pairCarriersPrefix(rec.Key, rec.Value))),
	}
}

// Keys returns the registered tag keys, ordered by key, each with the
// number of agents (not deleted) carrying it.
func (tg *Tags) Keys(ctx context.Context, orgID string) ([]*client.TagKey, error) {
	out := []*client.TagKey{}
	err := tg.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		return o.tagKeys().ForEach(func(k, v []byte) error {
			rec := new(tagKeyRecord)
			if err := json.Unmarshal(v, rec); err != nil {
				return fmt.Errorf("store: tag key %s: %w", k, err)
			}
			out = append(out, rec.result(o))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateKey sets a registered key's description; nil clears it.
func (tg *Tags) UpdateKey(ctx context.Context, orgID, key string, description *string) (*client.TagKey, error) {
	var out *client.TagKey
	err := tg.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getTagKey(o, key)
		if err != nil {
			return err
		}
		rec.Description = description
		if err := putJSON(o.tagKeys(), []byte(key), rec); err != nil {
			return err
		}
		out = rec.result(o)
		return nil
	})
	return out, err
}

// removeFromCarriers deletes the grouped tag key from every subject under
// the index prefix, with a DELETE event each, and counts the agents
// (deleted ones too: their tags changed) and the runs affected.
func (t *tagTx) removeFromCarriers(prefix []byte, key string) (agents, runs int, err error) {
	return records.RemoveKey(carriers(t.o, prefix), key, t.apply)
}

// DeleteKey removes a key from the registry, with its values, and the tag
// from every agent and run carrying it.
func (tg *Tags) DeleteKey(ctx context.Context, orgID, key, setBy string) (*client.TagKeyDeleteResponse, error) {
	var out *client.TagKeyDeleteResponse
	err := tg.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if _, err := getTagKey(o, key); err != nil {
			return err
		}
		t := &tagTx{s: tg.s, o: o, now: tg.s.clock(), setBy: setBy}
		agents, runs, err := t.removeFromCarriers(keyCarriersPrefix(key), key)
		if err != nil {
			return err
		}
		var values [][]byte
		prefix := append([]byte(key), 0)
		c := o.tagValues().Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			values = append(values, bytes.Clone(k))
		}
		for _, k := range values {
			if err := o.tagValues().Delete(k); err != nil {
				return err
			}
		}
		if err := o.tagKeys().Delete([]byte(key)); err != nil {
			return err
		}
		out = &client.TagKeyDeleteResponse{Key: key, RemovedFromWorkflowCount: agents, RemovedFromRunCount: runs, RemovedCount: agents + runs}
		return nil
	})
	return out, err
}

// Values returns the registered (key, value) pairs, ordered by key then
// value, only those of key when it is not empty, each with the number of
// agents (not deleted) carrying it.
func (tg *Tags) Values(ctx context.Context, orgID, key string) ([]*client.TagValue, error) {
	out := []*client.TagValue{}
	err := tg.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var prefix []byte
		if key != "" {
			prefix = append([]byte(key), 0)
		}
		c := o.tagValues().Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			rec := new(tagValueRecord)
			if err := json.Unmarshal(v, rec); err != nil {
				return fmt.Errorf("store: tag value %q: %w", k, err)
			}
			out = append(out, rec.result(o))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CreateValue registers a (key, value) pair, and its key when new, before
// any subject carries it; color "" means a random palette colour. A
// ConflictError (which matches ErrConflict) when the pair is registered
// already.
func (tg *Tags) CreateValue(ctx context.Context, orgID, key, value string, color client.TagColor) (*client.TagValue, error) {
	var out *client.TagValue
	err := tg.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if o.tagValues().Get(tagValueKey(key, value)) != nil {
			return &store.ConflictError{Record: store.RecordTagValue, ID: key, Value: value}
		}
		t := &tagTx{s: tg.s, o: o, now: tg.s.clock()}
		if err := t.registerKey(key); err != nil {
			return err
		}
		if err := t.registerValue(key, value, color); err != nil {
			return err
		}
		rec, err := getTagValue(o, key, value)
		if err != nil {
			return err
		}
		out = rec.result(o)
		return nil
	})
	return out, err
}

// RecolorValue changes the colour of a registered (key, value) pair.
func (tg *Tags) RecolorValue(ctx context.Context, orgID, key, value string, color client.TagColor) (*client.TagValue, error) {
	var out *client.TagValue
	err := tg.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getTagValue(o, key, value)
		if err != nil {
			return err
		}
		rec.Color = color
		if err := putJSON(o.tagValues(), tagValueKey(key, value), rec); err != nil {
			return err
		}
		out = rec.result(o)
		return nil
	})
	return out, err
}

// DeleteValue removes a (key, value) pair from the registry and the tag
// from every agent and run carrying that value.
func (tg *Tags) DeleteValue(ctx context.Context, orgID, key, value, setBy string) (*client.TagValueDeleteResponse, error) {
	var out *client.TagValueDeleteResponse
	err := tg.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if _, err := getTagValue(o, key, value); err != nil {
			return err
		}
		t := &tagTx{s: tg.s, o: o, now: tg.s.clock(), setBy: setBy}
		agents, runs, err := t.removeFromCarriers(pairCarriersPrefix(key, value), key)
		if err != nil {
			return err
		}
		if err := o.tagValues().Delete(tagValueKey(key, value)); err != nil {
			return err
		}
		out = &client.TagValueDeleteResponse{
			Key: key, Value: value,
			RemovedFromWorkflowCount: agents, RemovedFromRunCount: runs, RemovedCount: agents + runs,
		}
		return nil
	})
	return out, err
}

// RenameValue renames (key, value) to (key, newValue): the new pair takes
// the old one's colour and every carrier is re-tagged, with a SET event
// each. A ConflictError when newValue is registered for the key already.
func (tg *Tags) RenameValue(ctx context.Context, orgID, key, value, newValue, setBy string) (*client.TagValueRenameResponse, error) {
	var out *client.TagValueRenameResponse
	err := tg.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		old, err := getTagValue(o, key, value)
		if err != nil {
			return err
		}
		if o.tagValues().Get(tagValueKey(key, newValue)) != nil {
			return &store.ConflictError{Record: store.RecordTagValue, ID: key, Value: newValue}
		}
		t := &tagTx{s: tg.s, o: o, now: tg.s.clock(), setBy: setBy}
		if err := t.registerValue(key, newValue, old.Color); err != nil {
			return err
		}
		renamed := 0
		for _, id := range carriers(o, pairCarriersPrefix(key, value)) {
			subj := records.SubjectOf(id)
			if err := t.apply(subj, store.TagChange{Set: []store.TagSet{{Key: key, Value: newValue}}}); err != nil {
				return err
			}
			if subj.Kind == store.AgentSubject {
				renamed++
			}
		}
		if err := o.tagValues().Delete(tagValueKey(key, value)); err != nil {
			return err
		}
		out = &client.TagValueRenameResponse{Key: key, Value: newValue, Color: old.Color, RenamedWorkflowCount: renamed}
		return nil
	})
	return out, err
}

// agentsMatching returns the agents (by wpid) whose current tags satisfy
// q, read from the index: each term's carriers, intersected.
func agentsMatching(o *orgTx, q *tagquery.Query) map[string]bool {
	return subjectsMatching(o, q, store.AgentSubject)
}

// subjectsMatching returns the subjects of one kind (agents by wpid, or
// workflow runs by id) whose current tags satisfy q.
func subjectsMatching(o *orgTx, q *tagquery.Query, kind store.SubjectKind) map[string]bool {
	var result map[string]bool
	narrow := func(set map[string]bool) {
		if result == nil {
			result = set
			return
		}
		for id := range result {
			if !set[id] {
				delete(result, id)
			}
		}
	}
	collect := func(set map[string]bool, prefix []byte) {
		for _, id := range carriers(o, prefix) {
			if records.SubjectOf(id).Kind == kind {
				set[id] = true
			}
		}
	}
	for _, label := range q.Labels {
		set := map[string]bool{}
		collect(set, valueCarriersPrefix(label))
		narrow(set)
	}
	for _, key := range q.Groups {
		set := map[string]bool{}
		collect(set, keyCarriersPrefix(key))
		narrow(set)
	}
	for _, ex := range q.Exact {
		set := map[string]bool{}
		for _, v := range ex.Values {
			collect(set, pairCarriersPrefix(ex.Key, v))
		}
		narrow(set)
	}
	if result == nil {
		result = map[string]bool{}
	}
	return result
}
