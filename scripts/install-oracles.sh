#!/usr/bin/env bash
# Installs the Debian readers of legacy Office files that extract's
# TestLegacyOracles compares simdex with (antiword for Word, catdoc's
# xls2csv for Excel), when they are not on PATH yet. The test fails, not
# skips, without them.
set -euo pipefail
if command -v antiword >/dev/null && command -v xls2csv >/dev/null; then
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq antiword catdoc >/dev/null
command -v antiword >/dev/null && command -v xls2csv >/dev/null
