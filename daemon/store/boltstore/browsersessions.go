package boltstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// BrowserSessions are the organizations' browser sessions: the record of
// each (the browser itself lives in the executor). Get it with
// Store.BrowserSessions.
type BrowserSessions struct{ s *Store }

func getSession(o *orgTx, id string) (*client.BrowserSession, error) {
	return getJSON[client.BrowserSession](o.browserSessions(), store.RecordSession, id)
}

// NewID returns the id of a new browser session.
func (b *BrowserSessions) NewID() string { return b.s.ids.Next(ids.PrefixBrowserSession) }

// Create stores a browser session record, stamping its organization and
// times.
func (b *BrowserSessions) Create(ctx context.Context, orgID string, bs *client.BrowserSession) error {
	now := b.s.clock()
	bs.OrganizationID, bs.CreatedAt, bs.ModifiedAt = orgID, now, now
	return b.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		return putJSON(o.browserSessions(), []byte(bs.BrowserSessionID), bs)
	})
}

// Get returns a browser session.
func (b *BrowserSessions) Get(ctx context.Context, orgID, id string) (*client.BrowserSession, error) {
	var out *client.BrowserSession
	err := b.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		out, err = getSession(o, id)
		return err
	})
	return out, err
}

// List returns the organization's browser sessions, newest first.
func (b *BrowserSessions) List(ctx context.Context, orgID string) ([]*client.BrowserSession, error) {
	out := []*client.BrowserSession{}
	err := b.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		return o.browserSessions().ForEach(func(k, v []byte) error {
			bs := new(client.BrowserSession)
			if err := json.Unmarshal(v, bs); err != nil {
				return fmt.Errorf("store: browser session %s: %w", k, err)
			}
			out = append(out, bs)
			return nil
		})
	})
	slices.SortFunc(out, func(a, b *client.BrowserSession) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt.Time), strings.Compare(b.BrowserSessionID, a.BrowserSessionID))
	})
	return out, err
}

// Update changes a browser session with fn, which may return ErrUnchanged.
func (b *BrowserSessions) Update(ctx context.Context, orgID, id string, fn func(*client.BrowserSession) error) (*client.BrowserSession, error) {
	var out *client.BrowserSession
	err := b.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		bs, err := getSession(o, id)
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
		return putJSON(o.browserSessions(), []byte(id), bs)
	})
	return out, err
}

// EndOpen ends, in every organization, the sessions still running (their
// browsers are gone: the daemon stopped), with status; it returns how
// many.
func (b *BrowserSessions) EndOpen(ctx context.Context, status string) (int, error) {
	n := 0
	now := b.s.clock()
	err := b.s.update(ctx, func(tx *bolt.Tx) error {
		n = 0
		data := tx.Bucket(bucketOrgData)
		return data.ForEachBucket(func(org []byte) error {
			bk := data.Bucket(org).Bucket(bucketBrowserSessions)
			if bk == nil {
				return nil
			}
			var ended []*client.BrowserSession
			err := bk.ForEach(func(k, v []byte) error {
				bs := new(client.BrowserSession)
				if err := json.Unmarshal(v, bs); err != nil {
					return fmt.Errorf("store: browser session %s: %w", k, err)
				}
				if bs.Status != nil && *bs.Status == store.SessionRunning {
					st := status
					bs.Status, bs.CompletedAt, bs.ModifiedAt = &st, &now, now
					ended = append(ended, bs)
				}
				return nil
			})
			if err != nil {
				return err
			}
			for _, bs := range ended {
				if err := putJSON(bk, []byte(bs.BrowserSessionID), bs); err != nil {
					return err
				}
				n++
			}
			return nil
		})
	})
	return n, err
}
