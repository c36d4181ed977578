// Command run-task starts a task run (a goal in words, no saved agent),
// waits for it, and prints its output: the ten lines most programs need.
//
//	ABCTL_BASE_URL=http://127.0.0.1:8780 ABCTL_API_KEY=$(cat ~/.local/share/abctl/api-key) \
//	  go run ./examples/go/run-task -url https://example.com -prompt "Find the page's heading" \
//	    -schema '{"type":"object","properties":{"heading":{"type":"string"}}}'
//
// It exits 0 when the run completed, 1 otherwise. ABCTL_BASE_URL defaults to
// the local daemon; point it at https://api.skyvern.com (with that service's
// key) to run the same program against the hosted service.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/abctl/abctl/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "run-task:", err)
		os.Exit(1)
	}
}

// run is the whole program, with its inputs and outputs as arguments so
// that a test can call it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run-task", flag.ContinueOnError)
	fs.SetOutput(stderr)
	prompt := fs.String("prompt", "", "what the agent should do (required)")
	url := fs.String("url", "", "the page to start from")
	schema := fs.String("schema", "", "a JSON Schema the output must follow")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long to wait for the run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *prompt == "" {
		return errors.New("-prompt is required")
	}
	base := getenv("ABCTL_BASE_URL")
	if base == "" {
		base = client.DefaultBaseURL
	}
	c, err := client.New(client.WithBaseURL(base), client.WithAPIKey(getenv("ABCTL_API_KEY")))
	if err != nil {
		return err
	}

	req := &client.TaskRunRequest{Prompt: *prompt, URL: *url}
	if *schema != "" {
		req.DataExtractionSchema = json.RawMessage(*schema)
	}
	r, err := c.Runs.StartTask(ctx, req)
	if err != nil {
		return fmt.Errorf("start the task: %w", err)
	}
	fmt.Fprintf(stderr, "started %s\n", r.RunID)

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	r, err = c.Runs.Wait(ctx, r.RunID, nil)
	if err != nil {
		return fmt.Errorf("wait for the run: %w", err)
	}
	if r.Status != client.RunStatusCompleted {
		return fmt.Errorf("run %s ended %s: %s", r.RunID, r.Status, r.GetFailureReason())
	}
	out, err := json.MarshalIndent(r.Output, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}
