package engine_test

// The egress policy and what a run's blocks reach (package internal/egress):
// on a daemon serving several organizations, the daemon's own address is
// refused to every file URL, token_uri and custom model a run gives, and
// the refusal names what, where and why; on a daemon serving one
// organization, the same loopback servers are reached; the daemon's own
// file URLs keep working, read from its disk.

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/internal/egress/egresstest"
	"github.com/abctl/abctl/internal/mailtest"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/blocks"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

const refusedRule = "the daemon's API is never reachable by a run"

// sharedPolicy is the policy of a daemon serving several organizations,
// protecting the addresses of protect as its API; allow are the
// operator's --egress-allow patterns.
func sharedPolicy(t *testing.T, protect []string, allow ...string) *egress.Policy {
	var pairs []string
	for _, a := range protect {
		pairs = append(pairs, a, "the daemon's API")
	}
	return egresstest.Shared(t, allow, pairs...)
}

func hostOf(u string) string { return strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://") }

// TestCustomModelCheckThroughGuard: the check made when an organization
// saves a custom model connects through its guard: refused on the
// daemon's address, naming it and the rule and never the key; reached on
// a single organization's daemon.
func TestCustomModelCheckThroughGuard(t *testing.T) {
	const key = "sk-custom-9d8c7b6a5f4e3d2c"
	custom := llmtest.New(t, llmtest.Step{Kind: engine.KindCustomModelCheck, Reply: llmtest.Text("OK"), Times: -1})
	m := executor.CustomModel{ID: "cllm_1", DisplayName: "Team model", Provider: "openai_compatible", ModelName: "team-7b",
		APIBase: custom.URL() + "/v1", APIKey: key}
	shared := sharedPolicy(t, []string{hostOf(custom.URL())})
	err := engine.CheckCustomModel(t.Context(), m, time.Minute, llm.WithHTTPClient(engine.CustomModelClient(shared.For("o_1"), 0)))
	if err == nil || !strings.Contains(err.Error(), refusedRule) || !strings.Contains(err.Error(), hostOf(custom.URL())) || strings.Contains(err.Error(), key) {
		t.Fatalf("a custom model on the daemon's address: %v", err)
	}
	t.Log(err)
	if n := len(custom.Calls()); n != 0 {
		t.Errorf("%d calls reached the model", n)
	}
	single := egress.New(egress.Config{Shared: func() bool { return false }})
	if err := engine.CheckCustomModel(t.Context(), m, time.Minute, llm.WithHTTPClient(engine.CustomModelClient(single.For("o_1"), 0))); err != nil {
		t.Fatalf("a single organization's daemon: %v", err)
	}
}

// TestBlocksThroughGuard: file URLs (and a redirect to the daemon's
// address), a service account's token_uri and a custom model's api_base
// are refused by a shared daemon's guard, each failing its run with the
// URL or address, and the rule; a single organization's daemon reaches
// them all.
func TestBlocksThroughGuard(t *testing.T) {
	needBrowser(t)
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("supplier,amount\nNorthwind,120.50\n"))
	}))
	defer files.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, files.URL+"/v1/admin/orgs.csv", http.StatusFound)
	}))
	defer redirector.Close()
	g, keyJSON := startGoogle(t)
	custom := llmtest.New(t, llmtest.Step{Kind: llm.KindPrompt, Match: "greeting", Reply: llmtest.Text("Hello from the custom model"), Times: -1})
	cm := executor.CustomModel{ID: "cllm_1", DisplayName: "Team model", Provider: "openai_compatible", ModelName: "team-7b", APIBase: custom.URL() + "/v1", APIKey: "sk-x"}

	parse := func(u string) client.WorkflowDefinition {
		return client.WorkflowDefinition{Blocks: client.Blocks{&client.FileURLParserBlock{BlockBase: base("lines"), FileURL: u, FileType: "csv"}}}
	}
	sheet := client.WorkflowDefinition{
		Parameters: []client.Parameter{{Key: "google", ParameterType: client.ParameterTypeCredential, CredentialID: "cred_google"}},
		Blocks:     client.Blocks{&client.GoogleSheetsReadBlock{BlockBase: base("orders"), SpreadsheetURL: fakeSheetID, SheetName: "Orders", CredentialID: "google"}},
	}
	greet := &client.TextPromptBlock{BlockBase: base("greet"), Prompt: "Write a one-line greeting for Ada."}
	greet.Model = client.Model{"model_name": cm.ID}
	cases := []struct {
		name string
		def  client.WorkflowDefinition
		want []string // in the failure of the shared daemon's run
	}{
		{"file URL", parse(files.URL + "/invoices.csv?sig=s3cret"), []string{"refused to reach " + files.URL + "/invoices.csv", "(" + hostOf(files.URL) + ")"}},
		{"redirect", parse(redirector.URL + "/invoices.csv"), []string{"refused to reach " + files.URL + "/v1/admin/orgs.csv"}},
		{"token_uri", sheet, []string{"token_uri is not reachable", "refused to reach " + g.url + "/token"}},
		{"custom model", client.WorkflowDefinition{Blocks: client.Blocks{greet}}, []string{cm.ID, hostOf(custom.URL())}},
	}
	run := func(e *engine.Engine, def client.WorkflowDefinition) executor.Result {
		j := job(t, def, nil)
		j.CustomModels = []executor.CustomModel{cm}
		return e.Execute(t.Context(), j, &progress{})
	}
	creds := vault{"cred_google": &client.SecretCredential{SecretValue: keyJSON}}

	shared := sharedPolicy(t, []string{hostOf(files.URL), hostOf(g.url), hostOf(custom.URL())}, hostOf(redirector.URL))
	e := newEngine(t, engine.Config{Egress: shared, SheetsEndpoint: g.url, Vault: creds})
	for _, tc := range cases {
		res := run(e, tc.def)
		t.Logf("%s: %s", tc.name, res.FailureReason)
		if res.Status != client.RunStatusFailed {
			t.Errorf("%s: %s on a shared daemon", tc.name, res.Status)
			continue
		}
		for _, w := range append(tc.want, refusedRule) {
			if !strings.Contains(res.FailureReason, w) {
				t.Errorf("%s: the reason %q does not say %q", tc.name, res.FailureReason, w)
			}
		}
		if strings.Contains(res.FailureReason, "s3cret") {
			t.Errorf("%s: the reason shows the query", tc.name)
		}
	}
	if n := len(custom.Calls()); n != 0 {
		t.Errorf("the custom model got %d calls", n)
	}

	single := egress.New(egress.Config{Shared: func() bool { return false }})
	e = newEngine(t, engine.Config{Egress: single, SheetsEndpoint: g.url, Vault: creds})
	for _, tc := range cases {
		if tc.name == "redirect" {
			continue // the redirect's target does not exist
		}
		if res := run(e, tc.def); res.Status != client.RunStatusCompleted {
			t.Errorf("%s on a single organization's daemon: %s: %s", tc.name, res.Status, res.FailureReason)
		}
	}
}

