#!/usr/bin/env bash
# Installs Debian's Chromium for the web UI's browser tests (webui), when
# it is not there yet. The tests drive it headless over CDP; CI fails, not
# skips, without it.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
