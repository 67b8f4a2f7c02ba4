//! Patches as kustomize applies them: `patchesStrategicMerge`, `patches` and
//! `patchesJson6902` of a kustomization, and the PatchTransformer,
//! PatchStrategicMergeTransformer and PatchJson6902Transformer plugin configurations. Owns
//! loading a patch (strategic merge or JSON 6902, detected as kustomize detects it), choosing
//! its targets (by id through an index, or by a selector of anchored regular expressions and
//! label/annotation selectors) and what happens around the merge (names, namespaces and kinds
//! restored, whole-resource deletes, patches that match nothing). The merging itself is the
//! shared core's (`merge::smp` in kustomize's dialect, `merge::json6902`); reads no files.

use crate::kustomization::Selector;
use crate::source::Location;

use super::KustomizeVersion;
use crate::yaml::Node;

/// Decides which kinds are cluster-scoped.
pub(super) type ScopeFn<'a> = crate::resource::ClusterScoped<'a>;

/// What a patch does.
#[derive(Clone, Debug)]
pub(super) enum Body {
    /// Strategic merge patches (one per document), each with where it starts.
    Smp(Vec<(Node, Option<Location>)>),
    /// A JSON 6902 operation list.
    Json(Node),
    /// Nothing to apply: the text reads both as strategic merge patches and as a JSON 6902
    /// list, each empty (an empty file, only comments, `---`, `[]`, `null`). kustomize v5.5.0
    /// refuses it ("illegally qualifies as both an SM and JSON patch"); from v5.8.0 such a
    /// patch is ignored (PR #5771, `PatchTransformerPlugin.Config`), which [`load_patch`]
    /// decides by the render's version.
    Nothing,
}

/// Which kustomize transformer a patch belongs to: their rules differ in small ways.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flavor {
    /// `patchesStrategicMerge` / PatchStrategicMergeTransformer.
    StrategicMerge,
    /// `patches` / PatchTransformer.
    Patch,
    /// `patchesJson6902` / PatchJson6902Transformer.
    Json6902,
}

/// One loaded patch.
#[derive(Clone, Debug)]
pub(super) struct Patch {
    pub body: Body,
    pub target: Option<Selector>,
    pub allow_name_change: bool,
    pub allow_kind_change: bool,
    pub flavor: Flavor,
    /// How kustomize names the patch in its messages: `[path: "p.yaml"]`, `[patch: "…"]`.
    pub source: String,
    /// Where the patch is declared (the kustomization entry or the plugin configuration).
    pub declared: Option<Location>,
    /// The file of a JSON 6902 patch read from one (field provenance places its values
    /// there; a strategic merge patch's documents carry their own locations).
    pub file: Option<std::sync::Arc<crate::source::SourceFile>>,
}

mod apply;
mod index;
mod load;
mod object;
mod select;

pub(super) use apply::apply_all;
pub(super) use load::{
    PatchFile, load_json6902, load_patch, load_patches, load_strategic_merge, parse_patch_text,
    source_name, strategic_documents,
};
pub(super) use select::{chosen, select_indices};

#[cfg(test)]
mod tests {
    use super::index::Index;
    use super::load::opens_with_list;
    use super::select::select;
    use super::*;
    use crate::diag::{ErrorKind, Result, Warnings};
    use crate::render::{Context, RenderOptions};
    use crate::resource::Gvk;
    use crate::resource::Resource;
    use crate::schema::Schema;
    use crate::transform::FieldSpecTables;

    #[test]
    fn operation_lists_are_told_from_objects_by_their_first_content_line() {
        for text in [
            "- op: add",
            "# c\n\n---\n- op: add",
            "--- [{\"op\": \"add\"}]",
            "[{\"op\": \"add\"}]",
            "%YAML 1.1\n---\n-\n  op: add",
        ] {
            assert!(opens_with_list(text), "{text:?}");
        }
        for text in ["", "kind: X", "-x: 1", "--- {a: 1}", "# - op: add\nkind: X"] {
            assert!(!opens_with_list(text), "{text:?}");
        }
        // One reading either way: YAML 1.1 booleans in operations, YAML 1.2 in objects.
        let Ok(Body::Json(ops)) =
            parse_patch_text("- op: add\n  path: /a\n  value: y\n", None, "t")
        else {
            panic!("not read as operations");
        };
        assert_eq!(
            ops.as_seq()
                .and_then(|s| s.first())
                .and_then(|o| o.get("value")),
            Some(&Node::Bool(true))
        );
    }
    use crate::yaml::parse::parse_one;

    fn res(text: &str) -> Resource {
        Resource::new(parse_one(text).unwrap(), None)
    }

