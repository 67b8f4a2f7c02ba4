#!/usr/bin/env bash
# Builds the kustomize command-line tool at one release from the Go module proxy and installs it
# as DEST (default /usr/local/bin/kustomize-VERSION). An oracle: the real project's code at a
# pinned tag (`go install MODULE@vX` pins the version and verifies it against the checksum
# database). Already installed at that version: nothing to do.
#   tools/oracles/install-kustomize.sh 5.8.1 [DEST]
set -euo pipefail
version=${1:?usage: install-kustomize.sh VERSION [DEST]}
dest=${2:-/usr/local/bin/kustomize-$version}
# The module version the binary was built from (`kustomize version` says `(devel)` before v5.7,
# which took its version from the build information only from then on).
built_from() { go version -m "$1" 2>/dev/null | awk '$1 == "mod" && $2 == "sigs.k8s.io/kustomize/kustomize/v5" {print $3}'; }
if [ -x "$dest" ] && [ "$(built_from "$dest")" = "v$version" ]; then
  exit 0
fi
command -v go >/dev/null || { echo "go is not installed: it builds the kustomize oracle"; exit 1; }
gobin=$(mktemp -d)
trap 'rm -rf "$gobin"' EXIT
GOBIN="$gobin" CGO_ENABLED=0 timeout 900 go install "sigs.k8s.io/kustomize/kustomize/v5@v$version"
install -m 755 "$gobin/kustomize" "$dest"
[ "$(built_from "$dest")" = "v$version" ] || { echo "$dest is not built from kustomize v$version"; exit 1; }
