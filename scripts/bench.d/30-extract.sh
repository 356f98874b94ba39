#!/usr/bin/env bash
# Extraction benchmarks (issue 4): throughput per format and memory per
# object, from extract/bench_test.go. Prints a Markdown section.
set -euo pipefail
cd "$(dirname "$0")/../.."
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

cmd="go test -run '^\$' -bench '^BenchmarkExtract\$' -benchtime 1s -count 6 -cpu 1 -timeout 60m ./extract/"
if ! out=$(eval "$cmd" 2>&1); then
  echo "$out" >&2
  echo "30-extract.sh: benchmark failed: $cmd" >&2
  exit 1
fi
# metric CASE UNIT: the median over the runs of the value before UNIT.
metric() { echo "$out" | awk -v n="BenchmarkExtract/$1" -v m="$2" '$1 == n {for (i=2;i<=NF;i++) if ($i==m) print $(i-1)}' | median; }
# size CASE: the input size in bytes (MB/s × ns/op).
size() { echo "$out" | awk -v n="BenchmarkExtract/$1" '$1 == n {for (i=2;i<=NF;i++) {if ($i=="ns/op") ns=$(i-1); if ($i=="MB/s") mbs=$(i-1)}; printf "%.0f\n", mbs*ns/1000}' | median; }
human() { awk -v b="$1" 'BEGIN {if (b >= 1e6) printf "%.1f MB", b/1e6; else printf "%.0f KB", b/1e3}'; }
verdict() { awk -v v="$1" -v t="$2" 'BEGIN {print (v >= t) ? "met" : "**not met**"}'; }

echo "## Extraction"
echo
echo "One object at a time on one core (\`-cpu 1\`), default limits (\`config.yaml\`), median of 6 runs."
echo "MB/s counts the object's input bytes (compressed bytes for archives and Office files);"
echo "alloc is the memory allocated per object (alloc/input: per input byte); peak live is the peak heap"
echo "of one extraction above the heap before it, sampled every 100 µs with the collector at GOGC=5."
echo
echo "| format | input | MB/s | alloc MB/object | alloc/input | peak live MB | target |"
echo "|---|---|---|---|---|---|---|"
declare -A desc=(
  [text-utf8]="plain text, UTF-8 (debian-reference.en.txt)"
  [text-cp1252]="plain text, Windows-1252 (debian-reference.fr.txt re-encoded)"
  [html]="HTML (developers-reference.html)"
  [markdown]="Markdown (generated from debian-reference)"
  [csv]="CSV, 20,000 records"
  [pdf]="PDF (debian-faq.pdf)"
  [docx]="DOCX, the paragraphs of debian-reference.en"
  [xlsx]="XLSX, 10,000 rows of 4 cells"
  [pptx]="PPTX, 4 paragraphs of debian-reference.en per slide"
  [odt]="ODT, the paragraphs of debian-reference.en"
  [rtf]="RTF (debian-reference.fr as RTF)"
  [eml-attachments]="EML, 100 KB body, TXT and DOCX attachments"
  [mbox]="MBOX, 500 messages"
  [zip]="ZIP, 100 text members of 10 KB"
  [tar.gz]="TAR.GZ, 100 text members of 10 KB"
)
for c in text-utf8 text-cp1252 html markdown csv pdf docx xlsx pptx odt rtf eml-attachments mbox zip tar.gz; do
  mbs=$(metric "$c" MB/s)
  target=""
  case $c in text-utf8|text-cp1252|html) target="≥ 100 MB/s: $(verdict "$mbs" 100)" ;; esac
  echo "| ${desc[$c]} | $(human "$(size "$c")") | $mbs | $(metric "$c" alloc-MB/op) | $(metric "$c" alloc/input) | $(metric "$c" peak-live-MB) | $target |"
done
echo
echo "### Memory per object is bounded by the limits"
echo
echo "| input | MB/s | alloc MB/object | alloc/input | peak live MB |"
echo "|---|---|---|---|---|"
for c in mem-text-1MB mem-text-64MB mem-zip-bomb-1GiB mem-nested-zip-bomb-1GiB; do
  case $c in
    mem-text-1MB) d="1 MB of UTF-8 text" ;;
    mem-text-64MB) d="64 MB of UTF-8 text (MaxTextSize is 64 MiB)" ;;
    mem-zip-bomb-1GiB) d="ZIP bomb: $(human "$(size "$c")") whose member inflates to 1 GiB" ;;
    mem-nested-zip-bomb-1GiB) d="the same bomb nested in 3 ZIPs ($(human "$(size "$c")"))" ;;
  esac
  echo "| $d | $(metric "$c" MB/s) | $(metric "$c" alloc-MB/op) | $(metric "$c" alloc/input) | $(metric "$c" peak-live-MB) |"
done
echo
echo "Text costs a constant number of bytes per input byte whatever its size (the raw bytes and the"
echo "extracted text), so memory per object is bounded by MaxObjectSize and MaxTextSize. The bombs stop"
echo "at MaxCompressionRatio (200): memory stays at a few MB instead of the gigabyte they claim, and the"
echo "object is recorded with a limit error."
echo
echo "    $cmd"
