#!/usr/bin/env python3
"""Tests the hooks of .pre-commit-hooks.yaml as pre-commit runs them (the `entry` split as a
shell splits it, the hook's `args` after it, no file names), with this build's `ply` on PATH:
- both hooks run the same command;
- a repository whose kustomizations render passes, and nothing is written to it nor left in
  the temporary directory;
- a kustomization naming a file that does not exist fails the hook (exit 1) with ply's
  diagnostic naming the file and line;
- an argument (a directory) limits the hook to the kustomizations under it.
Run by `cargo test` (tests/golden/review.rs), or by hand:
`python3 tools/ci/test_pre_commit_hook.py target/debug/ply`.
"""

import os
import shlex
import subprocess
import sys

from stand_in import scratch

HERE = os.path.dirname(os.path.abspath(__file__))
HOOKS = os.path.join(os.path.dirname(os.path.dirname(HERE)), ".pre-commit-hooks.yaml")


def hooks(path):
    """id -> {key: value} of the hooks file's top-level list (its plain one-line values)."""
    out, current = {}, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("- id: "):
            current = out.setdefault(line[len("- id: "):].strip(), {})
        elif current is not None and line.startswith("  ") and ": " in line:
            key, value = line.strip().split(": ", 1)
            current[key] = value
    return out


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    ply = os.path.abspath(sys.argv[1])
    found = hooks(HOOKS)
    assert set(found) == {"ply-render", "ply-render-system"}, found
    entries = {h["entry"] for h in found.values()}
    assert len(entries) == 1, entries
    assert all(h["pass_filenames"] == "false" for h in found.values()), found
    assert found["ply-render"]["language"] == "rust", found
    assert found["ply-render-system"]["language"] == "system", found
    argv = shlex.split(entries.pop())
    with scratch("ply-pre-commit-") as tmp:
        repo, tmpdir = os.path.join(tmp, "repo"), os.path.join(tmp, "tmp")
        os.makedirs(tmpdir)
        cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n"
        write(repo, "apps/a/kustomization.yaml", "resources:\n- cm.yaml\n")
        write(repo, "apps/a/cm.yaml", cm.format("a"))
        write(repo, "apps/b/kustomization.yaml", "resources:\n- cm.yaml\nnamePrefix: b-\n")
        write(repo, "apps/b/cm.yaml", cm.format("b"))
        env = dict(os.environ, PATH=os.path.dirname(ply) + ":/usr/bin:/bin", TMPDIR=tmpdir)

        def run(*args):
            return subprocess.run(argv + list(args), cwd=repo, env=env, capture_output=True,
                                  text=True, timeout=120)

        def files():
            return sorted(os.path.relpath(os.path.join(d, f), repo)
                          for d, _, fs in os.walk(repo) for f in fs)

        before = files()
        r = run()
        assert r.returncode == 0, r.stdout + r.stderr
        assert files() == before, files()
        assert os.listdir(tmpdir) == [], os.listdir(tmpdir)

        write(repo, "apps/b/kustomization.yaml", "resources:\n- cm.yaml\n- gone.yaml\n")
        r = run()
        assert r.returncode == 1, r.stdout + r.stderr
        assert "apps/b/kustomization.yaml:3" in r.stderr and "gone.yaml" in r.stderr, r.stderr
        assert "1 rendered, 1 failed" in r.stderr, r.stderr
        assert os.listdir(tmpdir) == [], os.listdir(tmpdir)

        r = run("apps/a")
        assert r.returncode == 0, r.stdout + r.stderr
    print("pre-commit hooks: ok")


if __name__ == "__main__":
    main()
