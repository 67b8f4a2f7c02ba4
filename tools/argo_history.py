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
  argo_history.py time GIT_DIR REV --repo-url URL [--ply PLY] [--enable-helm] [--repeat N]
      one run over every rendered Application: ply's wall and CPU time (one process per
      Application) against the oracle's (in this process, a copy of the repository per
      Application; CPU time: the processes it runs, kustomize and helm, and its own; ply's:
      its processes'); then
      one ply process for all of them (`ply diff --gitops` of the revision against itself,
      which renders each twice).
  argo_history.py review GIT_DIR BASE HEAD --repo-url URL [--ply PLY] [--enable-helm]
      `ply diff --base BASE --base-exact --head HEAD --gitops --format json` in a clone, and
      for every target of the report, the oracle's rendering at BASE and at HEAD: the objects
      the review creates, deletes, updates and leaves unchanged must be those the two
      renderings give (a side where the oracle fails must be a side the review says fails;
      a target listed as not rendered must be one `ply gitops list` does not render).

The revision is taken out with `git archive` into a temporary directory (no .git, so ply's
--argo-revision and --argo-repo-url are given, and the oracle gets the same).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import argo_oracle  # noqa: E402
import review_gitops_pairs  # noqa: E402


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
        t0, c0 = time.perf_counter(), argo_oracle.cpu(own=False)
        for _ in range(a.repeat):
            for _, spec in todo:
                ply_render(a, root, spec, a.rev)
        t_ply, c_ply = time.perf_counter() - t0, argo_oracle.cpu(own=False) - c0
        t0, c0 = time.perf_counter(), argo_oracle.cpu()
        for _ in range(a.repeat):
            for _, spec in todo:
                oracle_render(a, root, spec, a.rev)
        t_oracle, c_oracle = time.perf_counter() - t0, argo_oracle.cpu() - c0
        # One ply process for every Application, as the oracle is one process: the review of
        # the revision against itself renders each at both sides (twice the oracle's work).
        clone = os.path.join(work, "clone")
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", a.git_dir, clone], check=True)
        subprocess.run(["git", "-C", clone, "checkout", "-q", a.rev], check=True)
        t0, c0 = time.perf_counter(), argo_oracle.cpu(own=False)
        for _ in range(a.repeat):
            subprocess.run([a.ply, "diff", "--base", a.rev, "--base-exact", "--head", a.rev,
                            "--gitops", "--format", "json", "--repo-url", a.repo_url] + helm_flags(a),
                           cwd=clone, capture_output=True, timeout=600)
        t_review, c_review = time.perf_counter() - t0, argo_oracle.cpu(own=False) - c0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ratio = lambda o, p: o / p if p else 0
    print("%s at %s: %d Applications, %d times; one process each: wall ply %.3f s, oracle %.2f s: %.1fx; "
          "CPU ply %.3f s, oracle %.2f s: %.1fx; one ply process (diff --gitops, both sides): "
          "wall %.3f s: %.1fx, CPU %.3f s: %.1fx" % (
              a.git_dir, a.rev[:7], len(todo), a.repeat, t_ply, t_oracle, ratio(t_oracle, t_ply),
              c_ply, c_oracle, ratio(c_oracle, c_ply), t_review, ratio(t_oracle, t_review),
              c_review, ratio(c_oracle, c_review)))
    return 0


def oracle_objects(a, root, listed, name, rev):
    """The oracle's objects for Application `name` at a checked-out revision ({key: object}),
    None when it fails, or "absent" when `ply gitops list` does not list it there (`listed`:
    its `specs`)."""
    for n, spec, why in listed:
        if n != name:
            continue
        if spec is None:
            return "not rendered"
        ok, result = oracle_render(a, root, spec, rev)
        if not ok:
            return None
        kind, out = result
        objs = [d for d in yaml.safe_load_all(out) if d is not None] if kind == "yaml" else out
        return {review_gitops_pairs.key(d): d for d in objs}
    return "absent"


