#!/usr/bin/env python3
"""Generate the two kustomize shapes where patch selection used to grow faster than the input
(issue 14, item 1). Standard library only; the same arguments give the same bytes.

Usage:
    gen_corners.py targeted OUT --objects N
        One kustomization with N objects (ConfigMaps, Services and Deployments in turn) and one
        `patches:` entry per object, targeted by kind and exact name (a tenth of them also by
        namespace or label selector), plus three regex-named targets.
    gen_corners.py chain OUT --depth D --objects N [--plain]
        A base with N objects and D overlays stacked on it, each adding `namePrefix: lK-`
        (none with --plain) and one untargeted strategic-merge patch and one targeted patch,
        both naming an object by its base name (kustomize matches the original id too).
        Build OUT/lD.

The issue's sizes: 10 objects per app, so N=100 and N=1000 for 10 and 100 apps.
"""

import argparse
import os
import shutil


def obj(i):
    """The i-th object of a base: kind, name and YAML text."""
    name = f"obj-{i:05d}"
    k = i % 3
    if k == 0:
        return "ConfigMap", name, (
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"
            f"  labels:\n    tier: t{i % 4}\ndata:\n  key: value-{i}\n"
        )
    if k == 1:
        return "Service", name, (
            f"apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  namespace: ns{i % 2}\n"
            f"  labels:\n    tier: t{i % 4}\nspec:\n  selector:\n    app: {name}\n"
            "  ports:\n  - port: 80\n    targetPort: 8080\n"
        )
    return "Deployment", name, (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n"
        f"  labels:\n    tier: t{i % 4}\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n"
        f"      app: {name}\n  template:\n    metadata:\n      labels:\n        app: {name}\n"
        f"    spec:\n      containers:\n      - name: main\n        image: example/{name}:1\n"
    )


def patch_body(i, value):
    """An inline strategic-merge patch for the i-th object."""
    kind, name, _ = obj(i)
    if kind == "ConfigMap":
        return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  patched: {value}\n"
    if kind == "Service":
        return (
            f"apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  namespace: ns{i % 2}\n"
            f"  annotations:\n    patched: {value}\n"
        )
    return f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: 2\n"


def indent(text, n):
    pad = " " * n
    return "".join(pad + line + "\n" for line in text.splitlines())


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def base(out, n):
    docs = "---\n".join(obj(i)[2] for i in range(n))
    write(os.path.join(out, "resources.yaml"), docs)


def targeted(out, n):
    base(out, n)
    lines = ["apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization",
             "resources:", "- resources.yaml", "patches:"]
    for i in range(n):
        kind, name, _ = obj(i)
        lines.append("- target:")
        lines.append(f"    kind: {kind}")
        lines.append(f"    name: {name}")
        if i % 10 == 3 and kind == "Service":
            lines.append(f"    namespace: ns{i % 2}")
        if i % 10 == 7:
            lines.append(f"    labelSelector: tier=t{i % 4}")
        lines.append("  patch: |-")
        lines.append(indent(patch_body(i, f"p{i}"), 4).rstrip("\n"))
    # A few targets by regular expression: they still scan.
    for j, pattern in enumerate(["obj-0000[0-9]", "obj-.*5", "obj-0001."]):
        lines.append("- target:")
        lines.append("    kind: ConfigMap")
        lines.append(f"    name: {pattern}")
        lines.append("  patch: |-")
        lines.append(indent(patch_body(0, f"re{j}"), 4).rstrip("\n"))
    write(os.path.join(out, "kustomization.yaml"), "\n".join(lines) + "\n")


def chain(out, depth, n, plain):
    base(os.path.join(out, "l0"), n)
    write(os.path.join(out, "l0", "kustomization.yaml"), "resources:\n- resources.yaml\n")
    for k in range(1, depth + 1):
        i, i2 = (k * 7) % n, (k * 11 + 1) % n
        kind2, name2, _ = obj(i2)
        lines = ["resources:", f"- ../l{k - 1}"]
        if not plain:
            lines.append(f"namePrefix: l{k}-")
        lines.append("patches:")
        lines.append("- patch: |-")
        lines.append(indent(patch_body(i, f"l{k}"), 4).rstrip("\n"))
        lines.append("- target:")
        lines.append(f"    kind: {kind2}")
        lines.append(f"    name: {name2}")
        lines.append("  patch: |-")
        lines.append(indent(patch_body(i2, f"t{k}"), 4).rstrip("\n"))
        write(os.path.join(out, f"l{k}", "kustomization.yaml"), "\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shape", choices=["targeted", "chain"])
    ap.add_argument("out")
    ap.add_argument("--objects", type=int, required=True)
    ap.add_argument("--depth", type=int, default=16)
    ap.add_argument("--plain", action="store_true")
    a = ap.parse_args()
    if a.objects < 1:
        ap.error("--objects must be at least 1")
    shutil.rmtree(a.out, ignore_errors=True)
    if a.shape == "targeted":
        targeted(a.out, a.objects)
    else:
        chain(a.out, a.depth, a.objects, a.plain)


if __name__ == "__main__":
    main()
