package engine_test

// The cost of a run with the model beside its replay: for the example
// agents "search and extract" and "contact form" on the test site, the
// first run (the model drives and the run records a script), the replay
// of that script, the engine without a model going through the same pages
// with its model-free blocks, and raw chromedp doing the same actions and
// reads, in the same run. The scripted model answers at once, or after a fixed delay
// per call that stands for a real model (-model-delay, 1.5 s in the
// record).
//
//	go test ./localrun/engine -run '^$' -bench BenchmarkScripts -benchtime 5x
//	go test ./localrun/engine -run '^$' -bench BenchmarkScripts -benchtime 3x -model-delay 1.5s

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

var modelDelay = flag.Duration("model-delay", 0, "how long the scripted model takes per call in BenchmarkScripts")

// scriptBench is an example agent of the benchmark.
type scriptBench struct {
	name   string
	def    func(origin string) client.WorkflowDefinition
	params map[string]any
	// model answers the agent's calls, whatever the page.
	model func(r *llmtest.Request) (llmtest.Reply, error)
	// raw does the same actions and reads with chromedp on a fresh tab.
	raw func(ctx context.Context, origin string) error
	// free is the engine without a model on the same pages: model-free
	// blocks load the pages the agent goes through and click what it
	// clicks (no block types without a model, so the typing is left out:
	// this peer does a little less than the replay).
	free func(origin string) client.WorkflowDefinition
}

var searchBench = scriptBench{
	name: "search-extract",
	def: func(origin string) client.WorkflowDefinition {
		return client.WorkflowDefinition{
			Parameters: []client.Parameter{stringParam("query")},
			Blocks: client.Blocks{
				&client.NavigationBlock{BlockBase: base("search"), URL: origin + testsite.PageShopSearch,
					NavigationGoal: `Search the site for "{{ query }}" with its search box, and open the results.`, CompleteCriterion: `The page lists the search results.`},
				&client.ExtractionBlock{BlockBase: base("extract_results"), DataExtractionGoal: "Every product in the search results: name and price.",
					DataSchema: json.RawMessage(`{"type":"object","required":["products"],"properties":{"query":{"type":"string"},"products":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"price":{"type":"number"}}}}}}`)},
			},
		}
	},
	params: map[string]any{"query": "jacket"},
	free: func(origin string) client.WorkflowDefinition {
		return client.WorkflowDefinition{Blocks: client.Blocks{
			gotoBlock("search", origin+testsite.PageShopSearch),
			gotoBlock("results", origin+testsite.PageShopResults+"?q=jacket"),
		}}
	},
	model: func(r *llmtest.Request) (llmtest.Reply, error) {
		switch r.Kind {
		case llm.KindPlan:
			if strings.Contains(r.Prompt(), `results for "jacket"`) {
				return llmtest.JSON(map[string]any{"thought": "Done.", "actions": []any{map[string]string{"type": "complete", "text": "Searched."}}}), nil
			}
			id, err := r.ElementID("Search the shop")
			return llmtest.JSON(map[string]any{"thought": "Search.", "actions": []any{
				map[string]string{"type": "input_text", "id": id, "text": "jacket"}, map[string]string{"type": "press_key", "text": "Enter"}}}), err
		case llm.KindVerify:
			return llmtest.JSON(map[string]string{"status": "complete", "reasoning": "The results are listed."}), nil
		case llm.KindExtract:
			var products []any
			for _, it := range testsite.ShopCatalog() {
				if strings.Contains(strings.ToLower(it.Name), "jacket") {
					var price float64
					fmt.Sscan(it.Price, &price)
					products = append(products, map[string]any{"name": it.Name, "price": price})
				}
			}
			return llmtest.JSON(map[string]any{"query": "jacket", "products": products}), nil
		}
		return llmtest.Reply{}, fmt.Errorf("unexpected %s call", r.Kind)
	},
	raw: func(ctx context.Context, origin string) error {
		if err := chromedp.Do(ctx,
			chromedp.Navigate(origin+testsite.PageShopSearch),
			chromedp.SendKeys(chromedp.CSS("#shop-query"), "jacket\r"),
			chromedp.WaitVisible(chromedp.CSS("#results .result-name")),
		); err != nil {
			return err
		}
		_, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#results .result-name, #results .result-price'), e => e.textContent)`))
		return err
	},
}

