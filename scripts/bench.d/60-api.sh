#!/usr/bin/env bash
# Review API benchmarks: "all versions of this file" by id from 50
# concurrent clients over the benchmark fixture, and one review-queue page
# of 100 among 10,000 open flags; a document's text kept or read again
# from its origin. Prints a Markdown section.
# SIMDEX_BENCH_LARGE=1 queries the 1,000,000-document fixture (the issue's
# figure; built once into the cache, which takes long).
set -euo pipefail
cd "$(dirname "$0")/../.."
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
large=${SIMDEX_BENCH_LARGE:-}
cmd="SIMDEX_BENCH_LARGE=$large go test -run '^\$' -bench '^(BenchmarkAPISimilar|BenchmarkAPIReviewQueue)\$' -benchtime 2000x -count 3 -timeout 120m ./api/"
out=$(eval "$cmd" 2>/dev/null)
val() { echo "$out" | awk -v n="Benchmark$1" -v m="$2" '$1 ~ "^"n {for (i=1;i<=NF;i++) if ($i==m) print $(i-1)}' | median; }
docs=$(echo "$out" | grep -o 'BenchmarkAPISimilar/docs=[0-9]*' | head -1 | cut -d= -f2)
echo "## Review API"
echo
echo "The daemon over the cached benchmark fixture (internal/benchcorpus: $docs documents, planted near-copy groups); closed-loop clients with no pause between requests; medians of 3 runs of 2,000 requests, each after 1,000 unmeasured ones and with its own random ids. The machine's other load shows in the tails."
echo
echo "| figure | p50 | p99 | throughput | target |"
echo "|---|---|---|---|---|"
echo "| all versions of a document by id, 50 clients, $docs documents | $(val APISimilar p50-ms) ms | $(val APISimilar p99-ms) ms | $(val APISimilar req/s) req/s | p99 ≤ 50 ms at 1,000,000 documents |"
echo "| review queue: a page of 100 of 10,000 open flags, 10 clients | $(val APIReviewQueue p50-ms) ms | $(val APIReviewQueue p99-ms) ms | $(val APIReviewQueue req/s) req/s | page rendered ≤ 200 ms |"
echo
echo "    $cmd"
echo
echo "The review UI's own figure (fetch and render one page of 100 rows out of 10,000 open flags in headless Chromium) is logged by \`go test -run TestBrowserReview -v ./webui/\`."
echo
echo "### A document's text, kept or read again from its origin"
echo
echo "What \`GET /api/v1/documents/{id}/text\` and each side of a diff cost with \`index.keep_text\` on (the text kept in the index) and off (the object read again from a real folder, extracted whole, and its text checked against the SHA-256 indexed; docs/api.md). For the mailbox, its last message. Medians of 3 runs of 10."
echo
tcmd="go test -run '^\$' -bench '^BenchmarkDocumentText\$' -benchtime 10x -count 3 ./ingest/"
tout=$(eval "$tcmd" 2>/dev/null)
tval() { echo "$tout" | awk -v n="BenchmarkDocumentText/$1/$2-" 'index($1, n) == 1 {print $3}' | median; }
echo "| file | kept | read again |"
echo "|---|---|---|"
for f in policy.pdf debian-reference.en.txt support.pst; do
  echo "| $f | $(echo "$(tval "$f" kept) / 1000000" | bc -l | xargs printf '%.2f') ms | $(echo "$(tval "$f" reread) / 1000000" | bc -l | xargs printf '%.1f') ms |"
done
echo
echo "    $tcmd"
