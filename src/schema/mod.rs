//! What the merge engines need to know about a kind: for a group/version/kind and a path in the
//! object, the patch strategy, merge key, list type, map type, and whether the kind is
//! namespaced. Built-in kinds come from a table generated from the Kubernetes 1.37 OpenAPI
//! definitions (`builtin.rs`, `tools/gen_schema.py`); custom kinds from OpenAPI v2 documents and
//! CRDs (`openapi.rs`). A [`Schema`] is a plain value passed to whoever needs it: no globals.
//! Knows nothing about merging itself.

mod builtin;
mod openapi;

use std::sync::OnceLock;

use crate::fasthash::FastMap;
use crate::resource::Gvk;

pub(crate) use openapi::SchemaError;

/// Index of a type in a [`Schema`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TypeId(u32);

/// `x-kubernetes-patch-strategy`: `merge`, `replace`, `retainKeys`, or `merge,retainKeys`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Strategy {
    pub merge: bool,
    pub replace: bool,
    pub retain_keys: bool,
}

impl Strategy {
    /// Parses the extension's value; unknown words are ignored (as apimachinery ignores them).
    pub fn parse(s: &str) -> Strategy {
        let mut out = Strategy::default();
        for w in s.split(',') {
            match w.trim() {
                "merge" => out.merge = true,
                "replace" => out.replace = true,
                "retainKeys" => out.retain_keys = true,
                _ => {}
            }
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        !(self.merge || self.replace || self.retain_keys)
    }
}

/// `x-kubernetes-list-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListType {
    Atomic,
    Set,
    Map,
}

impl ListType {
    fn parse(s: &str) -> Option<ListType> {
        match s {
            "atomic" => Some(ListType::Atomic),
            "set" => Some(ListType::Set),
            "map" => Some(ListType::Map),
            _ => None,
        }
    }
}

/// `x-kubernetes-map-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapType {
    Atomic,
    Granular,
}

impl MapType {
    fn parse(s: &str) -> Option<MapType> {
        match s {
            "atomic" => Some(MapType::Atomic),
            "granular" => Some(MapType::Granular),
            _ => None,
        }
    }
}

/// The merge metadata of one field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PatchMeta {
    pub strategy: Strategy,
    /// `x-kubernetes-patch-merge-key`.
    pub merge_key: Option<String>,
    pub list_type: Option<ListType>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    pub map_type: Option<MapType>,
}

static NO_META: PatchMeta = PatchMeta {
    strategy: Strategy {
        merge: false,
        replace: false,
        retain_keys: false,
    },
    merge_key: None,
    list_type: None,
    list_map_keys: Vec::new(),
    map_type: None,
};

/// What a field holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// Anything: untyped, `x-kubernetes-preserve-unknown-fields`, int-or-string.
    Any,
    /// A string, number or boolean.
    Scalar,
    /// An object with known fields.
    Object(TypeId),
    /// A list of the inner shape.
    List(Box<Shape>),
    /// A map (`additionalProperties`) of the inner shape.
    Map(Box<Shape>),
}

/// One field of an object type.
#[derive(Clone, Debug)]
pub struct Field {
    pub shape: Shape,
    pub meta: PatchMeta,
    /// A merged list that kustomize replaces: its own schema (Kubernetes 1.21) gives it no
    /// patch strategy ([`Cursor::kustomize_field`]).
    pub kustomize_replaces: bool,
}

/// An object type: its fields (only those holding maps or lists, for the built-in table).
#[derive(Clone, Debug, Default)]
pub struct TypeDef {
    pub name: String,
    pub map_type: Option<MapType>,
    /// The built-in table's field lines of this type, read into `fields` on first use: a
    /// render asks about a few dozen of the table's 834 types, and reading all of them was
    /// most of a small render's instructions (docs/performance.md). Empty for other types.
    field_lines: &'static str,
    fields: OnceLock<FastMap<String, Field>>,
}

