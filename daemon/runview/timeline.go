package runview

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// Timeline returns a run's timeline as GET /v1/runs/{id}/timeline answers
// it, the hosted service's shape: the run's block executions, newest
// first, each with its children (the blocks a loop ran, and the agent
// loop's decisions in that block as thoughts), newest first too.
//
// A task run has no blocks; as the hosted service does for task-v2 runs,
// its timeline is one block standing for the task (task_v2, or task for
// the other engines) once the run has started, its steps as thoughts
// under it. Steps outside any block (a run_action run's) are thoughts at
// the top level.
func Timeline(t *store.RunTrace) []*client.TimelineEntry {
	rec := t.Record
	blocks := t.Blocks
	var taskBlock string
	if rec.Type != client.RunTypeWorkflowRun {
		if b := taskRunBlock(rec); b != nil {
			blocks = []*client.RunBlock{b}
			taskBlock = b.WorkflowRunBlockID
		}
	}
	entries := map[string]*client.TimelineEntry{}
	var top []*client.TimelineEntry
	order := map[*client.TimelineEntry]int{} // for entries made at the same instant: later ones first
	for i, b := range blocks {
		e := &client.TimelineEntry{Type: client.TimelineBlockEntry, Block: b, Children: []*client.TimelineEntry{},
			CreatedAt: b.CreatedAt, ModifiedAt: b.ModifiedAt}
		entries[b.WorkflowRunBlockID] = e
		order[e] = i
	}
	for _, b := range blocks {
		e := entries[b.WorkflowRunBlockID]
		if p := b.ParentWorkflowRunBlockID; p != nil && entries[*p] != nil {
			parent := entries[*p]
			parent.Children = append(parent.Children, e)
			continue
		}
		top = append(top, e)
	}
	for i, s := range t.Steps {
		e := &client.TimelineEntry{Type: client.TimelineThoughtEntry, Thought: thought(rec, s),
			CreatedAt: s.CreatedAt, ModifiedAt: s.CreatedAt, Children: []*client.TimelineEntry{}}
		order[e] = len(blocks) + i
		blockID := s.WorkflowRunBlockID
		if blockID == "" {
			blockID = taskBlock
		}
		if parent := entries[blockID]; parent != nil {
			e.Thought.WorkflowRunBlockID = client.Ptr(blockID)
			parent.Children = append(parent.Children, e)
			continue
		}
		top = append(top, e)
	}
	newestFirst := func(a, b *client.TimelineEntry) int {
		if c := b.CreatedAt.Compare(a.CreatedAt.Time); c != 0 {
			return c
		}
		return cmp.Compare(order[b], order[a])
	}
	for _, e := range entries {
		slices.SortStableFunc(e.Children, newestFirst)
	}
	slices.SortStableFunc(top, newestFirst)
	if top == nil {
		top = []*client.TimelineEntry{}
	}
	return top
}

// taskRunBlock is the block standing for a task run in its timeline; nil
// before the run started.
func taskRunBlock(rec *store.RunRecord) *client.RunBlock {
	if rec.StartedAt == nil {
		return nil
	}
	b := &client.RunBlock{
		WorkflowRunBlockID: "wrb_" + rec.ID, WorkflowRunID: rec.ID, OrganizationID: rec.OrgID,
		BlockType: client.BlockTypeTask, Status: client.Ptr(string(rec.Status)),
		Output: rec.Output, ErrorCodes: []string{}, TaskID: client.Ptr(rec.ID),
		CreatedAt: *rec.StartedAt, ModifiedAt: rec.ModifiedAt,
	}
	if rec.FailureReason != "" {
		b.FailureReason = client.Ptr(rec.FailureReason)
	}
	if t := rec.Task; t != nil {
		if t.URL != "" {
			b.URL = client.Ptr(t.URL)
		}
		if rec.Type == client.RunTypeTaskV2 {
			b.BlockType, b.Prompt = client.BlockTypeTaskV2, client.Ptr(t.Prompt)
		} else {
			b.NavigationGoal = client.Ptr(t.Prompt)
		}
	}
	if rec.FinishedAt != nil {
		b.Duration = client.Ptr(rec.FinishedAt.Sub(rec.StartedAt.Time).Seconds())
	}
	return b
}

// thought is a step of the run as a thought of its timeline: the model's
// note, and what was done and how the step ended as its answer.
func thought(rec *store.RunRecord, s *client.RunStep) *client.Thought {
	th := &client.Thought{
		ThoughtID: "ot_" + rec.ID + "_" + strconv.Itoa(s.Number), TaskID: rec.ID, OrganizationID: rec.OrgID,
		WorkflowRunID: client.Ptr(rec.ID), ThoughtType: client.Ptr("plan"),
		InputTokenCount: client.Ptr(s.Tokens.Input), OutputTokenCount: client.Ptr(s.Tokens.Output),
		CreatedAt: s.CreatedAt, ModifiedAt: s.CreatedAt,
	}
	if s.URL != "" {
		th.Observation = client.Ptr("On " + s.URL)
	}
	if s.Thought != "" {
		th.Thought = client.Ptr(s.Thought)
	}
	answer := strings.Join(s.Actions, "\n")
	if s.Decision != "" {
		if answer != "" {
			answer += "\n"
		}
		answer += "Decision: " + s.Decision
	}
	if answer != "" {
		th.Answer = client.Ptr(answer)
	}
	return th
}
