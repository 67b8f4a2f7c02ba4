#!/usr/bin/env python3
"""Which merged lists of ply's schema table kustomize does not merge.

kustomize v5.5.0 merges lists by the Kubernetes schema it carries (kyaml/openapi/
kubernetesapi, v1.21.2): fields and kinds added since have no patch strategy there, so its
strategic merge patches replace those lists where ply's Kubernetes 1.37 table says "merge".
This tool asks the oracle: for every list field the table marks `merge` (with a merge key),
reached from every kind by its shortest path, it renders an object holding one element
keyed `a` patched with one element keyed `b` through `kubectl kustomize`, and reads whether
both elements are kept (merged) or only the patch's (replaced).

    tools/probe_kustomize_merge.py [--table src/schema/kubernetes-1.37.table]

Prints one line per (type, field) that kustomize replaces, `type<TAB>field`, sorted: the text
of src/schema/kustomize-replaced-lists.txt. A field whose kinds disagree is reported on
stderr and left out. Python 3 standard library only; needs kubectl (kustomize v5.5) on PATH.
"""
import argparse, collections, concurrent.futures, os, subprocess, sys, tempfile


def read_table(path):
    kinds, types = [], []
    for line in open(path):
        cols = line.rstrip("\n").split("\t")
        if cols[0] == "K":
            kinds.append((cols[1], cols[2], cols[3], int(cols[4])))
        elif cols[0] == "T":
            types.append((cols[1], {}))
        elif cols[0] == "F":
            types[-1][1][cols[1]] = cols[2:]
    return kinds, types


def ref(shape):
    s = shape.lstrip("[{")
    return int(s[1:]) if s.startswith("@") else None


def paths_from(root, types):
    """Shortest path (field names, each list entered by its first element) to every merged
    list field reachable from `root`: {(type, field): (path, merge key)}."""
    out, seen = {}, {root}
    queue = collections.deque([(root, [])])
    while queue:
        t, path = queue.popleft()
        name, fields = types[t]
        for f, cols in sorted(fields.items()):
            shape, strategy, key = cols[0], cols[1], cols[2]
            if shape.startswith("[") and "merge" in strategy.split(",") and key != "-" \
                    and ref(shape) is not None and (name, f) not in out:
                out[(name, f)] = (path + [f], key)
            r = ref(shape)
            # A list on the way is entered by one element, keyed when the list is merged.
            if r is not None and r not in seen and not shape.startswith("{"):
                seen.add(r)
                step = f if not shape.startswith("[") else f"{f}[{key if 'merge' in strategy.split(',') else ''}]"
                queue.append((r, path + [step]))
    return out


def nest(path, leaf):
    for step in reversed(path):
        if step.endswith("]"):
            name, key = step[:-1].split("[")
            leaf = {name: [{key: "p", **leaf}]}
        else:
            leaf = {step: leaf}
    return leaf


def y(v, ind=0):
    """Block YAML for nested maps ending in a list of flat maps (the probe's shape)."""
    pad = " " * ind
    if isinstance(v, dict):
        return "".join(f"\n{pad}{k}:" + y(x, ind + 2) for k, x in v.items())
    if isinstance(v, list):
        return "".join(f"\n{pad}-" + y(e, ind + 2).replace("\n" + pad + "  ", " ", 1) for e in v)
    return f" {v}"


def probe(kind, path, key):
    group, version, k, _ = kind
    av = version if group == "-" else f"{group}/{version}"
    # Every list on the way holds one element, keyed `p` on both sides.
    def obj(v):
        body = nest(path[:-1], {path[-1]: [{key: v}]})
        return {"apiVersion": av, "kind": k, "metadata": {"name": "probe"}, **body}
    with tempfile.TemporaryDirectory() as t:
        open(os.path.join(t, "r.yaml"), "w").write(y(obj("a")).lstrip("\n") + "\n")
        open(os.path.join(t, "p.yaml"), "w").write(y(obj("b")).lstrip("\n") + "\n")
        open(os.path.join(t, "kustomization.yaml"), "w").write("resources:\n- r.yaml\npatches:\n- path: p.yaml\n")
        p = subprocess.run(["kubectl", "kustomize", t], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    has_a, has_b = f"{key}: a" in p.stdout, f"{key}: b" in p.stdout
    return "merged" if has_a and has_b else "replaced" if has_b else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", default=os.path.join(os.path.dirname(__file__), "..", "src", "schema", "kubernetes-1.37.table"))
    a = ap.parse_args()
    kinds, types = read_table(a.table)
    jobs = []
    for kind in kinds:
        if kind[2].endswith("List"):
            continue
        for tf, (path, key) in paths_from(kind[3], types).items():
            # Only through lists merged by a key (others replace whatever is below them).
            if any(s.endswith("[]") for s in path[:-1]):
                continue
            jobs.append((tf, kind, path, key))
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        results = list(ex.map(lambda j: (j[0], j[1], probe(*j[1:])), jobs))
    by = collections.defaultdict(set)
    for tf, kind, r in results:
        if r:
            by[tf].add(r)
    for tf, rs in sorted(by.items()):
        if rs == {"replaced"}:
            print(f"{tf[0]}\t{tf[1]}")
        elif len(rs) > 1:
            print(f"kinds disagree on {tf}: {sorted(rs)}", file=sys.stderr)
    print(f"probed {len(jobs)} (kind, field) pairs, {len(by)} fields answered", file=sys.stderr)


if __name__ == "__main__":
    main()
