package store

// Run views. GET /v1/runs/{id} is the daemon's most frequent read, and
// decoding a RunRecord to encode a client.Run cost ten times the read
// itself. So, as agents' version rows are kept in their answer's shape,
// every write of a run also stores its answer, encoded (run_views/<run id>),
// and a read sends those bytes. Only a few parts of the answer depend on
// the request rather than on the run: app_url and the file URLs carry the
// address the client reached the daemon on, and the file URLs are signed
// with an expiry counted from the request. The stored view leaves holes
// where those strings go, and AppendJSON fills them in.
//
// The view and the answer built from the record come from the same code,
// RunRecord.Response: the view is its encoding with placeholder URLs, cut
// where the placeholders are. A change of that code or of client.Run's
// encoding makes every stored view stale; meta/run_view_format holds a
// fingerprint of the encoding (runViewFormat), and Open re-encodes every
// view when it differs.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/artifacts"
)

// Response returns the run as GET /v1/runs/{id} answers it, with appURL as
// its app_url and the URLs of its files from fileURL; a nil fileURL leaves
// the file URLs out (a daemon that cannot sign them).
func (r *RunRecord) Response(appURL string, fileURL artifacts.URLFunc) *client.Run {
	run := &client.Run{
		RunID:      r.ID,
		Status:     r.Status,
		Output:     r.Output,
		CreatedAt:  r.CreatedAt,
		ModifiedAt: r.ModifiedAt,
		QueuedAt:   r.QueuedAt,
		StartedAt:  r.StartedAt,
		FinishedAt: r.FinishedAt,
		Errors:     r.Errors,
		StepCount:  r.StepCount,
		RunType:    r.Type,
		RunRequest: r.RunRequest,
		AppURL:     client.Ptr(appURL),
	}
	if r.FailureReason != "" {
		run.FailureReason = client.Ptr(r.FailureReason)
	}
	if r.WebhookFailureReason != "" {
		run.WebhookFailureReason = client.Ptr(r.WebhookFailureReason)
	}
	if r.Task != nil {
		run.MaxScreenshotScrolls = r.Task.MaxScreenshotScrolls
		if r.Task.BrowserSessionID != "" {
			run.BrowserSessionID = client.Ptr(r.Task.BrowserSessionID)
		}
		if r.Task.BrowserProfileID != "" {
			run.BrowserProfileID = client.Ptr(r.Task.BrowserProfileID)
		}
	}
	if r.Type == client.RunTypeWorkflowRun {
		run.RunWith = client.Ptr("agent")
	}
	if run.Errors == nil {
		run.Errors = []json.RawMessage{}
	}
	if fileURL != nil && len(r.Files) > 0 {
		run.ScreenshotURLs = artifacts.ScreenshotURLs(r.Files, 0, fileURL)
		run.RecordingURL = artifacts.RecordingURL(r.Files, fileURL)
		run.DownloadedFiles = artifacts.FileInfos(r.Files, fileURL)
	}
	return run
}

