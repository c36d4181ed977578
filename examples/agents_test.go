package examples

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

const daemonKey = "abk_examples_test_key_0123456789"

// exampleEnv is what every agent example runs against: the test site, the
// scripted model, one daemon with the real engine (one Chromium for all),
// a client of it and abctl's environment.
type exampleEnv struct {
	site  *testSite
	model *llmtest.Server
	c     *client.Client
	env   []string // abctl's environment
	bash  string
}

// TestAgentExamples runs every agent file of examples/agents with the
// commands of its header, and checks what each run did: its status and
// exit status, its output (against the file's data_schema where it has
// one, and against the site's own data), its screenshots and files, and
// what the browser really sent to the site.
func TestAgentExamples(t *testing.T) {
	chromium := needChromium(t)
	e := &exampleEnv{site: startSite(t), model: llmtest.New(t), bash: needBash(t)}
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{
		APIKey:  daemonKey,
		Workers: 1, // the script answers the runs in order
		Engine: &daemon.EngineConfig{
			Chromium: chromium, LLM: e.model.OpenAIConfig(),
			NoRecording: true, // recordings are the engine's tests' business; here they cost time
		},
	})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(daemonKey))
	if err != nil {
		t.Fatal(err)
	}
	e.c, e.env = c, cliEnv(t, "http://"+addr, daemonKey)

	files, err := filepath.Glob(filepath.Join(agentsDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	readme := readmeText(t)
	tested := map[string]func(*testing.T, *exampleEnv, string, []string){
		"contact-form.yaml":   testContactForm,
		"search-extract.yaml": testSearchExtract,
		"login-errors.yaml":   testLoginErrors,
		"download.yaml":       testDownload,
		"for-loop.yaml":       testForLoop,
		"quickstart.yaml":     testQuickstart,
		"order-triage.yaml":   testOrderTriage,
		"email-report.yaml":   testEmailReport,
		"sftp-upload.yaml":    testSFTPUpload,
	}
	for _, f := range files {
		name := filepath.Base(f)
		check := tested[name]
		if check == nil {
			t.Errorf("%s has no test: add one to examples/agents_test.go", f)
			continue
		}
		delete(tested, name)
		// Sequential on purpose: one daemon, one browser, one script.
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			cmds := runCommands(t, f)
			for _, cmd := range cmds {
				if !strings.Contains(readme, cmd) {
					t.Errorf("examples/README.md does not show the command of %s's header: %s", name, cmd)
				}
			}
			check(t, e, f, cmds)
			// Every run has ended: a step still unused was never asked for.
			if !e.model.Done() {
				ended, cancel := context.WithCancel(t.Context())
				cancel()
				t.Errorf("the model's script was not used up: %v", e.model.Wait(ended))
			}
		})
	}
	for name := range tested {
		t.Errorf("examples/agents/%s is missing", name)
	}
}

// needChromium returns the Chromium binary, skipping the test when there is
// none.
func needChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("Chromium is not installed (Debian: apt-get install chromium): the agent examples drive a real browser")
	return ""
}

// abctlRun runs one header command (with the test site's address) as a
// person would paste it, and returns its result and the run it started.
func (e *exampleEnv) abctlRun(t *testing.T, command string) (result, *client.Run) {
	t.Helper()
	command = strings.ReplaceAll(command, exampleSite, e.site.URL)
	res := run(t, repoRoot, e.env, e.bash, "-c", command)
	m := runStarted.FindStringSubmatch(res.stderr)
	if m == nil {
		t.Fatalf("%s: no run started\n%s", command, res)
	}
	r, err := e.c.Runs.Get(t.Context(), m[1])
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsTerminal() {
		t.Fatalf("abctl returned with the run %s still %s", r.RunID, r.Status)
	}
	// abctl prints the output on stdout, and nothing else.
	if got, want := compact(t, []byte(res.stdout)), compact(t, r.Output); got != want {
		t.Errorf("stdout %s, the run's output %s", got, want)
	}
	return res, r
}

