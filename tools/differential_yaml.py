#!/usr/bin/env python3
"""Differential test of how ply reads and prints YAML values, against `kubectl kustomize`.

Generates small kustomization trees in families (seeded, deterministic per seed), renders each
with kubectl kustomize and with ply, and fails on every seed where they disagree: one succeeds
and the other fails, or the outputs differ byte for byte. For each disagreement it prints the
family, the seed, the input files and a diff, so that `--family F --seed S --count 1` replays it.

    tools/differential_yaml.py [--ply PATH] [--seed FIRST] [--count N] [--seconds S]
                               [--family NAME ...] [--jobs J] [--per-family]

Families:
  styles       data values and sequence items in every scalar style: plain, quoted with
               escapes (some spelling numbers), literal, folded (more-indented lines, leading
               spaces, kept breaks), anchors (some redefined) and aliases, tags (!!str,
               verbatim, !!binary); on their key's line or the next, items nested or after a
               comment
  annotations  annotation and label values in every spelling of a number, boolean and null,
               folded, maps and lists as annotation values
  multiline    multi-line and tab-led values in annotations and generated ConfigMaps
  patches      generated and listed objects patched by targeted and untargeted strategic merge
               patches, patchesStrategicMerge and JSON 6902 patches, and generators with
               behavior: merge / replace; label and annotation values in every spelling
  nulls        nulls and empty values in objects that a strategic merge patch touches
  lists        merge-keyed lists (Service ports on port and protocol, containers, their ports,
               env, volume mounts, volumes, image pull secrets) with missing and repeated keys,
               patched by strategic merge patches (patches, inline targeted patches and
               patchesStrategicMerge) that add, merge, delete ($patch: delete | replace |
               merge on elements, lists and maps), send nulls, $setElementOrder,
               $retainKeys and $deleteFromPrimitiveList, and bring lists and objects the
               object does not have; finalizers, resources, args and tolerations beside
               them; an inline targeted patch may hit two Deployments
  crds         multi-document files of CustomResourceDefinitions (deep openAPIV3Schema:
               properties several levels down, items, x-kubernetes-validations), ConfigMaps and
               kyverno-like policies whose rules, descriptions, patterns and messages are
               multi-line plain scalars folded before every indicator character (& * ! | > ' "
               % @ ` \\ # - ? : , [ ] { }) at every indentation past their parent, after a key
               on its line or alone on its line, after `- ` or a lone `-`, in indentless
               sequences; real anchors and aliases beside them (named Z and Y too, redefined);
               now and then a `: x` line, which kubectl refuses (ply must too)
  tags         scalars under explicit core tags (!!null, !!bool, !!int, !!float, !!timestamp,
               !!binary, !!str, !!map, !!seq; short and verbatim) in annotations, labels,
               data and elsewhere: values mostly of the tag's kind in odd spellings (bases,
               underscores, signs, exponents, every null, dates with times and zones), quoted
               or plain, on the key's line or the next, after a comment, as block and flow
               items, under anchors and aliases; now and then a value of another kind, which
               kubectl refuses (ply must too)
  hostile      inputs kustomize reads though they look broken: UTF-16 files with a byte
               order mark (resources, patches, kustomizations; a UTF-16 file's first
               document only), trailing commas in nested flow collections (`[a, ]`,
               `{k: v, }`), kustomization files of several documents (the first is read, the
               rest, even broken YAML, ignored; an empty first document is an empty
               kustomization)
  json6902     JSON 6902 patches (inline targeted `patches:`, patch files, `patchesJson6902:`)
               of 1 to 4 operations (mostly 1 or 2) of every kind (add, remove, replace, move, copy, test) on
               a Deployment and a ConfigMap, with every path form evanphx/json-patch v4 reads:
               leading slash or none (the first part dropped), `/`, list indices with leading
               zeros, a sign, negative, `-`, out of range or not a number, keys with `~0`/`~1`,
               missing parents; `replace` of the whole document (path "") with an object
               (with or without kind), `test` with matching and other values, `move` into its
               own child, and now and then a field missing (`value`, `from`, `path`, `op`).
               Never `replace ""` with a value that is not an object: kustomize v5.5.0 skips
               it silently, a deliberate difference (docs/compatibility.md)
  workloads    the same pod specs in every workload kind (Deployment, StatefulSet, DaemonSet,
               Job, CronJob, Pod), webhooks keyed by name, and a custom resource without a
               schema (its lists replaced), patched the same way

`--kustomize-version 5.8.1` renders with that flag against `kubectl-1.37` (kustomize v5.8.1);
the default is 5.5.0 against `kubectl` (1.32).

Python 3 standard library only; needs kubectl (kustomize v5.5) on PATH. Exits 1 when any seed
disagrees. Run by .ci/run for a bounded time (see the block there).
"""
import argparse, concurrent.futures, difflib, os, random, shutil, subprocess, sys, tempfile, time

# Spellings of non-string scalars (go-yaml v3 resolution) and strings that look like them.
NUMBERS = ["0", "7", "08", "017", "0o17", "0x1F", "0X1f", "1_000", "+1", "-3", "1.50", ".5",
           "1e3", "1E-7", "2.0", "12345"]
BOOLS = ["true", "True", "TRUE", "false", "False", "FALSE"]
NULLS = ["~", "null", "Null", "NULL"]
WORDS = ["a", "yes", "no", "on", "off", "y", "n", "x y", "app", "v1.2", "1.2.3", "a-b", "<<"]
QUOTED = ['"1"', "'2'", '"0x10"', '"true"', '"~"', '"\\x31"', '"\\u0030x1F"', '"1\\x2e5"',
          '"a\\tb"', '"\\x41\\u00e9"', '"line\\nnext"', "'it''s'", '"\\"q\\""', '"\\\\"']


def scalar(rng, nulls=True):
    pools = [NUMBERS, BOOLS, WORDS, QUOTED] + ([NULLS] if nulls else [])
    return rng.choice(rng.choice(pools))


