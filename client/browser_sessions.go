package client

import (
	"context"
	"encoding/json"
)

// BrowserSessionsService manages browser sessions: a browser kept open
// between runs, with its cookies and pages, in which the runs that name it
// (BrowserSessionID on task, agent and login runs) execute one at a time.
// A session closes when asked, when its timeout passes, or when the daemon
// stops.
type BrowserSessionsService service

// BrowserSession is a browser session (upstream BrowserSessionResponse).
// Status is "running" while it is open; the daemon ends it as "closed",
// "timed_out" (its timeout passed) or "ended_by_restart" (the daemon
// stopped while it was open).
type BrowserSession struct {
	BrowserSessionID       string          `json:"browser_session_id"` // pbs_...
	OrganizationID         string          `json:"organization_id"`
	Status                 *string         `json:"status"`
	RunnableType           *string         `json:"runnable_type"`
	RunnableID             *string         `json:"runnable_id"`
	Timeout                *int            `json:"timeout"` // minutes
	BrowserAddress         *string         `json:"browser_address"`
	AppURL                 *string         `json:"app_url"`
	Extensions             json.RawMessage `json:"extensions"`
	BrowserType            *string         `json:"browser_type"`
	BrowserProfileID       *string         `json:"browser_profile_id"`
	GenerateBrowserProfile bool            `json:"generate_browser_profile"`
	VNCStreamingSupported  bool            `json:"vnc_streaming_supported"`
	DownloadPath           *string         `json:"download_path"`
	DownloadedFiles        json.RawMessage `json:"downloaded_files"`
	Recordings             json.RawMessage `json:"recordings"`
	StartedAt              *Time           `json:"started_at"`
	CompletedAt            *Time           `json:"completed_at"`
	CreatedAt              Time            `json:"created_at"`
	ModifiedAt             Time            `json:"modified_at"`
	DeletedAt              *Time           `json:"deleted_at"`
}

// BrowserSessionCreateRequest opens a browser session.
type BrowserSessionCreateRequest struct {
	// URL is a page to open in it.
	URL string `json:"url,omitempty"`
	// Timeout is how many minutes the session stays open, 5 to 240; 0
	// means 60.
	Timeout int `json:"timeout,omitempty"`
	// BrowserProfileID loads a profile's cookies and storage first.
	BrowserProfileID string `json:"browser_profile_id,omitempty"`
	// GenerateBrowserProfile keeps the session's browser state when it
	// closes, for a profile made from it (BrowserProfileCreateRequest's
	// BrowserSessionID).
	GenerateBrowserProfile bool `json:"generate_browser_profile,omitempty"`
}

// Create opens a browser session (POST /v1/browser_sessions).
func (s *BrowserSessionsService) Create(ctx context.Context, req *BrowserSessionCreateRequest, opts ...Option) (*BrowserSession, error) {
	if req == nil {
		req = &BrowserSessionCreateRequest{}
	}
	out := new(BrowserSession)
	_, err := s.client.do(ctx, request{method: "POST", path: "/v1/browser_sessions", body: req}, out, opts)
	return nil2(out, err)
}

// List returns the organization's browser sessions, newest first (GET
// /v1/browser_sessions).
func (s *BrowserSessionsService) List(ctx context.Context, opts ...Option) ([]*BrowserSession, error) {
	var out []*BrowserSession
	_, err := s.client.do(ctx, request{method: "GET", path: "/v1/browser_sessions", idempotent: true}, &out, opts)
	return out, err
}

// Get returns a browser session (GET /v1/browser_sessions/{id}).
func (s *BrowserSessionsService) Get(ctx context.Context, sessionID string, opts ...Option) (*BrowserSession, error) {
	if err := requireID("browser session id", sessionID); err != nil {
		return nil, err
	}
	out := new(BrowserSession)
	_, err := s.client.do(ctx, request{method: "GET", path: pathf("/v1/browser_sessions/%s", sessionID), idempotent: true}, out, opts)
	return nil2(out, err)
}

// SetGenerateProfile says whether the session keeps its browser state when
// it closes (PATCH /v1/browser_sessions/{id}).
func (s *BrowserSessionsService) SetGenerateProfile(ctx context.Context, sessionID string, generate bool, opts ...Option) (*BrowserSession, error) {
	if err := requireID("browser session id", sessionID); err != nil {
		return nil, err
	}
	out := new(BrowserSession)
	body := map[string]bool{"generate_browser_profile": generate}
	_, err := s.client.do(ctx, request{method: "PATCH", path: pathf("/v1/browser_sessions/%s", sessionID), body: body, idempotent: true}, out, opts)
	return nil2(out, err)
}

// Close closes a browser session, after the run executing in it, if any
// (POST /v1/browser_sessions/{id}/close).
func (s *BrowserSessionsService) Close(ctx context.Context, sessionID string, opts ...Option) error {
	if err := requireID("browser session id", sessionID); err != nil {
		return err
	}
	_, err := s.client.do(ctx, request{method: "POST", path: pathf("/v1/browser_sessions/%s/close", sessionID), idempotent: true}, nil, opts)
	return err
}
