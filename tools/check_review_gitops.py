#!/usr/bin/env python3
"""Checks both sides of every GitOps review golden case (testdata/review/gitops-*/{base,head})
against the controllers' oracles: each target `ply gitops list` renders is rendered by ply
(`ply render --flux-kustomization NS/NAME --json-lines`, `ply render --argo-application NAME`)
and by its oracle (tools/flux-oracle on the Kustomization, the side's tree and its ConfigMaps
and Secrets; tools/argo_oracle.py), and the two must agree (or both fail). What the review
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


def docs(side: pathlib.Path):
    for f in sorted(side.rglob("*.y*ml")):
        try:
            for d in yaml.safe_load_all(f.read_text()):
                if isinstance(d, dict):
                    yield f, d
        except yaml.YAMLError:
            pass


def flux(ply, oracle, side, target, tmp, flags=(), ks_file=None):
    """`target` is NS/NAME, or with `ks_file` the file holding the one Kustomization."""
    if ks_file is None:
        ns, name = target.split("/", 1)
        ks = [d for _, d in docs(side) if d.get("kind") == "Kustomization"
              and d.get("apiVersion", "").startswith("kustomize.toolkit.fluxcd.io/")
              and d["metadata"]["name"] == name and d["metadata"].get("namespace", "default") == ns]
        (tmp / "ks.yaml").write_text(yaml.safe_dump(ks[0]))
    else:
        (tmp / "ks.yaml").write_text(pathlib.Path(ks_file).read_text())
        target = ks_file
    objs = [d for _, d in docs(side) if d.get("kind") in ("ConfigMap", "Secret")]
    root = side
    for f in flags:
        # `--source KIND/NS/NAME=DIR` names the Kustomization's source root.
        if f.startswith("ExternalArtifact/") or f.startswith("GitRepository/"):
            key, _, d = f.partition("=")
            if yaml.safe_load((tmp / "ks.yaml").read_text())["spec"]["sourceRef"]["name"] == key.split("/")[-1]:
                root = side / d
    (tmp / "objs.yaml").write_text(yaml.safe_dump_all(objs) if objs else "")
    o = subprocess.run([oracle, "--ks", str(tmp / "ks.yaml"), "--root", str(root),
                        "--objects", str(tmp / "objs.yaml")], capture_output=True, text=True)
    p = subprocess.run([ply, "render", "--flux-kustomization", target, "--json-lines",
                        "--repo-root", str(side)] + list(flags), cwd=side,
                       capture_output=True, text=True)
    if o.returncode or p.returncode:
        return (o.returncode != 0) == (p.returncode != 0), "both fail"
    return o.stdout == p.stdout, "bytes"


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
            for line in listed.splitlines():
                target, _, how = line.split("  ", 2)
                if not how.startswith("rendered"):
                    continue
                with tempfile.TemporaryDirectory() as tmp:
                    if target.startswith("flux:"):
                        ok, how = flux(ply, oracle, side, target[5:], pathlib.Path(tmp))
                    else:
                        ok, how = argo(ply, side, target[5:], url)
                n += 1
                bad += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {case.name}/{s} {target} ({how})")
    print(f"{n} rendered sides checked against the oracles, {bad} disagree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