// checkScreenshots fetches the run's newest screenshot and checks that it
// is a JPEG, and that the run has at least n.
func (e *exampleEnv) checkScreenshots(t *testing.T, r *client.Run, n int) {
	t.Helper()
	if len(r.ScreenshotURLs) < n {
		t.Fatalf("%d screenshots, want at least %d", len(r.ScreenshotURLs), n)
	}
	if b := fetch(t, r.ScreenshotURLs[0]); !bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}) {
		t.Errorf("the newest screenshot is not a JPEG: % x", b[:min(len(b), 8)])
	}
}

func testContactForm(t *testing.T, e *exampleEnv, file string, cmds []string) {
	cmd := cmds[0]
	p := params(t, cmd)
	for _, k := range []string{"name", "email", "message"} {
		if p[k] == "" {
			t.Fatalf("the command gives no %s: %s", k, cmd)
		}
	}
	e.model.Add(
		plan(regexp.QuoteMeta("the full name is "+p["name"]), "Fill in the three fields.",
			typeInto("Full name", p["name"]), typeInto("Email", p["email"]), typeInto("Message", p["message"])),
		decide(regexp.QuoteMeta(p["email"]), "complete", "Filled in the name, the email and the message."),
		verify(`name, email and message fields show the values given`, "complete", "The three fields hold the values."),
	)
	before := e.site.postCount()
	res, r := e.abctlRun(t, cmd)
	if res.code != 0 || r.Status != client.RunStatusCompleted {
		t.Fatalf("run %s: %s\n%s", r.Status, r.GetFailureReason(), res)
	}
	sent := e.site.waitPost(t, before, "/submit", "")
	for field, param := range map[string]string{"text": "name", "email": "email", "message": "message"} {
		if got := sent.Form.Get(field); got != p[param] {
			t.Errorf("the form sent %s=%q, want %q", field, got, p[param])
		}
	}
	out := decodeOutput(t, r)
	if s := str(out, "fill_form_output", "summary"); s != "Filled in the name, the email and the message." {
		t.Errorf("fill_form_output.summary %q", s)
	}
	if s := str(out, "send_form_output", "selector"); s != "#submit-button" {
		t.Errorf("send_form_output.selector %q: the click should not have needed the model", s)
	}
	e.checkScreenshots(t, r, 2)
}

