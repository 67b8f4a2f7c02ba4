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
               folded, maps and lists as annotation values; annotations under core and custom
               tags (block forms too: `!!binary |`), floats in exponent form, keys written
               with escapes (`"a\\nx":`, `'a''s':`)
  multiline    multi-line and tab-led values in annotations and generated ConfigMaps
  patches      generated and listed objects patched by targeted and untargeted strategic merge
               patches, patchesStrategicMerge and JSON 6902 patches, and generators with
               behavior: merge / replace; label and annotation values in every spelling
  nulls        nulls and empty values in objects that a strategic merge patch touches, and
               values written as nothing in a resource's flow mappings (`{k: }`, `{? k}`);
               patches bringing lists kustomize copies as written (args, tolerations, a kind
               without a schema) whose flow mappings hold empty values
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
               kustomization); flow sequences of resources and patches with comments inside,
               in a kustomization and a Component
  json6902     JSON 6902 patches (inline targeted `patches:`, patch files, `patchesJson6902:`)
               of 1 to 4 operations (mostly 1 or 2) of every kind (add, remove, replace, move, copy, test) on
               a Deployment and a ConfigMap, with every path form evanphx/json-patch v4 reads:
               leading slash or none (the first part dropped), `/`, list indices with leading
               zeros, a sign, negative, `-`, out of range or not a number, keys with `~0`/`~1`,
               missing parents; `replace` of the whole document (path "") with an object
               (with or without kind), `test` with matching and other values, `move` into its
               own child, and now and then a field missing (`value`, `from`, `path`, `op`);
               the objects sometimes from a base that renamed them (namePrefix,
               nameSuffix, namespace), so that the patch meets kustomize's build annotations.
               Never `replace ""` with a value that is not an object: kustomize v5.5.0 skips
               it silently, a deliberate difference (docs/compatibility.md)
  keys         mapping keys in every spelling (numbers in every base, booleans, nulls,
               infinities, timestamps, base-60, YAML 1.1 words, quoted and !!str-tagged
               numbers, a plain, quoted and tagged `<<`) at every depth of a ConfigMap's data,
               labels and annotations and of a custom object (nested maps, list items, flow
               maps, aliases), merge keys beside quoted ones; and the keys kustomize writes
               itself: commonLabels, commonAnnotations, labels pairs, generatorOptions labels,
               and generator keys from literals, env files and file names
  tabs         multi-line values whose lines start with a tab: literal and folded blocks (with
               and without indentation indicators), plain and quoted scalars continued on
               tab-led lines, double-quoted escapes, in data and annotations; generator
               literals, env files and files (ConfigMap and Secret; alone, before or after
               another file, under a key, merged into a listed ConfigMap; holding characters
               go-yaml does not print in a block), generatorOptions and commonAnnotations
               values
  shared       a base whose labels/annotations transformers (labels with and without
               includeSelectors/includeTemplates, commonLabels, commonAnnotations) write one key
               into several maps of a Deployment and a Service, then later writers of that key
               in a component and an overlay: the transformers again, strategic merge patches
               (targeted or not) on one of the maps, JSON 6902 patches, replacements (whole or
               delimited, with create) and a namePrefix (kustomize shares one node between the
               maps until a writer puts a new one: docs/compatibility.md)
  workloads    the same pod specs in every workload kind (Deployment, StatefulSet, DaemonSet,
               Job, CronJob, Pod), webhooks keyed by name, and a custom resource without a
               schema (its lists replaced), patched the same way
  replacements typed replacements: a source of every type (a Deployment's int, float, bool,
               null, string, map and list fields, numbers in odd spellings; ConfigMap strings
               spelling numbers and booleans) into fields of every type, with source and
               target delimiters and indexes and `create`; sometimes a later replicas entry,
               strategic merge or JSON 6902 patch that overwrites or removes the target, or a
               `$patch: delete` of the object; replacements whose source object is also a
               target (delimiter, index, create; a generated ConfigMap among the targets)
  bigints      objects holding large integers (past 2^53, int64, uint64; other bases,
               exponents) patched by JSON 6902 add, replace, copy, move and remove
               operations written as JSON or YAML, inline or in a file, whose values
               are large integers too

`--kustomize-version 5.8.1` renders with that flag against `kubectl-1.37` (kustomize v5.8.1);
the default is 5.5.0 against `kubectl` (1.32).

