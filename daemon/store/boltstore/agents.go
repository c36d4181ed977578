package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
	"github.com/abctl/abctl/internal/jsonenc"
)

// Agents are stored as version rows (client.Agent, one per version) under
// agents/<wpid> 0x00 <version>. Each agent also has a summary, derived from
// its latest row, and, while it is not deleted, an entry in the order
// index; putSummary keeps the three (and the folder counters) in step.
//
// Deletion is per agent: Agents.Delete sets deleted_at on every row, and an
// update of a deleted agent clears it on every row, so all rows of an agent
// always agree on whether it is deleted.

// Agents are the agents of the organizations, every version of each. Get
// it with Store.Agents.
type Agents struct{ s *Store }

var (
	agentNotFound        = records.AgentNotFound
	agentVersionNotFound = records.AgentVersionNotFound
)

// agentKey is the key of one version row: wpid, 0x00, version (uint32 BE).
func agentKey(wpid string, version int) []byte {
	k := make([]byte, 0, len(wpid)+5)
	k = append(k, wpid...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint32(k, uint32(version))
}

// orderKey is the key of the order index: created_at in unix nanoseconds,
// 8 bytes big-endian with the sign bit flipped (so that times before 1970
// still sort first), then the wpid.
func orderKey(createdNanos int64, wpid string) []byte {
	k := make([]byte, 8, 8+len(wpid))
	binary.BigEndian.PutUint64(k, uint64(createdNanos)^(1<<63))
	return append(k, wpid...)
}

// agentSummary is the summary both backends derive from an agent's latest
// version row (records.AgentSummary); this store keeps it as JSON under
// summaries/<wpid>, written by encodeSummary.
type agentSummary = records.AgentSummary

// Shared rules (records), under the names this package's tests use.
var (
	summaryOf   = records.SummaryOf
	defaultText = records.DefaultText
	decodeAgent = records.DecodeAgent
)

// encodeSummary writes s without HTML escaping, so that every search text
// without quotes, backslashes or control characters appears verbatim in
// the encoding (the list's pre-filter relies on it).
func encodeSummary(s *agentSummary) ([]byte, error) { return jsonenc.Marshal(s) }

func decodeSummary(raw []byte) (*agentSummary, error) {
	s := new(agentSummary)
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("store: agent summary: %w", err)
	}
	return s, nil
}

// summaryHead is the leading part of an encoded summary. Its slices point
// into the encoding.
type summaryHead struct {
	folder, status     []byte
	savedTask, deleted bool
}

// readHead reads the folder, status, saved-task and deleted flags of an
// encoded summary without decoding it. ok is false when the encoding does not start
// the way encodeSummary writes it (an escaped character in a string, say);
// the caller then decodes it in full.
func readHead(raw []byte) (h summaryHead, ok bool) {
	str := func(prefix string) ([]byte, bool) {
		if !bytes.HasPrefix(raw, []byte(prefix)) {
			return nil, false
		}
		raw = raw[len(prefix):]
		end := bytes.IndexByte(raw, '"')
		if end < 0 || bytes.IndexByte(raw[:end], '\\') >= 0 {
			return nil, false
		}
		v := raw[:end]
		raw = raw[end+1:]
		return v, true
	}
	var okF, okS bool
	if h.folder, okF = str(`{"f":"`); !okF {
		return h, false
	}
	if h.status, okS = str(`,"s":"`); !okS {
		return h, false
	}
	flag := func(prefix string) (bool, bool) {
		switch {
		case bytes.HasPrefix(raw, []byte(prefix+"true")):
			raw = raw[len(prefix)+4:]
			return true, true
		case bytes.HasPrefix(raw, []byte(prefix+"false")):
			raw = raw[len(prefix)+5:]
			return false, true
		}
		return false, false
	}
	var okT, okD bool
	if h.savedTask, okT = flag(`,"t":`); !okT {
		return h, false
	}
	if h.deleted, okD = flag(`,"d":`); !okD {
		return h, false
	}
	return h, true
}

