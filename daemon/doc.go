// Package daemon wires simdex together: configuration, the connectors, the
// ingest pipeline, the index, policy and notifier, the HTTP endpoints, and
// their lifecycle (start, signals, graceful shutdown). It is the only
// package that imports all the others.
package daemon
