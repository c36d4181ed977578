// Package python runs the Python code of code blocks, each in a python3
// process of its own: isolated (-I), in an empty environment and a
// temporary working directory, killed with its process group past a
// wall-clock limit, under a memory limit it cannot raise. The code's
// inputs are its global variables; its output is the names it binds to
// JSON values. The limits bound what the code uses; they are no sandbox.
package python

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// codeOutputTail is how much of the code's stdout and of its stderr is
// kept for a failure reason.
const codeOutputTail = 2000

// maxCodeResult bounds the JSON of a code block's output.
const maxCodeResult = 32 << 20

// Result is what the code defined, as the runner writes it to its result
// file: Output, the names it bound to JSON values; Skipped, those it bound
// to other values.
type Result struct {
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

// Run runs code in a python3 process of its own with cfg's limits,
// inputs as its global variables.
func Run(ctx context.Context, cfg Config, code string, inputs map[string]any) (*Result, error) {
	py, err := cfg.Interpreter(ctx)
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
	var res Result
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

func memoryError(cfg Config, stdout, stderr *tailBuffer) error {
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