// liveAgent reports whether wpid is an agent that is not deleted, from its
// summary (its head when it has one, which tells without decoding).
func liveAgent(o *orgTx, wpid string) bool {
	if !validID(wpid) {
		return false
	}
	v := o.summaries().Get([]byte(wpid))
	if v == nil {
		return false
	}
	if h, ok := readHead(v); ok {
		return !h.deleted
	}
	sum, err := decodeSummary(v)
	return err == nil && !sum.Deleted
}

func getSummary(o *orgTx, wpid string) (*agentSummary, error) {
	if !validID(wpid) {
		return nil, nil
	}
	v := o.summaries().Get([]byte(wpid))
	if v == nil {
		return nil, nil
	}
	return decodeSummary(v)
}

// putSummary records that the agent's latest row now reads as next, where
// prev is what it read as before (nil for a new agent): it maintains the
// order index and the folder counters, then stores the summary.
func putSummary(o *orgTx, prev, next *agentSummary) error {
	data, err := encodeSummary(next)
	if err != nil {
		return fmt.Errorf("store: agent %s summary: %w", next.WPID, err)
	}
	return putEncodedSummary(o, prev, next, data)
}

// putEncodedSummary is putSummary with next already encoded (data), so
// that a create encodes it before its write transaction.
func putEncodedSummary(o *orgTx, prev, next *agentSummary, data []byte) error {
	if prev != nil && !prev.Deleted {
		if err := o.order().Delete(orderKey(prev.Created, prev.WPID)); err != nil {
			return err
		}
		if err := addFolderCount(o, prev.Folder, -1); err != nil {
			return err
		}
	}
	if !next.Deleted {
		// The order entry carries a copy of the summary, so that listing
		// reads both in one cursor step.
		if err := o.order().Put(orderKey(next.Created, next.WPID), data); err != nil {
			return err
		}
		if err := addFolderCount(o, next.Folder, +1); err != nil {
			return err
		}
	}
	return o.summaries().Put([]byte(next.WPID), data)
}

func addFolderCount(o *orgTx, folderID string, delta int64) error {
	if folderID == "" {
		return nil
	}
	k := []byte(folderID)
	n := int64(folderCount(o, folderID)) + delta
	if n <= 0 {
		return o.counts().Delete(k)
	}
	return o.counts().Put(k, u64(uint64(n)))
}

func folderCount(o *orgTx, folderID string) int {
	v := o.counts().Get([]byte(folderID))
	if len(v) != 8 {
		return 0
	}
	return int(binary.BigEndian.Uint64(v))
}

func putAgent(o *orgTx, a *client.Agent) error {
	row, err := records.EncodeRow(a)
	if err != nil {
		return err
	}
	return o.agents().Put(agentKey(a.WorkflowPermanentID, a.Version), row)
}

// getRow returns one version row, nil if there is none.
func getRow(o *orgTx, wpid string, version int) (*client.Agent, error) {
	if !validID(wpid) || version <= 0 || int64(version) > math.MaxUint32 {
		return nil, nil
	}
	v := o.agents().Get(agentKey(wpid, version))
	if v == nil {
		return nil, nil
	}
	return decodeAgent(v)
}

// latestRowBytes returns the encoded row of the highest version, nil if
// there is none. The bytes are bbolt's: valid only in the transaction.
func latestRowBytes(o *orgTx, wpid string) []byte {
	if !validID(wpid) {
		return nil
	}
	c := o.agents().Cursor()
	// Every key of the wpid is wpid 0x00 <4 bytes>: the last one sits
	// just before wpid 0x01.
	c.Seek(append([]byte(wpid), 1))
	k, v := c.Prev()
	if k == nil || len(k) != len(wpid)+5 || !bytes.HasPrefix(k, []byte(wpid)) || k[len(wpid)] != 0 {
		return nil
	}
	return v
}

