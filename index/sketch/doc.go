// Package sketch computes the similarity sketches of a normalised text:
// a Mod-n sample of its byte shingles (for containment), a one-permutation
// MinHash with locality-sensitive band keys (for resemblance and candidate
// lookup) and a 64-bit SimHash (the "Similarity Index"), together with the
// estimators that compare them.
//
// Shingles are windows of Params.Window bytes hashed with a rolling
// polynomial hash; the seed study found a window near 20 bytes best and
// docs/EVALUATION.md measures it again. The package is pure: no I/O, no
// global state, safe for concurrent use.
package sketch
