#!/usr/bin/env python3
"""Real repositories against the Argo CD oracle: every Application `ply gitops list` finds in a
revision of a git repository, rendered by `ply render --argo-application` and by
tools/argo_oracle.py (the real kustomize 5.8.1, and helm for Helm sources with --enable-helm),
compared as the goldens are (bytes for a kustomize build, objects otherwise).

  argo_history.py rev GIT_DIR REV --repo-url URL [--ply PLY] [--enable-helm]
      one revision: a line per Application (same / differs / both refuse / not rendered).
  argo_history.py pairs GIT_DIR --repo-url URL --count N [--ply PLY] [--enable-helm]
                       [--out FILE] [--max-commits M]
      walks the first-parent history from HEAD and keeps commit pairs (parent, child) whose
      change touches a YAML file and at both of which every Application renders as the oracle
      renders it; appends `GIT_DIR BASE HEAD` lines to FILE.
  argo_history.py time GIT_DIR REV --repo-url URL [--ply PLY] [--enable-helm]
      one run over every rendered Application: ply's wall time (one process per Application)
      against the oracle's (in this process, a copy of the repository per Application).

The revision is taken out with `git archive` into a temporary directory (no .git, so ply's
--argo-revision and --argo-repo-url are given, and the oracle gets the same).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import argo_oracle  # noqa: E402


def checkout(git_dir, rev, dest):
    os.makedirs(dest)
    archive = subprocess.run(["git", "--git-dir", git_dir, "archive", rev], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", dest], input=archive.stdout, check=True)


def helm_flags(a):
    return ["--enable-helm", "--helm-command", argo_oracle.HELM] if a.enable_helm else []


def targets(a, root):
    """(name, where, rendered) of every argo: target `ply gitops list` prints."""
    p = subprocess.run([a.ply, "gitops", "list", root, "--repo-url", a.repo_url] + helm_flags(a),
                       capture_output=True, text=True, timeout=300)
    out = []
    for line in p.stdout.splitlines():
        if not line.startswith("argo:"):
            continue
        name, where, how = line.split("  ", 2)
        out.append((name[len("argo:"):], where, how.startswith("rendered")))
    return out


def ply_render(a, root, spec, rev):
    args = [a.ply, "render", root, "--argo-application", spec, "--argo-revision", rev,
            "--argo-repo-url", a.repo_url] + helm_flags(a)
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def oracle_render(a, root, spec, rev):
    o = argparse.Namespace(repo=root, app=spec, revision=rev, build_options=argo_oracle.argocd_cm_options(root),
                           tracking=None, repo_url=a.repo_url, argo_namespace="argocd", helm=a.enable_helm)
    try:
        return True, argo_oracle.render(o)
    except argo_oracle.Failed as e:
        return False, str(e)
    except subprocess.TimeoutExpired as e:
        return False, "timeout: %s" % e


def same(out, result):
    kind, expected = result
    if kind == "yaml":
        return out == expected
    return [d for d in yaml.safe_load_all(out) if d is not None] == expected


def specs(a, root):
    """What to render each Application by: its name when unique, else its file (when it is
    written in one of the repository's files)."""
    found = targets(a, root)
    names = [n for n, _, _ in found]
    out = []
    for name, where, rendered in found:
        if not rendered:
            out.append((name, None, "not rendered"))
            continue
        if names.count(name) == 1:
            out.append((name, name, None))
            continue
        path = os.path.join(root, where.rsplit(":", 1)[0])
        docs = []
        try:
            docs = [d for d in yaml.safe_load_all(open(path)) if argo_oracle.is_app(d)]
        except Exception:
            pass
        out.append((name, path, None) if len(docs) == 1 else (name, name, None))
    return out


def check_rev(a, rev, verbose=True):
    """(agree, disagree, not rendered) at one revision."""
    work = tempfile.mkdtemp(prefix="argo-history-")
    agree = bad = skipped = 0
    try:
        root = os.path.join(work, "repo")
        checkout(a.git_dir, rev, root)
        for name, spec, why in specs(a, root):
            if spec is None:
                skipped += 1
                if verbose:
                    print("  -    %s (%s)" % (name, why))
                continue
            code, out, err = ply_render(a, root, spec, rev)
            ok, result = oracle_render(a, root, spec, rev)
            if ok and code == 0 and same(out, result):
                agree += 1
                verdict = "same (%s)" % ("bytes" if result[0] == "yaml" else "%d objects" % len(result[1]))
            elif not ok and code != 0:
                agree += 1
                verdict = "both refuse (ply: %s | oracle: %s)" % (first_line(err), first_line(result))
            else:
                bad += 1
                verdict = "DIFFERS: ply exit %d %s | oracle %s" % (code, first_line(err), "ok" if ok else first_line(result))
            if verbose:
                print("  %s %s: %s" % ("ok  " if not verdict.startswith("DIFF") else "FAIL", name, verdict))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return agree, bad, skipped


def first_line(s):
    lines = [l.strip(" x×") for l in s.splitlines() if l.strip() and not l.strip().startswith("ply::")]
    return lines[0][:140] if lines else ""


def cmd_rev(a):
    agree, bad, skipped = check_rev(a, a.rev)
    print("%s at %s: %d agree, %d differ, %d not rendered" % (a.git_dir, a.rev[:7], agree, bad, skipped))
    return 1 if bad else 0


def touches_yaml(a, base, head):
    names = subprocess.run(["git", "--git-dir", a.git_dir, "diff", "--name-only", base, head],
                           capture_output=True, text=True, check=True).stdout.split()
    return any(n.endswith((".yaml", ".yml")) or os.path.basename(n) == "Kustomization" for n in names)


def cmd_pairs(a):
    revs = subprocess.run(["git", "--git-dir", a.git_dir, "rev-list", "--first-parent", "-n", str(a.max_commits), "HEAD"],
                          capture_output=True, text=True, check=True).stdout.split()
    results = {}

    def ok(rev):
        if rev not in results:
            agree, bad, _ = check_rev(a, rev, verbose=False)
            results[rev] = (agree, bad)
            print("  %s: %d agree, %d differ" % (rev[:7], agree, bad), flush=True)
        return results[rev][1] == 0 and results[rev][0] > 0

    kept = []
    for head, base in zip(revs, revs[1:]):
        if len(kept) >= a.count:
            break
        if not touches_yaml(a, base, head):
            continue
        if ok(head) and ok(base):
            kept.append((base, head))
            print("pair %s %s" % (base[:7], head[:7]), flush=True)
    if a.out:
        with open(a.out, "a") as f:
            for base, head in kept:
                f.write("%s %s %s\n" % (a.git_dir, base, head))
    differing = [r for r, (_, bad) in results.items() if bad]
    print("%s: %d pairs kept of %d wanted; %d revisions checked, %d with a disagreement%s" % (
        a.git_dir, len(kept), a.count, len(results), len(differing),
        (": " + " ".join(r[:7] for r in differing)) if differing else ""))
    return 1 if differing else 0


def cmd_time(a):
    work = tempfile.mkdtemp(prefix="argo-history-")
    try:
        root = os.path.join(work, "repo")
        checkout(a.git_dir, a.rev, root)
        todo = [(n, s) for n, s, why in specs(a, root) if s is not None]
        t0 = time.perf_counter()
        for _, spec in todo:
            ply_render(a, root, spec, a.rev)
        t_ply = time.perf_counter() - t0
        t0 = time.perf_counter()
        for _, spec in todo:
            oracle_render(a, root, spec, a.rev)
        t_oracle = time.perf_counter() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%s at %s: %d Applications; ply %.2f s, oracle %.2f s: %.1fx" % (
        a.git_dir, a.rev[:7], len(todo), t_ply, t_oracle, t_oracle / t_ply if t_ply else 0))
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("rev", "pairs", "time"):
        p = sub.add_parser(name)
        p.add_argument("git_dir")
        if name != "pairs":
            p.add_argument("rev")
        p.add_argument("--repo-url", required=True)
        p.add_argument("--ply", default="target/debug/ply")
        p.add_argument("--enable-helm", action="store_true")
        if name == "pairs":
            p.add_argument("--count", type=int, default=10)
            p.add_argument("--out")
            p.add_argument("--max-commits", type=int, default=200)
    a = ap.parse_args()
    if a.cmd != "pairs":
        a.rev = subprocess.run(["git", "--git-dir", a.git_dir, "rev-parse", a.rev],
                               capture_output=True, text=True, check=True).stdout.strip()
    sys.exit({"rev": cmd_rev, "pairs": cmd_pairs, "time": cmd_time}[a.cmd](a))


if __name__ == "__main__":
    main()
