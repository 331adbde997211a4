//! Issue 21 (reliability): one writer at a time, an out/ that always exists, an all-or-nothing `commit`, and a
//! recorded source path that does not depend on the working directory. Each test runs the binary on a project in a
//! tempdir (two of the repository's profiles and its catalogs), as a user or CI would.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use git2::{Repository, Signature};
use gpuplan::emit::{read_tree, write_tree, write_tree_swapped};
use gpuplan::layout::{OutputTree, with_header};

const PROFILES: [&str; 2] = ["llm-inference.kdl", "tiered-fallback.kdl"];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// profiles/ (two profiles) and catalogs/ in a fresh tempdir, outside any git repository.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("profiles")).unwrap();
    fs::create_dir_all(dir.path().join("catalogs")).unwrap();
    for name in PROFILES {
        fs::copy(repo_root().join("profiles").join(name), dir.path().join("profiles").join(name)).unwrap();
    }
    fs::copy(repo_root().join("catalogs/us-east-1.json"), dir.path().join("catalogs/us-east-1.json")).unwrap();
    dir
}

fn gpuplan(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .current_dir(cwd)
        .args(args)
        .env_remove("GPUPLAN_LOCK_TIMEOUT")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .output()
        .expect("run gpuplan")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Holds the writer lock of `dir/out` the way another process would.
fn hold_lock(dir: &Path) -> fs::File {
    let file = fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(dir.join(".gpuplan.lock")).unwrap();
    file.lock().unwrap();
    file
}

// -----------------------------------------------------------------------------------------------------------------
// One writer at a time

#[test]
fn second_writer_waits_then_fails_with_exit_2_while_the_lock_is_held() {
    let dir = project();
    let _held = hold_lock(dir.path());
    let started = Instant::now();
    let output = gpuplan(dir.path(), &["--lock-timeout", "1", "compile"]);
    let waited = started.elapsed();
    let err = stderr(&output);
    println!("waited {:.2}s\n{err}", waited.as_secs_f64());
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("waiting for another gpuplan writing out (lock ./.gpuplan.lock), up to 1s"), "{err}");
    assert!(err.contains("error: another gpuplan is writing out and still held ./.gpuplan.lock after 1s"), "{err}");
    assert!(err.contains("--lock-timeout SECONDS (or GPUPLAN_LOCK_TIMEOUT)"), "says what to do: {err}");
    assert!(waited >= Duration::from_secs(1), "{waited:?}");
    assert!(!dir.path().join("out").exists(), "nothing written");
}

#[test]
fn lock_timeout_comes_from_the_environment_when_the_flag_is_absent() {
    let dir = project();
    let _held = hold_lock(dir.path());
    let output = Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .current_dir(dir.path())
        .args(["compile"])
        .env("GPUPLAN_LOCK_TIMEOUT", "0.3")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("still held ./.gpuplan.lock after 0s"), "{}", stderr(&output));
}

