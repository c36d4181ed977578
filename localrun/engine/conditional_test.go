package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/blocks"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// TestConditionalBranches: a conditional block picks its branch by
// expressions over parameters and outputs, without a model; the chosen
// block runs, the others do not, and routing goes on from there.
func TestConditionalBranches(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	e := newEngine(t, engine.Config{})
	crit := func(expr string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"criteria_type": "jinja2_template", "expression": expr})
		return b
	}
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site"), {Key: "total", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterInteger}},
		Blocks: client.Blocks{
			gotoBlock("open", "{{ site }}"+testsite.PageProducts),
			&client.ConditionalBlock{BlockBase: base("route"), BranchConditions: []client.BranchCondition{
				{Criteria: crit(`{{ total > 100 and "products" in open_output.url }}`), NextBlockLabel: "big", Description: "a large order"},
				{Criteria: crit(`{{ total < 0 }}`), NextBlockLabel: "refund"},
				{IsDefault: true, NextBlockLabel: "small"},
			}},
			&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "big", NextBlockLabel: "done"}, URL: "{{ site }}" + testsite.PageForm},
			&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "refund", NextBlockLabel: "done"}, URL: "{{ site }}" + testsite.PageLogin},
			&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "small"}, URL: "{{ site }}" + testsite.PageTodos},
			gotoBlock("done", "{{ site }}/"),
		},
	}
	for _, tc := range []struct {
		total int
		ran   string
		not   []string
	}{
		{250, "big", []string{"refund", "small"}},
		{-5, "refund", []string{"big", "small"}},
		{20, "small", []string{"big", "refund"}},
	} {
		res := e.Execute(t.Context(), job(t, def, map[string]any{"site": site.URL(""), "total": tc.total}), &progress{})
		if res.Status != client.RunStatusCompleted {
			t.Fatalf("total %d: %s %s", tc.total, res.Status, res.FailureReason)
		}
		out := outputOf(t, res)
		if out[tc.ran+"_output"] == nil || out["done_output"] == nil {
			t.Errorf("total %d: %s or done did not run: %s", tc.total, tc.ran, res.Output)
		}
		for _, l := range tc.not {
			if out[l+"_output"] != nil {
				t.Errorf("total %d: %s ran too: %s", tc.total, l, res.Output)
			}
		}
		route, _ := out["route_output"].(map[string]any)
		if route["next_block_label"] != tc.ran {
			t.Errorf("total %d: route_output %v", tc.total, route)
		}
	}
	// Criteria in prose, and a branch to nowhere, fail before a browser
	// opens.
	prose := def
	prose.Blocks = client.Blocks{&client.ConditionalBlock{BlockBase: base("route"), BranchConditions: []client.BranchCondition{
		{Criteria: json.RawMessage(`{"criteria_type":"prompt","expression":"the cart is full"}`), NextBlockLabel: "route"}}}}
	if res := e.Execute(t.Context(), job(t, prose, map[string]any{"site": "x", "total": 1}), &progress{}); !strings.Contains(res.FailureReason, "criteria in prose") ||
		!strings.Contains(res.FailureReason, "no language model") {
		t.Errorf("prose criteria without a model: %s", res.FailureReason)
	}
	nowhere := def
	nowhere.Blocks = client.Blocks{&client.ConditionalBlock{BlockBase: base("route"), BranchConditions: []client.BranchCondition{{IsDefault: true, NextBlockLabel: "gone"}}}}
	if res := e.Execute(t.Context(), job(t, nowhere, map[string]any{"site": "x", "total": 1}), &progress{}); !strings.Contains(res.FailureReason, `next_block_label "gone" names no block`) {
		t.Errorf("a branch to nowhere: %s", res.FailureReason)
	}
}

// TestWhileLoop: a while_loop runs its blocks while its condition holds,
// the condition reading what the last iteration did; a condition that
// never turns false stops at the bound, failing the block with a reason
// that says so.
func TestWhileLoop(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	e := newEngine(t, engine.Config{})
	// The products page has rows; each iteration requests the page again
	// and the condition counts the iterations through current_index.
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site")},
		Blocks: client.Blocks{
			&client.WhileLoopBlock{BlockBase: base("pages"),
				Condition:  client.BranchCriteria{Expression: "{{ pages.current_index | default(-1) < 2 }}"},
				LoopBlocks: client.Blocks{gotoBlock("visit", "{{ site }}"+testsite.PageProducts+"?page={{ current_index }}")}},
		},
	}
	res := e.Execute(t.Context(), job(t, def, map[string]any{"site": site.URL("")}), &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", res.Status, res.FailureReason)
	}
	var out struct {
		Pages []struct {
			Visit struct{ URL string } `json:"visit_output"`
		} `json:"pages_output"`
	}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Pages) != 3 || !strings.HasSuffix(out.Pages[2].Visit.URL, "?page=2") {
		t.Errorf("iterations %s", res.Output)
	}
	forever := def
	forever.Blocks = client.Blocks{&client.WhileLoopBlock{BlockBase: base("pages"), Condition: client.BranchCriteria{Expression: "{{ true }}"},
		LoopBlocks: client.Blocks{&client.WaitBlock{BlockBase: base("pause")}}}}
	res = e.Execute(t.Context(), job(t, forever, map[string]any{"site": site.URL("")}), &progress{})
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, "stopped after 100 iterations") {
		t.Errorf("an endless loop: %s %s", res.Status, res.FailureReason)
	}
}

