#!/usr/bin/env python3
"""Checks `ply diff --base` against `kubectl kustomize` on real repositories' histories.

Not run in CI: it needs public repositories brought by hand (any git clone or bare mirror).
For each repository and each of its last N first-parent commits that changed a file in a
directory holding a kustomization,
the review of (parent, commit) is made with

    ply diff --base PARENT --head COMMIT --base-exact --all --format json

and every overlay it lists is rendered at both commits by kubectl kustomize (the oracle:
`kubectl-1.37` when present, which embeds kustomize v5.8.1, ply's default; else `kubectl`).
From the two oracle renders the tool derives, independently of ply, which objects were
created, deleted, updated or renamed (a generated ConfigMap or Secret whose hash suffix
changed) and how many stayed the same, and compares that with ply's report, object by object.
An overlay the oracle cannot render at a side (a remote base without network, a helm chart)
must be one ply reports as failing or not fetched at that side; such overlays are counted
apart.

    tools/review_histories.py [--pairs N] [--ply PATH] [--kubectl CMD] REPO...

Prints one line per disagreement and a summary per repository; exits 1 when any overlay
disagrees. Nothing is written inside the repositories: each is cloned into a temporary
directory, and each commit's tree is exported with `git archive`.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

HASH_SUFFIX = re.compile(r"^(.*)-[a-z0-9]{10}$")


def run(cmd, cwd=None, check=True):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[:400]}")
    return p


def kustomization_dirs(repo):
    """The directories holding a kustomization at the repository's head."""
    names = run(["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=repo).stdout.split("\n")
    base = ("kustomization.yaml", "kustomization.yml", "Kustomization")
    return sorted({os.path.dirname(p) or "." for p in names if os.path.basename(p) in base})


def commits(repo, n):
    """The last n first-parent commits with a parent that changed a file in a directory
    holding a kustomization (at the head)."""
    dirs = kustomization_dirs(repo)
    out = run(["git", "log", "--first-parent", "--format=%H %P", "-n", str(n * 20), "--"]
              + dirs, cwd=repo).stdout.split("\n")
    pairs = []
    for line in out:
        parts = line.split()
        if len(parts) >= 2:
            pairs.append((parts[1], parts[0]))
        if len(pairs) == n:
            break
    return pairs


def export(repo, commit, dest):
    """Writes the commit's tree into dest, as a checkout would, with git cat-file (a mirror
    may lack its largest files, which `git archive` stops on; those are left out, and a render
    that needs one fails at both tools alike)."""
    tree = run(["git", "ls-tree", "-r", "-z", commit], cwd=repo).stdout.split("\0")
    entries = []
    for e in tree:
        if "\t" not in e:
            continue
        meta, path = e.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind == "blob":
            entries.append((mode, blob, path))
    batch = subprocess.run(["git", "cat-file", "--batch"], cwd=repo, capture_output=True,
                           input="".join(f"{b}\n" for _, b, _ in entries).encode())
    out, pos = batch.stdout, 0
    for mode, blob, path in entries:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].decode().split()
        pos = nl + 1
        if len(header) < 3 or header[1] != "blob":
            continue  # missing in the mirror
        size = int(header[2])
        data, pos = out[pos:pos + size], pos + size + 1
        target = os.path.join(dest, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if mode == "120000":
            os.symlink(data.decode(), target)
        else:
            with open(target, "wb") as f:
                f.write(data)


def object_id(doc):
    api = doc.get("apiVersion") or ""
    group = api.split("/")[0] if "/" in api else ""
    meta = doc.get("metadata") or {}
    return (group, doc.get("kind") or "", meta.get("namespace") or "", meta.get("name") or "")


def oracle(kubectl, tree, overlay):
    """The overlay's objects rendered by kubectl at one side, or None when it fails."""
    d = os.path.join(tree, overlay)
    if not os.path.isdir(d):
        return None
    p = subprocess.run(kubectl + ["kustomize", d], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    objects = {}
    for doc in yaml.safe_load_all(p.stdout):
        if isinstance(doc, dict):
            objects[object_id(doc)] = doc
    return objects


def without_name(doc):
    d = json.loads(json.dumps(doc, default=str))
    d.get("metadata", {}).pop("name", None)
    return d


def expected_changes(base, head):
    """(action, id) pairs from two oracle renders, and the count of unchanged objects."""
    changes, unchanged = set(), 0
    created = [i for i in head if i not in base]
    deleted = [i for i in base if i not in head]
    for i in head:
        if i in base:
            if base[i] == head[i]:
                unchanged += 1
            else:
                changes.add(("update", i))
    # A generated object whose hash suffix changed: one rename, as ply pairs it.
    for c in list(created):
        m = HASH_SUFFIX.match(c[3])
        if not m:
            continue
        for d in deleted:
            md = HASH_SUFFIX.match(d[3])
            if md and d[:3] == c[:3] and md.group(1) == m.group(1):
                changes.add(("rename", c))
                created.remove(c)
                deleted.remove(d)
                break
    changes |= {("create", i) for i in created}
    changes |= {("delete", i) for i in deleted}
    return changes, unchanged


def reported_id(o):
    api = o.get("apiVersion") or ""
    group = api.split("/")[0] if "/" in api else ""
    return (group, o["kind"], o.get("namespace") or "", o["name"])


def reported_changes(overlay, moved_away):
    """ply's changes of one overlay, as the oracle counts them: an object ply shows as moved
    here from another overlay is a creation here and a deletion there (`moved_away`: the
    deletions other overlays' moves took from this one)."""
    got = set(moved_away.get(overlay["path"], ()))
    for o in overlay.get("objects") or []:
        action = "create" if o["action"] == "move" else o["action"]
        got.add((action, reported_id(o)))
    return got


def check_pair(args, repo, base_c, head_c, tmp, stats):
    review = run([args.ply, "diff", "--base", base_c, "--head", head_c, "--base-exact", "--all",
                  "--format", "json"], cwd=repo, check=False)
    if review.returncode not in (0, 1, 2):
        stats["problems"].append(f"{base_c[:8]}..{head_c[:8]}: ply exit {review.returncode}: "
                                 f"{review.stderr.strip()[:300]}")
        return
    report = json.loads(review.stdout)
    trees = {}
    for side, c in (("base", base_c), ("head", head_c)):
        trees[side] = os.path.join(tmp, f"{side}-{c[:12]}")
        if not os.path.isdir(trees[side]):
            export(repo, c, trees[side])
    stats["pairs"] += 1
    moved_away = {}
    for ov in report["overlays"]:
        for o in ov.get("objects") or []:
            if o["action"] == "move" and o.get("movedFrom"):
                moved_away.setdefault(o["movedFrom"], set()).add(("delete", reported_id(o)))
    for ov in report["overlays"]:
        path = ov["path"]
        b = oracle(args.kubectl, trees["base"], path) if ov["status"] != "added" else {}
        h = oracle(args.kubectl, trees["head"], path) if ov["status"] != "removed" else {}
        where = f"{os.path.basename(repo)} {base_c[:8]}..{head_c[:8]} {path}"
        if b is None or h is None:
            # The oracle fails at a side: ply must not report object changes as if it rendered.
            stats["oracle_failed"] += 1
            if ov["status"] in ("compared", "unchanged"):
                stats["problems"].append(f"{where}: kubectl fails at "
                                         f"{'base' if b is None else 'head'}, ply says "
                                         f"{ov['status']}")
            continue
        if ov.get("error"):
            stats["problems"].append(f"{where}: kubectl renders both sides, ply: "
                                     f"{str(ov['error'])[:200]}")
            continue
        want, unchanged = expected_changes(b, h)
        got = reported_changes(ov, moved_away)
        stats["overlays"] += 1
        stats["objects"] += len(want) + unchanged
        if ov["status"] == "unchanged" and not want:
            stats["agreed"] += 1
            continue
        totals = ov.get("totals") or {}
        if got != want or (totals and totals.get("unchanged") != unchanged):
            missing = sorted(want - got)[:5]
            extra = sorted(got - want)[:5]
            stats["problems"].append(f"{where}: ply missed {missing}, ply added {extra}, "
                                     f"unchanged {totals.get('unchanged')} vs {unchanged}")
        else:
            stats["agreed"] += 1
            stats["changed"] += len(want)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--ply", default=os.path.join(os.path.dirname(__file__), "..", "target",
                                                  "release", "ply"))
    ap.add_argument("--kubectl", default=None)
    args = ap.parse_args()
    args.ply = os.path.abspath(args.ply)
    kubectl = args.kubectl or ("kubectl-1.37" if shutil.which("kubectl-1.37") else "kubectl")
    args.kubectl = kubectl.split()
    failed = False
    for src in args.repos:
        with tempfile.TemporaryDirectory(prefix="ply-histories-") as tmp:
            repo = os.path.join(tmp, "repo")
            run(["git", "clone", "--quiet", "--no-checkout", src, repo])
            stats = {"pairs": 0, "overlays": 0, "agreed": 0, "objects": 0, "changed": 0,
                     "oracle_failed": 0, "problems": []}
            for base_c, head_c in commits(repo, args.pairs):
                check_pair(args, repo, base_c, head_c, tmp, stats)
            for p in stats["problems"]:
                print(p)
            print(f"{src}: {stats['pairs']} commit pairs, {stats['overlays']} overlay reviews "
                  f"checked ({stats['objects']} objects, {stats['changed']} changes), "
                  f"{stats['agreed']} agreed, {len(stats['problems'])} disagreed; "
                  f"{stats['oracle_failed']} where kubectl fails at a side")
            failed |= bool(stats["problems"])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
