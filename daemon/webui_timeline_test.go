package daemon_test

import (
	"context"
	_ "embed"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// fourSeconds is a WebM video four seconds long (a test pattern, 64×40),
// made with `ffmpeg -f lavfi -i testsrc=size=64x40:rate=5:duration=4
// -c:v libvpx -b:v 50k -g 5`: a recording Chromium plays and seeks in.
//
//go:embed testdata/four-seconds.webm
var fourSeconds []byte

// withVideo is the scripted executor whose recordings are fourSeconds.
type withVideo struct{ *scripted.Executor }

func (w withVideo) Execute(ctx context.Context, job *executor.Job, p executor.Progress) executor.Result {
	res := w.Executor.Execute(ctx, job, p)
	if res.Recording != "" {
		if err := os.WriteFile(filepath.Join(job.Dir, res.Recording), fourSeconds, 0o600); err != nil {
			res.Status, res.FailureReason = client.RunStatusFailed, err.Error()
		}
	}
	return res
}

// uiSignIn signs tab in to the daemon at base with key.
func uiSignIn(t *testing.T, tab context.Context, base, key string) {
	t.Helper()
	uiRun(t, tab, chromedp.Navigate(base+"/ui/sign-in"))
	uiRun(t, tab, chromedp.SendKeys("#api_key", key))
	uiRun(t, tab, chromedp.Submit("#sign-in"))
	uiRun(t, tab, chromedp.WaitVisible(".sign-out button"))
}

// shotsLoaded is true once every step screenshot on the page has loaded,
// or failed to.
const shotsLoaded = `(() => {
	const imgs = [...document.querySelectorAll(".step-shots img")];
	return imgs.length > 0 && imgs.every(i => i.complete);
})()`

// TestWebUIStepTimeline: a completed run's page shows each step with the
// element it acted on and the page before and after it, both images
// loaded, with the element's box drawn over them where the element was;
// another organization gets no such page, and the images' URLs do not
// work once changed.
func TestWebUIStepTimeline(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	run := e.task("steps=3;details;stepshots")
	waitRun(t, e.a, run.RunID)

	// Through the API: each step names its screenshots, which carry its id.
	steps, err := e.a.Runs.Steps(t.Context(), run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	arts, err := e.a.Runs.ListArtifacts(t.Context(), run.RunID, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if st.StepID == "" || st.Element == nil {
			t.Fatalf("step %d: step_id %q, element %+v: want both", st.Number, st.StepID, st.Element)
		}
		kinds := map[client.ArtifactType]int{}
		for _, a := range arts {
			if a.StepID != nil && *a.StepID == st.StepID {
				kinds[a.ArtifactType]++
			}
		}
		if kinds[client.ArtifactScreenshotLLM] != 1 || kinds[client.ArtifactScreenshotAction] != 1 {
			t.Errorf("step %d's artifacts: %v, want one screenshot_llm and one screenshot_action", st.Number, kinds)
		}
	}

	tab := uiBrowser(t)
	uiSignIn(t, tab, e.url, e.keyA)
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/runs/"+run.RunID))
	uiRun(t, tab, chromedp.Poll[bool](shotsLoaded, chromedp.WithPollingTimeout(30*time.Second)))

	type shown struct {
		Text   string
		Images []struct {
			Alt          string
			NaturalWidth int
		}
		// The outline over the first image, in the image's pixels as
		// shown: where a person sees it.
		Outline struct{ X, Y, Width, Height float64 }
		Scale   float64 // shown width / natural width
	}
	got := uiRun(t, tab, chromedp.Evaluate[[]shown](`[...document.querySelectorAll("li.step")].map(li => {
		const img = li.querySelector(".shot img"), rect = li.querySelector(".shot rect");
		const ib = img.getBoundingClientRect(), rb = rect.getBoundingClientRect();
		return {
			Text: li.innerText,
			Images: [...li.querySelectorAll(".shot img")].map(i => ({Alt: i.alt, NaturalWidth: i.naturalWidth})),
			Outline: {X: rb.x - ib.x, Y: rb.y - ib.y, Width: rb.width, Height: rb.height},
			Scale: ib.width / img.naturalWidth,
		};
	})`))
	if len(got) != 3 {
		t.Fatalf("the page shows %d steps, want 3", len(got))
	}
	for i, s := range got {
		n := i + 1
		el := scripted.StepElement(n)
		if !strings.Contains(s.Text, "Acted on "+el.Name) {
			t.Errorf("step %d reads %q, want it to name the element %s", n, s.Text, el.Name)
		}
		if len(s.Images) != 2 {
			t.Fatalf("step %d shows %d images, want before and after", n, len(s.Images))
		}
		for j, when := range []string{"before", "after"} {
			img := s.Images[j]
			if img.NaturalWidth != int(scripted.StepShotSize.Width) {
				t.Errorf("step %d: the page %s it did not load (naturalWidth %d)", n, when, img.NaturalWidth)
			}
			if !strings.HasPrefix(img.Alt, "The page "+when+" step ") || !strings.Contains(img.Alt, el.Name+" outlined") {
				t.Errorf("step %d: image %d has alt %q", n, j, img.Alt)
			}
		}
		// The outline is where the element was, at the scale the image
		// is shown (within the stroke's width).
		want := el.Box
		near := func(got, want float64) bool { return got > want-4 && got < want+4 }
		o := s.Outline
		if s.Scale <= 0 || !near(o.X, want.X*s.Scale) || !near(o.Y, want.Y*s.Scale) ||
			!near(o.Width, want.Width*s.Scale) || !near(o.Height, want.Height*s.Scale) {
			t.Errorf("step %d: the outline is at %+v (scale %.2f), want the element's box %+v", n, o, s.Scale, want)
		}
	}

	// Organization B: no page for A's run, and no list of its files.
	tabB := uiBrowser(t)
	uiSignIn(t, tabB, e.url, e.keyB)
	uiRun(t, tabB, chromedp.Navigate(e.url+"/ui/runs/"+run.RunID))
	if body := uiRun(t, tabB, chromedp.Text("main")); !strings.Contains(body, "There is no such page in your organization") {
		t.Errorf("B on A's run page sees %q", body)
	}
	if n := uiRun(t, tabB, chromedp.Evaluate[int](`document.querySelectorAll("img").length`)); n != 0 {
		t.Errorf("B on A's run page sees %d images", n)
	}
	if _, err := e.b.Runs.ListArtifacts(t.Context(), run.RunID, nil); apiStatus(err) != http.StatusNotFound {
		t.Errorf("B lists A's run's files: %v, want 404", err)
	}
	// An image's URL made to name B instead of A (or otherwise changed)
	// loads nothing: its signature is A's.
	src := uiRun(t, tab, chromedp.Evaluate[string](`document.querySelector(".shot img").src`))
	for _, bad := range []string{strings.Replace(src, "org="+e.orgA, "org=o_b", 1), strings.Replace(src, "signature=", "signature=0", 1)} {
		res, err := http.Get(bad)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			t.Errorf("a changed image URL %s loads", bad)
		}
	}
}

// TestWebUIStepUnderPlayhead: on the page of a recorded run, each step
// says when it happened in the recording; its button moves the video
// there and marks it as the current step, and so does moving the video.
func TestWebUIStepUnderPlayhead(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1, Executor: withVideo{&scripted.Executor{}}})
	run := e.task("steps=3;details;stepshots;recording")
	waitRun(t, e.a, run.RunID)

	tab := uiBrowser(t)
	uiSignIn(t, tab, e.url, e.keyA)
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/runs/"+run.RunID))
	uiRun(t, tab, chromedp.Poll[bool](`document.getElementById("recording").readyState >= 1`, chromedp.WithPollingTimeout(30*time.Second)))
	if txt := uiRun(t, tab, chromedp.Text("#step-2")); !strings.Contains(txt, "at 0:01.0 in the recording") {
		t.Errorf("step 2 reads %q, want when it happened in the recording", txt)
	}

	current := func() string {
		return uiRun(t, tab, chromedp.Evaluate[string](`[...document.querySelectorAll('[aria-current="step"]')].map(e => e.id).join(",")`))
	}
	uiRun(t, tab, chromedp.Click(`#step-3 button.seek`))
	uiRun(t, tab, chromedp.Poll[bool](`document.getElementById("recording").currentTime >= 2`, chromedp.WithPollingTimeout(30*time.Second)))
	uiRun(t, tab, chromedp.WaitVisible(`#step-3[aria-current="step"]`))
	if c := current(); c != "step-3" {
		t.Errorf("after showing step 3 in the recording, the current steps are %q", c)
	}

	// The video moved by hand, as a person drags its playhead.
	uiRun(t, tab, chromedp.Evaluate[any](`document.getElementById("recording").currentTime = 1.5, null`))
	uiRun(t, tab, chromedp.WaitVisible(`#step-2[aria-current="step"]`))
	if c := current(); c != "step-2" {
		t.Errorf("at 1.5 s in the recording, the current steps are %q, want step-2", c)
	}
}

