package client

import (
	"context"
	"encoding/base64"
	"errors"
	"iter"
	"net/url"
	"strconv"
)

// ScriptsService manages scripts (/v1/scripts): the recorded run of an
// agent, block by block, that later runs replay without calling a model.
//
// The abctl daemon's scripts are its own format, one YAML file named
// script.yaml (package script; docs/scripts.md). A run with RunWith
// "code" records one, or replays the latest version of its agent's
// script; every change is a new version. The hosted service's scripts are
// Python programs, which the daemon refuses with a 422 that says so.
type ScriptsService service

// ScriptFileName is the name of an abctl script's only file.
const ScriptFileName = "script.yaml"

// FileEncoding says how a ScriptFile's Content is written.
type FileEncoding string

// The encodings of script files.
const (
	FileEncodingBase64 FileEncoding = "base64" // the default
	FileEncodingUTF8   FileEncoding = "utf-8"
)

// ScriptFile is a file of a script being created or deployed (upstream
// ScriptFileCreate).
type ScriptFile struct {
	// Path is the file's path in the script: ScriptFileName for the
	// daemon's scripts.
	Path string `json:"path"`
	// Content is the file, base64-encoded unless Encoding says utf-8.
	Content  string       `json:"content"`
	Encoding FileEncoding `json:"encoding,omitempty"`
	MimeType *string      `json:"mime_type,omitempty"`
}

// ScriptFileFromBytes is the file b at path, base64-encoded, as requests
// carry it.
func ScriptFileFromBytes(path string, b []byte) ScriptFile {
	return ScriptFile{Path: path, Content: base64.StdEncoding.EncodeToString(b), Encoding: FileEncodingBase64}
}

// CreateScriptRequest creates a script (upstream CreateScriptRequest).
type CreateScriptRequest struct {
	// WorkflowID is the agent the script belongs to: its permanent id
	// (wpid_) or the id of one of its versions. The script becomes the
	// one that the agent's runs with run_with "code" and the cache key
	// the file names replay.
	WorkflowID string `json:"workflow_id,omitempty"`
	// RunID is the run the script was recorded from, if any.
	RunID string       `json:"run_id,omitempty"`
	Files []ScriptFile `json:"files,omitempty"`
}

// DeployScriptRequest makes the files a new version of a script
// (upstream DeployScriptRequest).
type DeployScriptRequest struct {
	Files []ScriptFile `json:"files"`
}

// FileNode is a file or a directory of a script's file tree (upstream
// FileNode).
type FileNode struct {
	Type        string  `json:"type"` // "file" or "directory"
	Size        *int64  `json:"size"`
	MimeType    *string `json:"mime_type"`
	ContentHash *string `json:"content_hash"` // SHA-256 of the content, hex
	CreatedAt   Time    `json:"created_at"`
	// Children are a directory's entries, by name; nil for a file.
	Children map[string]FileNode `json:"children"`
}

// CreateScriptResponse is the version a create or a deploy made (upstream
// CreateScriptResponse).
type CreateScriptResponse struct {
	ScriptID  string              `json:"script_id"`
	Version   int                 `json:"version"`
	RunID     *string             `json:"run_id"`
	FileCount int                 `json:"file_count"`
	FileTree  map[string]FileNode `json:"file_tree"`
	CreatedAt Time                `json:"created_at"`
}

// ScriptBlockSummary says how one block of a script runs: replayed from
// its recorded steps, or by the model, and why.
type ScriptBlockSummary struct {
	Label string `json:"label"`
	// Mode is "replay" or "model".
	Mode   string `json:"mode"`
	Reason string `json:"reason,omitempty"`
	// Steps counts the recorded actions; Fields the extracted fields read
	// from the page.
	Steps  int `json:"steps"`
	Fields int `json:"fields,omitempty"`
}

// Script is one version of a script (upstream Script).
type Script struct {
	ScriptRevisionID string `json:"script_revision_id"`
	ScriptID         string `json:"script_id"`
	OrganizationID   string `json:"organization_id"`
	// RunID is the run this version was recorded from.
	RunID      *string `json:"run_id"`
	Version    int     `json:"version"`
	CreatedAt  Time    `json:"created_at"`
	ModifiedAt Time    `json:"modified_at"`
	DeletedAt  *Time   `json:"deleted_at"`

	// The daemon's own fields (absent from the hosted service's answers):
	// the agent (workflow_permanent_id) and its cache key value the script
	// is for, the SHA-256 of its file, and, block by block, which replay
	// and which call the model.
	WorkflowID  string               `json:"workflow_id,omitempty"`
	CacheKey    string               `json:"cache_key,omitempty"`
	ContentHash string               `json:"content_hash,omitempty"`
	Blocks      []ScriptBlockSummary `json:"blocks,omitempty"`
}

// RunScriptRequest starts a run of a script's agent that replays the
// script.
type RunScriptRequest struct {
	// Parameters are the run's parameter values, checked against the
	// agent's as StartAgent's are; nil runs with the defaults.
	Parameters map[string]any `json:"parameters,omitempty"`
}

