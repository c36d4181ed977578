package store

// The interfaces every backend implements (package boltstore, package
// pgstore), with exactly the methods the daemon uses. Each method's comment
// is the behaviour both backends keep; the conformance suite (package
// storetest) checks it.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor"
)

// Store is the daemon's database: the organizations and their API keys,
// and through one accessor per kind the records of the organizations. It
// is safe for concurrent use. Every organization's records are reachable
// only through its id: another organization's ids answer ErrNotFound.
type Store interface {
	// CreateOrganization creates an organization and a first API key for it,
	// which is returned once: the store keeps only its hash.
	CreateOrganization(ctx context.Context, name string) (Organization, string, error)

	// AddAPIKey registers key as an API key of the organization. Adding a key
	// the organization already has does nothing; a key of another
	// organization is ErrConflict.
	AddAPIKey(ctx context.Context, orgID, key string) error

	// Authenticate returns the organization an API key belongs to, or
	// ErrNotFound for a key the store does not know.
	Authenticate(ctx context.Context, key string) (Organization, error)

	// Organization returns one organization.
	Organization(ctx context.Context, orgID string) (Organization, error)

	// Organizations returns every organization, oldest first.
	Organizations(ctx context.Context) ([]Organization, error)

	// DefaultOrganization returns the oldest organization, the one a fresh
	// daemon creates; ErrNotFound when there is none.
	DefaultOrganization(ctx context.Context) (Organization, error)

	// OrganizationCount is how many organizations the store holds, without a
	// transaction: the egress policy asks it for every connection a run makes
	// (one organization reaches loopback and private networks, several do
	// not). Organizations are never deleted.
	OrganizationCount() int

	// SigningKey returns the API key whose SHA-256 is hash, for signing the
	// webhooks of the runs it started. ErrNotFound when the store does not know
	// the key, or keeps no sealed copy of it (the store has no secret).
	SigningKey(ctx context.Context, hash []byte) (string, error)

	// Agents returns the agents of the organizations.
	Agents() Agents

	// Folders returns the folders of the organizations.
	Folders() Folders

	// Runs returns the runs of the organizations.
	Runs() Runs

	// Tags returns the tags of agents and runs and the organizations' tag
	// registries.
	Tags() Tags

	// Credentials returns the credentials and one-time codes of the
	// organizations.
	Credentials() Credentials

	// Profiles returns the browser profiles and the browser states runs and
	// agents kept.
	Profiles() Profiles

	// BrowserSessions returns the browser sessions of the organizations.
	BrowserSessions() BrowserSessions

	// Schedules returns the agent schedules of the organizations.
	Schedules() Schedules

	// CustomLLMs returns the custom models of the organizations.
	CustomLLMs() CustomLLMs

	// Uploads returns the organizations' uploaded files.
	Uploads() Uploads

	// Scripts returns the recorded scripts of the organizations.
	Scripts() Scripts

	// Close releases the store: the embedded store closes its file and
	// releases its lock, a database store closes its connections.
	Close() error
}

