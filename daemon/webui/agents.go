package webui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
)

// agentsPageSize is the number of agents on a page of the list.
const agentsPageSize = 25

// agentRunsShown is the number of an agent's latest runs its page shows.
const agentRunsShown = 10

// schedulesAsked bounds the schedules whose next fire time an agent's page
// asks for (one request each); an agent rarely has more than a few.
const schedulesAsked = 20

// agentRoutes adds the agents' pages: the list, an agent, its versions and
// the form that runs it.
func (s *Server) agentRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+Prefix+"agents", s.signedIn(s.handleAgents))
	mux.HandleFunc("GET "+Prefix+"agents/{id}", s.signedIn(s.handleAgent))
	mux.HandleFunc("GET "+Prefix+"agents/{id}/versions/{n}", s.signedIn(s.handleAgentVersion))
	mux.HandleFunc("GET "+Prefix+"agents/{id}/run", s.signedIn(s.handleRunForm))
	mux.HandleFunc("POST "+Prefix+"agents/{id}/run", s.signedIn(s.handleRunAgent))
}

// agentsData is the agents list's.
type agentsData struct {
	Agents []agentRow
	Search string
	Page   int
	Prev   string // the previous page's URL, "" on the first
	Next   string // the next page's URL, "" on the last
}

// agentRow is one agent of the list.
type agentRow struct {
	*client.Agent
	Folder string // the folder's title (its id when it cannot be read); "" for none
	Blocks int    // every block, those inside loops included
}

// handleAgents lists the organization's agents, the latest version of
// each, most recently changed first, as GET /v1/agents answers them:
// searched by title (and id, folder and parameters, as the API searches),
// a page at a time.
func (s *Server) handleAgents(w http.ResponseWriter, r *http.Request, sess *session) {
	q := r.URL.Query()
	o := &client.ListAgentsOptions{PageSize: agentsPageSize, SearchKey: strings.TrimSpace(q.Get("search"))}
	o.Page, _ = strconv.Atoi(q.Get("page"))
	o.Page = min(max(o.Page, 1), 10000)
	c, err := s.client(r, sess)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	agents, err := c.Agents.List(r.Context(), o)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	d := agentsData{Search: o.SearchKey, Page: o.Page}
	folders := map[string]string{}
	for _, a := range agents {
		row := agentRow{Agent: a, Blocks: countBlocks(a.WorkflowDefinition.Blocks)}
		if id := deref(a.FolderID); id != "" {
			if _, ok := folders[id]; !ok {
				folders[id] = id
				if f, err := c.Folders.Get(r.Context(), id); err == nil && f.Title != "" {
					folders[id] = f.Title
				}
			}
			row.Folder = folders[id]
		}
		d.Agents = append(d.Agents, row)
	}
	page := func(n int) string {
		v := url.Values{}
		if o.SearchKey != "" {
			v.Set("search", o.SearchKey)
		}
		v.Set("page", strconv.Itoa(n))
		return Prefix + "agents?" + v.Encode()
	}
	if o.Page > 1 {
		d.Prev = page(o.Page - 1)
	}
	if len(agents) == agentsPageSize {
		d.Next = page(o.Page + 1)
	}
	s.render(w, r, http.StatusOK, "agents", view{Title: "Agents", Nav: "agents", CSRF: sess.csrf, Data: d})
}

// countBlocks counts an agent's blocks, those inside loops included.
func countBlocks(bs client.Blocks) int {
	n := 0
	bs.Walk(func(client.Block) { n++ })
	return n
}

// agentData is an agent's page.
type agentData struct {
	Agent     *client.Agent
	YAML      string                 // the agent file, as `abctl get agent ID -o yaml` writes it
	LeftOut   []agentfile.LeftOutTag // the tags the file does not carry
	Versions  []*client.Agent        // every version, newest first
	Runs      []*client.AgentRun     // the latest runs
	MoreRuns  bool                   // there are runs beyond those shown
	Schedules []agentSchedule
	Live      bool // a run shown is not over: the runs refresh
}

