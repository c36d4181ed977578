package engine_test

import (
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
	"github.com/abctl/abctl/internal/mailtest"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/blocks"
)

// pausedRun waits with the client until the run is paused, failing the
// test if it ends first.
func pausedRun(t *testing.T, c *client.Client, id string) *client.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // catches a hang only
	defer cancel()
	for ev, err := range c.Runs.Watch(ctx, id, &client.WaitOptions{Interval: 50 * time.Millisecond, MaxInterval: 200 * time.Millisecond}) {
		if err != nil {
			t.Fatalf("waiting for run %s to pause: %v", id, err)
		}
		if ev.Run.Status == client.RunStatusPaused {
			return ev.Run
		}
	}
	t.Fatalf("run %s ended without pausing", id)
	return nil
}

// TestDaemonHumanInteraction: an agent whose human_interaction block asks
// a person, run through the daemon with the engine. The run pauses, its
// question is shown and emailed through the daemon's SMTP server with how
// to answer; approved, the block completes and the next block runs;
// rejected, the run fails saying so; unanswered, it fails when the block's
// timeout passes; canceled while paused, it ends canceled. An answer to a
// run that is not waiting is a 409, to an unknown run a 404.
func TestDaemonHumanInteraction(t *testing.T) {
	needBrowser(t)
	mailer, err := mailtest.StartSMTP("127.0.0.1:0", mailtest.WithAccount("robot", smtpPassword))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mailer.Close() })
	host, port := mailer.HostPort()
	var mu sync.Mutex
	var hits []string
	after := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.URL.Query().Get("payee"))
		mu.Unlock()
		io.WriteString(w, `{"paid":true}`)
	}))
	t.Cleanup(after.Close)
	e := newEngine(t, engine.Config{SMTP: blocks.SMTP{Host: host, Port: port, Username: "robot", Password: smtpPassword}})
	c, _ := startDaemon(t, e)
	ctx := t.Context()

	agent := func(timeout int) string {
		t.Helper()
		def := client.WorkflowDefinition{
			Parameters: []client.Parameter{stringParam("payee"), stringParam("server")},
			Blocks: client.Blocks{
				&client.HumanInteractionBlock{BlockBase: base("review"), Instructions: "Pay the invoice of {{ payee }}?",
					Recipients: []string{"ada@example.com"}, Sender: "robot@example.com", Subject: "Invoice of {{ payee }}",
					Body: "An invoice waits for you.", PositiveDescriptor: "Pay", TimeoutSeconds: timeout},
				&client.HTTPRequestBlock{BlockBase: base("pay"), URL: "{{ server }}/pay?payee={{ payee }}"},
			},
		}
		a, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Pay with approval", WorkflowDefinition: def}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return a.WorkflowPermanentID
	}
	patient, hasty := agent(3600), agent(1)
	start := func(agentID, payee string) string {
		t.Helper()
		run, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agentID, Parameters: map[string]any{"payee": payee, "server": after.URL}})
		if err != nil {
			t.Fatal(err)
		}
		return run.RunID
	}
	wait := func(id string) *client.Run {
		t.Helper()
		run, err := c.Runs.Wait(ctx, id, &client.WaitOptions{Interval: 50 * time.Millisecond, MaxInterval: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return run
	}

	// Approved: the next block runs.
	id := start(patient, "ACME")
	pausedRun(t, c, id)
	q, err := c.Runs.Interaction(ctx, id)
	if err != nil || q.State != client.HumanWaiting || q.BlockLabel != "review" || q.Instructions != "Pay the invoice of ACME?" ||
		q.PositiveDescriptor != "Pay" || q.NegativeDescriptor != "Reject" || !q.ExpiresAt.After(q.AskedAt.Time) {
		t.Fatalf("the question: %+v %v", q, err)
	}
	answer, err := c.Runs.Approve(ctx, id, &client.HumanAnswerRequest{Comment: "go ahead"})
	if err != nil || answer.State != client.HumanApproved || answer.Comment == nil || *answer.Comment != "go ahead" {
		t.Fatalf("approve: %+v %v", answer, err)
	}
	done := wait(id)
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("approved run: %s %s", done.Status, done.GetFailureReason())
	}
	var out map[string]map[string]any
	if err := json.Unmarshal(done.Output, &out); err != nil {
		t.Fatal(err)
	}
	if r := out["review_output"]; r["approved"] != true || r["comment"] != "go ahead" || out["pay_output"] == nil {
		t.Errorf("output %s", done.Output)
	}
	mu.Lock()
	if strings.Join(hits, ",") != "ACME" {
		t.Errorf("the block after the approval ran for %q", hits)
	}
	mu.Unlock()
	_, err = c.Runs.Approve(ctx, id, nil)
	if ae := apiError(t, err, http.StatusConflict); !strings.Contains(ae.Detail, "is not waiting for a person's answer (status completed)") {
		t.Errorf("approving an ended run: %s", ae.Detail)
	}
	_, err = c.Runs.Reject(ctx, "wr_1", nil)
	apiError(t, err, http.StatusNotFound)

	// The email went out through the daemon's server, saying how to answer.
	msgs := mailer.Messages()
	if len(msgs) != 1 || msgs[0].From != "robot@example.com" || strings.Join(msgs[0].To, ",") != "ada@example.com" {
		t.Fatalf("the SMTP server received %+v", msgs)
	}
	m, err := msgs[0].Parse()
	if err != nil {
		t.Fatal(err)
	}
	parts := mailtest.Parts(m)
	if len(parts) != 1 {
		t.Fatalf("%d parts", len(parts))
	}
	body := parts[0].Body
	if m.Header.Get("Subject") != "Invoice of ACME" {
		t.Errorf("subject %q", m.Header.Get("Subject"))
	}
	for _, want := range []string{"An invoice waits for you.", "Pay the invoice of ACME?", `Answer "Pay" or "Reject"`,
		"abctl runs approve " + id, "abctl runs reject " + id, "/v1/runs/" + id + "/approve"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the email lacks %q:\n%s", want, body)
		}
	}

	// Rejected: the run fails with the comment, the next block does not run.
	id = start(patient, "Evil Corp")
	pausedRun(t, c, id)
	if _, err := c.Runs.Reject(ctx, id, &client.HumanAnswerRequest{Comment: "wrong payee"}); err != nil {
		t.Fatal(err)
	}
	done = wait(id)
	if done.Status != client.RunStatusFailed || done.GetFailureReason() != `Block "review" (human_interaction) failed: a person rejected it ("Reject"): wrong payee` {
		t.Errorf("rejected run: %s %q", done.Status, done.GetFailureReason())
	}

	// Unanswered: the block's timeout fails it.
	id = start(hasty, "Slow Ltd")
	done = wait(id)
	if done.Status != client.RunStatusFailed || done.GetFailureReason() != `Block "review" (human_interaction) failed: nobody answered within 1 s (timeout_seconds)` {
		t.Errorf("unanswered run: %s %q", done.Status, done.GetFailureReason())
	}
	if q, err := c.Runs.Interaction(ctx, id); err != nil || q.State != client.HumanUnanswered {
		t.Errorf("the unanswered question: %+v %v", q, err)
	}

	// Canceled while paused.
	id = start(patient, "Later Inc")
	pausedRun(t, c, id)
	if err := c.Runs.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	if done = wait(id); done.Status != client.RunStatusCanceled {
		t.Errorf("canceled while paused: %s %q", done.Status, done.GetFailureReason())
	}
	mu.Lock()
	if strings.Join(hits, ",") != "ACME" {
		t.Errorf("the block after the question ran for %q", hits)
	}
	mu.Unlock()
}