def folded(rng, indent):
    pad = " " * indent
    header = rng.choice([">", ">-", ">+", ">2", ">-2"])
    lines = []
    lead = header.endswith("2")
    for i in range(rng.randint(1, 5)):
        kind = rng.random()
        if i == 0 and lead:
            lines.append(pad + "   " + rng.choice(WORDS))
        elif kind < 0.25:
            lines.append(pad + "    " + rng.choice(["more", "x  y", "- item"]))
        elif kind < 0.35:
            lines.append("")
        else:
            lines.append(pad + "  " + rng.choice(["one", "two words", "three"]))
    if header.startswith(">+") or rng.random() < 0.2:
        lines.append("")
    return header + "\n" + "\n".join(lines)


def literal(rng, indent):
    pad = " " * indent
    header = rng.choice(["|", "|-", "|+"])
    lines = [pad + "  " + rng.choice(["echo hi", "  nested", "a: b", "x"]) for _ in range(rng.randint(1, 4))]
    return header + "\n" + "\n".join(lines)


def value(rng, indent, anchors, nulls=True):
    r = rng.random()
    if r < 0.2:
        return folded(rng, indent)
    if r < 0.3:
        return literal(rng, indent)
    if r < 0.4 and anchors:
        return "*" + rng.choice(anchors)
    if r < 0.47:
        return rng.choice(["!!str 0x10", "!<tag:yaml.org,2002:str> 12", "!!binary aGVsbG8=",
                           "!!str true", "!!binary |\n" + " " * (indent + 2) + "d29ybGQ="])
    return scalar(rng, nulls)


def kust(lines):
    return "\n".join(lines) + "\n"


def fam_styles(rng):
    anchors, data = [], []
    for i in range(rng.randint(2, 7)):
        v = value(rng, 2, anchors, nulls=False)
        if rng.random() < 0.3 and not v.startswith(("*", "!")):
            name = rng.choice(["a", "b", "c"])
            anchors.append(name)
            v = "&" + name + " " + v
        # On the key's line, or on the next one.
        sep = "\n    " if rng.random() < 0.25 else " "
        data.append(f"  k{i}:{sep}{v}")
    # The same styles as sequence items (`- >`, `- - >`, after a comment).
    items = []
    for i in range(rng.randint(0, 3)):
        v = value(rng, 0, anchors, nulls=False)
        lead = rng.choice(["- ", "- ", "- # c\n  ", "-\n  "])
        if rng.random() < 0.2 and not v.startswith("!!binary |"):
            items.append("- - " + v.replace("\n", "\n  "))
        else:
            items.append(lead + v)
    extra = ("items:\n" + "\n".join(items) + "\n") if items else ""
    cm = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: styles\ndata:\n" + "\n".join(data)
          + "\n" + extra)
    return {"kustomization.yaml": kust(["resources:", "- cm.yaml"]), "cm.yaml": cm}


def meta_map(rng, name, nulls=True, maps=True):
    out = []
    for i in range(rng.randint(1, 5)):
        if maps and rng.random() < 0.15:
            v = rng.choice(["{a: 1}", "[1, 2]", "{}", "[]"])
        elif rng.random() < 0.1:
            v = ""
        elif rng.random() < 0.1:
            v = folded(rng, 4)
        else:
            v = scalar(rng, nulls)
        out.append(f"    {name}{i}:" + (f" {v}" if v else ""))
    return out


def fam_annotations(rng):
    ann = meta_map(rng, "a")
    labels = meta_map(rng, "l", nulls=False, maps=False)
    cm = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n  annotations:\n"
          + "\n".join(ann) + "\n  labels:\n" + "\n".join(labels) + "\n")
    k = ["resources:", "- cm.yaml"]
    if rng.random() < 0.4:
        extra = rng.choice(["x", '"1"', "on"])
        k += ["commonAnnotations:", "  extra: " + extra]
    return {"kustomization.yaml": kust(k), "cm.yaml": cm}


def fam_multiline(rng):
    texts = ["\tx\ny\n", "x\n\ty\n", "\tonly\n", "a\tb", "\t\n", " lead\nb\n", "a\nb\n\n",
             "trail \nx\n", "x\n"]
    files = {}
    k = []
    if rng.random() < 0.5:
        t = rng.choice(texts)
        files["f.txt"] = t
        k += ["configMapGenerator:", "- name: gen", "  files:", "  - f.txt"]
    t = rng.choice(texts)
    quoted = '"' + t.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n") + '"'
    files["cm.yaml"] = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\n  annotations:\n"
                        f"    note: {quoted}\ndata:\n  v: {quoted}\n")
    k = ["resources:", "- cm.yaml"] + k
    files["kustomization.yaml"] = kust(k)
    return files


def fam_patches(rng, nulls=False):
    files = {}
    cm = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels:\n"
          + "\n".join(meta_map(rng, "l", nulls=nulls, maps=False))
          + "\n  annotations:\n" + "\n".join(meta_map(rng, "a", nulls=nulls, maps=False))
          + "\ndata:\n" + "\n".join(f"  d{i}: {scalar(rng, nulls)}" for i in range(rng.randint(1, 4))) + "\n")
    dep = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
           "spec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: x\n")
    files["objects.yaml"] = cm + "---\n" + dep
    k = ["resources:", "- objects.yaml"]
    smp = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n"
           + "\n".join(meta_map(rng, "p", nulls=nulls, maps=False)) + "\n")
    choice = rng.random()
    if choice < 0.3:
        k += ["patches:", "- target:", "    kind: Deployment", "  patch: |"]
        k += ["    " + line for line in smp.splitlines()]
    elif choice < 0.5:
        files["p.yaml"] = smp
        k += ["patches:", "- path: p.yaml"]
    elif choice < 0.7:
        files["p.yaml"] = smp
        k += ["patchesStrategicMerge:", "- p.yaml"]
    else:
        k += ["patches:", "- target:", "    kind: ConfigMap", "  patch: |-",
              "    - op: add", "      path: /metadata/annotations/added",
              f"      value: {rng.choice(['x', '1', 'true', '0x10'])}"]
    if rng.random() < 0.6:
        k += ["configMapGenerator:", "- name: settings",
              f"  behavior: {rng.choice(['merge', 'replace'])}",
              "  literals:", "  - new=x"]
    files["kustomization.yaml"] = kust(k)
    return files