// agentRows returns every version row of an agent, oldest first. Callers
// that rewrite rows do so after the scan: a bucket must not change under
// an open cursor.
func agentRows(o *orgTx, wpid string) ([]*client.Agent, error) {
	if !validID(wpid) {
		return nil, nil
	}
	var rows []*client.Agent
	prefix := append([]byte(wpid), 0)
	c := o.agents().Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != len(prefix)+4 {
			continue
		}
		a, err := decodeAgent(v)
		if err != nil {
			return nil, err
		}
		rows = append(rows, a)
	}
	return rows, nil
}

func (a *Agents) stampVersion(ag *client.Agent, orgID, wpid string, version int) {
	records.StampVersion(ag, orgID, wpid, version, a.s.ids, a.s.clock)
}

// Create creates version 1 of a new agent from def, which it stores as
// given (def is not modified): the daemon gives the definition in the
// response shape of the hosted service, with its parameter records, made
// by package daemon/definition for the version's workflow_id and
// created_at, which it sets on def. The store assigns
// workflow_permanent_id, organization_id, version, modified_at (the
// created_at) and agent_id, and workflow_id and created_at when def has
// none. A missing status becomes published. folder_id is kept as given,
// without checking that the folder exists.
//
// With an idempotency key the wpid is agentid.FromKey(orgID, key);
// if version 1 of it exists, even soft-deleted, Create returns that row as
// it is now with created false and writes nothing. The check and the
// create run in one write transaction, so concurrent creates with the same
// key make one agent.
func (a *Agents) Create(ctx context.Context, orgID string, def *client.Agent, idempotencyKey string) (agent *client.Agent, created bool, err error) {
	raw, created, err := a.CreateJSON(ctx, orgID, def, idempotencyKey)
	if err != nil {
		return nil, false, err
	}
	agent, err = decodeAgent(raw)
	return agent, created, err
}

// CreateJSON is Create returning the row as the API answers it. The row
// is built and encoded before the write transaction, which then only
// checks the idempotency key and stores bytes: bbolt serialises writers,
// so the less each holds the lock, the more creates per second.
func (a *Agents) CreateJSON(ctx context.Context, orgID string, def *client.Agent, idempotencyKey string) (json.RawMessage, bool, error) {
	p, err := a.prepare(orgID, def, idempotencyKey)
	if err != nil {
		return nil, false, err
	}
	var out json.RawMessage
	created := false
	err = a.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		out, created, err = p.insert(o)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return out, created, nil
}

// preparedAgent is version 1 of a new agent, stamped and encoded with its
// summary, ready for a write transaction: what only depends on the agent
// is done before, so that the transaction (which holds the store's one
// writer, and runs in a group commit) only looks up and stores bytes.
type preparedAgent struct {
	agent      *client.Agent
	row        []byte
	summary    *agentSummary
	sumData    []byte // summary, encoded
	idempotent bool
}

func (a *Agents) prepare(orgID string, def *client.Agent, idempotencyKey string) (*preparedAgent, error) {
	ag, row, sum, err := records.NewAgent(orgID, def, idempotencyKey, a.s.ids, a.s.clock)
	if err != nil {
		return nil, err
	}
	sumData, err := encodeSummary(sum)
	if err != nil {
		return nil, fmt.Errorf("store: agent %s summary: %w", ag.WorkflowPermanentID, err)
	}
	return &preparedAgent{agent: ag, row: row, summary: sum, sumData: sumData, idempotent: idempotencyKey != ""}, nil
}

