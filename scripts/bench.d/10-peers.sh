#!/usr/bin/env bash
# Peer benchmarks: simdex's chunker, sketches, full fingerprint and SimHash
# search against the Go libraries a user would otherwise reach for, in one
# `go test -bench` run of the separate module bench/peers (so the product's
# go.mod carries none of them; the Go proxy fetches them on a fresh
# machine). Prints a Markdown section with medians of 6 runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

cmd="go test -run '^\$' -bench . -benchtime 1s -count 6 -cpu 1 -timeout 60m"
out=$(cd bench/peers && eval "$cmd")

# val BENCHMARK UNIT: the median of the figure printed before UNIT.
val() { echo "$out" | awk -v n="Benchmark$1" -v m="$2" '$1 == n {for (i = 1; i <= NF; i++) if ($i == m) print $(i-1)}' | median; }
# ratio A B: A / B as "N.NN×".
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f×", a / b; else print "?"}'; }
# met A B: whether A >= B.
met() { awk -v a="$1" -v b="$2" 'BEGIN {print (a >= b) ? "met" : "**not met**"}'; }
gbs() { awk -v a="$1" 'BEGIN {printf "%.2f", a / 1000}'; }
version() { (cd bench/peers && go list -m -f '{{.Version}}' "$1"); }

cut=$(val Chunker/simdex-cut MB/s)
app=$(val Chunker/simdex-append MB/s)
ndocs=$(val Chunker/simdex-cut docs)
mb=$(awk -v r="$cut" -v t="$(val Chunker/simdex-cut ns/op)" 'BEGIN {printf "%.1f", r * t / 1e9}')

echo "## Peers"
echo
echo "Every contender processes the same input in the same run, one document at a time as an indexer does, on one core: the $ndocs distinct English documents of the shared corpora (every SPDX licence text, the whole English TXT manuals of debian-docs, the licenseclassifier wordings), $mb MB once normalised with \`index/normalise\`. MB/s are of that normalised text (\`b.SetBytes\`); each figure is the median of 6 runs; \"simdex ÷ contender\" above 1 means simdex is faster. The machine's 2 cores are shared, so single runs vary by up to a factor of two."
echo
echo "    cd bench/peers && $cmd"
echo

echo "### Content-defined chunking"
echo
echo "Every chunker gets simdex's parameters: minimum 256, average 1024, maximum 8192 bytes."
echo
echo "| contender | MB/s | mean chunk | simdex (Cut) ÷ contender | issue's reference |"
echo "|---|---|---|---|---|"
row() { echo "| $1 | $(val "Chunker/$2" MB/s) | $(val "Chunker/$2" B/chunk) B | $(ratio "$cut" "$(val "Chunker/$2" MB/s)") | $3 |"; }
row "simdex \`chunk.Cut\` (boundaries only)" simdex-cut ""
row "simdex \`chunk.Append\` (boundaries and XXH64 of each chunk)" simdex-append ""
row "restic/chunker $(version github.com/restic/chunker) (Rabin)" restic "~0.5 GB/s"
row "jotfs/fastcdc-go $(version github.com/jotfs/fastcdc-go) (FastCDC)" jotfs-fastcdc "~1.8 GB/s (FastCDC)"
row "PlakarKorp/go-cdc-chunkers $(version github.com/PlakarKorp/go-cdc-chunkers) \`fastcdc-v1.0.0\`" plakar-fastcdc "~1.8 GB/s (FastCDC)"
echo

sk=$(val MinHash/simdex MB/s)
echo "### MinHash"
echo
echo "simdex's \`sketch.Compute\` makes the 128-slot one-permutation MinHash, the Mod-n samples and the SimHash in one call (there is no MinHash-only entry point), so its row is all three sketches. ekzhu/minhash-lsh $(version github.com/ekzhu/minhash-lsh) is used as its README shows, 128 hash functions, pushing every shingle of the document: simdex's 20-byte shingles (the same set), and 3-word shingles (about six times fewer pushes, its cheapest sensible use)."
echo
echo "| contender | MB/s | simdex ÷ contender | issue's reference |"
echo "|---|---|---|---|"
echo "| simdex \`sketch.Compute\` (MinHash + samples + SimHash) | $sk | | |"
echo "| ekzhu/minhash-lsh, 20-byte shingles | $(val MinHash/ekzhu-bytes20 MB/s) | $(ratio "$sk" "$(val MinHash/ekzhu-bytes20 MB/s)") | ~44 MB/s |"
echo "| ekzhu/minhash-lsh, 3-word shingles | $(val MinHash/ekzhu-words3 MB/s) | $(ratio "$sk" "$(val MinHash/ekzhu-words3 MB/s)") | ~44 MB/s |"
echo

