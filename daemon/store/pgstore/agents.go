package pgstore

// Agents are stored as version rows (agent_versions, one client.Agent JSON
// per version) and one row per agent (agents) that listing filters and
// orders on, derived from its latest version row; putSummary keeps it in
// step with the rows, in the transaction that changes them. A folder's
// agent count is counted from agents.
//
// Deletion is per agent: Agents.Delete sets deleted_at on every row, and an
// update of a deleted agent clears it on every row, so all rows of an agent
// always agree on whether it is deleted.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// Agents are the agents of the organizations, every version of each. Get
// it with Store.Agents.
type Agents struct{ s *Store }

// Agents returns the store's agents.
func (s *Store) Agents() store.Agents { return &Agents{s} }

// needOrg returns a NotFoundError unless the organization exists.
func needOrg(ctx context.Context, q querier, orgID string) error {
	if !validKey(orgID) {
		return &store.NotFoundError{Record: store.RecordOrganization, ID: orgID}
	}
	_, err := getOrg(ctx, q, orgID)
	return err
}

// needOrg is the package's needOrg, sparing the query for an organization
// this handle has seen exist: organizations are never removed.
func (s *Store) needOrg(ctx context.Context, q querier, orgID string) error {
	if _, ok := s.orgsSeen.Load(orgID); ok {
		return nil
	}
	if err := needOrg(ctx, q, orgID); err != nil {
		return err
	}
	s.orgsSeen.Store(orgID, struct{}{})
	return nil
}

// orgOr returns the organization's NotFoundError when it does not exist,
// else err: reads that found nothing tell an unknown organization from an
// unknown record this way, sparing the common case a query.
func orgOr(ctx context.Context, q querier, orgID string, err error) error {
	if oerr := needOrg(ctx, q, orgID); oerr != nil {
		return oerr
	}
	return err
}

// getSummary reads an agent's summary, nil when there is none. lock takes
// the agent's row for the transaction (FOR UPDATE), so that changes of one
// agent, from any daemon, happen one after another.
func getSummary(ctx context.Context, q querier, orgID, wpid string, lock bool) (*records.AgentSummary, error) {
	if !validKey(wpid) {
		return nil, nil
	}
	sql := `SELECT version, created_at, folder_id, status, saved_task, deleted FROM agents WHERE org_id = $1 AND wpid = $2`
	if lock {
		sql += ` FOR UPDATE`
	}
	sum := &records.AgentSummary{WPID: wpid}
	var status string
	var created time.Time
	err := q.QueryRow(ctx, sql, orgID, wpid).Scan(&sum.Version, &created, &sum.Folder, &status, &sum.SavedTask, &sum.Deleted)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: agent %s: %w", wpid, err)
	}
	sum.Status, sum.Created = client.AgentStatus(status), created.UnixNano()
	return sum, nil
}

// putSummary stores the summary of an agent, derived from its latest row.
func putSummary(ctx context.Context, q querier, orgID string, sum *records.AgentSummary) error {
	search := make([]string, len(sum.Search))
	for i, s := range sum.Search {
		search[i] = pgText(s)
	}
	_, err := q.Exec(ctx, `
		INSERT INTO agents (org_id, wpid, version, created_at, folder_id, status, saved_task, deleted, search)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (org_id, wpid) DO UPDATE SET version = excluded.version, created_at = excluded.created_at,
			folder_id = excluded.folder_id, status = excluded.status, saved_task = excluded.saved_task,
			deleted = excluded.deleted, search = excluded.search`,
		orgID, sum.WPID, sum.Version, time.Unix(0, sum.Created).UTC(), pgText(sum.Folder), pgText(string(sum.Status)), sum.SavedTask, sum.Deleted, search)
	if err != nil {
		return fmt.Errorf("store: agent %s summary: %w", sum.WPID, err)
	}
	return nil
}

// folderOf is a row's folder_id as its column holds it.
func folderOf(a *client.Agent) *string {
	if a.FolderID == nil {
		return nil
	}
	f := pgText(*a.FolderID)
	return &f
}

