//! `--format html`: the full report as one self-contained page (styles inline, one inline
//! script of a few lines, nothing fetched from elsewhere; the only links are a cause's, to
//! its line at the head commit), every overlay and object a collapsible `<details>` section,
//! with no size budget: the file a CI job uploads as an artifact and links from its comment.
//! A review has everything the Markdown has and more: a search box and "Expand all", the
//! summary of identical changes, the overlays not reviewed, the risks (grouped), each
//! changed field with its cause, identical changes marked, and the overlays broken before
//! the change; a live report lists its objects. Returns strings.

use std::fmt::Write as _;

use super::group::{self, Same};
use super::model::{Action, OFFLINE_NOTE, ObjectChange, OverlayReview, Report, Review, Status};
use super::text::{live_totals, review_totals, short_change, status_note};
use super::unified::{live_object, review_object};

/// Text escaped for HTML content and attribute values.
pub(crate) fn escape(s: &str) -> String {
    super::text::escape_html(s)
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:80em;padding:0 1em;color:#1f2328}\
code,pre{font:12px/1.4 ui-monospace,monospace}pre{background:#f6f8fa;padding:.6em;overflow:auto}\
details{border:1px solid #d0d7de;border-radius:6px;margin:.4em 0;padding:.2em .6em}\
summary{cursor:pointer;font-weight:600}table{border-collapse:collapse;margin:.5em 0}\
td,th{border:1px solid #d0d7de;padding:.25em .5em;text-align:left;vertical-align:top}\
.risk{background:#fff8c5}.same{color:#57606a;font-style:italic}.add{color:#1a7f37}.del{color:#cf222e}\
.error{border-color:#cf222e}.tools{position:sticky;top:0;background:#fff;padding:.4em 0}.hidden{display:none}";

/// Opens the section named by the address's `#fragment` (a link to one overlay or object);
/// "Expand all" opens (or closes) every section; the search box keeps the objects whose text
/// holds what is typed (case aside), opening their overlays, and hides the others. A link
/// can hold both: `?q=TEXT` fills the search box, `?expand=all` expands everything.
const SCRIPT: &str = "addEventListener('DOMContentLoaded',function(){var h=decodeURIComponent(location.hash.slice(1));\
var e=h&&document.getElementById(h);for(;e;e=e.parentElement){if(e.tagName==='DETAILS')e.open=true;}\
var all=function(){return document.querySelectorAll('details');};\
var b=document.getElementById('expand-all');if(b)b.onclick=function(){var open=b.textContent==='Expand all';\
all().forEach(function(d){d.open=open;});b.textContent=open?'Collapse all':'Expand all';};\
var s=document.getElementById('search');if(s)s.oninput=function(){var q=s.value.toLowerCase();\
document.querySelectorAll('details.object').forEach(function(d){var hit=!q||d.textContent.toLowerCase().indexOf(q)>=0;\
d.classList.toggle('hidden',!hit);if(hit&&q){for(var p=d.parentElement;p;p=p.parentElement){if(p.tagName==='DETAILS')p.open=true;}}});};\
var u=new URLSearchParams(location.search);if(s&&u.get('q')){s.value=u.get('q');s.oninput();}\
if(b&&u.get('expand')==='all')b.onclick();});";

/// The search box and the "Expand all" button.
const TOOLS: &str = "<div class=\"tools\"><input id=\"search\" type=\"search\" placeholder=\"Search objects, fields, values…\" size=\"40\"> <button id=\"expand-all\" type=\"button\">Expand all</button></div>\n";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n<script>{SCRIPT}</script>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

/// A diff as a `<pre>` with added and removed lines coloured.
fn diff(text: &str) -> String {
    let mut s = String::from("<pre>");
    for line in text.split_inclusive('\n') {
        let class = match line.as_bytes().first() {
            Some(b'+') if !line.starts_with("+++") => "add",
            Some(b'-') if !line.starts_with("---") => "del",
            _ => "",
        };
        if class.is_empty() {
            s.push_str(&escape(line));
        } else {
            let _ = write!(s, "<span class=\"{class}\">{}</span>", escape(line));
        }
    }
    s.push_str("</pre>\n");
    s
}

/// An object's section: its changes as a table, then its diff.
fn object(id: &str, o: &ObjectChange, note: &str, body: &str) -> String {
    let mut s = format!(
        "<details class=\"object\" id=\"{}\"><summary>{} <code>{}</code>{note}</summary>\n",
        escape(id),
        o.action.as_str(),
        escape(&o.title())
    );
    if !o.changes.is_empty() {
        // A cause column when the review named causes (`--why`).
        let causes = o.changes.iter().any(|c| c.cause.is_some());
        s.push_str("<table><tr><th>Field</th><th>Before</th><th>After</th>");
        if causes {
            s.push_str("<th>Cause</th>");
        }
        s.push_str("</tr>\n");
        for c in &o.changes {
            let (before, after) = short_change(c);
            let _ = write!(
                s,
                "<tr><td><code>{}</code></td><td><code>{}</code></td><td><code>{}</code></td>",
                escape(&c.path),
                escape(&before),
                escape(&after)
            );
            if causes {
                let _ = write!(s, "<td>{}</td>", super::cause::html(c.cause.as_ref()));
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</table>\n");
    }
    s.push_str(&diff(body));
    s.push_str("</details>\n");
    s
}

/// A review: title, sides and totals, risks, then one section per changed overlay holding
/// one per changed object; everything, no budget.
pub(crate) fn review(r: &Review, title: &str) -> String {
    let mut b = format!(
        "<h1>{}</h1>\n<p>Base <b>{}</b> → head <b>{}</b>. {}.</p>\n",
        escape(title),
        escape(&r.base),
        escape(&r.head),
        escape(&review_totals(r))
    );
    let changed: Vec<&OverlayReview> = r.overlays.iter().filter(|o| o.changed()).collect();
    let broken = broken_before(r);
    if changed.is_empty() {
        b.push_str("<p>No changes in the rendered output.</p>\n");
        b.push_str(&broken);
        return page(title, &b);
    }
    b.push_str(TOOLS);
    b.push_str(&summary_list(r));
    b.push_str(&not_reviewed_list(r, &changed));
    b.push_str(&risks_list(r));
    let lists: Vec<Vec<&ObjectChange>> = changed.iter().map(|o| o.changed_objects()).collect();
    let same = group::objects(&group::with_affixes(&changed, &lists));
    b.push_str("<h2>Overlays</h2>\n");
    for (i, o) in changed.iter().enumerate() {
        b.push_str(&overlay_details(i, o, &changed, &lists, &same));
    }
    b.push_str(&broken);
    page(title, &b)
}

/// The summary's lines (empty when there are none).
fn summary_list(r: &Review) -> String {
    let mut b = String::new();
    let summary = group::summary(r, group::SUMMARY_SHOWN);
    if !summary.is_empty() {
        b.push_str("<h2>Summary</h2>\n<ul>\n");
        for l in &summary {
            let _ = writeln!(b, "<li>{}</li>", escape(l));
        }
        b.push_str("</ul>\n");
    }
    b
}

/// The overlays not reviewed, each linked to its section (empty when there are none).
fn not_reviewed_list(r: &Review, changed: &[&OverlayReview]) -> String {
    let mut b = String::new();
    let unreviewed = r.not_reviewed();
    if !unreviewed.is_empty() {
        let _ = writeln!(
            b,
            "<h2>Not reviewed</h2>\n<p>{}:</p>\n<ul>",
            escape(&super::text::not_reviewed_line(unreviewed.len()))
        );
        for (name, f) in &unreviewed {
            let at = changed
                .iter()
                .position(|o| o.name == *name)
                .map_or(0, |i| i + 1);
            let _ = writeln!(
                b,
                "<li><a href=\"#overlay-{at}\"><code>{}</code></a>: {}</li>",
                escape(name),
                escape(&super::text::failure_line(f))
            );
        }
        b.push_str("</ul>\n");
    }
    b
}

/// The risks, grouped across overlays (empty when there are none).
fn risks_list(r: &Review) -> String {
    let mut b = String::new();
    let all = r.risks();
    if !all.is_empty() {
        b.push_str("<h2>Risks</h2>\n<ul>\n");
        for g in group::risks(&all) {
            let risk = g.risk;
            let names: Vec<String> = g
                .overlays()
                .iter()
                .map(|o| format!("<code>{}</code>", escape(o)))
                .collect();
            let _ = writeln!(
                b,
                "<li class=\"risk\"><b>{}</b> <code>{}</code> in {}{}: {}. <small>Rule: {}.</small></li>",
                risk.kind.as_str(),
                escape(&g.subject()),
                names.join(", "),
                risk.path
                    .as_deref()
                    .map(|p| format!(" <code>{}</code>", escape(p)))
                    .unwrap_or_default(),
                escape(&group::risk_what(&g)),
                escape(&risk.rule)
            );
        }
        b.push_str("</ul>\n");
    }
    b
}

/// A changed overlay's section (the `i`th): counts, note, error, then each changed object
/// with what it shares with other overlays.
fn overlay_details(
    i: usize,
    o: &OverlayReview,
    changed: &[&OverlayReview],
    lists: &[Vec<&ObjectChange>],
    same: &[Vec<Same>],
) -> String {
    let mut b = String::new();
    let counts: Vec<String> = Action::REVIEWED
        .iter()
        .map(|a| format!("{} {}", o.count(*a), a.as_str()))
        .collect();
    let _ = writeln!(
        b,
        "<details id=\"overlay-{}\"><summary><code>{}</code> — {}</summary>",
        i + 1,
        escape(&o.name),
        counts.join(", ")
    );
    if let Some(note) = status_note(o) {
        let _ = writeln!(b, "<p><i>{}.</i></p>", escape(&note));
    }
    if let Status::HeadFailed(e)
    | Status::BaseFailed(e)
    | Status::BrokenBefore(e)
    | Status::NotFetched(e)
    | Status::NotReviewed(e)
    | Status::NotRendered(e) = &o.status
    {
        let _ = writeln!(b, "<pre class=\"error\">{}</pre>", escape(&e.text));
    }
    for (j, x) in lists.get(i).into_iter().flatten().enumerate() {
        let id = format!("overlay-{}-object-{}", i + 1, j + 1);
        let name = |k: usize| changed.get(k).map_or("", |o| o.name.as_str());
        let note = match same.get(i).and_then(|l| l.get(j)) {
            Some(Same::First(all)) => {
                let names: Vec<String> = all.iter().map(|k| escape(name(*k))).collect();
                format!(
                    " <span class=\"same\">same change in {}</span>",
                    names.join(", ")
                )
            }
            Some(Same::As(k)) => format!(
                " <span class=\"same\">same change as in {}</span>",
                escape(name(*k))
            ),
            _ => String::new(),
        };
        b.push_str(&object(&id, x, &note, &review_object(&o.name, x)));
    }
    b.push_str("</details>\n");
    b
}

/// The overlays broken before the change: a section listing each with its diagnostic's
/// line (empty when there are none).
fn broken_before(r: &Review) -> String {
    let broken = r.broken_before();
    if broken.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "<h2>Broken before this change</h2>\n<details id=\"broken-before\"><summary>{}</summary>\n<ul>\n",
        escape(&super::text::broken_before_heading(r))
    );
    for (name, f) in broken {
        let _ = writeln!(
            s,
            "<li><code>{}</code>: {}</li>",
            escape(name),
            escape(&super::text::failure_line(f))
        );
    }
    s.push_str("</ul>\n</details>\n");
    s
}

/// A live report: totals, then one section per changed object.
pub(crate) fn live(report: &Report) -> String {
    let mut b = format!(
        "<h1>ply diff</h1>\n<p>{}</p>\n",
        escape(&live_totals(report))
    );
    for (j, o) in report
        .objects
        .iter()
        .filter(|o| o.action != Action::Unchanged)
        .enumerate()
    {
        b.push_str(&object(
            &format!("object-{}", j + 1),
            o,
            "",
            &live_object(o),
        ));
    }
    let _ = writeln!(b, "<p><small>{}</small></p>", escape(OFFLINE_NOTE));
    page("ply diff", &b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{Change, ObjectId};
    use crate::yaml::Node;

    #[test]
    fn self_contained_escaped_and_collapsible() {
        let o = ObjectChange {
            action: Action::Update,
            id: ObjectId {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: "ns".into(),
                name: "<c>".into(),
            },
            renamed_from: None,
            moved_from: None,
            before: "a: 1\n".into(),
            after: "a: 2\n".into(),
            changes: vec![Change {
                path: ".data.a".into(),
                before: Some(Node::Int(1)),
                after: Some(Node::Int(2)),
                cause: None,
            }],
            conflicts: Vec::new(),
            predicted: None,
            stored_diff: None,
        };
        let r = Review {
            base: "main".into(),
            head: "working tree".into(),
            overlays: vec![OverlayReview {
                name: "apps/<x>".into(),
                status: Status::Compared,
                objects: vec![o],
                warnings: Vec::new(),
                moved_out: 0,
                risks: Vec::new(),
                unpaired: Vec::new(),
                affixes: Default::default(),
            }],
            fail_on: Default::default(),
            shard: None,
        };
        let html = review(&r, "T & U");
        assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
        assert!(html.contains("<title>T &amp; U</title>"));
        assert!(
            !html.contains("<c>") && html.contains("&lt;c&gt;"),
            "{html}"
        );
        assert!(html.contains("<details id=\"overlay-1\">"));
        assert!(
            html.contains("<span class=\"add\">+  a: 2\n</span>") || html.contains("class=\"add\"")
        );
        // Nothing from elsewhere.
        for outside in ["src=", "http://", "https://", "@import", "<link"] {
            assert!(!html.contains(outside), "{outside} in {html}");
        }
    }
}
