//! The comment is ours: only a comment the token's own identity wrote is ever edited, and the fork pattern's
//! second workflow (comment/action.yml, on `workflow_run`) takes nothing from the artifact but the report's text,
//! made inert, and posts it to the pull request it resolves from the run's head commit and head repository.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use crate::fixture::{BOT, PullRequest, comments_with_authors, seed_comment, stand_in_gh};
use crate::runner::{Run, Runner};
use crate::{edit_profile, runner};

const MARKER: &str = "<!-- gpuplan-diff -->";
const FORGED: &str = "<!-- gpuplan-diff -->\nLooks fine, merge it.";

#[test]
fn a_comment_by_another_author_with_the_marker_is_not_edited() {
    let pr = PullRequest::new(edit_profile("budget usd-per-hour=150", "budget usd-per-hour=100"), true);
    let ws = pr.checkout();
    let stub = pr.root.path().join("gh");
    seed_comment(&stub, 1, "mallory", FORGED);
    for _ in 0..2 {
        let run = runner(&pr, &ws, "ghs_test", &[]).run(&crate::action());
        assert!(!run.failed, "{}", run.log);
    }
    let posted = comments_with_authors(&stub);
    assert_eq!(posted.len(), 2, "{posted:?}");
    assert_eq!(posted[0], (1, "mallory".to_string(), FORGED.to_string()), "mallory's comment is as she wrote it");
    assert_eq!((posted[1].0, posted[1].1.as_str()), (1, BOT));
    assert!(posted[1].2.starts_with("<!-- gpuplan-diff -->\n## gpuplan: changes to out/"), "{}", posted[1].2);
    let calls = std::fs::read_to_string(stub.join("calls")).unwrap();
    assert_eq!((calls.matches("--method POST").count(), calls.matches("--method PATCH repos/acme/platform/issues/comments/2").count()), (1, 1), "{calls}");
    assert!(calls.contains("gh api graphql -f query=query { viewer { login } }"), "the identity is the token's: {calls}");
}

/// The head the pull request's run was for (`workflow_run.head_sha`), from a fork.
const HEAD: &str = "4f1c0a3e9d2b7c6a5f4e3d2c1b0a99887766554a";
const FORK: &str = "mallory/platform";

/// The repository's open pull requests: #7 is the fork's at HEAD; #8 another at another commit; #9 carries the same
/// commit from another repository.
fn open_pulls() -> serde_json::Value {
    json!([
        {"number": 8, "head": {"sha": "0000000000000000000000000000000000000008", "repo": {"full_name": "acme/platform"}}},
        {"number": 7, "head": {"sha": HEAD, "repo": {"full_name": FORK}}},
        {"number": 9, "head": {"sha": HEAD, "repo": {"full_name": "someone/platform"}}},
    ])
}

/// comment/action.yml on a `workflow_run` event of a fork's run (its `pull_requests` empty, as GitHub sends it),
/// with the downloaded artifact `files` in the workspace.
fn run_comment_action(root: &Path, files: &[(&str, &[u8])]) -> Run {
    run_comment_action_with(root, files, &open_pulls())
}

fn run_comment_action_with(root: &Path, files: &[(&str, &[u8])], pulls: &serde_json::Value) -> Run {
    let stub = root.join("gh");
    let bin = stand_in_gh(&stub);
    std::fs::write(stub.join("pulls.json"), pulls.to_string()).unwrap();
    let workspace = root.join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    for (name, body) in files {
        std::fs::write(workspace.join(name), body).unwrap();
    }
    let github = json!({
        "event_name": "workflow_run",
        "repository": "acme/platform",
        "event": {"workflow_run": {"id": 42, "event": "pull_request", "head_sha": HEAD, "head_branch": "main",
            "head_repository": {"full_name": FORK}, "pull_requests": []}},
    });
    let runner = Runner {
        workspace,
        home: root.join("runner"),
        github,
        with: BTreeMap::from([("github-token".to_string(), "ghs_test".to_string())]),
        path: vec![bin],
        env: vec![("GH_STUB".into(), stub.display().to_string())],
        action_path: Path::new(env!("CARGO_MANIFEST_DIR")).join("comment"),
    };
    std::fs::create_dir_all(&runner.home).unwrap();
    let text = std::fs::read_to_string(runner.action_path.join("action.yml")).unwrap();
    runner.run(&serde_saphyr::from_str(&text).unwrap())
}

/// A report forged by the fork's run: a marker of its own, a mention, raw HTML (an image, a link, a comment), a
/// Markdown link and image, reference-style ones and their definition, bare URLs (GitHub autolinks them, after `_`
/// too), a `GH-` reference, invalid UTF-8; and beside it a `number` file naming another pull request.
const HOSTILE: &[u8] = b"<!-- gpuplan-diff -->\n## gpuplan: approved by @acme/security\n\n<img src=\"https://evil.example/t.png\"> <a href=\"https://evil.example\">details</a>\n[the fix](https://evil.example) ![](https://evil.example/i.png) see #8\n[also][r] ![][r] at https://evil.example/x or www.evil.example or _www.evil.example_, fixes GH-8\n\n[r]: https://evil.example/ref.png\n<!-- gpuplan-diff -->\n<details><summary>kept</summary>\n\n| a | b |\n|---|---|\n</details>\n\xff\n";

