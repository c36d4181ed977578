package completion

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
)

// Timeout bounds what one completion asks the service: the shell waits
// for it. A service that does not answer in time, or answers an error,
// completes nothing, silently.
const Timeout = time.Second

// noFiles is the directive of every completion here: what they complete
// is never a file.
const noFiles = cobra.ShellCompDirectiveNoFileComp

// ask runs fn with the client of the current profile, bounded by Timeout,
// without starting a local daemon; nil when there is none.
func ask(cmd *cobra.Command, f *cmdutil.Factory, fn func(ctx context.Context, c *client.Client) []string) []string {
	ctx, cancel := context.WithTimeout(cmd.Context(), Timeout)
	defer cancel()
	c, err := f.ClientIfRunning(ctx)
	if err != nil {
		return nil
	}
	return fn(ctx, c)
}

// without drops the candidates already on the command line.
func without(cands []string, given []string) []string {
	return slices.DeleteFunc(cands, func(c string) bool {
		name, _, _ := strings.Cut(c, "\t")
		return slices.Contains(given, name)
	})
}

// Kinds completes the first argument of a command whose subcommands are
// kinds of resources (get): the other names of those subcommands, "agent"
// and "run" beside "agents" and "runs", which cobra does not offer itself.
func Kinds(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, noFiles
	}
	var out []string
	for _, sub := range cmd.Commands() {
		if !sub.IsAvailableCommand() {
			continue
		}
		for _, a := range sub.Aliases {
			if strings.HasPrefix(a, toComplete) {
				out = append(out, a+"\t"+sub.Short)
			}
		}
	}
	return out, noFiles
}

// Agents completes agent names (ids for agents without one), each with its
// title, leaving out those already given.
func Agents(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return without(ask(cmd, f, func(ctx context.Context, c *client.Client) []string {
			return agentNames(ctx, c, toComplete)
		}), args), noFiles
	}
}

// agentPageSize is how many of the most recently changed agents are
// offered.
const agentPageSize = 100

// agentNames lists the agents whose name (or id, for those without one, or
// when prefix is an id) starts with prefix. A refused connection is not
// retried: nothing to complete.
func agentNames(ctx context.Context, c *client.Client, prefix string) []string {
	agents, err := c.Agents.List(ctx, &client.ListAgentsOptions{PageSize: agentPageSize}, client.WithMaxRetries(0))
	if err != nil {
		return nil
	}
	ids := make([]string, len(agents))
	for i, a := range agents {
		ids[i] = a.WorkflowPermanentID
	}
	names := agentref.Names(ctx, c, ids)
	var out []string
	for _, a := range agents {
		cand := a.WorkflowPermanentID
		if n := names[cand]; n != "" && !agentref.IsID(prefix) {
			cand = n
		}
		if strings.HasPrefix(cand, prefix) {
			out = append(out, cand+"\t"+a.Title)
		}
	}
	return out
}

// RunFilter chooses the runs a command takes.
type RunFilter int

// The runs to complete.
const (
	AnyRun    RunFilter = iota
	ActiveRun           // not ended: created, queued, running, paused
	EndedRun            // ended: completed, failed, terminated, timed_out, canceled
	AgentRun            // agent runs (wr_...), which carry tags
)

// runPageSize is how many of the newest runs are offered.
const runPageSize = 50

// Runs completes the ids of the newest runs that filter keeps, each with
// its status and title, leaving out those already given.
func Runs(f *cmdutil.Factory, filter RunFilter) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return without(ask(cmd, f, func(ctx context.Context, c *client.Client) []string {
			return runIDs(ctx, c, filter, toComplete)
		}), args), noFiles
	}
}

func runIDs(ctx context.Context, c *client.Client, filter RunFilter, prefix string) []string {
	o := &client.ListRunsOptions{PageSize: runPageSize}
	switch filter {
	case ActiveRun:
		o.Status = []client.RunStatus{client.RunStatusCreated, client.RunStatusQueued, client.RunStatusRunning, client.RunStatusPaused}
	case EndedRun:
		o.Status = []client.RunStatus{client.RunStatusCompleted, client.RunStatusFailed, client.RunStatusTerminated, client.RunStatusTimedOut, client.RunStatusCanceled}
	case AgentRun:
		o.RunType = []client.RunType{client.RunTypeWorkflowRun}
	}
	runs, err := c.Runs.List(ctx, o, client.WithMaxRetries(0))
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range runs {
		if !strings.HasPrefix(r.RunID, prefix) {
			continue
		}
		desc := string(r.Status)
		if r.Title != nil && *r.Title != "" {
			desc += " · " + *r.Title
		}
		out = append(out, r.RunID+"\t"+desc)
	}
	return out
}

// Targets completes what carries tags: agent names, and agent runs (wr_...)
// once the word starts like one.
func Targets(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return ask(cmd, f, func(ctx context.Context, c *client.Client) []string {
			if strings.HasPrefix(toComplete, "wr") {
				return runIDs(ctx, c, AgentRun, toComplete)
			}
			return agentNames(ctx, c, toComplete)
		}), noFiles
	}
}

// First completes the first argument with fn, and nothing after it.
func First(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, noFiles
		}
		return fn(cmd, args, toComplete)
	}
}
