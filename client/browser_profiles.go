package client

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/url"
)

// BrowserProfilesService manages browser profiles: saved browser states
// (the cookies, and the local storage of the sites that were open) that
// runs start from, so that a run is signed in where an earlier one signed
// in. A profile is made from an agent run that kept its browser state (its
// agent has PersistBrowserSession), or empty.
type BrowserProfilesService service

// BrowserProfile is a saved browser state. Its cookies and storage are
// never in an answer.
type BrowserProfile struct {
	BrowserProfileID        string          `json:"browser_profile_id"` // bp_...
	OrganizationID          string          `json:"organization_id"`
	Name                    string          `json:"name"`
	Description             *string         `json:"description"`
	SourceBrowserType       *string         `json:"source_browser_type"`
	ProxyLocation           json.RawMessage `json:"proxy_location"`
	ProxySessionID          *string         `json:"proxy_session_id"`
	IsManaged               bool            `json:"is_managed"`
	WorkflowPermanentID     *string         `json:"workflow_permanent_id"`
	BrowserProfileKeyDigest *string         `json:"browser_profile_key_digest"`
	CreatedAt               Time            `json:"created_at"`
	ModifiedAt              Time            `json:"modified_at"`
	DeletedAt               *Time           `json:"deleted_at"`
}

// BrowserProfileCreateRequest creates a profile: from the browser state an
// agent run kept (WorkflowRunID), from the one a browser session closed
// with (BrowserSessionID; the session must have had
// GenerateBrowserProfile), or empty.
type BrowserProfileCreateRequest struct {
	Name             string `json:"name"`
	Description      string `json:"description,omitempty"`
	WorkflowRunID    string `json:"workflow_run_id,omitempty"`
	BrowserSessionID string `json:"browser_session_id,omitempty"`
}

// BrowserProfileUpdateRequest renames a profile or changes its
// description; a nil field is left as it is.
type BrowserProfileUpdateRequest struct {
	Name        *string `json:"name,omitempty"`
	Description *string `json:"description,omitempty"`
}

// ListBrowserProfilesOptions filters and pages GET /v1/browser_profiles.
type ListBrowserProfilesOptions struct {
	Page           int    // 1-based; 0 means 1
	PageSize       int    // 0 means the server default (10)
	SearchKey      string // in the name and description, case aside
	IncludeDeleted bool
}

// Create makes a profile (POST /v1/browser_profiles).
func (s *BrowserProfilesService) Create(ctx context.Context, req *BrowserProfileCreateRequest, opts ...Option) (*BrowserProfile, error) {
	if req == nil || req.Name == "" {
		return nil, errors.New("client: BrowserProfiles.Create: the request's Name is required")
	}
	out := new(BrowserProfile)
	_, err := s.client.do(ctx, request{method: "POST", path: "/v1/browser_profiles", body: req}, out, opts)
	return nil2(out, err)
}

// List returns one page of profiles, newest first (GET
// /v1/browser_profiles); o may be nil.
func (s *BrowserProfilesService) List(ctx context.Context, o *ListBrowserProfilesOptions, opts ...Option) ([]*BrowserProfile, error) {
	q := url.Values{}
	if o != nil {
		setInt(q, "page", o.Page)
		setInt(q, "page_size", o.PageSize)
		setString(q, "search_key", o.SearchKey)
		setBool(q, "include_deleted", o.IncludeDeleted)
	}
	var out []*BrowserProfile
	_, err := s.client.do(ctx, request{method: "GET", path: "/v1/browser_profiles", query: q, idempotent: true}, &out, opts)
	return out, err
}

// All returns an iterator over every profile matching o; see
// AgentsService.All for its behaviour.
func (s *BrowserProfilesService) All(ctx context.Context, o *ListBrowserProfilesOptions, opts ...Option) iter.Seq2[*BrowserProfile, error] {
	return paginate(o, func(o *ListBrowserProfilesOptions) ([]*BrowserProfile, error) { return s.List(ctx, o, opts...) })
}

func (o *ListBrowserProfilesOptions) pageFields() (page, pageSize *int) { return &o.Page, &o.PageSize }

// Get returns a profile (GET /v1/browser_profiles/{id}).
func (s *BrowserProfilesService) Get(ctx context.Context, profileID string, opts ...Option) (*BrowserProfile, error) {
	if err := requireID("browser profile id", profileID); err != nil {
		return nil, err
	}
	out := new(BrowserProfile)
	_, err := s.client.do(ctx, request{method: "GET", path: pathf("/v1/browser_profiles/%s", profileID), idempotent: true}, out, opts)
	return nil2(out, err)
}

// Update renames a profile or changes its description (PATCH
// /v1/browser_profiles/{id}).
func (s *BrowserProfilesService) Update(ctx context.Context, profileID string, req *BrowserProfileUpdateRequest, opts ...Option) (*BrowserProfile, error) {
	if err := requireID("browser profile id", profileID); err != nil {
		return nil, err
	}
	if req == nil {
		req = &BrowserProfileUpdateRequest{}
	}
	out := new(BrowserProfile)
	_, err := s.client.do(ctx, request{method: "PATCH", path: pathf("/v1/browser_profiles/%s", profileID), body: req, idempotent: true}, out, opts)
	return nil2(out, err)
}

// Delete deletes a profile (DELETE /v1/browser_profiles/{id}); runs that
// name it afterwards fail to start.
func (s *BrowserProfilesService) Delete(ctx context.Context, profileID string, opts ...Option) error {
	if err := requireID("browser profile id", profileID); err != nil {
		return err
	}
	_, err := s.client.do(ctx, request{method: "DELETE", path: pathf("/v1/browser_profiles/%s", profileID)}, nil, opts)
	return err
}

// ResetProfile forgets the browser state an agent with
// PersistBrowserSession kept, so that its next run starts signed out
// (POST /v1/agents/{id}/browser_session/reset_profile).
func (s *AgentsService) ResetProfile(ctx context.Context, agentID string, opts ...Option) error {
	if err := requireID("agent id", agentID); err != nil {
		return err
	}
	_, err := s.client.do(ctx, request{method: "POST", path: pathf("/v1/agents/%s/browser_session/reset_profile", agentID), idempotent: true}, nil, opts)
	return err
}
