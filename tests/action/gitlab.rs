//! The GitLab CI job of examples/ci/gitlab-ci.yml run the way GitLab Runner's bash shell runs a job, on the merge
//! request of `fixture::PullRequest`:
//! - the sources as the runner fetches them for a merge-request pipeline (gitlab-org/gitlab-runner
//!   shells/abstract.go, `writeRefspecFetchCmd` and `writeCheckoutCmd`; gitlab-org/gitlab
//!   app/presenters/ci/build_runner_presenter.rb, `refspecs`): `git init`, `git remote add origin`, `git fetch
//!   origin --no-recurse-submodules +refs/pipelines/<id>:refs/pipelines/<id> --depth <GIT_DEPTH> --prune --quiet`
//!   (a merge-request pipeline's ref is not a branch: only the pipeline's persistent ref is fetched), `git checkout
//!   -f -q <CI_COMMIT_SHA>`. GitLab's default GIT_DEPTH is 20; this clone has depth 1, the harder case: the
//!   merge request's diff base is not in it until the job fetches it;
//! - the job's `script:` as one bash script (gitlab-org/gitlab-runner shells/bash.go, `BashWriter.Finish`, read
//!   from the GitHub mirror gitlabhq/gitlab-runner at d79f3e7b89abceace75e2425bfe92b84ea059933; and
//!   shells/abstract.go, `writeUserScript` and `writeCommands`): the exports of the CI/CD variables and a `cd`
//!   into the project directory, then for every entry of `script` an `echo "$ <its first line>"` and the entry
//!   itself, all of it `eval`ed in ONE bash process under `set -o pipefail` and `set -o errexit`
//!   (`(trap 'exit 1' TERM; eval '<script>') < /dev/null`): variables set by one entry are seen by the next, and the
//!   first entry that fails ends the job with its exit status;
//! - the variables of a merge-request pipeline that is not a merged-results one (CI_MERGE_REQUEST_DIFF_BASE_SHA
//!   set, CI_MERGE_REQUEST_TARGET_BRANCH_SHA empty), the job's own `variables:`, and GPUPLAN_GITLAB_TOKEN when
//!   the project defines it;
//! - stand-ins on PATH for `cargo` (`install` is recorded with where it ran and its RUSTUP_TOOLCHAIN, and is a
//!   no-op: this test's gpuplan is on PATH already), `rustup` (`rustup default`: the image's toolchain), `apt-get`
//!   (a no-op: the real jq must be installed) and `curl`, which serves the token's user (docs.gitlab.com/api/users,
//!   `GET /user`) and the merge request's Notes API (docs.gitlab.com/api/notes: GET the notes with their authors,
//!   POST a note, PUT a note's body; 401 without the project token) from a state directory, and records every call.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::fixture::{self, PullRequest};
use crate::{PROFILE, edit_profile};

const JOB_FILE: &str = "examples/ci/gitlab-ci.yml";
/// The token of the project access token in GPUPLAN_GITLAB_TOKEN; the stand-in API accepts only this one.
const TOKEN: &str = "glpat-test";
const API: &str = "http://gitlab.example/api/v4";
const NOTES: &str = "http://gitlab.example/api/v4/projects/42/merge_requests/1/notes";
/// The pipeline's persistent ref (`refs/pipelines/<pipeline id>`), which the runner fetches.
const PIPELINE_REF: &str = "refs/pipelines/7";
const MARKER: &str = "<!-- gpuplan-diff -->";
/// A reviewer's note on the merge request before the job runs (note 1, by user 5): the job must leave it alone.
const REVIEWER_NOTE: &str = "Please check the budget before merging.";
/// The user of the project access token (`GET /user`): the author of the notes the job posts.
const BOT_ID: &str = "77";
const LINT: &str = "$ gpuplan lint";
const STATUS_CHECK: &str = r#"$ [ "$status" -eq 0 ] || { echo "out/ is stale or the profiles do not compile (exit $status)"; exit 1; }"#;

/// The `gpuplan` job of the example.
fn job() -> Value {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(JOB_FILE)).unwrap();
    let jobs: Value = serde_saphyr::from_str(&text).unwrap();
    jobs["gpuplan"].clone()
}

