package engine_test

// Scripts through a real daemon: a run with run_with code records what
// the model did, the next replays it without a model call to the same
// output, and a page that changed under the script heals with one model
// call per broken step and a new version.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// Variants of the search page of shopPages.
const (
	pageAsRecorded = ""
	// pageRenamed renames the search button, gives it an id and puts a new
	// button where it stood.
	pageRenamed = "renamed"
	// pageMoved moves the search field after the button, in a box.
	pageMoved = "moved"
	// pageInserted puts a new field before the search field.
	pageInserted = "inserted"
)

// shopPages serves a search page, in the variant that variant holds, and
// its results.
func shopPages(t *testing.T, variant *atomic.Value) *httptest.Server {
	variant.CompareAndSwap(nil, pageAsRecorded)
	mux := http.NewServeMux()
	mux.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) {
		field := `<label for="q">Search the shop</label> <input id="q" name="q">`
		form := field + ` <button type="submit">Search</button>`
		switch variant.Load() {
		case pageRenamed:
			form = field + ` <button type="button" id="help">Help</button><button id="find" type="submit">Find</button>`
		case pageMoved:
			form = `<button type="submit">Search</button><div class="box"><p>Tip: search by name.</p>` + field + `</div>`
		case pageInserted:
			form = `<label for="coupon">Coupon</label> <input id="coupon" name="coupon"> ` + form
		}
		fmt.Fprintf(w, `<!doctype html><title>Search</title><form action="/results">%s</form>`, form)
	})
	mux.HandleFunc("/results", func(w http.ResponseWriter, r *http.Request) {
		q := html.EscapeString(r.URL.Query().Get("q"))
		more := ""
		if q == "more" { // a longer list than the one recorded
			more = `<li><h3>Snow Jacket</h3><span class="price">$150.00</span></li>`
		}
		fmt.Fprintf(w, `<!doctype html><title>Results for %s</title><h1>Results for %s</h1><ul id="results">
<li><h3>Trail Jacket</h3><span class="price">$89.00</span></li>
<li><h3>Rain Jacket</h3><span class="price">$1,299.50</span></li>%s</ul>`, q, q, more)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestScriptRecordReplayHeal(t *testing.T) {
	needBrowser(t)
	var variant atomic.Value
	site := shopPages(t, &variant)
	want := map[string]any{"query": "jacket", "products": []any{
		map[string]any{"name": "Trail Jacket", "price": 89.0}, map[string]any{"name": "Rain Jacket", "price": 1299.5}}}
	srv := llmtest.New(t,
		plan("Search with the search box.", typeInto("Search the shop", "jacket"), clickOn("Search")),
		decide(`Results for jacket`, "complete", "Searched.", nil),
		llmtest.Step{Kind: llm.KindExtract, Match: `Trail Jacket`, Reply: llmtest.JSON(want)},
	)
	c, _ := startDaemon(t, modelEngine(t, srv, engine.Config{}))
	ctx := t.Context()
	schema := json.RawMessage(`{"type":"object","required":["query","products"],"properties":{"query":{"type":"string"},
		"products":{"type":"array","items":{"type":"object","required":["name","price"],"properties":{"name":{"type":"string"},"price":{"type":"number"}}}}}}`)
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Shop search", WorkflowDefinition: client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site"), stringParam("query")},
		Blocks: client.Blocks{
			&client.NavigationBlock{BlockBase: base("search"), URL: "{{ site }}/search", NavigationGoal: `Search the shop for "{{ query }}".`},
			&client.ExtractionBlock{BlockBase: base("results"), DataExtractionGoal: "The query and the products with their prices.", DataSchema: schema},
		},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(query string) *client.Run {
		t.Helper()
		done := runToEnd(t, c, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, RunWith: "code",
			Parameters: map[string]any{"site": site.URL, "query": query}})
		if done.Status != client.RunStatusCompleted {
			t.Fatalf("run %s: %s: %s", done.RunID, done.Status, done.GetFailureReason())
		}
		return done
	}
	output := func(r *client.Run) any {
		var out map[string]any
		if err := json.Unmarshal(r.Output, &out); err != nil {
			t.Fatal(err)
		}
		return out["results_output"]
	}

	// 1. The model drives, and the run records the first version.
	first := run("jacket")
	if !srv.Done() {
		t.Fatalf("the first run left model steps unused: %v", srv.Pending())
	}
	sr := first.ScriptRun
	if sr == nil || sr.ScriptID == nil || sr.AIFallbackTriggered {
		t.Fatalf("script_run %+v", sr)
	}
	sc, err := c.Scripts.Get(ctx, *sr.ScriptID)
	if err != nil {
		t.Fatal(err)
	}
	file, err := c.Scripts.File(ctx, sc.ScriptID, 0)
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := script.Parse(file)
	if err != nil {
		t.Fatalf("the recorded script does not parse: %v\n%s", err, file)
	}
	search := recorded.Block("search")
	if search == nil || search.Mode != script.ModeReplay || len(search.Steps) != 2 {
		t.Fatalf("the search block's recording:\n%s", file)
	}
	if v := search.Steps[0].Value; v != "{{ query }}" {
		t.Errorf("the typed query is recorded as %q, want a reference to the parameter", v)
	}
	if after := search.Steps[1].After; after == nil || after.URL != "/results" {
		t.Errorf("the click's page after is %+v, want /results", after)
	}
	if b := recorded.Block("results"); b == nil || b.Extract == nil || len(b.Extract.Fields) != 5 {
		t.Fatalf("the extraction's recording:\n%s", file)
	}

	// 2. The same run replays without a model call, to the same output.
	calls := len(srv.Calls())
	second := run("jacket")
	if n := len(srv.Calls()) - calls; n != 0 {
		t.Errorf("the replay made %d model calls, want none", n)
	}
	if got, want := output(second), output(first); !jsonSame(got, want) {
		t.Errorf("the replay's output %v, the first run's %v", got, want)
	}
	if second.ScriptRun == nil || second.ScriptRun.AIFallbackTriggered || *second.ScriptRun.ScriptRevisionID != *sr.ScriptRevisionID {
		t.Errorf("the replay's script_run %+v, want the first version without fallback", second.ScriptRun)
	}
	steps, err := c.Runs.Steps(ctx, second.RunID)
	if err != nil {
		t.Fatal(err)
	}
	replayed := 0
	for _, s := range steps {
		if s.Decision == "replayed" {
			replayed++
		}
	}
	if replayed != 2 {
		t.Errorf("%d steps say replayed, want the 2 recorded actions", replayed)
	}

	// 3. Another query: what was typed from the parameter is typed from
	// the new one, still without the model.
	other := run("rain")
	if n := len(srv.Calls()) - calls; n != 0 {
		t.Errorf("the replay with another query made %d model calls", n)
	}
	if q := output(other).(map[string]any)["query"]; q != "rain" {
		t.Errorf("the replay with another query extracted query %v, want the new parameter", q)
	}

	// 4. The page changed: the button is renamed, has another id, and a new
	// button stands where it stood. The one broken step costs one model
	// call, and a new version is recorded.
	variant.Store(pageRenamed)
	srv.Add(llmtest.Step{Kind: llm.KindLocate, Match: `(?s)click.*Search`, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
		id, err := r.ElementID("Find")
		return llmtest.JSON(map[string]string{"id": id, "reasoning": "The Find button submits the search."}), err
	})})
	healed := run("jacket")
	if !srv.Done() {
		t.Fatalf("the heal left model steps unused: %v", srv.Pending())
	}
	if n := len(srv.Calls()) - calls; n != 1 {
		t.Errorf("the heal made %d model calls, want 1", n)
	}
	if got, want := output(healed), output(first); !jsonSame(got, want) {
		t.Errorf("the healed run's output %v, want %v", got, want)
	}
	hs := healed.ScriptRun
	if hs == nil || !hs.AIFallbackTriggered || *hs.ScriptID != *sr.ScriptID || *hs.ScriptRevisionID == *sr.ScriptRevisionID {
		t.Fatalf("the healed run's script_run %+v, want a fallback and a new version of %s", hs, *sr.ScriptID)
	}
	v2, err := c.Scripts.Get(ctx, *sr.ScriptID)
	if err != nil || v2.Version != 2 {
		t.Fatalf("after the heal the script is at version %v (%v), want 2", v2.Version, err)
	}
	file2, _ := c.Scripts.File(ctx, sc.ScriptID, 2)
	healedScript, err := script.Parse(file2)
	if err != nil {
		t.Fatal(err)
	}
	click := healedScript.Block("search").Steps[1]
	var locs []string
	for _, l := range click.Locators {
		locs = append(locs, l.String())
	}
	if got := strings.Join(locs, "; "); !strings.Contains(got, `id "find"`) || !strings.Contains(got, `role button "Find"`) || strings.Contains(got, `"Search"`) {
		t.Errorf("version 2 finds the button by %s, want its new id and name:\n%s", got, file2)
	}

	// 5. The new version replays without the model.
	calls = len(srv.Calls())
	again := run("jacket")
	if n := len(srv.Calls()) - calls; n != 0 {
		t.Errorf("the healed script's replay made %d model calls", n)
	}
	if as := again.ScriptRun; as == nil || as.AIFallbackTriggered || *as.ScriptRevisionID != *hs.ScriptRevisionID {
		t.Errorf("the replay of version 2: script_run %+v", as)
	}

	// 6. A longer list than the one recorded is not read short: the model
	// extracts it, and the script is recorded again.
	longer := map[string]any{"query": "more", "products": []any{
		map[string]any{"name": "Trail Jacket", "price": 89.0}, map[string]any{"name": "Rain Jacket", "price": 1299.5},
		map[string]any{"name": "Snow Jacket", "price": 150.0}}}
	srv.Add(llmtest.Step{Kind: llm.KindExtract, Match: `Snow Jacket`, Reply: llmtest.JSON(longer)})
	calls = len(srv.Calls())
	grown := run("more")
	if n := len(srv.Calls()) - calls; n != 1 {
		t.Errorf("a longer list: %d model calls, want the one extraction", n)
	}
	if got := output(grown); !jsonSame(got, longer) {
		t.Errorf("a longer list: output %v, want %v", got, longer)
	}
	if gs := grown.ScriptRun; gs == nil || !gs.AIFallbackTriggered {
		t.Errorf("a longer list: script_run %+v, want a fallback", gs)
	}
}

