#!/usr/bin/env python3
"""`ply diff --format html` in a real headless browser (Chromium, Debian's `chromium`).

Builds review goldens as git repositories (base commit, head commit) and writes their HTML
reports with `ply diff --base HEAD~1 --all --format html`, then checks in Chromium:
- `testdata/review/podinfo-three-overlays`: the page opens, a section expands (the page's own
  inline script opens the <details> named by the address's #fragment, and its parents), the
  three overlays are grouped, the summary of identical changes and the risks are there,
  `?expand=all` ("Expand all") opens every section, and `?q=TEXT` (the search box) keeps
  only the objects holding TEXT; a screenshot of the grouped overlays;
- `testdata/review/why-image-patch-label`, its repository's origin on GitHub: each changed
  field's cause, linked to its line at the head commit;
- `testdata/review/why-generated-inputs` and `moved-overlay-patched-value`: a place read
  through another step ("set by nameReference, hash of ConfigMap …: file:line") and a removed
  field's place at the base ("held by … at the base"), a moved object's too;
- `testdata/review/not-reviewed-remote-base`: the overlay not reviewed, with its diagnostic,
  and the overlays broken before the change.
Every page must be self-contained (nothing loaded from elsewhere). Fails (exit 1) on any
check; never skips: without Chromium it fails and says how to install it.

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


def build(tmp, case, name, origin=None):
    """The case as a repository (base, then head checked out) and its HTML report's path."""
    repo = os.path.join(tmp, name)
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    if origin:
        git(repo, "remote", "add", "origin", origin)
    shutil.copytree(os.path.join(case, "base"), repo, dirs_exist_ok=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "rm", "-q", "-r", ".")
    shutil.copytree(os.path.join(case, "head"), repo, dirs_exist_ok=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "head")
    return repo


def report(ply, repo, expect):
    page = repo + ".html"
    r = subprocess.run([ply, "diff", "--base", "HEAD~1", "--all", "--format", "html",
                        "-o", page], cwd=repo, capture_output=True, text=True)
    if r.returncode != expect:
        fail(f"ply diff in {repo}: exit {r.returncode} (expected {expect}): {r.stderr}")
    html = open(page, encoding="utf-8").read()
    # Self-contained: nothing loaded from elsewhere (links to a cause's line are not loads).
    for outside in ("src=", "<link", "@import", "url("):
        if outside in html:
            fail(f"{page} loads something from elsewhere ({outside!r})")
    return page


