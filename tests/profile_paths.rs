//! The same profile arguments on every command that reads profiles: positional PATHS (a file or a directory,
//! default `profiles`), the hidden `--profiles` alias the action and older scripts pass, and `explain`'s profile
//! name where the argument is not a path.

mod common;

use std::path::Path;
use std::process::Output;

use common::{gpuplan, tree_bytes};

/// Every command that reads profiles, with what it needs besides them (catalog refresh needs EC2: its arguments
/// are checked through its usage line only).
const COMMANDS: &[&[&str]] = &[&["compile"], &["compile", "--check"], &["diff"], &["commit"], &["lint"], &["explain"]];

const PROFILE: &str = r#"profile "p"
cluster "demo" {
    region "us-east-1"
    zones "us-east-1a" "us-east-1b"
    ami "al2023@v20251023"
}
budget usd-per-hour=20
pool "serve" preset="inference-on-demand" {
    gpu { name "L4"; }
}
"#;

/// A git repository with profiles/p.kdl committed.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("profiles")).unwrap();
    std::fs::write(dir.path().join("profiles/p.kdl"), PROFILE).unwrap();
    for args in [&["init", "-q"][..], &["config", "user.email", "t@example.com"], &["config", "user.name", "t"], &["add", "."], &["commit", "-qm", "profiles"]] {
        assert!(std::process::Command::new("git").current_dir(dir.path()).args(args).status().unwrap().success());
    }
    dir
}

fn run(dir: &Path, command: &[&str], paths: &[&str]) -> Output {
    let args: Vec<&str> = command.iter().chain(paths).copied().collect();
    let out = gpuplan(dir, &args);
    assert!(out.status.success(), "gpuplan {}: {}{}", args.join(" "), String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    out
}

/// Each command with a file path, a directory path, the default, and the hidden `--profiles` flag: it succeeds, and
/// the read-only ones print the same thing and leave the same tree for each form.
#[test]
fn every_command_takes_a_file_or_a_directory() {
    let dir = project();
    run(dir.path(), &["compile"], &[]);
    for command in COMMANDS {
        let forms: [&[&str]; 4] = [&["profiles/p.kdl"], &["profiles"], &[], &["--profiles", "profiles/p.kdl"]];
        let outputs: Vec<(Vec<u8>, _)> = forms.iter().map(|paths| (run(dir.path(), command, paths).stdout, tree_bytes(&dir.path().join("out")))).collect();
        for (form, output) in forms.iter().zip(&outputs).skip(1) {
            assert_eq!(output.1, outputs[0].1, "gpuplan {} {}: out/ differs from the file form's", command.join(" "), form.join(" "));
            if command != &["commit"] {
                assert_eq!(String::from_utf8_lossy(&output.0), String::from_utf8_lossy(&outputs[0].0), "gpuplan {} {}", command.join(" "), form.join(" "));
            }
        }
    }
}

/// `explain p` (a name) and `explain profiles/p.kdl` (a path) explain the same; a name that is neither lists the
/// profiles with a did-you-mean; a missing path is a missing file, not a name.
#[test]
fn explain_takes_a_path_or_a_profile_name() {
    let dir = project();
    let by_path = run(dir.path(), &["explain"], &["profiles/p.kdl"]).stdout;
    let by_name = run(dir.path(), &["explain"], &["p"]).stdout;
    let by_both = run(dir.path(), &["explain"], &["profiles", "p"]).stdout;
    assert!(String::from_utf8_lossy(&by_path).contains("NodePool serve (pool serve"));
    assert_eq!(by_path, by_name);
    assert_eq!(by_path, by_both);
    let typo = gpuplan(dir.path(), &["explain", "q"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("error: no profile `q` in this compile (did you mean `p`?); profiles: p"), "{}", String::from_utf8_lossy(&typo.stderr));
    let missing = gpuplan(dir.path(), &["explain", "profiles/q.kdl"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("E0001"), "{}", String::from_utf8_lossy(&missing.stderr));
}

/// The usage line of every command that reads profiles ends in the same positional PATHS, and none documents the
/// old `--profiles` flag.
#[test]
fn every_command_that_reads_profiles_has_the_same_usage() {
    let dir = tempfile::tempdir().unwrap();
    for command in [&["compile"][..], &["diff"], &["commit"], &["lint"], &["explain"], &["forecast"], &["catalog", "refresh"]] {
        let help = gpuplan(dir.path(), &[command, &["--help"]].concat());
        let help = String::from_utf8(help.stdout).unwrap();
        let usage = help.lines().find(|l| l.starts_with("Usage: ")).unwrap();
        let wanted = if command == ["explain"] { " [PATHS|PROFILE]..." } else { " [PATHS]..." };
        assert!(usage.ends_with(wanted), "{}: {usage}", command.join(" "));
        assert!(help.contains("[default: profiles]"), "{}: {help}", command.join(" "));
        assert!(!help.contains("--profiles"), "{}: {help}", command.join(" "));
    }
}
