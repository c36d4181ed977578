package blocks

// The code block: Python code run in a separate python3 process, as the
// hosted service runs it, with the run's parameters and the outputs of the
// blocks before it as variables; the names the code defines are the
// block's output.
//
// A daemon that serves several organizations must not run their code by
// default: code blocks run only when the engine's CodeConfig.Enabled is set
// (the daemon's --allow-code-blocks); otherwise an agent with a code block
// fails before it starts (CheckCode). When they run, each block gets:
//
//   - a python3 process of its own (-I: no user site-packages, no
//     PYTHON* variables), killed with its process group when the block's
//     wall-clock limit (CodeConfig.Timeout) passes;
//   - a memory limit: the runner sets RLIMIT_AS (address space) with
//     Python's resource.setrlimit, soft and hard, before it reads the
//     inputs, so the code cannot raise it again; an allocation beyond it
//     raises MemoryError, reported as such;
//   - an empty environment but for LANG, and HOME and TMPDIR, which are a
//     temporary working directory removed afterwards: none of the
//     daemon's variables (keys, passwords) reach the code;
//   - its inputs as JSON on stdin: the parameters parameter_keys names
//     (all of the run's parameters without it), every <label>_output so
//     far and a loop's current_value, current_index and current_item. A
//     credential parameter is the map templates see, its secrets as
//     placeholders: the code never sees a secret.
//
// The output is every top-level name the code bound to a JSON value, except
// names starting with "_", modules, functions and classes, and inputs the
// code left as they were. The code's stdout and stderr are kept (their
// last codeOutputTail bytes) for the failure reason.
//
// Code written for the service's browser (page, skyvern, a top-level
// await) cannot run here and is refused before the run (checkCode).
//
// The limits bound what the code uses; they are no sandbox. The code runs
// as the daemon's user: it can read what that user reads (the daemon's
// data directory too) and reach the network. --allow-code-blocks trusts
// the authors of every agent with that account.

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/blocks/python"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// CodeFlag is the daemon flag that lets code blocks run, named in the
// reasons of runs that need it.
const CodeFlag = "--allow-code-blocks"

// Defaults of CodeConfig.
const (
	DefaultCodeTimeout   = python.DefaultTimeout
	DefaultCodeMemoryMiB = python.DefaultMemoryMiB
)

// CodeConfig says whether and how code blocks run (see package
// blocks/python). The zero value refuses them.
type CodeConfig = python.Config

// CheckCode checks, before a run starts, that the engine may run the code
// blocks of def: that cfg allows them and that the interpreter is there.
func CheckCode(ctx context.Context, def *client.WorkflowDefinition, cfg CodeConfig) error {
	var first *client.CodeBlock
	var walk func(bs client.Blocks)
	walk = func(bs client.Blocks) {
		for _, b := range bs {
			if first != nil {
				return
			}
			switch x := b.(type) {
			case *client.CodeBlock:
				first = x
			case *client.ForLoopBlock:
				walk(x.LoopBlocks)
			case *client.WhileLoopBlock:
				walk(x.LoopBlocks)
			}
		}
	}
	walk(def.Blocks)
	if first == nil {
		return nil
	}
	if !cfg.Enabled {
		return fmt.Errorf("block %q (code) runs Python code, which this daemon does not allow: start the daemon with %s to run code blocks (each in a separate python3 process with a time and memory limit)", first.Label, CodeFlag)
	}
	if _, err := cfg.Interpreter(ctx); err != nil {
		return fmt.Errorf("block %q (code): %w", first.Label, err)
	}
	return nil
}

