package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
)

// scriptAgent is an agent whose runs follow the scripted executor's script
// parameter; typed parameters exercise --param conversion.
const scriptAgent = `title: Scripted
workflow_definition:
  parameters:
    - {key: script, parameter_type: workflow, workflow_parameter_type: string}
    - {key: count, parameter_type: workflow, workflow_parameter_type: integer, default_value: 1}
    - {key: urgent, parameter_type: workflow, workflow_parameter_type: boolean, default_value: false}
    - {key: filters, parameter_type: workflow, workflow_parameter_type: json, default_value: {}}
  blocks:
    - {block_type: goto_url, label: open, url: "http://127.0.0.1:1/{{count}}"}
`

// TestRunExitCodes: the exit status says how the run ended; the output is
// JSON on stdout, and a run that did not complete writes there only what it
// extracted, nothing when that is nothing (issue 30: it printed null);
// progress is plain lines on stderr (no terminal).
func TestRunExitCodes(t *testing.T) {
	e := newCLIEnv(t)
	file := e.write("scripted.yaml", scriptAgent)
	tests := []struct {
		script string
		code   int
		output string
		stderr []string
	}{
		{`steps=2;output={"price":12.5}`, 0, `{"price":12.5}`, []string{"completed, 2 steps"}},
		{`steps=1;status=failed;reason=the form was gone`, 1, ``, []string{"failed", "reason: the form was gone"}},
		{`steps=1;status=terminated;reason=no such product`, 1, ``, []string{"terminated"}},
		{`steps=1;status=timed_out`, 3, ``, []string{"timed_out"}},
		{`steps=1;status=failed;reason=page two was gone;output={"page_one":[1,2]}`, 1, `{"page_one":[1,2]}`, []string{"failed", "reason: page two was gone"}},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			r := e.run("", "run", file, "--param", "script="+tt.script, "--param", "count=3", "--param", "urgent=true",
				"--param", `filters={"a":[1,2]}`).expect(t, tt.code)
			if tt.output == "" {
				if r.stdout != "" {
					t.Errorf("stdout %q, want nothing", r.stdout)
				}
			} else {
				var got any
				if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
					t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
				}
				if gj, _ := json.Marshal(got); string(gj) != mustCompact(tt.output) {
					t.Errorf("output %s, want %s", gj, tt.output)
				}
			}
			contains(t, "stderr", r.stderr, append([]string{"agent/scripted", "started"}, tt.stderr...)...)
			if strings.Contains(r.stderr, "\x1b[") {
				t.Errorf("escape sequences on a non-terminal stderr:\n%q", r.stderr)
			}
		})
	}
	// The parameters arrived typed.
	job := e.exec.Order()
	if len(job) == 0 {
		t.Fatal("the executor saw no job")
	}
	last, _ := e.exec.Job(job[len(job)-1])
	for k, want := range map[string]string{"count": "3", "urgent": "true", "filters": `{"a":[1,2]}`} {
		if got := string(last.Parameters[k]); got != want {
			t.Errorf("parameter %s = %s, want %s", k, got, want)
		}
	}
}

func mustCompact(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRunParameterErrors(t *testing.T) {
	e := newCLIEnv(t)
	file := e.write("scripted.yaml", scriptAgent)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"script (string) has no default"}},
		{[]string{"--param", "script=x", "--param", "count=many"}, []string{"count (integer): expected an integer", `"many"`}},
		{[]string{"--param", "script=x", "--param", "colour=red"}, []string{`no parameter "colour"`, "count (integer)", "script (string)"}},
		{[]string{"--param", "script"}, []string{`--param "script": write key=value`}},
	} {
		r := e.run("", append([]string{"run", file}, tc.args...)...).expect(t, 2)
		contains(t, "stderr", r.stderr, tc.want...)
	}
	r := e.run("", "run", file, "--prompt", "x").expect(t, 2)
	contains(t, "stderr", r.stderr, "not several")
	r = e.run("", "run").expect(t, 2)
	contains(t, "stderr", r.stderr, "--prompt TEXT")
}

func TestRunTaskDetachAndWatch(t *testing.T) {
	e := newCLIEnv(t)
	// A task run that waits at a gate: --detach returns its id at once.
	r := e.run("", "run", "--prompt", "script: steps=1;block=g1;output={\"ok\":true}", "--url", "http://127.0.0.1:1/", "--detach").expect(t, 0)
	id := strings.TrimSpace(r.stdout)
	if !regexp.MustCompile(`^tsk_\d+$`).MatchString(id) {
		t.Fatalf("--detach printed %q, want a task run id", id)
	}
	// Watching with a timeout leaves it running: exit 8 and how to resume.
	r = e.run("", "runs", "watch", id, "--timeout", "300ms").expect(t, 8)
	contains(t, "stderr", r.stderr, "--timeout", "abctl runs watch "+id, "abctl runs cancel "+id)
	if r.stdout != "" {
		t.Errorf("a run still going printed output: %q", r.stdout)
	}
	e.exec.Release("g1")
	r = e.run("", "runs", "watch", id).expect(t, 0)
	if mustCompact(r.stdout) != `{"ok":true}` {
		t.Errorf("output %q", r.stdout)
	}
	run, err := e.client.Runs.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var req client.TaskRunRequest
	if err := json.Unmarshal(run.RunRequest, &req); err != nil || req.URL == "" {
		t.Errorf("run_request %s", run.RunRequest)
	}
}

func TestRunsCancel(t *testing.T) {
	e := newCLIEnv(t)
	var ids []string
	for range 3 {
		r := e.run("", "run", "--prompt", "script: block=never", "--detach").expect(t, 0)
		ids = append(ids, strings.TrimSpace(r.stdout))
	}
	e.run("", "runs", "cancel", ids[0]).expect(t, 0)
	r := e.run("", "runs", "cancel", ids[1], ids[2], "tsk_1").expect(t, 1)
	contains(t, "stderr", r.stderr, "Could not cancel tsk_1")
	for _, id := range ids {
		run, err := e.client.Runs.Wait(t.Context(), id, &client.WaitOptions{Interval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != client.RunStatusCanceled {
			t.Errorf("%s is %s, want canceled", id, run.Status)
		}
	}
	// Watching a canceled run: exit 1.
	e.run("", "runs", "watch", ids[0]).expect(t, 1)
}
