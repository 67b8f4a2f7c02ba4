#!/usr/bin/env python3
"""Records a conformance corpus's expectations anew from one kustomize oracle, into a copy.

The corpora of ../shared hold the outputs of kubectl 1.32 (kustomize v5.5.0) and kubectl 1.37
(v5.8.1). For the releases in between (v5.6.0, v5.7.1) the expectations come from the kustomize
command-line tool built at that release (tools/oracles/install-kustomize.sh), at run time: this
tool copies a corpus to DEST (under the checkout's target/, never committed) and writes each
case's `expected.yaml` (the oracle's stdout when it succeeds) or `expected_error.txt` (its
stderr when it fails) as the corpus's own runner reads them. The oracle runs as the runners run
the tool under test: on a temporary copy of the case's input, with the case's flags.

    record-corpus.py --oracle 'kustomize-5.7.1 build' --layout kustomize SRC/cases DEST
    record-corpus.py --oracle 'kustomize-5.7.1 build' --layout regressions SRC DEST

`kustomize`: SRC holds one folder per case (case.json, input/); `regressions`: one folder per
case with its files at the root, and the runner (run.py) beside them, copied too. Prints one
line per version of the outcome ("N cases recorded: S render, F fail"); exits 1 when the
oracle cannot be run or times out (60 s a case). Python 3 standard library only.
"""
import argparse, concurrent.futures, json, os, shlex, shutil, subprocess, sys, tempfile

EXPECTED = ("expected.yaml", "expected_error.txt")


def run_oracle(oracle, build_dir, cwd, flags):
    """(succeeded, output bytes): the oracle's stdout, or its stderr when it fails."""
    cmd = shlex.split(oracle) + flags + [build_dir]
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=60)
    except FileNotFoundError:
        sys.exit(f"the oracle {cmd[0]} is not installed (tools/oracles/install-kustomize.sh)")
    except subprocess.TimeoutExpired:
        sys.exit(f"the oracle timed out on {build_dir}")
    return (p.returncode == 0, p.stdout if p.returncode == 0 else p.stderr)


def write(case, ok, out):
    for name in EXPECTED:
        path = os.path.join(case, name)
        if os.path.exists(path):
            os.remove(path)
    with open(os.path.join(case, EXPECTED[0] if ok else EXPECTED[1]), "wb") as f:
        f.write(out)
    return ok


def record_kustomize(oracle, case):
    """A case of kustomize's corpus: case.json says the directory, flags and empty folders."""
    with open(os.path.join(case, "case.json")) as f:
        meta = json.load(f)
    with tempfile.TemporaryDirectory(prefix="oracle-") as tmp:
        root = os.path.join(tmp, "input")
        src = os.path.join(case, "input")
        if os.path.isdir(src):
            shutil.copytree(src, root, symlinks=True)
        else:
            os.makedirs(root)
        for d in meta.get("empty_dirs", []):
            os.makedirs(os.path.join(root, *d.split("/")), exist_ok=True)
        build = os.path.normpath(os.path.join(root, *meta.get("dir", ".").split("/")))
        return write(case, *run_oracle(oracle, build, root, meta.get("flags", [])))


def record_regression(oracle, case):
    """A regression case: its files at its root, built from a copy without expectations."""
    with tempfile.TemporaryDirectory(prefix="oracle-") as tmp:
        copy = os.path.join(tmp, "case")
        shutil.copytree(case, copy, symlinks=True,
                        ignore=shutil.ignore_patterns("expected*", "README*"))
        return write(case, *run_oracle(oracle, copy, tmp, []))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--oracle", required=True, help="the oracle's command before its flags")
    ap.add_argument("--layout", required=True, choices=["kustomize", "regressions"])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("src")
    ap.add_argument("dest")
    a = ap.parse_args()
    if os.path.exists(a.dest):
        shutil.rmtree(a.dest)
    shutil.copytree(a.src, a.dest, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    if a.layout == "kustomize":
        cases = [os.path.join(a.dest, n) for n in sorted(os.listdir(a.dest))
                 if os.path.isfile(os.path.join(a.dest, n, "case.json"))]
        record = record_kustomize
    else:
        cases = [os.path.join(a.dest, n) for n in sorted(os.listdir(a.dest))
                 if os.path.isdir(os.path.join(a.dest, n)) and not n.startswith((".", "_"))]
        record = record_regression
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        results = list(pool.map(lambda c: record(a.oracle, c), cases))
    if not results:
        sys.exit(f"no cases in {a.src}")
    ok = sum(results)
    print(f"{len(results)} cases recorded with {a.oracle}: {ok} render, {len(results) - ok} fail")


if __name__ == "__main__":
    main()
