#!/usr/bin/env bash
# Installs ply for the Action (action.yml), cheapest first:
#   1. the prebuilt release archive that matches the Action's ref: for a version tag (v*),
#      that tag's release; for a commit (a ref of 40 hex digits: an Action pinned by its
#      commit), the release of the version in the checkout's Cargo.toml, used only when its
#      binary says (`ply version`) it was built from that very commit. The release workflow
#      (.github/workflows/release.yml) names them ply-<tag>-<os>-<arch>.tar.gz, each with a
#      .sha256 beside it: the SHA-256 is checked before anything is unpacked, and a mismatch
#      fails the step;
#   2. a build of the Action's own checkout kept by actions/cache (for every ref, tags too: a
#      stamp names the hash of the sources it was built from);
#   3. `cargo install --locked --path` of the Action's checkout (minutes), which action.yml
#      then saves to that cache at once.
# A `ply` already on PATH is used as it is (a job before may have handed it over). The
# directory holding the binary goes to $GITHUB_PATH (or is printed).
#
#   install-ply.sh release   step 1 only; output installed=true|false
#   install-ply.sh build     steps 2 and 3; output built=true|false (true: save the cache)
#   install-ply.sh           all three, in order
#   install-ply.sh --stamp   print the stamp of the checkout's sources (the cache key's end)
# Outputs go to $GITHUB_OUTPUT when set; `ply=<the binary's path>` in every mode that finds one.
# Environment: PLY_REF (the Action's ref, github.action_ref), PLY_SOURCE (the Action's checkout,
# $GITHUB_ACTION_PATH), PLY_HOME (default ~/.cache/ply/install; the build cache's path),
# PLY_RELEASE_URL (default https://github.com/ply-dev/ply/releases/download), PLY_OS and
# PLY_ARCH (default from uname: linux|darwin, amd64|arm64).
set -euo pipefail
source_dir="${PLY_SOURCE:-${GITHUB_ACTION_PATH:-}}"
# sha256sum, or on macOS shasum (same output)
if command -v sha256sum >/dev/null 2>&1; then sha256=(sha256sum); else sha256=(shasum -a 256); fi
# What a build is of: the hash of the checkout's sources (an Action's checkout has no .git).
stamp() {
  (cd "${source_dir:-.}" \
    && find Cargo.toml Cargo.lock build.rs src -type f | LC_ALL=C sort \
    | xargs "${sha256[@]}" | "${sha256[@]}" | cut -c1-16)
}
mode="${1:-all}"
case "$mode" in
  --stamp) stamp; exit 0 ;;
  release | build | all) ;;
  *) echo "usage: install-ply.sh [release|build|--stamp]" >&2; exit 2 ;;
esac
output() { # KEY=VALUE for the step's outputs
  if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "$1" >>"$GITHUB_OUTPUT"; fi
}
if command -v ply >/dev/null 2>&1; then
  echo "using $(command -v ply): $(ply version | head -n1)"
  output "installed=true"
  output "built=false"
  output "ply=$(command -v ply)"
  exit 0
fi
ref="${PLY_REF:-}"
home="${PLY_HOME:-$HOME/.cache/ply/install}"
releases="${PLY_RELEASE_URL:-https://github.com/ply-dev/ply/releases/download}"
os="${PLY_OS:-$(uname -s | tr '[:upper:]' '[:lower:]')}"
case "${PLY_ARCH:-$(uname -m)}" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) arch="$(uname -m)" ;;
esac

found() { # DIR [KEY=VALUE]: ply is DIR/ply; the outputs; done
  "$1/ply" version | head -n1
  if [ -n "${GITHUB_PATH:-}" ]; then echo "$1" >>"$GITHUB_PATH"; else echo "add $1 to PATH"; fi
  output "ply=$1/ply"
  output "installed=true"
  output "${2:-built=false}"
  exit 0
}

# 1. The release archive that matches the ref. TAG WANT: the first line of its `ply version`
# must start with WANT.
from_release() {
  local tag="$1" want="$2" name url tmp want_sum got first
  name="ply-$tag-$os-$arch"
  url="$releases/$tag/$name.tar.gz"
  tmp="$(mktemp -d)"
  # shellcheck disable=SC2064 # expand now: the directory of this call
  trap "rm -rf '$tmp'" EXIT
  if ! curl -fsSL --retry 2 -o "$tmp/$name.tar.gz" "$url" \
    || ! curl -fsSL --retry 2 -o "$tmp/$name.tar.gz.sha256" "$url.sha256"; then
    echo "no release archive for $tag at $url"
    return 1
  fi
  want_sum="$(cut -d' ' -f1 <"$tmp/$name.tar.gz.sha256")"
  got="$("${sha256[@]}" "$tmp/$name.tar.gz" | cut -d' ' -f1)"
  if [ -z "$want_sum" ] || [ "$want_sum" != "$got" ]; then
    echo "::error::$url hashes to $got, its .sha256 says '$want_sum': not installed" >&2
    exit 1
  fi
  tar -xzf "$tmp/$name.tar.gz" -C "$tmp"
  first="$("$tmp/$name/ply" version | head -n1)"
  if [[ "$first" != "$want"* ]]; then
    echo "the release archive $name.tar.gz says '$first', not '$want…': not this ref's build"
    return 1
  fi
  mkdir -p "$home/release/$tag"
  install -m 755 "$tmp/$name/ply" "$home/release/$tag/ply"
  echo "installed the release archive $name.tar.gz (SHA-256 $got checked)"
  found "$home/release/$tag"
}
if [ "$mode" != build ]; then
  case "$ref" in
    v[0-9]*)
      from_release "$ref" "ply ${ref#v} (commit " || true
      ;;
    *)
      if [[ "$ref" =~ ^[0-9a-f]{40}$ ]] && [ -n "$source_dir" ]; then
        version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$source_dir/Cargo.toml" | head -n1)"
        from_release "v$version" "ply $version (commit ${ref:0:12})" || true
      else
        echo "the Action's ref '${ref:-?}' is neither a version tag nor a commit: no release archive"
      fi
      ;;
  esac
  if [ "$mode" = release ]; then
    echo "no release binary matches: a build of the Action's checkout (cached or made) is next"
    output "installed=false"
    exit 0
  fi
fi

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
found "$home/build/bin" "built=true"
