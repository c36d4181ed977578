package pgstore

// The run list (GET /v1/runs). A run's row carries, beside its record, the
// columns the list filters on and shows (status, type, trigger, title,
// agent id, created, started and finished times, the lowercased search
// text), rewritten with the record at every write; the list filters and
// pages in SQL along the index on (org_id, created_at DESC, id DESC), and
// decodes no record.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// runFilter is the WHERE clause and arguments of a run query, without the
// page.
type runFilter struct {
	where []string
	args  []any
	none  bool // no run can match: the answer is empty
}

func (f *runFilter) add(cond string, arg any) {
	f.args = append(f.args, arg)
	f.where = append(f.where, strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(f.args))))
}

// textSet returns the values of set that a text column can hold; a value
// that is not valid UTF-8 or holds a NUL matches no stored value.
func textSet[S ~string](set []S) []string {
	out := make([]string, 0, len(set))
	for _, v := range set {
		if utf8.ValidString(string(v)) && !strings.ContainsRune(string(v), 0) {
			out = append(out, string(v))
		}
	}
	return out
}

// runFilterOf turns q's filters into SQL, reading the runs q's tags keep.
func (s *Store) runFilterOf(ctx context.Context, tx pgx.Tx, orgID string, q store.RunQuery) (*runFilter, error) {
	f := &runFilter{}
	f.add("org_id = $?", orgID)
	if len(q.Statuses) > 0 {
		set := textSet(q.Statuses)
		f.none = f.none || len(set) == 0
		f.add("status = ANY($?::text[])", set)
	}
	if len(q.Types) > 0 {
		set := textSet(q.Types)
		f.none = f.none || len(set) == 0
		f.add("type = ANY($?::text[])", set)
	}
	if q.CreatedFrom != nil {
		// Before PostgreSQL's first time, which no run can be: no bound.
		if us := q.CreatedFrom.UnixMicro(); us >= pgMinMicro {
			f.add("created_at >= $?", time.UnixMicro(us))
		}
	}
	if q.CreatedTo != nil {
		if us := q.CreatedTo.UnixMicro(); us < pgMinMicro {
			f.none = true
		} else {
			f.add("created_at <= $?", time.UnixMicro(us))
		}
	}
	if len(q.AgentIDs) > 0 {
		agents := make([][]byte, len(q.AgentIDs))
		for i, a := range q.AgentIDs {
			agents[i] = []byte(a)
		}
		f.add("agent_id = ANY($?::bytea[])", agents)
	}
	if term := strings.ToLower(q.SearchKey); term != "" {
		f.add("EXISTS (SELECT 1 FROM unnest(search) AS field WHERE position($?::bytea IN field) > 0)", []byte(term))
	}
	if q.Tags != nil && !f.none {
		tagged, err := s.subjectsMatching(ctx, tx, orgID, q.Tags, store.RunSubject)
		if err != nil {
			return nil, err
		}
		ids := make([]string, 0, len(tagged))
		for id, ok := range tagged {
			if ok {
				ids = append(ids, id)
			}
		}
		f.none = f.none || len(ids) == 0
		f.add("id = ANY($?::text[])", ids)
	}
	return f, nil
}

// pgMinMicro is PostgreSQL's earliest timestamptz (4714-11-24 BC) in Unix
// microseconds.
const pgMinMicro = -210866803200000000

// runPage returns the OFFSET and LIMIT of q's page; ok is false for a page
// beyond any that can exist.
func runPage(q store.RunQuery) (offset, limit int, ok bool) {
	page, size := max(q.Page, 1), q.PageSize
	if size < 1 {
		size = 10
	}
	if page-1 > math.MaxInt/size {
		return 0, 0, false
	}
	return (page - 1) * size, size, true
}

