#!/usr/bin/env python3
"""Tests tools/ci/pr-review.sh (the work of action.yml) end to end: a throw-away git repository
with two commits, the real `ply` binary, and a stand-in for the GitHub API on 127.0.0.1 that
keeps comments in memory. Run by `cargo test` (tests/golden/review.rs), or by hand:
`python3 tools/ci/test_pr_review.py target/debug/ply`.
"""

import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
CASE = os.path.join(REPO_ROOT, "testdata", "review", "image-bump")


class GitHub(http.server.BaseHTTPRequestHandler):
    comments = []  # {"id", "body"}
    log = []  # (method, path)

    def log_message(self, *args):
        pass

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

    def authorized(self):
        if self.headers.get("Authorization") != "Bearer t0ken":
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
        if not self.authorized():
            return
        if self.path != "/repos/o/r/issues/7/comments":
            return self.reply(404, {"message": "Not Found"})
        c = {"id": 100 + len(GitHub.comments), "body": self.body()["body"]}
        GitHub.comments.append(c)
        self.reply(201, c)

    def do_PATCH(self):
        GitHub.log.append(("PATCH", self.path))
        if not self.authorized():
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
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), GitHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    tmp = tempfile.mkdtemp(prefix="ply-action-")
    try:
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
                   GITHUB_API_URL=f"http://127.0.0.1:{server.server_address[1]}")
        script = os.path.join(HERE, "pr-review.sh")

        def run(**extra):
            return subprocess.run([script], cwd=repo, env=dict(env, **extra),
                                  capture_output=True, text=True)

        r = run()
        assert r.returncode == 0, r.stdout + r.stderr
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

        # Another title keeps its own comment.
        r = run(TITLE="Staging")
        assert r.returncode == 0, r.stdout + r.stderr
        assert len(GitHub.comments) == 3

        # An overlay that fails at the head: the comment is still updated, the job fails (2).
        with open(path, "a") as f:
            f.write("patches:\n- path: missing.yaml\n")
        r = run()
        assert r.returncode == 2, r.stdout + r.stderr
        assert "fails to render at the head" in GitHub.comments[1]["body"]

        # A wrong token fails the job.
        r = run(GITHUB_TOKEN="wrong")
        assert r.returncode == 2, r.stdout + r.stderr
        print("pr-review.sh: ok")
    finally:
        server.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
