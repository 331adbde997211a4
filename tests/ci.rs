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
    let (ok, out) = schema_check("vendor.github-actions", &repo().join("comment/action.yml"));
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
    let (action, comment) = (yaml("action.yml"), yaml("comment/action.yml"));
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
                for step in job["steps"].as_array().into_iter().flatten().filter(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("gpuplan/gpuplan"))) {
                    let uses = step["uses"].as_str().unwrap();
                    let inputs = if uses.starts_with("gpuplan/gpuplan/comment@") { &comment["inputs"] } else { &action["inputs"] };
                    let inputs = inputs.as_object().unwrap();
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
    let (ok, out) = schema_check("vendor.github-workflows", &repo().join(".github/workflows/ci.yml"));
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

/// The release workflow's jobs: build, attest, publish.
fn release_jobs(workflow: &Value) -> (&Value, &Value, &Value) {
    let jobs = &workflow["jobs"];
    assert_eq!(jobs.as_object().unwrap().len(), 3, "{jobs}");
    (&jobs["build"], &jobs["attest"], &jobs["publish"])
}

/// The asset the action downloads is exactly the one the release workflow packs and uploads, on a `v*` tag (the
/// action's `version` input is a tag), for the platform it is built on.
#[test]
fn the_release_asset_is_the_one_the_action_downloads() {
    let action = yaml("action.yml");
    let install = step(&action["runs"]["steps"], INSTALL_STEP);
    let downloaded = install["env"]["GPUPLAN_ASSET"].as_str().expect("the install step's GPUPLAN_ASSET");
    let script = install["run"].as_str().unwrap();
    assert!(script.contains("--pattern \"$GPUPLAN_ASSET\"") && script.contains("tar -xzf \"$dir/$GPUPLAN_ASSET\""), "{script}");

    let workflow = yaml(RELEASE_WORKFLOW);
    assert_eq!(workflow["on"]["push"]["tags"], serde_json::json!(["v*"]), "{workflow}");
    let (build, _, publish) = release_jobs(&workflow);
    let uploaded = workflow["env"]["ASSET"].as_str().expect("the release workflow's ASSET");
    assert_eq!(uploaded, downloaded, "{RELEASE_WORKFLOW} uploads {uploaded}, action.yml downloads {downloaded}");
    assert_eq!(uploaded, "gpuplan-x86_64-unknown-linux-gnu.tar.gz");
    // Built on the oldest hosted image: a binary linked against a newer glibc would not start on older runners.
    assert_eq!(build["runs-on"], "ubuntu-22.04");
    assert_eq!(step(&build["steps"], "Build")["run"], "cargo build --release --locked");
    let upload = step(&publish["steps"], "Upload to the tag's release");
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

/// The release workflow's Package (build job) and Upload (publish job) steps, then the action's install step, run
/// for real with a stand-in `gh` that keeps releases in a directory and refuses to replace an asset without
/// `--clobber` (as gh does), and attestations in another (what the attest job leaves in GitHub's store): the
/// archive the workflow packs is the one the action fetches and verifies, it unpacks to a `gpuplan` on the PATH the
/// action exports, and that binary runs. A second upload to the same tag fails: assets are written once.
#[test]
fn the_release_archive_installs_through_the_actions_step() {
    let tmp = tempfile::tempdir().unwrap();
    let (workspace, runner_temp, stub) = (tmp.path().join("workspace"), tmp.path().join("runner-temp"), tmp.path().join("bin"));
    for d in [&workspace.join("target/release"), &runner_temp, &stub, &tmp.path().join("attested")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::copy(env!("CARGO_BIN_EXE_gpuplan"), workspace.join("target/release/gpuplan")).unwrap();
    // gh release view|create|upload|download against $GH_STUB_RELEASES/<tag>/; attestation verify against
    // $GH_STUB_ATTESTED/<tag> (the digest attested for the tag).
    let gh = r#"#!/usr/bin/env bash
set -euo pipefail
if [ "$1" = attestation ]; then
  file=$3; identity=; shift 3
  while [ $# -gt 0 ]; do case "$1" in --cert-identity) identity=$2; shift 2 ;; *) shift ;; esac; done
  [ "$(cat "$GH_STUB_ATTESTED/${identity##*@refs/tags/}")" = "$(sha256sum "$file" | cut -d' ' -f1)" ]; exit
fi
[ "$1" = release ] || { echo "stub gh: only release and attestation" >&2; exit 2; }
cmd=$2; dir="$GH_STUB_RELEASES/$3"; shift 3
case "$cmd" in
  view) [ -d "$dir" ] ;;
  create|upload)
    mkdir -p "$dir"
    for a in "$@"; do case "$a" in -*) break ;; *)
      [ ! -e "$dir/$(basename "$a")" ] || { echo "asset under the same filename already exists" >&2; exit 1; }
      cp "$a" "$dir/" ;; esac; done ;;
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
            ("GH_STUB_ATTESTED", tmp.path().join("attested").display().to_string()),
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
        ("github.action_repository", "gpuplan/gpuplan"),
        ("github.action_ref", "v9.9.9"),
        ("inputs.version", ""),
        ("inputs.sha256", ""),
        ("inputs.github-token", "token"),
    ];

    let workflow = yaml(RELEASE_WORKFLOW);
    let (build, _, publish) = release_jobs(&workflow);
    run_step_ok(step(&build["steps"], "Package"), &workflow["env"], &env, &workspace, &values);
    let asset = workflow["env"]["ASSET"].as_str().unwrap();
    // What the attest job records for the tag: the archive's digest.
    let digest = Command::new("sha256sum").arg(asset).current_dir(&workspace).output().unwrap();
    let digest = String::from_utf8_lossy(&digest.stdout).split(' ').next().unwrap().to_string();
    std::fs::write(tmp.path().join("attested/v9.9.9"), &digest).unwrap();
    let upload = step(&publish["steps"], "Upload to the tag's release");
    run_step_ok(upload, &workflow["env"], &env, &workspace, &values);
    let release = releases.join("v9.9.9");
    assert!(release.join(asset).is_file() && release.join(format!("{asset}.sha256")).is_file(), "{:?}", std::fs::read_dir(&release).map(|d| d.count()));
    let out = run_step(upload, &workflow["env"], &env, &workspace, &values);
    assert!(!out.status.success(), "a second upload replaced the tag's assets: {out:?}");

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

/// Each release job holds only the permissions it needs: the build reads, the attest job signs, the publish job
/// writes the release, and the workflow grants nothing by default. The publish step never replaces an asset.
#[test]
fn release_jobs_hold_only_the_permissions_each_needs() {
    let workflow = yaml(RELEASE_WORKFLOW);
    assert_eq!(workflow["permissions"], serde_json::json!({}), "nothing by default");
    let (build, attest, publish) = release_jobs(&workflow);
    assert_eq!(build["permissions"], serde_json::json!({"contents": "read"}));
    assert_eq!(attest["permissions"], serde_json::json!({"id-token": "write", "attestations": "write"}));
    assert_eq!(publish["permissions"], serde_json::json!({"contents": "write"}));
    let uses = |job: &Value| job["steps"].as_array().unwrap().iter().filter_map(|s| s["uses"].as_str()).map(|u| u.split('@').next().unwrap().to_string()).collect::<Vec<_>>();
    assert!(uses(build).contains(&"actions/upload-artifact".to_string()), "the build uploads the archive as an artifact");
    assert_eq!(uses(attest), ["actions/download-artifact", "actions/attest-build-provenance"]);
    let signed = attest["steps"].as_array().unwrap().iter().find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/attest-build-provenance@"))).unwrap();
    assert_eq!(signed["with"]["subject-path"], "${{ env.ASSET }}");
    let upload = step(&publish["steps"], "Upload to the tag's release")["run"].as_str().unwrap();
    assert!(!upload.contains("--clobber"), "{upload}");
}

/// The YAML files whose `uses:`, `image:` and `run:` this repository publishes or runs.
const CI_FILES: &[&str] = &[
    "action.yml",
    "comment/action.yml",
    "examples/ci/github-workflow.yml",
    "examples/ci/gitlab-ci.yml",
    ".github/workflows/release.yml",
    ".github/workflows/ci.yml",
];

/// Every workflow block the docs show, with where it is.
fn doc_workflows() -> Vec<(String, Value)> {
    let mut pages = vec![repo().join("README.md")];
    pages.extend(walk_markdown(&repo().join("docs/src")));
    let mut found = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for block in text.split("```yaml\n").skip(1).filter_map(|rest| rest.split("\n```").next()).filter(|b| b.contains("\njobs:") || b.starts_with("jobs:")) {
            found.push((page.display().to_string(), serde_saphyr::from_str(block).unwrap()));
        }
    }
    found
}

/// Every `(key, value)` under `value` whose key is `key`, at any depth.
fn find_key<'a>(value: &'a Value, key: &str, out: &mut Vec<&'a Value>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == key {
                    out.push(v);
                }
                find_key(v, key, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| find_key(v, key, out)),
        _ => {}
    }
}