def fam_nulls(rng):
    return fam_patches(rng, nulls=True)


# ---- family "lists": merge-keyed lists and the strategic merge patches kyaml walks ----------

def y(v, ind=0):
    """A small block-style YAML writer for the generated maps and lists."""
    pad = " " * ind
    if isinstance(v, dict):
        if not v:
            return " {}"
        out = []
        for k, x in v.items():
            if isinstance(x, (dict, list)) and x:
                out.append(f"{pad}{k}:" + y(x, ind + 2))
            else:
                out.append(f"{pad}{k}:" + (y(x, ind + 2) if isinstance(x, (dict, list)) else f" {x}"))
        return "\n" + "\n".join(out)
    if isinstance(v, list):
        if not v:
            return " []"
        out = []
        for x in v:
            if isinstance(x, dict) and x:
                out.append(f"{pad}- " + y(x, ind + 2).lstrip("\n").lstrip(" "))
            elif isinstance(x, (dict, list)):
                out.append(f"{pad}-" + y(x, ind + 2))
            else:
                out.append(f"{pad}- {x}")
        return "\n" + "\n".join(out)
    return f" {v}"


def doc(d):
    return y(d).lstrip("\n") + "\n"


def maybe(rng, p, d, k, v):
    if rng.random() < p:
        d[k] = v() if callable(v) else v


def directive(rng, d, side, p, words=("delete", "replace", "merge")):
    if side == "patch" and rng.random() < p:
        d["$patch"] = rng.choice(words)
    return d


def svc_port(rng, side):
    d = {}
    maybe(rng, 0.9, d, "port", lambda: rng.choice([53, 80, 443]))
    maybe(rng, 0.5, d, "protocol", lambda: rng.choice(["TCP", "UDP"]))
    maybe(rng, 0.6, d, "name", lambda: rng.choice(["a", "b", "dns"]))
    maybe(rng, 0.3, d, "targetPort", lambda: rng.choice([8080, "http"]))
    if side == "patch" and rng.random() < 0.08:
        d[rng.choice(["name", "targetPort"])] = "null"
    return directive(rng, d, side, 0.15)


def c_port(rng, side):
    d = {}
    maybe(rng, 0.9, d, "containerPort", lambda: rng.choice([80, 8080, 53]))
    maybe(rng, 0.4, d, "protocol", lambda: rng.choice(["TCP", "UDP"]))
    maybe(rng, 0.5, d, "name", lambda: rng.choice(["http", "m"]))
    return directive(rng, d, side, 0.1, ("delete", "replace"))


def env(rng, side):
    d = {}
    maybe(rng, 0.95, d, "name", lambda: rng.choice(["A", "B", "C"]))
    maybe(rng, 0.8, d, "value", lambda: rng.choice(["v", "w", '"1"']))
    if side == "patch" and rng.random() < 0.1:
        d["value"] = "null"
    return directive(rng, d, side, 0.1, ("delete", "replace"))


def mount(rng, side):
    d = {}
    maybe(rng, 0.95, d, "mountPath", lambda: rng.choice(["/a", "/b"]))
    maybe(rng, 0.8, d, "name", lambda: rng.choice(["v1", "v2"]))
    maybe(rng, 0.3, d, "readOnly", "true")
    return directive(rng, d, side, 0.1, ("delete",))


def seq(rng, make, side, lo, hi):
    items = [make(rng, side) for _ in range(rng.randint(lo, hi))]
    if side == "patch" and rng.random() < 0.08:
        items.insert(rng.randint(0, len(items)), {"$patch": rng.choice(["replace", "delete", "merge"])})
    if rng.random() < 0.04:
        items.insert(rng.randint(0, len(items)), {})
    return items


def resources(rng, side):
    d = {}
    maybe(rng, 0.6, d, "limits", lambda: {k: rng.choice(["1", "2Gi"]) for k in rng.sample(["cpu", "memory"], rng.randint(1, 2))})
    maybe(rng, 0.4, d, "requests", lambda: {"cpu": rng.choice(["1", "500m"])})
    return directive(rng, d, side, 0.2)


def container(rng, side):
    d = {}
    maybe(rng, 0.93, d, "name", lambda: rng.choice(["app", "side", "init"]))
    maybe(rng, 0.5, d, "image", lambda: rng.choice(["a", "b:1"]))
    maybe(rng, 0.2, d, "args", lambda: [rng.choice(["x", "y", "null"]) for _ in range(rng.randint(0, 3))])
    maybe(rng, 0.2, d, "resources", lambda: resources(rng, side))
    maybe(rng, 0.4, d, "ports", lambda: seq(rng, c_port, side, 0, 3))
    maybe(rng, 0.4, d, "env", lambda: seq(rng, env, side, 0, 3))
    maybe(rng, 0.25, d, "volumeMounts", lambda: seq(rng, mount, side, 0, 2))
    if side == "patch" and rng.random() < 0.1:
        d[rng.choice(["ports", "env", "image"])] = "null"
    if side == "patch" and rng.random() < 0.08 and d.get("env"):
        names = [e["name"] for e in d["env"] if isinstance(e, dict) and "name" in e]
        d["$setElementOrder/env"] = [{"name": n} for n in dict.fromkeys(names)]
    return directive(rng, d, side, 0.12)


def volume(rng, side):
    d = {}
    maybe(rng, 0.95, d, "name", lambda: rng.choice(["v1", "v2", "v3"]))
    src = rng.choice(["emptyDir", "configMap", "secret"])
    d[src] = {"emptyDir": {}, "configMap": {"name": "cm"}, "secret": {"secretName": "s"}}[src]
    if side == "patch" and rng.random() < 0.15:
        d["$retainKeys"] = [k for k in ("name", src) if k in d]
    return directive(rng, d, side, 0.1, ("delete", "replace"))


