package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// TaskResult is what came of one task.
type TaskResult struct {
	Name    string   `json:"name"`
	Classes []string `json:"classes"`
	// Success says whether every part of the task's check held; Reason
	// says which did not, or what kept the task from running.
	Success bool   `json:"success"`
	Reason  string `json:"reason,omitempty"`
	// Skipped says why the task did not run (a replay without a
	// recording of it).
	Skipped       string          `json:"skipped,omitempty"`
	Status        string          `json:"status"`
	FailureReason string          `json:"failure_reason,omitempty"`
	Output        json.RawMessage `json:"output,omitempty"`
	Steps         int             `json:"steps"`
	Calls         int             `json:"model_calls"`
	// PromptTokens are the prompt tokens of each step, from the
	// provider's usage; TokensEstimated says that some were estimated
	// (characters/4) because the provider reported none.
	PromptTokens       []int `json:"prompt_tokens_per_step"`
	PromptTokensMedian int   `json:"prompt_tokens_median"`
	PromptTokensMax    int   `json:"prompt_tokens_max"`
	TokensEstimated    bool  `json:"tokens_estimated,omitempty"`
	// WallMS is the run's wall time, ModelMS the time in model calls
	// (from the step log), OutsideMS the difference: the engine's own
	// time, the browser's and the site's.
	WallMS    float64 `json:"wall_ms"`
	ModelMS   float64 `json:"model_ms"`
	OutsideMS float64 `json:"outside_model_ms"`
	// Dir is the run's directory, when kept (-keep).
	Dir string `json:"dir,omitempty"`
}

// Report is the evaluation's result.
type Report struct {
	// Mode is "live" (the configured model), "record" (the same, its
	// answers saved) or "replay".
	Mode  string       `json:"mode"`
	Model string       `json:"model"`
	At    time.Time    `json:"at"`
	Tasks []TaskResult `json:"tasks"`
	Total Totals       `json:"total"`
}

// Totals sum up the tasks that ran (skipped ones are left out).
type Totals struct {
	Tasks     int     `json:"tasks"`
	Succeeded int     `json:"succeeded"`
	Skipped   int     `json:"skipped"`
	Rate      float64 `json:"success_rate"` // 0 to 1
	// MedianPromptTokens is the median over every step of every task.
	MedianPromptTokens int  `json:"median_prompt_tokens_per_step"`
	TokensEstimated    bool `json:"tokens_estimated,omitempty"`
	Calls              int  `json:"model_calls"`
	// MedianOutsideMS is the median over tasks of their time outside the
	// model.
	MedianOutsideMS float64 `json:"median_outside_model_ms_per_task"`
}

// Summarize fills Total from Tasks.
func (r *Report) Summarize() {
	var t Totals
	var tokens []int
	var outside []float64
	for _, tr := range r.Tasks {
		if tr.Skipped != "" {
			t.Skipped++
			continue
		}
		t.Tasks++
		if tr.Success {
			t.Succeeded++
		}
		t.Calls += tr.Calls
		tokens = append(tokens, tr.PromptTokens...)
		t.TokensEstimated = t.TokensEstimated || tr.TokensEstimated
		outside = append(outside, tr.OutsideMS)
	}
	if t.Tasks > 0 {
		t.Rate = float64(t.Succeeded) / float64(t.Tasks)
	}
	t.MedianPromptTokens = medianInt(tokens)
	if n := len(outside); n > 0 {
		sort.Float64s(outside)
		t.MedianOutsideMS = outside[n/2]
		if n%2 == 0 {
			t.MedianOutsideMS = (outside[n/2-1] + outside[n/2]) / 2
		}
	}
	r.Total = t
}

// WriteJSON writes the report as indented JSON to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// WriteMarkdown writes the report as a markdown table, one row per task,
// then the totals.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Agent evaluation, %s mode, model %s, %s\n\n", r.Mode, r.Model, r.At.UTC().Format("2006-01-02 15:04 UTC"))
	b.WriteString("| task | classes | result | status | steps | calls | prompt tokens/step (median, max) | outside the model |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, t := range r.Tasks {
		result := "ok"
		switch {
		case t.Skipped != "":
			result = "skipped: " + t.Skipped
		case !t.Success:
			result = "FAILED: " + t.Reason
		}
		est := ""
		if t.TokensEstimated {
			est = " (est.)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %d, %d%s | %.0f ms |\n", t.Name, strings.Join(t.Classes, ", "),
			cell(result), orNone(t.Status), t.Steps, t.Calls, t.PromptTokensMedian, t.PromptTokensMax, est, t.OutsideMS)
	}
	tot := r.Total
	est := ""
	if tot.TokensEstimated {
		est = " (some estimated as characters/4: the model reported no usage)"
	}
	fmt.Fprintf(&b, "\n**Total:** %d of %d tasks succeeded (%.1f %%)", tot.Succeeded, tot.Tasks, 100*tot.Rate)
	if tot.Skipped > 0 {
		fmt.Fprintf(&b, ", %d skipped", tot.Skipped)
	}
	fmt.Fprintf(&b, "; median prompt %d tokens a step%s; %d model calls; median time outside the model %.0f ms a task.\n",
		tot.MedianPromptTokens, est, tot.Calls, tot.MedianOutsideMS)
	_, err := io.WriteString(w, b.String())
	return err
}

// cell keeps a text on one table row.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return clip(strings.ReplaceAll(s, "|", `\|`), 200)
}
