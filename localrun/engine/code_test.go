package engine_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/blocks"
	"github.com/abctl/abctl/localrun/executor"
)

// needPython skips the test when python3 is missing (CI installs the
// Debian package python3).
func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("skipped: python3 not installed (apt-get install python3)")
	}
}

func codeBlock(label, code string, keys ...string) *client.CodeBlock {
	return &client.CodeBlock{BlockBase: base(label), Code: code, ParameterKeys: keys}
}

// TestCodeBlock: a code block computes from a parameter and the output of
// an http_request block before it; the names it defines are its output,
// which a later block sends back to the server. The code sees none of the
// daemon's environment.
func TestCodeBlock(t *testing.T) {
	needBrowser(t)
	needPython(t)
	t.Setenv("ABCTL_TEST_DAEMON_SECRET", "daemon-only-value")
	var mu sync.Mutex
	var posted []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			posted, _ = io.ReadAll(r.Body)
			mu.Unlock()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"prices": [3, 4.5, 12]}`))
	}))
	defer srv.Close()
	e := newEngine(t, engine.Config{Code: blocks.CodeConfig{Enabled: true}})
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("server"), jsonParam("rate")},
		Blocks: client.Blocks{
			&client.HTTPRequestBlock{BlockBase: base("fetch"), URL: "{{ server }}/prices"},
			codeBlock("calc", `
import math, os

def net(p):
    return round(p * (1 - rate), 2)

