//go:build !linux

package miniotest

import "syscall"

// sysProcAttr has nothing to add outside Linux; t.Cleanup stops MinIO.
func sysProcAttr() *syscall.SysProcAttr { return nil }
