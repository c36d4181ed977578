package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/ptr"
)

// The browser profile tools list, show, create and delete profiles: saved
// browser states (cookies and local storage) that runs start from, signed
// in where the profile was. A profile's cookies and storage stay in the
// service: answers carry its name, the agent it came from and its dates.

// profilesHowTo ends the descriptions, for a model looking for how
// profiles come to hold a sign-in.
const profilesHowTo = " A profile holds a sign-in when it is made from a run (workflow_run_id) of an agent with " +
	"persist_browser_session: true, which keeps its browser state when it ends; runs start from a profile with browser_profile_id."

// BrowserProfileListInput is the input of skyvern_browser_profile_list.
type BrowserProfileListInput struct {
	PageArgs
	SearchKey      string `json:"search_key,omitempty" jsonschema:"text to look for in the names and descriptions, case aside"`
	IncludeDeleted bool   `json:"include_deleted,omitempty" jsonschema:"list deleted profiles too"`
}

// BrowserProfileList is the answer of skyvern_browser_profile_list.
type BrowserProfileList struct {
	BrowserProfiles []BrowserProfileInfo `json:"browser_profiles" jsonschema:"the profiles, newest first"`
	PageInfo
}

// BrowserProfileInfo describes a profile without its browser state.
type BrowserProfileInfo struct {
	BrowserProfileID    string `json:"browser_profile_id" jsonschema:"the profile's id (bp_...), which runs name as browser_profile_id"`
	Name                string `json:"name"`
	Description         string `json:"description,omitempty"`
	WorkflowPermanentID string `json:"workflow_permanent_id,omitempty" jsonschema:"the agent (wpid_...) whose run the profile was made from; absent for an empty profile"`
	CreatedAt           string `json:"created_at,omitempty"`
	ModifiedAt          string `json:"modified_at,omitempty"`
	DeletedAt           string `json:"deleted_at,omitempty" jsonschema:"when the profile was deleted; absent while it exists"`
}

// BrowserProfileCreateInput is the input of skyvern_browser_profile_create.
type BrowserProfileCreateInput struct {
	Name          string `json:"name" jsonschema:"the profile's name"`
	Description   string `json:"description,omitempty" jsonschema:"what the profile is for"`
	WorkflowRunID string `json:"workflow_run_id,omitempty" jsonschema:"an agent run (wr_...) whose kept browser state the profile holds; left out, the profile is empty"`
	// BrowserSessionID is the hosted tool's argument too.
	BrowserSessionID string `json:"browser_session_id,omitempty" jsonschema:"a closed browser session (pbs_...) that kept its state (generate_browser_profile); instead of workflow_run_id"`
}

// BrowserProfileIDInput names one profile.
type BrowserProfileIDInput struct {
	BrowserProfileID string `json:"browser_profile_id" jsonschema:"the profile's id (bp_...)"`
}

// BrowserProfileDeleteResult reports a profile deletion.
type BrowserProfileDeleteResult struct {
	BrowserProfileID string `json:"browser_profile_id"`
	Deleted          bool   `json:"deleted"`
}

// browserProfilePager pages skyvern_browser_profile_list.
var browserProfilePager = pager{items: "profiles", defaultSize: 10, maxSize: 100}

// browserProfileTools list, show, create and delete browser profiles.
type browserProfileTools struct {
	profiles *client.BrowserProfilesService
}

