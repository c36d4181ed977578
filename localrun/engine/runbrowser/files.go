package runbrowser

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/executor"
)

// maxUploadBytes caps a file fetched to be uploaded.
const maxUploadBytes = 100 << 20

// Files are the files of a run's directory, under names the daemon's
// artifact store accepts: the screenshots, the downloads and the files the
// engine saves (which count as downloads); and the files fetched to be
// uploaded, kept apart until the run ends.
type Files struct {
	dir      string
	progress executor.Progress
	log      *slog.Logger
	http     *http.Client
	// guard decides what the run's file URLs may reach, and local opens
	// the daemon's own file URLs (UseNetwork); nil: neither.
	guard *egress.Guard
	local executor.LocalFiles

	shotSeq   int
	shots     []string
	downloads []string          // file names in dir, in the order they appeared
	seen      map[string]string // browser download path -> name in dir
	tmpDir    string            // files to upload; removed at the end
}

func newFiles(dir string, progress executor.Progress, log *slog.Logger, hc *http.Client) *Files {
	return &Files{dir: dir, progress: progress, log: log, http: hc, seen: map[string]string{}}
}

// UseNetwork makes the run's file URLs go through guard, the egress guard
// of its organization (nil: no policy, the engine's client), and the URLs
// of the daemon's own files (local, nil for none) read from the daemon's
// disk rather than fetched: the daemon's address is one the guard
// refuses.
func (f *Files) UseNetwork(guard *egress.Guard, local executor.LocalFiles) {
	f.guard, f.local = guard, local
	if guard != nil {
		f.http = guard.HTTPClient(0)
	}
}

// Screenshots are the names of the run's screenshots, in order.
func (f *Files) Screenshots() []string { return append([]string(nil), f.shots...) }

// Downloads are the names of the run's downloaded and saved files, in
// order.
func (f *Files) Downloads() []string { return append([]string(nil), f.downloads...) }

// keepScreenshot writes a JPEG into the run's directory as its next
// screenshot, reports it and returns its name ("" when it could not be
// written).
func (f *Files) keepScreenshot(jpg []byte) string {
	f.shotSeq++
	name, err := f.write(fmt.Sprintf("screenshot-%04d.jpg", f.shotSeq), jpg)
	if err != nil {
		f.log.Warn("screenshot not written", "error", err)
		return ""
	}
	f.shots = append(f.shots, name)
	f.progress.Screenshot(name)
	return name
}

// Save writes data into the run's directory as a downloaded file, named
// after name (fallback when name cannot be used), and returns the name
// used.
func (f *Files) Save(name, fallback string, data []byte) (string, error) {
	saved, err := f.write(safeName(name, fallback), data)
	if err != nil {
		return "", err
	}
	f.downloads = append(f.downloads, saved)
	return saved, nil
}

