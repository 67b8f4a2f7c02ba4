#!/usr/bin/env python3
"""Compare `ply patch --dialect kustomize` with kustomize itself on the smp built-in cases.

    python3 tools/check_kustomize_dialect.py [PLY] [-j N]

For each case of ../shared/conformance/smp/builtin-cases.json, the object and the patch are
put in a kustomization (`patches: [{path: patch.yaml}]`) and built with `kubectl kustomize`;
the result is compared as data with `ply patch OBJECT --patch PATCH --dialect kustomize`.
Prints one line per case that differs and a summary. Needs kubectl and PyYAML.

Known differences that are not the merge's: kustomize drops an empty `metadata.annotations`
and turns non-string annotation values into "" when it writes resources (the render pipeline
reproduces that, not the merge core).
"""

import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "..", "shared", "conformance", "smp", "builtin-cases.json")


def one(ply, c):
    obj, patch = c["object"], dict(c["patch"])
    patch.update({"apiVersion": obj["apiVersion"], "kind": obj["kind"]})
    meta = dict(patch.get("metadata") or {}, name=obj["metadata"]["name"])
    if "namespace" in obj["metadata"]:
        meta["namespace"] = obj["metadata"]["namespace"]
    patch["metadata"] = meta
    with tempfile.TemporaryDirectory() as t:
        for name, doc in (("obj.yaml", obj), ("patch.yaml", patch)):
            with open(os.path.join(t, name), "w") as f:
                yaml.safe_dump(doc, f)
        with open(os.path.join(t, "kustomization.yaml"), "w") as f:
            f.write("resources: [obj.yaml]\npatches:\n- path: patch.yaml\n")
        k = subprocess.run(["kubectl", "kustomize", t], capture_output=True, text=True)
        p = subprocess.run([ply, "patch", os.path.join(t, "obj.yaml"), "--patch",
                            os.path.join(t, "patch.yaml"), "--dialect", "kustomize"],
                           capture_output=True, text=True)
    if k.returncode or p.returncode:
        if bool(k.returncode) == bool(p.returncode):
            return "both-fail", ""
        return "differ", "kustomize exit %d, ply exit %d" % (k.returncode, p.returncode)
    a, b = yaml.safe_load(k.stdout), yaml.safe_load(p.stdout)
    if a == b:
        return "same", ""
    return "differ", "kustomize %s\n    ply %s" % (json.dumps(a)[:400], json.dumps(b)[:400])


def main():
    args = [a for a in sys.argv[1:]]
    jobs = 4
    if "-j" in args:
        i = args.index("-j")
        jobs = int(args[i + 1])
        del args[i:i + 2]
    ply = args[0] if args else os.path.join(HERE, "..", "target", "release", "ply")
    with open(CASES) as f:
        data = json.load(f)
    cases = data["cases"] if isinstance(data, dict) else data
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        results = list(ex.map(lambda c: one(ply, c), cases))
    for c, (status, detail) in zip(cases, results):
        if status == "differ":
            print("%s %s\n    %s" % (c["id"], c["ops"], detail))
    counts = Counter(s for s, _ in results)
    print("%d same, %d both fail, %d differ" % (counts["same"], counts["both-fail"], counts["differ"]))


if __name__ == "__main__":
    main()
