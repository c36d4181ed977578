package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// TestTaskAnswersAPrompt: a button opens window.prompt. Without an answer
// the prompt is dismissed and the next page header says how to give one;
// the model arms the answer with answer_dialog and clicks again, and the
// page gets it.
func TestTaskAnswersAPrompt(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	srv := llmtest.New(t,
		plan("Press the button.", clickOn("Enter name")),
		llmtest.Step{Kind: llm.KindPlan, Match: `Dialog: "prompt: What is your name\? \(dismissed: no answer was given; answer_dialog`,
			Reply: planReply("Answer the prompt this time.", act{Type: "answer_dialog", Text: "Grace"}, clickOn("Enter name"))},
		decide(`prompt:Grace`, "complete", "Answered the prompt with Grace.", nil),
	)
	e := modelEngine(t, srv, engine.Config{})
	res := e.Execute(t.Context(), taskJob(t, &client.TaskRunRequest{
		Prompt: "Use the Enter name button and answer its question with the name Grace.",
		URL:    site.URL(testsite.PageDialogs),
	}), &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	// The page reports each prompt with a fetch of its own, which can
	// reach the site after the run has ended: wait for both (bounded by a
	// deadline that only catches a hang).
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var answers []string
	for {
		evs := site.Events()
		answers = answers[:0]
		for _, ev := range evs {
			if ev.Kind == testsite.EventDialog && ev.Form.Get("type") == "prompt" {
				answers = append(answers, ev.Form.Get("result"))
			}
		}
		if len(answers) >= 2 {
			break
		}
		if _, err := site.WaitEventSince(ctx, len(evs), testsite.EventDialog); err != nil {
			t.Fatalf("the page reported the prompts %q, then nothing: %v", answers, err)
		}
	}
	if strings.Join(answers, ",") != "null,Grace" {
		t.Errorf("the page's prompts got %q, want the first dismissed and the second answered Grace", answers)
	}
}