def pod_spec(rng, side):
    d = {}
    maybe(rng, 0.85, d, "containers", lambda: seq(rng, container, side, 1 if side == "object" else 0, 3))
    maybe(rng, 0.3, d, "initContainers", lambda: seq(rng, container, side, 0, 2))
    maybe(rng, 0.3, d, "volumes", lambda: seq(rng, volume, side, 0, 3))
    maybe(rng, 0.2, d, "imagePullSecrets", lambda: [{"name": rng.choice(["r1", "r2"])} for _ in range(rng.randint(0, 2))])
    maybe(rng, 0.15, d, "tolerations", lambda: [{"key": rng.choice(["k", "null"]), "operator": "Exists"} for _ in range(rng.randint(0, 2))])
    if side == "patch" and rng.random() < 0.05:
        d["$patch"] = rng.choice(["replace", "delete"])
    if side == "patch" and rng.random() < 0.08 and d.get("containers"):
        names = [c["name"] for c in d["containers"] if isinstance(c, dict) and "name" in c]
        d["$setElementOrder/containers"] = [{"name": n} for n in dict.fromkeys(names)]
    return d


def fam_lists(rng):
    files = {}
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}
    fins = lambda: [rng.choice(["f/a", "f/b", "f/c"]) for _ in range(rng.randint(0, 3))]
    maybe(rng, 0.2, svc["metadata"], "finalizers", fins)
    if rng.random() < 0.9:
        svc["spec"] = {"ports": seq(rng, svc_port, "object", 0, 4)}
    deps = [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": n},
             "spec": {"template": {"spec": pod_spec(rng, "object")}}}
            for n in (["d", "e"] if rng.random() < 0.25 else ["d"])]
    files["r.yaml"] = "---\n".join(doc(x) for x in [svc] + deps)
    docs = []
    for i in range(rng.randint(1, 3)):
        if rng.random() < 0.45:
            p = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                 "spec": {"ports": seq(rng, svc_port, "patch", 0, 3)}}
            maybe(rng, 0.2, p["metadata"], "finalizers", fins)
            if rng.random() < 0.1:
                p["metadata"]["$deleteFromPrimitiveList/finalizers"] = ["f/a"]
            if rng.random() < 0.08:
                p["spec"]["$setElementOrder/ports"] = [{"port": x} for x in (80, 53)]
        else:
            p = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                 "spec": {"template": {"spec": pod_spec(rng, "patch")}}}
        docs.append(p)
    return smp_kustomization(rng, files, docs, inline=True)


def smp_kustomization(rng, files, docs, inline):
    """Lists each patch of `docs` in a kustomization over r.yaml: as a `patches` path, an
    inline `patches` entry targeting its kind (when `inline`), or in patchesStrategicMerge."""
    k = ["resources:", "- r.yaml"]
    patches, psm = [], []
    for i, p in enumerate(docs):
        how = rng.random()
        if how < 0.4:
            files[f"p{i}.yaml"] = doc(p)
            patches.append(f"- path: p{i}.yaml")
        elif how < 0.6 and inline:
            patches += ["- target:", f"    kind: {p['kind']}", "  patch: |"]
            patches += ["    " + line for line in doc(p).splitlines()]
        else:
            files[f"p{i}.yaml"] = doc(p)
            psm.append(f"- p{i}.yaml")
    if patches:
        k += ["patches:"] + patches
    if psm:
        k += ["patchesStrategicMerge:"] + psm
    files["kustomization.yaml"] = kust(k)
    return files


# Workload kinds and where their pod spec sits.
WORKLOADS = [("apps/v1", "Deployment", ["spec", "template", "spec"]),
             ("apps/v1", "StatefulSet", ["spec", "template", "spec"]),
             ("apps/v1", "DaemonSet", ["spec", "template", "spec"]),
             ("batch/v1", "Job", ["spec", "template", "spec"]),
             ("batch/v1", "CronJob", ["spec", "jobTemplate", "spec", "template", "spec"]),
             ("v1", "Pod", ["spec"])]


def nest(path, leaf):
    for k in reversed(path):
        leaf = {k: leaf}
    return leaf


def webhook(rng, side):
    d = {}
    maybe(rng, 0.95, d, "name", lambda: rng.choice(["a.example.com", "b.example.com"]))
    maybe(rng, 0.5, d, "failurePolicy", lambda: rng.choice(["Fail", "Ignore"]))
    maybe(rng, 0.4, d, "rules", lambda: [{"operations": [rng.choice(["CREATE", "UPDATE"])]}
                                         for _ in range(rng.randint(0, 2))])
    return directive(rng, d, side, 0.1)


def fam_workloads(rng):
    """Pod specs of every workload kind, webhooks keyed by name and a custom resource (no
    schema: its lists are replaced), patched as the lists family patches."""
    files = {}
    kinds = rng.sample(WORKLOADS, rng.randint(1, 2))
    objs = []
    for av, kind, path in kinds:
        o = {"apiVersion": av, "kind": kind, "metadata": {"name": "w"}}
        o.update(nest(path, pod_spec(rng, "object")))
        objs.append(o)
    if rng.random() < 0.4:
        objs.append({"apiVersion": "admissionregistration.k8s.io/v1",
                     "kind": "MutatingWebhookConfiguration", "metadata": {"name": "m"},
                     "webhooks": seq(rng, webhook, "object", 0, 3)})
    if rng.random() < 0.3:
        objs.append({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "x"},
                     "spec": {"containers": seq(rng, container, "object", 0, 2)}})
    files["r.yaml"] = "---\n".join(doc(x) for x in objs)
    docs = []
    for _ in range(rng.randint(1, 3)):
        o = rng.choice(objs)
        p = {"apiVersion": o["apiVersion"], "kind": o["kind"], "metadata": {"name": o["metadata"]["name"]}}
        if o["kind"] == "MutatingWebhookConfiguration":
            p["webhooks"] = seq(rng, webhook, "patch", 0, 3)
        elif o["kind"] == "Widget":
            p["spec"] = {"containers": seq(rng, container, "patch", 0, 2)}
        else:
            path = next(w[2] for w in WORKLOADS if w[1] == o["kind"])
            p.update(nest(path, pod_spec(rng, "patch")))
        docs.append(p)
    return smp_kustomization(rng, files, docs, inline=False)