// agentSchedule is one of an agent's schedules, with its next fire time.
type agentSchedule struct {
	*client.Schedule
	Next *client.Time // nil when disabled or not known
}

// handleAgent shows an agent: what it is, its file, its versions, its
// latest runs and its schedules.
func (s *Server) handleAgent(w http.ResponseWriter, r *http.Request, sess *session) {
	ctx, id := r.Context(), r.PathValue("id")
	c, err := s.client(r, sess)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	a, err := c.Agents.Get(ctx, id, nil)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	d := &agentData{Agent: a}
	// The tags name the agent and go in its file, as get -o yaml writes
	// it; a service that keeps no tags gives a file without them.
	tags, err := c.Agents.BatchGetTags(ctx, []string{id})
	if err != nil && !errors.Is(err, client.ErrForbidden) && !errors.Is(err, client.ErrNotFound) {
		s.fail(w, r, sess, err)
		return
	}
	doc, left, err := agentfile.RenderTagged(a, tags[id], "yaml")
	if err != nil {
		s.fail(w, r, sess, fmt.Errorf("the agent's file could not be written: %w", err))
		return
	}
	d.YAML, d.LeftOut = string(doc), left

	if d.Versions, err = c.Agents.Versions(ctx, id); err != nil {
		s.fail(w, r, sess, err)
		return
	}
	slices.SortFunc(d.Versions, func(x, y *client.Agent) int { return y.Version - x.Version })

	runs, err := c.Agents.ListRuns(ctx, &client.ListAgentRunsOptions{AgentID: id, PageSize: agentRunsShown + 1})
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	if len(runs) > agentRunsShown {
		runs, d.MoreRuns = runs[:agentRunsShown], true
	}
	d.Runs = runs
	for _, run := range runs {
		if !run.IsTerminal() {
			d.Live = true
		}
	}

	if d.Schedules, err = agentSchedules(ctx, c, id); err != nil {
		s.fail(w, r, sess, err)
		return
	}
	s.render(w, r, http.StatusOK, "agent", view{Title: "Agent " + a.Title, Nav: "agents", CSRF: sess.csrf, Data: d})
}

// agentSchedules reads an agent's schedules and, for the enabled ones,
// their next fire time.
func agentSchedules(ctx context.Context, c *client.Client, id string) ([]agentSchedule, error) {
	list, err := c.Schedules.List(ctx, id)
	if err != nil {
		return nil, err
	}
	rows := make([]agentSchedule, len(list))
	for i, sc := range list {
		rows[i] = agentSchedule{Schedule: sc}
		if !sc.Enabled || i >= schedulesAsked {
			continue
		}
		one, err := c.Schedules.Get(ctx, id, sc.WorkflowScheduleID)
		if err == nil && len(one.NextRuns) > 0 {
			rows[i].Next = &one.NextRuns[0]
		}
	}
	return rows, nil
}

// versionData is the page of one version of an agent.
type versionData struct {
	Agent  *client.Agent // the version shown
	Latest int           // the agent's latest version
	Prev   int           // the version before; 0 for none
	Next   int           // the version after; 0 for none
	Diff   []diffLine    // the changes from the version before; nil for the first
	Same   bool          // the version changed nothing of the definition
	YAML   string        // the version's definition
}

// diffLine is one line of a unified diff, with its kind for the styles:
// "add", "del", "hunk", "head" or "" for context.
type diffLine struct {
	Kind string
	Text string
}

