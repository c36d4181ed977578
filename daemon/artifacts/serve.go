package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// ServeFile answers r with the file name of the organization's directory
// dirID (a run's directory, or the one of an uploaded file), the way the
// signed URLs serve files: http.ServeContent (Range requests answered 206
// or 416, Last-Modified and conditional requests), the Content-Type of
// ContentType, nosniff and the sandboxing Content-Security-Policy, inline
// only for passive types unless attachment, and cacheControl as
// Cache-Control. A file that is missing or not a regular file (see the
// package comment) is answered 404 with {"detail": ...}. A file that is not
// on this daemon's disk is served from the Store's bucket, when it has one
// (another daemon recorded it), with the same headers. The caller has
// checked that the request may read the file (a signature, an API key).
func (s *Store) ServeFile(w http.ResponseWriter, r *http.Request, orgID, dirID, name string, attachment bool, cacheControl string) {
	if checkIDs(orgID, dirID) != nil || !executor.ValidFileName(name) {
		writeError(w, r, http.StatusNotFound, detailNotFound)
		return
	}
	f, modTime, err := s.open(r.Context(), orgID, dirID, name)
	if err != nil {
		// Missing, not a regular file, or not openable: nothing to serve.
		// A bucket that cannot be read is worth the operator's attention,
		// but the answer stays 404: the browser can do nothing about it.
		writeError(w, r, http.StatusNotFound, detailNotFound)
		return
	}
	defer f.Close()

	ct := ContentType(name)
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("X-Content-Type-Options", headerNoSniff)
	h.Set("Content-Security-Policy", headerCSP)
	h.Set("Referrer-Policy", headerNoReferrer)
	h.Set("Content-Disposition", disposition(name, attachment || !inlineTypes[ct]))
	h.Set("Cache-Control", cacheControl)
	http.ServeContent(w, r, name, modTime, f)
}

// ErrExists is returned by Save for a file that is already there.
var ErrExists = errors.New("artifacts: the file exists")

// Save writes what src gives into a new file name of the organization's
// directory dirID (made as RunDir makes a run's), flushed to disk, and
// returns its record (with no Type: the caller sets it when it keeps
// one). The daemon saves uploaded files with it,
// each in a directory of its own. When anything fails, src's error (a body
// over its size limit, say) included, the file is removed and the error
// wraps the cause. With a bucket, the file is copied to it before the
// record is returned, as Record does.
func (s *Store) Save(orgID, dirID, name string, src io.Reader) (store.RunFile, error) {
	if !executor.ValidFileName(name) {
		return store.RunFile{}, fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	if _, err := s.RunDir(orgID, dirID); err != nil {
		return store.RunFile{}, err
	}
	rel := orgID + "/" + dirID + "/" + name
	f, err := s.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return store.RunFile{}, fmt.Errorf("%w: %s", ErrExists, name)
	} else if err != nil {
		return store.RunFile{}, fmt.Errorf("artifacts: %w", err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), src)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.root.Remove(rel)
		return store.RunFile{}, fmt.Errorf("artifacts: writing %s: %w", name, err)
	}
	if s.bucket != nil {
		if err := s.uploadSaved(orgID, dirID, name, n); err != nil {
			s.root.Remove(rel)
			return store.RunFile{}, err
		}
	}
	return store.RunFile{
		ID:        s.ids.Next(PrefixArtifact),
		Name:      name,
		Size:      n,
		SHA256:    hex.EncodeToString(h.Sum(nil)),
		CreatedAt: client.NewTime(s.now()),
	}, nil
}

// RemoveDir deletes the organization's directory dirID and everything in
// it, as RemoveRun does for a run's.
func (s *Store) RemoveDir(orgID, dirID string) error { return s.RemoveRun(orgID, dirID) }

// uploadSaved copies a file Save wrote to the bucket.
func (s *Store) uploadSaved(orgID, dirID, name string, size int64) error {
	f, fi, err := s.openRegular(orgID, dirID, name)
	if err != nil {
		return err
	}
	defer f.Close()
	return s.uploadFile(f, orgID, dirID, name, size, fi.ModTime())
}
