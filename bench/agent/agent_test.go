package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	ts "github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

var taskName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// TestTasksWellFormed: at least 40 tasks, named, classed, every class
// covered, each starting on a page the site serves, with a prompt that
// gives away nothing of the page's making and a check that checks
// something.
func TestTasksWellFormed(t *testing.T) {
	site := ts.Start(t)
	tasks := Tasks()
	if len(tasks) < 40 {
		t.Errorf("%d tasks, want at least 40", len(tasks))
	}
	seen := map[string]bool{}
	covered := map[string]int{}
	for _, tk := range tasks {
		if !taskName.MatchString(tk.Name) || seen[tk.Name] {
			t.Errorf("task name %q: not unique, or not lower-case words joined by dashes", tk.Name)
		}
		seen[tk.Name] = true
		if len(tk.Classes) == 0 {
			t.Errorf("%s: no class", tk.Name)
		}
		for _, c := range tk.Classes {
			if !slices.Contains(Classes, c) {
				t.Errorf("%s: unknown class %q", tk.Name, c)
			}
			covered[c]++
		}
		if strings.TrimSpace(tk.Prompt) == "" || regexp.MustCompile(`\[[a-z]?\d+\]|#[a-z][\w-]*|\bid=|\bclass\b|<[a-z]`).MatchString(tk.Prompt) {
			t.Errorf("%s: the prompt %q is empty or speaks of ids, classes or tags", tk.Name, tk.Prompt)
		}
		resp, err := http.Get(site.URL(tk.Start))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: its start page %s answers %d", tk.Name, tk.Start, resp.StatusCode)
		}
		c := tk.Check
		if len(c.Events) == 0 && c.Output == nil && len(c.Answers) == 0 {
			t.Errorf("%s: the check checks nothing but the status", tk.Name)
		}
		for _, e := range c.Events {
			if e.Kind == "" {
				t.Errorf("%s: an event check without a kind", tk.Name)
			}
		}
		if tk.Schema != nil {
			var s map[string]any
			if err := json.Unmarshal(tk.Schema, &s); err != nil || s["type"] == nil {
				t.Errorf("%s: the schema is not a JSON Schema object with a type: %v", tk.Name, err)
			}
			if c.Output == nil && len(c.Answers) == 0 {
				t.Errorf("%s: a schema but no expected output", tk.Name)
			}
		}
		if tk.MaxSteps < 0 || tk.MaxSteps > 50 {
			t.Errorf("%s: max steps %d", tk.Name, tk.MaxSteps)
		}
	}
	for _, c := range Classes {
		if covered[c] == 0 {
			t.Errorf("no task of class %q", c)
		}
	}
}

// TestCheckVerify: the checks compare numbers as numbers, fold strings
// only when asked, find answers at any depth, and read a login task's
// output inside its block's.
func TestCheckVerify(t *testing.T) {
	events := []ts.Event{{Kind: "eval-x", Form: map[string][]string{"a": {" 1 "}}}, {Kind: "eval-x", Form: map[string][]string{"a": {"2"}}}}
	cases := []struct {
		name   string
		c      Check
		out    string
		agent  bool
		passes bool
	}{
		{"number as number", Check{Output: map[string]any{"p": 18}}, `{"p":18.0}`, false, true},
		{"number as text", Check{Output: map[string]any{"p": 18}}, `{"p":"18.00"}`, false, false},
		{"extra member", Check{Output: map[string]any{"p": 18}}, `{"p":18,"q":1}`, false, false},
		{"case without fold", Check{Output: "Teal"}, `"teal"`, false, false},
		{"case with fold", Check{Output: "Teal  blue", Fold: true}, `" teal blue"`, false, true},
		{"spaces folded", Check{Output: "Teal blue", Fold: true}, `"teal   BLUE"`, false, true},
		{"answer deep", Check{Answers: []any{45.95}}, `{"items":[{"price":45.95}]}`, false, true},
		{"answer as text", Check{Answers: []any{45.95}}, `{"price":"$45.95"}`, false, false},
		{"agent output", Check{Output: map[string]any{"n": 1}}, `{"task_output":{"extracted_information":{"n":1}}}`, true, true},
		{"last event wins", Check{Events: []EventCheck{ev("eval-x", "a", "2")}}, `null`, false, true},
		{"event field", Check{Events: []EventCheck{ev("eval-x", "a", "1")}}, `null`, false, false},
		{"missing event", Check{Events: []EventCheck{ev("eval-y")}}, `null`, false, false},
	}
	for _, tc := range cases {
		res := executorResult("completed", tc.out)
		why := tc.c.verify(res, events, tc.agent)
		if (why == "") != tc.passes {
			t.Errorf("%s: verify says %q, want passing=%v", tc.name, why, tc.passes)
		}
	}
	if why := (Check{Status: "terminated"}).verify(executorResult("completed", `null`), nil, false); !strings.Contains(why, "want terminated") {
		t.Errorf("a wrong status: %q", why)
	}
}

