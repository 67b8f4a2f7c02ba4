#!/usr/bin/env python3
"""Renders every Flux Kustomization of a git repository at given commits with ply and with the
oracle (tools/flux-oracle: the library kustomize-controller calls) and compares them, object
for object (ply's `--json-lines` output must equal the oracle's byte for byte, or both fail).

For each commit the tree is taken with `git archive`; `ply gitops list` names the targets (and
which Kustomization applies each); `ply render --flux-kustomization ID --json-lines` renders
each. The oracle is given what the controller would be given, worked out here apart from ply:

- the Kustomization as applied: the object of that namespace and name in the output of the
  Kustomization that applies it (its parent's patches, namespace and substitutions), or the
  file's document for a root;
- the source: the checkout (or a `--source` directory); the oracle itself leaves out what
  source-controller's ignore rules leave out, and is given the source's `spec.ignore`;
- the ConfigMaps and Secrets its `substituteFrom` names: those in the outputs of the
  Kustomizations of its cluster (the targets under the same root), else a repository manifest
  whose content no output holds, the nearest to the Kustomization's file. A Secret that is
  SOPS-encrypted cannot give variables: ply must refuse it, naming it.

    tools/flux_history.py --ply target/release/ply --oracle target/flux-oracle \\
        --repo GIT_DIR [--repo-url URL] [--source K/NS/N=DIR]... [--strict-substitute=false] \\
        (--commits SHA... | --pairs FILE | --changes N [--path P])

`--pairs FILE` reads `GIT_DIR BASE HEAD` lines (the first line, `# flags: ...`, gives the ply
flags) and checks both commits of each pair. `--changes N` finds the last N first-parent
commits that change files under `--path` and checks each with its parent, printing the pairs
where every Kustomization agrees at both commits (`--write-pairs FILE` writes them).
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

SOPS_REFUSAL = "is SOPS encrypted; its variables cannot be read"
# Wall-clock seconds spent in ply (`ply gitops render`, every target in one run) and in the
# oracle (one run per Kustomization), printed with --timing.
TIMES = {"ply": 0.0, "oracle": 0.0}


def run(cmd, timeout=300):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return r.returncode == 0, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return False, "", "timeout"


def checkout(git_dir, sha, work):
    d = pathlib.Path(work) / sha[:12]
    if d.exists():
        return d
    d.mkdir(parents=True)
    archive = subprocess.run(["git", "--git-dir", git_dir, "archive", sha], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(d)], input=archive, check=True)
    return d


def documents(path):
    """(first line, object) of each YAML document of a file; documents that fail are skipped."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return []
    out, start, lines = [], 1, []
    for i, line in enumerate(text.split("\n"), 1):
        if re.match(r"^---(\s|$)", line):
            out.append((start, "\n".join(lines)))
            start, lines = i + 1, []
        else:
            lines.append(line)
    out.append((start, "\n".join(lines)))
    docs = []
    for first, body in out:
        try:
            obj = yaml.safe_load(body)
        except yaml.YAMLError:
            continue
        if isinstance(obj, dict) and "kind" in obj:
            docs.append((first, obj))
    return docs


def manifests(root):
    found = []
    for p in sorted(root.rglob("*")):
        if p.suffix in (".yaml", ".yml") and p.is_file() and ".git" not in p.parts:
            for first, obj in documents(p):
                found.append((p, first, obj))
    return found


