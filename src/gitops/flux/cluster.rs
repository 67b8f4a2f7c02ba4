//! The clusters of a repository: which Flux Kustomization applies which. A Kustomization is
//! applied by the Kustomizations whose build holds its document (the `flux-system`
//! Kustomization `flux bootstrap` writes applies the cluster's directory, its own file
//! included); one that no other applies is the root of a cluster. Each Kustomization is
//! rendered once per cluster that applies it, as the object its parent applies (the parent's
//! namespace, patches and substitutions over the file), and its `substituteFrom` ConfigMaps
//! and Secrets are the ones its cluster has: `--vars` files first, then the objects the
//! cluster's Kustomizations render, then the repository's manifests that no Kustomization
//! applies (put there by a bootstrap the repository does not hold), the one nearest to the
//! Kustomization's file. kustomize-controller reads them from the API server of the cluster
//! it runs in (fluxcd/pkg/kustomize `kustomize_varsub.go` `LoadVariables`: a `Get` in the
//! Kustomization's namespace).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::resource::Resource;

use super::super::{Context, Manifest, Repo, Resolution, Target, TargetRender};
use super::{FluxRender, build, is_kustomization, namespace_of, postbuild, prunes, resolve_source};

/// Where a document starts: its file and offset.
type DocKey = (PathBuf, usize);

fn key_of(at: &crate::source::Location) -> DocKey {
    (at.file.path.clone(), at.offset)
}

/// One Kustomization of the repository whose source is local, as its file declares it.
#[derive(Debug)]
struct Node_ {
    manifest: Manifest,
    root: PathBuf,
    /// Its build as the file declares it (before the post-build steps).
    built: Result<Vec<Resource>>,
}

/// A Kustomization in one cluster: the node, the instance that applies it, the cluster's root.
#[derive(Clone, Debug)]
struct Instance {
    node: usize,
    parent: Option<usize>,
    tree: usize,
}

/// The repository's clusters, and every render made in them (each made once).
#[derive(Debug)]
pub(super) struct Graph {
    nodes: Vec<Node_>,
    instances: Vec<Instance>,
    /// The repository's manifests no Kustomization applies.
    unapplied: Vec<Manifest>,
    excluded: HashMap<PathBuf, Arc<HashSet<PathBuf>>>,
    /// Each instance's render and the paths it read (asked again of the file system a later
    /// render reads through, so that what a review records is complete).
    done: Mutex<HashMap<usize, Done>>,
}

/// A render made, and every path it asked about.
type Done = (Result<Vec<Resource>>, Vec<PathBuf>);

/// Every Flux Kustomization of the repository as targets: one per cluster that applies it,
/// told apart by the directory of its file (`flux:NS/NAME@DIR`) when two share a name.
pub(super) fn targets(repo: &Repo<'_>, ctx: &Context<'_>) -> Vec<Target> {
    let kustomizations: Vec<&Manifest> = ctx
        .manifests
        .iter()
        .filter(|m| is_kustomization(m))
        .collect();
    let mut local = Vec::new();
    let mut others = Vec::new();
    for m in kustomizations {
        match resolve_source(repo, ctx, m) {
            Resolution::Local { root, how } => local.push((m.clone(), root, how)),
            Resolution::NotRendered(why) => others.push((m.clone(), why)),
        }
    }
    let graph = Arc::new(Graph::new(repo, ctx, &local));
    let mut out: Vec<(String, Target)> = Vec::new();
    for (i, inst) in graph.instances.iter().enumerate() {
        let n = &graph.nodes[inst.node];
        let ns = graph.applied_namespace(i);
        let how = local[inst.node].2.clone();
        out.push((
            format!("{ns}/{}", n.manifest.name()),
            Target {
                id: String::new(),
                at: n.manifest.at.clone(),
                source: Resolution::Local {
                    root: n.root.clone(),
                    how,
                },
                prunes: prunes(&n.manifest),
                render: Arc::new(InstanceRender {
                    graph: graph.clone(),
                    instance: i,
                }),
            },
        ));
    }
    for (m, why) in others {
        out.push((
            format!("{}/{}", namespace_of(&m), m.name()),
            Target {
                id: String::new(),
                at: m.at.clone(),
                source: Resolution::NotRendered(why),
                prunes: prunes(&m),
                render: Arc::new(FluxRender { manifest: m }),
            },
        ));
    }
    let mut named = name_targets(repo, out);
    // The instances come first, in order: instance `p` is target `p`.
    for (i, inst) in graph.instances.iter().enumerate() {
        let Some(p) = inst.parent else { continue };
        let parent = named[p].id.clone();
        if let Resolution::Local { how, .. } = &mut named[i].source {
            how.push_str(&format!("; applied by {parent}"));
        }
    }
    // In the order the repository declares them (a stable sort: one file's instances keep
    // their cluster order).
    named.sort_by(|a, b| (&a.at.file.path, a.at.offset).cmp(&(&b.at.file.path, b.at.offset)));
    named
}

