package client

import (
	"context"
	"errors"
	"iter"
	"net/url"
)

// FoldersService manages folders, which group agents.
type FoldersService service

// Folder groups agents. WorkflowCount counts the agents whose latest
// version is in the folder.
type Folder struct {
	Title          string  `json:"title"`
	Description    *string `json:"description"`
	FolderID       string  `json:"folder_id"`
	OrganizationID string  `json:"organization_id"`
	WorkflowCount  int     `json:"workflow_count"`
	CreatedAt      Time    `json:"created_at"`
	ModifiedAt     Time    `json:"modified_at"`
}

// FolderCreateRequest creates a folder. Title is 1 to 255 characters.
type FolderCreateRequest struct {
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// FolderUpdateRequest changes a folder. A nil field is left unchanged (the
// service cannot clear a description back to null; set it to "" instead).
type FolderUpdateRequest struct {
	Title       *string `json:"title,omitempty"`
	Description *string `json:"description,omitempty"`
}

// FolderDeleteResponse reports a folder deletion.
type FolderDeleteResponse struct {
	Status           string `json:"status"` // "deleted"
	FolderID         string `json:"folder_id"`
	WorkflowsDeleted bool   `json:"workflows_deleted"`
}

// ListFoldersOptions filters and pages GET /v1/folders.
type ListFoldersOptions struct {
	Page     int    // 1-based; 0 means 1
	PageSize int    // 1 to 500; 0 means the server default (100)
	Search   string // matches title or description
}

// DeleteFolderOptions controls a folder deletion.
type DeleteFolderOptions struct {
	// DeleteAgents also deletes the agents in the folder; otherwise they
	// are moved out of it.
	DeleteAgents bool
}

// Create creates a folder (POST /v1/folders).
func (s *FoldersService) Create(ctx context.Context, req *FolderCreateRequest, opts ...Option) (*Folder, error) {
	if req == nil || req.Title == "" {
		return nil, errors.New("client: Folders.Create: the request's Title is required")
	}
	out := new(Folder)
	_, err := s.client.do(ctx, request{method: "POST", path: "/v1/folders", body: req}, out, opts)
	return nil2(out, err)
}

// List returns one page of folders, most recently modified first
// (GET /v1/folders); o may be nil.
func (s *FoldersService) List(ctx context.Context, o *ListFoldersOptions, opts ...Option) ([]*Folder, error) {
	q := url.Values{}
	if o != nil {
		setInt(q, "page", o.Page)
		setInt(q, "page_size", o.PageSize)
		setString(q, "search", o.Search)
	}
	var out []*Folder
	_, err := s.client.do(ctx, request{method: "GET", path: "/v1/folders", query: q, idempotent: true}, &out, opts)
	return out, err
}

// All returns an iterator over every folder matching o; see
// AgentsService.All for its behaviour.
func (s *FoldersService) All(ctx context.Context, o *ListFoldersOptions, opts ...Option) iter.Seq2[*Folder, error] {
	return paginate(o, func(o *ListFoldersOptions) ([]*Folder, error) { return s.List(ctx, o, opts...) })
}

func (o *ListFoldersOptions) pageFields() (page, pageSize *int) { return &o.Page, &o.PageSize }

// Get returns a folder (GET /v1/folders/{id}).
func (s *FoldersService) Get(ctx context.Context, folderID string, opts ...Option) (*Folder, error) {
	if err := requireID("folder id", folderID); err != nil {
		return nil, err
	}
	out := new(Folder)
	_, err := s.client.do(ctx, request{method: "GET", path: pathf("/v1/folders/%s", folderID), idempotent: true}, out, opts)
	return nil2(out, err)
}

// Update changes a folder's title and/or description (PUT /v1/folders/{id}).
func (s *FoldersService) Update(ctx context.Context, folderID string, req *FolderUpdateRequest, opts ...Option) (*Folder, error) {
	if err := requireID("folder id", folderID); err != nil {
		return nil, err
	}
	if req == nil {
		req = &FolderUpdateRequest{}
	}
	out := new(Folder)
	_, err := s.client.do(ctx, request{method: "PUT", path: pathf("/v1/folders/%s", folderID), body: req, idempotent: true}, out, opts)
	return nil2(out, err)
}

// Delete deletes a folder (DELETE /v1/folders/{id}); o may be nil.
func (s *FoldersService) Delete(ctx context.Context, folderID string, o *DeleteFolderOptions, opts ...Option) (*FolderDeleteResponse, error) {
	if err := requireID("folder id", folderID); err != nil {
		return nil, err
	}
	q := url.Values{}
	if o != nil {
		setBool(q, "delete_workflows", o.DeleteAgents)
	}
	out := new(FolderDeleteResponse)
	// Not idempotent: a second delete answers 404.
	_, err := s.client.do(ctx, request{method: "DELETE", path: pathf("/v1/folders/%s", folderID), query: q}, out, opts)
	return nil2(out, err)
}
