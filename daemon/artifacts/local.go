package artifacts

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"

	"github.com/abctl/abctl/localrun/executor"
)

// LocalFiles opens the files the signed URLs of Signer name straight from
// Store (executor.LocalFiles): a run given one of the daemon's own URLs (a
// file of POST /v1/upload_file, a file of an earlier run) reads the file
// from the disk, or from the Store's bucket when another daemon recorded
// it, not over the network, where the daemon's own address is refused to
// runs. The signature is the credential, as for the handler;
// the host of the URL does not matter (it is whatever address the client
// reached the daemon on).
type LocalFiles struct {
	Store  *Store
	Signer *Signer
}

// ErrURLExpired is the error of a signed URL of the daemon's that has
// expired.
var ErrURLExpired = errors.New("the daemon's file URL has expired: fetch the run (or upload the file) again for a fresh URL")

// OpenURL implements executor.LocalFiles. A URL whose path is not one of
// the handler's, or whose signature is not the daemon's, is not the
// daemon's (ok false): it is fetched, and refused if it points at the
// daemon.
func (l LocalFiles) OpenURL(u *url.URL) (io.ReadCloser, string, bool, error) {
	if l.Store == nil || l.Signer == nil || u == nil {
		return nil, "", false, nil
	}
	ref, status, _ := l.Signer.check(u)
	switch status {
	case 0:
	case http.StatusGone:
		return nil, "", true, ErrURLExpired
	default:
		return nil, "", false, nil
	}
	// The run reads the file while it runs; the bucket's object (another
	// daemon's file) is read under no deadline of the request's.
	f, _, err := l.Store.open(context.Background(), ref.orgID, ref.runID, ref.name)
	if err != nil {
		return nil, ref.name, true, errors.New("the daemon's file " + ref.name + " is gone")
	}
	return f, ref.name, true, nil
}

var _ executor.LocalFiles = LocalFiles{}