# Indicator characters, each starting a continuation line of a multi-line plain scalar
# (issue #25: a CEL rule folded before `&&` once read as an anchor and was renamed `&Z`).
INDICATORS = ["&", "*", "!", "|", ">", "'", '"', "%", "@", "`", "\\", "#", "-", "?", ":", ",",
              "[", "]", "{", "}"]
# Texts of a line's middle and end: no `: `, no ` #`, no final `:`.
SEGMENTS = ["self.spec.replicas", "<= self.maxReplicas", "has(self.x)", "size(self.name) < 64",
            "the value must be set", "a-b_c", "^[a-z]([-a-z0-9]*[a-z0-9])?$", "x#y", "a:b", "'q'",
            '"dq"', "{k:v}", "[0]", "50%", "&& self.y", "|| !self.z", "*x", "&a",
            "\\d+\\.\\d+", "@type", "`code`", "- not an item"]
FIRST = ["self", "The", "Rule", "spec.x", "value", "^[a-z]"]


def crd_plain(rng, parent, same_line, st):
    """A multi-line plain scalar whose parent collection stands at column `parent`, after a
    `key:` or `-` already written: its first line on that line or the next, then continuation
    lines at columns past `parent`, each starting with an indicator (doubled, then a space, or
    glued), blank lines between some; a `#` line is a comment that ends it. Now and then an
    anchor (names Z and Y too, some redefined) or an alias to one. `st["bad"]` lets one
    `: x` line through (kubectl fails on it; ply must too)."""
    if st["anchors"] and rng.random() < 0.2:
        return " *" + rng.choice(sorted(st["anchors"])) + "\n"
    seg = lambda: " ".join(rng.choice(SEGMENTS) for _ in range(rng.randint(1, 3)))
    anchor = ""
    if rng.random() < 0.15:
        name = rng.choice(["Z", "Y", "rule", "a"])
        st["anchors"].add(name)
        anchor = "&" + name + " "
    first = rng.choice(FIRST) + " " + seg()
    if same_line:
        out = " " + anchor + first
    else:
        out = (" " + anchor.strip() if anchor else "") + "\n" + " " * (parent + rng.randint(1, 6)) + first
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 4])):
        if rng.random() < 0.15:
            out += "\n" * rng.randint(1, 2)
        c = rng.choice(INDICATORS)
        how = rng.randrange(3)
        if c == ":" and not st["bad"]:
            how = 2
        elif c == ":" and how < 2:
            st["bad"] = False  # one failing line at most
        rest = seg()
        text = [c + c + " " + rest, c + " " + rest, c + rest][how]
        out += "\n" + " " * (parent + rng.randint(1, 6)) + text + ("  " if rng.random() < 0.2 else "")
        if c == "#":
            break
    return out + "\n"


def crd_schema(rng, col, depth, st):
    out = " " * col + "type: " + ("object" if depth else "string") + "\n"
    next_line = rng.random() < 0.4
    out += " " * col + "description:" + crd_plain(rng, col, not next_line, st)
    if depth == 0:
        if rng.random() < 0.6:
            out += " " * col + "pattern:" + crd_plain(rng, col, rng.random() < 0.6, st)
        if rng.random() < 0.4:
            out += crd_list(rng, col, "enum", st)
        return out
    if rng.random() < 0.7:
        out += " " * col + "x-kubernetes-validations:\n"
        dash = col if rng.random() < 0.4 else col + 2
        for _ in range(rng.randint(1, 3)):
            out += " " * dash + "- rule:" + crd_plain(rng, dash + 2, True, st)
            if rng.random() < 0.7:
                out += " " * (dash + 2) + "message:" + crd_plain(rng, dash + 2, rng.random() < 0.7, st)
    step = rng.randint(1, 4)
    out += " " * col + "properties:\n"
    for i in range(rng.randint(1, 3)):
        out += " " * (col + step) + f"field{depth}x{i}:\n"
        inner = col + step + rng.randint(1, 4)
        if rng.random() < 0.25:
            out += " " * inner + "type: array\n" + " " * inner + "items:\n"
            out += crd_schema(rng, inner + 2, depth - 1, st)
        else:
            out += crd_schema(rng, inner, depth - 1, st)
    if rng.random() < 0.3:
        out += crd_list(rng, col, "required", st)
    return out


def crd_list(rng, col, key, st):
    out = " " * col + key + ":\n"
    dash = col if rng.random() < 0.4 else col + rng.randint(1, 3)
    for _ in range(rng.randint(1, 3)):
        out += " " * dash + "-" + crd_plain(rng, dash, rng.random() < 0.6, st)
    return out


def fam_crds(rng):
    """Multi-document files of CRDs with deep openAPIV3Schema trees, ConfigMaps and
    kyverno-like policies whose rules, descriptions, patterns, messages and annotations are
    multi-line plain scalars folded before every indicator character at every indentation,
    beside real anchors and aliases (some redefined)."""
    docs = []
    st = {"bad": rng.random() < 0.05}
    for n in range(rng.randint(2, 5)):
        st["anchors"] = set()  # anchors belong to their document
        r = rng.random()
        if r < 0.5:
            dash = rng.choice([2, 4])
            step = rng.randint(1, 4)
            d = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                 f"metadata:\n  name: widgets{n}.example.com\nspec:\n  group: example.com\n"
                 f"  names:\n    kind: Widget{n}\n    plural: widgets{n}\n  scope: Namespaced\n"
                 f"  versions:\n{' ' * dash}- name: v1\n{' ' * (dash + 2)}served: true\n"
                 f"{' ' * (dash + 2)}storage: true\n{' ' * (dash + 2)}schema:\n"
                 f"{' ' * (dash + 2 + step)}openAPIV3Schema:\n")
            d += crd_schema(rng, dash + 4 + step, rng.randint(1, 4), st)
        elif r < 0.75:
            d = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{n}\n  annotations:\n"
            d += "    policies.kyverno.io/description:" + crd_plain(rng, 4, rng.random() < 0.6, st)
            d += "data:\n"
            for i in range(rng.randint(1, 4)):
                d += f"  k{i}:" + crd_plain(rng, 2, rng.random() < 0.6, st)
        else:
            d = (f"apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: policy{n}\n"
                 "  annotations:\n    policies.kyverno.io/title:" + crd_plain(rng, 4, True, st)
                 + "spec:\n  rules:\n")
            dash = rng.choice([2, 4])
            for i in range(rng.randint(1, 3)):
                d += " " * dash + f"- name: rule{i}\n" + " " * (dash + 2) + "validate:\n"
                d += " " * (dash + 4) + "message:" + crd_plain(rng, dash + 4, rng.random() < 0.6, st)
                d += " " * (dash + 4) + "cel:\n" + " " * (dash + 6) + "expressions:\n"
                d += " " * (dash + 6) + "- expression:" + crd_plain(rng, dash + 8, True, st)
        docs.append(d)
    text = rng.choice(["", "---\n"]) + "".join(
        (rng.choice(["---\n", "--- # next\n", "---\n# c\n"]) if i else "") + d
        for i, d in enumerate(docs))
    return {"kustomization.yaml": kust(["resources:", "- r.yaml"]), "r.yaml": text}


