package browser

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
)

// stagingDirName is the directory inside DownloadDir where a remote browser
// writes unfinished downloads (named by their GUID). A local browser writes
// them in a directory of the pool's instead (see Pool.stagingParent), so that
// nothing but the browser context's own code ever writes in DownloadDir.
const stagingDirName = ".downloading"

// Download is a file that the run downloaded completely.
type Download struct {
	Name   string // the real name (sanitised; " (1)" added when taken)
	Path   string // absolute path in DownloadDir
	Size   int64
	URL    string
	SHA256 string // hex
	At     time.Time
}

// FailedDownload is a download that did not complete: refused by a limit,
// canceled, or failed in the browser.
type FailedDownload struct {
	Name   string // suggested name
	URL    string
	Reason string
	At     time.Time
}

// Downloads is the download state of a browser context (guarded by
// Context.mu): it accepts, limits and saves the context's downloads.
type Downloads struct {
	c             *Context
	dir, staging  string
	maxFile       int64
	maxTotal      int64
	maxCount      int
	accepted      int // downloads completed or in progress (MaxDownloads)
	active        map[string]*activeDownload
	completed     []Download
	failed        []FailedDownload
	doneBytes     int64
	reservedNames map[string]bool
}

// activeDownload is a download in progress.
type activeDownload struct {
	guid, url, name string
	received        int64
	refused         string // non-empty once a limit canceled it
	counted         bool   // holds one of the MaxDownloads places
	finishing       bool
}

// newDownloads prepares the download state of a browser context. The browser writes
// unfinished files in a staging directory: a new one under stagingParent when
// it is set (a local browser), else DownloadDir/.downloading (a remote
// browser, which must see the same path).
//
// Why not always DownloadDir/.downloading: the browser finishes deleting a
// canceled download on its own schedule, after it has reported the cancel and
// even after its browser context is gone, and may create the staging
// directory again to do so. In a directory the caller owns that races with
// the caller's clean-up of DownloadDir once the browser context is closed.
func newDownloads(o ContextOptions, stagingParent string) (*Downloads, error) {
	dir, err := filepath.Abs(o.DownloadDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the download directory: %w", err)
	}
	var staging string
	if stagingParent != "" {
		staging, err = os.MkdirTemp(stagingParent, "session-")
	} else {
		staging = filepath.Join(dir, stagingDirName)
		err = os.MkdirAll(staging, 0o700)
	}
	if err != nil {
		return nil, fmt.Errorf("creating the download staging directory: %w", err)
	}
	return &Downloads{
		dir:           dir,
		staging:       staging,
		maxFile:       o.MaxDownloadBytes,
		maxTotal:      o.MaxTotalDownloadBytes,
		maxCount:      o.MaxDownloads,
		active:        make(map[string]*activeDownload),
		reservedNames: make(map[string]bool),
	}, nil
}

// willBegin accepts or refuses a new download (worker goroutine).
func (d *Downloads) willBegin(ev *cdpbrowser.EventDownloadWillBegin) {
	if d == nil {
		return
	}
	s := d.c
	s.mu.Lock()
	if d.active[ev.GUID] != nil {
		s.mu.Unlock()
		return
	}
	a := &activeDownload{guid: ev.GUID, url: ev.URL, name: ev.SuggestedFilename}
	d.active[ev.GUID] = a
	if d.accepted >= d.maxCount {
		a.refused = fmt.Sprintf("download limit reached (%d files)", d.maxCount)
	} else {
		d.accepted++
		a.counted = true
	}
	refuse := a.refused != ""
	s.notifyLocked()
	s.mu.Unlock()
	if refuse {
		d.cancel(ev.GUID)
	}
}

// progress enforces the size limits and finishes completed downloads
// (worker goroutine).
func (d *Downloads) progress(ev *cdpbrowser.EventDownloadProgress) {
	if d == nil {
		return
	}
	s := d.c
	s.mu.Lock()
	a := d.active[ev.GUID]
	if a == nil {
		// The start was not routed to us (unknown frame): adopt it now.
		a = &activeDownload{guid: ev.GUID, name: ev.GUID, counted: true}
		d.active[ev.GUID] = a
		d.accepted++
	}
	if a.finishing {
		s.mu.Unlock()
		return
	}
	a.received = int64(ev.ReceivedBytes)
	switch ev.State {
	case cdpbrowser.DownloadProgressStateInProgress:
		if a.refused == "" {
			a.refused = d.limitReasonLocked(a, int64(ev.TotalBytes))
			if a.refused != "" {
				s.mu.Unlock()
				d.cancel(ev.GUID)
				return
			}
		}
		s.mu.Unlock()
	case cdpbrowser.DownloadProgressStateCompleted:
		if a.refused == "" {
			a.refused = d.limitReasonLocked(a, int64(ev.TotalBytes))
		}
		a.finishing = true
		path := ev.FilePath
		if path == "" || filepath.Dir(path) != d.staging {
			path = filepath.Join(d.staging, ev.GUID)
		}
		if s.closing {
			// Close waits for the files being moved into DownloadDir; none
			// may start after it (the staged file goes with the staging
			// directory).
			d.fail(a, "the session closed before the download was saved")
			s.mu.Unlock()
			return
		}
		s.saving.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.saving.Done()
			d.finish(a, path)
		}()
	default: // canceled
		reason := a.refused
		if reason == "" {
			reason = "canceled by the browser or the page"
		}
		d.fail(a, reason)
		s.notifyLocked()
		s.mu.Unlock()
	}
}