Python 3 standard library only; needs kubectl (kustomize v5.5) on PATH. Exits 1 when any seed
disagrees. Run by .ci/run for a bounded time (see the block there).
"""
import argparse, concurrent.futures, difflib, os, random, shutil, signal, subprocess, sys, tempfile, time

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


# Annotation values kustomize keeps as their text: scalars under tags (block forms too) and
# floats in exponent form.
ANN_TAGGED = ["!!binary aGk=", "!!binary 3q2+7w==", "!!binary |\n      3q2+7w==",
              "!!binary >-\n      3q2+7w==\n      aGk=", "!!binary |-\n      not base64 !",
              "!!int |\n      017", "!!float >\n      1e3", "!!null |\n      x", "!Foo |\n      x",
              "!!str |-\n      017", "!!int 0x1F", "!!float 2e30", "!!bool yes", "!Foo 1e3",
              "!!timestamp 2001-12-14", "!<tag:yaml.org,2002:binary> aGk="]
EXP_FLOATS = ["2e30", "1e3", "6.02e+23", "-1.5E3", "1E-7", "2.5e-05", "1e+300"]
# Keys written with escapes (serde_yaml hands them over without their place).
ESCAPED_KEYS = ['"{}\\nx"', '"{}\\tx"', "'{}''s'", '"{}\\u0041"']


def meta_map(rng, name, nulls=True, maps=True, tags=False):
    out = []
    for i in range(rng.randint(1, 5)):
        key = f"{name}{i}"
        if tags and rng.random() < 0.2:
            key = rng.choice(ESCAPED_KEYS).format(key)
        if tags and rng.random() < 0.15:
            v = rng.choice(ANN_TAGGED)
        elif tags and rng.random() < 0.12:
            v = rng.choice(EXP_FLOATS)
        elif maps and rng.random() < 0.15:
            v = rng.choice(["{a: 1}", "[1, 2]", "{}", "[]"])
        elif rng.random() < 0.1:
            v = ""
        elif rng.random() < 0.1:
            v = folded(rng, 4)
        else:
            v = scalar(rng, nulls)
        out.append(f"    {key}:" + (f" {v}" if v else ""))
    return out


def fam_annotations(rng):
    ann = meta_map(rng, "a", tags=True)
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
    files = fam_patches(rng, nulls=True)
    # A resource's flow mappings with values written as nothing (`{k: }`, `{? k}`): kustomize
    # prints them `""` (a block `k:` and `~` stay null), and drops them when a strategic merge
    # patch walks the object, as it drops a block `k:`.
    def flow(depth=0):
        entries = []
        for i in range(rng.randint(1, 4)):
            entries.append(rng.choice([f"e{i}: ", f"e{i}: ", f"? e{i}", f"e{i}: ~", f"e{i}: null",
                                       f"e{i}: v", f'"e{i}": ']
                                      + ([f"e{i}: {flow(depth + 1)}"] if depth < 2 else [])))
        return "{" + ", ".join(entries) + "}"
    thing = (f"apiVersion: x/v1\nkind: Thing\nmetadata:\n  name: t\n"
             f"  labels: {rng.choice(['{q: }', '{q: v}', '{q: , r: s}'])}\n"
             f"spec: {flow()}\n"
             + rng.choice(["", f"list: [{flow()}]\n", f"block:\n  k:\n  m: {flow()}\n"]))
    files["thing.yaml"] = thing
    if rng.random() < 0.3:
        files["dp.yaml"] = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n"
                            "  template:\n    spec:\n      containers:\n      - name: c\n"
                            f"        args: [{flow()}]\n"
                            f"        env: [{{name: e, value: }}]\n"
                            f"      tolerations: [{flow()}]\n")
        kt = "\n" + files["kustomization.yaml"]
        if "\npatchesStrategicMerge:\n" in kt:
            kt = kt.replace("\npatchesStrategicMerge:\n", "\npatchesStrategicMerge:\n- dp.yaml\n", 1)
        else:
            kt += "patchesStrategicMerge:\n- dp.yaml\n"
        files["kustomization.yaml"] = kt[1:]
    k = files["kustomization.yaml"].replace("- objects.yaml\n", "- objects.yaml\n- thing.yaml\n", 1)
    if rng.random() < 0.5:
        files["tp.yaml"] = ("apiVersion: x/v1\nkind: Thing\nmetadata:\n  name: t\n"
                            + rng.choice(["spec: {added: 1}\n", "spec: {e0: 2}\n",
                                          "  labels: {z: y}\n",
                                          # Lists kustomize copies as the patch writes them
                                          # (a kind without a schema: none is merged).
                                          f"list: [{flow()}]\n", f"newlist: [{flow()}, {flow()}]\n",
                                          f"spec: {{added: [{flow()}]}}\n",
                                          "newlist:\n- a: ~\n  b: {c: , d: ~}\n"]))
        if "\npatches:\n" in "\n" + k:
            k = ("\n" + k).replace("\npatches:\n", "\npatches:\n- path: tp.yaml\n", 1)[1:]
        else:
            k += "patches:\n- path: tp.yaml\n"
    files["kustomization.yaml"] = k
    return files


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


def with_patches(files, k, patches, psm):
    """`files` with the kustomization `k`, its `patches:` and `patchesStrategicMerge:` entries."""
    if patches:
        k += ["patches:"] + patches
    if psm:
        k += ["patchesStrategicMerge:"] + psm
    files["kustomization.yaml"] = kust(k)
    return files


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
    return with_patches(files, k, patches, psm)


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


# ---- family "replacements": typed replacements (a value of one type into a field of another) --

# Typed fields of the replacements' source and target objects: `spec.<name>` of a Deployment
# and `data.<name>` of a ConfigMap (strings in every spelling of another type).
TYPED = {"i": ["3", "0", "-7", "0x10", "017", "1_000", "+5", "9007199254740993"],
         "f": ["1.5", "2.0", "1e3", ".5", "-0.25", "1E-7"],
         "b": ["true", "false", "True"],
         "n": ["null", "~", ""],
         "s": ['"5"', '"abc"', '"1.5"', '"true"', '"null"', '""', '"0x10"', '"a,b,c"', '"1,2"',
               '"yes"', '"0o17"', '"1e3"', '"~"', '"+5"', '"1_000"', "x.y.z", '"3,x"'],
         "m": ["{a: 1, b: x}", "{}"],
         "l": ["[1, x]", "[]"]}


def fam_replacements(rng):
    """A replacement from a typed field (or a ConfigMap string that spells another type) into
    fields of every type, with source and target delimiters, create, and sometimes a later
    patch, replicas entry or second replacement that overwrites or removes the target."""
    spec = {k: rng.choice(v) for k, v in TYPED.items()}
    data = {f"d{i}": rng.choice(TYPED["s"] + TYPED["i"] + TYPED["f"] + TYPED["b"])
            for i in range(3)}
    dep = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
           "  annotations:\n    note: " + rng.choice(TYPED["s"]) + "\nspec:\n"
           + "".join(f"  {k}: {v}\n" for k, v in spec.items())
           + "  replicas: " + rng.choice(TYPED["i"][:3]) + "\n")
    cm = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\ndata:\n"
          + "".join(f"  {k}: {v}\n" for k, v in data.items()))
    k = ["resources:", "- r.yaml", "replacements:"]
    # A field one replacement created is not a later one's target: kustomize leaves it
    # untagged, which ply does not model (a known gap, docs/compatibility.md, "Known gaps").
    created = set()
    for _ in range(rng.randint(1, 2)):
        if rng.random() < 0.5:
            src = f"    kind: ConfigMap\n    name: src\n    fieldPath: data.{rng.choice(sorted(data))}"
        else:
            src = (f"    kind: Deployment\n    name: web\n    fieldPath: "
                   f"{rng.choice(['spec.' + f for f in 'ifbnsml'] + ['metadata.annotations.note'])}")
        if rng.random() < 0.2:
            src += f"\n    options: {{delimiter: '{rng.choice([',', '.', 'x'])}', index: {rng.choice([0, 1, 2, -1])}}}"
        tgt_kind = rng.choice(["Deployment", "Deployment", "ConfigMap"])
        if tgt_kind == "Deployment":
            paths = ["spec." + f for f in "ifbnsml"] + ["spec.replicas", "metadata.annotations.note",
                                                          "spec.new", "spec.m.a", "spec.l.0"]
        else:
            paths = [f"data.{d}" for d in sorted(data)] + ["data.new"]
        paths = [p for p in paths if p not in created]
        fps = rng.sample(paths, rng.randint(1, 2))
        opts = []
        if rng.random() < 0.3:
            opts += [f"delimiter: '{rng.choice([',', '.', 'x'])}'", f"index: {rng.choice([0, 1, 3, -1])}"]
        if rng.random() < 0.3:
            opts.append("create: true")
            created.update(p for p in fps if p.endswith(".new"))
        tgt = (f"  - select:\n      kind: {tgt_kind}\n    fieldPaths: [{', '.join(fps)}]"
               + (f"\n    options: {{{', '.join(opts)}}}" if opts else ""))
        k += ["- source:", src, "  targets:", tgt]
    extra = ""
    if rng.random() < 0.3:
        # The source object is also a target: kustomize's value is the source field itself,
        # so the targets after it receive the rewritten value (a generated ConfigMap's hash
        # follows). Strings only: typed fields are the replacements above.
        extra = ("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: team\ndata:\n"
                 f"  t: {rng.choice(['team-a', 'a-b-c', 'x', 'p.q'])}\n")
        if rng.random() < 0.5:
            k = ["configMapGenerator:", "- name: gen", "  literals:",
                 f"  - t={rng.choice(['x', 'g-h', ''])}"] + k
        d = rng.choice(["-", ".", "-"])
        src = f"    kind: ConfigMap\n    name: team\n    fieldPath: data.t"
        if rng.random() < 0.2:
            src += f"\n    options: {{delimiter: '{d}', index: {rng.choice([0, 1])}}}"
        for _ in range(rng.randint(1, 2)):
            opts = []
            if rng.random() < 0.7:
                opts += [f"delimiter: '{d}'", f"index: {rng.choice([0, 1, 2, 5, -1])}"]
            if rng.random() < 0.5:
                opts.append("create: true")
            sel = rng.choice(["{kind: ConfigMap}", "{kind: ConfigMap, name: team}",
                              "{kind: ConfigMap, name: gen}"])
            fps = rng.choice(["[data.t]", "[data.t, data.u]", "[data.u, data.t]"])
            k += ["- source:", src, "  targets:", f"  - select: {sel}", f"    fieldPaths: {fps}"]
            if opts:
                k += [f"    options: {{{', '.join(opts)}}}"]
    later = rng.random()
    if later < 0.15:
        k += ["replicas:", "- name: web", "  count: 4"]
    elif later < 0.3:
        f = rng.choice("ifbnsml")
        k += ["patches:", "- target: {kind: Deployment}", "  patch: |",
              "    apiVersion: apps/v1", "    kind: Deployment", "    metadata: {name: web}",
              f"    spec: {{{f}: {rng.choice(['null', '7', 'x', '{}'])}}}"]
    elif later < 0.4:
        k += ["patches:", "- target: {kind: Deployment}", "  patch: |",
              f"    - op: {rng.choice(['remove', 'replace'])}",
              f"      path: /spec/{rng.choice('ifbnsml')}", "      value: 1"]
    elif later < 0.5:
        k += ["patches:", "- patch: |", "    $patch: delete", "    apiVersion: apps/v1",
              "    kind: Deployment", "    metadata: {name: web}"]
    return {"kustomization.yaml": kust(k), "r.yaml": cm + "---\n" + dep + extra}


# ---- family "bigints": large integers through JSON 6902 patches ------------------------------

BIGINTS = ["9007199254740992", "9007199254740993", "-9007199254740993", "9223372036854775807",
           "9223372036854775808", "-9223372036854775809", "18446744073709551615",
           "18446744073709551616", "123456789012345678901234567890", "12345678901234567",
           "0x20000000000001", "1e20", "1.5e300", "4.9e-324", "99999999999999999999.5",
           "7", "-0", "1_000_000_000_000_000_000", "0777777777777777777777"]


def fam_bigints(rng):
    """Objects holding large integers (past 2^53, past int64 and uint64, in other bases),
    patched by JSON 6902 operations (add, replace, copy, move, remove) written as JSON
    or YAML, inline or in a file, whose values are large integers too. (No infinities such as
    `1e400`: ply prints them where kustomize fails, a deliberate difference of
    docs/compatibility.md, "Infinities and NaN are printed".)"""
    fields = {f"v{i}": rng.choice(BIGINTS) for i in range(rng.randint(1, 4))}
    obj = ("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n"
           + ("  annotations:\n    a: " + rng.choice(BIGINTS) + "\n" if rng.random() < 0.3 else "")
           + "spec:\n" + "".join(f"  {k}: {v}\n" for k, v in fields.items())
           + "  list: [" + ", ".join(rng.sample(BIGINTS, 2)) + "]\n")
    ops = []
    for _ in range(rng.randint(1, 3)):
        # No `test`: evanphx/json-patch compares numbers as JSON text, ply by value (a known
        # gap, docs/compatibility.md, "JSON 6902 as kustomize applies it").
        op = rng.choice(["add", "replace", "copy", "move", "remove", "add"])
        path = rng.choice([f"/spec/{k}" for k in fields] + ["/spec/new", "/spec/list/0", "/spec/list/-"])
        if op in ("copy", "move"):
            ops.append({"op": op, "from": rng.choice([f"/spec/{k}" for k in fields] + ["/spec/list/1"]),
                        "path": path})
        elif op == "remove":
            ops.append({"op": op, "path": path})
        else:
            v = rng.choice(BIGINTS + [fields.get(path.split("/")[-1], "1")] * 2)
            if rng.random() < 0.2:
                v = "[" + v + ", " + rng.choice(BIGINTS) + "]"
            ops.append({"op": op, "path": path, "value": v})
    if rng.random() < 0.5:
        text = "[" + ", ".join("{" + ", ".join(f'"{k}": ' + (v if k == "value" else f'"{v}"')
                                             for k, v in o.items()) + "}" for o in ops) + "]"
    else:
        text = "\n".join("- " + "\n  ".join(f"{k}: {v}" for k, v in o.items()) for o in ops)
    files = {"r.yaml": obj}
    k = ["resources:", "- r.yaml", "patches:", "- target: {kind: Widget}"]
    if rng.random() < 0.5:
        files["p.yaml"] = text + "\n"
        k.append("  path: p.yaml")
    else:
        k += ["  patch: |"] + ["    " + line for line in text.splitlines()]
    if rng.random() < 0.2:
        k += ["- target: {kind: Widget}", "  patch: |", "    - op: add", "      path: /spec/late",
              f"      value: {rng.choice(BIGINTS)}"]
    files["kustomization.yaml"] = kust(k)
    return files


# ---- family "renames": patches that rename objects, maybe two of them to one id ---------------

def fam_renames(rng):
    """ConfigMaps (listed and generated) renamed by JSON 6902 `replace`/`add` of
    /metadata/name and strategic merge patches with `allowNameChange`, sometimes two to one
    name (or one to a name that comes back by a second patch), with a namePrefix or namespace
    in the same kustomization or an overlay, and a Deployment referring to them."""
    names = ["a", "b", "c"]
    docs = [f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {n}\n"
            + (f"  namespace: {rng.choice(['x', 'y'])}\n" if rng.random() < 0.2 else "")
            + f"data:\n  k: {n}\n" for n in names[:rng.randint(2, 3)]]
    docs.append("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n"
                "  template:\n    spec:\n      containers:\n      - name: c\n        image: x\n"
                "        envFrom:\n        - configMapRef:\n            name: a\n"
                "        - configMapRef:\n            name: b\n")
    base = ["resources:", "- r.yaml"]
    if rng.random() < 0.3:
        base += ["configMapGenerator:", f"- name: {rng.choice(['g', 'a', 'b'])}", "  literals: [k=v]"]
        if rng.random() < 0.5:
            base += ["generatorOptions:", "  disableNameSuffixHash: true"]
    base.append("patches:")
    for _ in range(rng.randint(1, 3)):
        src = rng.choice(names + ["g"])
        new = rng.choice(names + ["d", "g"])
        kind = rng.random()
        if kind < 0.5:
            base += [f"- target: {{kind: ConfigMap, name: {src}}}", "  patch: |",
                     f"    - op: {rng.choice(['replace', 'add'])}", "      path: /metadata/name",
                     f"      value: {new}"]
        else:
            base += [f"- target: {{kind: ConfigMap, name: {src}}}", "  options:",
                     f"    allowNameChange: {rng.choice(['true', 'true', 'false'])}", "  patch: |",
                     "    apiVersion: v1", "    kind: ConfigMap", "    metadata:",
                     f"      name: {new}", "    data: {p: x}"]
    if rng.random() < 0.3:
        base.append(f"namePrefix: {rng.choice(['p-', 'q-'])}")
    if rng.random() < 0.2:
        base.append("namespace: ns")
    files = {"r.yaml": "---\n".join(docs)}
    if rng.random() < 0.4:
        files["base/kustomization.yaml"] = kust(base)
        files["base/r.yaml"] = files.pop("r.yaml")
        over = ["resources:", "- base"]
        if rng.random() < 0.5:
            over.append(f"namePrefix: {rng.choice(['o-', 'a'])}")
        if rng.random() < 0.5:
            over += ["patches:", f"- target: {{kind: ConfigMap, name: {rng.choice(['p-a', 'a', 'b', 'd'])}}}",
                     "  patch: |", "    - op: replace", "      path: /metadata/name",
                     f"      value: {rng.choice(['a', 'b', 'e'])}"]
        files["kustomization.yaml"] = kust(over)
    else:
        files["kustomization.yaml"] = kust(base)
    return files


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


def commented_flow(rng, entries):
    """A flow sequence of `entries` over several lines, with comments inside: after `[`,
    after an entry or its comma, on lines of their own, before `]`."""
    def gap():
        return rng.choice(["", " ", "\n  ", " # c\n  ", "\n  # c\n  ", "\n# c\n  ",
                           "  # c, [x]: y\n    "])
    out = "[" + gap()
    for i, e in enumerate(entries):
        if i:
            out += rng.choice([",", " ,"]) + gap()
        out += e
    if rng.random() < 0.3:
        out += ","
    return out + gap() + "]"


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
    r = rng.random()
    if r < 0.5:
        k = ["resources:", "- cm.yaml"]
    elif r < 0.7:
        k = ["resources: [cm.yaml, ]"]
    else:
        k = ["resources: " + commented_flow(rng, ["cm.yaml"])]
    if rng.random() < 0.4:
        k += ["commonLabels: {team: " + rng.choice(["a", "b"]) + rng.choice([", ", ""]) + "}"]
    if rng.random() < 0.4:
        patch = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  p: "
                 + flow_value(rng) + "\n")
        files["patch.yaml"] = utf16(rng, patch) if rng.random() < 0.5 else patch
        entries = ["{path: patch.yaml}"]
        if rng.random() < 0.4:
            entries.append("{path: patch.yaml, target: {kind: ConfigMap}}")
        if rng.random() < 0.4:
            # A Component whose patches are a flow sequence with comments inside.
            files["comp/patch.yaml"] = patch
            files["comp/kustomization.yaml"] = (
                "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches: "
                + commented_flow(rng, entries) + "\n")
            k += ["components:", "- comp"]
        elif rng.random() < 0.5:
            k += ["patches: " + commented_flow(rng, entries)]
        else:
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
    if rng.random() < 0.3:
        # The objects come from a base that renamed them: kustomize's build annotations (the
        # rename history, prefixes, suffixes) are in metadata.annotations when the patch runs.
        base = ["resources:", "- objects.yaml"]
        prefix, suffix = rng.choice([("p-", ""), ("", "-s"), ("p-", "-s"), ("", "")])
        base += [f"namePrefix: {prefix}"] if prefix else []
        base += [f"nameSuffix: {suffix}"] if suffix else []
        base += [f"namespace: {rng.choice(['ns', 'default'])}"] if rng.random() < 0.5 else []
        files["base/objects.yaml"] = files.pop("objects.yaml")
        files["base/kustomization.yaml"] = kust(base)
        k = ["resources:", "- base"]
        name = prefix + name + suffix
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


# ---- families "keys" and "tabs" (issue 25) ------------------------------------------------

# Keys in every spelling: strings, and scalars go-yaml v3 reads as another type.
KEY_SPELLINGS = ["a", "404", "503", "0", "-1", "+2", "1.5", "1e3", ".5", "0x1F", "0o17", "017",
                 "1_000", "true", "False", "yes", "on", "n", "null", "~", "NULL", ".inf", "-.Inf",
                 ".nan", "2024-01-01", "2001-12-14t21:59:43.10-05:00", "12:30", "1:20", "<<",
                 '"404"', "'true'", '"<<"', "'<<'", '"~"', '""', "!!str 404", "!!str <<",
                 "!!str true", '!!int "7"', "k.y/z", "a b", "x1"]


# Keys that stay strings in kustomize's reading (most keys of a case, so that it can render).
STRING_KEYS = ["a", "yes", "on", "n", '"404"', "'true'", '"<<"', "'<<'", '"~"', "!!str 404",
               "!!str <<", "!!str true", "k.y/z", "a b", "x1", "<<", '"0x10"', "'1.5'"]


def key_spelling(rng):
    return rng.choice(STRING_KEYS if rng.random() < 0.75 else KEY_SPELLINGS)


def keyed_map(rng, ind, depth, anchors):
    """Block mapping lines at indentation `ind`, keys in any spelling, nested maps and lists."""
    pad = " " * ind
    out, seen = [], set()
    for _ in range(rng.randint(1, 4)):
        k = key_spelling(rng)
        if k in seen:
            continue
        seen.add(k)
        r = rng.random()
        if depth < 3 and r < 0.25:
            out.append(f"{pad}{k}:")
            out += keyed_map(rng, ind + 2, depth + 1, anchors)
        elif depth < 3 and r < 0.35:
            out.append(f"{pad}{k}:")
            out.append(f"{pad}- " + keyed_map(rng, ind + 2, depth + 1, anchors)[0].lstrip())
        elif r < 0.45:
            items = ", ".join(f"{key_spelling(rng)}: {rng.choice(['x', '1'])}" for _ in range(2))
            out.append(f"{pad}{k}: {{{items}}}")
        elif r < 0.55 and anchors:
            out.append(f"{pad}{k}: *{rng.choice(anchors)}")
        else:
            v = rng.choice(["x", "1", "v w", '"q"'])
            out.append(f"{pad}{k}: {v}")
    return out


def fam_keys(rng):
    """Keys that are not strings, a quoted `"<<"`, merge keys, in resources and kustomizations."""
    anchors = ["base"]
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: keys"]
    where = rng.random()
    if where < 0.15:
        lines += ["  labels:"] + keyed_map(rng, 4, 3, [])
    elif where < 0.3:
        lines += ["  annotations:"] + keyed_map(rng, 4, 3, [])
    lines += ["data:"] + keyed_map(rng, 2, 3, [])
    obj = ["apiVersion: x/v1", "kind: Thing", "metadata:", "  name: t",
           "base: &base {a: 1, b: 2}", "spec:"] + keyed_map(rng, 2, 0, anchors)
    if rng.random() < 0.4:
        mk = rng.choice(["<<", '"<<"', "<<", "c"])
        obj += ["merged:", f"  {mk}: " + rng.choice(["*base", "{a: 9}", "[*base, {d: 3}]"]),
                "  b: 7"]
    files = {"cm.yaml": "\n".join(lines) + "\n", "thing.yaml": "\n".join(obj) + "\n"}
    k = ["resources:", "- cm.yaml"] + (["- thing.yaml"] if rng.random() < 0.7 else [])
    if rng.random() < 0.5:
        field = rng.choice(["commonLabels", "commonAnnotations", "labels", "generatorOptions"])
        pairs = [f"{key_spelling(rng)}: v" for _ in range(rng.randint(1, 2))]
        if len(set(p.split(':')[0] for p in pairs)) < len(pairs):
            pairs = pairs[:1]
        if field == "labels":
            k += ["labels:", "- pairs:"] + ["    " + p for p in pairs]
        elif field == "generatorOptions":
            k += ["generatorOptions:", "  labels:"] + ["    " + p for p in pairs]
        else:
            k += [field + ":"] + ["  " + p for p in pairs]
    if rng.random() < 0.5:
        names = [rng.choice(["404", "true", "a", "1.5", "x-y", "0x10", "null", "<<", "2024-01-01",
                             "b", "c.d", "yes", "e_f", "g"]) for _ in range(rng.randint(1, 2))]
        names = list(dict.fromkeys(names))
        src = rng.random()
        k += ["configMapGenerator:", "- name: gen"]
        if src < 0.4:
            k += ["  literals:"] + ['  - "' + n + '=v"' for n in names]
        elif src < 0.7:
            files["g.env"] = "".join(f"{n}=v\n" for n in names)
            k += ["  envs:", "  - g.env"]
        else:
            for n in names:
                files[n] = "v\n"
            k += ["  files:"] + ['  - "' + n + '"' for n in names]
    files["kustomization.yaml"] = kust(k)
    return files


TAB_TEXTS = ["\tx\ny\n", "x\n\ty\n", "\tx\n\ty", "\t\n", "\tx", "x\t\ny", "\tx \ny\n",
             "\n\tx\n", "x\n\n\ty\n", "\t\tx\ny", "a\n\t\n", " \tx\ny\n", "\tx\ny\n\n",
             "\tx\u00e9\ny\n", "x\ty\n\tz",
             # Written double-quoted by go-yaml, so they render: a character it does not print
             # in a block (beyond U+FFFF, a carriage return, the byte order mark), a space
             # before any line break; and ones that still fail (U+2028 alone is a break,
             # U+00A0 prints). (NEL and C1 controls are deliberate differences.)
             "\tx\n\U0001F600\n", "\tx \u2028y\n", "\tx\r\ny\n", "\tx\u2028y\n",
             "\tx\n\u2028y\n", "\tx\n\u00a0y\n", "\tx\n\ufeffy\n", "\t\U0001F600\n"]


def dq(t):
    esc = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\u0085": "\\N",
           "\u2028": "\\L", "\u2029": "\\P", '"': '\\"'}
    return '"' + "".join(esc.get(c, c if c >= " " and not "\x7f" <= c <= "\x9f" else
                                 "\\u%04x" % ord(c)) for c in t) + '"'


def tab_block(rng, ind):
    """A literal or folded block, or a multi-line plain or quoted scalar, whose lines start with a
    tab (after the block's indentation), at indentation `ind` for the continuation lines."""
    pad = " " * ind
    body = [rng.choice(["x", "\tx", "\t\ty", "y", "\t", "  \tz", "a\tb"])
            for _ in range(rng.randint(1, 4))]
    style = rng.random()
    if style < 0.35:
        header = rng.choice(["|", "|-", "|+", ">", ">-", "|2", ">2"])
        if header.endswith("2"):
            body = [" " + b if not b.startswith("\t") else b for b in body]
        return header + "\n" + "\n".join(pad + b if b else "" for b in body)
    if style < 0.55:
        # Plain, continued on lines starting with a tab after the indentation.
        return "x\n" + "\n".join(pad + b for b in body if b.strip())
    if style < 0.75:
        q = rng.choice(['"', "'"])
        return q + "x\n" + "\n".join(pad + b for b in body).replace(q, "") + q
    return dq(rng.choice(TAB_TEXTS))


def fam_tabs(rng):
    """Multi-line values whose lines start with a tab: every scalar style in data and
    annotations, generator literals, env files and files."""
    files = {}
    data = [f"  d{i}: " + tab_block(rng, 4) for i in range(rng.randint(1, 3))]
    ann = [f"    a{i}: " + tab_block(rng, 6) for i in range(rng.randint(0, 2))]
    cm = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: tabs"]
    if ann:
        cm += ["  annotations:"] + ann
    files["cm.yaml"] = "\n".join(cm + ["data:"] + data) + "\n"
    k = ["resources:", "- cm.yaml"]
    if rng.random() < 0.7:
        kind = rng.choice(["configMapGenerator", "configMapGenerator", "secretGenerator"])
        k += [kind + ":", "- name: gen"]
        src = rng.random()
        if src < 0.35:
            k += ["  literals:"] + [f"  - {dq('k%d=' % i + rng.choice(TAB_TEXTS))}"
                                    for i in range(rng.randint(1, 2))]
        elif src < 0.55:
            files["g.env"] = "".join(f"e{i}=" + rng.choice(["\tx", "x\t", "\t", "a\tb"]) + "\n"
                                     for i in range(2))
            k += ["  envs:", "  - g.env"]
        else:
            # Tab-led files in every position: alone, after or before another file, under
            # a key of their own, in a generator merging into a listed ConfigMap.
            files["f.txt"] = rng.choice(TAB_TEXTS)
            files["g.txt"] = rng.choice(TAB_TEXTS + ["plain\n"])
            entries = rng.choice([["f.txt"], ["g.txt", "f.txt"], ["f.txt", "g.txt"],
                                  ["k=f.txt"], ["k=f.txt", "g.txt"]])
            k += ["  files:"] + [f"  - {e}" for e in entries]
            if kind == "configMapGenerator" and rng.random() < 0.2:
                files["cm.yaml"] = files["cm.yaml"].replace("name: tabs", "name: gen", 1)
                k += [f"  behavior: {rng.choice(['merge', 'replace'])}"]
        if rng.random() < 0.3:
            k += ["generatorOptions:", "  annotations:", "    note: " + dq(rng.choice(TAB_TEXTS))]
    if rng.random() < 0.3:
        k += ["commonAnnotations:", "  c: " + dq(rng.choice(TAB_TEXTS))]
    files["kustomization.yaml"] = kust(k)
    return files


# ---- family "shared": values a transformer writes into several maps, then later writers ----

def fam_shared(rng):
    """A base whose labels and annotations transformers (`labels` with and without
    includeSelectors/includeTemplates, `commonLabels`, `commonAnnotations`) write one key into
    several maps of a Deployment and a Service, then, in a component and an overlay, later
    writers of the same key: the transformers again, strategic merge patches (targeted or not)
    on one of those maps, JSON 6902 patches, replacements (whole or delimited) and a
    namePrefix; kustomize shares one node between the maps until a writer puts a new one."""
    key = rng.choice(["team", "app"])
    vals = ["a", "b", "c", "d", "e"]
    dep = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
           + ("  labels:\n    keep: x\n" if rng.random() < 0.5 else "")
           + "spec:\n  selector:\n    matchLabels:\n      run: web\n"
           "  template:\n    metadata:\n      labels:\n        run: web\n"
           "    spec:\n      containers:\n      - name: c\n        image: x\n")
    svc = ("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector:\n"
           "    run: web\n  ports:\n  - port: 80\n")
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\ndata:\n  v: z\n  w: p.q.r\n"
    files = {"base/r.yaml": dep + "---\n" + svc + "---\n" + cm}

    def transformer(v):
        r = rng.random()
        if r < 0.45:
            out = ["labels:", "- pairs:", f"    {key}: {v}"]
            if rng.random() < 0.6:
                out.append(f"  includeSelectors: {rng.choice(['true', 'false'])}")
            if rng.random() < 0.4:
                out.append(f"  includeTemplates: {rng.choice(['true', 'false'])}")
            return out
        if r < 0.8:
            return ["commonLabels:", f"  {key}: {v}"]
        return ["commonAnnotations:", f"  {key}: {v}"]

    files["base/kustomization.yaml"] = kust(["resources:", "- r.yaml"] + transformer(rng.choice(vals)))
    top = ["resources:", "- base"]
    if rng.random() < 0.3:
        files["comp/kustomization.yaml"] = kust(
            ["apiVersion: kustomize.config.k8s.io/v1alpha1", "kind: Component"]
            + transformer(rng.choice(vals)))
        top += ["components:", "- comp"]
    maps = [("metadata", "labels"), ("spec", "selector", "matchLabels"),
            ("spec", "template", "metadata", "labels"), ("metadata", "annotations")]
    patches, repl = [], []
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        v = rng.choice(vals)
        if r < 0.25:
            top += transformer(v)
        elif r < 0.55:
            where = rng.choice(maps)
            body = "".join("  " * i + f"{seg}:\n" for i, seg in enumerate(where))
            body += "  " * len(where) + f"{key}: {v}\n"
            if where[0] == "metadata":
                doc = "apiVersion: apps/v1\nkind: Deployment\n" + body.replace(
                    "metadata:\n", "metadata:\n  name: web\n", 1)
            else:
                doc = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n" + body
            text = "\n".join("    " + line for line in doc.splitlines())
            if rng.random() < 0.5:
                patches += ["- target:", "    kind: Deployment", "  patch: |", text]
            else:
                patches += ["- patch: |", text]
        elif r < 0.7:
            where = rng.choice(maps)
            patches += ["- target:", "    kind: Deployment", "  patch: |",
                        "    - op: " + rng.choice(["replace", "add"]),
                        "      path: /" + "/".join(where) + "/" + key,
                        f"      value: {v}"]
        elif r < 0.9:
            where = rng.choice(maps[:3])
            src = rng.choice(["data.v", "data.w"])
            entry = ["- source:", "    kind: ConfigMap", "    name: src", f"    fieldPath: {src}"]
            if src == "data.w" and rng.random() < 0.6:
                entry += ["    options:", "      delimiter: '.'", f"      index: {rng.randint(0, 2)}"]
            entry += ["  targets:", "  - select:", "      kind: Deployment",
                      "    fieldPaths:", "    - " + ".".join(where) + "." + key,
                      "    options:", "      create: true"]
            repl += entry
        else:
            top += ["namePrefix: p-"]
    if patches:
        top += ["patches:"] + patches
    if repl:
        top += ["replacements:"] + repl
    # A top-level field twice in one kustomization: keep the first (a repeated key).
    seen, lines, skip = set(), [], False
    for line in top:
        if not line.startswith((" ", "-")):
            skip = line in seen
            seen.add(line)
        if not skip:
            lines.append(line)
    files["kustomization.yaml"] = kust(lines)
    return files


