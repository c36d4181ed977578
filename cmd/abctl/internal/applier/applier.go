// Package applier makes the service's agents match agent files: the work
// behind `abctl apply`, `abctl diff` and the apply step of `abctl run`.
//
// For each file agent it reads the one agent the file maps to, compares the
// normalised definitions locally and writes only what differs:
//
//   - an agent whose normalised definition and tags already match is
//     "unchanged", and nothing is sent, so no version is added;
//   - one that differs is updated ("configured"): a new version under the
//     same id;
//   - one that does not exist is created ("created") with the Idempotency-Key
//     its name gives (agentfile's identity rule), so that a retry, or another
//     pipeline applying the same file at the same time, ends with one agent.
//     An agent deleted earlier comes back under its old id (the service
//     returns it for the key, and the update revives it).
//
// Finding a file's agent costs the same few requests however many agents
// the organization has. New learns the organization's id from a one-agent
// page of the agent list. A file's agent is then read at its id, the file's
// `id` key or else the id its name maps to (agentfile.AgentID, from the
// organization's id and the name), with one GET, and its tags with one
// batch read of that id; a 404 means that no agent of the organization
// answers to the file (never made, or deleted). So `abctl run FILE` makes
// three requests before it starts the run, plus the writes the file needs
// (a new version, the tags). Prefetch looks up the agents of many files at
// once. Only pruning, which must know every agent applied earlier, reads
// the whole agent list and every agent's tags, however long (ReadAll,
// Orphans).
//
// Applied agents carry the tag abctl.name=<name>, which lets `get` show
// names and `apply --prune` find agents whose files are gone, plus the tags
// the file lists. Tags that the file does not mention are left alone. A
// service that refuses tags (403) does not stop the apply: the definitions
// are applied and a warning says the tags were not.
package applier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"sync"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
)

// Action is what applying did (or would do) to one agent.
type Action string

// The actions.
const (
	Created    Action = "created"
	Configured Action = "configured"
	Unchanged  Action = "unchanged"
	Pruned     Action = "pruned"
)

// Result is the outcome for one agent.
type Result struct {
	Name   string
	ID     string // wpid_...; "" when unknown (a dry run of a creation before any agent exists)
	File   string
	Action Action
	Agent  *client.Agent // the agent as it stands after the apply (nil on a dry run)
	Err    error
}

// Applier holds what it has read of the organization's agents: the
// organization's id, and each agent it looked up, listed or wrote, with its
// tags.
type Applier struct {
	c   *client.Client
	org string
	// noneListed is set when New listed no agent: the ids names map to
	// then name no agent that is not deleted, and are not looked up.
	noneListed bool
	// all is set once every agent of the organization was listed
	// (ReadAll): remote then holds all of them, and an id it lacks names
	// no agent.
	all bool
	// remote holds the agents read or written, by permanent id; an id
	// mapped to nil was looked up and names no agent (none, or a deleted
	// one).
	remote map[string]*client.Agent
	// tags holds the current tags of the agents whose tags were read or
	// set; an agent of remote missing here carries none that matter (it was
	// just created, revived or found with tags refused).
	tags map[string][]client.TagItem
	// TagsRefused is set once the service refused to read or write tags
	// (403, or no tag routes): tags are then neither compared nor set.
	TagsRefused bool
}

// Option changes what New reads.
type Option func(*settings)

type settings struct {
	all      bool
	prefetch []*agentfile.Agent
}

// ReadAll makes New read every agent of the organization (any status) and
// their tags, as pruning needs (Orphans): one request per 100 agents, and
// one per 100 agents again for the tags. Files are then compared with what
// was listed, without further reads.
func ReadAll() Option { return func(s *settings) { s.all = true } }

// Prefetch makes New look up the agents of files at once, for `apply` and
// `diff` of many files: from a few pages of the agent list when the whole
// list is short next to the files (at most a page of 100 agents per 50
// files), else with one GET per file, several at a time; then their tags,
// 100 to a request. The number of requests follows the number of files,
// never the size of the organization. Apply and Plan of these files then
// send no read. Without it each file's agent is read when the file is
// applied or planned.
func Prefetch(files []*agentfile.Agent) Option {
	return func(s *settings) { s.prefetch = append(s.prefetch, files...) }
}

