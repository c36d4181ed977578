package api

import (
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
)

// Scripts: POST/GET /v1/scripts, GET /v1/scripts/{script_id}, POST
// …/deploy and …/run, and the daemon's GET …/files/script.yaml. A script is
// abctl's own format (package script), one file, script.yaml, stored with
// a version per change (store.Scripts); the hosted service's Python
// scripts are refused with a 422 that says why.

// scriptMIMEType is the media type of script.yaml.
const scriptMIMEType = "application/yaml"

// runWithCode is the run_with of runs that replay their agent's script;
// runWithValues are the values run_with takes (upstream examples).
const runWithCode = "code"

var runWithValues = []string{"agent", runWithCode}

// fileEncodings are the encodings a script file's content may be sent in
// (upstream FileEncoding).
var fileEncodings = []string{string(client.FileEncodingBase64), string(client.FileEncodingUTF8)}

// scriptFileBody is one file of a create or a deploy (upstream
// ScriptFileCreate), with pointers to tell a missing field. MimeType is
// accepted and ignored: the one file is YAML.
type scriptFileBody struct {
	Path     *string `json:"path"`
	Content  *string `json:"content"`
	Encoding *string `json:"encoding"`
	MimeType *string `json:"mime_type"`
}

// scriptFiles decodes and checks the files of a create or a deploy, and
// parses them as a script. Every problem of the files' fields is reported
// at once; what package script refuses (a Python file, a YAML error) is
// reported at the file it is about.
func scriptFiles(files []scriptFileBody) (*script.Script, []byte, error) {
	var errs []client.ValidationError
	parsed := make([]script.File, 0, len(files))
	for i, f := range files {
		if f.Path == nil {
			errs = append(errs, missingField("body", "files", i, "path"))
		}
		if f.Content == nil {
			errs = append(errs, missingField("body", "files", i, "content"))
		}
		enc := string(client.FileEncodingBase64)
		if f.Encoding != nil {
			enc = *f.Encoding
		}
		if !contains(fileEncodings, enc) {
			errs = append(errs, enumError(fileEncodings, enc, "body", "files", i, "encoding"))
			continue
		}
		if f.Path == nil || f.Content == nil {
			continue
		}
		// One copy of the content, in the form it is kept: a script can
		// be several MB.
		var content []byte
		if enc == string(client.FileEncodingBase64) {
			b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(*f.Content))
			if err != nil {
				errs = append(errs, valueError("the content is not valid base64 (send encoding \"utf-8\" for plain text): "+err.Error(), nil, "body", "files", i, "content"))
				continue
			}
			content = b
		} else {
			content = []byte(*f.Content)
		}
		parsed = append(parsed, script.File{Path: *f.Path, Content: content})
	}
	if err := invalid(errs); err != nil {
		return nil, nil, err
	}
	s, err := script.ParseFiles(parsed)
	if err != nil {
		return nil, nil, invalid([]client.ValidationError{valueError(err.Error(), nil, scriptFileLoc(parsed)...)})
	}
	for _, f := range parsed {
		if strings.TrimPrefix(strings.TrimSpace(f.Path), "./") == script.FileName {
			return s, f.Content, nil
		}
	}
	return nil, nil, errors.New("api: script.ParseFiles accepted files without " + script.FileName)
}

// scriptFileLoc is where a refusal of script.ParseFiles is reported: at
// the first Python file, else at the first file that is not script.yaml
// (when script.yaml is among others), else at script.yaml (its content),
// else at the list.
func scriptFileLoc(files []script.File) []any {
	name := func(f script.File) string { return strings.TrimPrefix(strings.TrimSpace(f.Path), "./") }
	yamlAt, otherAt := -1, -1
	for i, f := range files {
		switch n := name(f); {
		case strings.HasSuffix(strings.ToLower(n), ".py"):
			return []any{"body", "files", i}
		case n == script.FileName:
			if yamlAt < 0 {
				yamlAt = i
			}
		default:
			if otherAt < 0 {
				otherAt = i
			}
		}
	}
	switch {
	case yamlAt >= 0 && otherAt >= 0:
		return []any{"body", "files", otherAt}
	case yamlAt >= 0:
		return []any{"body", "files", yamlAt}
	case otherAt >= 0:
		return []any{"body", "files", otherAt}
	}
	return []any{"body", "files"}
}

// scriptFileIndex is the index of script.yaml among the files, for the
// location of errors about its content.
func scriptFileIndex(files []scriptFileBody) int {
	for i, f := range files {
		if f.Path != nil && strings.TrimPrefix(strings.TrimSpace(*f.Path), "./") == script.FileName {
			return i
		}
	}
	return 0
}

// scriptError words the store's not-found errors of scripts as the other
// records' are worded; the rest passes through.
func scriptError(err error) error {
	var nf *store.NotFoundError
	if errors.As(err, &nf) && nf.Record == store.RecordScript {
		if nf.Version != 0 {
			return errorf(KindNotFound, "Script %s has no version %d", nf.ID, nf.Version)
		}
		return errorf(KindNotFound, "Script %s not found", nf.ID)
	}
	return err
}

