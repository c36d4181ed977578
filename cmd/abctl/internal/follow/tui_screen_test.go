package follow

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// screenAfter follows runID in the live view on a terminal of cols×rows
// whose cursor starts on row startRow, below what `abctl run` printed
// before the view started (before), and returns the result and what the
// terminal then shows, scrollback included. The run blocks (script
// "block") until the view has shown it running, then is released.
func (e *env) screenAfter(t *testing.T, runID string, cols, rows, startRow int, before string) (*Result, string) {
	t.Helper()
	inR, inW := io.Pipe()
	defer inW.Close()
	out := &syncBuffer{}
	// What was on the terminal before: a prompt at startRow, the command.
	out.Write([]byte(strings.Repeat("\n", startRow) + "$ abctl run agent.yaml\n" + before))
	ios := iostreams.New(inR, io.Discard, out, func(string) string { return "" })
	ios.SetTTY(true, true, true)
	ios.SetWidth(cols)
	go func() {
		for !strings.Contains(out.String(), "running") && t.Context().Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		e.exec.Release(runID)
	}()
	res, err := Follow(t.Context(), Options{IO: ios, Client: e.c, RunID: runID,
		Poll: client.WaitOptions{Interval: 20 * time.Millisecond, MaxInterval: 50 * time.Millisecond}})
	if err != nil {
		t.Fatalf("Follow: %v\n%q", err, out.String())
	}
	term := newVT(cols, rows)
	term.Write([]byte(out.String()))
	return res, term.text()
}

// inOrder checks that text has each of wants as a line (or the start of
// one), in this order.
func inOrder(t *testing.T, text string, wants ...string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	i := 0
	for _, want := range wants {
		for i < len(lines) && !strings.HasPrefix(lines[i], want) {
			i++
		}
		if i == len(lines) {
			t.Errorf("the terminal lacks a line starting with %q (after the lines before it); it shows:\n%s", want, text)
			return
		}
		i++
	}
}

// TestTUIKeepsWhatCameBefore: the lines `abctl run` prints before the live
// view starts (agent/NAME created, Run ID started) stay on the terminal,
// above the view's own lines, wherever the cursor was: at the top of a
// fresh terminal or at its bottom. When the run ends the view is gone, the
// run's id is printed plainly with its end, and the screenshots are named
// by their files, with the command that prints the whole links: no signed
// URL wraps over two lines (issue 30), however narrow the terminal.
func TestTUIKeepsWhatCameBefore(t *testing.T) {
	for _, tc := range []struct {
		name           string
		cols, startRow int
	}{
		{"fresh terminal", 100, 0},
		{"cursor at the bottom", 100, 23},
		{"narrow", 40, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.start(t, `steps=3;screenshots=1;block;output={"a":1}`)
			before := fmt.Sprintf("agent/contact-form created\nRun %s started (queued).\n", id)
			res, text := e.screenAfter(t, id, tc.cols, 24, tc.startRow, before)
			if res.Run == nil || res.Run.Status != client.RunStatusCompleted || len(res.Run.ScreenshotURLs) == 0 {
				t.Fatalf("result %+v", res)
			}
			shot := res.Run.ScreenshotURLs[0]
			inOrder(t, text,
				"$ abctl run agent.yaml",
				"agent/contact-form created",
				"Run "+id+" started (queued).",
				"• running",
				"✓ Run "+id+" completed, 3 steps",
				"  last screenshot: "+fileName(shot),
				"  whole links: abctl runs artifacts "+id,
			)
			if strings.Contains(text, "http") {
				t.Errorf("a link is printed whole in the live view:\n%s", text)
			}
			if strings.Contains(text, "ctrl+c") {
				t.Errorf("the live view is still on the terminal after the run ended:\n%s", text)
			}
		})
	}
}
