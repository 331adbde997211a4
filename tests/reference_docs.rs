//! The generated reference (docs/src/reference/), `gpuplan explain-error` and the man pages: each is generated from
//! the code (the parser's node table, clap's command tree, the error-code table, src/cli/manual/tables.rs), and these
//! tests fail when a committed page is stale, when a page refers to one that is not written, or when an environment
//! variable gpuplan reads is not documented.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gpuplan::diagnostic::ErrorCode;

fn gpuplan(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir).env("NO_COLOR", "1").args(args).output().unwrap()
}

fn stdout(args: &[&str]) -> String {
    let output = gpuplan(Path::new(env!("CARGO_MANIFEST_DIR")), args);
    assert!(output.status.success(), "gpuplan {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Each generated page and the command that prints it.
const PAGES: &[(&str, &[&str])] = &[
    ("docs/src/reference/profile.md", &["schema", "--format", "markdown"]),
    ("docs/src/reference/cli.md", &["man", "--format", "markdown"]),
    ("docs/src/reference/errors.md", &["explain-error", "--all"]),
];

const BLESS: &str = "GPUPLAN_BLESS=1 cargo test --locked --test reference_docs";

/// The page: the command's output with a line under its title saying it is generated and how to regenerate it.
fn page(args: &[&str]) -> String {
    let text = stdout(args);
    let (title, rest) = text.split_once('\n').unwrap();
    format!("{title}\n\n> Generated from the code by `gpuplan {}`; do not edit. Regenerate with `{BLESS}`.\n{rest}", args.join(" "))
}

/// With GPUPLAN_BLESS=1 the pages are rewritten; otherwise a stale one fails with its diff.
#[test]
fn reference_pages_are_what_the_code_generates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stale = Vec::new();
    for (path, args) in PAGES {
        let want = page(args);
        let file = root.join(path);
        let have = std::fs::read_to_string(&file).unwrap_or_default();
        if have == want {
            continue;
        }
        if std::env::var_os("GPUPLAN_BLESS").is_some() {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &want).unwrap();
            continue;
        }
        let diff = similar::TextDiff::from_lines(&have, &want).unified_diff().header(path, "generated").to_string();
        stale.push(format!("{path} is stale (run `{BLESS}` to rewrite it):\n{diff}"));
    }
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}

/// The error index's section of `code`: from its `## E0142` heading to the next code's.
fn index_entry<'a>(index: &'a str, code: ErrorCode) -> &'a str {
    let heading = format!("\n## {code}\n");
    let start = index.find(&heading).unwrap_or_else(|| panic!("no heading `## {code}` in errors.md")) + 1;
    let end = index[start..].find("\n## E").map_or(index.len(), |at| start + at + 1);
    &index[start..end]
}

