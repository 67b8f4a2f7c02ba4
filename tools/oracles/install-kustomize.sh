#!/usr/bin/env bash
# Builds the kustomize command-line tool at one release from the Go module proxy and installs it
# as DEST (default /usr/local/bin/kustomize-VERSION). An oracle: the real project's code at a
# pinned tag (`go install MODULE@vX` pins the version and verifies it against the checksum
# database). Already installed at that version: nothing to do.
#   tools/oracles/install-kustomize.sh 5.8.1 [DEST]
set -euo pipefail
version=${1:?usage: install-kustomize.sh VERSION [DEST]}
dest=${2:-/usr/local/bin/kustomize-$version}
if [ -x "$dest" ] && "$dest" version 2>/dev/null | grep -q "v$version"; then
  exit 0
fi
command -v go >/dev/null || { echo "go is not installed: it builds the kustomize oracle"; exit 1; }
gobin=$(mktemp -d)
trap 'rm -rf "$gobin"' EXIT
GOBIN="$gobin" CGO_ENABLED=0 timeout 900 go install "sigs.k8s.io/kustomize/kustomize/v5@v$version"
install -m 755 "$gobin/kustomize" "$dest"
"$dest" version | grep -q "v$version" || { echo "$dest does not report v$version"; exit 1; }
