// Command apply-dir creates or updates the agents of every agent file in a
// directory, the way `abctl apply -f DIR -R` does, with the two packages a
// program needs for it: agentfile (load and check the files, normalise
// definitions, the name-to-id rule) and client (the API).
//
//	ABCTL_API_KEY=$(cat ~/.local/share/abctl/api-key) go run ./examples/go/apply-dir examples/agents
//
// For each agent it prints "<name> created|updated|unchanged". An agent
// whose normalised definition already matches is not sent, so no version is
// added. The agent's id is derived from its name (the create request's
// Idempotency-Key), so running this twice, or from two machines at once,
// never makes two agents.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "apply-dir:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: apply-dir DIRECTORY")
	}
	// Every problem of every file at once, with file and line, before
	// anything is sent.
	agents, err := agentfile.Load(args, agentfile.LoadOptions{Recursive: true})
	if err != nil {
		return err
	}
	base := getenv("ABCTL_BASE_URL")
	if base == "" {
		base = client.DefaultBaseURL
	}
	c, err := client.New(client.WithBaseURL(base), client.WithAPIKey(getenv("ABCTL_API_KEY")))
	if err != nil {
		return err
	}
	// The organization's id turns names into ids; any agent carries it.
	org := ""
	if some, err := c.Agents.List(ctx, &client.ListAgentsOptions{PageSize: 1}); err != nil {
		return err
	} else if len(some) > 0 {
		org = some[0].OrganizationID
	}

	for _, a := range agents {
		want, err := agentfile.Normalize(a.Definition)
		if err != nil {
			return err
		}
		var current *client.Agent
		if org != "" {
			current, err = c.Agents.Get(ctx, agentfile.AgentID(org, a.Name), nil)
			if err != nil && !errors.Is(err, client.ErrNotFound) {
				return fmt.Errorf("%s: %w", a.Name, err)
			}
		}
		action := "unchanged"
		switch {
		case current == nil:
			created, err := c.Agents.Create(ctx, a.Definition, nil, client.WithIdempotencyKey(agentfile.IdempotencyKey(a.Name)))
			if err != nil {
				return fmt.Errorf("%s: create: %w", a.Name, err)
			}
			org, action = created.OrganizationID, "created"
			// The name's key may belong to an agent deleted earlier: the
			// service then returns it as it was, and an update revives it.
			if have, _ := agentfile.NormalizeAgent(created); created.DeletedAt != nil || !bytes.Equal(have, want) {
				if _, err := c.Agents.Update(ctx, created.WorkflowPermanentID, a.Definition); err != nil {
					return fmt.Errorf("%s: update: %w", a.Name, err)
				}
				action = "updated"
			}
		default:
			have, err := agentfile.NormalizeAgent(current)
			if err != nil {
				return err
			}
			if !bytes.Equal(have, want) {
				if _, err := c.Agents.Update(ctx, current.WorkflowPermanentID, a.Definition); err != nil {
					return fmt.Errorf("%s: update: %w", a.Name, err)
				}
				action = "updated"
			}
		}
		fmt.Fprintf(stdout, "%s %s\n", a.Name, action)
	}
	return nil
}