class Tree:
    """One revision of a repository, as a directory."""

    def __init__(self, args, directory, sha):
        self.args, self.sha = args, sha
        self.dir = pathlib.Path(directory).resolve()
        self.flags = ["--repo-root", str(self.dir)] + sum((["--repo-url", u] for u in args.repo_url), [])
        self.flags += sum((["--source", s] for s in args.source), [])
        self.render_flags = [f"--strict-substitute={args.strict_substitute}"]
        self.manifests = manifests(self.dir)

    def targets(self):
        ok, out, err = run([self.args.ply, "gitops", "list", str(self.dir)] + self.flags)
        if not ok:
            raise SystemExit(f"{self.sha}: ply gitops list failed: {err}")
        targets = []
        for line in out.splitlines():
            parts = line.split("  ", 2)
            if len(parts) < 3 or not parts[0].startswith("flux:"):
                continue
            tid, at, how = parts
            f, ln = at.rsplit(":", 1)
            parent = re.search(r"; applied by (flux:\S+)", how)
            targets.append({"id": tid, "file": self.dir / f, "line": int(ln), "how": how,
                            "rendered": how.startswith("rendered:"),
                            "parent": parent.group(1) if parent else None})
        return targets

    def render_all(self, out_dir):
        """`ply gitops render`: every target in one run; {id: (ok, output, error)}."""
        run([self.args.ply, "gitops", "render", str(self.dir), "--out", str(out_dir)] + self.flags + self.render_flags,
            timeout=3600)
        found = {}
        for t in self.targets():
            name = t["id"][5:].replace("/", "_").replace("@", "_").replace("#", "_")
            ok_file, err_file = out_dir / f"{name}.jsonl", out_dir / f"{name}.err"
            if ok_file.is_file():
                found[t["id"]] = (True, ok_file.read_text(), "")
            elif err_file.is_file():
                found[t["id"]] = (False, "", err_file.read_text())
        return found

    def file_doc(self, t):
        docs = documents(t["file"])
        best = None
        for first, obj in docs:
            if first <= t["line"]:
                best = obj
        return best


def root_of(t, by_id):
    seen = set()
    while t["parent"] and t["parent"] in by_id and t["id"] not in seen:
        seen.add(t["id"])
        t = by_id[t["parent"]]
    return t["id"]


def ns_name(tid):
    ns, name = tid[5:].split("@")[0].split("/", 1)
    return ns, name


def applied_object(t, by_id, outputs, c):
    ns, name = ns_name(t["id"])
    if t["parent"]:
        ok, out = outputs.get(t["parent"], (False, ""))
        if ok:
            for line in out.splitlines():
                o = json.loads(line)
                md = o.get("metadata", {})
                if o.get("kind") == "Kustomization" and o.get("apiVersion", "").startswith("kustomize.toolkit.fluxcd.io/") \
                        and md.get("name") == name and md.get("namespace", "default") == ns:
                    return o
    obj = c.file_doc(t)
    if obj is not None:
        obj.setdefault("metadata", {}).setdefault("namespace", ns)
    return obj


def is_sops(o):
    if o.get("kind") != "Secret":
        return False
    if "sops" in o:
        return True
    return any(isinstance(v, str) and v.startswith("ENC[") for f in ("data", "stringData") for v in (o.get(f) or {}).values())


def substitute_objects(ks, t, cluster, outputs, c):
    """The objects the oracle's fake cluster holds for the Kustomization's substituteFrom."""
    ns = ks.get("metadata", {}).get("namespace", "default")
    refs = ((ks.get("spec") or {}).get("postBuild") or {}).get("substituteFrom") or []
    all_out = []
    for tid in outputs:
        ok, out = outputs[tid]
        if ok:
            all_out += [json.loads(line) for line in out.splitlines()]
    found, sops = [], False
    for ref in refs:
        kind, name = ref.get("kind"), ref.get("name")
        obj = None
        for exact in (True, False):
            for tid in cluster:
                ok, out = outputs.get(tid, (False, ""))
                if not ok:
                    continue
                for line in out.splitlines():
                    o = json.loads(line)
                    md = o.get("metadata", {})
                    if o.get("kind") == kind and o.get("apiVersion") == "v1" and md.get("name") == name and \
                            (md.get("namespace") == ns if exact else not md.get("namespace")):
                        obj = o
                        break
                if obj:
                    break
            if obj:
                break
        if obj is None:
            content = lambda o: (o.get("data"), o.get("stringData"))
            cands = []
            for exact in (True, False):
                cands = [(p, o) for p, _, o in c.manifests
                         if o.get("kind") == kind and o.get("apiVersion") == "v1"
                         and (o.get("metadata") or {}).get("name") == name
                         and ((o.get("metadata") or {}).get("namespace") == ns if exact else not (o.get("metadata") or {}).get("namespace"))
                         and not any(x.get("kind") == kind and x.get("metadata", {}).get("name") == name and content(x) == content(o) for x in all_out)]
                if cands:
                    break
            if cands:
                depth = lambda p: len(os.path.commonpath([str(p), str(t["file"])]).split("/"))
                best = max(depth(p) for p, _ in cands)
                near = [o for p, o in cands if depth(p) == best]
                obj = near[0] if len(near) == 1 else None
        if obj is not None:
            if is_sops(obj):
                sops = True
            o = dict(obj)
            o.setdefault("metadata", {})
            o["metadata"] = dict(o["metadata"], namespace=ns)
            found.append(o)
    return found, sops