// EncodeResponse encodes an answer as the API writes JSON: compact, raw
// UTF-8 (no HTML escaping). Stored views are made with it, so that a view
// filled in is byte for byte the answer encoded this way.
func EncodeResponse(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// RunView is a run's stored answer (see the comment at the top of this
// file). Its layout, all integers unsigned varints:
//
//	format (1 byte, runViewVersion)
//	number of holes
//	per hole, in the order of the JSON:
//	    offset in the JSON where the hole's string goes
//	    kind (1 byte): holeApp, or holeFile followed by the file's
//	    type and name, each as length and bytes
//	the JSON, without the holes' strings
type RunView []byte

// runViewVersion is the first byte of a stored RunView; a new layout gets a
// new number (and changes runViewFormat, so Open re-encodes the views).
const runViewVersion = 1

const (
	holeApp  = 0 // the run's app_url
	holeFile = 1 // the URL of one of the run's files
)

// ErrCorruptView is what AppendJSON returns for bytes it cannot read.
var ErrCorruptView = errors.New("store: corrupt run view")

// errNoFileURLs: the view has file URLs to fill in and no way to make them.
var errNoFileURLs = errors.New("store: the run view needs file URLs")

// AppendJSON appends the answer to dst: the stored JSON, with appURL and
// the URLs fileURL makes written into the holes. The result is the same
// bytes as EncodeResponse(rec.Response(appURL, fileURL)) for the record the
// view was made from. It fails, appending nothing, for corrupt bytes and
// when the view has files but fileURL is nil: the caller then builds the
// answer from the record.
func (v RunView) AppendJSON(dst []byte, appURL string, fileURL artifacts.URLFunc) ([]byte, error) {
	if len(v) < 2 || v[0] != runViewVersion {
		return dst, ErrCorruptView
	}
	rd := viewReader{b: v[1:]}
	n := rd.uvarint()
	// Each hole takes at least two bytes of header, which bounds n before
	// anything is sized on it.
	if rd.err != nil || n > uint64(len(rd.b))/2 {
		return dst, ErrCorruptView
	}
	// Skip the header once to find the JSON; the holes are read again below.
	hdr := rd
	for range n {
		rd.hole()
	}
	if rd.err != nil {
		return dst, ErrCorruptView
	}
	body := rd.b
	start := len(dst)
	dst = growBytes(dst, len(body)+len(appURL)+2+int(n)*192)
	prev := uint64(0)
	for range n {
		at, kind, typ, name := hdr.hole()
		if at < prev || at > uint64(len(body)) {
			return dst[:start], ErrCorruptView
		}
		dst = append(dst, body[prev:at]...)
		prev = at
		switch kind {
		case holeApp:
			dst = appendJSONString(dst, appURL)
		case holeFile:
			if fileURL == nil {
				return dst[:start], errNoFileURLs
			}
			dst = appendJSONString(dst, fileURL(RunFile{Type: client.ArtifactType(typ), Name: name}))
		default:
			return dst[:start], ErrCorruptView
		}
	}
	return append(dst, body[prev:]...), nil
}

// viewReader reads a RunView's header; err is set at the first problem and
// every read after it returns zeros.
type viewReader struct {
	b   []byte
	err error
}

func (r *viewReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = ErrCorruptView
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *viewReader) bytes() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = ErrCorruptView
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *viewReader) hole() (at uint64, kind byte, typ, name string) {
	at = r.uvarint()
	if r.err != nil || len(r.b) == 0 {
		r.err = ErrCorruptView
		return 0, 0, "", ""
	}
	kind, r.b = r.b[0], r.b[1:]
	if kind == holeFile {
		typ, name = r.bytes(), r.bytes()
	}
	return at, kind, typ, name
}

func growBytes(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), len(b)+n)
	copy(nb, b)
	return nb
}

// appendJSONString appends s as EncodeResponse writes a string. URLs are
// printable ASCII without quotes or backslashes, which it writes as they
// are; anything else goes through the encoder.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			b, err := EncodeResponse(s)
			if err != nil { // a string always encodes
				panic(err)
			}
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// viewHole is a hole of a view being made.
type viewHole struct {
	at   int
	kind byte
	file RunFile
}

// holeMarker starts the placeholder strings a view is encoded with: a
// random nonce per process, so that no text of a run (its output comes
// from web pages) can pass for a placeholder. They never leave the
// process: encodeRunView cuts them out.
var holeMarker = sync.OnceValue(func() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return `"abctl-url-hole-` + hex.EncodeToString(b[:]) + "-"
})

