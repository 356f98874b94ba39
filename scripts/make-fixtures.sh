#!/usr/bin/env bash
# Regenerates testdata/corpora, the small set of real documents the unit
# tests (make test) read, from the full corpora at $SIMDEX_CORPORA (default
# ../shared/corpora). The lists below are the whole choice: a test that
# needs another document adds it here and reruns the script.
#   scripts/make-fixtures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
src=${SIMDEX_CORPORA:-../shared/corpora}
if [ ! -d "$src" ]; then
  echo "make-fixtures: corpora not found at $src (set SIMDEX_CORPORA)" >&2
  exit 1
fi
dst=testdata/corpora

# SPDX licence texts named by the unit tests.
spdx=(0BSD Apache-2.0 Artistic-2.0 BSD-2-Clause BSD-3-Clause BSD-3-Clause-Clear CDDL-1.0 EPL-2.0 EUPL-1.2
  GPL-2.0+ GPL-2.0-only GPL-3.0-only ISC MIT MPL-2.0 OSL-3.0 Zlib)
# debian-docs: the policy manual's TXT edition (quoting, and the English
# manual benchcorpus's text model needs), the A4 reference card (a real
# PDF), the HTML sources of extract/testdata/legacy, and each package's
# copyright file.
docs=(
  raw/debian-policy/usr/share/doc/debian-policy/policy.txt
  raw/debian-policy/usr/share/doc/debian-policy/policy.html/ch-scope.html
  raw/debian-policy/usr/share/doc/debian-policy/copyright
  raw/debian-refcard/usr/share/doc/debian-refcard/refcard-en-a4.pdf
  raw/debian-refcard/usr/share/doc/debian-refcard/copyright
  raw/debian-faq/usr/share/doc/debian/FAQ/choosing.en.html
  raw/debian-faq/usr/share/doc/debian-faq/copyright
  raw/maint-guide-fr/usr/share/doc/maint-guide-fr/html/start.fr.html
  raw/maint-guide-fr/usr/share/doc/maint-guide-fr/copyright
  raw/maint-guide-ja/usr/share/doc/maint-guide-ja/html/start.ja.html
  raw/maint-guide-ja/usr/share/doc/maint-guide-ja/copyright
  raw/developers-reference/usr/share/developers-reference/l10n.html
  raw/developers-reference/usr/share/doc/developers-reference/copyright
)
# mail-usrp: one real thread (000002 asks, 000003 answers, 000005 answers
# from a web form) and an unrelated message.
mail=(000001 000002 000003 000005)
# outlook: every file (the PST and MSG tests read all four).
outlook=(32-bit.pst support.pst strangeDate.msg unicode.msg)
# Other licence wordings, for index/sketch's reference checks.
gomod=(0000_LICENSE 0001_LICENSE 0002_LICENSE 0003_LICENSE)
scenarios=(114431182 116495682_1 126169642)

rm -rf "$dst/spdx" "$dst/debian-docs" "$dst/mail-usrp" "$dst/outlook" "$dst/gomod-licenses" "$dst/licenseclassifier"
copy() { # copy REL: $src/REL to $dst/REL
  mkdir -p "$(dirname "$dst/$1")"
  cp "$src/$1" "$dst/$1"
  chmod 0644 "$dst/$1"
}
for n in "${spdx[@]}"; do copy "spdx/text/$n.txt"; done
for f in "${docs[@]}"; do copy "debian-docs/$f"; done
# rows TSV FILE...: the header of the corpus's table TSV and its rows of
# the files given (first column), each once: where each copy came from.
rows() {
  local tsv=$1
  shift
  mkdir -p "$(dirname "$dst/$tsv")"
  {
    head -1 "$src/$tsv"
    awk -F'\t' 'NR==FNR { want[$0] = 1; next } FNR > 1 && ($1 in want) && !seen[$1]++' <(printf '%s\n' "$@") "$src/$tsv"
  } > "$dst/$tsv"
}
rows debian-docs/index.tsv "${docs[@]}"
rows spdx/metadata.tsv $(printf "text/%s.txt " "${spdx[@]}")
rows gomod-licenses/index.tsv "${gomod[@]/#/files/}"
rows licenseclassifier/scenarios.tsv "${scenarios[@]/#/scenarios/}"
for n in "${mail[@]}"; do copy "mail-usrp/eml/$n.eml"; done
for n in "${outlook[@]}"; do copy "outlook/$n"; done
for n in "${gomod[@]}"; do copy "gomod-licenses/files/$n"; done
for n in "${scenarios[@]}"; do copy "licenseclassifier/scenarios/$n"; done
copy licenseclassifier/LICENSE.licenseclassifier
du -sh "$dst"
