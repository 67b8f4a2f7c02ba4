#!/usr/bin/env python3
"""Check the expectations of testdata/merge/ against kubectl (the oracle).

    python3 tools/check_merge_golden.py [CASE...]

For each case: apply cases are run through `kubectl patch --local -f OBJECT --type TYPE
--patch-file PATCH -o json` (one document at a time) and compared with expected.yaml as data;
error cases must make kubectl fail. A two-way case applies expected.yaml (the patch) to the
`--from` object with kubectl and compares with the `--to` object. A three-way case with
--print-patch applies its patch to the live object with kubectl and compares with the
expected.yaml of the case without --print-patch next to it (same inputs). Cases kubectl cannot
run offline (custom kinds with --openapi) are reported as skipped. A `--dialect kustomize` case
is checked with `kubectl kustomize` on a kustomization that patches the object.
Needs kubectl and PyYAML.
"""

import json
import os
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "merge")


def load_all(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def kubectl_patch(obj, patch, ptype):
    with tempfile.TemporaryDirectory() as tmp:
        o = os.path.join(tmp, "obj.json")
        p = os.path.join(tmp, "patch.json")
        with open(o, "w") as f:
            json.dump(obj, f)
        with open(p, "w") as f:
            json.dump(patch, f)
        r = subprocess.run(["kubectl", "patch", "--local", "-f", o, "--type", ptype,
                            "--patch-file", p, "-o", "json"], capture_output=True, text=True)
        if r.returncode != 0:
            return None, r.stderr.strip()
        return json.loads(r.stdout), None


def kustomize_patch(obj, patch):
    patch = dict(patch)
    patch.update({"apiVersion": obj["apiVersion"], "kind": obj["kind"]})
    patch["metadata"] = dict(patch.get("metadata") or {}, name=obj["metadata"]["name"])
    with tempfile.TemporaryDirectory() as tmp:
        for name, doc in (("obj.yaml", obj), ("patch.yaml", patch)):
            with open(os.path.join(tmp, name), "w") as f:
                yaml.safe_dump(doc, f)
        with open(os.path.join(tmp, "kustomization.yaml"), "w") as f:
            f.write("resources: [obj.yaml]\npatches:\n- path: patch.yaml\n")
        r = subprocess.run(["kubectl", "kustomize", tmp], capture_output=True, text=True)
        if r.returncode != 0:
            return None, r.stderr.strip()
        return yaml.safe_load(r.stdout), None


def check(case):
    d = os.path.join(ROOT, case)
    args_path = os.path.join(d, "args")
    args = open(args_path).read().splitlines() if os.path.exists(args_path) else \
        ["object.yaml", "--patch-file", "patch.yaml"]
    if args and args[0] in ("--local", "-f", "--filename"):
        # kubectl's own flags: the same command line through kubectl, bytes compared.
        if "-o" not in args:
            args = args + ["-o", "yaml"]
        r = subprocess.run(["kubectl", "patch"] + args, cwd=d, capture_output=True, text=True)
        want = os.path.join(d, "expected.yaml")
        if r.returncode != 0:
            return "ok" if not os.path.exists(want) else "MISMATCH: kubectl failed: " + r.stderr.strip()
        return "ok (kubectl, same bytes)" if r.stdout == open(want).read() else "MISMATCH: differs from kubectl's bytes"
    if "--patch" in args and "--patch-file" not in args:
        # the deprecated `--patch FILE`: the same as --patch-file FILE
        args = [("--patch-file" if a == "--patch" else a) for a in args]
    if "--openapi" in args:
        return "skipped (custom kind: kubectl cannot patch it locally)"
    if "--from" in args:
        frm = load_all(os.path.join(d, args[args.index("--from") + 1]))[0]
        to = load_all(os.path.join(d, args[args.index("--to") + 1]))[0]
        patch = load_all(os.path.join(d, "expected.yaml"))[0]
        got, err = kubectl_patch(frm, patch, "strategic")
        return "ok" if got == to else "MISMATCH: %s" % (err or json.dumps(got))
    if "--last-applied" in args:
        if "--overwrite=false" in args:
            return "skipped (conflict detection: kubectl apply needs a server)"
        if "--print-patch" not in args:
            return "checked through its --print-patch twin"
        live = load_all(os.path.join(d, args[0]))[0]
        patch = load_all(os.path.join(d, "expected.yaml"))[0]
        twin = os.path.join(ROOT, case.replace("-print-patch", ""), "expected.yaml")
        want = load_all(twin)[0]
        got, err = kubectl_patch(live, patch, "strategic")
        return "ok" if got == want else "MISMATCH: %s" % (err or json.dumps(got))
    if "--dialect" in args and args[args.index("--dialect") + 1] == "kustomize":
        obj = load_all(os.path.join(d, args[0]))[0]
        patch = load_all(os.path.join(d, args[args.index("--patch-file") + 1]))[0]
        got, err = kustomize_patch(obj, patch)
        want = load_all(os.path.join(d, "expected.yaml"))[0]
        return "ok (kubectl kustomize)" if got == want else "MISMATCH: %s" % (err or json.dumps(got))
    ptype = args[args.index("--type") + 1] if "--type" in args else "strategic"
    objects = load_all(os.path.join(d, args[0]))
    if "-p" in args:
        patch = yaml.safe_load(args[args.index("-p") + 1])
    else:
        patch = load_all(os.path.join(d, args[args.index("--patch-file") + 1]))[0]
    results = [kubectl_patch(o, patch, ptype) for o in objects]
    if os.path.exists(os.path.join(d, "expected-error.txt")):
        failed = [e for _, e in results if e]
        return "ok (kubectl fails too: %s)" % failed[0].splitlines()[0] if failed else "MISMATCH: kubectl succeeded"
    want = load_all(os.path.join(d, "expected.yaml"))
    got = [g for g, _ in results]
    errs = [e for _, e in results if e]
    return "ok" if got == want else "MISMATCH: %s" % (errs or json.dumps(got))


def main():
    cases = sys.argv[1:] or sorted(os.listdir(ROOT))
    bad = 0
    for c in cases:
        r = check(c)
        bad += r.startswith("MISMATCH")
        print("%-36s %s" % (c, r))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