prices = fetch_output["body"]["prices"]
total = sum(net(p) for p in prices)
summary = {"count": len(prices), "total": total, "ceil": math.ceil(total)}
environment = sorted(os.environ)
_hidden = 1
print("computed", total)
`),
			&client.HTTPRequestBlock{BlockBase: base("report"), Method: "POST", URL: "{{ server }}/report",
				Body: json.RawMessage(`{"total": "{{ calc_output.total }}", "count": "{{ calc_output.summary.count }}"}`)},
			// parameter_keys: the parameters it names, and the outputs.
			codeBlock("names", "seen = sorted(k for k in globals() if not k.startswith('_'))\n", "rate"),
		},
	}
	res := e.Execute(t.Context(), job(t, def, map[string]any{"server": srv.URL, "rate": 0.5}), &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", res.Status, res.FailureReason)
	}
	out := outputOf(t, res)
	calc, _ := out["calc_output"].(map[string]any)
	if calc["total"] != 9.75 || calc["prices"] == nil {
		t.Errorf("calc_output %v", calc)
	}
	if s, _ := calc["summary"].(map[string]any); s["count"] != 3.0 || s["ceil"] != 10.0 {
		t.Errorf("summary %v", calc["summary"])
	}
	for _, name := range []string{"rate", "server", "fetch_output", "net", "math", "os", "_hidden"} {
		if _, ok := calc[name]; ok {
			t.Errorf("the output holds %q, which the code did not define as a value: %v", name, calc)
		}
	}
	env, _ := calc["environment"].([]any)
	for _, v := range env {
		if name := v.(string); name != "HOME" && name != "TMPDIR" && name != "LANG" && name != "LC_CTYPE" {
			t.Errorf("the code saw the variable %s of the daemon's environment", name)
		}
	}
	names, _ := out["names_output"].(map[string]any)
	if seen := fmt.Sprint(names["seen"]); seen != "[calc_output fetch_output rate report_output]" {
		t.Errorf("with parameter_keys [rate], the code saw %s", seen)
	}
	mu.Lock()
	got := string(posted)
	mu.Unlock()
	if !strings.Contains(got, `"total":"9.75"`) || !strings.Contains(got, `"count":"3"`) {
		t.Errorf("the server received %s", got)
	}
}

// TestCodeBlockFailures: a code block that loops forever is stopped at its
// time limit, one that takes too much memory at its memory limit, a syntax
// error and an exception fail the run with their line; each reason names
// the block.
func TestCodeBlockFailures(t *testing.T) {
	needBrowser(t)
	needPython(t)
	// Only the endless loop meets the short limit: the others end on their
	// own, and a limit they could meet on a busy machine (Python's start
	// alone can take seconds there) would make the test depend on load.
	short := newEngine(t, engine.Config{Code: blocks.CodeConfig{Enabled: true, Timeout: 3 * time.Second, MemoryMiB: 256}})
	long := newEngine(t, engine.Config{Code: blocks.CodeConfig{Enabled: true, Timeout: 10 * time.Minute, MemoryMiB: 256}})
	for _, c := range []struct{ name, code, want string }{
		{"timeout", "while True:\n    pass\n", "ran longer than its limit of 3s (the daemon's --code-timeout) and was stopped"},
		{"memory", "print('allocating')\nblob = bytearray(2 << 30)\n", "ran out of memory (its limit is 256 MiB, the daemon's --code-memory); its stdout ends with: allocating"},
		{"syntax", "x = 1\ny = (x +\n", "syntax error at line 2: '(' was never closed"},
		{"exception", "import sys\nprint('dividing', file=sys.stderr)\na = 1\nb = a / 0\n", "raised ZeroDivisionError at line 4: division by zero; its stderr ends with: dividing"},
		{"exit", "import sys\nsys.exit(3)\n", "the code called exit(3)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			def := client.WorkflowDefinition{Blocks: client.Blocks{codeBlock("compute", c.code)}}
			e := long
			if c.name == "timeout" {
				e = short
			}
			res := e.Execute(t.Context(), job(t, def, nil), &progress{})
			t.Log(res.FailureReason)
			if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, `Block "compute" (code) failed: `) ||
				!strings.Contains(res.FailureReason, c.want) {
				t.Errorf("%s: %s", res.Status, res.FailureReason)
			}
		})
	}
}

// TestCodeBlockRefusedBeforeStart: without the daemon's permission, or
// with code written for the hosted service's browser, the run fails
// before it starts, naming the block and what to do.
func TestCodeBlockRefusedBeforeStart(t *testing.T) {
	needBrowser(t)
	needPython(t)
	run := func(e *engine.Engine, code string) executor.Result {
		def := client.WorkflowDefinition{
			Parameters: []client.Parameter{jsonParam("items")},
			Blocks: client.Blocks{
				&client.ForLoopBlock{BlockBase: base("each"), LoopOverParameterKey: "items",
					LoopBlocks: client.Blocks{codeBlock("compute", code)}},
			}}
		return e.Execute(t.Context(), job(t, def, map[string]any{"items": []int{1, 2}}), &progress{})
	}
	off := newEngine(t, engine.Config{})
	res := run(off, "x = 1")
	if res.Status != client.RunStatusFailed || !strings.HasPrefix(res.FailureReason, "The agent cannot run: ") ||
		!strings.Contains(res.FailureReason, `block "compute" (code)`) || !strings.Contains(res.FailureReason, "--allow-code-blocks") {
		t.Errorf("without --allow-code-blocks: %s: %s", res.Status, res.FailureReason)
	}
	on := newEngine(t, engine.Config{Code: blocks.CodeConfig{Enabled: true}})
	for code, want := range map[string]string{
		"await page.goto('https://example.com')\n": `uses "page"`,
		"title = skyvern.extract('the title')\n":   `uses "skyvern"`,
		"import asyncio\nawait asyncio.sleep(1)\n": "uses await at the top level",
	} {
		res := run(on, code)
		if res.Status != client.RunStatusFailed || !strings.HasPrefix(res.FailureReason, "The agent cannot run: ") ||
			!strings.Contains(res.FailureReason, `block "compute" (code)`) || !strings.Contains(res.FailureReason, want) {
			t.Errorf("%q: %s: %s", code, res.Status, res.FailureReason)
		}
	}
	// The code's own page, and the word in a text or a comment, are fine.
	for _, code := range []string{
		"page = 2\nnext_page = page + 1\n",
		"note = 'open the page with skyvern'  # not the page object\n",
		"for page in range(3):\n    last = page * current_value\n",
	} {
		if res := run(on, code); res.Status != client.RunStatusCompleted {
			t.Errorf("%q: %s: %s", code, res.Status, res.FailureReason)
		}
	}
}

// TestDaemonCodeBlock: through the daemon, which stores a block's
// parameter_keys as the parameters' records (as the service answers
// them), a code block still sees exactly the parameters it names.
func TestDaemonCodeBlock(t *testing.T) {
	needBrowser(t)
	needPython(t)
	e := newEngine(t, engine.Config{Code: blocks.CodeConfig{Enabled: true}})
	c, _ := startDaemon(t, e)
	ctx := t.Context()
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{jsonParam("rate"), jsonParam("other")},
		Blocks: client.Blocks{
			codeBlock("calc", "net = round(100 * (1 - rate), 2)\nseen = sorted(k for k in globals() if not k.startswith('_') and k not in ('net',))\n", "rate"),
		},
	}
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Code", WorkflowDefinition: def}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{"rate": 0.25, "other": 1}})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
	}
	var out struct {
		Calc struct {
			Net  float64  `json:"net"`
			Seen []string `json:"seen"`
		} `json:"calc_output"`
	}
	if err := done.DecodeOutput(&out); err != nil {
		t.Fatal(err)
	}
	if out.Calc.Net != 75 || strings.Join(out.Calc.Seen, ",") != "rate" {
		t.Errorf("calc_output %+v, want net 75 and only rate seen (%s)", out.Calc, done.Output)
	}
}
