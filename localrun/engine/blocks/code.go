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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// Defaults of CodeConfig.
const (
	DefaultCodeTimeout   = 60 * time.Second
	DefaultCodeMemoryMiB = 1024 // of address space
)

// codeOutputTail is how much of the code's stdout and of its stderr is
// kept for a failure reason.
const codeOutputTail = 2000

// maxCodeResult bounds the JSON of a code block's output.
const maxCodeResult = 32 << 20

// CodeFlag is the daemon flag that lets code blocks run, named in the
// reasons of runs that need it.
const CodeFlag = "--allow-code-blocks"

// CodeConfig says whether and how code blocks run. The zero value refuses
// them.
type CodeConfig struct {
	// Enabled lets code blocks run (the daemon's --allow-code-blocks).
	Enabled bool
	// Python is the interpreter; "" is python3 on PATH.
	Python string
	// Timeout bounds the wall-clock time of one code block; 0 means
	// DefaultCodeTimeout.
	Timeout time.Duration
	// MemoryMiB bounds the address space of one code block's process, in
	// MiB; 0 means DefaultCodeMemoryMiB.
	MemoryMiB int
}

func (c CodeConfig) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultCodeTimeout
}

// memory is the limit of the address space, in bytes.
func (c CodeConfig) memory() int64 {
	if c.MemoryMiB > 0 {
		return int64(c.MemoryMiB) << 20
	}
	return DefaultCodeMemoryMiB << 20
}

// pythonPaths caches the interpreter each configured name resolves to.
var pythonPaths sync.Map // string -> string

// python returns the path of the interpreter itself: a name on PATH may
// be a launcher (a pyenv shim) that needs the daemon's environment, which
// the code does not get, so the interpreter is asked where it lives.
func (c CodeConfig) python(ctx context.Context) (string, error) {
	name := c.Python
	if name == "" {
		name = "python3"
	}
	if p, ok := pythonPaths.Load(name); ok {
		return p.(string), nil
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("code blocks need %s, which is not installed or not on PATH (Debian and Ubuntu: apt-get install python3)", name)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return "", fmt.Errorf("code blocks need %s, which does not run (%s): %v", name, path, err)
	}
	real := strings.TrimSpace(string(out))
	if real == "" || !filepath.IsAbs(real) {
		real = path
	}
	pythonPaths.Store(name, real)
	return real, nil
}

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
	if _, err := cfg.python(ctx); err != nil {
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
	code := pythonCodeOnly(b.Code)
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

// pythonCodeOnly returns src with its comments and the contents of its
// string literals blanked (newlines kept), so that names are looked for in
// code only.
func pythonCodeOnly(src string) string {
	b := []byte(src)
	out := make([]byte, len(b))
	copy(out, b)
	blank := func(from, to int) {
		for k := from; k < to && k < len(out); k++ {
			if out[k] != '\n' {
				out[k] = ' '
			}
		}
	}
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '#':
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				j = len(b) - i
			}
			blank(i, i+j)
			i += j
		case c == '\'' || c == '"':
			quote := string(c)
			if i+2 < len(b) && b[i+1] == c && b[i+2] == c {
				quote = strings.Repeat(quote, 3)
			}
			j := i + len(quote)
			for j < len(b) {
				if b[j] == '\\' {
					j += 2
					continue
				}
				if strings.HasPrefix(string(b[j:]), quote) {
					break
				}
				if len(quote) == 1 && b[j] == '\n' {
					break // an unterminated literal: Python's error
				}
				j++
			}
			blank(i+len(quote), min(j, len(b)))
			i = min(j+len(quote), len(b))
		default:
			i++
		}
	}
	return string(out)
}