// Agents keeps every version of each agent of the organizations.
type Agents interface {
	// Create creates version 1 of a new agent from def, which it stores as
	// given (def is not modified): the daemon gives the definition in the
	// response shape of the hosted service, with its parameter records, made
	// by package daemon/definition for the version's workflow_id and
	// created_at, which it sets on def. The store assigns
	// workflow_permanent_id, organization_id, version, modified_at (the
	// created_at) and agent_id, and workflow_id and created_at when def has
	// none. A missing status becomes published. folder_id is kept as given,
	// without checking that the folder exists.
	//
	// With an idempotency key the wpid is agentid.FromKey(orgID, key);
	// if version 1 of it exists, even soft-deleted, Create returns that row as
	// it is now with created false and writes nothing. The check and the
	// create run in one write transaction, so concurrent creates with the same
	// key make one agent.
	Create(ctx context.Context, orgID string, def *client.Agent, idempotencyKey string) (agent *client.Agent, created bool, err error)

	// CreateJSON is Create returning the row as the API answers it. The row
	// is built and encoded before the write transaction, which then only
	// checks the idempotency key and stores bytes: the less a write holds
	// the database, the more creates per second.
	CreateJSON(ctx context.Context, orgID string, def *client.Agent, idempotencyKey string) (json.RawMessage, bool, error)

	// Update adds a version to an agent: version latest+1 (deleted versions
	// count), the folder_id of the previous version (def.FolderID is ignored)
	// and the other fields of def, stored as given as by Create, with its
	// workflow_id and created_at when it has them. An update of a deleted agent
	// brings it back: deleted_at is cleared on all its versions. ErrNotFound if
	// the wpid never existed.
	Update(ctx context.Context, orgID, wpid string, def *client.Agent) (*client.Agent, error)

	// Get returns one version of an agent; version 0 means the latest. A
	// deleted agent, an unknown wpid or version is ErrNotFound.
	Get(ctx context.Context, orgID, wpid string, version int) (*client.Agent, error)

	// GetJSON is Get returning the row as the API answers it, its stored
	// bytes, without decoding them.
	GetJSON(ctx context.Context, orgID, wpid string, version int) (json.RawMessage, error)

	// AppendJSON is GetJSON appending the row to dst, so that a caller can
	// reuse its buffers; on error dst is returned as it was.
	AppendJSON(ctx context.Context, dst []byte, orgID, wpid string, version int) ([]byte, error)

	// Versions returns every version of an agent, oldest first; ErrNotFound
	// for an unknown or deleted agent.
	Versions(ctx context.Context, orgID, wpid string) ([]*client.Agent, error)

	// Delete soft-deletes an agent: deleted_at is set on all its versions. An
	// unknown or already deleted wpid is not an error.
	Delete(ctx context.Context, orgID, wpid string) error

	// SetFolder puts an agent in a folder ("" takes it out of any). It
	// changes the latest version row in place (no new version) and bumps its
	// modified_at. A NotFoundError for an unknown or deleted agent, or for an
	// unknown or deleted folder (Record says which).
	SetFolder(ctx context.Context, orgID, wpid, folderID string) (*client.Agent, error)

	// List returns a page of the latest versions of the organization's
	// agents that are not deleted, newest first by that version's created_at
	// (an update moves an agent to the top).
	//
	// It walks the order index from the newest entry and filters on the
	// agents' summaries, reading most of them without decoding them; only the
	// agents of the page are decoded.
	List(ctx context.Context, orgID string, q AgentQuery) ([]*client.Agent, error)

	// ListJSON is List returning the rows as the API answers them.
	ListJSON(ctx context.Context, orgID string, q AgentQuery) ([]json.RawMessage, error)
}

// Folders keeps the folders agents are filed in.
type Folders interface {
	// Create creates a folder; an empty description is stored as null.
	Create(ctx context.Context, orgID, title, description string) (*client.Folder, error)

	// Get returns a folder; ErrNotFound for an unknown or deleted one.
	Get(ctx context.Context, orgID, id string) (*client.Folder, error)

	// Update changes a folder's title and description; nil leaves a field
	// unchanged. modified_at is bumped even when nothing changes.
	Update(ctx context.Context, orgID, id string, title, description *string) (*client.Folder, error)

	// Delete soft-deletes a folder. Without deleteAgents its agents are
	// moved out of it: folder_id is cleared (and modified_at bumped) on every
	// version row that names it. With deleteAgents the agents whose latest
	// version is in the folder are soft-deleted, keeping their folder_id.
	// ErrNotFound for an unknown or already deleted folder.
	Delete(ctx context.Context, orgID, id string, deleteAgents bool) error

	// List returns a page of the organization's folders, most recently
	// modified first. search matches title or description, case-insensitively
	// and as a substring. page is 1-based (0 means 1); pageSize 0 means 100.
	List(ctx context.Context, orgID string, page, pageSize int, search string) ([]*client.Folder, error)
}

