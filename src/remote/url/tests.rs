//! ply's own table of the URL forms kustomize v5.5 accepts and refuses, after the cases of
//! `api/internal/git/repospec_test.go` (rewritten, not copied).

use super::*;

/// host, repository path, kustomization root, ref.
fn parts(url: &str) -> (String, String, String, String) {
    let s = parse_repo_spec(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    (s.host, s.repo_path, s.root_path, s.git_ref)
}

/// Every host form kustomize accepts, crossed with repository paths, roots and refs.
#[test]
fn host_forms_crossed_with_paths_and_refs() {
    let hosts = [
        ("gitHub.com/", "https://github.com/"),
        ("github.com:", "https://github.com/"),
        ("http://github.com/", "https://github.com/"),
        ("https://github.com/", "https://github.com/"),
        ("hTTps://github.com/", "https://github.com/"),
        (
            "https://git-codecommit.us-east-2.amazonaws.com/",
            "https://git-codecommit.us-east-2.amazonaws.com/",
        ),
        (
            "https://fabrikops2.visualstudio.com/",
            "https://fabrikops2.visualstudio.com/",
        ),
        ("ssh://git.example.com:7999/", "ssh://git.example.com:7999/"),
        ("git::https://gitlab.com/", "https://gitlab.com/"),
        ("git::http://git.example.com/", "http://git.example.com/"),
        ("git::https://git.example.com/", "https://git.example.com/"),
        ("git@github.com:", "git@github.com:"),
        ("git@github.com/", "git@github.com:"),
        ("git::git@github.com:", "git@github.com:"),
        ("org-12345@github.com:", "org-12345@github.com:"),
        ("org-12345@github.com/", "org-12345@github.com:"),
    ];
    let repos = ["someOrg/someRepo", "kubernetes/website"];
    let roots = ["README.md", "foo/krusty.txt", ""];
    let refs = ["group/version", "someBranch", "master", "v0.1.0", ""];
    let mut n = 0;
    for (raw, host) in hosts {
        for repo in repos {
            for root in roots {
                for r in refs {
                    let mut url = format!("{raw}{repo}");
                    if !root.is_empty() {
                        url = format!("{url}/{root}");
                    }
                    if !r.is_empty() {
                        url = format!("{url}?ref={r}");
                    }
                    let want = (host.into(), repo.into(), root.into(), r.into());
                    assert_eq!(parts(&url), want, "{url}");
                    assert!(is_remote(&url));
                    n += 1;
                }
            }
        }
    }
    assert_eq!(n, 16 * 2 * 3 * 5);
}

#[test]
fn refused_forms() {
    for (url, message) in [
        ("/tmp", "uri looks like abs path"),
        ("../../tmp", "failed to parse scheme"),
        ("src/github.com/org/repo/path", "failed to parse scheme"),
        ("iauhsdiuashduas", "failed to parse scheme"),
        ("htxxxtp://github.com/", "failed to parse scheme"),
        ("ssh://git.example.com", "failed to parse repo path segment"),
        ("git::___", "failed to parse scheme"),
        (
            "https://host?ref=group/version/minor_version",
            "failed to parse repo path segment",
        ),
        (
            "https://github.com/org/repo.git//path/../../exits/repo",
            "url path exits repo",
        ),
        ("github.com!org/repo.git//path", "failed to parse scheme"),
        ("gh:org/repo", "failed to parse scheme"),
        (
            "https://github.com/thisisa404.yaml",
            "failed to parse repo path segment",
        ),
        (
            "file:////tmp//path/to/whatever",
            "failed to parse repo path segment",
        ),
        (
            "git@scp://github.com/org/repo.git//path",
            "failed to parse repo path segment",
        ),
        (
            "git@ssh://github.com/org/repo.git//path",
            "failed to parse repo path segment",
        ),
        // Not kustomize's table: local paths stay local.
        ("base", "failed to parse scheme"),
        ("gitlab.com/org/repo", "failed to parse scheme"),
    ] {
        let e = parse_repo_spec(url).expect_err(url);
        assert!(e.0.contains(message), "{url}: {e}");
    }
}

/// input, clone spec, host, repository path, kustomization root, ref.
#[test]
#[allow(
    clippy::too_many_lines,
    reason = "a table of cases, one URL form a row"
)]
fn whole_urls() {
    let cases: &[(&str, &str, &str, &str, &str, &str)] = &[
        (
            "https://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo/somedir",
            "https://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo",
            "https://git-codecommit.us-east-2.amazonaws.com/",
            "someorg/somerepo",
            "somedir",
            "",
        ),
        (
            "https://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo/somedir?ref=testbranch",
            "https://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo",
            "https://git-codecommit.us-east-2.amazonaws.com/",
            "someorg/somerepo",
            "somedir",
            "testbranch",
        ),
        (
            "https://fabrikops2.visualstudio.com/someorg/somerepo?ref=master",
            "https://fabrikops2.visualstudio.com/someorg/somerepo",
            "https://fabrikops2.visualstudio.com/",
            "someorg/somerepo",
            "",
            "master",
        ),
        (
            "http://github.com/someorg/somerepo/somedir",
            "https://github.com/someorg/somerepo",
            "https://github.com/",
            "someorg/somerepo",
            "somedir",
            "",
        ),
        (
            "git@github.com:someorg/somerepo/somedir",
            "git@github.com:someorg/somerepo",
            "git@github.com:",
            "someorg/somerepo",
            "somedir",
            "",
        ),
        (
            "http://github.com/someorg/somerepo.git/somedir",
            "https://github.com/someorg/somerepo.git",
            "https://github.com/",
            "someorg/somerepo.git",
            "somedir",
            "",
        ),
        (
            "git@github.com:someorg/somerepo.git/somedir",
            "git@github.com:someorg/somerepo.git",
            "git@github.com:",
            "someorg/somerepo.git",
            "somedir",
            "",
        ),
        (
            "git@gitlab2.sqtools.ru:infra/kubernetes/thanos-base.git?ref=v0.1.0",
            "git@gitlab2.sqtools.ru:infra/kubernetes/thanos-base.git",
            "git@gitlab2.sqtools.ru:",
            "infra/kubernetes/thanos-base.git",
            "",
            "v0.1.0",
        ),
        (
            "git@bitbucket.org:company/project.git//path?ref=branch",
            "git@bitbucket.org:company/project.git",
            "git@bitbucket.org:",
            "company/project.git",
            "path",
            "branch",
        ),
        (
            "git@bitbucket.org/company/project.git//path?ref=branch",
            "git@bitbucket.org/company/project.git",
            "git@bitbucket.org/",
            "company/project.git",
            "path",
            "branch",
        ),
        (
            "ssh://git@bitbucket.org/company/project.git//path?ref=branch",
            "ssh://git@bitbucket.org/company/project.git",
            "ssh://git@bitbucket.org/",
            "company/project.git",
            "path",
            "branch",
        ),
        (
            "https://itfs.mycompany.com/collection/project/_git/somerepos",
            "https://itfs.mycompany.com/collection/project/_git/somerepos",
            "https://itfs.mycompany.com/",
            "collection/project/_git/somerepos",
            "",
            "",
        ),
        (
            "https://itfs.mycompany.com/collection/project/_git/somerepos?version=v1.0.0",
            "https://itfs.mycompany.com/collection/project/_git/somerepos",
            "https://itfs.mycompany.com/",
            "collection/project/_git/somerepos",
            "",
            "v1.0.0",
        ),
        (
            "https://itfs.mycompany.com/collection/project/_git/somerepos/somedir?version=v1.0.0",
            "https://itfs.mycompany.com/collection/project/_git/somerepos",
            "https://itfs.mycompany.com/",
            "collection/project/_git/somerepos",
            "somedir",
            "v1.0.0",
        ),
        (
            "git::https://itfs.mycompany.com/collection/project/_git/somerepos",
            "https://itfs.mycompany.com/collection/project/_git/somerepos",
            "https://itfs.mycompany.com/",
            "collection/project/_git/somerepos",
            "",
            "",
        ),
        (
            "https://bitbucket.example.com/scm/project/repository.git",
            "https://bitbucket.example.com/scm/project/repository.git",
            "https://bitbucket.example.com/",
            "scm/project/repository.git",
            "",
            "",
        ),
        (
            "ssh://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo/somepath",
            "ssh://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo",
            "ssh://git-codecommit.us-east-2.amazonaws.com/",
            "someorg/somerepo",
            "somepath",
            "",
        ),
        (
            "git@github.com/someorg/somerepo/somepath",
            "git@github.com:someorg/somerepo",
            "git@github.com:",
            "someorg/somerepo",
            "somepath",
            "",
        ),
        (
            "https://github.com/kubernetes-sigs/kustomize//examples/multibases/dev/?ref=v1.0.6",
            "https://github.com/kubernetes-sigs/kustomize",
            "https://github.com/",
            "kubernetes-sigs/kustomize",
            "examples/multibases/dev/",
            "v1.0.6",
        ),
        (
            "file://a/b/c/someRepo.git/somepath?ref=someBranch",
            "file://a/b/c/someRepo.git",
            "file://",
            "a/b/c/someRepo.git",
            "somepath",
            "someBranch",
        ),
        (
            "file://a/b/c/someRepo//somepath?ref=someBranch",
            "file://a/b/c/someRepo",
            "file://",
            "a/b/c/someRepo",
            "somepath",
            "someBranch",
        ),
        (
            "file://a/b/c/someRepo?ref=someBranch",
            "file://a/b/c/someRepo",
            "file://",
            "a/b/c/someRepo",
            "",
            "someBranch",
        ),
        (
            "file:///a/b/c/someRepo?ref=someBranch",
            "file:///a/b/c/someRepo",
            "file://",
            "/a/b/c/someRepo",
            "",
            "someBranch",
        ),
        (
            "ssh://git@github.com/kubernetes-sigs/kustomize//examples/multibases/dev?ref=v1.0.6",
            "git@github.com:kubernetes-sigs/kustomize",
            "git@github.com:",
            "kubernetes-sigs/kustomize",
            "examples/multibases/dev",
            "v1.0.6",
        ),
        (
            "file:///a/b/c/someRepo",
            "file:///a/b/c/someRepo",
            "file://",
            "/a/b/c/someRepo",
            "",
            "",
        ),
        ("file:///", "file:///", "file://", "/", "", ""),
        (
            "https://example.org/path/to/repo//examples/multibases/dev",
            "https://example.org/path/to/repo",
            "https://example.org/",
            "path/to/repo",
            "examples/multibases/dev",
            "",
        ),
        (
            "https://example.org/path/to/repo.git/examples/multibases/dev",
            "https://example.org/path/to/repo.git",
            "https://example.org/",
            "path/to/repo.git",
            "examples/multibases/dev",
            "",
        ),
        (
            "ssh://alice@example.com/path/to/repo//examples/multibases/dev",
            "ssh://alice@example.com/path/to/repo",
            "ssh://alice@example.com/",
            "path/to/repo",
            "examples/multibases/dev",
            "",
        ),
        (
            "https://authority/org/repo?ref=group/version",
            "https://authority/org/repo",
            "https://authority/",
            "org/repo",
            "",
            "group/version",
        ),
        (
            "https://authority/org/repo/?ref=includes_git/for_some_reason",
            "https://authority/org/repo",
            "https://authority/",
            "org/repo",
            "",
            "includes_git/for_some_reason",
        ),
        (
            "https://authority/org/repo/?ref=includes.git/for_some_reason",
            "https://authority/org/repo",
            "https://authority/",
            "org/repo",
            "",
            "includes.git/for_some_reason",
        ),
        (
            "https://authority/org/repo/%-invalid-uri-so-not-parsable-by-net/url.Parse",
            "https://authority/org/repo",
            "https://authority/",
            "org/repo",
            "%-invalid-uri-so-not-parsable-by-net/url.Parse",
            "",
        ),
        (
            "ssh://myusername@bitbucket.org/ourteamname/ourrepositoryname.git//path?ref=branch",
            "ssh://myusername@bitbucket.org/ourteamname/ourrepositoryname.git",
            "ssh://myusername@bitbucket.org/",
            "ourteamname/ourrepositoryname.git",
            "path",
            "branch",
        ),
        (
            "file://git@home/path/to/repository.git//path?ref=branch",
            "file://git@home/path/to/repository.git",
            "file://",
            "git@home/path/to/repository.git",
            "path",
            "branch",
        ),
        (
            "http://git@home.com/path/to/repository.git//path?ref=branch",
            "http://git@home.com/path/to/repository.git",
            "http://git@home.com/",
            "path/to/repository.git",
            "path",
            "branch",
        ),
        (
            "https://git@home.com/path/to/repository.git//path?ref=branch",
            "https://git@home.com/path/to/repository.git",
            "https://git@home.com/",
            "path/to/repository.git",
            "path",
            "branch",
        ),
        (
            "ssh://git@ssh.github.com:443/YOUR-USERNAME/YOUR-REPOSITORY.git",
            "ssh://git@ssh.github.com:443/YOUR-USERNAME/YOUR-REPOSITORY.git",
            "ssh://git@ssh.github.com:443/",
            "YOUR-USERNAME/YOUR-REPOSITORY.git",
            "",
            "",
        ),
        (
            "git@gitlab.com/user:name/YOUR-REPOSITORY.git/path",
            "git@gitlab.com/user:name/YOUR-REPOSITORY.git",
            "git@gitlab.com/",
            "user:name/YOUR-REPOSITORY.git",
            "path",
            "",
        ),
        (
            "git@gitlab.com:gitlab-tests/sample-project.git",
            "git@gitlab.com:gitlab-tests/sample-project.git",
            "git@gitlab.com:",
            "gitlab-tests/sample-project.git",
            "",
            "",
        ),
        (
            "git@gitlab.com:gitlab-tests/sample-project",
            "git@gitlab.com:gitlab-tests/sample-project",
            "git@gitlab.com:",
            "gitlab-tests/sample-project",
            "",
            "",
        ),
        (
            "https://username@dev.azure.com/org/project/_git/repo//path/to/kustomization/root",
            "https://username@dev.azure.com/org/project/_git/repo",
            "https://username@dev.azure.com/",
            "org/project/_git/repo",
            "path/to/kustomization/root",
            "",
        ),
        (
            "https://org.visualstudio.com/project/_git/repo/path/to/kustomization/root",
            "https://org.visualstudio.com/project/_git/repo",
            "https://org.visualstudio.com/",
            "project/_git/repo",
            "path/to/kustomization/root",
            "",
        ),
        (
            "ssh://org-12345@github.com/kubernetes-sigs/kustomize",
            "org-12345@github.com:kubernetes-sigs/kustomize",
            "org-12345@github.com:",
            "kubernetes-sigs/kustomize",
            "",
            "",
        ),
        (
            "org-12345@github.com/kubernetes-sigs/kustomize",
            "org-12345@github.com:kubernetes-sigs/kustomize",
            "org-12345@github.com:",
            "kubernetes-sigs/kustomize",
            "",
            "",
        ),
        (
            "git@gist.github.com:bc7947cb727d7f9217e7862d961a1ffd.git",
            "git@gist.github.com:bc7947cb727d7f9217e7862d961a1ffd.git",
            "git@gist.github.com:",
            "bc7947cb727d7f9217e7862d961a1ffd.git",
            "",
            "",
        ),
        (
            "https://gist.github.com/bc7947cb727d7f9217e7862d961a1ffd.git",
            "https://gist.github.com/bc7947cb727d7f9217e7862d961a1ffd.git",
            "https://gist.github.com/",
            "bc7947cb727d7f9217e7862d961a1ffd.git",
            "",
            "",
        ),
    ];
    for &(url, clone, host, repo, root, r) in cases {
        let spec = parse_repo_spec(url).unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(spec.clone_spec(), clone, "{url}");
        assert_eq!(
            parts(url),
            (host.into(), repo.into(), root.into(), r.into()),
            "{url}"
        );
        assert_eq!(spec.timeout, DEFAULT_TIMEOUT, "{url}");
        assert!(spec.kustomize_submodules(), "{url}");
    }
}

