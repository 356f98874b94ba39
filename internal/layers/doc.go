// Package layers holds no code, only the check of simdex's architecture:
// imports.txt lists the parts, their floors, every import allowed between
// the module's packages and the imports that must never exist, and the
// test parses the imports of the module's Go files and fails where the
// code and the list disagree. docs/architecture.md's section "Packages as
// layers" is written from the list:
//
//	go generate ./internal/layers
package layers

//go:generate go test -run ^TestArchitectureDoc$ -update
