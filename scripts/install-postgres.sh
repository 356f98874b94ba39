#!/usr/bin/env bash
# Installs Debian's PostgreSQL server programs for the tests of the
# PostgreSQL stores (internal/pgtest starts one server per test binary or
# test, as the postgres user when run as root). CI fails, not skips,
# without them.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
$sudo apt-get update -qq
# No cluster of its own and no service: the tests start their servers.
$sudo mkdir -p /etc/postgresql-common/createcluster.conf.d
echo "create_main_cluster = false" | $sudo tee /etc/postgresql-common/createcluster.conf.d/simdex.conf >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
ls /usr/lib/postgresql/*/bin/initdb