/// What a job left behind.
struct Job {
    /// The exit status of the job's script: 0 is a passed job.
    code: Option<i32>,
    /// The job log (stdout and stderr): the `$ <command>` lines and what the commands printed.
    log: String,
    /// The artifact `gpuplan-diff.md` (uploaded `when: always`), if the job wrote it.
    artifact: Option<String>,
    /// The project directory the job ran in.
    dir: PathBuf,
}

impl Job {
    /// The `$ <command>` line of the last entry of `script` that ran.
    fn last_command(&self) -> &str {
        self.log.lines().filter(|l| l.starts_with("$ ")).last().unwrap_or_else(|| panic!("no command ran:\n{}", self.log))
    }

    fn artifact(&self) -> &str {
        self.artifact.as_deref().unwrap_or_else(|| panic!("no gpuplan-diff.md:\n{}", self.log))
    }
}

/// The GitLab of the merge request: the stand-ins' bin directory and the state the stand-in API keeps (notes/<id>,
/// `calls`: one `METHOD URL` line per API call; `tools`: the cargo and apt-get calls).
struct GitLab {
    bin: PathBuf,
    state: PathBuf,
}

impl GitLab {
    fn new(pr: &PullRequest) -> GitLab {
        let (bin, state) = (pr.root.path().join("gitlab/bin"), pr.root.path().join("gitlab/state"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(state.join("notes")).unwrap();
        std::fs::write(state.join("notes/1"), REVIEWER_NOTE).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_gpuplan"), bin.join("gpuplan")).unwrap();
        for (name, script) in [("cargo", CARGO), ("rustup", RUSTUP), ("apt-get", APT_GET), ("curl", CURL)] {
            std::fs::write(bin.join(name), script).unwrap();
            std::fs::set_permissions(bin.join(name), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        }
        GitLab { bin, state }
    }

    /// The merge request's notes, by id.
    fn notes(&self) -> Vec<(u32, String)> {
        let mut notes: Vec<(u32, String)> = std::fs::read_dir(self.state.join("notes"))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.file_name().to_string_lossy().parse().unwrap(), std::fs::read_to_string(e.path()).unwrap())
            })
            .collect();
        notes.sort();
        notes
    }

    /// The one note of gpuplan (body starting with the marker), the reviewer's note untouched beside it.
    fn only_gpuplan_note(&self, job: &Job) -> String {
        let notes = self.notes();
        assert_eq!(notes.first(), Some(&(1, REVIEWER_NOTE.to_string())), "the reviewer's note is untouched");
        let ours: Vec<&(u32, String)> = notes.iter().filter(|(_, body)| body.starts_with(MARKER)).collect();
        assert_eq!(ours.len(), 1, "one gpuplan note: {notes:?}\n{}", job.log);
        assert_eq!(notes.len(), 2, "no other note: {notes:?}");
        ours[0].1.clone()
    }

    /// The Notes API calls, `METHOD URL` each, in order.
    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.state.join("calls")).map(|t| t.lines().map(str::to_string).collect()).unwrap_or_default()
    }
}

/// `cargo install …` (the job installs gpuplan): recorded with its directory and toolchain; the gpuplan under test
/// is on PATH already.
const CARGO: &str = r#"#!/usr/bin/env bash
echo "cargo $* (cwd=$PWD RUSTUP_TOOLCHAIN=${RUSTUP_TOOLCHAIN:-})" >> "$GITLAB_STUB/tools"
[ "${1:-}" = install ] || { echo "stand-in cargo: $*" >&2; exit 2; }
"#;

/// `rustup default`: the rust image's one toolchain, as rustup prints it.
const RUSTUP: &str = r#"#!/usr/bin/env bash
[ "$*" = default ] || { echo "stand-in rustup: $*" >&2; exit 2; }
echo "1.95.0-x86_64-unknown-linux-gnu (default)"
"#;

/// `apt-get update` / `apt-get install jq`: recorded; the test needs the real jq installed.
const APT_GET: &str = r#"#!/usr/bin/env bash
echo "apt-get $*" >> "$GITLAB_STUB/tools"
"#;

