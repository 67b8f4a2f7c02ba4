//! Applying a kustomization's patches in order: each patch's targets found (by id or by
//! selector), what kustomize does around the merge (ids checked when the list is rebuilt,
//! patches that match nothing, whole-object deletes).

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::kustomization::Selector;
use crate::merge::smp;
use crate::render::Context;
use crate::render::ids::id_string;
use crate::resource::{Gvk, ResId, Resource, string_maps};
use crate::schema::Schema;
use crate::source::Location;
use crate::yaml::Node;

use super::KustomizeVersion;
use super::index::{Index, SCAN_LIMIT, exact_targets, untargeted_documents};
use super::object::{
    after_json_round_trip, json_patch_in_place, smp_into, with_build_annotations,
    without_build_annotations,
};
use super::select::{select, selector_is_empty, selector_text};
use super::*;

/// Applies `patches` in order to `resources`, merging with `schema` (the render's: the first
/// `openapi:` met chooses it). `renamed`: whether a patch may have renamed an object since
/// the list was last rebuilt ([`crate::render::ids::check_unique_slots`]), coming in from
/// patches applied before (`false` at a kustomization's first patch).
pub(in crate::render) fn apply_all(
    resources: &mut Vec<Resource>,
    patches: &[Patch],
    ctx: Context<'_>,
    schema: &Schema,
    warnings: &mut Warnings,
    renamed: &mut bool,
) -> Result<()> {
    if patches.is_empty() {
        return Ok(());
    }
    let mut slots: Vec<Option<Resource>> =
        std::mem::take(resources).into_iter().map(Some).collect();
    let mut index = Index::new(
        &slots,
        untargeted_documents(patches) > SCAN_LIMIT,
        exact_targets(patches) > SCAN_LIMIT,
    );
    let mut run = Run {
        slots: &mut slots,
        index: &mut index,
        ctx,
        schema,
        warnings,
        renamed,
    };
    let result = patches.iter().try_for_each(|p| run.apply(p));
    *resources = slots.into_iter().flatten().collect();
    result
}

/// One [`apply_all`]: the objects (a deleted one leaves its slot empty), where their ids are
/// looked up, and what every patch reads.
struct Run<'r, 'c> {
    slots: &'r mut [Option<Resource>],
    index: &'r mut Index,
    ctx: Context<'c>,
    schema: &'c Schema,
    warnings: &'r mut Warnings,
    /// Whether a patch may have renamed an object since the list was last rebuilt.
    renamed: &'r mut bool,
}

impl Run<'_, '_> {
    fn apply(&mut self, p: &Patch) -> Result<()> {
        // Two objects may share a current id only after a JSON 6902 patch renamed one
        // (kustomize checks ids when a strategic merge patch rebuilds the list, not after a
        // JSON patch).
        let shared_ids = *self.renamed;
        // A strategic merge patch renames only with `allowNameChange` or `allowKindChange`.
        if matches!(p.body, Body::Smp(_)) && (p.allow_name_change || p.allow_kind_change) {
            *self.renamed = true;
        }
        match (&p.body, &p.target) {
            // An empty patch that the render's kustomize version ignores ([`load_patch`]).
            (Body::Nothing, _) => Ok(()),
            (Body::Smp(docs), Some(target)) if p.flavor == Flavor::Patch => {
                self.smp_targeted(p, docs, target, shared_ids)
            }
            (Body::Smp(docs), _) => self.smp_by_id(p, docs, shared_ids),
            (Body::Json(ops), target) => self.json(p, ops, target.as_ref()),
        }
    }

    /// kustomize's `resWrangler.ApplySmPatch` rebuilds the list after the patch: ids are
    /// checked then, when a patch may have renamed an object.
    fn rebuilt(&mut self, p: &Patch) -> Result<()> {
        if std::mem::take(self.renamed) {
            let ctx = self.ctx;
            crate::render::ids::check_unique_slots(self.slots, &|g: &Gvk| ctx.is_cluster_scoped(g))
                .map_err(|e| e.at_opt(p.declared.clone()).label("after this patch"))?;
        }
        Ok(())
    }

    /// The objects `target` selects, in slot order.
    fn select(&mut self, target: &Selector) -> Result<Vec<usize>> {
        let ctx = self.ctx;
        select(self.slots, Some(self.index), target, &|g: &Gvk| {
            ctx.is_cluster_scoped(g)
        })
    }

