// Command agent is the evaluation of the agent: tasks of our own on the
// test site (internal/testsite), each with a programmatic check, run
// one at a time with the engine in-process, Debian's Chromium and the
// model configured as the daemon reads it (ABCTL_LLM_*, see package llm).
//
//	go run ./bench/agent                         # every task, the configured model
//	go run ./bench/agent -run 'tree|icons' -md report.md -out report.json
//	go run ./bench/agent -record DIR             # the same, answers saved to DIR/TASK.json
//	go run ./bench/agent -replay DIR             # answers from DIR, no model
//	go run ./bench/agent -convert HANDDIR -task NAME -to DIR
//	go run ./bench/agent -list                   # the tasks
//
// It reports, per task and in total: success (and which check failed),
// status, steps, model calls, prompt tokens per step and the time outside
// the model. The markdown table goes to stdout at the end. See
// bench/agent/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"time"

	ts "github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/llm"
)

// Options are the command's flags.
type Options struct {
	Run     string
	Out, MD string
	Replay  string
	Record  string
	Timeout time.Duration
	Keep    string
	Verbose bool
}

func main() {
	var o Options
	var convert, task, to string
	var list bool
	flag.StringVar(&o.Run, "run", "", "run only the tasks whose name matches this regular expression")
	flag.StringVar(&o.Out, "out", "", "write the report as JSON to this file")
	flag.StringVar(&o.MD, "md", "", "write the report as a markdown table to this file (it is printed to stdout too)")
	flag.StringVar(&o.Replay, "replay", "", "answer from the recordings of this directory (TASK.json) instead of a model; tasks without one are skipped")
	flag.StringVar(&o.Record, "record", "", "save the configured model's answers to this directory, one TASK.json per task")
	flag.DurationVar(&o.Timeout, "timeout", 0, "time limit per task (default 30m, 2m with -replay)")
	flag.StringVar(&o.Keep, "keep", "", "keep the runs' directories (steps.json, screenshots) under this directory")
	flag.BoolVar(&o.Verbose, "v", false, "log the engine's diagnostics to stderr")
	flag.StringVar(&convert, "convert", "", "turn this hand-played directory (NNNN.request.json, NNNN.answer.txt) into a recording; needs -task and -to")
	flag.StringVar(&task, "task", "", "with -convert: the task the directory played")
	flag.StringVar(&to, "to", "", "with -convert: the recordings' directory")
	flag.BoolVar(&list, "list", false, "list the tasks and exit")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(fmt.Errorf("unexpected arguments %q: every option is a flag (see -h)", flag.Args()))
	}
	switch {
	case list:
		for _, t := range Tasks() {
			fmt.Printf("%-24s %-40s %s\n", t.Name, strings.Join(t.Classes, ","), t.Prompt)
		}
		return
	case convert != "":
		fail(convertCmd(convert, task, to))
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := Evaluate(ctx, o, os.Getenv)
	if err != nil {
		fail(err)
	}
	if err := rep.WriteMarkdown(os.Stdout); err != nil {
		fail(err)
	}
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// convertCmd writes the recording of a hand-played task.
func convertCmd(handDir, task, to string) error {
	if task == "" || to == "" {
		return fmt.Errorf("-convert needs -task NAME and -to DIR")
	}
	if _, ok := findTask(task); !ok {
		return fmt.Errorf("there is no task %q (see -list)", task)
	}
	rec, err := ConvertHand(handDir)
	if err != nil {
		return err
	}
	if err := rec.Write(to, task); err != nil {
		return err
	}
	fmt.Printf("%s: %d calls\n", recordingPath(to, task), len(rec))
	return nil
}

func findTask(name string) (Task, bool) {
	for _, t := range Tasks() {
		if t.Name == name {
			return t, true
		}
	}
	return Task{}, false
}

// Evaluate runs the tasks o selects and returns the report (also written
// to o.Out and o.MD when set). getenv reads the model's configuration.
func Evaluate(ctx context.Context, o Options, getenv func(string) string) (*Report, error) {
	if o.Replay != "" && o.Record != "" {
		return nil, fmt.Errorf("-replay and -record cannot go together")
	}
	var match *regexp.Regexp
	if o.Run != "" {
		var err error
		if match, err = regexp.Compile(o.Run); err != nil {
			return nil, fmt.Errorf("-run: %w", err)
		}
	}
	var tasks []Task
	for _, t := range Tasks() {
		if match == nil || match.MatchString(t.Name) {
			tasks = append(tasks, t)
		}
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("-run %q matches no task (see -list)", o.Run)
	}
	log := slog.New(slog.DiscardHandler)
	if o.Verbose {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}

	rep := &Report{Mode: "live", At: time.Now()}
	var hook modelHook = noHook{}
	var replay *Replayer
	var cfg llm.Config
	switch {
	case o.Replay != "":
		if st, err := os.Stat(o.Replay); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("-replay %s: not a directory of recordings", o.Replay)
		}
		r, err := NewReplayer(o.Replay)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		replay, hook, cfg = r, r, r.Config()
		rep.Mode = "replay"
		if o.Timeout == 0 {
			o.Timeout = 2 * time.Minute
		}
	default:
		var err error
		if cfg, err = llm.ConfigFromEnv(getenv); err != nil {
			return nil, fmt.Errorf("the model's configuration: %w", err)
		}
		if o.Record != "" {
			r, err := NewRecorder(o.Record, cfg)
			if err != nil {
				return nil, err
			}
			defer r.Close()
			hook, cfg = r, r.Config(cfg)
			rep.Mode = "record"
		}
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Minute
	}
	rep.Model = cfg.Model
	models, err := llm.NewRegistry(cfg, getenv)
	if err != nil {
		return nil, fmt.Errorf("the model: %w", err)
	}
	site, stopSite, err := ts.Serve("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer stopSite()
	if err := site.AddAccount(loginUser, loginPassword, loginTOTP); err != nil {
		return nil, err
	}
	eng, err := NewEngine(ctx, models, log)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	if o.Keep != "" {
		if err := os.MkdirAll(o.Keep, 0o755); err != nil {
			return nil, err
		}
	}
	runner := &Runner{Site: site, Engine: eng, Hook: hook, Timeout: o.Timeout, Keep: o.Keep, Log: log}
	for _, t := range tasks {
		if ctx.Err() != nil {
			break
		}
		if replay != nil {
			ok, err := replay.Has(t.Name)
			if err != nil {
				return nil, err
			}
			if !ok {
				rep.Tasks = append(rep.Tasks, TaskResult{Name: t.Name, Classes: t.Classes, Skipped: "no recording"})
				continue
			}
		}
		tr := runner.Run(ctx, t)
		fmt.Fprintf(os.Stderr, "%-24s %s\n", t.Name, verdict(tr))
		rep.Tasks = append(rep.Tasks, tr)
	}
	rep.Summarize()
	if o.Out != "" {
		if err := rep.WriteJSON(o.Out); err != nil {
			return nil, err
		}
	}
	if o.MD != "" {
		f, err := os.Create(o.MD)
		if err != nil {
			return nil, err
		}
		err = rep.WriteMarkdown(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	return rep, ctx.Err()
}

func verdict(tr TaskResult) string {
	if tr.Success {
		return fmt.Sprintf("ok (%d steps, %d calls)", tr.Steps, tr.Calls)
	}
	return "FAILED: " + tr.Reason
}
