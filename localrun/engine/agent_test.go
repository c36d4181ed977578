package engine_test

// The agent loop against the test site, with the scripted model over real
// HTTP and a real Chromium. Scripts name elements by their text or label
// (llmtest's element lookup), never by id.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// TestTaskLoginErrorCodeMapped: a sign-in with a wrong password lands on
// the site's error page; the model terminates, the failure is matched to
// the user's code, which appears at output.error next to the raw reason.
func TestTaskLoginErrorCodeMapped(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	srv := llmtest.New(t,
		plan("The sign-in form is empty; fill it and sign in.",
			typeInto("Username", "alice"), typeInto("Password", "not-the-password"), clickOn("Sign in")),
		decide(`Sign-in failed`, "terminate", "The site says the username or the password is wrong.", nil),
		llmtest.Step{Kind: llm.KindClassify, Match: `(?s)login_failed.*wrong`, Reply: llmtest.JSON(map[string]any{"errors": []any{
			map[string]any{"error_code": "login_failed", "reasoning": "The error page says the password is wrong.", "confidence": 0.93},
			map[string]any{"error_code": "invented_code", "reasoning": "not the user's", "confidence": 0.99},
		}})},
	)
	e := modelEngine(t, srv, engine.Config{})
	p := &stepDetails{}
	j := taskJob(t, &client.TaskRunRequest{
		Prompt: "Sign in to the members area as alice with the password not-the-password.",
		URL:    site.URL(testsite.PageMembersLogin),
		ErrorCodeMapping: map[string]string{
			"login_failed": "The site refuses the username or the password",
			"maintenance":  "The site is down for maintenance",
		},
	})
	res := e.Execute(t.Context(), j, p)

	if res.Status != client.RunStatusTerminated {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	if !strings.Contains(res.FailureReason, "the username or the password is wrong") {
		t.Errorf("failure_reason %q", res.FailureReason)
	}
	if out := outputOf(t, res); out["error"] != "login_failed" || len(out) != 1 {
		t.Errorf("output %s, want {\"error\":\"login_failed\"}", res.Output)
	}
	var codes []string
	for _, e := range errorsOf(t, res) {
		if c, ok := e["error_code"].(string); ok {
			codes = append(codes, c)
		}
	}
	if !slices.Equal(codes, []string{"login_failed"}) {
		t.Errorf("errors name codes %v, want only the user's login_failed", codes)
	}
	if ev := waitEvent(t, site, testsite.EventMembersLogin); ev.Form.Get("username") != "alice" || ev.Form.Get("ok") != "false" {
		t.Errorf("the site saw %v", ev.Form)
	}

	// The prompts: the page between the run's markers, the goal, no
	// screenshot for a model without vision.
	plans := callsOf(srv, llm.KindPlan)
	if len(plans) != 2 {
		t.Fatalf("%d planning calls", len(plans))
	}
	for _, c := range plans {
		text := c.LastUserText()
		m := pageTag.FindStringSubmatch(text)
		if m == nil || !strings.Contains(text, "</page-"+m[1]+">") || !strings.Contains(text, "never as instructions") {
			t.Errorf("the page is not delimited as data in:\n%s", text)
		}
		if !strings.Contains(text, "not-the-password") || c.ImageCount() != 0 || c.SchemaMode != "json_schema" {
			t.Errorf("plan call: goal missing, %d images, schema mode %q", c.ImageCount(), c.SchemaMode)
		}
	}
	if !strings.Contains(plans[1].LastUserText(), "Sign in") || !strings.Contains(plans[1].LastUserText(), "step ") {
		t.Errorf("the second plan lacks the history:\n%s", plans[1].LastUserText())
	}

	// The step log and the step reports.
	steps := readSteps(t, j.Dir)
	if len(steps.Steps) != 2 || steps.Steps[0].Decision != "continue" || steps.Steps[1].Decision != "terminate" {
		t.Fatalf("steps %+v", steps.Steps)
	}
	first := steps.Steps[0]
	if len(first.Actions) != 3 || !first.Actions[2].OK || first.Actions[1].Text != "********" {
		t.Errorf("first step's actions %+v (the password must be masked)", first.Actions)
	}
	raw, _ := os.ReadFile(filepath.Join(j.Dir, engine.StepsName))
	if strings.Contains(string(raw), "not-the-password") {
		t.Error("the step log holds the typed password")
	}
	if first.Timings.Total <= 0 || first.Timings.Observe <= 0 || first.PromptChars == 0 || first.Usage.InputTokens == 0 {
		t.Errorf("first step's timings %+v, prompt %d chars, usage %+v", first.Timings, first.PromptChars, first.Usage)
	}
	if len(steps.Calls) != 3 || steps.Usage.InputTokens == 0 {
		t.Errorf("calls %+v usage %+v", steps.Calls, steps.Usage)
	}
	d := p.details()
	if len(d) != 2 || d[0].Step != 1 || len(d[0].Actions) != 3 || d[1].Decision != "terminate" {
		t.Fatalf("step reports %+v", d)
	}
	// Each step names the screenshots of its page before and after (the
	// page after one is the page before the next) and the element its
	// first action acted on, where it was on the page before.
	if d[0].Before == "" || !slices.Contains(res.Screenshots, d[0].Before) || d[0].After == "" ||
		!slices.Contains(res.Screenshots, d[0].After) || d[1].Before != d[0].After || d[1].After != "" {
		t.Errorf("the steps' screenshots: before %q after %q, then before %q after %q; the run's %v",
			d[0].Before, d[0].After, d[1].Before, d[1].After, res.Screenshots)
	}
	if el := d[0].Element; el == nil || !strings.Contains(el.Name, "Username") || el.Box.Width <= 0 || el.Box.Height <= 0 ||
		el.Box.X+el.Box.Width > el.Viewport.Width || el.Box.Y+el.Box.Height > el.Viewport.Height {
		t.Errorf("the first step's element: %+v, want the Username field, inside the viewport", el)
	} else if d[1].Element != nil {
		t.Errorf("the terminating step acted on %+v", d[1].Element)
	}
	if (d[0].RecordingOffset != nil) != (res.Recording != "") {
		t.Errorf("recording %q, the first step's offset in it %v", res.Recording, d[0].RecordingOffset)
	}
	if !slices.Equal(res.Logs, []string{engine.StepsName}) {
		t.Errorf("logs %v", res.Logs)
	}
	if res.StepCount != 2 || len(res.Screenshots) < 2 || !slices.Equal(p.screenshots(), res.Screenshots) {
		t.Errorf("steps %d, screenshots %v (reported %v)", res.StepCount, res.Screenshots, p.screenshots())
	}
	if !strings.Contains(res.Summary, "wrong") {
		t.Errorf("summary %q", res.Summary)
	}
}

// TestTaskMultiPageForm: a form over three pages. The first batch ends
// with a click that loads the next page, so the action after it is not
// done; the data the model gives at the end is the output.
func TestTaskMultiPageForm(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	srv := llmtest.New(t,
		plan("Fill in the details and go on.",
			typeInto("Full name", "Ada Lovelace"), typeInto("Email", "ada@example.com"), clickOn("Next"), clickOn("Next")),
		planWhen(`(?s)not done, the page changed.*your plan \(2 of 3\)`, "Choose Pro and accept the terms.",
			choose("Plan", "Pro"), clickOn("I accept the terms"), clickOn("Next")),
		planWhen(`review \(3 of 3\)`, "Submit.", clickOn("Submit application")),
		llmtest.Step{Kind: llm.KindPlan, Match: `Application received`, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
			ref := refPattern.FindString(r.LastUserText())
			return llmtest.JSON(map[string]any{"thought": "Done.", "data": map[string]any{"reference": ref},
				"actions": []any{map[string]any{"type": "complete", "text": "Submitted the application; reference " + ref + "."}}}), nil
		})},
	)
	e := modelEngine(t, srv, engine.Config{})
	res := e.Execute(t.Context(), taskJob(t, &client.TaskRunRequest{
		Prompt: "Apply for a Pro account as Ada Lovelace (ada@example.com) and give the reference.",
		URL:    site.URL(testsite.PageApplyStep1),
	}), &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	if out := outputOf(t, res); out["reference"] != testsite.ApplyReference {
		t.Errorf("output %s", res.Output)
	}
	ev := waitEvent(t, site, testsite.EventApplication)
	if ev.Form.Get("name") != "Ada Lovelace" || ev.Form.Get("email") != "ada@example.com" || ev.Form.Get("plan") != "pro" {
		t.Errorf("the site received %v", ev.Form)
	}
	if res.StepCount != 4 || !strings.Contains(res.Summary, testsite.ApplyReference) {
		t.Errorf("steps %d, summary %q", res.StepCount, res.Summary)
	}
	if _, ok := outputOf(t, res)["error"]; ok {
		t.Error("a completed run has an error key")
	}
}

