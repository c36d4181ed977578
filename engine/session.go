package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/engine/browser"
	"github.com/abctl/abctl/engine/page"
	"github.com/abctl/abctl/engine/record"
	"github.com/abctl/abctl/executor"
)

// run is the browser side of one execution (an agent run, or the session of
// a run_action workflow run): the session, a Page per tab, the recording and
// the files written so far. Its methods are not safe for concurrent use.
type run struct {
	e        *Engine
	dir      string
	sess     *browser.Session
	progress executor.Progress

	params   map[string]any
	outputs  *outputs
	maxSteps int
	execs    int // block executions, a guard against endless routing

	tab     context.Context // the tab last acted on
	pages   map[context.Context]*page.Page
	watches map[context.Context]*tabWatch // the loading state of each tab (settle.go)
	rec     *record.Recorder

	steps     int
	shotSeq   int
	shots     []string
	downloads []string          // file names in dir, in the order they appeared
	seen      map[string]string // browser download path -> name in dir
	tmpDir    string            // files to upload; removed at the end
	ended     bool

	// The agent's side (agent.go).
	ag           *agentLog
	tag          string            // the random tag of the page markers in prompts
	tabIDs       map[string]string // short tab id of the prompt -> target id
	privateStart bool              // the run started on a local or private address
	errs         []json.RawMessage // the run's errors
	def          *client.WorkflowDefinition
	agentModel   client.Model // the agent's model object
	summaries    []string     // what the goals did, for the run's summary
}

func newRun(e *Engine, dir string, sess *browser.Session, progress executor.Progress) *run {
	return &run{
		e: e, dir: dir, sess: sess, progress: progress,
		outputs: newOutputs(),
		pages:   map[context.Context]*page.Page{},
		watches: map[context.Context]*tabWatch{},
		seen:    map[string]string{},
		ag:      &agentLog{},
		tag:     newTag(),
	}
}

// startRecording starts the video of the session when ffmpeg is there. A
// recording that cannot start is logged; the run goes on.
func (r *run) startRecording(ctx context.Context) {
	if r.e.ffmpeg == "" {
		return
	}
	tab, err := r.sess.ActiveTab(ctx)
	if err != nil {
		r.e.log.Warn("no recording: no tab", "error", err)
		return
	}
	rec, err := record.Start(context.WithoutCancel(ctx), tab, recordingPath(r.dir), record.Options{FFmpeg: r.e.ffmpeg})
	if err != nil {
		r.e.log.Warn("the run is not recorded", "error", err)
		return
	}
	r.rec = rec
	r.tab = tab
}

// page returns the Page of the active tab (the one a popup made active,
// say), and makes the recording follow it.
func (r *run) page(ctx context.Context) (*page.Page, error) {
	actx, cancel := context.WithTimeout(ctx, 3*time.Second)
	tab, err := r.sess.ActiveTab(actx)
	cancel()
	if err != nil {
		if serr := r.sess.Ended(ctx); serr != nil {
			return nil, fmt.Errorf("the browser session ended: %w", serr)
		}
		return nil, err
	}
	pg, ok := r.pages[tab]
	if !ok {
		pg = page.New(tab)
		r.pages[tab] = pg
		r.watches[tab] = newTabWatch(tab)
	}
	if tab != r.tab {
		r.tab = tab
		if r.rec != nil {
			if err := r.rec.Follow(tab); err != nil {
				r.e.log.Debug("the recording does not follow the new tab", "error", err)
			}
		}
	}
	return pg, nil
}

// step counts one action.
func (r *run) step() error {
	if r.maxSteps > 0 && r.steps >= r.maxSteps {
		return errStepLimit
	}
	r.steps++
	r.progress.Step(r.steps)
	return nil
}

var errStepLimit = errors.New("the step limit is reached")

