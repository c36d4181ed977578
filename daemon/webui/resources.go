package webui

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/abctl/abctl/client"
)

// resourceRoutes adds the read-only pages: schedules, credentials, browser
// sessions and profiles, scripts and the browser fleet.
func (s *Server) resourceRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+Prefix+"schedules", s.signedIn(s.handleSchedules))
	mux.HandleFunc("GET "+Prefix+"credentials", s.signedIn(s.handleCredentials))
	mux.HandleFunc("GET "+Prefix+"browser-sessions", s.signedIn(s.handleBrowserSessions))
	mux.HandleFunc("GET "+Prefix+"browser-profiles", s.signedIn(s.handleBrowserProfiles))
	mux.HandleFunc("GET "+Prefix+"scripts", s.signedIn(s.handleScripts))
	mux.HandleFunc("GET "+Prefix+"scripts/{id}", s.signedIn(s.handleScript))
	mux.HandleFunc("GET "+Prefix+"fleet", s.signedIn(s.handleFleet))
}

// listPageSize is the number of rows on a page of the lists below; the
// API serves up to 100 for schedules and more for the others.
const listPageSize = 50

// pager is a list's place: its page, and the URLs of the pages around it.
type pager struct {
	Page int
	Prev string // "" on the first page
	Next string // "" when this page was not full
}

// pageParam reads the page a list asks for, 1 when absent or wrong.
func pageParam(r *http.Request) int {
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	return max(n, 1)
}

// pagerOf is the pager of page of the list at path, which got n rows.
func pagerOf(path string, page, n int) pager {
	p := pager{Page: page}
	if page > 1 {
		p.Prev = Prefix + path + "?page=" + strconv.Itoa(page-1)
	}
	if n == listPageSize {
		p.Next = Prefix + path + "?page=" + strconv.Itoa(page+1)
	}
	return p
}

// inZone shows t in the IANA zone tz (a schedule's), with the zone's
// abbreviation; "—" for none, and the daemon's local time when the zone
// is unknown here.
func inZone(t *client.Time, tz string) string {
	if t == nil || t.IsZero() {
		return "—"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return when(t)
	}
	return t.Time.In(loc).Format("2006-01-02 15:04 MST")
}

// scheduleRow is one schedule in the list.
type scheduleRow struct {
	ID, Name, AgentID, AgentTitle string
	Cron, Timezone                string
	Enabled                       bool
	NextRun                       string // in the schedule's zone; "" when it will not fire
	LastRunID                     string
	LastFire                      string
	LastError                     string
}

// schedulesData is the schedules page's.
type schedulesData struct {
	Schedules []scheduleRow
	Total     int
	Pager     pager
}

// handleSchedules lists the organization's schedules, of every agent, as
// GET /v1/schedules answers them. Their next fire times are the API's
// (next_run), which the daemon computes from the cron expression and the
// time zone with its scheduler's own functions (scheduler.Parse and
// Spec.NextN), so the page shows the time the scheduler will fire.
func (s *Server) handleSchedules(w http.ResponseWriter, r *http.Request, sess *session) {
	c, err := s.client(r, sess)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	page := pageParam(r)
	list, err := c.Schedules.ListAll(r.Context(), &client.ListSchedulesOptions{Page: page, PageSize: listPageSize})
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	d := schedulesData{Total: list.TotalCount, Pager: pagerOf("schedules", page, len(list.Schedules))}
	for _, sc := range list.Schedules {
		row := scheduleRow{
			ID: sc.WorkflowScheduleID, AgentID: sc.WorkflowPermanentID, AgentTitle: sc.WorkflowTitle,
			Cron: sc.CronExpression, Timezone: sc.Timezone, Enabled: sc.Enabled,
		}
		if sc.Name != nil {
			row.Name = *sc.Name
		}
		if sc.NextRun != nil {
			row.NextRun = inZone(sc.NextRun, sc.Timezone)
		}
		if sc.LastRunID != nil {
			row.LastRunID = *sc.LastRunID
		}
		if sc.LastFireTime != nil {
			row.LastFire = inZone(sc.LastFireTime, sc.Timezone)
		}
		if sc.LastError != nil {
			row.LastError = *sc.LastError
		}
		d.Schedules = append(d.Schedules, row)
	}
	if d.Pager.Next != "" && page*listPageSize >= list.TotalCount {
		d.Pager.Next = ""
	}
	s.render(w, r, http.StatusOK, "schedules", view{Title: "Schedules", Nav: "schedules", CSRF: sess.csrf, Data: d})
}

