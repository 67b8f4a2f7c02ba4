//! Typed operations over a [`Node`] and a schema type (`smd:typed/*.go`): validation,
//! ToFieldSet, Merge, Compare, RemoveItems/ExtractItems and the reconciliation of an owned set
//! with a changed schema. Pure functions; errors are returned as text with the field path.

use super::path::{Path, PathElement, path_string};
use super::schema::{
    AtomView, Kind, ListView, MapView, Relationship, Schema, TypeRef, UNTYPED_DEDUCED,
};
use super::set::Set;
use super::value;
use crate::yaml::{Map, Node};

/// A value typed by a schema: what every typed operation reads.
#[derive(Clone, Copy, Debug)]
pub struct Typed<'a> {
    pub schema: &'a Schema,
    pub root: &'a TypeRef,
}

/// The three disjoint sets `Compare` returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    pub removed: Set,
    pub modified: Set,
    pub added: Set,
}

impl Comparison {
    pub fn is_same(&self) -> bool {
        self.removed.is_empty() && self.modified.is_empty() && self.added.is_empty()
    }

    /// `ExcludeFields`: drop the paths of `fields` and everything under them.
    pub fn exclude_fields(&self, fields: &Set) -> Comparison {
        if fields.is_empty() {
            return self.clone();
        }
        Comparison {
            removed: self.removed.recursive_difference(fields),
            modified: self.modified.recursive_difference(fields),
            added: self.added.recursive_difference(fields),
        }
    }
}

fn no_type(tr: &TypeRef) -> String {
    format!(
        "schema error: no type found matching: {}",
        tr.named.as_deref().unwrap_or("inlined type")
    )
}

