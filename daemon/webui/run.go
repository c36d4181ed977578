package webui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/abctl/abctl/client"
)

// runData is the run page's: the run as GET /v1/runs/{id} answers it, and
// what the page shows of it ready to print.
type runData struct {
	Run     *client.Run
	Title   string // the run's title, else its agent's; "" for none
	AgentID string // the agent of an agent run (wpid_...)
	Agent   bool   // an agent (workflow) run

	Parameters string   // an agent run's parameters, as indented JSON
	Output     string   // the output, as indented JSON; "" for none
	Errors     []string // each error, as indented JSON

	Blocks []*blockView   // an agent run's timeline, oldest block first
	Steps  []*stepView    // a task run's steps, or an agent run's outside every block
	Shots  []screenshot   // the screenshots, oldest first
	Files  []download     // the files the run downloaded
	All    []artifactView // every file the run stored
	Script *scriptView    // the script the run recorded or replayed; nil for none
	Hook   *webhookView   // the run's webhook; nil for none

	Live     bool                     // the run is not over: its parts refresh
	Question *client.HumanInteraction // the question a person was asked; nil for none
	Waiting  bool                     // the question waits for an answer now
	Problem  string                   // why the last answer was refused
	Comment  string                   // the comment of that answer, to send again
	Answer   string                   // the comment the question was answered with
}

// blockView is one block execution of an agent run, with the steps taken
// in it and the blocks it ran (a loop's).
type blockView struct {
	Block    *client.RunBlock
	Label    string
	Status   string
	Duration string
	Output   string
	Steps    []*stepView
	Children []*blockView
}

// stepView is one step, with its timings in one line, the URLs of the
// screenshots of its page before and after it ("" for none), and where
// the element it acted on was on them.
type stepView struct {
	*client.RunStep
	Timings       string
	Before, After string
	Box           *boxView // nil: no element, or no screenshot to mark it on
	At            string   // its offset in the recording in ms, "" for none
	AtText        string   // the same for people: "1:05.3"
}

// boxView is the element a step acted on, for an SVG drawn over its
// screenshots: the viewBox is the viewport, the rectangle the element.
type boxView struct {
	ViewBox             string
	X, Y, Width, Height string
	Name                string
}

// screenshot is one of the run's screenshots; N counts from 1, oldest first.
type screenshot struct {
	URL string
	N   int
}

// download is a file the run downloaded.
type download struct {
	URL  string
	Name string
	Size string
}

// artifactView is one file the run stored.
type artifactView struct {
	Type string
	Name string
	URL  string
	Size string
}

// scriptView says what script a run recorded or replayed.
type scriptView struct {
	RunWith     string
	ScriptID    string
	RevisionID  string
	AIFallback  bool // the script failed and the agent took over
	FallbackSet bool // AIFallback is known
}

// webhookView is the run's webhook delivery, as far as the run says.
type webhookView struct {
	URL     string // without its query, which may carry a token
	Failure string // why the delivery failed; "" when none is recorded
	Over    bool   // the run is over, so its webhook has been sent
}

// handleRun shows one run of the organization.
func (s *Server) handleRun(w http.ResponseWriter, r *http.Request, sess *session) {
	s.showRun(w, r, sess, r.PathValue("id"), http.StatusOK, "", "")
}

// showRun renders the run page of id with status; problem and comment are
// a refused answer's.
func (s *Server) showRun(w http.ResponseWriter, r *http.Request, sess *session, id string, status int, problem, comment string) {
	c, err := s.client(r, sess)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	d, err := loadRun(r.Context(), c, id)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	d.Problem, d.Comment = problem, comment
	s.render(w, r, status, "run", view{Title: "Run " + d.Run.RunID, Nav: "runs", CSRF: sess.csrf, Data: d})
}

// handleAnswer answers the question of a run paused for a person:
// approve or reject, with an optional comment, then back to the run.
func (s *Server) handleAnswer(approve bool) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, sess *session) {
		id := r.PathValue("id")
		comment := strings.TrimSpace(r.PostFormValue("comment"))
		c, err := s.client(r, sess)
		if err != nil {
			s.fail(w, r, sess, err)
			return
		}
		req := &client.HumanAnswerRequest{Comment: comment}
		if approve {
			_, err = c.Runs.Approve(r.Context(), id, req)
		} else {
			_, err = c.Runs.Reject(r.Context(), id, req)
		}
		var ae *client.Error
		if errors.As(err, &ae) && (ae.StatusCode == http.StatusConflict || ae.StatusCode == http.StatusUnprocessableEntity) {
			problem := "Your answer was not taken: " + ae.Detail
			if ae.StatusCode == http.StatusConflict {
				problem += " Nothing was changed; the page shows where the run is now."
			} else {
				problem += " Change the comment and answer again."
			}
			s.showRun(w, r, sess, id, ae.StatusCode, problem, comment)
			return
		}
		if err != nil {
			s.fail(w, r, sess, err)
			return
		}
		http.Redirect(w, r, Prefix+"runs/"+url.PathEscape(id), http.StatusSeeOther)
	}
}