#[test]
fn second_writer_proceeds_once_the_first_releases_the_lock() {
    let dir = project();
    let held = hold_lock(dir.path());
    // The lock is released only once the second writer says it waits: a fixed delay raced a slow start on a loaded
    // machine (the writer then found the lock free and never waited).
    let log = dir.path().join("second-writer.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .current_dir(dir.path())
        .args(["--lock-timeout", "120", "compile"])
        .env_remove("GPUPLAN_LOCK_TIMEOUT")
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let said = |what: &str| std::fs::read_to_string(&log).unwrap_or_default().contains(what);
    let start = std::time::Instant::now();
    while !said("waiting for another gpuplan") && start.elapsed() < Duration::from_secs(100) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(said("waiting for another gpuplan"), "{}", std::fs::read_to_string(&log).unwrap_or_default());
    drop(held);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{}", std::fs::read_to_string(&log).unwrap_or_default());
    assert!(dir.path().join("out/ml-prod").is_dir());
}

#[test]
fn compile_check_takes_no_lock() {
    let dir = project();
    assert_eq!(gpuplan(dir.path(), &["compile"]).status.code(), Some(0));
    let _held = hold_lock(dir.path());
    let output = gpuplan(dir.path(), &["--lock-timeout", "0", "compile", "--check"]);
    assert_eq!(output.status.code(), Some(0), "a reader never waits: {}", stderr(&output));
}

// -----------------------------------------------------------------------------------------------------------------
// out/ always exists; leftovers of killed writers are removed

#[test]
fn stale_temp_dirs_of_a_killed_writer_are_removed_by_the_next_run() {
    let dir = project();
    assert_eq!(gpuplan(dir.path(), &["compile"]).status.code(), Some(0));
    // What a kill -9 during a write (new) and during a two-rename swap (old) leaves.
    fs::create_dir_all(dir.path().join(".out.gpuplan-new-4242-0/ml-prod")).unwrap();
    fs::write(dir.path().join(".out.gpuplan-new-4242-0/ml-prod/half.yaml"), "kind: NodePool\n").unwrap();
    fs::create_dir_all(dir.path().join(".out.gpuplan-old-4242-1/old/ml-prod")).unwrap();
    // Another out directory's leftovers are not this one's.
    fs::create_dir_all(dir.path().join(".other.gpuplan-new-4242-0")).unwrap();

    let output = gpuplan(dir.path(), &["compile"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("removed ./.out.gpuplan-new-4242-0 (left by an interrupted gpuplan)"), "{err}");
    assert!(err.contains("removed ./.out.gpuplan-old-4242-1 (left by an interrupted gpuplan)"), "{err}");
    let mut left: Vec<String> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    assert_eq!(left, [".gpuplan.lock", ".other.gpuplan-new-4242-0", "catalogs", "out", "profiles"]);
}

#[test]
fn out_killed_between_the_two_renames_is_restored_by_the_next_writer() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let backup = dir.path().join(".out.gpuplan-old-4242-0/old");
    fs::create_dir_all(backup.join("ml-prod")).unwrap();
    fs::write(backup.join("ml-prod/a.yaml"), "a\n").unwrap();
    fs::create_dir_all(dir.path().join(".out.gpuplan-new-4242-0")).unwrap();

    let lock = gpuplan::emit::lock::acquire(&out, Duration::ZERO, |_| {}).unwrap();
    assert_eq!(lock.stale.restored.as_deref(), Some(backup.as_path()));
    assert_eq!(lock.stale.removed.len(), 2, "{:?}", lock.stale.removed);
    assert_eq!(fs::read_to_string(out.join("ml-prod/a.yaml")).unwrap(), "a\n");
}

fn tree(n: usize, version: &str) -> OutputTree {
    let mut tree = OutputTree::new();
    for i in 0..n {
        tree.insert(format!("c/obj-{i}.yaml"), with_header("profiles/p.kdl", &format!("v: {version}\n")));
    }
    tree
}

#[test]
fn out_exists_at_every_instant_of_repeated_swaps() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    write_tree(&out, &tree(50, "0")).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (out, stop) = (out.clone(), stop.clone());
        std::thread::spawn(move || {
            let (mut looks, mut missing) = (0u64, 0u64);
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                looks += 1;
                if fs::symlink_metadata(&out).is_err() {
                    missing += 1;
                }
            }
            (looks, missing)
        })
    };
    let started = Instant::now();
    let swaps = 100;
    for i in 0..swaps {
        write_tree(&out, &tree(50, &i.to_string())).unwrap();
    }
    let took = started.elapsed();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let (looks, missing) = watcher.join().unwrap();
    println!("{swaps} swaps of 50 files in {:.2}s; out/ looked at {looks} times, missing {missing} times", took.as_secs_f64());
    assert!(looks > 0);
    assert_eq!(missing, 0, "out/ was missing during a swap");
    assert_eq!(read_tree(&out).unwrap(), tree(50, "99"));
}

