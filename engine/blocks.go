package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/engine/page"
	"github.com/abctl/abctl/tmpl"
)

// maxExecutions bounds the block executions of one run (next_block_label
// can route in circles).
const maxExecutions = 10000

// defaultDownloadTimeout is how long a block waits for its download when
// the block gives no download_timeout.
const defaultDownloadTimeout = 60 * time.Second

// checkDefinition checks, before any browser opens, that the engine can run
// every block of the definition.
func checkDefinition(def *client.WorkflowDefinition, hasModel bool) error {
	if def.FinallyBlockLabel != "" {
		found := false
		for _, b := range def.Blocks {
			if b != nil && b.Base().Label == def.FinallyBlockLabel {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("finally_block_label %q names no top-level block", def.FinallyBlockLabel)
		}
	}
	return checkBlocks(def.Blocks, hasModel)
}

func checkBlocks(bs client.Blocks, hasModel bool) error {
	labels := map[string]bool{}
	for _, b := range bs {
		if b != nil {
			labels[b.Base().Label] = true
		}
	}
	for i, b := range bs {
		if b == nil {
			return fmt.Errorf("blocks[%d] is empty", i)
		}
		if err := checkBlock(b, hasModel); err != nil {
			return err
		}
		if next := b.Base().NextBlockLabel; next != "" && !labels[next] {
			return fmt.Errorf("block %q (%s): next_block_label %q names no block of the same list", b.Base().Label, b.BlockType(), next)
		}
	}
	return nil
}

func needsModel(b client.Block) error {
	return fmt.Errorf("block %q (%s) needs a language model, but %w", b.Base().Label, b.BlockType(), errNoModel)
}

// checkBlock checks that the engine can run b: its required fields are
// there, and a model is configured when it needs one.
func checkBlock(b client.Block, hasModel bool) error {
	label, typ := b.Base().Label, b.BlockType()
	missing := func(what string) error {
		return fmt.Errorf("block %q (%s) has no %s", label, typ, what)
	}
	model := func() error {
		if !hasModel {
			return needsModel(b)
		}
		return nil
	}
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	switch x := b.(type) {
	case *client.GotoURLBlock:
		if strings.TrimSpace(x.URL) == "" {
			return fmt.Errorf("block %q (%s) has no url", label, typ)
		}
	case *client.WaitBlock:
	case *client.ActionBlock:
		if blank(x.Selector) {
			if blank(x.NavigationGoal) && blank(x.Title) {
				return missing("selector and no navigation_goal saying what to act on")
			}
			return model()
		}
		if x.AIFallback == "proactive" && !blank(x.NavigationGoal) {
			return model()
		}
	case *client.NavigationBlock:
		if blank(x.NavigationGoal) {
			return missing("navigation_goal")
		}
		return model()
	case *client.ExtractionBlock:
		if blank(x.DataExtractionGoal) && parseDataSchema(x.DataSchema) == nil {
			return missing("data_extraction_goal")
		}
		return model()
	case *client.TaskBlock:
		if blank(x.NavigationGoal) && blank(x.Prompt) && blank(x.DataExtractionGoal) {
			return missing("navigation_goal, prompt or data_extraction_goal")
		}
		return model()
	case *client.ValidationBlock:
		if blank(x.CompleteCriterion) && blank(x.TerminateCriterion) {
			return missing("complete_criterion or terminate_criterion")
		}
		return model()
	case *client.TaskV2Block:
		if blank(x.Prompt) {
			return missing("prompt")
		}
		return model()
	case *client.TextPromptBlock:
		if blank(x.Prompt) {
			return missing("prompt")
		}
		return model()
	case *client.LoginBlock:
		return model()
	case *client.ForLoopBlock:
		if x.LoopOver == nil && x.LoopOverParameterKey == "" && strings.TrimSpace(x.LoopVariableReference) == "" {
			return fmt.Errorf("block %q (%s) has nothing to loop over: set loop_over_parameter_key or loop_variable_reference", label, typ)
		}
		return checkBlocks(x.LoopBlocks, hasModel)
	case *client.HTTPRequestBlock:
		if strings.TrimSpace(x.URL) == "" {
			return fmt.Errorf("block %q (%s) has no url", label, typ)
		}
		if len(x.Files) > 0 && string(x.Files) != "null" && string(x.Files) != "{}" {
			return fmt.Errorf("block %q (%s): files (multipart uploads) are not supported by this daemon's engine yet", label, typ)
		}
	case *client.PrintPageBlock:
		switch x.Format {
		case "", "A4", "Letter", "Legal", "Tabloid":
		default:
			return fmt.Errorf("block %q (%s): format %q is not one of A4, Letter, Legal, Tabloid", label, typ, x.Format)
		}
	case *client.FileDownloadBlock:
		if x.DownloadTarget != "" && x.DownloadTarget != "website" {
			return fmt.Errorf("block %q (%s): download_target %q is not supported by this daemon's engine", label, typ, x.DownloadTarget)
		}
		if strings.TrimSpace(x.URL) == "" {
			if blank(x.NavigationGoal) {
				return missing("url and no navigation_goal saying how to find the download")
			}
			return model()
		}
	default:
		return fmt.Errorf("block %q (%s) is not supported by this daemon's engine", label, typ)
	}
	return nil
}

// blockFailure is why a block failed.
type blockFailure struct {
	label    string
	typ      client.BlockType
	err      error
	attempts int
	// nextLoop: the block asked to move its loop to the next item.
	nextLoop bool
}

func (f *blockFailure) reason() string {
	var b strings.Builder
	var term *terminatedError
	if errors.As(f.err, &term) {
		fmt.Fprintf(&b, "Block %q (%s) was terminated: %s", f.label, f.typ, upperFirst(term.reason))
		return b.String()
	}
	fmt.Fprintf(&b, "Block %q (%s) failed", f.label, f.typ)
	if f.attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", f.attempts)
	}
	fmt.Fprintf(&b, ": %v", f.err)
	return b.String()
}

