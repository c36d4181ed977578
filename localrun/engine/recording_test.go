package engine_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
)

// colourSite serves pages of one colour and records when each was asked
// for: /red, /blue, and on /blue a button #go (top left) that turns the page
// green.
type colourSite struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string]time.Time
}

func newColourSite(t *testing.T) *colourSite {
	s := &colourSite{seen: map[string]time.Time{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if _, ok := s.seen[r.URL.Path]; !ok {
			s.seen[r.URL.Path] = time.Now()
		}
		s.mu.Unlock()
		colour := strings.TrimPrefix(r.URL.Path, "/")
		if colour != "red" && colour != "blue" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>%s</title><style>html,body{margin:0;height:100%%;background:%s}
#go{position:absolute;left:0;top:0;width:40px;height:20px}</style></head><body>`, colour, colour)
		if colour == "blue" {
			fmt.Fprint(w, `<button id=go onclick="document.documentElement.style.background = document.body.style.background = '#00ff00'">go</button>`)
		}
		fmt.Fprint(w, `</body></html>`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *colourSite) seenAt(t *testing.T, path string) time.Time {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.seen[path]
	if !ok {
		t.Fatalf("the browser never asked for %s", path)
	}
	return at
}

// videoColours decodes every frame of a video at 16×9 and names its mean
// colour: red, green, blue, white or "?".
func videoColours(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-v", "error", "-i", path, "-vf", "scale=16:9",
		"-f", "rawvideo", "-pix_fmt", "rgb24", "-").Output()
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	const size = 16 * 9 * 3
	var names []string
	for i := 0; i+size <= len(out); i += size {
		var sum [3]int
		for j := i; j < i+size; j += 3 {
			sum[0] += int(out[j])
			sum[1] += int(out[j+1])
			sum[2] += int(out[j+2])
		}
		r, g, b := sum[0]/(16*9), sum[1]/(16*9), sum[2]/(16*9)
		hi, lo := func(v int) bool { return v > 200 }, func(v int) bool { return v < 60 }
		switch {
		case hi(r) && lo(g) && lo(b):
			names = append(names, "red")
		case lo(r) && hi(g) && lo(b):
			names = append(names, "green")
		case lo(r) && lo(g) && hi(b):
			names = append(names, "blue")
		case hi(r) && hi(g) && hi(b):
			names = append(names, "white")
		default:
			names = append(names, "?")
		}
	}
	return names
}

// TestRecordingHoldsWholeRun runs an agent whose page is red for a second,
// then blue for a second, and turns green with its last action, the click
// of a button: the run's recording must show the three in order, end on
// green and hold it for at least a second, last at least from the first
// page to the second plus that second, and be of the viewport's size.
// (Issue 13: recordings stopped before the run's end and never showed its
// last pages; some were 1280×632.)
func TestRecordingHoldsWholeRun(t *testing.T) {
	needBrowser(t)
	needFFmpeg(t)
	site := newColourSite(t)
	e := newEngine(t, engine.Config{Record: true})
	def := client.WorkflowDefinition{Blocks: client.Blocks{
		gotoBlock("open_red", site.URL+"/red"),
		&client.WaitBlock{BlockBase: base("wait_red"), WaitSec: 1},
		gotoBlock("open_blue", site.URL+"/blue"),
		&client.WaitBlock{BlockBase: base("wait_blue"), WaitSec: 1},
		click("go", "#go"),
	}}
	j := job(t, def, nil)
	began := time.Now()
	res := e.Execute(t.Context(), j, &progress{})
	ended := time.Now()
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	if res.Recording == "" {
		t.Fatal("no recording")
	}
	path := filepath.Join(j.Dir, res.Recording)
	p := ffprobe(t, path)
	colours := videoColours(t, path)
	t.Logf("run %.2fs; %+v; frames %v", ended.Sub(began).Seconds(), p, colours)

	if p.Width != 1280 || p.Height != 720 {
		t.Errorf("size %dx%d, want the viewport's 1280x720", p.Width, p.Height)
	}
	// The recording started before the browser asked for /red and ended
	// after the click, which came after /blue: with the hold of the last
	// picture, it lasts at least from /red to /blue plus a second. It
	// cannot last longer than the run, the hold and a frame.
	const hold, period = time.Second, 250 * time.Millisecond
	lower := site.seenAt(t, "/blue").Sub(site.seenAt(t, "/red")) + hold
	upper := ended.Sub(began) + hold + period
	if d := time.Duration(p.Seconds * float64(time.Second)); d < lower-5*time.Millisecond || d > upper+5*time.Millisecond {
		t.Errorf("the video lasts %v, want %v to %v", d.Round(time.Millisecond), lower.Round(time.Millisecond), upper.Round(time.Millisecond))
	}

	// The pages in order, each shown (each lasted a second at least).
	var order []string
	for _, c := range colours {
		if c != "?" && c != "white" && (len(order) == 0 || order[len(order)-1] != c) {
			order = append(order, c)
		}
	}
	if strings.Join(order, " ") != "red blue green" {
		t.Errorf("the video shows %v, want red, blue, then green", order)
	}
	// The last state, held for a second: 4 frames at 4 fps.
	held := 0
	for i := len(colours) - 1; i >= 0 && colours[i] == "green"; i-- {
		held++
	}
	if held < 4 {
		t.Errorf("the video ends on %d green frames, want at least 4 (a second)", held)
	}
}

// TestRunFilesAreOwnersOnly: every file a recorded run writes (the
// recording, the screenshots, a download, a printed PDF, the step log) is
// readable by its owner only (0600), and so is every directory in the
// run's directory (0700). (A security review found recording.webm at
// 0644, written with ffmpeg's mode.)
func TestRunFilesAreOwnersOnly(t *testing.T) {
	needBrowser(t)
	needFFmpeg(t)
	site := testsite.Start(t)
	e := newEngine(t, engine.Config{Record: true})
	def := client.WorkflowDefinition{Blocks: client.Blocks{
		gotoBlock("open_downloads", site.URL(testsite.PageDownload)),
		&client.ActionBlock{BlockBase: base("download_report"), Selector: "#report-link", CompleteOnDownload: true},
		&client.PrintPageBlock{BlockBase: base("print"), CustomFilename: "downloads", IncludeTimestamp: new(false)},
	}}
	j := job(t, def, nil)
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	if res.Recording == "" {
		t.Fatal("no recording")
	}
	kinds := map[string]bool{}
	err := filepath.WalkDir(j.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == j.Dir {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", path, fi.Mode().Perm(), want)
		}
		switch name := d.Name(); {
		case name == res.Recording:
			kinds["recording"] = true
		case name == testsite.ReportFilename:
			kinds["download"] = true
		case name == engine.StepsName:
			kinds["steps"] = true
		case strings.HasSuffix(name, ".pdf"):
			kinds["pdf"] = true
		case strings.HasSuffix(name, ".jpg"):
			kinds["screenshot"] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"recording", "download", "steps", "pdf", "screenshot"} {
		if !kinds[k] {
			t.Errorf("the run wrote no %s: its mode is not checked", k)
		}
	}
}