// New returns an Applier for c's organization. It learns the
// organization's id from one agent of the list (a single request); with
// ReadAll it lists every agent instead, with Prefetch it also looks up the
// files' agents. The context is kept for the methods without one (Plan,
// Remote, Orphans).
func New(ctx context.Context, c *client.Client, opts ...Option) (*Applier, error) {
	var s settings
	for _, o := range opts {
		o(&s)
	}
	a := &Applier{c: c, remote: map[string]*client.Agent{}, tags: map[string][]client.TagItem{}}
	if s.all {
		if err := a.readAll(ctx); err != nil {
			return nil, err
		}
		return a, nil
	}
	org, err := agentref.OrganizationID(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("list the agents: %w", err)
	}
	a.org, a.noneListed = org, org == ""
	if len(s.prefetch) > 0 {
		if err := a.prefetch(ctx, s.prefetch); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// readAll reads every agent of the organization, whatever its status, and
// their tags, replacing what was read before.
func (a *Applier) readAll(ctx context.Context) error {
	remote := map[string]*client.Agent{}
	opts := &client.ListAgentsOptions{PageSize: 100, Status: agentref.AnyStatus}
	for ag, err := range a.c.Agents.All(ctx, opts) {
		if err != nil {
			return fmt.Errorf("list the agents: %w", err)
		}
		remote[ag.WorkflowPermanentID] = ag
		if a.org == "" {
			a.org = ag.OrganizationID
		}
	}
	a.remote, a.tags, a.all = remote, map[string][]client.TagItem{}, true
	return a.readTags(ctx, slices.Sorted(maps.Keys(remote)))
}

// readTags reads the tags of ids, 100 to a request. A service that refuses
// tags sets TagsRefused: tags then take no part in comparisons.
func (a *Applier) readTags(ctx context.Context, ids []string) error {
	for start := 0; start < len(ids) && !a.TagsRefused; start += 100 {
		batch := ids[start:min(start+100, len(ids))]
		got, err := a.c.Agents.BatchGetTags(ctx, batch)
		if agentref.TagsRefused(err) {
			a.TagsRefused = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the agents' tags: %w", err)
		}
		for _, id := range batch {
			a.tags[id] = got[id]
		}
	}
	return nil
}

// idOf returns the permanent id of fa's agent: the file's id key, else the
// id its name maps to ("" while the organization is not known, which means
// it has no agent yet).
func (a *Applier) idOf(fa *agentfile.Agent) string {
	switch {
	case fa.ID != "":
		return fa.ID
	case a.org != "":
		return agentfile.AgentID(a.org, fa.Name)
	}
	return ""
}

// find returns fa's agent (nil when there is none) and its id, reading
// the agent and its tags unless they were read already.
func (a *Applier) find(ctx context.Context, fa *agentfile.Agent) (*client.Agent, string, error) {
	id := a.idOf(fa)
	if id == "" || a.skip(fa, id) {
		return a.remote[id], id, nil
	}
	ag, err := a.lookup(ctx, id)
	return ag, id, err
}

// skip reports whether the agent at id, which fa's name maps to, is known
// not to exist without a read: New listed no agent, so it is new or
// deleted.
func (a *Applier) skip(fa *agentfile.Agent, id string) bool {
	_, known := a.remote[id]
	return fa.ID == "" && a.noneListed && !known
}

// lookup returns the agent at id, nil when none answers to it (never made,
// deleted, or of another organization), reading it and its tags unless they
// were read already.
func (a *Applier) lookup(ctx context.Context, id string) (*client.Agent, error) {
	if ag, ok := a.remote[id]; ok || a.all {
		return ag, nil
	}
	ag, err := a.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if ag != nil {
		if err := a.readTags(ctx, []string{id}); err != nil {
			delete(a.remote, id) // read again, with its tags, next time
			return nil, err
		}
	}
	return ag, nil
}

// get reads the agent at id into remote, without its tags.
func (a *Applier) get(ctx context.Context, id string) (*client.Agent, error) {
	ag, err := a.c.Agents.Get(ctx, id, nil)
	if errors.Is(err, client.ErrNotFound) {
		ag, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the agent %s: %w", id, err)
	}
	a.remote[id] = ag
	if ag != nil && a.org == "" {
		a.org = ag.OrganizationID
	}
	return ag, nil
}

// prefetchWorkers is how many agents Prefetch reads at once.
const prefetchWorkers = 4

// listShare bounds the listing Prefetch tries first: at most one page of
// 100 agents per listShare files, so that it reads at most twice the
// agents the files' own GETs would.
const listShare = 50

// prefetch looks up the agents of files that were not read yet, and then
// the tags of those that exist, 100 to a request. When the whole agent list
// fits in len(files)/listShare pages, those pages find them (a list of 100
// agents costs what one GET does, less the round trips); otherwise they are
// read one by one, prefetchWorkers at a time. Either way the number of
// requests follows the number of files.
func (a *Applier) prefetch(ctx context.Context, files []*agentfile.Agent) error {
	if a.org == "" {
		// An agent file naming an id may tell the organization, and with
		// it the ids of the others.
		for _, fa := range files {
			if fa.ID != "" {
				if _, err := a.lookup(ctx, fa.ID); err != nil {
					return err
				}
				if a.org != "" {
					break
				}
			}
		}
	}
	var ids []string
	seen := map[string]bool{}
	for _, fa := range files {
		id := a.idOf(fa)
		if _, known := a.remote[id]; id != "" && !known && !a.skip(fa, id) && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	listed, err := a.listWithin(ctx, len(ids)/listShare)
	if err != nil {
		return err
	}
	agents := make([]*client.Agent, len(ids))
	if listed != nil {
		for i, id := range ids {
			agents[i] = listed[id]
		}
	} else if err := a.getAll(ctx, ids, agents); err != nil {
		return err
	}
	var found []string
	for i, id := range ids {
		a.remote[id] = agents[i]
		if agents[i] != nil {
			found = append(found, id)
		}
	}
	return a.readTags(ctx, found)
}

// listWithin returns every agent of the organization, whatever its status,
// by id, if the list ends within pages pages of 100; nil if it does not.
func (a *Applier) listWithin(ctx context.Context, pages int) (map[string]*client.Agent, error) {
	listed := map[string]*client.Agent{}
	opts := &client.ListAgentsOptions{PageSize: 100, Status: agentref.AnyStatus}
	for opts.Page = 1; opts.Page <= pages; opts.Page++ {
		page, err := a.c.Agents.List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list the agents: %w", err)
		}
		for _, ag := range page {
			listed[ag.WorkflowPermanentID] = ag
		}
		if len(page) < opts.PageSize {
			return listed, nil
		}
	}
	return nil, nil
}

// getAll reads the agents at ids into agents (nil for a 404),
// prefetchWorkers at a time.
func (a *Applier) getAll(ctx context.Context, ids []string, agents []*client.Agent) error {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(prefetchWorkers, len(ids)) {
		wg.Go(func() {
			for i := range next {
				agents[i], errs[i] = a.c.Agents.Get(ctx, ids[i], nil)
				if errors.Is(errs[i], client.ErrNotFound) {
					agents[i], errs[i] = nil, nil
				}
			}
		})
	}
	for i := range ids {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("read the agent %s: %w", ids[i], err)
		}
	}
	return nil
}

// OrganizationID is the organization of the agents ("" until one exists).
func (a *Applier) OrganizationID() string { return a.org }

// Remote returns the agent fa defines, or nil when it does not exist (or is
// deleted), with its id: the file's id key, else the id its name maps to
// ("" when the organization is not known yet). It reads the agent unless it
// was read already; when that read fails it
// returns nil, and Plan and Apply report the error.
func (a *Applier) Remote(ctx context.Context, fa *agentfile.Agent) (*client.Agent, string) {
	ag, id, _ := a.find(ctx, fa)
	return ag, id
}

// comparison is fa against the service, each side normalised once.
type comparison struct {
	remote   *client.Agent // nil when the agent does not exist or is deleted
	id       string
	defWant  []byte // Normalize of the file's definition
	defHave  []byte // NormalizeAgent of remote; nil without one
	tags     map[string]string
	tagsHave map[string]string
	action   Action
	// The schedules, when the file has a schedules key (schedules.go):
	// the file's, and the agent's (nil for a new agent).
	schedules *scheduleComparison
}

func (a *Applier) compare(ctx context.Context, fa *agentfile.Agent) (*comparison, error) {
	cmp := &comparison{tags: wantTags(fa)}
	var err error
	if cmp.defWant, err = agentfile.Normalize(fa.Definition); err != nil {
		return nil, err
	}
	if cmp.remote, cmp.id, err = a.find(ctx, fa); err != nil {
		return nil, err
	}
	switch {
	case cmp.remote == nil && fa.ID != "":
		// Deleted, or not of this organization. Apply revives a deleted
		// one; it never creates an agent under an id.
		cmp.action = Configured
	case cmp.remote == nil:
		cmp.action = Created
	default:
		if cmp.defHave, err = agentfile.NormalizeAgent(cmp.remote); err != nil {
			return nil, err
		}
		cmp.tagsHave = a.currentTags(cmp.id, cmp.tags)
		if a.TagsRefused {
			cmp.tagsHave = cmp.tags // unknown, and not ours to change
		}
		if cmp.schedules, err = a.compareSchedules(ctx, fa, cmp.id); err != nil {
			return nil, err
		}
		cmp.action = Configured
		if bytes.Equal(cmp.defHave, cmp.defWant) && maps.Equal(cmp.tagsHave, cmp.tags) && cmp.schedules.same() {
			cmp.action = Unchanged
		}
	}
	if cmp.remote == nil && fa.HasSchedules {
		cmp.schedules = &scheduleComparison{want: fa.Schedules}
	}
	return cmp, nil
}

// Plan says what Apply would do to fa, without writing: the action and the
// normalised texts of both sides, tags first as comments (have is empty
// for a creation).
func (a *Applier) Plan(ctx context.Context, fa *agentfile.Agent) (action Action, have, want []byte, err error) {
	cmp, err := a.compare(ctx, fa)
	if err != nil {
		return "", nil, nil, err
	}
	want = append(append(tagText(cmp.tags), cmp.schedules.wantText()...), cmp.defWant...)
	if cmp.remote != nil {
		have = append(append(tagText(cmp.tagsHave), cmp.schedules.haveText()...), cmp.defHave...)
	}
	return cmp.action, have, want, nil
}

// wantTags are the tags an applied agent carries: the file's and its name.
// A file that names its agent by id only (no name key: an agent made
// elsewhere, exported by `abctl get -o yaml`) leaves the agent's name as
// it is, rather than naming it after the file.
func wantTags(fa *agentfile.Agent) map[string]string {
	t := map[string]string{}
	if !byIDOnly(fa) {
		t[agentref.NameTag] = fa.Name
	}
	maps.Copy(t, fa.Tags)
	return t
}

// byIDOnly tells a file's agent known by its id alone: the file has an id
// key and no name key.
func byIDOnly(fa *agentfile.Agent) bool { return fa.ID != "" && fa.NameFromFile }

// currentTags returns the agent's values of the keys in want ("" for a
// key it does not carry).
func (a *Applier) currentTags(id string, want map[string]string) map[string]string {
	cur := map[string]string{}
	for k := range want {
		cur[k] = ""
	}
	for _, t := range a.tags[id] {
		if t.Key != nil {
			if _, ok := want[*t.Key]; ok {
				cur[*t.Key] = t.Value
			}
		}
	}
	return cur
}

// tagText renders tags as a YAML comment block above the definition, sorted;
// a key without value is shown as absent.
func tagText(tags map[string]string) []byte {
	var b []byte
	keys := slices.Sorted(maps.Keys(tags))
	for _, k := range keys {
		v := tags[k]
		if v == "" {
			v = "(none)"
		}
		b = fmt.Appendf(b, "# tag %s: %s\n", k, v)
	}
	return b
}

// Apply makes the service match fa (or, with dryRun, only says what it
// would do).
func (a *Applier) Apply(ctx context.Context, fa *agentfile.Agent, dryRun bool) Result {
	res := Result{Name: fa.Name, File: fa.File}
	if byIDOnly(fa) {
		res.Name = fa.ID // the file's name is not the agent's
	}
	cmp, err := a.compare(ctx, fa)
	if err != nil {
		res.Err = err
		return res
	}
	res.ID, res.Action, res.Agent = cmp.id, cmp.action, cmp.remote
	if dryRun || cmp.action == Unchanged {
		return res
	}
	var ag *client.Agent
	switch {
	case cmp.remote != nil && bytes.Equal(cmp.defHave, cmp.defWant):
		ag = cmp.remote // only the tags differ
	case cmp.remote != nil || fa.ID != "":
		ag, err = a.c.Agents.Update(ctx, cmp.id, fa.Definition)
		if errors.Is(err, client.ErrNotFound) && fa.ID != "" {
			err = fmt.Errorf("the file's id %s names no agent of this organization; remove the id to create a new agent", fa.ID)
		}
		if err != nil {
			res.Err = fmt.Errorf("update: %w", err)
			return res
		}
	default:
		var resp *http.Response
		ag, err = a.c.Agents.Create(ctx, fa.Definition, nil, client.WithIdempotencyKey(agentfile.IdempotencyKey(fa.Name)), client.WithResponseInto(&resp))
		if err != nil {
			res.Err = fmt.Errorf("create: %w", err)
			return res
		}
		if a.org == "" {
			a.org = ag.OrganizationID
		}
		have, nerr := agentfile.NormalizeAgent(ag)
		same := nerr == nil && bytes.Equal(have, cmp.defWant)
		if replayed(resp) && ag.DeletedAt == nil && same {
			// Another apply of the same file created it between this
			// one's lookup and its create (two `abctl run` at once): the
			// agent is as the file says, and this apply made nothing.
			res.Action = Unchanged
		}
		// The key may name an agent that exists but was not found (it
		// was deleted, or another apply created it from another
		// definition): the service then returns its first version, which
		// an update brings to the file's definition.
		if ag.DeletedAt != nil || !same {
			ag, err = a.c.Agents.Update(ctx, ag.WorkflowPermanentID, fa.Definition)
			if err != nil {
				res.Err = fmt.Errorf("update the agent its name maps to: %w", err)
				return res
			}
			res.Action = Configured
		}
	}
	res.ID, res.Agent = ag.WorkflowPermanentID, ag
	a.remote[ag.WorkflowPermanentID] = ag
	if err := a.applyTags(ctx, ag.WorkflowPermanentID, cmp.tags); err != nil {
		res.Err = err
		return res
	}
	if err := a.applySchedules(ctx, ag.WorkflowPermanentID, cmp.schedules); err != nil {
		res.Err = err
	}
	return res
}

// replayed reports whether the service answered a create with the agent
// its idempotency key already named (header Idempotent-Replayed, which the
// local daemon sends) instead of creating one.
func replayed(resp *http.Response) bool {
	return resp != nil && resp.Header.Get("Idempotent-Replayed") == "true"
}

// applyTags sets the tags that differ.
func (a *Applier) applyTags(ctx context.Context, id string, want map[string]string) error {
	if a.TagsRefused {
		return nil
	}
	cur := a.currentTags(id, want)
	req := &client.TagApplyRequest{}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if cur[k] != want[k] {
			req.Tags = append(req.Tags, client.TagInput{Key: k, Value: want[k]})
		}
	}
	if len(req.Tags) == 0 {
		return nil
	}
	res, err := a.c.Agents.ApplyTags(ctx, id, req)
	if errors.Is(err, client.ErrForbidden) {
		a.TagsRefused = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("tag the agent: %w", err)
	}
	items := make([]client.TagItem, 0, len(res.Tags))
	for _, t := range res.Tags {
		items = append(items, client.TagItem{Key: t.Key, Value: t.Value})
	}
	a.tags[id] = items
	return nil
}

// Orphans returns the applied agents (those tagged abctl.name) whose names
// are not among names: what `apply --prune` deletes, sorted by name. Unless
// New read every agent (ReadAll), it lists them now.
func (a *Applier) Orphans(ctx context.Context, names map[string]bool) ([]Result, error) {
	if !a.all {
		if err := a.readAll(ctx); err != nil {
			return nil, fmt.Errorf("find the agents to prune: %w", err)
		}
	}
	var out []Result
	for id, tags := range a.tags {
		ag := a.remote[id]
		if ag == nil {
			continue
		}
		for _, t := range tags {
			if t.Key != nil && *t.Key == agentref.NameTag && !names[t.Value] {
				out = append(out, Result{Name: t.Value, ID: id, Action: Pruned, Agent: ag})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Prune deletes an orphan that Orphans returned.
func (a *Applier) Prune(ctx context.Context, r Result) Result {
	if err := a.c.Agents.Delete(ctx, r.ID); err != nil {
		r.Err = fmt.Errorf("delete: %w", err)
	}
	return r
}