// insertRow stores a new version row; with onConflictNothing an existing
// row of the version is left as it is and inserted is false.
func insertRow(ctx context.Context, q querier, a *client.Agent, row []byte, onConflictNothing bool) (inserted bool, err error) {
	sql := `INSERT INTO agent_versions (org_id, wpid, version, workflow_id, folder_id, row) VALUES ($1, $2, $3, $4, $5, $6)`
	if onConflictNothing {
		sql += ` ON CONFLICT DO NOTHING`
	}
	tag, err := q.Exec(ctx, sql, a.OrganizationID, a.WorkflowPermanentID, a.Version, pgText(a.WorkflowID), folderOf(a), row)
	if err != nil {
		return false, fmt.Errorf("store: agent %s version %d: %w", a.WorkflowPermanentID, a.Version, err)
	}
	return tag.RowsAffected() == 1, nil
}

// rewriteRows stores changed version rows (of one agent or several) in one
// statement.
func rewriteRows(ctx context.Context, q querier, orgID string, rows []*client.Agent) error {
	if len(rows) == 0 {
		return nil
	}
	wpids := make([]string, len(rows))
	versions := make([]int32, len(rows))
	folders := make([]*string, len(rows))
	data := make([][]byte, len(rows))
	for i, a := range rows {
		b, err := records.EncodeRow(a)
		if err != nil {
			return err
		}
		wpids[i], versions[i], folders[i], data[i] = a.WorkflowPermanentID, int32(a.Version), folderOf(a), b
	}
	_, err := q.Exec(ctx, `
		UPDATE agent_versions v SET row = u.row, folder_id = u.folder_id
		FROM unnest($2::text[], $3::int[], $4::text[], $5::bytea[]) AS u(wpid, version, folder_id, row)
		WHERE v.org_id = $1 AND v.wpid = u.wpid AND v.version = u.version`,
		orgID, wpids, versions, folders, data)
	if err != nil {
		return fmt.Errorf("store: rewrite the versions of agent %s: %w", rows[0].WorkflowPermanentID, err)
	}
	return nil
}

// agentRows returns every version row of an agent, oldest first.
func agentRows(ctx context.Context, q querier, orgID, wpid string) ([]*client.Agent, error) {
	if !validKey(wpid) {
		return nil, nil
	}
	rows, err := q.Query(ctx, `SELECT row FROM agent_versions WHERE org_id = $1 AND wpid = $2 ORDER BY version`, orgID, wpid)
	if err != nil {
		return nil, fmt.Errorf("store: agent %s: %w", wpid, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*client.Agent, error) {
		var raw []byte
		if err := r.Scan(&raw); err != nil {
			return nil, err
		}
		return records.DecodeAgent(raw)
	})
	if err != nil {
		return nil, fmt.Errorf("store: agent %s: %w", wpid, err)
	}
	return out, nil
}

// getRow returns one version row, nil if there is none.
func getRow(ctx context.Context, q querier, orgID, wpid string, version int) (*client.Agent, error) {
	if !validKey(wpid) || version <= 0 || version > math.MaxInt32 {
		return nil, nil
	}
	var raw []byte
	err := q.QueryRow(ctx, `SELECT row FROM agent_versions WHERE org_id = $1 AND wpid = $2 AND version = $3`, orgID, wpid, version).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: agent %s version %d: %w", wpid, version, err)
	}
	return records.DecodeAgent(raw)
}

// Create creates version 1 of a new agent from def, which it stores as
// given (def is not modified); see the bbolt store's Agents.Create. With an
// idempotency key the wpid is agentid.FromKey(orgID, key); if version 1 of
// it exists, even soft-deleted, Create returns that row as it is now with
// created false and writes nothing. The version row's primary key decides
// between concurrent creates with one key, from any daemon: exactly one
// inserts it.
func (a *Agents) Create(ctx context.Context, orgID string, def *client.Agent, idempotencyKey string) (agent *client.Agent, created bool, err error) {
	raw, created, err := a.CreateJSON(ctx, orgID, def, idempotencyKey)
	if err != nil {
		return nil, false, err
	}
	agent, err = records.DecodeAgent(raw)
	return agent, created, err
}