// insert stores the prepared agent, or, for an idempotent create whose
// version 1 exists, returns that row as it is now and writes nothing.
func (p *preparedAgent) insert(o *orgTx) (json.RawMessage, bool, error) {
	wpid := p.agent.WorkflowPermanentID
	if p.idempotent {
		if v := o.agents().Get(agentKey(wpid, 1)); v != nil {
			return bytes.Clone(v), false, nil
		}
	}
	prev, err := getSummary(o, wpid)
	if err != nil {
		return nil, false, err
	}
	if err := o.agents().Put(agentKey(wpid, 1), p.row); err != nil {
		return nil, false, err
	}
	if err := putEncodedSummary(o, prev, p.summary, p.sumData); err != nil {
		return nil, false, err
	}
	return p.row, true, nil
}

// Update adds a version to an agent: version latest+1 (deleted versions
// count), the folder_id of the previous version (def.FolderID is ignored)
// and the other fields of def, stored as given as by Create, with its
// workflow_id and created_at when it has them. An update of a deleted agent
// brings it back: deleted_at is cleared on all its versions. ErrNotFound if
// the wpid never existed.
func (a *Agents) Update(ctx context.Context, orgID, wpid string, def *client.Agent) (*client.Agent, error) {
	if def == nil {
		return nil, fmt.Errorf("store: Agents.Update: nil definition")
	}
	ag := records.CopyAgent(def)
	err := a.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		prevSum, err := getSummary(o, wpid)
		if err != nil {
			return err
		}
		if prevSum == nil {
			return agentNotFound(wpid)
		}
		if prevSum.Deleted {
			rows, err := agentRows(o, wpid)
			if err != nil {
				return err
			}
			for _, row := range rows {
				row.DeletedAt = nil
				if err := putAgent(o, row); err != nil {
					return err
				}
			}
		}
		a.stampVersion(ag, orgID, wpid, prevSum.Version+1)
		ag.FolderID = nil // inherited from the previous version, which the summary describes
		if prevSum.Folder != "" {
			folder := prevSum.Folder
			ag.FolderID = &folder
		}
		if err := putAgent(o, ag); err != nil {
			return err
		}
		return putSummary(o, prevSum, summaryOf(ag))
	})
	if err != nil {
		return nil, err
	}
	return ag, nil
}

// Get returns one version of an agent; version 0 means the latest. A
// deleted agent, an unknown wpid or version is ErrNotFound.
func (a *Agents) Get(ctx context.Context, orgID, wpid string, version int) (*client.Agent, error) {
	raw, err := a.GetJSON(ctx, orgID, wpid, version)
	if err != nil {
		return nil, err
	}
	return decodeAgent(raw)
}

// GetJSON is Get returning the row as the API answers it, its stored
// bytes, without decoding them.
func (a *Agents) GetJSON(ctx context.Context, orgID, wpid string, version int) (json.RawMessage, error) {
	return a.AppendJSON(ctx, nil, orgID, wpid, version)
}

// AppendJSON is GetJSON appending the row to dst, so that a caller can
// reuse its buffers; on error dst is returned as it was.
func (a *Agents) AppendJSON(ctx context.Context, dst []byte, orgID, wpid string, version int) ([]byte, error) {
	out := dst
	err := a.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		// Made only when needed: formatting it cost a read a tenth of its
		// time.
		notFound := func() error {
			if version != 0 {
				return agentVersionNotFound(wpid, version)
			}
			return agentNotFound(wpid)
		}
		// All rows of an agent agree with its summary on deletion, which
		// the summary's head tells without decoding it.
		var raw []byte
		if validID(wpid) {
			raw = o.summaries().Get([]byte(wpid))
		}
		if raw == nil {
			return notFound()
		}
		h, ok := readHead(raw)
		if !ok {
			sum, err := decodeSummary(raw)
			if err != nil {
				return err
			}
			h.deleted = sum.Deleted
		}
		if h.deleted {
			return notFound()
		}
		var v []byte
		if version == 0 {
			v = latestRowBytes(o, wpid)
		} else if version > 0 && int64(version) <= math.MaxUint32 {
			v = o.agents().Get(agentKey(wpid, version))
		}
		if v == nil {
			return notFound()
		}
		out = append(out, v...)
		return nil
	})
	if err != nil {
		return dst, err
	}
	return out, nil
}