impl TypeDef {
    /// The fields, read from the table on first use. The embedded table is checked whole by
    /// the tests (`builtin_table_parses_completely`).
    pub fn fields(&self) -> &FastMap<String, Field> {
        self.fields
            .get_or_init(|| builtin::parse_fields(self.field_lines).unwrap_or_default())
    }

    pub fn fields_mut(&mut self) -> &mut FastMap<String, Field> {
        if self.fields.get().is_none() {
            let _ = self
                .fields
                .set(builtin::parse_fields(self.field_lines).unwrap_or_default());
        }
        match self.fields.get_mut() {
            Some(fields) => fields,
            None => unreachable!("set above"),
        }
    }

    /// Replaces the fields (a definition read from an OpenAPI document).
    pub fn set_fields(&mut self, fields: FastMap<String, Field>) {
        self.field_lines = "";
        self.fields = OnceLock::from(fields);
    }
}

/// A kind the schema knows.
#[derive(Clone, Copy, Debug)]
pub struct KindInfo {
    pub root: TypeId,
    /// `None` when the source does not say (OpenAPI documents without paths).
    pub namespaced: Option<bool>,
    /// A built-in kind kustomize's own schema (Kubernetes 1.21.2) lacks: its strategic merge
    /// patches merge no list of it ([`Schema::kustomize_root`]).
    pub kustomize_unknown: bool,
}

/// Types and kinds. Build it with [`Schema::builtin`], then add custom kinds with
/// [`Schema::add_openapi`] or [`Schema::add_crd`].
#[derive(Clone, Debug, Default)]
pub struct Schema {
    types: Vec<TypeDef>,
    kinds: FastMap<Gvk, KindInfo>,
    /// Versions of built-in kinds that kustomize's schema knows and the table lacks, with the
    /// type of the table's version kustomize merges them as ([`Schema::kustomize_root`]).
    kustomize_older: FastMap<Gvk, TypeId>,
}

impl Schema {
    /// An empty schema: every kind is unknown (maps merge, lists are replaced).
    pub fn empty() -> Schema {
        Schema::default()
    }

    /// The built-in Kubernetes 1.37 kinds, parsed from the embedded table, with the lists
    /// kustomize replaces marked ([`Cursor::kustomize_field`]).
    pub fn builtin() -> Schema {
        let mut schema = builtin::parse_table(builtin::TABLE).unwrap_or_default();
        // The embedded texts are checked whole by the tests below.
        let _ = builtin::mark_kustomize_replaced(&mut schema, builtin::KUSTOMIZE_REPLACED);
        let _ = builtin::mark_kustomize_kinds(&mut schema, builtin::KUSTOMIZE_KINDS);
        schema
    }

    /// The kinds [`Schema::builtin`] knows ([`Schema::kind`] is `Some` for exactly these), read
    /// without its types: a render that only asks whether a kind is known (kustomize's scope
    /// table) need not parse the whole table.
    pub fn builtin_kinds() -> crate::fasthash::FastSet<Gvk> {
        builtin::table_kinds(builtin::TABLE)
    }

    /// Adds the definitions of an OpenAPI v2 document (`definitions`, or JSON Schema `$defs`)
    /// whose `x-kubernetes-group-version-kind` extensions name kinds. They take precedence
    /// over what the schema already holds: kinds, and types of the same definition name
    /// (redefined in place, so built-in types referring to them see the new definition). A
    /// `$ref` to a name the document does not define resolves to the schema's type of that
    /// name, as in kustomize's single global schema.
    pub fn add_openapi(&mut self, doc: &crate::yaml::Node) -> Result<(), SchemaError> {
        openapi::add_document(self, doc)
    }

