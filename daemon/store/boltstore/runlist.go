package boltstore

// The run list (GET /v1/runs). Every run has an entry in its
// organization's run_order bucket, keyed by its creation time and id, so
// that walking the bucket backwards lists runs newest first; the entry's
// value is a compact summary of what the list shows and filters on
// (runSummary), rewritten by putRun in the same transaction as every write
// of the run. Listing reads those summaries straight from the file's pages,
// without decoding any run record or allocating for the entries it skips.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// runOrderKey is a run's key in run_order: its created_at as orderKey
// writes the agents' (unix nanoseconds, big-endian, sign bit flipped), then
// its id. created_at never changes, so neither does the key.
func runOrderKey(rec *store.RunRecord) []byte {
	return orderKey(rec.CreatedAt.UnixNano(), rec.ID)
}

// putRunSummary writes rec's run_order entry when it differs from the
// stored one. Most writes of a run (a step, a screenshot, the webhook's
// delivery) change nothing the list shows, and reading the entry costs a
// fraction of rewriting it, which makes bbolt copy its page into memory.
func putRunSummary(o *orgTx, rec *store.RunRecord) error {
	key, sum := runOrderKey(rec), encodeRunSummary(rec)
	order := o.runOrder()
	if bytes.Equal(order.Get(key), sum) {
		return nil
	}
	return order.Put(key, sum)
}

// runSummaryVersion is the first byte of a stored run summary. A new
// layout gets a new number and a migration that rewrites the entries.
const runSummaryVersion = 1

// Flags of a run summary (its second byte).
const (
	summaryStarted  = 1 << 0 // a started_at follows created_at
	summaryFinished = 1 << 1 // a finished_at follows
)

// encodeRunSummary makes rec's run_order value:
//
//	version (1 byte, runSummaryVersion)
//	status, run type: each an unsigned varint length and the bytes, first
//	    so that the filters on them read nothing else (readRunHead)
//	flags (1 byte: summaryStarted, summaryFinished)
//	created_at, then started_at and finished_at when flagged: unix
//	    microseconds, each a signed varint
//	run id, title, agent id (wpid), trigger type: each an unsigned
//	    varint length and the bytes
func encodeRunSummary(rec *store.RunRecord) []byte {
	b := make([]byte, 0, 40+len(rec.Status)+len(rec.Type)+len(rec.ID)+len(rec.Title)+len(rec.AgentID)+len(rec.Trigger))
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = append(b, runSummaryVersion)
	str(string(rec.Status))
	str(string(rec.Type))
	var flags byte
	if rec.StartedAt != nil {
		flags |= summaryStarted
	}
	if rec.FinishedAt != nil {
		flags |= summaryFinished
	}
	b = append(b, flags)
	b = binary.AppendVarint(b, rec.CreatedAt.UnixMicro())
	if rec.StartedAt != nil {
		b = binary.AppendVarint(b, rec.StartedAt.UnixMicro())
	}
	if rec.FinishedAt != nil {
		b = binary.AppendVarint(b, rec.FinishedAt.UnixMicro())
	}
	str(rec.ID)
	str(rec.Title)
	str(rec.AgentID)
	str(string(rec.Trigger))
	return b
}

// runSummary is a decoded run_order value. Its byte slices point into the
// bytes it was read from (bbolt's pages: valid only in the transaction).
type runSummary struct {
	status, typ                []byte
	created, started, finished int64 // unix microseconds
	hasStarted, hasFinished    bool
	id, title, agent, trigger  []byte
}

// readRunHead reads the status and the run type of a run_order value and
// returns a reader positioned after them, for readRunSummary; ok is false
// for bytes that are not a summary (another version, or damaged).
func readRunHead(v []byte) (status, typ []byte, rest summaryReader, ok bool) {
	if len(v) < 1 || v[0] != runSummaryVersion {
		return nil, nil, rest, false
	}
	rest = summaryReader{b: v[1:], ok: true}
	status, typ = rest.field(), rest.field()
	return status, typ, rest, rest.ok
}

