//! [`Map`], the ordered string-keyed map of the document model: entries in document order in
//! one vector (or, once frozen, one shared slice that copies of the map share until they
//! change), looked up by scanning while a map is small (most maps of a Kubernetes object have
//! a handful of keys) and through a hash index, built on the first lookup, once it is large.
//! It has the part of `IndexMap`'s interface that ply uses, with the same meanings.
//!
//! Why not `IndexMap`: it hashes every key on insert and keeps a hash table beside every map,
//! even the three-key ones; a render reads hundreds of thousands of small maps, and that table
//! (one more allocation each) and the hashing were a tenth of a render's CPU time
//! (docs/performance.md, "A map without a hash table").

use std::fmt;
use std::hash::BuildHasher;
use std::ops::RangeBounds;
use std::sync::{Arc, OnceLock};

use hashbrown::HashTable;

use super::Node;
use crate::fasthash::FastBuild;

/// Maps with more entries than this are looked up through a hash index; smaller ones are
/// scanned (comparing lengths first), which touches only the entries and costs less than
/// hashing the key.
const SCAN_MAX: usize = 8;

/// How a map value was written, as far as kyaml's node `Style` matters to ply (see
/// [`Map::styled`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ScalarStyle {
    /// Plain (and every collection): go-yaml's style 0.
    #[default]
    Plain,
    /// An untagged quoted (`"…"`, `'…'`) or block (`|`, `>`) string.
    Quoted,
    /// A scalar written with a tag (`!!str "5"`, `!!str yes`): go-yaml's `TaggedStyle`, which
    /// keeps the tag of whatever value is written there when it is printed.
    Tagged,
    /// Plain, holding a string that a strategic merge patch wrote quoted (or tagged) over a
    /// plain value: its text may read as another type (`"0x10"`), which matters when kyaml's
    /// walk sets it again (`merge::smp::kyaml`, `kz_quoted_when_walked`).
    PlainWritten,
    /// A string kyaml's `FieldSetter` set from text (a generated ConfigMap's or Secret's
    /// value): quoted or not by its text (`parse::set_value_styled`), decided when asked
    /// (`parse::resolved_style`), as a render seldom patches what it generates.
    Set,
    /// A value go-yaml printed and read back (every value of an object after a JSON 6902
    /// patch): a string is quoted where go-yaml quotes it (`emit::prints_quoted`), decided
    /// when asked (`parse::resolved_style`).
    Printed,
}

impl ScalarStyle {
    /// [`ScalarStyle::Quoted`] when `quoted`, else plain.
    pub(crate) fn quoted_if(quoted: bool) -> ScalarStyle {
        if quoted {
            ScalarStyle::Quoted
        } else {
            ScalarStyle::Plain
        }
    }
}

/// One entry: a key, its value, and how that value was written ([`Map::style`]). The style
/// costs no room: a bucket is padded to 16 bytes (`Node` holds an `i128`), and key and value
/// leave 8 of them free.
#[derive(Clone, Default)]
struct Bucket {
    key: String,
    value: Node,
    style: ScalarStyle,
}

/// A map's entries: its own, or (after [`Map::freeze`]) shared with its copies.
#[derive(Clone)]
enum Entries {
    Own(Vec<Bucket>),
    /// Read in place; the first change through a map that shares them copies them into
    /// `Own` (each value a copy, which for a frozen map is one reference count).
    Shared(Arc<[Bucket]>),
}

impl Entries {
    #[inline]
    fn slice(&self) -> &[Bucket] {
        match self {
            Entries::Own(v) => v,
            Entries::Shared(s) => s,
        }
    }
}

impl Default for Entries {
    fn default() -> Self {
        Entries::Own(Vec::new())
    }
}

/// A copy of shared entries (each value a copy: one reference count for a frozen map).
#[cold]
fn copied(shared: &[Bucket]) -> Vec<Bucket> {
    shared.to_vec()
}

/// The entries of a shared slice as a vector: moved out when no other map shares them,
/// copied otherwise.
#[cold]
fn unshared(shared: &mut Arc<[Bucket]>) -> Vec<Bucket> {
    match Arc::get_mut(shared) {
        Some(only) => only.iter_mut().map(std::mem::take).collect(),
        None => copied(shared),
    }
}

