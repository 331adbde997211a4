//! The CI integrations validate against the schemas their hosts use, and every gpuplan command line they run
//! exists. Validators (installed pinned by .ci/run):
//! - check-jsonschema (PyPI) with its built-in `vendor.github-actions`, `vendor.github-workflows` and
//!   `vendor.gitlab-ci` schemas (SchemaStore's github-action.json, github-workflow.json, gitlab-ci.json);
//! - pre-commit's `validate-manifest` (pre-commit/clientlib.py, MANIFEST_HOOK_DICT), the check pre-commit runs on a
//!   hook repository's .pre-commit-hooks.yaml.
//!
//! The release workflow (.github/workflows/release.yml) attaches the asset action.yml installs from: both files
//! are parsed, the asset names compared, and the workflow's packing and upload steps run against the action's
//! install step (with a stand-in `gh`) to show the archive installs a working gpuplan.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

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

/// Every workflow the README and the book show (a ```` ```yaml ```` block with `jobs:`) validates against the
/// workflow schema, and every input it gives the action (`with:` under `uses: gpuplan/gpuplan@…`) is one action.yml
/// declares: a reader copies these blocks as they are.
#[test]
fn every_workflow_the_docs_show_validates_and_names_real_inputs() {
    let action = yaml("action.yml");
    let inputs = action["inputs"].as_object().unwrap();
    let mut pages = vec![repo().join("README.md")];
    pages.extend(walk_markdown(&repo().join("docs/src")));
    let mut checked = 0;
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for block in text.split("```yaml\n").skip(1).filter_map(|rest| rest.split("\n```").next()).filter(|b| b.contains("\njobs:") || b.starts_with("jobs:")) {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("workflow.yml");
            std::fs::write(&file, block).unwrap();
            let (ok, out) = schema_check("vendor.github-workflows", &file);
            assert!(ok, "{}: a workflow block fails the schema:\n{block}\n{out}", page.display());
            let workflow: Value = serde_saphyr::from_str(block).unwrap();
            for job in workflow["jobs"].as_object().unwrap().values() {
                for step in job["steps"].as_array().into_iter().flatten().filter(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("gpuplan/gpuplan@"))) {
                    for key in step["with"].as_object().into_iter().flatten().map(|(k, _)| k) {
                        assert!(inputs.contains_key(key), "{}: the action has no input `{key}`", page.display());
                    }
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 1, "the README shows a workflow");
}

/// Every `*.md` file under `dir`.
fn walk_markdown(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk_markdown(&path));
        } else if path.extension().is_some_and(|e| e == "md") {
            found.push(path);
        }
    }
    found
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
                if *w == "--base" {
                    args.push("HEAD".into());
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

#[test]
fn release_workflow_validates_against_the_github_workflows_schema() {
    let (ok, out) = schema_check("vendor.github-workflows", &repo().join(RELEASE_WORKFLOW));
    assert!(ok, "{out}");
    let (_dir, broken) = broken_copy(RELEASE_WORKFLOW, "runs-on:", "run-on:");
    let (ok, out) = schema_check("vendor.github-workflows", &broken);
    assert!(!ok, "a broken release workflow passed:\n{out}");
}

const RELEASE_WORKFLOW: &str = ".github/workflows/release.yml";
const INSTALL_STEP: &str = "Install gpuplan (release binary)";

/// A YAML file of the repository, parsed.
fn yaml(file: &str) -> Value {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn step<'a>(steps: &'a Value, name: &str) -> &'a Value {
    steps.as_array().unwrap().iter().find(|s| s["name"] == name).unwrap_or_else(|| panic!("no step `{name}` in {steps}"))
}

/// The release workflow's one job.
fn release_job(workflow: &Value) -> &Value {
    let jobs = workflow["jobs"].as_object().unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    jobs.values().next().unwrap()
}

