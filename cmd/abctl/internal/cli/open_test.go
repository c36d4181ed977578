package cli

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// TestOpenCommand: abctl open asks the daemon for a one-time sign-in link
// to its web UI; --print (or no terminal and no BROWSER) prints it, and
// the link signs a browser in once, on the page of the id given; BROWSER
// names the program that receives it; a wrong key or id says what to do.
func TestOpenCommand(t *testing.T) {
	e := newCLIEnv(t)

	// --print: one line, the link; its token only in the fragment.
	r := e.run("", "open", "--print", "wr_494469342201718946").expect(t, 0)
	link := strings.TrimSpace(r.stdout)
	if strings.Count(r.stdout, "\n") != 1 || !strings.HasPrefix(link, e.baseURL+"/ui/sign-in?next=%2Fui%2Fruns%2Fwr_494469342201718946#token=") {
		t.Fatalf("open --print printed %q", r.stdout)
	}
	token := strings.SplitN(link, "#token=", 2)[1]
	signIn := func() *http.Response {
		t.Helper()
		hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := hc.PostForm(e.baseURL+"/ui/sign-in/link", url.Values{"token": {token}, "next": {"/ui/runs/wr_494469342201718946"}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := signIn(); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/runs/wr_494469342201718946" {
		t.Fatalf("signing in with the printed link: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res := signIn(); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the printed link used twice: %d, want 401", res.StatusCode)
	}

	// No terminal and no BROWSER: the link of the runs list is printed,
	// and an agent's id opens the agent's page.
	r = e.run("", "open").expect(t, 0)
	if !strings.HasPrefix(r.stdout, e.baseURL+"/ui/sign-in?next=%2Fui%2Fruns#token=") {
		t.Errorf("open without a terminal printed %q", r.stdout)
	}
	r = e.run("", "open", "--print", "wpid_0123").expect(t, 0)
	contains(t, "stdout", r.stdout, "next=%2Fui%2Fagents%2Fwpid_0123#token=")

	// BROWSER, with an argument of its own: the program gets the link last.
	dir := t.TempDir()
	got := filepath.Join(dir, "args")
	script := filepath.Join(dir, "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > '"+got+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.vars["BROWSER"] = script + " --new-window"
	r = e.run("", "open", "tsk_v2_494469342201718946").expect(t, 0)
	if r.stdout != "" {
		t.Errorf("open with BROWSER wrote %q on stdout", r.stdout)
	}
	contains(t, "stderr", r.stderr, "Opened "+e.baseURL+"/ui/runs/tsk_v2_494469342201718946 in your browser")
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatalf("BROWSER was not run: %v", err)
	}
	args := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(args) != 2 || args[0] != "--new-window" || !strings.HasPrefix(args[1], e.baseURL+"/ui/sign-in?next=%2Fui%2Fruns%2Ftsk_v2_494469342201718946#token=") {
		t.Errorf("BROWSER received %q", args)
	}
	if strings.Contains(r.stderr, "token=") {
		t.Errorf("stderr shows the link's token: %s", r.stderr)
	}

	// A BROWSER that fails: the error names it, not the link.
	e.vars["BROWSER"] = filepath.Join(dir, "no-such-browser")
	r = e.run("", "open").expect(t, 1)
	contains(t, "stderr", r.stderr, "could not open a browser with BROWSER's program", "abctl open --print")
	if strings.Contains(r.stderr, "token=") {
		t.Errorf("stderr shows the link's token: %s", r.stderr)
	}
	delete(e.vars, "BROWSER")

	// --print never runs BROWSER.
	e.vars["BROWSER"] = filepath.Join(dir, "no-such-browser")
	e.run("", "open", "--print").expect(t, 0)
	delete(e.vars, "BROWSER")

	// The shell completes run ids.
	run, err := e.client.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: scripted.Prefix + "steps=1"})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(run.RunID)
	if cands, _ := e.complete("open", ""); !slices.Contains(cands, run.RunID) {
		t.Errorf("abctl open completes %q, want %s among them", cands, run.RunID)
	}

	r = e.run("", "open", "--print", "Fld 1").expect(t, 2)
	contains(t, "stderr", r.stderr, `"Fld 1" is neither a run id`, "abctl get runs")

	// An agent's name, as apply and get take it: its page once the name
	// is resolved; a name no agent has says so.
	e.run("", "apply", "-f", e.write("agents/contact-form.yaml", contactForm)).expect(t, 0)
	r = e.run("", "open", "--print", "contact-form").expect(t, 0)
	contains(t, "stdout", r.stdout, "next=%2Fui%2Fagents%2Fwpid_")
	r = e.run("", "open", "--print", "agent/contact-form").expect(t, 0)
	contains(t, "stdout", r.stdout, "next=%2Fui%2Fagents%2Fwpid_")
	r = e.run("", "open", "--print", "no-such-agent").expect(t, 1)
	contains(t, "stderr", r.stderr, "no-such-agent", "abctl get agents")

	e.vars["ABCTL_API_KEY"] = "abk_not_the_daemons_key_0000000000"
	r = e.run("", "open", "--print").expect(t, 4)
	contains(t, "stderr", r.stderr, "403", "Hint:", "ABCTL_API_KEY")
	if r.stdout != "" {
		t.Errorf("a refused key printed %q", r.stdout)
	}

	// A service without a web UI (the hosted service) answers 404.
	hosted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"detail":"Not Found"}`))
	}))
	defer hosted.Close()
	e.vars["ABCTL_BASE_URL"] = hosted.URL
	r = e.run("", "open", "--print").expect(t, 1)
	contains(t, "stderr", r.stderr, "has no web UI", "not the hosted service", "abctl config view")
}