/// An ordered map from strings to [`Node`]s; keys are unique.
///
/// Copies of a map made after [`Map::freeze`] share its entries until one of them changes
/// (copy on write, one map at a time): copying a frozen document is one reference count, and
/// changing a value deep inside a copy copies only the maps on the way to it. The store of
/// parses that the renders of one run share (`render::Shared`) freezes what it keeps, so a
/// render's copy of a stored file costs one reference count per document and each render
/// copies only the maps it changes (docs/performance.md, "Parsed maps shared until changed").
/// A map that was never frozen is a plain vector, as fast to change as one.
#[derive(Default)]
pub struct Map {
    entries: Entries,
    /// Positions of the entries by key hash, for maps of more than [`SCAN_MAX`] entries; built
    /// on the first lookup that needs it, kept up to date by pushes, dropped by every other
    /// change of positions (and not copied by `clone`).
    index: OnceLock<Box<HashTable<usize>>>,
}

/// Whether two keys are equal, compared in at most two loads a side when shorter than 16
/// bytes (nearly every key of a manifest) instead of a call to `memcmp`, which was the
/// largest part of a lookup.
#[inline]
fn same_key(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let w8 = |s: &[u8], i: usize| s[i..i + 8].try_into().map(u64::from_ne_bytes).ok();
    let w4 = |s: &[u8], i: usize| s[i..i + 4].try_into().map(u32::from_ne_bytes).ok();
    match n {
        16.. => a == b,
        8.. => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        4.. => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        _ => a.iter().zip(b).all(|(x, y)| x == y),
    }
}

fn hash(key: &str) -> u64 {
    FastBuild::default().hash_one(key)
}

impl Clone for Map {
    /// A frozen map's copy shares its entries; any other map is copied whole.
    fn clone(&self) -> Self {
        Map {
            entries: self.entries.clone(),
            index: OnceLock::new(),
        }
    }
}

impl Map {
    pub fn new() -> Self {
        Map::default()
    }

    pub fn with_capacity(n: usize) -> Self {
        Map {
            entries: Entries::Own(Vec::with_capacity(n)),
            index: OnceLock::new(),
        }
    }

    /// A map of entries whose keys are known to be unique, with room for exactly them.
    /// Each entry says whether its value is [`Map::styled`].
    pub(super) fn from_unique(
        entries: impl ExactSizeIterator<Item = (String, Node, bool)>,
    ) -> Self {
        let mut out = Vec::with_capacity(entries.len());
        out.extend(entries.map(|(key, value, styled)| Bucket {
            key,
            value,
            style: ScalarStyle::quoted_if(styled),
        }));
        Map {
            entries: Entries::Own(out),
            index: OnceLock::new(),
        }
    }

    /// The entries, in order.
    #[inline]
    fn entries(&self) -> &[Bucket] {
        self.entries.slice()
    }

    /// The map's own entries, to change their number or order: copied out of a shared
    /// slice first.
    fn own(&mut self) -> &mut Vec<Bucket> {
        if let Entries::Shared(s) = &mut self.entries {
            self.entries = Entries::Own(unshared(s));
        }
        match &mut self.entries {
            Entries::Own(v) => v,
            Entries::Shared(_) => unreachable!("made own above"),
        }
    }

    /// The entries, to change in place (positions stay): a shared slice no other map shares
    /// is changed where it is; one that others share is copied first.
    #[inline]
    fn entries_mut(&mut self) -> &mut [Bucket] {
        if let Entries::Shared(s) = &mut self.entries
            && Arc::get_mut(s).is_none()
        {
            self.entries = Entries::Own(copied(s));
        }
        match &mut self.entries {
            Entries::Own(v) => v,
            Entries::Shared(s) => Arc::get_mut(s).expect("unshared above"),
        }
    }

    /// Makes this map and every map under it shareable: their copies from now on share
    /// entries with them until one side changes. Worth it for documents that are copied
    /// more often than changed (the store of parses of a run); a frozen map costs a copy of
    /// its entries at its first change.
    pub fn freeze(&mut self) {
        for b in self.entries_mut() {
            b.value.freeze();
        }
        if let Entries::Own(v) = &mut self.entries {
            self.entries = Entries::Shared(Arc::from(std::mem::take(v)));
        }
    }