sh=$(val SimHash/simdex MB/s)
echo "### SimHash"
echo
echo "| contender | MB/s | simdex ÷ contender | issue's reference |"
echo "|---|---|---|---|"
echo "| simdex \`sketch.Compute\` (SimHash of 3-word features + MinHash + samples) | $sh | | |"
echo "| mfonda/simhash $(version github.com/mfonda/simhash), \`Simhash(NewWordFeatureSet(doc))\` | $(val SimHash/mfonda-words MB/s) | $(ratio "$sh" "$(val SimHash/mfonda-words MB/s)") | ~16 MB/s |"
echo

fp=$(val Fingerprint/simdex MB/s)
echo "### Whole-document fingerprint"
echo
echo "| contender | MB/s | simdex ÷ contender | issue's reference |"
echo "|---|---|---|---|"
echo "| simdex \`index.Index.Fingerprint\` (normalisation, SHA-256 of the text, chunks, samples, MinHash, SimHash) | $fp | | ≥ 200 MB/s (target) |"
echo "| glaslos/tlsh $(version github.com/glaslos/tlsh), \`HashBytes\` | $(val Fingerprint/glaslos-tlsh MB/s) | $(ratio "$fp" "$(val Fingerprint/glaslos-tlsh MB/s)") | ~63 MB/s |"
echo

hs=$(val Hamming/simdex-Near cmp/s)
hp=$(val Hamming/mfonda-Compare cmp/s)
echo "### SimHash search by Hamming distance"
echo
echo "A scan of 1,048,576 stored 64-bit SimHashes for those within 6 bits of a query (the default \`candidate_hamming\`). simdex's is \`sketch.Near\`, the loop the index's in-memory SimHash table runs under its read lock for every query; the peer is the same loop over mfonda/simhash's \`Compare\`."
echo
echo "| contender | comparisons per second | simdex ÷ contender |"
echo "|---|---|---|"
echo "| simdex \`sketch.Near\` | $(awk -v a="$hs" 'BEGIN {printf "%.2f billion", a / 1e9}') | |"
echo "| mfonda/simhash \`Compare\` loop | $(awk -v a="$hp" 'BEGIN {printf "%.0f million", a / 1e6}') | $(ratio "$hs" "$hp") |"
echo

echo "### Targets"
echo
echo "| target (issue 2) | measured | |"
echo "|---|---|---|"
echo "| full fingerprint ≥ 200 MB/s per core | $fp MB/s | $(met "$fp" 200) |"
echo "| chunker alone ≥ 1.5 GB/s (\`chunk.Append\`, with chunk hashes) | $(gbs "$app") GB/s | $(met "$app" 1500) |"
best=$(printf '%s\n' "$(val Chunker/restic MB/s)" "$(val Chunker/jotfs-fastcdc MB/s)" "$(val Chunker/plakar-fastcdc MB/s)" | sort -n | tail -1)
echo "| chunker beats restic and FastCDC peers (\`chunk.Cut\` vs the fastest peer) | $(gbs "$cut") vs $(gbs "$best") GB/s | $(met "$cut" "$best") |"
bestmh=$(printf '%s\n' "$(val MinHash/ekzhu-bytes20 MB/s)" "$(val MinHash/ekzhu-words3 MB/s)" | sort -n | tail -1)
echo "| MinHash beats ekzhu/minhash-lsh (its fastest use) | $sk vs $bestmh MB/s | $(met "$sk" "$bestmh") |"
echo "| SimHash beats mfonda/simhash | $sh vs $(val SimHash/mfonda-words MB/s) MB/s | $(met "$sh" "$(val SimHash/mfonda-words MB/s)") |"
echo "| full fingerprint beats glaslos/tlsh | $fp vs $(val Fingerprint/glaslos-tlsh MB/s) MB/s | $(met "$fp" "$(val Fingerprint/glaslos-tlsh MB/s)") |"
echo "| Hamming scan ≥ 1 billion comparisons per second per core | $(awk -v a="$hs" 'BEGIN {printf "%.2f billion/s", a / 1e9}') | $(met "$hs" 1e9) |"
