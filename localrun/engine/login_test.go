package engine_test

// Logged-in automation: a credential parameter and a login block on the
// test site's secure sign-in (a password, then a TOTP second factor), with
// and without a model; the secrets reach the site and nothing else.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/client/webhook"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/internal/totp"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/secrets"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

const (
	loginUser     = "ada@example.com"
	loginPassword = "correct-horse-battery-staple"
	loginTOTP     = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
)

// vault is the credentials of a test, as the daemon's store gives them.
type vault map[string]any

func (v vault) Credential(_ context.Context, _, id string) (client.CredentialType, []byte, error) {
	c, ok := v[id]
	if !ok {
		return "", nil, errors.New("not found")
	}
	data, err := json.Marshal(c)
	return c.(client.CredentialData).CredentialType(), data, err
}

func (v vault) TakeTOTPCode(context.Context, string, string, executor.CodeFilter) (*client.TOTPCode, error) {
	return nil, nil
}

func (v vault) FetchTOTPCode(context.Context, string, string, string) (string, error) {
	return "", nil
}

func loginAgent(site *testsite.Site, goal string) client.WorkflowDefinition {
	return client.WorkflowDefinition{
		Parameters: []client.Parameter{{Key: "portal", ParameterType: client.ParameterTypeCredential, CredentialID: "cred_1"}},
		Blocks: client.Blocks{
			&client.LoginBlock{BlockBase: base("sign_in"), URL: site.URL(testsite.PageSecureLogin), NavigationGoal: goal, ParameterKeys: []string{"portal"}},
			gotoBlock("invoices", site.URL(testsite.PageSecureAccount)),
		},
	}
}

// noSecretIn fails the test when a file of dir holds one of the secrets.
func noSecretIn(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds the secret %q", path, s)
			}
		}
		return nil
	})
	if n == 0 {
		t.Errorf("the run wrote no file in %s: the search proves nothing", dir)
	}
}

// TestLoginWithoutModel: the login block fills the sign-in by the shape of
// its forms: the username and the password, then the one-time code made
// from the credential's authenticator secret. The site receives the real
// values; the step log shows placeholders.
func TestLoginWithoutModel(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	if err := site.AddAccount(loginUser, loginPassword, loginTOTP); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, engine.Config{Vault: vault{"cred_1": &client.PasswordCredential{Username: loginUser, Password: loginPassword, TOTP: loginTOTP}}})
	j := job(t, loginAgent(site, ""), nil)
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	if ev := waitEvent(t, site, testsite.EventSecureLogin); ev.Form.Get("username") != loginUser || ev.Form.Get("password") != loginPassword {
		t.Errorf("the site received %v", ev.Form)
	}
	if ev := waitEvent(t, site, testsite.EventSecureVerify); len(ev.Form.Get("code")) != 6 {
		t.Errorf("the code sent: %v", ev.Form)
	}
	if n := site.SignIns(loginUser); n != 1 {
		t.Errorf("signed in %d times", n)
	}
	out := outputOf(t, res)
	if o, _ := out["sign_in_output"].(map[string]any); o["signed_in"] != true || !strings.Contains(o["url"].(string), testsite.PageSecureAccount) {
		t.Errorf("sign_in_output %v", out["sign_in_output"])
	}
	secretsMasked(t, readSteps(t, j.Dir))
	noSecretIn(t, j.Dir, loginPassword, loginTOTP, ev(site).Form.Get("code"))
}

// lengthRE finds a number of characters, which a secret's step must not
// tell.
var lengthRE = regexp.MustCompile(`\d+ (characters|chars|digits)`)

