package engine_test

// The agent through a real daemon: a task run to completed with
// schema-valid output, screenshots and a recording; single actions with
// intentions.

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// TestDaemonTaskRun: POST /v1/run/tasks with a data_extraction_schema
// reaches completed with output that follows the schema, screenshots and
// a recording.
func TestDaemonTaskRun(t *testing.T) {
	needBrowser(t)
	needFFmpeg(t)
	site := testsite.Start(t)
	srv := llmtest.New(t,
		plan("Search for jacket.", typeInto("Search the shop", "jacket"), pressKey("Enter")),
		decide(`2 results for "jacket"`, "complete", "Searched the shop for jackets.", nil),
		llmtest.Step{Kind: llm.KindExtract, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
			var items []any
			for _, row := range shopRowsIn(r.Prompt()) {
				items = append(items, map[string]any{"name": row[0], "price": json.Number(row[1]), "rating": json.Number(row[2])})
			}
			return llmtest.JSON(map[string]any{"items": items}), nil
		})},
	)
	c, _ := startDaemon(t, modelEngine(t, srv, engine.Config{Record: true}))
	ctx := t.Context()
	schema := json.RawMessage(`{"type":"object","required":["items"],"properties":{"items":{"type":"array","minItems":1,
		"items":{"type":"object","required":["name","price","rating"],"properties":{"name":{"type":"string"},"price":{"type":"number"},"rating":{"type":"number"}}}}}}`)
	run, err := c.Runs.StartTask(ctx, &client.TaskRunRequest{
		Prompt: "Search the shop for jackets and list them with price and rating.", URL: site.URL(testsite.PageShopSearch),
		DataExtractionSchema: schema, MaxSteps: new(5),
	})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 200 * time.Millisecond, MaxInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
	}
	var out struct {
		Items []struct {
			Name          string
			Price, Rating float64
		}
	}
	if err := json.Unmarshal(done.Output, &out); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, it := range testsite.ShopCatalog() {
		if strings.Contains(strings.ToLower(it.Name), "jacket") {
			want = append(want, it.Name+" "+it.Price+" "+it.Rating)
		}
	}
	var got []string
	for _, it := range out.Items {
		got = append(got, it.Name+" "+strconvFloat(it.Price)+" "+strconv.FormatFloat(it.Rating, 'f', -1, 64))
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("output %s: got %v, want %v", done.Output, got, want)
	}
	if done.StepCount == nil || *done.StepCount != 2 || len(done.ScreenshotURLs) < 2 {
		t.Errorf("steps %v, %d screenshots", done.StepCount, len(done.ScreenshotURLs))
	}
	if b := get(t, done.ScreenshotURLs[0]); !isJPEG(b) {
		t.Error("the newest screenshot is not a JPEG")
	}
	if done.RecordingURL == nil || !isWebM(get(t, *done.RecordingURL)) {
		t.Errorf("recording %v", done.RecordingURL)
	}
}

