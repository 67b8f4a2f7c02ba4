#!/usr/bin/env python3
"""Tests the GitLab example (examples/ci/gitlab/.gitlab-ci.yml) by running its job's
`before_script` and `script` as GitLab would (bash, `set -eo pipefail`, its variables set), in
a git repository with a merge-request branch, against a stand-in on 127.0.0.1 for GitLab's
notes API and for the release downloads:
- ply is not on PATH: the job downloads the release archive of PLY_VERSION, checks its
  SHA-256 and runs it;
- the merge request already has 250 notes, and the job's own note from an earlier push is on
  the third page: the job walks the pages, finds it and updates it (no second note);
- the earlier note is not there: every page is read and one note is created;
- no token (a fork's merge request): the report goes to the log and no API call is made.
Run by `cargo test` (tests/golden/review.rs), or by hand:
`python3 tools/ci/test_gitlab_note.py target/debug/ply`.
"""

import http.server
import json
import os
import platform
import subprocess
import sys
import urllib.parse

from stand_in import Quiet, release_archive, scratch, serving

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "ci", "gitlab",
                       ".gitlab-ci.yml")
TOKEN = "glpat-stand-in"


def job_scripts(path):
    """The `before_script` and `script` lines of the example's one job, as GitLab reads them:
    a `- |` item keeps its lines, a plain item's continuation lines are folded into one."""
    out, key, item = {"before_script": [], "script": []}, None, None
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line.startswith("  ") and not line.startswith("   ") and line.strip().endswith(":"):
            key = line.strip()[:-1] if line.strip()[:-1] in out else None
            item = None
            continue
        if key is None or not line.strip():
            if item is not None and item[0] == "|":
                item[1].append("")
            continue
        if line.startswith("    - "):
            text = line[6:]
            item = ["|", []] if text == "|" else ["plain", [text]]
            out[key].append(item)
        elif line.startswith("      ") and item is not None:
            item[1].append(line[6:] if item[0] == "|" else line.strip())
        elif line.startswith("    #"):
            continue
        else:
            key = None
    return {k: [("\n".join(v) if kind == "|" else " ".join(v)) for kind, v in items]
            for k, items in out.items()}


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True)


def make_repository(tmp):
    """A project with one overlay on `main`, its bare `origin`, and a merge-request branch
    `feature` that changes a value. Returns the working directory (checked out at feature)."""
    repo = os.path.join(tmp, "project")
    os.makedirs(os.path.join(repo, "app"))
    with open(os.path.join(repo, "app", "kustomization.yaml"), "w") as f:
        f.write("resources:\n- cm.yaml\n")

    def cm(value):
        with open(os.path.join(repo, "app", "cm.yaml"), "w") as f:
            f.write(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  v: \"{value}\"\n")

    cm("1")
    git(tmp, "init", "-q", "-b", "main", repo)
    for k, v in (("user.email", "ci@example.com"), ("user.name", "ci")):
        git(repo, "config", k, v)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(tmp, "clone", "-q", "--bare", repo, os.path.join(tmp, "origin.git"))
    git(repo, "remote", "add", "origin", os.path.join(tmp, "origin.git"))
    git(repo, "checkout", "-qb", "feature")
    cm("2")
    git(repo, "commit", "-qam", "change")
    return repo


class GitLab:
    """The notes of merge request 3 of project 7, and every request made."""

    def __init__(self):
        self.notes, self.log = [], []

    def handler(self, served):
        lab = self

        class Handler(Quiet, http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **k):
                super().__init__(*a, directory=served, **k)

            def do_GET(self):
                if self.path.startswith("/releases/"):
                    lab.log.append(("GET", self.path, {}))
                    self.path = self.path[len("/releases"):]
                    return super().do_GET()
                self.api("GET")

            def do_PUT(self):
                self.api("PUT")

            def do_POST(self):
                self.api("POST")

            def api(self, method):
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                lab.log.append((method, url.path, query))
                notes_path = "/api/v4/projects/7/merge_requests/3/notes"
                if self.headers.get("PRIVATE-TOKEN") != TOKEN:
                    return self.answer(401, {"message": "401 Unauthorized"})
                body = None
                if method != "GET":
                    body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["body"]
                if method == "GET" and url.path == notes_path:
                    per, page = int(query.get("per_page", 20)), int(query.get("page", 1))
                    part = lab.notes[(page - 1) * per:page * per]
                    more = page * per < len(lab.notes)
                    return self.answer(200, part, {"X-Next-Page": str(page + 1) if more else ""})
                if method == "POST" and url.path == notes_path:
                    note = {"id": 1000 + len(lab.notes), "body": body}
                    lab.notes.append(note)
                    return self.answer(201, note)
                if method == "PUT" and url.path.startswith(notes_path + "/"):
                    wanted = int(url.path.rsplit("/", 1)[1])
                    for note in lab.notes:
                        if note["id"] == wanted:
                            note["body"] = body
                            return self.answer(200, note)
                return self.answer(404, {"message": "404 Not found"})

            def answer(self, code, value, headers=()):
                data = json.dumps(value).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in dict(headers).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        return Handler


