//! `ply diff --merge-reports`: the JSON reports (`schemaVersion` 2) of a sharded review
//! (`--shard I/N`) read back into the one [`Review`] they are parts of, which every writer of
//! this layer then writes as the unsharded run would. Pure: takes the parts' texts, reads no
//! file. An object comes back with its changes and its diff as the part wrote them
//! ([`ObjectChange::stored_diff`]); an overlay's unchanged objects come back as a count; its
//! created and deleted objects also as rendered ([`OverlayReview::unpaired`]), which
//! `review::engine::merged` pairs into the moves between shards.

use std::path::Path;

use crate::diag::{Error, ErrorKind};
use crate::yaml::Node;

use super::model::{
    Action, Affixes, Change, FailOn, Failure, ObjectChange, ObjectId, OverlayReview, Review, Risk,
    RiskKind, Shard, Status,
};

/// One part: a name for messages (its file) and its text.
pub(crate) type Part<'a> = (&'a str, &'a str);

/// The review the parts are shards of, its title, and whether the shards showed secrets.
/// The parts must be the shards of one run, each once and all of them (the same base, head,
/// title, `--fail-on`, shard count and `--show-secrets`), with no overlay twice; the overlays
/// are put back in the order of an unsharded `--all` run (by directory, component by
/// component). Moves are not paired here (the review layer pairs them).
pub(crate) fn merge(parts: &[Part<'_>]) -> Result<(Review, String, bool), Error> {
    let mut merged: Option<(Review, String)> = None;
    // Which shard each part is, by index (the part's name).
    let mut seen: Vec<(usize, &str)> = Vec::new();
    let mut count_of_all: Option<(usize, bool)> = None;
    for (name, text) in parts {
        let (review, title) = read_part(name, text)?;
        let Some(shard) = review.shard else {
            return Err(bad(
                name,
                "it has no 'shard' (it was not written with --shard I/N)",
            )
            .help("write each shard with `ply diff --base REF --all --shard I/N --format json`"));
        };
        match count_of_all {
            None => count_of_all = Some((shard.count, shard.show_secrets)),
            Some((count, _)) if count != shard.count => {
                return Err(bad(
                    name,
                    &format!(
                        "it is shard {}/{}, an earlier part is of {count} shards",
                        shard.index, shard.count
                    ),
                )
                .help("merge only the shards of one run"));
            }
            Some((_, show)) if show != shard.show_secrets => {
                return Err(bad(name, "its --show-secrets is not an earlier part's")
                    .help("merge only the shards of one run"));
            }
            Some(_) => {}
        }
        seen.push((shard.index, name));
        match &mut merged {
            None => merged = Some((review, title)),
            Some((all, all_title)) => join(all, all_title, review, &title, name)?,
        }
    }
    let (mut review, title) = merged
        .ok_or_else(|| Error::new(ErrorKind::Usage, "--merge-reports needs a JSON report"))?;
    let (count, show_secrets) = count_of_all.unwrap_or((0, false));
    every_shard_once(&mut seen, count)?;
    review.shard = None;
    review
        .overlays
        .sort_by(|a, b| order(&a.name).cmp(&order(&b.name)));
    count_moved_out(&mut review.overlays);
    Ok((review, title, show_secrets))
}

/// Adds a later part's overlays to the review of the earlier ones, refusing a part of
/// another run (its --fail-on, base, head or title) or an overlay given twice.
fn join(
    all: &mut Review,
    all_title: &str,
    review: Review,
    title: &str,
    name: &str,
) -> Result<(), Error> {
    if all.fail_on != review.fail_on {
        return Err(bad(name, "its --fail-on is not an earlier part's")
            .help("merge only the shards of one run"));
    }
    for (what, a, b) in [
        ("base", all.base.as_str(), review.base.as_str()),
        ("head", all.head.as_str(), review.head.as_str()),
        ("title", all_title, title),
    ] {
        if a != b {
            return Err(bad(
                name,
                &format!("its {what} is '{b}', an earlier part's is '{a}'"),
            )
            .help("merge only the shards of one run (the same --base, --head and --title)"));
        }
    }
    for o in review.overlays {
        if all.overlays.iter().any(|x| x.name == o.name) {
            return Err(bad(
                name,
                &format!("the overlay '{}' is in an earlier part too", o.name),
            )
            .help("each shard of `--shard I/N` holds an overlay once: give each part once"));
        }
        all.overlays.push(o);
    }
    Ok(())
}

/// Every shard once: a missing one would leave its overlays out of the report, silently.
fn every_shard_once(seen: &mut [(usize, &str)], count: usize) -> Result<(), Error> {
    seen.sort_unstable();
    for pair in seen.windows(2) {
        if let [(a, first), (b, name)] = pair {
            if a == b {
                return Err(
                    bad(name, &format!("it is shard {b}/{count}, as '{first}' is"))
                        .help("give each shard's part once"),
                );
            }
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|i| !seen.iter().any(|(j, _)| j == i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(Error::new(
            ErrorKind::Usage,
            format!(
                "--merge-reports: no part is shard {}: the report would leave its overlays out",
                missing.join(", ")
            ),
        )
        .help("give every shard's JSON part (`--shard I/N` for each I from 1 to N)"));
    }
    Ok(())
}

/// What each overlay lost to moves: the objects other overlays say moved from it (another
/// shard's, possibly).
fn count_moved_out(overlays: &mut [OverlayReview]) {
    let moved: Vec<usize> = overlays
        .iter()
        .map(|o| {
            overlays
                .iter()
                .flat_map(|x| &x.objects)
                .filter(|x| x.moved_from.as_deref() == Some(o.name.as_str()))
                .count()
        })
        .collect();
    for (o, n) in overlays.iter_mut().zip(moved) {
        o.moved_out = n;
    }
}

/// The sort key of an overlay's name: the repository's root (`.`) first, then the
/// directories in `Path` order, as `--all` finds them.
fn order(name: &str) -> (bool, &Path) {
    (name != ".", Path::new(name))
}

fn bad(part: &str, what: &str) -> Error {
    Error::new(
        ErrorKind::Usage,
        format!("'{part}' is not a part of a sharded review: {what}"),
    )
}

fn read_part(name: &str, text: &str) -> Result<(Review, String), Error> {
    let root = crate::yaml::parse::parse_one(text)
        .map_err(|e| bad(name, &format!("not JSON ({})", e.message)))?;
    let want = |path: &[&str]| -> Result<&Node, Error> {
        let mut n = &root;
        for key in path {
            n = n
                .get(key)
                .ok_or_else(|| bad(name, &format!("no field '{}'", path.join("."))))?;
        }
        Ok(n)
    };
    if want(&["schemaVersion"])? != &Node::Int(2) {
        return Err(bad(name, "its schemaVersion is not 2")
            .help("write each shard with `ply diff --base REF --all --shard I/N --format json`"));
    }
    let string = |n: &Node, field: &str| -> Result<String, Error> {
        n.get(field)
            .and_then(Node::as_str)
            .map(str::to_string)
            .ok_or_else(|| bad(name, &format!("'{field}' is not a string")))
    };
    let base = string(&root, "base")?;
    let head = string(&root, "head")?;
    let title = string(&root, "title")?;
    let fail_on = match string(&root, "failOn")?.as_str() {
        "new-errors" => FailOn::NewErrors,
        "any-error" => FailOn::AnyError,
        "not-reviewed" => FailOn::NotReviewed,
        other => return Err(bad(name, &format!("its failOn is '{other}'"))),
    };
    let Node::Seq(overlays) = want(&["overlays"])? else {
        return Err(bad(name, "'overlays' is not a list"));
    };
    let shard = match root.get("shard") {
        None | Some(Node::Null) => None,
        Some(sh) => {
            let number = |field: &str| match sh.get(field) {
                Some(Node::Int(n)) => usize::try_from(*n).ok(),
                _ => None,
            };
            let (Some(index), Some(count), Some(Node::Bool(show_secrets))) =
                (number("index"), number("count"), sh.get("showSecrets"))
            else {
                return Err(bad(name, "'shard' is not {index, count, showSecrets}"));
            };
            if index == 0 || index > count {
                return Err(bad(name, &format!("its shard is {index}/{count}")));
            }
            Some(Shard {
                index,
                count,
                show_secrets: *show_secrets,
            })
        }
    };
    let mut out = Vec::new();
    for o in overlays {
        out.push(read_overlay(name, o, &string)?);
    }
    // The risks, listed once for the whole report, go back to their overlays in the order the
    // report lists them (most severe first, then by overlay: each overlay's own order).
    if let Some(Node::Seq(risks)) = root.get("risks") {
        for r in risks {
            let overlay = string(r, "overlay")?;
            let risk = read_risk(name, r, &string)?;
            match out.iter_mut().find(|o| o.name == overlay) {
                Some(o) => o.risks.push(risk),
                None => return Err(bad(name, &format!("a risk names no overlay '{overlay}'"))),
            }
        }
    }
    Ok((
        Review {
            base,
            head,
            overlays: out,
            fail_on,
            shard,
        },
        title,
    ))
}

/// One risk of the report's `risks` list.
fn read_risk(
    name: &str,
    r: &Node,
    string: &dyn Fn(&Node, &str) -> Result<String, Error>,
) -> Result<Risk, Error> {
    let kind = match string(r, "kind")?.as_str() {
        "immutable" => RiskKind::Immutable,
        "deletion" => RiskKind::Deletion,
        "unmanaged" => RiskKind::Unmanaged,
        "hpa-replicas" => RiskKind::HpaReplicas,
        "rollout" => RiskKind::Rollout,
        "stale-config" => RiskKind::StaleConfig,
        other => return Err(bad(name, &format!("a risk of kind '{other}'"))),
    };
    let object = r
        .get("object")
        .ok_or_else(|| bad(name, "a risk without 'object'"))?;
    Ok(Risk {
        kind,
        object: ObjectId {
            api_version: string(object, "apiVersion")?,
            kind: string(object, "kind")?,
            namespace: string(object, "namespace")?,
            name: string(object, "name")?,
        },
        path: r.get("path").and_then(Node::as_str).map(str::to_string),
        what: string(r, "message")?,
        rule: string(r, "rule")?.into(),
    })
}

fn read_overlay(
    name: &str,
    o: &Node,
    string: &dyn Fn(&Node, &str) -> Result<String, Error>,
) -> Result<OverlayReview, Error> {
    let path = string(o, "path")?;
    let failure = || -> Result<Failure, Error> {
        let f = o
            .get("failure")
            .ok_or_else(|| bad(name, &format!("'{path}' has no failure")))?;
        Ok(Failure {
            code: string(f, "code")?,
            message: string(f, "message")?,
            file: f.get("file").and_then(Node::as_str).map(str::to_string),
            line: match f.get("line") {
                Some(Node::Int(n)) => usize::try_from(*n).ok(),
                _ => None,
            },
            text: string(o, "error")?,
        })
    };
    let status = match string(o, "status")?.as_str() {
        "compared" | "unchanged" => Status::Compared,
        "added" => Status::Added,
        "removed" => Status::Removed,
        "base-failed" => Status::BaseFailed(failure()?),
        "head-failed" => Status::HeadFailed(failure()?),
        "broken-before" => Status::BrokenBefore(failure()?),
        "not-fetched" => Status::NotFetched(failure()?),
        "not-reviewed" => Status::NotReviewed(failure()?),
        "not-rendered" => Status::NotRendered(failure()?),
        other => return Err(bad(name, &format!("'{path}' has the status '{other}'"))),
    };
    let mut objects = Vec::new();
    let mut unpaired = Vec::new();
    if let Some(Node::Seq(rows)) = o.get("objects") {
        for row in rows {
            let object = read_object(name, row, string)?;
            // A shard's created or deleted object as rendered, for the moves.
            if let Some(node) = row.get("object") {
                if !matches!(object.action, Action::Create | Action::Delete) {
                    return Err(bad(
                        name,
                        &format!(
                            "'{path}' has an 'object' on a row of action '{}'",
                            object.action.as_str()
                        ),
                    ));
                }
                let causes = row
                    .get("fieldCauses")
                    .map(super::cause::table_from_json)
                    .unwrap_or_default();
                unpaired.push((objects.len(), node.clone(), causes));
            }
            objects.push(object);
        }
    }
    // The unchanged objects, by count: no writer shows them one by one in a review.
    let unchanged = match o.get("totals").and_then(|t| t.get("unchanged")) {
        Some(Node::Int(n)) => usize::try_from(*n).unwrap_or(0),
        _ => 0,
    };
    objects
        .extend((0..unchanged).map(|_| ObjectChange::bare(Action::Unchanged, ObjectId::default())));
    let warnings = match o.get("warnings") {
        Some(Node::Seq(ws)) => ws
            .iter()
            .filter_map(|w| w.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    Ok(OverlayReview {
        name: path,
        status,
        objects,
        warnings,
        // Counted once every part is read.
        moved_out: 0,
        // Read from the report's `risks` list.
        risks: Vec::new(),
        unpaired,
        affixes: Affixes {
            prefix: o
                .get("namePrefix")
                .and_then(Node::as_str)
                .unwrap_or("")
                .into(),
            suffix: o
                .get("nameSuffix")
                .and_then(Node::as_str)
                .unwrap_or("")
                .into(),
        },
    })
}

fn read_object(
    name: &str,
    row: &Node,
    string: &dyn Fn(&Node, &str) -> Result<String, Error>,
) -> Result<ObjectChange, Error> {
    let action = string(row, "action")?;
    let action = Action::REVIEWED
        .into_iter()
        .find(|a| a.as_str() == action)
        .ok_or_else(|| bad(name, &format!("an object's action is '{action}'")))?;
    let id = ObjectId {
        api_version: string(row, "apiVersion")?,
        kind: string(row, "kind")?,
        namespace: string(row, "namespace")?,
        name: string(row, "name")?,
    };
    let renamed_from = row
        .get("renamedFrom")
        .and_then(Node::as_str)
        .map(|n| ObjectId {
            name: n.to_string(),
            ..ObjectId::default()
        });
    let value = |c: &Node, field: &str| match c.get(field) {
        None | Some(Node::Null) => None,
        Some(v) => Some(v.clone()),
    };
    let mut changes = Vec::new();
    if let Some(Node::Seq(cs)) = row.get("changes") {
        for c in cs {
            changes.push(Change {
                path: string(c, "path")?,
                before: value(c, "before"),
                after: value(c, "after"),
                cause: c.get("cause").and_then(super::cause::from_json),
            });
        }
    }
    Ok(ObjectChange {
        action,
        id,
        renamed_from,
        before: String::new(),
        after: String::new(),
        changes,
        conflicts: Vec::new(),
        predicted: None,
        stored_diff: Some(string(row, "diff")?),
        moved_from: row
            .get("movedFrom")
            .and_then(Node::as_str)
            .map(str::to_string),
    })
}
