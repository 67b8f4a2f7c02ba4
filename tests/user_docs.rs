//! The user documents (README.md and docs/*.md; the engineering record under docs/dev/ aside)
//! speak to users: they name no issue or pull-request number of this project (`#12`,
//! "issue 12", "issues 26 and 28"), and every relative link in them leads to a file that exists.
//! An upstream reference qualified by its project (`kustomize#5863`, `go-yaml/yaml#827`) is a
//! citation, not one of ours, and is allowed.

use std::path::{Path, PathBuf};

fn user_documents(root: &Path) -> Vec<PathBuf> {
    let mut docs = vec![root.join("README.md")];
    let mut entries: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ is readable")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "md"))
        .collect();
    entries.sort();
    docs.extend(entries);
    docs
}

/// Each place in `text` that names one of this project's issues, as `line: NN`.
fn issue_numbers(text: &str) -> Vec<String> {
    // `#NN` not glued to a project name or path before it (`kustomize#5863` is upstream's),
    // and "issue NN" / "issues NN" / "issue #NN" / "PR NN" in any case.
    let bare = regex::Regex::new(r"(?:^|[^\w/#&])#([0-9]+)\b").unwrap();
    let worded =
        regex::Regex::new(r"(?i)\b(?:issues?|PRs?|pull requests?)\s+#?([0-9]+)\b").unwrap();
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut numbers: Vec<&str> = bare
            .captures_iter(line)
            .chain(worded.captures_iter(line))
            .map(|c| c.get(1).unwrap().as_str())
            .collect();
        numbers.sort_unstable();
        numbers.dedup();
        found.extend(numbers.into_iter().map(|n| format!("{}: {n}", i + 1)));
    }
    found
}

/// Each relative link target in `text` (`[x](path)`, `[x](path#anchor)`), with its line.
fn relative_links(text: &str) -> Vec<(usize, String)> {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for c in link.captures_iter(line) {
            let target = c[1].split('#').next().unwrap_or("");
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            found.push((i + 1, target.to_string()));
        }
    }
    found
}

/// What `check` finds in each user document (its path, its text), each as `PATH:FINDING`.
fn failures(check: impl Fn(&Path, &str) -> Vec<String>) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut failures = Vec::new();
    for doc in user_documents(root) {
        let text = std::fs::read_to_string(&doc).expect("a user document is readable");
        let name = doc.strip_prefix(root).unwrap().display().to_string();
        failures.extend(
            check(&doc, &text)
                .into_iter()
                .map(|f| format!("{name}:{f}")),
        );
    }
    failures
}

#[test]
fn user_documents_name_no_issue_number() {
    let failures = failures(|_, text| issue_numbers(text));
    assert!(
        failures.is_empty(),
        "user documents name issue numbers (say what the behaviour is instead; the \
         engineering record goes under docs/dev/):\n{}",
        failures.join("\n")
    );
}

#[test]
fn user_documents_link_to_files_that_exist() {
    let failures = failures(|doc, text| {
        let dir = doc.parent().unwrap();
        relative_links(text)
            .into_iter()
            .filter(|(_, target)| !dir.join(target).exists())
            .map(|(line, target)| format!("{line}: {target}"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "links to missing files:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_check_finds_what_it_should() {
    assert_eq!(issue_numbers("see #29."), vec!["1: 29"]);
    assert_eq!(issue_numbers("(Issue 14, item 2)"), vec!["1: 14"]);
    assert_eq!(issue_numbers("issues 26 and 28"), vec!["1: 26"]);
    assert_eq!(
        issue_numbers("x\nPR #5967, [#12](u)"),
        vec!["2: 12", "2: 5967"]
    );
    assert!(issue_numbers("kustomize#5863, go-yaml/yaml#827").is_empty());
    assert!(issue_numbers("a # 1 comment, `&#10;`, an anchor (#flags)").is_empty());
    assert_eq!(
        relative_links("[a](docs/x.md#y) [b](https://e.org/z) [c](#here)"),
        vec![(1, "docs/x.md".to_string())]
    );
}
