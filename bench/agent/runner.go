package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/abctl/abctl/client"
	ts "github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
)

// The account of the portal credential that login tasks use: a password
// and an authenticator secret on the site's secure sign-in.
const (
	loginUser     = "ada@example.com"
	loginPassword = "correct-horse-battery-staple"
	loginTOTP     = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
	credentialID  = "cred_portal"
	credentialKey = "portal"
)

// modelHook sees the tasks begin and end: the recorder and the replayer
// keep their calls per task. Tasks run one at a time.
type modelHook interface {
	// Begin starts a task on the site whose origin is site
	// (http://127.0.0.1:PORT): recorded answers name it as SiteToken.
	Begin(task, site string)
	// End returns what went wrong on the model's side of the task (a
	// replay that could not answer), nil when nothing did.
	End(task string) error
}

type noHook struct{}

func (noHook) Begin(string, string) {}
func (noHook) End(string) error     { return nil }

// Runner runs tasks against one test site with one engine: one browser,
// a fresh browser context per run.
type Runner struct {
	Site    *ts.Site
	Engine  *engine.Engine
	Hook    modelHook
	Timeout time.Duration // per task
	// Keep is where the runs' directories stay (steps.json, screenshots);
	// "" removes them.
	Keep string
	Log  *slog.Logger
}

// NewEngine returns an engine for the evaluation: the models given, the
// portal credential in its vault, private addresses allowed (the site is
// on loopback).
func NewEngine(ctx context.Context, models *llm.Registry, log *slog.Logger) (*engine.Engine, error) {
	return engine.New(ctx, engine.Config{Models: models, Logger: log, AllowPrivateURLs: true, Vault: vault{}})
}

// vault holds the portal credential only.
type vault struct{}

func (vault) Credential(_ context.Context, _, id string) (client.CredentialType, []byte, error) {
	if id != credentialID {
		return "", nil, fmt.Errorf("no credential %q", id)
	}
	c := &client.PasswordCredential{Username: loginUser, Password: loginPassword, TOTP: loginTOTP}
	b, err := json.Marshal(c)
	return c.CredentialType(), b, err
}

func (vault) TakeTOTPCode(context.Context, string, string, executor.CodeFilter) (*client.TOTPCode, error) {
	return nil, nil
}

func (vault) FetchTOTPCode(context.Context, string, string, string) (string, error) { return "", nil }

type quietProgress struct{}

func (quietProgress) Step(int)          {}
func (quietProgress) Screenshot(string) {}

// taskLabel is the block label of a login task's agent.
const taskLabel = "task"

// job builds the run of a task: a task run (task_v2), or for a login task
// an agent run with the credential parameter and one navigation block.
func (r *Runner) job(t Task, dir string) *executor.Job {
	url := r.Site.URL(t.Start)
	prompt := strings.ReplaceAll(t.Prompt, "{{site}}", strings.TrimSuffix(r.Site.URL("/"), "/"))
	j := &executor.Job{RunID: "tsk_" + strings.ReplaceAll(t.Name, "-", "_"), OrgID: "o_eval", Dir: dir, MaxSteps: t.MaxSteps}
	if !t.Login {
		j.RunType = client.RunTypeTaskV2
		j.Task = &client.TaskRunRequest{Prompt: prompt, URL: url, DataExtractionSchema: t.Schema, ErrorCodeMapping: t.ErrorCodes}
		if t.MaxSteps > 0 {
			j.Task.MaxSteps = &t.MaxSteps
		}
		return j
	}
	j.RunID = "wr_" + strings.ReplaceAll(t.Name, "-", "_")
	j.RunType = client.RunTypeWorkflowRun
	b := &client.TaskBlock{BlockBase: client.BlockBase{Label: taskLabel}, URL: url, NavigationGoal: prompt,
		ParameterKeys: []string{credentialKey}, ErrorCodeMapping: t.ErrorCodes, DataSchema: t.Schema}
	if t.Schema != nil {
		b.DataExtractionGoal = prompt
	}
	if t.MaxSteps > 0 {
		b.MaxStepsPerRun = &t.MaxSteps
	}
	j.Agent = &client.Agent{Title: t.Name, WorkflowDefinition: client.WorkflowDefinition{
		Parameters: []client.Parameter{{Key: credentialKey, ParameterType: client.ParameterTypeCredential, CredentialID: credentialID}},
		Blocks:     client.Blocks{b},
	}}
	j.Parameters = map[string]json.RawMessage{}
	return j
}

// Run runs one task and checks it.
func (r *Runner) Run(ctx context.Context, t Task) TaskResult {
	out := TaskResult{Name: t.Name, Classes: t.Classes}
	dir, err := os.MkdirTemp(r.Keep, "run-"+t.Name+"-")
	if err != nil {
		out.Reason = "cannot make the run's directory: " + err.Error()
		return out
	}
	if r.Keep == "" {
		defer os.RemoveAll(dir)
	} else {
		out.Dir = dir
	}
	from := r.Site.EventCount()
	hook := r.Hook
	if hook == nil {
		hook = noHook{}
	}
	hook.Begin(t.Name, strings.TrimSuffix(r.Site.URL("/"), "/"))
	runCtx, cancel := context.WithTimeout(ctx, r.Timeout)
	start := time.Now()
	res := r.Engine.Execute(runCtx, r.job(t, dir), quietProgress{})
	wall := time.Since(start)
	cancel()
	modelErr := hook.End(t.Name)

	out.Status = string(res.Status)
	out.FailureReason = res.FailureReason
	out.Output = res.Output
	out.WallMS = millis(wall)
	if err := out.addSteps(filepath.Join(dir, engine.StepsName)); err != nil {
		r.Log.Warn("the step log", "task", t.Name, "error", err)
	}
	out.OutsideMS = math.Max(0, out.WallMS-out.ModelMS)
	if modelErr != nil {
		out.Reason = "the model's side failed: " + modelErr.Error()
		return out
	}
	// Page reports are sent before the run's next step; those of the last
	// action may still be on their way when the run ends.
	waitCtx, stop := context.WithTimeout(ctx, 5*time.Second)
	for _, ec := range t.Check.Events {
		r.Site.WaitEventSince(waitCtx, from, ec.Kind)
	}
	stop()
	if why := t.Check.verify(res, r.Site.EventsSince(from), t.Login); why != "" {
		out.Reason = why
		return out
	}
	out.Success = true
	return out
}

