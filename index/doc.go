// Package index is simdex's near-copy engine: it fingerprints normalised
// text (exact hashes, content-defined chunks, sampled shingles, a MinHash
// sketch and a SimHash), keeps the fingerprints in a persistent store, and
// answers "which stored documents are copies or near-copies of this one?"
//
// The pure algorithms live in the sub-packages normalise, chunk and sketch;
// this package composes them and owns the store, the queries and families.
package index
