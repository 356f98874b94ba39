// Package fleettest runs a simdex fleet for integration tests, each part a
// separate process so that kill -9 is real: a three-node NATS cluster with
// JetStream (nats-server built from the module in go.mod), MinIO publishing
// its bucket events through JetStream into a stream replicated on all three
// nodes, optionally a PostgreSQL server, and N `simdex serve` replicas
// (bin/simdex built from this module), each with its own data directory
// and a configuration file the harness writes.
//
// Every process is killed when its test ends and, on Linux, when the test
// binary dies. Nothing skips: a binary that does not build or a server that
// does not start fails the test.
//
// TestFleetKillsLoseNothing kills a replica and a NATS node in the middle
// of thousands of near-copy uploads and checks that every object is
// indexed exactly once, every expected flag raised once, the audit chain
// intact and without duplicates, and that every replica answers the same.
package fleettest