// codeResult is what the runner writes to its result file.
type codeResult struct {
	Output  map[string]any `json:"output"`
	Skipped []string       `json:"skipped"`
	Error   *struct {
		Kind    string `json:"kind"` // syntax, memory, exception, limits
		Type    string `json:"type"`
		Message string `json:"message"`
		Line    int    `json:"line"`
		Text    string `json:"text"`
	} `json:"error"`
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
	rec, err := in.steps.Start(b.Label, steplog.Action{Type: "run_code", Text: fmt.Sprintf("%d lines of Python", lines)})
	if err != nil {
		return nil, err
	}
	res, err := runPython(ctx, cfg, b.Code, inputs)
	result := ""
	if err == nil {
		names := make([]string, 0, len(res.Output))
		for k := range res.Output {
			names = append(names, k)
		}
		slices.Sort(names)
		result = "defined " + strings.Join(names, ", ")
		if len(names) == 0 {
			result = "defined no JSON value"
		}
		if len(res.Skipped) > 0 {
			result += "; left out (not JSON): " + strings.Join(res.Skipped, ", ")
		}
	}
	in.steps.End(rec, "", result, err)
	if err != nil {
		return nil, err
	}
	return res.Output, nil
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

// runPython runs code in a python3 process of its own with cfg's limits.
func runPython(ctx context.Context, cfg CodeConfig, code string, inputs map[string]any) (*codeResult, error) {
	py, err := cfg.python(ctx)
	if err != nil {
		return nil, err
	}
	payload, err := json.Marshal(map[string]any{"code": code, "inputs": inputs})
	if err != nil {
		return nil, fmt.Errorf("the inputs of the code cannot be written as JSON: %v", err)
	}
	dir, err := os.MkdirTemp("", "abctl-code-")
	if err != nil {
		return nil, fmt.Errorf("making the code's working directory: %v", err)
	}
	defer os.RemoveAll(dir)
	resultPath := filepath.Join(dir, ".abctl-result.json")
	limits, _ := json.Marshal(map[string]any{"memory": cfg.memory(), "result": resultPath})

	runCtx, cancel := context.WithTimeout(ctx, cfg.timeout())
	defer cancel()
	cmd := exec.CommandContext(runCtx, py, "-I", "-X", "utf8", "-c", codeRunner, string(limits))
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "TMPDIR=" + dir, "LANG=C.UTF-8"}
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr tailBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	killGroup(cmd)
	cmd.WaitDelay = 5 * time.Second // a child the code left holding the pipes
	runErr := cmd.Run()

	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("the code ran longer than its limit of %s (the daemon's --code-timeout) and was stopped%s", cfg.timeout(), outputNote(&stdout, &stderr))
	}
	var res codeResult
	data, readErr := readLimited(resultPath, maxCodeResult)
	if readErr == nil {
		readErr = json.Unmarshal(data, &res)
	}
	if readErr != nil {
		if strings.Contains(stderr.String(), "MemoryError") {
			return nil, memoryError(cfg, &stdout, &stderr)
		}
		if runErr != nil {
			return nil, fmt.Errorf("python3 ended without a result (%v)%s", runErr, outputNote(&stdout, &stderr))
		}
		return nil, fmt.Errorf("the code's result cannot be read: %v%s", readErr, outputNote(&stdout, &stderr))
	}
	if e := res.Error; e != nil {
		switch e.Kind {
		case "syntax":
			return nil, fmt.Errorf("the code has a syntax error at line %d: %s: %s", e.Line, e.Message, e.Text)
		case "memory":
			return nil, memoryError(cfg, &stdout, &stderr)
		case "limits":
			return nil, fmt.Errorf("the code's memory limit cannot be set on this system: %s", e.Message)
		}
		where := ""
		if e.Line > 0 {
			where = fmt.Sprintf(" at line %d", e.Line)
		}
		return nil, fmt.Errorf("the code raised %s%s: %s%s", e.Type, where, e.Message, outputNote(&stdout, &stderr))
	}
	if res.Output == nil {
		res.Output = map[string]any{}
	}
	return &res, nil
}

func memoryError(cfg CodeConfig, stdout, stderr *tailBuffer) error {
	return fmt.Errorf("the code ran out of memory (its limit is %d MiB, the daemon's --code-memory)%s", cfg.memory()>>20, outputNote(stdout, stderr))
}

// outputNote is what the code printed, for a failure reason.
func outputNote(stdout, stderr *tailBuffer) string {
	var b strings.Builder
	if s := strings.TrimSpace(stderr.String()); s != "" {
		fmt.Fprintf(&b, "; its stderr ends with: %s", s)
	}
	if s := strings.TrimSpace(stdout.String()); s != "" {
		fmt.Fprintf(&b, "; its stdout ends with: %s", s)
	}
	return b.String()
}

func readLimited(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("the output is %d bytes, more than the limit of %d", fi.Size(), limit)
	}
	return os.ReadFile(path)
}

// tailBuffer keeps the last codeOutputTail bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	cut bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - codeOutputTail; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.ToValidUTF8(string(t.buf), "")
	if t.cut {
		s = "…" + s
	}
	return s
}