// TestDaemonOwnFileURLUnderSharedPolicy: on a daemon serving several
// organizations whose API address is protected, a file uploaded through
// it (POST /v1/upload_file) still feeds a file_url_parser block, read from
// the daemon's disk; an http_request to the same address is refused.
func TestDaemonOwnFileURLUnderSharedPolicy(t *testing.T) {
	needBrowser(t)
	policy := sharedPolicy(t, nil)
	e := newEngine(t, engine.Config{Egress: policy})
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: testKey, Executor: e, Workers: 2})
	if err := policy.Protect(addr, "the daemon's API"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	up, err := c.Files.Upload(ctx, "invoices.csv", strings.NewReader("supplier,amount\nNorthwind,120.50\n"))
	if err != nil {
		t.Fatal(err)
	}
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{{ParameterType: client.ParameterTypeWorkflow, Key: "invoices", WorkflowParameterType: client.WorkflowParameterFileURL}},
		Blocks: client.Blocks{
			&client.FileURLParserBlock{BlockBase: base("lines"), FileURL: "{{ invoices }}", FileType: "csv"},
			&client.HTTPRequestBlock{BlockBase: base("admin"), URL: "http://" + addr + "/v1/runs"},
		},
	}
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Read the invoices", WorkflowDefinition: def}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{"invoices": up.PresignedURL}})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s", done.Status, done.GetFailureReason())
	if done.Status != client.RunStatusFailed || !strings.Contains(done.GetFailureReason(), `Block "admin"`) ||
		!strings.Contains(done.GetFailureReason(), "refused to reach http://"+addr+"/v1/runs") || !strings.Contains(done.GetFailureReason(), refusedRule) {
		t.Fatalf("%s: %s, want the http_request block refused", done.Status, done.GetFailureReason())
	}
	var out struct {
		Lines []map[string]string `json:"lines_output"`
	}
	if err := done.DecodeOutput(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Lines) != 1 || out.Lines[0]["supplier"] != "Northwind" {
		t.Errorf("lines_output %v, want the uploaded file's row", out.Lines)
	}
}