    /// A `patches:` entry's strategic merge patch with a target: its one document merged
    /// into every object the target selects.
    fn smp_targeted(
        &mut self,
        p: &Patch,
        docs: &[(Node, Option<Location>)],
        target: &Selector,
        shared_ids: bool,
    ) -> Result<()> {
        let located = |e: Error| e.at_opt(p.declared.clone());
        if docs.len() > 1 {
            return Err(located(Error::new(
                ErrorKind::Patch,
                format!(
                    "Multiple Strategic-Merge Patches in one `patches` entry is not allowed to set `patches.target` field: {}",
                    p.source
                ),
            )));
        }
        let chosen = self.select(target).map_err(located)?;
        let strict = self.ctx.strict();
        let Some((doc, _)) = docs.first() else {
            // No document: kustomize applies the text as a JSON patch, which fails on the
            // first selected object (`PatchTransformerPlugin.transformJson6902`).
            if chosen.is_empty() {
                return unmatched(p, target, true, false, strict, self.warnings);
            }
            return Err(located(
                Error::new(
                    ErrorKind::Patch,
                    format!(
                        "unable to parse SM or JSON patch from {}: the patch is empty",
                        p.source
                    ),
                )
                .help(
                    "a patch needs a map with kind and metadata.name, or a list of JSON 6902 \
                     operations",
                ),
            ));
        };
        let deletes = smp::deletes_object(doc);
        let deletes_all = deletes && selector_is_empty(target);
        unmatched(
            p,
            target,
            chosen.is_empty(),
            deletes_all,
            strict,
            self.warnings,
        )?;
        let doc = &string_maps::copy_merge_metadata(doc);
        let chosen = if shared_ids {
            same_current_ids(self.slots, chosen)
        } else {
            chosen
        };
        for i in chosen {
            smp_into(self.slots, self.index, i, doc, p, self.schema).map_err(|e| {
                located(Error::new(
                    ErrorKind::Patch,
                    format!("{}: {}", p.source, e.message),
                ))
            })?;
        }
        self.rebuilt(p)
    }

    /// Strategic merge documents without a target: each merged into the one object that has
    /// (or had) its id.
    fn smp_by_id(
        &mut self,
        p: &Patch,
        docs: &[(Node, Option<Location>)],
        shared_ids: bool,
    ) -> Result<()> {
        check_delete_then_more(p, docs, self.ctx.kustomize())?;
        for (doc, loc) in docs {
            // `patchesStrategicMerge` goes through `resWrangler.ApplySmPatch` too; an
            // untargeted `patches:` entry does not (`Resource.ApplySmPatch` directly).
            let prepared;
            let doc = if p.flavor == Flavor::StrategicMerge {
                prepared = string_maps::copy_merge_metadata(doc);
                &prepared
            } else {
                doc
            };
            let id = ResId::of(doc);
            let ctx = self.ctx;
            let found = self
                .index
                .by_any_id(self.slots, &id, &|g: &Gvk| ctx.is_cluster_scoped(g));
            let at = || loc.clone().or_else(|| p.declared.clone());
            match found.as_slice() {
                [i] => {
                    let all = if shared_ids && p.flavor == Flavor::StrategicMerge {
                        same_current_ids(self.slots, vec![*i])
                    } else {
                        vec![*i]
                    };
                    for i in all {
                        smp_into(self.slots, self.index, i, doc, p, self.schema).map_err(|e| {
                            Error::new(ErrorKind::Patch, format!("{}: {}", p.source, e.message))
                                .at_opt(at())
                        })?;
                    }
                }
                [] => return Err(no_match(self.slots, &id, p, loc.clone())),
                _ => {
                    return Err(Error::new(
                        ErrorKind::Patch,
                        format!(
                            "multiple matches for Id {}; failed to find unique target for patch {}",
                            id_string(&id),
                            id_string(&id)
                        ),
                    )
                    .at_opt(at())
                    .label("this patch"));
                }
            }
            if p.flavor == Flavor::StrategicMerge {
                self.rebuilt(p)?;
            }
        }
        Ok(())
    }

    /// A JSON 6902 list applied to every object its target selects.
    fn json(&mut self, p: &Patch, ops: &Node, target: Option<&Selector>) -> Result<()> {
        let located = |e: Error| e.at_opt(p.declared.clone());
        let Some(target) = target else {
            return Err(located(Error::new(
                ErrorKind::Patch,
                format!("must specify a target for JSON patch {}", p.source),
            )));
        };
        let chosen = self.select(target).map_err(located)?;
        let strict = self.ctx.strict();
        unmatched(p, target, chosen.is_empty(), false, strict, self.warnings)?;
        let growth = self.ctx.limits().json_patch_growth;
        for i in chosen {
            let Some(r) = self.slots.get_mut(i).and_then(Option::as_mut) else {
                continue;
            };
            if p.flavor == Flavor::Patch {
                r.store_previous_id();
            }
            let before = r.id();
            let ctx = self.ctx;
            let build = with_build_annotations(r, &|g: &Gvk| ctx.is_cluster_scoped(g));
            json_patch_in_place(&mut r.node, ops, growth, self.ctx.kustomize()).map_err(|e| {
                located(Error::new(
                    ErrorKind::Patch,
                    format!("{}: {}: {}", p.source, e.path, e.message),
                ))
            })?;
            without_build_annotations(&mut r.node, &build);
            after_json_round_trip(&mut r.node);
            r.json_round_trip = true;
            *self.renamed |= r.id() != before;
            r.unshare_all();
            if let Some(r) = &self.slots[i] {
                self.index.add(i, r);
            }
        }
        Ok(())
    }
}