/// `flux:NS/NAME`, or `flux:NS/NAME@DIR` (DIR: the directory of the file that declares it)
/// when several targets share `NS/NAME`; `#N` is added when even that is shared (one file in
/// several clusters).
fn name_targets(repo: &Repo<'_>, named: Vec<(String, Target)>) -> Vec<Target> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (n, _) in &named {
        *count.entry(n.as_str()).or_default() += 1;
    }
    let mut ids: Vec<String> = named
        .iter()
        .map(|(n, t)| match count[n.as_str()] {
            1 => format!("flux:{n}"),
            _ => {
                let dir = t.at.file.path.parent().unwrap_or(Path::new(""));
                format!("flux:{n}@{}", repo.relative(dir))
            }
        })
        .collect();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for id in &mut ids {
        let k = seen.entry(id.clone()).or_default();
        *k += 1;
        if *k > 1 {
            id.push_str(&format!("#{k}"));
        }
    }
    named
        .into_iter()
        .zip(ids)
        .map(|((_, mut t), id)| {
            t.id = id;
            t
        })
        .collect()
}

impl Graph {
    fn new(repo: &Repo<'_>, ctx: &Context<'_>, local: &[(Manifest, PathBuf, String)]) -> Graph {
        let mut excluded: HashMap<PathBuf, Arc<HashSet<PathBuf>>> = HashMap::new();
        let mut nodes = Vec::with_capacity(local.len());
        for (m, root, _) in local {
            let ex = excluded
                .entry(root.clone())
                .or_insert_with(|| Arc::new(super::excluded(repo, ctx, m, root)))
                .clone();
            // A build's warnings are given when the Kustomization itself is rendered.
            let built = build(repo, ctx, m, root, &ex, &mut Warnings::default());
            nodes.push(Node_ {
                manifest: m.clone(),
                root: root.clone(),
                built,
            });
        }
        let index: HashMap<DocKey, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (key_of(&n.manifest.at), i))
            .collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        let mut has_parent = vec![false; nodes.len()];
        let mut applied: HashSet<DocKey> = HashSet::new();
        for (i, n) in nodes.iter().enumerate() {
            for r in n.built.iter().flatten() {
                let Some(origin) = &r.origin else { continue };
                let k = key_of(origin);
                if let Some(&c) = index.get(&k) {
                    if c != i && !children[i].contains(&c) {
                        children[i].push(c);
                        has_parent[c] = true;
                    }
                }
                applied.insert(k);
            }
        }
        let unapplied = ctx
            .manifests
            .iter()
            .filter(|m| !applied.contains(&key_of(&m.at)))
            .cloned()
            .collect();
        let mut instances = Vec::new();
        let mut reached = vec![false; nodes.len()];
        let roots: Vec<usize> = (0..nodes.len()).filter(|&i| !has_parent[i]).collect();
        for r in roots {
            walk(
                &children,
                r,
                None,
                &mut instances,
                &mut reached,
                &mut Vec::new(),
            );
        }
        // Kustomizations that only apply each other (a cycle without a root) root themselves.
        for r in 0..nodes.len() {
            if !reached[r] {
                walk(
                    &children,
                    r,
                    None,
                    &mut instances,
                    &mut reached,
                    &mut Vec::new(),
                );
            }
        }
        Graph {
            nodes,
            instances,
            unapplied,
            excluded,
            done: Mutex::new(HashMap::new()),
        }
    }

    /// The namespace the instance's object is applied in: as its parent's build leaves it.
    fn applied_namespace(&self, i: usize) -> String {
        let inst = &self.instances[i];
        let m = &self.nodes[inst.node].manifest;
        let from_parent = inst.parent.and_then(|p| {
            let parent = &self.nodes[self.instances[p].node];
            let key = key_of(&m.at);
            parent
                .built
                .iter()
                .flatten()
                .find(|r| r.origin.as_ref().is_some_and(|o| key_of(o) == key))
                .map(|r| r.namespace().to_string())
        });
        match from_parent {
            Some(ns) if !ns.is_empty() => ns,
            _ => namespace_of(m).to_string(),
        }
    }

    /// The instance's render, made once: the object its parent applies, built, then the
    /// post-build steps with its cluster's variables. `stack` holds the renders under way.
    fn render(
        &self,
        i: usize,
        repo: &Repo<'_>,
        ctx: &Context<'_>,
        warnings: &mut Warnings,
        stack: &mut Vec<usize>,
    ) -> Result<Vec<Resource>> {
        let hit = self.done.lock().map_err(poisoned)?.get(&i).cloned();
        if let Some((out, read)) = hit {
            // The same questions, asked of this file system: a recording one (a review's
            // `--changed-only`) then knows the render depends on them.
            for p in &read {
                let _ = repo.fs.kind(p);
            }
            return out;
        }
        let rec = crate::fs::record::Recording::new(repo.fs);
        let recorded = Repo {
            fs: &rec,
            root: repo.root.clone(),
            files: repo.files,
            urls: repo.urls,
            revision: repo.revision.clone(),
        };
        stack.push(i);
        let out = self.render_once(i, &recorded, ctx, warnings, stack);
        stack.pop();
        let done = (out.clone(), rec.paths());
        self.done.lock().map_err(poisoned)?.insert(i, done);
        out
    }

    fn render_once(
        &self,
        i: usize,
        repo: &Repo<'_>,
        ctx: &Context<'_>,
        warnings: &mut Warnings,
        stack: &mut Vec<usize>,
    ) -> Result<Vec<Resource>> {
        let node = &self.nodes[self.instances[i].node];
        let m = self.applied(i, repo, ctx, stack);
        let built = build(
            repo,
            ctx,
            &m,
            &node.root,
            &self.excluded[&node.root],
            warnings,
        )?;
        let cell = std::cell::RefCell::new(std::mem::take(stack));
        let lookup = |kind: &str, ns: &str, name: &str| {
            let found = self.lookup(i, (kind, ns, name), repo, ctx, &mut cell.borrow_mut());
            found.map(|m| m.map(|m| m.node))
        };
        let out = postbuild::run(built, &m, ctx, &lookup);
        *stack = cell.into_inner();
        out
    }

    /// The object the instance's parent applies (its namespace, patches, substitutions), or
    /// the file's when it has no parent or the parent does not render.
    fn applied(
        &self,
        i: usize,
        repo: &Repo<'_>,
        ctx: &Context<'_>,
        stack: &mut Vec<usize>,
    ) -> Manifest {
        let inst = &self.instances[i];
        let file = &self.nodes[inst.node].manifest;
        let Some(p) = inst.parent else {
            return file.clone();
        };
        if stack.contains(&p) {
            return file.clone();
        }
        let key = key_of(&file.at);
        let rendered = self.render(p, repo, ctx, &mut Warnings::default(), stack);
        let found = rendered.ok().and_then(|out| {
            out.into_iter()
                .find(|r| r.origin.as_ref().is_some_and(|o| key_of(o) == key))
        });
        match found {
            Some(r) => Manifest {
                at: file.at.clone(),
                node: r.node,
            },
            None => file.clone(),
        }
    }

    /// The ConfigMap or Secret a `substituteFrom` reference of instance `i` names, with the
    /// document it comes from (the Kustomization's own when the build generated it).
    fn lookup(
        &self,
        i: usize,
        (kind, ns, name): (&str, &str, &str),
        repo: &Repo<'_>,
        ctx: &Context<'_>,
        stack: &mut Vec<usize>,
    ) -> Result<Option<Manifest>> {
        if let Some(m) = postbuild::find_object(ctx.opts.flux.vars.iter(), kind, ns, name) {
            return Ok(Some(m.clone()));
        }
        let here = &self.nodes[self.instances[i].node].manifest.at;
        let manifest = |r: Resource| Manifest {
            at: r.origin.clone().unwrap_or_else(|| here.clone()),
            node: r.node,
        };
        let tree = self.instances[i].tree;
        let is = |r: &Resource, exact: bool| {
            r.node.str_at(&["kind"]) == Some(kind)
                && r.node.str_at(&["apiVersion"]) == Some("v1")
                && r.name() == name
                && if exact {
                    r.namespace() == ns
                } else {
                    r.namespace().is_empty()
                }
        };
        for exact in [true, false] {
            for (j, inst) in self.instances.iter().enumerate() {
                if inst.tree != tree {
                    continue;
                }
                let Some(r) = self.nodes[inst.node]
                    .built
                    .iter()
                    .flatten()
                    .find(|r| is(r, exact))
                else {
                    continue;
                };
                if stack.contains(&j) {
                    // Applied by a render under way (a Kustomization that substitutes from
                    // what it applies): the object as built.
                    return Ok(Some(manifest(r.clone())));
                }
                let out = self.render(j, repo, ctx, &mut Warnings::default(), stack).map_err(|e| {
                    Error::new(
                        ErrorKind::NotFound,
                        format!(
                            "{kind} {ns}/{name} is applied by the Kustomization {}/{}, which does not render: {}",
                            namespace_of(&self.nodes[inst.node].manifest),
                            self.nodes[inst.node].manifest.name(),
                            e.message
                        ),
                    )
                })?;
                return Ok(out.into_iter().find(|r| is(r, exact)).map(manifest));
            }
        }
        self.unapplied_object(i, kind, ns, name)
    }

    /// Among the manifests no Kustomization applies, the one nearest to the Kustomization's
    /// file (the longest common directory); two as near are an error.
    fn unapplied_object(
        &self,
        i: usize,
        kind: &str,
        ns: &str,
        name: &str,
    ) -> Result<Option<Manifest>> {
        let file = &self.nodes[self.instances[i].node].manifest.at.file.path;
        let matches = |m: &Manifest, exact: bool| {
            m.kind() == kind
                && m.api_version() == "v1"
                && m.name() == name
                && if exact {
                    m.namespace() == ns
                } else {
                    m.namespace().is_empty()
                }
        };
        for exact in [true, false] {
            let found: Vec<&Manifest> = self
                .unapplied
                .iter()
                .filter(|m| matches(m, exact))
                .collect();
            let Some(best) = found
                .iter()
                .map(|m| common_depth(file, &m.at.file.path))
                .max()
            else {
                continue;
            };
            let nearest: Vec<&&Manifest> = found
                .iter()
                .filter(|m| common_depth(file, &m.at.file.path) == best)
                .collect();
            if let [one] = nearest.as_slice() {
                return Ok(Some((**one).clone()));
            }
            let places: Vec<String> = nearest
                .iter()
                .map(|m| {
                    format!(
                        "{}:{}",
                        crate::source::display_path(&m.at.file.path),
                        m.at.line()
                    )
                })
                .collect();
            return Err(Error::new(
                ErrorKind::NotFound,
                format!(
                    "{kind} {ns}/{name}: no Kustomization of this repository applies it, and {} files declare it ({}); which one the cluster has is not known",
                    places.len(),
                    places.join(", ")
                ),
            )
            .help("give the one the cluster has with --vars FILE"));
        }
        Ok(None)
    }
}

