package follow

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

const longShot = "http://127.0.0.1:8780/artifacts/wr_601130425664725008/screenshot-0004.jpg?org=o_601130395599953920&expires=1795731186&signature=349bee254608a9e9bf1b8dbb2500eb45a89d1798aeab880269e6c38f69d31be0"

// testModel is the live view's model alone, width columns wide, with no
// service behind it: the tests feed it messages.
func testModel(width int, color bool) *model {
	ios, _, _, _ := iostreams.Test()
	ios.SetTTY(true, true, true)
	ios.SetWidth(width)
	ios.SetColor(color)
	now := time.Date(2026, 11, 24, 12, 0, 10, 0, time.UTC)
	o := Options{IO: ios, RunID: "wr_601130425664725008", Now: func() time.Time { return now }}
	return newModel(context.Background(), o, make(chan event), nil)
}

func runningRun(steps int, shots ...string) *client.Run {
	start := client.Time{Time: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	return &client.Run{RunID: "wr_601130425664725008", Status: client.RunStatusRunning, StepCount: client.Ptr(steps),
		CreatedAt: start, StartedAt: &start, ScreenshotURLs: shots}
}

func feed(m *model, msgs ...tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	for _, msg := range msgs {
		_, cmd = m.Update(msg)
	}
	return cmd
}

// TestViewFitsANarrowTerminal: every line of the pane fits the terminal's
// width; the newest screenshot is named by its file rather than cut
// midway, and with colour (a terminal) the name links to the whole URL.
func TestViewFitsANarrowTerminal(t *testing.T) {
	for _, color := range []bool{false, true} {
		m := testModel(40, color)
		feed(m, drawnMsg{}, eventMsg{RunEvent: client.RunEvent{Run: runningRun(4, longShot)}})
		view := m.View().Content
		for _, l := range strings.Split(view, "\n") {
			if w := ansi.StringWidth(l); w > 40 {
				t.Errorf("colour %v: a line of %d columns in a 40-column terminal: %q", color, w, l)
			}
		}
		if plain := ansi.Strip(view); !strings.Contains(plain, "  screenshot: screenshot-0004.jpg") {
			t.Errorf("colour %v: the pane does not name the screenshot:\n%s", color, plain)
		}
		if link := ansi.SetHyperlink(longShot); color != strings.Contains(view, link) {
			t.Errorf("colour %v: link to the whole URL present: %v, want %v\n%q", color, !color, color, view)
		}
		if strings.HasSuffix(view, "\n") {
			t.Errorf("the view ends with a line break (an empty last line the renderer never draws): %q", view)
		}
	}
}

// TestPrintsWaitForTheFirstFrame: the lines printed above the view before
// its first frame is drawn are held, then printed at once; those of a run
// that ends first are left for followTUI to print after the view.
func TestPrintsWaitForTheFirstFrame(t *testing.T) {
	m := testModel(80, false)
	first := client.RunEvent{Run: runningRun(1, longShot)}
	if cmd := feed(m, eventMsg{RunEvent: first}); cmd == nil {
		t.Fatal("no command after an event (the next read at least)")
	}
	if len(m.queued) != 1 || !strings.Contains(m.queued[0], "running, 1 step, 10s; screenshot screenshot-0004.jpg") || strings.Contains(m.queued[0], "http") {
		t.Fatalf("queued %q", m.queued)
	}
	if cmd := feed(m, drawnMsg{}); cmd == nil || len(m.queued) != 0 {
		t.Errorf("after the first frame: command %v, still queued %q", cmd, m.queued)
	}
	// Once drawn, nothing waits.
	feed(m, eventMsg{RunEvent: client.RunEvent{Run: runningRun(2, longShot), Previous: first.Run}})
	if len(m.queued) != 0 {
		t.Errorf("queued after the first frame: %q", m.queued)
	}

	// A run that ends before the first frame: the view quits, empty, and
	// keeps its lines for followTUI.
	m = testModel(80, false)
	feed(m, eventMsg{RunEvent: first})
	ended := *first.Run
	ended.Status = client.RunStatusCompleted
	feed(m, eventMsg{RunEvent: client.RunEvent{Run: &ended, Previous: first.Run}})
	if m.state != done || m.View().Content != "" || len(m.queued) != 1 {
		t.Errorf("state %v, view %q, queued %q", m.state, m.View().Content, m.queued)
	}
	if m.res.Run.Status != client.RunStatusCompleted {
		t.Errorf("result %+v", m.res.Run)
	}
}