// CreateJSON is Create returning the row as the API answers it.
func (a *Agents) CreateJSON(ctx context.Context, orgID string, def *client.Agent, idempotencyKey string) (json.RawMessage, bool, error) {
	ag, row, sum, err := records.NewAgent(orgID, def, idempotencyKey, a.s.ids, a.s.clock)
	if err != nil {
		return nil, false, err
	}
	wpid := ag.WorkflowPermanentID
	if err := a.s.needOrg(ctx, a.s.pool, orgID); err != nil {
		return nil, false, err
	}
	// The version row and the agent's summary in one statement (one round
	// trip, atomic on its own); the summary only when the row was
	// inserted, which it is not when the idempotency key's agent exists.
	search := make([]string, len(sum.Search))
	for i, s := range sum.Search {
		search[i] = pgText(s)
	}
	conflict := ""
	if idempotencyKey != "" {
		conflict = " ON CONFLICT DO NOTHING"
	}
	tag, err := a.s.pool.Exec(ctx, `
		WITH v AS (
			INSERT INTO agent_versions (org_id, wpid, version, workflow_id, folder_id, row)
			VALUES ($1, $2, $3, $4, $5, $6)`+conflict+`
			RETURNING 1
		)
		INSERT INTO agents (org_id, wpid, version, created_at, folder_id, status, saved_task, deleted, search)
		SELECT $1, $2, $7, $8, $9, $10, $11, $12, $13 FROM v`,
		orgID, wpid, ag.Version, pgText(ag.WorkflowID), folderOf(ag), row,
		sum.Version, time.Unix(0, sum.Created).UTC(), pgText(sum.Folder), pgText(string(sum.Status)), sum.SavedTask, sum.Deleted, search)
	if err != nil {
		return nil, false, fmt.Errorf("store: agent %s version %d: %w", wpid, ag.Version, err)
	}
	if tag.RowsAffected() == 1 {
		return row, true, nil
	}
	// Another create with the key made it (and has committed: the insert
	// waited for it).
	var stored []byte
	if err := a.s.pool.QueryRow(ctx, `SELECT row FROM agent_versions WHERE org_id = $1 AND wpid = $2 AND version = 1`,
		orgID, wpid).Scan(&stored); err != nil {
		return nil, false, fmt.Errorf("store: agent %s: %w", wpid, err)
	}
	return stored, false, nil
}