def source_root(t, c):
    m = re.search(r"mapped to (\S+) \(--source\)", t["how"])
    return pathlib.Path(m.group(1)) if m else c.dir


def spec_ignore(ks, c):
    ref = (ks.get("spec") or {}).get("sourceRef") or {}
    ns = ref.get("namespace") or ks.get("metadata", {}).get("namespace", "default")
    for _, _, o in c.manifests:
        md = o.get("metadata") or {}
        if o.get("kind") == ref.get("kind", "GitRepository") == "GitRepository" and md.get("name") == ref.get("name") \
                and md.get("namespace", "default") == ns and str(o.get("apiVersion", "")).startswith("source.toolkit.fluxcd.io/"):
            return (o.get("spec") or {}).get("ignore")
    return None


def check_tree(args, directory, sha, work):
    """Every target of the tree at `directory`: counts, reports of disagreements, ply's outputs."""
    c = Tree(args, directory, sha)
    targets = c.targets()
    by_id = {t["id"]: t for t in targets}
    rendered = [t for t in targets if t["rendered"]]
    outputs = {}
    started = time.monotonic()
    renders = c.render_all(pathlib.Path(work) / f"ply-{sha[:12]}")
    TIMES["ply"] += time.monotonic() - started
    for t in rendered:
        ok, out, err = renders.get(t["id"], (False, "", "ply rendered nothing for it"))
        outputs[t["id"]] = (ok, out)
        t["ply_err"] = err
    counts = {"alike": 0, "both-fail": 0, "sops-refused": 0, "differ": 0, "not-rendered": len(targets) - len(rendered)}
    reports = []
    tmp = pathlib.Path(work) / f"oracle-{sha[:12]}"
    tmp.mkdir(exist_ok=True)
    roots = {t["id"]: root_of(t, by_id) for t in rendered}
    for i, t in enumerate(rendered):
        ks = applied_object(t, by_id, outputs, c)
        cluster = [x for x in roots if roots[x] == roots[t["id"]]]
        objs, sops = substitute_objects(ks, t, cluster, outputs, c)
        p_ok, p_out = outputs[t["id"]]
        if sops:
            # The message as one line (a terminal's diagnostic wraps it, ` | ` at each break).
            said = " ".join(t["ply_err"].replace("|", " ").split())
            if not p_ok and SOPS_REFUSAL in said:
                counts["sops-refused"] += 1
            else:
                counts["differ"] += 1
                reports.append(f"{sha[:12]} {t['id']}: a substituteFrom Secret is SOPS encrypted, ply did not refuse it:\n{t['ply_err'][:2000]}")
            continue
        (tmp / f"ks{i}.yaml").write_text(json.dumps(ks))
        (tmp / f"vars{i}.yaml").write_text("".join(json.dumps(o) + "\n---\n" for o in objs))
        cmd = [args.oracle, "--ks", str(tmp / f"ks{i}.yaml"), "--root", str(source_root(t, c)),
               "--objects", str(tmp / f"vars{i}.yaml"), f"--strict={args.strict_substitute}"]
        ign = spec_ignore(ks, c)
        if ign:
            cmd += ["--ignore", ign]
        started = time.monotonic()
        o_ok, o_out, o_err = run(cmd)
        TIMES["oracle"] += time.monotonic() - started
        if p_ok and o_ok and p_out == o_out:
            counts["alike"] += 1
        elif not p_ok and not o_ok:
            counts["both-fail"] += 1
        else:
            counts["differ"] += 1
            reports.append(f"{sha[:12]} {t['id']}: ply {'ok' if p_ok else 'failed'}, oracle {'ok' if o_ok else 'failed'}\n"
                           f"--- ply\n{p_out[:3000]}{t['ply_err'][:2000]}--- oracle\n{o_out[:3000]}{o_err[:2000]}")
    shutil.rmtree(tmp)
    return counts, reports, outputs


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--ply", required=True)
    a.add_argument("--oracle", required=True)
    a.add_argument("--repo")
    a.add_argument("--repo-url", action="append", default=[])
    a.add_argument("--source", action="append", default=[])
    a.add_argument("--strict-substitute", default="true")
    a.add_argument("--commits", nargs="*", default=[])
    a.add_argument("--pairs")
    a.add_argument("--changes", type=int, default=0)
    a.add_argument("--path", default=".")
    a.add_argument("--write-pairs")
    a.add_argument("--timing", action="store_true", help="print the seconds ply and the oracle took")
    args = a.parse_args()
    args.ply, args.oracle = os.path.abspath(args.ply), os.path.abspath(args.oracle)
    pairs = []
    if args.pairs:
        lines = pathlib.Path(args.pairs).read_text().splitlines()
        for line in lines:
            if line.startswith("#") or not line.strip():
                continue
            repo, base, head = line.split()
            if args.repo and os.path.realpath(repo) != os.path.realpath(args.repo):
                continue
            args.repo = repo
            pairs.append((base, head))
    if args.changes:
        log = subprocess.run(["git", "--git-dir", args.repo, "log", "--first-parent", "--format=%H %P",
                              "-n", str(args.changes), "HEAD", "--", args.path],
                             capture_output=True, text=True, check=True).stdout.split("\n")
        pairs += [(ln.split()[1], ln.split()[0]) for ln in log if len(ln.split()) >= 2]
    commits = list(args.commits) + [s for p in pairs for s in p]
    total = {"alike": 0, "both-fail": 0, "sops-refused": 0, "differ": 0, "not-rendered": 0}
    per = {}
    with tempfile.TemporaryDirectory(prefix="flux-history-") as work:
        for sha in dict.fromkeys(commits):
            counts, reports, _ = check_tree(args, checkout(args.repo, sha, work), sha, work)
            per[sha] = counts
            for k in total:
                total[k] += counts[k]
            for r in reports:
                print(r, file=sys.stderr)
            print(f"{sha[:12]}: {counts['alike']} alike, {counts['both-fail']} failing in both, "
                  f"{counts['sops-refused']} refused (SOPS-encrypted substituteFrom), {counts['differ']} disagreements, "
                  f"{counts['not-rendered']} not rendered", flush=True)
            shutil.rmtree(pathlib.Path(work) / sha[:12], ignore_errors=True)
    good = [(b, h) for b, h in pairs if per[b]["differ"] == 0 and per[h]["differ"] == 0]
    if pairs:
        print(f"{len(good)} of {len(pairs)} pairs agree at both commits")
    if args.write_pairs:
        with open(args.write_pairs, "a") as f:
            for b, h in good:
                f.write(f"{args.repo} {b} {h}\n")
    print(f"{len(per)} commits: {total['alike']} alike, {total['both-fail']} failing in both, "
          f"{total['sops-refused']} refused (SOPS), {total['differ']} disagreements, {total['not-rendered']} not rendered")
    if args.timing:
        print(f"wall time: ply {TIMES['ply']:.2f} s, oracle {TIMES['oracle']:.2f} s "
              f"({TIMES['oracle'] / max(TIMES['ply'], 1e-9):.1f}x)")
    return 1 if total["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