// templateError is a template that could not be rendered; retrying does
// not help.
type templateError struct{ err error }

func (t *templateError) Error() string { return t.err.Error() }
func (t *templateError) Unwrap() error { return t.err }

// scope is the variables of a loop iteration, inside its parent's.
type scope struct {
	parent *scope
	vals   map[string]any
	iter   *outputs // the outputs of the iteration's blocks
}

// vars is what templates see: the parameters, the outputs so far, and the
// loop variables, inner ones last.
func (r *run) vars(sc *scope) map[string]any {
	v := make(map[string]any, len(r.params)+8)
	for k, x := range r.params {
		v[k] = x
	}
	r.outputs.each(func(k string, x any) { v[k] = x })
	var chain []*scope
	for s := sc; s != nil; s = s.parent {
		chain = append(chain, s)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		for k, x := range chain[i].vals {
			v[k] = x
		}
		if chain[i].iter != nil {
			chain[i].iter.each(func(k string, x any) { v[k] = x })
		}
	}
	return v
}

func (r *run) render(s string, sc *scope) (string, error) {
	out, err := tmpl.Render(s, r.vars(sc))
	if err != nil {
		return "", &templateError{err}
	}
	return out, nil
}

// runDefinition runs the top-level blocks, then the finally block.
func (r *run) runDefinition(ctx context.Context, def *client.WorkflowDefinition) *blockFailure {
	fail := r.runList(ctx, def.Blocks, nil, def.FinallyBlockLabel)
	if def.FinallyBlockLabel != "" && ctx.Err() == nil && (fail == nil || !errors.Is(fail.err, errStepLimit)) {
		for _, b := range def.Blocks {
			if b.Base().Label == def.FinallyBlockLabel {
				if f := r.runBlock(ctx, b, nil); f != nil && fail == nil && !b.Base().ContinueOnFailure {
					fail = f
				}
				break
			}
		}
	}
	return fail
}