// Versions returns every version of an agent, oldest first; ErrNotFound
// for an unknown or deleted agent.
func (a *Agents) Versions(ctx context.Context, orgID, wpid string) ([]*client.Agent, error) {
	var out []*client.Agent
	err := a.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		out, err = agentRows(o, wpid)
		if err != nil {
			return err
		}
		if len(out) == 0 || out[len(out)-1].DeletedAt != nil {
			out = nil
			return agentNotFound(wpid)
		}
		return nil
	})
	return out, err
}

// Delete soft-deletes an agent: deleted_at is set on all its versions. An
// unknown or already deleted wpid is not an error.
func (a *Agents) Delete(ctx context.Context, orgID, wpid string) error {
	return a.s.update(ctx, func(tx *bolt.Tx) error {
		o, err := openOrg(tx, orgID)
		if err != nil {
			return err
		}
		prev, err := getSummary(o, wpid)
		if err != nil || prev == nil || prev.Deleted {
			return err
		}
		return deleteAgentTx(o, prev, a.s.clock())
	})
}

func deleteAgentTx(o *orgTx, prev *agentSummary, now client.Time) error {
	rows, err := agentRows(o, prev.WPID)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("store: agent %s has a summary but no versions", prev.WPID)
	}
	for _, row := range rows {
		row.DeletedAt = &now
		if err := putAgent(o, row); err != nil {
			return err
		}
	}
	return putSummary(o, prev, summaryOf(rows[len(rows)-1]))
}

// SetFolder puts an agent in a folder ("" takes it out of any). It
// changes the latest version row in place (no new version) and bumps its
// modified_at. A NotFoundError for an unknown or deleted agent, or for an
// unknown or deleted folder (Record says which).
func (a *Agents) SetFolder(ctx context.Context, orgID, wpid, folderID string) (*client.Agent, error) {
	var ag *client.Agent
	err := a.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		prev, err := getSummary(o, wpid)
		if err != nil {
			return err
		}
		if prev == nil || prev.Deleted {
			return agentNotFound(wpid)
		}
		if folderID != "" {
			if _, err := getFolder(o, folderID); err != nil {
				return err
			}
		}
		ag, err = getRow(o, wpid, prev.Version)
		if err != nil {
			return err
		}
		if ag == nil {
			return fmt.Errorf("store: agent %s: version %d missing", wpid, prev.Version)
		}
		if folderID == "" {
			ag.FolderID = nil
		} else {
			ag.FolderID = &folderID
		}
		ag.ModifiedAt = a.s.clock()
		if err := putAgent(o, ag); err != nil {
			return err
		}
		return putSummary(o, prev, summaryOf(ag))
	})
	if err != nil {
		return nil, err
	}
	return ag, nil
}

// List returns a page of the latest versions of the organization's
// agents that are not deleted, newest first by that version's created_at
// (an update moves an agent to the top).
//
// It walks the order index from the newest entry and filters on the
// agents' summaries, reading most of them without decoding them; only the
// agents of the page are decoded.
func (a *Agents) List(ctx context.Context, orgID string, q store.AgentQuery) ([]*client.Agent, error) {
	rows, err := a.ListJSON(ctx, orgID, q)
	if err != nil {
		return nil, err
	}
	return records.DecodeAgents(rows)
}

