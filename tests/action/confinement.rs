//! A pull request that reaches past the repository, on the action's own step scripts: each adds a symlink or a path
//! leading to a file outside the checkout that holds a canary, and the canary must be in none of the run's log, its
//! job summary and the comment the stand-in `gh` records, while the run fails with the confinement error
//! ("Everything stays inside the repository", docs/src/reliability.md; the CLI cases are tests/confinement.rs).

use std::path::{Path, PathBuf};

use super::fixture::PullRequest;
use super::runner::Run;

/// What the file outside the repository holds.
const CANARY: &str = "CANARY-9d27c4-never-in-a-comment";

/// Writes the canary file `name` beside the author's clone (outside every checkout of the pull request) and returns
/// its path.
fn canary_beside(author: &Path, name: &str) -> PathBuf {
    let dir = author.parent().unwrap().join("outside");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("root:x:0:0:{CANARY}:/root:/bin/bash\nGITHUB_TOKEN={CANARY}\n")).unwrap();
    path
}

/// The pull request `edit` makes, run through the action: the run, and every comment posted.
fn run_hostile(edit: impl FnOnce(&Path)) -> (PullRequest, Run, Vec<String>) {
    let pr = PullRequest::new(edit, true);
    let run = super::run_action(&pr, &pr.checkout(), "ghs_test");
    let gh = pr.root.path().join("gh");
    let comments = if gh.join("comments").is_dir() { super::fixture::comments(&gh) } else { Vec::new() };
    (pr, run, comments)
}

/// The run failed with `expected` in its log, and the canary is nowhere a reader of the pull request sees.
fn assert_refused_unseen(run: &Run, comments: &[String], expected: &str) {
    assert!(run.failed, "the run passed:\n{}", run.log);
    assert!(run.log.contains(expected), "no {expected:?} in the log:\n{}", run.log);
    assert!(!run.log.contains(CANARY), "the log shows the file outside:\n{}", run.log);
    assert!(!run.summary.contains(CANARY), "the job summary shows the file outside:\n{}", run.summary);
    for comment in comments {
        assert!(!comment.contains(CANARY), "the comment shows the file outside:\n{comment}");
    }
}

const SYMLINK: &str = "is a symbolic link that leads outside the repository";

#[test]
fn a_profile_symlinked_outside_reaches_no_comment() {
    let (_pr, run, comments) = run_hostile(|dir| {
        let target = canary_beside(dir, "passwd");
        std::os::unix::fs::symlink(target, dir.join("profiles/zz.kdl")).unwrap();
    });
    assert_refused_unseen(&run, &comments, &format!("profiles/zz.kdl {SYMLINK}"));
    assert!(comments.iter().any(|c| c.contains(&format!("profiles/zz.kdl {SYMLINK}"))), "the comment says why: {comments:?}");
}

#[test]
fn a_symlink_in_out_reaches_no_comment() {
    let (_pr, run, comments) = run_hostile(|dir| {
        let target = canary_beside(dir, "config");
        std::os::unix::fs::symlink(target, dir.join("out/ml-prod/zz.yaml")).unwrap();
    });
    assert_refused_unseen(&run, &comments, "out/ml-prod/zz.yaml is a symbolic link");
}

#[test]
fn a_config_profiles_path_outside_reaches_no_comment() {
    let (_pr, run, comments) = run_hostile(|dir| {
        let target = canary_beside(dir, "secret.kdl");
        std::fs::write(dir.join("gpuplan.kdl"), format!("profiles \"{}\"\n", target.parent().unwrap().display())).unwrap();
    });
    assert_refused_unseen(&run, &comments, "E0440");
}

#[test]
fn a_demand_csv_outside_reaches_no_comment() {
    let (_pr, run, comments) = run_hostile(|dir| {
        canary_beside(dir, "environ.csv");
        // The checkout is a sibling of the author's clone: `../outside` from it is the canary's directory.
        let demand = "cluster \"ml-prod\" {\n    workload \"llm-server\" {\n        metric { csv \"../outside/environ.csv\" }\n    }\n}\n";
        std::fs::write(dir.join("gpuplan.demand.kdl"), demand).unwrap();
    });
    assert_refused_unseen(&run, &comments, "E0440");
}

#[test]
fn a_config_out_past_the_root_writes_nothing_there() {
    let (pr, run, comments) = run_hostile(|dir| std::fs::write(dir.join("gpuplan.kdl"), "out \"../x\"\n").unwrap());
    assert_refused_unseen(&run, &comments, "E0440");
    assert!(!pr.root.path().join("x").exists() && !pr.root.path().join(".gpuplan.lock").exists(), "written beside the checkout");
}
