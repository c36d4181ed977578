package engine_test

// AI blocks of agent runs: navigation, extraction, validation,
// text_prompt, file_download without a url, and an action block whose
// selector fails.

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

var welcomeText = regexp.MustCompile(`Welcome back, \w+`)

// membersAgent signs in (navigation, checked against its complete
// criterion), extracts the welcome (extraction with a schema), validates
// the page and writes a greeting (text_prompt).
func membersAgent() client.WorkflowDefinition {
	return client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site"), stringParam("user"), stringParam("password")},
		Blocks: client.Blocks{
			&client.NavigationBlock{BlockBase: base("sign_in"), URL: "{{ site }}" + testsite.PageMembersLogin,
				NavigationGoal:    "Sign in with the username {{ user }} and the password from the details.",
				CompleteCriterion: "The page welcomes the member by name.", ParameterKeys: []string{"user", "password"}},
			&client.ExtractionBlock{BlockBase: base("read_welcome"), DataExtractionGoal: "the welcome message",
				DataSchema: json.RawMessage(`{"type":"object","properties":{"welcome":{"type":"string"}},"required":["welcome"]}`)},
			&client.ValidationBlock{BlockBase: base("check_area"), CompleteCriterion: "The members area is shown."},
			&client.TextPromptBlock{BlockBase: base("greet"), Prompt: "Write a one-line greeting for: {{ read_welcome_output.welcome }}"},
		},
	}
}

func membersScript() []llmtest.Step {
	return []llmtest.Step{
		planWhen(`"password": "wonderland"`, "Sign in.",
			typeInto("Username", testsite.MembersUser), typeInto("Password", testsite.MembersPassword), clickOn("Sign in")),
		decide(`Welcome back, alice`, "complete", "Signed in as alice.", nil),
		{Kind: llm.KindVerify, Match: `(?s)welcomes the member by name.*Welcome back, alice`,
			Reply: llmtest.JSON(map[string]string{"status": "complete", "reasoning": "The page says Welcome back, alice."})},
		{Kind: llm.KindExtract, Match: `the welcome message`, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
			return llmtest.JSON(map[string]string{"welcome": welcomeText.FindString(r.LastUserText())}), nil
		})},
		{Kind: llm.KindVerify, Match: `members area is shown`,
			Reply: llmtest.JSON(map[string]string{"status": "complete", "reasoning": "The heading reads Members area."})},
		{Kind: llm.KindPrompt, Match: `greeting for: Welcome back, alice`, Reply: llmtest.Text("Hello again, Alice!")},
	}
}

// TestAgentOfAIBlocks runs navigation, extraction, validation and
// text_prompt blocks; each output is where the next block reads it.
func TestAgentOfAIBlocks(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	srv := llmtest.New(t, membersScript()...)
	e := modelEngine(t, srv, engine.Config{})
	j := job(t, membersAgent(), map[string]any{"site": site.URL(""), "user": testsite.MembersUser, "password": testsite.MembersPassword})
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	out := outputOf(t, res)
	nav, _ := out["sign_in_output"].(map[string]any)
	if url, _ := nav["url"].(string); !strings.Contains(url, testsite.PageMembersHome) || nav["summary"] != "Signed in as alice." {
		t.Errorf("sign_in_output %v", nav)
	}
	if w, _ := out["read_welcome_output"].(map[string]any); w["welcome"] != "Welcome back, alice" {
		t.Errorf("read_welcome_output %v", out["read_welcome_output"])
	}
	if v, _ := out["check_area_output"].(map[string]any); v["status"] != "complete" {
		t.Errorf("check_area_output %v", out["check_area_output"])
	}
	if g, _ := out["greet_output"].(map[string]any); g["llm_response"] != "Hello again, Alice!" {
		t.Errorf("greet_output %v", out["greet_output"])
	}
	if _, ok := out["error"]; ok {
		t.Errorf("a completed run has an error: %s", res.Output)
	}
	if ev := waitEvent(t, site, testsite.EventMembersLogin); ev.Form.Get("ok") != "true" {
		t.Errorf("sign-in %v", ev.Form)
	}
	steps := readSteps(t, j.Dir)
	var decisions []string
	for _, s := range steps.Steps {
		decisions = append(decisions, s.Block+":"+s.Decision)
	}
	if strings.Join(decisions, ",") != "sign_in:continue,sign_in:complete,read_welcome:extracted,check_area:validation: complete" || len(steps.Calls) != 6 {
		t.Errorf("step log: steps %v, %d calls", decisions, len(steps.Calls))
	}
	// Steps: two model decisions, the extraction and the validation.
	if res.StepCount != 4 || len(res.Screenshots) < 4 || res.Summary == "" {
		t.Errorf("steps %d, %d screenshots, summary %q", res.StepCount, len(res.Screenshots), res.Summary)
	}
}