#[test]
fn a_forged_artifact_is_posted_inert_only_to_the_pull_request_of_the_runs_head() {
    let root = tempfile::tempdir().unwrap();
    let stub = root.path().join("gh");
    std::fs::create_dir_all(&stub).unwrap();
    seed_comment(&stub, 7, "mallory", FORGED);
    let run = run_comment_action(root.path(), &[("comment.md", HOSTILE), ("number", b"8\n")]);
    assert!(!run.failed, "{}", run.log);
    let posted = comments_with_authors(&stub);
    assert_eq!(posted.len(), 2, "{posted:?}");
    assert_eq!(posted[0], (7, "mallory".to_string(), FORGED.to_string()), "another author's marker comment is not edited");
    let (pr, author, body) = &posted[1];
    assert_eq!((*pr, author.as_str()), (7, BOT), "posted to the pull request of head_sha and the head repository, not #8 or #9");
    assert!(body.starts_with("<!-- gpuplan-diff -->\n## gpuplan: approved by @\u{200b}acme/security\n"), "{body}");
    assert_eq!(body.matches(MARKER).count(), 1, "only our own marker:\n{body}");
    for raw in ["<img", "<a ", "](", "]:", "://", "www.", "@acme", "#8", "GH-8"] {
        assert!(!body.contains(raw), "`{raw}` is live in:\n{body}");
    }
    assert!(body.contains("&lt;img src=\"https:\u{200b}//evil.example/t.png\">") && body.contains("#\u{200b}8"), "shown as text:\n{body}");
    assert!(body.contains("[r]\u{200b}: https:\u{200b}//evil.example/ref.png") && body.contains("www\u{200b}.evil.example"), "shown as text:\n{body}");
    assert!(body.contains("<details><summary>kept</summary>\n\n| a | b |\n|---|---|\n</details>\n\u{fffd}\n"), "the report's own Markdown and tags are kept:\n{body}");

    // The next run's report edits that one comment.
    let run = run_comment_action(root.path(), &[("comment.md", b"<!-- gpuplan-diff -->\n## gpuplan: no changes to out/\n")]);
    assert!(!run.failed, "{}", run.log);
    let posted = comments_with_authors(&stub);
    assert_eq!(posted.len(), 2, "{posted:?}");
    assert!(posted[1].2.starts_with("<!-- gpuplan-diff -->\n## gpuplan: no changes to out/\n"), "{}", posted[1].2);
}

#[test]
fn an_oversized_artifact_is_cut_under_githubs_limit() {
    let root = tempfile::tempdir().unwrap();
    let huge = "<b>row</b> @everyone\n".repeat(100_000);
    let run = run_comment_action(root.path(), &[("comment.md", huge.as_bytes())]);
    assert!(!run.failed, "{}", run.log);
    let posted = comments_with_authors(&root.path().join("gh"));
    assert_eq!(posted.len(), 1);
    let body = &posted[0].2;
    assert!(body.chars().count() < 65_536, "{} characters", body.chars().count());
    assert!(body.contains("… cut at 60000 characters."), "{}", &body[body.len() - 300..]);
}

#[test]
fn a_run_whose_head_is_no_open_pull_request_posts_nothing() {
    let root = tempfile::tempdir().unwrap();
    // The fork's pull request was closed: only #8 and #9 are open.
    let open: Vec<_> = open_pulls().as_array().unwrap().iter().filter(|p| p["number"] != 7).cloned().collect();
    let run = run_comment_action_with(root.path(), &[("comment.md", b"## gpuplan: changes to out/\n")], &serde_json::Value::Array(open));
    assert!(!run.failed, "{}", run.log);
    assert!(comments_with_authors(&root.path().join("gh")).is_empty());
    assert!(run.annotations.iter().any(|a| a.contains(&format!("no single open pull request has head {FORK}@{HEAD}"))), "{:?}", run.annotations);
}

/// A GitHub App's installation token comments as `<app>[bot]` (GraphQL `viewer` answers that login): the workflow
/// bot's own marker comment from before the switch is another author's, left alone, and the app's comment is the one
/// edited on the next run.
#[test]
fn an_app_tokens_comment_is_found_by_the_apps_own_login() {
    let pr = PullRequest::new(edit_profile("budget usd-per-hour=150", "budget usd-per-hour=100"), true);
    let ws = pr.checkout();
    let stub = pr.root.path().join("gh");
    seed_comment(&stub, 1, BOT, FORGED);
    std::fs::create_dir_all(stub.join("logins")).unwrap();
    std::fs::write(stub.join("logins/ghs_app"), "gpuplan-app[bot]").unwrap();
    for _ in 0..2 {
        let run = runner(&pr, &ws, "ghs_app", &[]).run(&crate::action());
        assert!(!run.failed, "{}", run.log);
    }
    let posted = comments_with_authors(&stub);
    assert_eq!(posted.len(), 2, "{posted:?}");
    assert_eq!(posted[0], (1, BOT.to_string(), FORGED.to_string()));
    assert_eq!((posted[1].0, posted[1].1.as_str()), (1, "gpuplan-app[bot]"));
    assert!(posted[1].2.starts_with("<!-- gpuplan-diff -->\n## gpuplan: changes to out/"), "{}", posted[1].2);
}

/// An artifact whose report is a link (to a file of the runner that holds a secret) posts nothing: the link is not
/// followed.
#[test]
fn a_report_that_is_a_link_is_not_followed() {
    let root = tempfile::tempdir().unwrap();
    let secret = root.path().join("secret");
    std::fs::write(&secret, "CANARY-7f3a").unwrap();
    std::fs::create_dir_all(root.path().join("workspace")).unwrap();
    std::os::unix::fs::symlink(&secret, root.path().join("workspace/comment.md")).unwrap();
    let run = run_comment_action(root.path(), &[]);
    assert!(run.failed && run.outcome("Render the report inert") == "failure", "{}", run.log);
    assert!(comments_with_authors(&root.path().join("gh")).is_empty());
    assert!(!run.log.contains("CANARY-7f3a"), "{}", run.log);
}
