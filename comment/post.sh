#!/usr/bin/env bash
# Post or edit gpuplan's ONE comment on a pull request: post.sh REPO NUMBER BODY_FILE, with GH_TOKEN (and
# COMMENT_AUTHOR, optional). Used by action.yml and comment/action.yml.
#
# Only a comment written by this token's own identity is edited: the first whose body starts with the marker AND
# whose author (`.user.login`) is that identity. A comment someone else wrote with the marker (anyone can paste it)
# is left alone and a new one is posted. The identity is COMMENT_AUTHOR when given, else GraphQL `viewer { login }`,
# which answers for a GITHUB_TOKEN and a GitHub App's installation token alike (`github-actions[bot]`,
# `my-app[bot]`: the login REST shows as the comment's `.user.login`), where REST `GET /user` is refused to
# installation tokens ("Resource not accessible by integration").
set -euo pipefail
repo=$1 number=$2 body=$3
marker='<!-- gpuplan-diff -->'
[[ "$number" =~ ^[1-9][0-9]*$ ]] || { echo "post.sh: '$number' is not a pull request number" >&2; exit 2; }
author=${COMMENT_AUTHOR:-}
if [ -z "$author" ]; then
  author=$(gh api graphql -f query='query { viewer { login } }' | jq -r '.data.viewer.login // empty') || author=
fi
id=
if [ -n "$author" ]; then
  # --paginate prints one JSON array per page: jq -s joins them.
  id=$(gh api --paginate "repos/$repo/issues/$number/comments?per_page=100" \
    | jq -rs --arg marker "$marker" --arg author "$author" \
      '[add // [] | .[] | select(.user.login == $author and (.body | startswith($marker)))][0].id // empty')
else
  echo "::warning title=gpuplan::cannot tell which login this token comments as (set comment-author): no comment is edited, a new one is posted"
fi
if [ -n "$id" ]; then
  gh api --method PATCH "repos/$repo/issues/comments/$id" -F body=@"$body" > /dev/null
else
  gh api --method POST "repos/$repo/issues/$number/comments" -F body=@"$body" > /dev/null
fi