// List returns a page of the organization's runs, newest first by
// created_at, as GET /v1/runs answers them. task_run_id is the run id: the
// daemon has no separate task-run rows. workflow_deleted says whether the
// agent of a workflow run has been deleted since (or is unknown).
func (r *Runs) List(ctx context.Context, orgID string, q store.RunQuery) ([]client.RunListItem, error) {
	var out []client.RunListItem
	err := r.s.readRuns(ctx, func(tx pgx.Tx) error {
		out = []client.RunListItem{}
		if err := checkRunsOrg(ctx, tx, orgID); err != nil {
			return err
		}
		f, err := r.s.runFilterOf(ctx, tx, orgID, q)
		if err != nil {
			return err
		}
		offset, limit, ok := runPage(q)
		if f.none || !ok {
			return nil
		}
		rows, err := tx.Query(ctx, `
			SELECT id, type, status, created_at, started_at, finished_at, title, trigger, agent_id
			FROM runs WHERE `+strings.Join(f.where, " AND ")+`
			ORDER BY created_at DESC, id DESC
			OFFSET `+strconv.Itoa(offset)+` LIMIT `+strconv.Itoa(limit), f.args...)
		if err != nil {
			return fmt.Errorf("store: list the runs of %s: %w", orgID, err)
		}
		var wpids []string
		for rows.Next() {
			var it client.RunListItem
			var created time.Time
			var started, finished *time.Time
			var title, agent []byte
			var trigger string
			if err := rows.Scan(&it.RunID, &it.RunType, &it.Status, &created, &started, &finished, &title, &trigger, &agent); err != nil {
				rows.Close()
				return fmt.Errorf("store: list the runs of %s: %w", orgID, err)
			}
			it.TaskRunID = it.RunID
			it.CreatedAt = utcMicro(created)
			if started != nil {
				t := utcMicro(*started)
				it.StartedAt = &t
			}
			if finished != nil {
				t := utcMicro(*finished)
				it.FinishedAt = &t
			}
			if len(title) > 0 {
				it.Title = client.Ptr(string(title))
			}
			if trigger != "" {
				it.TriggerType = client.Ptr(client.RunTriggerType(trigger))
			}
			if len(agent) > 0 {
				wpid := string(agent)
				it.WorkflowPermanentID = &wpid
				if !slices.Contains(wpids, wpid) {
					wpids = append(wpids, wpid)
				}
			}
			out = append(out, it)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("store: list the runs of %s: %w", orgID, err)
		}
		return r.markDeleted(ctx, tx, orgID, wpids, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// markDeleted sets the workflow_deleted of the items that name an agent:
// true when the agent is deleted or unknown. An agent id that cannot be a
// stored one is unknown.
func (r *Runs) markDeleted(ctx context.Context, tx pgx.Tx, orgID string, wpids []string, items []client.RunListItem) error {
	if len(wpids) == 0 {
		return nil
	}
	ask := make([]string, 0, len(wpids))
	for _, w := range wpids {
		if validKey(w) {
			ask = append(ask, w)
		}
	}
	deleted := map[string]bool{}
	if len(ask) > 0 {
		var err error
		if deleted, err = r.s.agentsDeleted(ctx, tx, orgID, ask); err != nil {
			return err
		}
	}
	for i := range items {
		if w := items[i].WorkflowPermanentID; w != nil {
			gone, known := deleted[*w]
			items[i].WorkflowDeleted = gone || !known
		}
	}
	return nil
}

// utcMicro is a time read from the database as the bbolt store's list
// answers it: microseconds, in UTC.
func utcMicro(t time.Time) client.Time {
	return client.Time{Time: time.UnixMicro(t.UnixMicro()).UTC()}
}

// recordsBatch is how many rows Records fetches at a time when match
// decides which it keeps.
const recordsBatch = 100

// Records returns a page of the organization's runs as records, newest
// first by created_at: the runs q keeps that match also keeps (nil keeps
// every one). The columns filter first; only the runs they keep are
// decoded for match. GET /v1/agents/runs answers from it, with filters
// the columns do not hold (parameter values, error codes).
func (r *Runs) Records(ctx context.Context, orgID string, q store.RunQuery, match func(*store.RunRecord) bool) ([]*store.RunRecord, error) {
	var out []*store.RunRecord
	err := r.s.readRuns(ctx, func(tx pgx.Tx) error {
		out = []*store.RunRecord{}
		if err := checkRunsOrg(ctx, tx, orgID); err != nil {
			return err
		}
		f, err := r.s.runFilterOf(ctx, tx, orgID, q)
		if err != nil {
			return err
		}
		offset, limit, ok := runPage(q)
		if f.none || !ok {
			return nil
		}
		sql := `SELECT id, record FROM runs WHERE ` + strings.Join(f.where, " AND ") + ` ORDER BY created_at DESC, id DESC`
		skip := offset
		// take decodes one row and keeps it when match does and the pages
		// before are skipped; full says the page is.
		take := func(rows pgx.Rows) (full bool, err error) {
			var id string
			var data []byte
			if err := rows.Scan(&id, &data); err != nil {
				return false, fmt.Errorf("store: list the runs of %s: %w", orgID, err)
			}
			rec, err := decodeRun(id, data)
			if err != nil {
				return false, err
			}
			if match != nil && !match(rec) {
				return false, nil
			}
			if skip > 0 {
				skip--
				return false, nil
			}
			out = append(out, rec)
			return len(out) == limit, nil
		}
		if match == nil {
			// The database pages.
			skip = 0
			rows, err := tx.Query(ctx, sql+` OFFSET `+strconv.Itoa(offset)+` LIMIT `+strconv.Itoa(limit), f.args...)
			if err != nil {
				return fmt.Errorf("store: list the runs of %s: %w", orgID, err)
			}
			defer rows.Close()
			for rows.Next() {
				if _, err := take(rows); err != nil {
					return err
				}
			}
			if err := rows.Err(); err != nil {
				return fmt.Errorf("store: list the runs of %s: %w", orgID, err)
			}
			return nil
		}
		// match decides in Go: the rows come through a cursor, a batch at a
		// time, until the page is full or the runs end, so that the
		// database sends no more than was read.
		if _, err := tx.Exec(ctx, `DECLARE run_records NO SCROLL CURSOR FOR `+sql, f.args...); err != nil {
			return fmt.Errorf("store: list the runs of %s: %w", orgID, err)
		}
		for {
			rows, err := tx.Query(ctx, `FETCH `+strconv.Itoa(recordsBatch)+` FROM run_records`)
			if err != nil {
				return fmt.Errorf("store: list the runs of %s: %w", orgID, err)
			}
			n, full := 0, false
			for !full && rows.Next() {
				n++
				if full, err = take(rows); err != nil {
					rows.Close()
					return err
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("store: list the runs of %s: %w", orgID, err)
			}
			if full || n < recordsBatch {
				return nil
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