func testSearchExtract(t *testing.T, e *exampleEnv, file string, cmds []string) {
	cmd := cmds[0]
	query := params(t, cmd)["query"]
	want := catalog(t, query)
	if len(want) == 0 {
		t.Fatalf("the query %q of %s finds nothing in the shop", query, file)
	}
	e.model.Add(
		plan(regexp.QuoteMeta(`Search the site for "`+query+`"`), "Search with the search box.",
			typeInto("Search the shop", query), pressKey("Enter")),
		decide(regexp.QuoteMeta(strconv.Itoa(len(want))+` results for "`+query+`"`), "complete", "Searched the shop."),
		verify(`lists the search results`, "complete", "The results are listed."),
		extract(regexp.QuoteMeta(`Every product in the search results for "`+query+`"`), func(page string) any {
			return map[string]any{"query": query, "products": shopRowsIn(page, true)}
		}),
	)
	res, r := e.abctlRun(t, cmd)
	if res.code != 0 || r.Status != client.RunStatusCompleted {
		t.Fatalf("run %s: %s\n%s", r.Status, r.GetFailureReason(), res)
	}
	var out struct {
		Results json.RawMessage `json:"extract_results_output"`
	}
	if err := r.DecodeOutput(&out); err != nil {
		t.Fatal(err)
	}
	validate(t, blockSchema(t, file, "extract_results"), out.Results)
	var got struct {
		Query    string
		Products []product
	}
	if err := json.Unmarshal(out.Results, &got); err != nil {
		t.Fatal(err)
	}
	if got.Query != query || !equalProducts(got.Products, want, true) {
		t.Errorf("extracted %s, want the shop's %v", out.Results, want)
	}
	e.checkScreenshots(t, r, 3)

	// run_with: code: the first run recorded a script, and the same
	// command replays it without a single model call, to the same output.
	if r.ScriptRun == nil || r.ScriptRun.ScriptID == nil || r.ScriptRun.AIFallbackTriggered {
		t.Fatalf("the first run's script_run is %+v, want the script it recorded", r.ScriptRun)
	}
	calls := len(e.model.Calls())
	res, again := e.abctlRun(t, cmd)
	if res.code != 0 || again.Status != client.RunStatusCompleted {
		t.Fatalf("the replay: run %s: %s\n%s", again.Status, again.GetFailureReason(), res)
	}
	if n := len(e.model.Calls()) - calls; n != 0 {
		t.Errorf("the replay called the model %d times, want none", n)
	}
	var replayed struct {
		Results json.RawMessage `json:"extract_results_output"`
	}
	if err := again.DecodeOutput(&replayed); err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(replayed.Results, out.Results) {
		t.Errorf("the replay extracted %s, the recorded run %s", replayed.Results, out.Results)
	}
	sr := again.ScriptRun
	if sr == nil || sr.ScriptID == nil || *sr.ScriptID != *r.ScriptRun.ScriptID || sr.AIFallbackTriggered {
		t.Errorf("the replay's script_run is %+v, want the recorded script, without fallback", sr)
	}
	// The live view samples the latest step, so which steps it shows
	// depends on timing; its last lines name the script, always.
	if !strings.Contains(res.stderr, "script: "+*r.ScriptRun.ScriptID) {
		t.Errorf("the live view does not name the script the run replayed:\n%s", res.stderr)
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func testLoginErrors(t *testing.T, e *exampleEnv, file string, cmds []string) {
	if len(cmds) != 2 {
		t.Fatalf("%s should show two commands, a refused sign-in and a good one; it has %d", file, len(cmds))
	}
	bad, good := params(t, cmds[0]), params(t, cmds[1])

	// A refused sign-in, through abctl: terminated, with the mapped code.
	e.model.Add(
		plan(regexp.QuoteMeta(`"password": "`+bad["password"]+`"`), "Fill in the sign-in form and send it.",
			typeInto("Username", bad["username"]), typeInto("Password", bad["password"]), clickOn("Sign in")),
		decide(`Sign-in failed`, "complete", "Sent the sign-in form; the site answered that the sign-in failed."),
		verify(`(?s)the sign-in failed or was refused.*Sign-in failed`, "terminate", "The page reads Sign-in failed."),
		llmtest.Step{Kind: llm.KindClassify, Match: `(?s)login_failed.*Sign-in failed`,
			Reply: llmtest.JSON(map[string]any{"errors": []any{map[string]any{
				"error_code": "login_failed", "reasoning": "The page says the username or the password is wrong.", "confidence": 0.92}}})},
	)
	before := e.site.postCount()
	res, r := e.abctlRun(t, cmds[0])
	if res.code != 1 || r.Status != client.RunStatusTerminated {
		t.Fatalf("a refused sign-in: run %s, want terminated with exit status 1\n%s", r.Status, res)
	}
	out := decodeOutput(t, r)
	if out["error"] != "login_failed" {
		t.Errorf("output.error %v, want login_failed: %s", out["error"], r.Output)
	}
	if _, ok := out["read_welcome_output"]; ok {
		t.Error("the run went on after the validation block terminated it")
	}
	if !strings.Contains(r.GetFailureReason(), "check_signed_in") {
		t.Errorf("failure_reason %q does not name the validation block", r.GetFailureReason())
	}
	if ev := e.site.waitPost(t, before, "/event", "members-login"); ev.Form.Get("username") != bad["username"] || ev.Form.Get("ok") != "false" {
		t.Errorf("the site saw the sign-in %v", ev.Form)
	}
	e.checkScreenshots(t, r, 2)

	// The good pair, through the SDK as a program would run it: the file
	// loaded and checked by agentfile, the agent created under its name's
	// key (the one abctl applied above, unchanged), run and waited for.
	e.model.Add(
		plan(regexp.QuoteMeta(`"password": "`+good["password"]+`"`), "Fill in the sign-in form and send it.",
			typeInto("Username", good["username"]), typeInto("Password", good["password"]), clickOn("Sign in")),
		decide(`Welcome back`, "complete", "Signed in."),
		verify(`(?s)the user is signed in.*Welcome back`, "complete", "The page welcomes the member."),
		extract(`welcomes the signed-in user`, func(page string) any {
			return map[string]any{"welcome": welcomeText.FindString(page)}
		}),
	)
	agents, err := agentfile.Load([]string{file}, agentfile.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	agent, err := e.c.Agents.Create(ctx, agents[0].Definition, nil, client.WithIdempotencyKey(agentfile.IdempotencyKey(agents[0].Name)))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := agentfile.NormalizeAgent(agent); v == nil {
		t.Error("the created agent does not normalize")
	}
	started, err := e.c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{
		"site": e.site.URL, "username": good["username"], "password": good["password"]}})
	if err != nil {
		t.Fatal(err)
	}
	if started.RunID == r.RunID {
		t.Fatal("the second run reused the first one's id")
	}
	done, err := e.c.Runs.Wait(ctx, started.RunID, &client.WaitOptions{Interval: 200 * time.Millisecond, MaxInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("the good pair: run %s: %s", done.Status, done.GetFailureReason())
	}
	var goodOut struct {
		Welcome json.RawMessage `json:"read_welcome_output"`
	}
	if err := done.DecodeOutput(&goodOut); err != nil {
		t.Fatal(err)
	}
	validate(t, blockSchema(t, file, "read_welcome"), goodOut.Welcome)
	var w struct{ Welcome string }
	json.Unmarshal(goodOut.Welcome, &w)
	if !strings.HasSuffix(w.Welcome, ", "+good["username"]) {
		t.Errorf("read_welcome_output %s does not welcome %s", goodOut.Welcome, good["username"])
	}
	if strings.Contains(string(done.Output), `"error"`) {
		t.Errorf("a completed run has an error code: %s", done.Output)
	}
	e.checkScreenshots(t, done, 3)
}

func testDownload(t *testing.T, e *exampleEnv, file string, cmds []string) {
	const link = "Download the 2026 report (CSV)" // the link's text on the download page
	e.model.Add(plan(regexp.QuoteMeta("Download the 2026 report (CSV)."), "Click the report's link.", clickOn(link)))
	res, r := e.abctlRun(t, cmds[0])
	if res.code != 0 || r.Status != client.RunStatusCompleted {
		t.Fatalf("run %s: %s\n%s", r.Status, r.GetFailureReason(), res)
	}
	want, err := os.ReadFile(filepath.Join(siteDir, "files", "report.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.DownloadedFiles) != 1 {
		t.Fatalf("downloaded_files %+v, want the report", r.DownloadedFiles)
	}
	f := r.DownloadedFiles[0]
	if f.Filename == nil || *f.Filename != "report.csv" {
		t.Errorf("downloaded %v, want report.csv", f.Filename)
	}
	sum := sha256.Sum256(want)
	if f.FileSize == nil || *f.FileSize != int64(len(want)) || f.Checksum == nil || *f.Checksum != hex.EncodeToString(sum[:]) {
		t.Errorf("file info size %v checksum %v, want %d bytes, %x", f.FileSize, f.Checksum, len(want), sum)
	}
	if got := fetch(t, f.URL); !bytes.Equal(got, want) {
		t.Errorf("the downloaded file holds %q, the site's %q", got, want)
	}
	var out struct {
		Download struct {
			Files []struct{ Filename string } `json:"downloaded_files"`
		} `json:"download_file_output"`
	}
	if err := r.DecodeOutput(&out); err != nil || len(out.Download.Files) != 1 || out.Download.Files[0].Filename != "report.csv" {
		t.Errorf("download_file_output %s (%v)", r.Output, err)
	}
	e.checkScreenshots(t, r, 2)
}

func testForLoop(t *testing.T, e *exampleEnv, file string, cmds []string) {
	cmd := cmds[0]
	var terms []string
	if err := json.Unmarshal([]byte(params(t, cmd)["terms"]), &terms); err != nil || len(terms) < 2 {
		t.Fatalf("the command's terms are not a JSON list of several terms (%v): %s", err, cmd)
	}
	for _, term := range terms {
		e.model.Add(extract(regexp.QuoteMeta(`The search results for "`+term+`"`), func(page string) any {
			rows := shopRowsIn(page, false)
			return map[string]any{"term": term, "count": len(rows), "products": rows}
		}))
	}
	res, r := e.abctlRun(t, cmd)
	if res.code != 0 || r.Status != client.RunStatusCompleted {
		t.Fatalf("run %s: %s\n%s", r.Status, r.GetFailureReason(), res)
	}
	var out struct {
		Each []struct {
			Results json.RawMessage `json:"read_results_output"`
		} `json:"each_term_output"`
	}
	if err := r.DecodeOutput(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Each) != len(terms) {
		t.Fatalf("each_term_output has %d entries for %d terms: %s", len(out.Each), len(terms), r.Output)
	}
	schema := blockSchema(t, file, "read_results")
	for i, term := range terms {
		validate(t, schema, out.Each[i].Results)
		var got struct {
			Term     string
			Count    int
			Products []product
		}
		json.Unmarshal(out.Each[i].Results, &got)
		want := catalog(t, term)
		if got.Term != term || got.Count != len(want) || !equalProducts(got.Products, want, false) {
			t.Errorf("term %q: extracted %s, want the shop's %v", term, out.Each[i].Results, want)
		}
	}
	e.checkScreenshots(t, r, len(terms))
}

// testQuickstart: the model-free example saves three pages as PDFs and
// clicks the banner's button, with no call to the model.
func testQuickstart(t *testing.T, e *exampleEnv, file string, cmds []string) {
	before := len(e.model.Calls())
	res, r := e.abctlRun(t, cmds[0])
	if res.code != 0 || r.Status != client.RunStatusCompleted {
		t.Fatalf("run %s: %s\n%s", r.Status, r.GetFailureReason(), res)
	}
	if n := len(e.model.Calls()) - before; n != 0 {
		t.Errorf("the model-free example called the model %d times", n)
	}
	var pdfs []string
	for _, f := range r.DownloadedFiles {
		if f.Filename != nil && strings.HasSuffix(*f.Filename, ".pdf") {
			pdfs = append(pdfs, *f.Filename)
			if b := fetch(t, f.URL); !bytes.HasPrefix(b, []byte("%PDF-")) {
				t.Errorf("%s is not a PDF: %q", *f.Filename, b[:min(len(b), 8)])
			}
		}
	}
	if len(pdfs) != 3 {
		t.Errorf("%d PDFs (%v), want one for each of the 3 pages", len(pdfs), pdfs)
	}
	var out struct {
		Accept struct {
			Selector string `json:"selector"`
		} `json:"accept_cookies_output"`
	}
	if err := r.DecodeOutput(&out); err != nil || out.Accept.Selector != "#accept-cookies" {
		t.Errorf("accept_cookies_output: %s (%v)", r.Output, err)
	}
	e.checkScreenshots(t, r, 4)
}

// The scripted model's replies.

// act is one action of a planned step, naming its element by text.
type act = llmtest.Action

var (
	clickOn  = llmtest.Click
	typeInto = llmtest.Type
	pressKey = llmtest.Key
)

// plan answers a planning call whose prompt matches with the actions,
// finding each element's id in the page the request shows.
func plan(match, thought string, acts ...act) llmtest.Step {
	return llmtest.Step{Kind: llm.KindPlan, Match: match, Reply: llmtest.Plan(thought, nil, acts...)}
}

// decide answers a planning call with complete or terminate.
func decide(match, typ, text string) llmtest.Step {
	return llmtest.Step{Kind: llm.KindPlan, Match: match, Reply: llmtest.JSON(map[string]any{
		"thought": text, "actions": []map[string]string{{"type": typ, "text": text}}})}
}

// verify answers a check of criteria (a completion, a validation block).
func verify(match, status, reasoning string) llmtest.Step {
	return llmtest.Step{Kind: llm.KindVerify, Match: match,
		Reply: llmtest.JSON(map[string]string{"status": status, "reasoning": reasoning})}
}

// extract answers an extraction with what data reads from the page text
// of the request.
func extract(match string, data func(page string) any) llmtest.Step {
	return llmtest.Step{Kind: llm.KindExtract, Match: match, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
		return llmtest.JSON(data(r.Prompt())), nil
	})}
}

var welcomeText = regexp.MustCompile(`Welcome back, \w+`)

// product is a result of the shop.
type product struct {
	Name   string   `json:"name"`
	Price  float64  `json:"price"`
	Rating *float64 `json:"rating,omitempty"`
}

// String writes a product as "name $price rating".
func (p product) String() string {
	s := p.Name + " $" + strconv.FormatFloat(p.Price, 'f', 2, 64)
	if p.Rating != nil {
		s += " " + strconv.FormatFloat(*p.Rating, 'f', -1, 64)
	}
	return s
}

// shopRow is a result as the results page shows it in the page text:
// "name — $price — rating of 5".
var shopRow = regexp.MustCompile(`(?m)^\s+(.+?) — \$([0-9.]+) — ([0-9.]+) of 5`)

// shopRowsIn reads the results off a page's text, as a model would.
func shopRowsIn(page string, withRating bool) []product {
	out := []product{}
	for _, m := range shopRow.FindAllStringSubmatch(page, -1) {
		p := product{Name: strings.TrimSpace(m[1]), Price: atof(m[2])}
		if withRating {
			r := atof(m[3])
			p.Rating = &r
		}
		out = append(out, p)
	}
	return out
}

// catalogRow is an item of the CATALOG of the shop's results page.
var catalogRow = regexp.MustCompile(`\['([^']+)', '([0-9.]+)', '([0-9.]+)'\]`)

// catalog returns the items of the shop whose name contains query, in page
// order, read from the results page's own source.
func catalog(t *testing.T, query string) []product {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(siteDir, "shop", "results.html"))
	if err != nil {
		t.Fatal(err)
	}
	var out []product
	for _, m := range catalogRow.FindAllStringSubmatch(string(b), -1) {
		if strings.Contains(strings.ToLower(m[1]), strings.ToLower(query)) {
			r := atof(m[3])
			out = append(out, product{Name: m[1], Price: atof(m[2]), Rating: &r})
		}
	}
	return out
}