# Values of each core tag's kind, in odd spellings, for the `tags` family.
TAGGED = {
    "null": ["~", "null", "Null", "NULL", "", '""', "''"],
    "bool": ["true", "True", "FALSE", "false"],
    "int": ["0", "017", "0o17", "0x1F", "0X1f", "0b101", "-0b11", "1_000", "+12", "-3",
            "9223372036854775807", "18446744073709551615"],
    "float": ["1", "1e3", "1.50", ".5", "-2.0", "1_0.5", "1E-7", "017", "0x10", "6.02e+23"],
    "timestamp": ["2001-12-14", "2001-1-2", "2001-12-14t21:59:43.10-05:00",
                  "2001-12-14T21:59:43Z", "2001-12-14 21:59:43.10", "2024-02-29T01:02:03.123456789+00:00",
                  "2001-12-14T21:59:43.100000000+01:30"],
    "binary": ["aGVsbG8=", "aGk=", "MTIz", "eA=="],
    "str": ["0x1F", "true", "~", "1e3", "2001-12-14", "x y"],
}


def tagged_value(rng):
    """A tag and a scalar (or an empty collection) under it, written in one of its spellings."""
    kind = rng.choice(sorted(TAGGED) + ["map", "seq"])
    tag = rng.choice([f"!!{kind}", f"!<tag:yaml.org,2002:{kind}>"]) if rng.random() < 0.2 else f"!!{kind}"
    if kind == "map":
        return f"{tag} {{}}"
    if kind == "seq":
        return f"{tag} []"
    pool = TAGGED[kind] if rng.random() < 0.9 else sum(TAGGED.values(), []) + WORDS
    v = rng.choice(pool)
    if v and not v.startswith(("'", '"')) and rng.random() < 0.2:
        v = rng.choice(['"%s"', "'%s'"]) % v
    return f"{tag}{rng.choice([' ', '  ', ' '])}{v}{rng.choice(['', '', '  # c'])}".rstrip() \
        if v or rng.random() < 0.5 else tag


def tagged_entry(rng, key, indent):
    """`key: value` at `indent`, the value tagged, on the key's line or the next, maybe anchored."""
    pad = " " * indent
    tv = tagged_value(rng)
    if rng.random() < 0.15 and " " in tv and not tv.endswith("# c"):
        tag, v = tv.split(" ", 1)
        return f"{pad}{key}: {tag}\n{pad}  {v.strip()}"
    if rng.random() < 0.1:
        return f"{pad}{key}: &{key} {tv}"
    return f"{pad}{key}: {tv}"


def fam_tags(rng):
    ann = [tagged_entry(rng, f"a{i}", 4) for i in range(rng.randint(1, 4))]
    labels = [tagged_entry(rng, f"l{i}", 4) for i in range(rng.randint(0, 2))]
    data = [tagged_entry(rng, f"d{i}", 2) for i in range(rng.randint(0, 3))]
    spec = [tagged_entry(rng, f"s{i}", 2) for i in range(rng.randint(0, 3))]
    if rng.random() < 0.5:
        spec.append("  items:\n" + "\n".join(f"  - {tagged_value(rng)}" for _ in range(rng.randint(1, 3))))
    if rng.random() < 0.4:
        flow = [tagged_value(rng).replace("  # c", "") for _ in range(rng.randint(1, 3))]
        spec.append("  flow: [" + ", ".join(flow) + "]")
    anchors = [l.split(":")[0].strip() for l in ann + data + spec if ": &" in l]
    if anchors:
        spec.append(f"  alias: *{rng.choice(anchors)}")
    cm = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tags\n  annotations:\n"
          + "\n".join(ann) + "\n"
          + ("  labels:\n" + "\n".join(labels) + "\n" if labels else "")
          + ("data:\n" + "\n".join(data) + "\n" if data else "")
          + ("spec:\n" + "\n".join(spec) + "\n" if spec else ""))
    k = ["resources:", "- cm.yaml"]
    if rng.random() < 0.3:
        k += ["commonAnnotations:", "  extra: x"]
    if rng.random() < 0.2:
        k += ["commonLabels:", "  extra: x"]
    return {"kustomization.yaml": kust(k), "cm.yaml": cm}


