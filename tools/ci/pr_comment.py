#!/usr/bin/env python3
"""Creates or updates one pull-request comment, found by the hidden marker on the report's
first line (`<!-- ply-diff: TITLE -->`), so that a CI job keeps one comment per title instead
of adding one per push. Standard library only.

Usage: pr_comment.py REPORT.md
Environment: GITHUB_TOKEN, GITHUB_REPOSITORY (owner/name), PR_NUMBER, and GITHUB_API_URL
(default https://api.github.com).
Exit status: 0 the comment is created or updated; 3 GitHub refused it (403: a read-only token,
as a fork's pull request gets); 1 any other failure.
"""

import json
import os
import sys
import urllib.error
import urllib.request


def request(method, url, token, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Accept", "application/vnd.github+json")
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("X-GitHub-Api-Version", "2022-11-28")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as resp:
        text = resp.read().decode()
        return json.loads(text) if text else None


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: pr_comment.py REPORT.md")
    with open(sys.argv[1], encoding="utf-8") as f:
        report = f.read()
    marker = report.split("\n", 1)[0]
    if not (marker.startswith("<!-- ply-diff: ") and marker.endswith(" -->")):
        sys.exit(f"{sys.argv[1]}: the first line is not a ply-diff marker: {marker!r}")
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    repo = os.environ["GITHUB_REPOSITORY"]
    number = os.environ["PR_NUMBER"]
    token = os.environ["GITHUB_TOKEN"]
    existing = None
    page = 1
    while existing is None:
        url = f"{api}/repos/{repo}/issues/{number}/comments?per_page=100&page={page}"
        comments = request("GET", url, token)
        if not comments:
            break
        for c in comments:
            if c.get("body", "").split("\n", 1)[0] == marker:
                existing = c
                break
        page += 1
    if existing is None:
        made = request("POST", f"{api}/repos/{repo}/issues/{number}/comments", token, {"body": report})
        print(f"created comment {made.get('id')}")
    else:
        request("PATCH", f"{api}/repos/{repo}/issues/comments/{existing['id']}", token, {"body": report})
        print(f"updated comment {existing['id']}")


if __name__ == "__main__":
    try:
        main()
    except urllib.error.HTTPError as e:
        print(f"pr_comment.py: GitHub answered {e.code} {e.reason} to {e.url}", file=sys.stderr)
        sys.exit(3 if e.code == 403 else 1)
    except (urllib.error.URLError, OSError, KeyError, ValueError) as e:
        print(f"pr_comment.py: {e!r}", file=sys.stderr)
        sys.exit(1)
