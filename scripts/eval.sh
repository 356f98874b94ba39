#!/usr/bin/env bash
# Regenerates docs/EVALUATION.md and docs/eval/*.png: simdex's recall and
# false alarms on the labelled corpora in ../shared/corpora, side by side
# with ssdeep and tlsh, the parameter sweep behind the defaults, and the
# seed studies' synthetic experiments. Takes about 20 minutes on 2 cores.
# Extra arguments go to simdex-eval (e.g. -quick, -names spdx,gomod-licenses).
set -euo pipefail
cd "$(dirname "$0")/.."

# The peers a user would pick instead, from the Debian 12 archive.
scripts/install-peers.sh

corpora=${SIMDEX_CORPORA:-../shared/corpora}
if [ ! -d "$corpora" ]; then
  echo "eval: corpora not found at $corpora (set SIMDEX_CORPORA)" >&2
  exit 1
fi
go run ./eval/cmd/simdex-eval -corpora "$corpora" -out docs -command "make eval" "$@"
