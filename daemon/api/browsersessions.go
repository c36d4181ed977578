package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// Browser sessions: POST/GET /v1/browser_sessions, GET/PATCH
// /v1/browser_sessions/{id}, POST /v1/browser_sessions/{id}/close. The
// browser lives in the executor (executor.BrowserSessions); the store keeps
// the record. A session closes when asked, when its timeout passes (a
// timer here), or when the daemon stops (the next start ends its record
// as ended_by_restart).

// Session timeouts, in minutes, as the hosted service bounds them.
const (
	defaultSessionMinutes = 60
	minSessionMinutes     = 5
	maxSessionMinutes     = 240
)

// sessionTimers are the timers that close sessions at their timeout.
type sessionTimers struct {
	mu      sync.Mutex
	timers  map[string]*time.Timer
	stopped bool
}

// sessions keeps the browsers of the sessions; nil when the server has
// none (no runs, or an executor without browser sessions).
func (s sessionsAPI) sessions() executor.BrowserSessions {
	if s.exec == nil {
		return nil
	}
	return s.exec.Sessions
}

// StopSessionTimers stops the timers that close browser sessions at their
// timeout; the daemon calls it as it shuts down, before the store closes.
func (s *Server) StopSessionTimers() {
	s.timers.mu.Lock()
	defer s.timers.mu.Unlock()
	s.timers.stopped = true
	for id, t := range s.timers.timers {
		t.Stop()
		delete(s.timers.timers, id)
	}
}

func (s sessionsAPI) armTimer(orgID, id string, d time.Duration) {
	s.timers.mu.Lock()
	defer s.timers.mu.Unlock()
	if s.timers.stopped {
		return
	}
	if s.timers.timers == nil {
		s.timers.timers = map[string]*time.Timer{}
	}
	s.timers.timers[id] = time.AfterFunc(d, func() {
		bs, err := s.endSession(context.Background(), orgID, id, store.SessionTimedOut)
		if err != nil {
			s.logger.Warn("a browser session could not be closed at its timeout", "browser_session_id", id, "error", err)
			return
		}
		if bs.Status != nil && *bs.Status != store.SessionTimedOut {
			// It was ended through another daemon sharing the store,
			// which has not its browser: the browser closes here, now.
			if sessions := s.sessions(); sessions != nil {
				sessions.CloseBrowserSession(context.Background(), orgID, id, false)
			}
		}
	})
}

func (s sessionsAPI) disarmTimer(id string) {
	s.timers.mu.Lock()
	defer s.timers.mu.Unlock()
	if t := s.timers.timers[id]; t != nil {
		t.Stop()
		delete(s.timers.timers, id)
	}
}

