#!/usr/bin/env python3
"""Tests tools/ci/pr-review.sh (the work of action.yml) end to end: a throw-away git repository
with two commits, the real `ply` binary, and a stand-in for the GitHub API on 127.0.0.1 that
keeps comments in memory. The comment path (one comment per title, updated in place), the
fork path (no request at all: the report goes to $GITHUB_STEP_SUMMARY, the step's result is
ply's), GitHub refusing the comment (403 for a read-only token: the job summary, ply's
result), a bad token (the job summary, and the step fails), and the `--live` Markdown posted
by the same comment script (tools/ci/pr_comment.py). Run by `cargo test` (tests/golden/review.rs), or by hand:
`python3 tools/ci/test_pr_review.py target/debug/ply`.
"""

import http.server
import json
import os
import shutil
import subprocess
import sys

from stand_in import Quiet, scratch, serving

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
CASE = os.path.join(REPO_ROOT, "testdata", "review", "image-bump")


class GitHub(Quiet, http.server.BaseHTTPRequestHandler):
    comments = []  # {"id", "body"}
    log = []  # (method, path)

    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length", "0"))
        return json.loads(self.rfile.read(n) or b"{}")

    def authorized(self, write=False):
        if write and self.headers.get("Authorization") == "Bearer read-only":
            self.reply(403, {"message": "Resource not accessible by integration"})
            return False
        if self.headers.get("Authorization") not in ("Bearer t0ken", "Bearer read-only"):
            self.reply(401, {"message": "Bad credentials"})
            return False
        return True

    def do_GET(self):
        GitHub.log.append(("GET", self.path))
        if not self.authorized():
            return
        path, _, query = self.path.partition("?")
        if path != "/repos/o/r/issues/7/comments":
            return self.reply(404, {"message": "Not Found"})
        params = dict(p.split("=") for p in query.split("&") if p)
        page, per = int(params.get("page", "1")), int(params.get("per_page", "30"))
        self.reply(200, GitHub.comments[(page - 1) * per : page * per])

    def do_POST(self):
        GitHub.log.append(("POST", self.path))
        if not self.authorized(write=True):
            return
        if self.path != "/repos/o/r/issues/7/comments":
            return self.reply(404, {"message": "Not Found"})
        c = {"id": 100 + len(GitHub.comments), "body": self.body()["body"]}
        GitHub.comments.append(c)
        self.reply(201, c)

    def do_PATCH(self):
        GitHub.log.append(("PATCH", self.path))
        if not self.authorized(write=True):
            return
        for c in GitHub.comments:
            if self.path == f"/repos/o/r/issues/comments/{c['id']}":
                c["body"] = self.body()["body"]
                return self.reply(200, c)
        self.reply(404, {"message": "Not Found"})


def git(repo, *args):
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def main():
    ply = os.path.abspath(sys.argv[1])
    with serving(GitHub) as api, scratch("ply-action-") as tmp:
        test(ply, api, tmp)