# ---- family "scalarstyles": a strategic merge patch's scalar over values of every style ------

# Plain words, YAML 1.1 booleans among them (kyaml quotes a plain `yes` that a strategic merge
# patch walks: `FieldSetter` asks `IsYaml1_1NonString`; a tagged `!!str yes` it leaves).
SS_WORDS = ["a", "x y", "app", "v1.2", "a-b", "word", "yes", "on", "n", "Off"]
SS_DESTS = (['"8080"', "'7'", '"true"', '"1.5"', '""', '"s"', "'q r'", '"0x10"', '"a"', "|\n    x",
             "|-\n    x\n    y", ">-\n    folded", ">\n    f", "!!str t", '!!str "5"', "!!str yes"]
            + SS_WORDS + ["5", "0", "1.5", "true", "false", "0x1F", "017"])
SS_PATCH = (NUMBERS + BOOLS + SS_WORDS
            + ['"1"', "'2'", '"0x10"', '"true"', '"w"', "'it''s'", '""', "|\n      lit"])


def fam_scalarstyles(rng):
    """A resource (YAML or JSON, in the root or a base) whose values are written in every style
    (double- and single-quoted, literal and folded blocks, plain, tagged), then one to three
    strategic merge patches (files, inline, patchesStrategicMerge; some add fields, some
    `$patch: replace` a map), maybe a JSON 6902 patch first, maybe a generated ConfigMap
    patched too: kyaml's `FieldSetter` gives each patch's scalar the replaced value's style."""
    files = {}
    n = rng.randint(2, 7)
    dests = {f"k{i}": rng.choice(SS_DESTS) for i in range(n)}
    as_json = rng.random() < 0.2
    in_base = rng.random() < 0.3
    head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
    if as_json:
        def js(v):
            if v in ("true", "false") or v.lstrip("-").replace(".", "", 1).isdigit() and not v.startswith("0") or v == "0":
                return v
            return '"' + v.replace("'", "").replace('"', "").replace("|\n    ", "").replace("\n    ", " ") + '"'
        body = ", ".join(f'"{k}": {js(v)}' for k, v in dests.items())
        res_name, res = "cm.json", ('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, '
                                    '"data": {' + body + ', "m": {"x": "1", "y": 2}}}\n')
    else:
        res_name = "cm.yaml"
        res = (head + "data:\n" + "".join(f"  {k}: {v}\n" for k, v in dests.items())
               + "  m:\n    x: \"1\"\n    y: 2\n")
    prefix = "base/" if in_base else ""
    files[prefix + res_name] = res
    k = ["resources:", f"- {'base' if in_base else res_name}"]
    if in_base:
        files["base/kustomization.yaml"] = kust(["resources:", f"- {res_name}"])
    if rng.random() < 0.3:
        lits = [f"g{i}={rng.choice(['8080', 'hello', 'yes', '', 'a: b', '-x', 'true', '1.5', 'on'])}"
                for i in range(rng.randint(1, 4))]
        k += ["configMapGenerator:", "- name: gen", "  options: {disableNameSuffixHash: true}",
              "  literals:"] + [f"  - {l!r}" if ":" in l else f"  - {l}" for l in lits]
    patches, psm = [], []
    if rng.random() < 0.25:
        patches += ["- target: {kind: ConfigMap, name: cm}", "  patch: |",
                    "    - op: add", "      path: /data/j",
                    f"      value: {rng.choice(['x', '1', 'true', chr(34) + '5' + chr(34), 'q'])}"]
    for p in range(rng.randint(1, 3)):
        lines = []
        for key in rng.sample(sorted(dests) + ["new", "j"], rng.randint(1, 4)):
            lines.append(f"  {key}: {rng.choice(SS_PATCH)}")
        if rng.random() < 0.3:
            lines.append("  m:")
            if rng.random() < 0.5:
                lines.append("    $patch: replace")
            lines.append(f"    x: {rng.choice(SS_PATCH)}".replace("\n      ", "\n        "))
            lines.append(f"    z: {rng.choice(SS_PATCH)}".replace("\n      ", "\n        "))
        text = head + "data:\n" + "\n".join(lines) + "\n"
        if rng.random() < 0.3 and "gen" in "".join(k):
            text += ("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gen\ndata:\n"
                     + f"  g0: {rng.choice(SS_PATCH)}\n")
        how = rng.random()
        if how < 0.25:
            patches += ["- patch: |"] + ["    " + l for l in text.splitlines()]
        elif how < 0.4:
            files[f"s{p}.yaml"] = text
            psm.append(f"- s{p}.yaml")
        else:
            files[f"p{p}.yaml"] = text
            patches.append(f"- path: p{p}.yaml")
    return with_patches(files, k, patches, psm)