// TestConditionalProse: criteria in prose are judged by the model, which
// sees the page as it is, the outputs so far and the values the criterion
// names (and no other parameter); its verdict picks the branch.
func TestConditionalProse(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	judge := func(match string, holds, namesTotal bool) llmtest.Step {
		return llmtest.Step{Kind: llm.KindVerify, Match: match, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
			text := r.LastUserText()
			// The page, the outputs and the values named reach the model.
			if !strings.Contains(text, "Insulated Water Bottle") || !strings.Contains(text, `"open_output"`) ||
				strings.Contains(text, `"total": 250`) != namesTotal || strings.Contains(text, `"site"`) {
				return llmtest.Reply{}, fmt.Errorf("the judge did not see the page, the outputs and only the values named: %s", text)
			}
			return llmtest.JSON(map[string]any{"valid": holds, "reasoning": "judged"}), nil
		})}
	}
	srv := llmtest.New(t,
		judge(`the customer is a reseller`, false, false),
		judge(`a product on the page is out of stock and the order total is 250`, true, true),
	)
	e := modelEngine(t, srv, engine.Config{})
	prose := func(s string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"criteria_type": "prompt", "expression": s})
		return b
	}
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site"), {Key: "total", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterInteger}},
		Blocks: client.Blocks{
			gotoBlock("open", "{{ site }}"+testsite.PageProducts),
			&client.ConditionalBlock{BlockBase: base("route"), BranchConditions: []client.BranchCondition{
				{Criteria: prose(`the customer is a reseller`), NextBlockLabel: "reseller"},
				{Criteria: prose(`a product on the page is out of stock and the order total is {{ total }}`), NextBlockLabel: "restock"},
				{IsDefault: true, NextBlockLabel: "reseller"},
			}},
			&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "reseller", NextBlockLabel: "done"}, URL: "{{ site }}" + testsite.PageForm},
			gotoBlock("restock", "{{ site }}"+testsite.PageTodos),
			gotoBlock("done", "{{ site }}/"),
		},
	}
	res := e.Execute(t.Context(), job(t, def, map[string]any{"site": site.URL(""), "total": 250}), &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("%s %s", res.Status, res.FailureReason)
	}
	out := outputOf(t, res)
	if out["restock_output"] == nil || out["reseller_output"] != nil {
		t.Errorf("the judged branch did not decide: %s", res.Output)
	}
	if route, _ := out["route_output"].(map[string]any); route["branch_index"] != 2.0 {
		t.Errorf("route_output %v, want branch 2", route)
	}
	if n := len(srv.Calls()); n != 2 {
		t.Errorf("%d model calls, want 2 (one a criterion)", n)
	}
}

// TestConditionalRetryLoop: a retry loop written as routes (a conditional
// whose default branch goes to a wait whose next_block_label goes back, the
// shape of the hosted service's conditional-retry example) is accepted at
// create through the daemon's API; run, it polls until its condition holds
// and completes, and a condition that never holds fails the run when a
// block is reached more than blocks.MaxBlockVisits times, the reason naming
// the block and the bound.
func TestConditionalRetryLoop(t *testing.T) {
	needBrowser(t)
	var mu sync.Mutex
	polls := map[string]int{}
	status := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.URL.Query().Get("final") == "" {
			polls[r.URL.Path]++
		}
		n := polls[r.URL.Path]
		mu.Unlock()
		// /soon is ready at its third poll, /never never is.
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"ready": %t}`, r.URL.Path == "/soon" && n >= 3)
	}))
	defer status.Close()
	fixture, err := os.ReadFile("testdata/conditional-retry.json")
	if err != nil {
		t.Fatal(err)
	}
	var def client.AgentDefinition
	if err := json.Unmarshal(fixture, &def); err != nil {
		t.Fatal(err)
	}
	c, _ := startDaemon(t, newEngine(t, engine.Config{}))
	ctx := t.Context()
	agent, err := c.Agents.Create(ctx, &def, nil)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	run := func(path string) *client.Run {
		t.Helper()
		started, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID,
			Parameters: map[string]any{"status_url": status.URL + path}})
		if err != nil {
			t.Fatal(err)
		}
		done, err := c.Runs.Wait(ctx, started.RunID, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return done
	}

	done := run("/soon")
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("a condition that holds at the third poll: %s: %s", done.Status, done.GetFailureReason())
	}
	var out struct {
		Check struct{ Body struct{ Ready bool } } `json:"check_output"`
		Done  *struct {
			StatusCode int `json:"status_code"`
		} `json:"done_output"`
	}
	if err := json.Unmarshal(done.Output, &out); err != nil {
		t.Fatal(err)
	}
	if !out.Check.Body.Ready || out.Done == nil {
		t.Errorf("the loop did not end at the ready branch: %s", done.Output)
	}
	mu.Lock()
	soon := polls["/soon"]
	mu.Unlock()
	if soon != 3 {
		t.Errorf("%d polls, want 3", soon)
	}

	failed := run("/never")
	reason := failed.GetFailureReason()
	if failed.Status != client.RunStatusFailed || !strings.Contains(reason, `Block "check" (http_request) failed`) ||
		!strings.Contains(reason, fmt.Sprintf("more than %d times", blocks.MaxBlockVisits)) {
		t.Errorf("a condition that never holds: %s: %s", failed.Status, reason)
	}
	mu.Lock()
	never := polls["/never"]
	mu.Unlock()
	if never != blocks.MaxBlockVisits {
		t.Errorf("%d polls, want %d (the bound)", never, blocks.MaxBlockVisits)
	}
}
