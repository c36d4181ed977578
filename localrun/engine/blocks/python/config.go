package python

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Defaults of Config.
const (
	DefaultTimeout   = 60 * time.Second
	DefaultMemoryMiB = 1024 // of address space
)

// Config says whether and how code blocks run. The zero value refuses
// them.
type Config struct {
	// Enabled lets code blocks run (the daemon's --allow-code-blocks).
	Enabled bool
	// Python is the interpreter; "" is python3 on PATH.
	Python string
	// Timeout bounds the wall-clock time of one code block; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// MemoryMiB bounds the address space of one code block's process, in
	// MiB; 0 means DefaultMemoryMiB.
	MemoryMiB int
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// memory is the limit of the address space, in bytes.
func (c Config) memory() int64 {
	if c.MemoryMiB > 0 {
		return int64(c.MemoryMiB) << 20
	}
	return DefaultMemoryMiB << 20
}

// pythonPaths caches the interpreter each configured name resolves to.
var pythonPaths sync.Map // string -> string

// Interpreter returns the path of the interpreter itself: a name on PATH may
// be a launcher (a pyenv shim) that needs the daemon's environment, which
// the code does not get, so the interpreter is asked where it lives.
func (c Config) Interpreter(ctx context.Context) (string, error) {
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
