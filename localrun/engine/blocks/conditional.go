package blocks

// The conditional block: its branches' criteria, in order, are evaluated
// against the parameters and the outputs so far (package tmpl's
// expressions, the Jinja2 subset branch conditions use), without a model;
// the first that holds, else the default branch, names the block that runs
// next. A branch without a next_block_label, or no branch at all that
// holds, goes on with the block after the conditional.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/abctl/abctl/agentfile/tmpl"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

func criteriaOf(bc client.BranchCondition) (client.BranchCriteria, error) {
	var c client.BranchCriteria
	if len(bc.Criteria) == 0 || string(bc.Criteria) == "null" {
		return c, nil
	}
	if err := json.Unmarshal(bc.Criteria, &c); err != nil {
		return c, fmt.Errorf("its criteria are not an object with criteria_type and expression: %v", err)
	}
	if c.CriteriaType == "" {
		c.CriteriaType = "jinja2_template"
	}
	return c, nil
}

// conditional runs a conditional block: it picks the branch and sets the
// interpreter's jump.
func (in *Interpreter) conditional(ctx context.Context, b *client.ConditionalBlock, sc *scope) (any, error) {
	rec, err := in.steps.Start(b.Label, steplog.Action{Type: "conditional", Text: fmt.Sprintf("%d branches", len(b.BranchConditions))})
	if err != nil {
		return nil, err
	}
	vars := sc.vars()
	chosen, index, held := -1, 0, ""
	for i, bc := range b.BranchConditions {
		if bc.IsDefault {
			continue
		}
		c, err := criteriaOf(bc)
		if err != nil {
			in.steps.End(rec, "", "", err)
			return nil, fmt.Errorf("branch %d: %w", i+1, err)
		}
		var ok bool
		if c.CriteriaType == "prompt" {
			ok, err = in.judgeCriterion(ctx, b, c.Expression, sc)
		} else {
			ok, err = tmpl.Truth(c.Expression, vars)
		}
		if err != nil {
			err = fmt.Errorf("branch %d: %w", i+1, err)
			in.steps.End(rec, "", "", err)
			return nil, err
		}
		if ok {
			chosen, held = i, c.Expression
			break
		}
	}
	if chosen < 0 {
		for i, bc := range b.BranchConditions {
			if bc.IsDefault {
				chosen = i
			}
		}
	}
	out := map[string]any{"branch_index": nil, "next_block_label": nil, "is_default": false, "criteria": nil}
	result := "no branch holds; the next block runs"
	if chosen >= 0 {
		bc := b.BranchConditions[chosen]
		index = chosen + 1
		out["branch_index"], out["is_default"] = index, bc.IsDefault
		if held != "" {
			out["criteria"] = held
		}
		if bc.NextBlockLabel != "" {
			out["next_block_label"] = bc.NextBlockLabel
			in.jump = bc.NextBlockLabel
		}
		what := fmt.Sprintf("branch %d", index)
		if bc.IsDefault {
			what = "the default branch"
		}
		if bc.Description != "" {
			what += " (" + bc.Description + ")"
		}
		result = what + " holds; "
		if bc.NextBlockLabel != "" {
			result += "next: " + bc.NextBlockLabel
		} else {
			result += "the next block runs"
		}
	}
	in.steps.End(rec, "", strings.TrimSpace(result), nil)
	return out, nil
}

// checkConditional checks a conditional block before the run: one default
// branch at most, criteria on every other branch, with an expression; a
// criterion in prose (criteria_type prompt) needs a model to judge it.
func checkConditional(b *client.ConditionalBlock, hasModel bool) error {
	label, typ := b.Label, b.BlockType()
	if len(b.BranchConditions) == 0 {
		return fmt.Errorf("block %q (%s) has no branch_conditions", label, typ)
	}
	defaults := 0
	for i, bc := range b.BranchConditions {
		if bc.IsDefault {
			defaults++
			continue
		}
		c, err := criteriaOf(bc)
		switch {
		case err != nil:
			return fmt.Errorf("block %q (%s): branch %d: %w", label, typ, i+1, err)
		case strings.TrimSpace(c.Expression) == "":
			return fmt.Errorf("block %q (%s): branch %d has no criteria expression (only the default branch may have none)", label, typ, i+1)
		case c.CriteriaType == "prompt":
			if !hasModel {
				return fmt.Errorf("block %q (%s): branch %d has criteria in prose (criteria_type prompt), which a language model judges, but %w; or write it as an expression over parameters and outputs (criteria_type jinja2_template), such as {{ total > 100 }}", label, typ, i+1, agent.ErrNoModel)
			}
		case c.CriteriaType != "jinja2_template":
			return fmt.Errorf("block %q (%s): branch %d: criteria_type %q is not jinja2_template or prompt", label, typ, i+1, c.CriteriaType)
		}
	}
	if defaults > 1 {
		return fmt.Errorf("block %q (%s) has %d default branches; at most one may be", label, typ, defaults)
	}
	return nil
}