// Runs keeps each run's record, its view, its list entry, its steps and
// its block executions.
type Runs interface {
	// List returns a page of the organization's runs, newest first by
	// created_at, as GET /v1/runs answers them. task_run_id is the run id: the
	// daemon has no separate task-run rows. workflow_deleted says whether the
	// agent of a workflow run has been deleted since (or is unknown).
	//
	// It walks run_order from the newest entry, filtering on the summaries
	// without copying them; only the page's entries become list items.
	List(ctx context.Context, orgID string, q RunQuery) ([]client.RunListItem, error)

	// Records returns a page of the organization's runs as records, newest
	// first by created_at: the runs q keeps that match also keeps (nil keeps
	// every one). The summaries filter first; only the runs they keep are
	// decoded for match. GET /v1/agents/runs answers from it, with filters
	// the summaries do not hold (parameter values, error codes).
	Records(ctx context.Context, orgID string, q RunQuery, match func(*RunRecord) bool) ([]*RunRecord, error)

	// NewID returns a new id for a run of the given type: wr_ for agent runs,
	// tsk_v2_ for task v2, tsk_ for the other task engines.
	NewID(t client.RunType) string

	// NewBlockID returns a new id for a block execution of a run (wrb_).
	NewBlockID() string

	// NewStepID returns a new id for a step of a run (stp_), which the step's
	// screenshots carry.
	NewStepID() string

	// Create stores a new run. rec.ID (from NewID), OrgID, Type and Status
	// (created or queued) are the caller's; the store sets CreatedAt and
	// ModifiedAt, and QueuedAt when the status is queued.
	Create(ctx context.Context, rec *RunRecord) error

	// Get returns a run of the organization, or ErrNotFound.
	Get(ctx context.Context, orgID, id string) (*RunRecord, error)

	// Update reads a run, lets change modify it and writes it back, in one
	// write transaction: concurrent updates of a run never lose each other's
	// changes. The store stamps ModifiedAt, and QueuedAt, StartedAt and
	// FinishedAt when the status enters queued, running or a terminal state
	// and they are not set yet. A change returning an error writes nothing;
	// returning ErrUnchanged (see below) writes nothing either and returns the
	// record as read. change may be called more than once (a backend may
	// retry or group its writes): it must change nothing but rec.
	Update(ctx context.Context, orgID, id string, change func(rec *RunRecord) error) (*RunRecord, error)

	// Pending returns every run that is not terminal, or is terminal with its
	// webhook URL but no delivery recorded yet, of every organization, oldest first
	// (run ids are time-ordered snowflakes).
	Pending(ctx context.Context) ([]RunRef, error)

	// AddStep records a step of a run of the organization (step.Number from
	// 1; a step recorded again under its number replaces the first), and
	// forgets the steps MaxRunSteps or more numbers older. The store stamps its
	// CreatedAt. ErrNotFound when there is no such run.
	AddStep(ctx context.Context, orgID, runID string, step *client.RunStep) error

	// PutBlock records block execution n of a run of the organization (n from
	// 1, in the order the executions started), or replaces it when recorded
	// before (a block that ended), keeping its CreatedAt; the store stamps
	// CreatedAt on the first write and ModifiedAt on every one. The blocks
	// MaxRunBlocks or more numbers older are forgotten. ErrNotFound when there
	// is no such run.
	PutBlock(ctx context.Context, orgID, runID string, n int, block *client.RunBlock) error

	// StepsJSON returns the steps of a run of the organization as
	// GET /v1/runs/{id}/steps answers them: newest first, each an encoded
	// client.RunStep. ErrNotFound when there is no such run; a run without
	// steps has an empty (non-nil) list.
	StepsJSON(ctx context.Context, orgID, runID string) ([]json.RawMessage, error)

	// Trace returns a run's record, blocks and steps, or ErrNotFound.
	Trace(ctx context.Context, orgID, runID string) (*RunTrace, error)

	// View calls fn with the stored view of a run of the organization, inside
	// the read transaction: the bytes may be the database's own (bbolt's),
	// valid only until fn returns, and fn must not change them. ErrNotFound when there is no such run,
	// ErrNoRunView when it has no view; an error of fn is returned as it is.
	View(ctx context.Context, orgID, id string, fn func(view []byte) error) error

	// FindFile returns the run of the organization that recorded the file
	// with artifact id id, and that file's record; a NotFoundError
	// (RecordArtifact) when no run of the organization has it.
	//
	// Runs keep their files in their records and no index maps an artifact id
	// to its run, so this reads the organization's runs: the bytes of each
	// record are searched for the id first, and only a record that contains it
	// is decoded. The cost grows with the number of runs the organization
	// keeps (a few milliseconds per ten thousand); the content route that uses
	// it is not on any hot path.
	FindFile(ctx context.Context, orgID, id string) (string, RunFile, error)
}