/// How many leading path components two paths share.
fn common_depth(a: &Path, b: &Path) -> usize {
    a.iter().zip(b.iter()).take_while(|(x, y)| x == y).count()
}

fn poisoned<T>(_: T) -> Error {
    Error::new(ErrorKind::InvalidResource, "a Flux render panicked")
}

/// Depth first from `n`: one instance per path from a root, a Kustomization already on the
/// path (one that applies itself) not again.
fn walk(
    children: &[Vec<usize>],
    n: usize,
    parent: Option<usize>,
    instances: &mut Vec<Instance>,
    reached: &mut [bool],
    path: &mut Vec<usize>,
) {
    if path.contains(&n) {
        return;
    }
    reached[n] = true;
    let me = instances.len();
    let tree = parent.map_or(me, |p| instances[p].tree);
    instances.push(Instance {
        node: n,
        parent,
        tree,
    });
    path.push(n);
    for &c in &children[n] {
        walk(children, c, Some(me), instances, reached, path);
    }
    path.pop();
}

/// How one Kustomization renders in one cluster.
#[derive(Debug)]
struct InstanceRender {
    graph: Arc<Graph>,
    instance: usize,
}

impl TargetRender for InstanceRender {
    fn render(
        &self,
        repo: &Repo<'_>,
        ctx: &Context<'_>,
        warnings: &mut Warnings,
    ) -> Result<Vec<Resource>> {
        self.graph
            .render(self.instance, repo, ctx, warnings, &mut Vec::new())
    }

    fn substitute_source(
        &self,
        repo: &Repo<'_>,
        ctx: &Context<'_>,
        (kind, ns, name): (&str, &str, &str),
    ) -> Option<Manifest> {
        let found = self
            .graph
            .lookup(self.instance, (kind, ns, name), repo, ctx, &mut Vec::new());
        found.ok().flatten()
    }
}
