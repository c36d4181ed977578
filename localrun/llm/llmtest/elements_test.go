package llmtest_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// observe renders a page of the test site in a real Chromium, as the
// engine will put it in prompts.
func observe(t *testing.T, paths ...string) []*page.Observation {
	t.Helper()
	bin := os.Getenv("CHROME_PATH")
	if bin == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
			if p, err := exec.LookPath(name); err == nil {
				bin = p
				break
			}
		}
	}
	if bin == "" {
		t.Skip("no Chromium binary found (install chromium, or set CHROME_PATH)")
	}
	site := testsite.Start(t)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", "new"),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	ctx, cancel := context.WithTimeout(tab, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 720)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	p := page.New(tab)
	t.Cleanup(p.Close)
	var out []*page.Observation
	for _, path := range paths {
		if res, err := p.GoTo(ctx, site.URL(path)); err != nil || !res.OK {
			t.Fatalf("go to %s: %+v %v", path, res, err)
		}
		obs, err := p.Observe(ctx, page.ObserveOptions{NoText: true})
		if err != nil {
			t.Fatalf("observe %s: %v", path, err)
		}
		out = append(out, obs)
	}
	return out
}

// idWhere is the id of the one observed element for which f holds.
func idWhere(t *testing.T, obs *page.Observation, f func(page.Element) bool) string {
	t.Helper()
	var ids []string
	for _, e := range obs.Elements {
		if f(e) {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("%d observed elements fit, want 1: %v", len(ids), ids)
	}
	return ids[0]
}

func TestElementIDOnRealRenderings(t *testing.T) {
	obs := observe(t, testsite.PageLogin, testsite.PageForm)
	login, form := obs[0], obs[1]

	t.Run("every element line is read", func(t *testing.T) {
		for _, o := range obs {
			parsed := llmtest.Elements(o.Rendered)
			if o.Truncated == 0 && len(parsed) != len(o.Elements) {
				t.Errorf("%s: %d element lines read, %d elements observed\n%s", o.URL, len(parsed), len(o.Elements), o.Rendered)
			}
			ids := map[string]bool{}
			for _, e := range o.Elements {
				ids[e.ID] = true
			}
			for _, e := range parsed {
				if !ids[e.ID] {
					t.Errorf("%s: line %q has an id the page did not issue", o.URL, e.Line)
				}
			}
		}
	})

	cases := []struct {
		obs  *page.Observation
		name string
		want func(page.Element) bool
	}{
		{login, "Sign in", func(e page.Element) bool { return e.Text == "Sign in" && e.Tag == "button" }},
		{login, "username", func(e page.Element) bool { return e.Name == "username" }},
		{login, "  Password ", func(e page.Element) bool { return e.Name == "password" }},
		{form, "Email", func(e page.Element) bool { return e.Type == "email" }},
		{form, "Country", func(e page.Element) bool { return e.Tag == "select" && e.Name == "country" }},
		{form, "Submit", func(e page.Element) bool { return e.Tag == "button" && e.Text == "Submit" }},
		{form, "Controlled", func(e page.Element) bool { return e.Label == "Controlled" }},
		{form, "react-like", func(e page.Element) bool { return strings.Contains(e.Label, "React-like") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := llmtest.ElementID(c.obs.Rendered, c.name)
			if err != nil {
				t.Fatalf("%v\n%s", err, c.obs.Rendered)
			}
			if want := idWhere(t, c.obs, c.want); got != want {
				t.Errorf("ElementID(%q) = %s, want %s\n%s", c.name, got, want, c.obs.Rendered)
			}
		})
	}

	t.Run("no such element", func(t *testing.T) {
		_, err := llmtest.ElementID(login.Rendered, "Create account")
		if err == nil || !strings.Contains(err.Error(), `no element named "Create account"`) || !strings.Contains(err.Error(), `"Sign in"`) {
			t.Errorf("error %v, want one listing the elements", err)
		}
	})

	t.Run("a script that clicks Sign in", func(t *testing.T) {
		// How an engine test will use it: the model's answer names the
		// element by its text, whatever the ids are.
		srv := llmtest.New(t, llmtest.Step{Kind: llm.KindPlan, Match: `Sign in`, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
			id, err := r.ElementID("Sign in")
			if err != nil {
				return llmtest.Reply{}, err
			}
			return llmtest.JSON(map[string]any{"actions": []any{map[string]string{"type": "click", "id": id}}}), nil
		})})
		m, err := llm.New(srv.OpenAIConfig())
		if err != nil {
			t.Fatal(err)
		}
		resp, err := m.Complete(ctxFor(t), &llm.Request{
			Kind: llm.KindPlan, System: "Sign in.",
			Messages: []llm.Message{llm.UserText("Earlier page:\n" + form.Rendered), llm.UserText(login.Rendered)},
			Schema:   &llm.Schema{Name: "plan", JSON: json.RawMessage(`{"type":"object","properties":{"actions":{"type":"array"}}}`)},
		})
		if err != nil {
			t.Fatal(err)
		}
		var plan struct{ Actions []struct{ Type, ID string } }
		if err := json.Unmarshal(resp.JSON, &plan); err != nil || len(plan.Actions) != 1 {
			t.Fatalf("plan %s: %v", resp.JSON, err)
		}
		want := idWhere(t, login, func(e page.Element) bool { return e.Text == "Sign in" })
		if plan.Actions[0].ID != want {
			t.Errorf("clicked %s, want %s", plan.Actions[0].ID, want)
		}
	})
}

func TestElementsFromText(t *testing.T) {
	// A rendering with the markers page writes around element lines.
	text := "Page: Shop\nURL: http://127.0.0.1/\nInteractive elements:\n" +
		"-- top document --\n" +
		"[e1] link \"Home\" -> /\n" +
		"[e2] input:search placeholder=\"Search products\" value=\"shoes\"\n" +
		"[e3] button \"Add \\\"Blue\\\" to cart\" label=\"Add to cart\"\n" +
		"  … 37 more here (not shown)\n" +
		"[f1:e9] checkbox \"I agree\" checked required\n"
	got := llmtest.Elements(text)
	if len(got) != 4 {
		t.Fatalf("%d elements: %+v", len(got), got)
	}
	if e := got[1]; e.ID != "e2" || e.Kind != "input:search" || e.Placeholder != "Search products" || e.Value != "shoes" || e.Name != "" {
		t.Errorf("search field %+v", e)
	}
	if e := got[2]; e.Name != `Add "Blue" to cart` || e.Label != "Add to cart" {
		t.Errorf("button %+v", e)
	}
	for name, want := range map[string]string{"search products": "e2", "add to cart": "e3", "i AGREE": "f1:e9", "home": "e1"} {
		if id, err := llmtest.ElementID(text, name); err != nil || id != want {
			t.Errorf("ElementID(%q) = %q, %v; want %s", name, id, err, want)
		}
	}
	if _, err := llmtest.ElementID(text, "o"); err == nil || !strings.Contains(err.Error(), "elements fit") {
		t.Errorf("an ambiguous name: %v", err)
	}
	e, err := llmtest.FindElement(text, func(e llmtest.Element) bool { return e.Kind == "checkbox" })
	if err != nil || e.ID != "f1:e9" {
		t.Errorf("FindElement: %+v %v", e, err)
	}
}
