// Package storetest is the conformance suite of package daemon/store: the
// behaviour every backend of the store gives its callers, tested through
// the exported methods only, so that the bbolt and the PostgreSQL backends
// answer alike (the same results, order, paging, errors and messages, the
// same isolation between organizations).
//
// A backend runs the suite from a test of its own:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, openFresh, reopenSame)
//	}
//
// What only one backend can observe (a file's bytes and locks, bbolt's
// buckets and migrations, PostgreSQL's schema) stays in that backend's own
// tests.
package storetest

import (
	"testing"

	"github.com/abctl/abctl/daemon/store"
)

// Backend is the store the suite tests: any implementation of the
// store's interfaces.
type Backend = store.Store

// Opener opens a fresh, empty store (no organization) with opts. The
// backend closes it in t.Cleanup.
type Opener func(t *testing.T, opts store.Options) Backend

// Reopener closes s, which the backend's Opener or Reopener opened, and
// opens the same database again with opts, as a daemon that restarts
// does: everything s committed is there. The backend closes the new store
// in t.Cleanup; closing the old one there again must be harmless.
type Reopener func(t *testing.T, s Backend, opts store.Options) Backend

// opener is what every test of the suite is given.
type opener struct {
	open   Opener
	reopen Reopener
}

// area is one kind of records and its tests.
type area struct {
	name  string
	tests []testCase
}

type testCase struct {
	name string
	fn   func(t *testing.T, o opener)
}

// Run runs every test of the suite on stores open and reopen make, as
// subtests: one per area, then one per test.
func Run(t *testing.T, open Opener, reopen Reopener) {
	if open == nil || reopen == nil {
		t.Fatal("storetest.Run needs an Opener and a Reopener")
	}
	o := opener{open: open, reopen: reopen}
	for _, a := range areas() {
		t.Run(a.name, func(t *testing.T) {
			for _, tc := range a.tests {
				t.Run(tc.name, func(t *testing.T) { tc.fn(t, o) })
			}
		})
	}
}

// areas lists the tests of the suite, by kind of record, in the order Run
// runs them.
func areas() []area {
	return []area{
		{name: "Store", tests: []testCase{
			{"ReopenKeepsData", testReopenKeepsData},
			{"CanceledContext", testCanceledContext},
			{"TypedErrors", testTypedErrors},
			{"PagesFarPastTheEnd", testPagesFarPastTheEnd},
		}},
		{name: "Organizations", tests: []testCase{
			{"CreateOrganization", testCreateOrganization},
			{"AuthenticateUnknown", testAuthenticateUnknown},
			{"APIKeyKept", testAPIKeyKept},
			{"AddAPIKey", testAddAPIKey},
			{"OrganizationsOrder", testOrganizationsOrder},
			{"DefaultOrganizationNone", testDefaultOrganizationNone},
			{"OrganizationCount", testOrganizationCount},
			{"SigningKeys", testSigningKeys},
		}},
		{name: "Agents", tests: []testCase{
			{"CreateAgentAssignsIDs", testCreateAgentAssignsIDs},
			{"CreateAgentDefaults", testCreateAgentDefaults},
			{"CreateAgentIdempotent", testCreateAgentIdempotent},
			{"CreateAgentIdempotentConcurrent", testCreateAgentIdempotentConcurrent},
			{"UpdateAgent", testUpdateAgent},
			{"DeleteAndResurrect", testDeleteAndResurrect},
			{"GetAgentVersions", testGetAgentVersions},
			{"SetAgentFolder", testSetAgentFolder},
			{"ListAgentsOrderAndPaging", testListAgentsOrderAndPaging},
			{"ListAgentsSearch", testListAgentsSearch},
			{"ListAgentsFilters", testListAgentsFilters},
			{"OddFolderAndStatus", testOddFolderAndStatus},
			{"OrgIsolation", testOrgIsolation},
			{"ManyVersions", testManyVersions},
			{"ConcurrentUse", testConcurrentUse},
			{"ListAgentsSearchesOutputParameters", testListAgentsSearchesOutputParameters},
		}},
		{name: "Folders", tests: []testCase{
			{"FolderCRUD", testFolderCRUD},
			{"ListFolders", testListFolders},
			{"FolderCounts", testFolderCounts},
			{"DeleteFolderKeepAgents", testDeleteFolderKeepAgents},
			{"DeleteFolderWithAgents", testDeleteFolderWithAgents},
		}},
		{name: "Tags", tests: []testCase{
			{"ApplyTagsSemantics", testApplyTagsSemantics},
			{"ApplyTagsCap", testApplyTagsCap},
			{"TagSubjectsMustExist", testTagSubjectsMustExist},
			{"TagHistoryFilters", testTagHistoryFilters},
			{"TagRegistry", testTagRegistry},
			{"ListAgentsByTags", testListAgentsByTags},
			{"SearchWildcards", testSearchWildcards},
			{"TagRunSubjects", testTagRunSubjects},
		}},
		{name: "Runs", tests: []testCase{
			{"RunsCreateGetUpdate", testRunsCreateGetUpdate},
			{"RunsPending", testRunsPending},
			{"ListRunsOddQueries", testListRunsOddQueries},
			{"ListRunsNewestFirstAndPaged", testListRunsNewestFirstAndPaged},
			{"ListRunsItem", testListRunsItem},
			{"ListRunsFilters", testListRunsFilters},
			{"ListRunsWorkflowDeleted", testListRunsWorkflowDeleted},
			{"ListRunsOrganizations", testListRunsOrganizations},
			{"RunSteps", testRunSteps},
			{"RunStepsBounded", testRunStepsBounded},
			{"RunStepsErrors", testRunStepsErrors},
			{"RunBlocks", testRunBlocks},
			{"RunViewWrittenWithRecord", testRunViewWrittenWithRecord},
			{"RunViewNone", testRunViewNone},
			{"RunViewNotFound", testRunViewNotFound},
			{"RunViewCallbackError", testRunViewCallbackError},
			{"RunViewWithoutRunViews", testRunViewWithoutRunViews},
			{"RunViewFormatChange", testRunViewFormatChange},
			{"FindFile", testFindFile},
		}},
		{name: "Credentials", tests: []testCase{
			{"Credentials", testCredentials},
			{"TOTPCodes", testTOTPCodes},
		}},
		{name: "BrowserSessions", tests: []testCase{
			{"BrowserSessions", testBrowserSessions},
		}},
		{name: "Uploads", tests: []testCase{
			{"Uploads", testUploads},
		}},
		{name: "Schedules", tests: []testCase{
			{"SchedulesCRUDAndOrganizations", testSchedulesCRUDAndOrganizations},
			{"FireIsAtomicAndOnce", testFireIsAtomicAndOnce},
		}},
		{name: "Scripts", tests: []testCase{
			{"ScriptsVersionsAndIndex", testScriptsVersionsAndIndex},
			{"ScriptRecord", testScriptRecord},
			{"ScriptsOfNoAgent", testScriptsOfNoAgent},
		}},
		{name: "CustomLLMs", tests: []testCase{
			{"CustomLLMs", testCustomLLMs},
			{"CustomLLMKeyNeedsASecret", testCustomLLMKeyNeedsASecret},
		}},
		{name: "Profiles", tests: []testCase{
			{"ProfilesAndKeptStates", testProfilesAndKeptStates},
		}},
	}
}
