package engine_test

import (
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// TestTaskDefaultStepBudget: a task run without max_steps gets the default
// budget, which a flow of more than ten steps fits (the hosted service's
// open-source default of 10 did not), and the prompt says the budget.
func TestTaskDefaultStepBudget(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	const steps = 14
	scroll := llmtest.Step{Kind: llm.KindPlan, Times: steps - 1, Match: `of at most 25\b`, Reply: llmtest.JSON(map[string]any{
		"thought": "Still looking.", "actions": []any{map[string]string{"type": "scroll", "text": "down"}}})}
	srv := llmtest.New(t, scroll, decide(`step 14 of at most 25\b`, "complete", "Read the whole list.", nil))
	e := modelEngine(t, srv, engine.Config{})
	res := e.Execute(t.Context(), taskJob(t, &client.TaskRunRequest{
		Prompt: "Scroll through the whole list.", URL: site.URL(testsite.PageBig),
	}), &progress{})
	if res.Status != client.RunStatusCompleted || res.StepCount != steps {
		t.Fatalf("status %s after %d steps: %s", res.Status, res.StepCount, res.FailureReason)
	}
	if engine.DefaultMaxSteps != 25 {
		t.Errorf("DefaultMaxSteps is %d; the prompts above expect 25", engine.DefaultMaxSteps)
	}
}
