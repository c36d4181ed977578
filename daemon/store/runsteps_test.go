package store

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/abctl/abctl/client"
)

// timeline reads a run's timeline and decodes it.
func (f *fixture) timeline(orgID, runID string) []client.TimelineEntry {
	f.t.Helper()
	rows, err := f.Runs().TimelineJSON(ctx, orgID, runID)
	if err != nil {
		f.t.Fatal(err)
	}
	out := make([]client.TimelineEntry, len(rows))
	for i, raw := range rows {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			f.t.Fatalf("entry %d: %v: %s", i, err, raw)
		}
	}
	return out
}

func numbers(tl []client.TimelineEntry) []int {
	var out []int
	for _, e := range tl {
		out = append(out, e.Step.Number)
	}
	return out
}

func TestRunSteps(t *testing.T) {
	f := newFixture(t)
	run := f.newRun(client.RunTypeWorkflowRun, nil)
	neighbour := f.newRun(client.RunTypeTaskV1, nil) // steps of another run stay apart
	if tl := f.timeline(f.org.ID, run.ID); tl == nil || len(tl) != 0 {
		t.Fatalf("a run without steps: %v", tl)
	}
	label := "login"
	first := &client.TimelineStep{Number: 1, BlockLabel: &label, URL: "http://127.0.0.1:1/", Thought: "Sign in first.",
		Actions:   []string{`click [e5] button "Sign in": ok, loaded /account.html`, `type [e2] "me": ok`},
		Decision:  "continue",
		TimingsMS: client.StepTimings{Settle: 1.5, Observe: 2, Model: 812.25, Act: 95}, Tokens: client.StepTokens{Input: 1234, Output: 56}}
	for _, s := range []*client.TimelineStep{first, {Number: 2, Decision: "complete", Actions: []string{}}} {
		if err := f.Runs().AddStep(ctx, f.org.ID, run.ID, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Runs().AddStep(ctx, f.org.ID, neighbour.ID, &client.TimelineStep{Number: 7, Decision: "neighbour"}); err != nil {
		t.Fatal(err)
	}
	tl := f.timeline(f.org.ID, run.ID)
	if got := numbers(tl); len(got) != 2 || got[0] != 2 || got[1] != 1 {
		t.Fatalf("steps %v, want newest first [2 1]", got)
	}
	if tl[1].Type != client.TimelineStepEntry || mustJSON(t, tl[1].Step) != mustJSON(t, first) ||
		tl[1].CreatedAt.IsZero() || !tl[1].ModifiedAt.Equal(tl[1].CreatedAt.Time) || tl[0].CreatedAt.Before(tl[1].CreatedAt.Time) {
		t.Errorf("entry %+v, step %s", tl[1], mustJSON(t, tl[1].Step))
	}
	if got := numbers(f.timeline(f.org.ID, neighbour.ID)); len(got) != 1 || got[0] != 7 {
		t.Errorf("the neighbour's steps: %v", got)
	}
	// A step recorded again replaces the first.
	if err := f.Runs().AddStep(ctx, f.org.ID, run.ID, &client.TimelineStep{Number: 2, Decision: "terminate"}); err != nil {
		t.Fatal(err)
	}
	if tl := f.timeline(f.org.ID, run.ID); len(tl) != 2 || tl[0].Step.Decision != "terminate" {
		t.Errorf("after replacing step 2: %+v", tl)
	}
	// The run's record is untouched by steps.
	if rec, err := f.Runs().Get(ctx, f.org.ID, run.ID); err != nil || !rec.ModifiedAt.Equal(run.ModifiedAt.Time) {
		t.Errorf("the record changed: %v %v", rec, err)
	}
}

// TestRunStepsBounded: a run keeps its newest MaxRunSteps steps.
func TestRunStepsBounded(t *testing.T) {
	f := newFixture(t)
	run := f.newRun(client.RunTypeTaskV1, nil)
	total := MaxRunSteps + 37
	for n := 1; n <= total; n++ {
		if err := f.Runs().AddStep(ctx, f.org.ID, run.ID, &client.TimelineStep{Number: n, Decision: "continue"}); err != nil {
			t.Fatal(err)
		}
	}
	got := numbers(f.timeline(f.org.ID, run.ID))
	if len(got) != MaxRunSteps || got[0] != total || got[len(got)-1] != total-MaxRunSteps+1 {
		t.Errorf("%d steps kept, from %d down to %d; want %d, from %d down to %d",
			len(got), got[0], got[len(got)-1], MaxRunSteps, total, total-MaxRunSteps+1)
	}
}

func TestRunStepsErrors(t *testing.T) {
	f := newFixture(t)
	other := f.newOrg("other")
	run := f.newRun(client.RunTypeTaskV1, nil)
	for _, s := range []*client.TimelineStep{nil, {Number: 0}, {Number: -1}} {
		if err := f.Runs().AddStep(ctx, f.org.ID, run.ID, s); !errors.Is(err, ErrInvalid) {
			t.Errorf("step %+v: %v, want ErrInvalid", s, err)
		}
	}
	// Another organization's run is not found, for writing or reading.
	if err := f.Runs().AddStep(ctx, other.ID, run.ID, &client.TimelineStep{Number: 1}); !errors.Is(err, ErrNotFound) {
		t.Errorf("another organization's run: %v", err)
	}
	if _, err := f.Runs().TimelineJSON(ctx, other.ID, run.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another organization's timeline: %v", err)
	}
	for _, id := range []string{"tsk_1", "", "a\x00b"} {
		if _, err := f.Runs().TimelineJSON(ctx, f.org.ID, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("timeline of %q: %v", id, err)
		}
		if err := f.Runs().AddStep(ctx, f.org.ID, id, &client.TimelineStep{Number: 1}); !errors.Is(err, ErrNotFound) {
			t.Errorf("step of %q: %v", id, err)
		}
	}
}
