#!/usr/bin/env python3
"""Generate ply's built-in schema table (src/schema/kubernetes-1.37.table).

Reads the Kubernetes 1.37 definitions (JSON Schema `$defs`, ../shared/schema/
kubernetes-1.37-definitions.json) and writes the compact table that
src/schema/builtin.rs embeds with include_str!. Python 3 standard library only.

    python3 tools/gen_schema.py [DEFINITIONS.json] [OUTPUT]

Table format (one record per line, fields separated by a tab, `-` = empty):

    # comment
    K <group> <version> <kind> <type-index> <n|c>        a kind: root type, namespaced or cluster
    T <name> <map-type>                                    a type; its index is its rank among T lines
    F <field> <shape> <strategy> <merge-key> <list-type> <list-map-keys,> <map-type>

F lines belong to the T line above them. A shape is a chain of `[` (list of) and
`{` (map of) ending in `@<type-index>` (an object type), `*` (anything: untyped,
preserve-unknown-fields, int-or-string) or `.` (a scalar). Scalar fields are left
out: patch metadata is only ever looked up for fields holding maps or lists.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_IN = os.path.join(HERE, "..", "..", "shared", "schema", "kubernetes-1.37-definitions.json")
DEFAULT_OUT = os.path.join(HERE, "..", "src", "schema", "kubernetes-1.37.table")

# Kinds that live outside namespaces. The definitions carry no scope, so the list is kept here:
# it is the cluster-scoped column of `kubectl api-resources` for Kubernetes 1.37's built-in
# groups. Every other kind with a GVK is namespaced.
CLUSTER_SCOPED = {
    ("", "Namespace"), ("", "Node"), ("", "PersistentVolume"), ("", "ComponentStatus"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("authentication.k8s.io", "TokenReview"),
    ("authentication.k8s.io", "SelfSubjectReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "SubjectAccessReview"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("internal.apiserver.k8s.io", "StorageVersion"),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "IPAddress"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"),
    ("policy", "PodSecurityPolicy"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "DeviceTaintRule"),
    ("resource.k8s.io", "ResourceSlice"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"),
    ("storagemigration.k8s.io", "StorageVersionMigration"),
}


def types_of(s):
    t = s.get("type")
    if t is None:
        return set()
    return {t} if isinstance(t, str) else set(t)


class Gen:
    def __init__(self, defs):
        self.defs = defs
        self.index = {}     # name -> index
        self.order = []     # names (and synthetic names of inline objects)
        self.inline = {}    # synthetic name -> schema
        for name in sorted(defs):
            if self.is_object(defs[name]):
                self.add(name)

    def add(self, name):
        self.index[name] = len(self.order)
        self.order.append(name)

    @staticmethod
    def is_object(s):
        return bool(s.get("properties"))

    def ref_name(self, ref):
        return ref.rsplit("/", 1)[-1]

    def shape(self, s, owner, field):
        """The shape code of a schema."""
        if "$ref" in s:
            name = self.ref_name(s["$ref"])
            target = self.defs.get(name)
            if target is None:
                return "*"
            if name in self.index:
                return "@%d" % self.index[name]
            return self.shape(target, owner, field)
        if s.get("x-kubernetes-preserve-unknown-fields") or s.get("x-kubernetes-int-or-string"):
            return "*"
        if "allOf" in s and len(s["allOf"]) == 1:
            return self.shape(s["allOf"][0], owner, field)
        if any(k in s for k in ("oneOf", "anyOf", "allOf")):
            return "*"
        t = types_of(s)
        if "array" in t:
            return "[" + self.shape(s.get("items") or {}, owner, field + "[]")
        if "object" in t or not t:
            if s.get("properties"):
                name = "%s.%s" % (owner, field)
                if name not in self.index:
                    self.inline[name] = s
                    self.add(name)
                return "@%d" % self.index[name]
            ap = s.get("additionalProperties")
            if isinstance(ap, dict):
                return "{" + self.shape(ap, owner, field + "{}")
            return "*"
        return "."

    def field_line(self, owner, field, s):
        shape = self.shape(s, owner, field)
        if shape == ".":
            return None
        def ext(k):
            v = s.get(k)
            if v is None or v == "" or v == []:
                return "-"
            return ",".join(v) if isinstance(v, list) else str(v)
        return "\t".join(["F", field, shape,
                          ext("x-kubernetes-patch-strategy"), ext("x-kubernetes-patch-merge-key"),
                          ext("x-kubernetes-list-type"), ext("x-kubernetes-list-map-keys"),
                          ext("x-kubernetes-map-type")])

    def schema_of(self, name):
        return self.defs.get(name) or self.inline[name]

    def run(self):
        out = ["# ply's built-in schema table: generated by tools/gen_schema.py from "
               "kubernetes-1.37-definitions.json. Do not edit; run `just gen-schema`."]
        kinds = []
        body = []
        i = 0
        # self.order grows while inline object types are discovered
        while i < len(self.order):
            name = self.order[i]
            s = self.schema_of(name)
            body.append("\t".join(["T", name, s.get("x-kubernetes-map-type") or "-"]))
            for field in sorted(s.get("properties") or {}):
                line = self.field_line(name, field, s["properties"][field])
                if line:
                    body.append(line)
            for gvk in s.get("x-kubernetes-group-version-kind") or []:
                scope = "c" if (gvk["group"], gvk["kind"]) in CLUSTER_SCOPED else "n"
                kinds.append("\t".join(["K", gvk["group"] or "-", gvk["version"], gvk["kind"],
                                        str(i), scope]))
            i += 1
        out.extend(sorted(kinds))
        out.extend(body)
        return "\n".join(out) + "\n"


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_IN
    dst = sys.argv[2] if len(sys.argv) > 2 else DEFAULT_OUT
    with open(src) as f:
        doc = json.load(f)
    defs = doc.get("$defs") or doc.get("definitions") or {}
    text = Gen(defs).run()
    with open(dst, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
