package runner

// Scripts in agent runs: which recorded script a run replays, whether it
// records one, and keeping what it recorded as the script's next version
// (package script; docs/scripts.md).
//
// An agent run executes with run_with "code" when its request or, failing
// that, its agent says so. It then replays the latest version of the
// script of its agent and cache key (the agent's cache_key rendered with
// the run's parameters, "default" when it has none), or the script its
// request pinned (POST /v1/scripts/{id}/run); when there is none yet, the
// model drives the run and the run records the first version. A run also
// records when its agent has generate_script_on_terminal. A completed run
// that recorded keeps its recording as a new version when it differs from
// the latest one (the store compares the bytes).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/agentfile/tmpl"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// defaultCacheKey is the cache key of an agent that sets none.
const defaultCacheKey = script.DefaultCacheKey

// runScript is how a run uses scripts: the job's part, and which script
// version it replays (for the run's script_run).
type runScript struct {
	job      *executor.ScriptJob
	runWith  string
	replayed *store.ScriptRevision
}

// scriptJob works out how the agent run rec of agent uses scripts; nil
// when it neither replays nor records.
func (r *Runner) scriptJob(ctx context.Context, rec *store.RunRecord, agent *client.Agent) (*runScript, error) {
	if agent == nil || rec.AgentID == "" {
		return nil, nil
	}
	runWith := rec.RunWith
	if runWith == "" {
		runWith = agent.RunWith
	}
	code := runWith == "code"
	if !code && !agent.GenerateScriptOnTerminal {
		return nil, nil
	}
	fallback := agent.AIFallback
	if rec.AIFallback != nil {
		fallback = *rec.AIFallback
	}
	key, err := cacheKey(agent, rec.Parameters)
	if err != nil {
		return nil, err
	}
	rs := &runScript{runWith: runWith, job: &executor.ScriptJob{Record: true, AIFallback: fallback, CacheKey: key}}
	if !code {
		return rs, nil
	}
	var rev *store.ScriptRevision
	if rec.ScriptID != "" {
		rev, err = r.cfg.Store.Scripts().Get(ctx, rec.OrgID, rec.ScriptID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("The script %s the run was started for no longer exists.", rec.ScriptID)
		}
	} else {
		rev, err = r.cfg.Store.Scripts().ForAgent(ctx, rec.OrgID, rec.AgentID, key)
		if errors.Is(err, store.ErrNotFound) {
			// None yet: the model drives, and the run records the first.
			return rs, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("The daemon could not read the agent's script: %v", err)
	}
	rs.replayed, rs.job.Replay = rev, rev.Content
	return rs, nil
}

// cacheKey is the agent's cache key rendered with the run's parameters.
func cacheKey(agent *client.Agent, params map[string]json.RawMessage) (string, error) {
	if agent.CacheKey == nil || strings.TrimSpace(*agent.CacheKey) == "" {
		return defaultCacheKey, nil
	}
	vars := make(map[string]any, len(params))
	for k, v := range params {
		var x any
		if json.Unmarshal(v, &x) == nil {
			vars[k] = x
		}
	}
	key, err := tmpl.Render(*agent.CacheKey, vars)
	if err != nil {
		return "", fmt.Errorf("The agent's cache_key %q cannot be rendered: %v", *agent.CacheKey, err)
	}
	if key = strings.TrimSpace(key); key == "" {
		return defaultCacheKey, nil
	}
	return key, nil
}

// sameScript reports whether recorded says what the version rev says:
// a replay that changed nothing records the script it replayed, written
// the way package script writes it, which may differ from how the file
// was written by hand (comments, quoting, key order).
func sameScript(rev *store.ScriptRevision, recorded []byte) bool {
	if rev == nil {
		return false
	}
	s, err := script.Parse(rev.Content)
	return err == nil && bytes.Equal(s.Marshal(), recorded)
}

// keepScript records what a run did with scripts: the version it recorded
// (a new one when it differs from the latest), and the run's script_run
// and run_with.
func (r *Runner) keepScript(ctx context.Context, rec *store.RunRecord, rs *runScript, res *executor.Result) {
	if rs == nil {
		return
	}
	rev := rs.replayed
	if len(res.Script) > 0 && res.Status == client.RunStatusCompleted && !sameScript(rev, res.Script) {
		kept, created, err := r.cfg.Store.Scripts().Record(ctx, rec.OrgID, rec.AgentID, rs.job.CacheKey, rec.ID, res.Script)
		switch {
		case err != nil:
			r.log.Error("keep the run's script", "run_id", rec.ID, "error", err)
		case created:
			r.log.Info("script recorded", "run_id", rec.ID, "script_id", kept.ScriptID, "version", kept.Version)
			rev = kept
		case rev == nil:
			rev = kept
		}
	}
	var sr *client.ScriptRun
	if rev != nil || res.ScriptReplayed {
		sr = &client.ScriptRun{AIFallbackTriggered: res.AIFallbackTriggered}
		if rev != nil {
			sr.ScriptID, sr.ScriptRevisionID = client.Ptr(rev.ScriptID), client.Ptr(rev.RevisionID)
		}
	}
	_, err := r.cfg.Store.Runs().Update(ctx, rec.OrgID, rec.ID, func(rec *store.RunRecord) error {
		rec.RunWith, rec.ScriptRun = rs.runWith, sr
		return nil
	})
	if err != nil {
		r.log.Error("record the run's script use", "run_id", rec.ID, "error", err)
	}
}
