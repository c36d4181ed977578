package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/internal/jsonenc"
)

// steps reads a run's steps, newest first, and decodes them.
func (f *fixture) steps(orgID, runID string) []client.RunStep {
	f.t.Helper()
	rows, err := f.Runs().StepsJSON(ctx, orgID, runID)
	if err != nil {
		f.t.Fatal(err)
	}
	out := make([]client.RunStep, len(rows))
	for i, raw := range rows {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			f.t.Fatalf("step %d: %v: %s", i, err, raw)
		}
	}
	return out
}

func numbers(steps []client.RunStep) []int {
	var out []int
	for _, s := range steps {
		out = append(out, s.Number)
	}
	return out
}

func testRunSteps(t *testing.T, o opener) {
	f := newFixture(t, o)
	run := f.newRun(client.RunTypeWorkflowRun, nil)
	neighbour := f.newRun(client.RunTypeTaskV1, nil) // steps of another run stay apart
	if steps := f.steps(f.org.ID, run.ID); steps == nil || len(steps) != 0 {
		t.Fatalf("a run without steps: %v", steps)
	}
	label := "login"
	first := &client.RunStep{Number: 1, BlockLabel: &label, WorkflowRunBlockID: "wrb_1", URL: "http://127.0.0.1:1/?a=<b>&c", Thought: "Sign in first.",
		Actions:   []string{`click [e5] button "Sign in": ok, loaded /account.html`, `type [e2] "me": ok`},
		Decision:  "continue",
		TimingsMS: client.StepTimings{Settle: 1.5, Observe: 2, Model: 812.25, Act: 95}, Tokens: client.StepTokens{Input: 1234, Output: 56}}
	for _, s := range []*client.RunStep{first, {Number: 2, Decision: "complete", Actions: []string{}}} {
		if err := f.Runs().AddStep(ctx, f.org.ID, run.ID, s); err != nil {
			t.Fatal(err)
		}
	}
	if !first.CreatedAt.IsZero() {
		t.Error("AddStep stamped the caller's step; it stamps its own copy")
	}
	if err := f.Runs().AddStep(ctx, f.org.ID, neighbour.ID, &client.RunStep{Number: 7, Decision: "neighbour"}); err != nil {
		t.Fatal(err)
	}
	steps := f.steps(f.org.ID, run.ID)
	if got := numbers(steps); len(got) != 2 || got[0] != 2 || got[1] != 1 {
		t.Fatalf("steps %v, want newest first [2 1]", got)
	}
	stamped := *first
	stamped.CreatedAt = steps[1].CreatedAt
	if mustJSON(t, steps[1]) != mustJSON(t, stamped) || steps[1].CreatedAt.IsZero() || steps[0].CreatedAt.Before(steps[1].CreatedAt.Time) {
		t.Errorf("step 1 read back: %s, want %s", mustJSON(t, steps[1]), mustJSON(t, stamped))
	}
	// The bytes as the API answers them: encoded without HTML escaping.
	rows, err := f.Runs().StepsJSON(ctx, f.org.ID, run.ID)
	if want, _ := jsonenc.Marshal(&stamped); err != nil || !bytes.Equal(rows[1], want) {
		t.Errorf("step 1's bytes %s, want %s (%v)", rows[1], want, err)
	}
	if got := numbers(f.steps(f.org.ID, neighbour.ID)); len(got) != 1 || got[0] != 7 {
		t.Errorf("the neighbour's steps: %v", got)
	}
	// A step recorded again replaces the first.
	if err := f.Runs().AddStep(ctx, f.org.ID, run.ID, &client.RunStep{Number: 2, Decision: "terminate"}); err != nil {
		t.Fatal(err)
	}
	if steps := f.steps(f.org.ID, run.ID); len(steps) != 2 || steps[0].Decision != "terminate" {
		t.Errorf("after replacing step 2: %+v", steps)
	}
	// The run's record is untouched by steps.
	if rec, err := f.Runs().Get(ctx, f.org.ID, run.ID); err != nil || !rec.ModifiedAt.Equal(run.ModifiedAt.Time) {
		t.Errorf("the record changed: %v %v", rec, err)
	}
}

// testRunStepsBounded: a run keeps its newest MaxRunSteps steps.
func testRunStepsBounded(t *testing.T, o opener) {
	f := newFixture(t, o)
	run := f.newRun(client.RunTypeTaskV1, nil)
	total := store.MaxRunSteps + 37
	for n := 1; n <= total; n++ {
		if err := f.Runs().AddStep(ctx, f.org.ID, run.ID, &client.RunStep{Number: n, Decision: "continue"}); err != nil {
			t.Fatal(err)
		}
	}
	got := numbers(f.steps(f.org.ID, run.ID))
	if len(got) != store.MaxRunSteps || got[0] != total || got[len(got)-1] != total-store.MaxRunSteps+1 {
		t.Errorf("%d steps kept, from %d down to %d; want %d, from %d down to %d",
			len(got), got[0], got[len(got)-1], store.MaxRunSteps, total, total-store.MaxRunSteps+1)
	}
}

