//! HTTP(S) file URLs end to end, against a loopback HTTP server this test starts
//! (`testdata/remote/http/served/` at `/NAME` and `/dir/NAME`, plus a redirect, a file behind
//! basic auth, a 404, a slow answer, an endless body and a redirect loop). The kustomizations
//! of `testdata/remote/http/cases/` name it as `{SERVER}`: `ply fetch` then `ply render`
//! equals `expected.yaml` (recorded from `kubectl kustomize` against the same server, and
//! compared with it again here whenever kubectl is on PATH), and again once the server is
//! stopped, and under `unshare -rn`. Then the refusals, each located at the kustomization
//! line: an error status, a refused connection, a timeout, a body over the cap, a redirect
//! loop, a URL missing from the lock, a changed cache.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{Golden, ply, temp, text};

fn served() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/remote/http/served")
}

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/remote/http/cases")
}

/// The loopback server: one thread accepting, one per connection.
struct Server {
    addr: String,
    stop: Arc<AtomicBool>,
    /// Every request line served, for the test to see that render asked for nothing.
    requests: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves `testdata/remote/http/served/`.
    fn start() -> Server {
        Server::serving(served())
    }

    /// Serves the files of `root`.
    fn serving(root: PathBuf) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (stop2, requests2) = (Arc::clone(&stop), Arc::clone(&requests));
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let requests = Arc::clone(&requests2);
                let root = root.clone();
                std::thread::spawn(move || {
                    let _ = answer(conn, &root, &requests);
                });
            }
        });
        Server {
            addr,
            stop,
            requests,
            thread: Some(thread),
        }
    }

    /// Stops accepting and closes the port: a connection to it is refused from now on.
    fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(&self.addr);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }

    fn requests(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Answers one request (HTTP/1.1, one request per connection).
fn answer(conn: TcpStream, root: &Path, requests: &Mutex<Vec<String>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut auth = String::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("authorization: ") {
            auth = v.trim().to_string();
        }
    }
    requests.lock().unwrap().push(line.trim().to_string());
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut conn = conn;
    let reply = |conn: &mut TcpStream, status: &str, headers: &str, body: &[u8]| {
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n",
            body.len()
        );
        conn.write_all(head.as_bytes())?;
        conn.write_all(body)
    };
    let file = |name: &str| std::fs::read(root.join(name)).ok();
    let name = path.rsplit('/').next().unwrap_or("").to_string();
    match path.as_str() {
        "/slow.yaml" => {
            std::thread::sleep(Duration::from_secs(6));
            reply(&mut conn, "200 OK", "", b"{}")
        }
        "/big.yaml" => {
            let head = "HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\nConnection: close\r\n\r\n";
            conn.write_all(head.as_bytes())?;
            let chunk = vec![b'#'; 1 << 16];
            loop {
                conn.write_all(&chunk)?;
            }
        }
        "/loop.yaml" => reply(&mut conn, "302 Found", "Location: /loop.yaml\r\n", b""),
        p if p.starts_with("/redirect/") => reply(
            &mut conn,
            "302 Found",
            &format!("Location: /{name}\r\n"),
            b"",
        ),
        // Basic auth of user:s3cret.
        p if p.starts_with("/auth/") && auth != "basic dxnlcjpzm2nyzxq=" => reply(
            &mut conn,
            "401 Unauthorized",
            "WWW-Authenticate: Basic\r\n",
            b"",
        ),
        p if p.matches('/').count() <= 2 && file(&name).is_some() => {
            reply(&mut conn, "200 OK", "", &file(&name).unwrap_or_default())
        }
        _ => reply(&mut conn, "404 Not Found", "", b"not found\n"),
    }
    .map(|()| {
        // Drain what the client may still send, then close.
        let _ = conn.set_read_timeout(Some(Duration::from_millis(50)));
        let mut rest = [0u8; 256];
        let _ = conn.read(&mut rest);
    })
}

