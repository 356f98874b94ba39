#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time ($1, default 10s).
set -euo pipefail
fuzztime=${1:-10s}
cd "$(dirname "$0")/.."
status=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)\(f \*testing\.F\)' "$dir"/*_test.go 2>/dev/null | sed -E 's/^func (Fuzz[A-Za-z0-9_]+).*/\1/' | sort -u); do
    echo "fuzz $pkg $target ($fuzztime)"
    if ! go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" >/tmp/fuzz.$$.log 2>&1; then
      cat /tmp/fuzz.$$.log; status=1
    fi
  done
done
rm -f /tmp/fuzz.$$.log
exit $status