// handleAgentVersion shows version n of an agent: its definition, and what
// changed from version n-1, as a unified diff of the two definitions as
// agent files write them.
func (s *Server) handleAgentVersion(w http.ResponseWriter, r *http.Request, sess *session) {
	ctx, id := r.Context(), r.PathValue("id")
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		s.render(w, r, http.StatusNotFound, "error", view{Title: "Not found", CSRF: sess.csrf,
			Data: "A version is a number from 1: see the versions on the agent's page."})
		return
	}
	c, err := s.client(r, sess)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	latest, err := c.Agents.Get(ctx, id, nil)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	a, err := c.Agents.Get(ctx, id, &client.GetAgentOptions{Version: n})
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	doc, err := agentfile.RenderDefinition(a, "yaml")
	if err != nil {
		s.fail(w, r, sess, fmt.Errorf("version %d's definition could not be written: %w", n, err))
		return
	}
	d := versionData{Agent: a, Latest: latest.Version, YAML: string(doc)}
	if n < latest.Version {
		d.Next = n + 1
	}
	if n > 1 {
		d.Prev = n - 1
		prev, err := c.Agents.Get(ctx, id, &client.GetAgentOptions{Version: n - 1})
		if err != nil {
			s.fail(w, r, sess, err)
			return
		}
		before, err := agentfile.RenderDefinition(prev, "yaml")
		if err != nil {
			s.fail(w, r, sess, fmt.Errorf("version %d's definition could not be written: %w", n-1, err))
			return
		}
		diff := agentfile.Diff(fmt.Sprintf("version %d", n-1), fmt.Sprintf("version %d", n), before, doc)
		d.Same = diff == ""
		d.Diff = diffLines(diff)
	}
	s.render(w, r, http.StatusOK, "agent-version", view{Title: fmt.Sprintf("Agent %s, version %d", a.Title, n), Nav: "agents", CSRF: sess.csrf, Data: d})
}

// diffLines splits a unified diff into its lines, each with its kind.
func diffLines(diff string) []diffLine {
	var out []diffLine
	for _, l := range strings.SplitAfter(diff, "\n") {
		if l == "" {
			continue
		}
		l = strings.TrimSuffix(l, "\n")
		kind := ""
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
			kind = "head"
		case strings.HasPrefix(l, "@@"):
			kind = "hunk"
		case strings.HasPrefix(l, "+"):
			kind = "add"
		case strings.HasPrefix(l, "-"):
			kind = "del"
		}
		out = append(out, diffLine{Kind: kind, Text: l})
	}
	return out
}

// runFormData is the run form's.
type runFormData struct {
	Agent   *client.Agent
	Fields  []*paramField
	Title   string // the run's title, as typed
	Problem string // why the run was not started
}

// paramField is one workflow parameter of the run form.
type paramField struct {
	Key         string
	Type        client.WorkflowParameterType
	Description string
	Default     string // the default as text; "" for none
	HasDefault  bool
	Value       string // what was typed (or chosen)
	Problem     string // what is wrong with Value
}

// Input is the field's control: "select" for a boolean, "textarea" for
// JSON, "text" for the rest (whose values the daemon checks, not the
// browser, so that every problem is told the same way).
func (f *paramField) Input() string {
	switch f.Type {
	case client.WorkflowParameterBoolean:
		return "select"
	case client.WorkflowParameterJSON:
		return "textarea"
	}
	return "text"
}

// Name is the field's name in the form.
func (f *paramField) Name() string { return "param." + f.Key }

// paramFields returns a field for each workflow parameter of a (the
// others, credentials and secrets, take no value from a run, as abctl run
// leaves them out), in the order the agent declares them.
func paramFields(a *client.Agent) []*paramField {
	var out []*paramField
	for _, p := range a.WorkflowDefinition.Parameters {
		if p.ParameterType != client.ParameterTypeWorkflow {
			continue
		}
		f := &paramField{Key: p.Key, Type: p.WorkflowParameterType, Description: p.Description}
		if def := bytes.TrimSpace(p.DefaultValue); len(def) > 0 && string(def) != "null" {
			f.HasDefault = true
			var text string
			if p.WorkflowParameterType != client.WorkflowParameterJSON && json.Unmarshal(def, &text) == nil {
				f.Default = text
			} else {
				f.Default = string(def)
			}
		}
		out = append(out, f)
	}
	return out
}

