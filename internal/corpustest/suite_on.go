//go:build corpora

package corpustest

// suite is true in builds with the tag corpora: the corpus suite runs.
const suite = true