// ListJSON is List returning the rows as the API answers them.
func (a *Agents) ListJSON(ctx context.Context, orgID string, q store.AgentQuery) ([]json.RawMessage, error) {
	page, size := q.Page, q.PageSize
	if page < 1 {
		page = 1
	}
	if size < 1 {
		size = 10
	}
	statuses := q.Statuses
	if len(statuses) == 0 {
		statuses = []client.AgentStatus{client.AgentStatusPublished, client.AgentStatusDraft}
	}
	term := strings.ToLower(q.SearchKey)
	// The pre-filter skips a summary whose encoding does not contain the
	// term. That is sound when the term is written verbatim by the JSON
	// encoder: valid UTF-8 without quotes, backslashes, control characters
	// or the two line separators Go escapes.
	prefilter := term != "" && utf8.ValidString(term) &&
		!strings.ContainsFunc(term, func(r rune) bool {
			return r < 0x20 || r == '"' || r == '\\' || r == '\u2028' || r == '\u2029'
		})
	like := newLikeTerm(q.SearchKey)
	var literals [][]byte // what a matching summary's encoding must contain
	for _, l := range like.literals {
		literals = append(literals, []byte(l))
	}
	containsLiterals := func(raw []byte) bool {
		for _, l := range literals {
			if !bytes.Contains(raw, l) {
				return false
			}
		}
		return true
	}

	out := []json.RawMessage{}
	err := a.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		var tagged map[string]bool // agents the tag filter keeps
		if q.Tags != nil {
			if tagged = agentsMatching(o, q.Tags); len(tagged) == 0 {
				return nil
			}
		}
		// Folders whose title matches the term, looked up once.
		var folderHit map[string]bool
		if term != "" {
			folderHit, err = matchingFolders(o, like)
			if err != nil {
				return err
			}
		}
		if page-1 > math.MaxInt/size {
			return nil // beyond any page that can exist
		}
		skip := (page - 1) * size
		var wpids [][]byte
		c := o.order().Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			if len(k) <= 8 {
				continue
			}
			wpid := k[8:]
			raw := v // the summary, copied into the order entry by putSummary
			if len(raw) == 0 {
				raw = o.summaries().Get(wpid) // entries written before the copy existed
			}
			if raw == nil {
				return fmt.Errorf("store: agent %s is in the order index without a summary", wpid)
			}
			var sum *agentSummary // decoded when needed
			decode := func() (err error) {
				if sum == nil {
					sum, err = decodeSummary(raw)
				}
				return err
			}
			h, ok := readHead(raw)
			if !ok {
				if err := decode(); err != nil {
					return err
				}
				h = summaryHead{folder: []byte(sum.Folder), status: []byte(sum.Status), savedTask: sum.SavedTask}
			}
			if q.FolderID != "" && string(h.folder) != q.FolderID {
				continue
			}
			if q.OnlySavedTasks && !h.savedTask || q.OnlyWorkflows && h.savedTask {
				continue
			}
			if !hasStatus(statuses, h.status) {
				continue
			}
			if term != "" {
				if !folderHit[string(h.folder)] {
					if prefilter && !containsLiterals(raw) {
						continue
					}
					if err := decode(); err != nil {
						return err
					}
					if !summaryMatches(sum, like) {
						continue
					}
				}
			}
			if tagged != nil && !tagged[string(wpid)] {
				continue
			}
			if q.Filter != nil && !q.Filter(string(wpid)) {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			wpids = append(wpids, wpid)
			if len(wpids) == size {
				break
			}
		}
		for _, wpid := range wpids {
			v := latestRowBytes(o, string(wpid))
			if v == nil {
				return fmt.Errorf("store: agent %s is in the order index without versions", wpid)
			}
			out = append(out, bytes.Clone(v))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// summaryMatches reports whether the summary's own texts (not the folder title)
// match the term: the wpid as a plain substring (the one field the hosted
// service escapes), the others with LIKE wildcards.
func summaryMatches(s *agentSummary, t likeTerm) bool {
	if strings.Contains(strings.ToLower(s.WPID), t.term) {
		return true
	}
	for _, text := range s.Search {
		if t.match(text) {
			return true
		}
	}
	return false
}

func hasStatus(statuses []client.AgentStatus, status []byte) bool {
	for _, s := range statuses {
		if string(s) == string(status) {
			return true
		}
	}
	return false
}