// scriptCreated is the answer to a create or a deploy (upstream
// CreateScriptResponse): the version made, and its one file.
func scriptCreated(rev *store.ScriptRevision) client.CreateScriptResponse {
	size := int64(len(rev.Content))
	out := client.CreateScriptResponse{
		ScriptID: rev.ScriptID, Version: rev.Version, FileCount: 1, CreatedAt: rev.CreatedAt,
		FileTree: map[string]client.FileNode{script.FileName: {
			Type: "file", Size: &size, MimeType: client.Ptr(scriptMIMEType),
			ContentHash: client.Ptr(rev.SHA256), CreatedAt: rev.CreatedAt,
		}},
	}
	if rev.RunID != "" {
		out.RunID = client.Ptr(rev.RunID)
	}
	return out
}

// scriptResult is a version of a script as answers show it (upstream
// Script, with the daemon's fields: the agent, the cache key, the file's
// digest and the blocks' summary). A file that no longer parses (written
// by a newer abctl) is answered without the summary.
func scriptResult(rev *store.ScriptRevision) *client.Script {
	out := &client.Script{
		ScriptRevisionID: rev.RevisionID, ScriptID: rev.ScriptID, OrganizationID: rev.OrgID,
		Version: rev.Version, CreatedAt: rev.CreatedAt, ModifiedAt: rev.ModifiedAt,
		WorkflowID: rev.WorkflowPermanentID, CacheKey: rev.CacheKey, ContentHash: rev.SHA256,
	}
	if rev.RunID != "" {
		out.RunID = client.Ptr(rev.RunID)
	}
	if s, err := script.Parse(rev.Content); err == nil {
		out.Blocks = []client.ScriptBlockSummary{}
		for _, b := range s.Summary() {
			out.Blocks = append(out.Blocks, client.ScriptBlockSummary{Label: b.Label, Mode: b.Mode, Reason: b.Reason, Steps: b.Steps, Fields: b.Fields})
		}
	}
	return out
}