// Tags keeps the tags of agents and runs, and the tag registry.
type Tags interface {
	// Apply changes a subject's tags atomically (see TagChange) and returns
	// its tags afterwards: labels first by value, then grouped tags by key.
	// ErrNotFound when the subject does not exist; a TooManyTagsError (which
	// matches ErrInvalid) when it would carry more than MaxTagsPerSubject tags.
	Apply(ctx context.Context, orgID string, subj TagSubject, ch TagChange) ([]client.Tag, error)

	// Get returns a subject's current tags, ordered as Apply returns them.
	Get(ctx context.Context, orgID string, subj TagSubject) ([]client.Tag, error)

	// History returns a subject's tag events, newest first (by set_at, then
	// by event id), superseded SETs included.
	History(ctx context.Context, orgID string, subj TagSubject, q TagHistoryQuery) ([]client.TagEvent, error)

	// Batch returns the current tags of many subjects of one kind. Every
	// requested id is in the result; one that does not exist in the
	// organization (or a deleted agent) has an empty list, as the hosted
	// service answers.
	Batch(ctx context.Context, orgID string, kind SubjectKind, idList []string) (map[string][]client.TagItem, error)

	// Keys returns the registered tag keys, ordered by key, each with the
	// number of agents (not deleted) carrying it.
	Keys(ctx context.Context, orgID string) ([]*client.TagKey, error)

	// UpdateKey sets a registered key's description; nil clears it.
	UpdateKey(ctx context.Context, orgID, key string, description *string) (*client.TagKey, error)

	// DeleteKey removes a key from the registry, with its values, and the tag
	// from every agent and run carrying it.
	DeleteKey(ctx context.Context, orgID, key, setBy string) (*client.TagKeyDeleteResponse, error)

	// Values returns the registered (key, value) pairs, ordered by key then
	// value, only those of key when it is not empty, each with the number of
	// agents (not deleted) carrying it.
	Values(ctx context.Context, orgID, key string) ([]*client.TagValue, error)

	// CreateValue registers a (key, value) pair, and its key when new, before
	// any subject carries it; color "" means a random palette colour. A
	// ConflictError (which matches ErrConflict) when the pair is registered
	// already.
	CreateValue(ctx context.Context, orgID, key, value string, color client.TagColor) (*client.TagValue, error)

	// RecolorValue changes the colour of a registered (key, value) pair.
	RecolorValue(ctx context.Context, orgID, key, value string, color client.TagColor) (*client.TagValue, error)

	// DeleteValue removes a (key, value) pair from the registry and the tag
	// from every agent and run carrying that value.
	DeleteValue(ctx context.Context, orgID, key, value, setBy string) (*client.TagValueDeleteResponse, error)

	// RenameValue renames (key, value) to (key, newValue): the new pair takes
	// the old one's colour and every carrier is re-tagged, with a SET event
	// each. A ConflictError when newValue is registered for the key already.
	RenameValue(ctx context.Context, orgID, key, value, newValue, setBy string) (*client.TagValueRenameResponse, error)
}

