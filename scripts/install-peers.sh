#!/usr/bin/env bash
# Installs the peer tools the evaluation compares simdex with (ssdeep and
# tlsh from Debian 12), when they are not on PATH yet. eval's TestPeers runs
# them for real, so `make test` needs them too.
set -euo pipefail
if command -v ssdeep >/dev/null && command -v tlsh >/dev/null; then
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq ssdeep tlsh-tools >/dev/null
command -v ssdeep >/dev/null && command -v tlsh >/dev/null