// runList runs a list of blocks in order, following next_block_label. skip
// names a block left out (the finally block).
func (r *run) runList(ctx context.Context, bs client.Blocks, sc *scope, skip string) *blockFailure {
	index := make(map[string]int, len(bs))
	for i, b := range bs {
		if _, dup := index[b.Base().Label]; !dup {
			index[b.Base().Label] = i
		}
	}
	for i := 0; i < len(bs); {
		b := bs[i]
		base := b.Base()
		if skip != "" && base.Label == skip {
			i++
			continue
		}
		if ctx.Err() != nil {
			return &blockFailure{label: base.Label, typ: b.BlockType(), err: ctx.Err()}
		}
		if fail := r.runBlock(ctx, b, sc); fail != nil {
			if errors.Is(fail.err, errStepLimit) || ctx.Err() != nil {
				return fail
			}
			switch {
			case base.ContinueOnFailure:
				r.e.log.Info("block failed; continuing", "block", base.Label, "reason", fail.err)
			case base.NextLoopOnFailure && sc != nil:
				fail.nextLoop = true
				return fail
			default:
				return fail
			}
		}
		if next := base.NextBlockLabel; next != "" {
			i = index[next]
		} else {
			i++
		}
	}
	return nil
}

// runBlock runs one block with its retries, stores its output, and takes a
// screenshot when it touched the page.
func (r *run) runBlock(ctx context.Context, b client.Block, sc *scope) *blockFailure {
	base := b.Base()
	attempts := 1 + max(0, maxRetries(b))
	var err error
	var out any
	n := 0
	for n < attempts {
		n++
		r.execs++
		if r.execs > maxExecutions {
			err = fmt.Errorf("the run executed %d blocks; next_block_label may route in a circle", maxExecutions)
			break
		}
		var touched bool
		out, touched, err = r.exec(ctx, b, sc)
		if touched {
			r.screenshot(ctx)
		}
		if out != nil {
			r.setOutput(base.Label, out, sc)
		}
		if err == nil || ctx.Err() != nil || !retryable(err) {
			break
		}
		if n < attempts {
			r.e.log.Info("block failed; retrying", "block", base.Label, "attempt", n, "reason", err)
		}
	}
	if err != nil {
		return &blockFailure{label: base.Label, typ: b.BlockType(), err: err, attempts: n}
	}
	return nil
}

func (r *run) setOutput(label string, v any, sc *scope) {
	key := label + "_output"
	r.outputs.set(key, v)
	if sc != nil && sc.iter != nil {
		sc.iter.set(key, v)
	}
}

// retryable reports whether a block that failed with err may be tried
// again: only a failure, not a template that cannot render, a goal judged
// unreachable, a step limit or a model that cannot be reached.
func retryable(err error) bool {
	var te *templateError
	var term *terminatedError
	var me *modelError
	return !errors.Is(err, errStepLimit) && !errors.As(err, &te) && !errors.As(err, &term) && !errors.As(err, &me)
}

func maxRetries(b client.Block) int {
	switch x := b.(type) {
	case *client.ActionBlock:
		return x.MaxRetries
	case *client.FileDownloadBlock:
		return x.MaxRetries
	case *client.NavigationBlock:
		return x.MaxRetries
	case *client.ExtractionBlock:
		return x.MaxRetries
	case *client.TaskBlock:
		return x.MaxRetries
	case *client.LoginBlock:
		return x.MaxRetries
	}
	return 0
}