// Credentials keeps credentials and pushed one-time codes.
type Credentials interface {
	// Create stores a new credential.
	Create(ctx context.Context, orgID string, in *CredentialInput) (*client.Credential, error)

	// Update replaces a credential's name and data, keeping its id. Its type
	// may not change (ErrInvalid).
	Update(ctx context.Context, orgID, id string, in *CredentialInput) (*client.Credential, error)

	// Get returns a credential as answers show it.
	Get(ctx context.Context, orgID, id string) (*client.Credential, error)

	// Secret returns a credential's type and its unsealed data (the JSON the
	// API received), for the engine to type into a page. Nothing else may see
	// it.
	Secret(ctx context.Context, orgID, id string) (client.CredentialType, []byte, error)

	// List returns a page of credentials, newest first.
	List(ctx context.Context, orgID string, q CredentialQuery) ([]*client.Credential, error)

	// Delete deletes a credential; its sealed secret goes with it.
	Delete(ctx context.Context, orgID, id string) error

	// PutTOTPCode stores a pushed one-time code (its TOTPCodeID, Code,
	// CreatedAt and ExpiredAt set by the caller), and drops the identifier's
	// expired codes.
	PutTOTPCode(ctx context.Context, orgID string, code *client.TOTPCode) error

	// TakeTOTPCode returns the newest code pushed for identifier that f
	// admits and that has not expired, and deletes it: a code is used once. It
	// returns nil when there is none.
	TakeTOTPCode(ctx context.Context, orgID, identifier string, f executor.CodeFilter) (*client.TOTPCode, error)
}

// Profiles keeps browser profiles and the browser states runs, agents and
// browser sessions kept.
type Profiles interface {
	// Create makes a profile holding state (the JSON of a browser state; nil
	// for an empty profile). wpid names the agent whose run it came from, if
	// any.
	Create(ctx context.Context, orgID, name, description string, state []byte, wpid string) (*client.BrowserProfile, error)

	// Get returns a profile that is not deleted.
	Get(ctx context.Context, orgID, id string) (*client.BrowserProfile, error)

	// State returns a profile's browser state, unsealed (nil for an empty
	// profile), for a run to start from.
	State(ctx context.Context, orgID, id string) ([]byte, error)

	// List returns a page of profiles, newest first.
	List(ctx context.Context, orgID string, q ProfileQuery) ([]*client.BrowserProfile, error)

	// Update renames a profile or changes its description (nil: unchanged;
	// an empty description is stored as null).
	Update(ctx context.Context, orgID, id string, name, description *string) (*client.BrowserProfile, error)

	// Delete marks a profile deleted and drops its browser state.
	Delete(ctx context.Context, orgID, id string) error

	// KeepRunState stores the browser state a run ended with: as the run's
	// (for a profile made from it later) and, when wpid is given, as the state
	// the agent's next run starts from.
	KeepRunState(ctx context.Context, orgID, runID, wpid string, state []byte) error

	// KeepSessionState stores the browser state a browser session closed
	// with, for a profile made from it.
	KeepSessionState(ctx context.Context, orgID, sessionID string, state []byte) error

	// SessionState returns the browser state a browser session closed with,
	// nil when it kept none.
	SessionState(ctx context.Context, orgID, sessionID string) ([]byte, error)

	// RunState returns the browser state a run kept, nil when it kept none.
	RunState(ctx context.Context, orgID, runID string) ([]byte, error)

	// AgentState returns the browser state an agent's next run starts from,
	// nil when there is none.
	AgentState(ctx context.Context, orgID, wpid string) ([]byte, error)

	// ResetAgentState forgets the browser state of an agent, so that its next
	// run starts signed out.
	ResetAgentState(ctx context.Context, orgID, wpid string) error
}

