package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
)

func TestAnswerFlags(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *AnswerOptions
	if err := cmdtest.Exec(NewCmdApprove(f, func(o *AnswerOptions) error { got = o; return nil }), "run/wr_1", "--comment", "ok"); err != nil {
		t.Fatal(err)
	}
	if got.RunID != "wr_1" || !got.Approve || got.Comment != "ok" || got.Question {
		t.Errorf("approve %+v", got)
	}
	if err := cmdtest.Exec(NewCmdReject(f, func(o *AnswerOptions) error { got = o; return nil }), "wr_2"); err != nil || got.Approve || got.RunID != "wr_2" {
		t.Errorf("reject %+v %v", got, err)
	}
	if err := cmdtest.Exec(NewCmdQuestion(f, func(o *AnswerOptions) error { got = o; return nil }), "wr_3"); err != nil || !got.Question {
		t.Errorf("question %+v %v", got, err)
	}
	for _, args := range [][]string{{}, {"agent/x"}, {"wr_1", "wr_2"}} {
		got = nil
		if err := cmdtest.Exec(NewCmdApprove(f, func(o *AnswerOptions) error { got = o; return nil }), args...); got != nil || !cmdtest.IsUsage(err) {
			t.Errorf("approve %q: %v, want a usage error", args, err)
		}
	}
	cmd := NewCmdRuns(f)
	for _, name := range []string{"approve", "reject", "question"} {
		if c, _, err := cmd.Find([]string{name}); err != nil || c.Name() != name {
			t.Errorf("runs %s: %v", name, err)
		}
	}
}

// TestAnswerRun: approve and reject send the comment to the run's route
// and say what follows; question shows the instructions and how to
// answer; the daemon's refusal is the command's error.
func TestAnswerRun(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	q := client.HumanInteraction{RunID: "wr_7", BlockLabel: "review", Instructions: "Pay 120 EUR to ACME?",
		PositiveDescriptor: "Pay", NegativeDescriptor: "Reject", State: client.HumanWaiting,
		AskedAt: client.NewTime(time.Date(2026, 11, 24, 11, 0, 0, 0, time.UTC)), ExpiresAt: client.NewTime(time.Date(2026, 11, 24, 13, 0, 0, 0, time.UTC))}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.Path+" "+string(bytes.TrimSpace(body)))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/runs/wr_7/interaction", "/v1/runs/wr_7/approve", "/v1/runs/wr_7/reject":
			json.NewEncoder(w).Encode(q)
		default:
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"detail":"Run wr_8 is not waiting for a person's answer (status completed)."}`)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey("k"), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	f, streams := cmdtest.NewFactory(t, nil)
	opts := func(id string, approve, question bool, comment string) *AnswerOptions {
		return &AnswerOptions{IO: f.IO, Client: func(context.Context) (*client.Client, error) { return c, nil }, Now: f.Now,
			RunID: id, Approve: approve, Question: question, Comment: comment}
	}
	if err := runAnswer(t.Context(), opts("wr_7", true, false, "checked")); err != nil {
		t.Fatal(err)
	}
	if err := runAnswer(t.Context(), opts("wr_7", false, false, "")); err != nil {
		t.Fatal(err)
	}
	if err := runAnswer(t.Context(), opts("wr_7", false, true, "")); err != nil {
		t.Fatal(err)
	}
	err = runAnswer(t.Context(), opts("wr_8", true, false, ""))
	if err == nil || !strings.Contains(err.Error(), "approve wr_8") || !strings.Contains(err.Error(), "not waiting for a person's answer") {
		t.Errorf("a run that is not waiting: %v", err)
	}
	want := []string{`POST /v1/runs/wr_7/approve {"comment":"checked"}`, `POST /v1/runs/wr_7/reject {}`, `GET /v1/runs/wr_7/interaction `, `POST /v1/runs/wr_8/approve {}`}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	if got := streams.ErrOut.String(); !strings.Contains(got, `Answered "Pay" to block "review" of wr_7: the block completes and the run goes on.`) ||
		!strings.Contains(got, `Answered "Reject" to block "review" of wr_7: the block fails.`) {
		t.Errorf("stderr:\n%s", got)
	}
	var shown bytes.Buffer
	WriteQuestion(&shown, &q, time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	if streams.Out.String() != shown.String() {
		t.Errorf("question printed:\n%s\nwant:\n%s", streams.Out.String(), shown.String())
	}
	for _, want := range []string{"Run wr_7, block \"review\" asks:", "  Pay 120 EUR to ACME?", "It waits 1h0m0s more (until 2026-11-24 13:00:00 UTC)",
		"Pay:     abctl runs approve wr_7 [--comment TEXT]", "Reject:  abctl runs reject wr_7 [--comment TEXT]"} {
		if !strings.Contains(shown.String(), want) {
			t.Errorf("the question lacks %q:\n%s", want, shown.String())
		}
	}
}