// limitReasonLocked says which limit a download breaks, or "".
func (d *Downloads) limitReasonLocked(a *activeDownload, total int64) string {
	if a.received > d.maxFile || total > d.maxFile {
		size := max(a.received, total)
		return fmt.Sprintf("file larger than the per-file limit (%d > %d bytes)", size, d.maxFile)
	}
	sum := d.doneBytes
	for _, o := range d.active {
		if o.refused == "" {
			sum += o.received
		}
	}
	if sum > d.maxTotal {
		return fmt.Sprintf("downloads exceed the total limit of %d bytes", d.maxTotal)
	}
	return ""
}

// fail records a download that did not complete. Call with Context.mu held.
func (d *Downloads) fail(a *activeDownload, reason string) {
	delete(d.active, a.guid)
	if a.counted {
		d.accepted-- // MaxDownloads counts the files kept (or in progress)
		a.counted = false
	}
	d.failed = append(d.failed, FailedDownload{Name: sanitizeFileName(a.name), URL: a.url, Reason: reason, At: time.Now()})
}

// cancel asks the browser to stop a download (the browser then reports
// it canceled, or completed if it was faster; finish drops it then).
func (d *Downloads) cancel(guid string) {
	s := d.c
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	_, err := cdp.Call(ctx, s.inst.b, cdpbrowser.CancelDownload, cdpbrowser.CancelDownloadParams{GUID: guid, BrowserContextID: s.contextID})
	if err != nil {
		s.pool.log.Debug("canceling a download", "run", s.opts.RunID, "guid", guid, "err", err)
	}
}

// finish moves a completed file to its real name and hashes it.
func (d *Downloads) finish(a *activeDownload, staged string) {
	s := d.c
	s.mu.Lock()
	refused := a.refused
	s.mu.Unlock()
	if refused != "" {
		os.Remove(staged)
		s.mu.Lock()
		d.fail(a, refused)
		s.notifyLocked()
		s.mu.Unlock()
		return
	}
	dl, err := d.place(a, staged)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		d.fail(a, err.Error())
	} else if d.doneBytes+dl.Size > d.maxTotal || dl.Size > d.maxFile {
		os.Remove(dl.Path)
		delete(d.reservedNames, dl.Name)
		reason := fmt.Sprintf("downloads exceed the total limit of %d bytes", d.maxTotal)
		if dl.Size > d.maxFile {
			reason = fmt.Sprintf("file larger than the per-file limit (%d > %d bytes)", dl.Size, d.maxFile)
		}
		d.fail(a, reason)
	} else {
		delete(d.active, a.guid)
		d.doneBytes += dl.Size
		d.completed = append(d.completed, dl)
	}
	s.notifyLocked()
}

// place renames the staged file to a free sanitised name in the
// download directory, and measures and hashes it.
func (d *Downloads) place(a *activeDownload, staged string) (Download, error) {
	s := d.c
	f, err := os.Open(staged)
	if err != nil {
		return Download{}, fmt.Errorf("reading the downloaded file: %w", err)
	}
	h := sha256.New()
	size, err := io.Copy(h, f)
	f.Close()
	if err != nil {
		return Download{}, fmt.Errorf("reading the downloaded file: %w", err)
	}
	base := sanitizeFileName(a.name)
	if base == "download" && a.url != "" {
		if fromURL := sanitizeFileName(urlBase(a.url)); fromURL != "download" {
			base = fromURL
		}
	}
	s.mu.Lock()
	name, path, err := d.reserveLocked(base)
	s.mu.Unlock()
	if err != nil {
		os.Remove(staged)
		return Download{}, err
	}
	if err := moveFile(staged, path); err != nil {
		os.Remove(path)
		os.Remove(staged)
		return Download{}, fmt.Errorf("saving the download: %w", err)
	}
	return Download{Name: name, Path: path, Size: size, URL: a.url, SHA256: hex.EncodeToString(h.Sum(nil)), At: time.Now()}, nil
}