// readRunSummary decodes a run_order value; ok is false for bytes that are
// not one.
func readRunSummary(v []byte) (s runSummary, ok bool) {
	status, typ, r, ok := readRunHead(v)
	if !ok {
		return s, false
	}
	return r.rest(status, typ)
}

// rest reads what follows the head of a summary.
func (r summaryReader) rest(status, typ []byte) (s runSummary, ok bool) {
	s.status, s.typ = status, typ
	flags := r.byte()
	s.created = r.varint()
	if s.hasStarted = flags&summaryStarted != 0; s.hasStarted {
		s.started = r.varint()
	}
	if s.hasFinished = flags&summaryFinished != 0; s.hasFinished {
		s.finished = r.varint()
	}
	s.id, s.title, s.agent, s.trigger = r.field(), r.field(), r.field(), r.field()
	return s, r.ok && len(r.b) == 0
}

// summaryReader reads a run summary's values in order; ok turns false at
// the first that does not read, and every read after it returns zero.
type summaryReader struct {
	b  []byte
	ok bool
}

func (r *summaryReader) fail() {
	r.ok, r.b = false, nil
}

func (r *summaryReader) byte() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *summaryReader) varint() int64 {
	x, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return x
}

// field reads a length and that many bytes. Lengths under 128, the usual
// case, are one byte and read without binary.Uvarint.
func (r *summaryReader) field() []byte {
	var n uint64
	w := 1
	if len(r.b) > 0 && r.b[0] < 0x80 {
		n = uint64(r.b[0])
	} else {
		n, w = binary.Uvarint(r.b)
	}
	if w <= 0 || n > uint64(len(r.b)-w) {
		r.fail()
		return nil
	}
	f := r.b[w : w+int(n)]
	r.b = r.b[w+int(n):]
	return f
}