// TestValidationTerminatesWithCode: a validation block whose terminate
// criterion holds ends the run terminated, with the block's mapped code
// at output.error; the blocks after it do not run.
func TestValidationTerminatesWithCode(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	srv := llmtest.New(t,
		llmtest.Step{Kind: llm.KindVerify, Match: `(?s)says the sign-in failed.*Sign-in failed`,
			Reply: llmtest.JSON(map[string]string{"status": "terminate", "reasoning": "The page reads Sign-in failed."})},
		llmtest.Step{Kind: llm.KindClassify, Match: `(?s)login_failed.*Sign-in failed`, Reply: llmtest.JSON(map[string]any{"errors": []any{
			map[string]any{"error_code": "login_failed", "reasoning": "The sign-in was refused.", "confidence": 0.9}}})},
	)
	e := modelEngine(t, srv, engine.Config{})
	def := client.WorkflowDefinition{Blocks: client.Blocks{
		gotoBlock("open", site.URL(testsite.PageMembersDenied)),
		&client.ValidationBlock{BlockBase: base("signed_in"), CompleteCriterion: "The member is signed in.",
			TerminateCriterion: "The page says the sign-in failed.",
			ErrorCodeMapping:   map[string]string{"login_failed": "The sign-in was refused", "maintenance": "The site is down"}},
		gotoBlock("never", site.URL("/")),
	}}
	res := e.Execute(t.Context(), job(t, def, nil), &progress{})
	if res.Status != client.RunStatusTerminated {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	if !strings.Contains(res.FailureReason, `Block "signed_in" (validation) was terminated`) || !strings.Contains(res.FailureReason, "Sign-in failed") {
		t.Errorf("failure_reason %q", res.FailureReason)
	}
	out := outputOf(t, res)
	if out["error"] != "login_failed" {
		t.Errorf("output.error %v in %s", out["error"], res.Output)
	}
	if _, ok := out["never_output"]; ok {
		t.Error("the run went on after the validation")
	}
	if v, _ := out["signed_in_output"].(map[string]any); v["status"] != "terminate" {
		t.Errorf("signed_in_output %v", out["signed_in_output"])
	}
}

// TestTaskRunsOutOfSteps: a model that never finishes uses the budget
// (max_steps) and the run ends timed_out, with its code when one fits.
func TestTaskRunsOutOfSteps(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	scroll := llmtest.Step{Kind: llm.KindPlan, Times: 3, Reply: llmtest.JSON(map[string]any{
		"thought": "Still looking.", "actions": []any{map[string]string{"type": "scroll", "text": "down"}}})}
	srv := llmtest.New(t, scroll,
		llmtest.Step{Kind: llm.KindClassify, Match: `limit of 3 steps`, Reply: llmtest.JSON(map[string]any{"errors": []any{
			map[string]any{"error_code": "not_found", "reasoning": "No such item after scrolling.", "confidence": 0.7}}})})
	e := modelEngine(t, srv, engine.Config{})
	res := e.Execute(t.Context(), taskJob(t, &client.TaskRunRequest{
		Prompt: "Find the item called Unobtainium and open it.", URL: site.URL(testsite.PageBig), MaxSteps: new(3),
		ErrorCodeMapping: map[string]string{"not_found": "The item does not exist"},
	}), &progress{})
	if res.Status != client.RunStatusTimedOut {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	if res.FailureReason != "The task reached its limit of 3 steps before the goal was reached." || res.StepCount != 3 {
		t.Errorf("reason %q, %d steps", res.FailureReason, res.StepCount)
	}
	if out := outputOf(t, res); out["error"] != "not_found" {
		t.Errorf("output %s", res.Output)
	}
}

// TestFileDownloadBlockFindsTheDownload: a file_download block without a
// url: the model clicks the link, and the download completes the block.
func TestFileDownloadBlockFindsTheDownload(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	srv := llmtest.New(t, plan("Click the report link.", clickOn("Download the 2026 report (CSV)")))
	e := modelEngine(t, srv, engine.Config{})
	def := client.WorkflowDefinition{Blocks: client.Blocks{
		gotoBlock("open", site.URL(testsite.PageDownload)),
		&client.FileDownloadBlock{BlockBase: base("get_report"), NavigationGoal: "Download the 2026 report"},
	}}
	j := job(t, def, nil)
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	files, _ := outputOf(t, res)["get_report_output"].(map[string]any)["downloaded_files"].([]any)
	if len(files) != 1 || files[0].(map[string]any)["filename"] != testsite.ReportFilename {
		t.Fatalf("get_report_output %s", res.Output)
	}
	if got := string(readFile(t, j.Dir, testsite.ReportFilename)); got != testsite.ReportCSV {
		t.Errorf("the file holds %q", got)
	}
	// The goto_url block's step, then the model's.
	if d := readSteps(t, j.Dir).Steps; len(d) != 2 || d[0].Block != "open" || d[1].Decision != "complete (download)" {
		t.Errorf("steps %+v", d)
	}
}

// TestActionBlockFallsBackToTheModel: the selector matches nothing, so
// the model finds the element of the navigation goal; the output names a
// selector that finds it without a model.
func TestActionBlockFallsBackToTheModel(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	srv := llmtest.New(t, llmtest.Step{Kind: llm.KindLocate, Match: `the Sign in button`, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
		id, err := r.ElementID("Sign in")
		return llmtest.JSON(map[string]string{"id": id, "text": "", "reasoning": "The button reads Sign in."}), err
	})})
	e := modelEngine(t, srv, engine.Config{})
	def := client.WorkflowDefinition{Blocks: client.Blocks{
		gotoBlock("open", site.URL(testsite.PageLogin)),
		&client.ActionBlock{BlockBase: base("press"), Selector: "#renamed-button", NavigationGoal: "click the Sign in button"},
	}}
	res := e.Execute(t.Context(), job(t, def, nil), &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	out, _ := outputOf(t, res)["press_output"].(map[string]any)
	if out["ai_used"] != true || out["selector"] == "" || out["selector"] == nil {
		t.Fatalf("press_output %v", out)
	}
	waitEvent(t, site, testsite.EventLogin)

	// The selector works without a model.
	def = client.WorkflowDefinition{Blocks: client.Blocks{
		gotoBlock("open", site.URL(testsite.PageLogin)),
		click("press", out["selector"].(string)),
	}}
	e2 := newEngine(t, engine.Config{})
	if res := e2.Execute(t.Context(), job(t, def, nil), &progress{}); res.Status != client.RunStatusCompleted {
		t.Errorf("the selector %v: %s %s", out["selector"], res.Status, res.FailureReason)
	}
}

// TestAnthropicVisionAndRejectedCompletion: the loop over the Anthropic
// protocol with a model that reads images (each plan carries the step's
// screenshot, the schema goes as a forced tool). The model completes too
// early; the completion check rejects it, the model is told why, and it
// goes on.
func TestAnthropicVisionAndRejectedCompletion(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	srv := llmtest.New(t,
		decide(`Members sign-in`, "complete", "Signed in.", nil),
		llmtest.Step{Kind: llm.KindVerify, Match: `Members sign-in`,
			Reply: llmtest.JSON(map[string]string{"status": "continue", "reasoning": "The page still shows the sign-in form."})},
		planWhen(`(?s)checked and rejected: The page still shows the sign-in form`, "Sign in for real.",
			typeInto("Username", testsite.MembersUser), typeInto("Password", testsite.MembersPassword), clickOn("Sign in")),
		decide(`Welcome back, alice`, "complete", "Signed in as alice.", nil),
		llmtest.Step{Kind: llm.KindVerify, Match: `Welcome back, alice`,
			Reply: llmtest.JSON(map[string]string{"status": "complete", "reasoning": "The page welcomes alice."})},
	)
	reg, err := llm.NewRegistry(srv.AnthropicConfig(), nil, llm.WithSleeper(noSleep))
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, engine.Config{Models: reg})
	def := client.WorkflowDefinition{Blocks: client.Blocks{
		&client.NavigationBlock{BlockBase: base("sign_in"), URL: site.URL(testsite.PageMembersLogin),
			NavigationGoal:    "Sign in as " + testsite.MembersUser + " with the password " + testsite.MembersPassword + ".",
			CompleteCriterion: "The page welcomes the member by name."},
	}}
	j := job(t, def, nil)
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	var decisions []string
	for _, s := range readSteps(t, j.Dir).Steps {
		decisions = append(decisions, s.Decision)
	}
	if strings.Join(decisions, ",") != "completion rejected,continue,complete" {
		t.Errorf("decisions %v", decisions)
	}
	for _, c := range srv.Calls() {
		if c.Protocol != llmtest.ProtocolAnthropic || c.SchemaMode != "tool" || c.ImageCount() != 1 || !isJPEG(c.Messages[len(c.Messages)-1].Images[0]) {
			t.Errorf("%s call: %s, schema %q, %d images", c.Kind, c.Protocol, c.SchemaMode, c.ImageCount())
		}
	}
}