// ListScriptsOptions page and filter the script list.
type ListScriptsOptions struct {
	Page     int // from 1; 0 means 1
	PageSize int // 0 means the server default (10)
	// AgentID keeps the scripts of one agent (a daemon filter, sent as
	// workflow_id).
	AgentID string
}

func (o *ListScriptsOptions) query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	setInt(q, "page", o.Page)
	setInt(q, "page_size", o.PageSize)
	setString(q, "workflow_id", o.AgentID)
	return q
}

// Create creates a script, version 1 (POST /v1/scripts).
func (s *ScriptsService) Create(ctx context.Context, req *CreateScriptRequest, opts ...Option) (*CreateScriptResponse, error) {
	if req == nil {
		return nil, errors.New("client: Scripts.Create: nil request")
	}
	out := new(CreateScriptResponse)
	_, err := s.client.do(ctx, request{method: "POST", path: "/v1/scripts", body: req}, out, opts)
	return nil2(out, err)
}

// List returns one page of the organization's scripts, the latest version
// of each, most recently changed first (GET /v1/scripts); o may be nil.
// Use All to walk every page.
func (s *ScriptsService) List(ctx context.Context, o *ListScriptsOptions, opts ...Option) ([]*Script, error) {
	var out []*Script
	_, err := s.client.do(ctx, request{method: "GET", path: "/v1/scripts", query: o.query(), idempotent: true}, &out, opts)
	return out, err
}

// All returns an iterator over every script matching o, fetching pages as
// it goes. o is copied, never modified.
func (s *ScriptsService) All(ctx context.Context, o *ListScriptsOptions, opts ...Option) iter.Seq2[*Script, error] {
	return paginate(o, func(o *ListScriptsOptions) ([]*Script, error) { return s.List(ctx, o, opts...) })
}

func (o *ListScriptsOptions) pageFields() (page, pageSize *int) { return &o.Page, &o.PageSize }

// Get returns the latest version of a script (GET /v1/scripts/{id}).
func (s *ScriptsService) Get(ctx context.Context, scriptID string, opts ...Option) (*Script, error) {
	if err := requireID("script id", scriptID); err != nil {
		return nil, err
	}
	out := new(Script)
	_, err := s.client.do(ctx, request{method: "GET", path: pathf("/v1/scripts/%s", scriptID), idempotent: true}, out, opts)
	return nil2(out, err)
}

// Deploy makes req's files a new version of a script (POST
// /v1/scripts/{id}/deploy), even when they equal the latest.
func (s *ScriptsService) Deploy(ctx context.Context, scriptID string, req *DeployScriptRequest, opts ...Option) (*CreateScriptResponse, error) {
	if err := requireID("script id", scriptID); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, errors.New("client: Scripts.Deploy: nil request")
	}
	out := new(CreateScriptResponse)
	_, err := s.client.do(ctx, request{method: "POST", path: pathf("/v1/scripts/%s/deploy", scriptID), body: req}, out, opts)
	return nil2(out, err)
}

// Run starts a run of the script's agent that replays the script's latest
// version (POST /v1/scripts/{id}/run), and returns at once with the run in
// its first status, as StartAgent does; req may be nil. A script of no
// agent cannot run (422). Retries follow the rule of StartAgent.
func (s *ScriptsService) Run(ctx context.Context, scriptID string, req *RunScriptRequest, opts ...Option) (*Run, error) {
	if err := requireID("script id", scriptID); err != nil {
		return nil, err
	}
	r := request{method: "POST", path: pathf("/v1/scripts/%s/run", scriptID)}
	if req != nil {
		r.body = req
	}
	out := new(Run)
	_, err := s.client.do(ctx, r, out, opts)
	return nil2(out, err)
}

// File returns the file script.yaml of a version of a script; version 0
// means the latest (GET /v1/scripts/{id}/files/script.yaml, a daemon
// route).
func (s *ScriptsService) File(ctx context.Context, scriptID string, version int, opts ...Option) ([]byte, error) {
	if err := requireID("script id", scriptID); err != nil {
		return nil, err
	}
	if version < 0 {
		return nil, errors.New("client: Scripts.File: the version must be 1 or more, or 0 for the latest")
	}
	cfg, err := s.client.callConfig(opts)
	if err != nil {
		return nil, err
	}
	req := request{method: "GET", path: pathf("/v1/scripts/%s/files/"+ScriptFileName, scriptID), idempotent: true}
	target := cfg.baseURL.String() + req.path
	if version > 0 {
		target += "?" + url.Values{"version": {strconv.Itoa(version)}}.Encode()
	}
	resp, body, _, err := s.client.attempt(ctx, cfg, req, target, nil, 0)
	if cfg.responseInto != nil && resp != nil {
		*cfg.responseInto = resp
	}
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, newError(resp, body, cfg.now())
	}
	return body, nil
}