/// The index runs each example in a directory named after its code (`e0142/`, made by the command when the example
/// has no files); explain-error shows it as written.
fn as_written(entry: &str, code: ErrorCode) -> String {
    let dir = code.as_str().to_lowercase();
    let (run, make_and_run) = (format!("$ (cd {dir} && "), format!("$ (mkdir {dir} && cd {dir} && "));
    entry
        .lines()
        .map(|line| match line.strip_prefix(&run).or_else(|| line.strip_prefix(&make_and_run)) {
            Some(command) => format!("$ {}", command.strip_suffix(')').unwrap()),
            None if line == "```console,exit=2" => "```console".to_string(),
            None if line.starts_with("```") => line.replacen(&format!(" {dir}/"), " ", 1),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn explain_error_prints_the_index_entry_of_every_code() {
    let index = stdout(&["explain-error", "--all"]);
    let mut differ = Vec::new();
    for &code in ErrorCode::ALL {
        let explained = stdout(&["explain-error", code.as_str()]);
        assert!(explained.starts_with(&format!("## {code}\n\n**{}**\n\n", code.summary())), "{explained}");
        assert!(explained.contains(code.explanation()) && explained.contains("### Example"), "{code}: {explained}");
        if as_written(index_entry(&index, code), code).trim_end() != explained.trim_end() {
            differ.push(code.as_str());
        }
    }
    assert!(differ.is_empty(), "explain-error differs from the index for {differ:?}");
}

#[test]
fn explain_error_reads_a_code_in_lower_case_or_without_its_e() {
    let want = stdout(&["explain-error", "E0142"]);
    for spelling in ["e0142", "0142"] {
        assert_eq!(stdout(&["explain-error", spelling]), want, "{spelling}");
    }
}

#[test]
fn explain_error_of_an_unknown_code_is_a_plain_error_naming_the_nearest_codes() {
    let output = gpuplan(Path::new(env!("CARGO_MANIFEST_DIR")), &["explain-error", "E0144"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr, "error: unknown error code `E0144`; did you mean one of E0143, E0142, E0141?\n");
}

/// Every page `gpuplan man --out-dir` writes, by file name.
fn man_pages() -> (tempfile::TempDir, Vec<(String, String)>) {
    let dir = tempfile::tempdir().unwrap();
    let output = gpuplan(dir.path(), &["man", "--out-dir", "man1"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let mut pages: Vec<(String, String)> = std::fs::read_dir(dir.path().join("man1"))
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    pages.sort();
    (dir, pages)
}

#[test]
fn man_out_dir_writes_a_page_per_command_with_every_section() {
    let (_dir, pages) = man_pages();
    let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
    for name in ["gpuplan.1", "gpuplan-compile.1", "gpuplan-explain-error.1", "gpuplan-catalog.1", "gpuplan-catalog-refresh.1"] {
        assert!(names.contains(&name), "{name} not in {names:?}");
    }
    assert!(!names.iter().any(|n| n.contains("help")), "clap's help subcommand has no page: {names:?}");
    for (name, text) in &pages {
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "\"EXIT STATUS\"", "ENVIRONMENT", "EXAMPLES", "\"SEE ALSO\""] {
            assert!(text.contains(&format!("\n.SH {section}\n")), "{name} has no {section} section");
        }
        assert_eq!(text.matches(".ds Aq").count(), 2, "{name}: roff's preamble once");
    }
}

#[test]
fn man_prints_the_page_of_the_command_it_is_given() {
    let (_dir, pages) = man_pages();
    let page = |name: &str| pages.iter().find(|(n, _)| n == name).unwrap().1.clone();
    assert_eq!(stdout(&["man"]), page("gpuplan.1"));
    assert_eq!(stdout(&["man", "compile"]), page("gpuplan-compile.1"));
    assert_eq!(stdout(&["man", "catalog", "refresh"]), page("gpuplan-catalog-refresh.1"));
    let output = gpuplan(Path::new("."), &["man", "compiel"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("error: no man page for `compiel`; did you mean `compile`? the commands are: init, compile, "));
}

/// Every `gpuplan-x(1)` a man page or the CLI reference names is a page `--out-dir` writes.
#[test]
fn every_page_a_generated_page_refers_to_exists() {
    let (_dir, pages) = man_pages();
    let written: BTreeSet<String> = pages.iter().map(|(n, _)| n.trim_end_matches(".1").to_string()).collect();
    let reference = regex::Regex::new(r"\bgpuplan(?:-[a-z]+)*\(1\)").unwrap();
    let fonts = regex::Regex::new(r"\\f[BIRP]").unwrap();
    let texts = pages.iter().map(|(n, t)| (n.clone(), t.clone())).chain([("cli.md".to_string(), stdout(&["man", "--format", "markdown"]))]);
    let mut missing = Vec::new();
    let mut seen = 0;
    for (name, text) in texts {
        let plain = fonts.replace_all(&text.replace("\\-", "-"), "").into_owned();
        for found in reference.find_iter(&plain) {
            seen += 1;
            let page = found.as_str().trim_end_matches("(1)");
            if !written.contains(page) {
                missing.push(format!("{name} refers to {}", found.as_str()));
            }
        }
    }
    assert!(seen > pages.len(), "only {seen} references found");
    assert!(missing.is_empty(), "references to pages that are not written:\n{}", missing.join("\n"));
}

/// The environment variables src/ reads: `env::var("X")`, `var_os("X")`, a closure `env("X")`, a `const …_ENV: &str =
/// "X"` passed on, or any `"GPUPLAN_…"` literal, whatever reads it (test code — `tests.rs`, a `tests/` folder, what follows `#[cfg(test)]` — and the table itself left out).
fn env_vars_read_in_src() -> BTreeSet<String> {
    let read = regex::Regex::new(r#"(?:\bvar|\bvar_os|\benv)\(\s*"([A-Z][A-Z0-9_]+)"\s*\)|const [A-Z_]*ENV[A-Z_]*: &str = "([A-Z][A-Z0-9_]+)"|"(GPUPLAN_[A-Z0-9_]+)""#).unwrap();
    let mut found = BTreeSet::new();
    let mut stack = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            // A `tests` folder holds a module's test files (`engine/tests/generated.rs`): test code, as `tests.rs` is.
            if path.is_dir() && name != "tests" {
                stack.push(path);
            } else if name.ends_with(".rs") && name != "tests.rs" && !name.starts_with("test_") && !path.ends_with("cli/manual/tables.rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap();
                found.extend(read.captures_iter(code).map(|c| c.get(1).or(c.get(2)).or(c.get(3)).unwrap().as_str().to_string()));
            }
        }
    }
    found
}

#[test]
fn every_environment_variable_read_in_src_is_in_the_man_pages_environment() {
    let read = env_vars_read_in_src();
    for known in ["NO_COLOR", "GPUPLAN_LOCK_TIMEOUT", "GPUPLAN_MAX_INPUT_BYTES", "GPUPLAN_MAX_PODS", "GIT_AUTHOR_NAME"] {
        assert!(read.contains(known), "the scan misses {known}: {read:?}");
    }
    let page = stdout(&["man"]).replace("\\-", "-");
    let environment = page.split("\n.SH ENVIRONMENT\n").nth(1).unwrap().split("\n.SH ").next().unwrap();
    let undocumented: Vec<&String> = read.iter().filter(|v| !environment.contains(&format!("\\fB{v}\\fR"))).collect();
    assert!(undocumented.is_empty(), "read in src/ but not in ENVIRONMENT (src/cli/manual/tables.rs): {undocumented:?}");
}