    /// [`Map::freeze`] for the maps not frozen yet: a map that shares its entries is left as
    /// it is (its maps were frozen with it), so its copies keep sharing with it.
    pub(crate) fn freeze_unshared(&mut self) {
        if let Entries::Own(v) = &mut self.entries {
            for b in v.iter_mut() {
                b.value.freeze_unshared();
            }
            self.entries = Entries::Shared(Arc::from(std::mem::take(v)));
        }
    }

    /// Whether `self` and `other` are copies sharing their entries.
    pub fn shares_with(&self, other: &Map) -> bool {
        match (&self.entries, &other.entries) {
            (Entries::Shared(a), Entries::Shared(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    pub fn len(&self) -> usize {
        self.entries().len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }

    pub fn capacity(&self) -> usize {
        match &self.entries {
            Entries::Own(v) => v.capacity(),
            Entries::Shared(s) => s.len(),
        }
    }

    pub fn reserve(&mut self, additional: usize) {
        self.own().reserve(additional);
    }

    pub fn shrink_to_fit(&mut self) {
        if let Entries::Own(v) = &mut self.entries {
            v.shrink_to_fit();
        }
    }

    pub fn clear(&mut self) {
        self.entries = Entries::default();
        self.index = OnceLock::new();
    }

    /// The index of `entries`, this map's entries, more than [`SCAN_MAX`] of them: built
    /// on the first lookup that needs it.
    fn index_of_large<'a>(&'a self, entries: &[Bucket]) -> &'a HashTable<usize> {
        self.index.get_or_init(|| {
            let mut table = HashTable::with_capacity(entries.len());
            for (i, b) in entries.iter().enumerate() {
                table.insert_unique(hash(&b.key), i, |&j| hash(&entries[j].key));
            }
            Box::new(table)
        })
    }

    /// Forgets the index after a change of positions.
    fn reindex(&mut self) {
        self.index = OnceLock::new();
    }

    /// The position of `key`.
    pub fn get_index_of(&self, key: &str) -> Option<usize> {
        let entries = self.entries();
        if entries.len() <= SCAN_MAX {
            return entries.iter().position(|b| same_key(&b.key, key));
        }
        self.index_of_large(entries)
            .find(hash(key), |&i| same_key(&entries[i].key, key))
            .copied()
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get_index_of(key).is_some()
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        self.get_index_of(key).map(|i| &self.entries()[i].value)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        let i = self.get_index_of(key)?;
        Some(&mut self.entries_mut()[i].value)
    }

    pub fn get_index(&self, i: usize) -> Option<(&String, &Node)> {
        self.entries().get(i).map(Bucket::pair)
    }

    pub fn get_index_mut(&mut self, i: usize) -> Option<(&String, &mut Node)> {
        if i >= self.len() {
            return None;
        }
        self.entries_mut().get_mut(i).map(Bucket::pair_mut)
    }

    pub fn first(&self) -> Option<(&String, &Node)> {
        self.entries().first().map(Bucket::pair)
    }

    pub fn last(&self) -> Option<(&String, &Node)> {
        self.entries().last().map(Bucket::pair)
    }

    /// Appends a key known not to be in the map.
    fn push(&mut self, key: String, value: Node) -> usize {
        self.push_styled(key, value, ScalarStyle::Plain)
    }

    /// [`Map::push`] with the value's style.
    fn push_styled(&mut self, key: String, value: Node, style: ScalarStyle) -> usize {
        let h = self.index.get_mut().map(|_| hash(&key));
        let own = self.own();
        let i = own.len();
        own.push(Bucket { key, value, style });
        if let (Some(h), Some(table)) = (h, self.index.get_mut()) {
            let entries = self.entries.slice();
            table.insert_unique(h, i, |&j| hash(&entries[j].key));
        }
        i
    }

    /// Whether the value under `key` was written as a quoted (`"…"`, `'…'`) or block (`|`,
    /// `>`) string, untagged: kyaml's node `Style` is then not plain, and a strategic merge
    /// patch that replaces the value keeps that style (`FieldSetter.Filter`, kyaml/yaml/fns.go:
    /// `s.Value.YNode().Style = field.YNode().Style`), so that its number or boolean prints
    /// as a string (`merge::smp`). Set by both readers ([`Map::set_styled`]) and by the
    /// stages that write values as kustomize writes them styled; a value replaced in place
    /// ([`Map::get_mut`], [`Map::insert`] of a key that is there) keeps its entry's style, as
    /// kyaml's `FieldSetter` keeps the replaced node's; a new key is plain unless set.
    /// A tagged value is neither ([`Map::style`]). Values of lists carry no style (kyaml sets
    /// list elements without it). Not part of equality; `Debug` marks a quoted value with a
    /// leading `~` and a tagged one with `!`.
    ///
    /// What is stored may be a rule rather than a style ([`ScalarStyle::Set`],
    /// [`ScalarStyle::Printed`]), which `parse::resolved_style` applies to the value.
    #[cfg(test)]
    pub(crate) fn styled(&self, key: &str) -> bool {
        self.style(key) == ScalarStyle::Quoted
    }

    /// How the value under `key` was written: quoted ([`Map::styled`]), tagged, plain (also
    /// for a missing key), or the rule that decides it.
    #[cfg(test)]
    pub(crate) fn style(&self, key: &str) -> ScalarStyle {
        self.get_index_of(key)
            .map_or(ScalarStyle::Plain, |i| self.entries()[i].style)
    }

    /// [`Map::style`] by position.
    pub(crate) fn style_index(&self, i: usize) -> ScalarStyle {
        self.entries()
            .get(i)
            .map_or(ScalarStyle::Plain, |b| b.style)
    }

    /// Sets the style of the value at position `i` ([`Map::style`]); nothing when there is no
    /// such entry, or when it already has that style (a shared map stays shared).
    pub(crate) fn set_style_index(&mut self, i: usize, style: ScalarStyle) {
        if self.style_index(i) != style && i < self.len() {
            self.entries_mut()[i].style = style;
        }
    }

    /// [`Map::insert`] of a value with its style ([`Map::style`]): a key that is there takes
    /// the value and this style.
    pub(crate) fn insert_styled(&mut self, key: String, value: Node, style: ScalarStyle) {
        match self.get_index_of(&key) {
            Some(i) => {
                let b = &mut self.entries_mut()[i];
                b.value = value;
                b.style = style;
            }
            None => {
                self.push_styled(key, value, style);
            }
        }
    }

    /// Sets `key` to `value`: in its place if the key is there (giving back the value it
    /// had, and keeping its [`Map::styled`]), else at the end (plain).
    pub fn insert(&mut self, key: String, value: Node) -> Option<Node> {
        self.insert_full(key, value).1
    }

    /// [`Map::insert`], also giving the entry's position.
    pub fn insert_full(&mut self, key: String, value: Node) -> (usize, Option<Node>) {
        match self.get_index_of(&key) {
            Some(i) => (
                i,
                Some(std::mem::replace(&mut self.entries_mut()[i].value, value)),
            ),
            None => (self.push(key, value), None),
        }
    }

    /// Removes `key`, keeping the order of the others.
    pub fn shift_remove(&mut self, key: &str) -> Option<Node> {
        self.shift_remove_entry(key).map(|(_, v)| v)
    }

    pub fn shift_remove_entry(&mut self, key: &str) -> Option<(String, Node)> {
        let i = self.get_index_of(key)?;
        self.shift_remove_index(i)
    }

    pub fn shift_remove_index(&mut self, i: usize) -> Option<(String, Node)> {
        if i >= self.len() {
            return None;
        }
        let b = self.own().remove(i);
        self.reindex();
        Some((b.key, b.value))
    }

    pub fn entry(&mut self, key: String) -> Entry<'_> {
        match self.get_index_of(&key) {
            Some(index) => Entry::Occupied(OccupiedEntry { map: self, index }),
            None => Entry::Vacant(VacantEntry { map: self, key }),
        }
    }

    /// Keeps the entries for which `keep` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&String, &mut Node) -> bool) {
        if self.is_empty() {
            return;
        }
        let before = self.len();
        self.own().retain_mut(|b| keep(&b.key, &mut b.value));
        if self.len() != before {
            self.reindex();
        }
    }

