//go:build !amd64

package index

import "unsafe"

// prefetch does nothing on this architecture.
func prefetch(unsafe.Pointer, uintptr) {}