/// The Notes API of merge request 1 of project 42 as curl reaches it: GET (`sort=asc`: oldest first, else newest
/// first, as GitLab orders), POST and PUT with a JSON body (`Content-Type: application/json`, else GitLab reads
/// no `body`: 400); 401 unless `PRIVATE-TOKEN` is the project token; `-f`: no output and exit 22 on an HTTP error.
const CURL: &str = r#"#!/usr/bin/env bash
set -euo pipefail
method=; token=; type=; data=; url=; fail=false; silent=false
while [ $# -gt 0 ]; do
  case "$1" in
    -sf|-fs) fail=true; silent=true; shift ;;
    -s|--silent) silent=true; shift ;;
    -f|--fail) fail=true; shift ;;
    -X|--request) method=$2; shift 2 ;;
    -H|--header)
      case "$2" in "PRIVATE-TOKEN: "*) token=${2#PRIVATE-TOKEN: } ;; "Content-Type: "*) type=${2#Content-Type: } ;; esac
      shift 2 ;;
    --data-binary) data=$2; shift 2 ;;
    -*) echo "stand-in curl: unknown option $1" >&2; exit 2 ;;
    *) url=$1; shift ;;
  esac
done
[ -n "$method" ] || { [ -n "$data" ] && method=POST || method=GET; }
echo "$method $url" >> "$GITLAB_STUB/calls"
notes="$GITLAB_STUB/notes"
http_error() {
  $silent || echo "curl: (22) The requested URL returned error: $1" >&2
  if $fail; then exit 22; fi
  echo "$2"; exit 0
}
[ "$token" = glpat-test ] || http_error 401 '{"message":"401 Unauthorized"}'
path=${url%%\?*}; query=${url#"$path"}
body_of() {
  [ "$type" = application/json ] || http_error 400 '{"error":"body is missing"}'
  case "$data" in @*) ;; *) echo "stand-in curl: the body is not a file: $data" >&2; exit 2 ;; esac
  jq -e '.body | type == "string"' < "${data#@}" > /dev/null || http_error 400 '{"error":"body is missing"}'
  jq -j '.body' < "${data#@}" > "$1"
}
note() { jq -cRs --argjson id "$1" --argjson author "$(cat "$GITLAB_STUB/authors/$1" 2>/dev/null || echo 5)" '{id: $id, body: ., author: {id: $author}}' < "$notes/$1"; }
case "$method $path" in
  "GET $GITLAB_API/user") echo '{"id": 77, "username": "project_42_bot_1"}' ;;
  "GET $GITLAB_NOTES")
    order=(-rn); case "$query" in *sort=asc*) order=(-n) ;; esac
    # Pages as the Notes API gives them (`per_page`, default 20; `page`, default 1).
    per_page=$(printf '%s' "$query" | sed -n 's/.*[?&]per_page=\([0-9]*\).*/\1/p'); per_page=${per_page:-20}
    page=$(printf '%s' "$query" | sed -n 's/.*[?&]page=\([0-9]*\).*/\1/p'); page=${page:-1}
    for id in $(ls "$notes" | sort "${order[@]}" | tail -n +$(( (page - 1) * per_page + 1 )) | head -n "$per_page"); do note "$id"; done | jq -cs . ;;
  "POST $GITLAB_NOTES")
    id=$(( $(ls "$notes" | sort -n | tail -1) + 1 ))
    body_of "$notes/$id"; mkdir -p "$GITLAB_STUB/authors"; echo 77 > "$GITLAB_STUB/authors/$id"; note "$id" ;;
  "PUT $GITLAB_NOTES/"*)
    id=${path##*/}
    [ -f "$notes/$id" ] || http_error 404 '{"message":"404 Not found"}'
    body_of "$notes/$id"; note "$id" ;;
  *) http_error 404 '{"error":"404 Not Found"}' ;;
esac
"#;

/// The project directory of a new job: the runner's depth-1 fetch of the pipeline's ref, the head checked out.
fn clone_for_job(pr: &PullRequest, name: &str) -> PathBuf {
    fixture::git(&pr.origin, &["update-ref", PIPELINE_REF, &pr.head]);
    let dir = pr.root.path().join("builds").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    fixture::git(&dir, &["init", "-q"]);
    fixture::git(&dir, &["remote", "add", "origin", &format!("file://{}", pr.origin.display())]);
    let refspec = format!("+{PIPELINE_REF}:{PIPELINE_REF}");
    fixture::git(&dir, &["fetch", "origin", "--no-recurse-submodules", &refspec, "--depth", "1", "--prune", "--quiet"]);
    fixture::git(&dir, &["-c", "submodule.recurse=false", "checkout", "-f", "-q", &pr.head]);
    assert!(!has_commit(&dir, &pr.base), "the depth-1 clone holds the base already: the case is not the hard one");
    dir
}