    /// A strategic merge or JSON 6902 patch of `text`, for `target` (none: the patch's own id).
    fn text_patch(text: &str, target: Option<Selector>, source: &str) -> Patch {
        Patch {
            body: parse_patch_text(text, None, "p").unwrap(),
            target,
            allow_name_change: false,
            allow_kind_change: false,
            flavor: Flavor::Patch,
            source: source.into(),
            declared: None,
            file: None,
        }
    }

    fn no_scope(_: &Gvk) -> bool {
        false
    }

    #[test]
    fn index_compares_effective_namespaces() {
        let slots = [
            Some(res(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
            )),
            Some(res(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: other}\n",
            )),
            Some(res(
                "apiVersion: v1\nkind: Namespace\nmetadata: {name: a, namespace: x}\n",
            )),
        ];
        let scope = |g: &Gvk| g.kind == "Namespace";
        for id_maps in [true, false] {
            let mut index = Index::new(&slots, id_maps, false);
            let mut find = |text: &str| index.by_any_id(&slots, &res(text).id(), &scope);
            let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a";
            assert_eq!(find(&format!("{cm}, namespace: default}}\n")), [0]);
            assert_eq!(find(&format!("{cm}}}\n")), [0]);
            assert_eq!(find(&format!("{cm}, namespace: other}}\n")), [1]);
            assert!(find(&format!("{cm}, namespace: third}}\n")).is_empty());
            // A cluster-scoped kind ignores the namespace.
            assert_eq!(
                find("apiVersion: v1\nkind: Namespace\nmetadata: {name: a, namespace: y}\n"),
                [2]
            );
        }
    }

    #[test]
    fn index_selection_equals_the_scan() {
        let texts = [
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {t: x}}\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: other}\n",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, annotations: {k: v}}\n",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: abc}\n",
        ];
        let mut slots: Vec<Option<Resource>> = texts.iter().map(|t| Some(res(t))).collect();
        // Two objects renamed by prefixes (their original names stay matchable), one deleted.
        for (i, names) in [(1, ["p-a", "q-p-a"]), (3, ["b", "p-b"])] {
            let r = slots[i].as_mut().unwrap();
            for n in names {
                r.store_previous_id();
                r.set_name(n);
            }
        }
        slots.push(None);
        let scope = |g: &Gvk| g.kind == "Namespace";
        let sel = |name: &str, ns: &str, kind: &str, labels: &str| Selector {
            name: Some(name.into()).filter(|s: &String| !s.is_empty()),
            namespace: Some(ns.into()).filter(|s: &String| !s.is_empty()),
            kind: Some(kind.into()).filter(|s: &String| !s.is_empty()),
            label_selector: Some(labels.into()).filter(|s: &String| !s.is_empty()),
            ..Selector::default()
        };
        let cases = [
            (sel("a", "", "", ""), vec![0, 1, 2, 4]),
            (sel("a", "other", "", ""), vec![1]),
            (sel("a", "default", "ConfigMap", ""), vec![0]),
            (sel("a", "", "", "t=x"), vec![0]),
            (sel("p-a", "", "", ""), vec![]),
            (sel("q-p-a", "", "", ""), vec![1]),
            (sel("b", "", "", ""), vec![3]),
            (sel("p-b", "", "ConfigMap", ""), vec![3]),
            (sel("a.*", "", "", ""), vec![0, 1, 2, 4, 5]),
            (sel("a.c", "", "", ""), vec![5]),
            (sel("", "other", "", ""), vec![1]),
            (sel("zz", "", "", ""), vec![]),
        ];
        let mut index = Index::new(&slots, false, true);
        for (s, want) in cases {
            let scanned = select(&slots, None, &s, &scope).unwrap();
            let indexed = select(&slots, Some(&mut index), &s, &scope).unwrap();
            assert_eq!(scanned, want, "{s:?}");
            assert_eq!(indexed, scanned, "{s:?}");
        }
        // Untargeted lookups: every previous id counts, through the maps or a scan alike.
        for id_maps in [true, false] {
            let mut index = Index::new(&slots, id_maps, false);
            let mut find = |text: &str| index.by_any_id(&slots, &res(text).id(), &scope);
            let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:";
            assert_eq!(
                find(&format!("{cm} {{name: p-a, namespace: other}}\n")),
                [1]
            );
            assert_eq!(find(&format!("{cm} {{name: a, namespace: other}}\n")), [1]);
            assert_eq!(find(&format!("{cm} {{name: p-b}}\n")), [3]);
            assert!(find(&format!("{cm} {{name: p-a}}\n")).is_empty());
        }
    }

    #[test]
    fn detects_json_and_strategic_merge() {
        let json = parse_patch_text("- op: remove\n  path: /a\n", None, "p").unwrap();
        assert!(matches!(json, Body::Json(_)));
        let json = parse_patch_text("[{\"op\": \"remove\", \"path\": \"/a\"}]", None, "p").unwrap();
        assert!(matches!(json, Body::Json(_)));
        let smp = parse_patch_text(
            "kind: A\nmetadata: {name: a}\n---\nkind: B\nmetadata: {name: b}\n",
            None,
            "p",
        )
        .unwrap();
        assert!(matches!(&smp, Body::Smp(d) if d.len() == 2));
        assert!(parse_patch_text("just text", None, "p").is_err());
    }

    /// kustomize's `PatchTransformerPlugin.Config`: exactly one of the two readings succeeds
    /// (v5.5.0), or both do and the patch holds nothing (ignored from v5.8.0).
    #[test]
    fn one_reading_must_succeed_as_in_kustomize() {
        let msg = |t: &str| parse_patch_text(t, None, "p").unwrap_err().message;
        // Both readings succeed: nothing to apply.
        for t in ["\n", "---\n", "---\n---\n", "# c\n", "[]", "null\n"] {
            let body = parse_patch_text(t, None, "p").unwrap();
            assert!(matches!(body, Body::Nothing), "{t:?}");
            let entry = crate::kustomization::Patch {
                patch: Some(format!("# keep\n{t}")),
                ..Default::default()
            };
            let mut read = |_: &str| -> Result<PatchFile> { unreachable!() };
            let mut load = |v| load_patch(&entry, Flavor::Patch, &mut read, None, v);
            let refused = load(KustomizeVersion::V5_5_0).err().unwrap().message;
            assert!(
                refused.starts_with("illegally qualifies as both"),
                "{t:?}: {refused}"
            );
            let ignored = load(KustomizeVersion::V5_8_1).unwrap();
            assert!(matches!(ignored.body, Body::Nothing), "{t:?}");
        }
        // Both fail.
        for (t, why) in [
            ("op: add\npath: /a\nvalue: 1\n", "missing kind"),
            ("metadata: {name: c}\ndata: {x: y}\n", "missing kind"),
            ("kind: ConfigMap\ndata: {x: y}\n", "missing metadata.name"),
            (
                "kind: ConfigMap\nmetadata: {name: \"\"}\n",
                "missing metadata.name",
            ),
            (
                "[{\"op\": \"add\", \"path\": \"/a\", \"value\": 1}, ]",
                "strict JSON",
            ),
            ("[{op: add, path: /a, value: 1}]", "strict JSON"),
            ("[1]", "operation is a map"),
            ("kind: List\nitems: 3\n", "expected array in List/items"),
            (
                "kind: List\nitems: [{metadata: {name: a}}]\n",
                "missing kind",
            ),
        ] {
            let m = msg(t);
            assert!(
                m.starts_with("unable to parse SM or JSON patch from p: "),
                "{t:?}: {m}"
            );
            assert!(m.contains(why), "{t:?}: {m}");
        }
        // One succeeds.
        let only_empty_maps = parse_patch_text("{}\n---\n{}\n", None, "p").unwrap();
        assert!(matches!(&only_empty_maps, Body::Smp(d) if d.is_empty()));
        let first_doc_only =
            parse_patch_text("- op: remove\n  path: /a\n---\nkind: X\n", None, "p");
        assert!(matches!(first_doc_only, Ok(Body::Json(_))));
        let list = parse_patch_text(
            "kind: List\nitems:\n- {kind: A, metadata: {name: a}}\n- {}\n- {kind: BList}\n",
            None,
            "p",
        )
        .unwrap();
        assert!(matches!(&list, Body::Smp(d) if d.len() == 2));
        let trailing_comma_in_yaml_flow =
            parse_patch_text("{kind: A, metadata: {name: a}, }", None, "p").unwrap();
        assert!(matches!(&trailing_comma_in_yaml_flow, Body::Smp(d) if d.len() == 1));
    }

    #[test]
    fn selector_parts_are_anchored_regexes() {
        let slots = vec![
            Some(res(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
            )),
            Some(res(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web-2}\n",
            )),
            Some(res(
                "apiVersion: v1\nkind: Service\nmetadata: {name: web, labels: {a: b}}\n",
            )),
        ];
        let sel = |name: &str| Selector {
            name: Some(name.into()),
            ..Selector::default()
        };
        assert_eq!(
            select(&slots, None, &sel("web"), &no_scope).unwrap(),
            [0, 2]
        );
        assert_eq!(
            select(&slots, None, &sel("web.*"), &no_scope).unwrap(),
            [0, 1, 2]
        );
        let by_label = Selector {
            label_selector: Some("a=b".into()),
            ..Selector::default()
        };
        assert_eq!(select(&slots, None, &by_label, &no_scope).unwrap(), [2]);
        let by_group = Selector {
            group: Some("apps".into()),
            name: Some("web".into()),
            ..Selector::default()
        };
        assert_eq!(select(&slots, None, &by_group, &no_scope).unwrap(), [0]);
    }

    #[test]
    fn untargeted_patch_finds_object_by_previous_id_and_keeps_name() {
        let mut r = res("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: '1'}\n");
        r.store_previous_id();
        r.set_name("pre-cm");
        let mut resources = vec![r];
        let patch = text_patch(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: x}\ndata: {b: '2'}\n",
            None,
            "p",
        );
        let schema = Schema::empty();
        let opts = RenderOptions::default();
        let tables = FieldSpecTables::builtin_for(opts.kustomize).unwrap();
        let cx = Context::new(&opts, &tables);
        let mut w = Warnings::default();
        // The patch names namespace x: no object has it.
        assert!(
            apply_all(
                &mut resources,
                std::slice::from_ref(&patch),
                cx,
                &schema,
                &mut w,
                &mut false
            )
            .is_err()
        );
        let mut patch = patch;
        patch.body = parse_patch_text(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {b: '2'}\n",
            None,
            "p",
        )
        .unwrap();
        apply_all(&mut resources, &[patch], cx, &schema, &mut w, &mut false).unwrap();
        assert_eq!(resources[0].name(), "pre-cm");
        assert_eq!(resources[0].node.str_at(&["data", "b"]), Some("2"));
    }

    #[test]
    fn targeted_patch_keeps_the_resource_api_version() {
        let schema = Schema::empty();
        let opts = RenderOptions::default();
        let tables = FieldSpecTables::builtin_for(opts.kustomize).unwrap();
        let cx = Context::new(&opts, &tables);
        let patch = |text: &str| {
            let target = Selector {
                kind: Some("ConfigMap".into()),
                ..Selector::default()
            };
            text_patch(text, Some(target), "p")
        };
        let mut w = Warnings::default();
        for (object_api_version, want) in [("v1", "apiVersion: v1\n"), ("7", "apiVersion: 7\n")] {
            let mut resources = vec![res(&format!(
                "apiVersion: {object_api_version}\nkind: ConfigMap\nmetadata: {{name: cm}}\ndata: {{a: '1'}}\n"
            ))];
            let p = patch(
                "apiVersion: v2\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {b: '2', a: null}\n",
            );
            apply_all(&mut resources, &[p], cx, &schema, &mut w, &mut false).unwrap();
            let text = crate::yaml::emit_documents(
                [&resources[0].node],
                crate::yaml::emit::EmitOptions::default(),
            );
            assert!(text.starts_with(want), "{text}");
            assert!(text.contains("b: \"2\"") && !text.contains("a: "), "{text}");
        }
        // An object without apiVersion gives the patch its empty one, printed as null
        // (checked with kubectl kustomize).
        let mut resources = vec![res("kind: ConfigMap\nmetadata: {name: cm}\n")];
        let p = patch("apiVersion: v2\nkind: ConfigMap\nmetadata: {name: cm}\n");
        apply_all(&mut resources, &[p], cx, &schema, &mut w, &mut false).unwrap();
        assert_eq!(resources[0].node.get("apiVersion"), Some(&Node::Null));
    }

    #[test]
    fn unmatched_target_warns_and_strict_fails() {
        let target = Selector {
            kind: Some("Nope".into()),
            ..Selector::default()
        };
        let patch = text_patch(
            "- op: remove\n  path: /data\n",
            Some(target),
            "[path: \"p\"]",
        );
        let schema = Schema::empty();
        let opts = RenderOptions::default();
        let tables = FieldSpecTables::builtin_for(opts.kustomize).unwrap();
        let cx = Context::new(&opts, &tables);
        let mut resources = vec![res(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
        )];
        let mut w = Warnings::default();
        apply_all(
            &mut resources,
            std::slice::from_ref(&patch),
            cx,
            &schema,
            &mut w,
            &mut false,
        )
        .unwrap();
        assert_eq!(
            w.messages(),
            [
                "patch [path: \"p\"] matches no resource: target {kind: Nope} selects nothing (kustomize ignores it)"
            ]
        );
        let strict = RenderOptions {
            strict: true,
            ..RenderOptions::default()
        };
        let cx = Context::new(&strict, &tables);
        let e = apply_all(&mut resources, &[patch], cx, &schema, &mut w, &mut false).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Strict);
        assert_eq!(resources.len(), 1);
    }
}
