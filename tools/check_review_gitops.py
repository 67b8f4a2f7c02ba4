#!/usr/bin/env python3
"""Checks both sides of every GitOps review golden case (testdata/review/gitops-*/{base,head})
against the controllers' oracles: each target `ply gitops list` renders is rendered by ply
(`ply gitops render --out DIR`, `ply render --argo-application NAME`) and by its oracle
(tools/flux-oracle on the Kustomization as its parent applies it, the side's tree and its
cluster's ConfigMaps and Secrets, as tools/flux_history.py gives them; tools/argo_oracle.py), and the two must agree (or both fail). What the review
shows of a side is what `ply render` gives for it, so this checks every rendered side.

    tools/check_review_gitops.py --ply PLY --flux-oracle PATH [testdata/review]
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import argo_oracle  # noqa: E402
import flux_history  # noqa: E402


def docs(side: pathlib.Path):
    for f in sorted(side.rglob("*.y*ml")):
        try:
            for d in yaml.safe_load_all(f.read_text()):
                if isinstance(d, dict):
                    yield f, d
        except yaml.YAMLError:
            pass


def flux_tree(ply, oracle, side, name, flags=()):
    """Every Flux Kustomization of a side, as tools/flux_history.py checks a revision: the
    object as its parent applies it, the ConfigMaps and Secrets of its cluster. {id: (ok, how)}.
    `flags` may hold `--source K/NS/N=DIR` and `--repo-url URL`."""
    flags = list(flags)
    given = lambda f: [flags[i + 1] for i, x in enumerate(flags[:-1]) if x == f]  # noqa: E731
    args = argparse.Namespace(ply=ply, oracle=oracle, repo_url=given("--repo-url"),
                              source=given("--source"), strict_substitute="true")
    with tempfile.TemporaryDirectory(prefix="review-flux-") as work:
        _, reports, outputs = flux_history.check_tree(args, side, name, work)
    for r in reports:
        print(r)
    bad = {r.split(" ", 2)[1].rstrip(":") for r in reports}
    return {t: (t not in bad, "bytes" if ok else "both fail") for t, (ok, _) in outputs.items()}


def argo(ply, side, app, url):
    o = argparse.Namespace(repo=str(side), app=app, revision="", build_options=None,
                           tracking=None, repo_url=url, argo_namespace="argocd")
    o.build_options = argo_oracle.argocd_cm_options(o.repo)
    p = subprocess.run([ply, "render", "--argo-application", app, "--repo-url", url, str(side)],
                       capture_output=True, text=True)
    try:
        kind, out = argo_oracle.render(o)
    except argo_oracle.Failed:
        return p.returncode != 0, "both fail"
    if p.returncode:
        return False, "ply fails"
    if kind == "yaml":
        return p.stdout == out, "bytes"
    return [d for d in yaml.safe_load_all(p.stdout) if d is not None] == out, "objects"


def main() -> int:
    a = argparse.ArgumentParser()
    a.add_argument("--ply", required=True)
    a.add_argument("--flux-oracle", required=True)
    a.add_argument("dir", nargs="?", default="testdata/review")
    a = a.parse_args()
    ply = str(pathlib.Path(a.ply).resolve())
    oracle = str(pathlib.Path(a.flux_oracle).resolve())
    bad = n = 0
    for case in sorted(pathlib.Path(a.dir).glob("gitops-*")):
        args = (case / "args").read_text().split()
        url = args[args.index("--repo-url") + 1] if "--repo-url" in args else ""
        for s in ("base", "head"):
            side = (case / s).resolve()
            listed = subprocess.run([ply, "gitops", "list", "--repo-root", str(side)]
                                    + (["--repo-url", url] if url else []),
                                    capture_output=True, text=True).stdout
            flux_sides = flux_tree(ply, oracle, side, f"{case.name}-{s}") if "flux:" in listed else {}
            for line in listed.splitlines():
                target, _, how = line.split("  ", 2)
                if not how.startswith("rendered"):
                    continue
                if target.startswith("flux:"):
                    ok, how = flux_sides.get(target, (False, "not checked"))
                else:
                    ok, how = argo(ply, side, target[5:], url)
                n += 1
                bad += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {case.name}/{s} {target} ({how})")
    print(f"{n} rendered sides checked against the oracles, {bad} disagree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
