package api

// The answers to human_interaction blocks: abctl's own routes (the hosted
// service answers them from its web application, with no API route).
// GET /v1/runs/{id}/interaction shows the latest question a run asked;
// POST /v1/runs/{id}/approve and /reject answer the one a paused run waits
// on (package runner, human.go).

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/runner"
)

// maxHumanComment bounds the comment of an answer, in characters.
const maxHumanComment = 4000

// handleRunInteraction serves GET /v1/runs/{id}/interaction.
func (s humanAPI) handleRunInteraction(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rec, err := s.runs.Get(r.Context(), organization(r.Context()).ID, id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if rec.Human == nil {
		s.error(w, r, errorf(KindNotFound, "Run %s has asked no one: it ran no human_interaction block.", id))
		return
	}
	writeJSON(w, http.StatusOK, rec.Human)
}

// handleApproveRun serves POST /v1/runs/{id}/approve.
func (s humanAPI) handleApproveRun(w http.ResponseWriter, r *http.Request) { s.answerRun(w, r, true) }

// handleRejectRun serves POST /v1/runs/{id}/reject.
func (s humanAPI) handleRejectRun(w http.ResponseWriter, r *http.Request) { s.answerRun(w, r, false) }

// answerRun answers the question a paused run waits on, with an optional
// {"comment": "..."}: 200 with the question and its answer, 404 for a run
// the organization does not have, 409 for a run that is not waiting for
// an answer.
func (s humanAPI) answerRun(w http.ResponseWriter, r *http.Request, approved bool) {
	if !s.runsEnabled(w, r, s.exec) {
		return
	}
	var body client.HumanAnswerRequest
	raw, err := readBody(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if len(strings.TrimSpace(string(raw))) > 0 {
		if err := decodeJSON(raw, &body); err != nil {
			s.error(w, r, err)
			return
		}
	}
	if n := utf8.RuneCountInString(body.Comment); n > maxHumanComment {
		s.error(w, r, invalid([]client.ValidationError{fieldError("string_too_long",
			"String should have at most 4000 characters", nil, "body", "comment")}))
		return
	}
	id := r.PathValue("id")
	answer, err := s.exec.Runner.Answer(r.Context(), organization(r.Context()).ID, id, approved, strings.TrimSpace(body.Comment))
	var nw *runner.NotWaitingError
	if errors.As(err, &nw) {
		s.error(w, r, errorf(KindConflict, "%s", nw.Error()))
		return
	}
	s.reply(w, r, answer, err)
}