var formBenchAgent = scriptBench{
	name: "contact-form",
	def: func(origin string) client.WorkflowDefinition {
		return client.WorkflowDefinition{
			Parameters: []client.Parameter{stringParam("name"), stringParam("email"), stringParam("message")},
			Blocks: client.Blocks{
				&client.NavigationBlock{BlockBase: base("fill_form"), URL: origin + testsite.PageForm,
					NavigationGoal:    "Fill in the contact form: the full name is {{ name }}, the email address is {{ email }} and the message is \"{{ message }}\".",
					CompleteCriterion: "The name, email and message fields show the values given."},
				click("send_form", "#submit-button"),
			},
		}
	},
	params: map[string]any{"name": "Ada Lovelace", "email": "ada@example.test", "message": "Hello from the benchmark"},
	free: func(origin string) client.WorkflowDefinition {
		return client.WorkflowDefinition{Blocks: client.Blocks{
			gotoBlock("fill_form", origin+testsite.PageForm),
			click("send_form", "#submit-button"),
		}}
	},
	model: func(r *llmtest.Request) (llmtest.Reply, error) {
		switch r.Kind {
		case llm.KindPlan:
			if strings.Contains(r.Prompt(), `value="ada@example.test"`) {
				return llmtest.JSON(map[string]any{"thought": "Done.", "actions": []any{map[string]string{"type": "complete", "text": "Filled."}}}), nil
			}
			var acts []any
			for _, f := range [][2]string{{"Full name", "Ada Lovelace"}, {"Email", "ada@example.test"}, {"Message", "Hello from the benchmark"}} {
				id, err := r.ElementID(f[0])
				if err != nil {
					return llmtest.Reply{}, err
				}
				acts = append(acts, map[string]string{"type": "input_text", "id": id, "text": f[1]})
			}
			return llmtest.JSON(map[string]any{"thought": "Fill.", "actions": acts}), nil
		case llm.KindVerify:
			return llmtest.JSON(map[string]string{"status": "complete", "reasoning": "The fields hold the values."}), nil
		}
		return llmtest.Reply{}, fmt.Errorf("unexpected %s call", r.Kind)
	},
	raw: func(ctx context.Context, origin string) error {
		return chromedp.Do(ctx,
			chromedp.Navigate(origin+testsite.PageForm),
			chromedp.SendKeys(chromedp.CSS("#text"), "Ada Lovelace"),
			chromedp.SendKeys(chromedp.CSS("#email"), "ada@example.test"),
			chromedp.SendKeys(chromedp.CSS("#message"), "Hello from the benchmark"),
			chromedp.Click(chromedp.CSS("#submit-button")),
			chromedp.WaitReady(chromedp.CSS("body")),
		)
	},
}

// BenchmarkScripts reports, per example agent, the medians of: the first
// run's wall time, model calls and prompt tokens (about 4 characters
// each); the replay's wall time and model calls; raw chromedp's and the
// model-free engine's times for the same pages; replay/raw and
// replay/model-free, as ratios of the medians and as the medians of each
// iteration's ratio (-paired).
func BenchmarkScripts(b *testing.B) {
	needBrowser(b)
	origin := startSiteProcess(b)
	for _, sb := range []scriptBench{searchBench, formBenchAgent} {
		b.Run(sb.name, func(b *testing.B) { benchScript(b, origin, sb) })
	}
}

