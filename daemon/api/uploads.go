package api

import (
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// uploadPath is the route of uploaded files, which withBodyLimit leaves to
// the upload's own limit.
const uploadPath = "/v1/upload_file"

// DefaultMaxUploadSize is the largest file POST /v1/upload_file accepts
// unless WithMaxUploadSize says otherwise: 100 MiB, the most a run fetches
// from a file URL.
const DefaultMaxUploadSize int64 = 100 << 20

// UploadURLLifetime is how long the URL POST /v1/upload_file answers stays
// valid. It is longer than the day of a run's file URLs because the URL is
// meant to be handed to runs started later; GET
// /v1/artifacts/{artifact_id}/content reads the file with the API key at
// any time.
const UploadURLLifetime = 7 * 24 * time.Hour

// multipartSlack is what a request may carry beyond the file itself: the
// multipart boundaries and part headers.
const multipartSlack = 64 << 10

// WithMaxUploadSize caps the files of POST /v1/upload_file at n bytes; a
// larger file is answered 413. n <= 0 keeps DefaultMaxUploadSize.
func WithMaxUploadSize(n int64) ServerOption {
	return func(s *Server) {
		if n > 0 {
			s.maxUpload = n
		}
	}
}

// errUploadTooLarge is the error of a file read past the upload limit.
var errUploadTooLarge = errors.New("the uploaded file is over the size limit")

// uploadLimiter reads a file part and fails with errUploadTooLarge as soon
// as it has given more than max bytes.
type uploadLimiter struct {
	r    io.Reader
	left int64 // max+1 at the start
}

func (l *uploadLimiter) Read(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left <= 0 {
		return n, errUploadTooLarge
	}
	return n, err
}

// handleUploadFile serves POST /v1/upload_file: a multipart/form-data body
// whose "file" part is kept for the organization, in the artifact
// directory, and answered with a signed URL runs can fetch it from (file
// parameters, upload_file actions, file_url_parser blocks) and its
// s3_uri, a stable name of the file (abctl://uploads/<artifact id>/<name>)
// that locates it for people but is not fetched by anything.
func (s filesAPI) handleUploadFile(w http.ResponseWriter, r *http.Request) {
	l := s.exec.links()
	if s.exec == nil || s.exec.Files == nil || l == nil || l.Signer == nil {
		s.error(w, r, errorf(KindUnavailable, "This daemon was started without a file store, so it cannot keep uploaded files"))
		return
	}
	if r.ContentLength > s.maxUpload+multipartSlack {
		s.uploadTooLarge(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.maxUpload+multipartSlack)
	mr, err := r.MultipartReader()
	if err != nil {
		s.error(w, r, invalid([]client.ValidationError{fieldError("missing",
			"Field required: the body must be multipart/form-data with the file in a part named file", nil, "body", "file")}))
		return
	}
	org := organization(r.Context()).ID
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.uploadTooLarge(w, r)
			return
		}
		if err != nil {
			s.error(w, r, errorf(KindBadRequest, "The multipart body could not be read: %v", err))
			return
		}
		if part.FormName() != "file" {
			part.Close()
			continue
		}
		s.saveUpload(w, r, org, part)
		return
	}
	s.error(w, r, invalid([]client.ValidationError{missingField("body", "file")}))
}

// saveUpload keeps the file of part and answers its URLs.
func (s filesAPI) saveUpload(w http.ResponseWriter, r *http.Request, org string, part *multipart.Part) {
	name := uploadFileName(part.FileName())
	dir := s.uploads.NewDir()
	f, err := s.exec.Files.Save(org, dir, name, &uploadLimiter{r: part, left: s.maxUpload + 1})
	if err != nil {
		s.exec.Files.RemoveDir(org, dir)
		var tooBig *http.MaxBytesError
		if errors.Is(err, errUploadTooLarge) || errors.As(err, &tooBig) {
			s.uploadTooLarge(w, r)
			return
		}
		s.error(w, r, err)
		return
	}
	up := &store.Upload{ID: f.ID, Dir: dir, Name: f.Name, Size: f.Size, SHA256: f.SHA256, CreatedAt: f.CreatedAt}
	if err := s.uploads.Create(r.Context(), org, up); err != nil {
		s.exec.Files.RemoveDir(org, dir)
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.UploadFileResponse{
		S3URI:        uploadURI(up),
		PresignedURL: s.exec.links().Signer.URL(baseURL(r), org, dir, up.Name, s.now().Add(UploadURLLifetime)),
	})
}

// uploadTooLarge answers 413 naming the limit and how to raise it.
func (s filesAPI) uploadTooLarge(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	s.error(w, r, errorf(KindTooLarge,
		"The uploaded file is larger than this daemon's limit of %d bytes (set with abctl daemon --max-upload-size)", s.maxUpload))
}

// uploadURI is the s3_uri of an uploaded file: a stable, non-secret name
// that locates it, abctl://uploads/<artifact id>/<name>.
func uploadURI(up *store.Upload) string {
	return "abctl://uploads/" + url.PathEscape(up.ID) + "/" + url.PathEscape(up.Name)
}

// uploadFileName makes the name a client gave its file into the name it
// is kept under (executor.ValidFileName): its last path element, with the
// characters a file name may not hold replaced by '_', cut to
// executor.MaxFileNameLen bytes with its extension kept
// (executor.CutFileName); "upload" when nothing usable is left.
func uploadFileName(given string) string {
	given = path.Base(strings.ReplaceAll(given, `\`, "/"))
	name := strings.Map(func(c rune) rune {
		switch {
		case c == utf8.RuneError, c == ':', unicode.IsControl(c), unicode.Is(unicode.Bidi_Control, c):
			return '_'
		}
		return c
	}, given)
	name = strings.ReplaceAll(name, "..", "_")
	name = strings.TrimLeft(name, ".")
	name = strings.TrimRight(name, ". ")
	name = executor.CutFileName(name, executor.MaxFileNameLen)
	if !executor.ValidFileName(name) {
		return "upload"
	}
	return name
}
