package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// modelEngine returns an engine whose model is the scripted server (as an
// OpenAI-compatible provider), without retry waits.
func modelEngine(t testing.TB, srv *llmtest.Server, cfg engine.Config) *engine.Engine {
	t.Helper()
	mc := srv.OpenAIConfig()
	if cfg.Models == nil {
		reg, err := llm.NewRegistry(mc, nil, llm.WithSleeper(noSleep))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Models = reg
	}
	return newEngine(t, cfg)
}

// noSleep skips the waits between retries (a test sees the retries, not
// the time).
func noSleep(ctx context.Context, d time.Duration) error { return ctx.Err() }

// act is one action of a scripted plan: the element is named by its text
// or label, never by id.
type act = llmtest.Action

var (
	clickOn  = llmtest.Click
	typeInto = llmtest.Type
	choose   = llmtest.Choose
	pressKey = llmtest.Key
)

// planReply answers a planning call with the actions, finding each
// element's id in the request's page by name.
func planReply(thought string, acts ...act) llmtest.Reply {
	return llmtest.Plan(thought, nil, acts...)
}

// plan is a script step answering a planning call.
func plan(thought string, acts ...act) llmtest.Step {
	return llmtest.Step{Kind: llm.KindPlan, Reply: planReply(thought, acts...)}
}

// planWhen is plan for a prompt that must match the pattern.
func planWhen(match, thought string, acts ...act) llmtest.Step {
	s := plan(thought, acts...)
	s.Match = match
	return s
}

// decide answers a planning call with complete or terminate.
func decide(match, typ, text string, data any) llmtest.Step {
	ans := map[string]any{"thought": text, "actions": []map[string]string{{"type": typ, "text": text}}}
	if data != nil {
		ans["data"] = data
	}
	return llmtest.Step{Kind: llm.KindPlan, Match: match, Reply: llmtest.JSON(ans)}
}

// taskJob is the job of a task run.
func taskJob(t testing.TB, req *client.TaskRunRequest) *executor.Job {
	t.Helper()
	j := &executor.Job{RunID: "tsk_1", OrgID: "o_1", RunType: client.RunTypeTaskV2, Task: req, Dir: t.TempDir()}
	if req.MaxSteps != nil {
		j.MaxSteps = *req.MaxSteps
	}
	return j
}

// stepsFile is the step log a run wrote.
type stepsFile struct {
	Models []string    `json:"models"`
	Usage  llm.Usage   `json:"usage"`
	Steps  []stepEntry `json:"steps"`
	Calls  []struct {
		Kind  string    `json:"kind"`
		Usage llm.Usage `json:"usage"`
		Error string    `json:"error"`
	} `json:"calls"`
	Summary string `json:"summary"`
}

type stepEntry struct {
	Step     int    `json:"step"`
	Block    string `json:"block"`
	URL      string `json:"url"`
	Decision string `json:"decision"`
	Actions  []struct {
		Type, ID, Element, Text, Result string
		OK, Skipped                     bool
	} `json:"actions"`
	PromptChars int `json:"prompt_chars"`
	Timings     struct {
		Settle, Observe, Model, Act, Total float64
	} `json:"timings_ms"`
	Usage llm.Usage `json:"usage"`
}

// readSteps reads the step log of a run's directory.
func readSteps(t testing.TB, dir string) stepsFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, engine.StepsName))
	if err != nil {
		t.Fatalf("the step log: %v", err)
	}
	var s stepsFile
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("the step log: %v\n%s", err, b)
	}
	return s
}

// outputOf decodes a run's output object.
func outputOf(t testing.TB, res executor.Result) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	return out
}

// errorsOf decodes a run's errors.
func errorsOf(t testing.TB, res executor.Result) []map[string]any {
	t.Helper()
	out := make([]map[string]any, len(res.Errors))
	for i, e := range res.Errors {
		if err := json.Unmarshal(e, &out[i]); err != nil {
			t.Fatalf("error %s: %v", e, err)
		}
	}
	return out
}

// callsOf returns the calls of a kind.
func callsOf(srv *llmtest.Server, kind string) []*llmtest.Request {
	var out []*llmtest.Request
	for _, c := range srv.Calls() {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

var pageTag = regexp.MustCompile(`<page-([0-9a-f]{8})>`)

// stepDetails records the StepDetail and Block reports of a run beside
// the basic progress.
type stepDetails struct {
	progress
	mu     sync.Mutex
	infos  []executor.StepInfo
	blocks []executor.BlockInfo
}

func (p *stepDetails) Block(b executor.BlockInfo) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocks = append(p.blocks, b)
}

func (p *stepDetails) blockReports() []executor.BlockInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]executor.BlockInfo(nil), p.blocks...)
}

func (p *stepDetails) StepDetail(s executor.StepInfo) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.infos = append(p.infos, s)
}

func (p *stepDetails) details() []executor.StepInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]executor.StepInfo(nil), p.infos...)
}

// shopRows reads "name — $price — rating of 5" rows from the visible text
// of a request's page, as a model would.
var shopRow = regexp.MustCompile(`(?m)^\s+(.+?) — \$([0-9.]+) — ([0-9.]+) of 5`)

func shopRowsIn(prompt string) [][]string {
	var out [][]string
	for _, m := range shopRow.FindAllStringSubmatch(prompt, -1) {
		out = append(out, []string{strings.TrimSpace(m[1]), m[2], m[3]})
	}
	return out
}

func regexpMust(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// strconvFloat writes a price as the shop shows it.
func strconvFloat(f float64) string { return fmt.Sprintf("%.2f", f) }
