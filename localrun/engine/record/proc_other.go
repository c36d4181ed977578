//go:build !unix

package record

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
