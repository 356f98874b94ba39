//go:build !linux

package fleettest

import "syscall"

// sysProcAttr is empty where the kernel cannot kill a child with its
// parent; t.Cleanup still kills every child.
func sysProcAttr() *syscall.SysProcAttr { return nil }
