#!/usr/bin/env bash
# The action's work (action.yml): the remote bases of both sides fetched, then `ply diff` of
# every overlay against the pull request's base, as Markdown, posted as one comment that later
# pushes update. When the comment cannot be posted — a pull request from a fork (FORK=true: its
# token is read-only) or GitHub refusing it (403) — the report goes to the job summary
# ($GITHUB_STEP_SUMMARY) instead, and the step's result is still ply's: 0 when the diff ran
# (with or without changes), 2 when the change breaks an overlay (ply's exit 2: or an overlay is not fetched)
# or ply fails. Any other failure to comment (a bad token, GitHub down) also fails the step
# (2), after writing the job summary.
# Environment: PLY (the binary, default `ply`), BASE (a commit), TITLE, PLY_ARGS (more flags),
# WHY (default true: `--why`, each changed field's cause; false: `--no-why`),
# FETCH (default true: `ply fetch --all` and `ply fetch --revision <merge base> --all` first),
# FORK, and what tools/ci/pr_comment.py needs (GITHUB_TOKEN, GITHUB_REPOSITORY, PR_NUMBER,
# GITHUB_API_URL). COMMENT=false skips the comment. The full report is also written as one
# HTML page (HTML, default next to the Markdown), which the action uploads as an artifact and
# links from the comment (action.yml): DEFER_EXIT=1 exits 0 after writing the outputs (`code`:
# ply's exit status, `html`), so that the action can upload first; POST_ONLY=1 then posts
# REPORT (the link appended when LINK is set) and exits with the status CODE says.
# A sharded run (docs/review.md): SHARD=I/N writes this shard's JSON report (REPORT, default
# ply-diff-part.json) and posts nothing; MERGE_REPORTS (file names or globs of those parts)
# makes the comment from them with `ply diff --merge-reports` (no fetch, no render).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ply="${PLY:-ply}"
why="--why"
[ "${WHY:-true}" = "false" ] && why="--no-why"
report="${REPORT:-${RUNNER_TEMP:-/tmp}/ply-diff.md}"
html="${HTML:-${report%.md}.html}"
if [ "${POST_ONLY:-0}" = "1" ]; then
  # The second half of the action: the report exists; post it as below.
  code="${CODE:?CODE, the exit status of ply diff, is required with POST_ONLY=1}"
  if [ -n "${LINK:-}" ]; then
    printf '\n[The full report](%s) (every overlay and diff, one HTML page, in the run'"'"'s artifacts)\n' "$LINK" >>"$report"
  fi
fi
if [ "${POST_ONLY:-0}" = "1" ]; then
  FETCH=false
elif [ -n "${MERGE_REPORTS:-}" ]; then
  FETCH=false
else
  : "${BASE:?BASE (the pull request base commit) is required}"
fi
if [ -n "${SHARD:-}" ]; then
  report="${REPORT:-ply-diff-part.json}"
fi
if [ "${FETCH:-true}" != "false" ]; then
  # Each side's renders read that side's ply.lock (docs/remote.md): fetch what the head's
  # locks pin and what the locks at the merge base pin. A failure here is reported by the
  # review itself, overlay by overlay ("not fetched", exit 2).
  "$ply" fetch --all || echo "::warning::ply fetch --all failed: see above" >&2
  if merge_base="$(git merge-base "$BASE" HEAD)"; then
    "$ply" fetch --revision "$merge_base" --all \
      || echo "::warning::ply fetch --revision $merge_base --all failed: see above" >&2
  fi
fi
if [ "${POST_ONLY:-0}" = "1" ]; then
  :
elif [ -n "${MERGE_REPORTS:-}" ]; then
  # shellcheck disable=SC2086 # MERGE_REPORTS is a list of files or globs
  "$ply" diff --merge-reports $MERGE_REPORTS --format markdown -o "$report"
  code=$?
  # shellcheck disable=SC2086
  "$ply" diff --merge-reports $MERGE_REPORTS --format html -o "$html"
elif [ -n "${SHARD:-}" ]; then
  # shellcheck disable=SC2086 # PLY_ARGS is a list of flags, $why is one flag
  "$ply" diff --base "$BASE" --all --changed-only $why --shard "$SHARD" --format json \
    --title "${TITLE:-ply diff}" -o "$report" ${PLY_ARGS:-}
  code=$?
  [ -n "${GITHUB_OUTPUT:-}" ] && echo "report=$report" >>"$GITHUB_OUTPUT"
  # Every shard's result is the merge job's to report.
  [ -s "$report" ] || { echo "ply diff failed (exit $code) without a report" >&2; exit 2; }
  exit 0
else
  # shellcheck disable=SC2086 # PLY_ARGS is a list of flags, $why is one flag
  "$ply" diff --base "$BASE" --all --changed-only $why --format markdown \
    --title "${TITLE:-ply diff}" -o "$report" ${PLY_ARGS:-}
  code=$?
  # The same review as one HTML page (its failures are annotated once, by the run above).
  # shellcheck disable=SC2086
  GITHUB_ACTIONS='' "$ply" diff --base "$BASE" --all --changed-only $why --format html \
    --title "${TITLE:-ply diff}" -o "$html" ${PLY_ARGS:-}
fi
if [ "$code" -gt 1 ] && [ ! -s "$report" ]; then
  echo "ply diff failed (exit $code) without a report" >&2
  exit 2
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "changed=$([ "$code" -eq 0 ] && echo false || echo true)"
    echo "report=$report"
    echo "html=$html"
    echo "code=$code"
  } >>"$GITHUB_OUTPUT"
fi
to_summary() {
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    cat "$report" >>"$GITHUB_STEP_SUMMARY"
    echo "the report is in the job summary"
  else
    echo "no GITHUB_STEP_SUMMARY: the report is $report"
  fi
}
if [ "${COMMENT:-true}" != "false" ]; then
  if [ "${FORK:-false}" = "true" ]; then
    echo "::notice::a pull request from a fork gets a read-only token: no comment"
    to_summary
  else
    python3 "$here/pr_comment.py" "$report"
    posted=$?
    if [ "$posted" -eq 3 ]; then
      echo "::warning::GitHub refused the comment (403: a read-only token?)"
      to_summary
    elif [ "$posted" -ne 0 ]; then
      to_summary
      exit 2
    fi
  fi
fi
[ "${DEFER_EXIT:-0}" = "1" ] && exit 0
[ "$code" -gt 1 ] && exit 2
exit 0
