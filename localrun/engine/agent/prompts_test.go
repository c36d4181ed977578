package agent

// The prompts and answers of the model calls, against the scripted model
// server: what each call tells the model, and what the engine makes of the
// answer.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// scripted returns an agent without a browser and the model the scripted
// server plays with steps.
func scripted(t *testing.T, steps ...llmtest.Step) (*Agent, llm.Model, *llmtest.Server) {
	t.Helper()
	srv := llmtest.New(t, steps...)
	reg, err := llm.NewRegistry(srv.OpenAIConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(nil, steplog.New(nil, nil, 0), Config{Tag: "0badc0de"}), reg.Default(), srv
}

// TestPlanPromptPutsTheGoalFirst: the goal's own words on when it is
// reached win over the generic reasons to terminate.
func TestPlanPromptPutsTheGoalFirst(t *testing.T) {
	for _, want := range []string{
		"The user's goal comes first.",
		`"the goal is reached whatever the site answers"`,
		"those rules only apply where the goal is silent",
		"- terminate: the goal cannot be reached. Unless the goal says otherwise, that is when the site refuses",
	} {
		if !strings.Contains(planSystem, want) {
			t.Errorf("the planning prompt does not say %q:\n%s", want, planSystem)
		}
	}
	if strings.Index(planSystem, "The user's goal comes first.") > strings.Index(planSystem, "Action types") {
		t.Error("the goal's precedence is stated after the generic rules")
	}
}

// TestJudgeSpeaksOfTheConditionsGiven: the completion check names only
// the conditions it is given, and shows them with the goal.
func TestJudgeSpeaksOfTheConditionsGiven(t *testing.T) {
	verdict := llmtest.JSON(map[string]string{"status": "complete", "reasoning": "The form was sent."})
	a, m, srv := scripted(t, llmtest.Step{Kind: llm.KindVerify, Reply: verdict, Times: 3})
	goal := "Submit the form; the goal is reached whatever the site answers."
	obs := &page.Observation{URL: "http://shop.test/form", Rendered: "Page: Form\n[e1] button \"Send\"\n", Text: "Sorry, we cannot take your order."}

	// A completion condition alone: no termination condition is spoken of.
	v, _, err := a.Judge(t.Context(), m, Conditions{Goal: goal, Complete: "The site answered the form.", Obs: obs})
	if err != nil || v.Status != "complete" {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	r := srv.Calls()[0]
	if strings.Contains(r.Prompt(), "ermination condition") {
		t.Errorf("a check without a termination condition speaks of one:\n%s", r.Prompt())
	}
	for _, want := range []string{"its completion condition", "- complete: the completion condition holds", "when the goal is reached whatever the site answers, a site that refuses still completes it", goal, "The site answered the form.", "Judge only from what the page shows."} {
		if !strings.Contains(r.Prompt(), want) {
			t.Errorf("the check does not say %q:\n%s", want, r.Prompt())
		}
	}

	// Both conditions: both are named and given.
	if _, _, err := a.Judge(t.Context(), m, Conditions{Goal: goal, Complete: "The site answered.", Terminate: "The site is closed for maintenance.", Obs: obs}); err != nil {
		t.Fatal(err)
	}
	r = srv.Calls()[1]
	for _, want := range []string{"its termination condition", "- terminate: the termination condition holds", "Termination condition:\nThe site is closed for maintenance."} {
		if !strings.Contains(r.Prompt(), want) {
			t.Errorf("the check does not say %q:\n%s", want, r.Prompt())
		}
	}

	// No page and no conditions: neither is spoken of.
	if _, _, err := a.Judge(t.Context(), m, Conditions{Goal: goal}); err != nil {
		t.Fatal(err)
	}
	r = srv.Calls()[2]
	if p := r.System; strings.Contains(p, "condition") || strings.Contains(p, "what the page shows") {
		t.Errorf("a check without conditions or page speaks of them:\n%s", p)
	}
}

// TestClassifyOffersOnlyTheUsersCodes: the answer's schema lists the
// user's codes as an enum; a code written in another case is the user's,
// an invented one is dropped.
func TestClassifyOffersOnlyTheUsersCodes(t *testing.T) {
	a, m, srv := scripted(t, llmtest.Step{Kind: llm.KindClassify, Reply: llmtest.JSON(map[string]any{"errors": []map[string]any{
		{"error_code": "session_expired", "reasoning": "made up", "confidence": 0.99},
		{"error_code": " Out_Of_Stock", "reasoning": "The page says sold out.", "confidence": 0.8},
	}})})
	codes := map[string]string{"out_of_stock": "The product is sold out.", "card_declined": "The card was refused."}
	got := a.Classify(t.Context(), m, codes, FailureInfo{Goal: "Buy the tent.", Reason: "the agent judged the goal unreachable"})
	if got != "out_of_stock" {
		t.Errorf("code %q, want out_of_stock", got)
	}
	var schema struct {
		Properties struct {
			Errors struct {
				Items struct {
					Properties struct {
						Code struct {
							Enum []string `json:"enum"`
						} `json:"error_code"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"errors"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(srv.Calls()[0].Schema, &schema); err != nil {
		t.Fatal(err)
	}
	if enum := strings.Join(schema.Properties.Errors.Items.Properties.Code.Enum, ","); enum != "card_declined,out_of_stock" {
		t.Errorf("the error_code enum is %q, want the user's codes:\n%s", enum, srv.Calls()[0].Schema)
	}
}

// TestExtractWithoutSchemaGivesTheDataShape: without a schema the model
// is asked for numbers as numbers, and a number it still writes as a
// plain string is made one; nothing else changes.
func TestExtractWithoutSchemaGivesTheDataShape(t *testing.T) {
	answer := `{"name":"Green tea","price":"18.00","zip":"02139","total":"$18.00","stock":"1,299","sold":"1,299,000","rating":4.5,"sizes":["250","0.5"],"order":"4111111111111111111"}`
	a, m, srv := scripted(t, llmtest.Step{Kind: llm.KindExtract, Reply: llmtest.Text(answer)})
	obs := &page.Observation{URL: "http://shop.test/tea", Rendered: "Page: Tea\n", Text: "Green tea $18.00"}
	data, _, _, err := a.Extract(t.Context(), m, "The tea's name and price.", nil, nil, obs, "")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"Green tea","price":18.00,"zip":"02139","total":"$18.00","stock":"1,299","sold":1299000,"rating":4.5,"sizes":[250,0.5],"order":"4111111111111111111"}`
	if string(data) != want {
		t.Errorf("data\n got %s\nwant %s", data, want)
	}
	p := srv.Calls()[0].Prompt()
	for _, w := range []string{"No schema is given", "Numbers are JSON numbers, without currency symbols or thousands separators", "Dates are ISO 8601"} {
		if !strings.Contains(p, w) {
			t.Errorf("the extraction prompt does not say %q:\n%s", w, p)
		}
	}
	if !strings.Contains(planSystem, `put it in "data" as a JSON object whose fields are named for what was asked`) {
		t.Errorf("the planning prompt does not give the data shape:\n%s", planSystem)
	}
}

func TestNormalizeData(t *testing.T) {
	for in, want := range map[string]string{
		`"12.50"`:                         `12.50`,
		`["1","007",{"a":{"b":"-3"}},[]]`: `[1,"007",{"a":{"b":-3}},[]]`,
		`{"18.00":"x","k":true,"n":null}`: `{"18.00":"x","k":true,"n":null}`,
		`{"z":"1","a":"2"}`:               `{"z":1,"a":2}`, // keys keep their order
		`{"when":"2024-03-15","p":"+33"}`: `{"when":"2024-03-15","p":"+33"}`,
		`{"html":"<b>&</b>","v":"0.5"}`:   `{"html":"<b>&</b>","v":0.5}`,
		`not json`:                        `not json`,
	} {
		if got := string(normalizeData(json.RawMessage(in))); got != want {
			t.Errorf("normalizeData(%s) = %s, want %s", in, got, want)
		}
	}
}