    /// Sorts the entries, stably, by `cmp` on (key, value) pairs.
    pub fn sort_by(
        &mut self,
        mut cmp: impl FnMut(&String, &Node, &String, &Node) -> std::cmp::Ordering,
    ) {
        self.own()
            .sort_by(|a, b| cmp(&a.key, &a.value, &b.key, &b.value));
        self.reindex();
    }

    pub fn reverse(&mut self) {
        self.entries_mut().reverse();
        self.reindex();
    }

    pub fn truncate(&mut self, len: usize) {
        if len < self.len() {
            self.own().truncate(len);
            self.reindex();
        }
    }

    /// Removes the entries in `range`, in order.
    pub fn drain(
        &mut self,
        range: impl RangeBounds<usize>,
    ) -> impl Iterator<Item = (String, Node)> + '_ {
        self.reindex();
        self.own().drain(range).map(|b| (b.key, b.value))
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter {
            inner: self.entries().iter(),
        }
    }

    pub fn iter_mut(&mut self) -> IterMut<'_> {
        IterMut {
            inner: self.entries_mut().iter_mut(),
        }
    }

    pub fn keys(&self) -> Keys<'_> {
        Keys {
            inner: self.entries().iter(),
        }
    }

    pub fn values(&self) -> Values<'_> {
        Values {
            inner: self.entries().iter(),
        }
    }

    pub fn values_mut(&mut self) -> ValuesMut<'_> {
        ValuesMut {
            inner: self.entries_mut().iter_mut(),
        }
    }
}

