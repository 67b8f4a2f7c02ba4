#!/usr/bin/env python3
"""The Argo CD oracle: replays what Argo CD's repo server runs for an Application
(reposerver/repository/repository.go GenerateManifests, util/kustomize/kustomize.go Build) with
the real kustomize v5.8.1 command-line tool, on a copy of the repository:

  1. the parameter files .argocd-source.yaml and .argocd-source-<app>.yaml merged into the source
     (JSON merge patch; repoURL/path/targetRevision/chart kept);
  2. the source type (explicit block, else a kustomization file in the path, else a directory);
  3. for kustomize: `kustomize edit set nameprefix -- X`, `set namesuffix`, `set image`,
     `set replicas`, `add label [--force] [--without-selector] [--include-templates]`,
     `add annotation [--force]`, `set namespace`, the patches appended to the kustomization
     (Argo's own step: read as a generic map, re-marshalled with keys sorted), `add component`
     (after `ignoreMissingComponents`), then `kustomize build <abs path> <build options>` with the
     repository root as working directory;
  4. for a plain directory: the *.yaml/*.yml/*.json files in walk order, include/exclude globs;
  5. for a Helm source (only with --enable-helm): `helm template . --name-template NAME
     --namespace NS ...` with the real helm (v3.19.0, built from the Go module proxy), the
     value files, inline values and parameters as util/helm/cmd.go passes them;
  6. the tracking step (annotation, label, or both) on every object but CRDs.

Everything but the kustomize commands is written here independently of ply (Python), from the
Argo CD source; the kustomize commands are the real tool's.

Usage:
  argo_oracle.py render REPO APP [--revision SHA] [--build-options S] [--tracking M]
                        [--repo-url URL] [--argo-namespace NS] [--enable-helm]
      prints the output: kustomize's YAML when it is one kustomize build without tracking,
      else one JSON object per line (Argo's own form: sorted keys); exit 1 on failure.
  argo_oracle.py check CASES_DIR [--ply PLY]
      checks every golden case (CASES_DIR/<case>/{args,repo/,expected.yaml|expected.err})
      against the oracle; prints one line per case; exit 1 on any disagreement.
"""

import argparse
import copy
import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import yaml

KUSTOMIZE = os.environ.get("ARGO_ORACLE_KUSTOMIZE", "kustomize-5.8.1")
HELM = os.environ.get("ARGO_ORACLE_HELM", "helm-3.19.0")
KFILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"]
SKIP_MARKER = "+argocd:skip-file-rendering"


class Failed(Exception):
    pass


# --- the Application -------------------------------------------------------------------------

def load_app(repo, spec, opts):
    """The Application in the file `spec`, or the one named `spec` among those the repository
    declares, its ApplicationSets generate, or its app-of-apps Applications render."""
    for path in (spec, os.path.join(repo, spec)):
        if os.path.isfile(path):
            apps = [d for d in yaml.safe_load_all(open(path)) if is_app(d)]
            if len(apps) != 1:
                raise Failed("%s holds %d Applications" % (path, len(apps)))
            return apps[0]
    found = [a for a in all_apps(repo, opts) if a["metadata"].get("name") == spec]
    if len(found) != 1:
        raise Failed("%d Applications named %s" % (len(found), spec))
    return found[0]


