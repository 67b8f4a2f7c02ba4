#!/usr/bin/env python3
"""Checks every Flux golden case (testdata/gitops/flux/*) against the oracle, tools/flux-oracle:
what kustomize-controller applies, computed by the library functions it calls. A case whose
expectation is `expected.jsonl` must be printed byte for byte by the oracle; a case with
`expected.err` must make the oracle fail too. `ply gitops list` cases (no ks.yaml) have no
oracle: source resolution is ply's own (docs/gitops.md); they are counted apart. A case with
a `target` file is a repository of clusters: every Kustomization in it is rendered by ply and
by the oracle as tools/flux_history.py does (the object as its parent applies it, the
ConfigMaps and Secrets of its cluster), all must agree, and the oracle's render of the target
must be `expected.jsonl`.

    tools/check_flux_goldens.py --oracle PATH --ply PATH [testdata/gitops/flux]
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import flux_history  # noqa: E402


def check_repository(case, a):
    """A `target` case: every Kustomization alike in ply and the oracle, the target's render
    the expectation. Returns the failures."""
    args = argparse.Namespace(ply=str(pathlib.Path(a.ply).resolve()), oracle=str(pathlib.Path(a.oracle).resolve()),
                              repo_url=[], source=[], strict_substitute="true")
    with tempfile.TemporaryDirectory(prefix="flux-golden-") as work:
        counts, reports, outputs = flux_history.check_tree(args, case, case.name, work)
    failed = list(reports)
    target = "flux:" + (case / "target").read_text().strip()
    ok, out = outputs.get(target, (False, ""))
    if counts["differ"] == 0 and (case / "expected.jsonl").is_file() and out != (case / "expected.jsonl").read_text():
        failed.append(f"{case.name}: {target} as the oracle renders it is not expected.jsonl\n{out}")
    return failed


def oracle_args(case: pathlib.Path) -> list:
    extra = (case / "args").read_text().split() if (case / "args").is_file() else []
    root = case
    for i, a in enumerate(extra):
        # `--source KIND/NS/NAME=DIR`: the case's source is DIR.
        if a == "--source":
            root = case / extra[i + 1].split("=", 1)[1]
            extra[i + 1] = ""
    args = ["--ks", str(case / "ks.yaml"), "--root", str(root)]
    if (case / "vars.yaml").is_file():
        args += ["--objects", str(case / "vars.yaml")]
    for a in extra:
        if not a:
            continue
        if a.startswith("--source"):
            continue
        if a == "--strict-substitute=false":
            args.append("--strict=false")
        elif a == "--no-owner-labels":
            args.append("--owner-labels=false")
        else:
            raise SystemExit(f"{case}: no oracle flag for {a}")
    return args


def repo_vars(case: pathlib.Path) -> list:
    """The ConfigMaps and Secrets the case's repository declares outside the built tree
    (ply reads them for substituteFrom; the oracle is given them as its cluster's)."""
    found = []
    for f in sorted(case.rglob("*.yaml")):
        rel = f.relative_to(case)
        if rel.parts[0] in ("app",) or rel.name in ("ks.yaml", "vars.yaml") or rel.name.startswith("expected"):
            continue
        text = f.read_text()
        if "kind: ConfigMap" in text or "kind: Secret" in text:
            found.append(f)
    return found


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--oracle", required=True)
    p.add_argument("--ply", default="target/debug/ply")
    p.add_argument("dir", nargs="?", default="testdata/gitops/flux")
    a = p.parse_args()
    checked, failed, lists = 0, [], 0
    for case in sorted(pathlib.Path(a.dir).iterdir()):
        if not case.is_dir():
            continue
        if (case / "target").is_file():
            checked += 1
            failed += check_repository(case, a)
            continue
        if not (case / "ks.yaml").is_file():
            lists += 1
            continue
        args = oracle_args(case)
        extra = repo_vars(case)
        if extra:
            combined = pathlib.Path("/tmp") / f"flux-golden-vars-{case.name}.yaml"
            text = "".join(f.read_text() + ("" if f.read_text().endswith("\n") else "\n") + "---\n" for f in extra)
            if (case / "vars.yaml").is_file():
                text += (case / "vars.yaml").read_text()
            combined.write_text(text)
            args = [x for x in args]
            if "--objects" in args:
                args[args.index("--objects") + 1] = str(combined)
            else:
                args += ["--objects", str(combined)]
        r = subprocess.run([a.oracle] + args, capture_output=True, text=True, timeout=120)
        checked += 1
        if (case / "expected.err").is_file():
            if r.returncode == 0:
                failed.append(f"{case.name}: ply fails, the oracle renders:\n{r.stdout}")
            continue
        expected = (case / "expected.jsonl").read_text()
        if r.returncode != 0:
            failed.append(f"{case.name}: the oracle fails: {r.stderr}")
        elif r.stdout != expected:
            failed.append(f"{case.name}: differs from the oracle\n--- ply\n{expected}--- oracle\n{r.stdout}")
    for f in failed:
        print(f, file=sys.stderr)
    print(f"{checked} Flux golden cases checked against the oracle, {len(failed)} disagree; "
          f"{lists} source-listing cases (no oracle)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