impl Bucket {
    fn pair(&self) -> (&String, &Node) {
        (&self.key, &self.value)
    }

    fn pair_mut(&mut self) -> (&String, &mut Node) {
        (&self.key, &mut self.value)
    }
}

impl PartialEq for Map {
    /// Maps are equal when they hold the same keys with equal values, in any order (as
    /// `IndexMap`'s equality).
    fn eq(&self, other: &Map) -> bool {
        if self.shares_with(other) {
            return true;
        }
        self.len() == other.len()
            && self
                .iter()
                .all(|(k, v)| other.get(k).is_some_and(|w| v == w))
    }
}

impl std::ops::Index<&str> for Map {
    type Output = Node;
    /// The value under `key`; panics when there is none (as `IndexMap`'s indexing).
    fn index(&self, key: &str) -> &Node {
        self.get(key).expect("key in map")
    }
}

impl fmt::Debug for Map {
    /// A quoted value ([`Map::styled`]) is shown after a `~` (`{"v": ~Str("8080")}`), a
    /// tagged one after a `!`, so that the readers' comparison (tests/fast_reader.rs, on
    /// `Debug` text) covers styles too.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Styled<'a>(&'static str, &'a Node);
        impl fmt::Debug for Styled<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.0)?;
                fmt::Debug::fmt(self.1, f)
            }
        }
        let mut m = f.debug_map();
        for b in self.entries() {
            match b.style {
                ScalarStyle::Plain => m.entry(&b.key, &b.value),
                ScalarStyle::Quoted => m.entry(&b.key, &Styled("~", &b.value)),
                ScalarStyle::Tagged => m.entry(&b.key, &Styled("!", &b.value)),
                ScalarStyle::PlainWritten => m.entry(&b.key, &Styled("?written ", &b.value)),
                ScalarStyle::Set => m.entry(&b.key, &Styled("?set ", &b.value)),
                ScalarStyle::Printed => m.entry(&b.key, &Styled("?printed ", &b.value)),
            };
        }
        m.finish()
    }
}

impl Extend<(String, Node)> for Map {
    fn extend<I: IntoIterator<Item = (String, Node)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl FromIterator<(String, Node)> for Map {
    fn from_iter<I: IntoIterator<Item = (String, Node)>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut map = Map::with_capacity(iter.size_hint().0);
        map.extend(iter);
        map
    }
}

impl<const N: usize> From<[(String, Node); N]> for Map {
    fn from(entries: [(String, Node); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl IntoIterator for Map {
    type Item = (String, Node);
    type IntoIter = IntoIter;
    fn into_iter(self) -> IntoIter {
        let entries = match self.entries {
            Entries::Own(v) => v,
            Entries::Shared(mut s) => unshared(&mut s),
        };
        IntoIter {
            inner: entries.into_iter(),
        }
    }
}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a String, &'a Node);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Map {
    type Item = (&'a String, &'a mut Node);
    type IntoIter = IterMut<'a>;
    fn into_iter(self) -> IterMut<'a> {
        self.iter_mut()
    }
}

/// A place in a map for a key: [`Map::entry`].
pub enum Entry<'a> {
    Occupied(OccupiedEntry<'a>),
    Vacant(VacantEntry<'a>),
}

pub struct OccupiedEntry<'a> {
    map: &'a mut Map,
    index: usize,
}

pub struct VacantEntry<'a> {
    map: &'a mut Map,
    key: String,
}