// exec runs one attempt of a block. touched says whether it acted on the
// page (a screenshot follows).
func (r *run) exec(ctx context.Context, b client.Block, sc *scope) (out any, touched bool, err error) {
	switch x := b.(type) {
	case *client.GotoURLBlock:
		return r.gotoURL(ctx, x, sc)
	case *client.WaitBlock:
		return r.wait(ctx, x)
	case *client.ActionBlock:
		return r.action(ctx, x, sc)
	case *client.ForLoopBlock:
		out, err := r.forLoop(ctx, x, sc)
		return out, false, err
	case *client.HTTPRequestBlock:
		out, err := r.httpRequest(ctx, x, sc)
		return out, false, err
	case *client.PrintPageBlock:
		out, err := r.printPage(ctx, x, sc)
		return out, false, err
	case *client.FileDownloadBlock:
		return r.fileDownload(ctx, x, sc)
	case *client.NavigationBlock, *client.ExtractionBlock, *client.TaskBlock, *client.ValidationBlock,
		*client.TaskV2Block, *client.LoginBlock:
		return r.aiBlock(ctx, b, sc)
	case *client.TextPromptBlock:
		out, err := r.textPrompt(ctx, x, sc)
		return out, false, err
	}
	return nil, false, checkBlock(b, r.e.cfg.Models != nil)
}

// navigate loads url in the active tab.
func (r *run) navigate(ctx context.Context, url string) (page.Result, error) {
	r.notePrivateStart(url)
	pg, err := r.page(ctx)
	if err != nil {
		return page.Result{}, err
	}
	res, err := pg.GoTo(ctx, url)
	if err != nil {
		if res.Reason != "" {
			return res, errors.New(res.Reason)
		}
		return res, err
	}
	return res, nil
}

func (r *run) gotoURL(ctx context.Context, b *client.GotoURLBlock, sc *scope) (any, bool, error) {
	url, err := r.render(b.URL, sc)
	if err != nil {
		return nil, false, err
	}
	if strings.TrimSpace(url) == "" {
		return nil, false, errors.New("the url is empty")
	}
	rec, err := r.startStep(b.Label, actionRecord{Type: "goto_url", Text: shownURL(url)})
	if err != nil {
		return nil, false, err
	}
	res, err := r.navigate(ctx, url)
	r.endStep(rec, res.URL, "", err)
	if err != nil {
		return nil, true, err
	}
	return map[string]any{"url": res.URL}, true, nil
}

func (r *run) wait(ctx context.Context, b *client.WaitBlock) (any, bool, error) {
	sec := min(max(b.WaitSec, 0), MaxWaitSec)
	rec, err := r.startStep(b.Label, actionRecord{Type: "wait", Text: fmt.Sprintf("%d s", sec)})
	if err != nil {
		return nil, false, err
	}
	t := time.NewTimer(time.Duration(sec) * time.Second)
	defer t.Stop()
	select {
	case <-t.C:
		r.endStep(rec, "", "", nil)
	case <-ctx.Done():
		r.endStep(rec, "", "", ctx.Err())
		return nil, false, ctx.Err()
	}
	return map[string]any{"wait_sec": sec}, true, nil
}

// click finds the element of a selector (waiting up to timeout) and clicks
// it, once more when the page replaced the element in between.
func (r *run) click(ctx context.Context, selector string, timeout time.Duration) (page.Result, error) {
	var last page.Result
	err := r.onElement(ctx, selector, timeout, func(pg *page.Page, id string) (page.Result, error) {
		res, err := pg.Click(ctx, id)
		last = res
		return res, err
	})
	return last, err
}

// resolve finds the element of a selector in the active tab.
func (r *run) resolve(ctx context.Context, selector string, timeout time.Duration) (*page.Page, string, error) {
	pg, err := r.page(ctx)
	if err != nil {
		return nil, "", err
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, err := pg.Resolve(rctx, selector)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		if errors.Is(err, page.ErrNoMatch) {
			return nil, "", &noMatchError{selector: selector, timeout: timeout}
		}
		if serr := r.sess.Ended(ctx); serr != nil {
			return nil, "", fmt.Errorf("the browser session ended: %w", serr)
		}
		return nil, "", err
	}
	return pg, id, nil
}

// noMatchError is a selector that matched nothing in time.
type noMatchError struct {
	selector string
	timeout  time.Duration
}

func (e *noMatchError) Error() string {
	return fmt.Sprintf("no element matches the selector %q within %d ms", e.selector, e.timeout.Milliseconds())
}