/// The asset the action downloads is exactly the one the release workflow packs and uploads, on a `v*` tag (the
/// action's `version` input is a tag), for the platform it is built on.
#[test]
fn the_release_asset_is_the_one_the_action_downloads() {
    let action = yaml("action.yml");
    let install = step(&action["runs"]["steps"], INSTALL_STEP);
    let downloaded = install["env"]["GPUPLAN_ASSET"].as_str().expect("the install step's GPUPLAN_ASSET");
    let script = install["run"].as_str().unwrap();
    assert!(script.contains("--pattern \"$GPUPLAN_ASSET\"") && script.contains("tar -xzf \"$RUNNER_TEMP/$GPUPLAN_ASSET\""), "{script}");

    let workflow = yaml(RELEASE_WORKFLOW);
    assert_eq!(workflow["on"]["push"]["tags"], serde_json::json!(["v*"]), "{workflow}");
    let job = release_job(&workflow);
    let uploaded = job["env"]["ASSET"].as_str().expect("the release job's ASSET");
    assert_eq!(uploaded, downloaded, "{RELEASE_WORKFLOW} uploads {uploaded}, action.yml downloads {downloaded}");
    assert_eq!(uploaded, "gpuplan-x86_64-unknown-linux-gnu.tar.gz");
    // Built on the oldest hosted image: a binary linked against a newer glibc would not start on older runners.
    assert_eq!(job["runs-on"], "ubuntu-22.04");
    assert_eq!(step(&job["steps"], "Build")["run"], "cargo build --release --locked");
    let upload = step(&job["steps"], "Upload to the tag's release");
    assert_eq!(upload["env"]["TAG"], "${{ github.ref_name }}", "the release is the pushed tag's: the one `gh release download <version>` fetches");
    assert!(upload["run"].as_str().unwrap().contains("\"$TAG\" \"$ASSET\""), "{upload}");
}

/// `${{ … }}` expressions replaced by the values a run would give them (any other is an error: the test must
/// know what it stands for).
fn expand(text: &str, values: &[(&str, &str)]) -> String {
    let expression = regex::Regex::new(r"\$\{\{\s*(.*?)\s*\}\}").unwrap();
    expression
        .replace_all(text, |c: &regex::Captures| values.iter().find(|(e, _)| *e == &c[1]).unwrap_or_else(|| panic!("unknown expression {}", &c[0])).1.to_string())
        .into_owned()
}

/// Runs one `run` step as GitHub does (`bash --noprofile --norc -eo pipefail`), with the job's and step's env.
fn run_step(step: &Value, job_env: &Value, env: &[(&str, String)], dir: &Path, values: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &expand(step["run"].as_str().unwrap(), values)]).current_dir(dir);
    for vars in [job_env, &step["env"]] {
        for (k, v) in vars.as_object().into_iter().flatten() {
            cmd.env(k, expand(v.as_str().unwrap(), values));
        }
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    cmd.output().unwrap()
}

