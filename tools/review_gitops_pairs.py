#!/usr/bin/env python3
"""Checks `ply diff --base A --base-exact --head B --gitops` on real commit pairs: for every
target of the review, its two sides must be what `ply render` gives at each commit (the
objects created, deleted, updated and unchanged follow from the two renders), and each render
must agree with its controller's oracle (tools/flux-oracle; tools/argo_oracle.py).

    tools/review_gitops_pairs.py --ply PLY --flux-oracle PATH REPO A B [-- FLAGS...]

FLAGS go to every ply command (`--source ExternalArtifact/flux-system/apps=apps`). Prints one
line per target and a total; exit 1 on any disagreement.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_review_gitops as crg  # noqa: E402


def key(o):
    group = o.get("apiVersion", "").rsplit("/", 1)[0] if "/" in o.get("apiVersion", "") else ""
    m = o.get("metadata") or {}
    # A Job with only a `generateName` is named "" in the report.
    return (group, o.get("kind"), m.get("namespace") or "", m.get("name") or "")


def single(tree, target):
    """A name declared twice (`flux:NS/NAME (FILE)`): its one document, alone in a file."""
    name = target.split(":", 1)[1]
    if " (" not in name:
        return None
    name, file = name.split(" (")
    short = name.split("/")[-1]
    for d in yaml.safe_load_all((tree / file.rstrip(")")).read_text()):
        if isinstance(d, dict) and (d.get("metadata") or {}).get("name") == short:
            which = tree.parent / f"one-{tree.name}.yaml"
            which.write_text(yaml.safe_dump(d))
            return str(which)
    return None


def render(ply, tree, target, flags):
    """The objects ply renders for a target at a checked-out tree, or None when it fails."""
    which = single(tree, target) or target.split(":", 1)[1]
    if target.startswith("flux:"):
        cmd = [ply, "render", "--flux-kustomization", which, "--json-lines"]
    else:
        cmd = [ply, "render", "--argo-application", which]
    r = subprocess.run(cmd + flags + ["--repo-root", str(tree)] if target.startswith("flux:")
                       else cmd + flags + [str(tree)], cwd=tree, capture_output=True, text=True)
    if r.returncode:
        return None
    docs = [json.loads(l) for l in r.stdout.splitlines()] if target.startswith("flux:") \
        else [d for d in yaml.safe_load_all(r.stdout) if d is not None]
    return {key(d): d for d in docs}


def expected(base, head):
    out = set()
    for k in set(base) | set(head):
        if k not in head:
            out.add(("delete", k))
        elif k not in base:
            out.add(("create", k))
        else:
            out.add(("unchanged" if base[k] == head[k] else "update", k))
    return out


def reviewed(o):
    out = set()
    for x in o["objects"]:
        group = x["apiVersion"].rsplit("/", 1)[0] if "/" in x["apiVersion"] else ""
        k = (group, x["kind"], x["namespace"], x["name"])
        if x["action"] == "rename":
            out.add(("create", k))
            out.add(("delete", (group, x["kind"], x["namespace"], x["renamedFrom"])))
        else:
            out.add((x["action"], k))
    return out


def main() -> int:
    a = argparse.ArgumentParser()
    a.add_argument("--ply", required=True)
    a.add_argument("--flux-oracle", required=True)
    a.add_argument("repo")
    a.add_argument("base")
    a.add_argument("head")
    a.add_argument("--url", default="", help="the repository's URL (Argo CD sources)")
    a.add_argument("flags", nargs="*")
    a = a.parse_args()
    ply = str(pathlib.Path(a.ply).resolve())
    oracle = str(pathlib.Path(a.flux_oracle).resolve())
    repo = pathlib.Path(a.repo).resolve()
    r = subprocess.run([ply, "diff", "--base", a.base, "--base-exact", "--head", a.head,
                        "--gitops", "--no-why", "--format", "json"] + a.flags,
                       cwd=repo, capture_output=True, text=True)
    report = json.loads(r.stdout)
    bad = checked = oracled = 0
    with tempfile.TemporaryDirectory() as tmp:
        trees = {}
        for side, rev in (("base", a.base), ("head", a.head)):
            t = pathlib.Path(tmp) / side
            t.mkdir()
            arch = subprocess.run(["git", "-C", str(repo), "archive", rev], capture_output=True)
            subprocess.run(["tar", "-x", "-C", str(t)], input=arch.stdout, check=True)
            trees[side] = t
        flux_sides = {}
        for o in report["overlays"]:
            target, status = o["path"], o["status"]
            if status == "not-rendered":
                print(f"ok   {target}: not rendered ({o['failure']['message'][:90]})")
                continue
            sides = {s: render(ply, trees[s], target, a.flags) if
                     (status not in ("added",) or s == "head") and (status != "removed" or s == "base")
                     else {} for s in ("base", "head")}
            for s, t in trees.items():
                if sides[s] is None or not sides[s]:
                    continue
                if target.startswith("flux:"):
                    if s not in flux_sides:
                        flux_sides[s] = crg.flux_tree(ply, oracle, t, s, a.flags)
                    ok, _ = flux_sides[s].get(target, (False, "not checked"))
                else:
                    ok, _ = crg.argo(ply, t, target[5:], a.url)
                oracled += 1
                if not ok:
                    bad += 1
                    print(f"FAIL {target}: {s} differs from the oracle")
            if status in ("broken-before", "not-reviewed", "head-failed", "base-failed"):
                ok = (sides["head"] is None) == (status != "base-failed")
                print(f"{'ok  ' if ok else 'FAIL'} {target}: {status}")
                bad += not ok
                checked += 1
                continue
            want = expected(sides["base"] or {}, sides["head"] or {})
            got = reviewed(o)
            counts = {k: sum(1 for x, _ in want if x == k) for k in ("create", "update", "delete", "unchanged")}
            if status in ("compared", "unchanged") and not o["objects"]:
                ok = all(act == "unchanged" for act, _ in want)
            else:
                # The report lists changed objects, and counts the unchanged.
                unchanged = sum(1 for x, _ in want if x == "unchanged")
                ok = {w for w in want if w[0] != "unchanged"} == got \
                    and (o["totals"] or {}).get("unchanged", 0) == unchanged
                want = {w for w in want if w[0] != "unchanged"}
            checked += 1
            bad += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {target}: {status} {counts}")
            if not ok:
                for x in sorted(want ^ got, key=str)[:10]:
                    print(f"     {'render only' if x in want else 'review only'}: {x}")
    print(f"{a.base}..{a.head}: {checked} targets checked, {oracled} rendered sides against "
          f"the oracle, {bad} disagree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