// TestScriptReplayWithoutFallbackNamesTheStep: a broken step with
// ai_fallback off fails the run, naming the step and what each locator
// found.
func TestScriptReplayWithoutFallbackNamesTheStep(t *testing.T) {
	needBrowser(t)
	var variant atomic.Value
	site, srv, c, agent := searchAgent(t, &variant)
	start := func(fallback *bool) *client.Run {
		return runToEnd(t, c, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, AIFallback: fallback,
			Parameters: map[string]any{"site": site.URL}})
	}
	if r := start(nil); r.Status != client.RunStatusCompleted {
		t.Fatalf("the recording run: %s: %s", r.Status, r.GetFailureReason())
	}
	variant.Store(pageRenamed)
	calls := len(srv.Calls())
	r := start(new(false))
	if r.Status != client.RunStatusFailed {
		t.Fatalf("a broken replay without fallback: %s, want failed", r.Status)
	}
	reason := r.GetFailureReason()
	for _, want := range []string{"step 2", `block "search"`, `role button "Search": nothing`, `text button "Search": nothing`, `found button "Help" instead`} {
		if !strings.Contains(reason, want) {
			t.Errorf("failure_reason %q does not say %q", reason, want)
		}
	}
	if n := len(srv.Calls()) - calls; n != 0 {
		t.Errorf("the model was called %d times with ai_fallback off", n)
	}
}

