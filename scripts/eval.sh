#!/usr/bin/env bash
# Regenerates docs/EVALUATION.md and docs/eval/*.png: simdex's recall and
# false alarms on the corpora at $SIMDEX_CORPORA (make eval: default
# ../shared/corpora beside the checkout; the labelled ones, the
# real mailing list mail-usrp split by quoting, the Debian manuals'
# cross-format and chapter-in-book pairs) and on a generated e-mail corpus,
# side by side with ssdeep and tlsh, the parameter sweep behind the
# defaults, and the seed studies' synthetic experiments. The truth is the
# evaluation's own (word 5-grams, package eval), independent of the
# engine's normal form: rerun this after any change to the engine.
#
#   scripts/eval.sh            everything, about 20-25 minutes on 2 cores
#                              (same as `make eval`)
#   scripts/eval.sh -quick     samples of every corpus, a few minutes
#   scripts/eval.sh -names mail-usrp,debian-docs -corpora-only -out /tmp/x
#                              two corpora in full, no sweep, no synthetic
#                              experiments, report written elsewhere
#
# Extra arguments go to simdex-eval (bin/simdex-eval -h), which is built
# from the tools module (tools/eval).
set -euo pipefail
cd "$(dirname "$0")/.."

# The peers a user would pick instead, from the Debian 12 archive.
scripts/install-peers.sh

corpora=${SIMDEX_CORPORA:-../shared/corpora}
if [ ! -d "$corpora" ]; then
  echo "eval: corpora not found at $corpora (set SIMDEX_CORPORA)" >&2
  exit 1
fi
go build -C tools -o ../bin/simdex-eval ./eval/cmd/simdex-eval
bin/simdex-eval -corpora "$corpora" -out docs -command "make eval" "$@"
