//! A pull request as GitHub holds it, and the checkout a runner gets:
//! - an origin (bare) with `main` (the base: profiles and the out/ they compile to) and the pull request's head;
//! - `refs/pull/1/merge`, the test merge commit GitHub makes (first parent: the base; second: the head);
//! - the workspace as actions/checkout@v4 leaves it on `pull_request` (src/git-source-provider.ts with the default
//!   `fetch-depth: 1`): `git init`, `git fetch --no-tags --prune --no-recurse-submodules --depth=1 origin
//!   +<merge sha>:refs/remotes/pull/1/merge`, `git checkout --force refs/remotes/pull/1/merge`;
//! - a stand-in `gh` that serves the release archive (`gh release download`) and its attestation (`gh attestation
//!   verify`), answers the API calls of the comment (GraphQL `viewer`, a pull request's comments with their authors,
//!   the open pull requests) and records the comments, refusing to write them with a read-only token, as GitHub
//!   does on a fork's pull request.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

pub const ASSET: &str = "gpuplan-x86_64-unknown-linux-gnu.tar.gz";
pub const VERSION: &str = "v0.1.0";

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "dev")
        .env("GIT_AUTHOR_EMAIL", "dev@example.com")
        .env("GIT_COMMITTER_NAME", "dev")
        .env("GIT_COMMITTER_EMAIL", "dev@example.com")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?} in {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn gpuplan(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gpuplan")).args(args).current_dir(dir).env("NO_COLOR", "1").output().unwrap()
}

/// The repository of a platform team: the example profile of one cluster, the bundled catalog, out/ compiled.
pub struct PullRequest {
    pub root: tempfile::TempDir,
    pub origin: PathBuf,
    pub base: String,
    pub head: String,
    pub merge: String,
}

impl PullRequest {
    /// `main` with `profiles/llm-inference.kdl` compiled; then the pull request: `edit` applied to the author's
    /// clone, compiled when `compile` (the documented flow; not: a stale pull request), committed.
    pub fn new(edit: impl FnOnce(&Path), compile: bool) -> PullRequest {
        PullRequest::with_layout(|_| {}, edit, compile)
    }

    /// As [`PullRequest::new`], with `layout` applied to the repository before its first compile (a gpuplan.kdl that
    /// moves the profiles and out/, say).
    pub fn with_layout(layout: impl FnOnce(&Path), edit: impl FnOnce(&Path), compile: bool) -> PullRequest {
        let root = tempfile::tempdir().unwrap();
        let (origin, author) = (root.path().join("origin.git"), root.path().join("author"));
        git(root.path(), &["init", "-q", "--bare", "-b", "main", origin.to_str().unwrap()]);
        // GitHub serves any reachable commit by sha (the action fetches the base that way).
        git(&origin, &["config", "uploadpack.allowReachableSHA1InWant", "true"]);
        git(root.path(), &["init", "-q", "-b", "main", author.to_str().unwrap()]);
        let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        std::fs::create_dir_all(author.join("profiles")).unwrap();
        std::fs::copy(repo.join("profiles/llm-inference.kdl"), author.join("profiles/llm-inference.kdl")).unwrap();
        copy_dir(&repo.join("catalogs"), &author.join("catalogs"));
        layout(&author);
        compile_ok(&author);
        git(&author, &["add", "-A"]);
        git(&author, &["commit", "-q", "-m", "base"]);
        let base = git(&author, &["rev-parse", "HEAD"]);
        git(&author, &["remote", "add", "origin", &url(&origin)]);
        git(&author, &["push", "-q", "origin", "main"]);
        git(&author, &["checkout", "-q", "-b", "change"]);
        edit(&author);
        if compile {
            // The profiles may not compile (the profile-error case): out/ is then what it was.
            let _ = gpuplan(&author, &["compile"]);
        }
        git(&author, &["add", "-A"]);
        git(&author, &["commit", "-q", "--allow-empty", "-m", "change"]);
        let head = git(&author, &["rev-parse", "HEAD"]);
        git(&author, &["push", "-q", "origin", "change:refs/pull/1/head"]);
        git(&author, &["checkout", "-q", "--detach", "main"]);
        git(&author, &["merge", "-q", "--no-ff", "-m", "Merge change into main", "change"]);
        let merge = git(&author, &["rev-parse", "HEAD"]);
        git(&author, &["push", "-q", "origin", "HEAD:refs/pull/1/merge"]);
        git(&author, &["checkout", "-q", "change"]);
        PullRequest { root, origin, base, head, merge }
    }

    /// The workspace actions/checkout@v4 makes for this pull request.
    pub fn checkout(&self) -> PathBuf {
        self.checkout_commit(&self.merge.clone())
    }

    /// The workspace of `actions/checkout` with `ref: <commit>` (depth 1).
    pub fn checkout_commit(&self, commit: &str) -> PathBuf {
        let ws = self.root.path().join("workspace");
        std::fs::create_dir_all(&ws).unwrap();
        git(&ws, &["init", "-q"]);
        git(&ws, &["remote", "add", "origin", &url(&self.origin)]);
        let refspec = format!("+{commit}:refs/remotes/pull/1/merge");
        git(&ws, &["-c", "protocol.version=2", "fetch", "-q", "--no-tags", "--prune", "--no-recurse-submodules", "--depth=1", "origin", &refspec]);
        git(&ws, &["checkout", "-q", "--force", "refs/remotes/pull/1/merge"]);
        ws
    }

    /// The `github` context of the `pull_request` event.
    pub fn github(&self) -> Value {
        json!({
            "event_name": "pull_request",
            "sha": self.merge,
            "repository": "acme/platform",
            "action_repository": "gpuplan/gpuplan",
            "action_ref": VERSION,
            "token": "ghs_test",
            "event": {"pull_request": {"number": 1, "base": {"sha": self.base}, "head": {"sha": self.head}}},
        })
    }
}

fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn compile_ok(dir: &Path) {
    let out = gpuplan(dir, &["compile"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The login GitHub shows as a comment's author for the tokens of these tests (GraphQL `viewer { login }` answers
/// the same for a GITHUB_TOKEN and an app's installation token: `github-actions[bot]`, `my-app[bot]`).
pub const BOT: &str = "github-actions[bot]";

/// The commit the stand-in release was built from, as its attestation names it (the tag's commit).
pub const RELEASE_COMMIT: &str = "5e1ea5e0000000000000000000000000000c0de1";

/// The stand-in `gh` in `dir/bin`, with the release (this test binary's gpuplan, packed as
/// .github/workflows/release.yml packs it) in `dir/releases/<VERSION>/`, its attestation in `dir/attested/` (the
/// digests GitHub's attestation store holds for `ACTION_REPOSITORY`: outside the release, which cannot replace
/// them), and the comments in `dir/comments/<id>` (the body) beside `dir/meta/<id>` (`<pull request> <author>`).
/// `dir/pulls.json` is the repository's open pull requests (`GET repos/…/pulls`).
pub fn stand_in_gh(dir: &Path) -> PathBuf {
    let (bin, release, comments) = (dir.join("bin"), dir.join("releases").join(VERSION), dir.join("comments"));
    for d in [&bin, &release, &comments, &dir.join("meta"), &dir.join("attested")] {
        std::fs::create_dir_all(d).unwrap();
    }
    if !release.join(ASSET).exists() {
        std::fs::copy(env!("CARGO_BIN_EXE_gpuplan"), release.join("gpuplan")).unwrap();
        let pack = Command::new("bash")
            .args(["-c", &format!("tar -czf {ASSET} gpuplan && rm gpuplan && sha256sum {ASSET} > {ASSET}.sha256 && sha256sum {ASSET} | cut -d' ' -f1 > ../../attested/{VERSION} && echo {RELEASE_COMMIT} > ../../attested/{VERSION}.source")])
            .current_dir(&release)
            .status()
            .unwrap();
        assert!(pack.success());
    }
    if !dir.join("pulls.json").exists() {
        std::fs::write(dir.join("pulls.json"), "[]").unwrap();
    }
    std::fs::write(bin.join("gh"), GH).unwrap();
    std::fs::set_permissions(bin.join("gh"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    bin
}

/// The stand-in's script. `api` answers as GitHub's REST and GraphQL APIs do for what the action calls (JSON out;
/// the action's own jq reads it): a token with write access may edit anyone's comment, as a maintainer can, so
/// what keeps the action off another author's comment is its own selection.
const GH: &str = r#"#!/usr/bin/env bash
set -euo pipefail
echo "gh $*" >> "$GH_STUB/calls"
login() { cat "$GH_STUB/logins/$GH_TOKEN" 2>/dev/null || echo 'github-actions[bot]'; }
case "$1" in
  release)
    [ "$2" = download ] || { echo "stand-in gh: release $2" >&2; exit 2; }
    dir="$GH_STUB/releases/$3"; shift 3; patterns=(); dest=.
    while [ $# -gt 0 ]; do case "$1" in --pattern) patterns+=("$2"); shift 2 ;; --dir) dest=$2; shift 2 ;; --repo) shift 2 ;; *) shift ;; esac; done
    for p in "${patterns[@]}"; do cp "$dir/$p" "$dest/"; done ;;
  attestation)
    # gh attestation verify FILE --repo R --cert-identity https://github.com/R/.github/workflows/release.yml@refs/tags/T
    # [--source-digest C]: verified when the store holds FILE's digest for tag T, signed by R's release workflow (and,
    # with --source-digest, built from commit C: attested/T.source).
    [ "$2" = verify ] || { echo "stand-in gh: attestation $2" >&2; exit 2; }
    file=$3; shift 3; repo=; identity=; source=
    while [ $# -gt 0 ]; do case "$1" in --repo) repo=$2; shift 2 ;; --cert-identity) identity=$2; shift 2 ;; --source-digest) source=$2; shift 2 ;; *) shift ;; esac; done
    [ -z "$source" ] || [ "$(cat "$GH_STUB/attested/${identity##*/}.source")" = "$source" ] || { echo "✗ Verification failed: the attestation's source digest is not $source" >&2; exit 1; }
    signer="https://github.com/$GH_STUB_ACTION_REPOSITORY/.github/workflows/release.yml@refs/tags/"
    [ "$repo" = "$GH_STUB_ACTION_REPOSITORY" ] && [[ "$identity" == "$signer"* ]] || { echo "stand-in gh: no attestation signed by $identity for $repo" >&2; exit 1; }
    digest=$(sha256sum "$file" | cut -d' ' -f1)
    [ "$(cat "$GH_STUB/attested/${identity#"$signer"}" 2>/dev/null)" = "$digest" ] || { echo "✗ Verification failed: no attestation matched sha256:$digest" >&2; exit 1; } ;;
  api)
    shift; method=GET; body=; path=
    while [ $# -gt 0 ]; do case "$1" in --method) method=$2; shift 2 ;; -F) body=${2#body=@}; shift 2 ;; -f) shift 2 ;; --paginate) shift ;; *) path=$1; shift ;; esac; done
    path=${path%%\?*}
    case "$method $path" in
      "GET graphql") jq -n --arg login "$(login)" '{data: {viewer: {login: $login}}}'; exit 0 ;;
      "GET repos/"*"/pulls") cat "$GH_STUB/pulls.json"; exit 0 ;;
      "GET repos/"*"/issues/"*"/comments")
        pr=${path%/comments}; pr=${pr##*/}
        for f in $(ls "$GH_STUB/comments" | sort -n); do
          read -r on author < "$GH_STUB/meta/$f"
          if [ "$on" = "$pr" ]; then jq -Rs --argjson id "$f" --arg author "$author" '{id: $id, body: ., user: {login: $author}}' < "$GH_STUB/comments/$f"; fi
        done | jq -s .
        exit 0 ;;
    esac
    if [ "$GH_TOKEN" = read-only ]; then echo "HTTP 403: Resource not accessible by integration" >&2; exit 1; fi
    case "$method $path" in
      "POST repos/"*"/issues/"*"/comments")
        pr=${path%/comments}; pr=${pr##*/}
        n=$(( $(ls "$GH_STUB/comments" | wc -l) + 1 )); cp "$body" "$GH_STUB/comments/$n"; echo "$pr $(login)" > "$GH_STUB/meta/$n" ;;
      "PATCH repos/"*"/issues/comments/"*) [ -f "$GH_STUB/comments/${path##*/}" ] || exit 1; cp "$body" "$GH_STUB/comments/${path##*/}" ;;
      *) echo "stand-in gh: api $method $path" >&2; exit 2 ;;
    esac ;;
  *) echo "stand-in gh: $1" >&2; exit 2 ;;
esac
"#;

/// The comments posted, in order.
pub fn comments(dir: &Path) -> Vec<String> {
    comments_with_authors(dir).into_iter().map(|(_, _, body)| body).collect()
}

/// The comments, in order: (pull request, author, body).
pub fn comments_with_authors(dir: &Path) -> Vec<(u32, String, String)> {
    let mut names: Vec<u32> = std::fs::read_dir(dir.join("comments")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().parse().unwrap()).collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let meta = std::fs::read_to_string(dir.join("meta").join(n.to_string())).unwrap();
            let (pr, author) = meta.trim().split_once(' ').unwrap();
            (pr.parse().unwrap(), author.to_string(), std::fs::read_to_string(dir.join("comments").join(n.to_string())).unwrap())
        })
        .collect()
}

/// A comment written on pull request `pr` by `author` before the action runs.
pub fn seed_comment(dir: &Path, pr: u32, author: &str, body: &str) {
    for d in ["comments", "meta"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    let n = std::fs::read_dir(dir.join("comments")).unwrap().count() + 1;
    std::fs::write(dir.join("comments").join(n.to_string()), body).unwrap();
    std::fs::write(dir.join("meta").join(n.to_string()), format!("{pr} {author}\n")).unwrap();
}