func benchScript(b *testing.B, origin string, sb scriptBench) {
	delay := *modelDelay
	var mu sync.Mutex
	calls, promptChars := 0, 0
	srv := llmtest.New(b, llmtest.Step{Times: -1, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
		mu.Lock()
		calls++
		promptChars += len(r.Prompt())
		mu.Unlock()
		if delay > 0 {
			time.Sleep(delay)
		}
		return sb.model(r)
	})})
	srv.KeepCalls(8)
	e := modelEngine(b, srv, engine.Config{})
	def := sb.def(origin)
	params := map[string]json.RawMessage{}
	for k, v := range sb.params {
		params[k], _ = json.Marshal(v)
	}
	freeDef := sb.free(origin)
	runFree := func() time.Duration {
		j := &executor.Job{RunID: "wr_free", OrgID: "o_bench", RunType: client.RunTypeWorkflowRun,
			Agent: &client.Agent{WorkflowPermanentID: "wpid_free", Title: sb.name, WorkflowDefinition: freeDef}, Dir: b.TempDir()}
		t0 := time.Now()
		res := e.Execute(context.Background(), j, &progress{})
		d := time.Since(t0)
		if res.Status != client.RunStatusCompleted {
			b.Fatalf("the model-free run: %s: %s", res.Status, res.FailureReason)
		}
		return d
	}
	n := 0
	runJob := func(replay []byte) (executor.Result, time.Duration, int, int) {
		n++
		mu.Lock()
		c0, p0 := calls, promptChars
		mu.Unlock()
		j := &executor.Job{RunID: fmt.Sprintf("wr_bench%d", n), OrgID: "o_bench", RunType: client.RunTypeWorkflowRun,
			Agent: &client.Agent{WorkflowPermanentID: "wpid_bench", Title: sb.name, WorkflowDefinition: def}, Parameters: params,
			Dir: b.TempDir(), Script: &executor.ScriptJob{Replay: replay, Record: true, AIFallback: true, CacheKey: "default"}}
		t0 := time.Now()
		res := e.Execute(context.Background(), j, &progress{})
		d := time.Since(t0)
		if res.Status != client.RunStatusCompleted {
			b.Fatalf("%s: %s", res.Status, res.FailureReason)
		}
		mu.Lock()
		defer mu.Unlock()
		return res, d, calls - c0, promptChars - p0
	}

	browserCtx := rawBrowser(b)
	raw := func() time.Duration {
		t0 := time.Now()
		tab, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
		defer cancel()
		if err := sb.raw(tab, origin); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	// Warm up: the browser, the page script, the site.
	res, _, _, _ := runJob(nil)
	if _, _, c, _ := runJob(res.Script); c != 0 {
		b.Fatalf("the warm-up replay called the model %d times", c)
	}
	raw()
	runFree()

	var firstMS, replayMS, rawMS, freeMS, firstCalls, replayCalls, tokens []float64
	// The ratios of each iteration, whose runs are next to each other in
	// time: on a busy machine their median moves less than the ratio of
	// the medians. The model-free run goes before the replay in every
	// other iteration.
	var perFree, perRaw []float64
	b.ResetTimer()
	for i := range b.N {
		res, d, c, p := runJob(nil)
		firstMS, firstCalls, tokens = append(firstMS, ms(d)), append(firstCalls, float64(c)), append(tokens, float64(p)/4)
		var free float64
		if i%2 == 1 {
			free = ms(runFree())
		}
		_, d, c, _ = runJob(res.Script)
		replay := ms(d)
		replayMS, replayCalls = append(replayMS, replay), append(replayCalls, float64(c))
		r := ms(raw())
		if i%2 == 0 {
			free = ms(runFree())
		}
		rawMS, freeMS = append(rawMS, r), append(freeMS, free)
		perFree, perRaw = append(perFree, replay/free), append(perRaw, replay/r)
	}
	b.StopTimer()
	b.ReportMetric(median(firstMS), "first-run-ms")
	b.ReportMetric(median(firstCalls), "first-run-calls")
	b.ReportMetric(median(tokens), "first-run-prompt-tokens")
	b.ReportMetric(median(replayMS), "replay-ms")
	b.ReportMetric(median(replayCalls), "replay-calls")
	b.ReportMetric(median(rawMS), "raw-ms")
	b.ReportMetric(median(replayMS)/median(rawMS), "replay/raw")
	b.ReportMetric(median(freeMS), "model-free-ms")
	b.ReportMetric(median(replayMS)/median(freeMS), "replay/model-free")
	b.ReportMetric(median(perFree), "replay/model-free-paired")
	b.ReportMetric(median(perRaw), "replay/raw-paired")
	b.ReportMetric(median(firstMS)/median(replayMS), "first/replay")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