fn all_ci_yaml() -> Vec<(String, Value)> {
    CI_FILES.iter().map(|f| (f.to_string(), yaml(f))).chain(doc_workflows()).collect()
}

/// Every action is pinned by a full commit sha with its version in a comment (`uses: owner/repo@<40 hex> # vX.Y.Z`),
/// every image by digest (`name:tag@sha256:<64 hex>`): a tag can be moved to other code. Local actions (`./…`) are
/// the repository's own. The exception is this project's own action in the examples and the docs
/// (`gpuplan/gpuplan@v0.1.0`): its commit exists only once the tag is, and the examples say to pin it by that commit.
#[test]
fn every_action_and_image_is_pinned_by_digest() {
    let action = regex::Regex::new(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$").unwrap();
    let image = regex::Regex::new(r"^[a-z0-9./_-]+(:[A-Za-z0-9._-]+)?@sha256:[0-9a-f]{64}$").unwrap();
    let (mut actions, mut images) = (0, 0);
    for (file, doc) in all_ci_yaml() {
        let mut uses = Vec::new();
        find_key(&doc, "uses", &mut uses);
        for u in uses.iter().filter_map(|u| u.as_str()) {
            if u.starts_with("./") || u.starts_with("gpuplan/gpuplan@") || u.starts_with("gpuplan/gpuplan/comment@") {
                continue;
            }
            assert!(action.is_match(u), "{file}: `uses: {u}` is not pinned by a commit sha");
            actions += 1;
        }
        let mut found = Vec::new();
        find_key(&doc, "image", &mut found);
        for i in found.iter().filter_map(|i| i.as_str().or_else(|| i["name"].as_str())) {
            assert!(image.is_match(i), "{file}: `image: {i}` is not pinned by digest");
            images += 1;
        }
    }
    // Each pin names its version, so a reader (and Dependabot) knows what the sha is.
    for file in CI_FILES {
        let text = std::fs::read_to_string(repo().join(file)).unwrap();
        for line in text.lines().filter(|l| l.contains("uses:") && regex::Regex::new(r"@[0-9a-f]{40}").unwrap().is_match(l)) {
            assert!(regex::Regex::new(r"@[0-9a-f]{40} # v\d+\.\d+\.\d+$").unwrap().is_match(line), "{file}: `{}` has no `# vX.Y.Z`", line.trim());
        }
    }
    assert!(actions >= 6 && images >= 1, "{actions} actions, {images} images checked");
    // The check can fail.
    assert!(!action.is_match("actions/checkout@v4") && !image.is_match("rust:1.95"));
}

/// No `run:` script holds a `${{ }}`: an expression is pasted into the script before bash reads it, so an input or
/// an event field there is code (and in a composite action `github.action_repository` is empty there). Everything
/// reaches the scripts through `env:`. GitLab's job has no such expressions; its scripts are checked all the same.
#[test]
fn no_run_script_interpolates_an_expression() {
    let mut scripts = 0;
    for (file, doc) in all_ci_yaml() {
        let mut runs = Vec::new();
        find_key(&doc, "run", &mut runs);
        find_key(&doc, "script", &mut runs);
        for run in runs {
            let text = match run {
                Value::String(s) => s.clone(),
                Value::Array(lines) => lines.iter().filter_map(|l| l.as_str()).collect::<Vec<_>>().join("\n"),
                _ => continue,
            };
            assert!(!text.contains("${{"), "{file}: a run: script interpolates an expression:\n{text}");
            scripts += 1;
        }
    }
    assert!(scripts >= 15, "only {scripts} scripts found");
}

/// A path filter as a regex: `**/` any directories (none included), `**` anything, `*` and `?` within one path
/// segment (GitHub's filter pattern cheat sheet, docs.github.com "Workflow syntax", "Filter pattern cheat sheet";
/// GitLab's `rules:changes`, Ruby's File.fnmatch with FNM_PATHNAME and FNM_EXTGLOB).
fn glob(pattern: &str) -> regex::Regex {
    let mut re = String::from("^");
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        let (piece, len) = if rest.starts_with("**/") {
            ("(?:.*/)?".to_string(), 3)
        } else if rest.starts_with("**") {
            (".*".to_string(), 2)
        } else if c == '*' {
            ("[^/]*".to_string(), 1)
        } else if c == '?' {
            ("[^/]".to_string(), 1)
        } else {
            (regex::escape(&c.to_string()), c.len_utf8())
        };
        re.push_str(&piece);
        rest = &rest[len..];
    }
    regex::Regex::new(&(re + "$")).unwrap()
}

