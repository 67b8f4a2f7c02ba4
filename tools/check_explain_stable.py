#!/usr/bin/env python3
"""Compares `ply explain DIR --all --format json` of two ply binaries over every kustomization
directory under testdata/ (the render goldens with the flags their `args` file gives, every
other directory holding a kustomization without flags), and prints each directory whose
output or exit code differs. A refactoring of the render must give the same chains.

Usage: tools/check_explain_stable.py OLD_PLY NEW_PLY [TESTDATA]
Exit 0 when every directory gives the same output, 1 otherwise."""

import os
import shlex
import subprocess
import sys
from pathlib import Path

VALUED = {"--reorder", "--kustomize-version", "--load-restrictor", "--managed-by-value",
          "-e", "--env", "--mount", "--network-name", "--helm-command"}
NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def cases(testdata: Path):
    """(working directory, arguments) for each directory to explain."""
    seen = set()
    for case in sorted((testdata / "render").iterdir()):
        inp = case / "input"
        if not inp.is_dir() or not (case / "expected.yaml").exists():
            continue
        args = shlex.split((case / "args").read_text()) if (case / "args").exists() else []
        # The directory is the last word unless that word is a flag or a flag's value.
        target = "."
        last_is_dir = args and not args[-1].startswith("-") and (
            len(args) == 1 or args[-2] not in VALUED
        )
        if last_is_dir:
            target, args = args[-1], args[:-1]
        flags = args
        yield inp, flags + [target]
        seen.add((inp / target).resolve())
    for root, _, files in os.walk(testdata):
        d = Path(root)
        if any(n in files for n in NAMES) and d.resolve() not in seen:
            yield d, ["."]


def run(ply: str, cwd: Path, args, env):
    try:
        p = subprocess.run(
            [ply, "explain", *args, "--all", "--format", "json"],
            cwd=cwd, env=env, capture_output=True, timeout=60,
        )
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", b"", b""


def main():
    if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    old, new = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    testdata = Path(sys.argv[3] if len(sys.argv) > 3 else "testdata").resolve()
    env = dict(os.environ, NO_COLOR="1")
    env["PATH"] = f"{testdata / 'bin'}:{env.get('PATH', '')}"
    total = rendered = 0
    differ = []
    for cwd, args in cases(testdata):
        total += 1
        a, b = run(old, cwd, args, env), run(new, cwd, args, env)
        if a[0] == 0:
            rendered += 1
        if a[:2] != b[:2]:
            differ.append((cwd, args, a, b))
    for cwd, args, a, b in differ:
        print(f"DIFFERS: {cwd} {' '.join(args)} (exit {a[0]} -> {b[0]})")
    print(f"{total} directories, {rendered} explained, {len(differ)} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
