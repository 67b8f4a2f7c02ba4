#!/usr/bin/env bash
# Regenerates (or, with --check, verifies) the expectations of the YAML golden cases from the
# oracle: for each testdata/yaml/<case>/input.yaml, `kubectl kustomize` of a kustomization that
# lists it. Cases holding a NOTE.md are deliberate differences (or errors): their expected.yaml
# is ply's own output, reviewed by hand, and the oracle's output goes to kustomize.out instead.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[[ "${1:-}" == "--check" ]] && check=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for case in testdata/yaml/*/; do
  case=${case%/}
  rm -rf "$tmp/k" && mkdir "$tmp/k"
  cp "$case/input.yaml" "$tmp/k/input.yaml"
  printf 'resources:\n- input.yaml\n' >"$tmp/k/kustomization.yaml"
  out=$(kubectl kustomize "$tmp/k" 2>&1; echo x) || true
  out=${out%x}
  if [[ -f "$case/NOTE.md" ]]; then
    target="$case/kustomize.out"
    # kubectl's error lines carry a timestamp and pid; drop them so the file is stable.
    out=$(printf '%s' "$out" | sed -E 's/^E[0-9]{4} [0-9:.]+ +[0-9]+ run.go:[0-9]+\] //'; echo x)
    out=${out%x}
  else
    target="$case/expected.yaml"
  fi
  if ((check)); then
    if ! diff -u "$target" <(printf '%s' "$out") >/dev/null; then
      echo "MISMATCH: $target differs from kubectl kustomize" >&2
      diff -u "$target" <(printf '%s' "$out") >&2 || true
      status=1
    fi
  else
    printf '%s' "$out" >"$target"
  fi
done
exit $status
