#!/usr/bin/env python3
"""Every Kubernetes resource file of some trees through `kubectl kustomize` and `ply render`.

For each `.yaml` / `.yml` file under the given directories that looks like a resource file (a
document with `apiVersion:`, `kind:` and `metadata:` at column 0; not a kustomization or a
component, whatever its name), renders a kustomization of that one resource with kubectl
kustomize (kustomize v5.5, the oracle) and with ply, and compares the outputs byte for byte.
Both failing is agreement (a file kustomize refuses, ply must refuse too); one failing, or
different outputs, is a disagreement: its file, both exit codes and a diff are printed.
Every document of such a file goes through both, in its file.

    tools/differential_files.py [--ply PATH] [--jobs J] [--allow FILE] DIR...

`--allow FILE` names known disagreements, one path (relative to the current directory, as
printed) per line, `#` comments allowed: they are still run and reported as "allowed", and an
allowed file that now agrees fails the run (so the list can only shrink). CI passes
tools/differential_files.allow: the deliberate differences of docs/compatibility.md only.

Python 3 standard library only; needs kubectl on PATH. Exits 1 on any disagreement. Run by
.ci/run on ../shared and testdata/ with a timeout.
"""
import argparse, concurrent.futures, difflib, os, re, shutil, subprocess, sys, tempfile, time

TOP = re.compile(r"^(apiVersion|kind|metadata):", re.M)
CONFIG_KIND = re.compile(r"^kind:\s*['\"]?(Kustomization|Component)['\"]?\s*$", re.M)
MARKER = re.compile(r"^---(\s|$)", re.M)


def is_resource_file(path, text):
    name = os.path.basename(path)
    if name in ("kustomization.yaml", "kustomization.yml", "Kustomization"):
        return False
    if CONFIG_KIND.search(text):
        return False
    return {m.group(1) for m in TOP.finditer(text)} == {"apiVersion", "kind", "metadata"}


def documents(text):
    """How many documents of the file name a kind (counted for the report)."""
    return sum(1 for piece in MARKER.split(text) if piece and re.search(r"^kind:", piece, re.M))


def render(cmd, d):
    try:
        p = subprocess.run(cmd + [d], capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, b"timeout"
    return p.returncode, p.stdout


def check(ply, path):
    with tempfile.TemporaryDirectory() as t:
        shutil.copyfile(path, os.path.join(t, "r.yaml"))
        with open(os.path.join(t, "kustomization.yaml"), "w") as f:
            f.write("resources:\n- r.yaml\n")
        krc, kout = render(["kubectl", "kustomize"], t)
        prc, pout = render([ply, "render", "--kustomize-version", "5.5.0"], t)
    if (krc != 0 and prc != 0) or (krc == 0 and prc == 0 and kout == pout):
        return krc == 0, None
    report = [f"DISAGREE {path}: kubectl exit {krc}, ply exit {prc}"]
    if krc == 0 and prc == 0:
        report.append("".join(difflib.unified_diff(
            kout.decode(errors="replace").splitlines(True),
            pout.decode(errors="replace").splitlines(True), "kubectl", "ply")))
    else:
        report.append("kubectl output:\n" + kout.decode(errors="replace")[:2000])
        report.append("ply output:\n" + pout.decode(errors="replace")[:2000])
    return krc == 0, "\n".join(report)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ply", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "ply"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--allow", help="file of known disagreements, one path a line")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    ply = os.path.abspath(a.ply)
    if not shutil.which("kubectl"):
        sys.exit("differential_files: kubectl is not on PATH (it is the oracle)")
    allowed = set()
    if a.allow:
        with open(a.allow) as f:
            allowed = {l.split("#")[0].strip() for l in f} - {""}
    files, docs = [], 0
    for d in a.dirs:
        if not os.path.isdir(d):
            sys.exit(f"differential_files: {d} is not a directory")
        for root, dirnames, names in os.walk(d):
            dirnames.sort()
            for n in sorted(names):
                p = os.path.join(root, n)
                if not n.endswith((".yaml", ".yml")) or not os.path.isfile(p) or os.path.islink(p):
                    continue
                try:
                    with open(p, encoding="utf-8") as f:
                        text = f.read()
                except (UnicodeDecodeError, OSError):
                    continue
                if is_resource_file(p, text):
                    files.append(p)
                    docs += documents(text)
    if not files:
        sys.exit("differential_files: no resource files found")
    start = time.monotonic()
    rendered = failed = allowed_seen = 0
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for path, (ok, report) in zip(files, ex.map(lambda p: check(ply, p), files)):
            rendered += ok
            if path in allowed:
                if report:
                    allowed_seen += 1
                    print(f"allowed (known disagreement): {path}", flush=True)
                else:
                    failed += 1
                    print(f"{path} is allowed to disagree but now agrees: take it off the list",
                          flush=True)
            elif report:
                failed += 1
                print(report, flush=True)
    print(f"differential_files: {len(files)} resource files ({docs} documents naming a kind), "
          f"{rendered} rendered by kubectl, {len(files) - rendered} refused by it, "
          f"{allowed_seen} allowed disagreements, {failed} disagreements, "
          f"{time.monotonic() - start:.0f} s")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
