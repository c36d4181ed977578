package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// TestStoreErrorDetails: the store's errors reach the client with the
// status of their kind and the detail the hosted service words for the
// record, wrapped or not.
func TestStoreErrorDetails(t *testing.T) {
	runSubject := store.TagSubject{Kind: store.RunSubject, ID: "wr_1"}
	agentSubject := store.TagSubject{Kind: store.AgentSubject, ID: "wpid_1"}
	for _, c := range []struct {
		err    error
		status int
		detail string
	}{
		{&store.NotFoundError{Record: store.RecordAgent, ID: "wpid_1"}, 404, "Workflow not found. workflow_permanent_id=wpid_1"},
		{&store.NotFoundError{Record: store.RecordAgent, ID: "wpid_1", Version: 3}, 404, "Workflow not found. workflow_permanent_id=wpid_1, version=3"},
		{&store.NotFoundError{Record: store.RecordFolder, ID: "fld_1"}, 404, "Folder fld_1 not found"},
		{&store.NotFoundError{Record: store.RecordRun, ID: "tsk_1"}, 404, "Run tsk_1 not found"},
		{&store.NotFoundError{Record: store.RecordWorkflowRun, ID: "wr_1"}, 404, "Workflow run wr_1 not found"},
		{&store.NotFoundError{Record: store.RecordOrganization, ID: "o_1"}, 404, "Organization o_1 not found"},
		{&store.NotFoundError{Record: store.RecordTagKey, ID: "env"}, 404, "Tag key env not found"},
		{&store.NotFoundError{Record: store.RecordTagValue, ID: "env", Value: "qa"}, 404, "Tag value env:qa not found"},
		{&store.ConflictError{Record: store.RecordTagValue, ID: "env", Value: "qa"}, 409, "Tag value env:qa already exists"},
		{&store.ConflictError{Record: store.RecordRun, ID: "tsk_1"}, 409, "Run tsk_1 already exists"},
		{&store.TooManyTagsError{Subject: agentSubject, Tags: 21, Max: 20}, 422, "Workflow wpid_1 would carry 21 tags; at most 20 are allowed"},
		{&store.TooManyTagsError{Subject: runSubject, Tags: 22, Max: 20}, 422, "Workflow run wr_1 would carry 22 tags; at most 20 are allowed"},
		{errors.New("disk on fire"), 500, "Internal server error"},
	} {
		for _, err := range []error{c.err, fmt.Errorf("context: %w", c.err)} {
			e := toAPIError(err)
			if status := kindStatus[e.Kind]; status != c.status || e.Detail != c.detail {
				t.Errorf("%v: %d %q, want %d %q", err, status, e.Detail, c.status, c.detail)
			}
		}
	}
	// An error of a sentinel kind without a record is shown as it reads.
	err := fmt.Errorf("the key is gone: %w", store.ErrNotFound)
	if e := toAPIError(err); e.Kind != KindNotFound || e.Detail != err.Error() {
		t.Errorf("%v: %v %q", err, e.Kind, e.Detail)
	}
	if kindStatus[KindNotFound] != http.StatusNotFound {
		t.Fatal("the table moved")
	}
}

// TestActionErrorStatuses: the engine's action errors reach the client with
// the status of their kind and their message as the detail; a request that
// ended first is a 400, and any other error of the engine is the daemon's.
func TestActionErrorStatuses(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		detail string
	}{
		{&executor.ActionError{Kind: executor.ActionInvalid, Msg: "Unknown action type \"x\""}, 400, "Unknown action type \"x\""},
		{&executor.ActionError{Kind: executor.ActionConflict, Msg: "Workflow run wr_1 already has a browser session"}, 409, "Workflow run wr_1 already has a browser session"},
		{&executor.ActionError{Kind: executor.ActionUnavailable, Msg: "No browser"}, 503, "No browser"},
		{&executor.ActionError{Kind: executor.ActionFailed, Msg: "No element matches"}, 422, "No element matches"},
		{&executor.ActionError{Msg: "No kind"}, 422, "No kind"},
		{context.Canceled, 400, "The request ended before the action finished."},
		{errors.New("disk on fire"), 500, "Internal server error"},
	} {
		e := toAPIError(actionError(c.err))
		if status := kindStatus[e.Kind]; status != c.status || e.Detail != c.detail {
			t.Errorf("%v: %d %q, want %d %q", c.err, status, e.Detail, c.status, c.detail)
		}
	}
}