def closed_and_open(dom):
    sections = re.findall(r'<details[^>]*?( open="")?>', dom)
    return sum(1 for o in sections if not o), sum(1 for o in sections if o)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ply", default=os.path.join(ROOT, "target/debug/ply"))
    ap.add_argument("--screenshot", default=None)
    args = ap.parse_args()
    # The review runs in a repository of its own: a relative path names the binary from here.
    args.ply = os.path.abspath(args.ply)
    browser = chromium()
    with tempfile.TemporaryDirectory() as tmp:
        profile = os.path.join(tmp, "profile")
        repo = build(tmp, CASE, "podinfo")
        url = "file://" + report(args.ply, repo, 1)
        # It opens: the DOM Chromium built holds every overlay's section, closed.
        dom = browse(browser, url, "--dump-dom", profile=profile)
        overlays = re.findall(r'<details id="overlay-\d+"( open="")?>', dom)
        if len(overlays) != 3 or any(overlays):
            fail(f"expected 3 closed overlay sections, found {overlays!r}")
        for wanted in ('<input id="search"', '<button id="expand-all"', "<h2>Summary</h2>",
                       "image tag 6.9.4 → 6.13.0 in 1 Deployment × 3 overlays", "<h2>Risks</h2>"):
            if wanted not in dom:
                fail(f"{wanted!r} is not on the page")
        # A section expands: the address names the first overlay's Deployment.
        target = "overlay-1-object-2"
        dom = browse(browser, f"{url}#{target}", "--dump-dom", profile=profile)
        for opened in ("overlay-1", target):
            if not re.search(rf'<details (class="object" )?id="{opened}" open="">', dom):
                fail(f"section {opened} did not expand")
        if re.search(r'<details id="overlay-2" open="">', dom):
            fail("another overlay expanded too")
        # The grouped overlays are on the page (and in the screenshot).
        if "same change in kustomize/overlays/dev, kustomize/overlays/prod, kustomize/overlays/staging" not in dom:
            fail("the three overlays are not grouped")
        # "Expand all": every section open, none closed.
        dom = browse(browser, f"{url}?expand=all", "--dump-dom", profile=profile)
        closed, opened = closed_and_open(dom)
        if closed or opened < 9:
            fail(f"expand all: {closed} sections closed, {opened} open")
        if "Collapse all</button>" not in dom:
            fail("expand all: the button does not offer to collapse")
        # The search box: only the Services (no Deployment holds 'v1 Service') stay shown.
        dom = browse(browser, f"{url}?q=v1%20Service", "--dump-dom", profile=profile)
        objects = re.findall(r'<details class="object( hidden)?" id="[^"]+"( open="")?><summary>(\w+) <code>([^<]+)</code>', dom)
        shown = [o[3] for o in objects if not o[0]]
        hidden = [o[3] for o in objects if o[0]]
        if not shown or any("Service" not in o for o in shown) or not any("Deployment" in o for o in hidden):
            fail(f"search: shown {shown!r}, hidden {hidden!r}")
        if args.screenshot:
            browse(browser, f"{url}#{target}", f"--screenshot={os.path.abspath(args.screenshot)}",
                   "--window-size=1280,1500", profile=profile)
            if not os.path.getsize(args.screenshot):
                fail("empty screenshot")
        # Causes, linked to their line at the head commit on GitHub.
        why = os.path.join(ROOT, "testdata/review/why-image-patch-label")
        repo = build(tmp, why, "why", origin="https://github.com/o/r.git")
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                              text=True).stdout.strip()
        dom = browse(browser, "file://" + report(args.ply, repo, 1), "--dump-dom", profile=profile)
        link = f'<a href="https://github.com/o/r/blob/{head}/apps/web/overlays/prod/replicas.yaml#L6">'
        if "<th>Cause</th>" not in dom or link not in dom or "changed in this pull request" not in dom:
            fail(f"no cause linked to its line ({link})")
        # The wording of a place read through another step, and of a removed field's place
        # at the base (also a moved object's, at the overlay it moved from).
        for case, wanted in (
            ("why-generated-inputs", (
                "set by nameReference, hash of ConfigMap redis-config: "
                "<code>app/base/redis.conf:4</code>, changed in this pull request",
                "held by patch at <code>app/overlays/prod/patch.yaml:6</code> at the base, "
                "changed in this pull request")),
            ("moved-overlay-patched-value", (
                "set by json6902 at <code>operator/overlays/tech-preview/kustomization.yaml:14"
                "</code>, not changed in this pull request",
                "held by json6902 at <code>operator/overlays/stable-v1/kustomization.yaml:17"
                "</code> at the base, not changed in this pull request")),
        ):
            repo = build(tmp, os.path.join(ROOT, "testdata/review", case), case)
            dom = browse(browser, "file://" + report(args.ply, repo, 1), "--dump-dom",
                         profile=profile)
            for w in wanted:
                if w not in dom:
                    fail(f"{case}: {w!r} is not on the page")
        # Not reviewed and broken before.
        nr = os.path.join(ROOT, "testdata/review/not-reviewed-remote-base")
        dom = browse(browser, "file://" + report(args.ply, build(tmp, nr, "nr"), 1), "--dump-dom",
                     profile=profile)
        for wanted in ("<h2>Not reviewed</h2>", "1 overlay not reviewed: it reads changed files",
                       '<pre class="error">', "<h2>Broken before this change</h2>",
                       "apps/api</code>: ply::not-fetched"):
            if wanted not in dom:
                fail(f"not reviewed / broken before: {wanted!r} is not on the page")
    print("html_check: ok (opens, a section expands, the three overlays are grouped, summary, "
          "risks, expand all, search, causes linked, via and base-side causes, not reviewed, "
          "broken before)")


if __name__ == "__main__":
    main()
