#!/bin/sh
# The fleet test at the issue's size (issue 30): 10,000 near-copy uploads
# with a replica and a NATS node killed in the middle, on every variant
# (one SQLite replica; three replicas on one PostgreSQL). `make test` runs
# it with 2,000 uploads on the variants enabled in
# internal/fleettest/fleet_test.go.
#
#   scripts/fleet-test.sh [UPLOADS] [VARIANTS]   # defaults: 10000 all
set -eu
cd "$(dirname "$0")/.."
SIMDEX_FLEET_UPLOADS="${1:-10000}" SIMDEX_FLEET_VARIANTS="${2:-all}" \
	exec go test -count=1 -v -timeout 60m -run '^TestFleetKillsLoseNothing$' ./internal/fleettest
