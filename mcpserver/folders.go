package mcpserver

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/ptr"
)

// FolderListInput is the input of skyvern_folder_list.
type FolderListInput struct {
	Search string `json:"search,omitempty" jsonschema:"words to look for in titles and descriptions"`
	PageArgs
}

// FolderList is the answer of skyvern_folder_list.
type FolderList struct {
	Folders []FolderInfo `json:"folders" jsonschema:"the folders, most recently changed first"`
	PageInfo
}

// FolderInfo describes a folder.
type FolderInfo struct {
	FolderID      string `json:"folder_id" jsonschema:"the folder's id (fld_...)"`
	Title         string `json:"title"`
	Description   string `json:"description,omitempty"`
	WorkflowCount int    `json:"workflow_count" jsonschema:"agents in the folder"`
	CreatedAt     string `json:"created_at,omitempty"`
	ModifiedAt    string `json:"modified_at,omitempty"`
}

// FolderCreateInput is the input of skyvern_folder_create.
type FolderCreateInput struct {
	Title       string `json:"title" jsonschema:"the folder's name"`
	Description string `json:"description,omitempty"`
}

// FolderIDInput names one folder.
type FolderIDInput struct {
	FolderID string `json:"folder_id" jsonschema:"the folder's id (fld_...)"`
}

// FolderUpdateInput is the input of skyvern_folder_update.
type FolderUpdateInput struct {
	FolderID    string  `json:"folder_id" jsonschema:"the folder's id (fld_...)"`
	Title       *string `json:"title,omitempty" jsonschema:"the new name; unchanged when left out"`
	Description *string `json:"description,omitempty" jsonschema:"the new description; unchanged when left out"`
}

// FolderDeleteInput is the input of skyvern_folder_delete.
type FolderDeleteInput struct {
	FolderID        string `json:"folder_id" jsonschema:"the folder's id (fld_...)"`
	DeleteWorkflows bool   `json:"delete_workflows,omitempty" jsonschema:"also delete the agents in the folder; by default they are only taken out of it"`
}

// FolderDeleteResult reports a folder deletion.
type FolderDeleteResult struct {
	FolderID         string `json:"folder_id"`
	Deleted          bool   `json:"deleted"`
	WorkflowsDeleted bool   `json:"workflows_deleted" jsonschema:"true when the folder's agents were deleted too"`
}

// folderPager pages skyvern_folder_list.
var folderPager = pager{items: "folders", defaultSize: 50, maxSize: 500}

// folderTools list, show, create, rename and delete folders.
type folderTools struct {
	folders *client.FoldersService
}

func (t *folderTools) register(s *mcp.Server) {
	addTool(s, spec{
		name:         "skyvern_folder_list",
		title:        "List folders",
		description:  "List the folders that group agents, most recently changed first, optionally searching their titles and descriptions.",
		annotations:  readOnly(),
		refine:       folderPager.refineArgs,
		refineAnswer: folderPager.refineAnswer,
	}, t.folderList)

	addTool(s, spec{
		name:        "skyvern_folder_create",
		title:       "Create a folder",
		description: "Create a folder to group agents; skyvern_workflow_create and skyvern_workflow_update_folder put agents in it.",
		annotations: writes(false),
		refine: func(p map[string]*jsonschema.Schema) {
			nonEmpty(p, "title")
			p["title"].MaxLength = new(255)
		},
	}, t.folderCreate)

	addTool(s, spec{
		name:        "skyvern_folder_get",
		title:       "Get a folder",
		description: "Get a folder's title, description and number of agents.",
		annotations: readOnly(),
		refine:      nonEmptyArgs("folder_id"),
	}, t.folderGet)

	addTool(s, spec{
		name:        "skyvern_folder_update",
		title:       "Rename a folder",
		description: "Change a folder's title and/or description.",
		annotations: writes(true),
		refine:      nonEmptyArgs("folder_id"),
	}, t.folderUpdate)

	addTool(s, spec{
		name:  "skyvern_folder_delete",
		title: "Delete a folder",
		description: "Delete a folder. Its agents are taken out of it and kept, unless delete_workflows is true, " +
			"which deletes them too.",
		annotations: destroys(false),
		refine:      nonEmptyArgs("folder_id"),
	}, t.folderDelete)
}

func (t *folderTools) folderList(ctx context.Context, in FolderListInput) (*FolderList, error) {
	folders, page, err := listPage(ctx, folderPager, in.PageArgs, func(ctx context.Context, page, size int) ([]*client.Folder, error) {
		return t.folders.List(ctx, &client.ListFoldersOptions{Page: page, PageSize: size, Search: in.Search})
	}, folderInfo)
	if err != nil {
		return nil, err
	}
	return &FolderList{Folders: folders, PageInfo: page}, nil
}

func (t *folderTools) folderCreate(ctx context.Context, in FolderCreateInput) (*FolderInfo, error) {
	return answerWith(folderInfo)(t.folders.Create(ctx, &client.FolderCreateRequest{Title: in.Title, Description: in.Description}))
}

func (t *folderTools) folderGet(ctx context.Context, in FolderIDInput) (*FolderInfo, error) {
	return answerWith(folderInfo)(t.folders.Get(ctx, in.FolderID))
}

func (t *folderTools) folderUpdate(ctx context.Context, in FolderUpdateInput) (*FolderInfo, error) {
	if in.Title == nil && in.Description == nil {
		return nil, argError("title", "give a title, a description or both")
	}
	return answerWith(folderInfo)(t.folders.Update(ctx, in.FolderID, &client.FolderUpdateRequest{Title: in.Title, Description: in.Description}))
}

func (t *folderTools) folderDelete(ctx context.Context, in FolderDeleteInput) (*FolderDeleteResult, error) {
	res, err := t.folders.Delete(ctx, in.FolderID, &client.DeleteFolderOptions{DeleteAgents: in.DeleteWorkflows})
	if err != nil {
		return nil, err
	}
	return &FolderDeleteResult{FolderID: in.FolderID, Deleted: true, WorkflowsDeleted: res.WorkflowsDeleted}, nil
}

func folderInfo(f *client.Folder) FolderInfo {
	return FolderInfo{
		FolderID: f.FolderID, Title: f.Title, Description: ptr.Value(f.Description), WorkflowCount: f.WorkflowCount,
		CreatedAt: timeText(&f.CreatedAt), ModifiedAt: timeText(&f.ModifiedAt),
	}
}
