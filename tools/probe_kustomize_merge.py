#!/usr/bin/env python3
"""Which merged lists of ply's schema table kustomize does not merge.

kustomize v5.5.0 merges lists by the Kubernetes schema it carries (kyaml/openapi/
kubernetesapi, v1.21.2): fields and kinds added since have no patch strategy there, so its
strategic merge patches replace those lists where ply's Kubernetes 1.37 table says "merge".
This tool asks the oracle: for every list field the table marks `merge` (with a merge key),
reached from every kind by its shortest path, it renders an object holding one element
keyed `a` patched with one element keyed `b` through `kubectl kustomize`, and reads whether
both elements are kept (merged) or only the patch's (replaced).

    tools/probe_kustomize_merge.py [--table T] [--out DIR]

Writes two lists into DIR (default src/schema):
- kustomize-kinds.txt: the table's kinds kustomize has no schema for (it merges no list of
  theirs; asked by patching metadata.ownerReferences), and the versions of the table's
  kinds that kustomize's schema still knows and the table does not (batch/v1beta1 CronJob,
  ...) when kustomize merges their lists as it merges the table's version of the kind;
- kustomize-replaced-lists.txt: per (type, field), the merged lists kustomize replaces in
  the kinds it knows. A field whose kinds disagree is reported on stderr and left out.
Python 3 standard library only; needs kubectl (kustomize v5.5) on PATH.
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
    av = version if group in ("-", "") else f"{group}/{version}"
    # Every list on the way holds one element, keyed `p` on both sides.
    def obj(v):
        body = nest(path[:-1], {path[-1]: [{key: v}]})
        meta = {"name": "probe", **body.pop("metadata", {})}
        return {"apiVersion": av, "kind": k, "metadata": meta, **body}
    with tempfile.TemporaryDirectory() as t:
        open(os.path.join(t, "r.yaml"), "w").write(y(obj("a")).lstrip("\n") + "\n")
        open(os.path.join(t, "p.yaml"), "w").write(y(obj("b")).lstrip("\n") + "\n")
        open(os.path.join(t, "kustomization.yaml"), "w").write("resources:\n- r.yaml\npatches:\n- path: p.yaml\n")
        p = subprocess.run(["kubectl", "kustomize", t], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    has_a, has_b = f"{key}: a" in p.stdout, f"{key}: b" in p.stdout
    return "merged" if has_a and has_b else "replaced" if has_b else None


def direct_jobs(kind, types):
    """(type and field, kind, path, key) of every merged list reachable from `kind` through
    maps and lists merged by a key (others replace whatever is below them)."""
    return [(tf, kind, path, key) for tf, (path, key) in paths_from(kind[3], types).items()
            if not any(s.endswith("[]") for s in path[:-1])]


def run(jobs):
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        return list(ex.map(lambda j: (j[0], j[1], probe(*j[1:])), jobs))


def knows(kind):
    """Whether kustomize's schema knows the kind at all: it then merges
    metadata.ownerReferences by uid (an object without a schema has every list replaced)."""
    return probe(kind, ["metadata", "ownerReferences"], "uid") == "merged"


def replaced_lists(kinds, types):
    jobs = [j for kind in kinds for j in direct_jobs(kind, types)]
    by = collections.defaultdict(set)
    for tf, kind, r in run(jobs):
        if r:
            by[tf].add(r)
    for tf, rs in sorted(by.items()):
        if len(rs) > 1:
            print(f"kinds disagree on {tf}: {sorted(rs)}", file=sys.stderr)
    print(f"probed {len(jobs)} (kind, field) pairs, {len(by)} fields answered", file=sys.stderr)
    return sorted(tf for tf, rs in by.items() if rs == {"replaced"})


OLD_VERSIONS = ["v1beta1", "v1beta2", "v2beta1", "v2beta2", "v1alpha1"]
# Groups whose kinds kustomize's schema may also know under `extensions` (Kubernetes < 1.22).
EXTENSIONS = {"apps", "networking.k8s.io", "policy"}


def older_kinds(kinds, types, replaced):
    """Versions of the table's kinds that kustomize's schema knows and ply's table does not,
    merging the same lists as the table's version of the kind: (group, version, kind, table
    version). A candidate is asked first whether kustomize knows it at all, then with every
    list."""
    known = {(g, v, k) for g, v, k, _ in kinds}
    newest = {}
    for kind in kinds:
        g, v, k, _ = kind
        if not k.endswith("List") and direct_jobs(kind, types):
            newest[(g, k)] = kind
    found = []
    for (g, k), kind in sorted(newest.items()):
        cands = [(g, v) for v in OLD_VERSIONS]
        if g in EXTENSIONS:
            cands.append(("extensions", "v1beta1"))
        for cg, cv in cands:
            if (cg, cv, k) in known:
                continue
            old = (cg, cv, k, kind[3])
            if not knows(old):
                continue
            jobs = direct_jobs(old, types)
            answers = {tf: r for tf, _, r in run(jobs) if r}
            want = {tf: "replaced" if tf in replaced else "merged" for tf in answers}
            if answers == want:
                found.append((cg, cv, k, kind[1] if g in ("-", "") else f"{g}/{kind[1]}"))
            else:
                diff = sorted(tf for tf in answers if answers[tf] != want[tf])
                print(f"{cg}/{cv} {k} merges otherwise than {kind[1]}: {diff}", file=sys.stderr)
    return found


def main():
    ap = argparse.ArgumentParser()
    here = os.path.join(os.path.dirname(__file__), "..", "src", "schema")
    ap.add_argument("--table", default=os.path.join(here, "kubernetes-1.37.table"))
    ap.add_argument("--out", default=here, help="where to write the two lists (default: src/schema)")
    a = ap.parse_args()
    kinds, types = read_table(a.table)
    kinds = [k for k in kinds if not k[2].endswith("List") and k[2] not in ("WatchEvent", "DeleteOptions")]
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        known = list(ex.map(knows, kinds))
    unknown = [k for k, ok in zip(kinds, known) if not ok]
    replaced = replaced_lists([k for k, ok in zip(kinds, known) if ok], types)
    older = older_kinds(kinds, types, set(replaced))
    with open(os.path.join(a.out, "kustomize-replaced-lists.txt"), "w") as f:
        f.write(HEADER_LISTS)
        for t, fld in replaced:
            f.write(f"{t}\t{fld}\n")
    with open(os.path.join(a.out, "kustomize-kinds.txt"), "w") as f:
        f.write(HEADER_KINDS)
        for g, v, k, _ in unknown:
            f.write(f"unknown\t{g}\t{v}\t{k}\n")
        for g, v, k, tav in older:
            f.write(f"older\t{g}\t{v}\t{k}\t{tav}\n")
    print(f"{len(unknown)} kinds unknown to kustomize, {len(replaced)} lists replaced, "
          f"{len(older)} older kinds", file=sys.stderr)


HEADER_LISTS = """# Merged lists of kubernetes-1.37.table that kustomize v5.5.0 replaces in the kinds its schema
# (Kubernetes v1.21.2) knows: type<TAB>field. Written by tools/probe_kustomize_merge.py from
# kubectl kustomize's answers; do not edit, run it again.
"""

HEADER_KINDS = """# Kinds as kustomize v5.5.0's schema (Kubernetes v1.21.2) knows them, written by
# tools/probe_kustomize_merge.py from kubectl kustomize's answers; do not edit, run it again.
# unknown<TAB>group<TAB>version<TAB>kind: a kind of kubernetes-1.37.table kustomize has no
#   schema for (every list of it is replaced);
# older<TAB>group<TAB>version<TAB>kind<TAB>table apiVersion: a version the table lacks that
#   kustomize merges as the table's version of the kind.
"""


if __name__ == "__main__":
    main()
