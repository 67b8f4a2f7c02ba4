#!/usr/bin/env python3
"""Differential test of `ply diff --changed-only` against the full review (issue #10).

`--changed-only` must give the same report as rendering every overlay at both revisions: an
overlay it does not render must be one whose render reads no changed file. This builds a small
tree with ../shared/bench/gen_tree.py, commits it, and then, trial after trial (seeded), applies
random changes to a fresh copy — edits to any file (read or not), a file removed, a file turned
into a symlink to another, a kustomization that lists a new file, a new overlay, a directory
renamed — commits them or leaves them in the working tree, and compares, for `--all` and for a
glob of every app overlay, the JSON and summary reports and exit codes with and without
`--changed-only`. Overlays that fail to render at both revisions with no file they read changed
are the one documented difference (docs/review.md); the trials never make such overlays.

Usage: differential_changed_only.py --ply target/release/ply [--seconds 60] [--seed 0]
A disagreement prints the seed, the changes and both reports, and exits 1.
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "..", "shared", "bench", "gen_tree.py")
GIT_ENV = dict(
    os.environ,
    GIT_CONFIG_GLOBAL="/dev/null",
    GIT_CONFIG_NOSYSTEM="1",
    GIT_AUTHOR_NAME="t",
    GIT_AUTHOR_EMAIL="t@example.com",
    GIT_COMMITTER_NAME="t",
    GIT_COMMITTER_EMAIL="t@example.com",
)


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def files_under(root):
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git"]
        for f in files:
            out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(out)


def edit(root, rng, log):
    """Changes one character class in a random file: a digit, or appends a comment."""
    path = rng.choice(files_under(root))
    full = os.path.join(root, path)
    if os.path.islink(full):
        return
    with open(full, encoding="utf-8") as f:
        text = f.read()
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    if digits and rng.random() < 0.7:
        i = rng.choice(digits)
        new = str((int(text[i]) + rng.randint(1, 9)) % 10)
        text = text[:i] + new + text[i + 1:]
        log.append(f"edit a digit of {path} at {i}")
    else:
        text += "\n# touched\n" if path.endswith((".yaml", ".yml")) else "\n"
        log.append(f"append to {path}")
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)


def symlink(root, rng, log):
    """Replaces a YAML file with a relative symlink to another YAML file of the same name."""
    names = {}
    for p in files_under(root):
        if p.endswith(".yaml") and not os.path.islink(os.path.join(root, p)):
            names.setdefault(os.path.basename(p), []).append(p)
    groups = [g for g in names.values() if len(g) > 1]
    if not groups:
        return
    a, b = rng.sample(rng.choice(groups), 2)
    full = os.path.join(root, a)
    os.remove(full)
    os.symlink(os.path.relpath(os.path.join(root, b), os.path.dirname(full)), full)
    log.append(f"{a} -> symlink to {b}")


def new_resource(root, rng, log):
    """Adds a ConfigMap file to a random kustomization's resources."""
    ks = [p for p in files_under(root) if p.endswith("kustomization.yaml")
          and "/overlays/" in p]
    if not ks:
        return
    k = rng.choice(ks)
    d = os.path.dirname(os.path.join(root, k))
    name = f"extra-{rng.randint(0, 999)}"
    with open(os.path.join(d, name + ".yaml"), "w", encoding="utf-8") as f:
        f.write(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: \"1\"\n")
    with open(os.path.join(root, k), encoding="utf-8") as f:
        text = f.read()
    text = text.replace("resources:\n", f"resources:\n- {name}.yaml\n", 1)
    with open(os.path.join(root, k), "w", encoding="utf-8") as f:
        f.write(text)
    log.append(f"{k} lists a new {name}.yaml")


def new_overlay(root, rng, log):
    """Copies an app's overlay to a new one."""
    overlays = sorted({os.path.dirname(p) for p in files_under(root)
                       if "/overlays/" in p and p.endswith("kustomization.yaml")})
    src = rng.choice(overlays)
    dst = src + "-copy"
    if os.path.exists(os.path.join(root, dst)):
        return
    shutil.copytree(os.path.join(root, src), os.path.join(root, dst), symlinks=True)
    log.append(f"new overlay {dst}")


def unread_file(root, rng, log):
    """Adds a file no kustomization reads."""
    apps = sorted(os.listdir(os.path.join(root, "apps")))
    p = os.path.join("apps", rng.choice(apps), "NOTES.md")
    with open(os.path.join(root, p), "a", encoding="utf-8") as f:
        f.write("notes\n")
    log.append(f"unread file {p}")


def remove_unlisted_patch(root, rng, log):
    """Removes a patch file from an overlay and the line that lists it."""
    ks = [p for p in files_under(root) if p.endswith("kustomization.yaml") and "/overlays/" in p]
    k = rng.choice(ks)
    full = os.path.join(root, k)
    with open(full, encoding="utf-8") as f:
        text = f.read()
    if "- path: deployment-patch.yaml\n" not in text:
        return
    text = text.replace("- path: deployment-patch.yaml\n", "", 1)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)
    os.remove(os.path.join(os.path.dirname(full), "deployment-patch.yaml"))
    log.append(f"{k}: deployment-patch.yaml removed")


MUTATIONS = [edit, edit, edit, symlink, new_resource, new_overlay, unread_file,
             remove_unlisted_patch]


def run(ply, repo, args):
    out = subprocess.run([ply, "diff", *args], cwd=repo, capture_output=True, text=True,
                         timeout=300)
    return out.returncode, out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ply", required=True)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--apps", type=int, default=4)
    a = ap.parse_args()
    ply = os.path.abspath(a.ply)
    work = tempfile.mkdtemp(prefix="ply-changed-only-")
    base = os.path.join(work, "base")
    subprocess.run([sys.executable, GEN, base, "--apps", str(a.apps), "--envs", "3"],
                   check=True, stdout=subprocess.DEVNULL)
    git(base, "init", "-q", "-b", "main")
    git(base, "add", "-A")
    git(base, "commit", "-q", "-m", "base")
    deadline = time.time() + a.seconds
    trials = compared = 0
    seed = a.seed
    try:
        while time.time() < deadline:
            rng = random.Random(seed)
            repo = os.path.join(work, f"t{seed}")
            shutil.copytree(base, repo, symlinks=True)
            log = []
            for _ in range(rng.randint(1, 3)):
                rng.choice(MUTATIONS)(repo, rng, log)
            committed = rng.random() < 0.5
            if committed:
                git(repo, "add", "-A")
                git(repo, "commit", "-q", "--allow-empty", "-m", "change")
            ref = "HEAD~1" if committed else "HEAD"
            for which in (["--all"], ["apps/*/overlays/*"]):
                for fmt in ("json", "summary"):
                    args = ["--base", ref, *which, "--format", fmt]
                    full = run(ply, repo, args)
                    only = run(ply, repo, args + ["--changed-only"])
                    compared += 1
                    if full != only:
                        print(f"seed {seed}: --changed-only differs for {' '.join(args)}")
                        print("changes:", *log, sep="\n  ")
                        print(f"without (exit {full[0]}):\n{full[1]}")
                        print(f"with (exit {only[0]}):\n{only[1]}")
                        return 1
            trials += 1
            shutil.rmtree(repo)
            seed += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{trials} trials (seeds {a.seed}..{seed - 1}), {compared} report pairs, "
          "--changed-only agreed with the full review on every one")
    return 0 if trials > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