fn has_commit(dir: &Path, sha: &str) -> bool {
    let mut git = Command::new("git");
    git.args(["cat-file", "-e", &format!("{sha}^{{commit}}")]).current_dir(dir).stderr(Stdio::null());
    git.env("GIT_CONFIG_NOSYSTEM", "1").env("GIT_CONFIG_GLOBAL", "/dev/null").status().unwrap().success()
}

/// A shell word (single quotes; the runner writes `$'…'`, the same string to bash).
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The script GitLab Runner's bash shell makes of the job (shells/bash.go, `BashWriter.Finish`).
fn runner_script(job: &Value, variables: &[(String, String)], dir: &Path) -> String {
    let mut user = String::new();
    for (k, v) in variables {
        user.push_str(&format!("export {k}={}\n", quote(v)));
    }
    user.push_str(&format!("cd {}\n", quote(&dir.display().to_string())));
    for entry in job["script"].as_array().expect("script:") {
        let command = entry.as_str().expect("a script entry is a string").trim();
        let notice = match command.split_once('\n') {
            Some((first, _)) => format!("$ {first} # collapsed multi-line command"),
            None => format!("$ {command}"),
        };
        user.push_str(&format!("echo {}\n{command}\n", quote(&notice)));
    }
    format!(
        "#!/usr/bin/env bash\n\ntrap 'exit 1' TERM\n\ncase \"$(set -o)\" in *\"pipefail\"*) set -o pipefail;; esac; set -o errexit\nset +o noclobber\n(trap 'exit 1' TERM; eval {}) < /dev/null\nexit 0\n",
        quote(&user)
    )
}