// Update adds a version to an agent: version latest+1 (deleted versions
// count), the folder_id of the previous version (def.FolderID is ignored)
// and the other fields of def, stored as given as by Create. An update of
// a deleted agent brings it back: deleted_at is cleared on all its
// versions. ErrNotFound if the wpid never existed.
func (a *Agents) Update(ctx context.Context, orgID, wpid string, def *client.Agent) (*client.Agent, error) {
	if def == nil {
		return nil, fmt.Errorf("store: Agents.Update: nil definition")
	}
	var ag *client.Agent
	err := a.s.tx(ctx, func(tx pgx.Tx) error {
		ag = records.CopyAgent(def)
		if err := needOrg(ctx, tx, orgID); err != nil {
			return err
		}
		prev, err := getSummary(ctx, tx, orgID, wpid, true)
		if err != nil {
			return err
		}
		if prev == nil {
			return records.AgentNotFound(wpid)
		}
		if prev.Deleted {
			rows, err := agentRows(ctx, tx, orgID, wpid)
			if err != nil {
				return err
			}
			for _, row := range rows {
				row.DeletedAt = nil
			}
			if err := rewriteRows(ctx, tx, orgID, rows); err != nil {
				return err
			}
		}
		records.StampVersion(ag, orgID, wpid, prev.Version+1, a.s.ids, a.s.clock)
		ag.FolderID = nil // inherited from the previous version, which the summary describes
		if prev.Folder != "" {
			folder := prev.Folder
			if strings.ContainsRune(folder, '\uFFFD') {
				// The column holds the folder id with any NUL replaced:
				// the previous row has it as it is.
				latest, err := getRow(ctx, tx, orgID, wpid, prev.Version)
				if err != nil {
					return err
				}
				if latest != nil && latest.FolderID != nil {
					folder = *latest.FolderID
				}
			}
			ag.FolderID = &folder
		}
		row, err := records.EncodeRow(ag)
		if err != nil {
			return err
		}
		if _, err := insertRow(ctx, tx, ag, row, false); err != nil {
			return err
		}
		return putSummary(ctx, tx, orgID, records.SummaryOf(ag))
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
	return records.DecodeAgent(raw)
}

// GetJSON is Get returning the row as the API answers it, its stored
// bytes, without decoding them.
func (a *Agents) GetJSON(ctx context.Context, orgID, wpid string, version int) (json.RawMessage, error) {
	return a.AppendJSON(ctx, nil, orgID, wpid, version)
}

// AppendJSON is GetJSON appending the row to dst, so that a caller can
// reuse its buffers; on error dst is returned as it was.
func (a *Agents) AppendJSON(ctx context.Context, dst []byte, orgID, wpid string, version int) ([]byte, error) {
	notFound := func() error {
		if version != 0 {
			return records.AgentVersionNotFound(wpid, version)
		}
		return records.AgentNotFound(wpid)
	}
	if !validKey(orgID) || !validKey(wpid) || version < 0 || version > math.MaxInt32 {
		return dst, orgOr(ctx, a.s.pool, orgID, notFound())
	}
	var deleted bool
	var raw []byte
	err := a.s.pool.QueryRow(ctx, `
		SELECT a.deleted, v.row FROM agents a
		LEFT JOIN agent_versions v ON v.org_id = a.org_id AND v.wpid = a.wpid
			AND v.version = CASE WHEN $3::int = 0 THEN a.version ELSE $3::int END
		WHERE a.org_id = $1 AND a.wpid = $2`, orgID, wpid, version).Scan(&deleted, &raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return dst, orgOr(ctx, a.s.pool, orgID, notFound())
	}
	if err != nil {
		return dst, fmt.Errorf("store: agent %s: %w", wpid, err)
	}
	if deleted || raw == nil {
		return dst, notFound()
	}
	return append(dst, raw...), nil
}

// Versions returns every version of an agent, oldest first; ErrNotFound
// for an unknown or deleted agent.
func (a *Agents) Versions(ctx context.Context, orgID, wpid string) ([]*client.Agent, error) {
	var out []*client.Agent
	if validKey(orgID) {
		var err error
		if out, err = agentRows(ctx, a.s.pool, orgID, wpid); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, orgOr(ctx, a.s.pool, orgID, records.AgentNotFound(wpid))
	}
	if out[len(out)-1].DeletedAt != nil {
		return nil, records.AgentNotFound(wpid)
	}
	return out, nil
}

// Delete soft-deletes an agent: deleted_at is set on all its versions. An
// unknown or already deleted wpid is not an error.
func (a *Agents) Delete(ctx context.Context, orgID, wpid string) error {
	return a.s.tx(ctx, func(tx pgx.Tx) error {
		if err := needOrg(ctx, tx, orgID); err != nil {
			return err
		}
		prev, err := getSummary(ctx, tx, orgID, wpid, true)
		if err != nil || prev == nil || prev.Deleted {
			return err
		}
		return deleteAgentTx(ctx, tx, orgID, prev, a.s.clock())
	})
}

// deleteAgentTx soft-deletes the agent prev summarises, whose row the
// transaction holds.
func deleteAgentTx(ctx context.Context, q querier, orgID string, prev *records.AgentSummary, now client.Time) error {
	rows, err := agentRows(ctx, q, orgID, prev.WPID)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("store: agent %s has a summary but no versions", prev.WPID)
	}
	for _, row := range rows {
		row.DeletedAt = &now
	}
	if err := rewriteRows(ctx, q, orgID, rows); err != nil {
		return err
	}
	return putSummary(ctx, q, orgID, records.SummaryOf(rows[len(rows)-1]))
}

// SetFolder puts an agent in a folder ("" takes it out of any). It
// changes the latest version row in place (no new version) and bumps its
// modified_at. A NotFoundError for an unknown or deleted agent, or for an
// unknown or deleted folder (Record says which).
func (a *Agents) SetFolder(ctx context.Context, orgID, wpid, folderID string) (*client.Agent, error) {
	var ag *client.Agent
	err := a.s.tx(ctx, func(tx pgx.Tx) error {
		if err := needOrg(ctx, tx, orgID); err != nil {
			return err
		}
		// The folder is locked (shared) before the agent, the order of
		// Folders.Delete's locks, so that a folder being deleted takes
		// no agent in.
		var folderErr error
		if folderID != "" {
			_, folderErr = getFolder(ctx, tx, orgID, folderID, forShare)
			var nf *store.NotFoundError
			if folderErr != nil && !errors.As(folderErr, &nf) {
				return folderErr
			}
		}
		prev, err := getSummary(ctx, tx, orgID, wpid, true)
		if err != nil {
			return err
		}
		if prev == nil || prev.Deleted {
			return records.AgentNotFound(wpid)
		}
		if folderErr != nil {
			return folderErr
		}
		ag, err = getRow(ctx, tx, orgID, wpid, prev.Version)
		if err != nil {
			return err
		}
		if ag == nil {
			return fmt.Errorf("store: agent %s: version %d missing", wpid, prev.Version)
		}
		if folderID == "" {
			ag.FolderID = nil
		} else {
			f := folderID
			ag.FolderID = &f
		}
		ag.ModifiedAt = a.s.clock()
		if err := rewriteRows(ctx, tx, orgID, []*client.Agent{ag}); err != nil {
			return err
		}
		return putSummary(ctx, tx, orgID, records.SummaryOf(ag))
	})
	if err != nil {
		return nil, err
	}
	return ag, nil
}

// List returns a page of the latest versions of the organization's
// agents that are not deleted, newest first by that version's created_at
// (an update moves an agent to the top); wpids, byte by byte, break ties.
func (a *Agents) List(ctx context.Context, orgID string, q store.AgentQuery) ([]*client.Agent, error) {
	rows, err := a.ListJSON(ctx, orgID, q)
	if err != nil {
		return nil, err
	}
	return records.DecodeAgents(rows)
}

// likePattern is a search term as a LIKE pattern matching it anywhere:
// lowercased as the stored search texts are (Go's lowercasing, not the
// database's), its '%' and '_' wildcards as the hosted service's ILIKE
// reads them. The pattern is used with an empty ESCAPE clause, so that a backslash is
// a character like any other.
func likePattern(term string) string {
	return "%" + pgText(strings.ToLower(term)) + "%"
}

// ListJSON is List returning the rows as the API answers them. Every
// filter but q.Filter runs in the database, and without q.Filter the page
// too; q.Filter is called on the wpids that pass the others, in list
// order, until the page is full.
func (a *Agents) ListJSON(ctx context.Context, orgID string, q store.AgentQuery) ([]json.RawMessage, error) {
	page, size := q.Page, q.PageSize
	if page < 1 {
		page = 1
	}
	if size < 1 {
		size = 10
	}
	out := []json.RawMessage{}
	if !validKey(orgID) {
		return nil, needOrg(ctx, a.s.pool, orgID)
	}
	if page-1 > math.MaxInt/size {
		// Beyond any page that can exist.
		if err := needOrg(ctx, a.s.pool, orgID); err != nil {
			return nil, err
		}
		return out, nil
	}
	statuses := []string{string(client.AgentStatusPublished), string(client.AgentStatusDraft)}
	if len(q.Statuses) > 0 {
		statuses = statuses[:0]
		for _, st := range q.Statuses {
			statuses = append(statuses, pgText(string(st)))
		}
	}
	args := []any{orgID, statuses}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	var where strings.Builder
	where.WriteString(`a.org_id = $1 AND NOT a.deleted AND a.status = ANY($2)`)
	if q.FolderID != "" {
		fmt.Fprintf(&where, ` AND a.folder_id = %s`, arg(pgText(q.FolderID)))
	}
	if q.OnlySavedTasks {
		where.WriteString(` AND a.saved_task`)
	}
	if q.OnlyWorkflows {
		where.WriteString(` AND NOT a.saved_task`)
	}
	if q.SearchKey != "" {
		// The wpid as a plain substring (the one field the hosted service
		// escapes), the other texts and the folder's title with LIKE's
		// wildcards.
		term := arg(pgText(strings.ToLower(q.SearchKey)))
		pat := arg(likePattern(q.SearchKey))
		fmt.Fprintf(&where, ` AND (strpos(lower(a.wpid), %s) > 0
			OR EXISTS (SELECT 1 FROM unnest(a.search) AS s(text) WHERE s.text LIKE %s ESCAPE '')
			OR a.folder_id IN (SELECT f.id FROM folders f WHERE f.org_id = $1 AND NOT f.deleted AND f.title_search LIKE %s ESCAPE ''))`,
			term, pat, pat)
	}
	if q.Tags != nil {
		cond, more := tagQuerySQL("a.wpid", q.Tags, args)
		args = more
		where.WriteString(` AND ` + cond)
	}
	const order = ` ORDER BY a.created_at DESC, a.wpid DESC`
	skip := (page - 1) * size

	if q.Filter == nil {
		sql := `SELECT v.row FROM agents a JOIN agent_versions v ON v.org_id = a.org_id AND v.wpid = a.wpid AND v.version = a.version WHERE ` +
			where.String() + order + fmt.Sprintf(` LIMIT %d OFFSET %d`, size, skip)
		rows, err := a.s.pool.Query(ctx, sql, args...)
		if err != nil {
			return nil, fmt.Errorf("store: list the agents: %w", err)
		}
		for rows.Next() {
			var raw []byte
			if err := rows.Scan(&raw); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: list the agents: %w", err)
			}
			out = append(out, raw)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("store: list the agents: %w", err)
		}
		if len(out) == 0 {
			if err := needOrg(ctx, a.s.pool, orgID); err != nil {
				return nil, err
			}
		}
		return out, nil
	}

	// With a Filter: walk the wpids that pass the other filters, in order.
	var chosen []string
	rows, err := a.s.pool.Query(ctx, `SELECT a.wpid FROM agents a WHERE `+where.String()+order, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list the agents: %w", err)
	}
	for rows.Next() {
		var wpid string
		if err := rows.Scan(&wpid); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: list the agents: %w", err)
		}
		if !q.Filter(wpid) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		chosen = append(chosen, wpid)
		if len(chosen) == size {
			break
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list the agents: %w", err)
	}
	if len(chosen) == 0 {
		if err := needOrg(ctx, a.s.pool, orgID); err != nil {
			return nil, err
		}
		return out, nil
	}
	rows, err = a.s.pool.Query(ctx, `
		SELECT a.wpid, v.row FROM agents a
		JOIN agent_versions v ON v.org_id = a.org_id AND v.wpid = a.wpid AND v.version = a.version
		WHERE a.org_id = $1 AND a.wpid = ANY($2)`, orgID, chosen)
	if err != nil {
		return nil, fmt.Errorf("store: list the agents: %w", err)
	}
	byWPID := make(map[string][]byte, len(chosen))
	for rows.Next() {
		var wpid string
		var raw []byte
		if err := rows.Scan(&wpid, &raw); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: list the agents: %w", err)
		}
		byWPID[wpid] = raw
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list the agents: %w", err)
	}
	for _, wpid := range chosen {
		raw, ok := byWPID[wpid]
		if !ok {
			return nil, fmt.Errorf("store: agent %s is listed without versions", wpid)
		}
		out = append(out, raw)
	}
	return out, nil
}

