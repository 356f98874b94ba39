package sketch

// Containments estimates containment both ways from sorted samples, A in B
// and B in A, with one intersection: what Containment(a, b) and
// Containment(b, a) return, at half the cost.
func Containments(a, b []uint32) (ab, ba float64) {
	n := intersect(a, b)
	if len(a) > 0 {
		ab = float64(n) / float64(len(a))
	}
	if len(b) > 0 {
		ba = float64(n) / float64(len(b))
	}
	return ab, ba
}
