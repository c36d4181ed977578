package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
)

// The handlers of each resource are the methods of a type of its own,
// which holds only what they use: the parts of the store they read and
// write, the runner's parts (*Runs, nil on a server without runs), the
// clock. The Server builds the groups (groups) and mounts their handlers
// (routes). Every group embeds a responder, which answers errors.

// responder answers the errors of a request through the one error table
// (errors.go), logging the internal ones.
type responder struct{ logger *slog.Logger }

func (h responder) error(w http.ResponseWriter, r *http.Request, err error) {
	writeError(w, r, h.logger, err)
}

// reply answers out as 200 JSON, or err when it is not nil: the end of the
// handlers that answer what the store gives back.
func (h responder) reply(w http.ResponseWriter, r *http.Request, out any, err error) {
	if err != nil {
		h.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// runsEnabled answers 503 when the server was built without a runner
// (exec is nil: tests of the other resources); the daemon always has one.
func (h responder) runsEnabled(w http.ResponseWriter, r *http.Request, exec *Runs) bool {
	if exec == nil {
		h.error(w, r, errorf(KindUnavailable, "This daemon was started without a run executor, so it cannot start runs"))
		return false
	}
	return true
}

// getByID serves the GET of one record of the caller's organization named
// by the path's {id}: 200 with it, or the store's error (404 for an id
// the organization does not have).
func getByID[T any](h responder, get func(ctx context.Context, orgID, id string) (T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := get(r.Context(), organization(r.Context()).ID, r.PathValue("id"))
		h.reply(w, r, out, err)
	}
}

// deleteByID serves the DELETE of one record of the caller's organization
// named by the path's {id}: 204, or the store's error.
func deleteByID(h responder, del func(ctx context.Context, orgID, id string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := del(r.Context(), organization(r.Context()).ID, r.PathValue("id")); err != nil {
			h.error(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

type (
	// agentsAPI serves the agents and their runs.
	agentsAPI struct {
		responder
		agents  store.Agents
		folders store.Folders
		runs    store.Runs
		ids     *ids.Generator
		now     func() time.Time
		starter runStarter
	}
	// schedulesAPI serves the agents' schedules.
	schedulesAPI struct {
		responder
		schedules store.Schedules
		agents    store.Agents
		scheduler *schedulerRef
	}
	// runsAPI serves the runs: starting, listing, showing and canceling
	// them.
	runsAPI struct {
		responder
		runs        store.Runs
		agents      store.Agents
		credentials store.Credentials
		exec        *Runs
		starter     runStarter
	}
	// humanAPI serves the answers to human_interaction blocks.
	humanAPI struct {
		responder
		runs store.Runs
		exec *Runs
	}
	// actionsAPI serves single actions, POST /v1/sdk/run_action.
	actionsAPI struct {
		responder
		runs    store.Runs
		exec    *Runs
		starter runStarter
	}
	// credentialsAPI serves credentials and pushed TOTP codes.
	credentialsAPI struct {
		responder
		credentials store.Credentials
		ids         *ids.Generator
		now         func() time.Time
	}
	// filesAPI serves uploaded files and artifacts' content.
	filesAPI struct {
		responder
		uploads   store.Uploads
		runs      store.Runs
		exec      *Runs
		maxUpload int64
		now       func() time.Time
	}
	// profilesAPI serves browser profiles.
	profilesAPI struct {
		responder
		profiles        store.Profiles
		browserSessions store.BrowserSessions
		runs            store.Runs
		agents          store.Agents
	}
	// sessionsAPI serves browser sessions.
	sessionsAPI struct {
		responder
		browserSessions store.BrowserSessions
		profiles        store.Profiles
		exec            *Runs
		timers          *sessionTimers
		minute          time.Duration
		now             func() time.Time
	}
	// tagRegistryAPI serves the tag keys and values, and the batch reads
	// of tags (the agents' and runs' own tags are tagRoutes).
	tagRegistryAPI struct {
		responder
		tags store.Tags
	}
	// customLLMsAPI serves custom models.
	customLLMsAPI struct {
		responder
		customLLMs store.CustomLLMs
		modelCheck ModelCheck
	}
	// foldersAPI serves folders.
	foldersAPI struct {
		responder
		folders store.Folders
	}
	// scriptsAPI serves scripts and their runs.
	scriptsAPI struct {
		responder
		scripts store.Scripts
		agents  store.Agents
		starter runStarter
	}
)
