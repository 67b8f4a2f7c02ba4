#!/usr/bin/env bash
# Installs ply for the Action (action.yml), cheapest first:
#   1. the prebuilt release archive of the Action's ref, when the ref is a version tag (v*) and
#      the release has an archive for this machine (.github/workflows/release.yml names them
#      ply-<tag>-<os>-<arch>.tar.gz, each with a .sha256 beside it): its SHA-256 is checked
#      against the .sha256 before anything is unpacked, and a mismatch fails the step;
#   2. a build of the Action's own checkout kept by actions/cache (a stamp names the hash of
#      the sources it was built from);
#   3. `cargo install --locked --path` of the Action's checkout (minutes), which the cache of
#      step 2 then keeps.
# A `ply` already on PATH is used as it is. The directory holding the binary goes to
# $GITHUB_PATH (or is printed).
# Environment: PLY_REF (the Action's ref, github.action_ref), PLY_SOURCE (the Action's checkout,
# $GITHUB_ACTION_PATH), PLY_HOME (default ~/.cache/ply/install; the build cache's path),
# PLY_RELEASE_URL (default https://github.com/ply-dev/ply/releases/download), PLY_OS and
# PLY_ARCH (default from uname: linux|darwin, amd64|arm64).
set -euo pipefail
# What a build is of: the hash of the checkout's sources (an Action's checkout has no .git).
# `install-ply.sh --stamp` prints it (action.yml keys the build cache on it).
stamp() {
  (cd "${PLY_SOURCE:-${GITHUB_ACTION_PATH:-.}}" \
    && find Cargo.toml Cargo.lock build.rs src -type f | LC_ALL=C sort | xargs sha256sum \
    | sha256sum | cut -c1-16)
}
if [ "${1:-}" = "--stamp" ]; then
  stamp
  exit 0
fi
if command -v ply >/dev/null 2>&1; then
  echo "using $(command -v ply): $(ply version | head -n1)"
  exit 0
fi
ref="${PLY_REF:-}"
source_dir="${PLY_SOURCE:-${GITHUB_ACTION_PATH:-}}"
home="${PLY_HOME:-$HOME/.cache/ply/install}"
releases="${PLY_RELEASE_URL:-https://github.com/ply-dev/ply/releases/download}"
os="${PLY_OS:-$(uname -s | tr '[:upper:]' '[:lower:]')}"
case "${PLY_ARCH:-$(uname -m)}" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) arch="$(uname -m)" ;;
esac

found() { # DIR: ply is DIR/ply
  "$1/ply" version | head -n1
  if [ -n "${GITHUB_PATH:-}" ]; then echo "$1" >>"$GITHUB_PATH"; else echo "add $1 to PATH"; fi
  exit 0
}

# 1. The release archive of a version tag.
case "$ref" in
  v[0-9]*)
    name="ply-$ref-$os-$arch"
    url="$releases/$ref/$name.tar.gz"
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    if curl -fsSL --retry 2 -o "$tmp/$name.tar.gz" "$url" \
      && curl -fsSL --retry 2 -o "$tmp/$name.tar.gz.sha256" "$url.sha256"; then
      want="$(cut -d' ' -f1 <"$tmp/$name.tar.gz.sha256")"
      got="$(sha256sum "$tmp/$name.tar.gz" | cut -d' ' -f1)"
      if [ -z "$want" ] || [ "$want" != "$got" ]; then
        echo "::error::$url hashes to $got, its .sha256 says '$want': not installed" >&2
        exit 1
      fi
      tar -xzf "$tmp/$name.tar.gz" -C "$tmp"
      mkdir -p "$home/release/$ref"
      install -m 755 "$tmp/$name/ply" "$home/release/$ref/ply"
      echo "installed the release archive $name.tar.gz (SHA-256 $got checked)"
      found "$home/release/$ref"
    fi
    echo "no release archive for $ref at $url: using a build of the Action's checkout"
    ;;
  *) echo "the Action's ref '${ref:-?}' is not a version tag: using a build of its checkout" ;;
esac

# 2. A cached build of this checkout; 3. a build.
[ -n "$source_dir" ] || { echo "::error::PLY_SOURCE (the Action's checkout) is not set" >&2; exit 1; }
commit="$(stamp)"
if [ -x "$home/build/bin/ply" ] && [ "$(cat "$home/build/commit" 2>/dev/null)" = "$commit" ]; then
  echo "using the cached build of $commit"
  found "$home/build/bin"
fi
echo "building ply from $source_dir ($commit)"
cargo install --locked --path "$source_dir" --root "$home/build"
echo "$commit" >"$home/build/commit"
found "$home/build/bin"