// moveFile renames from to to, copying when they are on different file
// systems (the staging directory of a local browser is in the system's
// temporary directory).
func moveFile(from, to string) error {
	err := os.Rename(from, to)
	var le *os.LinkError
	if err == nil || !errors.As(err, &le) || !errors.Is(le.Err, syscall.EXDEV) {
		return err
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Close(); err != nil {
		return err
	}
	return os.Remove(from)
}

// reserveLocked picks "name", "name (1).ext", ... that no file has, and
// creates it empty so that nothing else takes it.
func (d *Downloads) reserveLocked(base string) (name, path string, err error) {
	ext := fileExt(base)
	stem := strings.TrimSuffix(base, ext)
	for i := 0; i < 1000; i++ {
		name = base
		if i > 0 {
			name = fmt.Sprintf("%s (%d)%s", stem, i, ext)
		}
		if d.reservedNames[name] {
			continue
		}
		path = filepath.Join(d.dir, name)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("saving the download: %w", err)
		}
		f.Close()
		d.reservedNames[name] = true
		return name, path, nil
	}
	return "", "", fmt.Errorf("saving the download: too many files named %q", base)
}

// Downloads returns the downloads of the browser context; nil when
// ContextOptions.DownloadDir is empty and the browser denies them (the
// methods of a nil *Downloads report none).
func (s *Context) Downloads() *Downloads { return s.dl }

// Completed returns the downloads completed so far, in order of completion.
func (d *Downloads) Completed() []Download {
	if d == nil {
		return nil
	}
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	return append([]Download(nil), d.completed...)
}

// Failed returns the downloads that did not complete, with the reason (a
// limit, a cancel, a browser error).
func (d *Downloads) Failed() []FailedDownload {
	if d == nil {
		return nil
	}
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	return append([]FailedDownload(nil), d.failed...)
}

// Pending is the number of downloads in progress (started, not yet
// completed, failed or moved to their name).
func (d *Downloads) Pending() int {
	if d == nil {
		return 0
	}
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	return len(d.active)
}

// Wait waits until no download is in progress, bounded by ctx. It returns
// at once when none is. A download whose start the browser has not
// reported yet is not waited for.
func (d *Downloads) Wait(ctx context.Context) error {
	if d == nil {
		return nil
	}
	s := d.c
	for {
		s.mu.Lock()
		n := len(d.active)
		changed, err := s.changed, s.err
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%d downloads unfinished: %w", n, err)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%d downloads unfinished: %w", n, ctx.Err())
		}
	}
}

// removeStaging deletes the directory of unfinished downloads.
func (d *Downloads) removeStaging() {
	if d == nil {
		return
	}
	s := d.c
	var err error
	for i := 0; i < 5; i++ { // the browser can still be deleting a canceled file
		if err = os.RemoveAll(d.staging); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		s.pool.log.Warn("removing the download staging directory", "run", s.opts.RunID, "err", err)
		return
	}
	// A download canceled just before the end can still make the browser
	// create the directory again (for a file it then deletes): remove it
	// once more later if it is back and empty. (Pool.Close removes whatever
	// is left in the pool's directory, where a local browser stages.)
	staging := d.staging
	time.AfterFunc(2*time.Second, func() { os.Remove(staging) })
}

// sanitizeFileName turns a suggested name into a safe base name: no path, no
// control or reserved characters, no leading dot, at most 200 bytes.
func sanitizeFileName(name string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case r == utf8.RuneError, unicode.IsControl(r), strings.ContainsRune(`<>:"|?*`, r):
			return '_'
		case unicode.IsSpace(r):
			return ' '
		}
		return r
	}, name)
	name = strings.TrimLeft(strings.TrimSpace(name), ".")
	name = strings.TrimRight(name, ". ")
	if name == "" {
		return "download"
	}
	const maxLen = 200
	if len(name) > maxLen {
		ext := fileExt(name)
		if len(ext) > 20 {
			ext = ""
		}
		stem := name[:maxLen-len(ext)]
		for !utf8.ValidString(stem) {
			stem = stem[:len(stem)-1]
		}
		name = stem + ext
	}
	return name
}

// fileExt is filepath.Ext, but ".tar.gz" style double extensions stay whole.
func fileExt(name string) string {
	ext := filepath.Ext(name)
	if ext == name {
		return ""
	}
	stem := strings.TrimSuffix(name, ext)
	if e2 := filepath.Ext(stem); strings.EqualFold(e2, ".tar") {
		return e2 + ext
	}
	return ext
}

// urlBase is the last path element of a URL, without query or fragment.
func urlBase(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		if j := strings.Index(u, "/"); j >= 0 {
			u = u[j:]
		} else {
			return ""
		}
	}
	return u[strings.LastIndex(u, "/")+1:]
}
