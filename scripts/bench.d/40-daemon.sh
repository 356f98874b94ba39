#!/usr/bin/env bash
# Daemon benchmarks (issue 5): a real MinIO publishing bucket events to a
# real NATS JetStream, the daemon consuming them, all on this machine; from
# daemon/bench_test.go. Prints a Markdown section.
set -euo pipefail
cd "$(dirname "$0")/../.."
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN {ok = (op == ">=") ? v >= t : v <= t; print ok ? "met" : "**not met**"}'; }

# The benchmarks need the MinIO binary the tests use.
if ! make -s minio >&2; then
  echo "40-daemon.sh: cannot build MinIO (make minio / scripts/install-minio.sh); the daemon benchmarks need it" >&2
  exit 1
fi
export SIMDEX_MINIO_BIN=${SIMDEX_MINIO_BIN:-${SIMDEX_CACHE:-$HOME/.cache/simdex}/bin/minio}
if [ ! -x "$SIMDEX_MINIO_BIN" ]; then
  echo "40-daemon.sh: no MinIO binary at $SIMDEX_MINIO_BIN after make minio" >&2
  exit 1
fi

# run CMD: its output; on failure the output goes to stderr and the script
# fails (the section is never printed from a failed run).
run() {
  local out
  if ! out=$(eval "$1" 2>&1); then
    echo "$out" >&2
    echo "40-daemon.sh: benchmark failed: $1" >&2
    exit 1
  fi
  echo "$out"
}
# metric OUTPUT NAME UNIT: median over the runs of the value before UNIT.
metric() { echo "$1" | awk -v n="^$2(-[0-9]+)?\$" -v m="$3" '$1 ~ n {for (i=2;i<=NF;i++) if ($i==m) print $(i-1)}' | median; }

tput_cmd="go test -run '^\$' -bench '^BenchmarkUploadToIndex\$' -benchtime 1x -count 3 -timeout 30m ./daemon/"
lat_cmd="go test -run '^\$' -bench '^BenchmarkLatency200\$' -benchtime 1x -count 3 -timeout 30m ./daemon/"
minio_cmd="go test -run '^\$' -bench '^BenchmarkMinIOUpload\$' -benchtime 1x -count 3 -timeout 30m ./daemon/"
tput=$(run "$tput_cmd")
lat=$(run "$lat_cmd")
mio=$(run "$minio_cmd")

docs=$(metric "$tput" BenchmarkUploadToIndex docs/s)
ups=$(metric "$tput" BenchmarkUploadToIndex uploads/s)
p50=$(metric "$lat" BenchmarkLatency200 p50-ms)
p99=$(metric "$lat" BenchmarkLatency200 p99-ms)
pmax=$(metric "$lat" BenchmarkLatency200 max-ms)
p99s=$(metric "$lat" BenchmarkLatency200 p99-from-put-start-ms)
putp99=$(metric "$lat" BenchmarkLatency200 put-p99-ms)
rate=$(metric "$lat" BenchmarkLatency200 uploads/s)
msync=$(metric "$mio" BenchmarkMinIOUpload/sync-events uploads/s)
masync=$(metric "$mio" BenchmarkMinIOUpload/async-events uploads/s)

echo "## Daemon: MinIO → JetStream → index"
echo
echo "A real MinIO (\`make minio\`) with its NATS target publishing the events of a versioned bucket"
echo "to a real NATS JetStream stream (in the benchmark process), and \`simdex serve\`'s daemon in the"
echo "same process consuming them, all on this machine. The daemon uses the production defaults of"
echo "\`config.yaml\`: \`pipeline.workers: 8\`, \`index.durability: full\`, default extraction limits; one"
echo "S3 connector in \`jetstream\` mode, backfill and reconciliation off. MinIO runs with"
echo "\`MINIO_API_SYNC_EVENTS=on\` (an upload returns once its event is in JetStream). Documents are"
echo "distinct 10 KB texts (random runs of the Debian Policy's words). A document counts as committed when"
echo "a read-only connection to the index, polling every millisecond, sees it. Medians of 3 runs."
echo
echo "| figure | value | target |"
echo "|---|---|---|"
echo "| upload to committed index, 5,000 documents from 32 clients | **${docs} docs/s** | ≥ 1,000 docs/s: $(verdict "$docs" 1000 ">=") |"
echo "| uploads/s achieved meanwhile (MinIO and the daemon share the 2 cores) | ${ups} | |"
echo "| MinIO alone, no daemon: uploads/s, sync events / async events | ${msync} / ${masync} | |"
echo "| upload-complete → committed latency at ${rate} uploads/s for 15 s, p50 | ${p50} ms | |"
echo "| the same, p99 | **${p99} ms** | ≤ 1,000 ms: $(verdict "$p99" 1000 "<=") |"
echo "| the same, max | ${pmax} ms | |"
echo "| upload-start → committed, p99 | ${p99s} ms | |"
echo "| PutObject duration, p99 | ${putp99} ms | |"
echo
echo "    $tput_cmd"
echo "    $lat_cmd"
echo "    $minio_cmd"