/// The job on a new clone named `name`, with GPUPLAN_GITLAB_TOKEN = `token` when the project defines it.
fn run_job(pr: &PullRequest, gitlab: &GitLab, token: Option<&str>, name: &str) -> Job {
    let jq = Command::new("jq").arg("--version").output();
    assert!(jq.is_ok_and(|o| o.status.success()), "jq is not installed: the GitLab job's script needs it (apt-get install jq)");
    let job = job();
    let dir = clone_for_job(pr, name);
    let mut variables: Vec<(String, String)> = [
        ("CI", "true"),
        ("GITLAB_CI", "true"),
        ("CI_SERVER_URL", "http://gitlab.example"),
        ("CI_API_V4_URL", API),
        ("CI_PROJECT_ID", "42"),
        ("CI_PROJECT_DIR", &dir.display().to_string()),
        ("CI_JOB_NAME", "gpuplan"),
        ("CI_PIPELINE_ID", "7"),
        ("CI_PIPELINE_SOURCE", "merge_request_event"),
        ("CI_COMMIT_SHA", &pr.head),
        ("CI_COMMIT_REF_NAME", "change"),
        ("CI_MERGE_REQUEST_IID", "1"),
        ("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "change"),
        ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main"),
        ("CI_MERGE_REQUEST_DIFF_BASE_SHA", &pr.base),
        // Set in merged-results pipelines only.
        ("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", ""),
        ("CI_MERGE_REQUEST_TARGET_BRANCH_SHA", ""),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    if let Some(token) = token {
        variables.push(("GPUPLAN_GITLAB_TOKEN".into(), token.into()));
    }
    for (k, v) in job["variables"].as_object().into_iter().flatten() {
        variables.push((k.clone(), v.as_str().expect("variables are strings").to_string()));
    }
    let script = pr.root.path().join(format!("gitlab/{name}.sh"));
    std::fs::write(&script, runner_script(&job, &variables, &dir)).unwrap();
    let home = pr.root.path().join("gitlab/home");
    std::fs::create_dir_all(&home).unwrap();
    let out = Command::new("bash")
        .arg(&script)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .env_clear()
        .env("HOME", &home)
        .env("PATH", format!("{}:{}", gitlab.bin.display(), std::env::var("PATH").unwrap()))
        .env("GITLAB_STUB", &gitlab.state)
        .env("GITLAB_NOTES", NOTES)
        .env("GITLAB_API", API)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    // The artifact the job uploads, failed or not.
    assert_eq!(job["artifacts"]["when"], "always", "a failed job's report is its artifact");
    let path = job["artifacts"]["paths"][0].as_str().expect("artifacts.paths");
    assert_eq!(path, "gpuplan-diff.md");
    let artifact = std::fs::read_to_string(dir.join(path)).ok();
    Job { code: out.status.code(), log, artifact, dir }
}

fn budget_edit(to: &'static str) -> impl FnOnce(&Path) {
    edit_profile("budget usd-per-hour=150", to)
}

/// The job installs gpuplan and jq as the example says, and the base was fetched into the depth-1 clone.
fn assert_job_setup(pr: &PullRequest, gitlab: &GitLab, job: &Job) {
    let tools = std::fs::read_to_string(gitlab.state.join("tools")).unwrap_or_default();
    // Built from outside the merge request's checkout, with the image's toolchain named: not its rust-toolchain.toml.
    assert!(tools.contains("cargo install --locked --git https://github.com/gpuplan/gpuplan --tag v0.1.0 (cwd=/tmp RUSTUP_TOOLCHAIN=1.95.0-x86_64-unknown-linux-gnu)"), "{tools}");
    assert!(tools.contains("apt-get install -y -qq jq"), "{tools}");
    assert!(job.log.contains(&format!("gpuplan {}", env!("CARGO_PKG_VERSION"))), "gpuplan --version ran:\n{}", job.log);
    assert!(has_commit(&job.dir, &pr.base), "the job fetched the merge request's diff base:\n{}", job.log);
}

/// The job passes its checks and ends with the lint, which shows the example profile's GP018 warning (kept on
/// purpose: `requests cpu="4"`, "see lint GP018") without failing the merge request on it.
fn assert_passes_with_the_lint_shown(job: &Job) {
    assert_eq!(job.code, Some(0), "{}", job.log);
    assert_eq!(job.last_command(), LINT, "the job got to the lint:\n{}", job.log);
    assert!(job.log.contains("GP018"), "{}", job.log);
    assert!(!job.log.lines().any(|l| l.starts_with("out/ is stale")), "the status check passed:\n{}", job.log);
}

#[test]
fn the_documented_flow_notes_what_the_merge_request_changes() {
    let pr = PullRequest::new(budget_edit("budget usd-per-hour=100"), true);
    let gitlab = GitLab::new(&pr);
    let job = run_job(&pr, &gitlab, Some(TOKEN), "1");
    assert_job_setup(&pr, &gitlab, &job);
    assert_passes_with_the_lint_shown(&job);
    let note = gitlab.only_gpuplan_note(&job);
    assert_eq!(note, job.artifact(), "the note is the artifact");
    assert!(note.starts_with("<!-- gpuplan-diff -->\n## gpuplan: changes to out/"), "{note}");
    // The budget and the limits it sizes, before → after.
    assert!(note.contains("#### Profile `llm-inference`: budget $150.00/h → $100.00/h"), "{note}");
    assert!(note.contains("| ✏️ | NodePool `llm-inference-spot` | limit nvidia.com/gpu 43→29,"), "{note}");
    assert!(!note.contains("is not what its profiles compile to"), "{note}");
    let query = "?per_page=100&page=1&sort=asc&order_by=created_at";
    assert_eq!(gitlab.calls(), [format!("GET {API}/user"), format!("GET {NOTES}{query}"), format!("POST {NOTES}")]);
}

#[test]
fn a_stale_merge_request_fails_and_its_note_still_shows_the_change() {
    let pr = PullRequest::new(budget_edit("budget usd-per-hour=100"), false);
    let gitlab = GitLab::new(&pr);
    let job = run_job(&pr, &gitlab, Some(TOKEN), "1");
    assert_job_setup(&pr, &gitlab, &job);
    assert_eq!(job.code, Some(1), "{}", job.log);
    assert_eq!(job.last_command(), STATUS_CHECK, "{}", job.log);
    assert!(job.log.contains("out/ is stale or the profiles do not compile (exit 1)"), "{}", job.log);
    let note = gitlab.only_gpuplan_note(&job);
    assert_eq!(note, job.artifact());
    assert!(note.contains("is not what its profiles compile to"), "the note says the commit is stale:\n{note}");
    assert!(note.contains("#### Profile `llm-inference`: budget $150.00/h → $100.00/h"), "and still shows what the change does:\n{note}");
}

#[test]
fn a_profile_that_does_not_compile_gets_a_note_saying_so() {
    let pr = PullRequest::new(budget_edit("budget usd-per-hour=-5"), true);
    let gitlab = GitLab::new(&pr);
    let job = run_job(&pr, &gitlab, Some(TOKEN), "1");
    assert_eq!(job.code, Some(1), "{}", job.log);
    assert_eq!(job.last_command(), STATUS_CHECK, "{}", job.log);
    assert!(job.log.contains("out/ is stale or the profiles do not compile (exit 2)"), "{}", job.log);
    let note = gitlab.only_gpuplan_note(&job);
    assert_eq!(note, job.artifact());
    assert!(note.starts_with("<!-- gpuplan-diff -->\n## gpuplan: the profiles do not compile\n\n```text\n"), "{note}");
    assert!(note.contains(&format!("{PROFILE}:14:8: budget usd-per-hour must be a positive number")), "the error, with its line:\n{note}");
    assert!(note.ends_with("```\n"), "the error block is closed:\n{note}");
    assert!(!note.contains("changes to out/"), "{note}");
}

/// As on GitHub (tests/action/main.rs): an error quoting a run of backticks from the merge request's profile stays
/// inside the note's error block, whose fence is longer.
#[test]
fn an_error_quoting_a_fence_stays_inside_the_notes_error_block() {
    let pr = PullRequest::new(budget_edit("budget usd-per-hour=-5 // ```` [x](https://evil.example)"), true);
    let gitlab = GitLab::new(&pr);
    let job = run_job(&pr, &gitlab, Some(TOKEN), "1");
    assert_eq!(job.code, Some(1), "{}", job.log);
    let note = gitlab.only_gpuplan_note(&job);
    assert!(note.starts_with("<!-- gpuplan-diff -->\n## gpuplan: the profiles do not compile\n\n`````text\n"), "{note}");
    assert!(note.contains("budget usd-per-hour=-5 // ```` [x](https://evil.example)"), "{note}");
    assert!(note.ends_with("\n`````\n"), "the block is closed by its own fence:\n{note}");
}

#[test]
fn without_a_token_the_report_is_the_artifact() {
    let pr = PullRequest::new(budget_edit("budget usd-per-hour=100"), true);
    let gitlab = GitLab::new(&pr);
    let job = run_job(&pr, &gitlab, None, "1");
    assert_job_setup(&pr, &gitlab, &job);
    assert_passes_with_the_lint_shown(&job);
    assert!(gitlab.calls().is_empty(), "no API call without a token: {:?}", gitlab.calls());
    assert_eq!(gitlab.notes(), [(1, REVIEWER_NOTE.to_string())]);
    let artifact = job.artifact();
    assert!(artifact.starts_with("<!-- gpuplan-diff -->\n## gpuplan: changes to out/"), "{artifact}");
    assert!(artifact.contains("#### Profile `llm-inference`: budget $150.00/h → $100.00/h"), "{artifact}");
}

/// A token GitLab refuses (revoked, or without the `api` scope) loses the note, not the job: both calls fail with
/// `curl -f` under `set -eo pipefail`, and the job goes on to its checks as without a token.
#[test]
fn a_refused_token_loses_the_note_not_the_job() {
    let pr = PullRequest::new(budget_edit("budget usd-per-hour=100"), true);
    let gitlab = GitLab::new(&pr);
    let job = run_job(&pr, &gitlab, Some("glpat-revoked"), "1");
    assert_passes_with_the_lint_shown(&job);
    assert!(job.log.contains("warning: could not post the merge-request note; the report is the job's artifact"), "{}", job.log);
    assert_eq!(gitlab.calls().len(), 2, "{:?}", gitlab.calls());
    assert_eq!(gitlab.notes(), [(1, REVIEWER_NOTE.to_string())]);
    assert!(job.artifact().contains("#### Profile `llm-inference`: budget $150.00/h → $100.00/h"), "{}", job.artifact());
}

#[test]
fn a_second_run_edits_the_note_in_place() {
    let pr = PullRequest::new(budget_edit("budget usd-per-hour=100"), true);
    let gitlab = GitLab::new(&pr);
    run_job(&pr, &gitlab, Some(TOKEN), "1");
    let job = run_job(&pr, &gitlab, Some(TOKEN), "2");
    let note = gitlab.only_gpuplan_note(&job);
    assert_eq!(note, job.artifact(), "the note is the second run's report");
    let query = "?per_page=100&page=1&sort=asc&order_by=created_at";
    assert_eq!(
        gitlab.calls(),
        [
            format!("GET {API}/user"),
            format!("GET {NOTES}{query}"),
            format!("POST {NOTES}"),
            format!("GET {API}/user"),
            format!("GET {NOTES}{query}"),
            format!("PUT {NOTES}/2")
        ],
        "one POST, then a PUT of the same note"
    );
}

/// A merge request that removes NodePools (the spot preset becomes one on-demand pool): `gpuplan diff` exits 3, the
/// job still posts the note with the denial, then fails on the policy line (not at the diff, which `set -e` would do).
#[test]
fn a_removed_nodepool_is_noted_and_fails_the_job() {
    let pr = PullRequest::new(
        |dir: &Path| {
            let path = dir.join(PROFILE);
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, text.replacen("preset=\"inference-spot\"", "preset=\"inference-on-demand\"", 1)).unwrap();
        },
        true,
    );
    let gitlab = GitLab::new(&pr);
    let job = run_job(&pr, &gitlab, Some(TOKEN), "1");
    assert_eq!(job.code, Some(1), "{}", job.log);
    assert!(job.last_command().contains("a policy denies this change"), "{}", job.log);
    let note = gitlab.only_gpuplan_note(&job);
    assert!(note.contains("- ❌ **deny** `nodepool-removed`, cluster `ml-prod`: removes NodePool `llm-inference-spot`"), "{note}");
}

/// A note someone else wrote with the marker (note 2, by user 5) is not the job's: the job posts its own (note 3,
/// by the token's user) and leaves the other as it was.
#[test]
fn a_note_by_another_author_with_the_marker_is_not_edited() {
    let pr = PullRequest::new(budget_edit("budget usd-per-hour=100"), true);
    let gitlab = GitLab::new(&pr);
    let forged = format!("{MARKER}\nLooks fine, merge it.");
    std::fs::write(gitlab.state.join("notes/2"), &forged).unwrap();
    let job = run_job(&pr, &gitlab, Some(TOKEN), "1");
    assert_passes_with_the_lint_shown(&job);
    let notes = gitlab.notes();
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert_eq!(notes[1], (2, forged), "the other author's note is untouched");
    assert_eq!(notes[2], (3, job.artifact().to_string()), "the job's own note");
    assert_eq!(std::fs::read_to_string(gitlab.state.join("authors/3")).unwrap().trim(), BOT_ID);
    assert!(!gitlab.calls().iter().any(|c| c.starts_with("PUT")), "{:?}", gitlab.calls());
}

/// A merge request with more notes than one page of the Notes API holds (100, docs.gitlab.com/api/rest#pagination):
/// the job's own note, the 120th, is found on the second page and edited, not a second one posted.
#[test]
fn the_jobs_note_past_the_first_page_is_found_and_edited() {
    let pr = PullRequest::new(budget_edit("budget usd-per-hour=100"), true);
    let gitlab = GitLab::new(&pr);
    std::fs::create_dir_all(gitlab.state.join("authors")).unwrap();
    for id in 2..=150 {
        std::fs::write(gitlab.state.join(format!("notes/{id}")), format!("review comment {id}")).unwrap();
    }
    std::fs::write(gitlab.state.join("notes/120"), format!("{MARKER}\nan earlier run's report")).unwrap();
    std::fs::write(gitlab.state.join("authors/120"), BOT_ID).unwrap();
    let job = run_job(&pr, &gitlab, Some(TOKEN), "1");
    assert_passes_with_the_lint_shown(&job);
    let notes = gitlab.notes();
    assert_eq!(notes.len(), 150, "no second note posted");
    assert_eq!(notes.iter().find(|(id, _)| *id == 120).map(|(_, body)| body.as_str()), Some(job.artifact()), "the job's note, edited");
    assert!(notes.iter().filter(|(id, _)| *id != 120).all(|(_, body)| !body.starts_with(MARKER)), "no other note holds the marker");
    let page = |n: u32| format!("GET {NOTES}?per_page=100&page={n}&sort=asc&order_by=created_at");
    assert_eq!(gitlab.calls(), [format!("GET {API}/user"), page(1), page(2), format!("PUT {NOTES}/120")]);
}
