//go:build unix

package fs_test

import "syscall"

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
