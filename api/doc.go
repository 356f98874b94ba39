// Package api is simdex's HTTP API: the route table, from which the mux
// and the OpenAPI document are both built, the handlers, and the JSON
// types the CLI shares as a client (Match, Document, FamilyResponse...).
// The daemon builds a Server with New from its components (Deps) and
// serves its Handler; the API reads the index and calls policy, and never
// imports the daemon.
package api