/// The cases' trees (everything but `expected.yaml`) under `<t>/work/<case>`, naming the
/// server at `addr`.
fn write_cases(t: &Path, addr: &str) -> Vec<(String, PathBuf)> {
    fn copy(from: &Path, to: &Path, addr: &str) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let (path, dest) = (entry.path(), to.join(entry.file_name()));
            if path.is_dir() {
                copy(&path, &dest, addr);
            } else if entry.file_name() != "expected.yaml" {
                let text = std::fs::read_to_string(&path).unwrap();
                std::fs::write(dest, text.replace("{SERVER}", addr)).unwrap();
            }
        }
    }
    let mut names: Vec<String> = std::fs::read_dir(cases_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 8, "{names:?}");
    names
        .into_iter()
        .map(|name| {
            let dir = t.join("work").join(&name);
            copy(&cases_dir().join(&name), &dir, addr);
            (name, dir)
        })
        .collect()
}

fn expected(case: &str) -> PathBuf {
    cases_dir().join(case).join("expected.yaml")
}

#[test]
fn fetch_then_render_equals_kubectl_and_stays_offline() {
    let t = temp("http-golden");
    let mut server = Server::start();
    let addr = server.addr.clone();
    let cases = write_cases(&t, &addr);
    let cache = t.join("cache").display().to_string();
    let golden = Golden {
        expected: &expected,
        placeholder: "{SERVER}",
        value: &addr,
    };
    let mut failures = golden.check_kubectl(&cases);
    for (name, dir) in &cases {
        let out = ply(dir, &["fetch", ".", "--write-lock", "--cache-dir", &cache]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let lock = std::fs::read_to_string(dir.join("ply.lock")).unwrap();
        assert!(
            lock.to_ascii_lowercase()
                .contains("version: 2\nremotes:\n- url: http://"),
            "{lock}"
        );
        assert!(lock.contains("  file: sha256:"), "{lock}");
        assert!(
            !lock.contains("s3cret"),
            "{name}: a credential in the lock:\n{lock}"
        );
        assert!(!text(&out.stderr).contains("s3cret"), "{name}");
    }
    let lock = std::fs::read_to_string(t.join("work/credentials/ply.lock")).unwrap();
    assert!(
        lock.contains(&format!("- url: http://***@{addr}/auth/cm.yaml\n")),
        "{lock}"
    );
    let lock = std::fs::read_to_string(t.join("work/generators/ply.lock")).unwrap();
    let urls: Vec<&str> = lock
        .lines()
        .filter_map(|l| l.strip_prefix("- url: "))
        .collect();
    assert_eq!(
        urls,
        [
            format!("http://{addr}/hello.txt"),
            format!("http://{addr}/props.env")
        ],
        "one entry per URL, sorted"
    );
    let render = |dir: &Path| ply(dir, &["render", ".", "--cache-dir", &cache]);
    let asked = server.requests();
    failures.extend(golden.check(&cases, "ply render", &render));
    assert_eq!(server.requests(), asked, "ply render asked the server");

    // The server is gone: the cache is enough, for render (as the golden tests render, three
    // ways) and for fetch.
    server.stop();
    failures.extend(golden.check(&cases, "ply render, server stopped", &render));
    for flag in ["--single-thread", "--read-ahead-first"] {
        failures.extend(golden.check(&cases, &format!("ply render {flag}"), &|dir| {
            ply(dir, &["render", ".", "--cache-dir", &cache, flag])
        }));
    }
    for (name, dir) in &cases {
        let before = std::fs::read_to_string(dir.join("ply.lock")).unwrap();
        let out = ply(dir, &["fetch", ".", "--write-lock", "--cache-dir", &cache]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("is up to date"), "{name}");
        assert_eq!(
            std::fs::read_to_string(dir.join("ply.lock")).unwrap(),
            before
        );
    }
    let names: Vec<String> = std::fs::read_dir(t.join("cache/files"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| n.len() == 64 && !n.contains("s3cret")),
        "{names:?}"
    );

    // No network at all: a namespace with no interfaces.
    failures.extend(golden.check_unshared(&cases, &cache));
    let _ = std::fs::remove_dir_all(&t);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs `ply fetch` (with `extra` arguments) on a kustomization naming `url` under `field`;
/// its stderr, which must report a failure located at that line.
fn fetch_fails(t: &Path, case: &str, k: &str, extra: &[&str]) -> String {
    let dir = t.join("bad").join(case);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("kustomization.yaml"), k).unwrap();
    let cache = t.join("cache").display().to_string();
    let mut args = vec!["fetch", ".", "--write-lock", "--cache-dir", &cache];
    args.extend_from_slice(extra);
    let out = ply(&dir, &args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{case}: {err}");
    assert!(
        !dir.join("ply.lock").exists(),
        "{case}: no lock after a failure"
    );
    err
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "a list of bad downloads, each with the error it must give"
)]
fn bad_downloads_are_clear_errors() {
    let t = temp("http-bad");
    let mut server = Server::start();
    let a = server.addr.clone();
    let at = |line: u32, col: u32| format!("[kustomization.yaml:{line}:{col}]");

    let err = fetch_fails(
        &t,
        "404",
        &format!("resources:\n- http://{a}/nothing.yaml\n"),
        &[],
    );
    assert!(
        err.contains(&format!("'http://{a}/nothing.yaml': could not download")),
        "{err}"
    );
    assert!(err.contains("the server answered 404"), "{err}");
    assert!(err.contains(&at(2, 3)), "{err}");

    let err = fetch_fails(
        &t,
        "404-generator",
        &format!("configMapGenerator:\n- name: c\n  files:\n  - http://{a}/nothing.txt\n"),
        &[],
    );
    assert!(err.contains("answered 404"), "{err}");
    assert!(err.contains(&at(4, 5)), "{err}");

    let err = fetch_fails(
        &t,
        "404-patch",
        &format!(
            "resources:\n- http://{a}/deploy.yaml\npatches:\n- path: http://{a}/nothing.yaml\n"
        ),
        &[],
    );
    assert!(err.contains("answered 404"), "{err}");
    assert!(err.contains(&at(4, 9)), "{err}");

    let err = fetch_fails(
        &t,
        "401",
        &format!("resources:\n- http://user:wrong@{a}/auth/cm.yaml\n"),
        &[],
    );
    assert!(
        !err.contains("wrong@"),
        "a credential in the message: {err}"
    );
    assert!(
        err.contains(&format!("http://***@{a}/auth/cm.yaml")),
        "{err}"
    );

    // One `resources:` URL each: what the error must say, at the URL's line.
    let started = std::time::Instant::now();
    for (case, path, extra, says) in [
        (
            "timeout",
            "slow.yaml",
            &["--http-timeout", "1"][..],
            "timed out after 1s",
        ),
        (
            "too-large",
            "big.yaml",
            &[],
            "the file is larger than 64 MiB",
        ),
        // https goes through TLS: a plain HTTP server cannot answer it.
        ("tls", "cm.yaml", &[], "could not connect"),
        ("loop", "loop.yaml", &[], "more than 10 redirects"),
        // A file that holds no resources (and whose URL is no git URL): located in the file.
        ("not-yaml", "hello.txt", &[], "a resource must be a map"),
    ] {
        let scheme = if case == "tls" { "https" } else { "http" };
        let k = format!("resources:\n- {scheme}://{a}/{path}\n");
        let err = fetch_fails(&t, case, &k, extra);
        assert!(err.contains(says), "{case}: {err}");
        let place = match case {
            "not-yaml" => format!("[http://{a}/hello.txt:1:1]"),
            _ => at(2, 3),
        };
        assert!(err.contains(&place), "{case}: {err}");
        if case == "timeout" {
            assert!(err.contains("--http-timeout"), "{err}");
            assert!(started.elapsed() < Duration::from_secs(5));
        }
    }

    // After a good fetch: a changed cache is refused by render and fetch; a file missing
    // from the cache is downloaded again and checked against the lock.
    let dir = t.join("good");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("kustomization.yaml"),
        format!("resources:\n- http://{a}/cm.yaml\n"),
    )
    .unwrap();
    let cache = t.join("cache").display().to_string();
    let out = ply(&dir, &["fetch", ".", "--write-lock", "--cache-dir", &cache]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lock = std::fs::read_to_string(dir.join("ply.lock")).unwrap();
    let hex = &lock.split("file: sha256:").nth(1).unwrap()[..64];
    let cached = t.join("cache/files").join(hex);
    std::fs::write(
        &cached,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n",
    )
    .unwrap();
    for cmd in ["render", "fetch"] {
        let out = ply(&dir, &[cmd, ".", "--cache-dir", &cache]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
        assert!(err.contains("does not match the lock"), "{cmd}: {err}");
        assert!(err.contains(&at(2, 3)), "{cmd}: {err}");
    }
    std::fs::remove_file(&cached).unwrap();
    let out = ply(&dir, &["render", ".", "--cache-dir", &cache]);
    assert!(
        text(&out.stderr).contains("is pinned but its file is not in the cache"),
        "{}",
        text(&out.stderr)
    );
    let out = ply(&dir, &["fetch", ".", "--write-lock", "--cache-dir", &cache]);
    assert!(
        text(&out.stderr).contains("downloaded again (locked)"),
        "{}",
        text(&out.stderr)
    );
    assert!(cached.is_file());

    // A URL added after the fetch is not in the lock.
    std::fs::write(
        dir.join("kustomization.yaml"),
        format!("resources:\n- http://{a}/cm.yaml\n- http://{a}/deploy.yaml\n"),
    )
    .unwrap();
    let out = ply(&dir, &["render", ".", "--cache-dir", &cache]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("'http://{a}/deploy.yaml' is not pinned in")),
        "{err}"
    );
    assert!(err.contains(&at(3, 3)), "{err}");
    assert!(err.contains("run `ply fetch .`"), "{err}");

    // The server is gone: a refused connection.
    server.stop();
    let err = fetch_fails(
        &t,
        "refused",
        &format!("resources:\n- http://{a}/cm2.yaml\n"),
        &[],
    );
    assert!(err.contains("could not connect"), "{err}");
    assert!(err.contains(&at(2, 3)), "{err}");
    let _ = std::fs::remove_dir_all(&t);
}

/// A file that changes on the server changes no render until `ply fetch --update`.
#[test]
fn changed_file_is_pinned_until_update() {
    let t = temp("http-pinned");
    let root = t.join("srv");
    std::fs::create_dir_all(&root).unwrap();
    let cm = |v: &str| {
        format!("apiVersion: v1\ndata:\n  v: {v}\nkind: ConfigMap\nmetadata:\n  name: c\n")
    };
    std::fs::write(root.join("cm.yaml"), cm("one")).unwrap();
    let mut server = Server::serving(root.clone());
    let a = server.addr.clone();
    let dir = t.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("kustomization.yaml"),
        format!("resources:\n- http://{a}/cm.yaml\n"),
    )
    .unwrap();
    let cache = t.join("cache").display().to_string();
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend([".", "--cache-dir", &cache]);
        ply(&dir, &all)
    };
    let ok = |out: Output| {
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    ok(run(&["fetch", "--write-lock"]));
    let lock = std::fs::read_to_string(dir.join("ply.lock")).unwrap();
    assert_eq!(ok(run(&["render"])), cm("one"));

    std::fs::write(root.join("cm.yaml"), cm("two")).unwrap();
    ok(run(&["fetch"]));
    assert_eq!(
        ok(run(&["render"])),
        cm("one"),
        "the lock pins the old bytes"
    );
    // With the cache gone, fetch downloads again and refuses what no longer matches.
    std::fs::remove_dir_all(t.join("cache")).unwrap();
    let out = run(&["fetch"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("now serves a file hashing to"), "{err}");
    assert!(err.contains("ply fetch --update"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("ply.lock")).unwrap(), lock);

    ok(run(&["fetch", "--update"]));
    assert_ne!(std::fs::read_to_string(dir.join("ply.lock")).unwrap(), lock);
    assert_eq!(ok(run(&["render"])), cm("two"));
    server.stop();
    let _ = std::fs::remove_dir_all(&t);
}