// encodeRunView makes the stored view of rec: its Response encoded with a
// numbered placeholder for every URL that depends on the request, each cut
// out and recorded as a hole.
func encodeRunView(rec *RunRecord) (RunView, error) {
	marker := holeMarker()
	holes := []viewHole{{kind: holeApp}}
	placeholder := func(i int) string { return marker[1:] + strconv.Itoa(i) }
	run := rec.Response(placeholder(0), func(f RunFile) string {
		holes = append(holes, viewHole{kind: holeFile, file: f})
		return placeholder(len(holes) - 1)
	})
	body, err := EncodeResponse(run)
	if err != nil {
		return nil, fmt.Errorf("store: encode the answer of run %s: %w", rec.ID, err)
	}
	// Find the placeholders in the order of the JSON; each must appear
	// exactly once.
	seen := make([]bool, len(holes))
	order := make([]int, 0, len(holes))
	cut := make([]byte, 0, len(body))
	for rest := body; ; {
		i := bytes.Index(rest, []byte(marker))
		if i < 0 {
			cut = append(cut, rest...)
			break
		}
		cut = append(cut, rest[:i]...)
		rest = rest[i+len(marker):]
		end := bytes.IndexByte(rest, '"')
		h, err := strconv.Atoi(string(rest[:max(end, 0)]))
		if end < 0 || err != nil || h < 0 || h >= len(holes) || seen[h] {
			return nil, fmt.Errorf("store: run %s: a URL placeholder appears twice or mangled in its answer", rec.ID)
		}
		seen[h] = true
		holes[h].at = len(cut)
		order = append(order, h)
		rest = rest[end+1:]
	}
	if len(order) != len(holes) {
		return nil, fmt.Errorf("store: run %s: %d of %d URL placeholders missing from its answer", rec.ID, len(holes)-len(order), len(holes))
	}
	out := make([]byte, 0, len(cut)+16+len(holes)*48)
	out = append(out, runViewVersion)
	out = binary.AppendUvarint(out, uint64(len(holes)))
	for _, h := range order {
		out = binary.AppendUvarint(out, uint64(holes[h].at))
		out = append(out, holes[h].kind)
		if holes[h].kind == holeFile {
			out = binary.AppendUvarint(out, uint64(len(holes[h].file.Type)))
			out = append(out, holes[h].file.Type...)
			out = binary.AppendUvarint(out, uint64(len(holes[h].file.Name)))
			out = append(out, holes[h].file.Name...)
		}
	}
	return append(out, cut...), nil
}

// putRunView stores rec's view, or removes a stale one when rec's answer
// cannot be encoded (then reads build it from the record, and fail as the
// encoding does).
func putRunView(o *orgTx, rec *RunRecord) error {
	view, err := encodeRunView(rec)
	if err != nil {
		return o.runViews().Delete([]byte(rec.ID))
	}
	return o.runViews().Put([]byte(rec.ID), view)
}

// ErrNoRunView is AppendRunJSON's answer for a run that exists but whose
// stored answer cannot serve this request: it has none (its answer could
// not be encoded when it was written), the view is damaged, or it has
// files and the caller no fileURL. Build the answer from GetRun then.
var ErrNoRunView = errors.New("store: no usable stored answer for the run")

// AppendRunJSON appends to dst the answer of GET /v1/runs/{id} for a run
// of the organization: its stored view (see the top of this file) with
// appURL and the URLs fileURL makes written into it, the same bytes as
// EncodeResponse(run.Response(appURL, fileURL)). ErrNotFound when there is
// no such run, ErrNoRunView when the view cannot serve; on error dst is
// returned as it was.
func (s *Store) AppendRunJSON(ctx context.Context, dst []byte, orgID, id, appURL string, fileURL artifacts.URLFunc) ([]byte, error) {
	out := dst
	err := s.viewOrg(ctx, orgID, func(o *orgTx) error {
		if !validID(id) {
			return runNotFound(id)
		}
		v := o.runViews().Get([]byte(id))
		if v == nil {
			if o.runs().Get([]byte(id)) == nil {
				return runNotFound(id)
			}
			return ErrNoRunView
		}
		// Filled in straight from the file's pages, which are only valid
		// in the transaction; signing a few URLs keeps it short.
		var err error
		if out, err = RunView(v).AppendJSON(dst, appURL, fileURL); err != nil {
			return fmt.Errorf("%w: %w", ErrNoRunView, err)
		}
		return nil
	})
	if err != nil {
		return dst, err
	}
	return out, nil
}