// secretsMasked checks the typing of a sign-in in a step log: the username
// as it is, then the password and the one-time code each as the one mask
// (secrets.Mask), with no length in what their steps say.
func secretsMasked(t *testing.T, steps stepsFile) {
	t.Helper()
	var typed []string
	for _, s := range steps.Steps {
		for _, a := range s.Actions {
			if a.Type != "input_text" {
				continue
			}
			typed = append(typed, a.Text)
			if a.Text == loginUser {
				continue
			}
			if a.Text != secrets.Mask || lengthRE.MatchString(a.Result) || strings.Contains(a.Result, "<secret:") {
				t.Errorf("a secret typed shows as %q: %q", a.Text, a.Result)
			}
		}
	}
	if got, want := strings.Join(typed, " | "), loginUser+" | "+secrets.Mask+" | "+secrets.Mask; got != want {
		t.Errorf("typed %s, want %s", got, want)
	}
}

func ev(site *testsite.Site) testsite.Event {
	for _, e := range site.Events() {
		if e.Kind == testsite.EventSecureVerify {
			return e
		}
	}
	return testsite.Event{}
}

// TestLoginRefused: a wrong password fails the block with what the page
// says, and the reason holds no secret.
func TestLoginRefused(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	if err := site.AddAccount(loginUser, loginPassword, ""); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, engine.Config{Vault: vault{"cred_1": &client.PasswordCredential{Username: loginUser, Password: "not-" + loginPassword}}})
	j := job(t, loginAgent(site, ""), nil)
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, "The username or password is wrong") ||
		strings.Contains(res.FailureReason, loginPassword) {
		t.Errorf("status %s: %s", res.Status, res.FailureReason)
	}
	if n := site.SignIns(loginUser); n != 0 {
		t.Errorf("signed in %d times with a wrong password", n)
	}
	noSecretIn(t, j.Dir, loginPassword)

	// A credential that does not exist fails the run before a browser
	// opens.
	e2 := newEngine(t, engine.Config{Vault: vault{}})
	res = e2.Execute(t.Context(), job(t, loginAgent(site, ""), nil), &progress{})
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, `credential parameter "portal": credential cred_1`) {
		t.Errorf("an unknown credential: %s %s", res.Status, res.FailureReason)
	}
}

// TestLoginRefusedModelNotAsked: with a model configured, a wrong
// password still fails with what the page says: the refusal is final,
// and the model is not asked to sign in again with the same credential
// (it used to be, and a model that could not be used then hid the
// page's message behind its own error).
func TestLoginRefusedModelNotAsked(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	if err := site.AddAccount(loginUser, loginPassword, ""); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t) // a model with nothing to say: any call fails
	e := modelEngine(t, srv, engine.Config{Vault: vault{"cred_1": &client.PasswordCredential{Username: loginUser, Password: "not-" + loginPassword}}})
	res := e.Execute(t.Context(), job(t, loginAgent(site, ""), nil), &progress{})
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, "the page says: The username or password is wrong.") {
		t.Errorf("status %s: %s", res.Status, res.FailureReason)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("the model was called %d times after the site refused the credential", n)
	}
}

// TestLoginRefusedErrorPage: a sign-in whose wrong password leads to an
// error page without a form (the members sign-in's "Sign-in failed") fails
// with what that page says; it used to be taken for the page behind the
// sign-in.
func TestLoginRefusedErrorPage(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	e := newEngine(t, engine.Config{Vault: vault{"cred_1": &client.PasswordCredential{Username: testsite.MembersUser, Password: "not-" + testsite.MembersPassword}}})
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{{Key: "portal", ParameterType: client.ParameterTypeCredential, CredentialID: "cred_1"}},
		Blocks:     client.Blocks{&client.LoginBlock{BlockBase: base("sign_in"), URL: site.URL(testsite.PageMembersLogin), ParameterKeys: []string{"portal"}}},
	}
	j := job(t, def, nil)
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, "Sign-in failed") ||
		!strings.Contains(res.FailureReason, "The username or the password is wrong.") {
		t.Errorf("status %s: %s", res.Status, res.FailureReason)
	}
	if ev := waitEvent(t, site, testsite.EventMembersLogin); ev.Form.Get("ok") != "false" {
		t.Errorf("the site received %v", ev.Form)
	}
	noSecretIn(t, j.Dir, "not-"+testsite.MembersPassword)

	// The right password signs in: the page behind it is no error page.
	e2 := newEngine(t, engine.Config{Vault: vault{"cred_1": &client.PasswordCredential{Username: testsite.MembersUser, Password: testsite.MembersPassword}}})
	if res := e2.Execute(t.Context(), job(t, def, nil), &progress{}); res.Status != client.RunStatusCompleted {
		t.Errorf("the right password: status %s: %s", res.Status, res.FailureReason)
	}
}