// formAgent reads the agent of the run form's path, with the client that
// read it; on an error it has written the error page and returns ok false.
func (s *Server) formAgent(w http.ResponseWriter, r *http.Request, sess *session) (c *client.Client, a *client.Agent, ok bool) {
	c, err := s.client(r, sess)
	if err == nil {
		a, err = c.Agents.Get(r.Context(), r.PathValue("id"), nil)
	}
	if err != nil {
		s.fail(w, r, sess, err)
		return nil, nil, false
	}
	return c, a, true
}

// handleRunForm shows the form that runs an agent.
func (s *Server) handleRunForm(w http.ResponseWriter, r *http.Request, sess *session) {
	_, a, ok := s.formAgent(w, r, sess)
	if !ok {
		return
	}
	s.renderRunForm(w, r, sess, http.StatusOK, &runFormData{Agent: a, Fields: paramFields(a)})
}

func (s *Server) renderRunForm(w http.ResponseWriter, r *http.Request, sess *session, status int, d *runFormData) {
	s.render(w, r, status, "agent-run", view{Title: "Run " + d.Agent.Title, Nav: "agents", CSRF: sess.csrf, Data: d})
}

// handleRunAgent starts a run of the agent with the form's values, each
// checked and converted as `abctl run --param` checks them
// (client.ConvertParameterValue), and goes to the run's page. A missing or
// bad value shows the form again, with each problem at its field.
func (s *Server) handleRunAgent(w http.ResponseWriter, r *http.Request, sess *session) {
	c, a, ok := s.formAgent(w, r, sess)
	if !ok {
		return
	}
	d := &runFormData{Agent: a, Fields: paramFields(a), Title: strings.TrimSpace(r.PostFormValue("title"))}
	params := map[string]any{}
	bad := 0
	for _, f := range d.Fields {
		f.Value = r.PostFormValue(f.Name())
		given := f.Value
		if f.Type != client.WorkflowParameterString {
			given = strings.TrimSpace(given)
		}
		if given == "" {
			if !f.HasDefault {
				f.Problem = "Give a value: this parameter has no default."
				bad++
			}
			continue
		}
		raw, err := client.ConvertParameterValue(f.Type, given)
		if err != nil {
			f.Problem = "Not a valid " + string(f.Type) + " value: " + err.Error() + "." + typeHint(f.Type)
			bad++
			continue
		}
		params[f.Key] = json.RawMessage(raw)
	}
	if bad > 0 {
		d.Problem = "The run was not started: fix the value marked below."
		if bad > 1 {
			d.Problem = fmt.Sprintf("The run was not started: fix the %d values marked below.", bad)
		}
		s.renderRunForm(w, r, sess, http.StatusUnprocessableEntity, d)
		return
	}
	run, err := c.Runs.StartAgent(r.Context(), &client.AgentRunRequest{AgentID: a.WorkflowPermanentID, Parameters: params, Title: d.Title})
	var ae *client.Error
	if errors.As(err, &ae) && (ae.StatusCode == http.StatusBadRequest || ae.StatusCode == http.StatusUnprocessableEntity) {
		d.Problem = "The run was not started: " + ae.Detail + " Change the values and run again."
		s.renderRunForm(w, r, sess, http.StatusUnprocessableEntity, d)
		return
	}
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	http.Redirect(w, r, Prefix+"runs/"+url.PathEscape(run.RunID), http.StatusSeeOther)
}

// typeHint says how to write a value of type t, after a bad one.
func typeHint(t client.WorkflowParameterType) string {
	switch t {
	case client.WorkflowParameterInteger:
		return " Write a whole number, such as 42."
	case client.WorkflowParameterFloat:
		return " Write a number, such as 2.5."
	case client.WorkflowParameterBoolean:
		return " Choose true or false."
	case client.WorkflowParameterJSON:
		return ` Write JSON, such as {"name": "value"}, [1, 2] or "text" (in quotes).`
	}
	return ""
}