def flow_value(rng, depth=0):
    """A flow collection (or a scalar) where any entry may be followed by a trailing `, `."""
    r = rng.random()
    if depth >= 3 or r < 0.35:
        return rng.choice(["a", "1", "x y", '"q,"', "'s'", "true", "~", "é☃"])
    items = [flow_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    comma = rng.choice([", ", ",", " , ", ",\n  "]) if items and rng.random() < 0.6 else ""
    if r < 0.65:
        return "[" + ", ".join(items) + comma + "]"
    pairs = [f"k{i}: {v}" for i, v in enumerate(items)]
    return "{" + ", ".join(pairs) + comma + "}"


def utf16(rng, text):
    """`text` as UTF-16 with a byte order mark, little or big endian."""
    if rng.random() < 0.5:
        return b"\xff\xfe" + text.encode("utf-16-le")
    return b"\xfe\xff" + text.encode("utf-16-be")


def fam_hostile(rng):
    """Inputs kustomize reads though they look broken: UTF-16 files with a byte order mark
    (resources, kustomizations, patches; only a UTF-16 file's first document is read),
    trailing commas in nested flow collections, kustomization files of several documents
    (only the first is read; the rest may be anything, even broken YAML)."""
    files = {}
    data = "\n".join(f"  d{i}: {flow_value(rng)}" for i in range(rng.randint(1, 4)))
    meta = rng.choice(["metadata:\n  name: cm\n", "metadata: {name: cm, }\n",
                       "metadata: {name: cm,\n  labels: {a: b, },\n  }\n"])
    cm = "apiVersion: v1\nkind: ConfigMap\n" + meta + "data:\n" + data + "\n"
    if rng.random() < 0.3:
        cm += "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: second\n"
    files["cm.yaml"] = utf16(rng, cm) if rng.random() < 0.3 else cm
    k = ["resources:", "- cm.yaml"] if rng.random() < 0.7 else ["resources: [cm.yaml, ]"]
    if rng.random() < 0.4:
        k += ["commonLabels: {team: " + rng.choice(["a", "b"]) + rng.choice([", ", ""]) + "}"]
    if rng.random() < 0.4:
        patch = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  p: "
                 + flow_value(rng) + "\n")
        files["patch.yaml"] = utf16(rng, patch) if rng.random() < 0.5 else patch
        k += ["patches:", "- path: patch.yaml"]
    text = kust(k)
    if rng.random() < 0.5:
        second = rng.choice(["resources:\n- other.yaml\n", "namePrefix: p-\n", ": : [\n",
                             "\"unterminated\n", "---\n", "# only a comment\n",
                             "kind: Component\n", "{bad: [}\n"])
        lead = rng.choice(["", "---\n", "# c\n---\n"])
        sep = rng.choice(["---\n", "--- # two\n", "...\n---\n"])
        if rng.random() < 0.1:
            text, second = "", text  # an empty first document: kustomize finds it empty
        text = lead + text + sep + second
    files["kustomization.yaml"] = utf16(rng, text) if rng.random() < 0.25 else text
    return files


# ---- family "json6902": JSON 6902 path forms and operations, as evanphx/json-patch v4 reads them

J_CONTAINERS = ["web", "side", "init"]


def j_index(rng, n):
    """A list index in one of the forms strconv.Atoi reads, or one it does not."""
    i = rng.randint(0, max(n, 1))
    if rng.random() < 0.7:
        i = rng.randint(0, n - 1)
        return rng.choice([str(i), "0" + str(i), "+" + str(i), "-" + str(rng.randint(1, n)), "-0"])
    return rng.choice([str(i), "-" + str(rng.randint(1, n + 2)), "-", "00", str(n + rng.randint(0, 2)),
                       " 1", "1e0", "x"])


def j_path(rng, n, kind):
    """A pointer into the Deployment (n containers) or the ConfigMap below, in some path form."""
    c = "/spec/template/spec/containers"
    meta = [
        lambda: "/metadata/labels/" + rng.choice(["app", "new", "x~1y"]),
        lambda: "/metadata/" + rng.choice(["annotations", "annotations/n", "labels", ""]),
        lambda: rng.choice(["/", "//x", "metadata/labels/app", "x/new", "replicas"]),
    ]
    if kind == "Deployment":
        forms = meta + [
            lambda: f"{c}/{j_index(rng, n)}",
            lambda: f"{c}/{j_index(rng, n)}",
            lambda: f"{c}/{j_index(rng, n)}/image",
            lambda: f"{c}/{j_index(rng, n)}/image",
            lambda: f"{c}/{j_index(rng, n)}/{rng.choice(['name', 'args', 'env'])}",
            lambda: f"{c}/0/args/{j_index(rng, 2)}",
            lambda: f"{c}/0/args/{j_index(rng, 2)}",
            lambda: rng.choice(["spec/replicas", "spec/template/spec/containers/0/image",
                                "spec/paused", "x/spec/replicas"]),
            lambda: "/spec/" + rng.choice(["replicas", "paused", "missing/child", "template/spec"]),
        ]
    else:
        forms = meta + [
            lambda: "/data/" + rng.choice(["a", "b", "new"]),
            lambda: "/data/" + rng.choice(["a", "b", "new", "a~1b", "t~0", "-", "01", ""]),
            lambda: "/list/" + j_index(rng, 3),
            lambda: rng.choice(["data/a", "data", "x/data", "/data/list/" + j_index(rng, 3),
                                "/data/list"]),
        ]
    return rng.choice(forms)()


def j_value(rng):
    return rng.choice(['"v"', "3", "true", "null", "[1, 2]", '{"k": "v"}', '"0x10"', "1.50",
                      '{"name": "added", "image": "busybox"}', '"y"', "[]", "{}"])


