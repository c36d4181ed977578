package runbrowser

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/engine/page"
)

// view is the run's browser as the agent loop sees it (agent.Browser): the page
// of its last observation, acted on with the page package's trusted input.
type view struct {
	s      *Browser
	pg     *page.Page        // the page of the last observation
	tab    context.Context   // its tab
	tabIDs map[string]string // the short ids of the tabs it listed -> target ids
}

var _ agent.Browser = (*view)(nil)

func (v *view) Observe(ctx context.Context, settleFirst bool) (*page.Observation, time.Duration, error) {
	start := time.Now()
	pg, err := v.s.page(ctx)
	if err != nil {
		return nil, 0, v.s.browserErr(ctx, err)
	}
	if settleFirst {
		settle(ctx, pg, v.s.watches[v.s.tab])
	}
	settled := time.Since(start)
	obs, tabIDs, err := v.s.look(ctx, pg)
	if err != nil {
		return nil, settled, v.s.browserErr(ctx, err)
	}
	v.pg, v.tab, v.tabIDs = pg, v.s.tab, tabIDs
	return obs, settled, nil
}

func (v *view) Act(ctx context.Context, a agent.Action) (page.Result, error) {
	pg := v.pg
	if pg == nil {
		return page.Result{}, errors.New("the page was not read yet")
	}
	var res page.Result
	var err error
	switch a.Type {
	case "click":
		res, err = pg.Click(ctx, a.ID)
	case "input_text":
		res, err = v.s.TypeText(ctx, pg, a.ID, a.Text)
	case "select_option":
		res, err = pg.SelectOption(ctx, a.ID, a.Text)
	case "upload_file":
		path, ferr := v.s.files.FetchUpload(ctx, a.Text)
		if ferr != nil {
			return page.Result{Reason: ferr.Error()}, nil
		}
		res, err = pg.UploadFile(ctx, a.ID, []string{path})
	case "hover":
		res, err = pg.Hover(ctx, a.ID)
	case "press_key":
		res, err = pg.KeyPress(ctx, a.Text)
	case "scroll":
		res, err = pg.Scroll(ctx, a.ID, 0, a.DY)
	case "wait":
		res, err = pg.Wait(ctx, a.Wait)
	case "goto_url":
		res, err = v.s.goTo(ctx, pg, a.Text)
	case "go_back":
		res, err = pg.GoBack(ctx)
	case "answer_dialog":
		v.s.bctx.AnswerNextPrompt(a.Text)
		res = page.Result{OK: true, Detail: "the next prompt will be answered"}
	case "switch_tab", "close_tab":
		id, ok := v.tabIDs[a.Text]
		switch {
		case !ok:
			return res, fmt.Errorf("there is no tab %q", a.Text)
		case a.Type == "switch_tab":
			return res, v.s.bctx.SwitchTab(ctx, id)
		}
		return res, v.s.bctx.CloseTab(ctx, id)
	default:
		return res, fmt.Errorf("unknown action type %q", a.Type)
	}
	if err != nil {
		err = ActionErr(res, err)
	}
	return res, err
}

// TabChanged reports whether another tab than the view's is now active. A
// tab that is opening (a popup the last action opened) is waited for, as
// long as the browser takes to attach to a tab; otherwise it answers at
// once.
func (v *view) TabChanged(ctx context.Context) bool {
	tctx, cancel := context.WithTimeout(ctx, browser.TabAttachTimeout)
	defer cancel()
	if v.s.bctx == nil {
		return false
	}
	current, err := v.s.bctx.ActiveTab(tctx)
	return err == nil && current != v.tab
}

func (v *view) Downloads() int {
	if v.s.bctx == nil {
		return 0
	}
	return len(v.s.bctx.Downloads().Completed())
}

func (v *view) DownloadsSince(n int) []string {
	if v.s.SyncDownloads(); v.s.bctx == nil {
		return nil
	}
	all := v.s.bctx.Downloads().Completed()
	var out []string
	for _, d := range all[min(n, len(all)):] {
		if name := v.s.files.seen[d.Path]; name != "" {
			out = append(out, name)
		}
	}
	return out
}

func (v *view) DownloadDone(ctx context.Context, n int, timeout time.Duration) (bool, error) {
	s := v.s.bctx
	if s == nil {
		return false, nil
	}
	if len(s.Downloads().Completed()) > n && s.Downloads().Pending() == 0 {
		v.s.SyncDownloads()
		return true, nil
	}
	if s.Downloads().Pending() == 0 {
		return false, nil
	}
	if _, err := v.s.WaitDownload(ctx, Mark{done: n, failed: len(s.Downloads().Failed())}, timeout); err != nil {
		return false, err
	}
	return true, nil
}

func (v *view) StartedPrivate() bool { return v.s.privateStart }
