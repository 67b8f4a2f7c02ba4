#!/usr/bin/env python3
"""Runs the Config Management Plugin example's generate command (examples/argocd-cmp) as Argo
CD's repo server runs a plugin: in the application's directory of a checkout, with the
ARGOCD_APP_* variables and the plugin env as ARGOCD_ENV_*, and compares its output with the
oracle's rendering of the same Application (tools/argo_oracle.py, the real kustomize).

  argo_cmp_check.py --ply target/debug/ply
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import argo_oracle  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "testdata", "gitops", "argo", "images-merged-and-sorted", "repo")
URL = "https://github.com/example/deploy.git"
REV = "89abcdef0123456789abcdef0123456789abcdef"
CASES = [
    "namePrefix: prod-\nimages:\n- nginx:1.27-$ARGOCD_APP_REVISION_SHORT\ncommonLabels:\n  app.kubernetes.io/part-of: $ARGOCD_APP_NAME\n",
    "{nameSuffix: -eu, namespace: shop, replicas: [{name: web, count: 3}]}",
    "",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ply", default="target/debug/ply")
    a = ap.parse_args()
    ply_dir = os.path.dirname(os.path.abspath(a.ply))
    bad = 0
    for i, kustomize in enumerate(CASES):
        work = tempfile.mkdtemp(prefix="argo-cmp-")
        try:
            checkout = os.path.join(work, "checkout")
            shutil.copytree(REPO, checkout)
            env = dict(os.environ)
            env.update({
                "PATH": ply_dir + os.pathsep + env.get("PATH", ""),
                "ARGOCD_APP_NAME": "web",
                "ARGOCD_APP_NAMESPACE": "prod",
                "ARGOCD_APP_PROJECT_NAME": "default",
                "ARGOCD_APP_REVISION": REV,
                "ARGOCD_APP_REVISION_SHORT": REV[:7],
                "ARGOCD_APP_REVISION_SHORT_8": REV[:8],
                "ARGOCD_APP_SOURCE_PATH": "app",
                "ARGOCD_APP_SOURCE_REPO_URL": URL,
                "ARGOCD_APP_SOURCE_TARGET_REVISION": "main",
                "ARGOCD_ENV_KUSTOMIZE": kustomize,
            })
            p = subprocess.run(["sh", os.path.join(HERE, "..", "examples", "argocd-cmp", "generate.sh")],
                               cwd=os.path.join(checkout, "app"), env=env, capture_output=True, text=True, timeout=60)
            app = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "web"},
                   "spec": {"project": "default", "destination": {"namespace": "prod"},
                            "source": {"repoURL": URL, "path": "app", "targetRevision": "main",
                                       "kustomize": yaml.safe_load(kustomize) or {}}}}
            app_file = os.path.join(work, "application.yaml")
            with open(app_file, "w") as f:
                yaml.safe_dump(app, f)
            o = argparse.Namespace(repo=REPO, app=app_file, revision=REV, build_options="", tracking=None,
                                   repo_url=URL, argo_namespace="argocd")
            kind, expected = argo_oracle.render(o)
            if p.returncode != 0 or p.stdout != expected:
                bad += 1
                print("FAIL case %d: exit %d\n%s" % (i, p.returncode, p.stderr[:800]))
            else:
                print("ok   case %d (%d bytes, same as the oracle)" % (i, len(p.stdout)))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