// runViewFormat is a fingerprint of how views are made: the views of a set
// of sample runs covering every field and kind of file. Any change to
// RunRecord.Response, to client.Run's encoding or to the layout changes it,
// and Open then re-encodes the stored views (refreshRunViews).
var runViewFormat = sync.OnceValues(func() ([]byte, error) {
	h := sha256.New()
	for _, rec := range viewSamples() {
		view, err := encodeRunView(rec)
		if err != nil {
			return nil, err
		}
		binary.Write(h, binary.BigEndian, uint64(len(view)))
		h.Write(view)
	}
	return h.Sum(nil), nil
})

// viewSamples are runs with every field of a record set, a task run and an
// agent run, and a bare queued one.
func viewSamples() []*RunRecord {
	at := func(sec int) *client.Time {
		return client.TimePtr(time.Date(2026, 1, 31, 15, 20, sec, 160725000, time.UTC))
	}
	steps, scrolls := 3, 2
	full := &RunRecord{
		ID: "tsk_1", OrgID: "o_1", Type: client.RunTypeTaskV1, Status: client.RunStatusCompleted,
		CreatedAt: *at(1), ModifiedAt: *at(5), QueuedAt: at(2), StartedAt: at(3), FinishedAt: at(4),
		RunRequest: json.RawMessage(`{"prompt":"p <&>","url":"https://example.com/"}`),
		Task: &client.TaskRunRequest{Prompt: "p", MaxScreenshotScrolls: &scrolls,
			BrowserSessionID: "pbs_1", BrowserProfileID: "bp_1"},
		Output: json.RawMessage(`{"a":[1,"<é>"]}`), FailureReason: "why \"not\"",
		WebhookFailureReason: "Webhook failed with status code 500",
		Errors:               []json.RawMessage{json.RawMessage(`{"e":1}`)}, StepCount: &steps,
		Files: []RunFile{
			{ID: "a_1", Type: client.ArtifactScreenshotAction, Name: "s1.jpg", Size: 1, SHA256: "00", CreatedAt: *at(3)},
			{ID: "a_2", Type: client.ArtifactRecording, Name: "r.webm", Size: 2, SHA256: "01", CreatedAt: *at(4)},
			{ID: "a_3", Type: client.ArtifactDownload, Name: "d.csv", Size: 3, SHA256: "02", CreatedAt: *at(4)},
			{ID: "a_4", Type: client.ArtifactScreenshotFinal, Name: "s2.jpg", Size: 4, SHA256: "03", CreatedAt: *at(4)},
		},
	}
	agent := *full
	agent.ID, agent.Type, agent.Task = "wr_1", client.RunTypeWorkflowRun, nil
	bare := &RunRecord{ID: "tsk_v2_1", OrgID: "o_1", Type: client.RunTypeTaskV2, Status: client.RunStatusQueued,
		CreatedAt: *at(1), ModifiedAt: *at(1), QueuedAt: at(1)}
	return []*RunRecord{full, &agent, bare}
}

// keyRunViewFormat is meta's key for runViewFormat of the views stored.
var keyRunViewFormat = []byte("run_view_format")

// refreshRunViews re-encodes every run's view when the stored views were
// made differently from how this binary makes them (or not at all: a
// store migrated from schema 3), in one write transaction.
func refreshRunViews(db *bolt.DB) error {
	format, err := runViewFormat()
	if err != nil {
		return fmt.Errorf("store: run views: %w", err)
	}
	var current bool
	if err := db.View(func(tx *bolt.Tx) error {
		current = bytes.Equal(tx.Bucket(bucketMeta).Get(keyRunViewFormat), format)
		return nil
	}); err != nil || current {
		return err
	}
	return db.Update(func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketOrgData)
		err := data.ForEachBucket(func(orgID []byte) error {
			o, err := openOrg(tx, string(orgID))
			if err != nil {
				return err
			}
			return o.runs().ForEach(func(k, v []byte) error {
				rec := new(RunRecord)
				if err := json.Unmarshal(v, rec); err != nil {
					return fmt.Errorf("run %s of %s: %w", k, orgID, err)
				}
				return putRunView(o, rec)
			})
		})
		if err != nil {
			return fmt.Errorf("store: re-encode the runs' answers: %w", err)
		}
		return tx.Bucket(bucketMeta).Put(keyRunViewFormat, format)
	})
}
