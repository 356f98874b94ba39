// Package tests holds the simdex Helm chart's tests, in their own module so
// that Helm and the Kubernetes API types stay out of the daemon's go.mod.
// They lint and render the chart with Helm's Go packages, decode every
// rendered object strictly into its Kubernetes type, load the rendered
// config.yaml with the daemon's own loader, and check the Dockerfile.
//
//	cd charts/simdex/tests && go test ./...
//
// Regenerate the values table in ../README.md with -update.
package tests
