package blocks

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/executor"
)

// fakeAsker answers human_interaction blocks as a test says: with answer,
// or, when wait is set, never (until the block's context ends).
type fakeAsker struct {
	answer executor.HumanAnswer
	wait   bool

	mu       sync.Mutex
	asked    []executor.HumanQuestion
	notified []string // what asked was called with
	notifErr error    // what asked returned
	// waiting, when not nil, receives a value once the block waits.
	waiting chan struct{}
}

func (f *fakeAsker) Ask(ctx context.Context, q executor.HumanQuestion, asked func(string) error) (executor.HumanAnswer, error) {
	f.mu.Lock()
	f.asked = append(f.asked, q)
	f.mu.Unlock()
	err := asked("abctl runs approve wr_1")
	f.mu.Lock()
	f.notified = append(f.notified, "abctl runs approve wr_1")
	f.notifErr = err
	f.mu.Unlock()
	if err != nil {
		return executor.HumanAnswer{}, err
	}
	if f.wait {
		if f.waiting != nil {
			f.waiting <- struct{}{}
		}
		<-ctx.Done()
		return executor.HumanAnswer{}, ctx.Err()
	}
	return f.answer, nil
}

type noProgress struct{}

func (noProgress) Step(int)          {}
func (noProgress) Screenshot(string) {}

// humanInterpreter is an interpreter of def, with no browser, asking
// asker.
func humanInterpreter(def *client.WorkflowDefinition, asker HumanAsker, params map[string]any, smtp SMTP) *Interpreter {
	logger := slog.New(slog.DiscardHandler)
	in := &Interpreter{
		env: Env{Logger: logger, SMTP: smtp}, steps: steplog.New(noProgress{}, logger, 0),
		def: def, params: params, outputs: newOutputs(), labels: blockLabels(def.Blocks), human: asker,
	}
	giveFamilies(in)
	return in
}

func reviewBlock() *client.HumanInteractionBlock {
	return &client.HumanInteractionBlock{BlockBase: client.BlockBase{Label: "review"},
		Instructions: "Pay {{ amount }} EUR to {{ payee }}?", NegativeDescriptor: "Deny", Recipients: []string{"ada@example.com"}}
}

func blockOutput(t *testing.T, in *Interpreter, label string) map[string]any {
	t.Helper()
	var out map[string]map[string]any
	if err := json.Unmarshal(in.Output(), &out); err != nil {
		t.Fatalf("output %s: %v", in.Output(), err)
	}
	return out[label+"_output"]
}

// TestHumanInteraction: the question is the block's texts rendered, with
// the service's defaults; approved, the block completes with the answer
// as its output; rejected, it fails saying so, with the comment, and its
// output says so too. Without an SMTP server, no email and no failure.
func TestHumanInteraction(t *testing.T) {
	params := map[string]any{"amount": 120.5, "payee": "ACME"}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	approve := &fakeAsker{answer: executor.HumanAnswer{Approved: true, Comment: "fine", At: at}}
	def := &client.WorkflowDefinition{Blocks: client.Blocks{reviewBlock()}}
	in := humanInterpreter(def, approve, params, SMTP{})
	if fail := in.Execute(t.Context()); fail != nil {
		t.Fatalf("approved: %s", fail.Reason())
	}
	q := approve.asked[0]
	if q.Block != "review" || q.Instructions != "Pay 120.5 EUR to ACME?" || q.PositiveDescriptor != "Approve" || q.NegativeDescriptor != "Deny" ||
		q.Timeout != DefaultHumanTimeout || strings.Join(q.Recipients, ",") != "ada@example.com" {
		t.Errorf("question %+v", q)
	}
	if approve.notifErr != nil {
		t.Errorf("without an SMTP server the email is skipped, not failed: %v", approve.notifErr)
	}
	out := blockOutput(t, in, "review")
	if out["approved"] != true || out["decision"] != "approved" || out["comment"] != "fine" || out["answered_at"] != "2026-01-02T03:04:05Z" {
		t.Errorf("output %v", out)
	}

	reject := &fakeAsker{answer: executor.HumanAnswer{Approved: false, Comment: "too pricey"}}
	in = humanInterpreter(def, reject, params, SMTP{})
	fail := in.Execute(t.Context())
	if fail == nil || fail.Reason() != `Block "review" (human_interaction) failed: a person rejected it ("Deny"): too pricey` {
		t.Fatalf("rejected: %v", fail)
	}
	if out := blockOutput(t, in, "review"); out["approved"] != false || out["decision"] != "rejected" || out["comment"] != "too pricey" {
		t.Errorf("rejected output %v", out)
	}

	// continue_on_failure: a rejection does not end the run.
	soft := reviewBlock()
	soft.ContinueOnFailure = true
	in = humanInterpreter(&client.WorkflowDefinition{Blocks: client.Blocks{soft}}, reject, params, SMTP{})
	if fail := in.Execute(t.Context()); fail != nil {
		t.Errorf("continue_on_failure: %s", fail.Reason())
	}
}