// TestReplayMapsIDs: a recorded answer's ids become those of the same
// elements in a new observation: the same line, the same occurrence of a
// repeated line, else the same kind and name; a missing or ambiguous
// element is an error that names it.
func TestReplayMapsIDs(t *testing.T) {
	old := "goal\n[e1] link \"Details\"\n[e2] link \"Details\"\n[e3] button \"Save\" disabled\n[e4] input:text \"Email\"\nStep 3 of 10: [e9] is not a line\n"
	answer := "```json\n{\"actions\":[{\"type\":\"click\",\"id\":\"e2\"},{\"type\":\"input_text\",\"id\":\"e4\",\"text\":\"e3 stays\"},{\"type\":\"click\",\"id\":\"e3\"},],}\n```"
	c := recordCall("plan", old, answer)
	want := map[string]string{"e2": `link "Details"`, "e3": `button "Save" disabled`, "e4": `input:text "Email"`}
	if len(c.Elements) != len(want) || c.Occurrence["e2"] != 1 || len(c.Occurrence) != 1 {
		t.Fatalf("recorded %+v", c)
	}
	for id, line := range want {
		if c.Elements[id] != line {
			t.Errorf("element %s recorded as %q, want %q", id, c.Elements[id], line)
		}
	}
	// New ids (another scheme), the lines moved, Save no longer disabled.
	now := "[k7] input:text \"Email\"\n[aa] link \"Details\"\n[ab] link \"Details\"\n[x] button \"Save\"\n"
	got, err := replayAnswer(c, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"id":"ab"`, `"id":"k7"`, `"id":"x"`, `"text":"e3 stays"`} {
		if !strings.Contains(got, s) {
			t.Errorf("replayed answer %s lacks %s", got, s)
		}
	}
	if _, err := replayAnswer(c, "[a] link \"Details\"\n[b] input:text \"Email\"\n"); err == nil || !strings.Contains(err.Error(), `button \"Save\" disabled`) {
		t.Errorf("a missing element: %v", err)
	}
	if _, err := replayAnswer(c, now+"[y] button \"Save\" primary\n"); err == nil || !strings.Contains(err.Error(), "2 elements") {
		t.Errorf("an ambiguous element: %v", err)
	}
}

// TestConvertHand: a hand-played directory becomes a recording in the
// order of its files, kinds taken from the requests, stopping at a
// request without an answer.
func TestConvertHand(t *testing.T) {
	dir := t.TempDir()
	req := func(schema, user string) string {
		b, _ := json.Marshal(map[string]any{"model": "hand", "messages": []any{
			map[string]any{"role": "system", "content": "You operate a web browser for a user"},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": user}}}},
			"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": schema, "schema": map[string]any{}}}})
		return string(b)
	}
	files := map[string]string{
		"0001.request.json": req("browser_actions", "[p1] button \"Go\""), "0001.answer.txt": `{"thought":"go","actions":[{"type":"click","id":"p1"}]}` + "\n",
		"0002.request.json": req("extracted_data", "text"), "0002.answer.txt": `{"price": 18}`,
		"0010.request.json": req("browser_actions", "[p1] button \"Go\""),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := ConvertHand(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec) != 2 || rec[0].Kind != llm.KindPlan || rec[0].Elements["p1"] != `button "Go"` || rec[1].Kind != llm.KindExtract || rec[1].Answer != `{"price": 18}` {
		t.Errorf("recording %+v", rec)
	}
}

// complete is the action that ends a task.
func complete(text string) llmtest.Action { return llmtest.Action{Type: "complete", Text: text} }

// plan answers a planning call with the actions and data, reporting usage
// input tokens.
func plan(usage int, thought string, data any, acts ...llmtest.Action) llmtest.Step {
	return llmtest.Step{Kind: llm.KindPlan, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
		rep, err := llmtest.PlanAnswer(r, thought, data, acts...)
		return rep.WithUsage(usage, 30), err
	})}
}