// TestDaemonRunActionWithIntentions: single actions the model locates,
// with selectors that work without it afterwards, and the model-only
// actions.
func TestDaemonRunActionWithIntentions(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	locate := func(match, name, text string) llmtest.Step {
		return llmtest.Step{Kind: llm.KindLocate, Match: match, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
			if name == "" {
				return llmtest.JSON(map[string]string{"id": "", "text": "", "reasoning": "Nothing on the page is red."}), nil
			}
			id, err := r.ElementID(name)
			return llmtest.JSON(map[string]string{"id": id, "text": text, "reasoning": "It reads " + name + "."}), err
		})}
	}
	srv := llmtest.New(t,
		locate(`the field for the user name`, "Username", ""),
		locate(`(?s)the password field.*"grace"`, "Password", "hopper"),
		locate(`the button that signs in`, "Sign in", ""),
		locate(`the link that signs out`, "Sign out", ""),
		llmtest.Step{Kind: llm.KindExtract, Match: `the names of the products that are out of stock`,
			Reply: llmtest.JSON(map[string]any{"out_of_stock": []string{"Insulated Water Bottle", "Compact Camping Stove"}})},
		llmtest.Step{Kind: llm.KindVerify, Match: `(?s)lists outdoor gear.*Trail Running Shoes`,
			Reply: llmtest.JSON(map[string]any{"valid": true, "reasoning": "The table lists gear."})},
		llmtest.Step{Kind: llm.KindPrompt, Match: `Name a colour`, Reply: llmtest.Text("Blue")},
		plan("Search for poles.", typeInto("Search the shop", "poles"), clickOn("Search")),
		decide(`1 results for "poles"`, "complete", "Searched for poles.", nil),
		locate(`the big red button`, "", ""),
	)
	e := modelEngine(t, srv, engine.Config{ActionIdle: time.Hour}) // no idle end between its actions, however slow
	c, _ := startDaemon(t, e)
	ctx := t.Context()
	login := site.URL(testsite.PageLogin)

	first, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: login, Action: client.Action{
		Type: client.ActionInputText, Intention: "the field for the user name", Value: "grace"}})
	if err != nil {
		t.Fatal(err)
	}
	wr := first.WorkflowRunID
	var typed map[string]any
	if err := json.Unmarshal(first.Result, &typed); err != nil || typed["value"] != "grace" || typed["ai"] != true || typed["selector"] == "" {
		t.Fatalf("ai_input_text result %s (%v)", first.Result, err)
	}
	// The value comes from the intention when the request has none; a
	// password is not echoed.
	res, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: login, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionInputText, Intention: "the password field", Data: json.RawMessage(`{"user":"grace"}`)}})
	if err != nil || !strings.Contains(string(res.Result), `"value":"********"`) {
		t.Fatalf("password: %s %v", res.Result, err)
	}
	// A selector that fails: the intention takes over.
	res, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: login, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionClick, Selector: "#old-login-button", Intention: "the button that signs in", Timeout: new(300.0)}})
	if err != nil {
		t.Fatal(err)
	}
	var clicked map[string]any
	json.Unmarshal(res.Result, &clicked)
	if clicked["action"] != "ai_click" || !strings.Contains(clicked["element"].(string), "Sign in") || clicked["selector"] == "" {
		t.Errorf("ai_click result %s", res.Result)
	}
	if ev := waitEvent(t, site, testsite.EventLogin); ev.Form.Get("username") != "grace" || ev.Form.Get("password") != "hopper" {
		t.Errorf("the site saw %v", ev.Form)
	}

	// locate_element gives a selector that works without a model.
	account := site.URL(testsite.PageAccount)
	res, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: account, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionLocateElement, Prompt: "the link that signs out"}})
	if err != nil {
		t.Fatal(err)
	}
	var sel string
	if err := json.Unmarshal(res.Result, &sel); err != nil || sel == "" {
		t.Fatalf("locate_element result %s", res.Result)
	}
	if _, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: account, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionClick, Selector: sel}}); err != nil {
		t.Errorf("the located selector %q: %v", sel, err)
	}

	// extract, validate, prompt.
	products := site.URL(testsite.PageProducts)
	res, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: products, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionExtract, Prompt: "the names of the products that are out of stock",
		ExtractSchema: json.RawMessage(`{"type":"object","properties":{"out_of_stock":{"type":"array","items":{"type":"string"}}},"required":["out_of_stock"]}`)}})
	if err != nil || string(res.Result) != `{"out_of_stock":["Insulated Water Bottle","Compact Camping Stove"]}` {
		t.Errorf("extract: %s %v", res.Result, err)
	}
	res, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: products, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionValidate, Prompt: "The page lists outdoor gear."}})
	if err != nil || string(res.Result) != "true" {
		t.Errorf("validate: %s %v", res.Result, err)
	}
	res, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: products, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionPrompt, Prompt: "Name a colour."}})
	if err != nil || string(res.Result) != `"Blue"` {
		t.Errorf("prompt: %s %v", res.Result, err)
	}

	// ai_act: the loop does the intention; the result is null.
	shop := site.URL(testsite.PageShopSearch)
	res, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: shop, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionAct, Intention: "search the shop for poles"}})
	if err != nil || string(res.Result) != "null" {
		t.Errorf("ai_act: %s %v", res.Result, err)
	}

	// No element fits: 422 with the model's reason.
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: shop, WorkflowRunID: wr, Action: client.Action{
		Type: client.ActionClick, Intention: "the big red button"}})
	if ae := apiError(t, err, http.StatusUnprocessableEntity); !strings.Contains(ae.Detail, "No element on the page fits") {
		t.Errorf("detail %q", ae.Detail)
	}
	// Missing fields: 400.
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: shop, WorkflowRunID: wr, Action: client.Action{Type: client.ActionClick}})
	if ae := apiError(t, err, http.StatusBadRequest); !strings.Contains(ae.Detail, "needs a selector") {
		t.Errorf("detail %q", ae.Detail)
	}
}

// TestDaemonAgentOfAIBlocks: an agent of navigation, extraction,
// validation and text_prompt blocks created and run through the daemon
// completes with the extraction's output in its schema, screenshots and a
// recording.
func TestDaemonAgentOfAIBlocks(t *testing.T) {
	needBrowser(t)
	needFFmpeg(t)
	site := testsite.Start(t)
	srv := llmtest.New(t, membersScript()...)
	c, _ := startDaemon(t, modelEngine(t, srv, engine.Config{Record: true}))
	ctx := t.Context()
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Members", WorkflowDefinition: membersAgent()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{
		"site": site.URL(""), "user": testsite.MembersUser, "password": testsite.MembersPassword}})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 200 * time.Millisecond, MaxInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
	}
	var out struct {
		ReadWelcome struct {
			Welcome *string `json:"welcome"`
		} `json:"read_welcome_output"`
		Greet struct {
			Response string `json:"llm_response"`
		} `json:"greet_output"`
	}
	if err := json.Unmarshal(done.Output, &out); err != nil || out.ReadWelcome.Welcome == nil || *out.ReadWelcome.Welcome != "Welcome back, alice" || out.Greet.Response == "" {
		t.Errorf("output %s (%v)", done.Output, err)
	}
	if len(done.ScreenshotURLs) < 4 || !isJPEG(get(t, done.ScreenshotURLs[0])) {
		t.Errorf("%d screenshots", len(done.ScreenshotURLs))
	}
	if done.RecordingURL == nil || !isWebM(get(t, *done.RecordingURL)) {
		t.Errorf("recording %v", done.RecordingURL)
	}
}
