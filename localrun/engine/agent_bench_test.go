package engine_test

// Benchmarks of the agent loop with a scripted model that answers at
// once: the engine's own time per step (everything but the model call:
// settle, observe with a screenshot, act, bookkeeping), beside raw
// chromedp doing the same action, screenshot and page read in the same
// run, and the size of the planning prompt.
//
//	go test ./engine -run '^$' -bench BenchmarkAgentStep -benchtime 5x

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// benchSteps is the number of action steps of a benchmark run (one
// completing step follows).
const benchSteps = 6

var stepOf = regexp.MustCompile(`This is step (\d+) of at most (\d+)`)

// benchPage describes a page of the benchmark: the action of step i, as
// the scripted model chooses it (by name or position, never by id), and
// the same action as a CSS selector for raw chromedp.
type benchPage struct {
	path string
	// model returns the action of step i (from 0) on the page the request
	// shows.
	model func(r *llmtest.Request, i int) (map[string]string, error)
	// raw is the selector and the text to type ("" to click) of step i.
	raw func(i int) (sel, text string)
}

var formBench = benchPage{
	path: testsite.PageForm,
	model: func(r *llmtest.Request, i int) (map[string]string, error) {
		names := []string{"Full name", "I agree to the terms", "Email", "Pro", "Phone", "Team"}
		name := names[i%len(names)]
		id, err := r.ElementID(name)
		if i%2 == 0 {
			return map[string]string{"type": "input_text", "id": id, "text": fmt.Sprintf("value %d", i)}, err
		}
		return map[string]string{"type": "click", "id": id}, err
	},
	raw: func(i int) (string, string) {
		sels := []string{"#text", "#agree", "#email", "#plan-pro", "#tel", "#plan-team"}
		if i%2 == 0 {
			return sels[i%len(sels)], fmt.Sprintf("value %d", i)
		}
		return sels[i%len(sels)], ""
	},
}

var bigBench = benchPage{
	path: testsite.PageBig,
	model: func(r *llmtest.Request, i int) (map[string]string, error) {
		var buttons []llmtest.Element
		for _, e := range llmtest.Elements(r.LastUserText()) {
			if e.Kind == "button" && strings.HasPrefix(e.Name, "Select ") {
				buttons = append(buttons, e)
			}
		}
		if len(buttons) <= i {
			return nil, fmt.Errorf("only %d item buttons in the prompt", len(buttons))
		}
		return map[string]string{"type": "click", "id": buttons[i].ID}, nil
	},
	raw: func(i int) (string, string) { return "#button-" + strconv.Itoa(1+3*i), "" },
}

// rawCollect is what raw chromedp reads of the page per step: the
// interactive elements with their boxes and the visible text, as a
// minimal observation.
const rawCollect = `JSON.stringify({els: Array.from(document.querySelectorAll('a,button,input,select,textarea,[role]')).map(function (e) {
  var r = e.getBoundingClientRect(); return [e.tagName, e.id, e.name || '', (e.innerText || e.value || '').slice(0, 80), r.x, r.y, r.width, r.height];
}), text: document.body.innerText.slice(0, 20000)}).length`

func BenchmarkAgentStep(b *testing.B) {
	needBrowser(b)
	origin := startSiteProcess(b)
	for _, bp := range []struct {
		name string
		page benchPage
	}{{"form", formBench}, {"big", bigBench}} {
		b.Run(bp.name, func(b *testing.B) { benchAgentPage(b, origin, bp.page) })
	}
}

func benchAgentPage(b *testing.B, origin string, bp benchPage) {
	srv := llmtest.New(b, llmtest.Step{Kind: llm.KindPlan, Times: -1, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
		m := stepOf.FindStringSubmatch(r.LastUserText())
		if m == nil {
			return llmtest.Reply{}, fmt.Errorf("no step number in the prompt")
		}
		n, _ := strconv.Atoi(m[1])
		if n > benchSteps {
			return llmtest.JSON(map[string]any{"thought": "Done.", "actions": []any{map[string]string{"type": "complete", "text": "Done."}}}), nil
		}
		a, err := bp.model(r, n-1)
		return llmtest.JSON(map[string]any{"thought": "Next.", "actions": []any{a}}), err
	})})
	srv.KeepCalls(2 * (benchSteps + 1))
	e := modelEngine(b, srv, engine.Config{})
	url := origin + bp.path
	task := &client.TaskRunRequest{Prompt: "Fill in the page.", URL: url, MaxSteps: new(benchSteps + 1)}

	browserCtx := rawBrowser(b)
	// raw does the same steps with chromedp and returns each step's time:
	// the action, a screenshot and a page read.
	raw := func() ([]time.Duration, error) {
		tab, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
		defer cancel()
		if err := chromedp.Do(tab, chromedp.Navigate(url)); err != nil {
			return nil, err
		}
		var out []time.Duration
		for i := range benchSteps {
			t0 := time.Now()
			sel, text := bp.raw(i)
			acts := []chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS(sel))}
			if text != "" {
				acts = []chromedp.Action[chromedp.Void]{chromedp.Clear(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), text)}
			}
			if err := chromedp.Do(tab, acts...); err != nil {
				return nil, err
			}
			if _, err := chromedp.Run(tab, chromedp.CaptureScreenshot()); err != nil {
				return nil, err
			}
			if _, err := chromedp.Run(tab, chromedp.Evaluate[int](rawCollect)); err != nil {
				return nil, err
			}
			out = append(out, time.Since(t0))
		}
		return out, nil
	}
	run := func() ([]stepEntry, error) {
		j := taskJob(b, task)
		res := e.Execute(context.Background(), j, &progress{})
		if res.Status != client.RunStatusCompleted {
			return nil, fmt.Errorf("run: %s %s", res.Status, res.FailureReason)
		}
		return readSteps(b, j.Dir).Steps, nil
	}
	// Warm both up once.
	if _, err := run(); err != nil {
		b.Fatal(err)
	}
	if _, err := raw(); err != nil {
		b.Fatal(err)
	}

	var engineMS, rawSteps, model []float64
	var promptChars []int
	b.ResetTimer()
	for range b.N {
		steps, err := run()
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range steps[1:benchSteps] { // action steps after the first (which includes the page's first load)
			engineMS = append(engineMS, s.Timings.Total-s.Timings.Model)
			model = append(model, s.Timings.Model)
			promptChars = append(promptChars, s.PromptChars)
		}
		rs, err := raw()
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range rs[1:] {
			rawSteps = append(rawSteps, float64(d.Microseconds())/1000)
		}
	}
	b.StopTimer()
	med := func(v []float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		return s[len(s)/2]
	}
	b.ReportMetric(med(engineMS), "engine-ms/step")
	b.ReportMetric(med(rawSteps), "raw-ms/step")
	b.ReportMetric(med(engineMS)/med(rawSteps), "engine/raw")
	b.ReportMetric(med(model), "model-call-ms")
	b.ReportMetric(float64(slices.Max(promptChars))/4, "max-prompt-tokens")
}
