#!/usr/bin/env python3
"""Differential check of name references and replacements against `kubectl kustomize`.

Generates random small kustomization trees (seeded, deterministic), renders each with
kubectl kustomize and with ply, and reports every seed where they disagree (one succeeds and
the other fails, or the outputs differ byte for byte). Trees that agree are deleted.

    tools/differential_refs.py namerefs|replacements COUNT [FIRST_SEED] [--ply PATH] [--out DIR]

Python 3 standard library only; needs kubectl on PATH. Not run by CI (it needs the oracle).
Known disagreements are listed in the refs report (untagged scalars after namePrefix).
"""
import argparse, os, random, shutil, subprocess, sys

NAMES=['a','b','g']
def obj_defs(rng, ns_opt):
    out=[]
    for kind,api in [('ConfigMap','v1'),('Secret','v1'),('ServiceAccount','v1'),('Service','v1')]:
        for n in NAMES:
            if rng.random()<0.5:
                meta=f"  name: {n}\n"
                if ns_opt and rng.random()<0.4: meta+=f"  namespace: {rng.choice(['n1','n2','default'])}\n"
                out.append(f"apiVersion: {api}\nkind: {kind}\nmetadata:\n{meta}")
    return out
def referrers(rng, idx):
    out=[]
    n=lambda: rng.choice(NAMES)
    ns=f"  namespace: {rng.choice(['n1','n2'])}\n" if rng.random()<0.3 else ""
    out.append(f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: d{idx}
{ns}spec:
  template:
    spec:
      serviceAccountName: {n()}
      containers:
      - name: c
        image: x
        envFrom:
        - configMapRef:
            name: {n()}
      volumes:
      - name: v
        secret:
          secretName: {n()}
""")
    subs=""
    for _ in range(rng.randint(1,3)):
        subs+=f"- kind: ServiceAccount\n  name: {n()}\n"
        if rng.random()<0.6: subs+=f"  namespace: {rng.choice(['n1','n2','default'])}\n"
    kind=rng.choice(['RoleBinding','ClusterRoleBinding'])
    out.append(f"""apiVersion: rbac.authorization.k8s.io/v1
kind: {kind}
metadata:
  name: rb{idx}
{ns if kind=='RoleBinding' else ''}roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: view
subjects:
{subs}""")
    out.append(f"""apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cr{idx}
rules:
- resourceNames: [{n()}, {n()}]
""")
    out.append(f"""apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: in{idx}
{ns}spec:
  defaultBackend:
    service:
      name: {n()}
""")
    return out
def kust(rng, resources, top=False):
    s=""
    if rng.random()<0.5: s+=f"namePrefix: {rng.choice(['p-','q-'])}\n"
    if rng.random()<0.4: s+=f"nameSuffix: {rng.choice(['-s','-t'])}\n"
    if rng.random()<0.4: s+=f"namespace: {rng.choice(['n1','n2'])}\n"
    s+="resources:\n"+"".join(f"- {r}\n" for r in resources)
    return s
def gen_namerefs(seed, d):
    rng=random.Random(seed)
    if os.path.exists(d): shutil.rmtree(d)
    os.makedirs(d)
    bases=[]
    for b in range(rng.randint(1,3)):
        bd=os.path.join(d,f'b{b}'); os.makedirs(bd)
        docs=obj_defs(rng, True)
        if rng.random()<0.5: docs+=referrers(rng, b)
        if not docs: docs=obj_defs(rng,False) or ["apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"]
        open(os.path.join(bd,'r.yaml'),'w').write('---\n'.join(docs))
        k=kust(rng,['r.yaml'])
        if rng.random()<0.5:
            k+="configMapGenerator:\n- name: "+rng.choice(['g','a'])+"\n  literals: [k=v"+str(b)+"]\n"
        if rng.random()<0.3:
            k+="secretGenerator:\n- name: "+rng.choice(['g','b'])+"\n  literals: [k=v]\n"
        open(os.path.join(bd,'kustomization.yaml'),'w').write(k)
        if rng.random()<0.4:
            od=os.path.join(d,f'o{b}'); os.makedirs(od)
            open(os.path.join(od,'kustomization.yaml'),'w').write(kust(rng,[f'../b{b}']))
            bases.append(f'o{b}'); continue
        bases.append(f'b{b}')
    docs=referrers(rng, 9)
    open(os.path.join(d,'top.yaml'),'w').write('---\n'.join(docs))
    open(os.path.join(d,'kustomization.yaml'),'w').write(kust(rng,bases+['top.yaml'],True))

RES = """apiVersion: v1
kind: ConfigMap
metadata:
  name: src
  labels: {app: web, n: "5"}
data:
  image: reg.io/app:1.2
  host: a.b.c
  port: "8080"
  num: "7"
  flag: "true"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {tier: front}
  annotations: {note: x}
spec:
  replicas: 2
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1.0
        args: ["--a=1", "--b"]
        ports:
        - name: http
          containerPort: 80
        env:
        - name: HOST
          value: h
      - name: side
        image: envoy
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: other
spec:
  ports:
  - name: http
    port: 80
    targetPort: 8080
  selector: {app: web}
"""
SOURCES=['data.image','data.host','data.port','data.num','data.flag','metadata.name','metadata.labels','spec.replicas','spec.template.spec.containers.0.image','spec.template.spec.containers.[name=main].ports','spec.ports.0.port','spec.ports.[name=http].targetPort','spec.template.spec.containers.0.args.1']
SRC_OBJ={'data':('ConfigMap','src'),'metadata':None,'spec.replicas':('Deployment','web'),'spec.template':('Deployment','web'),'spec.ports':('Service','web')}
TARGETS=['spec.replicas','metadata.name','metadata.labels.x','spec.template.spec.containers.*.image','spec.template.spec.containers.[name=main].image','spec.template.spec.containers.[name=m.*].env.[name=HOST].value','spec.template.spec.containers.0.args.0','spec.template.spec.containers.1.args.0','spec.ports.[name=http].port','spec.ports.0.targetPort','spec.selector.app','spec.new.deep.field','spec.template.spec.containers.[name=new].image','data.port','data.flag','spec.template.spec.containers.2.name']
def src_for(rng, fp):
    for k,v in SRC_OBJ.items():
        if fp.startswith(k):
            if v: return v
    return rng.choice([('ConfigMap','src'),('Deployment','web'),('Service','web')])
def gen_replacements(seed, d):
    rng=random.Random(seed)
    if os.path.exists(d): shutil.rmtree(d)
    os.makedirs(d)
    open(d+'/r.yaml','w').write(RES)
    reps=[]
    for _ in range(rng.randint(1,2)):
        fp=rng.choice(SOURCES); kind,name=src_for(rng,fp)
        src=f"    kind: {kind}\n    name: {name}\n    fieldPath: {fp}\n"
        if rng.random()<0.25:
            src+=f"    options:\n      delimiter: '{rng.choice([':','.','='])}'\n      index: {rng.choice([0,1,2])}\n"
        tg=""
        for _ in range(rng.randint(1,2)):
            kind2=rng.choice(['Deployment','Service','ConfigMap'])
            tg+=f"  - select:\n      kind: {kind2}\n"
            if rng.random()<0.2: tg+="    reject:\n    - name: web\n"
            tg+="    fieldPaths:\n"+"".join(f"    - {rng.choice(TARGETS)}\n" for _ in range(rng.randint(1,2)))
            opts=[]
            if rng.random()<0.5: opts.append("create: true")
            if rng.random()<0.2: opts.append(f"delimiter: '{rng.choice(['-',':','='])}'"); opts.append(f"index: {rng.choice([-1,0,1,5])}")
            if opts: tg+="    options:\n"+"".join(f"      {o}\n" for o in opts)
        reps.append(f"- source:\n{src}  targets:\n{tg}")
    k="resources:\n- r.yaml\n"
    if rng.random()<0.3: k+="namePrefix: p-\n"
    k+="replacements:\n"+"".join(reps)
    open(d+'/kustomization.yaml','w').write(k)


def run(cmd, d):
    p = subprocess.run(cmd + [d], capture_output=True, text=True)
    return p.returncode, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["namerefs", "replacements"])
    ap.add_argument("count", type=int)
    ap.add_argument("first", type=int, nargs="?", default=0)
    ap.add_argument("--ply", default=os.path.join(os.path.dirname(__file__), "..", "target", "debug", "ply"))
    ap.add_argument("--out", default="/tmp/ply-differential-refs")
    a = ap.parse_args()
    gen = gen_namerefs if a.kind == "namerefs" else gen_replacements
    bad = 0
    for seed in range(a.first, a.first + a.count):
        d = os.path.join(a.out, f"{a.kind}-{seed}")
        gen(seed, d)
        k = run(["kubectl", "kustomize"], d)
        p = run([a.ply, "render", "--kustomize-version", "5.5.0"], d)
        if (k[0] == 0) != (p[0] == 0) or (k[0] == 0 and k[1] != p[1]):
            bad += 1
            print(f"DIFF seed {seed}: kubectl exit {k[0]}, ply exit {p[0]}: {d}")
        else:
            shutil.rmtree(d)
    print(f"{bad} of {a.count} disagree")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