func equalProducts(got, want []product, withRating bool) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Name != want[i].Name || got[i].Price != want[i].Price {
			return false
		}
		if withRating && (got[i].Rating == nil || *got[i].Rating != *want[i].Rating) {
			return false
		}
	}
	return true
}

func atof(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err) // the patterns only match numbers
	}
	return f
}

// blockSchema returns the data_schema of the block labelled label in an
// agent file, compiled.
func blockSchema(t *testing.T, file, label string) *jsonschema.Schema {
	t.Helper()
	agents, err := agentfile.Load([]string{file}, agentfile.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	var walk func(client.Blocks)
	walk = func(bs client.Blocks) {
		for _, b := range bs {
			switch x := b.(type) {
			case *client.ExtractionBlock:
				if x.Label == label {
					raw = x.DataSchema
				}
			case *client.ForLoopBlock:
				walk(x.LoopBlocks)
			}
		}
	}
	walk(agents[0].Definition.WorkflowDefinition.Blocks)
	if raw == nil {
		t.Fatalf("%s has no extraction block %q with a data_schema", file, label)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("%s, block %s: the data_schema does not compile: %v", file, label, err)
	}
	return s
}

// validate checks a block's output against its schema.
func validate(t *testing.T, s *jsonschema.Schema, data json.RawMessage) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("output %s: %v", data, err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("output %s does not match the block's data_schema: %v", data, err)
	}
}

func decodeOutput(t *testing.T, r *client.Run) map[string]any {
	t.Helper()
	var out map[string]any
	if err := r.DecodeOutput(&out); err != nil {
		t.Fatalf("output %s: %v", r.Output, err)
	}
	return out
}

// str reads a string at a path of nested objects ("" when absent).
func str(v any, path ...string) string {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, bytes.TrimSpace(b)); err != nil {
		t.Fatalf("not JSON: %q", b)
	}
	return buf.String()
}

// fetch GETs a URL (an artifact's signed URL, no key needed).
func fetch(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return b
}
