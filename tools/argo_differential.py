#!/usr/bin/env python3
"""Differential test of `ply render --argo-application` against the Argo CD oracle
(tools/argo_oracle.py: the real kustomize 5.8.1 replaying the repo server's commands), for a
fixed time: each case is a random tree (a base and an overlay kustomization, a component, a
plain directory) and a random Application over it (every kustomize override and flag, parameter
files, Argo variables in values, directory include/exclude/recurse, tracking). A case agrees when
both succeed with the same output (bytes for kustomize builds, objects otherwise) or both fail.

  argo_differential.py --ply target/debug/ply --seconds 60 [--seed N] [--keep DIR]
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import argo_oracle  # noqa: E402

URL = "https://github.com/example/diff.git"
REV = "0123456789abcdef0123456789abcdef01234567"
VALUES = ["a", "b-1", "$ARGOCD_APP_NAME", "${ARGOCD_APP_REVISION_SHORT}", "x:y", "\"q\"", "$$lit", "v$ARGOCD_APP_NAMESPACE"]


def deployment(name, image, labels):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": dict(labels)},
            "spec": {"replicas": 1, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)}, "spec": {"containers": [{"name": name, "image": image}]}}}}


def tree(r, root):
    def w(path, docs, raw=None):
        p = os.path.join(root, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(raw if raw is not None else yaml.safe_dump_all(docs, sort_keys=False))
    labels = {"app": r.choice(["web", "api"])}
    w("base/deploy.yaml", [deployment("web", r.choice(["nginx:1.25", "reg.io/nginx@sha256:abc", "busybox"]), labels)])
    w("base/svc.yaml", [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"selector": dict(labels), "ports": [{"port": 80}]}}])
    base = {"resources": ["deploy.yaml", "svc.yaml"]}
    if r.random() < 0.3:
        base["commonLabels"] = {"team": "a"}
    if r.random() < 0.3:
        base["images"] = [{"name": "nginx", "newTag": "1.0"}]
    w("base/kustomization.yaml", [base])
    ov = {"resources": ["../base"]}
    for key, val in [("namePrefix", "old-"), ("namespace", "old-ns"), ("commonAnnotations", {"owner": "x"}),
                     ("replicas", [{"name": "web", "count": 2}]), ("labels", [{"pairs": {"tier": "t"}}])]:
        if r.random() < 0.25:
            ov[key] = val
    w("overlay/kustomization.yaml", [ov])
    w("comp/kustomization.yaml", [{"apiVersion": "kustomize.config.k8s.io/v1alpha1", "kind": "Component", "commonAnnotations": {"comp": "yes"}}])
    w("plain/a.yaml", [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}])
    w("plain/sub/b.yml", [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}])
    w("plain/sub/test-c.yaml", [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}])
    w("plain/notes.txt", None, "not yaml")


def overrides(r):
    k = {}
    if r.random() < 0.4:
        k["namePrefix"] = r.choice(["p-", "new-"])
    if r.random() < 0.3:
        k["nameSuffix"] = r.choice(["-s", "-v2"])
    if r.random() < 0.4:
        k["images"] = r.sample(["nginx:2.0", "nginx=*:3", "busybox=reg/bb:1", "nginx@sha256:ff", "x=y", "nginx", "nginx:${ARGOCD_APP_REVISION_SHORT}"], r.randint(1, 2))
    if r.random() < 0.3:
        k["replicas"] = [{"name": "web", "count": r.choice([3, "4", "five"])}]
    if r.random() < 0.5:
        k["commonLabels"] = {r.choice(["team", "env", "app"]): r.choice(VALUES)}
        for flag in ("forceCommonLabels", "labelWithoutSelector", "labelIncludeTemplates"):
            if r.random() < 0.3:
                k[flag] = True
    if r.random() < 0.4:
        k["commonAnnotations"] = {r.choice(["owner", "note"]): r.choice(VALUES)}
        for flag in ("forceCommonAnnotations", "commonAnnotationsEnvsubst"):
            if r.random() < 0.4:
                k[flag] = True
    if r.random() < 0.3:
        k["namespace"] = r.choice(["team-a", "prod"])
    if r.random() < 0.3:
        k["patches"] = [{"target": {"kind": "Deployment"}, "patch": "- op: replace\n  path: /spec/replicas\n  value: 9\n"}]
    if r.random() < 0.3:
        k["components"] = r.sample(["../comp", "../missing"], r.randint(1, 2))
        if r.random() < 0.5:
            k["ignoreMissingComponents"] = True
    return k


def case(r, root):
    tree(r, root)
    path = r.choice(["overlay", "base", "plain", "overlay"])
    source = {"repoURL": URL, "targetRevision": "main", "path": path}
    if path == "plain":
        if r.random() < 0.7:
            source["directory"] = {k: v for k, v in [("recurse", r.random() < 0.5), ("include", r.choice(["", "*.yaml", "{*.yml,a.yaml}"])),
                                                      ("exclude", r.choice(["", "*test-*"]))] if v}
    elif r.random() < 0.9:
        source["kustomize"] = overrides(r)
    if r.random() < 0.2:
        with open(os.path.join(root, path, ".argocd-source.yaml"), "w") as f:
            yaml.safe_dump({"kustomize": overrides(r)}, f)
    name = r.choice(["web", "shop"])
    meta = {"name": name}
    if r.random() < 0.2:
        meta["namespace"] = "team"
    app = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": meta,
           "spec": {"project": "default", "source": source, "destination": {"server": "https://kubernetes.default.svc", "namespace": "prod"}}}
    os.makedirs(os.path.join(root, "apps"), exist_ok=True)
    with open(os.path.join(root, "apps", "app.yaml"), "w") as f:
        yaml.safe_dump(app, f, sort_keys=False)
    tracking = r.choice([None, None, "annotation", "label", "annotation+label"])
    return name, tracking


def run_ply(ply, root, name, tracking):
    args = [ply, "render", root, "--argo-application", name, "--argo-revision", REV, "--argo-repo-url", URL]
    if tracking:
        args += ["--argo-tracking", tracking]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ply", default="target/debug/ply")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--keep", help="copy disagreeing cases here")
    a = ap.parse_args()
    r = random.Random(a.seed)
    end = time.time() + a.seconds
    n = bad = fails = 0
    while time.time() < end:
        work = tempfile.mkdtemp(prefix="argo-diff-")
        try:
            root = os.path.join(work, "repo")
            os.makedirs(root)
            name, tracking = case(r, root)
            code, out, err = run_ply(a.ply, root, name, tracking)
            o = argparse.Namespace(repo=root, app=name, revision=REV, build_options="", tracking=tracking,
                                   repo_url=URL, argo_namespace="argocd")
            try:
                kind, expected = argo_oracle.render(o)
                oracle_ok = True
            except argo_oracle.Failed as e:
                oracle_ok, expected = False, str(e)
            n += 1
            if not oracle_ok and code != 0:
                fails += 1
                continue
            same = oracle_ok and code == 0 and (
                out == expected if kind == "yaml" else [d for d in yaml.safe_load_all(out) if d is not None] == expected)
            if not same:
                bad += 1
                print("DISAGREE (seed %d, case %d): ply exit %d; oracle %s" % (a.seed, n, code, "ok" if oracle_ok else expected[:200]))
                print(err[:500])
                if a.keep:
                    shutil.copytree(root, os.path.join(a.keep, "case-%d-%d" % (a.seed, n)))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print("argo differential: %d cases (%d where both fail), %d disagreements, seed %d" % (n, fails, bad, a.seed))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
