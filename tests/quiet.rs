//! `-q/--quiet`: only errors and what a command is for (its stdout; lint's findings); no warnings (the catalog-age warning
//! included), notes or status lines; exit codes unchanged. Checked over every command that compiles, on profiles
//! that compile with warnings.

use std::path::Path;
use std::process::{Command, Output};

/// A profile that compiles with a lint warning (GP002: an unpinned AMI).
const WARNS: &str = r#"cluster "ml-prod" {
    region "us-east-1"
    zones "us-east-1a" "us-east-1b"
    ami "al2023@latest"
}
budget usd-per-hour=40
pool "inference" preset="inference-on-demand" {
    gpu {
        name "L4"
    }
}
"#;

fn gpuplan(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir).env("NO_COLOR", "1").args(args).output().unwrap()
}

fn project(profile: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("profiles")).unwrap();
    std::fs::write(dir.path().join("profiles/ml.kdl"), profile).unwrap();
    dir
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Each compiling command, run twice on the same input (out/ reset between): without and with `--quiet`. The catalog
/// is taken as stale (`--max-catalog-age-days 0`) so that its warning is printed too.
#[test]
fn quiet_hides_warnings_and_status_but_keeps_stdout_and_exit_codes_for_every_compiling_command() {
    let commands: &[&[&str]] = &[&["compile"], &["compile", "--check"], &["lint"], &["lint", "--deny-warnings"], &["explain"], &["diff"]];
    for args in commands {
        let args: Vec<&str> = args.iter().copied().chain(["--max-catalog-age-days", "0"]).collect();
        let loud = gpuplan(project(WARNS).path(), &args);
        let quiet = gpuplan(project(WARNS).path(), &[&args[..], &["--quiet"]].concat());
        let loud_err = stderr(&loud);
        assert!(loud_err.contains("GP002") && loud_err.contains("catalog's newest data is"), "{args:?} prints its warnings without -q:\n{loud_err}");
        assert_eq!(quiet.status.code(), loud.status.code(), "{args:?}: the exit code is unchanged");
        assert_eq!(quiet.stdout, loud.stdout, "{args:?}: stdout is unchanged");
        let quiet_err = stderr(&quiet);
        let shown: Vec<&str> = quiet_err.lines().filter(|l| !l.is_empty()).collect();
        if args[0] == "lint" {
            // lint's findings are its output: the same reports, without the catalog-age warning or the count.
            assert!(quiet_err.contains("GP002") && !quiet_err.contains("catalog's newest data") && !quiet_err.contains("finding"), "{args:?}:\n{quiet_err}");
            continue;
        }
        let allowed = |l: &&str| l.starts_with("error:") || l.ends_with("is stale: run `gpuplan compile` and commit the result");
        assert!(shown.iter().all(|l| allowed(l)), "{args:?} -q printed more than errors:\n{}", shown.join("\n"));
    }
}

#[test]
fn quiet_compile_writes_what_compile_writes_and_says_nothing() {
    let (loud, quiet) = (project(WARNS), project(WARNS));
    assert!(stderr(&gpuplan(loud.path(), &["compile"])).contains("wrote out"));
    let output = gpuplan(quiet.path(), &["-q", "compile"]);
    assert!(output.status.success() && output.stderr.is_empty() && output.stdout.is_empty(), "{}", stderr(&output));
    let read = |d: &Path| std::fs::read_to_string(d.join("out/ml-prod/nodepool-inference.yaml")).ok();
    assert!(read(quiet.path()).is_some() && read(quiet.path()) == read(loud.path()));
}

/// Errors stay, the note pointing at explain-error goes.
#[test]
fn quiet_keeps_errors_and_drops_the_explain_error_note() {
    let broken = WARNS.replace("budget usd-per-hour=40", "budget usd-per-hour=40\npool \"x\" preset=\"inference-sopt\"");
    let loud = gpuplan(project(&broken).path(), &["compile"]);
    let quiet = gpuplan(project(&broken).path(), &["compile", "--quiet"]);
    assert_eq!((loud.status.code(), quiet.status.code()), (Some(2), Some(2)));
    assert!(stderr(&loud).contains("note: `gpuplan explain-error E0116` explains this code"), "{}", stderr(&loud));
    assert!(stderr(&quiet).contains("E0116") && stderr(&quiet).contains("error: 1 error in the profiles"), "{}", stderr(&quiet));
    assert!(!stderr(&quiet).contains("note:") && !stderr(&quiet).contains("GP002"), "{}", stderr(&quiet));
}

/// GitHub annotations are CI's output, not chatter: `-q --message-format github` still prints each warning's
/// workflow command (the runner shows it on the profile line), only without the human report after it.
#[test]
fn quiet_keeps_the_github_annotations() {
    let dir = project(WARNS);
    let out = gpuplan(dir.path(), &["-q", "--message-format", "github", "compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.lines().any(|l| l.starts_with("::warning ") && l.contains("GP002")), "{err}");
    assert!(!err.contains("╭─["), "no human report under -q: {err}");
}