def check_target(o, base, head):
    """(ok, what) for one overlay of the report against the oracle's two sides."""
    status = o["status"]
    if status == "not-rendered":
        ok = "not rendered" in (base, head)
        return ok, "not rendered (%s)" % o["failure"]["message"][:80]
    sides = {"base": base, "head": head}
    for s, v in sides.items():
        if v == "not rendered":
            return False, "listed as not rendered at the %s, yet the review renders it" % s
    if status in ("broken-before", "not-reviewed"):
        return base is None and head is None, status
    if status == "head-failed":
        return head is None, status
    if status == "base-failed":
        return base is None and head is not None, status
    if None in (base, head):
        return False, "%s: the oracle fails at %s" % (status, "base" if base is None else "head")
    b = {} if base == "absent" else base
    h = {} if head == "absent" else head
    every = review_gitops_pairs.expected(b, h)
    want = {w for w in every if w[0] != "unchanged"}
    unchanged = len(every) - len(want)
    got = review_gitops_pairs.reviewed(o)
    counted = (o.get("totals") or {}).get("unchanged", 0)
    if status == "unchanged":
        counted = unchanged  # an overlay without changes does not count its objects
    n = [sum(1 for x, _ in want if x == act) for act in ("create", "update", "delete")]
    counts = "create %d, update %d, delete %d, unchanged %d" % (n[0], n[1], n[2], unchanged)
    ok = want == got and counted == unchanged
    if not ok:
        for x in sorted(want ^ got, key=str)[:10]:
            print("       %s: %s" % ("oracle only" if x in want else "review only", x))
    return ok, "%s (%s)" % (status, counts)


def cmd_review(a):
    work = tempfile.mkdtemp(prefix="argo-review-")
    try:
        clone = os.path.join(work, "clone")
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", a.git_dir, clone], check=True)
        subprocess.run(["git", "-C", clone, "checkout", "-q", a.head], check=True)
        t0 = time.perf_counter()
        r = subprocess.run([a.ply, "diff", "--base", a.base, "--base-exact", "--head", a.head,
                            "--gitops", "--no-why", "--format", "json", "--repo-url", a.repo_url]
                           + helm_flags(a), cwd=clone, capture_output=True, text=True, timeout=600)
        t_ply = time.perf_counter() - t0
        if r.returncode not in (0, 1):
            print("FAIL ply diff exit %d: %s" % (r.returncode, first_line(r.stderr)))
            return 1
        report = json.loads(r.stdout)
        roots = {}
        for side, rev in (("base", a.base), ("head", a.head)):
            roots[side] = os.path.join(work, side)
            checkout(a.git_dir, rev, roots[side])
        bad = 0
        listed = {side: specs(a, root) for side, root in roots.items()}
        t0 = time.perf_counter()
        for o in report["overlays"]:
            name = o["path"].split(":", 1)[1]
            base = oracle_objects(a, roots["base"], listed["base"], name, a.base)
            head = oracle_objects(a, roots["head"], listed["head"], name, a.head)
            ok, what = check_target(o, base, head)
            bad += not ok
            print("  %s %s: %s" % ("ok  " if ok else "FAIL", o["path"], what), flush=True)
        t_oracle = time.perf_counter() - t0
        warned = len(report.get("warnings", []))
        print("%s %s..%s: %d targets, %d disagree; %d not rendered; %d discovery warnings; "
              "ply diff %.2f s, oracle at both sides %.2f s" % (
                  os.path.basename(os.path.dirname(a.git_dir.rstrip("/"))) or a.git_dir,
                  a.base[:7], a.head[:7], len(report["overlays"]), bad,
                  report.get("notRendered", 0), warned, t_ply, t_oracle))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("rev", "pairs", "time", "review"):
        p = sub.add_parser(name)
        p.add_argument("git_dir")
        if name in ("rev", "time"):
            p.add_argument("rev")
        if name == "review":
            p.add_argument("base")
            p.add_argument("head")
        p.add_argument("--repo-url", required=True)
        p.add_argument("--ply", default="target/debug/ply")
        p.add_argument("--enable-helm", action="store_true")
        if name == "time":
            p.add_argument("--repeat", type=int, default=1, help="each render this many times")
        if name == "pairs":
            p.add_argument("--count", type=int, default=10)
            p.add_argument("--out")
            p.add_argument("--max-commits", type=int, default=200)
    a = ap.parse_args()
    a.ply = os.path.abspath(a.ply)
    resolve = lambda rev: subprocess.run(["git", "--git-dir", a.git_dir, "rev-parse", rev],
                                         capture_output=True, text=True, check=True).stdout.strip()
    if a.cmd in ("rev", "time"):
        a.rev = resolve(a.rev)
    if a.cmd == "review":
        a.base, a.head = resolve(a.base), resolve(a.head)
    cmds = {"rev": cmd_rev, "pairs": cmd_pairs, "time": cmd_time, "review": cmd_review}
    sys.exit(cmds[a.cmd](a))


if __name__ == "__main__":
    main()