// screenshot takes a JPEG of the active tab into the run's directory and
// reports it. Failures are logged: a missing screenshot never fails a run.
func (r *run) screenshot(ctx context.Context) {
	if ctx.Err() != nil || r.sess.Err() != nil {
		return
	}
	pg, err := r.page(ctx)
	if err != nil {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	jpg, err := pg.Screenshot(sctx, 0)
	if err != nil {
		r.e.log.Debug("no screenshot", "error", err)
		return
	}
	r.keepScreenshot(jpg)
}

// keepScreenshot writes a JPEG into the run's directory as its next
// screenshot and reports it.
func (r *run) keepScreenshot(jpg []byte) {
	r.shotSeq++
	name, err := r.writeFile(fmt.Sprintf("screenshot-%04d.jpg", r.shotSeq), jpg)
	if err != nil {
		r.e.log.Warn("screenshot not written", "error", err)
		return
	}
	r.shots = append(r.shots, name)
	r.progress.Screenshot(name)
}

// writeFile writes data into the run's directory under name, or under a
// free variant of it ("name (1).ext") when name is taken, and returns the
// name used. A name the artifact store would refuse is replaced.
func (r *run) writeFile(name string, data []byte) (string, error) {
	f, name, err := createUnique(r.dir, name)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(filepath.Join(r.dir, name))
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(filepath.Join(r.dir, name))
		return "", err
	}
	return name, nil
}

// createUnique creates a new file in dir named name or a free variant.
func createUnique(dir, name string) (*os.File, string, error) {
	name = safeName(name, "file")
	ext := fileExt(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 0; i < 1000; i++ {
		try := name
		if i > 0 {
			try = fmt.Sprintf("%s (%d)%s", stem, i, ext)
		}
		if try == RecordingName || try == RecordingName+".part" || try == StepsName || try == StepsName+".part" {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, try), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return f, try, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("too many files named %q", name)
}

// safeName turns a suggested name into one the artifact store accepts, or
// def (with the extension of the suggestion when it is sane).
func safeName(name, def string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case r == utf8.RuneError, r < 0x20, r == 0x7f, strings.ContainsRune(`<>:"|?*`, r):
			return '_'
		}
		return r
	}, name)
	name = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(name), "."))
	name = strings.TrimRight(name, ". ")
	for strings.Contains(name, "..") {
		name = strings.ReplaceAll(name, "..", ".")
	}
	if len(name) > 200 {
		ext := fileExt(name)
		if len(ext) > 20 {
			ext = ""
		}
		stem := name[:200-len(ext)]
		for !utf8.ValidString(stem) {
			stem = stem[:len(stem)-1]
		}
		name = stem + ext
	}
	if executor.ValidFileName(name) {
		return name
	}
	ext := fileExt(name)
	if ext != "" && executor.ValidFileName(def+ext) {
		return def + ext
	}
	return def
}

func fileExt(name string) string {
	ext := filepath.Ext(name)
	if ext == name || len(ext) > 16 {
		return ""
	}
	return ext
}

// syncDownloads adds the downloads the browser completed since the last
// call to the run's files, renaming a file whose name the artifact store
// would refuse. It returns the names added.
func (r *run) syncDownloads() []string {
	var added []string
	for _, d := range r.sess.Downloads() {
		if _, ok := r.seen[d.Path]; ok {
			continue
		}
		name := d.Name
		if !executor.ValidFileName(name) || filepath.Dir(d.Path) != filepath.Clean(r.dir) {
			if moved, err := r.adopt(d.Path, d.Name); err == nil {
				name = moved
			} else {
				r.e.log.Warn("download not kept", "file", d.Name, "error", err)
				r.seen[d.Path] = ""
				continue
			}
		}
		r.seen[d.Path] = name
		r.downloads = append(r.downloads, name)
		added = append(added, name)
	}
	return added
}

// adopt moves a file into the run's directory under a valid free name.
func (r *run) adopt(path, suggested string) (string, error) {
	f, name, err := createUnique(r.dir, suggested)
	if err != nil {
		return "", err
	}
	f.Close()
	if err := os.Rename(path, filepath.Join(r.dir, name)); err != nil {
		os.Remove(filepath.Join(r.dir, name))
		return "", err
	}
	return name, nil
}

// addFile records a file the engine wrote as a downloaded file.
func (r *run) addFile(name string) {
	r.downloads = append(r.downloads, name)
}

// fileInfo describes a file of the run's directory for a block's output.
func (r *run) fileInfo(name string) map[string]any {
	info := map[string]any{"filename": name}
	f, err := os.Open(filepath.Join(r.dir, name))
	if err != nil {
		return info
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return info
	}
	info["file_size"] = n
	info["checksum"] = hex.EncodeToString(h.Sum(nil))
	return info
}

