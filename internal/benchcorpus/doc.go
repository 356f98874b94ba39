// Package benchcorpus generates a deterministic synthetic document
// collection of any size for benchmarks, with planted near-copy groups whose
// ground truth it knows, and builds (or reuses from a cache) a SQLite index
// of it that benchmarks in any package can open.
//
// # Text
//
// Documents are English-like text drawn from a word-bigram model trained on
// the corpora (the SPDX licence texts and the English Debian manuals): the
// full corpora at $SIMDEX_CORPORA (SourcesDir) for benchmarks, or the
// directory Spec.Sources names, as the committed fixtures of the unit
// tests: every document is a fresh random walk, so
// unrelated documents share only what real unrelated documents share —
// frequent words and short stock phrases — while chunks, Mod-n samples and
// MinHash behave as on real text. Sizes follow a log-normal law (median
// about 3 KB, a few KB on average).
//
// # Planted groups
//
// A share of the documents form groups: a seed and its near-copies, each
// of a known Kind — an edited version (words inserted, deleted or
// replaced), an excerpt (a contiguous part of the seed), a superset (the
// seed quoted inside a longer message), an exact copy (the same text with
// other whitespace, so other bytes) and a byte-identical copy. Every member
// is within the index's default thresholds of its seed, so "all versions of
// the seed" must list every member: Group is the ground truth recall is
// checked against.
//
// # Determinism and the cache
//
// Document i of a Spec is the same bytes on every run and machine for a
// given Generator version and source corpora. Ensure builds the index of a
// Spec once into the cache ($SIMDEX_CACHE, default ~/.cache/simdex, under
// bench/) and records a marker naming the generator version, a hash of the
// source corpora, the index's fingerprint scheme (normalisation version and
// parameters) and the store's schema version: a fixture whose marker
// differs is rebuilt, never silently reused.
package benchcorpus