/// Every file, relative to `root`, that `gpuplan args` opened (or tried to: a file the pull request may add is an
/// input too), read from strace's record of its open calls; .git/ (the base, read as git objects) left out.
fn files_opened(root: &Path, args: &[&str]) -> Vec<String> {
    let log = root.join("strace.log");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=open,openat", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_gpuplan"))
        .args(args)
        .current_dir(root)
        .env("NO_COLOR", "1")
        .output()
        .expect("strace is not installed (run .ci/run)");
    assert!(out.status.code().is_some_and(|c| c <= 1), "gpuplan {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let opened = regex::Regex::new(r#"open(?:at)?\((?:AT_FDCWD, )?"([^"]+)""#).unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let mut files: Vec<String> = opened
        .captures_iter(&text)
        .filter_map(|c| {
            let path = Path::new(&c[1]);
            let relative = if path.is_absolute() { path.strip_prefix(root).ok()?.to_path_buf() } else { path.to_path_buf() };
            let relative = relative.to_string_lossy().trim_start_matches("./").to_string();
            (!relative.is_empty() && !relative.starts_with(".git") && !relative.starts_with("strace") && !root.join(&relative).is_dir()).then_some(relative)
        })
        .collect();
    files.sort();
    files.dedup();
    files
}

/// The path filters of the example workflows (GitHub `on.pull_request.paths`, GitLab `rules:changes`) cover every
/// file the action's gpuplan commands (`compile --check`, `diff --base HEAD --format markdown`, `lint`) open in a
/// repository with every kind of input: profiles, catalogs, out/, templates named by gpuplan.kdl, the demand file and
/// the CSV it names. A pull request that changes only one of them still gets the check and the comment.
#[test]
fn the_example_workflows_path_filters_cover_every_file_gpuplan_reads() {
    let workflow = yaml("examples/ci/github-workflow.yml");
    let github: Vec<regex::Regex> = workflow["on"]["pull_request"]["paths"].as_array().unwrap().iter().map(|p| glob(p.as_str().unwrap())).collect();
    let gitlab_job = yaml("examples/ci/gitlab-ci.yml");
    let gitlab: Vec<regex::Regex> = gitlab_job["gpuplan"]["rules"][0]["changes"].as_array().unwrap().iter().map(|p| glob(p.as_str().unwrap())).collect();

    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let copy = |from: &str| {
        let status = Command::new("cp").args(["-r", &repo().join(from).display().to_string(), &root.display().to_string()]).status().unwrap();
        assert!(status.success());
    };
    copy("catalogs");
    std::fs::create_dir_all(root.join("profiles")).unwrap();
    std::fs::copy(repo().join("profiles/llm-inference.kdl"), root.join("profiles/llm-inference.kdl")).unwrap();
    std::fs::create_dir_all(root.join("templates")).unwrap();
    std::fs::copy(repo().join("templates/ec2nodeclass.yaml.j2"), root.join("templates/ec2nodeclass.yaml.j2")).unwrap();
    std::fs::write(root.join("gpuplan.kdl"), "profiles \"profiles\"\nout \"out\"\ntemplates \"templates\"\n").unwrap();
    std::fs::create_dir_all(root.join("demand")).unwrap();
    std::fs::write(root.join("demand/llm.csv"), "\"Time\",\"Value\"\n\"1764201600000\",\"140\"\n\"1764205200000\",\"210\"\n").unwrap();
    std::fs::write(root.join("gpuplan.demand.kdl"), "horizon \"6h\"\nseeds 1\ncluster \"ml-prod\" {\n    workload \"llm-server\" {\n        metric { csv \"demand/llm.csv\" }\n    }\n}\n").unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).current_dir(root).env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1").output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    let compiled = Command::new(env!("CARGO_BIN_EXE_gpuplan")).arg("compile").current_dir(root).output().unwrap();
    assert!(compiled.status.success(), "{}", String::from_utf8_lossy(&compiled.stderr));
    git(&["add", "-A"]);
    git(&["-c", "user.name=dev", "-c", "user.email=dev@example.com", "commit", "-q", "-m", "base"]);

    let mut read: Vec<String> = Vec::new();
    for args in [&["compile", "--check"][..], &["diff", "--base", "HEAD", "--format", "markdown"], &["lint"]] {
        read.extend(files_opened(root, args));
    }
    read.sort();
    read.dedup();
    for kind in ["profiles/llm-inference.kdl", "catalogs/us-east-1.json", "out/ml-prod/kustomization.yaml", "templates/ec2nodeclass.yaml.j2", "gpuplan.kdl", "gpuplan.demand.kdl", "demand/llm.csv"] {
        assert!(read.iter().any(|f| f == kind), "gpuplan did not open {kind}: the case does not exercise it\n{read:#?}");
    }
    for file in &read {
        assert!(github.iter().any(|g| g.is_match(file)), "examples/ci/github-workflow.yml's paths miss {file}");
        assert!(gitlab.iter().any(|g| g.is_match(file)), "examples/ci/gitlab-ci.yml's changes miss {file}");
    }
    // The filters can miss: a file outside them.
    assert!(!github.iter().any(|g| g.is_match("src/main.rs")) && !gitlab.iter().any(|g| g.is_match("src/main.rs")));
}
