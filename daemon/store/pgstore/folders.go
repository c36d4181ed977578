package pgstore

import (
	"context"
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

// Folders are the folders of the organizations. Get it with Store.Folders.
type Folders struct{ s *Store }

// Folders returns the store's folders.
func (s *Store) Folders() store.Folders { return &Folders{s} }

func folderNotFound(id string) error {
	return &store.NotFoundError{Record: store.RecordFolder, ID: id}
}

// folderCountSQL counts the agents (not deleted) whose latest version is in
// the folder f.
const folderCountSQL = `(SELECT count(*) FROM agents a WHERE a.org_id = f.org_id AND a.folder_id = f.id AND NOT a.deleted)`

// Row locks of getFolder.
const (
	noLock    = ""
	forUpdate = " FOR UPDATE"
	forShare  = " FOR SHARE"
)

// getFolder returns a folder that is not deleted, with its agent count, or
// a NotFoundError of the folder. lock is one of the row locks above.
func getFolder(ctx context.Context, q querier, orgID, id string, lock string) (*records.Folder, error) {
	if !validKey(id) {
		return nil, folderNotFound(id)
	}
	sql := `SELECT f.record, ` + folderCountSQL + ` FROM folders f WHERE f.org_id = $1 AND f.id = $2 AND NOT f.deleted` + lock
	var raw []byte
	var count int
	err := q.QueryRow(ctx, sql, orgID, id).Scan(&raw, &count)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, folderNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: folder %s: %w", id, err)
	}
	rec, err := records.DecodeFolder(raw)
	if err != nil {
		return nil, err
	}
	rec.WorkflowCount = count
	return rec, nil
}

// putFolder stores the record (its count as 0, as the bbolt store keeps
// it) with the columns the list reads.
func putFolder(ctx context.Context, q querier, orgID string, rec *records.Folder) error {
	stored := *rec
	stored.WorkflowCount = 0
	data, err := json.Marshal(&stored)
	if err != nil {
		return fmt.Errorf("store: encode %s: %w", rec.FolderID, err)
	}
	var desc *string
	if rec.Description != nil {
		d := pgText(strings.ToLower(*rec.Description))
		desc = &d
	}
	_, err = q.Exec(ctx, `
		INSERT INTO folders (org_id, id, record, title_search, description_search, modified_at, deleted)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (org_id, id) DO UPDATE SET record = excluded.record, title_search = excluded.title_search,
			description_search = excluded.description_search, modified_at = excluded.modified_at, deleted = excluded.deleted`,
		orgID, rec.FolderID, data, pgText(strings.ToLower(rec.Title)), desc, rec.ModifiedAt.Time, rec.DeletedAt != nil)
	if err != nil {
		return fmt.Errorf("store: folder %s: %w", rec.FolderID, err)
	}
	return nil
}

// folderResult returns the API form of the record, with its agent count
// (which getFolder and Create set on it).
func folderResult(rec *records.Folder) *client.Folder {
	f := rec.Folder
	return &f
}

