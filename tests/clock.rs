//! `GPUPLAN_NOW`: the one clock of the command line (the catalog-age warning of every command that compiles, the
//! pull-request comment's catalog age). The docs' examples fix it so that their output does not depend on the day.

use std::path::Path;
use std::process::{Command, Output};

/// The built-in us-east-1 catalog's newest data is of 2026-07-20.
const PROFILE: &str = r#"cluster "c" {
    region "us-east-1"
    zones "us-east-1a"
    ami "al2023@v20251023"
}
pool "a" preset="inference-on-demand" {
    gpu { name "L4"; }
    max-accelerators 4
}
"#;

/// Every command that compiles profiles, with what it needs beyond the profiles.
const COMMANDS: &[&[&str]] = &[&["compile"], &["compile", "--check"], &["diff"], &["explain"], &["lint"], &["commit", "-m", "x"]];

fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("profiles")).unwrap();
    std::fs::write(dir.path().join("profiles/a.kdl"), PROFILE).unwrap();
    for args in [&["init", "-q"][..], &["config", "user.name", "t"], &["config", "user.email", "t@example.com"]] {
        assert!(Command::new("git").args(args).current_dir(dir.path()).status().unwrap().success());
    }
    dir
}

fn gpuplan(dir: &Path, args: &[&str], now: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gpuplan"));
    command.args(args).current_dir(dir).env("NO_COLOR", "1").env_remove("GPUPLAN_NOW").env_remove("SOURCE_DATE_EPOCH");
    if let Some(now) = now {
        command.env("GPUPLAN_NOW", now);
    }
    command.output().unwrap()
}

#[test]
fn every_compiling_command_counts_the_catalogs_age_to_gpuplan_now() {
    let dir = repository();
    for args in COMMANDS {
        // `--check` and `diff` compare with an out/ that exists.
        gpuplan(dir.path(), &["compile"], Some("2026-07-21T00:00:00Z"));
        let stderr = String::from_utf8_lossy(&gpuplan(dir.path(), args, Some("2026-11-27T00:00:00Z")).stderr).into_owned();
        assert!(stderr.contains("the us-east-1 catalog's newest data is 130 days old (2026-07-20"), "gpuplan {args:?}: {stderr}");
        let stderr = String::from_utf8_lossy(&gpuplan(dir.path(), args, Some("2026-07-25T12:00:00+02:00")).stderr).into_owned();
        assert!(!stderr.contains("days old"), "gpuplan {args:?}, 5 days after the catalog's data: {stderr}");
    }
}

#[test]
fn a_gpuplan_now_that_is_not_rfc_3339_is_a_usage_error_and_nothing_is_written() {
    for args in COMMANDS {
        let dir = repository();
        let out = gpuplan(dir.path(), args, Some("yesterday"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "gpuplan {args:?}: {stderr}");
        assert!(stderr.starts_with("error: GPUPLAN_NOW=\"yesterday\" is not an RFC 3339 time such as 2026-11-27T00:00:00Z"), "gpuplan {args:?}: {stderr}");
        assert!(!dir.path().join("out").exists(), "gpuplan {args:?} wrote out/");
    }
}

/// The pull-request comment's footer gives the catalog's age at GPUPLAN_NOW; SOURCE_DATE_EPOCH (the
/// reproducible-builds convention the action's tests use) still wins over it.
#[test]
fn the_comments_catalog_age_follows_the_same_clock() {
    let dir = repository();
    gpuplan(dir.path(), &["compile"], Some("2026-07-21T00:00:00Z"));
    // A change, so that there is a comment with its footer.
    std::fs::write(dir.path().join("profiles/a.kdl"), PROFILE.replace("max-accelerators 4", "max-accelerators 8")).unwrap();
    let comment = String::from_utf8_lossy(&gpuplan(dir.path(), &["diff", "--format", "markdown"], Some("2026-11-27T00:00:00Z")).stdout).into_owned();
    assert!(comment.contains("Catalog us-east-1: data of 2026-07-20, 130 days old."), "{comment}");
    let mut command = Command::new(env!("CARGO_BIN_EXE_gpuplan"));
    let out = command.args(["diff", "--format", "markdown"]).current_dir(dir.path()).env("GPUPLAN_NOW", "2026-11-27T00:00:00Z").env("SOURCE_DATE_EPOCH", "1784592000").output().unwrap();
    let comment = String::from_utf8_lossy(&out.stdout);
    assert!(comment.contains("Catalog us-east-1: data of 2026-07-20, 1 days old."), "{comment}");
}
