//! The error-code table (`gpuplan::diagnostic::codes`) is unique, used and explained, and every code's failing
//! example fails with it. The model is rustc's error index (rust-lang/rust `compiler/rustc_error_codes`): each
//! `error_codes/E0004.md` explains its code and carries an erroneous example that the test suite compiles as
//! `compile_fail,E0004`; here each `src/diagnostic/codes/<code>.md` carries input files and a gpuplan command that
//! this test runs on an empty directory, expecting exit code 2 and that code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use gpuplan::diagnostic::ErrorCode;

/// Examples that cannot fail with their code alone, and the codes they report beside it (each for a reason the
/// explanation gives).
const COMPANIONS: &[(ErrorCode, &[ErrorCode])] = &[
    // The limits are sized from the budget: quotas above the budget are above a NodePool's limit too.
    (ErrorCode::E0211, &[ErrorCode::E0210]),
];

/// Codes `gpuplan compile` cannot reach (an earlier check stops it without a code): their examples run through the
/// library instead (see `e0151_is_raised_by_the_solver_given_no_catalog_for_the_region`).
const LIBRARY_ONLY: &[ErrorCode] = &[ErrorCode::E0151];

/// The code table's own file: it names every code, so it proves no use.
const TABLE: &str = "src/diagnostic/codes.rs";

