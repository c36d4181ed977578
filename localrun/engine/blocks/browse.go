package blocks

// The blocks that act on the browser without a model: goto_url, wait,
// action (with a selector) and file_download (with a url). An action or a
// file_download a model must do is in model.go.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// MaxWaitSec caps a wait block.
const MaxWaitSec = 300

// defaultDownloadTimeout is how long a block waits for its download when
// the block gives no download_timeout.
const defaultDownloadTimeout = 60 * time.Second

func (in browserBlocks) gotoURL(ctx context.Context, b *client.GotoURLBlock, sc *scope) (any, bool, error) {
	url, err := sc.renderURL(b.URL)
	if err != nil {
		return nil, false, err
	}
	if strings.TrimSpace(url) == "" {
		return nil, false, errors.New("the url is empty")
	}
	landed, touched, err := in.goTo(ctx, b.Label, url)
	if err != nil {
		return nil, touched, err
	}
	return map[string]any{"url": landed}, true, nil
}

// goTo opens url as a goto_url step of the block label and returns the
// URL the page landed on; touched says whether the page was acted on
// (the step started).
func (in browserBlocks) goTo(ctx context.Context, label, url string) (landed string, touched bool, err error) {
	rec, err := in.steps.Start(label, steplog.Action{Type: "goto_url", Text: steplog.ShownURL(url)})
	if err != nil {
		return "", false, err
	}
	res, err := in.sess.Navigate(ctx, url)
	in.steps.End(rec, res.URL, "", err)
	return res.URL, true, err
}

// openBlockURL opens a block's url, when it has one, before the block
// acts on the page; touched says whether the page was acted on.
func (in browserBlocks) openBlockURL(ctx context.Context, label, rawURL string, sc *scope) (touched bool, err error) {
	if strings.TrimSpace(rawURL) == "" {
		return false, nil
	}
	url, err := sc.renderURL(rawURL)
	if err != nil {
		return false, err
	}
	_, touched, err = in.goTo(ctx, label, url)
	return touched, err
}

func (in browserBlocks) wait(ctx context.Context, b *client.WaitBlock) (any, bool, error) {
	sec := min(max(b.WaitSec, 0), MaxWaitSec)
	rec, err := in.steps.Start(b.Label, steplog.Action{Type: "wait", Text: fmt.Sprintf("%d s", sec)})
	if err != nil {
		return nil, false, err
	}
	t := time.NewTimer(time.Duration(sec) * time.Second)
	defer t.Stop()
	select {
	case <-t.C:
		in.steps.End(rec, "", "", nil)
	case <-ctx.Done():
		in.steps.End(rec, "", "", ctx.Err())
		return nil, false, ctx.Err()
	}
	// A wait of no time changed nothing to see: no screenshot (a retry
	// loop of them would take one identical screenshot per pass).
	return map[string]any{"wait_sec": sec}, sec > 0, nil
}

// action runs an action block: a click on its selector; with a model, the
// element its navigation_goal describes when the selector matches nothing
// or is absent (or first, with ai_fallback "proactive").
func (in browserBlocks) action(ctx context.Context, b *client.ActionBlock, sc *scope) (any, bool, error) {
	selector, err := sc.render(b.Selector)
	if err != nil {
		return nil, false, err
	}
	intention := b.NavigationGoal
	if strings.TrimSpace(intention) == "" {
		intention = b.Title
	}
	if intention, err = sc.render(intention); err != nil {
		return nil, false, err
	}
	canAI := strings.TrimSpace(intention) != "" && in.models.Configured()
	if strings.TrimSpace(selector) == "" && !canAI {
		if !in.models.Configured() {
			return nil, false, fmt.Errorf("the selector rendered empty; an action without a selector needs a language model, but %w", agent.ErrNoModel)
		}
		return nil, false, errors.New("the selector rendered empty and there is no navigation_goal saying what to act on")
	}
	touched, err := in.openBlockURL(ctx, b.Label, b.URL, sc)
	if err != nil {
		return nil, touched, err
	}
	if strings.TrimSpace(selector) == "" || (canAI && b.AIFallback == "proactive") {
		return in.model.modelAction(ctx, b, intention, touched)
	}
	rec, err := in.steps.Start(b.Label, steplog.Action{Type: "click", Text: selector})
	if err != nil {
		return nil, touched, err
	}
	mark := in.sess.Mark()
	timeout := in.selectorTimeout
	if canAI {
		// The model takes over soon when the selector finds nothing.
		timeout = min(timeout, 3*time.Second)
	}
	res, err := in.sess.Click(ctx, selector, timeout)
	if err != nil {
		in.steps.End(rec, res.URL, "", err)
		var nm *runbrowser.NoMatchError
		if canAI && ctx.Err() == nil && in.sess.Err() == nil {
			in.logger.Info("the selector failed; the model looks for the element", "block", b.Label, "selector", selector, "error", err)
			return in.model.modelAction(ctx, b, intention, true)
		}
		return nil, touched || !errors.As(err, &nm), err
	}
	out := map[string]any{"selector": selector, "url": res.URL, "downloaded_files": []any{}}
	if b.CompleteOnDownload {
		names, err := in.sess.WaitDownload(ctx, mark, downloadTimeout(b.DownloadTimeout))
		in.steps.End(rec, res.URL, downloaded(names), err)
		if err != nil {
			return out, true, err
		}
		out["downloaded_files"] = in.files.Infos(names)
	} else {
		in.sess.SyncDownloads()
		in.steps.End(rec, res.URL, loaded(res), nil)
	}
	return out, true, nil
}

func downloadTimeout(sec *float64) time.Duration {
	if sec == nil || *sec <= 0 {
		return defaultDownloadTimeout
	}
	return time.Duration(min(*sec, 3600) * float64(time.Second))
}

func (in browserBlocks) fileDownload(ctx context.Context, b *client.FileDownloadBlock, sc *scope) (any, bool, error) {
	if strings.TrimSpace(b.URL) == "" {
		return in.model.modelDownload(ctx, b, sc)
	}
	url, err := sc.renderURL(b.URL)
	if err != nil {
		return nil, false, err
	}
	if strings.TrimSpace(url) == "" {
		return nil, false, errors.New("the url rendered empty; finding a download on a page needs a language model")
	}
	rec, err := in.steps.Start(b.Label, steplog.Action{Type: "download", Text: steplog.ShownURL(url)})
	if err != nil {
		return nil, false, err
	}
	mark := in.sess.Mark()
	timeout := downloadTimeout(b.DownloadTimeout)
	res, navErr := in.sess.Navigate(ctx, url)
	if navErr == nil {
		// The URL showed a page. A download may still start from it (a
		// redirect or a script); give it a moment, no more.
		timeout = min(timeout, 3*time.Second)
	}
	names, err := in.sess.WaitDownload(ctx, mark, timeout)
	if err != nil {
		switch {
		case navErr != nil && !strings.Contains(navErr.Error(), "download"):
			err = navErr
		case navErr == nil:
			err = fmt.Errorf("%s opened a page, not a download (finding the download on a page needs a language model)", url)
		}
		in.steps.End(rec, res.URL, "", err)
		return nil, true, err
	}
	in.steps.End(rec, res.URL, downloaded(names), nil)
	return map[string]any{"url": url, "downloaded_files": in.files.Infos(names)}, true, nil
}

// downloaded says which files a step downloaded.
func downloaded(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "downloaded " + strings.Join(names, ", ")
}

// loaded says where an action led, when it loaded a page.
func loaded(res page.Result) string {
	if !res.Navigated || res.URL == "" {
		return ""
	}
	return "loaded " + res.URL
}