/// `listItemToPathElement` (`smd:typed/helpers.go`).
pub(crate) fn list_item_element(
    schema: &Schema,
    list: &ListView<'_>,
    item: &Node,
) -> Result<PathElement, String> {
    if list.relationship != Relationship::Associative {
        return Err("invalid indexing of non-associative list".into());
    }
    if list.keys.is_empty() {
        return match item {
            Node::Map(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Node::Seq(_) => Err("not supported: associative list with lists as elements".into()),
            Node::Null => {
                Err("associative list without keys has an element that's an explicit null".into())
            }
            v => Ok(PathElement::Value(v.clone())),
        };
    }
    let m = match item {
        Node::Null => return Err("associative list with keys may not have a null element".into()),
        Node::Map(m) => m,
        _ => return Err("associative list with keys may not have non-map elements".into()),
    };
    let mut fields = Vec::with_capacity(list.keys.len());
    for key in list.keys {
        if let Some(v) = m.get(key) {
            fields.push((key.clone(), v.clone()));
            continue;
        }
        let elem = schema.resolve(list.element_type).ok_or_else(|| {
            format!("couldn't find default value for {key}: invalid elementType for list")
        })?;
        let map = elem.map.ok_or_else(|| {
            format!(
                "couldn't find default value for {key}: associative list may not have non-map types"
            )
        })?;
        if let Some(d) = map.find_field(key).and_then(|f| f.default.as_ref()) {
            fields.push((key.clone(), d.clone()));
        }
    }
    if fields.is_empty() {
        return Err(format!(
            "associative list with keys has an element that omits all key fields {:?} (and doesn't have default values for any key fields)",
            list.keys
        ));
    }
    Ok(PathElement::key(fields))
}

/// The item an element stands for: `None` when absent, `Some(None)` when duplicated.
fn lookup<'n>(
    obs: &[(PathElement, Option<&'n Node>)],
    pe: &PathElement,
) -> Option<Option<&'n Node>> {
    obs.iter().find(|(p, _)| p == pe).map(|(_, v)| *v)
}

fn as_seq(v: Option<&Node>) -> Option<&Vec<Node>> {
    v.and_then(Node::as_seq)
}

fn as_map(v: Option<&Node>) -> Option<&Map> {
    v.and_then(Node::as_map)
}

impl<'a> Typed<'a> {
    pub fn new(schema: &'a Schema, root: &'a TypeRef) -> Typed<'a> {
        Typed { schema, root }
    }

    fn resolve(&self, tr: &'a TypeRef) -> Result<AtomView<'a>, String> {
        self.schema.resolve(tr).ok_or_else(|| no_type(tr))
    }

    /// The value at a field path (for showing a conflict's live and desired values): map keys
    /// by name, list items by their key, value or index. `None` when the path leads nowhere.
    pub fn value_at<'n>(&self, v: &'n Node, path: &[PathElement]) -> Option<&'n Node> {
        let mut tr: &'a TypeRef = self.root;
        let mut cur = v;
        for pe in path {
            let atom = self.schema.resolve(tr)?;
            match (pe, cur) {
                (PathElement::Field(name), Node::Map(m)) => {
                    cur = m.get(name)?;
                    tr = atom.map.map(|m| m.field_type(name))?;
                }
                (PathElement::Index(i), Node::Seq(items)) => {
                    cur = items.get(usize::try_from(*i).ok()?)?;
                    tr = atom.list?.element_type;
                }
                (_, Node::Seq(items)) => {
                    let list = atom.list?;
                    cur = items.iter().find(|item| {
                        list_item_element(self.schema, &list, item).is_ok_and(|p| p == *pe)
                    })?;
                    tr = list.element_type;
                }
                _ => return None,
            }
        }
        Some(cur)
    }

    // ----- validation (`smd:typed/validate.go`) -----

    /// Checks a value against the schema: scalar kinds, list items, undeclared fields and,
    /// unless `allow_duplicates`, duplicate list-map keys. The message names the field path.
    pub fn validate(&self, v: &Node, allow_duplicates: bool) -> Result<(), String> {
        let mut errs = Vec::new();
        self.validate_at(
            self.root,
            v,
            &mut String::new(),
            allow_duplicates,
            &mut errs,
        );
        match errs.len() {
            0 => Ok(()),
            1 => Err(errs.remove(0)),
            _ => Err(format!("errors:\n  {}", errs.join("\n  "))),
        }
    }

    fn validate_at(
        &self,
        tr: &'a TypeRef,
        v: &Node,
        path: &mut String,
        dups: bool,
        errs: &mut Vec<String>,
    ) {
        let err = |path: &str, msg: String| {
            if path.is_empty() {
                msg
            } else {
                format!("{path}: {msg}")
            }
        };
        let atom = match self.resolve(tr) {
            Ok(a) => a,
            Err(e) => return errs.push(err(path, e)),
        };
        match atom.kind_for(Some(v)) {
            Kind::Scalar => {
                let ok = match (atom.scalar, v) {
                    (_, Node::Null) => true,
                    (Some(super::schema::Scalar::Numeric), Node::Int(_) | Node::Float(_)) => true,
                    (Some(super::schema::Scalar::String), Node::Str(_)) => true,
                    (Some(super::schema::Scalar::Boolean), Node::Bool(_)) => true,
                    (Some(super::schema::Scalar::Untyped), n) => n.is_scalar(),
                    _ => false,
                };
                if !ok {
                    errs.push(err(
                        path,
                        format!("expected {:?}, got {}", atom.scalar, v.kind_name()),
                    ));
                }
            }
            Kind::List => {
                let Some(list) = atom.list else { return };
                let items = match v {
                    Node::Null => return,
                    Node::Seq(items) => items,
                    other => {
                        return errs.push(err(
                            path,
                            format!("expected list, got {}", other.kind_name()),
                        ));
                    }
                };
                let mut seen: Vec<PathElement> = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let pe = if list.relationship != Relationship::Associative {
                        PathElement::Index(i as i64)
                    } else {
                        match list_item_element(self.schema, &list, item) {
                            Ok(pe) => pe,
                            Err(e) => return errs.push(err(path, format!("element {i}: {e}"))),
                        }
                    };
                    if !matches!(pe, PathElement::Index(_)) {
                        if seen.contains(&pe) && !dups {
                            errs.push(err(path, format!("duplicate entries for key {pe}")));
                        }
                        seen.push(pe.clone());
                    }
                    let len = path.len();
                    path.push_str(&pe.to_string());
                    self.validate_at(list.element_type, item, path, dups, errs);
                    path.truncate(len);
                }
            }
            Kind::Map => {
                let Some(map) = atom.map else { return };
                let m = match v {
                    Node::Null => return,
                    Node::Map(m) => m,
                    other => {
                        return errs.push(err(
                            path,
                            format!("expected map, got {}", other.kind_name()),
                        ));
                    }
                };
                for (k, val) in m {
                    let len = path.len();
                    path.push('.');
                    path.push_str(k);
                    let tr = match map.find_field(k) {
                        Some(f) => &f.type_ref,
                        None if map.def.element_type.is_empty() => {
                            errs.push(err(path, "field not declared in schema".into()));
                            path.truncate(len);
                            return;
                        }
                        None => &map.def.element_type,
                    };
                    self.validate_at(tr, val, path, dups, errs);
                    path.truncate(len);
                }
            }
            Kind::Invalid => errs.push(err(path, "schema error: invalid atom".into())),
        }
    }

    // ----- ToFieldSet (`smd:typed/tofieldset.go`) -----

    /// The set of fields a value sets.
    pub fn to_field_set(&self, v: &Node) -> Result<Set, String> {
        let mut set = Set::new();
        let mut path = Vec::new();
        self.tfs(self.root, v, &mut path, &mut set)?;
        Ok(set)
    }

    fn tfs(&self, tr: &'a TypeRef, v: &Node, path: &mut Path, set: &mut Set) -> Result<(), String> {
        let atom = self.resolve(tr)?;
        match atom.kind_for(Some(v)) {
            Kind::Scalar => set.insert(path),
            Kind::List => {
                let Some(list) = atom.list else { return Ok(()) };
                if list.is_atomic() {
                    set.insert(path);
                    return Ok(());
                }
                let Node::Seq(items) = v else { return Ok(()) };
                let pes: Vec<Option<PathElement>> = items
                    .iter()
                    .map(|i| list_item_element(self.schema, &list, i).ok())
                    .collect();
                let mut seen: Vec<&PathElement> = Vec::new();
                let mut dups: Vec<&PathElement> = Vec::new();
                for pe in pes.iter().flatten() {
                    if seen.contains(&pe) {
                        if !dups.contains(&pe) {
                            path.push(pe.clone());
                            set.insert(path);
                            path.pop();
                            dups.push(pe);
                        }
                    } else {
                        seen.push(pe);
                    }
                }
                for (item, pe) in items.iter().zip(&pes) {
                    let Some(pe) = pe else { continue };
                    if dups.contains(&pe) {
                        continue;
                    }
                    path.push(pe.clone());
                    let r = self.tfs(list.element_type, item, path, set);
                    set.insert(path);
                    path.pop();
                    r?;
                }
            }
            Kind::Map => {
                let Some(map) = atom.map else { return Ok(()) };
                if map.is_atomic() {
                    set.insert(path);
                    return Ok(());
                }
                let Node::Map(m) = v else { return Ok(()) };
                for (k, val) in m {
                    path.push(PathElement::field(k.clone()));
                    let r = self.tfs(map.field_type(k), val, path, set);
                    let empty_map = matches!(val, Node::Map(x) if x.is_empty());
                    if val.is_null() || empty_map || map.find_field(k).is_none() {
                        set.insert(path);
                    }
                    path.pop();
                    r?;
                }
            }
            Kind::Invalid => {
                return Err(format!("{}: schema error: invalid atom", path_string(path)));
            }
        }
        Ok(())
    }

    // ----- Merge (`smd:typed/merge.go`) -----

    /// `Merge(lhs = live, rhs = config)`: live with the config overlaid.
    pub fn merge(&self, lhs: &Node, rhs: &Node) -> Result<Node, String> {
        let mut path = String::new();
        Ok(self
            .merge_at(self.root, Some(lhs), Some(rhs), &mut path)?
            .unwrap_or(Node::Null))
    }

    fn merge_at(
        &self,
        tr: &'a TypeRef,
        lhs: Option<&Node>,
        rhs: Option<&Node>,
        path: &mut String,
    ) -> Result<Option<Node>, String> {
        let at = |path: &str, e: String| {
            if path.is_empty() {
                e
            } else {
                format!("{path}: {e}")
            }
        };
        if lhs.is_none() && rhs.is_none() {
            return Err(at(
                path,
                "at least one of lhs and rhs must be provided".into(),
            ));
        }
        let atom = self.resolve(tr).map_err(|e| at(path, e))?;
        let kind = if rhs.is_some() {
            atom.kind_for(rhs)
        } else {
            atom.kind_for(lhs)
        };
        let leaf = || rhs.or(lhs).cloned();
        match kind {
            Kind::Scalar => Ok(leaf()),
            Kind::List => {
                let Some(list) = atom.list else {
                    return Ok(leaf());
                };
                let (l, r) = (as_seq(lhs), as_seq(rhs));
                let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
                if list.is_atomic() || empty {
                    return Ok(leaf());
                }
                self.merge_list(
                    &list,
                    l.map(Vec::as_slice).unwrap_or(&[]),
                    r.map(Vec::as_slice).unwrap_or(&[]),
                    path,
                )
            }
            Kind::Map => {
                let Some(map) = atom.map else {
                    return Ok(leaf());
                };
                let (l, r) = (as_map(lhs), as_map(rhs));
                let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
                if map.is_atomic() || empty {
                    return Ok(leaf());
                }
                let mut out = Map::default();
                let mut visit = |k: &String,
                                 lv: Option<&Node>,
                                 rv: Option<&Node>,
                                 path: &mut String|
                 -> Result<(), String> {
                    let len = path.len();
                    path.push('.');
                    path.push_str(k);
                    let r = self.merge_at(map.field_type(k), lv, rv, path);
                    path.truncate(len);
                    if let Some(v) = r? {
                        out.insert(k.clone(), v);
                    }
                    Ok(())
                };
                let empty_map = Map::default();
                let lm = l.unwrap_or(&empty_map);
                let rm = r.unwrap_or(&empty_map);
                for (k, lv) in lm {
                    visit(k, Some(lv), rm.get(k), path)?;
                }
                for (k, rv) in rm {
                    if !lm.contains_key(k) {
                        visit(k, None, Some(rv), path)?;
                    }
                }
                Ok((!out.is_empty()).then_some(Node::Map(out)))
            }
            Kind::Invalid => Err(at(path, "schema error: invalid atom".into())),
        }
    }

    /// Path elements of a list's items, with the item each element stands for (`Null` when the
    /// element is duplicated). Errors name the item index.
    #[allow(clippy::type_complexity)]
    fn index_items<'n>(
        &self,
        list: &ListView<'_>,
        items: &'n [Node],
        allow_duplicates: bool,
        errs: &mut Vec<String>,
    ) -> (Vec<PathElement>, Vec<(PathElement, Option<&'n Node>)>) {
        let mut pes = Vec::with_capacity(items.len());
        let mut observed: Vec<(PathElement, Option<&'n Node>)> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let pe = match list_item_element(self.schema, list, item) {
                Ok(pe) => pe,
                Err(e) => {
                    errs.push(format!("element {i}: {e}"));
                    continue;
                }
            };
            match observed.iter_mut().find(|(p, _)| *p == pe) {
                Some(_) if !allow_duplicates => {
                    errs.push(format!("duplicate entries for key {pe}"));
                    continue;
                }
                Some(slot) => slot.1 = None,
                None => observed.push((pe.clone(), Some(item))),
            }
            pes.push(pe);
        }
        (pes, observed)
    }

    /// `visitListItems` of the merging walker: the cursor walk that decides the order of the
    /// merged list (live-only items keep their place; config items come in config order).
    fn merge_list(
        &self,
        list: &ListView<'a>,
        lhs: &[Node],
        rhs: &[Node],
        path: &mut String,
    ) -> Result<Option<Node>, String> {
        let mut errs = Vec::new();
        let (rhs_pes, observed_rhs) = self.index_items(list, rhs, false, &mut errs);
        let (lhs_pes, observed_lhs) = self.index_items(list, lhs, true, &mut errs);
        if !errs.is_empty() {
            let prefix = if path.is_empty() {
                String::new()
            } else {
                format!("{path}: ")
            };
            return Err(errs
                .iter()
                .map(|e| format!("{prefix}{e}"))
                .collect::<Vec<_>>()
                .join("\n"));
        }
        let null = Node::Null;
        // Live items that also occur in the config, in config order.
        let mut shared = rhs_pes
            .iter()
            .filter(|pe| lookup(&observed_lhs, pe).is_some());
        let mut next_shared = shared.next();
        let mut merged_rhs: Vec<&PathElement> = Vec::new();
        let mut out = Vec::with_capacity(lhs.len().max(rhs.len()));
        let (mut li, mut ri) = (0, 0);
        let item_tr = list.element_type;
        let mut merge_item = |pe: &PathElement,
                              l: Option<&Node>,
                              r: Option<&Node>,
                              path: &mut String|
         -> Result<(), String> {
            let len = path.len();
            path.push_str(&pe.to_string());
            let res = self.merge_at(item_tr, l, r, path);
            path.truncate(len);
            if let Some(v) = res? {
                out.push(v);
            }
            Ok(())
        };
        // A duplicated live element contributes `null` when merged with its config item.
        let live_of = |pe: &PathElement| lookup(&observed_lhs, pe).map(|v| v.unwrap_or(&null));
        let config_of = |pe: &PathElement| lookup(&observed_rhs, pe).flatten();
        while li < lhs_pes.len() || ri < rhs_pes.len() {
            let before = (li, ri);
            if li < lhs_pes.len() && ri < rhs_pes.len() {
                let pe = &lhs_pes[li];
                if *pe == rhs_pes[ri] {
                    merged_rhs.push(pe);
                    merge_item(pe, live_of(pe), config_of(pe), path)?;
                    li += 1;
                    ri += 1;
                    next_shared = shared.next();
                    continue;
                }
                if config_of(pe).is_some() && next_shared.is_some_and(|n| n != pe) {
                    li += 1;
                    continue;
                }
            }
            if li < lhs_pes.len() {
                let pe = &lhs_pes[li];
                if config_of(pe).is_none() {
                    merge_item(pe, lhs.get(li), None, path)?;
                    li += 1;
                    continue;
                } else if merged_rhs.contains(&pe) {
                    li += 1;
                }
            }
            if ri < rhs_pes.len() {
                let pe = &rhs_pes[ri];
                merged_rhs.push(pe);
                merge_item(pe, live_of(pe), config_of(pe), path)?;
                ri += 1;
                if next_shared == Some(pe) {
                    next_shared = shared.next();
                }
            }
            if (li, ri) == before {
                // Cannot happen with consistent indexes; never spin on odd input.
                return Err(format!("{path}: internal error merging list items"));
            }
        }
        Ok((!out.is_empty()).then_some(Node::Seq(out)))
    }

    // ----- Compare (`smd:typed/compare.go`) -----

    /// Compares two values: what was added, removed and modified going from `lhs` to `rhs`.
    pub fn compare(&self, lhs: &Node, rhs: &Node) -> Result<Comparison, String> {
        let mut c = Comparison::default();
        let mut path = Vec::new();
        self.cmp_at(self.root, Some(lhs), Some(rhs), &mut path, &mut c)?;
        Ok(c)
    }

    fn cmp_at(
        &self,
        tr: &'a TypeRef,
        lhs: Option<&Node>,
        rhs: Option<&Node>,
        path: &mut Path,
        c: &mut Comparison,
    ) -> Result<(), String> {
        let atom = self.resolve(tr)?;
        let kl = atom.kind_for(lhs);
        let kr = atom.kind_for(rhs);
        let in_leaf = if rhs.is_none() {
            self.cmp_kind(&atom, kl, tr, lhs, rhs, path, c)?
        } else if lhs.is_none() || kl == kr {
            self.cmp_kind(&atom, kr, tr, lhs, rhs, path, c)?
        } else {
            // smd runs the lhs kind on a copy of the walker first (its leaf flag is lost, its
            // findings are kept), then the rhs kind.
            self.cmp_kind(&atom, kl, tr, lhs, rhs, path, c)?;
            self.cmp_kind(&atom, kr, tr, lhs, rhs, path, c)?
        };
        if !in_leaf {
            if lhs.is_none() {
                c.added.insert(path);
            } else if rhs.is_none() {
                c.removed.insert(path);
            }
        }
        Ok(())
    }

    /// Returns whether the node was handled as a leaf.
    #[allow(clippy::too_many_arguments)]
    fn cmp_kind(
        &self,
        atom: &AtomView<'a>,
        kind: Kind,
        tr: &TypeRef,
        lhs: Option<&Node>,
        rhs: Option<&Node>,
        path: &mut Path,
        c: &mut Comparison,
    ) -> Result<bool, String> {
        let leaf = |path: &Path, c: &mut Comparison| match (lhs, rhs) {
            (None, _) => c.added.insert(path),
            (_, None) => c.removed.insert(path),
            (Some(l), Some(r)) => {
                if !value::equals(r, l) {
                    c.modified.insert(path);
                }
            }
        };
        match kind {
            Kind::Scalar => {
                leaf(path, c);
                Ok(true)
            }
            Kind::List => {
                let Some(list) = atom.list else {
                    return Ok(false);
                };
                let (l, r) = (as_seq(lhs), as_seq(rhs));
                let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
                if list.is_atomic() || empty {
                    leaf(path, c);
                    return Ok(true);
                }
                if l.is_none() && r.is_none() {
                    return Ok(false);
                }
                self.cmp_list(
                    &list,
                    l.map(Vec::as_slice).unwrap_or(&[]),
                    r.map(Vec::as_slice).unwrap_or(&[]),
                    path,
                    c,
                )?;
                Ok(false)
            }
            Kind::Map => {
                let Some(map) = atom.map else {
                    return Ok(false);
                };
                let (l, r) = (as_map(lhs), as_map(rhs));
                let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
                if map.is_atomic() || empty {
                    leaf(path, c);
                    return Ok(true);
                }
                if l.is_none() && r.is_none() {
                    return Ok(false);
                }
                self.cmp_map(&map, l, r, path, c)?;
                Ok(false)
            }
            Kind::Invalid => Err(format!("{}: {}", path_string(path), no_type(tr))),
        }
    }

    fn cmp_map(
        &self,
        map: &MapView<'a>,
        l: Option<&Map>,
        r: Option<&Map>,
        path: &mut Path,
        c: &mut Comparison,
    ) -> Result<(), String> {
        let empty = Map::default();
        let (lm, rm) = (l.unwrap_or(&empty), r.unwrap_or(&empty));
        for (k, lv) in lm {
            path.push(PathElement::field(k.clone()));
            let res = self.cmp_at(map.field_type(k), Some(lv), rm.get(k), path, c);
            path.pop();
            res?;
        }
        for (k, rv) in rm {
            if lm.contains_key(k) {
                continue;
            }
            path.push(PathElement::field(k.clone()));
            let res = self.cmp_at(map.field_type(k), None, Some(rv), path, c);
            path.pop();
            res?;
        }
        Ok(())
    }

    fn cmp_list(
        &self,
        list: &ListView<'a>,
        lhs: &[Node],
        rhs: &[Node],
        path: &mut Path,
        c: &mut Comparison,
    ) -> Result<(), String> {
        let mut all: Vec<PathElement> = Vec::new();
        let mut lvals: Vec<(PathElement, Vec<&Node>)> = Vec::new();
        for item in lhs {
            let Ok(pe) = list_item_element(self.schema, list, item) else {
                continue;
            };
            if let Some(slot) = lvals.iter_mut().find(|(p, _)| *p == pe) {
                slot.1.push(item);
            } else {
                lvals.push((pe.clone(), vec![item]));
                all.push(pe);
            }
        }
        let mut rvals: Vec<(PathElement, Vec<&Node>)> = Vec::new();
        for item in rhs {
            let Ok(pe) = list_item_element(self.schema, list, item) else {
                continue;
            };
            if let Some(slot) = rvals.iter_mut().find(|(p, _)| *p == pe) {
                slot.1.push(item);
            } else {
                rvals.push((pe.clone(), vec![item]));
                if !lvals.iter().any(|(p, _)| *p == pe) {
                    all.push(pe);
                }
            }
        }
        let none: Vec<&Node> = Vec::new();
        for pe in all {
            let ll = lvals
                .iter()
                .find(|(p, _)| *p == pe)
                .map_or(&none, |(_, v)| v);
            let rl = rvals
                .iter()
                .find(|(p, _)| *p == pe)
                .map_or(&none, |(_, v)| v);
            path.push(pe);
            let res = match (ll.len(), rl.len()) {
                (0, 0) => Ok(()),
                (a, b) if a <= 1 && b <= 1 => self.cmp_at(
                    list.element_type,
                    ll.first().copied(),
                    rl.first().copied(),
                    path,
                    c,
                ),
                (a, b) if a >= 2 && b >= 2 => {
                    let same = a == b && ll.iter().zip(rl.iter()).all(|(x, y)| value::equals(x, y));
                    if !same {
                        c.modified.insert(path);
                    }
                    Ok(())
                }
                (a, _) if a >= 2 => {
                    let r = match rl.first() {
                        Some(r) => self.cmp_at(list.element_type, None, Some(r), path, c),
                        None => Ok(()),
                    };
                    c.removed.insert(path);
                    r
                }
                _ => {
                    let r = match ll.first() {
                        Some(l) => self.cmp_at(list.element_type, Some(l), None, path, c),
                        None => Ok(()),
                    };
                    c.added.insert(path);
                    r
                }
            };
            path.pop();
            res?;
        }
        Ok(())
    }

    // ----- RemoveItems / ExtractItems (`smd:typed/remove.go`) -----

    /// The value without the paths of `set` (a path in the set goes with its subtree). `Null`
    /// when nothing is left.
    pub fn remove_items(&self, v: &Node, set: &Set) -> Node {
        self.remove_at(self.root, v, set, false)
            .unwrap_or(Node::Null)
    }

    /// Only the paths of `set` (with everything under an exact match). `Null` when nothing is
    /// left.
    pub fn extract_items(&self, v: &Node, set: &Set) -> Node {
        self.remove_at(self.root, v, set, true)
            .unwrap_or(Node::Null)
    }

    fn remove_at(&self, tr: &'a TypeRef, v: &Node, set: &Set, extract: bool) -> Option<Node> {
        let atom = self.schema.resolve(tr)?;
        let keep_if_extract = || extract.then(|| v.clone());
        match atom.kind_for(Some(v)) {
            Kind::Scalar => Some(v.clone()),
            Kind::List => {
                let list = atom.list?;
                let Node::Seq(items) = v else { return None };
                if items.is_empty() || list.is_atomic() {
                    return keep_if_extract();
                }
                let mut out = Vec::new();
                for item in items {
                    let pe = list_item_element(self.schema, &list, item).ok();
                    let exact = pe.as_ref().is_some_and(|pe| set.has_member(pe));
                    let sub = pe
                        .as_ref()
                        .and_then(|pe| set.child(pe))
                        .filter(|s| !s.is_empty());
                    let item = match sub {
                        Some(sub) => self
                            .remove_at(list.element_type, item, sub, extract)
                            .unwrap_or(Node::Null),
                        None => item.clone(),
                    };
                    if extract {
                        if exact || sub.is_some() {
                            out.push(item);
                        }
                    } else if !exact {
                        out.push(item);
                    }
                }
                (!out.is_empty()).then_some(Node::Seq(out))
            }
            Kind::Map => {
                let map = atom.map?;
                let Node::Map(m) = v else { return None };
                if m.is_empty() || map.is_atomic() {
                    return keep_if_extract();
                }
                let mut out = Map::default();
                for (k, val) in m {
                    let pe = PathElement::field(k.clone());
                    let ft = map.field_type(k);
                    if set.has_member(&pe) {
                        if extract {
                            // smd hands the whole set down here, not the subset under `k`.
                            out.insert(
                                k.clone(),
                                self.remove_at(ft, val, set, extract).unwrap_or(Node::Null),
                            );
                        }
                        continue;
                    }
                    match set.child(&pe).filter(|s| !s.is_empty()) {
                        Some(sub) => {
                            out.insert(
                                k.clone(),
                                self.remove_at(ft, val, sub, extract).unwrap_or(Node::Null),
                            );
                        }
                        None if extract => {}
                        None => {
                            out.insert(k.clone(), val.clone());
                        }
                    }
                }
                (!out.is_empty()).then_some(Node::Map(out))
            }
            Kind::Invalid => None,
        }
    }

    // ----- schema reconciliation (`smd:typed/reconcile_schema.go`) -----

    /// `ReconcileFieldSetWithSchema`: owned paths inside what is now atomic collapse to the
    /// atomic root. `None` when nothing changes.
    pub fn reconcile_field_set(&self, set: &Set) -> Result<Option<Set>, String> {
        let mut to_remove = Set::new();
        let mut to_add = Set::new();
        let mut path = Vec::new();
        self.reconcile_at(
            self.root,
            Some(set),
            false,
            &mut path,
            &mut to_remove,
            &mut to_add,
        )?;
        if to_remove.is_empty() && to_add.is_empty() {
            return Ok(None);
        }
        Ok(Some(set.recursive_difference(&to_remove).union(&to_add)))
    }

    fn reconcile_at(
        &self,
        tr: &'a TypeRef,
        set: Option<&Set>,
        is_atomic: bool,
        path: &mut Path,
        to_remove: &mut Set,
        to_add: &mut Set,
    ) -> Result<(), String> {
        let atom = self
            .schema
            .resolve(tr)
            .ok_or_else(|| format!("could not resolve {tr:?}"))?;
        if let Some(map) = atom.map {
            let deduced_elem = match &map.def.element_type.named {
                Some(n) => n == UNTYPED_DEDUCED,
                None => map.def.element_type.inline.scalar == Some(super::schema::Scalar::Untyped),
            };
            if deduced_elem && map.def.fields().is_empty() {
                return Ok(());
            }
            if !is_atomic && map.is_atomic() {
                if set.is_some_and(|s| !s.is_empty()) {
                    to_remove.insert(path);
                    to_add.insert(path);
                }
                return Ok(());
            }
            if let Some(s) = set {
                self.reconcile_children(s, path, to_remove, to_add, |pe| {
                    let tr = match pe {
                        PathElement::Field(name) => map.field_type(name),
                        _ => &map.def.element_type,
                    };
                    (!tr.is_empty()).then_some(tr)
                })?;
            }
            return Ok(());
        }
        if atom.scalar.is_some() {
            return Ok(());
        }
        if let Some(list) = atom.list {
            if !is_atomic && list.is_atomic() {
                to_remove.insert(path);
                to_add.insert(path);
                return Ok(());
            }
            if let Some(s) = set {
                self.reconcile_children(s, path, to_remove, to_add, |_| Some(list.element_type))?;
            }
            return Ok(());
        }
        Err("schema error: invalid atom".into())
    }

    fn reconcile_children(
        &self,
        s: &Set,
        path: &mut Path,
        to_remove: &mut Set,
        to_add: &mut Set,
        type_of: impl Fn(&PathElement) -> Option<&'a TypeRef>,
    ) -> Result<(), String> {
        // Children that are not members first, then members (smd's order; the result is a set).
        let mut visit =
            |pe: &PathElement, is_member: bool, path: &mut Path| -> Result<(), String> {
                let Some(tr) = type_of(pe) else { return Ok(()) };
                let child = s.child(pe);
                path.push(pe.clone());
                let r = self.reconcile_at(
                    tr,
                    child,
                    is_member && child.is_none(),
                    path,
                    to_remove,
                    to_add,
                );
                path.pop();
                r
            };
        for (pe, _) in s.children() {
            if !s.has_member(pe) {
                visit(pe, false, path)?;
            }
        }
        for pe in s.members() {
            visit(pe, true, path)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    const SCHEMA: &str = r#"
types:
- name: pod
  map:
    fields:
    - name: containers
      type:
        list:
          elementType: {namedType: container}
          elementRelationship: associative
          keys: [name]
    - name: ports
      type:
        list:
          elementType: {namedType: port}
          elementRelationship: associative
          keys: [port, protocol]
    - name: args
      type:
        list:
          elementType: {scalar: string}
          elementRelationship: atomic
    - name: labels
      type:
        map:
          elementType: {scalar: string}
- name: container
  map:
    fields:
    - {name: name, type: {scalar: string}}
    - {name: image, type: {scalar: string}}
- name: port
  map:
    fields:
    - {name: port, type: {scalar: numeric}}
    - {name: protocol, type: {scalar: string}, default: TCP}
"#;

    fn y(s: &str) -> Node {
        parse_one(s).unwrap()
    }

    fn with<R>(f: impl FnOnce(Typed<'_>) -> R) -> R {
        let schema = Schema::from_node(&y(SCHEMA)).unwrap();
        let root = TypeRef::named("pod");
        f(Typed::new(&schema, &root))
    }

    #[test]
    fn field_set_of_keyed_lists_atomic_lists_and_maps() {
        with(|t| {
            let v = y(
                "containers: [{name: web, image: nginx}]\nports: [{port: 80}]\nargs: [a, b]\nlabels: {app: web}\n",
            );
            let s = t.to_field_set(&v).unwrap();
            assert_eq!(
                s.to_fields_v1(),
                r#"{"f:args":{},"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}},"f:labels":{"f:app":{}},"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}}}"#
            );
        });
    }

    #[test]
    fn merge_keeps_live_items_and_takes_config_values() {
        with(|t| {
            let live = y("containers: [{name: a, image: x}, {name: b, image: y}]\nargs: [p]\n");
            let cfg = y("containers: [{name: b, image: z}, {name: c, image: w}]\nargs: [q]\n");
            let out = t.merge(&live, &cfg).unwrap();
            assert_eq!(
                out,
                y(
                    "containers: [{name: a, image: x}, {name: b, image: z}, {name: c, image: w}]\nargs: [q]\n"
                )
            );
        });
    }

    #[test]
    fn compare_reports_added_removed_modified() {
        with(|t| {
            let l = y("containers: [{name: a, image: x}]\nlabels: {k: v}\n");
            let r = y("containers: [{name: a, image: y}, {name: b}]\n");
            let c = t.compare(&l, &r).unwrap();
            assert_eq!(
                c.modified.to_fields_v1(),
                r#"{"f:containers":{"k:{\"name\":\"a\"}":{"f:image":{}}}}"#
            );
            assert_eq!(
                c.added.to_fields_v1(),
                r#"{"f:containers":{"k:{\"name\":\"b\"}":{".":{},"f:name":{}}}}"#
            );
            assert_eq!(
                c.removed.to_fields_v1(),
                r#"{"f:labels":{".":{},"f:k":{}}}"#
            );
        });
    }

    #[test]
    fn remove_and_extract_items() {
        with(|t| {
            let v = y("containers: [{name: a, image: x}, {name: b, image: y}]\nlabels: {k: v}\n");
            let set = Set::from_fields_v1(r#"{"f:containers":{"k:{\"name\":\"a\"}":{}}}"#).unwrap();
            assert_eq!(
                t.remove_items(&v, &set),
                y("containers: [{name: b, image: y}]\nlabels: {k: v}\n")
            );
            assert_eq!(
                t.extract_items(&v, &set),
                y("containers: [{name: a, image: x}]\n")
            );
        });
    }

    #[test]
    fn value_at_follows_keys_with_defaults() {
        with(|t| {
            let v = y("ports: [{port: 80, protocol: UDP, x: 1}, {port: 80, x: 2}]\n");
            let path = vec![
                PathElement::field("ports"),
                PathElement::key(vec![
                    ("port".into(), Node::Int(80)),
                    ("protocol".into(), Node::str("TCP")),
                ]),
                PathElement::field("x"),
            ];
            assert_eq!(t.value_at(&v, &path), Some(&Node::Int(2)));
            assert_eq!(t.value_at(&v, &[PathElement::field("nope")]), None);
        });
    }

    #[test]
    fn duplicate_keys_are_invalid_in_a_config_only() {
        with(|t| {
            let v = y("ports: [{port: 80}, {port: 80, protocol: TCP}]\n");
            let e = t.validate(&v, false).unwrap_err();
            assert_eq!(
                e,
                r#".ports: duplicate entries for key [port=80,protocol="TCP"]"#
            );
            assert!(t.validate(&v, true).is_ok());
        });
    }
}
