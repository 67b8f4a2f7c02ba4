#!/usr/bin/env python3
"""Tests tools/ci/install-ply.sh (the Action's install steps) against a local file server on
127.0.0.1 standing in for GitHub's release downloads, with no `ply` on PATH:
- a version tag: the tag's release archive is downloaded, its SHA-256 checked and the binary
  installed (and put on $GITHUB_PATH); an archive whose .sha256 does not match is refused
  and nothing is installed; an archive whose binary names another version is not used;
- a commit (an Action pinned by its 40-digit commit): the release of the checkout's
  Cargo.toml version is used only when its binary names that very commit;
- no matching release (`release` mode): `installed=false`, and `build` mode then serves the
  cached build of the Action's checkout when its stamp matches the sources, for a tag, a
  commit and a branch alike;
- a `ply` on PATH (handed over by an earlier job) is used as it is, with no download;
- action.yml runs these steps for every ref (no step of it is conditioned on the ref) and
  saves a build to the cache at once under the key it restores.
Run by `cargo test` (tests/golden/review.rs), or by hand:
`python3 tools/ci/test_install_ply.py target/debug/ply`.
"""

import http.server
import os
import shutil
import subprocess
import sys

from stand_in import Quiet, release_archive, scratch, serving

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(HERE, "install-ply.sh")


def main():
    ply = os.path.abspath(sys.argv[1])
    with scratch("ply-install-") as tmp:
        test(ply, tmp)


