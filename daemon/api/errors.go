package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// Kind classifies an error the API reports. kindStatus is the one table
// from kinds to HTTP statuses; handlers never write a status themselves.
type Kind int

// Error kinds.
const (
	KindInternal    Kind = iota // 500: a bug or a broken disk; the client sees a generic message
	KindBadRequest              // 400: a request that is well-formed but cannot be done as asked
	KindForbidden               // 403: missing or unknown API key
	KindNotFound                // 404
	KindConflict                // 409
	KindInvalid                 // 422: the request does not validate
	KindUnavailable             // 503: the daemon cannot do this now (no run executor)
	KindTooLarge                // 413: the request's body is over the route's limit
)

var kindStatus = map[Kind]int{
	KindInternal:    http.StatusInternalServerError,
	KindBadRequest:  http.StatusBadRequest,
	KindForbidden:   http.StatusForbidden,
	KindNotFound:    http.StatusNotFound,
	KindConflict:    http.StatusConflict,
	KindInvalid:     http.StatusUnprocessableEntity,
	KindUnavailable: http.StatusServiceUnavailable,
	KindTooLarge:    http.StatusRequestEntityTooLarge,
}

// actionKinds maps the kinds of the engine's action errors to the API's;
// an action error of no known kind is a 422, as one the page could not do.
var actionKinds = map[executor.ActionErrorKind]Kind{
	executor.ActionInvalid:     KindBadRequest,
	executor.ActionConflict:    KindConflict,
	executor.ActionUnavailable: KindUnavailable,
	executor.ActionFailed:      KindInvalid,
}

// actionKind is the API's kind of an engine's action error of kind k.
func actionKind(k executor.ActionErrorKind) Kind {
	if kind, ok := actionKinds[k]; ok {
		return kind
	}
	return KindInvalid
}

// Error is an error with a kind and the detail the client is shown. The
// body is {"detail": Detail}, or {"detail": Validation} when Validation is
// set: the shapes the hosted service answers, which the client decodes.
type Error struct {
	Kind       Kind
	Detail     string
	Validation []client.ValidationError
}

func (e *Error) Error() string {
	if len(e.Validation) > 0 {
		return fmt.Sprintf("%d validation errors, first: %s", len(e.Validation), e.Validation[0])
	}
	return e.Detail
}

func errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// toAPIError maps any error to an *Error: the kind of an *Error; for the
// store's errors, the kind of their sentinel and the detail the hosted
// service words for that record (storeDetail); KindInternal for
// everything else.
func toAPIError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &Error{Kind: KindNotFound, Detail: storeDetail(err)}
	case errors.Is(err, store.ErrConflict):
		return &Error{Kind: KindConflict, Detail: storeDetail(err)}
	case errors.Is(err, store.ErrInvalid):
		return &Error{Kind: KindInvalid, Detail: storeDetail(err)}
	}
	return &Error{Kind: KindInternal, Detail: "Internal server error"}
}

// storeDetail words an error of the store for the client, as the hosted
// service words it ("Folder fld_1 not found"); an error without a record
// is shown as the store words it.
func storeDetail(err error) string {
	var nf *store.NotFoundError
	var cf *store.ConflictError
	var tags *store.TooManyTagsError
	switch {
	case errors.As(err, &nf):
		switch nf.Record {
		case store.RecordAgent:
			if nf.Version != 0 {
				return fmt.Sprintf("Workflow not found. workflow_permanent_id=%s, version=%d", nf.ID, nf.Version)
			}
			return fmt.Sprintf("Workflow not found. workflow_permanent_id=%s", nf.ID)
		case store.RecordTagValue:
			return fmt.Sprintf("Tag value %s:%s not found", nf.ID, nf.Value)
		}
		return fmt.Sprintf("%s %s not found", recordNoun(nf.Record), nf.ID)
	case errors.As(err, &cf):
		if cf.Record == store.RecordTagValue {
			return fmt.Sprintf("Tag value %s:%s already exists", cf.ID, cf.Value)
		}
		return fmt.Sprintf("%s %s already exists", recordNoun(cf.Record), cf.ID)
	case errors.As(err, &tags):
		noun := "Workflow"
		if tags.Subject.Kind == store.RunSubject {
			noun = "Workflow run"
		}
		return fmt.Sprintf("%s %s would carry %d tags; at most %d are allowed", noun, tags.Subject.ID, tags.Tags, tags.Max)
	}
	return err.Error()
}