// TestDialogsAndTabsInThePrompt: a dialog the session answered and the
// tabs a popup opened show in the next prompt; a popup ends the batch; the
// model switches back by the tab id it was shown.
func TestDialogsAndTabsInThePrompt(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	tabs := regexp.MustCompile(`Tabs: \[t1\] [^\n]*\[t2\] [^\n]*popup-target\.html[^>]*> \(active\)`)
	srv := llmtest.New(t,
		plan("Delete the draft.", clickOn("Delete draft")),
		llmtest.Step{Kind: llm.KindPlan, Match: `Dialog: "confirm: Delete the draft\? \(accepted\)"`, Reply: llmtest.JSON(map[string]any{
			"thought": "Open the popup page.", "actions": []any{map[string]string{"type": "goto_url", "text": site.URL(testsite.PagePopup)}}})},
		plan("Open the window, then type a name.", clickOn("Open the sign-up window"), clickOn("Open the sign-up window")),
		llmtest.Step{Kind: llm.KindPlan, Match: tabs.String(), Reply: llmtest.JSON(map[string]any{
			"thought": "Back to the first tab.", "actions": []any{map[string]string{"type": "switch_tab", "text": "t1"}}})},
		decide(`(?s)\[t1\][^\n]*\(active\).*Open the sign-up window`, "complete", "Saw both tabs.", nil),
	)
	e := modelEngine(t, srv, engine.Config{})
	j := taskJob(t, &client.TaskRunRequest{Prompt: "Delete the draft, then open the sign-up window and come back.", URL: site.URL(testsite.PageDialogs)})
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		calls := srv.Calls()
		t.Fatalf("status %s: %s\nlast prompt:\n%s", res.Status, res.FailureReason, calls[len(calls)-1].LastUserText())
	}
	if ev := waitEvent(t, site, testsite.EventDialog); !strings.Contains(ev.Form.Encode(), "confirm") {
		t.Errorf("dialog event %v", ev.Form)
	}
	steps := readSteps(t, j.Dir).Steps
	popup := steps[2].Actions
	if len(popup) != 2 || !popup[0].OK || !popup[1].Skipped || !strings.Contains(popup[1].Result, "another tab is now active") {
		t.Errorf("the popup step %+v", popup)
	}
}

