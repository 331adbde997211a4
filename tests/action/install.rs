//! How the action gets its gpuplan: never from the pull request's code.
//! - A release (the default): downloaded from the action's own repository and tag (`github.action_repository` and
//!   `github.action_ref`, read through a step's `env:`), installed only when the archive's `sha256sum` line is the
//!   release's `.sha256` for that asset name, a pinned `sha256` agrees, and `gh attestation verify` finds the
//!   build provenance attestation of the action repository's release workflow for that tag (which the release
//!   cannot replace).
//! - `version: source`: `cargo install` of the action's own checkout, run from $RUNNER_TEMP with RUSTUP_TOOLCHAIN
//!   set. The stand-in `cargo` below is rustup's proxy and cargo as their docs describe them: the toolchain is
//!   `+toolchain`, else RUSTUP_TOOLCHAIN, else the nearest rust-toolchain.toml walking up from the current directory
//!   (rust-lang.github.io/rustup/overrides.html, "Overrides"; a `path =` toolchain runs that directory's cargo), and
//!   `cargo install --path P` reads the .cargo/config.toml files from P upwards, other installs only $CARGO_HOME's
//!   (doc.rust-lang.org/cargo/commands/cargo-install.html, "Configuration Discovery"; a `build.rustc` there runs).

use std::path::{Path, PathBuf};

use crate::fixture::{ASSET, PullRequest, VERSION};
use crate::{edit_profile, only_comment, runner};

const INSTALL: &str = "Install gpuplan (release binary)";
const SOURCE: &str = "Install gpuplan (cargo install --locked, outside the work tree)";

fn budget_change() -> PullRequest {
    PullRequest::new(edit_profile("budget usd-per-hour=150", "budget usd-per-hour=100"), true)
}

fn release_dir(pr: &PullRequest) -> PathBuf {
    pr.root.path().join("gh/releases").join(VERSION)
}

fn calls(pr: &PullRequest) -> String {
    std::fs::read_to_string(pr.root.path().join("gh/calls")).unwrap_or_default()
}

/// The install was refused: the step failed with `message`, and no later step ran a gpuplan.
fn assert_refused(run: &crate::runner::Run, message: &str) {
    assert_eq!(run.outcome(INSTALL), "failure", "{}", run.log);
    assert_eq!(run.outcome("gpuplan --version"), "skipped", "{}", run.log);
    assert!(run.annotations.iter().any(|a| a.starts_with("::error title=gpuplan::") && a.contains(message)), "{:?}\n{}", run.annotations, run.log);
}

#[test]
fn an_empty_version_installs_the_release_of_the_actions_own_repository_and_tag() {
    let pr = budget_change();
    let mut runner = runner(&pr, &pr.checkout(), "ghs_test", &[("version", "")]);
    runner.github["action_repository"] = "platform-team/gpuplan".into();
    runner.env.retain(|(k, _)| k != "GH_STUB_ACTION_REPOSITORY");
    runner.env.push(("GH_STUB_ACTION_REPOSITORY".into(), "platform-team/gpuplan".into()));
    let run = runner.run(&crate::action());
    assert!(!run.failed, "{}", run.log);
    let calls = calls(&pr);
    assert!(calls.contains(&format!("gh release download {VERSION} --repo platform-team/gpuplan --pattern {ASSET} --pattern {ASSET}.sha256")), "{calls}");
    let verify = format!("--repo platform-team/gpuplan --cert-identity https://github.com/platform-team/gpuplan/.github/workflows/release.yml@refs/tags/{VERSION}");
    assert!(calls.lines().any(|l| l.starts_with("gh attestation verify ") && l.ends_with(&verify)), "{calls}");
    only_comment(&pr, &run);
}

#[test]
fn an_action_pinned_by_commit_without_a_version_is_an_error_asking_for_one() {
    let pr = budget_change();
    let mut runner = runner(&pr, &pr.checkout(), "ghs_test", &[("version", "")]);
    runner.github["action_ref"] = pr.head.clone().into();
    let run = runner.run(&crate::action());
    assert_refused(&run, "set the action's `version` input to the gpuplan release to install");
    assert!(!calls(&pr).contains("release download"), "nothing was downloaded");
}

/// Pinned by commit (`uses: gpuplan/gpuplan@<sha> # v0.1.0`, as the examples advise) with `version` naming the
/// release: the attestation must name that commit as the build's source (`gh attestation verify --source-digest`),
/// so a tag moved and released again from other code is not installed.
#[test]
fn an_action_pinned_by_commit_installs_only_the_release_built_from_that_commit() {
    let pr = budget_change();
    let mut pinned = runner(&pr, &pr.checkout(), "ghs_test", &[]);
    pinned.github["action_ref"] = crate::fixture::RELEASE_COMMIT.into();
    let run = pinned.run(&crate::action());
    assert!(!run.failed, "{}", run.log);
    assert!(calls(&pr).lines().any(|l| l.starts_with("gh attestation verify ") && l.ends_with(&format!("--source-digest {}", crate::fixture::RELEASE_COMMIT))), "{}", calls(&pr));

    let pr = budget_change();
    let mut moved = runner(&pr, &pr.checkout(), "ghs_test", &[]);
    let other = "0123456789abcdef0123456789abcdef01234567";
    moved.github["action_ref"] = other.into();
    assert_refused(&moved.run(&crate::action()), &format!("for v0.1.0 built from the action's commit {other}: not installed"));
}