// waitDownload waits until a download that started after the counts given
// completes, up to timeout, and returns the names of the new files.
func (r *run) waitDownload(ctx context.Context, doneBefore, failedBefore int, timeout time.Duration) ([]string, error) {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		done := r.sess.Downloads()
		if len(done) > doneBefore && r.sess.PendingDownloads() == 0 {
			break
		}
		if failed := r.sess.FailedDownloads(); len(failed) > failedBefore && len(done) == doneBefore && r.sess.PendingDownloads() == 0 {
			f := failed[len(failed)-1]
			return nil, fmt.Errorf("the download of %s failed: %s", f.Name, f.Reason)
		}
		if err := r.sess.Err(); err != nil {
			return nil, fmt.Errorf("the browser session ended: %w", err)
		}
		if time.Now().After(deadline) {
			if len(done) > doneBefore {
				break // a later download is still running; keep what finished
			}
			if r.sess.PendingDownloads() > 0 {
				return nil, fmt.Errorf("the download did not finish within %s", timeout)
			}
			return nil, fmt.Errorf("no download started within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
	added := r.syncDownloads()
	if len(added) == 0 {
		return nil, errors.New("the download finished but its file could not be kept")
	}
	return added, nil
}

// finish ends the execution: it waits for downloads in progress (bounded),
// stops the recording, closes the session and returns the files. When ctx
// is done it hurries, since the daemon waits for the run to return.
func (r *run) finish(ctx context.Context) executor.Result {
	if r.ended {
		return r.result()
	}
	r.ended = true
	budget := 60 * time.Second
	if ctx.Err() != nil {
		budget = 1500 * time.Millisecond
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	defer cancel()
	if ctx.Err() == nil && r.sess.Err() == nil {
		wctx, wcancel := context.WithTimeout(cctx, 30*time.Second)
		if err := r.sess.WaitDownloads(wctx); err != nil {
			r.e.log.Warn("downloads left unfinished", "error", err)
		}
		wcancel()
	}
	r.syncDownloads()
	var recording string
	if r.rec != nil {
		path, err := r.rec.Stop(cctx)
		switch {
		case err == nil:
			recording = filepath.Base(path)
		case errors.Is(err, record.ErrNoFrames):
			r.e.log.Info("no recording: no frame was captured")
		default:
			r.e.log.Warn("the recording could not be finished", "error", err)
		}
	}
	for _, pg := range r.pages {
		pg.Close()
	}
	if err := r.sess.Close(cctx); err != nil {
		r.e.log.Debug("closing the browser session", "error", err)
	}
	if r.tmpDir != "" {
		os.RemoveAll(r.tmpDir)
	}
	var logs []string
	if !r.ag.empty() {
		name := r.stepsName()
		if err := r.ag.write(r.dir, name); err != nil {
			r.e.log.Warn("the step log was not written", "error", err)
		} else {
			logs = append(logs, name)
		}
	}
	res := r.result()
	res.Recording = recording
	res.Logs = logs
	return res
}

// stepsName is the name of the step log: StepsName, unless the page
// downloaded a file of that name.
func (r *run) stepsName() string {
	for _, d := range r.downloads {
		if d == StepsName {
			return "steps-" + r.tag + ".json"
		}
	}
	return StepsName
}

func (r *run) result() executor.Result {
	return executor.Result{
		StepCount:   r.steps,
		Screenshots: append([]string(nil), r.shots...),
		Downloads:   append([]string(nil), r.downloads...),
		Errors:      append([]json.RawMessage(nil), r.errs...),
	}
}

// outputs holds block outputs in the order they were first set.
type outputs struct {
	mu   sync.Mutex
	keys []string
	vals map[string]any
}

func newOutputs() *outputs { return &outputs{vals: map[string]any{}} }

func (o *outputs) set(key string, v any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

func (o *outputs) each(fn func(k string, v any)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, k := range o.keys {
		fn(k, o.vals[k])
	}
}

// MarshalJSON writes the object with its keys in order.
func (o *outputs) MarshalJSON() ([]byte, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	buf := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", k, err)
		}
		buf = append(append(append(buf, kb...), ':'), vb...)
	}
	return append(buf, '}'), nil
}

// rawObject returns the object as JSON ({} when empty).
func (o *outputs) rawObject() json.RawMessage {
	b, err := o.MarshalJSON()
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// json returns the object, or nil when it is empty.
func (o *outputs) json() json.RawMessage {
	if len(o.keys) == 0 {
		return nil
	}
	b, err := o.MarshalJSON()
	if err != nil {
		return nil
	}
	return b
}