// TestWebUIStepTimelineLive: the page of a run that is not over shows its
// steps with their screenshots as they are recorded, refreshes without
// fetching the screenshots it has again, and shows the end of the run.
func TestWebUIStepTimelineLive(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	run := e.task("steps=2;details;stepshots;block")
	e.blocked(run.RunID)

	tab := uiBrowser(t)
	uiSignIn(t, tab, e.url, e.keyA)
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/runs/"+run.RunID))
	// The steps are written behind the run: they come with a refresh.
	uiRun(t, tab, chromedp.WaitVisible(`#step-2 .step-shots img`))
	uiRun(t, tab, chromedp.Poll[bool](shotsLoaded, chromedp.WithPollingTimeout(30*time.Second)))
	src := uiRun(t, tab, chromedp.Evaluate[string](`window.firstRun = document.getElementById("run"); document.querySelector("#step-1 .shot img").getAttribute("src")`))
	// Wait for the next refresh: a new #run.
	uiRun(t, tab, chromedp.Poll[bool](`document.getElementById("run") !== window.firstRun`, chromedp.WithPollingTimeout(30*time.Second)))
	if now := uiRun(t, tab, chromedp.Evaluate[string](`document.querySelector("#step-1 .shot img").getAttribute("src")`)); now != src {
		t.Errorf("a refresh changed the address of a screenshot it had (fetching it again):\n%s\n%s", src, now)
	}

	e.exec.Release(run.RunID)
	uiRun(t, tab, chromedp.Poll[bool](`document.getElementById("run-status").textContent === "completed"`, chromedp.WithPollingTimeout(30*time.Second)))
	if n := uiRun(t, tab, chromedp.Evaluate[int](`document.querySelectorAll("li.step .step-shots img").length`)); n != 4 {
		t.Errorf("the ended run's page shows %d step screenshots, want 4", n)
	}
}
