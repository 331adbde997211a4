//! action.yml run the way a GitHub runner runs it, on pull requests as GitHub presents them: a depth-1 checkout of
//! the test merge commit `refs/pull/1/merge` of a local origin (see `fixture`), each step executed by `runner`
//! with the `if:` and `${{ }}` expressions evaluated by `expr`, and a stand-in `gh` that installs the release and
//! records the comment. The cases are the ways a pull request reaches review: the documented flow (edit a profile,
//! compile, commit both), a stale pull request, a profile that does not compile, a fork's read-only token, a
//! change that leaves out/ as it was, and a second push.

mod comment;
mod confinement;
mod expr;
mod fixture;
mod gitlab;
mod install;
mod runner;

use std::collections::BTreeMap;
use std::path::Path;

use fixture::{PullRequest, VERSION, comments, stand_in_gh};
use runner::{Run, Runner};

const PROFILE: &str = "profiles/llm-inference.kdl";

fn action() -> serde_json::Value {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

fn edit_profile(from: &'static str, to: &'static str) -> impl FnOnce(&Path) {
    move |dir: &Path| {
        let path = dir.join(PROFILE);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{PROFILE} has no `{from}`");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    }
}

/// The action with the example workflow's inputs (examples/ci/github-workflow.yml), `token` as the token.
fn run_action(pr: &PullRequest, workspace: &Path, token: &str) -> Run {
    run_action_with(pr, workspace, token, &[])
}

/// The action with the example workflow's inputs and `more`.
fn run_action_with(pr: &PullRequest, workspace: &Path, token: &str, more: &[(&str, &str)]) -> Run {
    runner(pr, workspace, token, more).run(&action())
}

/// The runner of [`run_action_with`], for a case to change (the event, the PATH, the action's directory) first.
fn runner(pr: &PullRequest, workspace: &Path, token: &str, more: &[(&str, &str)]) -> Runner {
    let stub = pr.root.path().join("gh");
    let bin = stand_in_gh(&stub);
    let with: BTreeMap<String, String> = [("version", VERSION), ("profiles", "profiles"), ("out", "out"), ("github-token", token)]
        .into_iter()
        .chain(more.iter().copied())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let runner = Runner {
        workspace: workspace.to_path_buf(),
        home: pr.root.path().join("runner"),
        github: pr.github(),
        with,
        path: vec![bin],
        // The clock of the comment's footer (catalog age): a fixed day, so the snapshots hold on any day.
        env: vec![
            ("GH_STUB".into(), stub.display().to_string()),
            ("GH_STUB_ACTION_REPOSITORY".into(), "gpuplan/gpuplan".into()),
            ("SOURCE_DATE_EPOCH".into(), "1795000000".into()),
        ],
        // The action as the runner checks it out for `uses: gpuplan/gpuplan@…`: outside the workspace.
        action_path: Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf(),
    };
    std::fs::create_dir_all(&runner.home).unwrap();
    runner
}

fn only_comment(pr: &PullRequest, run: &Run) -> String {
    let posted = comments(&pr.root.path().join("gh"));
    assert_eq!(posted.len(), 1, "one comment: {posted:?}\n{}", run.log);
    posted.into_iter().next().unwrap()
}

#[test]
fn the_documented_flow_comments_what_the_pull_request_changes() {
    let pr = PullRequest::new(edit_profile("budget usd-per-hour=150", "budget usd-per-hour=100"), true);
    let ws = pr.checkout();
    let run = run_action(&pr, &ws, "ghs_test");
    assert!(!run.failed, "{}", run.log);
    let comment = only_comment(&pr, &run);
    assert!(comment.starts_with("<!-- gpuplan-diff -->\n## gpuplan: changes to out/"), "{comment}");
    assert!(!comment.contains("no changes to out/"), "the review is empty again:\n{comment}");
    // The budget and the limits it sizes, before → after.
    assert!(comment.contains("| Budget | $150.00/h | $100.00/h | **-$50.00/h** (-$36,500.00/month) |"), "{comment}");
    assert!(comment.contains("| ✏️ | NodePool `llm-inference-spot` | limit nvidia.com/gpu 43→29,"), "{comment}");
    assert!(comment.contains("| **Worst case** (steady state) | $147.18/h | $99.27/h | **-$47.91/h** (-$34,974.30/month) |"), "{comment}");
    // No demand file: nothing is called expected (the at-limit figure is a reference, not a forecast).
    assert!(!comment.to_lowercase().contains("expected"), "{comment}");
    assert!(run.summary.contains(comment.trim_start_matches("<!-- gpuplan-diff -->\n")), "the job summary has the comment");
    assert_eq!(run.outcome("Fetch the pull request's base"), "success");
    assert_eq!(run.outcome("Fail when out/ is stale"), "skipped");
    insta::assert_snapshot!("documented_flow", comment);
}

/// A repository with a demand file (gpuplan.demand.kdl): base and head are each compiled and replayed on the same
/// seeds, and the comment says what the change is expected to cost per month, with its range over the seeds and the
/// assumptions named. Here the change doubles llm-server's minimum replicas, which the demand file leaves at their
/// minimum: more nodes run, so the expected cost rises.
#[test]
fn with_a_demand_file_the_comment_shows_the_expected_change_and_its_range() {
    let demand = |dir: &Path| std::fs::write(dir.join("gpuplan.demand.kdl"), "horizon \"6h\"\nseeds 2\ncluster \"ml-prod\" {\n    spot rate=\"30%/month\"\n}\n").unwrap();
    let pr = PullRequest::with_layout(demand, edit_profile("replicas min=2 max=12", "replicas min=4 max=12"), true);
    let run = run_action(&pr, &pr.checkout(), "ghs_test");
    assert!(!run.failed, "{}", run.log);
    let comment = only_comment(&pr, &run);
    assert!(comment.contains("#### Expected cost (forecast: 6 hours, 2 seeds)"), "{comment}");
    let line = comment.lines().find(|l| l.starts_with("- `ml-prod`: **")).unwrap_or_else(|| panic!("no expected line:\n{comment}"));
    assert!(line.starts_with("- `ml-prod`: **+$") && line.contains("/month expected (range over 2 seeds: +$"), "{line}");
    assert!(comment.contains("<details><summary>Assumptions (<a href=\"docs/src/forecast.md\">the forecast</a>; demand: <code>gpuplan.demand.kdl</code>)</summary>"), "{comment}");
}

/// A repository whose gpuplan.kdl moves the profiles and out/: the action's inputs left empty pass no flag, so the
/// action reads the directories the config names, as a developer's `gpuplan compile` does.
#[test]
fn empty_inputs_follow_the_repository_config() {
    let moved = "capacity/profiles/llm-inference.kdl";
    let layout = |dir: &Path| {
        std::fs::create_dir_all(dir.join("capacity")).unwrap();
        std::fs::rename(dir.join("profiles"), dir.join("capacity/profiles")).unwrap();
        std::fs::write(dir.join("gpuplan.kdl"), "profiles \"capacity/profiles\"\nout \"capacity/out\"\n").unwrap();
    };
    let edit = move |dir: &Path| {
        let text = std::fs::read_to_string(dir.join(moved)).unwrap();
        std::fs::write(dir.join(moved), text.replacen("budget usd-per-hour=150", "budget usd-per-hour=100", 1)).unwrap();
    };
    let pr = PullRequest::with_layout(layout, edit, true);
    let ws = pr.checkout();
    assert!(ws.join("capacity/out/ml-prod").is_dir() && !ws.join("out").exists(), "out/ is where gpuplan.kdl says");
    let run = run_action_with(&pr, &ws, "ghs_test", &[("profiles", ""), ("out", "")]);
    assert!(!run.failed, "{}", run.log);
    assert_eq!(run.outcome("Fail when out/ is stale"), "skipped", "{}", run.log);
    assert!(only_comment(&pr, &run).contains("| Budget | $150.00/h | $100.00/h | **-$50.00/h** (-$36,500.00/month) |"), "{}", run.log);
}

/// A workflow that checks out the pull request's head (`ref: ${{ github.event.pull_request.head.sha }}`) has no
/// test merge commit: the base is the event's.
#[test]
fn a_checkout_of_the_head_compares_with_the_events_base() {
    let pr = PullRequest::new(edit_profile("budget usd-per-hour=150", "budget usd-per-hour=100"), true);
    let run = run_action(&pr, &pr.checkout_commit(&pr.head), "ghs_test");
    assert!(!run.failed, "{}", run.log);
    assert!(only_comment(&pr, &run).contains("| Budget | $150.00/h | $100.00/h | **-$50.00/h** (-$36,500.00/month) |"), "{}", run.log);
}

#[test]
fn a_stale_pull_request_fails_and_its_comment_still_shows_the_change() {
    let pr = PullRequest::new(edit_profile("budget usd-per-hour=150", "budget usd-per-hour=100"), false);
    let run = run_action(&pr, &pr.checkout(), "ghs_test");
    assert!(run.failed && run.outcome("Fail when out/ is stale") == "failure", "{}", run.log);
    let comment = only_comment(&pr, &run);
    assert!(comment.contains("is not what its profiles compile to"), "the comment says the commit is stale:\n{comment}");
    assert!(comment.contains("#### Profile `llm-inference`: budget $150.00/h → $100.00/h"), "and still shows what the change does:\n{comment}");
    assert!(run.annotations.iter().any(|a| a.starts_with("::error::out/ is stale")), "{:?}", run.annotations);
    insta::assert_snapshot!("stale", comment);
}

#[test]
fn a_profile_that_does_not_compile_gets_a_comment_saying_so() {
    let pr = PullRequest::new(edit_profile("budget usd-per-hour=150", "budget usd-per-hour=-5"), true);
    let run = run_action(&pr, &pr.checkout(), "ghs_test");
    assert!(run.failed && run.outcome("Fail when the profiles do not compile") == "failure", "{}", run.log);
    assert_eq!(run.outcome("Post or update the pull-request comment"), "success", "a failed compile still comments");
    let comment = only_comment(&pr, &run);
    assert!(comment.contains("## gpuplan: the profiles do not compile"), "{comment}");
    assert!(comment.contains("profiles/llm-inference.kdl:14:8: budget usd-per-hour must be a positive number"), "the error, with its line:\n{comment}");
    assert!(!comment.contains("::error"), "the annotations are not in the comment:\n{comment}");
    // The annotation on the line of the profile that the error names, as the runner reads it.
    let annotation = run.annotations.iter().find(|a| a.starts_with("::error file=profiles/llm-inference.kdl,line=")).unwrap_or_else(|| panic!("{:?}", run.annotations));
    assert!(annotation.contains(",title=E0"), "{annotation}");
    insta::assert_snapshot!("does_not_compile", comment);
}

/// The errors quote the pull request's own lines (miette's excerpt of the profile): a line holding a run of
/// backticks cannot close the comment's error block and make what follows Markdown (CommonMark 0.31, "Fenced code
/// blocks": the closing fence is at least as long as the opening one).
#[test]
fn an_error_quoting_a_fence_stays_inside_the_comments_error_block() {
    let pr = PullRequest::new(edit_profile("budget usd-per-hour=150", "budget usd-per-hour=-5 // ```` <b>[x](https://evil.example)</b>"), true);
    let run = run_action(&pr, &pr.checkout(), "ghs_test");
    assert!(run.failed && run.outcome("Fail when the profiles do not compile") == "failure", "{}", run.log);
    let comment = only_comment(&pr, &run);
    let (_, block) = comment.split_once("\n`````text\n").unwrap_or_else(|| panic!("a fence longer than the quoted one:\n{comment}"));
    let (inside, after) = block.split_once("\n`````\n").unwrap_or_else(|| panic!("the block is closed by its own fence:\n{comment}"));
    assert!(inside.contains("budget usd-per-hour=-5 // ```` <b>[x](https://evil.example)</b>"), "the quoted line, inside the block:\n{comment}");
    assert!(!after.contains("evil.example"), "nothing of the quoted line after the block:\n{comment}");
}

#[test]
fn a_forks_read_only_token_loses_the_comment_not_the_job() {
    let pr = PullRequest::new(edit_profile("budget usd-per-hour=150", "budget usd-per-hour=100"), true);
    let run = run_action(&pr, &pr.checkout(), "read-only");
    assert!(!run.failed, "the comment's refusal failed the job:\n{}", run.log);
    assert!(comments(&pr.root.path().join("gh")).is_empty());
    assert!(run.summary.contains("#### Profile `llm-inference`: budget $150.00/h → $100.00/h"), "the report is in the job summary:\n{}", run.summary);
    assert!(run.annotations.iter().any(|a| a.starts_with("::warning title=gpuplan::could not post")), "{:?}", run.annotations);
}

#[test]
fn a_change_that_leaves_out_as_it_was_says_so() {
    let pr = PullRequest::new(edit_profile("// Worst case of both pools", "// The worst case of both pools"), true);
    let run = run_action(&pr, &pr.checkout(), "ghs_test");
    assert!(!run.failed, "{}", run.log);
    assert_eq!(only_comment(&pr, &run), "<!-- gpuplan-diff -->\n## gpuplan: no changes to out/\n");
}

#[test]
fn a_second_run_edits_the_comment_in_place() {
    let pr = PullRequest::new(edit_profile("budget usd-per-hour=150", "budget usd-per-hour=100"), true);
    let ws = pr.checkout();
    run_action(&pr, &ws, "ghs_test");
    let run = run_action(&pr, &ws, "ghs_test");
    only_comment(&pr, &run);
    let calls = std::fs::read_to_string(pr.root.path().join("gh/calls")).unwrap();
    assert_eq!(calls.matches("--method POST").count(), 1, "{calls}");
    assert_eq!(calls.matches("--method PATCH").count(), 1, "{calls}");
}

/// The base the action compares with is the merge commit's first parent, which the depth-1 checkout does not
/// hold until the action fetches it; without the fetch, `diff --base` says which command brings it (exit 2).
#[test]
fn an_unfetched_base_is_exit_2_with_the_fetch_command() {
    let pr = PullRequest::new(edit_profile("budget usd-per-hour=150", "budget usd-per-hour=100"), true);
    let ws = pr.checkout();
    let out = fixture::gpuplan(&ws, &["diff", "--base", &pr.base, "--format", "markdown"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("shallow clone") && stderr.contains(&format!("git fetch --no-tags --depth=1 origin {}", pr.base)), "{stderr}");
    fixture::git(&ws, &["fetch", "-q", "--no-tags", "--depth=1", "origin", &pr.base]);
    let out = fixture::gpuplan(&ws, &["diff", "--base", &pr.base, "--format", "markdown", "--exit-code"]);
    assert_eq!(out.status.code(), Some(1), "differences found: {}", String::from_utf8_lossy(&out.stderr));
    // Against the work tree's out/ (the pull request's own, already updated), there is nothing to show.
    let out = fixture::gpuplan(&ws, &["diff", "--format", "markdown", "--exit-code"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}

/// `--message-format json`: one object per diagnostic and line, with the position the human report shows, and no
/// human report (a tool reads stderr line by line).
#[test]
fn diagnostics_as_json_are_one_object_per_line() {
    let pr = PullRequest::new(edit_profile("budget usd-per-hour=150", "budget usd-per-hour=-5"), false);
    let ws = pr.checkout();
    let out = fixture::gpuplan(&ws, &["compile", "--check", "--message-format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first: serde_json::Value = serde_json::from_str(stderr.lines().next().unwrap()).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(first["code"], "E0106", "{first}");
    assert_eq!((first["file"].as_str(), first["line"].as_u64(), first["column"].as_u64()), (Some(PROFILE), Some(14), Some(8)), "{first}");
    assert!(!stderr.contains('╭'), "no human report beside the JSON:\n{stderr}");
}

/// A pull request that deletes NodePools (the preset that made a spot and an on-demand tier becomes one
/// on-demand pool): denied, the job fails and the comment says why, unless the workflow allows each by name.
#[test]
fn a_removed_nodepool_is_denied_unless_allowed_by_name() {
    let edit = || edit_profile("preset=\"inference-spot\"", "preset=\"inference-on-demand\"");
    let pr = PullRequest::new(edit(), true);
    let run = run_action(&pr, &pr.checkout(), "ghs_test");
    assert!(run.failed && run.outcome("Fail when the policy denies the change") == "failure", "{}", run.log);
    let comment = only_comment(&pr, &run);
    assert!(comment.contains("- ❌ **deny** `nodepool-removed`, cluster `ml-prod`: removes NodePool `llm-inference-spot`"), "{comment}");
    assert!(comment.contains("> [!WARNING]\n> This change removes 2 NodePool(s)"), "{comment}");
    insta::assert_snapshot!("nodepool_removed", comment);

    let pr = PullRequest::new(edit(), true);
    let allow = [("allow-removal", "ml-prod/llm-inference-spot llm-inference-on-demand"), ("warn-on", "at-limit.increase > 0%\nover-budget")];
    let run = run_action_with(&pr, &pr.checkout(), "ghs_test", &allow);
    assert!(!run.failed, "{}", run.log);
    let comment = only_comment(&pr, &run);
    assert!(comment.contains("- ✅ **pass** `nodepool-removed`") && comment.contains("- ✅ **pass** `over-budget`"), "{comment}");
}

/// Every chart of the comments (the snapshots of the cases above) parses with Mermaid's own parser
/// (`mermaid.parse`, mermaid 11.12.0, tests/mermaid/check.mjs): GitHub and GitLab render ```mermaid blocks in
/// comments, and a block that does not parse shows as an error box instead of the chart. `xychart-beta` is the
/// keyword every Mermaid since 10.6 reads (11.10 also reads `xychart`). Needs node and `npm ci` in tests/mermaid
/// (.ci/run does both).
#[test]
fn the_comments_charts_parse_with_mermaid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mermaid");
    assert!(dir.join("node_modules/mermaid").is_dir(), "run `npm ci` in {} (.ci/run does)", dir.display());
    let snapshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/action/snapshots");
    let comments: String = std::fs::read_dir(&snapshots).unwrap().map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap()).collect();
    assert!(comments.matches("```mermaid").count() >= 2, "the snapshots have charts");
    let mut child = std::process::Command::new("node")
        .arg("check.mjs")
        .current_dir(&dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("node is not installed (run .ci/run)");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), comments.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && report.contains(" 0 invalid"), "{report}");
    // The parser refuses a broken chart: the check can fail.
    let mut child = std::process::Command::new("node").arg("check.mjs").current_dir(&dir).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"```mermaid\nxychart-beta\n    bar [1, 2\n```\n").unwrap();
    assert!(!child.wait().unwrap().success(), "a broken chart parsed");
}


/// An AMI bump (the alias pinned to another release) replaces every node of the NodePools whose class it pins
/// (karpenter-provider-aws pkg/cloudprovider/drift.go isAMIDrifted): the comment's first section says which NodePools,
/// the field and Karpenter's reason, before any cost; `fail-on: drift` denies the change after the comment is posted.
/// The budget cut of the documented flow drifts nothing: its first section says so in one line, and that the lower
/// limits save nothing until nodes leave (see its snapshot).
#[test]
fn an_ami_bump_is_a_disruption_and_fail_on_drift_denies_it() {
    let pr = PullRequest::new(edit_profile("ami \"al2023@v20251023\"", "ami \"al2023@v20251111\""), true);
    let run = run_action_with(&pr, &pr.checkout(), "ghs_test", &[("fail-on", "drift")]);
    assert!(run.failed && run.outcome("Fail when the policy denies the change") == "failure", "{}", run.log);
    let comment = only_comment(&pr, &run);
    let first = comment.split("| | Before").next().unwrap();
    assert!(first.contains("### Disruption\n"), "the disruption section comes before the costs:\n{comment}");
    for pool in ["llm-inference-on-demand", "llm-inference-spot"] {
        assert!(first.contains(&format!("| `ml-prod` | `{pool}` | every node")) && first.contains("`spec.amiSelectorTerms` → `AMIDrift`"), "{comment}");
    }
    assert!(comment.contains("- ❌ **deny** `drift`, cluster `ml-prod`: replaces nodes of NodePool `llm-inference-spot`"), "{comment}");
    assert!(first.contains("| `ml-prod` | `llm-inference-spot` | at most 43 of 43 nodes | 5 |"), "the roll, replayed:\n{comment}");
    insta::assert_snapshot!("ami_bump", comment);
    let documented = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/action/snapshots/action__documented_flow.snap")).unwrap();
    assert!(documented.contains("**Disruption:** no running node is replaced") && documented.contains("lower limit (nvidia.com/gpu): removes no running node"), "{documented}");
    // The headline's saving is the bound's: merging makes none of it at once.
    let headline = documented.split("### Policies").next().unwrap();
    assert!(headline.contains("**Not saved at merge:** the lower limits of NodePool `llm-inference-on-demand`, `llm-inference-spot`"), "{documented}");
}

/// A taint added to a pool: every node drifts (the template hash), and the pods running there, which tolerate the
/// old taints only, fit no NodePool after the change, so Karpenter skips each drifted node (sigs.k8s.io/karpenter
/// v1.14.1 pkg/controllers/disruption/drift.go: `DisruptionBlocked` when the pods do not all reschedule).
/// `stuck-drift` denies it with no input asking for it; `allow-stuck-drift` naming both NodePools lets it through.
#[test]
fn a_taint_the_pods_do_not_tolerate_is_a_stuck_drift_and_denied_by_default() {
    let pr = PullRequest::new(edit_profile("label \"workload\" \"llm-serving\"", "label \"workload\" \"llm-serving\"\n    taint \"dedicated\" value=\"llm\" effect=\"NoSchedule\""), true);
    let workspace = pr.checkout();
    let run = run_action(&pr, &workspace, "ghs_test");
    assert!(run.failed && run.outcome("Fail when the policy denies the change") == "failure", "{}", run.log);
    let comment = only_comment(&pr, &run);
    let first = comment.split("| | Before").next().unwrap();
    for pool in ["llm-inference-on-demand", "llm-inference-spot"] {
        assert!(first.contains(&format!("- `ml-prod` NodePool `{pool}` **cannot finish**: ")), "stuck drifts come first:\n{comment}");
        assert!(comment.contains(&format!("- ❌ **deny** `stuck-drift`, cluster `ml-prod`: the drift of NodePool `{pool}` cannot finish")), "{comment}");
    }
    assert!(first.contains("did not tolerate taint dedicated=llm:NoSchedule") && first.contains("Safely: make the workloads tolerate"), "{comment}");
    let allowed = run_action_with(&pr, &workspace, "ghs_test", &[("allow-stuck-drift", "llm-inference-spot ml-prod/llm-inference-on-demand")]);
    assert!(!allowed.failed, "{}", allowed.log);
}

/// docs/src/pull-request-review.md shows the comment of the example change: it is the one the documented flow gets.
#[test]
fn the_docs_show_the_real_comment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/src/pull-request-review.md")).unwrap();
    let shown = doc.split("<!-- comment:begin -->\n").nth(1).and_then(|s| s.split("<!-- comment:end -->").next()).expect("the comment markers");
    let snapshot = std::fs::read_to_string(root.join("tests/action/snapshots/action__documented_flow.snap")).unwrap();
    let comment = snapshot.splitn(3, "---\n").nth(2).unwrap();
    assert_eq!(shown, comment, "copy tests/action/snapshots/action__documented_flow.snap into the page");
    let shown = doc.split("<!-- ami-comment:begin -->\n").nth(1).and_then(|s| s.split("<!-- ami-comment:end -->").next()).expect("the AMI comment's markers");
    let snapshot = std::fs::read_to_string(root.join("tests/action/snapshots/action__ami_bump.snap")).unwrap();
    assert_eq!(shown, snapshot.splitn(3, "---\n").nth(2).unwrap(), "copy tests/action/snapshots/action__ami_bump.snap into the page");
}

/// A change that leaves the NodePools as they were but lets a workload grow: the comment shows the workload at
/// max replicas before → after (the base's profiles compiled by the same binary, since out/ does not record the
/// pods' requests), simulated as `explain` simulates it.
#[test]
fn a_workloads_new_max_replicas_show_their_cost() {
    let pr = PullRequest::new(edit_profile("replicas min=2 max=12", "replicas min=2 max=20"), true);
    let run = run_action(&pr, &pr.checkout(), "ghs_test");
    assert!(!run.failed, "{}", run.log);
    let comment = only_comment(&pr, &run);
    assert!(comment.contains("#### Profile `llm-inference`: NodePools unchanged"), "{comment}");
    assert!(comment.contains("| `inference/llm-server` | 12 → 20 | 12.84 → 20.66 (+7.82) | 0 |"), "{comment}");
    assert!(!comment.contains("inference/llm-batch"), "an unchanged workload is not listed:\n{comment}");
}

/// `gpuplan lint --message-format github`: the findings are annotations too (lint is the other command that prints
/// diagnostics without failing the compile).
#[test]
fn lint_findings_are_annotations_in_the_github_format() {
    let pr = PullRequest::new(edit_profile("budget usd-per-hour=150", "budget usd-per-hour=100"), true);
    let out = fixture::gpuplan(&pr.checkout(), &["lint", "--message-format", "github"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.lines().any(|l| l.starts_with("::warning file=profiles/llm-inference.kdl,line=35,col=14,title=GP018::")), "{stderr}");
}
