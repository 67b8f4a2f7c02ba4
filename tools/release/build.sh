#!/usr/bin/env bash
# Builds, packages and checks one release archive of ply: what the release workflow
# (.github/workflows/release.yml) runs on each of its runners, and what `.ci/run` runs for Linux
# amd64 in its dry-run mode.
#
#   tools/release/build.sh TARGET --tag vX.Y.Z   # a release: TAG must be v<Cargo.toml's version>
#   tools/release/build.sh TARGET --dry-run      # the same, the tag taken from Cargo.toml
#
# TARGET is one of x86_64-unknown-linux-musl, aarch64-unknown-linux-musl (static binaries),
# x86_64-apple-darwin, aarch64-apple-darwin. It builds `cargo build --release --locked` for
# TARGET (no debug info, symbols stripped), then writes to OUT (default target/release-dist):
#   ply-TAG-OS-ARCH.tar.gz          the directory ply-TAG-OS-ARCH/ with `ply` and README.md
#   ply-TAG-OS-ARCH.tar.gz.sha256   "SHA-256  ply-TAG-OS-ARCH.tar.gz", as `sha256sum -c` reads
# and checks the archive as a user would get it, in a scratch directory: the checksum file
# verifies, the archive unpacks, `ply version` names the tag's version and the commit, the
# binary renders examples/hello-world as testdata/examples/hello-world/expected.yaml says, and
# a Linux binary is static. A binary this machine cannot run (x86_64 macOS on an arm64 Mac
# without Rosetta) is checked for its architecture only, and the script says so.
# Any failed check exits non-zero. Environment: PLY_COMMIT (default: git's HEAD, 12 digits),
# OUT. The dry run differs from a release only in where the tag comes from.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

usage() { echo "usage: $0 TARGET (--tag vX.Y.Z | --dry-run)" >&2; exit 2; }
target="${1:-}"
[ -n "$target" ] || usage
shift
tag=""
dry_run=false
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag="${2:?--tag needs a value}"; shift 2 ;;
    --dry-run) dry_run=true; shift ;;
    *) usage ;;
  esac
done
case "$target" in
  x86_64-unknown-linux-musl) name=linux-amd64 ;;
  aarch64-unknown-linux-musl) name=linux-arm64 ;;
  x86_64-apple-darwin) name=darwin-amd64 ;;
  aarch64-apple-darwin) name=darwin-arm64 ;;
  *) echo "release: unknown target '$target'" >&2; usage ;;
esac

# The version `ply version` prints is Cargo.toml's; a tag that says otherwise is refused
# before anything is built.
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)"
[ -n "$version" ] || { echo "release: no version in Cargo.toml" >&2; exit 1; }
if [ -z "$tag" ]; then
  $dry_run || { echo "release: --tag is required (or --dry-run)" >&2; exit 2; }
  tag="v$version"
fi
if [ "$tag" != "v$version" ]; then
  echo "release: the tag $tag does not name Cargo.toml's version $version (tag v$version, or" \
    "change the version first)" >&2
  exit 1
fi
commit="${PLY_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
commit="${commit:0:12}"
out="${OUT:-$root/target/release-dist}"
base="ply-$tag-$name"
echo "== release $base (commit $commit)$($dry_run && echo ', dry run')"

sha256() { # FILE: prints "HASH  NAME" as sha256sum does, on Linux and macOS
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi
}

# -- build
if command -v rustup >/dev/null 2>&1; then
  rustup target add "$target" >/dev/null 2>&1 || rustup target add "$target"
fi
case "$target" in
  *-linux-musl)
    # ring (rustls' crypto) compiles C for the target: musl-gcc (Debian's musl-tools) on a
    # runner of the target's own architecture.
    command -v musl-gcc >/dev/null 2>&1 \
      || { echo "release: musl-gcc is missing (apt-get install musl-tools)" >&2; exit 1; }
    cc_var="CC_${target//-/_}"
    export "$cc_var=${!cc_var:-musl-gcc}"
    ;;
esac
PLY_COMMIT="$commit" CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=symbols \
  cargo build --release --locked --target "$target"

# -- package
mkdir -p "$out"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$base"
cp "target/$target/release/ply" README.md "$stage/$base/"
tar -C "$stage" -czf "$out/$base.tar.gz" "$base"
(cd "$out" && sha256 "$base.tar.gz" >"$base.tar.gz.sha256")
echo "wrote $out/$base.tar.gz and $base.tar.gz.sha256: $(cut -d' ' -f1 <"$out/$base.tar.gz.sha256")"

# -- check the archive as a user gets it
check="$stage/check"
mkdir "$check"
cp "$out/$base.tar.gz" "$out/$base.tar.gz.sha256" "$check/"
(cd "$check" && sha256 -c "$base.tar.gz.sha256") || { echo "release: checksum mismatch" >&2; exit 1; }
tar -C "$check" -xzf "$check/$base.tar.gz"
ply="$check/$base/ply"
[ -x "$ply" ] || { echo "release: the archive holds no executable $base/ply" >&2; exit 1; }
run=("$ply")
case "$target:$(uname -s):$(uname -m)" in
  x86_64-unknown-linux-musl:Linux:x86_64 | aarch64-unknown-linux-musl:Linux:aarch64 \
    | aarch64-apple-darwin:Darwin:arm64 | x86_64-apple-darwin:Darwin:x86_64) ;;
  x86_64-apple-darwin:Darwin:arm64)
    if arch -x86_64 /usr/bin/true 2>/dev/null; then
      run=(arch -x86_64 "$ply")
    else
      run=()
    fi
    ;;
  *) run=() ;;
esac
if [ ${#run[@]} -eq 0 ]; then
  file "$ply"
  case "$target" in x86_64-*) want_arch='x86[-_]64' ;; *) want_arch='aarch64|arm64' ;; esac
  file "$ply" | grep -q -E "$want_arch" \
    || { echo "release: $base/ply is not a ${target%%-*} binary" >&2; exit 1; }
  echo "NOTE: this machine ($(uname -s) $(uname -m)) cannot run a $target binary: its" \
    "architecture is checked, its version and render are not"
  exit 0
fi
first="$("${run[@]}" version | head -n1)"
if [ "$first" != "ply $version (commit $commit)" ]; then
  echo "release: \`ply version\` says '$first', not 'ply $version (commit $commit)'" >&2
  exit 1
fi
echo "ply version: $first"
"${run[@]}" render examples/hello-world | cmp - testdata/examples/hello-world/expected.yaml \
  || { echo "release: $base/ply renders examples/hello-world differently" >&2; exit 1; }
echo "renders examples/hello-world as expected"
if [ "$(uname -s)" = Linux ]; then
  if ldd "$ply" 2>&1 | grep -q "=>"; then
    echo "release: $base/ply is not static:" >&2
    ldd "$ply" >&2
    exit 1
  fi
  echo "static: no shared library"
fi
echo "== $base.tar.gz checked"