// TestLoginWithModel: the model signs in with placeholders it reads in
// the user's details (the password and the one-time code); it never sees a
// secret, and the site receives the real values.
func TestLoginWithModel(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	if err := site.AddAccount(loginUser, loginPassword, loginTOTP); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t,
		planWhen(`"password":"<secret:portal.password>"`, "Sign in with the details.",
			typeInto("Email", loginUser), typeInto("Password", "<secret:portal.password>"), clickOn("Sign in")),
		planWhen(`Two-step verification`, "Enter the one-time code.",
			typeInto("Verification code", "<secret:portal.totp>"), clickOn("Verify")),
		decide(`Welcome back, ada@example.com`, "complete", "Signed in.", nil),
	)
	e := modelEngine(t, srv, engine.Config{Vault: vault{"cred_1": &client.PasswordCredential{Username: loginUser, Password: loginPassword, TOTP: loginTOTP}}})
	j := job(t, loginAgent(site, "Sign in to the billing portal with the portal credential."), nil)
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.FailureReason)
	}
	if ev := waitEvent(t, site, testsite.EventSecureLogin); ev.Form.Get("password") != loginPassword {
		t.Errorf("the site received %v", ev.Form)
	}
	code := ev(site).Form.Get("code")
	if site.SignIns(loginUser) != 1 || len(code) != 6 {
		t.Errorf("sign-ins %d, code %q", site.SignIns(loginUser), code)
	}
	for _, c := range srv.Calls() {
		for _, s := range []string{loginPassword, loginTOTP, code} {
			if strings.Contains(c.Prompt(), s) {
				t.Errorf("a %s call showed the model the secret %q", c.Kind, s)
			}
		}
	}
	secretsMasked(t, readSteps(t, j.Dir))
	noSecretIn(t, j.Dir, loginPassword, loginTOTP, code)
}

// lockedBuffer collects a daemon's logs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// answers keeps every response body a client received.
type answers struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (a *answers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	a.mu.Lock()
	a.b.Write(body)
	a.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, err
}