/// Every `.rs` file under src/ (but the table), with its text.
fn sources() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with(TABLE) {
                out.push((path.strip_prefix(root).unwrap().to_path_buf(), std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The codes a diagnostic in src/ is raised with: `ErrorCode::E0107`, or a string literal `"E0107"`, by file.
fn raised() -> BTreeMap<String, BTreeSet<PathBuf>> {
    let pattern = regex::Regex::new(r#"ErrorCode::(E\d{4})\b|"(E\d{4})""#).unwrap();
    let mut out: BTreeMap<String, BTreeSet<PathBuf>> = BTreeMap::new();
    for (path, text) in sources() {
        for c in pattern.captures_iter(&text) {
            let code = c.get(1).or(c.get(2)).unwrap().as_str();
            out.entry(code.to_string()).or_default().insert(path.clone());
        }
    }
    out
}

#[test]
fn codes_are_unique_in_order_and_read_back() {
    let names: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(names, sorted, "codes must be unique and in order");
    for &code in ErrorCode::ALL {
        assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
        assert_eq!(code.to_string(), code.as_str());
        assert!(regex::Regex::new(r"^E\d{4}$").unwrap().is_match(code.as_str()), "{code}");
    }
    assert_eq!(ErrorCode::parse("GP001"), None);
}

#[test]
fn every_code_a_diagnostic_raises_is_in_the_table() {
    let unknown: Vec<String> = raised().into_iter().filter(|(code, _)| ErrorCode::parse(code).is_none()).map(|(code, files)| format!("{code} in {files:?}")).collect();
    assert!(unknown.is_empty(), "codes raised in src/ but missing from {TABLE}: {unknown:#?}");
}

#[test]
fn every_code_in_the_table_is_raised_by_a_diagnostic() {
    let raised = raised();
    let unused: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).filter(|c| !raised.contains_key(*c)).collect();
    assert!(unused.is_empty(), "codes in {TABLE} that no diagnostic in src/ raises: {unused:?}");
}

/// Diagnostics name their code from the table (`ErrorCode::E0107`), so that the compiler checks it exists: a string
/// `"E0107"` would still print, and go unnoticed when the table drops or renames the code.
#[test]
fn no_diagnostic_names_its_code_as_a_string() {
    let pattern = regex::Regex::new(r#""E\d{4}""#).unwrap();
    let strings: Vec<String> = sources()
        .into_iter()
        .flat_map(|(path, text)| pattern.find_iter(&text).map(|m| format!("{} in {}", m.as_str(), path.display())).collect::<Vec<_>>())
        .collect();
    assert!(strings.is_empty(), "write ErrorCode::E…, not a string: {strings:#?}");
}

/// Comments and messages name codes too ("E0184", "E0200–E0205"): each must be one of the table, but the upper end of
/// a range (`E0220–E0229` reserves the block, not E0229).
#[test]
fn every_code_named_in_src_is_in_the_table() {
    let pattern = regex::Regex::new(r"(–|-)?\b(E0\d{3})\b").unwrap();
    let mut unknown = Vec::new();
    for (path, text) in sources() {
        for c in pattern.captures_iter(&text) {
            let code = &c[2];
            if c.get(1).is_none() && ErrorCode::parse(code).is_none() {
                unknown.push(format!("{code} in {}", path.display()));
            }
        }
    }
    assert!(unknown.is_empty(), "codes named in src/ that are not in the table: {unknown:#?}");
}

#[test]
fn every_code_has_a_summary_an_explanation_and_an_example() {
    for &code in ErrorCode::ALL {
        let summary = code.summary();
        assert!(!summary.is_empty() && !summary.ends_with('.') && !summary.contains('\n'), "{code}: summary {summary:?}");
        assert!(code.explanation().len() > 80, "{code}: explanation {:?}", code.explanation());
        assert!(!code.explanation().contains("## Example"), "{code}: the explanation runs into the example");
        let example = code.example();
        assert!(example.command.len() >= 2 && example.command[0] == "gpuplan", "{code}: command {:?}", example.command);
        for (path, text) in &example.files {
            assert!(!path.is_empty() && Path::new(path).is_relative() && !path.contains(".."), "{code}: file path {path:?}");
            assert!(text.ends_with('\n') && !text.contains("```"), "{code}: file {path} is not one whole code block");
        }
        // Only a file that cannot be read has no input.
        assert_eq!(example.files.is_empty(), code == ErrorCode::E0001, "{code}: example files {:?}", example.files);
    }
}

/// Writes the example's files into a fresh directory and runs its command there (no colour): exit code, stderr.
fn run_example(code: ErrorCode) -> (tempfile::TempDir, Option<i32>, String) {
    let example = code.example();
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in &example.files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    // The docs' fixed clock: what an example prints does not depend on the day it runs.
    let output = Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .env("GPUPLAN_NOW", "2026-11-27T00:00:00Z")
        .args(&example.command[1..])
        .output()
        .unwrap();
    (dir, output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

/// The codes of the errors in a report: miette prints each code on a line of its own above its message.
fn reported(stderr: &str) -> BTreeSet<ErrorCode> {
    stderr.lines().filter_map(|l| ErrorCode::parse(l.trim())).collect()
}

/// What running `code`'s example gave, when it is not a failure with exactly that code (and its companions).
fn check_example(code: ErrorCode) -> Option<String> {
    let (_dir, status, stderr) = run_example(code);
    let companions = COMPANIONS.iter().find(|(c, _)| *c == code).map_or(&[][..], |(_, also)| *also);
    let allowed: BTreeSet<ErrorCode> = companions.iter().copied().chain([code]).collect();
    let found = reported(&stderr);
    // Once per run, after the errors, naming the first code: where the codes are explained.
    let notes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("note: `gpuplan explain-error")).collect();
    let note = found.first().map(|first| format!("note: `gpuplan explain-error {first}` explains this code"));
    let noted = notes.len() == 1 && note.is_some_and(|n| notes[0].starts_with(&n));
    let ok = status == Some(2) && found.contains(&code) && found.is_subset(&allowed) && noted;
    (!ok).then(|| format!("{code}: exit {status:?}, codes {found:?} (want {allowed:?}), explain-error notes {notes:?} (want one)\n{stderr}"))
}

/// What each example's console block shows under its command is what gpuplan prints running it (stderr, no colour,
/// the docs' fixed clock, paths as from the example's directory), so `explain-error` and the error index show the
/// real diagnostic, as rustc's index shows its errors. `GPUPLAN_BLESS=1` rewrites the blocks that differ.
#[test]
fn every_example_shows_its_real_output() {
    let bless = std::env::var("GPUPLAN_BLESS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for code in ErrorCode::ALL.iter().copied().filter(|c| !LIBRARY_ONLY.contains(c)) {
        let (dir, _, stderr) = run_example(code);
        let output = stderr.replace(&format!("{}/", dir.path().display()), "");
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/diagnostic/codes").join(format!("{}.md", code.as_str()));
        let text = std::fs::read_to_string(&path).unwrap();
        let shown = with_output(&text, &output);
        if shown != text {
            if bless {
                std::fs::write(&path, shown).unwrap();
            } else {
                stale.push(code.as_str());
            }
        }
    }
    assert!(stale.is_empty(), "the console blocks of {stale:?} do not show what their command prints: GPUPLAN_BLESS=1 cargo test --locked --test error_codes every_example_shows_its_real_output rewrites them");
}

/// `markdown` (a `codes/<code>.md`) with its example's console block holding its `$ ` lines, then `output`.
fn with_output(markdown: &str, output: &str) -> String {
    let example = markdown.find("## Example").expect("an example");
    let open = example + markdown[example..].find("```console\n").expect("a console block") + "```console\n".len();
    let close = open + markdown[open..].find("```").expect("a closed console block");
    let commands: String = markdown[open..close].lines().filter(|l| l.starts_with("$ ")).map(|l| format!("{l}\n")).collect();
    let output = output.trim_end();
    let body = if output.is_empty() { commands } else { format!("{commands}{output}\n") };
    format!("{}{body}{}", &markdown[..open], &markdown[close..])
}

/// Every example fails with its code, exit code 2, and with no other code but its listed companions; the run ends with
/// one note naming `gpuplan explain-error` for its first code.
#[test]
fn every_example_fails_with_its_code() {
    let codes: Vec<ErrorCode> = ErrorCode::ALL.iter().copied().filter(|c| !LIBRARY_ONLY.contains(c)).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                while let Some(&code) = codes.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    if let Some(failure) = check_example(code) {
                        failures.lock().unwrap().push(failure);
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    assert!(failures.is_empty(), "{} example(s) do not fail with their code:\n{}", failures.len(), failures.join("\n"));
}

/// `gpuplan compile` loads a catalog for every region before it solves, and stops without a code when one is missing;
/// the solver itself, given no catalog for a profile's region, reports E0151.
#[test]
fn e0151_is_raised_by_the_solver_given_no_catalog_for_the_region() {
    let (dir, status, stderr) = run_example(ErrorCode::E0151);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(reported(&stderr).is_empty() && stderr.contains("no catalog for region eu-west-1"), "{stderr}");
    let paths: Vec<PathBuf> = ErrorCode::E0151.example().files.iter().map(|(p, _)| dir.path().join(p)).collect();
    let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let mut sources = gpuplan::diagnostic::Sources::default();
    let (profiles, parsed) = gpuplan::profile::parse_files(&paths, &mut sources);
    assert!(parsed.is_empty(), "{}", gpuplan::diagnostic::render_plain(&parsed));
    let diagnostics = gpuplan::solve::solve(&profiles, &sources, &BTreeMap::new(), &BTreeMap::new(), &BTreeMap::new()).err().expect("no catalog, no plan");
    let codes: Vec<String> = diagnostics.iter().map(|d| d.code.to_string()).collect();
    assert_eq!(codes, ["E0151"], "{}", gpuplan::diagnostic::render_plain(&diagnostics));
}

/// The diagnostics of a report as (code, file:line:col): miette prints each code on a line of its own, then (after a blank line) the
/// message, opened by `×` (an error) or `⚠` (a warning) and the location.
fn located(stderr: &str) -> Vec<(String, String)> {
    let message = regex::Regex::new(r"^\s*[×⚠]\s+(\S+?:\d+:\d+):").unwrap();
    let code = regex::Regex::new(r"^(E\d{4}|GP\d{3})$").unwrap();
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    lines
        .windows(2)
        .filter_map(|w| {
            let c = code.captures(w[0].trim())?;
            let at = message.captures(w[1])?;
            Some((c[1].to_string(), at[1].to_string()))
        })
        .collect()
}

/// The (code, location) pairs reported more than once: one cause repeated (for each tier's NodePool, each profile).
fn repeated(diagnostics: &[(String, String)]) -> Vec<&(String, String)> {
    let mut seen = BTreeSet::new();
    diagnostics.iter().filter(|d| !seen.insert(*d)).collect()
}

/// One diagnostic per cause, over every error-code example: no (code, file:line:col) twice, and the example's own
/// code exactly once (a cause in a pool is not raised again by each NodePool the pool renders).
#[test]
fn every_example_reports_each_cause_once() {
    let mut failures = Vec::new();
    for &code in ErrorCode::ALL.iter().filter(|c| !LIBRARY_ONLY.contains(c)) {
        let (_dir, _, stderr) = run_example(code);
        let found = located(&stderr);
        let own = found.iter().filter(|(c, _)| c == code.as_str()).count();
        let twice = repeated(&found);
        if own != 1 || !twice.is_empty() {
            failures.push(format!("{code}: its code {own} times, repeated {twice:?}\n{stderr}"));
        }
    }
    assert!(failures.is_empty(), "{} example(s) repeat a diagnostic:\n{}", failures.len(), failures.join("\n"));
}

/// The example profiles with tiers (several NodePools from one pool) warn once per cause too.
#[test]
fn example_profiles_with_tiers_report_each_cause_once() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tiered: Vec<PathBuf> = std::fs::read_dir(root.join("profiles"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| std::fs::read_to_string(p).unwrap().lines().any(|l| l.trim_start().starts_with("tier ")))
        .collect();
    assert!(!tiered.is_empty(), "no example profile with tiers");
    let output = Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(root).env("NO_COLOR", "1").args(["compile", "--check"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let found = located(&stderr);
    assert!(!found.is_empty(), "no diagnostics read from {stderr}");
    assert!(repeated(&found).is_empty(), "{:?}\n{stderr}", repeated(&found));
}

/// Writes `profile` as the only profile of a fresh directory and compiles it: the codes of the report, in order.
fn compile_codes(profile: &str) -> (Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("profiles")).unwrap();
    std::fs::write(dir.path().join("profiles/ml.kdl"), profile).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).env("NO_COLOR", "1").arg("compile").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    (located(&stderr).into_iter().map(|(c, _)| c).collect(), stderr)
}

const CLUSTER: &str = "cluster \"ml-prod\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\" \"us-east-1b\"\n    ami \"al2023@v20251023\"\n}\n";

#[test]
fn an_unknown_preset_is_e0116_alone_when_a_workload_and_a_queue_name_its_pool() {
    let profile = format!(
        "{CLUSTER}pool \"llm\" preset=\"inference-spott\" {{\n    gpu {{ name \"A10G\" }}\n}}\n\
         workload \"server\" namespace=\"inference\" pool=\"llm\" {{\n    selector \"app\" \"server\"\n    replicas 2\n}}\n\
         queue \"team-a\" namespace=\"team-a\" pool=\"llm-spot\" {{\n    gpus nominal=4\n}}\n"
    );
    let (codes, stderr) = compile_codes(&profile);
    assert_eq!(codes, ["E0116"], "{stderr}");
}

#[test]
fn a_cluster_without_a_name_is_e0107_alone_not_also_a_missing_cluster() {
    let profile = "cluster {\n    region \"us-east-1\"\n    zones \"us-east-1a\"\n    ami \"al2023@v20251023\"\n}\npool \"llm\" preset=\"inference-on-demand\" {\n    gpu { name \"A10G\" }\n}\n";
    let (codes, stderr) = compile_codes(profile);
    assert_eq!(codes, ["E0107"], "{stderr}");
}

#[test]
fn a_cluster_without_a_region_is_e0107_alone_not_also_a_missing_cluster() {
    let profile = "cluster \"ml-prod\" {\n    zones \"us-east-1a\"\n    ami \"al2023@v20251023\"\n}\npool \"llm\" preset=\"inference-on-demand\" {\n    gpu { name \"A10G\" }\n}\n";
    let (codes, stderr) = compile_codes(profile);
    assert_eq!(codes, ["E0107"], "{stderr}");
}

#[test]
fn a_constraint_of_a_tiered_pool_is_one_e0140_not_one_per_tier() {
    let profile = format!(
        "{CLUSTER}budget usd-per-hour=62\npool \"vision\" preset=\"tiered\" {{\n    gpu {{ name \"T4\"; memory-min \"24GiB\"; per-node max=1; }}\n\
         tier \"a\" capacity=\"spot\" {{\n        weight 100\n    }}\n    tier \"b\" capacity=\"on-demand\" {{\n        weight 10\n    }}\n}}\n"
    );
    let (codes, stderr) = compile_codes(&profile);
    assert_eq!(codes, ["E0140"], "{stderr}");
}

/// Two causes (a static pool in a preset of two NodePools, E0302; `max-accelerators` on it, E0304), each once: the
/// pool's `max-accelerators` is inherited by both NodePools the preset renders.
#[test]
fn max_accelerators_on_a_static_pool_of_two_nodepools_is_one_e0304() {
    let profile = format!("{CLUSTER}pool \"warm\" preset=\"inference-spot\" {{\n    gpu {{ name \"L4\" \"A10G\"; per-node max=1; }}\n    max-accelerators 4\n    static replicas=2\n}}\n");
    let (codes, stderr) = compile_codes(&profile);
    assert_eq!(codes, ["E0302", "E0304"], "{stderr}");
}