    /// Like [`Schema::add_openapi`], but what the schema already holds wins: the document only
    /// adds definitions and kinds of new names, and its `$ref`s to names the schema defines
    /// resolve to the schema's types. What kustomize's global schema ends up as when the
    /// built-in definitions are parsed after a custom document (see `render::plugins`).
    pub fn add_openapi_beneath(&mut self, doc: &crate::yaml::Node) -> Result<(), SchemaError> {
        openapi::add_document_with(self, doc, openapi::Precedence::Existing)
    }

    /// Adds the kinds of a CustomResourceDefinition (every served version's
    /// `openAPIV3Schema`; scope from `spec.scope`).
    pub fn add_crd(&mut self, crd: &crate::yaml::Node) -> Result<(), SchemaError> {
        openapi::add_crd(self, crd)
    }

    /// Only the kinds of an OpenAPI document: what kustomize's `openapi: {path: …}` means when
    /// it is chosen before the built-in schema was needed (it then replaces the built-in
    /// schema; built-in kinds the document lacks have no merge keys, as observed with
    /// kustomize v5.5.0).
    pub fn from_openapi(doc: &crate::yaml::Node) -> Result<Schema, SchemaError> {
        let mut s = Schema::empty();
        s.add_openapi(doc)?;
        Ok(s)
    }

    /// The built-in schema plus an OpenAPI document (what `ply patch --openapi` uses).
    pub fn with_openapi(doc: &crate::yaml::Node) -> Result<Schema, SchemaError> {
        let mut s = Schema::builtin();
        s.add_openapi(doc)?;
        Ok(s)
    }

    pub fn kind(&self, gvk: &Gvk) -> Option<KindInfo> {
        self.kinds.get(gvk).copied()
    }

    /// Whether objects of the kind live in a namespace; `None` when the schema does not know
    /// (kustomize then assumes namespaced).
    pub fn is_namespaced(&self, gvk: &Gvk) -> Option<bool> {
        if let Some(k) = self.kinds.get(gvk) {
            if k.namespaced.is_some() {
                return k.namespaced;
            }
        }
        // Another version of the same group and kind.
        self.kinds
            .iter()
            .find(|(g, k)| g.group == gvk.group && g.kind == gvk.kind && k.namespaced.is_some())
            .and_then(|(_, k)| k.namespaced)
    }

    pub fn type_def(&self, id: TypeId) -> Option<&TypeDef> {
        self.types.get(id.0 as usize)
    }

    /// Where a walk over an object of this kind starts.
    pub fn root(&self, gvk: &Gvk) -> Cursor<'_> {
        match self.kinds.get(gvk) {
            Some(k) => Cursor {
                schema: self,
                at: At::Shape(ShapeRef::Object(k.root)),
            },
            None => Cursor::unknown(self),
        }
    }

    /// [`Schema::root`] as kustomize's built-in schema (Kubernetes 1.21.2,
    /// kyaml/openapi/kubernetesapi; `SchemaForResourceType`) sees kinds: a built-in kind it
    /// lacks has no schema (every list replaced, kyaml's `IsAssociative` without a schema),
    /// and an older version it still knows (batch/v1beta1 CronJob) is read as the table's
    /// version of the kind. Both lists come from `kustomize-kinds.txt`.
    pub fn kustomize_root(&self, gvk: &Gvk) -> Cursor<'_> {
        let root = match self.kinds.get(gvk) {
            Some(k) if k.kustomize_unknown => None,
            Some(k) => Some(k.root),
            None => self.kustomize_older.get(gvk).copied(),
        };
        match root {
            Some(id) => Cursor {
                schema: self,
                at: At::Shape(ShapeRef::Object(id)),
            },
            None => Cursor::unknown(self),
        }
    }

    /// Metadata for a path of field names from the root of a kind (list elements are crossed
    /// transparently): what the `(GVK, path)` question of the render pipeline needs.
    pub fn meta_at(&self, gvk: &Gvk, path: &[&str]) -> Option<PatchMeta> {
        let mut cur = self.root(gvk);
        let mut meta = None;
        for key in path {
            let (next, m) = cur.lookup(key).ok()?;
            meta = Some(m.clone());
            cur = if matches!(next.at, At::Shape(ShapeRef::List(_))) {
                next.items()
            } else {
                next
            };
        }
        meta
    }

    fn push_type(&mut self, t: TypeDef) -> TypeId {
        self.types.push(t);
        TypeId(u32::try_from(self.types.len() - 1).unwrap_or(u32::MAX))
    }
}