// TestDaemonLoginLeaksNothing: a credential created with the client, an
// agent with a credential parameter and a login block, a run through the
// daemon to the page behind the sign-in; then every byte the daemon wrote
// (its data directory: store, run files, steps; its logs; every answer
// the client received, the run, its timeline and its steps included) is
// searched for the secrets.
func TestDaemonLoginLeaksNothing(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	if err := site.AddAccount(loginUser, loginPassword, loginTOTP); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	addr, stop := daemontest.Start(t, dir, daemon.Config{APIKey: testKey, Executor: newEngine(t, engine.Config{Logger: logger}),
		Workers: 1, Logger: logger, Stderr: &logs})
	rec := &answers{}
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0),
		client.WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	cred, err := c.Credentials.Create(ctx, &client.CredentialRequest{Name: "Billing portal",
		Credential: &client.PasswordCredential{Username: loginUser, Password: loginPassword, TOTP: loginTOTP}})
	if err != nil {
		t.Fatal(err)
	}
	def := loginAgent(site, "")
	def.Parameters[0].CredentialID = cred.CredentialID
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Invoices behind a sign-in", WorkflowDefinition: def}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 200 * time.Millisecond, MaxInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
	}
	if site.SignIns(loginUser) != 1 {
		t.Errorf("signed in %d times", site.SignIns(loginUser))
	}
	// POST /v1/run/tasks/login: the same sign-in without an agent.
	login, err := c.Runs.Login(ctx, &client.LoginRequest{CredentialID: cred.CredentialID, URL: site.URL(testsite.PageSecureLogin)})
	if err != nil {
		t.Fatal(err)
	}
	if done, err := c.Runs.Wait(ctx, login.RunID, &client.WaitOptions{Interval: 200 * time.Millisecond, MaxInterval: time.Second}); err != nil || done.Status != client.RunStatusCompleted {
		t.Fatalf("the login run: %v %v", done, err)
	}
	if site.SignIns(loginUser) != 2 {
		t.Errorf("signed in %d times after the login run", site.SignIns(loginUser))
	}
	if _, err := c.Runs.Timeline(ctx, run.RunID); err != nil {
		t.Fatal(err)
	}
	steps, err := c.Runs.Steps(ctx, run.RunID)
	if err != nil || len(steps) == 0 {
		t.Fatalf("steps: %v %v", steps, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	code := ev(site).Form.Get("code")
	noSecretIn(t, dir, loginPassword, loginTOTP, code)
	for what, data := range map[string][]byte{"the logs": logs.Bytes(), "the answers": rec.b.Bytes()} {
		for _, s := range []string{loginPassword, loginTOTP, code} {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s hold the secret %q", what, s)
			}
		}
	}
	// The password and the one-time code, each shown as the mask in the
	// steps and the timeline; and no length of a secret.
	if n := bytes.Count(rec.b.Bytes(), []byte("typed "+secrets.Mask)); n < 2 {
		t.Errorf("the answers show %d secrets typed as the mask, want the password and the code: the search saw nothing of the run", n)
	}
	if bytes.Contains(rec.b.Bytes(), []byte("(hidden)")) {
		t.Error("the answers tell a secret's length")
	}
}

// TestDaemonKeepsASignIn: an agent with persist_browser_session signs in
// once; its next run starts signed in (the sign-in page sends it on, and
// the site sees no new sign-in); a profile made from that run lets another
// agent start signed in; reset_profile makes the agent sign in again.
func TestDaemonKeepsASignIn(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	if err := site.AddAccount(loginUser, loginPassword, loginTOTP); err != nil {
		t.Fatal(err)
	}
	c, _ := startDaemon(t, newEngine(t, engine.Config{}))
	ctx := t.Context()
	cred, err := c.Credentials.Create(ctx, &client.CredentialRequest{Name: "Billing portal",
		Credential: &client.PasswordCredential{Username: loginUser, Password: loginPassword, TOTP: loginTOTP}})
	if err != nil {
		t.Fatal(err)
	}
	def := loginAgent(site, "")
	def.Parameters[0].CredentialID = cred.CredentialID
	keeper, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Invoices, signed in once", PersistBrowserSession: true, WorkflowDefinition: def}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reader, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "The account page", WorkflowDefinition: client.WorkflowDefinition{
		Blocks: client.Blocks{gotoBlock("open_account", site.URL(testsite.PageSecureAccount))},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	runOf := func(req *client.AgentRunRequest) *client.Run {
		t.Helper()
		run, err := c.Runs.StartAgent(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		done, err := c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 200 * time.Millisecond, MaxInterval: time.Second})
		if err != nil || done.Status != client.RunStatusCompleted {
			t.Fatalf("run of %s: %v %v", req.AgentID, done, err)
		}
		return done
	}
	landing := func(r *client.Run) string {
		t.Helper()
		var out map[string]map[string]any
		if err := json.Unmarshal(r.Output, &out); err != nil {
			t.Fatal(err)
		}
		u, _ := out["open_account_output"]["url"].(string)
		return u
	}

	runOf(&client.AgentRunRequest{AgentID: keeper.WorkflowPermanentID})
	second := runOf(&client.AgentRunRequest{AgentID: keeper.WorkflowPermanentID})
	if n := site.SignIns(loginUser); n != 1 {
		t.Errorf("after two runs of an agent that keeps its sign-in: %d sign-ins, want 1", n)
	}

	// Without a profile the account page sends the reader to the sign-in;
	// with one made from the second run, it is shown.
	if u := landing(runOf(&client.AgentRunRequest{AgentID: reader.WorkflowPermanentID})); !strings.Contains(u, testsite.PageSecureLogin) {
		t.Errorf("without a profile the reader landed on %s", u)
	}
	profile, err := c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "Billing, signed in", WorkflowRunID: second.RunID})
	if err != nil || !strings.HasPrefix(profile.BrowserProfileID, "bp_") || profile.WorkflowPermanentID == nil || *profile.WorkflowPermanentID != keeper.WorkflowPermanentID {
		t.Fatalf("profile %+v %v", profile, err)
	}
	if u := landing(runOf(&client.AgentRunRequest{AgentID: reader.WorkflowPermanentID, BrowserProfileID: profile.BrowserProfileID})); !strings.Contains(u, testsite.PageSecureAccount) {
		t.Errorf("with the profile the reader landed on %s", u)
	}
	if n := site.SignIns(loginUser); n != 1 {
		t.Errorf("the profile's run signed in again: %d sign-ins", n)
	}
	// A run of an agent that keeps nothing makes no profile; an unknown
	// profile is refused before the run is queued.
	plain := runOf(&client.AgentRunRequest{AgentID: reader.WorkflowPermanentID})
	if _, err := c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "x", WorkflowRunID: plain.RunID}); !isAPIStatus(err, 400, "kept no browser state") {
		t.Errorf("a profile of a run that kept nothing: %v", err)
	}
	if _, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: reader.WorkflowPermanentID, BrowserProfileID: "bp_404"}); !isAPIStatus(err, 404, "Browser profile bp_404 not found") {
		t.Errorf("an unknown profile: %v", err)
	}

	// reset_profile: the next run starts signed out and signs in again.
	if err := c.Agents.ResetProfile(ctx, keeper.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	runOf(&client.AgentRunRequest{AgentID: keeper.WorkflowPermanentID})
	if n := site.SignIns(loginUser); n != 2 {
		t.Errorf("after reset_profile: %d sign-ins, want 2", n)
	}
	// A deleted profile is gone for runs too.
	if err := c.BrowserProfiles.Delete(ctx, profile.BrowserProfileID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: reader.WorkflowPermanentID, BrowserProfileID: profile.BrowserProfileID}); !isAPIStatus(err, 404, "not found") {
		t.Errorf("a deleted profile: %v", err)
	}
}