// MaxWhileIterations bounds the iterations of a while_loop block: a loop
// whose condition still holds after them stops, and the block fails saying
// so.
const MaxWhileIterations = 100

// whileLoop runs a while_loop block: its condition (an expression, as a
// branch criterion) is evaluated before each iteration, with the loop's
// previous iteration's outputs visible; the loop blocks run while it holds.
// {{ current_index }} is the iteration's index.
func (in *Interpreter) whileLoop(ctx context.Context, b *client.WhileLoopBlock, sc *scope) (any, error) {
	results := []any{}
	inner := sc
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		holds, err := tmpl.Truth(b.Condition.Expression, inner.vars())
		if err != nil {
			return results, fmt.Errorf("the condition: %w", err)
		}
		if !holds {
			return results, nil
		}
		if i == MaxWhileIterations {
			return results, fmt.Errorf("the loop stopped after %d iterations with its condition still holding (%s): the most a while_loop runs", MaxWhileIterations, b.Condition.Expression)
		}
		inner = sc.loop(b.Label, map[string]any{"current_index": i})
		fail := in.runList(ctx, b.LoopBlocks, inner, "")
		if results, err = endIteration(results, inner, i, fail); err != nil {
			return results, err
		}
	}
}

// checkWhile checks a while_loop block before the run.
func checkWhile(b *client.WhileLoopBlock) error {
	c := b.Condition
	switch {
	case strings.TrimSpace(c.Expression) == "":
		return fmt.Errorf("block %q (%s) has no condition expression", b.Label, b.BlockType())
	case c.CriteriaType == "prompt":
		return fmt.Errorf("block %q (%s) has a condition in prose (criteria_type prompt), which this daemon's engine cannot judge yet: write it as an expression, such as {{ page_output.has_next }}", b.Label, b.BlockType())
	case c.CriteriaType != "" && c.CriteriaType != "jinja2_template":
		return fmt.Errorf("block %q (%s): criteria_type %q is not jinja2_template or prompt", b.Label, b.BlockType(), c.CriteriaType)
	}
	return nil
}

// judgeCriterion asks the model whether a criterion in prose holds,
// against the page as it is now, the values the criterion names (a
// parameter, a loop value) and the outputs of the blocks so far (secrets
// as placeholders). The criterion is a template: its references are
// rendered first.
func (in *Interpreter) judgeCriterion(ctx context.Context, b *client.ConditionalBlock, criterion string, sc *scope) (bool, error) {
	m, err := in.blockModel(b)
	if err != nil {
		return false, err
	}
	// The values the criterion names, and the outputs of the blocks so
	// far; not the run's other parameters.
	values, err := sc.details(nil, criterion)
	if err != nil {
		return false, err
	}
	statement, err := sc.render(criterion)
	if err != nil {
		return false, err
	}
	in.outputs.each(func(k string, v any) { values[k] = jsonValue(v) })
	if len(values) > 0 {
		statement += "\n\nValues of the run so far (JSON):\n" + agent.DetailsJSON(values)
	}
	_, obs, err := in.sess.LookNow(ctx)
	if err != nil {
		return false, fmt.Errorf("look at the page to judge the criterion: %w", err)
	}
	holds, reasoning, err := in.agent.JudgeStatement(ctx, m, statement, obs)
	if err == nil {
		in.env.Logger.Info("criterion judged", "block", b.Label, "holds", holds, "reasoning", reasoning)
	}
	return holds, err
}