func millis(d time.Duration) float64 { return math.Round(float64(d.Microseconds())/10) / 100 }

// stepsFile is the part of a run's step log the report reads.
type stepsFile struct {
	Steps []struct {
		PromptChars int       `json:"prompt_chars"`
		Usage       llm.Usage `json:"usage"`
	} `json:"steps"`
	Calls []struct {
		Kind       string    `json:"kind"`
		DurationMS float64   `json:"duration_ms"`
		Usage      llm.Usage `json:"usage"`
	} `json:"calls"`
}

// addSteps reads the step log: steps, calls, the model's time and the
// prompt tokens of each step (from the providers' usage; estimated as
// characters/4 for a step whose calls reported none).
func (tr *TaskResult) addSteps(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // a run that failed before its first step
	}
	if err != nil {
		return err
	}
	var s stepsFile
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	tr.Steps = len(s.Steps)
	tr.Calls = len(s.Calls)
	for _, c := range s.Calls {
		tr.ModelMS += c.DurationMS
	}
	tr.ModelMS = math.Round(tr.ModelMS*100) / 100
	for _, st := range s.Steps {
		n := st.Usage.InputTokens
		if n == 0 && st.PromptChars > 0 {
			n = (st.PromptChars + 3) / 4
			tr.TokensEstimated = true
		}
		if n > 0 {
			tr.PromptTokens = append(tr.PromptTokens, n)
		}
	}
	tr.PromptTokensMedian = medianInt(tr.PromptTokens)
	for _, n := range tr.PromptTokens {
		tr.PromptTokensMax = max(tr.PromptTokensMax, n)
	}
	return nil
}

func medianInt(v []int) int {
	if len(v) == 0 {
		return 0
	}
	s := append([]int(nil), v...)
	sort.Ints(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2] + 1) / 2
}

// verify says why the run does not pass the check, "" when it does. A
// login task's output is its block's ({"task_output": ...}).
func (c Check) verify(res executor.Result, events []ts.Event, agentRun bool) string {
	want := c.Status
	if want == "" {
		want = client.RunStatusCompleted
	}
	if res.Status != want {
		why := fmt.Sprintf("status %s, want %s", orNone(string(res.Status)), want)
		if res.FailureReason != "" {
			why += ": " + res.FailureReason
		}
		return why
	}
	for _, ec := range c.Events {
		var last *ts.Event
		for i := range events {
			if events[i].Kind == ec.Kind {
				last = &events[i]
			}
		}
		if last == nil {
			return fmt.Sprintf("the site received no %q report", ec.Kind)
		}
		for k, v := range ec.Fields {
			if got := strings.TrimSpace(last.Form.Get(k)); got != v {
				return fmt.Sprintf("the %q report has %s=%q, want %q", ec.Kind, k, got, v)
			}
		}
	}
	if c.Output == nil && len(c.Answers) == 0 {
		return ""
	}
	var out any
	if len(res.Output) > 0 {
		if err := json.Unmarshal(res.Output, &out); err != nil {
			return "the output is not JSON: " + err.Error()
		}
	}
	if m, ok := out.(map[string]any); ok && agentRun {
		if inner, ok := m[taskLabel+"_output"]; ok {
			out = inner
			if im, ok := inner.(map[string]any); ok && im["extracted_information"] != nil {
				out = im["extracted_information"]
			}
		}
	}
	if c.Output != nil && !sameValue(normalize(c.Output), out, c.Fold) {
		return fmt.Sprintf("output %s, want %s", clip(string(res.Output), 300), mustJSON(c.Output))
	}
	for _, a := range c.Answers {
		if !containsValue(out, normalize(a), c.Fold) {
			return fmt.Sprintf("output %s does not hold %s", clip(string(res.Output), 300), mustJSON(a))
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// normalize turns an expected value written in Go into its JSON-decoded
// form (ints into float64, typed slices into []any).
func normalize(v any) any {
	var out any
	json.Unmarshal([]byte(mustJSON(v)), &out)
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the tasks' values are plain data
	}
	return string(b)
}

// sameValue compares decoded JSON values: numbers as numbers, strings
// exactly or, with fold, ignoring case and runs of white space.
func sameValue(want, got any, fold bool) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !sameValue(wv, gv, fold) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameValue(w[i], g[i], fold) {
				return false
			}
		}
		return true
	case float64:
		g, ok := got.(float64)
		return ok && math.Abs(g-w) < 1e-9
	case string:
		g, ok := got.(string)
		if !ok {
			return false
		}
		if fold {
			return foldText(g) == foldText(w)
		}
		return g == w
	default:
		return want == got
	}
}

// containsValue reports whether want is got or a member or element of it,
// at any depth.
func containsValue(got, want any, fold bool) bool {
	if sameValue(want, got, fold) {
		return true
	}
	switch g := got.(type) {
	case map[string]any:
		for _, v := range g {
			if containsValue(v, want, fold) {
				return true
			}
		}
	case []any:
		for _, v := range g {
			if containsValue(v, want, fold) {
				return true
			}
		}
	}
	return false
}

func foldText(s string) string {
	return strings.ToLower(strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " "))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