func isAPIStatus(err error, status int, want string) bool {
	var apiErr *client.Error
	return errors.As(err, &apiErr) && apiErr.StatusCode == status && strings.Contains(err.Error(), want)
}

// TestDaemonBrowserSession: a browser session opened on the daemon keeps
// its browser between runs: a login run in it signs in, an agent run in it
// afterwards is signed in; a session closed with generate_browser_profile
// becomes a profile that another run starts from. Runs cannot use a closed
// or unknown session, and a session closes at its timeout.
func TestDaemonBrowserSession(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	if err := site.AddAccount(loginUser, loginPassword, loginTOTP); err != nil {
		t.Fatal(err)
	}
	c, _ := startDaemon(t, newEngine(t, engine.Config{}))
	ctx := t.Context()
	cred, err := c.Credentials.Create(ctx, &client.CredentialRequest{Name: "Billing portal",
		Credential: &client.PasswordCredential{Username: loginUser, Password: loginPassword, TOTP: loginTOTP}})
	if err != nil {
		t.Fatal(err)
	}
	reader, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "The account page", WorkflowDefinition: client.WorkflowDefinition{
		Blocks: client.Blocks{gotoBlock("open_account", site.URL(testsite.PageSecureAccount))},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wait := func(id string) *client.Run {
		t.Helper()
		done, err := c.Runs.Wait(ctx, id, &client.WaitOptions{Interval: 200 * time.Millisecond, MaxInterval: time.Second})
		if err != nil || done.Status != client.RunStatusCompleted {
			t.Fatalf("run %s: %v %v", id, done, err)
		}
		return done
	}
	landing := func(r *client.Run) string {
		var out map[string]map[string]any
		json.Unmarshal(r.Output, &out)
		u, _ := out["open_account_output"]["url"].(string)
		return u
	}

	sess, err := c.BrowserSessions.Create(ctx, &client.BrowserSessionCreateRequest{URL: site.URL(testsite.PageSecureLogin), GenerateBrowserProfile: true})
	if err != nil || !strings.HasPrefix(sess.BrowserSessionID, "pbs_") || sess.Status == nil || *sess.Status != "running" || *sess.Timeout != 60 {
		t.Fatalf("session %+v %v", sess, err)
	}
	login, err := c.Runs.Login(ctx, &client.LoginRequest{CredentialID: cred.CredentialID, URL: site.URL(testsite.PageSecureLogin), BrowserSessionID: sess.BrowserSessionID})
	if err != nil {
		t.Fatal(err)
	}
	wait(login.RunID)
	run, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: reader.WorkflowPermanentID, BrowserSessionID: sess.BrowserSessionID})
	if err != nil {
		t.Fatal(err)
	}
	if u := landing(wait(run.RunID)); !strings.Contains(u, testsite.PageSecureAccount) {
		t.Errorf("a run in the signed-in session landed on %s", u)
	}
	if n := site.SignIns(loginUser); n != 1 {
		t.Errorf("%d sign-ins", n)
	}
	// A single action in the session acts on its signed-in browser: the
	// welcome heading is only on the page behind the sign-in.
	act, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: site.URL(testsite.PageSecureAccount), BrowserSessionID: sess.BrowserSessionID,
		Action: client.Action{Type: client.ActionClick, Selector: "#secure-welcome"}})
	if err != nil {
		t.Fatalf("run_action in the session: %v", err)
	}
	// Its run holds the session until it ends: end it.
	if err := c.Runs.Cancel(ctx, act.WorkflowRunID); err != nil {
		t.Fatal(err)
	}
	if err := c.BrowserSessions.Close(ctx, sess.BrowserSessionID); err != nil {
		t.Fatal(err)
	}
	if got, err := c.BrowserSessions.Get(ctx, sess.BrowserSessionID); err != nil || *got.Status != "closed" || got.CompletedAt == nil {
		t.Errorf("after close: %+v %v", got, err)
	}
	if _, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: reader.WorkflowPermanentID, BrowserSessionID: sess.BrowserSessionID}); !isAPIStatus(err, 409, "is closed") {
		t.Errorf("a run in a closed session: %v", err)
	}
	if _, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: reader.WorkflowPermanentID, BrowserSessionID: "pbs_404"}); !isAPIStatus(err, 404, "Browser session pbs_404 not found") {
		t.Errorf("a run in an unknown session: %v", err)
	}
	profile, err := c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "From the session", BrowserSessionID: sess.BrowserSessionID})
	if err != nil {
		t.Fatal(err)
	}
	run, err = c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: reader.WorkflowPermanentID, BrowserProfileID: profile.BrowserProfileID})
	if err != nil {
		t.Fatal(err)
	}
	if u := landing(wait(run.RunID)); !strings.Contains(u, testsite.PageSecureAccount) {
		t.Errorf("a run from the session's profile landed on %s", u)
	}
	// A session without generate_browser_profile keeps nothing; bad
	// timeouts are refused.
	plain, err := c.BrowserSessions.Create(ctx, &client.BrowserSessionCreateRequest{Timeout: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "x", BrowserSessionID: plain.BrowserSessionID}); !isAPIStatus(err, 409, "still open") {
		t.Errorf("a profile of an open session: %v", err)
	}
	c.BrowserSessions.Close(ctx, plain.BrowserSessionID)
	if _, err := c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "x", BrowserSessionID: plain.BrowserSessionID}); !isAPIStatus(err, 400, "kept no browser state") {
		t.Errorf("a profile of a session that kept nothing: %v", err)
	}
	if _, err := c.BrowserSessions.Create(ctx, &client.BrowserSessionCreateRequest{Timeout: 1}); !isAPIStatus(err, 422, "from 5 to 240") {
		t.Errorf("a timeout of 1 minute: %v", err)
	}
}

