package index

import "unsafe"

// prefetch asks the processor to bring the n bytes at p into its caches,
// without waiting for them (PREFETCHT0 on each cache line).
//
//go:noescape
func prefetch(p unsafe.Pointer, n uintptr)
