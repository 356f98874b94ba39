// Package api is simdex's HTTP API: one route table from which both the
// mux and the OpenAPI document are built, the handlers, and the JSON types
// the CLI shares as a client. The daemon builds a Server with New from its
// components (Deps); api never imports the daemon.
package api
