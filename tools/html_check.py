#!/usr/bin/env python3
"""`ply diff --format html` in a real headless browser (Chromium, Debian's `chromium`).

Builds the review golden `testdata/review/podinfo-three-overlays` as a git repository (base
commit, head commit), writes its HTML report with `ply diff --base HEAD~1 --all --format html`,
then checks in Chromium that the page opens, that a section expands (the page's own inline
script opens the <details> named by the address's #fragment, and its parents), and takes a
screenshot of the grouped overlays. Fails (exit 1) on any check; never skips: without
Chromium it fails and says how to install it.

    tools/html_check.py [--ply target/debug/ply] [--screenshot FILE.png]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASE = os.path.join(ROOT, "testdata/review/podinfo-three-overlays")
GIT_ENV = {
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "ply",
    "GIT_AUTHOR_EMAIL": "ply@example.com",
    "GIT_COMMITTER_NAME": "ply",
    "GIT_COMMITTER_EMAIL": "ply@example.com",
    "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z",
}


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, env={**os.environ, **GIT_ENV},
                   stdout=subprocess.DEVNULL)


def fail(msg):
    print(f"html_check: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    fail("no Chromium on PATH: install Debian's package (apt-get install -y chromium)")


def browse(browser, url, *flags, profile):
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           f"--user-data-dir={profile}", "--virtual-time-budget=3000", *flags, url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr[-2000:]}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ply", default=os.path.join(ROOT, "target/debug/ply"))
    ap.add_argument("--screenshot", default=None)
    args = ap.parse_args()
    # The review runs in a repository of its own: a relative path names the binary from here.
    args.ply = os.path.abspath(args.ply)
    browser = chromium()
    with tempfile.TemporaryDirectory() as tmp:
        repo = os.path.join(tmp, "repo")
        os.makedirs(repo)
        git(repo, "init", "-q", "-b", "main")
        shutil.copytree(os.path.join(CASE, "base"), repo, dirs_exist_ok=True)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "base")
        git(repo, "rm", "-q", "-r", ".")
        shutil.copytree(os.path.join(CASE, "head"), repo, dirs_exist_ok=True)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "head")
        page = os.path.join(tmp, "report.html")
        r = subprocess.run([args.ply, "diff", "--base", "HEAD~1", "--all", "--format", "html",
                            "-o", page], cwd=repo, capture_output=True, text=True)
        if r.returncode != 1:
            fail(f"ply diff exit {r.returncode} (expected 1: changes): {r.stderr}")
        html = open(page, encoding="utf-8").read()
        # Self-contained: nothing loaded from elsewhere.
        for outside in ("src=", "href=", "@import", "url("):
            if outside in html:
                fail(f"the page loads something from elsewhere ({outside!r})")
        profile = os.path.join(tmp, "profile")
        url = "file://" + page
        # It opens: the DOM Chromium built holds every overlay's section, closed.
        dom = browse(browser, url, "--dump-dom", profile=profile)
        overlays = re.findall(r'<details id="overlay-\d+"( open="")?>', dom)
        if len(overlays) != 3 or any(overlays):
            fail(f"expected 3 closed overlay sections, found {overlays!r}")
        # A section expands: the address names the first overlay's Deployment.
        target = "overlay-1-object-2"
        dom = browse(browser, f"{url}#{target}", "--dump-dom", profile=profile)
        for opened in ("overlay-1", target):
            if not re.search(rf'<details id="{opened}" open="">', dom):
                fail(f"section {opened} did not expand")
        if re.search(r'<details id="overlay-2" open="">', dom):
            fail("another overlay expanded too")
        # The grouped overlays are on the page (and in the screenshot).
        if "same change in kustomize/overlays/dev, kustomize/overlays/prod, kustomize/overlays/staging" not in dom:
            fail("the three overlays are not grouped")
        if args.screenshot:
            browse(browser, f"{url}#{target}", f"--screenshot={os.path.abspath(args.screenshot)}",
                   "--window-size=1280,1500", profile=profile)
            if not os.path.getsize(args.screenshot):
                fail("empty screenshot")
    print("html_check: ok (opens, a section expands, the three overlays are grouped)")


if __name__ == "__main__":
    main()