// TestBrowserSessionEnds: a session closes at its timeout (minutes made
// short for the test) as timed_out, and one left open when the daemon
// stops is ended_by_restart when it starts again.
func TestBrowserSessionEnds(t *testing.T) {
	needBrowser(t)
	dir := t.TempDir()
	e := newEngine(t, engine.Config{})
	addr, stop := daemontest.Start(t, dir, daemon.Config{APIKey: testKey, Executor: e, Workers: 1, Minute: 20 * time.Millisecond})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	short, err := c.BrowserSessions.Create(ctx, &client.BrowserSessionCreateRequest{Timeout: 5})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute) // catches a hang only
	for {
		got, err := c.BrowserSessions.Get(ctx, short.BrowserSessionID)
		if err != nil {
			t.Fatal(err)
		}
		if *got.Status == "timed_out" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session is still %s 2 minutes after its timeout of 5 short minutes", *got.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// The session left open runs on a daemon of real minutes: at 240 short
	// minutes (4.8 s) it could time out before the stop on a busy machine.
	addr, stop = daemontest.Start(t, dir, daemon.Config{APIKey: testKey, Executor: e, Workers: 1})
	c, _ = client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	long, err := c.BrowserSessions.Create(ctx, &client.BrowserSessionCreateRequest{Timeout: 240})
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	addr, _ = daemontest.Start(t, dir, daemon.Config{APIKey: testKey, Executor: e, Workers: 1})
	c, _ = client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	got, err := c.BrowserSessions.Get(ctx, long.BrowserSessionID)
	if err != nil || *got.Status != "ended_by_restart" || got.CompletedAt == nil {
		t.Errorf("a session left open by the daemon that stopped: %+v %v", got, err)
	}
}