/// kustomize v5.5.0 leaves a deleted object in its list as a nil node until the `patches:`
/// entry is done, and the id lookup of the entry's next document dereferences it
/// (`resWrangler.GetMatchingResourcesByAnyId`): it panics. v5.7 skips such nodes (PR #5859).
fn check_delete_then_more(
    p: &Patch,
    docs: &[(Node, Option<Location>)],
    kustomize: KustomizeVersion,
) -> Result<()> {
    if p.flavor != Flavor::Patch || kustomize.at_least(KustomizeVersion::V5_7_1) {
        return Ok(());
    }
    let Some((_, loc)) = docs[..docs.len().saturating_sub(1)]
        .iter()
        .find(|(doc, _)| smp::deletes_object(doc))
    else {
        return Ok(());
    };
    Err(Error::new(
        ErrorKind::Patch,
        format!(
            "{}: kustomize v5.5.0 fails on a `$patch: delete` document followed by another \
             document in one patch (a nil pointer dereference in GetMatchingResourcesByAnyId)",
            p.source
        ),
    )
    .at_opt(loc.clone().or_else(|| p.declared.clone()))
    .label("this document deletes its object")
    .help(
        "kustomize v5.7 and later render it (PR #5859): --kustomize-version 5.8.1; or put each \
         `$patch: delete` document last, or in a patch of its own",
    ))
}

/// The objects a strategic merge patch chosen as `chosen` applies to: kustomize patches every
/// object whose current id is one of theirs (`resWrangler.ApplySmPatch` in
/// `api/resmap/reswrangler.go` takes `resource.MakeIdSet(selected)` and tests each object's
/// `CurId()`), which are more than the chosen ones when a JSON 6902 patch gave two objects one
/// id. In list order.
fn same_current_ids(slots: &[Option<Resource>], chosen: Vec<usize>) -> Vec<usize> {
    let ids: Vec<ResId> = chosen
        .iter()
        .filter_map(|&i| slots.get(i)?.as_ref().map(Resource::id))
        .collect();
    slots
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            chosen.contains(i)
                || r.as_ref()
                    .is_some_and(|r| ids.iter().any(|id| r.id_ref() == id.borrowed()))
        })
        .map(|(i, _)| i)
        .collect()
}

/// Warns (or, with `--strict`, fails) about a targeted patch that matches nothing, or one
/// whose empty selector makes it delete every resource.
fn unmatched(
    p: &Patch,
    target: &Selector,
    none: bool,
    deletes_all: bool,
    strict: bool,
    warnings: &mut Warnings,
) -> Result<()> {
    let message = if none {
        format!(
            "patch {} matches no resource: target {} selects nothing (kustomize ignores it)",
            p.source,
            selector_text(target)
        )
    } else if deletes_all {
        format!(
            "patch {} deletes every resource: target {} selects all of them and the patch is `$patch: delete`",
            p.source,
            selector_text(target)
        )
    } else {
        return Ok(());
    };
    if strict {
        return Err(Error::new(ErrorKind::Strict, message)
            .at_opt(p.declared.clone())
            .label("this patch")
            .help("fix the target, or remove the patch; without --strict (PLY_STRICT) this is a warning"));
    }
    warnings.warn(match &p.declared {
        Some(l) => format!("{}: {message}", l.describe()),
        None => message,
    });
    Ok(())
}

/// The error for an untargeted strategic merge patch whose object does not exist, naming the
/// closest ids that do.
fn no_match(slots: &[Option<Resource>], id: &ResId, p: &Patch, loc: Option<Location>) -> Error {
    let id_text = id_string(id);
    let message = match p.flavor {
        Flavor::Patch => format!(
            "no resource matches strategic merge patch \"{id_text}\": no matches for Id {id_text}; failed to find unique target for patch {id_text}"
        ),
        _ => {
            format!("no matches for Id {id_text}; failed to find unique target for patch {id_text}")
        }
    };
    let mut scored: Vec<(usize, String)> = slots
        .iter()
        .flatten()
        .map(|r| {
            let rid = r.id();
            let mut score = 0;
            if rid.gvk.kind != id.gvk.kind {
                score += 4;
            }
            if rid.gvk.group != id.gvk.group || rid.gvk.version != id.gvk.version {
                score += 2;
            }
            if rid.namespace != id.namespace {
                score += 1;
            }
            score += crate::diag::suggest::levenshtein(&rid.name, &id.name);
            (score, id_string(&rid))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    let closest: Vec<String> = scored.into_iter().take(3).map(|(_, s)| s).collect();
    let mut e = Error::new(ErrorKind::Patch, message)
        .at_opt(loc.or_else(|| p.declared.clone()))
        .label("no object has this patch's kind, name and namespace");
    e = if closest.is_empty() {
        e.help("there are no resources to patch at this point")
    } else {
        e.help(format!(
            "the closest existing ids are: {}",
            closest.join(", ")
        ))
    };
    e
}
