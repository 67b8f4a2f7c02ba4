#!/usr/bin/env bash
# The action's work (action.yml): `ply diff` of every overlay against the pull request's base,
# as Markdown, posted as one comment that later pushes update. Exit 0 when the diff ran (with
# or without changes), 2 when the change breaks an overlay (ply's exit 2) or ply fails.
# Environment: PLY (the binary, default `ply`), BASE (a commit), TITLE, PLY_ARGS (more flags),
# and what tools/ci/pr_comment.py needs (GITHUB_TOKEN, GITHUB_REPOSITORY, PR_NUMBER,
# GITHUB_API_URL). COMMENT=false skips the comment. The full report is also written as one
# HTML page (HTML, default next to the Markdown), which the action uploads as an artifact and
# links from the comment (action.yml). DEFER_EXIT=1 exits 0 after writing the
# outputs (`code`: ply's exit status), so that the action can upload and comment first.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ply="${PLY:-ply}"
report="${REPORT:-${RUNNER_TEMP:-/tmp}/ply-diff.md}"
html="${HTML:-${report%.md}.html}"
: "${BASE:?BASE (the pull request base commit) is required}"
# shellcheck disable=SC2086 # PLY_ARGS is a list of flags
"$ply" diff --base "$BASE" --all --changed-only --format markdown \
  --title "${TITLE:-ply diff}" -o "$report" ${PLY_ARGS:-}
code=$?
# The same review as one HTML page (its failures are annotated once, by the run above).
# shellcheck disable=SC2086
GITHUB_ACTIONS= "$ply" diff --base "$BASE" --all --changed-only --format html \
  --title "${TITLE:-ply diff}" -o "$html" ${PLY_ARGS:-}
if [ "$code" -gt 1 ] && [ ! -s "$report" ]; then
  echo "ply diff failed (exit $code) without a report" >&2
  exit 2
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "changed=$([ "$code" -eq 0 ] && echo false || echo true)" >>"$GITHUB_OUTPUT"
  echo "report=$report" >>"$GITHUB_OUTPUT"
  echo "html=$html" >>"$GITHUB_OUTPUT"
  echo "code=$code" >>"$GITHUB_OUTPUT"
fi
if [ "${COMMENT:-true}" != "false" ]; then
  python3 "$here/pr_comment.py" "$report" || exit 2
fi
[ "${DEFER_EXIT:-0}" = "1" ] && exit 0
[ "$code" -gt 1 ] && exit 2
exit 0
