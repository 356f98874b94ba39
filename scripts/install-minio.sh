#!/usr/bin/env bash
# Builds the MinIO server at a pinned version into a cache directory. The
# first build takes about five minutes on two cores; later runs reuse it.
set -euo pipefail
version=$1 dest=$2
mkdir -p "$dest"
# One build at a time, even when several test runs start together.
exec 9>"$dest/.minio.lock"
flock 9
if [ -x "$dest/minio" ] && [ -f "$dest/minio.version" ] && [ "$(cat "$dest/minio.version")" = "$version" ]; then
  exit 0
fi
mkdir -p "$dest"
echo "building MinIO $version into $dest (about five minutes the first time)"
GOBIN="$dest" GOFLAGS=-buildvcs=false go install "github.com/minio/minio@$version"
echo "$version" > "$dest/minio.version"