// handleCreateSession serves POST /v1/browser_sessions.
func (s sessionsAPI) handleCreateSession(w http.ResponseWriter, r *http.Request) {
	sessions := s.sessions()
	if sessions == nil {
		s.error(w, r, errorf(KindUnavailable, "This daemon's executor keeps no browser sessions"))
		return
	}
	var body struct {
		URL                    *string  `json:"url"`
		Timeout                *int     `json:"timeout"`
		BrowserProfileID       *string  `json:"browser_profile_id"`
		GenerateBrowserProfile bool     `json:"generate_browser_profile"`
		Extensions             []string `json:"extensions"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	minutes := defaultSessionMinutes
	var errs []client.ValidationError
	if body.Timeout != nil {
		minutes = *body.Timeout
		if minutes < minSessionMinutes || minutes > maxSessionMinutes {
			errs = append(errs, valueError(fmt.Sprintf("timeout is in minutes, from %d to %d", minSessionMinutes, maxSessionMinutes), minutes, "body", "timeout"))
		}
	}
	if len(body.Extensions) > 0 {
		errs = append(errs, valueError("this daemon installs no browser extensions", nil, "body", "extensions"))
	}
	url := ""
	if body.URL != nil && strings.TrimSpace(*body.URL) != "" {
		url = normalizeURL(*body.URL)
	}
	if err := invalid(errs); err != nil {
		s.error(w, r, err)
		return
	}
	org := organization(r.Context())
	profile := deref(body.BrowserProfileID)
	var state []byte
	if profile != "" {
		if err := checkProfile(r.Context(), s.profiles, org.ID, profile); err != nil {
			s.error(w, r, err)
			return
		}
		var err error
		if state, err = s.profiles.State(r.Context(), org.ID, profile); err != nil {
			s.error(w, r, err)
			return
		}
	}
	id := s.browserSessions.NewID()
	if err := sessions.OpenBrowserSession(r.Context(), org.ID, id, executor.BrowserSessionOptions{URL: url, State: state}); err != nil {
		s.error(w, r, errorf(KindBadRequest, "The browser session could not be opened: %v", err))
		return
	}
	now := client.NewTime(s.now())
	running := store.SessionRunning
	bs := &client.BrowserSession{
		BrowserSessionID: id, Status: &running, Timeout: &minutes, StartedAt: &now,
		GenerateBrowserProfile: body.GenerateBrowserProfile,
	}
	if profile != "" {
		bs.BrowserProfileID = &profile
	}
	if err := s.browserSessions.Create(r.Context(), org.ID, bs); err != nil {
		sessions.CloseBrowserSession(context.WithoutCancel(r.Context()), org.ID, id, false)
		s.error(w, r, err)
		return
	}
	// With several daemons on one store, the session's runs are left to
	// this daemon, which has its browser.
	if err := s.exec.Runner.HoldSession(r.Context(), org.ID, id); err != nil {
		if _, cerr := s.endSession(context.WithoutCancel(r.Context()), org.ID, id, store.SessionClosed); cerr != nil {
			s.logger.Warn("close a browser session that could not be held", "browser_session_id", id, "error", cerr)
		}
		s.error(w, r, err)
		return
	}
	s.armTimer(org.ID, id, time.Duration(minutes)*s.minute)
	writeJSON(w, http.StatusOK, bs)
}

// handleListSessions serves GET /v1/browser_sessions.
func (s sessionsAPI) handleListSessions(w http.ResponseWriter, r *http.Request) {
	out, err := s.browserSessions.List(r.Context(), organization(r.Context()).ID)
	s.reply(w, r, out, err)
}

// handleUpdateSession serves PATCH /v1/browser_sessions/{id}: whether the
// session keeps its browser state when it closes.
func (s sessionsAPI) handleUpdateSession(w http.ResponseWriter, r *http.Request) {
	var body struct {
		GenerateBrowserProfile *bool `json:"generate_browser_profile"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	if body.GenerateBrowserProfile == nil {
		s.error(w, r, invalid([]client.ValidationError{missingField("body", "generate_browser_profile")}))
		return
	}
	id := r.PathValue("id")
	out, err := s.browserSessions.Update(r.Context(), organization(r.Context()).ID, id, func(bs *client.BrowserSession) error {
		if bs.Status == nil || *bs.Status != store.SessionRunning {
			return errorf(KindConflict, "Browser session %s is %s: only an open session can change", id, deref(bs.Status))
		}
		bs.GenerateBrowserProfile = *body.GenerateBrowserProfile
		return nil
	})
	s.reply(w, r, out, err)
}

// handleCloseSession serves POST /v1/browser_sessions/{id}/close.
func (s sessionsAPI) handleCloseSession(w http.ResponseWriter, r *http.Request) {
	if _, err := s.endSession(r.Context(), organization(r.Context()).ID, r.PathValue("id"), store.SessionClosed); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}

// endSession closes a session's browser (keeping its state when it was
// asked to) and records it ended with status; a session already ended is
// left as it is.
func (s sessionsAPI) endSession(ctx context.Context, orgID, id, status string) (*client.BrowserSession, error) {
	bs, err := s.browserSessions.Get(ctx, orgID, id)
	if err != nil || bs.Status == nil || *bs.Status != store.SessionRunning {
		return bs, err
	}
	s.disarmTimer(id)
	if sessions := s.sessions(); sessions != nil {
		state, err := sessions.CloseBrowserSession(ctx, orgID, id, bs.GenerateBrowserProfile)
		if err != nil {
			s.logger.Warn("the browser state of a session was not kept", "browser_session_id", id, "error", err)
		}
		if len(state) > 0 {
			if err := s.profiles.KeepSessionState(ctx, orgID, id, state); err != nil {
				return nil, err
			}
		}
	}
	return s.browserSessions.Update(ctx, orgID, id, func(bs *client.BrowserSession) error {
		if bs.Status != nil && *bs.Status != store.SessionRunning {
			return store.ErrUnchanged
		}
		now := client.NewTime(s.now())
		st := status
		bs.Status, bs.CompletedAt = &st, &now
		return nil
	})
}