FAMILIES = {"styles": fam_styles, "annotations": fam_annotations, "multiline": fam_multiline,
            "patches": fam_patches, "nulls": fam_nulls, "lists": fam_lists,
            "workloads": fam_workloads, "crds": fam_crds, "tags": fam_tags,
            "hostile": fam_hostile, "json6902": fam_json6902,
            "replacements": fam_replacements, "bigints": fam_bigints, "renames": fam_renames,
            "keys": fam_keys, "tabs": fam_tabs, "shared": fam_shared,
            "scalarstyles": fam_scalarstyles}


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
            os.makedirs(os.path.dirname(os.path.join(t, name)), exist_ok=True)
            with open(os.path.join(t, name), "wb") as f:
                f.write(text if isinstance(text, bytes) else text.encode())
        krc, kout = render([args.kubectl, "kustomize"], t)
        prc, pout = render([args.ply, "render", "--kustomize-version", args.kustomize_version], t)
    agree = (krc != 0 and prc != 0) or (krc == 0 and prc == 0 and kout == pout)
    if agree:
        return None
    # Silent: both succeed and the bytes differ (no error tells a user something is off).
    silent = " SILENT" if krc == 0 and prc == 0 else ""
    report = [f"DISAGREE{silent} family={family} seed={seed}: kubectl exit {krc}, ply exit {prc}"]
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
    ap.add_argument("--progress", type=int, default=0, metavar="N",
                    help="print a line after every N cases (long runs)")
    a = ap.parse_args()
    a.ply = os.path.abspath(a.ply)
    a.kubectl = ORACLES[a.kustomize_version]
    if not shutil.which(a.kubectl):
        sys.exit(f"differential_yaml: {a.kubectl} is not on PATH (it is the oracle)")
    families = a.family or sorted(FAMILIES)
    deadline = time.monotonic() + a.seconds
    done = failed = silent = 0
    per_family = {f: [0, 0] for f in families}
    # SIGTERM ends the run after the batch in hand, with the summary of what was done.
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        seed = a.seed
        while seed < a.seed + a.count and time.monotonic() < deadline and not stop:
            batch = [(f, s) for s in range(seed, min(seed + 8, a.seed + a.count)) for f in families]
            for (family, _), report in zip(batch, ex.map(lambda fs: check(a, *fs), batch)):
                done += 1
                per_family[family][0] += 1
                if report:
                    failed += 1
                    silent += report.startswith("DISAGREE SILENT")
                    per_family[family][1] += 1
                    print(report, flush=True)
                if a.progress and done % a.progress == 0:
                    print(f"progress: {done} cases, {failed} disagreements ({silent} silent)",
                          flush=True)
            seed += 8
    if a.per_family:
        for f, (n, bad) in per_family.items():
            share = 100.0 * (n - bad) / n if n else 0.0
            print(f"  {f:12} {n:6} cases, {bad:4} disagreements, {share:6.2f}% agree")
    print(f"differential_yaml: kustomize {a.kustomize_version} ({a.kubectl}), "
          f"families {','.join(families)}, seeds {a.seed}..{seed - 1}: "
          f"{done} cases, {failed} disagreements ({silent} silent: both succeed, bytes differ)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