/// query, ref, timeout in seconds, kustomize's submodules.
#[test]
fn queries() {
    for (query, r, secs, submodules) in [
        ("", "", 27.0, true),
        ("ref=v1.0.0", "v1.0.0", 27.0, true),
        ("ref=kustomize/v4.5.7", "kustomize/v4.5.7", 27.0, true),
        ("version=master", "master", 27.0, true),
        ("version=master&ref=v1.0.0", "v1.0.0", 27.0, true),
        ("version=master&submodules=", "master", 27.0, true),
        ("version=master&submodules=maybe", "master", 27.0, true),
        ("version=master&submodules=true", "master", 27.0, true),
        ("version=master&submodules=false", "master", 27.0, false),
        ("version=master&timeout=", "master", 27.0, true),
        ("version=master&timeout=jiffy", "master", 27.0, true),
        ("version=master&timeout=0", "master", 27.0, true),
        ("version=master&timeout=0s", "master", 27.0, true),
        ("version=master&timeout=61", "master", 61.0, true),
        ("version=master&timeout=1m1s", "master", 61.0, true),
        (
            "version=master&submodules=false&timeout=1m1s",
            "master",
            61.0,
            false,
        ),
        // Go's readings of values.
        ("ref=a%2Fb+c", "a/b c", 27.0, true),
        ("timeout=1.5s&submodules=F", "", 1.5, false),
        ("timeout=-3", "", 27.0, true),
        ("timeout=250ms", "", 0.25, true),
        // Go refuses a query with `;` or a bad escape: every value takes its default.
        ("ref=v1;x=1", "", 27.0, true),
        ("ref=v1&submodules=false&x=%zz", "", 27.0, true),
    ] {
        let (got_ref, timeout, sub) = parse_query(query);
        assert_eq!(got_ref, r, "{query}");
        assert_eq!(timeout, Duration::from_secs_f64(secs), "{query}");
        assert_eq!(sub.unwrap_or(true), submodules, "{query}");
    }
    let spec = parse_repo_spec("https://github.com/org/repo").unwrap();
    assert_eq!((spec.submodules, spec.timeout), (None, DEFAULT_TIMEOUT));
    let spec = parse_repo_spec("file:///r//d?submodules=true&timeout=2").unwrap();
    assert_eq!(
        (spec.submodules, spec.timeout),
        (Some(true), Duration::from_secs(2))
    );
}