def test(ply, tmp):
    served = os.path.join(tmp, "releases")
    log = []

    class Files(Quiet, http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=served, **k)

        def do_GET(self):
            log.append(self.path)
            super().do_GET()

    def release(tag, good=True):
        release_archive(served, ply, tag, good=good)

    # The binary's own version and commit: `ply 0.1.0 (commit 0123456789ab)`.
    first = subprocess.run([ply, "version"], capture_output=True, text=True,
                           check=True).stdout.split("\n", 1)[0]
    version, commit = first.split(" ")[1], first.split("(commit ")[1].rstrip(")")
    tag = f"v{version}"
    os.makedirs(served)
    release(tag)
    release("v9.9.8", good=False)
    release("v9.9.6")  # holds a binary that says it is `version`, not 9.9.6
    with serving(Files) as url:
        home = os.path.join(tmp, "home")
        gh_path = os.path.join(tmp, "github_path")
        gh_output = os.path.join(tmp, "github_output")
        env = {
            "PATH": "/usr/bin:/bin",  # no ply
            "HOME": tmp,
            "PLY_HOME": home,
            "PLY_OS": "linux",
            "PLY_ARCH": "x86_64",
            "PLY_SOURCE": REPO_ROOT,
            "PLY_RELEASE_URL": url,
            "GITHUB_PATH": gh_path,
            "GITHUB_OUTPUT": gh_output,
        }
        assert subprocess.run(["sh", "-c", "command -v ply"], env=env).returncode != 0

        def run(ref, *mode, path=None):
            open(gh_path, "w").close()
            open(gh_output, "w").close()
            e = dict(env, PLY_REF=ref)
            if path:
                e["PATH"] = path + ":" + e["PATH"]
            return subprocess.run([SCRIPT, *mode], env=e, capture_output=True, text=True)

        def outputs():
            return dict(line.split("=", 1) for line in open(gh_output).read().split("\n") if line)

        # The release archive of the tag: checked, installed, on PATH.
        r = run(tag, "release")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "SHA-256" in r.stdout and "checked" in r.stdout, r.stdout
        installed = os.path.join(home, "release", tag)
        assert open(gh_path).read() == installed + "\n", open(gh_path).read()
        assert outputs() == {"ply": installed + "/ply", "installed": "true", "built": "false"}
        v = subprocess.run([os.path.join(installed, "ply"), "version"], capture_output=True, text=True)
        assert v.returncode == 0 and v.stdout.startswith(first), v.stdout + v.stderr
        assert f"/{tag}/ply-{tag}-linux-amd64.tar.gz" in log, log
        assert f"/{tag}/ply-{tag}-linux-amd64.tar.gz.sha256" in log, log

        # A checksum that does not match: refused, nothing installed, nothing on PATH.
        r = run("v9.9.8", "release")
        assert r.returncode == 1, r.stdout + r.stderr
        assert "::error::" in r.stderr and "not installed" in r.stderr, r.stderr
        assert not os.path.exists(os.path.join(home, "release", "v9.9.8")), "installed anyway"
        assert open(gh_path).read() == "", open(gh_path).read()

        # A release whose binary names another version than the tag: not used.
        r = run("v9.9.6", "release")
        assert r.returncode == 0 and "not this ref's build" in r.stdout, r.stdout + r.stderr
        assert outputs() == {"installed": "false"}, outputs()
        assert open(gh_path).read() == "", open(gh_path).read()

        # An Action pinned by commit: the release of Cargo.toml's version, used only when its
        # binary was built from that commit.
        shutil.rmtree(os.path.join(home, "release"))
        r = run(commit + "0" * 28, "release")
        assert r.returncode == 0, r.stdout + r.stderr
        assert outputs().get("installed") == "true" and "checked" in r.stdout, r.stdout
        other = ("f" if commit[0] != "f" else "e") + commit[1:] + "0" * 28
        r = run(other, "release")
        assert r.returncode == 0 and "not this ref's build" in r.stdout, r.stdout + r.stderr
        assert outputs() == {"installed": "false"}, outputs()

        # No release for a tag: `release` says so, `build` serves the cached build of the
        # checkout when its stamp matches the sources (a tag, a commit, a branch alike).
        r = run("v9.9.7", "release")
        assert r.returncode == 0 and "no release archive for v9.9.7" in r.stdout, r.stdout
        assert outputs() == {"installed": "false"}, outputs()
        stamp = subprocess.run([SCRIPT, "--stamp"], env=env, capture_output=True,
                               text=True, check=True).stdout.strip()
        assert len(stamp) == 16, stamp
        build = os.path.join(home, "build")
        os.makedirs(os.path.join(build, "bin"))
        shutil.copy(ply, os.path.join(build, "bin", "ply"))
        with open(os.path.join(build, "commit"), "w") as f:
            f.write(stamp + "\n")
        for ref in ("v9.9.7", other, "main"):
            before = len(log)
            r = run(ref, "build")
            assert r.returncode == 0, r.stdout + r.stderr
            assert f"using the cached build of {stamp}" in r.stdout, r.stdout
            assert open(gh_path).read() == os.path.join(build, "bin") + "\n"
            assert outputs() == {"ply": os.path.join(build, "bin", "ply"), "installed": "true",
                                 "built": "false"}, outputs()
            assert len(log) == before, log[before:]  # `build` downloads nothing
        # Both steps in one run (no mode): no release for v9.9.7, then the cached build.
        r = run("v9.9.7")
        assert r.returncode == 0 and "using the cached build" in r.stdout, r.stdout + r.stderr

        # A ply on PATH (an earlier job handed it over): used, nothing downloaded.
        before = len(log)
        r = run(tag, "release", path=os.path.dirname(ply))
        assert r.returncode == 0 and r.stdout.startswith("using "), r.stdout + r.stderr
        assert outputs() == {"installed": "true", "built": "false", "ply": ply}, outputs()
        assert len(log) == before, log[before:]
    check_action()
    print("install-ply.sh: ok")


def check_action():
    """action.yml's install steps: none is conditioned on the Action's ref (a tag's build is
    cached as a branch's is), and a build is saved under the key the restore step reads."""
    text = open(os.path.join(REPO_ROOT, "action.yml"), encoding="utf-8").read()
    assert "action_ref, 'v')" not in text, "a step still depends on the ref being a tag"
    steps = text.split("\n    - name: ")[1:]
    named = {s.split("\n", 1)[0]: s for s in steps}
    restore, save = named["Cached ply build"], named["Save the ply build"]
    assert "actions/cache/restore@" in restore and "actions/cache/save@" in save
    key = "key: ${{ steps.build-key.outputs.key }}"
    assert key in restore and key in save, (restore, save)
    assert "if: ${{ steps.build.outputs.built == 'true' }}" in save, save
    assert "install-ply.sh\" release" in named["Install ply (release binary)"]
    assert "install-ply.sh\" build" in named["Install ply (cached build, or a build)"]
    for name in ("Key of a ply build", "Cached ply build", "Install ply (cached build, or a build)"):
        assert "if: ${{ steps.release.outputs.installed != 'true' }}" in named[name], name


if __name__ == "__main__":
    main()
