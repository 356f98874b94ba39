//go:build !amd64

package sketch

// intersect counts the common values of two sorted, distinct slices.
func intersect(a, b []uint32) int { return intersectScalar(a, b) }
