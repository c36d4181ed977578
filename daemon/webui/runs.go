package webui

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/abctl/abctl/client"
)

// runsPageSize is the number of runs on a page of the list.
const runsPageSize = 25

// statuses are the run statuses the list filters by, in a run's order.
var statuses = []client.RunStatus{
	client.RunStatusQueued, client.RunStatusRunning, client.RunStatusPaused, client.RunStatusCompleted,
	client.RunStatusFailed, client.RunStatusTerminated, client.RunStatusTimedOut, client.RunStatusCanceled,
}

// runsData is the runs page's.
type runsData struct {
	Runs     []*client.RunListItem
	Statuses []statusFilter
	Search   string
	Page     int
	Prev     string // the previous page's URL, "" on the first
	Next     string // the next page's URL, "" on the last
	Live     bool   // a run on the page is not over: the page refreshes
}

// statusFilter is one status's box in the filters.
type statusFilter struct {
	Status  client.RunStatus
	Checked bool
}

// handleRuns lists the organization's runs, newest first, as GET /v1/runs
// answers them: filtered by status and by a search of ids, titles and
// agents, a page at a time.
func (s *Server) handleRuns(w http.ResponseWriter, r *http.Request, sess *session) {
	q := r.URL.Query()
	o := &client.ListRunsOptions{PageSize: runsPageSize, SearchKey: strings.TrimSpace(q.Get("search"))}
	o.Page, _ = strconv.Atoi(q.Get("page"))
	o.Page = min(max(o.Page, 1), 100) // the API serves pages 1 to 100
	checked := q["status"]
	for _, st := range checked {
		if slices.Contains(statuses, client.RunStatus(st)) {
			o.Status = append(o.Status, client.RunStatus(st))
		}
	}
	d := runsData{Search: o.SearchKey, Page: o.Page}
	for _, st := range statuses {
		d.Statuses = append(d.Statuses, statusFilter{Status: st, Checked: slices.Contains(o.Status, st)})
	}
	if n := len([]rune(o.SearchKey)); n > 0 && n < 3 {
		s.render(w, r, http.StatusUnprocessableEntity, "runs", view{Title: "Runs", Nav: "runs", CSRF: sess.csrf, Data: d})
		return
	}
	c, err := s.client(r, sess)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	runs, err := c.Runs.List(r.Context(), o)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	d.Runs = runs
	for _, run := range runs {
		if !run.Status.IsTerminal() {
			d.Live = true
		}
	}
	page := func(n int) string {
		v := url.Values{}
		for _, st := range o.Status {
			v.Add("status", string(st))
		}
		if o.SearchKey != "" {
			v.Set("search", o.SearchKey)
		}
		v.Set("page", strconv.Itoa(n))
		return Prefix + "runs?" + v.Encode()
	}
	if o.Page > 1 {
		d.Prev = page(o.Page - 1)
	}
	if len(runs) == runsPageSize && o.Page < 100 {
		d.Next = page(o.Page + 1)
	}
	s.render(w, r, http.StatusOK, "runs", view{Title: "Runs", Nav: "runs", CSRF: sess.csrf, Data: d})
}