// BrowserSessions keeps the records of browser sessions.
type BrowserSessions interface {
	// NewID returns the id of a new browser session.
	NewID() string

	// Create stores a browser session record, stamping its organization and
	// times.
	Create(ctx context.Context, orgID string, bs *client.BrowserSession) error

	// Get returns a browser session.
	Get(ctx context.Context, orgID, id string) (*client.BrowserSession, error)

	// List returns the organization's browser sessions, newest first.
	List(ctx context.Context, orgID string) ([]*client.BrowserSession, error)

	// Update changes a browser session with fn, which may return ErrUnchanged.
	Update(ctx context.Context, orgID, id string, fn func(*client.BrowserSession) error) (*client.BrowserSession, error)

	// EndOpen ends, in every organization, the sessions still running (their
	// browsers are gone: the daemon stopped), with status; it returns how
	// many.
	EndOpen(ctx context.Context, status string) (int, error)
}

// Schedules keeps agent schedules and the scheduler's marks.
type Schedules interface {
	// Create stores a new schedule of agent wpid (ErrNotFound when the agent
	// does not exist or is deleted).
	Create(ctx context.Context, orgID, wpid string, in *ScheduleInput) (*ScheduleRecord, error)

	// Get returns schedule id of agent wpid.
	Get(ctx context.Context, orgID, wpid, id string) (*ScheduleRecord, error)

	// List returns the schedules of agent wpid, oldest first.
	List(ctx context.Context, orgID, wpid string) ([]*ScheduleRecord, error)

	// ListAll returns a page of the organization's schedules, oldest first,
	// with their agents' titles, and how many match q in all. The schedules
	// of deleted agents are not listed.
	ListAll(ctx context.Context, orgID string, q ScheduleQuery) ([]ScheduleListItem, int, error)

	// Update replaces a schedule's settings. A change of its cron expression
	// or time zone, or enabling it, moves its mark to in.From: fire times
	// before the change are not caught up.
	Update(ctx context.Context, orgID, wpid, id string, in *ScheduleInput) (*ScheduleRecord, error)

	// SetEnabled enables or disables a schedule. Enabling a disabled schedule
	// moves its mark to from: the fire times while it was disabled are not
	// caught up.
	SetEnabled(ctx context.Context, orgID, wpid, id string, enabled bool, from time.Time) (*ScheduleRecord, error)

	// Delete deletes a schedule of agent wpid. The runs it started stay.
	Delete(ctx context.Context, orgID, wpid, id string) error

	// Enabled returns the enabled schedules of every organization whose agent
	// is not deleted: what the scheduler plans from.
	Enabled(ctx context.Context) ([]*ScheduleRecord, error)

	// Fire records fire time at of schedule id and, unless the schedule's
	// previous run is still going, stores run (a new queued run made as
	// Runs.Create expects it, its ScheduleID and Trigger set by the caller)
	// tagged schedule:<id>: all in one transaction, which also moves the
	// schedule's mark to now (>= at). A fire time at or before the mark
	// writes nothing (FireAlreadyHandled): a fire time starts at most one run
	// whatever crashes and retries happen around it. missed, the fire times a
	// catch-up stepped over to reach at, is counted on the schedule in the
	// same transaction. A schedule whose agent is deleted answers ErrNotFound
	// and writes nothing.
	Fire(ctx context.Context, orgID, id string, at, now time.Time, missed Missed, run *RunRecord) (FireOutcome, error)

	// Miss records that fire time at of schedule id started no run, and why
	// (reason, for people), moving the schedule's mark to now and counting
	// missed as Fire does; FireAlreadyHandled when at was handled already.
	Miss(ctx context.Context, orgID, id string, at, now time.Time, missed Missed, reason string) (FireOutcome, error)
}