// recordNoun names a kind of record in the details of errors.
func recordNoun(r store.Record) string {
	switch r {
	case store.RecordOrganization:
		return "Organization"
	case store.RecordFolder:
		return "Folder"
	case store.RecordRun:
		return "Run"
	case store.RecordWorkflowRun:
		return "Workflow run"
	case store.RecordTagKey:
		return "Tag key"
	case store.RecordCredential:
		return "Credential"
	case store.RecordProfile:
		return "Browser profile"
	case store.RecordSession:
		return "Browser session"
	case store.RecordSchedule:
		return "Schedule"
	}
	return string(r)
}

// writeError answers err. Internal errors are logged with the request id and
// shown to the client as a generic message, never with their text.
func writeError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	e := toAPIError(err)
	status := kindStatus[e.Kind]
	if e.Kind == KindInternal {
		logger.ErrorContext(r.Context(), "internal error", "request_id", requestID(r.Context()),
			"method", r.Method, "path", r.URL.Path, "error", err.Error())
	}
	var body any = map[string]string{"detail": e.Detail}
	if len(e.Validation) > 0 {
		body = map[string][]client.ValidationError{"detail": e.Validation}
	}
	writeJSON(w, status, body)
}

// writeJSON answers v as compact JSON with raw UTF-8, as the hosted service
// does.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshalJSON(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"detail":"Internal server error"}`)
	}
	w.Header()["Content-Type"] = headerJSONResponse
	w.WriteHeader(status)
	w.Write(b)
}

// writeRawJSON answers JSON that is already encoded (a stored row sent as
// it is). It states the length: net/http would otherwise send an answer of
// more than 2 KB (an agent) chunked.
func writeRawJSON(w http.ResponseWriter, status int, raw []byte) {
	h := w.Header()
	h["Content-Type"] = headerJSONResponse
	h["Content-Length"] = []string{strconv.Itoa(len(raw))}
	w.WriteHeader(status)
	w.Write(raw)
}

// answerBuffers recycles the buffers that stored answers (agents' rows,
// runs' views) are copied into on their way out: a few KB per read, which
// at tens of thousands of reads a second made most of the daemon's
// garbage.
var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledAnswer is the largest buffer kept for reuse; a rare huge answer
// should not stay in memory.
const maxPooledAnswer = 256 << 10

// writeAppended answers 200 with what appendTo appends to a recycled
// buffer, or, when appendTo fails, writes nothing and returns its error.
func writeAppended(w http.ResponseWriter, appendTo func(dst []byte) ([]byte, error)) error {
	bp := answerBuffers.Get().(*[]byte)
	b, err := appendTo((*bp)[:0])
	if err == nil {
		// Write copies b (into the connection's buffer or the socket), so
		// it can be reused once Write returns.
		writeRawJSON(w, http.StatusOK, b)
	}
	if cap(b) <= maxPooledAnswer {
		*bp = b[:0]
		answerBuffers.Put(bp)
	}
	return err
}

// writeRawJSONList answers a JSON array of already encoded values.
func writeRawJSONList(w http.ResponseWriter, items []json.RawMessage) {
	n := 2
	for _, it := range items {
		n += len(it) + 1
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '[')
	for i, it := range items {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, it...)
	}
	buf = append(buf, ']')
	writeRawJSON(w, http.StatusOK, buf)
}
