#!/usr/bin/env bash
# Checks every GitHub workflow (.github/workflows/), the Action (action.yml), the GitHub CI
# examples (examples/ci/github/) and the shell scripts they run, as `.ci/run` does:
#   - actionlint (syntax, expressions, runner labels, the inputs given to action.yml, and
#     running shellcheck on every `run:` block), built with Go from the Go module proxy at a pinned
#     version. actionlint reads action.yml's metadata when a workflow uses it as `./`, so the
#     examples are checked in a scratch repository where `ply-dev/ply@…` is replaced by `./`;
#   - zizmor (security audits: permissions, pinning, injection, credentials), from PyPI at a
#     pinned version, with .github/zizmor.yml (each exception there says why);
#   - shellcheck (Debian's package) on tools/ci/*.sh, tools/release/*.sh and .ci/run.
# Installs what is missing (to /usr/local/bin, or $LINT_BIN). Any finding fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
actionlint_version=v1.7.12
zizmor_version=1.32.0
bin="${LINT_BIN:-/usr/local/bin}"
mkdir -p "$bin"
export PATH="$bin:$PATH"

if ! actionlint -version 2>/dev/null | grep -qx "$actionlint_version"; then
  echo "-- installing actionlint $actionlint_version (go install)"
  GOBIN="$bin" GOFLAGS=-mod=mod timeout 600 \
    go install "github.com/rhysd/actionlint/cmd/actionlint@$actionlint_version"
fi
if ! zizmor --version 2>/dev/null | grep -qx "zizmor $zizmor_version"; then
  echo "-- installing zizmor $zizmor_version (PyPI wheel)"
  k="$(mktemp -d)"
  timeout 300 python3 -m pip download -q --no-deps --only-binary=:all: -d "$k" "zizmor==$zizmor_version"
  python3 -m zipfile -e "$k"/zizmor-"$zizmor_version"-*.whl "$k/x"
  install -m 755 "$k/x/zizmor-$zizmor_version.data/scripts/zizmor" "$bin/zizmor"
  rm -rf "$k"
fi
if ! command -v shellcheck >/dev/null 2>&1; then
  echo "-- installing shellcheck (Debian)"
  timeout 300 apt-get install -y -qq shellcheck >/dev/null 2>&1 \
    || { timeout 300 apt-get update -qq && timeout 300 apt-get install -y -qq shellcheck >/dev/null; }
fi
echo "$(actionlint -version | head -n1) / $(zizmor --version) / shellcheck $(shellcheck --version | sed -n 's/^version: //p')"

echo "-- actionlint: .github/workflows/*.yml, examples/ci/github/*.yml (as example-*.yml), action.yml"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
git init -q "$scratch"
mkdir -p "$scratch/.github/workflows"
cp .github/workflows/*.yml "$scratch/.github/workflows/"
for f in examples/ci/github/*.yml; do
  sed 's#uses: ply-dev/ply@[^ ]*#uses: ./#' "$f" >"$scratch/.github/workflows/example-$(basename "$f")"
done
cp action.yml "$scratch/"
(cd "$scratch" && actionlint)
echo "actionlint: no finding"

echo "-- zizmor (.github/zizmor.yml)"
zizmor --offline --no-progress --config .github/zizmor.yml \
  action.yml .github/workflows/*.yml examples/ci/github/*.yml

echo "-- shellcheck"
shellcheck tools/ci/*.sh tools/release/*.sh .ci/run
echo "shellcheck: no finding"
