package browser

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/internal/testsite"
	"github.com/chromedp/chromedp"
)

// The same behaviours on the shared test site of the engine, with real clicks.

func TestTestsiteDownloads(t *testing.T) {
	p := needBrowser(t)
	site := testsite.Start(t)
	dir := t.TempDir()
	s := acquire(t, p, ContextOptions{RunID: "ts-dl", DownloadDir: dir, MaxDownloadBytes: 1 << 20})
	tab := s.Tab()
	run(t, tab, chromedp.Navigate(site.URL(testsite.PageDownload)+"?big=2000000"))
	want := map[string]string{
		testsite.ReportFilename: testsite.ReportCSV,
		testsite.NotesFilename:  testsite.NotesTXT,
		testsite.ExportFilename: testsite.ExportJSON,
		testsite.PlainFilename:  testsite.PlainTXT,
	}
	for i, id := range []string{"#report-link", "#blank-download", "#js-download", "#attr-download", "#big-link"} {
		run(t, tab, chromedp.Click(chromedp.CSS(id)))
		waitFor(t, id, func() bool { return len(s.Downloads().Completed())+len(s.Downloads().Failed()) > i })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := s.Downloads().Wait(ctx); err != nil {
		t.Fatal(err)
	}
	got := s.Downloads().Completed()
	if len(got) != len(want) {
		t.Fatalf("Downloads = %+v, failed %+v", got, s.Downloads().Failed())
	}
	for _, d := range got {
		body, ok := want[d.Name]
		sum := sha256.Sum256([]byte(body))
		if !ok || d.Size != int64(len(body)) || d.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("download %+v: want one of %v with its content", d, want)
		}
	}
	if f := s.Downloads().Failed(); len(f) != 1 || f[0].Name != testsite.BigFilename || !strings.Contains(f[0].Reason, "per-file limit") {
		t.Errorf("FailedDownloads = %+v", f)
	}
	waitFor(t, "the download tab to go", func() bool { return s.Tab() == tab })
}

func TestTestsiteDialogs(t *testing.T) {
	p := needBrowser(t)
	site := testsite.Start(t)
	s := acquire(t, p, ContextOptions{RunID: "ts-dialogs", DialogPrompt: "Grace"})
	tab := s.Tab()
	run(t, tab, chromedp.Navigate(site.URL(testsite.PageDialogs)))
	for _, c := range []struct{ button, result string }{
		{"#alert-button", "alert:closed"},
		{"#confirm-button", "confirm:true"},
		{"#prompt-button", "prompt:Grace"},
	} {
		run(t, tab, chromedp.Click(chromedp.CSS(c.button)))
		if r := eval[string](t, tab, "document.getElementById('result').textContent"); r != c.result {
			t.Errorf("%s: result %q, want %q", c.button, r, c.result)
		}
	}
	var types []string
	for _, d := range s.Dialogs() {
		types = append(types, d.Type)
	}
	if strings.Join(types, ",") != "alert,confirm,prompt" {
		t.Fatalf("dialogs = %v", types)
	}
}

func TestTestsitePopup(t *testing.T) {
	p := needBrowser(t)
	site := testsite.Start(t)
	s := acquire(t, p, ContextOptions{RunID: "ts-popup"})
	opener := s.Tab()
	run(t, opener, chromedp.Navigate(site.URL(testsite.PagePopup)))
	run(t, opener, chromedp.Click(chromedp.CSS("#open-popup")))
	var popup context.Context
	waitFor(t, "the popup", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		tab, err := s.ActiveTab(ctx)
		if err != nil || tab == opener {
			return false
		}
		ectx, ecancel := context.WithTimeout(tab, 5*time.Second)
		defer ecancel()
		via, err := chromedp.Run(ectx, chromedp.Evaluate[string]("document.readyState == 'complete' ? document.getElementById('via').textContent : ''"))
		popup = tab
		return err == nil && via == "window.open"
	})
	// A window.open popup with its own size still gets the session viewport.
	if dims := eval[string](t, popup, "innerWidth+'x'+innerHeight"); dims != "1280x720" {
		t.Errorf("popup viewport = %s", dims)
	}
	// The window closes during the click: the click action can then end
	// with its tab's context canceled or with the target detached,
	// whichever the browser reports first. The outcome is asserted below.
	cctx, ccancel := context.WithTimeout(popup, 15*time.Second)
	defer ccancel()
	if err := chromedp.Do(cctx, chromedp.Click(chromedp.CSS("#close-window"))); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, chromedp.ErrTargetDetached) {
		t.Fatal(err)
	}
	waitFor(t, "the opener to be active again", func() bool { return s.Tab() == opener })
	waitFor(t, "the opener to see the popup closed", func() bool {
		return eval[string](t, opener, "document.getElementById('popup-status').textContent") == "closed"
	})
}