// TestExtractionNotMatchingTheSchemaIsReported: data that does not match
// the block's schema is kept, and the step is reported as such to the run
// (its steps and timeline), not only in the written step log.
func TestExtractionNotMatchingTheSchemaIsReported(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	// The answer does not match, and neither does the repair asked for.
	srv := llmtest.New(t,
		llmtest.Step{Kind: llm.KindExtract, Match: `the welcome message`, Reply: llmtest.JSON(map[string]any{"welcome": 42})},
		llmtest.Step{Kind: llm.KindRepair, Reply: llmtest.JSON(map[string]any{"welcome": 43})})
	e := modelEngine(t, srv, engine.Config{})
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site")},
		Blocks: client.Blocks{
			gotoBlock("open", "{{ site }}"+testsite.PageIndex),
			&client.ExtractionBlock{BlockBase: base("read_welcome"), DataExtractionGoal: "the welcome message",
				DataSchema: json.RawMessage(`{"type":"object","properties":{"welcome":{"type":"string"}},"required":["welcome"]}`)},
		},
	}
	p := &stepDetails{}
	res := e.Execute(t.Context(), job(t, def, map[string]any{"site": site.URL("")}), p)
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	details := p.details()
	if len(details) != 2 || details[1].Block != "read_welcome" || details[1].Decision != "extracted (not matching the schema)" {
		t.Errorf("reported steps: %s", describeInfos(details))
	}
}