#[derive(Clone, Copy, Debug)]
enum ShapeRef<'s> {
    Object(TypeId),
    List(&'s Shape),
    Map(&'s Shape),
    Any,
    Scalar,
}

#[derive(Clone, Copy, Debug)]
enum At<'s> {
    /// No schema at all (an unknown kind, or below a field the schema does not know).
    Unknown,
    Shape(ShapeRef<'s>),
}

/// A position in a schema while walking an object: answers what apimachinery's
/// `LookupPatchMetadataForStruct` / `LookupPatchMetadataForSlice` answer.
#[derive(Clone, Copy, Debug)]
pub struct Cursor<'s> {
    schema: &'s Schema,
    at: At<'s>,
}

/// The answer of [`Cursor::field`] for a field the type does not declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownField;

impl<'s> Cursor<'s> {
    /// A cursor that knows nothing: maps merge, lists are replaced.
    pub fn unknown(schema: &'s Schema) -> Cursor<'s> {
        Cursor {
            schema,
            at: At::Unknown,
        }
    }

    fn from_shape(schema: &'s Schema, shape: &'s Shape) -> Cursor<'s> {
        let r = match shape {
            Shape::Any => ShapeRef::Any,
            Shape::Scalar => ShapeRef::Scalar,
            Shape::Object(id) => ShapeRef::Object(*id),
            Shape::List(inner) => ShapeRef::List(inner),
            Shape::Map(inner) => ShapeRef::Map(inner),
        };
        Cursor {
            schema,
            at: At::Shape(r),
        }
    }

    /// Whether the cursor is at an object type with declared fields (where an undeclared
    /// field is an error for patch creation, as in apimachinery).
    pub fn is_typed_object(&self) -> bool {
        matches!(self.at, At::Shape(ShapeRef::Object(_)))
    }

    /// The field `key` of the map here: its cursor and metadata. `Err(UnknownField)` when
    /// this is an object type that does not declare `key`.
    pub fn lookup(&self, key: &str) -> Result<(Cursor<'s>, &'s PatchMeta), UnknownField> {
        match self.at {
            At::Unknown => Ok((Cursor::unknown(self.schema), &NO_META)),
            At::Shape(ShapeRef::Object(id)) => {
                let Some(t) = self.schema.type_def(id) else {
                    return Ok((Cursor::unknown(self.schema), &NO_META));
                };
                match t.fields().get(key) {
                    Some(f) => Ok((Cursor::from_shape(self.schema, &f.shape), &f.meta)),
                    None => Err(UnknownField),
                }
            }
            At::Shape(ShapeRef::Map(inner)) => {
                Ok((Cursor::from_shape(self.schema, inner), &NO_META))
            }
            At::Shape(ShapeRef::Any | ShapeRef::Scalar | ShapeRef::List(_)) => Ok((
                Cursor {
                    schema: self.schema,
                    at: At::Shape(ShapeRef::Any),
                },
                &NO_META,
            )),
        }
    }

    /// Whether the schema knows nothing here.
    pub fn is_unknown(&self) -> bool {
        matches!(self.at, At::Unknown)
    }

    /// Like [`Cursor::lookup`], with an undeclared field treated as unknown (lenient).
    pub fn field(&self, key: &str) -> (Cursor<'s>, &'s PatchMeta) {
        self.lookup(key)
            .unwrap_or((Cursor::unknown(self.schema), &NO_META))
    }

