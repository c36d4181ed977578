//go:build unix

package record

import "syscall"

// sysProcAttr puts ffmpeg in its own process group, so that a Ctrl-C in the
// terminal of the daemon does not end ffmpeg before the recorder closes its
// input. ffmpeg still ends when the daemon dies, because its stdin closes.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
