#!/usr/bin/env python3
"""Checks the causes `ply diff --base` names against git, on real repositories' histories.

Not run in CI: it needs public repositories brought by hand (any git clone or bare mirror).
For each repository and each of its last N first-parent commits that changed a file in a
directory holding a kustomization (as tools/review_histories.py picks them), the review of
(parent, commit) is made with

    ply diff --base PARENT --head COMMIT --base-exact --all --format json

and for every changed field of every object it lists (an update, rename or move) the tool
checks, with git alone:

- that the field has a cause;
- that the cause's file exists at the side it names (the head, or the base for a removed
  field) and holds the line;
- that "changed in this pull request" is what `git diff -U0 PARENT COMMIT -- FILE` says of
  that line: the line (or, for a value written over several lines, one of them) is in a hunk
  at that side; for a generator's whole file, that the file differs, and that the line named
  is the first line a hunk touches.

A cause in a remote base's file is counted apart (git of this repository cannot check it).

    tools/review_causes.py [--pairs N] [--ply PATH] [--show N] REPO...

Prints every disagreement (up to --show per repository) and a summary line per repository;
exits 1 when a field has no cause or a cause disagrees with git.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from review_histories import commits, run  # noqa: E402

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class Git:
    """File contents and changed lines of one commit pair, each asked once."""

    def __init__(self, repo, base, head):
        self.repo, self.base, self.head = repo, base, head
        self.texts, self.hunks = {}, {}

    def text(self, side, path):
        key = (side, path)
        if key not in self.texts:
            c = self.base if side == "base" else self.head
            p = subprocess.run(["git", "show", f"{c}:{path}"], cwd=self.repo,
                               capture_output=True)
            self.texts[key] = p.stdout.decode("utf-8", "replace") if p.returncode == 0 else None
        return self.texts[key]

    def changed(self, path):
        """The base lines and head lines (1-based) the change touched, and the first head
        line it touched (a removal counts the line after it)."""
        if path not in self.hunks:
            out = run(["git", "diff", "-U0", "--no-color", "--no-ext-diff", "--diff-algorithm=myers",
                       self.base, self.head, "--", path], cwd=self.repo).stdout
            base_lines, head_lines, firsts = set(), set(), []
            for line in out.split("\n"):
                m = HUNK.match(line)
                if not m:
                    continue
                a, b = int(m.group(1)), int(m.group(2) or 1)
                c, d = int(m.group(3)), int(m.group(4) or 1)
                base_lines |= set(range(a, a + b))
                head_lines |= set(range(c, c + d))
                firsts.append(c if d else c + 1)
            self.hunks[path] = (base_lines, head_lines, min(firsts) if firsts else None)
        return self.hunks[path]


def value_lines(text, line, value):
    """The lines a value starting at `line` is written on (as ply counts them: the line, and
    for a string the line does not hold whole, the lines after it indented deeper)."""
    lines = text.split("\n")
    first = lines[line - 1]
    if not isinstance(value, str) or ("\n" not in value and value in first):
        return {line}
    stripped = first.lstrip(" -")
    indent = len(first) - len(stripped)
    if first.lstrip().startswith("-") and not first.lstrip().startswith("- "):
        indent = len(first) - len(first.lstrip())
    out = {line}
    for i, l in enumerate(lines[line:], start=line + 1):
        if not l.strip():
            continue
        if len(l) - len(l.lstrip(" ")) <= indent:
            break
        out.add(i)
    return out


def check_cause(git, ch, where, stats):
    cause = ch.get("cause")
    if cause is None:
        kind = "added" if ch.get("before") is None else (
            "removed" if ch.get("after") is None else "changed")
        stats["no_cause"].append(f"{where} {ch['path']} ({kind}): no cause")
        return
    stats["causes"] += 1
    if cause.get("remoteBase"):
        stats["remote"] += 1
        return
    side = cause.get("side", "head")
    path, line = cause["file"], cause["line"]
    text = git.text(side, path)
    label = f"{where} {ch['path']}: {cause['step']} at {side} {path}:{line}"
    if text is None:
        stats["wrong"].append(f"{label}: no such file at the {side}")
        return
    if line < 1 or line > len(text.split("\n")):
        stats["wrong"].append(f"{label}: the file has {len(text.splitlines())} lines")
        return
    other = git.text("head" if side == "base" else "base", path)
    base_lines, head_lines, first = git.changed(path)
    touched = base_lines if side == "base" else head_lines
    value = ch.get("before") if side == "base" else ch.get("after")
    whole = cause["step"] == "generator" and isinstance(value, str) and value == text \
        and "\n" in value.rstrip("\n")
    if other is None:
        want = True
    elif whole:
        want = text != other
        if want and side == "head" and first is not None and line != min(first, len(text.splitlines())):
            stats["wrong"].append(f"{label}: the whole file's first changed line is {first}")
            return
    else:
        want = bool(value_lines(text, line, value) & touched)
    if cause.get("via") is None and cause.get("changedInPullRequest") != want:
        stats["wrong"].append(f"{label}: ply says changed={cause.get('changedInPullRequest')}, "
                              f"git says {want}")
        return
    if cause.get("via") is not None and not want:
        stats["wrong"].append(f"{label} ({cause['via']}): git says that line did not change")
        return
    stats["agreed"] += 1


def check_pair(args, repo, base_c, head_c, stats):
    review = run([args.ply, "diff", "--base", base_c, "--head", head_c, "--base-exact", "--all",
                  "--format", "json"], cwd=repo, check=False)
    if review.returncode not in (0, 1, 2) or not review.stdout.strip():
        stats["problems"].append(f"{base_c[:8]}..{head_c[:8]}: ply exit {review.returncode}: "
                                 f"{review.stderr.strip()[:300]}")
        return
    stats["pairs"] += 1
    git = Git(repo, base_c, head_c)
    for ov in json.loads(review.stdout)["overlays"]:
        for o in ov.get("objects") or []:
            where = f"{base_c[:8]}..{head_c[:8]} {ov['path']} {o['kind']}/{o['name']}"
            for ch in o.get("changes") or []:
                stats["fields"] += 1
                check_cause(git, ch, where, stats)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--show", type=int, default=20)
    ap.add_argument("--ply", default=os.path.join(os.path.dirname(__file__), "..", "target",
                                                  "release", "ply"))
    args = ap.parse_args()
    args.ply = os.path.abspath(args.ply)
    failed = False
    for src in args.repos:
        with tempfile.TemporaryDirectory(prefix="ply-causes-") as tmp:
            repo = os.path.join(tmp, "repo")
            run(["git", "clone", "--quiet", "--no-checkout", src, repo])
            stats = {"pairs": 0, "fields": 0, "causes": 0, "agreed": 0, "remote": 0,
                     "no_cause": [], "wrong": [], "problems": []}
            for base_c, head_c in commits(repo, args.pairs):
                check_pair(args, repo, base_c, head_c, stats)
            for kind in ("problems", "no_cause", "wrong"):
                for p in stats[kind][:args.show]:
                    print(p)
            print(f"{src}: {stats['pairs']} commit pairs, {stats['fields']} changed fields, "
                  f"{stats['causes']} with a cause ({len(stats['no_cause'])} without), "
                  f"{stats['agreed']} agreeing with git, {len(stats['wrong'])} disagreeing, "
                  f"{stats['remote']} in remote bases; {len(stats['problems'])} reviews failed")
            failed |= bool(stats["no_cause"] or stats["wrong"] or stats["problems"])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