func (t *browserProfileTools) register(s *mcp.Server) {
	addTool(s, spec{
		name:  "skyvern_browser_profile_list",
		title: "List browser profiles",
		description: "List the browser profiles (saved browser states that runs start from), newest first, with the agent each " +
			"was made from. Their cookies and storage are never shown." + profilesHowTo,
		annotations:  readOnly(),
		refine:       browserProfilePager.refineArgs,
		refineAnswer: browserProfilePager.refineAnswer,
	}, t.browserProfileList)

	addTool(s, spec{
		name:        "skyvern_browser_profile_get",
		title:       "Get a browser profile",
		description: "Get one browser profile by id: its name, description, the agent it was made from and its dates." + profilesHowTo,
		annotations: readOnly(),
		refine:      nonEmptyArgs("browser_profile_id"),
	}, t.browserProfileGet)

	addTool(s, spec{
		name:  "skyvern_browser_profile_create",
		title: "Create a browser profile",
		description: "Save the browser state an agent run kept (workflow_run_id), or the one a closed browser session kept " +
			"(browser_session_id, when it had generate_browser_profile), as a browser profile, so that other runs " +
			"start signed in where that run was; without either the profile is empty. Only the runs of an agent with " +
			"persist_browser_session: true keep their state (when they end): another run is refused with 400 \"kept no browser state\".",
		annotations: writes(false),
		refine:      nonEmptyArgs("name"),
	}, t.browserProfileCreate)

	addTool(s, spec{
		name:  "skyvern_browser_profile_delete",
		title: "Delete a browser profile",
		description: "Delete a browser profile and its saved browser state for good. Runs that name it are refused from then on, " +
			"and agents that use it by default fail to start. Confirm with the user first: it cannot be undone.",
		annotations: destroys(false),
		refine:      nonEmptyArgs("browser_profile_id"),
	}, t.browserProfileDelete)
}

func (t *browserProfileTools) browserProfileList(ctx context.Context, in BrowserProfileListInput) (*BrowserProfileList, error) {
	ps, page, err := listPage(ctx, browserProfilePager, in.PageArgs, func(ctx context.Context, page, size int) ([]*client.BrowserProfile, error) {
		return t.profiles.List(ctx, &client.ListBrowserProfilesOptions{Page: page, PageSize: size, SearchKey: in.SearchKey, IncludeDeleted: in.IncludeDeleted})
	}, browserProfileInfo)
	if err != nil {
		return nil, err
	}
	return &BrowserProfileList{BrowserProfiles: ps, PageInfo: page}, nil
}

func (t *browserProfileTools) browserProfileGet(ctx context.Context, in BrowserProfileIDInput) (*BrowserProfileInfo, error) {
	return answerWith(browserProfileInfo)(t.profiles.Get(ctx, in.BrowserProfileID))
}

func (t *browserProfileTools) browserProfileCreate(ctx context.Context, in BrowserProfileCreateInput) (*BrowserProfileInfo, error) {
	if strings.HasPrefix(in.WorkflowRunID, "tsk_") {
		return nil, argError("workflow_run_id", "%s is a task run, and task runs keep no browser state: give a run (wr_...) of an agent with persist_browser_session: true", in.WorkflowRunID)
	}
	if in.WorkflowRunID != "" && in.BrowserSessionID != "" {
		return nil, argError("browser_session_id", "give workflow_run_id or browser_session_id, not both")
	}
	return answerWith(browserProfileInfo)(t.profiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: in.Name, Description: in.Description,
		WorkflowRunID: in.WorkflowRunID, BrowserSessionID: in.BrowserSessionID}))
}

func (t *browserProfileTools) browserProfileDelete(ctx context.Context, in BrowserProfileIDInput) (*BrowserProfileDeleteResult, error) {
	return deleted(t.profiles.Delete(ctx, in.BrowserProfileID), &BrowserProfileDeleteResult{BrowserProfileID: in.BrowserProfileID, Deleted: true})
}

// browserProfileInfo copies what the service shows of a profile; the
// client's type holds no browser state to begin with.
func browserProfileInfo(p *client.BrowserProfile) BrowserProfileInfo {
	return BrowserProfileInfo{
		BrowserProfileID: p.BrowserProfileID, Name: p.Name, Description: ptr.Value(p.Description),
		WorkflowPermanentID: ptr.Value(p.WorkflowPermanentID),
		CreatedAt:           timeText(&p.CreatedAt), ModifiedAt: timeText(&p.ModifiedAt), DeletedAt: timeText(p.DeletedAt),
	}
}