// searchAgent serves shopPages, starts a daemon whose model searches
// once (typing, clicking Search, completing) and creates an agent with
// run_with code of one navigation block that searches the site.
func searchAgent(t *testing.T, variant *atomic.Value) (*httptest.Server, *llmtest.Server, *client.Client, *client.Agent) {
	site := shopPages(t, variant)
	srv := llmtest.New(t,
		plan("Search with the search box.", typeInto("Search the shop", "jacket"), clickOn("Search")),
		decide(`Results for jacket`, "complete", "Searched.", nil),
	)
	c, _ := startDaemon(t, modelEngine(t, srv, engine.Config{}))
	agent, err := c.Agents.Create(t.Context(), &client.AgentDefinition{Title: "Shop search", RunWith: "code", WorkflowDefinition: client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site")},
		Blocks: client.Blocks{
			&client.NavigationBlock{BlockBase: base("search"), URL: "{{ site }}/search", NavigationGoal: `Search the shop for "jacket".`},
		},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return site, srv, c, agent
}

// runToEnd starts an agent run and waits for its end.
func runToEnd(t *testing.T, c *client.Client, req *client.AgentRunRequest) *client.Run {
	t.Helper()
	r, err := c.Runs.StartAgent(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Runs.Wait(t.Context(), r.RunID, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return done
}

func jsonSame(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestScriptHealsPageChanges: changes to the page cost at most one model
// call per step they break. A moved field and a new field before the
// target break nothing (the field's id, name and label still find it); a
// renamed button breaks its step, which costs one call.
func TestScriptHealsPageChanges(t *testing.T) {
	needBrowser(t)
	var variant atomic.Value
	site, srv, c, agent := searchAgent(t, &variant)
	run := func() *client.Run {
		t.Helper()
		done := runToEnd(t, c, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{"site": site.URL}})
		if done.Status != client.RunStatusCompleted {
			t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
		}
		return done
	}
	run() // records
	for _, c := range []struct {
		variant  string
		calls    int
		fallback bool
	}{
		{pageMoved, 0, false},
		{pageInserted, 0, false},
		{pageRenamed, 1, true},
		{pageRenamed, 0, false}, // the healed version replays
	} {
		variant.Store(c.variant)
		if c.calls > 0 {
			srv.Add(llmtest.Step{Kind: llm.KindLocate, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
				id, err := r.ElementID("Find")
				return llmtest.JSON(map[string]string{"id": id, "reasoning": "Find submits the search."}), err
			})})
		}
		before := len(srv.Calls())
		r := run()
		if n := len(srv.Calls()) - before; n != c.calls {
			t.Errorf("page %s: %d model calls, want %d", c.variant, n, c.calls)
		}
		if got := r.ScriptRun != nil && r.ScriptRun.AIFallbackTriggered; got != c.fallback {
			t.Errorf("page %s: ai_fallback_triggered %v, want %v", c.variant, got, c.fallback)
		}
	}
}

// TestScriptKeepsSecretsOut: a sign-in the model drives with a credential
// is recorded with the placeholders the model saw, never the secrets; its
// replay signs in again without the model, the engine typing the real
// password and a fresh one-time code.
func TestScriptKeepsSecretsOut(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	if err := site.AddAccount(loginUser, loginPassword, loginTOTP); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t,
		planWhen(`"password":"<secret:portal.password>"`, "Sign in with the details.",
			typeInto("Email", loginUser), typeInto("Password", "<secret:portal.password>"), clickOn("Sign in")),
		planWhen(`Two-step verification`, "Enter the one-time code.",
			typeInto("Verification code", "<secret:portal.totp>"), clickOn("Verify")),
		decide(`Welcome back, ada@example.com`, "complete", "Signed in.", nil),
	)
	e := modelEngine(t, srv, engine.Config{Vault: vault{"cred_1": &client.PasswordCredential{Username: loginUser, Password: loginPassword, TOTP: loginTOTP}}})
	def := loginAgent(site, "Sign in to the billing portal with the portal credential.")
	record := job(t, def, nil)
	record.Script = &executor.ScriptJob{Record: true, AIFallback: true, CacheKey: "default"}
	res := e.Execute(t.Context(), record, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("the recording run: %s: %s", res.Status, res.FailureReason)
	}
	first := ev(site).Form.Get("code")
	for _, s := range []string{loginPassword, loginTOTP, first} {
		if bytes.Contains(res.Script, []byte(s)) {
			t.Errorf("the script holds the secret %q:\n%s", s, res.Script)
		}
	}
	for _, p := range []string{"<secret:portal.password>", "<secret:portal.totp>"} {
		if !bytes.Contains(res.Script, []byte(p)) {
			t.Errorf("the script does not type the placeholder %s:\n%s", p, res.Script)
		}
	}

	calls := len(srv.Calls())
	replay := job(t, def, nil)
	replay.Script = &executor.ScriptJob{Replay: res.Script, Record: true, AIFallback: false, CacheKey: "default"}
	again := e.Execute(t.Context(), replay, &progress{})
	if again.Status != client.RunStatusCompleted || !again.ScriptReplayed {
		t.Fatalf("the replay: %s: %s", again.Status, again.FailureReason)
	}
	if n := len(srv.Calls()) - calls; n != 0 {
		t.Errorf("the replay called the model %d times", n)
	}
	if site.SignIns(loginUser) != 2 {
		t.Errorf("signed in %d times, want twice", site.SignIns(loginUser))
	}
	second := ev(site).Form.Get("code")
	if len(second) != 6 {
		t.Errorf("the replay sent the code %q", second)
	}
	noSecretIn(t, replay.Dir, loginPassword, loginTOTP, first, second)
}

// TestScriptReplaysWithoutAModel: a daemon with no model replays a
// script recorded elsewhere; a step it cannot replay fails the run,
// saying that no model could take over.
func TestScriptReplaysWithoutAModel(t *testing.T) {
	needBrowser(t)
	var variant atomic.Value
	site := shopPages(t, &variant)
	srv := llmtest.New(t,
		plan("Search with the search box.", typeInto("Search the shop", "jacket"), clickOn("Search")),
		decide(`Results for jacket`, "complete", "Searched.", nil),
	)
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site")},
		Blocks: client.Blocks{
			&client.NavigationBlock{BlockBase: base("search"), URL: "{{ site }}/search", NavigationGoal: `Search the shop for "jacket".`},
		},
	}
	record := job(t, def, map[string]any{"site": site.URL})
	record.Script = &executor.ScriptJob{Record: true, AIFallback: true, CacheKey: "default"}
	res := modelEngine(t, srv, engine.Config{}).Execute(t.Context(), record, &progress{})
	if res.Status != client.RunStatusCompleted || len(res.Script) == 0 {
		t.Fatalf("the recording run: %s: %s", res.Status, res.FailureReason)
	}

	noModel := newEngine(t, engine.Config{})
	replay := job(t, def, map[string]any{"site": site.URL})
	replay.Script = &executor.ScriptJob{Replay: res.Script, Record: true, AIFallback: true, CacheKey: "default"}
	if again := noModel.Execute(t.Context(), replay, &progress{}); again.Status != client.RunStatusCompleted || !again.ScriptReplayed {
		t.Fatalf("the replay without a model: %s: %s", again.Status, again.FailureReason)
	}

	variant.Store(pageRenamed)
	broken := job(t, def, map[string]any{"site": site.URL})
	broken.Script = &executor.ScriptJob{Replay: res.Script, Record: true, AIFallback: true, CacheKey: "default"}
	failed := noModel.Execute(t.Context(), broken, &progress{})
	if failed.Status != client.RunStatusFailed || !strings.Contains(failed.FailureReason, "the model did not take over: no language model is configured") {
		t.Errorf("a broken replay without a model: %s: %s", failed.Status, failed.FailureReason)
	}
	// Without a script, the same agent still needs a model before it starts.
	plain := job(t, def, map[string]any{"site": site.URL})
	if r := noModel.Execute(t.Context(), plain, &progress{}); r.Status != client.RunStatusFailed || !strings.Contains(r.FailureReason, "needs a language model") {
		t.Errorf("no script, no model: %s: %s", r.Status, r.FailureReason)
	}
}

