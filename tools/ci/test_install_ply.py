#!/usr/bin/env python3
"""Tests tools/ci/install-ply.sh (the Action's install step) against a local file server on
127.0.0.1 standing in for GitHub's release downloads: the release archive of a version tag is
downloaded, its SHA-256 checked and the binary installed (and put on $GITHUB_PATH); an archive
whose .sha256 does not match is refused and nothing is installed; a tag without a release
falls back to the cached build of the Action's checkout, used when its stamp matches the
sources. No `ply` is on PATH. Run by `cargo test` (tests/golden/review.rs), or by hand:
`python3 tools/ci/test_install_ply.py target/debug/ply`.
"""

import hashlib
import http.server
import os
import shutil
import subprocess
import sys
import tarfile

from stand_in import Quiet, scratch, serving

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
        name = f"ply-{tag}-linux-amd64"
        d = os.path.join(served, tag)
        os.makedirs(os.path.join(d, name))
        shutil.copy(ply, os.path.join(d, name, "ply"))
        archive = os.path.join(d, name + ".tar.gz")
        with tarfile.open(archive, "w:gz") as t:
            t.add(os.path.join(d, name), arcname=name)
        shutil.rmtree(os.path.join(d, name))
        digest = hashlib.sha256(open(archive, "rb").read()).hexdigest()
        if not good:
            digest = hashlib.sha256(b"something else").hexdigest()
        with open(archive + ".sha256", "w") as f:
            f.write(f"{digest}  {name}.tar.gz\n")

    os.makedirs(served)
    release("v9.9.9")
    release("v9.9.8", good=False)
    with serving(Files) as url:
        home = os.path.join(tmp, "home")
        gh_path = os.path.join(tmp, "github_path")
        env = {
            "PATH": "/usr/bin:/bin",  # no ply
            "HOME": tmp,
            "PLY_HOME": home,
            "PLY_OS": "linux",
            "PLY_ARCH": "x86_64",
            "PLY_SOURCE": REPO_ROOT,
            "PLY_RELEASE_URL": url,
            "GITHUB_PATH": gh_path,
        }
        assert subprocess.run(["sh", "-c", "command -v ply"], env=env).returncode != 0

        def run(ref):
            open(gh_path, "w").close()
            return subprocess.run([SCRIPT], env=dict(env, PLY_REF=ref),
                                  capture_output=True, text=True)

        # The release archive of the tag: checked, installed, on PATH.
        r = run("v9.9.9")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "SHA-256" in r.stdout and "checked" in r.stdout, r.stdout
        installed = os.path.join(home, "release", "v9.9.9")
        assert open(gh_path).read() == installed + "\n", open(gh_path).read()
        v = subprocess.run([os.path.join(installed, "ply"), "version"], capture_output=True, text=True)
        assert v.returncode == 0 and v.stdout.startswith("ply "), v.stdout + v.stderr
        assert "/v9.9.9/ply-v9.9.9-linux-amd64.tar.gz" in log, log
        assert "/v9.9.9/ply-v9.9.9-linux-amd64.tar.gz.sha256" in log, log

        # A checksum that does not match: refused, nothing installed, nothing on PATH.
        r = run("v9.9.8")
        assert r.returncode == 1, r.stdout + r.stderr
        assert "::error::" in r.stderr and "not installed" in r.stderr, r.stderr
        assert not os.path.exists(os.path.join(home, "release", "v9.9.8")), "installed anyway"
        assert open(gh_path).read() == "", open(gh_path).read()

        # No release for the tag: the cached build of the checkout, when its stamp matches.
        stamp = subprocess.run([SCRIPT, "--stamp"], env=env, capture_output=True,
                               text=True, check=True).stdout.strip()
        assert len(stamp) == 16, stamp
        build = os.path.join(home, "build")
        os.makedirs(os.path.join(build, "bin"))
        shutil.copy(ply, os.path.join(build, "bin", "ply"))
        with open(os.path.join(build, "commit"), "w") as f:
            f.write(stamp + "\n")
        r = run("v9.9.7")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "no release archive for v9.9.7" in r.stdout, r.stdout
        assert f"using the cached build of {stamp}" in r.stdout, r.stdout
        assert open(gh_path).read() == os.path.join(build, "bin") + "\n"
        # A branch ref skips the download and uses the cached build too.
        before = len(log)
        r = run("main")
        assert r.returncode == 0 and "using the cached build" in r.stdout, r.stdout + r.stderr
        assert len(log) == before, log[before:]
        print("install-ply.sh: ok")


if __name__ == "__main__":
    main()