// Create creates a folder; an empty description is stored as null.
func (fs *Folders) Create(ctx context.Context, orgID, title, description string) (*client.Folder, error) {
	var f *client.Folder
	err := fs.s.tx(ctx, func(tx pgx.Tx) error {
		if err := needOrg(ctx, tx, orgID); err != nil {
			return err
		}
		now := fs.s.clock()
		rec := records.NewFolder(fs.s.ids.Next(ids.PrefixFolder), orgID, title, description, now)
		if err := putFolder(ctx, tx, orgID, rec); err != nil {
			return err
		}
		// Agents may name a folder before it exists (Agents.Create does
		// not check): they count.
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM agents WHERE org_id = $1 AND folder_id = $2 AND NOT deleted`,
			orgID, rec.FolderID).Scan(&rec.WorkflowCount); err != nil {
			return fmt.Errorf("store: folder %s: %w", rec.FolderID, err)
		}
		f = folderResult(rec)
		return nil
	})
	return f, err
}

// Get returns a folder; ErrNotFound for an unknown or deleted one.
func (fs *Folders) Get(ctx context.Context, orgID, id string) (*client.Folder, error) {
	if !validKey(orgID) {
		return nil, needOrg(ctx, fs.s.pool, orgID)
	}
	rec, err := getFolder(ctx, fs.s.pool, orgID, id, noLock)
	if err != nil {
		var nf *store.NotFoundError
		if errors.As(err, &nf) {
			return nil, orgOr(ctx, fs.s.pool, orgID, err)
		}
		return nil, err
	}
	return folderResult(rec), nil
}

// Update changes a folder's title and description; nil leaves a field
// unchanged. modified_at is bumped even when nothing changes.
func (fs *Folders) Update(ctx context.Context, orgID, id string, title, description *string) (*client.Folder, error) {
	var f *client.Folder
	err := fs.s.tx(ctx, func(tx pgx.Tx) error {
		if err := needOrg(ctx, tx, orgID); err != nil {
			return err
		}
		rec, err := getFolder(ctx, tx, orgID, id, forUpdate)
		if err != nil {
			return err
		}
		rec.Update(title, description, fs.s.clock())
		if err := putFolder(ctx, tx, orgID, rec); err != nil {
			return err
		}
		f = folderResult(rec)
		return nil
	})
	return f, err
}

// Delete soft-deletes a folder. Without deleteAgents its agents are
// moved out of it: folder_id is cleared (and modified_at bumped) on every
// version row that names it. With deleteAgents the agents whose latest
// version is in the folder are soft-deleted, keeping their folder_id.
// ErrNotFound for an unknown or already deleted folder.
func (fs *Folders) Delete(ctx context.Context, orgID, id string, deleteAgents bool) error {
	return fs.s.tx(ctx, func(tx pgx.Tx) error {
		if err := needOrg(ctx, tx, orgID); err != nil {
			return err
		}
		rec, err := getFolder(ctx, tx, orgID, id, forUpdate)
		if err != nil {
			return err
		}
		now := fs.s.clock()
		if deleteAgents {
			// The agents (not deleted) whose latest version is in the
			// folder, each locked as Agents.Delete locks it.
			rows, err := tx.Query(ctx, `SELECT wpid FROM agents WHERE org_id = $1 AND folder_id = $2 AND NOT deleted ORDER BY wpid FOR UPDATE`,
				orgID, pgText(id))
			if err != nil {
				return fmt.Errorf("store: folder %s: %w", id, err)
			}
			wpids, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return fmt.Errorf("store: folder %s: %w", id, err)
			}
			for _, wpid := range wpids {
				prev, err := getSummary(ctx, tx, orgID, wpid, false)
				if err != nil {
					return err
				}
				if prev == nil || prev.Deleted {
					continue
				}
				if err := deleteAgentTx(ctx, tx, orgID, prev, now); err != nil {
					return err
				}
			}
		} else {
			// Lock the agents with a version in the folder first, in the
			// order every writer of agents locks them, then their rows.
			if _, err := tx.Exec(ctx, `SELECT 1 FROM agents WHERE org_id = $1 AND wpid IN (
				SELECT wpid FROM agent_versions WHERE org_id = $1 AND folder_id = $2) ORDER BY wpid FOR UPDATE`,
				orgID, pgText(id)); err != nil {
				return fmt.Errorf("store: folder %s: %w", id, err)
			}
			if err := clearFolderOnRows(ctx, tx, orgID, id, now); err != nil {
				return err
			}
			// The summaries of the agents (deleted ones included) whose
			// latest version was in the folder.
			if _, err := tx.Exec(ctx, `UPDATE agents SET folder_id = '' WHERE org_id = $1 AND folder_id = $2`, orgID, pgText(id)); err != nil {
				return fmt.Errorf("store: folder %s: %w", id, err)
			}
		}
		rec.DeletedAt = &now
		return putFolder(ctx, tx, orgID, rec)
	})
}

// clearFolderOnRows sets folder_id to null on every version row in the
// folder, bumping modified_at.
func clearFolderOnRows(ctx context.Context, q querier, orgID, folderID string, now client.Time) error {
	rows, err := q.Query(ctx, `SELECT row FROM agent_versions WHERE org_id = $1 AND folder_id = $2 ORDER BY wpid, version FOR UPDATE`,
		orgID, pgText(folderID))
	if err != nil {
		return fmt.Errorf("store: folder %s: %w", folderID, err)
	}
	agents, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*client.Agent, error) {
		var raw []byte
		if err := r.Scan(&raw); err != nil {
			return nil, err
		}
		return records.DecodeAgent(raw)
	})
	if err != nil {
		return fmt.Errorf("store: folder %s: %w", folderID, err)
	}
	var changed []*client.Agent
	for _, a := range agents {
		if a.FolderID != nil && *a.FolderID == folderID {
			a.FolderID = nil
			a.ModifiedAt = now
			changed = append(changed, a)
		}
	}
	return rewriteRows(ctx, q, orgID, changed)
}

// List returns a page of the organization's folders, most recently
// modified first (ids, highest first, break ties). search matches title
// or description, case-insensitively and anywhere, with LIKE's wildcards.
// page is 1-based (0 means 1); pageSize 0 means 100.
func (fs *Folders) List(ctx context.Context, orgID string, page, pageSize int, search string) ([]*client.Folder, error) {
	if page < 1 {
		page = 1
	}
	if pageSize < 1 {
		pageSize = 100
	}
	if err := needOrg(ctx, fs.s.pool, orgID); err != nil {
		return nil, err
	}
	out := []*client.Folder{}
	if page-1 > math.MaxInt/pageSize {
		return out, nil
	}
	args := []any{orgID}
	sql := `SELECT f.record, ` + folderCountSQL + ` FROM folders f WHERE f.org_id = $1 AND NOT f.deleted`
	if search != "" {
		args = append(args, likePattern(search))
		sql += ` AND (f.title_search LIKE $2 ESCAPE '' OR f.description_search LIKE $2 ESCAPE '')`
	}
	sql += fmt.Sprintf(` ORDER BY f.modified_at DESC, length(f.id) DESC, f.id DESC LIMIT %d OFFSET %d`, pageSize, (page-1)*pageSize)
	rows, err := fs.s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list the folders: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var raw []byte
		var count int
		if err := rows.Scan(&raw, &count); err != nil {
			return nil, fmt.Errorf("store: list the folders: %w", err)
		}
		rec, err := records.DecodeFolder(raw)
		if err != nil {
			return nil, err
		}
		rec.WorkflowCount = count
		out = append(out, folderResult(rec))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list the folders: %w", err)
	}
	return out, nil
}