// TestModelCallsGetOnlyTheirParameters: a model call is given the run's
// parameters its block names (parameter_keys, or a {{ }} reference in its
// texts) and no other. A run with a plain password parameter that no
// block names: a validation block with parameter_keys gets the account it
// names, one without keys gets nothing, and the error-code call that
// matches its failure gets no parameter at all; the password reaches no
// model request. (A security review found every call given every
// parameter.)
func TestModelCallsGetOnlyTheirParameters(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	const password, account = "pw-Zebra-4471-never-shown", "acct-7731"
	srv := llmtest.New(t,
		llmtest.Step{Kind: llm.KindVerify, Match: `(?s)members area.*` + account,
			Reply: llmtest.JSON(map[string]string{"status": "complete", "reasoning": "The page is the members page."})},
		llmtest.Step{Kind: llm.KindVerify, Match: `says the sign-in failed`,
			Reply: llmtest.JSON(map[string]string{"status": "terminate", "reasoning": "The page reads Sign-in failed."})},
		llmtest.Step{Kind: llm.KindClassify, Match: `(?s)login_failed.*Sign-in failed`, Reply: llmtest.JSON(map[string]any{"errors": []any{
			map[string]any{"error_code": "login_failed", "reasoning": "The sign-in was refused.", "confidence": 0.9}}})},
	)
	e := modelEngine(t, srv, engine.Config{})
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("password"), stringParam("account")},
		Blocks: client.Blocks{
			gotoBlock("open", site.URL(testsite.PageMembersDenied)),
			&client.ValidationBlock{BlockBase: base("on_members_page"), CompleteCriterion: "The page belongs to the members area.",
				ParameterKeys: []string{"account"}},
			&client.ValidationBlock{BlockBase: base("signed_in"), CompleteCriterion: "The member is signed in.",
				TerminateCriterion: "The page says the sign-in failed."},
		},
		ErrorCodeMapping: map[string]string{"login_failed": "The sign-in was refused", "maintenance": "The site is down"},
	}
	res := e.Execute(t.Context(), job(t, def, map[string]any{"password": password, "account": account}), &progress{})
	if res.Status != client.RunStatusTerminated {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	if out := outputOf(t, res); out["error"] != "login_failed" {
		t.Errorf("output.error %v in %s", out["error"], res.Output)
	}
	verify, classify := callsOf(srv, llm.KindVerify), callsOf(srv, llm.KindClassify)
	if len(verify) != 2 || len(classify) != 1 {
		t.Fatalf("%d validation calls and %d error-code calls, want 2 and 1", len(verify), len(classify))
	}
	if !strings.Contains(verify[0].Prompt(), account) {
		t.Errorf("the validation with parameter_keys [account] was not given the account:\n%s", verify[0].Prompt())
	}
	for _, c := range []*llmtest.Request{verify[1], classify[0]} {
		if strings.Contains(c.Prompt(), account) {
			t.Errorf("a %s call that names no parameter was given the account:\n%s", c.Kind, c.Prompt())
		}
	}
	for _, c := range srv.Calls() {
		if strings.Contains(c.Prompt(), password) || strings.Contains(c.System, password) {
			t.Errorf("a %s call was given the password parameter:\n%s", c.Kind, c.Prompt())
		}
	}
}