fn run_step_ok(step: &Value, job_env: &Value, env: &[(&str, String)], dir: &Path, values: &[(&str, &str)]) {
    let out = run_step(step, job_env, env, dir, values);
    assert!(out.status.success(), "step `{}` failed:\n{}{}", step["name"], String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// The release workflow's Package and Upload steps, then the action's install step, run for real with a stand-in
/// `gh` that keeps releases in a directory: the archive the workflow packs is the one the action fetches, it
/// unpacks to a `gpuplan` on the PATH the action exports, and that binary runs.
#[test]
fn the_release_archive_installs_through_the_actions_step() {
    let tmp = tempfile::tempdir().unwrap();
    let (workspace, runner_temp, stub) = (tmp.path().join("workspace"), tmp.path().join("runner-temp"), tmp.path().join("bin"));
    for d in [&workspace.join("target/release"), &runner_temp, &stub] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::copy(env!("CARGO_BIN_EXE_gpuplan"), workspace.join("target/release/gpuplan")).unwrap();
    // gh release view|create|upload|download against $GH_STUB_RELEASES/<tag>/.
    let gh = r#"#!/usr/bin/env bash
set -euo pipefail
[ "$1" = release ] || { echo "stub gh: only release" >&2; exit 2; }
cmd=$2; dir="$GH_STUB_RELEASES/$3"; shift 3
case "$cmd" in
  view) [ -d "$dir" ] ;;
  create|upload) mkdir -p "$dir"; for a in "$@"; do case "$a" in -*) break ;; *) cp "$a" "$dir/" ;; esac; done ;;
  download)
    patterns=(); dest="."
    while [ $# -gt 0 ]; do case "$1" in --pattern) patterns+=("$2"); shift 2 ;; --dir) dest=$2; shift 2 ;; --repo) shift 2 ;; *) shift ;; esac; done
    for p in "${patterns[@]}"; do cp "$dir/$p" "$dest/"; done ;;
  *) echo "stub gh: release $cmd" >&2; exit 2 ;;
esac
"#;
    std::fs::write(stub.join("gh"), gh).unwrap();
    std::fs::set_permissions(stub.join("gh"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let releases = tmp.path().join("releases");
    let github_path = tmp.path().join("github-path");
    let runner = |arch: &str| {
        vec![
            ("PATH", format!("{}:{}", stub.display(), std::env::var("PATH").unwrap())),
            ("GH_STUB_RELEASES", releases.display().to_string()),
            ("RUNNER_TEMP", runner_temp.display().to_string()),
            ("RUNNER_OS", "Linux".to_string()),
            ("RUNNER_ARCH", arch.to_string()),
            ("GITHUB_PATH", github_path.display().to_string()),
        ]
    };
    let env = runner("X64");
    let values = [
        ("github.ref_name", "v9.9.9"),
        ("github.token", "token"),
        ("github.repository", "gpuplan/gpuplan"),
        ("inputs.version", "v9.9.9"),
        ("inputs.github-token", "token"),
        ("github.action_repository || 'gpuplan/gpuplan'", "gpuplan/gpuplan"),
    ];

    let workflow = yaml(RELEASE_WORKFLOW);
    let job = release_job(&workflow);
    for name in ["Package", "Upload to the tag's release"] {
        run_step_ok(step(&job["steps"], name), &job["env"], &env, &workspace, &values);
    }
    let asset = job["env"]["ASSET"].as_str().unwrap();
    let release = releases.join("v9.9.9");
    assert!(release.join(asset).is_file() && release.join(format!("{asset}.sha256")).is_file(), "{:?}", std::fs::read_dir(&release).map(|d| d.count()));
    let (ok, out) = {
        let o = Command::new("sha256sum").arg("-c").arg(format!("{asset}.sha256")).current_dir(&release).output().unwrap();
        (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned())
    };
    assert!(ok, "{out}");

    let action = yaml("action.yml");
    let install = step(&action["runs"]["steps"], INSTALL_STEP);
    run_step_ok(install, &Value::Null, &env, &workspace, &values);
    let installed = PathBuf::from(std::fs::read_to_string(&github_path).unwrap().trim()).join("gpuplan");
    let version = Command::new(&installed).arg("--version").output().unwrap();
    assert!(version.status.success() && String::from_utf8_lossy(&version.stdout).starts_with("gpuplan "), "{}: {version:?}", installed.display());
    // A download that does not match the published checksum is not installed.
    std::fs::write(release.join(asset), b"not the archive").unwrap();
    let out = run_step(install, &Value::Null, &env, &workspace, &values);
    assert!(!out.status.success(), "a corrupt archive was installed: {out:?}");
    // On a runner the archive was not built for, the step says so instead of installing a binary that cannot run.
    let out = run_step(install, &Value::Null, &runner("ARM64"), &workspace, &values);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stdout).contains("use version: source"), "{out:?}");
}