#[test]
fn classification() {
    assert!(matches!(
        classify("https://github.com/org/repo//dir?ref=v1"),
        Some(Remote::Git(_))
    ));
    assert!(matches!(
        classify("file:///srv/git/repo.git//base"),
        Some(Remote::Git(_))
    ));
    assert_eq!(
        classify("https://example.com/x.yaml"),
        Some(Remote::Http("https://example.com/x.yaml".into()))
    );
    for local in [
        "base",
        "../base",
        "a.yaml",
        "github/x",
        "/abs/dir",
        "gitlab.com/a/b",
    ] {
        assert_eq!(classify(local), None, "{local}");
    }
}

#[test]
fn redaction_hides_only_the_user_part() {
    for (url, want) in [
        (
            "https://user:s3cret@example.com/x.yaml",
            "https://***@example.com/x.yaml",
        ),
        (
            "https://ghp_token@raw.example.com/o/r/main/x.yaml?a=b@c",
            "https://***@raw.example.com/o/r/main/x.yaml?a=b@c",
        ),
        (
            "http://127.0.0.1:8080/a@b.yaml",
            "http://127.0.0.1:8080/a@b.yaml",
        ),
        ("https://example.com/x.yaml", "https://example.com/x.yaml"),
        ("a@b:c", "a@b:c"),
    ] {
        assert_eq!(redact(url), want, "{url}");
        assert_eq!(
            scrub(&format!("git said: {url} not found"), url),
            format!("git said: {want} not found")
        );
    }
}

/// kustomize's `IsRemoteFile`: Go's URL parser, which lowercases the scheme.
#[test]
fn http_file_urls_in_any_case() {
    for url in ["http://h/x.yaml", "HTTPS://h/x.yaml", "Http://h/a/b/c.yaml"] {
        assert!(is_http_url(url), "{url}");
    }
    for path in [
        "x.yaml",
        "file:///x",
        "ssh://h/o/r",
        "httpx://h/x",
        "./http://x",
    ] {
        assert!(!is_http_url(path), "{path}");
    }
}