// TestOperatorServersTrusted: the servers the operator configured (the
// daemon's SMTP server and S3 service) are reached on loopback even by a
// shared daemon, whose guard refuses loopback; what the run names is
// guarded: the same SMTP server named by the block, and the source URL of
// a download_to_s3 block.
func TestOperatorServersTrusted(t *testing.T) {
	needBrowser(t)
	smtpSrv, err := mailtest.StartSMTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { smtpSrv.Close() })
	host, port := smtpSrv.HostPort()
	s3 := startS3(t, []string{"AKIADAEMON"}, "runs")
	source := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("notes")) }))
	defer source.Close()

	e := newEngine(t, engine.Config{Egress: sharedPolicy(t, nil),
		SMTP: blocks.SMTP{Host: host, Port: port},
		S3: blocks.S3Config{Endpoint: s3.url, Region: "us-east-1", PathStyle: true, Bucket: "runs", Prefix: "abctl/",
			AccessKeyID: "AKIADAEMON", SecretAccessKey: daemonS3Secret},
	})
	mail := func(label string) *client.SendEmailBlock {
		return &client.SendEmailBlock{BlockBase: base(label), Sender: "robot@example.com", Recipients: []string{"ada@example.com"}, Subject: "Hi", Body: "Hello"}
	}
	named := mail("named")
	named.CustomSMTPHost, named.CustomSMTPPort = host, port
	for _, tc := range []struct {
		block client.Block
		want  string // "" for completed; else in the failure
	}{
		{mail("operators"), ""},
		{named, "refused to reach " + smtpSrv.Addr()},
		{&client.UploadToS3Block{BlockBase: base("to_daemon")}, ""},
		{&client.DownloadToS3Block{BlockBase: base("fetch"), URL: source.URL + "/notes.txt"}, "refused to reach " + source.URL + "/notes.txt"},
	} {
		res := e.Execute(t.Context(), job(t, client.WorkflowDefinition{Blocks: client.Blocks{tc.block}}, nil), &progress{})
		label := tc.block.Base().Label
		t.Logf("%s: %s %s", label, res.Status, res.FailureReason)
		switch {
		case tc.want == "" && res.Status != client.RunStatusCompleted:
			t.Errorf("%s: %s: %s", label, res.Status, res.FailureReason)
		case tc.want != "" && (res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, tc.want) ||
			!strings.Contains(res.FailureReason, "the daemon serves several organizations")):
			t.Errorf("%s: %s: %q, want it refused", label, res.Status, res.FailureReason)
		}
	}
	if n := len(smtpSrv.Messages()); n != 1 {
		t.Errorf("%d emails sent, want the operator's server's one", n)
	}
}