// handleAnswered sends a GET of an answer's address (a refused answer's
// page reloaded, or refreshed by ui.js) to the run's page.
func (s *Server) handleAnswered(w http.ResponseWriter, r *http.Request, sess *session) {
	if a := r.PathValue("answer"); a != "approve" && a != "reject" {
		s.render(w, r, http.StatusNotFound, "error", view{Title: "Not found", CSRF: sess.csrf, Data: "There is no such page."})
		return
	}
	http.Redirect(w, r, Prefix+"runs/"+url.PathEscape(r.PathValue("id")), http.StatusSeeOther)
}

// loadRun reads run id and everything the page shows of it through the
// API.
func loadRun(ctx context.Context, c *client.Client, id string) (*runData, error) {
	run, err := c.Runs.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &runData{Run: run, Agent: run.RunType.IsWorkflow(), Live: !run.IsTerminal()}
	d.Output = prettyJSON(run.Output)
	for _, e := range run.Errors {
		if s := prettyJSON(e); s != "" {
			d.Errors = append(d.Errors, s)
		}
	}

	var hookURL string
	if d.Agent {
		if req, err := run.AgentRequest(); err == nil && req != nil {
			if d.AgentID == "" {
				d.AgentID = req.AgentID
			}
			if d.Title == "" {
				d.Title = req.Title
			}
			if len(req.Parameters) > 0 {
				if b, err := json.MarshalIndent(req.Parameters, "", "  "); err == nil {
					d.Parameters = string(b)
				}
			}
			hookURL = req.WebhookURL
		}
	} else if req, err := run.TaskRequest(); err == nil && req != nil {
		if d.Title == "" {
			d.Title = req.Title
		}
		hookURL = req.WebhookURL
	}
	if d.Title == "" && d.AgentID != "" {
		// The agent's title: one keyed read. (Not the run list's search,
		// which scans the runs, on every refresh of a live page.)
		if a, err := c.Agents.Get(ctx, d.AgentID, nil); err == nil {
			d.Title = a.Title
		}
	}
	if bare := withoutQuery(hookURL); bare != "" && bare != hookURL {
		// The reasons the API gives name the webhook's URL with its query,
		// which may carry a token: the page names it without.
		for _, reason := range []*string{run.FailureReason, run.WebhookFailureReason} {
			if reason != nil {
				*reason = strings.ReplaceAll(*reason, hookURL, bare)
			}
		}
	}
	if hookURL != "" || run.GetWebhookFailureReason() != "" {
		d.Hook = &webhookView{URL: withoutQuery(hookURL), Failure: run.GetWebhookFailureReason(), Over: run.IsTerminal()}
	}
	if run.ScriptRun != nil || run.ScriptID != nil || deref(run.RunWith) == "code" {
		sv := &scriptView{RunWith: deref(run.RunWith), ScriptID: deref(run.ScriptID)}
		if sr := run.ScriptRun; sr != nil {
			if sv.ScriptID == "" {
				sv.ScriptID = deref(sr.ScriptID)
			}
			sv.RevisionID = deref(sr.ScriptRevisionID)
			sv.AIFallback, sv.FallbackSet = sr.AIFallbackTriggered, true
		}
		d.Script = sv
	}

	// The screenshots come newest first: show them as they were taken.
	n := len(run.ScreenshotURLs)
	for i := range n {
		d.Shots = append(d.Shots, screenshot{URL: run.ScreenshotURLs[n-1-i], N: i + 1})
	}
	for _, f := range run.DownloadedFiles {
		name := deref(f.Filename)
		if name == "" {
			name = fileName(f.URL)
		}
		d.Files = append(d.Files, download{URL: f.URL, Name: name, Size: size(f.FileSize)})
	}

	artifacts, err := c.Runs.ListArtifacts(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	shots := map[string]*stepShots{}
	for _, a := range artifacts {
		av := artifactView{Type: string(a.ArtifactType), Name: fileName(a.URI), Size: size(a.FileSize), URL: deref(a.SignedURL)}
		d.All = append(d.All, av)
		if id := deref(a.StepID); id != "" {
			ss := shots[id]
			if ss == nil {
				ss = &stepShots{}
				shots[id] = ss
			}
			switch a.ArtifactType {
			case client.ArtifactScreenshotLLM:
				ss.before = av.URL
			case client.ArtifactScreenshotAction:
				ss.after = av.URL
			}
		}
	}
	recorded := run.GetRecordingURL() != ""
	stepOf := func(st *client.RunStep) *stepView {
		v := newStepView(st, shots[st.StepID])
		if !recorded {
			// Nothing to show it in (yet: a recording is stored as
			// the run ends).
			v.At, v.AtText = "", ""
		}
		return v
	}

	steps, err := c.Runs.Steps(ctx, id)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(steps, func(a, b *client.RunStep) int { return a.Number - b.Number })
	if d.Agent {
		timeline, err := c.Runs.Timeline(ctx, id)
		if err != nil {
			return nil, err
		}
		byBlock := map[string][]*stepView{}
		for _, st := range steps {
			byBlock[st.WorkflowRunBlockID] = append(byBlock[st.WorkflowRunBlockID], stepOf(st))
		}
		d.Blocks = blockViews(timeline, byBlock)
		for _, b := range d.Blocks {
			forgetPlaced(b, byBlock)
		}
		// Steps of no block still on the timeline (or of none at all).
		for _, st := range steps {
			if _, ok := byBlock[st.WorkflowRunBlockID]; ok {
				d.Steps = append(d.Steps, stepOf(st))
			}
		}
	} else {
		for _, st := range steps {
			d.Steps = append(d.Steps, stepOf(st))
		}
	}

	q, err := c.Runs.Interaction(ctx, id)
	switch {
	case errors.Is(err, client.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		d.Question = q
		d.Answer = deref(q.Comment)
		d.Waiting = q.State == client.HumanWaiting && run.Status == client.RunStatusPaused
	}
	return d, nil
}

// blockViews turns timeline entries (newest first) into blocks, oldest
// first, each with its steps from byBlock.
func blockViews(entries []*client.TimelineEntry, byBlock map[string][]*stepView) []*blockView {
	var out []*blockView
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e == nil || e.Type != client.TimelineBlockEntry || e.Block == nil {
			continue
		}
		b := e.Block
		bv := &blockView{Block: b, Label: deref(b.Label), Status: deref(b.Status), Output: prettyJSON(b.Output),
			Steps: byBlock[b.WorkflowRunBlockID], Children: blockViews(e.Children, byBlock)}
		switch {
		case b.Duration != nil:
			bv.Duration = seconds(*b.Duration)
		case bv.Status == "running":
			bv.Duration = "running"
		default:
			bv.Duration = "—"
		}
		out = append(out, bv)
	}
	return out
}

// forgetPlaced removes from byBlock the steps that b and its children show.
func forgetPlaced(b *blockView, byBlock map[string][]*stepView) {
	delete(byBlock, b.Block.WorkflowRunBlockID)
	for _, c := range b.Children {
		forgetPlaced(c, byBlock)
	}
}

// shotView is one screenshot of a step, for the template "shot".
type shotView struct {
	URL    string
	When   string // "before" or "after"
	Number int    // the step's
	Box    *boxView
}

// BeforeShot is the screenshot of the page before the step; nil for none.
func (v *stepView) BeforeShot() *shotView {
	if v.Before == "" {
		return nil
	}
	return &shotView{URL: v.Before, When: "before", Number: v.Number, Box: v.Box}
}

// AfterShot is the screenshot of the page after the step; nil for none.
func (v *stepView) AfterShot() *shotView {
	if v.After == "" {
		return nil
	}
	return &shotView{URL: v.After, When: "after", Number: v.Number, Box: v.Box}
}

// stepShots are the URLs of a step's screenshots.
type stepShots struct{ before, after string }

// newStepView is st for the page, with its screenshots (nil for none).
func newStepView(st *client.RunStep, shots *stepShots) *stepView {
	t := st.TimingsMS
	v := &stepView{RunStep: st, Timings: fmt.Sprintf("settle %s · observe %s · model %s · act %s",
		millis(t.Settle), millis(t.Observe), millis(t.Model), millis(t.Act))}
	if shots != nil {
		v.Before, v.After = shots.before, shots.after
	}
	if el := st.Element; el != nil && el.Viewport.Width > 0 && el.Viewport.Height > 0 && (v.Before != "" || v.After != "") {
		n := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
		v.Box = &boxView{
			ViewBox: "0 0 " + n(el.Viewport.Width) + " " + n(el.Viewport.Height),
			X:       n(el.Box.X), Y: n(el.Box.Y), Width: n(el.Box.Width), Height: n(el.Box.Height),
			Name: el.Name,
		}
	}
	if ms := st.RecordingOffsetMS; ms != nil {
		v.At = strconv.FormatInt(*ms, 10)
		v.AtText = fmt.Sprintf("%d:%04.1f", *ms/60000, float64(*ms%60000)/1000)
	}
	return v
}

// prettyJSON indents a JSON value for a <pre>; "" for none or null, and
// the text as it came when it is not JSON.
func prettyJSON(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// withoutQuery is a URL without its user information, query and fragment,
// which may hold a secret.
func withoutQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
	return u.String()
}

// fileName is the last part of a URL's path.
func fileName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	name := path.Base(u.Path)
	if name == "." || name == "/" {
		return raw
	}
	return name
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// size shows a file's size for people; "" when unknown.
func size(n *int64) string {
	switch {
	case n == nil:
		return ""
	case *n < 1024:
		return fmt.Sprintf("%d bytes", *n)
	case *n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(*n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(*n)/(1024*1024))
}

func seconds(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.0f ms", s*1000)
	}
	return fmt.Sprintf("%.1f s", s)
}

func millis(ms float64) string { return fmt.Sprintf("%.0f ms", ms) }
