//! The CI integrations validate against the schemas their hosts use, and every gpuplan command line they run
//! exists. Validators (installed pinned by .ci/run):
//! - check-jsonschema (PyPI) with its built-in `vendor.github-actions`, `vendor.github-workflows` and
//!   `vendor.gitlab-ci` schemas (SchemaStore's github-action.json, github-workflow.json, gitlab-ci.json);
//! - pre-commit's `validate-manifest` (pre-commit/clientlib.py, MANIFEST_HOOK_DICT), the check pre-commit runs on a
//!   hook repository's .pre-commit-hooks.yaml.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(program: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(program)
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap_or_else(|e| panic!("{program} is not installed (run .ci/run): {e}"));
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

fn schema_check(schema: &str, file: &Path) -> (bool, String) {
    run("check-jsonschema", &["--builtin-schema", schema, file.to_str().unwrap()])
}

/// A copy of `file` with `from` replaced by `to`, to show the validator rejects a broken file (so a passing check
/// means something).
fn broken_copy(file: &str, from: &str, to: &str) -> (tempfile::TempDir, PathBuf) {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    assert!(text.contains(from), "{file} has no {from:?}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(Path::new(file).file_name().unwrap());
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    (dir, path)
}

#[test]
fn action_validates_against_the_github_actions_schema() {
    let (ok, out) = schema_check("vendor.github-actions", &repo().join("action.yml"));
    assert!(ok, "{out}");
    // A composite action's steps need `shell`: the schema knows it, so the check is not vacuous.
    let (_dir, broken) = broken_copy("action.yml", "using: composite", "using: compost");
    let (ok, out) = schema_check("vendor.github-actions", &broken);
    assert!(!ok, "a broken action.yml passed:\n{out}");
}

#[test]
fn example_workflow_validates_against_the_github_workflows_schema() {
    let (ok, out) = schema_check("vendor.github-workflows", &repo().join("examples/ci/github-workflow.yml"));
    assert!(ok, "{out}");
    let (_dir, broken) = broken_copy("examples/ci/github-workflow.yml", "runs-on:", "run-on:");
    let (ok, out) = schema_check("vendor.github-workflows", &broken);
    assert!(!ok, "a broken workflow passed:\n{out}");
}

#[test]
fn gitlab_job_validates_against_the_gitlab_ci_schema() {
    let (ok, out) = schema_check("vendor.gitlab-ci", &repo().join("examples/ci/gitlab-ci.yml"));
    assert!(ok, "{out}");
    let (_dir, broken) = broken_copy("examples/ci/gitlab-ci.yml", "when: always", "when: sometimes");
    let (ok, out) = schema_check("vendor.gitlab-ci", &broken);
    assert!(!ok, "a broken GitLab job passed:\n{out}");
}

#[test]
fn pre_commit_hooks_pass_pre_commits_manifest_validation() {
    let (ok, out) = run("pre-commit", &["validate-manifest", ".pre-commit-hooks.yaml"]);
    assert!(ok, "{out}");
    let (_dir, broken) = broken_copy(".pre-commit-hooks.yaml", "language: rust", "language: cobol");
    let (ok, out) = run("pre-commit", &["validate-manifest", broken.to_str().unwrap()]);
    assert!(!ok, "a broken hooks manifest passed:\n{out}");
}

/// Every `gpuplan …` invocation in the CI files names a real subcommand and real flags: `--help` after them
/// parses (clap rejects unknown flags before printing help only when they precede it, so flags are checked by
/// running the command's argument parser on them with `--help` appended).
#[test]
fn every_gpuplan_command_in_the_ci_files_parses() {
    let files = ["action.yml", "examples/ci/gitlab-ci.yml", ".pre-commit-hooks.yaml"];
    let mut seen = 0;
    // A command starts a line, a YAML value or a shell `if`; prose mentions (`gpuplan compile`) are skipped.
    let command = regex::Regex::new(r"(?m)(?:^[ \t]*(?:-[ \t]*)?(?:(?:run|entry|name):[ \t]*)?|\bif[ \t]+)gpuplan((?:[ \t]+--?[a-z-]+|[ \t]+[a-z][a-z-]*)+)").unwrap();
    for file in files {
        let text = std::fs::read_to_string(repo().join(file)).unwrap();
        for found in command.captures_iter(&text) {
            let words: Vec<&str> = found[1].split_whitespace().collect();
            // Flags that take a value (`--out DIR`, `--format markdown`) are followed by one.
            let mut args: Vec<String> = Vec::new();
            for w in &words {
                args.push(w.to_string());
                if matches!(*w, "--out" | "--profiles") {
                    args.push("out".into());
                }
            }
            args.push("--help".into());
            let out = Command::new(env!("CARGO_BIN_EXE_gpuplan")).args(&args).output().unwrap();
            assert!(out.status.success(), "{file}: `gpuplan {}` does not parse: {}", words.join(" "), String::from_utf8_lossy(&out.stderr));
            seen += 1;
        }
    }
    assert!(seen >= 5, "only {seen} gpuplan commands found in the CI files");
}