func (e *noMatchError) Unwrap() error { return page.ErrNoMatch }

// actionErr prefers the Result's reason to the bare error.
func actionErr(res page.Result, err error) error {
	if res.Reason != "" && res.Reason != err.Error() {
		return fmt.Errorf("%s: %w", res.Reason, err)
	}
	return err
}

// action runs an action block: a click on its selector; with a model, the
// element its navigation_goal describes when the selector matches nothing
// or is absent (or first, with ai_fallback "proactive").
func (r *run) action(ctx context.Context, b *client.ActionBlock, sc *scope) (any, bool, error) {
	selector, err := r.render(b.Selector, sc)
	if err != nil {
		return nil, false, err
	}
	intention := b.NavigationGoal
	if strings.TrimSpace(intention) == "" {
		intention = b.Title
	}
	if intention, err = r.render(intention, sc); err != nil {
		return nil, false, err
	}
	canAI := strings.TrimSpace(intention) != "" && r.e.cfg.Models != nil
	if strings.TrimSpace(selector) == "" && !canAI {
		if r.e.cfg.Models == nil {
			return nil, false, fmt.Errorf("the selector rendered empty; an action without a selector needs a language model, but %w", errNoModel)
		}
		return nil, false, errors.New("the selector rendered empty and there is no navigation_goal saying what to act on")
	}
	touched := false
	if strings.TrimSpace(b.URL) != "" {
		url, err := r.render(b.URL, sc)
		if err != nil {
			return nil, false, err
		}
		rec, err := r.startStep(b.Label, actionRecord{Type: "goto_url", Text: shownURL(url)})
		if err != nil {
			return nil, false, err
		}
		touched = true
		res, err := r.navigate(ctx, url)
		r.endStep(rec, res.URL, "", err)
		if err != nil {
			return nil, true, err
		}
	}
	if strings.TrimSpace(selector) == "" || (canAI && b.AIFallback == "proactive") {
		return r.aiAction(ctx, b, intention, touched)
	}
	rec, err := r.startStep(b.Label, actionRecord{Type: "click", Text: selector})
	if err != nil {
		return nil, touched, err
	}
	doneBefore, failedBefore := len(r.sess.Downloads()), len(r.sess.FailedDownloads())
	timeout := r.e.cfg.SelectorTimeout
	if canAI {
		// The model takes over soon when the selector finds nothing.
		timeout = min(timeout, 3*time.Second)
	}
	res, err := r.click(ctx, selector, timeout)
	if err != nil {
		r.endStep(rec, res.URL, "", err)
		var nm *noMatchError
		if canAI && ctx.Err() == nil && r.sess.Err() == nil {
			r.e.log.Info("the selector failed; the model looks for the element", "block", b.Label, "selector", selector, "error", err)
			return r.aiAction(ctx, b, intention, true)
		}
		return nil, touched || !errors.As(err, &nm), err
	}
	out := map[string]any{"selector": selector, "url": res.URL, "downloaded_files": []any{}}
	if b.CompleteOnDownload {
		names, err := r.waitDownload(ctx, doneBefore, failedBefore, downloadTimeout(b.DownloadTimeout))
		r.endStep(rec, res.URL, downloaded(names), err)
		if err != nil {
			return out, true, err
		}
		out["downloaded_files"] = r.fileInfos(names)
	} else {
		r.syncDownloads()
		r.endStep(rec, res.URL, loaded(res), nil)
	}
	return out, true, nil
}

func (r *run) fileInfos(names []string) []any {
	infos := make([]any, len(names))
	for i, n := range names {
		infos[i] = r.fileInfo(n)
	}
	return infos
}

func downloadTimeout(sec *float64) time.Duration {
	if sec == nil || *sec <= 0 {
		return defaultDownloadTimeout
	}
	return time.Duration(min(*sec, 3600) * float64(time.Second))
}