// agentsDeleted says, for each wpid, whether the agent is deleted or
// unknown (the run list's workflow_deleted).
func (s *Store) agentsDeleted(ctx context.Context, q querier, orgID string, wpids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(wpids))
	var ask []string
	for _, w := range wpids {
		out[w] = true
		if validKey(w) {
			ask = append(ask, w)
		}
	}
	if len(ask) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, `SELECT wpid FROM agents WHERE org_id = $1 AND wpid = ANY($2) AND NOT deleted`, orgID, ask)
	if err != nil {
		return nil, fmt.Errorf("store: look up agents: %w", err)
	}
	live, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: look up agents: %w", err)
	}
	for _, w := range live {
		out[w] = false
	}
	return out, nil
}

// agentOfVersion returns the wpid of the agent one of whose version rows
// has workflow_id workflowID, "" when none has (bbolt: the scan in
// store's agentOf, for Scripts.Create).
func (s *Store) agentOfVersion(ctx context.Context, q querier, orgID, workflowID string) (string, error) {
	if !validKey(workflowID) {
		return "", nil
	}
	var wpid string
	err := q.QueryRow(ctx, `SELECT wpid FROM agent_versions WHERE org_id = $1 AND workflow_id = $2 ORDER BY wpid, version LIMIT 1`,
		orgID, workflowID).Scan(&wpid)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: look up agent version %s: %w", workflowID, err)
	}
	return wpid, nil
}
