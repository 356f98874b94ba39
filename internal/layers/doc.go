// Package layers holds no code, only the test that keeps simdex's
// packages in their layers: it lists the module's import graph with
// `go list` and fails, naming the edge and the path of imports, when a
// package imports across a forbidden edge (docs/architecture.md).
package layers