def all_apps(repo, opts):
    apps = []
    for rel in walk_files(repo):
        if not rel.endswith((".yaml", ".yml")):
            continue
        try:
            docs = list(yaml.safe_load_all(open(os.path.join(repo, rel))))
        except Exception:
            continue
        for d in docs:
            if is_app(d):
                apps.append(d)
            elif isinstance(d, dict) and d.get("apiVersion") == "argoproj.io/v1alpha1" and d.get("kind") == "ApplicationSet":
                try:
                    apps += appset_apps(repo, d, opts)
                except Failed:
                    pass
    # A chart whose templates are Applications and that no Application renders: the Application
    # `argocd app create DIR --path DIR` makes, in and into Argo CD's namespace.
    for rel in walk_files(repo):
        if os.path.basename(rel) != "Chart.yaml":
            continue
        d = os.path.dirname(rel)
        tdir = os.path.join(repo, d, "templates")
        texts = [open(os.path.join(tdir, f), errors="replace").read() for f in walk_files(tdir)] if os.path.isdir(tdir) else []
        if not any("argoproj.io/v1alpha1" in t and "kind: Application" in t for t in texts):
            continue
        if any(os.path.normpath(s.get("path", "")) == os.path.normpath(d or ".")
               for a in apps for s in (a["spec"].get("sources") or [a["spec"].get("source") or {}])):
            continue
        ns = opts.argo_namespace
        apps.append({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                     "metadata": {"name": os.path.basename(d) or "root", "namespace": ns},
                     "spec": {"destination": {"namespace": ns, "server": "https://kubernetes.default.svc"},
                              "project": "default",
                              "source": {"path": d, "repoURL": opts.repo_url or "", "targetRevision": "HEAD"}}})
    # App of apps: the Applications a kustomize, directory or (with helm) Helm source renders
    # replace a file's Application of the same name, or are added.
    i = 0
    while i < len(apps):
        parent = apps[i]
        i += 1
        spec = parent.get("spec") or {}
        paths = [s.get("path", "") for s in (spec.get("sources") or [spec.get("source") or {}])]
        if not any("argoproj.io/v1alpha1" in open(os.path.join(repo, f), errors="replace").read()
                   for f in walk_files(repo) for p in paths if (f + "/").startswith(p.rstrip("/") + "/")):
            continue
        scratch = tempfile.mkdtemp(prefix="argo-oracle-parent-")
        try:
            shutil.copytree(repo, os.path.join(scratch, "r"), symlinks=True)
            kind, out = render_app(os.path.join(scratch, "r"), parent, opts, tracking=False)
        except Failed:
            continue
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        objs = [d for d in yaml.safe_load_all(out) if d is not None] if kind == "yaml" else out
        for child in [o for o in objs if is_app(o)]:
            names = [a["metadata"]["name"] for a in apps]
            if child["metadata"]["name"] in names:
                apps[names.index(child["metadata"]["name"])] = child
            else:
                apps.append(child)
    return apps


# --- ApplicationSets (applicationset/generators, written from the Argo CD source) -------------

GOTMPL = None