#[test]
fn a_release_whose_archive_does_not_match_its_checksum_is_refused() {
    let pr = budget_change();
    let runner = runner(&pr, &pr.checkout(), "ghs_test", &[]);
    std::fs::write(release_dir(&pr).join(ASSET), b"not the archive").unwrap();
    assert_refused(&runner.run(&crate::action()), &format!("the release's {ASSET} does not match its {ASSET}.sha256"));
}

/// The published line carries the archive's real digest under another asset's name: `sha256sum -c` would check
/// that other file (or fail on its absence); the action compares the exact line it computes for its own asset.
#[test]
fn a_release_whose_checksum_names_another_asset_is_refused() {
    let pr = budget_change();
    let runner = runner(&pr, &pr.checkout(), "ghs_test", &[]);
    let sums = release_dir(&pr).join(format!("{ASSET}.sha256"));
    let line = std::fs::read_to_string(&sums).unwrap();
    std::fs::write(&sums, line.replace(ASSET, "gpuplan-aarch64-unknown-linux-gnu.tar.gz")).unwrap();
    assert_refused(&runner.run(&crate::action()), "does not match its");
}

/// Whoever can replace a release asset can replace its checksum beside it: the archive and its `.sha256` swapped
/// together (a `gpuplan` that writes a canary) still have no attestation from the release workflow.
#[test]
fn a_release_replaced_with_its_checksum_is_refused_by_the_attestation() {
    let pr = budget_change();
    let runner = runner(&pr, &pr.checkout(), "ghs_test", &[]);
    let canary = pr.root.path().join("canary");
    let release = release_dir(&pr);
    std::fs::write(release.join("gpuplan"), format!("#!/bin/sh\ntouch {}\n", canary.display())).unwrap();
    std::fs::set_permissions(release.join("gpuplan"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let swap = format!("tar -czf {ASSET} gpuplan && rm gpuplan && sha256sum {ASSET} > {ASSET}.sha256");
    assert!(std::process::Command::new("bash").args(["-c", &swap]).current_dir(&release).status().unwrap().success());
    let run = runner.run(&crate::action());
    assert_refused(&run, "has no build provenance attestation from gpuplan/gpuplan's release workflow for v0.1.0");
    assert!(!canary.exists(), "the swapped binary ran");
}

#[test]
fn a_pinned_sha256_the_release_does_not_have_is_refused() {
    let pr = budget_change();
    let pinned = "0".repeat(64);
    let runner = runner(&pr, &pr.checkout(), "ghs_test", &[("sha256", &pinned)]);
    assert_refused(&runner.run(&crate::action()), &format!("not the pinned {pinned}"));
}

/// rustup's proxy and `cargo install` as their docs say (module doc), recording where and how they ran; the install
/// puts this test's gpuplan in `--root`.
const CARGO: &str = r#"#!/usr/bin/env bash
set -euo pipefail
printf 'cwd=%s\nRUSTUP_TOOLCHAIN=%s\nargs=%s\n' "$PWD" "${RUSTUP_TOOLCHAIN:-}" "$*" >> "$STAND_IN_LOG"
# rustup: the toolchain of the nearest rust-toolchain.toml, unless RUSTUP_TOOLCHAIN names one.
if [ -z "${RUSTUP_TOOLCHAIN:-}" ]; then
  dir=$PWD
  while [ "$dir" != / ]; do
    if [ -f "$dir/rust-toolchain.toml" ]; then
      path=$(sed -n 's/^path *= *"\(.*\)"/\1/p' "$dir/rust-toolchain.toml")
      [ -z "$path" ] || exec "$dir/$path/bin/cargo" "$@"
      break
    fi
    dir=$(dirname "$dir")
  done
fi
[ "$1" = install ] || { echo "stand-in cargo: $*" >&2; exit 2; }
root=; src=
while [ $# -gt 0 ]; do case "$1" in --root) root=$2; shift 2 ;; --path) src=$2; shift 2 ;; *) shift ;; esac; done
# cargo install --path P: the .cargo/config.toml files from P upwards; a build.rustc there is run.
dir=$src
while [ -n "$dir" ] && [ "$dir" != / ]; do
  rustc=$(sed -n 's/^rustc *= *"\(.*\)"/\1/p' "$dir/.cargo/config.toml" 2>/dev/null || true)
  [ -z "$rustc" ] || "$dir/$rustc" -vV
  dir=$(dirname "$dir")
done
mkdir -p "$root/bin"
cp "$GPUPLAN_UNDER_TEST" "$root/bin/gpuplan"
"#;

/// A pull request that adds a `path =` toolchain and a `build.rustc`, both of which would run its own code (each
/// writes the canary), and changes the budget.
fn pull_request_with_its_own_toolchain(canary: &Path) -> PullRequest {
    let canary = canary.display().to_string();
    PullRequest::new(
        move |dir: &Path| {
            edit_profile("budget usd-per-hour=150", "budget usd-per-hour=100")(dir);
            std::fs::create_dir_all(dir.join("evil/bin")).unwrap();
            std::fs::create_dir_all(dir.join(".cargo")).unwrap();
            std::fs::write(dir.join("rust-toolchain.toml"), "[toolchain]\npath = \"evil\"\n").unwrap();
            std::fs::write(dir.join(".cargo/config.toml"), "[build]\nrustc = \"evil/bin/rustc\"\n").unwrap();
            for tool in ["cargo", "rustc"] {
                std::fs::write(dir.join("evil/bin").join(tool), format!("#!/bin/sh\necho {tool} >> {canary}\n")).unwrap();
                std::fs::set_permissions(dir.join("evil/bin").join(tool), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
            }
        },
        true,
    )
}

fn stand_in_cargo(pr: &PullRequest) -> PathBuf {
    let bin = pr.root.path().join("cargo-bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("cargo"), CARGO).unwrap();
    std::fs::set_permissions(bin.join("cargo"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    bin
}

#[test]
fn version_source_reads_neither_the_pull_requests_toolchain_nor_its_cargo_config() {
    let canary = tempfile::tempdir().unwrap();
    let canary = canary.path().join("canary");
    let pr = pull_request_with_its_own_toolchain(&canary);
    let ws = pr.checkout();
    assert!(ws.join("rust-toolchain.toml").is_file() && ws.join(".cargo/config.toml").is_file());
    let log = pr.root.path().join("cargo.log");
    let mut runner = runner(&pr, &ws, "ghs_test", &[("version", "source")]);
    runner.path.push(stand_in_cargo(&pr));
    runner.env.push(("STAND_IN_LOG".into(), log.display().to_string()));
    runner.env.push(("GPUPLAN_UNDER_TEST".into(), env!("CARGO_BIN_EXE_gpuplan").into()));
    let run = runner.run(&crate::action());
    assert!(!run.failed, "{}", run.log);
    assert_eq!(run.outcome(SOURCE), "success");
    assert!(!canary.exists(), "the pull request's toolchain or config ran: {}", std::fs::read_to_string(&canary).unwrap_or_default());
    let recorded = std::fs::read_to_string(&log).unwrap();
    let temp = runner.home.join("runner-temp");
    assert!(recorded.contains(&format!("cwd={}\n", temp.display())), "cargo ran outside $RUNNER_TEMP:\n{recorded}");
    assert!(recorded.contains("RUSTUP_TOOLCHAIN=stable\n"), "{recorded}");
    assert!(recorded.contains(&format!("--path {} --root", env!("CARGO_MANIFEST_DIR"))), "the action's own checkout is built:\n{recorded}");
    assert!(!recorded.contains(&ws.display().to_string()), "nothing of the work tree is named:\n{recorded}");
    only_comment(&pr, &run);

    // The stand-in can tell: the step as it was (cargo install --path <action> from the work tree, no
    // RUSTUP_TOOLCHAIN) runs the pull request's cargo.
    let out = std::process::Command::new(stand_in_cargo(&pr).join("cargo"))
        .args(["install", "--locked", "--path", ".", "--root", "x"])
        .current_dir(&ws)
        .env("STAND_IN_LOG", &log)
        .env_remove("RUSTUP_TOOLCHAIN")
        .output()
        .unwrap();
    assert!(out.status.success() && std::fs::read_to_string(&canary).unwrap() == "cargo\n", "{out:?}");
}

/// A local `uses: ./` (the action inside the work tree) is the pull request's own code: not built.
#[test]
fn version_source_refuses_an_action_inside_the_work_tree() {
    let pr = budget_change();
    let ws = pr.checkout();
    let mut runner = runner(&pr, &ws, "ghs_test", &[("version", "source")]);
    runner.path.push(stand_in_cargo(&pr));
    runner.action_path = ws.clone();
    let run = runner.run(&crate::action());
    assert_eq!(run.outcome(SOURCE), "failure", "{}", run.log);
    assert!(run.annotations.iter().any(|a| a.contains("is inside the work tree")), "{:?}", run.annotations);
}

/// `base: --upload-pack=…` would be read by `git fetch` as its option (and run the command): the base is a commit
/// or a ref name, or the step stops before git.
#[test]
fn an_option_like_base_is_refused_before_git_fetch() {
    let pr = budget_change();
    let canary = pr.root.path().join("canary");
    let base = format!("--upload-pack=touch {};git-upload-pack", canary.display());
    let run = runner(&pr, &pr.checkout(), "ghs_test", &[("base", &base)]).run(&crate::action());
    assert_eq!(run.outcome("Fetch the pull request's base"), "failure", "{}", run.log);
    assert!(run.annotations.iter().any(|a| a.contains("is neither a commit (40 hex digits) nor a ref name")), "{:?}", run.annotations);
    assert!(!canary.exists(), "git ran the base as its --upload-pack");
}
