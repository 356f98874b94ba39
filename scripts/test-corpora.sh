#!/usr/bin/env bash
# Runs the corpus suite: the tests that read the full corpora at
# $SIMDEX_CORPORA. A test is of the suite when its own body calls
# corpustest.Suite (internal/corpustest); built without the tag corpora,
# as by make test, Suite skips it. This script builds with the tag and
# runs exactly those tests, package by package, in both modules; a test
# fails, never skips, when the corpora are missing. Extra arguments go to
# go test (make test-corpora passes -race).
#   SIMDEX_CORPORA=../shared/corpora scripts/test-corpora.sh [-race]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${SIMDEX_CORPORA:-}" ] || [ ! -d "$SIMDEX_CORPORA" ]; then
  echo "test-corpora: SIMDEX_CORPORA=${SIMDEX_CORPORA:-} names no corpora directory (set SIMDEX_CORPORA to the full corpora, default ../shared/corpora beside the checkout)" >&2
  exit 1
fi
# Tests run in their package's directory: the path must be absolute.
SIMDEX_CORPORA=$(cd "$SIMDEX_CORPORA" && pwd)
export SIMDEX_CORPORA

# suite_tests FILE...: the Test functions whose body calls corpustest.Suite.
suite_tests() {
  awk '/^func Test[A-Za-z0-9_]*\(/ { name = $2; sub(/\(.*/, "", name) }
    /^}/ { name = "" }
    name != "" && /corpustest\.Suite\(/ { print name; name = "" }' "$@" | sort -u
}

# run_module DIR [SKIP]: runs the suite's tests of the module rooted at
# DIR, leaving out the directory SKIP (a nested module).
failed=0
run_module() {
  local dir pkg names
  for dir in $(cd "$1" && grep -rl --include='*_test.go' 'corpustest\.Suite(' . | xargs -n1 dirname | sort -u); do
    if [ -n "${2:-}" ] && [[ $dir == ./$2 || $dir == ./$2/* ]]; then
      continue
    fi
    names=$(cd "$1" && suite_tests "$dir"/*_test.go | paste -sd'|')
    [ -n "$names" ] || continue
    pkg="$1/${dir#./}"
    echo "== $pkg: ${names//|/ }"
    (cd "$1" && go test -tags corpora -count=1 -timeout 60m "${@:3}" -run "^($names)\$" "$dir") || failed=1
  done
}
run_module . tools "$@"
run_module tools "" "$@"
if [ "$failed" != 0 ]; then
  echo "test-corpora: some packages failed" >&2
  exit 1
fi