impl<'a> Entry<'a> {
    pub fn or_insert(self, value: Node) -> &'a mut Node {
        self.or_insert_with(|| value)
    }

    pub fn or_insert_with(self, value: impl FnOnce() -> Node) -> &'a mut Node {
        match self {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(value()),
        }
    }

    pub fn or_default(self) -> &'a mut Node {
        self.or_insert_with(Node::default)
    }

    pub fn key(&self) -> &str {
        match self {
            Entry::Occupied(o) => &o.map.entries()[o.index].key,
            Entry::Vacant(v) => &v.key,
        }
    }
}

impl<'a> OccupiedEntry<'a> {
    pub fn get(&self) -> &Node {
        &self.map.entries()[self.index].value
    }

    pub fn get_mut(&mut self) -> &mut Node {
        &mut self.map.entries_mut()[self.index].value
    }

    pub fn into_mut(self) -> &'a mut Node {
        &mut self.map.entries_mut()[self.index].value
    }

    pub fn index(&self) -> usize {
        self.index
    }

    pub fn insert(&mut self, value: Node) -> Node {
        std::mem::replace(self.get_mut(), value)
    }
}

impl<'a> VacantEntry<'a> {
    pub fn insert(self, value: Node) -> &'a mut Node {
        let i = self.map.push(self.key, value);
        &mut self.map.entries_mut()[i].value
    }
}

macro_rules! iterator {
    ($name:ident, $inner:ty, $item:ty, $map:expr) => {
        pub struct $name<'a> {
            inner: $inner,
        }

        impl<'a> Iterator for $name<'a> {
            type Item = $item;
            #[inline]
            fn next(&mut self) -> Option<$item> {
                self.inner.next().map($map)
            }
            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.inner.size_hint()
            }
        }

        impl<'a> DoubleEndedIterator for $name<'a> {
            #[inline]
            fn next_back(&mut self) -> Option<$item> {
                self.inner.next_back().map($map)
            }
        }

        impl<'a> ExactSizeIterator for $name<'a> {}

        impl<'a> Clone for $name<'a>
        where
            $inner: Clone,
        {
            fn clone(&self) -> Self {
                $name {
                    inner: self.inner.clone(),
                }
            }
        }
    };
}

iterator!(
    Iter,
    std::slice::Iter<'a, Bucket>,
    (&'a String, &'a Node),
    Bucket::pair
);
iterator!(
    IterMut,
    std::slice::IterMut<'a, Bucket>,
    (&'a String, &'a mut Node),
    Bucket::pair_mut
);
iterator!(
    Keys,
    std::slice::Iter<'a, Bucket>,
    &'a String,
    |b: &'a Bucket| &b.key
);
iterator!(
    Values,
    std::slice::Iter<'a, Bucket>,
    &'a Node,
    |b: &'a Bucket| &b.value
);
iterator!(
    ValuesMut,
    std::slice::IterMut<'a, Bucket>,
    &'a mut Node,
    |b: &'a mut Bucket| &mut b.value
);

/// The entries of a map, by value, in order.
pub struct IntoIter {
    inner: std::vec::IntoIter<Bucket>,
}

impl Iterator for IntoIter {
    type Item = (String, Node);
    fn next(&mut self) -> Option<(String, Node)> {
        self.inner.next().map(|b| (b.key, b.value))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl DoubleEndedIterator for IntoIter {
    fn next_back(&mut self) -> Option<(String, Node)> {
        self.inner.next_back().map(|b| (b.key, b.value))
    }
}

impl ExactSizeIterator for IntoIter {}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: usize) -> String {
        format!("k{i}")
    }