// TestRecordThenReplay: three tasks played by a scripted model through the
// recorder, then replayed without it: the same checks pass, the calls
// are counted, and the prompt tokens per step come from the provider's
// usage (estimated in the replay, which reports none).
func TestRecordThenReplay(t *testing.T) {
	if _, err := browser.FindChromium(""); err != nil {
		t.Skipf("skipped: Chromium is missing: %v", err)
	}
	srv := llmtest.New(t,
		// dialog-invite
		plan(1101, "Open the invitation.", nil, llmtest.Click("Invite member")),
		plan(1102, "Fill it in and send.", nil, llmtest.Type("Email address", "sam@example.org"),
			llmtest.Choose("Role", "Editor"), llmtest.Click("Send invite")),
		plan(1103, "Invited.", nil, complete("Invited sam@example.org as an editor.")),
		// shop-price-no-schema
		plan(1201, "Search.", nil, llmtest.Type("Search the shop", "headlamp"), llmtest.Click("Search")),
		plan(1202, "The price is shown.", map[string]any{"price": 45.95}, complete("The headlamp costs $45.95.")),
		// todo-add
		plan(1301, "Type and press Enter.", nil, llmtest.Type("What needs to be done?", "buy oat milk"), llmtest.Key("Enter")),
		plan(1302, "Added.", nil, complete("Added the todo.")),
	)
	env := map[string]string{"ABCTL_LLM_PROVIDER": "openai-compatible", "ABCTL_LLM_BASE_URL": srv.URL() + "/v1",
		"ABCTL_LLM_MODEL": "scripted", "ABCTL_LLM_MAX_RETRIES": "-1"}
	getenv := func(k string) string { return env[k] }
	rec := t.TempDir()
	run := "^(dialog-invite|shop-price-no-schema|todo-add)$"
	first, err := Evaluate(t.Context(), Options{Run: run, Record: rec, Out: filepath.Join(t.TempDir(), "r.json")}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	wantTokens := map[string][]int{"dialog-invite": {1101, 1102, 1103}, "shop-price-no-schema": {1201, 1202}, "todo-add": {1301, 1302}}
	if len(first.Tasks) != 3 {
		t.Fatalf("%d tasks ran", len(first.Tasks))
	}
	for _, tr := range first.Tasks {
		if !tr.Success {
			t.Errorf("recording %s: %s", tr.Name, tr.Reason)
		}
		if !slices.Equal(tr.PromptTokens, wantTokens[tr.Name]) || tr.TokensEstimated || tr.Calls != len(wantTokens[tr.Name]) {
			t.Errorf("%s: tokens %v (estimated %v), %d calls; want %v from the usage", tr.Name, tr.PromptTokens, tr.TokensEstimated, tr.Calls, wantTokens[tr.Name])
		}
		if tr.WallMS <= 0 || tr.OutsideMS <= 0 || tr.OutsideMS > tr.WallMS {
			t.Errorf("%s: wall %v ms, outside the model %v ms", tr.Name, tr.WallMS, tr.OutsideMS)
		}
	}
	if tot := first.Total; tot.Tasks != 3 || tot.Succeeded != 3 || tot.Calls != len(srv.Calls()) || tot.MedianPromptTokens != 1201 {
		t.Errorf("totals %+v (the model got %d calls)", tot, len(srv.Calls()))
	}
	for name := range wantTokens {
		r, ok, err := ReadRecording(rec, name)
		if err != nil || !ok || len(r) != len(wantTokens[name]) {
			t.Errorf("recording of %s: %d calls, %v", name, len(r), err)
		}
	}

	calls := len(srv.Calls())
	again, err := Evaluate(t.Context(), Options{Run: run + "|^tree-select$", Replay: rec}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Calls()) != calls {
		t.Errorf("the replay called the model")
	}
	for _, tr := range again.Tasks {
		if tr.Name == "tree-select" {
			if tr.Skipped == "" {
				t.Errorf("tree-select has no recording but was not skipped")
			}
			continue
		}
		if !tr.Success || tr.Calls != len(wantTokens[tr.Name]) || !tr.TokensEstimated || len(tr.PromptTokens) != len(wantTokens[tr.Name]) {
			t.Errorf("replay of %s: success %v (%s), %d calls, tokens %v estimated %v", tr.Name, tr.Success, tr.Reason, tr.Calls, tr.PromptTokens, tr.TokensEstimated)
		}
	}
	if tot := again.Total; tot.Tasks != 3 || tot.Succeeded != 3 || tot.Skipped != 1 {
		t.Errorf("replay totals %+v", tot)
	}
	var md strings.Builder
	again.WriteMarkdown(&md)
	if !strings.Contains(md.String(), "3 of 3 tasks succeeded") || !strings.Contains(md.String(), "| tree-select |") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// TestRecordedReplays replays every task recorded under
// testdata/recorded (the evaluation played by a model) and requires each
// to succeed: the harness and the engine keep doing what the model
// decided.
func TestRecordedReplays(t *testing.T) {
	dir := filepath.Join("testdata", "recorded")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		t.Skip("no recordings under testdata/recorded yet (TestRecordThenReplay tests the harness)")
	}
	if _, err := browser.FindChromium(""); err != nil {
		t.Skipf("skipped: Chromium is missing: %v", err)
	}
	var names []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if _, ok := findTask(name); !ok {
			t.Errorf("%s records no task of the evaluation", f)
			continue
		}
		names = append(names, regexp.QuoteMeta(name))
	}
	rep, err := Evaluate(t.Context(), Options{Run: "^(" + strings.Join(names, "|") + ")$", Replay: dir}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range rep.Tasks {
		if !tr.Success {
			t.Errorf("replay of %s: %s", tr.Name, tr.Reason)
		}
	}
}

func executorResult(status, output string) executor.Result {
	return executor.Result{Status: client.RunStatus(status), Output: json.RawMessage(output)}
}
