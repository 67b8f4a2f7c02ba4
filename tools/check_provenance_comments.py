#!/usr/bin/env python3
"""Checks that `ply render --provenance=comments` reads back as the plain render, for every
root of the given trees (each directory holding a kustomization).

    tools/check_provenance_comments.py [--ply PATH] [--part I/N] TREE...

`--part I/N` checks only every N-th root (in path order) from the I-th, so a large tree can
be checked in parts (`nice`, one part at a time); each root's result is printed as it is made.

For each root both renders are made; where the plain render succeeds, the render with
comments must succeed too and parse (PyYAML) to the same objects. Not run in CI on real
repositories (they are brought by hand); its results are recorded in docs/explain.md.
Prints each disagreement and a summary per tree; exits 1 on any.
"""

import argparse
import os
import subprocess
import sys

import yaml

# libyaml's parser where PyYAML has it: the pure-Python one takes minutes on the larger
# roots (kubeflow's CRDs). Both read YAML 1.1 alike.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def roots(tree):
    for d, dirs, files in os.walk(tree):
        dirs[:] = [x for x in dirs if x != ".git"]
        if any(n in files for n in NAMES):
            yield d


def render(ply, root, comments):
    cmd = [ply, "render", root] + (["--provenance=comments"] if comments else [])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return p.returncode == 0, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--part", default="1/1", help="I/N: every N-th root from the I-th")
    ap.add_argument("--ply", default=os.path.join(os.path.dirname(__file__), "..", "target",
                                                  "release", "ply"))
    args = ap.parse_args()
    ply = os.path.abspath(args.ply)
    part, parts = (int(x) for x in args.part.split("/"))
    failed = False
    for tree in args.trees:
        compared = refused = 0
        problems = []

        def note(msg):
            problems.append(msg)
            print(msg, flush=True)
        for root in sorted(roots(tree))[part - 1::parts]:
            ok, plain, _ = render(ply, root, False)
            ok2, commented, err = render(ply, root, True)
            if not ok:
                refused += 1
                if ok2:
                    note(f"{root}: only the render with comments succeeds")
                continue
            compared += 1
            if not ok2:
                note(f"{root}: the render with comments fails: {err.strip()[:200]}")
                continue
            try:
                a = list(yaml.load_all(plain, Loader=LOADER))
                b = list(yaml.load_all(commented, Loader=LOADER))
            except yaml.YAMLError as e:
                note(f"{root}: does not parse: {str(e)[:300]}")
                continue
            if a != b:
                note(f"{root}: the render with comments reads as other objects")
                continue
            print(f"{root}: same objects ({len(a)})", flush=True)
        print(f"{tree}: {compared} roots compared, {refused} refused by both renders, "
              f"{len(problems)} disagreeing")
        failed |= bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