// TestHumanInteractionEnds: a block nobody answers fails when its timeout
// passes, saying so; a run canceled while waiting stops at once; a block
// with no one to ask fails saying why; an SMTP server that cannot be
// reached fails the block naming it.
func TestHumanInteractionEnds(t *testing.T) {
	params := map[string]any{"amount": 1, "payee": "x"}
	b := reviewBlock()
	b.TimeoutSeconds = 1
	def := &client.WorkflowDefinition{Blocks: client.Blocks{b}}
	in := humanInterpreter(def, &fakeAsker{wait: true}, params, SMTP{})
	fail := in.Execute(t.Context())
	if fail == nil || fail.Reason() != `Block "review" (human_interaction) failed: nobody answered within 1 s (timeout_seconds)` {
		t.Fatalf("timeout: %v", fail)
	}

	ctx, cancel := context.WithCancel(t.Context())
	asker := &fakeAsker{wait: true, waiting: make(chan struct{}, 1)}
	in = humanInterpreter(&client.WorkflowDefinition{Blocks: client.Blocks{reviewBlock()}}, asker, params, SMTP{})
	done := make(chan *Failure, 1)
	go func() { done <- in.Execute(ctx) }()
	<-asker.waiting
	cancel()
	if fail := <-done; fail == nil || fail.Err != context.Canceled {
		t.Errorf("canceled: %v", fail)
	}

	in = humanInterpreter(def, nil, params, SMTP{})
	if fail := in.Execute(t.Context()); fail == nil || !strings.Contains(fail.Reason(), "there is nobody to ask: human_interaction blocks run only in agent runs of the daemon") {
		t.Errorf("no asker: %v", fail)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	closed := SMTP{Host: "127.0.0.1", Port: port, Username: "robot", Password: "smtp-secret-pw"}
	in = humanInterpreter(def, &fakeAsker{wait: true}, params, closed)
	fail = in.Execute(t.Context())
	want := `Block "review" (human_interaction) failed: the email to ada@example.com could not be sent through the SMTP server 127.0.0.1:` + strconv.Itoa(port)
	if fail == nil || !strings.HasPrefix(fail.Reason(), want) || strings.Contains(fail.Reason(), "smtp-secret-pw") {
		t.Errorf("unreachable SMTP server: %v", fail)
	}

	neg := reviewBlock()
	neg.TimeoutSeconds = -5
	if err := Check(&client.WorkflowDefinition{Blocks: client.Blocks{neg}}, false); err == nil ||
		err.Error() != `block "review" (human_interaction): timeout_seconds -5 is negative (leave it out for the default of 7200 s)` {
		t.Errorf("check: %v", err)
	}
	if err := Check(def, false); err != nil {
		t.Errorf("check: %v", err)
	}
}
