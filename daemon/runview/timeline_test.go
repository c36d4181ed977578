package runview

import (
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// describe writes a timeline as "label(children...)" with thoughts as
// "#n", in the order given.
func describe(entries []*client.TimelineEntry) string {
	var parts []string
	for _, e := range entries {
		switch {
		case e.Block != nil:
			label := string(e.Block.BlockType)
			if e.Block.Label != nil {
				label = *e.Block.Label
			}
			if len(e.Children) > 0 {
				label += "(" + describe(e.Children) + ")"
			}
			parts = append(parts, label)
		case e.Thought != nil:
			parts = append(parts, "#"+strings.TrimPrefix(e.Thought.ThoughtID[strings.LastIndex(e.Thought.ThoughtID, "_"):], "_"))
		}
	}
	return strings.Join(parts, " ")
}

func TestTimelineNestsLoopsAndThoughts(t *testing.T) {
	t0 := time.Date(2026, 1, 31, 15, 20, 0, 0, time.UTC)
	at := func(s int) client.Time { return client.Time{Time: t0.Add(time.Duration(s) * time.Second)} }
	block := func(id, label, parent string, s int) *client.RunBlock {
		b := &client.RunBlock{WorkflowRunBlockID: id, Label: client.Ptr(label), BlockType: client.BlockTypeGotoURL, CreatedAt: at(s), ModifiedAt: at(s)}
		if parent != "" {
			b.ParentWorkflowRunBlockID = client.Ptr(parent)
		}
		return b
	}
	rec := &store.RunRecord{ID: "wr_1", OrgID: "o_1", Type: client.RunTypeWorkflowRun}
	trace := &store.RunTrace{
		Record: rec,
		// Two blocks made in the same instant keep their start order
		// (newest first).
		Blocks: []*client.RunBlock{block("wrb_a", "open", "", 1), block("wrb_l", "loop", "", 2),
			block("wrb_i1", "visit", "wrb_l", 3), block("wrb_i2", "visit", "wrb_l", 3), block("wrb_z", "done", "", 5)},
		Steps: []*client.RunStep{
			{Number: 1, WorkflowRunBlockID: "wrb_a", CreatedAt: at(1)},
			{Number: 2, WorkflowRunBlockID: "wrb_i1", CreatedAt: at(3)},
			{Number: 3, WorkflowRunBlockID: "wrb_i2", CreatedAt: at(4)},
			{Number: 4, CreatedAt: at(6)}, // outside any block: at the top level
		},
	}
	if got, want := describe(Timeline(trace)), "#4 done loop(visit(#3) visit(#2)) open(#1)"; got != want {
		t.Errorf("timeline %q, want %q", got, want)
	}

	// A task run that has not started has no timeline; once started, one
	// block for the task, its steps under it.
	task := &store.RunRecord{ID: "tsk_v2_1", OrgID: "o_1", Type: client.RunTypeTaskV2, Status: client.RunStatusQueued,
		Task: &client.TaskRunRequest{Prompt: "Find the price", URL: "http://127.0.0.1:1/"}}
	if tl := Timeline(&store.RunTrace{Record: task}); tl == nil || len(tl) != 0 {
		t.Errorf("a queued task: %+v", tl)
	}
	started := at(10)
	task.StartedAt, task.Status = &started, client.RunStatusRunning
	tl := Timeline(&store.RunTrace{Record: task, Steps: []*client.RunStep{{Number: 1, CreatedAt: at(11)}, {Number: 2, CreatedAt: at(12)}}})
	if got := describe(tl); got != "task_v2(#2 #1)" {
		t.Errorf("a running task v2: %q", got)
	}
	if b := tl[0].Block; b.Prompt == nil || *b.Prompt != "Find the price" || *b.URL != "http://127.0.0.1:1/" || *b.Status != "running" || b.Duration != nil ||
		*tl[0].Children[0].Thought.WorkflowRunBlockID != b.WorkflowRunBlockID {
		t.Errorf("the task's block: %+v", b)
	}
}
