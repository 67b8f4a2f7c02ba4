#!/usr/bin/env bash
# The action's work (action.yml): `ply diff` of every overlay against the pull request's base,
# as Markdown, posted as one comment that later pushes update. Exit 0 when the diff ran (with
# or without changes), 2 when the change breaks an overlay (ply's exit 2) or ply fails.
# Environment: PLY (the binary, default `ply`), BASE (a commit), TITLE, PLY_ARGS (more flags),
# and what tools/ci/pr_comment.py needs (GITHUB_TOKEN, GITHUB_REPOSITORY, PR_NUMBER,
# GITHUB_API_URL). COMMENT=false skips the comment.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ply="${PLY:-ply}"
report="${REPORT:-${RUNNER_TEMP:-/tmp}/ply-diff.md}"
: "${BASE:?BASE (the pull request base commit) is required}"
# shellcheck disable=SC2086 # PLY_ARGS is a list of flags
"$ply" diff --base "$BASE" --all --changed-only --format markdown \
  --title "${TITLE:-ply diff}" -o "$report" ${PLY_ARGS:-}
code=$?
if [ "$code" -gt 1 ] && [ ! -s "$report" ]; then
  echo "ply diff failed (exit $code) without a report" >&2
  exit 2
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "changed=$([ "$code" -eq 0 ] && echo false || echo true)" >>"$GITHUB_OUTPUT"
  echo "report=$report" >>"$GITHUB_OUTPUT"
fi
if [ "${COMMENT:-true}" != "false" ]; then
  python3 "$here/pr_comment.py" "$report" || exit 2
fi
[ "$code" -gt 1 ] && exit 2
exit 0
