//go:build !corpora

package corpustest

// suite is false in builds without the tag corpora: Suite skips.
const suite = false