def main():
    ply = os.path.abspath(sys.argv[1])
    with scratch("ply-gitlab-") as tmp:
        test(ply, tmp)


def test(ply, tmp):
    scripts = job_scripts(EXAMPLE)
    assert any("python3 - <<'PY'" in s for s in scripts["script"]), scripts
    program = "set -eo pipefail\n" + "\n".join(scripts["before_script"] + scripts["script"])
    repo = make_repository(tmp)
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    served = os.path.join(tmp, "releases")
    release_archive(served, ply, "v0.1.0", f"linux-{arch}")
    lab = GitLab()
    with serving(lab.handler(served)) as url:
        env = {
            "PATH": "/usr/bin:/bin",  # no ply: the job installs the release archive
            "HOME": tmp,
            "CI_PROJECT_DIR": repo,
            "CI_API_V4_URL": f"{url}/api/v4",
            "CI_PROJECT_ID": "7",
            "CI_MERGE_REQUEST_IID": "3",
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
            "PLY_VERSION": "v0.1.0",
            "PLY_RELEASE_URL": f"{url}/releases",
            "PLY_CACHE_DIR": os.path.join(repo, ".ply-cache"),
            "PLY_GITLAB_TOKEN": TOKEN,
        }
        assert subprocess.run(["sh", "-c", "command -v ply"], env=env).returncode != 0

        def run(**more):
            lab.log.clear()
            r = subprocess.run(["bash", "-c", program], cwd=repo, env=dict(env, **more),
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stdout + r.stderr
            return r

        others = [{"id": i, "body": f"looks good {i}"} for i in range(1, 251)]
        marker = "<!-- ply-diff: Rendered manifests -->"

        # The job's note from an earlier push is the 230th of 250: on page 3.
        lab.notes = [dict(n) for n in others]
        lab.notes[229] = {"id": 230, "body": marker + "\nthe earlier report"}
        r = run()
        assert "ply-v0.1.0-linux-" in r.stderr + r.stdout and ": OK" in r.stdout, r.stdout
        assert "updated note 230" in r.stdout, r.stdout + r.stderr
        gets = [q.get("page") for m, p, q in lab.log if m == "GET" and p.endswith("/notes")]
        assert gets == ["1", "2", "3"], lab.log
        assert [m for m, _, _ in lab.log if m != "GET"] == ["PUT"], lab.log
        assert len(lab.notes) == 250, len(lab.notes)
        updated = lab.notes[229]["body"]
        assert updated.startswith(marker) and "ConfigMap" in updated and "the earlier" not in updated
        assert os.path.exists(os.path.join(repo, ".ply-bin", "ply")), "not installed"

        # No earlier note: every page read, one note created; the binary now comes from the
        # job's cache directory (.ply-bin), not a download.
        lab.notes = [dict(n) for n in others]
        r = run()
        assert "created note 1250" in r.stdout, r.stdout + r.stderr
        gets = [q.get("page") for m, p, q in lab.log if m == "GET" and p.endswith("/notes")]
        assert gets == ["1", "2", "3"], lab.log
        assert not any(p.startswith("/releases") for _, p, _ in lab.log), lab.log
        assert lab.notes[-1]["body"].startswith(marker) and len(lab.notes) == 251

        # A fork's merge request: no token, the report in the log, no call to the API.
        del env["PLY_GITLAB_TOKEN"]
        r = run()
        assert "no PLY_GITLAB_TOKEN" in r.stdout and marker in r.stdout, r.stdout
        assert not any(p.startswith("/api/") for _, p, _ in lab.log), lab.log
    print("GitLab example: ok")


if __name__ == "__main__":
    main()
