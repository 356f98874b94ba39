package extract

import (
	"testing"
)

// FuzzPST runs the mailbox reader, in place, on the fixtures and their
// truncations.
func FuzzPST(f *testing.F) {
	ansi, uni := pstFixture(f, "32-bit.pst"), pstFixture(f, "support.pst")
	f.Add(ansi)
	for _, cut := range []int{512, 4096, 33000, 50000, 60000} {
		f.Add(ansi[:cut])
	}
	for _, cut := range []int{600, 40000, 300000} {
		f.Add(uni[:cut])
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzExtract(t, "fuzz.pst", data) })
}
