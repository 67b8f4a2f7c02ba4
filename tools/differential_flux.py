#!/usr/bin/env python3
"""Differential test of `ply render --flux-kustomization` against tools/flux-oracle (what
kustomize-controller applies, from the library functions it calls). Each case is a random
Flux Kustomization and a random tree: resource files with or without a kustomization (the
generated one), a nested kustomization directory, the override fields (targetNamespace,
namePrefix/Suffix, images, patches, components, commonMetadata), post-build substitution in
every envsubst form with inline variables, substituteFrom ConfigMaps and Secrets (optional or
not), unset variables, strict or not, `substitute: disabled`, owner labels on or off. ply's
`--json-lines` output must equal the oracle's byte for byte, or both must fail.

    tools/differential_flux.py --ply target/release/ply --oracle target/flux-oracle \\
        [--seconds 60 | --cases N] [--seed 0] [--jobs 1]

Case i uses seed SEED+i; a disagreement prints the seed, the tree and both outputs, and the
run exits 1. The last line counts cases, agreements of both failing, and disagreements.
"""
import argparse
import concurrent.futures
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile
import time

FORMS = [
    "${V}", "${V:=dflt}", "${V:-dflt}", "${V=dflt}", "${V:+alt}", "$${V}", "$V", "${#V}",
    "${V^}", "${V^^}", "${V,}", "${V,,}", "${V:1}", "${V:1:2}", "${V:0:-1}", "${V#*-}",
    "${V##*-}", "${V%-*}", "${V%%-*}", "${V/a/b}", "${V//a/b}", "${V/#x/y}", "${V/%z/w}",
    "${U:=${V}}", "pre-${V}-post",
]
VALUES = ["hello", "a-b-c", "xaz", "3", "true", "yes", "", "1.5", "A-Za", "null", "on", "0x1F", "007"]
NAMES = ["V", "W", "CLUSTER", "R", "_x"]


