// Package peers holds benchmarks only: it measures simdex's chunker,
// sketches, full fingerprint and SimHash search against the Go libraries a
// user would otherwise reach for, on the same normalised English text in
// the same `go test -bench` run.
//
// It is in the tools module (tools/go.mod), so that the product's go.mod
// carries none of the peers. scripts/bench.d/10-peers.sh runs it and writes
// the medians to docs/BENCHMARKS.md.
package peers
