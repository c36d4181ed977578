package runview

// Stored views. GET /v1/runs/{id} is the daemon's most frequent read, and
// decoding a store.RunRecord to encode a client.Run cost ten times the read
// itself. So, as agents' version rows are kept in their answer's shape,
// every write of a run also stores its answer, encoded, as the run's view
// (the store keeps it in run_views/<run id> without reading it, written in
// the same transaction as the record), and a read sends those bytes. Only a
// few parts of the answer depend on the request rather than on the run:
// app_url and the file URLs carry the address the client reached the
// daemon on, and the file URLs are signed with an expiry counted from the
// request. The stored view leaves holes where those strings go, and
// View.AppendJSON fills them in.
//
// The view and the answer built from the record come from the same code,
// Response: the view is its encoding with placeholder URLs, cut where the
// placeholders are. A change of that code or of client.Run's encoding
// makes every stored view stale; the store keeps, in meta/run_view_format,
// the Format of the views it holds (a fingerprint of the encoding), and
// re-makes every view when it opens with Views whose Format differs.

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

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/internal/jsonenc"
)

// Views makes the store's views of runs: give it to a backend's Open
// (boltstore.Open) as store.Options.RunViews.
type Views struct{}

// Format is the fingerprint of how views are made (see format).
func (Views) Format() ([]byte, error) { return format() }

// Encode makes the stored view of rec (see Encode).
func (Views) Encode(rec *store.RunRecord) ([]byte, error) { return Encode(rec) }

var _ store.RunViews = Views{}

// View is a run's stored answer (see the comment at the top of this
// file). Its layout, all integers unsigned varints:
//
//	format (1 byte, viewVersion)
//	number of holes
//	per hole, in the order of the JSON:
//	    offset in the JSON where the hole's string goes
//	    kind (1 byte): holeApp, or holeFile followed by the file's
//	    type and name, each as length and bytes
//	the JSON, without the holes' strings
type View []byte

// viewVersion is the first byte of a View; a new layout gets a new number
// (and changes the Format, so that the store re-makes the views).
const viewVersion = 1

const (
	holeApp  = 0 // the run's app_url
	holeFile = 1 // the URL of one of the run's files
)

// ErrCorrupt is what AppendJSON returns for bytes it cannot read.
var ErrCorrupt = errors.New("runview: corrupt run view")

// errNoFileURLs: the view has file URLs to fill in and no way to make them.
var errNoFileURLs = errors.New("runview: the run view needs file URLs")

// ErrNoView is AppendJSON's answer for a run that exists but whose stored
// view cannot serve this request: it has none (it could not be made when
// the run was written, or the store was opened without Views), the view is
// damaged, or it has files and the caller no way to sign their URLs. Build
// the answer from the record then.
var ErrNoView = errors.New("runview: no usable stored view of the run")

// AppendJSON appends to dst the answer of GET /v1/runs/{id} for a run of
// the organization, from its stored view, with its app_url and file URLs
// made by l for a client that reached the daemon at base: the same bytes
// as jsonenc.Marshal(l.Run(rec, base)). The view is filled in straight
// from the store's pages, inside its read transaction. It fails with
// ErrNotFound (of package store) when there is no such run, with ErrNoView
// when the view cannot serve; on error dst is returned as it was.
func (l *Links) AppendJSON(ctx context.Context, runs store.Runs, dst []byte, base, orgID, runID string) ([]byte, error) {
	out := dst
	appURL, fileURL := AppURL(base, runID), l.FileURLs(base, orgID, runID)
	err := runs.View(ctx, orgID, runID, func(v []byte) error {
		var err error
		if out, err = View(v).AppendJSON(dst, appURL, fileURL); err != nil {
			return fmt.Errorf("%w: %w", ErrNoView, err)
		}
		return nil
	})
	if errors.Is(err, store.ErrNoRunView) {
		err = fmt.Errorf("%w: %w", ErrNoView, err)
	}
	if err != nil {
		return dst, err
	}
	return out, nil
}

// AppendJSON appends the answer to dst: the stored JSON, with appURL and
// the URLs fileURL makes written into the holes. The result is the same
// bytes as jsonenc.Marshal(Response(rec, appURL, fileURL)) for the record
// the view was made from. It fails, appending nothing, for corrupt bytes
// and when the view has files but fileURL is nil: the caller then builds
// the answer from the record.
func (v View) AppendJSON(dst []byte, appURL string, fileURL artifacts.URLFunc) ([]byte, error) {
	if len(v) < 2 || v[0] != viewVersion {
		return dst, ErrCorrupt
	}
	rd := viewReader{b: v[1:]}
	n := rd.uvarint()
	// Each hole takes at least two bytes of header, which bounds n before
	// anything is sized on it.
	if rd.err != nil || n > uint64(len(rd.b))/2 {
		return dst, ErrCorrupt
	}
	// Skip the header once to find the JSON; the holes are read again below.
	hdr := rd
	for range n {
		rd.hole()
	}
	if rd.err != nil {
		return dst, ErrCorrupt
	}
	body := rd.b
	start := len(dst)
	dst = growBytes(dst, len(body)+len(appURL)+2+int(n)*192)
	prev := uint64(0)
	for range n {
		at, kind, typ, name := hdr.hole()
		if at < prev || at > uint64(len(body)) {
			return dst[:start], ErrCorrupt
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
			dst = appendJSONString(dst, fileURL(store.RunFile{Type: client.ArtifactType(typ), Name: name}))
		default:
			return dst[:start], ErrCorrupt
		}
	}
	return append(dst, body[prev:]...), nil
}