    /// A value's style ([`Map::styled`]) stays with its entry when the value is replaced in
    /// place, is set by `insert_styled`, is plain for a new key, is not part of equality, and
    /// shows in `Debug`; a frozen map's copy that changes a style leaves the original's.
    #[test]
    fn styles_stay_with_their_entries() {
        for n in [2, SCAN_MAX + 4] {
            let mut map = Map::new();
            for i in 0..n {
                map.insert_styled(key(i), Node::str("v"), ScalarStyle::quoted_if(i % 2 == 1));
            }
            assert!(!map.styled("k0") && map.styled("k1") && !map.styled("absent"));
            map.insert("k1".into(), Node::Int(5));
            *map.get_mut("k1").expect("there") = Node::Bool(true);
            assert!(map.styled("k1"));
            map.insert_styled("k1".into(), Node::Int(6), ScalarStyle::Tagged);
            assert!(!map.styled("k1") && map.style("k1") == ScalarStyle::Tagged);
            map.insert_styled("k1".into(), Node::Int(6), ScalarStyle::Plain);
            assert!(!map.styled("k1"));
            map.insert("new".into(), Node::Null);
            assert!(!map.styled("new"));
            map.set_style_index(0, ScalarStyle::Quoted);
            assert!(map.styled("k0"));
            let mut plain = map.clone();
            plain.set_style_index(0, ScalarStyle::Plain);
            assert_eq!(plain, map);
            map.freeze();
            let mut copy = map.clone();
            copy.set_style_index(0, ScalarStyle::Plain);
            assert!(map.styled("k0") && !copy.styled("k0"));
            assert!(format!("{map:?}").starts_with(r#"{"k0": ~Str("v"), "k1": Int(6)"#));
        }
    }

    /// Every operation, on maps below and above the scan limit, against a plain vector of
    /// pairs as the model.
    #[test]
    fn behaves_as_an_ordered_map_at_every_size() {
        for n in [0, 1, 3, SCAN_MAX, SCAN_MAX + 1, 40] {
            let mut map = Map::new();
            let mut model: Vec<(String, Node)> = Vec::new();
            for i in 0..n {
                assert_eq!(map.insert(key(i), Node::Int(i as i128)), None);
                model.push((key(i), Node::Int(i as i128)));
            }
            // Lookups, then replacing in place.
            for i in 0..n {
                assert_eq!(map.get_index_of(&key(i)), Some(i));
                assert_eq!(map.get(&key(i)), Some(&Node::Int(i as i128)));
            }
            assert_eq!(map.get("missing"), None);
            if n > 0 {
                let old = map.insert(key(0), Node::str("zero"));
                assert_eq!(old, Some(Node::Int(0)));
                model[0].1 = Node::str("zero");
            }
            // Removing from the middle keeps the order and the index right.
            if n > 2 {
                assert_eq!(map.shift_remove(&key(1)), Some(Node::Int(1)));
                model.remove(1);
            }
            map.entry("new".into()).or_insert(Node::Bool(true));
            model.push(("new".into(), Node::Bool(true)));
            *map.entry("new".into()).or_default() = Node::Bool(false);
            model.last_mut().unwrap().1 = Node::Bool(false);
            map.retain(|k, _| k != "k2");
            model.retain(|(k, _)| k != "k2");
            let got: Vec<(String, Node)> = map.clone().into_iter().collect();
            assert_eq!(got, model);
            for (i, (k, v)) in model.iter().enumerate() {
                assert_eq!(map.get_index_of(k), Some(i), "{k} in {n}");
                assert_eq!(map.get(k), Some(v));
            }
            // A clone has no index; it builds its own.
            let copy = map.clone();
            for (k, v) in &model {
                assert_eq!(copy.get(k), Some(v));
            }
            map.reverse();
            model.reverse();
            for (i, (k, _)) in model.iter().enumerate() {
                assert_eq!(map.get_index_of(k), Some(i));
            }
        }
    }

    /// A map is a vector and a pointer (and the index's once-flag), so a `Node` holding one
    /// takes 48 bytes (`IndexMap`'s table made it 64).
    #[test]
    fn a_node_stays_small() {
        assert!(size_of::<Map>() <= 40);
        assert!(size_of::<Node>() <= 48);
    }

    /// A copy of a frozen map shares the entries until one side changes; a change deep inside
    /// a copy (through every kind of mutable access) copies the maps on its way and leaves the
    /// original, its untouched branches still shared, as it was. An unfrozen map is copied.
    #[test]
    fn copies_share_until_changed() {
        let inner: Map = (0..SCAN_MAX + 3)
            .map(|i| (key(i), Node::Int(i as i128)))
            .collect();
        let mut original = Map::new();
        original.insert("inner".into(), Node::Map(inner));
        original.insert("other".into(), Node::Map([(key(0), Node::Null)].into()));
        assert!(!original.clone().shares_with(&original));
        original.freeze();
        let snapshot = format!("{original:?}");
        let changes: Vec<fn(&mut Map)> = vec![
            |m| {
                let Some(Node::Map(i)) = m.get_mut("inner") else {
                    panic!()
                };
                i.insert(key(1), Node::Bool(true));
            },
            |m| {
                let Some(Node::Map(i)) = m.get_mut("inner") else {
                    panic!()
                };
                i.insert("added".into(), Node::Bool(true));
            },
            |m| {
                for (_, v) in m.iter_mut() {
                    // Only `inner` has this key: `other` is reached mutably, not changed.
                    if let Node::Map(i) = v {
                        i.shift_remove(&key(5));
                    }
                }
            },
            |m| {
                if let Some(Node::Map(i)) = m.values_mut().next() {
                    i.retain(|k, _| k != &key(2));
                }
            },
            |m| {
                let Node::Map(i) = m.entry("inner".into()).or_default() else {
                    panic!()
                };
                i.sort_by(|a, _, b, _| b.cmp(a));
            },
            |m| {
                let (_, v) = m.get_index_mut(0).unwrap();
                let Node::Map(i) = v else { panic!() };
                i.drain(1..3).for_each(drop);
            },
        ];
        for change in changes {
            let mut copy = original.clone();
            assert!(copy.shares_with(&original));
            // The index built through the copy serves the original too.
            assert_eq!(
                copy["inner"].as_map().unwrap().get_index_of(&key(4)),
                Some(4)
            );
            change(&mut copy);
            assert!(!copy.shares_with(&original));
            assert_ne!(format!("{copy:?}"), snapshot);
            assert_eq!(format!("{original:?}"), snapshot);
            let (Some(Node::Map(a)), Some(Node::Map(b))) =
                (copy.get("other"), original.get("other"))
            else {
                panic!()
            };
            assert!(a.shares_with(b), "the untouched branch is still shared");
            for i in 0..SCAN_MAX + 3 {
                let inner = original["inner"].as_map().unwrap();
                assert_eq!(inner.get_index_of(&key(i)), Some(i));
            }
        }
        // Taking a shared map apart copies it; an empty map holds nothing.
        let copy = original.clone();
        let pairs: Vec<(String, Node)> = copy.into_iter().collect();
        assert_eq!(pairs.len(), 2);
        assert_eq!(format!("{original:?}"), snapshot);
        assert!(!Map::new().shares_with(&Map::new()));
        // A frozen map no copy shares changes in place.
        let mut alone = original.clone();
        drop((original, pairs));
        alone.get_mut("other").unwrap().freeze();
        let before = alone["inner"].as_map().unwrap().entries().as_ptr();
        let Some(Node::Map(i)) = alone.get_mut("inner") else {
            panic!()
        };
        i.insert(key(0), Node::Null);
        assert_eq!(alone["inner"].as_map().unwrap().entries().as_ptr(), before);
    }

    /// `same_key` is `==` for every pair of keys of every length up to 40 that differ in one
    /// byte or not at all.
    #[test]
    fn same_key_is_equality() {
        for n in 0..40 {
            let a: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            assert!(same_key(&a, &a.clone()));
            assert!(!same_key(&a, &format!("{a}x")));
            for at in 0..n {
                let mut b = a.clone().into_bytes();
                b[at] = b'Z';
                let b = String::from_utf8(b).unwrap();
                assert!(!same_key(&a, &b), "{a} {b}");
            }
        }
    }

    #[test]
    fn equality_ignores_order() {
        let a: Map = [("a".to_string(), Node::Int(1)), ("b".into(), Node::Int(2))].into();
        let b: Map = [("b".to_string(), Node::Int(2)), ("a".into(), Node::Int(1))].into();
        let c: Map = [("a".to_string(), Node::Int(1)), ("b".into(), Node::Int(3))].into();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