// TestDaemonTOTPVerificationURL: a credential without a second factor of
// its own, an agent with a totp_verification_url: the daemon asks the
// endpoint with a request signed as its webhooks are, naming the run, and
// types the code it answers.
func TestDaemonTOTPVerificationURL(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	if err := site.AddAccount(loginUser, loginPassword, loginTOTP); err != nil {
		t.Fatal(err)
	}
	key, _ := totp.Parse(loginTOTP)
	var mu sync.Mutex
	var asked []map[string]string
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(testKey, body, r.Header.Get(webhook.SignatureHeader)); err != nil {
			http.Error(w, "bad signature: "+err.Error(), http.StatusUnauthorized)
			return
		}
		var req map[string]string
		json.Unmarshal(body, &req)
		mu.Lock()
		asked = append(asked, req)
		first := len(asked) == 1
		mu.Unlock()
		if first {
			fmt.Fprint(w, `{"verification_code": null}`) // not arrived yet
			return
		}
		fmt.Fprintf(w, `{"verification_code": "Your code is %s"}`, key.Code(time.Now()))
	}))
	t.Cleanup(endpoint.Close)

	c, _ := startDaemon(t, newEngine(t, engine.Config{}))
	ctx := t.Context()
	cred, err := c.Credentials.Create(ctx, &client.CredentialRequest{Name: "Billing portal",
		Credential: &client.PasswordCredential{Username: loginUser, Password: loginPassword}})
	if err != nil {
		t.Fatal(err)
	}
	def := loginAgent(site, "")
	def.Parameters[0].CredentialID = cred.CredentialID
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Codes from an endpoint", TOTPVerificationURL: endpoint.URL, WorkflowDefinition: def}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 200 * time.Millisecond, MaxInterval: time.Second})
	if err != nil || done.Status != client.RunStatusCompleted {
		t.Fatalf("run: %v %v", done, err)
	}
	if site.SignIns(loginUser) != 1 {
		t.Errorf("%d sign-ins", site.SignIns(loginUser))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[1]["workflow_run_id"] != run.RunID || asked[1]["workflow_permanent_id"] != agent.WorkflowPermanentID {
		t.Errorf("the endpoint was asked %v", asked)
	}
}