// viewReader reads a View's header; err is set at the first problem and
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
		r.err = ErrCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *viewReader) bytes() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = ErrCorrupt
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *viewReader) hole() (at uint64, kind byte, typ, name string) {
	at = r.uvarint()
	if r.err != nil || len(r.b) == 0 {
		r.err = ErrCorrupt
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

// appendJSONString appends s as jsonenc.Marshal writes a string. URLs are
// printable ASCII without quotes or backslashes, which it writes as they
// are; anything else goes through the encoder.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			b, err := jsonenc.Marshal(s)
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
	file store.RunFile
}

// holeMarker starts the placeholder strings a view is encoded with: a
// random nonce per process, so that no text of a run (its output comes
// from web pages) can pass for a placeholder. They never leave the
// process: Encode cuts them out.
var holeMarker = sync.OnceValue(func() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return `"abctl-url-hole-` + hex.EncodeToString(b[:]) + "-"
})

// Encode makes the stored view of rec: its Response encoded with a
// numbered placeholder for every URL that depends on the request, each cut
// out and recorded as a hole.
func Encode(rec *store.RunRecord) (View, error) {
	marker := holeMarker()
	holes := []viewHole{{kind: holeApp}}
	placeholder := func(i int) string { return marker[1:] + strconv.Itoa(i) }
	run := Response(rec, placeholder(0), func(f store.RunFile) string {
		holes = append(holes, viewHole{kind: holeFile, file: f})
		return placeholder(len(holes) - 1)
	})
	body, err := jsonenc.Marshal(run)
	if err != nil {
		return nil, fmt.Errorf("runview: encode the answer of run %s: %w", rec.ID, err)
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
			return nil, fmt.Errorf("runview: run %s: a URL placeholder appears twice or mangled in its answer", rec.ID)
		}
		seen[h] = true
		holes[h].at = len(cut)
		order = append(order, h)
		rest = rest[end+1:]
	}
	if len(order) != len(holes) {
		return nil, fmt.Errorf("runview: run %s: %d of %d URL placeholders missing from its answer", rec.ID, len(holes)-len(order), len(holes))
	}
	out := make([]byte, 0, len(cut)+16+len(holes)*48)
	out = append(out, viewVersion)
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

// format is a fingerprint of how views are made: the views of a set of
// sample runs covering every field and kind of file. Any change to
// Response, to client.Run's encoding or to the layout changes it, and the
// store then re-makes the stored views when it opens.
var format = sync.OnceValues(func() ([]byte, error) {
	h := sha256.New()
	for _, rec := range viewSamples() {
		view, err := Encode(rec)
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
func viewSamples() []*store.RunRecord {
	at := func(sec int) *client.Time {
		return client.TimePtr(time.Date(2026, 1, 31, 15, 20, sec, 160725000, time.UTC))
	}
	steps, scrolls := 3, 2
	full := &store.RunRecord{
		ID: "tsk_1", OrgID: "o_1", Type: client.RunTypeTaskV1, Status: client.RunStatusCompleted,
		CreatedAt: *at(1), ModifiedAt: *at(5), QueuedAt: at(2), StartedAt: at(3), FinishedAt: at(4),
		RunRequest: json.RawMessage(`{"prompt":"p <&>","url":"https://example.com/"}`),
		Task: &client.TaskRunRequest{Prompt: "p", MaxScreenshotScrolls: &scrolls,
			BrowserSessionID: "pbs_1", BrowserProfileID: "bp_1"},
		Output: json.RawMessage(`{"a":[1,"<é>"]}`), FailureReason: "why \"not\"",
		WebhookFailureReason: "Webhook failed with status code 500",
		Errors:               []json.RawMessage{json.RawMessage(`{"e":1}`)}, StepCount: &steps,
		Files: []store.RunFile{
			{ID: "a_1", Type: client.ArtifactScreenshotAction, Name: "s1.jpg", Size: 1, SHA256: "00", CreatedAt: *at(3)},
			{ID: "a_2", Type: client.ArtifactRecording, Name: "r.webm", Size: 2, SHA256: "01", CreatedAt: *at(4)},
			{ID: "a_3", Type: client.ArtifactDownload, Name: "d.csv", Size: 3, SHA256: "02", CreatedAt: *at(4)},
			{ID: "a_4", Type: client.ArtifactScreenshotFinal, Name: "s2.jpg", Size: 4, SHA256: "03", CreatedAt: *at(4)},
		},
	}
	agent := *full
	agent.ID, agent.Type, agent.Task = "wr_1", client.RunTypeWorkflowRun, nil
	bare := &store.RunRecord{ID: "tsk_v2_1", OrgID: "o_1", Type: client.RunTypeTaskV2, Status: client.RunStatusQueued,
		CreatedAt: *at(1), ModifiedAt: *at(1), QueuedAt: at(1)}
	return []*store.RunRecord{full, &agent, bare}
}
