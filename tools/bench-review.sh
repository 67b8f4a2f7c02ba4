#!/usr/bin/env bash
# Benchmark of the pull-request review (`just bench-review`; runs without just too):
# a tree from ../shared/bench/gen_tree.py (APPS apps, default 1000, 3 environments) committed to
# a temporary git repository, one base file changed in a second commit, then
#   ply diff --base HEAD~1 --all               (every kustomization root, both revisions)
#   ply diff --base HEAD~1 --all --changed-only
#   ply diff --base HEAD~1 'apps/*/overlays/*' (every app overlay, 3 per app)
#   ply diff --base HEAD~1 'apps/*/overlays/*' --changed-only
# against the scripted baseline: two plain `ply render` runs per overlay (per root for --all,
# per app overlay for the glob, per changed overlay for --changed-only). Each command runs
# RUNS times (default 3); the median wall and CPU times are printed. Results: target/bench-review/results.txt.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
gen="$root/../shared/bench/gen_tree.py"
apps=${APPS:-1000}
runs=${RUNS:-3}
work="$root/target/bench-review"
ply="$root/target/release/ply"

[[ -f "$gen" ]] || { echo "bench-review: $gen not found (../shared is needed)" >&2; exit 2; }
(cd "$root" && cargo build --release -q)
rm -rf "$work"
mkdir -p "$work"
tree="$work/tree"
python3 "$gen" "$tree" --apps "$apps" --envs 3 >/dev/null
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=bench \
  GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
cd "$tree"
git init -q -b main
git add -A
git commit -q -m base
# One base file changes: the first app's Deployment gets another replica count.
app=$(ls apps | head -n1)
sed -i '0,/replicas:/s/replicas: *[0-9]*/replicas: 7/' "apps/$app/base/deployment.yaml"
git commit -q -am "change one base file"
# Packed, as a CI clone is (`git clone`/`actions/checkout` receive one pack); LOOSE=1 keeps
# the loose objects `git commit` writes (each read then inflates a file of its own).
[[ -n "${LOOSE:-}" ]] || git gc -q

# Median wall time and median CPU time (user + system, all threads) of RUNS runs of a shell
# command, in seconds: "wall s (cpu s CPU)". The CPU time is the steadier figure on a shared
# machine.
median() {
  local walls=() cpus=() out="$work/time.txt" script="$work/command.sh"
  # A file, not `bash -c`: a render per overlay makes a command longer than one argument may be.
  printf '%s\n' "$1" >"$script"
  for _ in $(seq "$runs"); do
    rm -f "$out"
    /usr/bin/time -f '%e %U %S' -o "$out" bash "$script" >/dev/null 2>&1 || true
    read -r e u s <"$out"
    walls+=("$e")
    cpus+=("$(echo "$u + $s" | bc)")
  done
  local mid=$(((runs + 1) / 2))
  echo "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "${mid}p") s wall, $(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "${mid}p") s CPU"
}

# A shell script rendering each directory twice with plain `ply render`.
render_each_twice() {
  local d
  for d in "$@"; do
    printf "'%s' render '%s' >/dev/null\n'%s' render '%s' >/dev/null\n" "$ply" "$d" "$ply" "$d"
  done
}

mapfile -t roots < <("$ply" diff --base HEAD~1 --all --format json | python3 -c 'import json,sys; print("\n".join(o["path"] for o in json.load(sys.stdin)["overlays"]))')
mapfile -t overlays < <(ls -d apps/*/overlays/*)
mapfile -t changed < <(ls -d "apps/$app/overlays/"*)
{
  echo "tree: $apps apps x 3 environments ($(find . -name kustomization.yaml | wc -l) kustomizations), one base file changed (apps/$app/base/deployment.yaml); median of $runs runs; $(nproc) cores"
  echo "--all (${#roots[@]} roots: ${roots[*]}):"
  echo "  ply diff --base HEAD~1 --all                       $(median "'$ply' diff --base HEAD~1 --all --format summary")"
  echo "  ply diff --base HEAD~1 --all --changed-only      $(median "'$ply' diff --base HEAD~1 --all --changed-only --format summary")"
  echo "  2 x ply render per root                          $(median "$(render_each_twice "${roots[@]}")")"
  echo "every app overlay (${#overlays[@]}, as a glob):"
  echo "  ply diff --base HEAD~1 'apps/*/overlays/*'       $(median "'$ply' diff --base HEAD~1 'apps/*/overlays/*' --format summary")"
  echo "  ... --changed-only                               $(median "'$ply' diff --base HEAD~1 'apps/*/overlays/*' --changed-only --format summary")"
  echo "  2 x ply render per overlay                       $(median "$(render_each_twice "${overlays[@]}")")"
  echo "  2 x ply render per changed overlay (${#changed[@]})           $(median "$(render_each_twice "${changed[@]}")")"
} | tee "$work/results.txt"