func (r *run) fileDownload(ctx context.Context, b *client.FileDownloadBlock, sc *scope) (any, bool, error) {
	if strings.TrimSpace(b.URL) == "" {
		return r.aiFileDownload(ctx, b, sc)
	}
	url, err := r.render(b.URL, sc)
	if err != nil {
		return nil, false, err
	}
	if strings.TrimSpace(url) == "" {
		return nil, false, errors.New("the url rendered empty; finding a download on a page needs a language model")
	}
	rec, err := r.startStep(b.Label, actionRecord{Type: "download", Text: shownURL(url)})
	if err != nil {
		return nil, false, err
	}
	doneBefore, failedBefore := len(r.sess.Downloads()), len(r.sess.FailedDownloads())
	timeout := downloadTimeout(b.DownloadTimeout)
	res, navErr := r.navigate(ctx, url)
	if navErr == nil {
		// The URL showed a page. A download may still start from it (a
		// redirect or a script); give it a moment, no more.
		timeout = min(timeout, 3*time.Second)
	}
	names, err := r.waitDownload(ctx, doneBefore, failedBefore, timeout)
	if err != nil {
		switch {
		case navErr != nil && !strings.Contains(navErr.Error(), "download"):
			err = navErr
		case navErr == nil:
			err = fmt.Errorf("%s opened a page, not a download (finding the download on a page needs a language model)", url)
		}
		r.endStep(rec, res.URL, "", err)
		return nil, true, err
	}
	r.endStep(rec, res.URL, downloaded(names), nil)
	return map[string]any{"url": url, "downloaded_files": r.fileInfos(names)}, true, nil
}

func (r *run) forLoop(ctx context.Context, b *client.ForLoopBlock, sc *scope) (any, error) {
	items, err := r.loopValues(b, sc)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		if b.CompleteIfEmpty {
			return []any{}, nil
		}
		return []any{}, errors.New("the list to loop over is empty (set complete_if_empty to accept that)")
	}
	results := make([]any, 0, len(items))
	for i, item := range items {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		inner := &scope{parent: sc, iter: newOutputs(), vals: map[string]any{
			"current_value": item, "current_item": item, "current_index": i,
		}}
		fail := r.runList(ctx, b.LoopBlocks, inner, "")
		// Kept as ordered JSON: templates read it (tmpl decodes it on the
		// way) and the run's output keeps the blocks' order.
		results = append(results, inner.iter.rawObject())
		if fail != nil {
			if fail.nextLoop {
				continue
			}
			return results, fmt.Errorf("iteration %d (current_index %d): block %q (%s) failed: %w", i+1, i, fail.label, fail.typ, fail.err)
		}
	}
	return results, nil
}

// loopValues returns the list a for_loop iterates over.
func (r *run) loopValues(b *client.ForLoopBlock, sc *scope) ([]any, error) {
	var path string
	switch {
	case b.LoopOver != nil && b.LoopOver.Key != "":
		path = b.LoopOver.Key
	case b.LoopOverParameterKey != "":
		path = b.LoopOverParameterKey
	default:
		path = strings.TrimSpace(b.LoopVariableReference)
		if strings.HasPrefix(path, "{{") && strings.HasSuffix(path, "}}") {
			path = strings.TrimSpace(path[2 : len(path)-2])
		}
	}
	v, err := tmpl.Lookup(path, r.vars(sc))
	if err != nil {
		return nil, &templateError{fmt.Errorf("loop over {{ %s }}: %w", path, err)}
	}
	return asList(v), nil
}

// asList turns a loop value into items: a list as it is, a JSON text of a
// list decoded, null as nothing, anything else as a list of one.
func asList(v any) []any {
	if raw, ok := v.(json.RawMessage); ok {
		var x any
		if json.Unmarshal(raw, &x) == nil {
			v = x
		}
	}
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	case string:
		s := strings.TrimSpace(x)
		if strings.HasPrefix(s, "[") {
			var list []any
			if json.Unmarshal([]byte(s), &list) == nil {
				return list
			}
		}
		if s == "" {
			return nil
		}
	}
	return []any{v}
}