def test(ply, api, tmp):
    repo = os.path.join(tmp, "repo")
    shutil.copytree(os.path.join(CASE, "base"), repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    shutil.copytree(os.path.join(CASE, "head"), repo, dirs_exist_ok=True, copy_function=shutil.copy)
    git(repo, "commit", "-q", "-am", "bump")
    GitHub.comments.append({"id": 1, "body": "<!-- other-bot -->\nhello"})
    out_file = os.path.join(tmp, "github_output")
    env = dict(os.environ, PLY=ply, BASE=base, TITLE="Rendered manifests",
               REPORT=os.path.join(tmp, "report.md"), GITHUB_OUTPUT=out_file,
               GITHUB_TOKEN="t0ken", GITHUB_REPOSITORY="o/r", PR_NUMBER="7",
               GITHUB_API_URL=api)
    script = os.path.join(HERE, "pr-review.sh")

    def run(**extra):
        return subprocess.run([script], cwd=repo, env=dict(env, **extra),
                              capture_output=True, text=True)

    r = run()
    assert r.returncode == 0, r.stdout + r.stderr
    # The fetch step ran for both sides (this repository has no remote base).
    assert r.stderr.count("no remote bases or files found: nothing to fetch") == 2, r.stderr
    assert len(GitHub.comments) == 2, GitHub.comments
    mine = GitHub.comments[1]
    assert mine["body"].startswith("<!-- ply-diff: Rendered manifests -->\n### Rendered manifests\n"), mine
    assert "`nginx:1.25` → `nginx:1.26`" in mine["body"], mine["body"]
    assert "changed=true" in open(out_file).read()
    # The full report as one HTML page, named in the outputs (the action uploads it).
    html = os.path.join(tmp, "report.html")
    assert f"html={html}" in open(out_file).read()
    with open(html, encoding="utf-8") as f:
        page = f.read()
    assert page.startswith("<!DOCTYPE html>") and "nginx:1.26" in page, page[:500]

    # A second push: the same comment is updated, no new one.
    path = os.path.join(repo, "apps/web/overlays/prod/kustomization.yaml")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace('newTag: "1.26"', 'newTag: "1.27"'))
    git(repo, "commit", "-q", "-am", "bump again")
    r = run()
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(GitHub.comments) == 2, GitHub.comments
    assert "`nginx:1.25` → `nginx:1.27`" in GitHub.comments[1]["body"]
    assert ("PATCH", f"/repos/o/r/issues/comments/{mine['id']}") in GitHub.log
    assert GitHub.comments[0]["body"] == "<!-- other-bot -->\nhello"

    # Another title keeps its own comment; WHY=false: no causes.
    r = run(TITLE="Staging", WHY="false")
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(GitHub.comments) == 3
    assert "(set by " not in GitHub.comments[2]["body"], GitHub.comments[2]["body"]

    # WHY unset (the action's and ply's default): each changed field names the line that
    # set it.
    r = run(TITLE="Staging")
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(GitHub.comments) == 3
    assert "(set by images at `apps/web/overlays/prod/kustomization.yaml:6`" in GitHub.comments[2]["body"], \
        GitHub.comments[2]["body"]

    # A fork's pull request: no request to GitHub, the report in the job summary, and the
    # step's result is ply's (changes: 0).
    summary = os.path.join(tmp, "step_summary")
    before = len(GitHub.log)
    r = run(FORK="true", GITHUB_STEP_SUMMARY=summary)
    assert r.returncode == 0, r.stdout + r.stderr
    assert GitHub.log[before:] == [], GitHub.log[before:]
    assert open(summary).read() == open(env["REPORT"]).read()
    assert "<!-- ply-diff: Rendered manifests -->" in open(summary).read()
    assert "`nginx:1.25` → `nginx:1.27`" in open(summary).read()

    # GitHub refuses the comment (403): the job summary, and ply's result again.
    os.remove(summary)
    count = len(GitHub.comments)
    r = run(GITHUB_TOKEN="read-only", GITHUB_STEP_SUMMARY=summary)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "refused the comment (403" in r.stdout, r.stdout
    assert open(summary).read() == open(env["REPORT"]).read()
    assert len(GitHub.comments) == count
    assert ("PATCH", f"/repos/o/r/issues/comments/{mine['id']}") == GitHub.log[-1]

    # The --live Markdown, posted by the same comment script: one comment for its title,
    # updated in place.
    live = os.path.join(tmp, "live.yaml")
    with open(live, "w") as f:
        f.write("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: prod\n")
    live_md = os.path.join(tmp, "live.md")
    for _ in range(2):
        d = subprocess.run([ply, "diff", "apps/web/overlays/prod", "--live", live,
                            "--format", "markdown", "--title", "Live prod", "-o", live_md],
                           cwd=repo, capture_output=True, text=True)
        assert d.returncode == 1, d.stdout + d.stderr
        c = subprocess.run(["python3", os.path.join(HERE, "pr_comment.py"), live_md],
                           env=env, capture_output=True, text=True)
        assert c.returncode == 0, c.stdout + c.stderr
    posted = [x for x in GitHub.comments if x["body"].startswith("<!-- ply-diff: Live prod -->\n### Live prod (client-side apply)\n")]
    assert len(posted) == 1, GitHub.comments
    assert posted[0]["body"] == open(live_md).read()
    assert "updated comment" in c.stdout, c.stdout

    # An overlay that fails at the head: the comment is still updated, the job fails (2).
    with open(path, "a") as f:
        f.write("patches:\n- path: missing.yaml\n")
    r = run()
    assert r.returncode == 2, r.stdout + r.stderr
    assert "fails to render at the head" in GitHub.comments[1]["body"]

    # Refused (403) with an overlay failing at the head: ply's result (2), not the comment's.
    os.remove(summary)
    r = run(GITHUB_TOKEN="read-only", GITHUB_STEP_SUMMARY=summary)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "fails to render at the head" in open(summary).read()

    # A wrong token (401) fails the job, with the report in the job summary.
    os.remove(summary)
    r = run(GITHUB_TOKEN="wrong", GITHUB_STEP_SUMMARY=summary)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "401" in r.stderr, r.stderr
    assert open(summary).read() == open(env["REPORT"]).read()

    # A sharded run: each shard writes its JSON part and posts nothing; the merge job posts
    # the report the unsharded run gives (here with the overlay failing at the head: 2).
    r = run(COMMENT="false")
    assert r.returncode == 2, r.stdout + r.stderr
    whole = open(env["REPORT"]).read()
    before = len(GitHub.log)
    for i in (1, 2):
        part = os.path.join(tmp, f"part-{i}.json")
        r = run(SHARD=f"{i}/2", REPORT=part)
        assert r.returncode == 0, r.stdout + r.stderr
        assert open(part).read().startswith("{"), open(part).read()
    assert GitHub.log[before:] == [], GitHub.log[before:]
    r = run(MERGE_REPORTS=os.path.join(tmp, "part-*.json"), BASE="")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "ply fetch" not in r.stderr, r.stderr
    assert GitHub.comments[1]["body"] == whole, GitHub.comments[1]["body"]
    print("pr-review.sh: ok")


if __name__ == "__main__":
    main()