// List returns a page of the organization's runs, newest first by
// created_at, as GET /v1/runs answers them. task_run_id is the run id: the
// daemon has no separate task-run rows. workflow_deleted says whether the
// agent of a workflow run has been deleted since (or is unknown).
//
// It walks run_order from the newest entry, filtering on the summaries
// without copying them; only the page's entries become list items.
func (r *Runs) List(ctx context.Context, orgID string, q store.RunQuery) ([]client.RunListItem, error) {
	out := []client.RunListItem{}
	err := r.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		deleted := map[string]bool{} // agent id -> deleted, looked up once per list
		return scanRuns(o, orgID, q, nil, func(sum *runSummary) error {
			out = append(out, sum.listItem(o, deleted))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Records returns a page of the organization's runs as records, newest
// first by created_at: the runs q keeps that match also keeps (nil keeps
// every one). The summaries filter first; only the runs they keep are
// decoded for match. GET /v1/agents/runs answers from it, with filters
// the summaries do not hold (parameter values, error codes).
func (r *Runs) Records(ctx context.Context, orgID string, q store.RunQuery, match func(*store.RunRecord) bool) ([]*store.RunRecord, error) {
	out := []*store.RunRecord{}
	err := r.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var last *store.RunRecord // the record match decoded, collected when kept
		keep := func(sum *runSummary) (bool, error) {
			v := o.runs().Get(sum.id)
			if v == nil {
				return false, fmt.Errorf("store: the run list of %s names run %s, which has no record", orgID, sum.id)
			}
			rec, err := decodeRun(sum.id, v)
			if err != nil {
				return false, err
			}
			last = rec
			return match == nil || match(rec), nil
		}
		return scanRuns(o, orgID, q, keep, func(*runSummary) error {
			out = append(out, last)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanRuns walks run_order from the newest entry and calls collect for
// each run of q's page: the runs q's filters keep and, when keep is not
// nil, keep keeps, after skipping those of the pages before. The summary
// passed to keep and collect is valid only during the call.
func scanRuns(o *orgTx, orgID string, q store.RunQuery, keep func(*runSummary) (bool, error), collect func(*runSummary) error) error {
	page, size := max(q.Page, 1), q.PageSize
	if size < 1 {
		size = 10
	}
	term := []byte(strings.ToLower(q.SearchKey))
	var tagged map[string]bool // the workflow runs the tag filter keeps
	if q.Tags != nil {
		if tagged = subjectsMatching(o, q.Tags, store.RunSubject); len(tagged) == 0 {
			return nil
		}
	}
	if page-1 > math.MaxInt/size {
		return nil // beyond any page that can exist
	}
	skip := (page - 1) * size
	var after, before int64 = math.MinInt64, math.MaxInt64
	if q.CreatedFrom != nil {
		after = q.CreatedFrom.UnixMicro()
	}
	if q.CreatedTo != nil {
		before = q.CreatedTo.UnixMicro()
	}
	c := o.runOrder().Cursor()
	damaged := func(k []byte) error {
		return fmt.Errorf("store: the run list entry %q of %s is damaged", k, orgID)
	}
	n := 0
	for k, v := c.Last(); k != nil; k, v = c.Prev() {
		status, typ, rest, ok := readRunHead(v)
		if !ok {
			return damaged(k)
		}
		if len(q.Statuses) > 0 && !containsBytes(q.Statuses, status) ||
			len(q.Types) > 0 && !containsBytes(q.Types, typ) {
			continue
		}
		sum, ok := rest.rest(status, typ)
		if !ok {
			return damaged(k)
		}
		if sum.created < after || sum.created > before {
			continue
		}
		if len(q.AgentIDs) > 0 && !containsBytes(q.AgentIDs, sum.agent) ||
			tagged != nil && !tagged[string(sum.id)] {
			continue
		}
		if len(term) > 0 && !bytes.Contains(bytes.ToLower(sum.id), term) &&
			!bytes.Contains(bytes.ToLower(sum.title), term) && !bytes.Contains(bytes.ToLower(sum.agent), term) {
			continue
		}
		if keep != nil {
			kept, err := keep(&sum)
			if err != nil {
				return err
			}
			if !kept {
				continue
			}
		}
		if skip > 0 {
			skip--
			continue
		}
		if err := collect(&sum); err != nil {
			return err
		}
		if n++; n == size {
			return nil
		}
	}
	return nil
}

func containsBytes[S ~string](set []S, b []byte) bool {
	for _, s := range set {
		if string(s) == string(b) {
			return true
		}
	}
	return false
}

// listItem copies the summary out as a list item; deleted caches whether
// agents are deleted.
func (s *runSummary) listItem(o *orgTx, deleted map[string]bool) client.RunListItem {
	micro := func(us int64) client.Time { return client.Time{Time: time.UnixMicro(us).UTC()} }
	it := client.RunListItem{
		TaskRunID: string(s.id), RunID: string(s.id),
		RunType: client.RunType(s.typ), Status: client.RunStatus(s.status),
		CreatedAt: micro(s.created),
	}
	if s.hasStarted {
		t := micro(s.started)
		it.StartedAt = &t
	}
	if s.hasFinished {
		t := micro(s.finished)
		it.FinishedAt = &t
	}
	if len(s.title) > 0 {
		it.Title = client.Ptr(string(s.title))
	}
	if len(s.trigger) > 0 {
		it.TriggerType = client.Ptr(client.RunTriggerType(s.trigger))
	}
	if len(s.agent) > 0 {
		wpid := string(s.agent)
		it.WorkflowPermanentID = &wpid
		gone, seen := deleted[wpid]
		if !seen {
			gone = !liveAgent(o, wpid)
			deleted[wpid] = gone
		}
		it.WorkflowDeleted = gone
	}
	return it
}

// indexRuns writes the run_order entry of every run of the organization
// under root (migration 5).
func indexRuns(root *bolt.Bucket) error {
	order := root.Bucket(bucketRunOrder)
	return root.Bucket(bucketRuns).ForEach(func(k, v []byte) error {
		rec, err := decodeRun(k, v)
		if err != nil {
			return err
		}
		return order.Put(runOrderKey(rec), encodeRunSummary(rec))
	})
}
