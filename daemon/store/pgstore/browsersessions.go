package pgstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// BrowserSessions are the organizations' browser sessions: the record of
// each (bbolt: daemon/store/browsersessions.go).
type BrowserSessions struct{ s *Store }

// BrowserSessions returns the browser sessions of the organizations.
func (s *Store) BrowserSessions() store.BrowserSessions { return &BrowserSessions{s} }

// NewID returns the id of a new browser session.
func (b *BrowserSessions) NewID() string { return b.s.ids.Next(ids.PrefixBrowserSession) }

func getSession(ctx context.Context, q querier, orgID, id string, lock bool) (*client.BrowserSession, error) {
	doc, err := getDoc(ctx, q, "browser_sessions", orgID, id, lock, store.RecordSession)
	if err != nil {
		return nil, err
	}
	return decodeDoc[client.BrowserSession](doc, store.RecordSession, id)
}

// putSession writes bs (insert or replace).
func putSession(ctx context.Context, q querier, orgID string, bs *client.BrowserSession) error {
	doc, err := json.Marshal(bs)
	if err != nil {
		return fmt.Errorf("store: encode %s: %w", bs.BrowserSessionID, err)
	}
	_, err = q.Exec(ctx, `
		INSERT INTO browser_sessions (org_id, id, created_at, status, doc) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (org_id, id) DO UPDATE SET created_at = excluded.created_at, status = excluded.status, doc = excluded.doc`,
		orgID, bs.BrowserSessionID, bs.CreatedAt.Time, bs.Status, doc)
	if err != nil {
		return fmt.Errorf("store: browser session %s: %w", bs.BrowserSessionID, err)
	}
	return nil
}

// Create stores a browser session record, stamping its organization and
// times.
func (b *BrowserSessions) Create(ctx context.Context, orgID string, bs *client.BrowserSession) error {
	now := b.s.clock()
	bs.OrganizationID, bs.CreatedAt, bs.ModifiedAt = orgID, now, now
	if !records.ValidID(bs.BrowserSessionID) {
		return fmt.Errorf("store: browser session id %q is not a valid key", bs.BrowserSessionID)
	}
	return b.s.tx(ctx, func(tx pgx.Tx) error {
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		return putSession(ctx, tx, orgID, bs)
	})
}

// Get returns a browser session.
func (b *BrowserSessions) Get(ctx context.Context, orgID, id string) (*client.BrowserSession, error) {
	return getSession(ctx, b.s.pool, orgID, id, false)
}

// List returns the organization's browser sessions, newest first.
func (b *BrowserSessions) List(ctx context.Context, orgID string) ([]*client.BrowserSession, error) {
	out := []*client.BrowserSession{}
	if err := resOrg(ctx, b.s.pool, orgID); err != nil {
		return out, err
	}
	rows, err := b.s.pool.Query(ctx, `SELECT id, doc FROM browser_sessions WHERE org_id = $1
		ORDER BY created_at DESC, id COLLATE "C" DESC`, orgID)
	if err != nil {
		return out, fmt.Errorf("store: list the browser sessions: %w", err)
	}
	err = eachDoc(rows, func(id string, doc []byte) error {
		bs, err := decodeDoc[client.BrowserSession](doc, store.RecordSession, id)
		if err == nil {
			out = append(out, bs)
		}
		return err
	})
	return out, err
}

// Update changes a browser session with fn, which may return
// store.ErrUnchanged. The session's row is locked while fn runs, so that
// the changes of several daemons apply one after the other; fn may run
// more than once (a retried transaction) and must change nothing but the
// session it is given.
func (b *BrowserSessions) Update(ctx context.Context, orgID, id string, fn func(*client.BrowserSession) error) (*client.BrowserSession, error) {
	var out *client.BrowserSession
	err := b.s.tx(ctx, func(tx pgx.Tx) error {
		out = nil
		bs, err := getSession(ctx, tx, orgID, id, true)
		if err != nil {
			return err
		}
		changed, err := records.ChangeSession(bs, fn, b.s.clock)
		if err != nil {
			return err
		}
		out = bs
		if !changed {
			return nil
		}
		return putSession(ctx, tx, orgID, bs)
	})
	return out, err
}

// EndOpen ends, in every organization, the sessions still running (their
// browsers are gone: the daemon stopped), with status; it returns how
// many.
func (b *BrowserSessions) EndOpen(ctx context.Context, status string) (int, error) {
	return b.s.endSessions(ctx, status, "")
}

// endSessions ends the running sessions, those that also meet the SQL
// condition where on the browser_sessions row when it is not "", with
// status.
func (s *Store) endSessions(ctx context.Context, status, where string) (int, error) {
	n := 0
	now := s.clock()
	if where != "" {
		where = " AND (" + where + ")"
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		n = 0
		rows, err := tx.Query(ctx, `SELECT org_id, id, doc FROM browser_sessions WHERE status = $1`+where+`
			ORDER BY org_id, id FOR UPDATE`, store.SessionRunning)
		if err != nil {
			return fmt.Errorf("store: find the running browser sessions: %w", err)
		}
		type ended struct {
			org string
			bs  *client.BrowserSession
		}
		var all []ended
		for rows.Next() {
			var org, id string
			var doc []byte
			if err := rows.Scan(&org, &id, &doc); err != nil {
				rows.Close()
				return fmt.Errorf("store: find the running browser sessions: %w", err)
			}
			bs, err := decodeDoc[client.BrowserSession](doc, store.RecordSession, id)
			if err != nil {
				rows.Close()
				return err
			}
			if bs.Status != nil && *bs.Status == store.SessionRunning {
				st := status
				bs.Status, bs.CompletedAt, bs.ModifiedAt = &st, &now, now
				all = append(all, ended{org, bs})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("store: find the running browser sessions: %w", err)
		}
		for _, e := range all {
			if err := putSession(ctx, tx, e.org, e.bs); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