    /// [`Cursor::field`] as kustomize's built-in schema reads it: kustomize v5.5.0 carries
    /// Kubernetes 1.21.2 (kyaml/openapi/kubernetesapi), where fields and kinds added since
    /// have no patch strategy, so its strategic merge patches replace those lists
    /// (`schema.IsAssociative`, kyaml/yaml/schema). The built-in table marks them from
    /// `kustomize-replaced-lists.txt`; a definition read from an `openapi:` document is taken
    /// as written.
    pub fn kustomize_field(&self, key: &str) -> (Cursor<'s>, &'s PatchMeta) {
        let (sub, meta) = self.field(key);
        if let At::Shape(ShapeRef::Object(id)) = self.at
            && self
                .schema
                .type_def(id)
                .and_then(|t| t.fields().get(key))
                .is_some_and(|f| f.kustomize_replaces)
        {
            return (sub, &NO_META);
        }
        (sub, meta)
    }

    /// The elements of the list here.
    pub fn items(&self) -> Cursor<'s> {
        match self.at {
            At::Shape(ShapeRef::List(inner)) => Cursor::from_shape(self.schema, inner),
            // A list where the schema declares an object (apimachinery's tests declare
            // `mergeItemPtr` so): its elements are that object, as the OpenAPI lookup reads it.
            At::Unknown | At::Shape(ShapeRef::Object(_)) => *self,
            At::Shape(_) => Cursor {
                schema: self.schema,
                at: At::Shape(ShapeRef::Any),
            },
        }
    }

    /// The map type of the object type here, if declared on the type.
    pub fn type_map_type(&self) -> Option<MapType> {
        match self.at {
            At::Shape(ShapeRef::Object(id)) => self.schema.type_def(id).and_then(|t| t.map_type),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gvk(av: &str, k: &str) -> Gvk {
        Gvk::from_api_version(av, k)
    }

    #[test]
    fn builtin_kinds_are_the_kinds_of_the_builtin_schema() {
        let kinds = Schema::builtin_kinds();
        let s = Schema::builtin();
        assert!(kinds.len() > 300, "{}", kinds.len());
        assert_eq!(kinds.len(), s.kinds.len());
        assert!(kinds.iter().all(|g| s.kind(g).is_some()));
        assert!(kinds.contains(&gvk("apps/v1", "Deployment")));
        assert!(!kinds.contains(&gvk("example.com/v1", "Widget")));
    }

    #[test]
    fn kustomize_replaced_lists_name_merged_lists_of_the_table() {
        let mut s = builtin::parse_table(builtin::TABLE).expect("table parses");
        builtin::mark_kustomize_replaced(&mut s, builtin::KUSTOMIZE_REPLACED)
            .expect("every line names a field of the table");
        let s = Schema::builtin();
        let pod = s.root(&gvk("v1", "Pod")).field("spec").0;
        assert!(pod.field("schedulingGates").1.strategy.merge);
        assert!(!pod.kustomize_field("schedulingGates").1.strategy.merge);
        assert!(pod.kustomize_field("containers").1.strategy.merge);
        assert!(
            builtin::mark_kustomize_replaced(&mut Schema::default(), "a.B\tc").is_err(),
            "a line naming no field is refused"
        );
    }

    #[test]
    fn kustomize_kinds_name_kinds_of_the_table() {
        let mut s = builtin::parse_table(builtin::TABLE).expect("table parses");
        builtin::mark_kustomize_kinds(&mut s, builtin::KUSTOMIZE_KINDS)
            .expect("every line names a kind of the table");
        let s = Schema::builtin();
        let containers = |av: &str, k: &str| {
            s.kustomize_root(&gvk(av, k))
                .field("spec")
                .0
                .field("jobTemplate")
                .0
                .field("spec")
                .0
                .field("template")
                .0
                .field("spec")
                .0
                .kustomize_field("containers")
                .1
                .strategy
                .merge
        };
        assert!(containers("batch/v1", "CronJob"));
        assert!(containers("batch/v1beta1", "CronJob"));
        assert!(s.root(&gvk("batch/v1beta1", "CronJob")).is_unknown());
        let vap = gvk(
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicy",
        );
        assert!(s.kustomize_root(&vap).is_unknown());
        assert!(!s.root(&vap).is_unknown());
        assert!(
            builtin::mark_kustomize_kinds(&mut Schema::default(), "older\tx\tv1\tK\tv2").is_err()
        );
    }

    #[test]
    fn builtin_table_parses_completely() {
        let s = builtin::parse_table(builtin::TABLE).expect("table parses");
        assert!(s.kinds.len() > 100);
        // Field lines are read on first use, where a bad one would read as no fields: every
        // type's must read, and together hold every `F` line of the table.
        let mut read = 0;
        for t in &s.types {
            read += builtin::parse_fields(t.field_lines)
                .unwrap_or_else(|e| panic!("type {}: {e}", t.name))
                .len();
        }
        let lines = builtin::TABLE
            .lines()
            .filter(|l| l.starts_with("F\t"))
            .count();
        assert!(lines > 1000);
        assert_eq!(read, lines);
        assert!(builtin::parse_fields("F\ta\t.\t-\t-\t-\t-").is_err());
        assert!(builtin::parse_fields("T\tb\t-").is_err());
        assert!(builtin::parse_table("F\ta\t.\t-\t-\t-\t-\t-").is_err());
    }

    #[test]
    fn a_type_keeps_changes_to_its_fields() {
        let mut s = Schema::builtin();
        let id = s.kinds[&gvk("v1", "Pod")].root;
        let t = &mut s.types[id.0 as usize];
        assert!(t.fields().contains_key("spec"));
        t.fields_mut().remove("spec");
        assert!(!t.fields().contains_key("spec"));
        t.set_fields(FastMap::default());
        assert!(t.fields().is_empty());
    }

    #[test]
    fn containers_merge_on_name() {
        let s = Schema::builtin();
        let m = s
            .meta_at(
                &gvk("apps/v1", "Deployment"),
                &["spec", "template", "spec", "containers"],
            )
            .expect("known");
        assert!(m.strategy.merge);
        assert_eq!(m.merge_key.as_deref(), Some("name"));
        assert_eq!(m.list_type, Some(ListType::Map));
        let p = s
            .meta_at(
                &gvk("apps/v1", "Deployment"),
                &["spec", "template", "spec", "containers", "ports"],
            )
            .expect("known");
        assert_eq!(p.merge_key.as_deref(), Some("containerPort"));
        let v = s
            .meta_at(&gvk("v1", "Pod"), &["spec", "volumes"])
            .expect("known");
        assert!(v.strategy.merge && v.strategy.retain_keys);
        let svc = s
            .meta_at(&gvk("v1", "Service"), &["spec", "ports"])
            .expect("known");
        assert_eq!(svc.list_map_keys, ["port", "protocol"]);
    }

    #[test]
    fn scope() {
        let s = Schema::builtin();
        assert_eq!(s.is_namespaced(&gvk("v1", "Namespace")), Some(false));
        assert_eq!(
            s.is_namespaced(&gvk("rbac.authorization.k8s.io/v1", "ClusterRole")),
            Some(false)
        );
        assert_eq!(s.is_namespaced(&gvk("apps/v1", "Deployment")), Some(true));
        assert_eq!(s.is_namespaced(&gvk("example.com/v1", "Foo")), None);
    }

    #[test]
    fn unknown_kinds_know_nothing() {
        let s = Schema::builtin();
        let c = s.root(&gvk("example.com/v1", "Foo"));
        let (_, m) = c.lookup("spec").expect("lenient");
        assert_eq!(m, &PatchMeta::default());
        let d = s.root(&gvk("apps/v1", "Deployment"));
        assert_eq!(d.lookup("nope").err(), Some(UnknownField));
    }
}