// handleCreateScript serves POST /v1/scripts: a new script, version 1,
// of the agent workflow_id names (else of the agent its file names, if
// any), for the cache key its file names ("default" when none). It
// becomes the script that the agent's runs with run_with "code" and that
// cache key replay and record into.
func (s scriptsAPI) handleCreateScript(w http.ResponseWriter, r *http.Request) {
	var body struct {
		WorkflowID *string           `json:"workflow_id"`
		RunID      *string           `json:"run_id"`
		Files      *[]scriptFileBody `json:"files"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	var files []scriptFileBody
	if body.Files != nil {
		files = *body.Files
	}
	parsed, content, err := scriptFiles(files)
	if err != nil {
		s.error(w, r, err)
		return
	}
	in := store.ScriptInput{WorkflowPermanentID: parsed.Agent, CacheKey: parsed.CacheKey, Content: content}
	if body.WorkflowID != nil && *body.WorkflowID != "" {
		in.WorkflowPermanentID = *body.WorkflowID
		// A file that names its agent must name this one (a version id
		// is resolved by the store, and not compared).
		if parsed.Agent != "" && parsed.Agent != in.WorkflowPermanentID && !strings.HasPrefix(in.WorkflowPermanentID, ids.PrefixAgentVersion+"_") {
			s.error(w, r, invalid([]client.ValidationError{valueError(fmt.Sprintf(
				"the script was recorded for agent %s, not for workflow_id %s", parsed.Agent, in.WorkflowPermanentID),
				nil, "body", "files", scriptFileIndex(files))}))
			return
		}
	}
	if body.RunID != nil {
		in.RunID = *body.RunID
	}
	rev, err := s.scripts.Create(r.Context(), organization(r.Context()).ID, in)
	if err != nil {
		s.error(w, r, scriptError(err))
		return
	}
	writeJSON(w, http.StatusOK, scriptCreated(rev))
}

// handleListScripts serves GET /v1/scripts; workflow_id, a daemon filter,
// keeps one agent's scripts.
func (s scriptsAPI) handleListScripts(w http.ResponseWriter, r *http.Request) {
	qr := newQueryReader(r)
	page, size := qr.paging(10, 0, 0)
	wpid := strings.TrimSpace(qr.string("workflow_id"))
	if err := qr.err(); err != nil {
		s.error(w, r, err)
		return
	}
	revs, err := s.scripts.List(r.Context(), organization(r.Context()).ID, page, size, wpid)
	if err != nil {
		s.error(w, r, err)
		return
	}
	out := make([]*client.Script, 0, len(revs))
	for _, rev := range revs {
		out = append(out, scriptResult(rev))
	}
	writeJSON(w, http.StatusOK, out)
}

// handleGetScript serves GET /v1/scripts/{script_id}: its latest version.
func (s scriptsAPI) handleGetScript(w http.ResponseWriter, r *http.Request) {
	rev, err := s.scripts.Get(r.Context(), organization(r.Context()).ID, r.PathValue("script_id"))
	if err != nil {
		s.error(w, r, scriptError(err))
		return
	}
	writeJSON(w, http.StatusOK, scriptResult(rev))
}

// handleDeployScript serves POST /v1/scripts/{script_id}/deploy: the
// files become a new version, even when they equal the latest. The file
// must be for the script's agent and cache key, which a version does not
// change.
func (s scriptsAPI) handleDeployScript(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Files *[]scriptFileBody `json:"files"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	if body.Files == nil {
		s.error(w, r, invalid([]client.ValidationError{missingField("body", "files")}))
		return
	}
	parsed, content, err := scriptFiles(*body.Files)
	if err != nil {
		s.error(w, r, err)
		return
	}
	org, id := organization(r.Context()).ID, r.PathValue("script_id")
	cur, err := s.scripts.Get(r.Context(), org, id)
	if err != nil {
		s.error(w, r, scriptError(err))
		return
	}
	var errs []client.ValidationError
	at := []any{"body", "files", scriptFileIndex(*body.Files)}
	if parsed.Agent != "" && parsed.Agent != cur.WorkflowPermanentID {
		errs = append(errs, valueError(fmt.Sprintf("the file is for agent %s, but script %s is %s; create a new script for another agent",
			parsed.Agent, id, agentOrNone(cur.WorkflowPermanentID)), nil, at...))
	}
	if key := cmp.Or(parsed.CacheKey, store.DefaultCacheKey); key != cur.CacheKey {
		errs = append(errs, valueError(fmt.Sprintf("the file is for cache key %q, but script %s is for cache key %q; create a new script for another cache key",
			key, id, cur.CacheKey), nil, at...))
	}
	if err := invalid(errs); err != nil {
		s.error(w, r, err)
		return
	}
	rev, err := s.scripts.Deploy(r.Context(), org, id, content, "")
	if err != nil {
		s.error(w, r, scriptError(err))
		return
	}
	writeJSON(w, http.StatusOK, scriptCreated(rev))
}

func agentOrNone(wpid string) string {
	if wpid == "" {
		return "of no agent"
	}
	return "agent " + wpid + "'s"
}

// handleRunScript serves POST /v1/scripts/{script_id}/run: a run of the
// script's agent with run_with "code", pinned to this script, made as POST
// /v1/run/agents makes runs (agentRunRecord, startRun) and answered as it
// answers. The optional body gives the parameters: {"parameters": {...}}.
func (s scriptsAPI) handleRunScript(w http.ResponseWriter, r *http.Request) {
	if !s.starter.enabled(w, r) {
		return
	}
	var body struct {
		Parameters map[string]any `json:"parameters"`
	}
	raw, err := readBody(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if len(strings.TrimSpace(string(raw))) > 0 {
		if mt := mediaType(r); !isJSONMediaType(mt) {
			s.error(w, r, invalid([]client.ValidationError{fieldError("model_attributes_type",
				"Input should be a JSON object sent with Content-Type: application/json", nil, "body")}))
			return
		}
		if err := decodeJSON(raw, &body); err != nil {
			s.error(w, r, err)
			return
		}
	}
	org, id := organization(r.Context()).ID, r.PathValue("script_id")
	rev, err := s.scripts.Get(r.Context(), org, id)
	if err != nil {
		s.error(w, r, scriptError(err))
		return
	}
	if rev.WorkflowPermanentID == "" {
		s.error(w, r, invalid([]client.ValidationError{valueError(fmt.Sprintf(
			"script %s belongs to no agent, so it cannot run: create it with a workflow_id", id), id, "path", "script_id")}))
		return
	}
	agent, err := s.agents.Get(r.Context(), org, rev.WorkflowPermanentID, 0)
	if err != nil {
		s.error(w, r, err)
		return
	}
	params, err := resolveParameters(agent, body.Parameters)
	if err != nil {
		s.error(w, r, err)
		return
	}
	req := &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: body.Parameters, RunWith: runWithCode}
	rec := s.starter.agentRunRecord(org, agent, req, params)
	rec.ScriptID = rev.ScriptID
	s.starter.start(w, r, rec)
}

// handleScriptFile serves GET /v1/scripts/{script_id}/files/{path...} (a
// daemon route): the file of the latest version, or of ?version=N.
func (s scriptsAPI) handleScriptFile(w http.ResponseWriter, r *http.Request) {
	qr := newQueryReader(r)
	version := qr.int("version", 0, 1, 0)
	if err := qr.err(); err != nil {
		s.error(w, r, err)
		return
	}
	id := r.PathValue("script_id")
	rev, err := s.scripts.Version(r.Context(), organization(r.Context()).ID, id, version)
	if err != nil {
		s.error(w, r, scriptError(err))
		return
	}
	if path := r.PathValue("path"); path != script.FileName {
		s.error(w, r, errorf(KindNotFound, "Script %s has no file %s; its only file is %s", id, path, script.FileName))
		return
	}
	h := w.Header()
	h.Set("Content-Type", scriptMIMEType)
	h.Set("Content-Length", strconv.Itoa(len(rev.Content)))
	h.Set("X-Script-Version", strconv.Itoa(rev.Version))
	w.WriteHeader(http.StatusOK)
	w.Write(rev.Content)
}