func testRunStepsErrors(t *testing.T, o opener) {
	f := newFixture(t, o)
	other := f.newOrg("other")
	run := f.newRun(client.RunTypeTaskV1, nil)
	for _, s := range []*client.RunStep{nil, {Number: 0}, {Number: -1}} {
		if err := f.Runs().AddStep(ctx, f.org.ID, run.ID, s); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("step %+v: %v, want ErrInvalid", s, err)
		}
	}
	for _, n := range []int{0, -1} {
		if err := f.Runs().PutBlock(ctx, f.org.ID, run.ID, n, &client.RunBlock{}); !errors.Is(err, store.ErrInvalid) ||
			err.Error() != fmt.Sprintf("store: run %s: a block execution is numbered from 1, not %d", run.ID, n) {
			t.Errorf("block %d: %v, want ErrInvalid", n, err)
		}
	}
	if err := f.Runs().PutBlock(ctx, f.org.ID, run.ID, 1, nil); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a nil block: %v, want ErrInvalid", err)
	}
	// Another organization's run, or no run, is not found, for writing or
	// reading; nor is an unknown organization.
	for _, c := range []struct{ org, id string }{{other.ID, run.ID}, {f.org.ID, "tsk_1"}, {f.org.ID, ""}, {f.org.ID, "a\x00b"}} {
		want := store.NotFoundError{Record: store.RecordRun, ID: c.id}
		wantNotFoundError(t, "AddStep", f.Runs().AddStep(ctx, c.org, c.id, &client.RunStep{Number: 1}), want)
		wantNotFoundError(t, "PutBlock", f.Runs().PutBlock(ctx, c.org, c.id, 1, &client.RunBlock{}), want)
		_, err := f.Runs().StepsJSON(ctx, c.org, c.id)
		wantNotFoundError(t, "StepsJSON", err, want)
		_, err = f.Runs().Trace(ctx, c.org, c.id)
		wantNotFoundError(t, "Trace", err, want)
	}
	noOrg := store.NotFoundError{Record: store.RecordOrganization, ID: "o_404"}
	wantNotFoundError(t, "AddStep", f.Runs().AddStep(ctx, "o_404", run.ID, &client.RunStep{Number: 1}), noOrg)
	_, err := f.Runs().StepsJSON(ctx, "o_404", run.ID)
	wantNotFoundError(t, "StepsJSON", err, noOrg)
}

// testRunBlocks: a block execution recorded as it starts and again as it
// ends keeps its first created_at; Trace reads the record, the blocks in
// the order they started and the steps in order, of that run only; a run
// keeps its newest MaxRunBlocks blocks.
func testRunBlocks(t *testing.T, o opener) {
	f := newFixture(t, o)
	run := f.newRun(client.RunTypeWorkflowRun, nil)
	neighbour := f.newRun(client.RunTypeWorkflowRun, nil)
	running, done := "running", "completed"
	put := func(runID string, n int, b *client.RunBlock) {
		t.Helper()
		if err := f.Runs().PutBlock(ctx, f.org.ID, runID, n, b); err != nil {
			t.Fatal(err)
		}
	}
	put(run.ID, 1, &client.RunBlock{WorkflowRunBlockID: "wrb_1", BlockType: client.BlockTypeForLoop, Status: &running})
	put(run.ID, 2, &client.RunBlock{WorkflowRunBlockID: "wrb_2", BlockType: client.BlockTypeGotoURL, Status: &done, ParentWorkflowRunBlockID: client.Ptr("wrb_1")})
	put(neighbour.ID, 1, &client.RunBlock{WorkflowRunBlockID: "wrb_9", BlockType: client.BlockTypeWait})
	if err := f.Runs().AddStep(ctx, f.org.ID, run.ID, &client.RunStep{Number: 1, WorkflowRunBlockID: "wrb_2"}); err != nil {
		t.Fatal(err)
	}
	before, err := f.Runs().Trace(ctx, f.org.ID, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	put(run.ID, 1, &client.RunBlock{WorkflowRunBlockID: "wrb_1", BlockType: client.BlockTypeForLoop, Status: &done, Output: json.RawMessage(`[1,2]`)})
	trace, err := f.Runs().Trace(ctx, f.org.ID, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if trace.Record == nil || trace.Record.ID != run.ID || len(trace.Blocks) != 2 || len(trace.Steps) != 1 || trace.Steps[0].WorkflowRunBlockID != "wrb_2" {
		t.Fatalf("trace %+v", trace)
	}
	loop, inner := trace.Blocks[0], trace.Blocks[1]
	if loop.WorkflowRunBlockID != "wrb_1" || *loop.Status != "completed" || string(loop.Output) != "[1,2]" ||
		!loop.CreatedAt.Equal(before.Blocks[0].CreatedAt.Time) || !loop.ModifiedAt.After(before.Blocks[0].ModifiedAt.Time) {
		t.Errorf("the loop, ended: %+v (started as %+v)", loop, before.Blocks[0])
	}
	if inner.WorkflowRunBlockID != "wrb_2" || *inner.ParentWorkflowRunBlockID != "wrb_1" {
		t.Errorf("the inner block: %+v", inner)
	}

	total := store.MaxRunBlocks + 3
	for n := 1; n <= total; n++ {
		put(neighbour.ID, n, &client.RunBlock{BlockType: client.BlockTypeWait})
	}
	trace, err = f.Runs().Trace(ctx, f.org.ID, neighbour.ID)
	if err != nil || len(trace.Blocks) != store.MaxRunBlocks {
		t.Errorf("%d blocks kept, want %d (%v)", len(trace.Blocks), store.MaxRunBlocks, err)
	}
}