def gotmpl(template, data, missing_error):
    global GOTMPL
    if GOTMPL is None:
        GOTMPL = subprocess.Popen([os.environ.get("ARGO_ORACLE_GOTMPL", "argo-gotmpl")], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
    GOTMPL.stdin.write(json.dumps({"template": template, "data": data, "missingkeyError": missing_error}) + "\n")
    GOTMPL.stdin.flush()
    r = json.loads(GOTMPL.stdout.readline())
    if "err" in r:
        raise Failed("failed to execute go template %s: %s" % (template, r["err"]))
    return r["out"]


def fasttemplate(s, params):
    if "{{" not in s:
        return s

    def rep(m):
        tag = m.group(1)
        v = params.get(tag.strip())
        return v if isinstance(v, str) and tag.strip() else "{{%s}}" % tag
    return re.sub(r"\{\{(.*?)\}\}", rep, s, flags=re.S)


def replace(s, params, o):
    return gotmpl(s, params, o["missing"]) if o["go"] else fasttemplate(s, params)


def template_node(n, params, o):
    if isinstance(n, str):
        return replace(n, params, o)
    if isinstance(n, dict):
        return {replace(k, params, o): template_node(v, params, o) for k, v in n.items()}
    if isinstance(n, list):
        return [template_node(x, params, o) for x in n]
    return n


def go_base(p):
    return p.rstrip("/").split("/")[-1] if p else "."


def sanitize(name):
    name = re.sub(r"[^-a-z0-9.]", "-", name.lower())[:253]
    return name.strip("-.")


def path_params(d, f, prefix, o):
    if o["go"]:
        m = {"path": d, "basename": go_base(d), "basenameNormalized": sanitize(go_base(d)), "segments": d.split("/")}
        if f:
            m["filename"] = go_base(f)
            m["filenameNormalized"] = sanitize(go_base(f))
        return {prefix: {"path": m}} if prefix else {"path": m}
    n = prefix + ".path" if prefix else "path"
    p = {n: d, n + ".basename": go_base(d), n + ".basenameNormalized": sanitize(go_base(d))}
    if f:
        p[n + ".filename"] = go_base(f)
        p[n + ".filenameNormalized"] = sanitize(go_base(f))
    for i, seg in enumerate(d.split("/")):
        if seg:
            p["%s[%d]" % (n, i)] = seg
    return p


def add_values(p, values, o):
    r = {k: replace(str(v), p, o) for k, v in (values or {}).items()}
    if not r:
        return
    if o["go"]:
        p["values"] = r
    else:
        for k, v in r.items():
            p["values." + k] = v


def go_fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if v is None:
        return "<nil>"
    return str(v)


def flatten(prefix, v, out):
    if isinstance(v, dict) and v:
        for k, x in v.items():
            flatten(prefix + "." + k if prefix else k, x, out)
    elif isinstance(v, list) and v:
        for i, x in enumerate(v):
            flatten(prefix + "." + str(i) if prefix else str(i), x, out)
    else:
        out[prefix] = go_fmt(v)


def repo_dirs(repo):
    out = []
    for root, dirs, _ in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for d in dirs:
            out.append(os.path.relpath(os.path.join(root, d), repo))
    return sorted(out, key=lambda p: p.split("/"))


def go_path_match(pattern, name):
    rx = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            rx += "[^/]*"
        elif c == "?":
            rx += "[^/]"
        elif c == "[":
            j = pattern.index("]", i)
            body = pattern[i + 1:j]
            rx += "[" + ("^" + body[1:] if body.startswith("^") else body) + "]"
            i = j
        elif c == "\\":
            i += 1
            rx += re.escape(pattern[i])
        else:
            rx += re.escape(c)
        i += 1
    return re.fullmatch(rx, name) is not None and "/" not in name[len(name):]


def gen_params(g, repo, o):
    if g.get("selector") or g.get("template"):
        raise Failed("selector/template on a generator")
    if "list" in g:
        out = []
        for e in g["list"].get("elements") or []:
            if o["go"]:
                out.append(e)
                continue
            p = {}
            for k, v in e.items():
                if k == "values":
                    for vk, vv in v.items():
                        if not isinstance(vv, str):
                            raise Failed("error parsing value as string")
                        p["values." + vk] = vv
                else:
                    if not isinstance(v, str):
                        raise Failed("error parsing value as string")
                    p[k] = v
            out.append(p)
        return out
    if "git" in g:
        git = g["git"]
        prefix = git.get("pathParamPrefix", "")
        out = []
        for d in repo_dirs(repo) if git.get("directories") else []:
            inc = any(go_path_match(r["path"], d) for r in git["directories"] if not r.get("exclude"))
            exc = any(go_path_match(r["path"], d) for r in git["directories"] if r.get("exclude"))
            if inc and not exc:
                p = path_params(d, None, prefix, o)
                add_values(p, git.get("values"), o)
                out.append(p)
        if git.get("files"):
            files = walk_files(repo)
            chosen = set()
            for r in git["files"]:
                if not r.get("exclude"):
                    chosen |= {f for f in files if fnmatch.fnmatchcase(f, r["path"])}
            for r in git["files"]:
                if r.get("exclude"):
                    chosen -= {f for f in files if fnmatch.fnmatchcase(f, r["path"])}
            for f in sorted(chosen):
                data = yaml.safe_load(open(os.path.join(repo, f)))
                objs = [data or {}] if not isinstance(data, list) else data
                d = os.path.dirname(f) or "."
                for obj in objs:
                    if o["go"]:
                        p = dict(obj)
                        p.update(path_params(d, f, prefix, o))
                    else:
                        p = {}
                        flatten("", obj, p)
                        p.update(path_params(d, f, prefix, o))
                    add_values(p, git.get("values"), o)
                    out.append(p)
        return out
    if "matrix" in g:
        a_gen, b_gen = g["matrix"]["generators"]
        out = []
        for a in gen_params(a_gen, repo, o):
            for b in gen_params(template_node(b_gen, a, o), repo, o):
                if o["go"]:
                    m = copy.deepcopy(b)
                    deep_merge(m, a)
                else:
                    m = dict(a)
                    for k, v in b.items():
                        if k in m and m[k] != v:
                            raise Failed("duplicate key")
                        m[k] = v
                out.append(m)
        return out
    if "merge" in g:
        keys = g["merge"]["mergeKeys"]
        gens = g["merge"]["generators"]
        base = gen_params(gens[0], repo, o)
        key = lambda p: json.dumps([p.get(k) for k in keys])
        for other in gens[1:]:
            over = {key(p): p for p in gen_params(other, repo, o)}
            for b in base:
                if key(b) in over:
                    if o["go"]:
                        deep_merge(b, over[key(b)])
                    else:
                        b.update(over[key(b)])
        return base
    raise Failed("generator not offline")


def deep_merge(dst, src):
    for k, v in src.items():
        if isinstance(dst.get(k), dict) and isinstance(v, dict):
            deep_merge(dst[k], v)
        else:
            dst[k] = copy.deepcopy(v)


def appset_apps(repo, d, opts):
    spec = d["spec"]
    if spec.get("templatePatch"):
        raise Failed("templatePatch")
    o = {"go": bool(spec.get("goTemplate")), "missing": "missingkey=error" in (spec.get("goTemplateOptions") or [])}
    out = []
    for g in spec["generators"]:
        for p in gen_params(g, repo, o):
            t = template_node(spec["template"], p, o)
            meta = dict(t.get("metadata") or {})
            if d["metadata"].get("namespace"):
                meta["namespace"] = d["metadata"]["namespace"]
            out.append({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": meta, "spec": t.get("spec") or {}})
    return out


def is_app(d):
    return isinstance(d, dict) and d.get("apiVersion") == "argoproj.io/v1alpha1" and d.get("kind") == "Application"


def walk_files(root):
    """filepath.Walk order: entries sorted by name, directories recursed where they fall."""
    out = []

    def go(rel):
        for name in sorted(os.listdir(os.path.join(root, rel))):
            p = os.path.join(rel, name) if rel else name
            full = os.path.join(root, p)
            if os.path.isdir(full) and not os.path.islink(full):
                if name != ".git":
                    go(p)
            else:
                out.append(p)

    go("")
    return out


def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def instance_name(app, control_plane):
    ns = app["metadata"].get("namespace", "")
    name = app["metadata"]["name"]
    return name if ns in ("", control_plane) else "%s_%s" % (ns, name)


def go_expand(s, env):
    """os.Expand with Argo's mapping ($$ -> $, unknown -> empty)."""
    special = set("*#$@!?-0123456789")
    out = []
    i = j = 0
    while j < len(s):
        if s[j] == "$" and j + 1 < len(s):
            out.append(s[i:j])
            rest = s[j + 1:]
            if rest[0] == "{":
                if len(rest) > 2 and rest[1] in special and rest[2] == "}":
                    name, w = rest[1], 3
                else:
                    k = rest.find("}", 1)
                    if k == 1:
                        name, w = "", 2
                    elif k < 0:
                        name, w = "", 1
                    else:
                        name, w = rest[1:k], k + 1
            elif rest[0] in special:
                name, w = rest[0], 1
            else:
                m = re.match(r"[A-Za-z0-9_]*", rest)
                name, w = m.group(0), len(m.group(0))
            if name == "" and w > 0:
                pass
            elif name == "":
                out.append("$")
            elif name == "$":
                out.append("$")
            else:
                out.append(env.get(name, ""))
            j += w
            i = j + 1
        j += 1
    out.append(s[i:])
    return "".join(out)


# --- one source ------------------------------------------------------------------------------

def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise Failed("%s: %s" % (" ".join(cmd[:4]), (p.stderr or p.stdout).strip()))
    return p.stdout


def render_source(work, source, app, opts):
    if source.get("ref") and not source.get("path") and not source.get("chart"):
        return "yaml", ""
    path = source.get("path", "")
    app_dir = os.path.normpath(os.path.join(work, path))
    if not (app_dir + "/").startswith(work.rstrip("/") + "/") and app_dir != work:
        raise Failed("app path outside root")
    if not os.path.isdir(app_dir):
        raise Failed("app path does not exist")
    inst = instance_name(app, opts.argo_namespace)
    merged = copy.deepcopy(source)
    for name in (".argocd-source.yaml", ".argocd-source-%s.yaml" % inst):
        f = os.path.join(app_dir, name)
        if os.path.isfile(f):
            merged = merge_patch(merged, yaml.safe_load(open(f)) or {})
    for k in ("repoURL", "path", "targetRevision", "chart"):
        if k in source:
            merged[k] = source[k]
        else:
            merged.pop(k, None)
    types = [t for t in ("kustomize", "helm", "directory", "plugin") if t in merged and merged[t] is not None]
    if len(types) > 1:
        raise Failed("multiple application sources defined")
    kind = types[0] if types else None
    if kind is None:
        kind = "directory"
        for n in sorted(os.listdir(app_dir)):
            if os.path.isdir(os.path.join(app_dir, n)):
                continue
            if n.endswith("Chart.yaml"):
                kind = "helm"
            if n in KFILES:
                kind = "kustomize"
    rev = opts.revision or ""
    env = {
        "ARGOCD_APP_NAME": inst,
        "ARGOCD_APP_NAMESPACE": app["spec"].get("destination", {}).get("namespace", ""),
        "ARGOCD_APP_PROJECT_NAME": app["spec"].get("project") or "default",
        "ARGOCD_APP_REVISION": rev,
        "ARGOCD_APP_REVISION_SHORT": rev[:7],
        "ARGOCD_APP_REVISION_SHORT_8": rev[:8],
        "ARGOCD_APP_SOURCE_REPO_URL": merged.get("repoURL", ""),
        "ARGOCD_APP_SOURCE_PATH": merged.get("path", ""),
        "ARGOCD_APP_SOURCE_TARGET_REVISION": merged.get("targetRevision", ""),
    }
    if kind == "kustomize":
        return "yaml", kustomize(work, app_dir, merged.get("kustomize") or {}, env, opts)
    if kind == "directory":
        return "objects", directory(work, app_dir, merged.get("directory") or {})
    if kind == "helm" and getattr(opts, "helm", False):
        return "objects", helm_template(work, app_dir, merged.get("helm") or {}, app, env, opts)
    raise Failed("not rendered: %s source" % kind)


def helm_template(work, app_dir, h, app, env, opts):
    """helmTemplate (reposerver/repository/repository.go) and Cmd.template (util/helm/cmd.go):
    `helm template . --name-template NAME ...` in the source's directory."""
    name = h.get("releaseName") or app["metadata"]["name"]
    ns = h.get("namespace") or (app["spec"].get("destination") or {}).get("namespace", "")
    root = os.path.realpath(work)

    def resolve(raw, base):
        p = go_expand(raw, env)
        if "://" in p:
            raise Failed("not rendered: remote value file")
        full = os.path.normpath(os.path.join(root, p.lstrip("/")) if p.startswith("/") else os.path.join(base, p))
        if not (full + "/").startswith(root + "/"):
            raise Failed("value file '%s' resolved to outside repository root" % raw)
        return full

    values = []
    srcs = app["spec"].get("sources") or []
    for raw in h.get("valueFiles") or []:
        ref = raw[1:].split("/")[0] if raw.startswith("$") else None
        if ref and any(s.get("ref") == ref for s in srcs):
            full = resolve("/" + raw.split("/", 1)[1] if "/" in raw else "/", root)
        else:
            full = resolve(raw, app_dir)
        if not os.path.exists(full) and h.get("ignoreMissingValueFiles"):
            continue
        values.append(full)
    args = [HELM, "template", ".", "--name-template", name]
    if ns:
        args += ["--namespace", ns]
    if h.get("kubeVersion"):
        args += ["--kube-version", h["kubeVersion"]]
    clean = lambda v: v if v.startswith("{") and v.endswith("}") else re.sub(r"(?<!\\),", r"\\,", v)
    for p in h.get("parameters") or []:
        if not p.get("forceString"):
            args += ["--set", "%s=%s" % (p["name"], clean(go_expand(str(p.get("value", "")), env)))]
    for p in h.get("parameters") or []:
        if p.get("forceString"):
            args += ["--set-string", "%s=%s" % (p["name"], clean(go_expand(str(p.get("value", "")), env)))]
    for p in h.get("fileParameters") or []:
        args += ["--set-file", "%s=%s" % (p["name"], clean(resolve(p["path"], app_dir)))]
    for v in values:
        args += ["--values", v]
    extra = None
    if h.get("valuesObject") is not None:
        extra = yaml.safe_dump(h["valuesObject"])
    elif h.get("values"):
        extra = h["values"]
    scratch = tempfile.mkdtemp(prefix="argo-oracle-helm-")
    try:
        if extra:
            with open(os.path.join(scratch, "values.yaml"), "w") as f:
                f.write(extra)
            args += ["--values", os.path.join(scratch, "values.yaml")]
        for v in h.get("apiVersions") or []:
            args += ["--api-versions", v]
        if not h.get("skipCrds"):
            args.append("--include-crds")
        if h.get("skipSchemaValidation"):
            args.append("--skip-schema-validation")
        if h.get("skipTests"):
            args.append("--skip-tests")
        env_vars = dict(os.environ, HELM_CONFIG_HOME=os.path.join(scratch, "h"),
                        HELM_CACHE_HOME=os.path.join(scratch, "c"), HELM_DATA_HOME=os.path.join(scratch, "d"))
        p = subprocess.run(args, cwd=app_dir, capture_output=True, text=True, timeout=120, env=env_vars)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if p.returncode != 0:
        raise Failed("helm template: %s" % p.stderr.strip())
    objs = []
    for d in yaml.safe_load_all(p.stdout):
        if d is not None:
            add_object(objs, d)
    return objs


def add_object(objs, doc):
    """GenerateManifests: a List's items split, a null List dropped."""
    if isinstance(doc.get("items"), list):
        objs += doc["items"]
    elif not ("items" in doc and doc["items"] is None and "spec" not in doc and "status" not in doc):
        objs.append(doc)


def kustomize(work, app_dir, k, env, opts):
    edit = lambda *args: run([KUSTOMIZE, "edit"] + list(args), app_dir)
    if k.get("namePrefix"):
        edit("set", "nameprefix", "--", k["namePrefix"])
    if k.get("nameSuffix"):
        edit("set", "namesuffix", "--", k["nameSuffix"])
    if k.get("images"):
        edit("set", "image", *[go_expand(i, env) for i in k["images"]])
    if k.get("replicas"):
        args = []
        for r in k["replicas"]:
            c = r["count"]
            if isinstance(c, str):
                if not re.fullmatch(r"[+-]?[0-9]+", c):
                    raise Failed("expected integer value for count. Received: %s" % c)
                c = int(c)
            args.append("%s=%d" % (r["name"], c))
        edit("set", "replicas", *args)
    if k.get("commonLabels"):
        flags = []
        if k.get("forceCommonLabels"):
            flags.append("--force")
        if k.get("labelWithoutSelector"):
            flags.append("--without-selector")
        if k.get("labelIncludeTemplates"):
            flags.append("--include-templates")
        pairs = ["%s:%s" % (n, go_expand(v, env)) for n, v in k["commonLabels"].items()]
        edit("add", "label", *(flags + pairs))
    if k.get("commonAnnotations"):
        flags = ["--force"] if k.get("forceCommonAnnotations") else []
        sub = k.get("commonAnnotationsEnvsubst")
        pairs = ["%s:%s" % (n, go_expand(v, env) if sub else v) for n, v in k["commonAnnotations"].items()]
        edit("add", "annotation", *(flags + pairs))
    if k.get("namespace"):
        edit("set", "namespace", "--", k["namespace"])
    if k.get("patches"):
        names = [f for f in KFILES if os.path.exists(os.path.join(app_dir, f))]
        if not names:
            raise Failed("kustomization file not found in the path")
        kpath = os.path.join(app_dir, names[0])
        doc = yaml.safe_load(open(kpath))
        patches = [marshal_patch(p) for p in k["patches"]]
        if "patches" in doc:
            if not isinstance(doc["patches"], list):
                raise Failed("expected 'patches' field in kustomization.yaml to be []any")
            doc["patches"] = doc["patches"] + patches
        else:
            doc["patches"] = patches
        with open(kpath, "w") as f:
            yaml.dump(doc, f, Dumper=GoYamlDumper, sort_keys=True)
    comps = k.get("components") or []
    if comps and k.get("ignoreMissingComponents"):
        root = os.path.realpath(work)
        kept = []
        for c in comps:
            p = os.path.normpath(os.path.join(app_dir, c))
            if (p + "/").startswith(root + "/") and os.path.exists(p):
                kept.append(c)
        comps = kept
    if comps:
        edit("add", "component", *comps)
    build = [KUSTOMIZE, "build", app_dir] + (opts.build_options or "").split()
    kv = k.get("kubeVersion")
    if "--enable-helm" in build:
        if kv:
            build += ["--helm-kube-version", kv]
        for v in k.get("apiVersions") or []:
            build += ["--helm-api-versions", v]
    return run(build, work)


class GoYamlDumper(yaml.SafeDumper):
    """Quotes every string go-yaml v2 (sigs.k8s.io/yaml, which Argo's patches step writes
    with) would read as another type: PyYAML's own YAML 1.1 set lacks y, Y, n and N."""


GoYamlDumper.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:y|Y|n|N)$"), list("yYnN"))


def marshal_patch(p):
    out = {}
    for key in ("path", "patch"):
        if p.get(key):
            out[key] = p[key]
    if p.get("target") is not None:
        out["target"] = {k: v for k, v in p["target"].items() if k in (
            "group", "version", "kind", "name", "namespace", "labelSelector", "annotationSelector") and v}
    if p.get("options"):
        out["options"] = {k: bool(v) for k, v in p["options"].items()}
    return out


def expand_braces(pattern):
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(pattern[:m.start()] + alt + pattern[m.end():])
    return out


def glob_match(pattern, text):
    return any(fnmatch.fnmatchcase(text, p) for p in expand_braces(pattern))


def directory(work, app_dir, d):
    objs = []
    for rel in walk_files(app_dir):
        if not d.get("recurse") and "/" in rel:
            continue
        name = os.path.basename(rel)
        if not d.get("disableExtensionFilter") and not re.match(r"^.*\.(yaml|yml|json|jsonnet)$", name):
            continue
        if d.get("exclude") and glob_match(d["exclude"], rel):
            continue
        if d.get("include") and not glob_match(d["include"], rel):
            continue
        text = open(os.path.join(app_dir, rel)).read()
        if SKIP_MARKER in text:
            continue
        if name.endswith(".jsonnet"):
            raise Failed("jsonnet")
        if name.endswith(".json"):
            objs.append(json.loads(text))
            continue
        try:
            docs = list(yaml.safe_load_all(text))
        except yaml.YAMLError:
            if "apiVersion:" in text and "kind:" in text and "metadata:" in text:
                raise Failed("Failed to unmarshal %s" % rel)
            continue
        for doc in docs:
            if doc is None:
                continue
            if not isinstance(doc, dict) or not doc.get("kind"):
                raise Failed("Object 'Kind' is missing in %s" % rel)
            add_object(objs, doc)
    return objs


def track(objs, how, app, dest_ns):
    for o in objs:
        api = o.get("apiVersion", "")
        group = api.split("/")[0] if "/" in api else ""
        if o.get("kind") == "CustomResourceDefinition" and group == "apiextensions.k8s.io":
            continue
        meta = o.setdefault("metadata", {}) or {}
        o["metadata"] = meta
        if how in ("annotation", "annotation+label"):
            ann = meta.get("annotations") or {}
            ann.pop("argocd.argoproj.io/installation-id", None)
            ns = meta.get("namespace") or dest_ns
            ann["argocd.argoproj.io/tracking-id"] = "%s:%s/%s:%s/%s" % (app, group, o.get("kind"), ns, meta.get("name", ""))
            meta["annotations"] = ann
        if how in ("label", "annotation+label"):
            v = app
            if how == "annotation+label" and len(v) > 63:
                v = re.sub(r"[^A-Za-z0-9]+$", "", v[:63])
            labels = meta.get("labels") or {}
            labels["app.kubernetes.io/instance"] = v
            meta["labels"] = labels


def render_app(repo, app, opts, tracking):
    spec = app.get("spec", {})
    sources = spec.get("sources") or [spec.get("source")]
    if opts.repo_url:
        norm = lambda u: re.sub(r"(\.git)?/*$", "", u.lower())
        for s in sources:
            if not (s.get("ref") and not s.get("path")) and norm(s.get("repoURL", "")) != norm(opts.repo_url):
                raise Failed("not rendered: source is another repository")
    parts = [render_source(repo, s, app, opts) for s in sources]
    if not (tracking and opts.tracking) and all(kind == "yaml" for kind, _ in parts):
        texts = [t for _, t in parts if t]
        return "yaml", "---\n".join(texts)
    objs = []
    for kind, out in parts:
        objs += [d for d in yaml.safe_load_all(out) if d is not None] if kind == "yaml" else out
    if tracking and opts.tracking:
        track(objs, opts.tracking, instance_name(app, opts.argo_namespace), spec.get("destination", {}).get("namespace", ""))
    return "objects", objs


def render(opts):
    work = tempfile.mkdtemp(prefix="argo-oracle-")
    try:
        repo = os.path.join(work, "repo")
        shutil.copytree(opts.repo, repo, symlinks=True)
        # Each Application renders from a fresh copy (the edits rewrite its kustomization).
        app = load_app(repo, opts.app, opts)
        shutil.rmtree(repo)
        shutil.copytree(opts.repo, repo, symlinks=True)
        return render_app(repo, app, opts, tracking=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def print_result(kind, out):
    if kind == "yaml":
        sys.stdout.write(out)
    else:
        for o in out:
            print(json.dumps(o, sort_keys=True))


# --- checking goldens ------------------------------------------------------------------------

def case_options(case):
    args = shlex.split(open(os.path.join(case, "args")).read()) if os.path.exists(os.path.join(case, "args")) else []
    for i, a in enumerate(args[:-1]):
        if a == "--build-options":
            args[i:i + 2] = ["--build-options=" + args[i + 1], ""]
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--argo-application")
    p.add_argument("--argo-revision", dest="revision")
    p.add_argument("--build-options")
    p.add_argument("--argo-tracking", dest="tracking")
    p.add_argument("--argo-repo-url", dest="repo_url")
    p.add_argument("--argo-namespace", default="argocd")
    p.add_argument("--enable-helm", dest="helm", action="store_true")
    o, _ = p.parse_known_args(args)
    o.repo = os.path.join(case, "repo")
    o.app = o.argo_application
    if os.path.isfile(os.path.join(case, o.app)):
        o.app = os.path.abspath(os.path.join(case, o.app))
    return o


def check(cases_dir):
    bad = 0
    n = 0
    for name in sorted(os.listdir(cases_dir)):
        case = os.path.join(cases_dir, name)
        if not os.path.isdir(case):
            continue
        n += 1
        o = case_options(case)
        if o.build_options is None:
            o.build_options = argocd_cm_options(o.repo)
        expected_err = os.path.exists(os.path.join(case, "expected.err"))
        try:
            kind, out = render(o)
        except Failed as e:
            if expected_err:
                print("ok   %s (both fail: %s)" % (name, str(e).splitlines()[0][:100]))
            else:
                bad += 1
                print("FAIL %s: the oracle fails: %s" % (name, e))
            continue
        if expected_err:
            bad += 1
            print("FAIL %s: ply fails, the oracle renders" % name)
            continue
        expected = open(os.path.join(case, "expected.yaml")).read()
        if kind == "yaml":
            same = expected == out
        else:
            same = [d for d in yaml.safe_load_all(expected) if d is not None] == out
        if same:
            print("ok   %s (%s)" % (name, "bytes" if kind == "yaml" else "objects"))
        else:
            bad += 1
            print("FAIL %s: differs from the oracle" % name)
            if kind == "yaml":
                sys.stdout.writelines(__import__("difflib").unified_diff(
                    expected.splitlines(True), out.splitlines(True), "ply", "oracle"))
    print("%d cases, %d disagree" % (n, bad))
    return 1 if bad else 0


def argocd_cm_options(repo):
    for rel in walk_files(repo):
        if not rel.endswith((".yaml", ".yml")):
            continue
        text = open(os.path.join(repo, rel)).read()
        if "argocd-cm" not in text:
            continue
        try:
            for d in yaml.safe_load_all(text):
                if isinstance(d, dict) and d.get("kind") == "ConfigMap" and (d.get("metadata") or {}).get("name") == "argocd-cm":
                    return (d.get("data") or {}).get("kustomize.buildOptions", "")
        except yaml.YAMLError:
            pass
    return ""


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("render")
    r.add_argument("repo")
    r.add_argument("app")
    r.add_argument("--revision", default="")
    r.add_argument("--build-options", default=None)
    r.add_argument("--tracking", default=None)
    r.add_argument("--repo-url", default=None)
    r.add_argument("--argo-namespace", default="argocd")
    r.add_argument("--enable-helm", dest="helm", action="store_true",
                   help="render Helm sources with helm template (ARGO_ORACLE_HELM, default helm-3.19.0)")
    c = sub.add_parser("check")
    c.add_argument("cases")
    a = p.parse_args()
    if a.cmd == "check":
        sys.exit(check(a.cases))
    if a.build_options is None:
        a.build_options = argocd_cm_options(a.repo)
    try:
        print_result(*render(a))
    except Failed as e:
        print("oracle: %s" % e, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
