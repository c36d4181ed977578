package client_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/abctl/abctl/client"
)

// exampleService stands in for the service in the runnable examples: an
// HTTP server on loopback that accepts an agent, starts a run and reports it
// queued, then running, then completed. Real programs point the client at
// the hosted service or at `abctl daemon` instead.
func exampleService() *httptest.Server {
	var polls atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/agents", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), "yaml_definition") {
			http.Error(w, `{"detail":"expected a yaml_definition"}`, http.StatusUnprocessableEntity)
			return
		}
		io.WriteString(w, `{"workflow_id":"w_1","organization_id":"o_1","title":"Read a title","workflow_permanent_id":"wpid_490440779503357777","version":1,"is_saved_task":false,"workflow_definition":{"parameters":[],"blocks":[]},"created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:42"}`)
	})
	mux.HandleFunc("POST /v1/run/agents", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"run_id":"wr_490440779503358000","status":"queued","run_type":"workflow_run","created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:42"}`)
	})
	mux.HandleFunc("GET /v1/runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		switch polls.Add(1) {
		case 1:
			io.WriteString(w, `{"run_id":"wr_490440779503358000","status":"running","step_count":1,"run_type":"workflow_run","created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:43"}`)
		default:
			io.WriteString(w, `{"run_id":"wr_490440779503358000","status":"completed","step_count":2,"output":{"read_output":{"title":"Example Domain"}},"run_type":"workflow_run","created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:45"}`)
		}
	})
	return httptest.NewServer(mux)
}

// Create an agent from a YAML definition, run it with a parameter, wait for
// the result and read its output.
func Example() {
	svc := exampleService()
	defer svc.Close()

	c, err := client.New(
		client.WithBaseURL(svc.URL), // client.HostedBaseURL, or your daemon's address
		client.WithAPIKey("YOUR_API_KEY"),
	)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	agent, err := c.Agents.CreateYAML(ctx, `
title: Read a title
workflow_definition:
  parameters:
    - key: page
      parameter_type: workflow
      workflow_parameter_type: string
  blocks:
    - block_type: extraction
      label: read
      url: "{{page}}"
      data_extraction_goal: Read the page title
      data_schema: {type: object, properties: {title: {type: string}}}
`, nil, client.WithIdempotencyKey("examples/read-title"))
	if err != nil {
		log.Fatal(err)
	}

	run, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{
		AgentID:    agent.WorkflowPermanentID,
		Parameters: map[string]any{"page": "https://example.com/"},
	})
	if err != nil {
		log.Fatal(err)
	}

	run, err = c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 10 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	var out struct {
		Read struct {
			Title string `json:"title"`
		} `json:"read_output"`
	}
	if err := run.DecodeOutput(&out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.Status, run.GetStepCount(), out.Read.Title)
	// Output: completed 2 Example Domain
}

// Follow a run as it changes, as a live view does.
func ExampleRunsService_Watch() {
	svc := exampleService()
	defer svc.Close()
	c, err := client.New(client.WithBaseURL(svc.URL), client.WithAPIKey("YOUR_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	for ev, err := range c.Runs.Watch(context.Background(), "wr_490440779503358000", &client.WaitOptions{Interval: 10 * time.Millisecond}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s after %d steps\n", ev.Run.Status, ev.Run.GetStepCount())
	}
	// Output:
	// running after 1 steps
	// completed after 2 steps
}

// Start a task run: a prompt and a start URL, no saved agent.
func ExampleRunsService_StartTask() {
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"run_id":"tsk_v2_490440779503357994","status":"created","run_type":"task_v2","created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:42"}`)
	}))
	defer svc.Close()
	c, err := client.New(client.WithBaseURL(svc.URL), client.WithAPIKey("YOUR_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	run, err := c.Runs.StartTask(context.Background(), &client.TaskRunRequest{
		Prompt:     "Find the price of the cheapest plan",
		URL:        "https://example.com/pricing",
		WebhookURL: "https://example.com/hooks/abctl",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.RunID, run.Status)
	// Output: tsk_v2_490440779503357994 created
}