#[test]
fn a_rolled_back_swap_restores_the_previous_tree_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    write_tree(&out, &tree(3, "old")).unwrap();
    let swap = write_tree_swapped(&out, &tree(5, "new")).unwrap();
    assert_eq!(read_tree(&out).unwrap(), tree(5, "new"));
    swap.rollback().unwrap();
    assert_eq!(read_tree(&out).unwrap(), tree(3, "old"));
    let left: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["out"], "no temporary directory left");
}

// -----------------------------------------------------------------------------------------------------------------
// commit: all or nothing

/// A git repository holding the project, everything committed (profiles, catalogs, out/), identity set.
fn git_project() -> (tempfile::TempDir, Repository) {
    let dir = project();
    assert_eq!(gpuplan(dir.path(), &["compile"]).status.code(), Some(0));
    fs::write(dir.path().join(".gitignore"), ".gpuplan.lock\n").unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    {
        let mut index = repo.index().unwrap();
        index.add_all(["."], git2::IndexAddOption::DEFAULT, None).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = Signature::now("Test", "test@example.com").unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "initial", &tree, &[]).unwrap();
    }
    (dir, repo)
}

fn head(repo: &Repository) -> git2::Oid {
    repo.head().unwrap().target().unwrap()
}

/// Changes the profiles so that compile changes out/ (a lower budget changes the limits).
fn edit_profile(dir: &Path, from: &str, to: &str) {
    let path = dir.join("profiles/llm-inference.kdl");
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{from} in {}", path.display());
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

fn budget_line(dir: &Path) -> String {
    let text = fs::read_to_string(dir.join("profiles/llm-inference.kdl")).unwrap();
    text.lines().find(|l| l.trim_start().starts_with("budget")).expect("a budget line").to_string()
}

#[test]
fn commit_with_index_lock_present_exits_2_and_leaves_head_index_and_out_unchanged() {
    let (dir, repo) = git_project();
    let line = budget_line(dir.path());
    edit_profile(dir.path(), &line, &line.replace("150", "120"));
    let (head_before, index_before, out_before) = (head(&repo), fs::read(dir.path().join(".git/index")).unwrap(), read_tree(&dir.path().join("out")).unwrap());
    fs::write(dir.path().join(".git/index.lock"), "").unwrap();

    let output = gpuplan(dir.path(), &["commit", "--include-inputs"]);
    let err = stderr(&output);
    println!("{err}");
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains(".git/index.lock exists: another git process is running"), "{err}");
    assert!(err.contains("Nothing was written or committed"), "{err}");
    assert_eq!(head(&repo), head_before, "HEAD unchanged");
    assert_eq!(fs::read(dir.path().join(".git/index")).unwrap(), index_before, "index unchanged");
    assert_eq!(read_tree(&dir.path().join("out")).unwrap(), out_before, "out/ unchanged");
    assert!(dir.path().join(".git/index.lock").exists(), "someone else's lock is theirs to remove");

    fs::remove_file(dir.path().join(".git/index.lock")).unwrap();
    let output = gpuplan(dir.path(), &["commit", "--include-inputs"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_ne!(head(&repo), head_before);
    assert!(!dir.path().join(".git/index.lock").exists(), "our lock is gone");
    let statuses = repo.statuses(None).unwrap();
    let dirty: Vec<String> = statuses.iter().filter(|s| !matches!(s.status(), git2::Status::CURRENT | git2::Status::IGNORED)).filter_map(|s| s.path().ok().map(str::to_string)).collect();
    assert!(dirty.is_empty(), "out/ and the profile it came from committed and clean in the index: {dirty:?}");
}

/// The repository config is an input like a profile: a gpuplan.kdl not committed (here, new) is named and refused,
/// and `--include-inputs` commits it with out/ (a commit of out/ without it would not be what `compile --check` sees).
#[test]
fn commit_refuses_an_uncommitted_repository_config() {
    let (dir, repo) = git_project();
    fs::write(dir.path().join("gpuplan.kdl"), "max-catalog-age-days 365\n").unwrap();
    let head_before = head(&repo);
    let output = gpuplan(dir.path(), &["commit"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("  gpuplan.kdl (untracked)") && err.contains("--include-inputs"), "{err}");
    assert_eq!(head(&repo), head_before, "nothing committed");
    let output = gpuplan(dir.path(), &["commit", "--include-inputs"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(repo.status_file(Path::new("gpuplan.kdl")).unwrap(), git2::Status::CURRENT);
}

/// `commit` refuses when a profile it compiled has changes HEAD does not hold, for each way git can say so (modified,
/// staged but not committed, untracked): exit 2, the profile named with its state, HEAD, the index and out/ as they
/// were. `--include-inputs` commits the profile with out/ in one commit, after which `compile --check` passes.
#[test]
fn commit_refuses_uncommitted_profiles_and_include_inputs_commits_them_with_out() {
    let states: [(&str, fn(&Path, &Repository)); 3] = [
        ("modified", |_, _| {}),
        ("staged, not committed", |_, repo| {
            let mut index = repo.index().unwrap();
            index.add_path(Path::new("profiles/llm-inference.kdl")).unwrap();
            index.write().unwrap();
        }),
        ("untracked", |_, repo| {
            let mut index = repo.index().unwrap();
            index.remove_path(Path::new("profiles/llm-inference.kdl")).unwrap();
            index.write().unwrap();
            let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
            let sig = Signature::now("Test", "test@example.com").unwrap();
            let parent = repo.head().unwrap().peel_to_commit().unwrap();
            repo.commit(Some("HEAD"), &sig, &sig, "profile not yet added", &tree, &[&parent]).unwrap();
        }),
    ];
    for (state, make) in states {
        let (dir, repo) = git_project();
        let line = budget_line(dir.path());
        edit_profile(dir.path(), &line, &line.replace("150", "120"));
        make(dir.path(), &repo);
        let (head_before, index_before, out_before) = (head(&repo), fs::read(dir.path().join(".git/index")).unwrap(), read_tree(&dir.path().join("out")).unwrap());
        let output = gpuplan(dir.path(), &["commit"]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{state}: {err}");
        assert!(err.contains(&format!("  profiles/llm-inference.kdl ({state})")) && err.contains("--include-inputs"), "{state}: {err}");
        assert_eq!(head(&repo), head_before, "{state}: nothing committed");
        assert_eq!(fs::read(dir.path().join(".git/index")).unwrap(), index_before, "{state}: index unchanged");
        assert_eq!(read_tree(&dir.path().join("out")).unwrap(), out_before, "{state}: out/ unchanged");

        let output = gpuplan(dir.path(), &["commit", "--include-inputs"]);
        assert_eq!(output.status.code(), Some(0), "{state}: {}", stderr(&output));
        let commit = repo.head().unwrap().peel_to_commit().unwrap();
        assert_eq!(commit.parent_id(0).unwrap(), head_before, "{state}: one commit");
        let tree = commit.tree().unwrap();
        let profile = repo.find_blob(tree.get_path(Path::new("profiles/llm-inference.kdl")).unwrap().id()).unwrap();
        assert_eq!(profile.content(), fs::read(dir.path().join("profiles/llm-inference.kdl")).unwrap(), "{state}: the profile as compiled");
        assert_eq!(repo.status_file(Path::new("profiles/llm-inference.kdl")).unwrap(), git2::Status::CURRENT, "{state}");
        assert_eq!(gpuplan(dir.path(), &["compile", "--check"]).status.code(), Some(0), "{state}: the commit's out/ is current");
    }
}

#[test]
fn commit_never_stages_an_untracked_catalog_the_compile_did_not_read() {
    let (dir, repo) = git_project();
    fs::write(dir.path().join("catalogs/.env.json"), "{\"AWS_SECRET_ACCESS_KEY\": \"x\"}\n").unwrap();
    let line = budget_line(dir.path());
    edit_profile(dir.path(), &line, &line.replace("150", "120"));
    let output = gpuplan(dir.path(), &["commit", "--include-inputs"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    assert!(tree.get_path(Path::new("catalogs/.env.json")).is_err(), "catalogs/.env.json was committed");
    assert_eq!(repo.status_file(Path::new("catalogs/.env.json")).unwrap(), git2::Status::WT_NEW, "still untracked");
}

#[test]
fn commit_racing_compiles_exits_0_exactly_when_head_moved() {
    let (dir, repo) = git_project();
    let line = budget_line(dir.path());
    let rounds = 8;
    let (mut committed, mut failed) = (0, 0);
    for round in 0..rounds {
        // Each round changes the profile, so both the commit and the compile change out/.
        let budget = format!("{}", 100 + round * 5);
        let current = budget_line(dir.path());
        edit_profile(dir.path(), &current, &line.replace("150", &budget));
        let before = head(&repo);
        let cwd = dir.path().to_path_buf();
        let compile = std::thread::spawn(move || gpuplan(&cwd, &["compile"]));
        let commit = gpuplan(dir.path(), &["commit", "--include-inputs", "-m", &format!("round {round}")]);
        let compiled = compile.join().unwrap();
        assert_eq!(compiled.status.code(), Some(0), "{}", stderr(&compiled));
        let after = head(&repo);
        match commit.status.code() {
            Some(0) => {
                committed += 1;
                let message = repo.find_commit(after).unwrap().message().unwrap().to_string();
                assert!(after != before || stderr(&commit).contains("nothing to commit"), "exit 0 but HEAD did not move");
                assert!(after == before || message == format!("round {round}"));
            }
            _ => {
                failed += 1;
                assert_eq!(after, before, "exit {:?} with HEAD moved: {}", commit.status.code(), stderr(&commit));
            }
        }
        assert!(dir.path().join("out/ml-prod").is_dir());
        assert!(!dir.path().join(".git/index.lock").exists());
    }
    println!("{rounds} rounds: {committed} commits, {failed} refused");
    assert_eq!(committed, rounds, "with the writer lock the two take turns: every commit succeeds");
}

// -----------------------------------------------------------------------------------------------------------------
// The recorded source path

#[test]
fn compile_check_from_another_working_directory_of_a_copy_outside_git_is_up_to_date() {
    let dir = project();
    let elsewhere = tempfile::tempdir().unwrap();
    let abs = |p: &str| dir.path().join(p).display().to_string();
    let compiled = gpuplan(dir.path(), &["compile"]);
    assert_eq!(compiled.status.code(), Some(0), "{}", stderr(&compiled));
    let pool = fs::read_to_string(dir.path().join("out/ml-prod/nodepool-llm-inference-spot.yaml")).unwrap();
    assert!(pool.starts_with("# Code generated by gpuplan from profiles/llm-inference.kdl. DO NOT EDIT.\n"), "{pool}");

    for cwd in [elsewhere.path(), &dir.path().join("profiles")] {
        let check = gpuplan(cwd, &["compile", "--check", &abs("profiles"), "--out", &abs("out"), "--catalogs", &abs("catalogs")]);
        assert_eq!(check.status.code(), Some(0), "from {}: {}{}", cwd.display(), String::from_utf8_lossy(&check.stdout), stderr(&check));
    }
    // A profile named as a file records the same path.
    let one = gpuplan(elsewhere.path(), &["compile", "--check", &abs("profiles/llm-inference.kdl"), &abs("profiles/tiered-fallback.kdl"), "--out", &abs("out"), "--catalogs", &abs("catalogs")]);
    assert_eq!(one.status.code(), Some(0), "{}{}", String::from_utf8_lossy(&one.stdout), stderr(&one));
}
