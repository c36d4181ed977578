package engine_test

// What the model is shown after actions on hard controls: the suggestions
// of an autocomplete it typed into, and what to do at a read-only field.

import (
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// TestAgentChoosesASuggestion: the step after typing into a field whose
// suggestions come from the server shows them, and the model picks one.
func TestAgentChoosesASuggestion(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	srv := llmtest.New(t,
		plan("Type the start of the city.", typeInto("From", "pa")),
		planWhen(`option\S* "Paducah, KY \(PAH\)"`, "Choose Paducah.", clickOn("Paducah, KY (PAH)")),
		decide(`value="Paducah, KY \(PAH\)"`, "complete", "Chose Paducah.", nil),
	)
	e := modelEngine(t, srv, engine.Config{})
	res := e.Execute(t.Context(), taskJob(t, &client.TaskRunRequest{
		Prompt: "Set the departure city to Paducah.", URL: site.URL(testsite.PageActionsSuggest),
	}), &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	if ev := waitEvent(t, site, testsite.EventActionsField); ev.Form.Get("field") != "city" || ev.Form.Get("value") != "Paducah, KY (PAH)" {
		t.Errorf("the page recorded %v", ev.Form)
	}
}

// TestAgentTypesIntoAPickersField: typing into a read-only date field
// tells the model to use the picker; it does, and the page has the date.
func TestAgentTypesIntoAPickersField(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	srv := llmtest.New(t,
		plan("Type the date.", typeInto("Departure", "2026-05-14")),
		planWhen(`read-only; it is set by a picker: click it`, "Open the picker.", clickOn("Departure")),
		planWhen(`button "14"`, "Choose the 14th.", clickOn("14")),
		decide(`value="2026-05-14"`, "complete", "Chose 14 May.", nil),
	)
	e := modelEngine(t, srv, engine.Config{})
	res := e.Execute(t.Context(), taskJob(t, &client.TaskRunRequest{
		Prompt: "Set the departure to 14 May 2026.", URL: site.URL(testsite.PageActionsReadonly),
	}), &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	if ev := waitEvent(t, site, testsite.EventActionsField); ev.Form.Get("field") != "depart" || ev.Form.Get("value") != "2026-05-14" {
		t.Errorf("the page recorded %v", ev.Form)
	}
}