// credentialRow is one credential in the list: what the API answers of
// it, which is never its secret (a password, a TOTP secret, a card's
// number or code, a secret's value).
type credentialRow struct {
	ID, Name, Type string
	Detail         string // the username, the card's brand and last four digits, or the secret's label
	SecondFactor   string // a password credential's second factor, "" for none
}

// credentialsData is the credentials page's.
type credentialsData struct {
	Credentials []credentialRow
	Pager       pager
}

// handleCredentials lists the organization's credentials: names, types and
// what GET /v1/credentials shows of them, which holds no secret.
func (s *Server) handleCredentials(w http.ResponseWriter, r *http.Request, sess *session) {
	c, err := s.client(r, sess)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	page := pageParam(r)
	creds, err := c.Credentials.List(r.Context(), &client.ListCredentialsOptions{Page: page, PageSize: listPageSize})
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	d := credentialsData{Pager: pagerOf("credentials", page, len(creds))}
	for _, cr := range creds {
		row := credentialRow{ID: cr.CredentialID, Name: cr.Name, Type: string(cr.CredentialType)}
		info := cr.Credential
		switch cr.CredentialType {
		case client.CredentialTypePassword:
			row.Detail = info.Username
			if info.TOTPType != "" && info.TOTPType != client.TOTPTypeNone {
				row.SecondFactor = string(info.TOTPType)
				if info.TOTPIdentifier != nil && *info.TOTPIdentifier != "" {
					row.SecondFactor += " (" + *info.TOTPIdentifier + ")"
				}
			}
		case client.CredentialTypeCreditCard:
			row.Detail = fmt.Sprintf("%s card ending in %s", info.Brand, info.LastFour)
		case client.CredentialTypeSecret:
			if info.SecretLabel != nil {
				row.Detail = *info.SecretLabel
			}
		}
		d.Credentials = append(d.Credentials, row)
	}
	s.render(w, r, http.StatusOK, "credentials", view{Title: "Credentials", Nav: "credentials", CSRF: sess.csrf, Data: d})
}

// browserSessionRow is one browser session in the list. The session's
// browser address is left out: it is where the browser's DevTools listen.
type browserSessionRow struct {
	ID, Status     string
	Started, Ended string
	Timeout        string
	ProfileID      string
	KeepsProfile   bool // its browser state is kept for a profile when it closes
}

// handleBrowserSessions lists the organization's browser sessions, newest
// first, as GET /v1/browser_sessions answers them.
func (s *Server) handleBrowserSessions(w http.ResponseWriter, r *http.Request, sess *session) {
	c, err := s.client(r, sess)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	list, err := c.BrowserSessions.List(r.Context())
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	var rows []browserSessionRow
	for _, bs := range list {
		row := browserSessionRow{ID: bs.BrowserSessionID, Status: "—", Timeout: "—", KeepsProfile: bs.GenerateBrowserProfile}
		if bs.Status != nil {
			row.Status = *bs.Status
		}
		row.Started = when(bs.StartedAt)
		if bs.StartedAt == nil {
			row.Started = when(bs.CreatedAt)
		}
		row.Ended = when(bs.CompletedAt)
		if bs.Timeout != nil {
			row.Timeout = fmt.Sprintf("%d min", *bs.Timeout)
		}
		if bs.BrowserProfileID != nil {
			row.ProfileID = *bs.BrowserProfileID
		}
		rows = append(rows, row)
	}
	s.render(w, r, http.StatusOK, "browser-sessions", view{Title: "Browser sessions", Nav: "browser-sessions", CSRF: sess.csrf, Data: rows})
}

// browserProfilesData is the browser profiles page's.
type browserProfilesData struct {
	Profiles []*client.BrowserProfile
	Pager    pager
}