var refPattern = regexpMust(`APP-\d{4}-\d{4}`)

// TestTaskSearchThenExtract: a search, then the results extracted against
// a schema. The first extraction has prices as text: one repair call with
// the validation errors gets numbers, and the output validates.
func TestTaskSearchThenExtract(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	schema := json.RawMessage(`{"type":"object","properties":{"results":{"type":"array","items":{"type":"object",
		"properties":{"name":{"type":"string"},"price":{"type":"number"}},"required":["name","price"],"additionalProperties":false}}},
		"required":["results"],"additionalProperties":false}`)
	extractRows := func(asText bool) llmtest.Reply {
		return llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
			var rows []any
			for _, row := range shopRowsIn(r.Prompt()) {
				var price any = "$" + row[1]
				if !asText {
					price = json.Number(row[1])
				}
				rows = append(rows, map[string]any{"name": row[0], "price": price})
			}
			return llmtest.JSON(map[string]any{"results": rows}), nil
		})
	}
	srv := llmtest.New(t,
		plan("Search for socks.", typeInto("Search the shop", "socks"), pressKey("Enter")),
		decide(`2 results for "socks"`, "complete", "Searched the shop for socks.", nil),
		llmtest.Step{Kind: llm.KindExtract, Match: `Merino Wool Socks`, Reply: extractRows(true)},
		llmtest.Step{Kind: llm.KindRepair, Match: `(?s)does not match the schema.*/results/0/price`, Reply: extractRows(false)},
	)
	e := modelEngine(t, srv, engine.Config{})
	res := e.Execute(t.Context(), taskJob(t, &client.TaskRunRequest{
		Prompt:               "Search the shop for socks and list the results with their prices.",
		URL:                  site.URL(testsite.PageShopSearch),
		DataExtractionSchema: schema,
	}), &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	var out struct {
		Results []struct {
			Name  string
			Price float64
		}
	}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, it := range testsite.ShopCatalog() {
		if strings.Contains(strings.ToLower(it.Name), "socks") {
			want = append(want, it.Name+" "+it.Price)
		}
	}
	var got []string
	for _, r := range out.Results {
		got = append(got, r.Name+" "+strconvFloat(r.Price))
	}
	if !slices.Equal(got, want) {
		t.Errorf("extracted %v, want %v", got, want)
	}
	if len(res.Errors) != 0 {
		t.Errorf("errors %s", res.Errors)
	}
	ext := callsOf(srv, llm.KindExtract)
	if len(ext) != 1 || ext[0].SchemaMode != "json_schema" || !strings.Contains(string(ext[0].Schema), `"price"`) {
		t.Errorf("the extraction call did not send the schema: %+v", ext)
	}
	if regexp.MustCompile(`(?m)^\[[bcdfghjklmnpqrstvwxz]{2,}\] `).MatchString(ext[0].LastUserText()) {
		t.Error("the extraction prompt shows element ids")
	}
}
