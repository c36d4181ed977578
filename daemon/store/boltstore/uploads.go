package boltstore

import (
	"bytes"
	"context"
	"fmt"

	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// Uploads are the files organizations uploaded with POST /v1/upload_file:
// one record each, keyed by its artifact id. The bytes are not in the
// database: the daemon keeps them in its artifact directory (package
// daemon/artifacts), in a directory of their own named by Upload.Dir, where
// the artifact URLs serve them. Get it with Store.Uploads.
type Uploads struct{ s *Store }

// Uploads returns the organizations' uploaded files.
func (s *Store) Uploads() store.Uploads { return &Uploads{s: s} }

// NewDir returns the id of a new upload directory (upl_<snowflake>).
func (u *Uploads) NewDir() string { return u.s.ids.Next(store.PrefixUploadDir) }

// Create stores the record of an uploaded file, whose bytes the caller has
// already written, stamping its CreatedAt when unset.
func (u *Uploads) Create(ctx context.Context, orgID string, up *store.Upload) error {
	if !validID(up.ID) {
		return fmt.Errorf("store: upload id %q is not a valid key", up.ID)
	}
	if up.CreatedAt.IsZero() {
		up.CreatedAt = u.s.clock()
	}
	return u.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		return putJSON(o.uploads(), []byte(up.ID), up)
	})
}

// Get returns the record of an uploaded file by its artifact id.
func (u *Uploads) Get(ctx context.Context, orgID, id string) (*store.Upload, error) {
	var out *store.Upload
	err := u.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		out, err = getJSON[store.Upload](o.uploads(), store.RecordArtifact, id)
		return err
	})
	return out, err
}

// FindFile returns the run of the organization that recorded the file
// with artifact id id, and that file's record; a NotFoundError
// (RecordArtifact) when no run of the organization has it.
//
// Runs keep their files in their records and no index maps an artifact id
// to its run, so this reads the organization's runs: the bytes of each
// record are searched for the id first, and only a record that contains it
// is decoded. The cost grows with the number of runs the organization
// keeps (a few milliseconds per ten thousand); the content route that uses
// it is not on any hot path.
func (r *Runs) FindFile(ctx context.Context, orgID, id string) (string, store.RunFile, error) {
	var runID string
	var file store.RunFile
	err := r.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		if !validID(id) {
			return notFound(store.RecordArtifact, id)
		}
		needle := records.FileNeedle(id)
		c := o.runs().Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if !bytes.Contains(v, needle) {
				continue
			}
			f, ok, err := records.FileOf(string(k), v, id)
			if err != nil {
				return err
			}
			if ok {
				runID, file = string(k), f
				return nil
			}
		}
		return notFound(store.RecordArtifact, id)
	})
	return runID, file, err
}
