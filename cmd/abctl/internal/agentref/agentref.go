// Package agentref finds agents by what people call them on the command
// line: a permanent id (wpid_...), or the name an agent file gave it.
//
// An agent applied from a file has a name (the file's `name`, or its base
// name). The service derives the agent's id from the name (agentfile's
// identity rule), so finding an agent by name needs only the organization's
// id, which any listed agent carries. abctl also tags applied agents with
// abctl.name=<name>, so that listings can show names and `get -o yaml` can
// write a file that applies back to the same agent.
package agentref

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// NameTag is the agent tag key holding the name an agent was applied
// under.
const NameTag = "abctl.name"

// IsID reports whether ref is a permanent id rather than a name.
func IsID(ref string) bool { return strings.HasPrefix(ref, "wpid_") }

// OrganizationID returns the organization of c's key, read from the first
// agent it lists; "" when it has no agent yet.
func OrganizationID(ctx context.Context, c *client.Client) (string, error) {
	agents, err := c.Agents.List(ctx, &client.ListAgentsOptions{PageSize: 1, Status: allStatuses})
	if err != nil {
		return "", err
	}
	if len(agents) == 0 {
		return "", nil
	}
	return agents[0].OrganizationID, nil
}

// allStatuses lists agents whatever their status (the default leaves out
// auto-generated and import-failed ones).
var allStatuses = []client.AgentStatus{client.AgentStatusPublished, client.AgentStatusDraft}

// ErrNotFound is returned (wrapped) when no agent answers to a reference.
var ErrNotFound = errors.New("agent not found")

// Resolve returns the permanent id of ref (a name or id, also in the
// agent/NAME form -o name prints): the id itself, or the id the name maps
// to in c's organization.
func Resolve(ctx context.Context, c *client.Client, ref string) (string, error) {
	ref, err := resource.Agent.ID(ref)
	if err != nil {
		return "", &cmdutil.CodeError{Code: cmdutil.ExitUsage, Err: err}
	}
	if IsID(ref) {
		return ref, nil
	}
	if !agentfile.ValidName(ref) {
		return "", fmt.Errorf("%q is neither an agent id (wpid_...) nor an agent name (lowercase letters, digits, '.', '_' and '-')", ref)
	}
	org, err := OrganizationID(ctx, c)
	if err != nil {
		return "", err
	}
	if org == "" {
		return "", fmt.Errorf("no agent named %q: %w (the organization has no agents)", ref, ErrNotFound)
	}
	return agentfile.AgentID(org, ref), nil
}

// Get returns the latest version of the agent ref names.
func Get(ctx context.Context, c *client.Client, ref string) (*client.Agent, error) {
	id, err := Resolve(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	a, err := c.Agents.Get(ctx, id, nil)
	if errors.Is(err, client.ErrNotFound) {
		what, _ := resource.Agent.ID(ref)
		if !IsID(what) {
			what = fmt.Sprintf("%q (%s)", what, id)
		}
		return nil, fmt.Errorf("no agent %s: %w", what, ErrNotFound)
	}
	return a, err
}

// Tags returns the current tags of each of ids, read in batches of 100,
// with what it read before an error.
func Tags(ctx context.Context, c *client.Client, ids []string) (map[string][]client.TagItem, error) {
	tags := map[string][]client.TagItem{}
	for start := 0; start < len(ids); start += 100 {
		batch, err := c.Agents.BatchGetTags(ctx, ids[start:min(start+100, len(ids))])
		if err != nil {
			return tags, err
		}
		for id, t := range batch {
			tags[id] = t
		}
	}
	return tags, nil
}

// TagsRefused reports whether err, from reading or writing tags, says the
// service does not allow tags (the hosted service's tagging gate answers
// 403) rather than that something went wrong.
func TagsRefused(err error) bool {
	return errors.Is(err, client.ErrForbidden) || errors.Is(err, client.ErrNotFound)
}

// NamesIn returns the abctl.name tag of each agent of tags that has one.
func NamesIn(tags map[string][]client.TagItem) map[string]string {
	names := map[string]string{}
	for id, items := range tags {
		for _, t := range items {
			if t.Key != nil && *t.Key == NameTag {
				names[id] = t.Value
			}
		}
	}
	return names
}

// Names returns the abctl.name tag of each of ids that has one. A service
// that does not allow tags (403) or answers otherwise badly gives no names,
// not an error: names are a convenience of listings.
func Names(ctx context.Context, c *client.Client, ids []string) map[string]string {
	tags, _ := Tags(ctx, c, ids)
	return NamesIn(tags)
}

// Name returns the abctl.name tag of one agent, "" when it has none.
func Name(ctx context.Context, c *client.Client, id string) string {
	return Names(ctx, c, []string{id})[id]
}