def q(s):
    """A double-quoted YAML string."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def form(rng):
    return rng.choice(FORMS).replace("V", rng.choice(NAMES)).replace("U", rng.choice(["U", "V", "W"]))


def configmap(rng, name, subst):
    lines = [f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"]
    if rng.random() < 0.3:
        where = rng.choice(["labels", "annotations"])
        lines.append(f"  {where}:\n    kustomize.toolkit.fluxcd.io/substitute: disabled\n")
    lines.append("data:\n")
    for i in range(rng.randint(1, 4)):
        v = form(rng) if subst and rng.random() < 0.8 else rng.choice(VALUES)
        if rng.random() < 0.5:
            lines.append(f"  k{i}: {q(v)}\n")
        else:
            lines.append(f"  k{i}: {v if v and not v.startswith('$$') else q(v)}\n")
    return "".join(lines)


def deployment(rng, name, subst):
    replicas = "${R:=2}" if subst and rng.random() < 0.5 else str(rng.randint(1, 3))
    image = rng.choice(["nginx:1.25", "busybox", "registry.example/app:v1"])
    port = "\n        ports:\n        - containerPort: 80" if rng.random() < 0.5 else ""
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  labels:\n    app: {name}\n"
            f"spec:\n  replicas: {replicas}\n  selector:\n    matchLabels:\n      app: {name}\n"
            f"  template:\n    metadata:\n      labels:\n        app: {name}\n    spec:\n"
            f"      containers:\n      - name: main\n        image: {image}{port}\n")


def service(rng, name):
    return (f"apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\nspec:\n"
            f"  selector:\n    app: {name}\n  ports:\n  - port: 80\n")


def namespace(rng, name):
    return f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n"


def resources(rng, subst, prefix):
    out = {}
    for i in range(rng.randint(1, 4)):
        kind = rng.choice(["cm", "cm", "deploy", "svc", "ns"])
        name = f"{prefix}{kind}{i}"
        text = {"cm": lambda: configmap(rng, name, subst), "deploy": lambda: deployment(rng, name, subst),
                "svc": lambda: service(rng, name), "ns": lambda: namespace(rng, name)}[kind]()
        ext = rng.choice([".yaml", ".yaml", ".yml"])
        out[f"{rng.choice(['a', 'b', 'z', 'm'])}{i}-{kind}{ext}"] = text
    return out


def tree(rng, subst):
    files = {}
    app = resources(rng, subst, "")
    for f, t in app.items():
        files[f"app/{f}"] = t
    if rng.random() < 0.3:
        for f, t in resources(rng, subst, "sub").items():
            files[f"app/sub/{f}"] = t
    if rng.random() < 0.3:
        for f, t in resources(rng, subst, "nested").items():
            files[f"app/nested/{f}"] = t
        files["app/nested/kustomization.yaml"] = "resources:\n" + "".join(
            f"- {f}\n" for f in sorted(k.split("/")[-1] for k in files if k.startswith("app/nested/") and not k.endswith("kustomization.yaml")))
    if rng.random() < 0.5:
        entries = sorted(f.split("/", 1)[1] for f in files if f.count("/") == 1)
        if "app/nested/kustomization.yaml" in files:
            entries.append("nested")
        k = "resources:\n" + "".join(f"- {e}\n" for e in entries)
        if rng.random() < 0.3:
            k += "namespace: from-file\n"
        if rng.random() < 0.3:
            k += "namePrefix: file-\n"
        if rng.random() < 0.3:
            k += "images:\n- name: nginx\n  newTag: \"1.27\"\n"
        if rng.random() < 0.2:
            k += "commonLabels:\n  tier: web\n"
        files[rng.choice(["app/kustomization.yaml", "app/kustomization.yaml", "app/kustomization.yml"])] = k
    if rng.random() < 0.2:
        files["components/extra/kustomization.yaml"] = (
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations:\n  extra: \"1\"\n")
    return files


def ks(rng, files):
    spec = ["  interval: 10m\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  path: ./app\n"]
    if rng.random() < 0.3:
        spec.append(f"  targetNamespace: {rng.choice(['prod', 'dev', q('')])}\n")
    if rng.random() < 0.3:
        spec.append(f"  namePrefix: {rng.choice(['p-', q('')])}\n")
    if rng.random() < 0.2:
        spec.append("  nameSuffix: -s\n")
    if rng.random() < 0.3:
        img = rng.choice(["nginx", "busybox", "registry.example/app"])
        fields = rng.sample(["newName: mirror.example/x", 'newTag: "2.0"',
                             "digest: sha256:" + "1" * 64], rng.randint(1, 2))
        spec.append(f"  images:\n  - name: {img}\n" + "".join(f"    {f}\n" for f in fields))
    if rng.random() < 0.3:
        spec.append("  patches:\n  - patch: |\n      - op: add\n        path: /metadata/annotations\n"
                    "        value: {patched: \"yes\"}\n    target:\n      kind: " + rng.choice(["ConfigMap", "Deployment", "Service"]) + "\n")
    if "components/extra/kustomization.yaml" in files or rng.random() < 0.1:
        spec.append("  components:\n  - ../components/extra\n")
        if rng.random() < 0.5:
            spec.append("  ignoreMissingComponents: true\n")
    if rng.random() < 0.3:
        spec.append("  commonMetadata:\n    labels:\n      team: " + rng.choice(["a", "b"]) + "\n")
        if rng.random() < 0.5:
            spec.append("    annotations:\n      owner: ops\n")
    subst = rng.random() < 0.8
    objects = []
    if subst:
        spec.append("  postBuild:\n")
        if rng.random() < 0.2:
            spec.append("    substituteStrategy: Always\n")
        inline = {n: rng.choice(VALUES) for n in rng.sample(NAMES, rng.randint(0, 3))}
        if inline:
            spec.append("    substitute:\n" + "".join(f"      {k}: {q(v)}\n" for k, v in inline.items()))
        refs = []
        for i in range(rng.randint(0, 2)):
            kind = rng.choice(["ConfigMap", "Secret"])
            optional = rng.random() < 0.3
            present = not optional or rng.random() < 0.5
            refs.append(f"    - kind: {kind}\n      name: vars{i}\n" + ("      optional: true\n" if optional else ""))
            if present:
                data = {n: rng.choice(VALUES) for n in rng.sample(NAMES, rng.randint(1, 3))}
                field = "data" if kind == "ConfigMap" else "stringData"
                objects.append(f"apiVersion: v1\nkind: {kind}\nmetadata:\n  name: vars{i}\n  namespace: flux-system\n"
                               f"{field}:\n" + "".join(f"  {k}: {q(v)}\n" for k, v in data.items()))
        if refs:
            spec.append("    substituteFrom:\n" + "".join(refs))
    text = ("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n"
            "  namespace: flux-system\nspec:\n" + "".join(spec))
    return text, "---\n".join(objects), subst


def run(cmd, cwd):
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60)
        return r.returncode == 0, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return False, "", "timeout"


def one(seed, ply, oracle, work):
    rng = random.Random(seed)
    d = pathlib.Path(work) / f"case{seed}"
    src = d / "src"
    src.mkdir(parents=True)
    subst = rng.random() < 0.85
    files = tree(rng, subst)
    for f, t in files.items():
        p = src / f
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(t)
    ks_text, objects, _ = ks(rng, files)
    (d / "ks.yaml").write_text(ks_text)
    (d / "vars.yaml").write_text(objects + "\n")
    strict = rng.random() < 0.6
    owner = rng.random() < 0.7
    pc = [ply, "render", "--flux-kustomization", str(d / "ks.yaml"), str(src), "--repo-root", str(src),
          "--json-lines", "--vars", str(d / "vars.yaml"), f"--strict-substitute={str(strict).lower()}"]
    if not owner:
        pc.append("--no-owner-labels")
    oc = [oracle, "--ks", str(d / "ks.yaml"), "--root", str(src), "--objects", str(d / "vars.yaml"),
          f"--strict={str(strict).lower()}", f"--owner-labels={str(owner).lower()}"]
    p_ok, p_out, p_err = run(pc, d)
    o_ok, o_out, o_err = run(oc, d)
    if p_ok and o_ok and p_out == o_out:
        result = "same"
    elif not p_ok and not o_ok:
        result = "both-fail"
    else:
        dump = "".join(f"--- {f}\n{t}" for f, t in sorted(files.items()))
        return "differ", (f"seed {seed}: strict={strict} owner={owner}\n--- ks.yaml\n{ks_text}--- vars.yaml\n{objects}\n"
                          f"{dump}=== ply ({'ok' if p_ok else 'failed'})\n{p_out}{p_err}"
                          f"=== oracle ({'ok' if o_ok else 'failed'})\n{o_out}{o_err}")
    shutil.rmtree(d)
    return result, ""


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--ply", required=True)
    a.add_argument("--oracle", required=True)
    a.add_argument("--seconds", type=float, default=0)
    a.add_argument("--cases", type=int, default=0)
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--jobs", type=int, default=1)
    args = a.parse_args()
    if not args.seconds and not args.cases:
        args.seconds = 60
    ply, oracle = os.path.abspath(args.ply), os.path.abspath(args.oracle)
    start = time.monotonic()
    counts = {"same": 0, "both-fail": 0, "differ": 0}
    with tempfile.TemporaryDirectory(prefix="differential-flux-") as work, \
            concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        # Cases run `--jobs` at a time (each is two subprocesses); they start in seed order and
        # stop being started once the time is up or N cases have started.
        pending = set()
        i = 0
        while True:
            done_starting = (args.cases and i >= args.cases) or (
                args.seconds and time.monotonic() - start > args.seconds)
            if not done_starting and len(pending) < args.jobs:
                pending.add(pool.submit(one, args.seed + i, ply, oracle, work))
                i += 1
                continue
            if not pending:
                break
            finished, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for f in finished:
                result, report = f.result()
                counts[result] += 1
                if report:
                    print(report, file=sys.stderr)
    total = sum(counts.values())
    print(f"{total} cases in {time.monotonic() - start:.0f} s: {counts['same']} rendered alike, "
          f"{counts['both-fail']} failing in both, {counts['differ']} disagreements")
    return 1 if counts["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