// TestScriptWrittenByHand: a script written by a person (comments, flow
// style, fewer locators) replays, and a replay that changed nothing keeps
// its version, however the file was written.
func TestScriptWrittenByHand(t *testing.T) {
	needBrowser(t)
	var variant atomic.Value
	site, srv, c, agent := searchAgent(t, &variant)
	srv.AllowUnused() // the model is never asked
	file := `# Search the shop, written by hand.
format: abctl.script/v1
agent: ` + agent.WorkflowPermanentID + `
blocks:
  - label: search
    mode: replay
    steps:
      - {action: input_text, locators: [{by: label, value: Search the shop}], value: jacket}
      - action: click
        locators: [{by: role, role: button, value: Search}]
        after: {url: /results}
`
	created, err := c.Scripts.Create(t.Context(), &client.CreateScriptRequest{WorkflowID: agent.WorkflowPermanentID,
		Files: []client.ScriptFile{client.ScriptFileFromBytes("script.yaml", []byte(file))}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r := runToEnd(t, c, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{"site": site.URL}})
		if r.Status != client.RunStatusCompleted || r.ScriptRun == nil || *r.ScriptRun.ScriptID != created.ScriptID {
			t.Fatalf("%s: %s, script_run %+v", r.Status, r.GetFailureReason(), r.ScriptRun)
		}
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("the model was called %d times", n)
	}
	sc, err := c.Scripts.Get(t.Context(), created.ScriptID)
	if err != nil || sc.Version != 1 {
		t.Errorf("after two replays that changed nothing the script is at version %v (%v), want 1", sc.Version, err)
	}
}
