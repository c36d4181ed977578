package boltstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// Folders are the folders of the organizations. Get it with Store.Folders.
type Folders struct{ s *Store }

// folderRecord is the stored form of a folder (records.Folder); its
// WorkflowCount is read from folder_counts.
type folderRecord = records.Folder

// getFolder returns a folder that is not deleted, or ErrNotFound.
func getFolder(o *orgTx, id string) (*folderRecord, error) {
	rec, err := getJSON[folderRecord](o.folders(), store.RecordFolder, id)
	if err != nil {
		return nil, err
	}
	if rec.DeletedAt != nil {
		return nil, notFound(store.RecordFolder, id)
	}
	return rec, nil
}

var decodeFolder = records.DecodeFolder

func putFolder(o *orgTx, rec *folderRecord) error {
	rec.WorkflowCount = 0
	return putJSON(o.folders(), []byte(rec.FolderID), rec)
}

// folderResult returns the API form of the record, with its agent count.
func folderResult(o *orgTx, rec *folderRecord) *client.Folder {
	f := rec.Folder
	f.WorkflowCount = folderCount(o, f.FolderID)
	return &f
}

// Create creates a folder; an empty description is stored as null.
func (fs *Folders) Create(ctx context.Context, orgID, title, description string) (*client.Folder, error) {
	var f *client.Folder
	err := fs.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		now := fs.s.clock()
		rec := records.NewFolder(fs.s.ids.Next(ids.PrefixFolder), orgID, title, description, now)
		if err := putFolder(o, rec); err != nil {
			return err
		}
		f = folderResult(o, rec)
		return nil
	})
	return f, err
}

// Get returns a folder; ErrNotFound for an unknown or deleted one.
func (fs *Folders) Get(ctx context.Context, orgID, id string) (*client.Folder, error) {
	var f *client.Folder
	err := fs.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getFolder(o, id)
		if err != nil {
			return err
		}
		f = folderResult(o, rec)
		return nil
	})
	return f, err
}

// Update changes a folder's title and description; nil leaves a field
// unchanged. modified_at is bumped even when nothing changes.
func (fs *Folders) Update(ctx context.Context, orgID, id string, title, description *string) (*client.Folder, error) {
	var f *client.Folder
	err := fs.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getFolder(o, id)
		if err != nil {
			return err
		}
		rec.Update(title, description, fs.s.clock())
		if err := putFolder(o, rec); err != nil {
			return err
		}
		f = folderResult(o, rec)
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
	return fs.s.update(ctx, func(tx *bolt.Tx) error {
		o, err := openOrg(tx, orgID)
		if err != nil {
			return err
		}
		rec, err := getFolder(o, id)
		if err != nil {
			return err
		}
		now := fs.s.clock()
		// The agents whose latest version is in the folder, read before
		// anything changes (a bucket must not change under its cursor).
		inFolder, err := summariesInFolder(o, id)
		if err != nil {
			return err
		}
		if deleteAgents {
			for _, sum := range inFolder {
				if sum.Deleted {
					continue
				}
				if err := deleteAgentTx(o, sum, now); err != nil {
					return err
				}
			}
		} else {
			if err := clearFolderOnRows(o, id, now); err != nil {
				return err
			}
			for _, prev := range inFolder {
				latest, err := getRow(o, prev.WPID, prev.Version)
				if err != nil {
					return err
				}
				if latest == nil {
					return fmt.Errorf("store: agent %s: version %d missing", prev.WPID, prev.Version)
				}
				if err := putSummary(o, prev, summaryOf(latest)); err != nil {
					return err
				}
			}
		}
		rec.DeletedAt = &now
		return putFolder(o, rec)
	})
}

// summariesInFolder returns the summaries (deleted agents included) whose
// latest version is in the folder.
func summariesInFolder(o *orgTx, folderID string) ([]*agentSummary, error) {
	var out []*agentSummary
	err := o.summaries().ForEach(func(_, raw []byte) error {
		if h, ok := readHead(raw); ok && string(h.folder) != folderID {
			return nil
		}
		sum, err := decodeSummary(raw)
		if err != nil {
			return err
		}
		if sum.Folder == folderID {
			out = append(out, sum)
		}
		return nil
	})
	return out, err
}

// clearFolderOnRows sets folder_id to null on every version row in the
// folder, bumping modified_at. Rows are scanned as bytes first: only those
// that contain the folder id at all are decoded.
func clearFolderOnRows(o *orgTx, folderID string, now client.Time) error {
	needle, err := json.Marshal(folderID)
	if err != nil {
		return err
	}
	var changed []*client.Agent
	err = o.agents().ForEach(func(_, raw []byte) error {
		if !bytes.Contains(raw, needle) {
			return nil
		}
		a, err := decodeAgent(raw)
		if err != nil {
			return err
		}
		if a.FolderID != nil && *a.FolderID == folderID {
			a.FolderID = nil
			a.ModifiedAt = now
			changed = append(changed, a)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, a := range changed {
		if err := putAgent(o, a); err != nil {
			return err
		}
	}
	return nil
}

// List returns a page of the organization's folders, most recently
// modified first. search matches title or description, case-insensitively
// and as a substring. page is 1-based (0 means 1); pageSize 0 means 100.
func (fs *Folders) List(ctx context.Context, orgID string, page, pageSize int, search string) ([]*client.Folder, error) {
	if page < 1 {
		page = 1
	}
	if pageSize < 1 {
		pageSize = 100
	}
	term := newLikeTerm(search)
	out := []*client.Folder{}
	err := fs.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		var recs []*folderRecord
		err = o.folders().ForEach(func(_, raw []byte) error {
			rec, err := decodeFolder(raw)
			if err != nil {
				return err
			}
			if rec.DeletedAt != nil {
				return nil
			}
			if search != "" && !term.match(strings.ToLower(rec.Title)) &&
				(rec.Description == nil || !term.match(strings.ToLower(*rec.Description))) {
				return nil
			}
			recs = append(recs, rec)
			return nil
		})
		if err != nil {
			return err
		}
		slices.SortFunc(recs, func(a, b *folderRecord) int {
			if c := b.ModifiedAt.Compare(a.ModifiedAt.Time); c != 0 {
				return c
			}
			return cmp.Compare(0, compareIDs(a.FolderID, b.FolderID))
		})
		if page-1 > math.MaxInt/pageSize || (page-1)*pageSize >= len(recs) {
			return nil
		}
		recs = recs[(page-1)*pageSize:]
		if len(recs) > pageSize {
			recs = recs[:pageSize]
		}
		for _, rec := range recs {
			out = append(out, folderResult(o, rec))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// matchingFolders returns the ids of the folders (not deleted) whose
// title matches the search term.
func matchingFolders(o *orgTx, term likeTerm) (map[string]bool, error) {
	hits := map[string]bool{}
	err := o.folders().ForEach(func(_, raw []byte) error {
		rec, err := decodeFolder(raw)
		if err != nil {
			return err
		}
		if rec.DeletedAt == nil && term.match(strings.ToLower(rec.Title)) {
			hits[rec.FolderID] = true
		}
		return nil
	})
	return hits, err
}