// write writes data into the run's directory under name, or under a free
// variant of it ("name (1).ext") when name is taken, and returns the name
// used. A name the artifact store would refuse is replaced.
func (f *Files) write(name string, data []byte) (string, error) {
	file, name, err := createUnique(f.dir, name)
	if err != nil {
		return "", err
	}
	if _, err := file.Write(data); err != nil {
		file.Close()
		os.Remove(filepath.Join(f.dir, name))
		return "", err
	}
	if err := file.Close(); err != nil {
		os.Remove(filepath.Join(f.dir, name))
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
		if try == RecordingName || try == RecordingName+".part" || try == steplog.FileName || try == steplog.FileName+".part" {
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
	// 200 bytes leave room for the " (999)" of a taken name.
	name = executor.CutFileName(name, 200)
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

// sync adds the completed downloads not seen yet to the run's files,
// renaming a file whose name the artifact store would refuse, and returns
// the names added.
func (f *Files) sync(done []browser.Download) []string {
	var added []string
	for _, d := range done {
		if _, ok := f.seen[d.Path]; ok {
			continue
		}
		name := d.Name
		if !executor.ValidFileName(name) || filepath.Dir(d.Path) != filepath.Clean(f.dir) {
			if moved, err := f.adopt(d.Path, d.Name); err == nil {
				name = moved
			} else {
				f.log.Warn("download not kept", "file", d.Name, "error", err)
				f.seen[d.Path] = ""
				continue
			}
		}
		// The browser's file may be readable by all (a download copied
		// across file systems is created 0644): like every file of the
		// run, it is its owner's only.
		if err := os.Chmod(filepath.Join(f.dir, name), 0o600); err != nil {
			f.log.Warn("download not kept", "file", name, "error", err)
			f.seen[d.Path] = ""
			continue
		}
		f.seen[d.Path] = name
		f.downloads = append(f.downloads, name)
		added = append(added, name)
	}
	return added
}

// adopt moves a file into the run's directory under a valid free name.
func (f *Files) adopt(path, suggested string) (string, error) {
	file, name, err := createUnique(f.dir, suggested)
	if err != nil {
		return "", err
	}
	file.Close()
	if err := os.Rename(path, filepath.Join(f.dir, name)); err != nil {
		os.Remove(filepath.Join(f.dir, name))
		return "", err
	}
	return name, nil
}

// Info describes a file of the run's directory for a block's output: its
// name, size and SHA-256.
func (f *Files) Info(name string) map[string]any {
	info := map[string]any{"filename": name}
	file, err := os.Open(filepath.Join(f.dir, name))
	if err != nil {
		return info
	}
	defer file.Close()
	h := sha256.New()
	n, err := io.Copy(h, file)
	if err != nil {
		return info
	}
	info["file_size"] = n
	info["checksum"] = hex.EncodeToString(h.Sum(nil))
	return info
}

// Path returns the path of a file the run downloaded or saved, by its
// name; ok is false for a name that is not one of the run's downloads.
func (f *Files) Path(name string) (string, bool) {
	for _, d := range f.downloads {
		if d == name {
			return filepath.Join(f.dir, name), true
		}
	}
	return "", false
}

// Infos describes files of the run's directory (Info).
func (f *Files) Infos(names []string) []any {
	infos := make([]any, len(names))
	for i, n := range names {
		infos[i] = f.Info(n)
	}
	return infos
}

// FetchError is a file to upload that could not be fetched for a reason
// of the request: its URL, or what its server answered.
type FetchError struct{ Msg string }

func (e *FetchError) Error() string { return e.Msg }

// CheckFileURL accepts the URL of a file to upload: http or https, with a
// host. Anything else is a *FetchError.
func CheckFileURL(raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if raw == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &FetchError{Msg: "Unsupported file url"}
	}
	return nil
}

// FetchUpload downloads a file to upload into a temporary directory of the
// run (removed when it ends), under the name the response or URL gives,
// and returns its path. The browser reads the file when its form is sent,
// so it stays until the run ends.
func (f *Files) FetchUpload(ctx context.Context, fileURL string) (string, error) {
	if err := CheckFileURL(fileURL); err != nil {
		return "", err
	}
	u, _ := url.Parse(strings.TrimSpace(fileURL))
	if f.local != nil {
		rc, name, ok, err := f.local.OpenURL(u)
		if ok && err != nil {
			return "", &FetchError{Msg: "The file_url could not be read: " + err.Error()}
		}
		if ok {
			defer rc.Close()
			return f.keepUpload(rc, safeName(name, "upload"))
		}
	}
	hc := *f.http
	hc.Timeout = 2 * time.Minute
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", &FetchError{Msg: "Unsupported file url"}
	}
	resp, err := hc.Do(req)
	if err != nil {
		// A refusal of the guard names the URL (redacted), its address
		// and the rule.
		return "", &FetchError{Msg: fmt.Sprintf("The file_url could not be fetched: %v", NetErr(err))}
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return "", &FetchError{Msg: fmt.Sprintf("The file_url answered HTTP %s", resp.Status)}
	}
	return f.keepUpload(resp.Body, safeName(ResponseFileName(resp, u), "upload"))
}

// keepUpload writes a file to upload into a directory of its own under
// the run's temporary directory, and returns its path.
func (f *Files) keepUpload(body io.Reader, name string) (string, error) {
	var err error
	if f.tmpDir == "" {
		if f.tmpDir, err = os.MkdirTemp("", "abctl-uploads-"); err != nil {
			return "", err
		}
	}
	tmp, err := os.MkdirTemp(f.tmpDir, "u")
	if err != nil {
		return "", err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	p := filepath.Join(tmp, name)
	file, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		cleanup()
		return "", err
	}
	n, err := io.Copy(file, io.LimitReader(body, maxUploadBytes+1))
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxUploadBytes {
		err = fmt.Errorf("the file is larger than %d bytes", maxUploadBytes)
	}
	if err != nil {
		cleanup()
		return "", &FetchError{Msg: "The file_url could not be fetched: " + err.Error()}
	}
	return p, nil
}

// removeTemp removes the files fetched to be uploaded.
func (f *Files) removeTemp() {
	if f.tmpDir != "" {
		os.RemoveAll(f.tmpDir)
	}
}

// ResponseFileName is the name a response suggests for its body: the
// filename of its Content-Disposition, else the last element of the URL's
// path, else "response".
func ResponseFileName(resp *http.Response, u *url.URL) string {
	if cd := resp.Header.Get("Content-Disposition"); cd != "" {
		if _, params, err := mime.ParseMediaType(cd); err == nil && params["filename"] != "" {
			return params["filename"]
		}
	}
	if base := path.Base(u.Path); base != "" && base != "/" && base != "." {
		return base
	}
	return "response"
}

// NetErr is the cause of a failed HTTP request, without the method and
// URL a *url.Error repeats.
func NetErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
