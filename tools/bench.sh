#!/usr/bin/env bash
# Benchmark: `ply render` against `kubectl kustomize` on the same generated kustomize trees.
#
#   tools/bench.sh            # trees of 10 and 100 apps
#   tools/bench.sh 300 1000   # other sizes (kubectl needs ~9 s per build at 1000 apps)
#
# Trees come from ../shared/bench/gen_tree.py (deterministic: same size, same bytes). Each size
# renders `envs/dev` of its tree: every app overlay of the dev environment plus the team
# namespaces. BENCH_TARGET picks another directory of the tree (`minimal`: the one-ConfigMap
# start-up reference) or `bases`: one build of every app's base. hyperfine (installed from Debian's packages when missing) times both
# commands side by side, BENCH_WARMUP (1) warm-up and BENCH_RUNS (5) timed runs each, writing to
# files so that no pipe is measured; results go to target/bench/results/ as JSON and Markdown.
# The script prints the ratio per size (wall medians, and CPU time: user + system means, as
# hyperfine records them) and checks that both outputs are byte-identical: a
# mismatch is reported, never a reason to fail the timing. A size that ply cannot render yet is
# reported and skipped (exit status 1).
#
# Sizes above BENCH_KUBECTL_MAX (300) are timed for ply only (kubectl takes ~12 minutes per build
# at 1000 apps). Every size also times ply on a flat kustomization listing ply's own output
# (`parse+emit`: the cost of reading and printing the same objects), and the summary gives
# render / parse+emit.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
gen="$root/../shared/bench/gen_tree.py"
work="$root/target/bench"
sizes=("$@")
((${#sizes[@]})) || sizes=(10 100)
warmup=${BENCH_WARMUP:-1}
runs=${BENCH_RUNS:-5}
kubectl_max=${BENCH_KUBECTL_MAX:-300}

[[ -f "$gen" ]] || { echo "bench: $gen not found (../shared is needed)" >&2; exit 2; }
command -v kubectl >/dev/null || { echo "bench: kubectl not found" >&2; exit 2; }
if ! command -v hyperfine >/dev/null; then
  echo "bench: installing hyperfine from Debian's packages" >&2
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq hyperfine
fi

(cd "$root" && cargo build --release --quiet)
ply="$root/target/release/ply"

mkdir -p "$work/trees" "$work/out" "$work/results"
failed=0
summary="$work/results/summary.md"
{
  echo "Target: ${BENCH_TARGET:-envs/dev}"
  echo
  echo "| apps | objects | output bytes | kubectl kustomize (median s) | ply render (median s) | speed-up | kubectl CPU (s) | ply CPU (s) | CPU speed-up | identical | ply parse+emit (median s) | render / parse+emit |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: |"
} >"$summary"

for n in "${sizes[@]}"; do
  tree="$work/trees/a$n"
  if [[ ! -f "$tree/.complete" ]]; then
    python3 "$gen" "$tree" --apps "$n" --force >/dev/null
    touch "$tree/.complete"
  fi
  target=${BENCH_TARGET:-envs/dev}
  if [[ $target == bases ]]; then
    # Every app's base in one build (a kustomization beside the generated ones).
    mkdir -p "$tree/bench-bases"
    {
      echo "resources:"
      for d in "$tree"/apps/*/base; do echo "- ../apps/$(basename "$(dirname "$d")")/base"; done
    } >"$tree/bench-bases/kustomization.yaml"
    dir="$tree/bench-bases"
  else
    dir="$tree/$target"
  fi
  tag="a$n-${target//\//-}"
  ref="$work/out/$tag-kubectl.yaml"
  new="$work/out/$tag-ply.yaml"
  echo "== $n apps: $dir" >&2
  if ! err=$("$ply" render "$dir" -o "$new" 2>&1); then
    echo "bench: ply render cannot render $dir yet; skipping $n apps:" >&2
    printf '%s\n' "$err" | head -12 >&2
    echo "| $n | | | | ply render failed | | | | | | | |" >>"$summary"
    failed=1
    continue
  fi
  # The same objects, read from one file and printed again.
  flat="$work/flat/$tag"
  mkdir -p "$flat"
  cp "$new" "$flat/rendered.yaml"
  printf 'resources:\n- rendered.yaml\n' >"$flat/kustomization.yaml"
  cmds=()
  with_kubectl=0
  if ((n <= kubectl_max)); then
    with_kubectl=1
    cmds+=(-n "kubectl kustomize ($n apps)" "kubectl kustomize '$dir' -o '$ref'")
  fi
  cmds+=(-n "ply render ($n apps)" "'$ply' render '$dir' -o '$new'")
  cmds+=(-n "ply parse+emit ($n apps)" "'$ply' render '$flat' -o '$work/out/$tag-flat.yaml'")
  hyperfine -N --warmup "$warmup" --runs "$runs" --style basic \
    --export-json "$work/results/$tag.json" --export-markdown "$work/results/$tag.md" "${cmds[@]}"
  if ((with_kubectl == 0)); then
    same=n/a
  elif cmp -s "$ref" "$new"; then same=yes; else same=NO; fi
  python3 - "$work/results/$tag.json" "$n" "$new" "$same" "$with_kubectl" >>"$summary" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["results"]
results = [r["median"] for r in runs]
# CPU time (user + system): hyperfine records their means over the timed runs.
cpus = [r["user"] + r["system"] for r in runs]
k = results.pop(0) if sys.argv[5] == "1" else None
kc = cpus.pop(0) if sys.argv[5] == "1" else None
p, f = results
pc = cpus[0]
data = open(sys.argv[3], "rb").read()
objects = sum(1 for line in data.splitlines() if line.startswith(b"kind:"))
ks = f"{k:.3f}" if k else "not run"
ratio = f"{k / p:.1f}x" if k else ""
kcs = f"{kc:.3f}" if kc else "not run"
cratio = f"{kc / pc:.1f}x" if kc else ""
print(f"| {sys.argv[2]} | {objects} | {len(data)} | {ks} | {p:.3f} | {ratio} | {kcs} | {pc:.3f} | {cratio} | {sys.argv[4]} | {f:.3f} | {p / f:.2f} |")
PY
  if [[ $same == NO ]]; then
    echo "bench: MISMATCH at $n apps: ply's output differs from kubectl kustomize's" >&2
    echo "bench:   diff -u '$ref' '$new' | head" >&2
    diff -u "$ref" "$new" | head -20 >&2 || true
  fi
done

echo
cat "$summary"
exit $failed