// handleBrowserProfiles lists the organization's browser profiles, newest
// first, as GET /v1/browser_profiles answers them (never their cookies or
// storage).
func (s *Server) handleBrowserProfiles(w http.ResponseWriter, r *http.Request, sess *session) {
	c, err := s.client(r, sess)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	page := pageParam(r)
	list, err := c.BrowserProfiles.List(r.Context(), &client.ListBrowserProfilesOptions{Page: page, PageSize: listPageSize})
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	d := browserProfilesData{Profiles: list, Pager: pagerOf("browser-profiles", page, len(list))}
	s.render(w, r, http.StatusOK, "browser-profiles", view{Title: "Browser profiles", Nav: "browser-profiles", CSRF: sess.csrf, Data: d})
}

// scriptsData is the scripts page's.
type scriptsData struct {
	Scripts []*client.Script
	Pager   pager
}

// handleScripts lists the organization's scripts, the latest version of
// each, most recently changed first (GET /v1/scripts).
func (s *Server) handleScripts(w http.ResponseWriter, r *http.Request, sess *session) {
	c, err := s.client(r, sess)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	page := pageParam(r)
	list, err := c.Scripts.List(r.Context(), &client.ListScriptsOptions{Page: page, PageSize: listPageSize})
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	d := scriptsData{Scripts: list, Pager: pagerOf("scripts", page, len(list))}
	s.render(w, r, http.StatusOK, "scripts", view{Title: "Scripts", Nav: "scripts", CSRF: sess.csrf, Data: d})
}

// scriptData is a script's page's.
type scriptData struct {
	Script   *client.Script
	FileName string
	File     string // the file's text
	Problem  string // why the file could not be read, "" when it was
}

// handleScript shows the latest version of a script: what replays and what
// calls the model, and its file as text (GET /v1/scripts/{id} and GET
// /v1/scripts/{id}/files/script.yaml).
func (s *Server) handleScript(w http.ResponseWriter, r *http.Request, sess *session) {
	c, err := s.client(r, sess)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	sc, err := c.Scripts.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	d := scriptData{Script: sc, FileName: client.ScriptFileName}
	if b, err := c.Scripts.File(r.Context(), sc.ScriptID, sc.Version); err != nil {
		d.Problem = "The script's file could not be read: " + err.Error() + ". `abctl scripts get " + sc.ScriptID + " -o yaml` prints it too."
	} else {
		d.File = string(b)
	}
	s.render(w, r, http.StatusOK, "script", view{Title: "Script " + sc.ScriptID, Nav: "scripts", CSRF: sess.csrf, Data: d})
}

// fleetEndpoint is one browser endpoint on the fleet page. It has a
// number and no name: an endpoint given no name is named by its URL, and
// the DevTools addresses of the fleet are not for the organizations that
// run on it. For the same reason its last error (which may quote the
// address) does not show.
type fleetEndpoint struct {
	N        int
	Healthy  bool
	Capacity int
	InUse    int
	Failures uint64
	Placed   uint64
}

// fleetData is the fleet page's.
type fleetData struct {
	HasFleet      bool
	Endpoints     []fleetEndpoint
	Healthy       int // endpoints up
	Capacity      int // browser slots on every endpoint
	InUse         int // slots in use
	Queued        int
	QueueWaits    uint64
	QueueTimeouts uint64
}

// handleFleet shows the daemon's fleet of browser endpoints as GET
// /healthz reports it, without an endpoint's name, URL or error.
func (s *Server) handleFleet(w http.ResponseWriter, r *http.Request, sess *session) {
	var d fleetData
	if s.fleet != nil {
		if f, ok := s.fleet(); ok {
			d = fleetData{HasFleet: true, Queued: f.Queued, QueueWaits: f.QueueWaits, QueueTimeouts: f.QueueTimeouts}
			for i, e := range f.Endpoints {
				d.Endpoints = append(d.Endpoints, fleetEndpoint{N: i + 1, Healthy: e.Healthy, Capacity: e.Capacity, InUse: e.InUse, Failures: e.Failures, Placed: e.Placed})
				d.InUse += e.InUse
				d.Capacity += e.Capacity
				if e.Healthy {
					d.Healthy++
				}
			}
		}
	}
	s.render(w, r, http.StatusOK, "fleet", view{Title: "Browser fleet", Nav: "fleet", CSRF: sess.csrf, Data: d})
}