// CustomLLMs keeps the organizations' model endpoints.
type CustomLLMs interface {
	// NewID returns an id for a custom model not yet stored.
	NewID() string

	// Create stores a new custom model under id (from NewID).
	Create(ctx context.Context, orgID, id string, in *CustomLLMInput) (*client.CustomLLM, error)

	// Update replaces a custom model's configuration, keeping its id, and
	// its key unless in.Key says otherwise.
	Update(ctx context.Context, orgID, id string, in *CustomLLMInput) (*client.CustomLLM, error)

	// Get returns a custom model as answers show it.
	Get(ctx context.Context, orgID, id string) (*client.CustomLLM, error)

	// List returns the organization's custom models, newest first. An
	// organization has few (they are configured by hand), so there are no
	// pages.
	List(ctx context.Context, orgID string) ([]*client.CustomLLM, error)

	// Delete deletes a custom model; its sealed key goes with it.
	Delete(ctx context.Context, orgID, id string) error

	// Model returns one custom model with its key unsealed, for the check of
	// an update that keeps the stored key. Nothing may show or log the key.
	Model(ctx context.Context, orgID, id string) (executor.CustomModel, error)

	// Models returns the organization's custom models with their keys
	// unsealed, newest first, for its runs. Nothing may show or log the keys.
	Models(ctx context.Context, orgID string) ([]executor.CustomModel, error)
}

// Uploads keeps the records of uploaded files.
type Uploads interface {
	// NewDir returns the id of a new upload directory (upl_<snowflake>).
	NewDir() string

	// Create stores the record of an uploaded file, whose bytes the caller has
	// already written, stamping its CreatedAt when unset.
	Create(ctx context.Context, orgID string, up *Upload) error

	// Get returns the record of an uploaded file by its artifact id.
	Get(ctx context.Context, orgID, id string) (*Upload, error)
}

// Scripts keeps the scripts recorded for agents and their versions.
type Scripts interface {
	// Create stores a new script, version 1. When in names an agent, the agent
	// must be the organization's and not deleted (ErrNotFound otherwise), and
	// the script becomes the one of the agent's cache key in.CacheKey,
	// replacing any earlier script of that pair for the runs to come (the
	// earlier one stays, and can still be read and run by id).
	Create(ctx context.Context, orgID string, in ScriptInput) (*ScriptRevision, error)

	// Deploy stores content as a new version of a script (its latest + 1),
	// even when it equals the latest: a deploy is a deliberate act, and its
	// version number is what the caller is told.
	Deploy(ctx context.Context, orgID, scriptID string, content []byte, runID string) (*ScriptRevision, error)

	// Record is what a run that recorded a script stores, in one transaction:
	// a new version of the script of agent wpid's cache key cacheKey ("":
	// DefaultCacheKey), creating the script when there is none, unless content
	// equals that script's latest version: then Record answers that version
	// with created false and writes nothing. The agent must be the
	// organization's and not deleted (ErrNotFound otherwise).
	Record(ctx context.Context, orgID, wpid, cacheKey, runID string, content []byte) (rev *ScriptRevision, created bool, err error)

	// Get returns the latest version of a script.
	Get(ctx context.Context, orgID, scriptID string) (*ScriptRevision, error)

	// Version returns one version of a script; 0 means the latest. An unknown
	// version is a NotFoundError that names it.
	Version(ctx context.Context, orgID, scriptID string, version int) (*ScriptRevision, error)

	// ForAgent returns the latest version of the script of agent wpid's cache
	// key cacheKey ("": DefaultCacheKey): the one a run with run_with "code"
	// replays. ErrNotFound when there is none.
	ForAgent(ctx context.Context, orgID, wpid, cacheKey string) (*ScriptRevision, error)

	// List returns one page (from 1) of the organization's scripts, the
	// latest version of each, most recently changed first; wpid, when not "",
	// keeps the scripts of that agent.
	List(ctx context.Context, orgID string, page, pageSize int, wpid string) ([]*ScriptRevision, error)
}