def fam_json6902(rng):
    n = rng.randint(1, 3)
    conts = "".join(f"      - name: {J_CONTAINERS[i]}\n        image: img{i}:1\n"
                    f"        args: [a{i}, b{i}]\n" for i in range(n))
    dep = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n"
           "    app: web\n    x/y: z\nspec:\n  replicas: 2\n  template:\n    spec:\n"
           "      containers:\n" + conts)
    cm = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n"
          + rng.choice(["", "  annotations:\n    n: \"1\"\n"])
          + "data:\n  a: \"1\"\n  b: two\n  a/b: slash\n  t~: tilde\n"
          + rng.choice(["", "  list: x\n", "list: [p, q, r]\n"]))
    files = {"objects.yaml": dep + "---\n" + cm}
    target_kind = rng.choice(["Deployment", "ConfigMap", "Deployment"])
    ops = []
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(["add", "add", "remove", "replace", "replace", "move", "copy", "test"])
        o = {"op": op, "path": j_path(rng, n, target_kind)}
        if op in ("add", "replace", "test"):
            o["value"] = j_value(rng)
        if op in ("move", "copy"):
            o["from"] = j_path(rng, n, target_kind)
        r = rng.random()
        if r < 0.06:
            o["path"] = ""
            o["op"] = "replace"
            o.pop("from", None)
            kind = rng.choice(["ConfigMap", "Deployment", None])
            meta = '{"name": "cfg"}' if kind == "ConfigMap" else '{"name": "web"}'
            o["value"] = ("{" + (f'"apiVersion": "v1", "kind": "{kind}", ' if kind else "")
                          + f'"metadata": {meta}, "data": {{"r": "1"}}}}')
        elif r < 0.09 and op == "move":
            o["from"] = "/spec/template"
            o["path"] = "/spec/template/spec/x"
        elif r < 0.13:
            drop = rng.choice(["value", "from", "path", "op"])
            o.pop(drop, None)
        elif r < 0.16 and op == "test":
            o["value"] = '"img0:1"'
            o["path"] = "/spec/template/spec/containers/" + rng.choice(["0", "-" + str(n), "00", "+0"]) + "/image"
        ops.append(o)
    lines = []
    for o in ops:
        first = True
        for k in ("op", "from", "path", "value"):
            if k in o:
                v = o[k] if k == "value" else '"' + o[k] + '"'
                lines.append(("- " if first else "  ") + f"{k}: {v}")
                first = False
        if first:
            lines.append("- {}")
    if any(o.get("path") == "" and o.get("op") == "replace" for o in ops):
        # The whole document replaced: its value names the object it was written for.
        for o in ops:
            if o.get("path") == "" and '"kind"' in o.get("value", ""):
                target_kind = "ConfigMap" if "ConfigMap" in o["value"] else "Deployment"
    name = "cfg" if target_kind == "ConfigMap" else "web"
    version = "v1" if target_kind == "ConfigMap" else "v1"
    group = "" if target_kind == "ConfigMap" else "apps"
    k = ["resources:", "- objects.yaml"]
    how = rng.random()
    if how < 0.45:
        k += ["patches:", "- target:", f"    kind: {target_kind}", "  patch: |-"]
        k += ["    " + line for line in lines]
    elif how < 0.75:
        files["ops.yaml"] = "\n".join(lines) + "\n"
        k += ["patches:", "- path: ops.yaml", "  target:", f"    kind: {target_kind}", f"    name: {name}"]
    else:
        files["ops.yaml"] = "\n".join(lines) + "\n"
        k += ["patchesJson6902:", "- target:"] + ([f"    group: {group}"] if group else []) + [
              f"    version: {version}", f"    kind: {target_kind}", f"    name: {name}",
              "  path: ops.yaml"]
    files["kustomization.yaml"] = kust(k)
    return files


FAMILIES = {"styles": fam_styles, "annotations": fam_annotations, "multiline": fam_multiline,
            "patches": fam_patches, "nulls": fam_nulls, "lists": fam_lists,
            "workloads": fam_workloads, "crds": fam_crds, "tags": fam_tags,
            "hostile": fam_hostile, "json6902": fam_json6902}


# The kubectl that embeds each kustomize version ply renders as (.ci/run installs kubectl-1.37).
ORACLES = {"5.5.0": "kubectl", "5.8.1": "kubectl-1.37"}


def render(cmd, d):
    try:
        p = subprocess.run(cmd + [d], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    return p.returncode, p.stdout


def check(args, family, seed):
    rng = random.Random(f"{family}:{seed}")
    files = FAMILIES[family](rng)
    with tempfile.TemporaryDirectory() as t:
        for name, text in files.items():
            with open(os.path.join(t, name), "wb") as f:
                f.write(text if isinstance(text, bytes) else text.encode())
        krc, kout = render([args.kubectl, "kustomize"], t)
        prc, pout = render([args.ply, "render", "--kustomize-version", args.kustomize_version], t)
    agree = (krc != 0 and prc != 0) or (krc == 0 and prc == 0 and kout == pout)
    if agree:
        return None
    report = [f"DISAGREE family={family} seed={seed}: kubectl exit {krc}, ply exit {prc}"]
    for name, text in files.items():
        if isinstance(text, bytes):
            text = f"(UTF-16, {text[:2].hex()})\n" + text[2:].decode(
                "utf-16-le" if text[:2] == b"\xff\xfe" else "utf-16-be")
        report.append(f"--- input {name}\n{text}")
    if krc == 0 and prc == 0:
        report.append("".join(difflib.unified_diff(kout.splitlines(True), pout.splitlines(True),
                                                   "kubectl", "ply")))
    else:
        report.append(f"kubectl output:\n{kout}\nply output:\n{pout}")
    return "\n".join(report)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ply", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "ply"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=1000000)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--kustomize-version", default="5.5.0", choices=sorted(ORACLES),
                    help="the version ply renders as; its kubectl is the oracle")
    ap.add_argument("--per-family", action="store_true",
                    help="print each family's cases, disagreements and agreement before the total")
    a = ap.parse_args()
    a.ply = os.path.abspath(a.ply)
    a.kubectl = ORACLES[a.kustomize_version]
    if not shutil.which(a.kubectl):
        sys.exit(f"differential_yaml: {a.kubectl} is not on PATH (it is the oracle)")
    families = a.family or sorted(FAMILIES)
    deadline = time.monotonic() + a.seconds
    done = failed = 0
    per_family = {f: [0, 0] for f in families}
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        seed = a.seed
        while seed < a.seed + a.count and time.monotonic() < deadline:
            batch = [(f, s) for s in range(seed, min(seed + 8, a.seed + a.count)) for f in families]
            for (family, _), report in zip(batch, ex.map(lambda fs: check(a, *fs), batch)):
                done += 1
                per_family[family][0] += 1
                if report:
                    failed += 1
                    per_family[family][1] += 1
                    print(report, flush=True)
            seed += 8
    if a.per_family:
        for f, (n, bad) in per_family.items():
            share = 100.0 * (n - bad) / n if n else 0.0
            print(f"  {f:12} {n:6} cases, {bad:4} disagreements, {share:6.2f}% agree")
    print(f"differential_yaml: kustomize {a.kustomize_version} ({a.kubectl}), "
          f"families {','.join(families)}, seeds {a.seed}..{seed - 1}: "
          f"{done} cases, {failed} disagreements")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
