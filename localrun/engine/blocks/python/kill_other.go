//go:build !unix

package python

import "os/exec"

// killGroup: without process groups, cancellation kills the interpreter
// only.
func killGroup(*exec.Cmd) {}