// pythonName matches the names a Python variable may have (ASCII).
var pythonName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// browserName finds the service's browser objects used as names (not as
// attributes: self.page is the code's own), and browserBinding a binding of
// its own of such a name (page = ..., for page in ..., as page).
var (
	browserName    = regexp.MustCompile(`(?:^|[^.\w])(page|skyvern)\b`)
	browserBinding = `(?m)(?:^\s*|[,(]\s*)NAME\s*(?:,[^=\n]*)?=[^=]|\bfor\s+[\w\s,]*\bNAME\b[\w\s,]*\bin\b|\bas\s+NAME\b|\bdef\s+NAME\b|\bimport\s+NAME\b`
	topLevelAwait  = regexp.MustCompile(`(?m)^\S.*\bawait\b|^await\b`)
)

func checkCode(b *client.CodeBlock) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("block %q (code) "+format, append([]any{b.Label}, args...)...)
	}
	if strings.TrimSpace(b.Code) == "" {
		return fail("has no code")
	}
	for _, k := range b.ParameterKeys {
		if !pythonName.MatchString(k) {
			return fail("names %q in parameter_keys, which cannot be a Python variable (letters, digits and _, not starting with a digit)", k)
		}
	}
	code := python.CodeOnly(b.Code)
	for _, m := range browserName.FindAllStringSubmatch(code, -1) {
		name := m[1]
		if regexp.MustCompile(strings.ReplaceAll(browserBinding, "NAME", name)).MatchString(code) {
			continue
		}
		return fail("uses %q, the hosted service's browser object, which this daemon's code blocks do not have: "+
			"they run plain Python without the browser; act on the page with goto_url, action or extraction blocks and pass what they output to the code", name)
	}
	if topLevelAwait.MatchString(code) {
		return fail("uses await at the top level, as the hosted service's code blocks run inside its browser's event loop; " +
			"this daemon runs plain Python: call asynchronous code with asyncio.run")
	}
	return nil
}

func (in peopleBlocks) code(ctx context.Context, b *client.CodeBlock, sc *scope) (any, error) {
	cfg := in.codeConf
	if !cfg.Enabled {
		return nil, fmt.Errorf("this daemon does not run code blocks: start it with %s", CodeFlag)
	}
	inputs, err := codeInputs(b, sc)
	if err != nil {
		return nil, err
	}
	lines := strings.Count(strings.TrimRight(b.Code, "\n"), "\n") + 1
	out, err := in.step(b.Label, steplog.Action{Type: "run_code", Text: fmt.Sprintf("%d lines of Python", lines)}, func() (any, string, error) {
		res, err := python.Run(ctx, cfg, b.Code, inputs)
		if err != nil {
			return nil, "", err
		}
		names := make([]string, 0, len(res.Output))
		for k := range res.Output {
			names = append(names, k)
		}
		slices.Sort(names)
		result := "defined " + strings.Join(names, ", ")
		if len(names) == 0 {
			result = "defined no JSON value"
		}
		if len(res.Skipped) > 0 {
			result += "; left out (not JSON): " + strings.Join(res.Skipped, ", ")
		}
		return res.Output, result, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// codeInputs are the variables of a code block: the parameters it names
// (all without parameter_keys), every <label>_output so far and the
// current loop's values.
func codeInputs(b *client.CodeBlock, sc *scope) (map[string]any, error) {
	vars := sc.vars()
	inputs := map[string]any{}
	if len(b.ParameterKeys) > 0 {
		for _, k := range b.ParameterKeys {
			v, ok := vars[k]
			if !ok {
				return nil, &templateError{fmt.Errorf("parameter_keys names %q, which is neither a parameter nor an output of this run", k)}
			}
			inputs[k] = v
		}
	} else {
		for k, v := range sc.in.params {
			if pythonName.MatchString(k) {
				inputs[k] = v
			}
		}
	}
	for k, v := range vars {
		if strings.HasSuffix(k, "_output") && pythonName.MatchString(k) {
			inputs[k] = v
		}
	}
	for _, k := range []string{"current_value", "current_index", "current_item"} {
		if v, ok := vars[k]; ok && sc.inLoop() {
			inputs[k] = v
		}
	}
	return inputs, nil
}
