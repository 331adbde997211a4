//! The docs book and README.md, tested as a reader would use them. Each page (README.md and every
//! docs/src/**/*.md except the generated pages of docs/src/reference/, which their generator's tests cover) runs top to bottom
//! in its own fresh scratch directory: a git repository with a user identity and no commit, `gpuplan` (this build)
//! on PATH, `NO_COLOR=1`, a fixed clock (`GPUPLAN_NOW`) and HOME there. Its fenced blocks are, by info string:
//!
//! - `kdl profiles/x.kdl` (any language, then a path): a file, written there when reached;
//! - `kdl` alone: a standalone profile, compiled alone in its own directory, with no error;
//!   `kdl,fail=E0142`: it fails (exit 2) with that code and no other;
//! - `console` / `console,exit=2`: each `$ ` line runs in bash; the lines after it are its expected stdout+stderr,
//!   matched with snapbox's `...` (any lines) and `[..]` (any text in a line); a command with no lines after it is
//!   only run. Every command exits 0, except the last one of an `exit=2` block, which exits 2;
//! - `yaml,from=out/x.yaml` (any language): the file's content in the scratch directory at that point;
//! - anything else is prose, and must not hold a gpuplan command or a profile.
//!
//! In a kdl block, lines starting `# ` (or a lone `#`) are hidden by mdBook (book.toml's hidelines) but are part of
//! the file, as rustdoc's hidden lines are. Links: every relative link names an existing file, and its `#anchor` an
//! existing heading (mdBook's ids); every page is in SUMMARY.md and every SUMMARY.md entry exists. The book builds
//! with mdBook without a warning when mdBook is on PATH (always in CI: `GPUPLAN_CONFORMANCE_REQUIRED=1`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use rayon::prelude::*;

/// The fixed wall clock of every page (the catalog-age warning and the pull-request comment read it).
const NOW: &str = "2026-11-27T00:00:00Z";
/// The README's length limit: a reader gets through it in minutes; the rest is in the book.
const README_MAX_LINES: usize = 250;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One page: its path relative to the repository and its text.
struct Page {
    path: PathBuf,
    text: String,
}

/// The pages the harness runs: README.md and the book's hand-written pages.
fn pages() -> Vec<Page> {
    let mut paths = vec![PathBuf::from("README.md")];
    paths.extend(book_pages().into_iter().filter(|p| !generated(p)).filter(|p| !p.ends_with("SUMMARY.md")));
    paths.into_iter().map(|path| Page { text: std::fs::read_to_string(repo().join(&path)).unwrap(), path }).collect()
}

/// Whether a page is one of docs/src/reference's generated pages (tests/reference_docs.rs keeps those current); the
/// hand-written pages there, such as reference/demand.md, run as every other page does.
fn generated(page: &Path) -> bool {
    page.starts_with("docs/src/reference") && std::fs::read_to_string(repo().join(page)).is_ok_and(|text| text.contains("\n> Generated from the code by "))
}

/// Every .md file under docs/src, relative to the repository, sorted.
fn book_pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "md") {
                found.push(path.strip_prefix(repo()).unwrap().to_path_buf());
            }
        }
    }
    let mut found = Vec::new();
    walk(&repo().join("docs/src"), &mut found);
    found.sort();
    found
}

/// A fenced block as the harness reads its info string.
#[derive(Debug)]
enum Block {
    File { path: String, text: String },
    Profile { text: String, fail: Option<String> },
    Console { text: String, exit2: bool },
    From { path: String, text: String },
    Prose { text: String },
}

/// A block and the line of its opening fence.
struct Located {
    line: usize,
    block: Block,
}

fn parser(text: &str) -> pulldown_cmark::OffsetIter<'_> {
    Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_HEADING_ATTRIBUTES).into_offset_iter()
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// The fenced blocks of a page, in order.
fn blocks(text: &str) -> Vec<Located> {
    let mut found = Vec::new();
    let mut open: Option<(usize, String, String)> = None;
    for (event, range) in parser(text) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => open = Some((line_of(text, range.start), info.to_string(), String::new())),
            Event::Text(t) => {
                if let Some((_, _, body)) = open.as_mut() {
                    body.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((line, info, body)) = open.take() {
                    found.push(Located { line, block: classify(&info, body) });
                }
            }
            _ => {}
        }
    }
    found
}

/// `kdl profiles/x.kdl`, `kdl,fail=E0142`, `console,exit=2`, `yaml,from=out/x.yaml`, or prose.
fn classify(info: &str, body: String) -> Block {
    let mut words = info.split_whitespace();
    let head = words.next().unwrap_or("");
    let mut attributes = head.split(',');
    let language = attributes.next().unwrap_or("");
    let attributes: BTreeMap<&str, &str> = attributes.filter_map(|a| a.split_once('=')).collect();
    let unhide = |body: String| if language == "kdl" { unhide_lines(&body) } else { body };
    if let Some(path) = words.next() {
        return Block::File { path: path.to_string(), text: unhide(body) };
    }
    if let Some(path) = attributes.get("from") {
        return Block::From { path: path.to_string(), text: body };
    }
    match language {
        "kdl" => Block::Profile { text: unhide(body), fail: attributes.get("fail").map(|c| c.to_string()) },
        "console" => Block::Console { text: body, exit2: attributes.get("exit") == Some(&"2") },
        _ => Block::Prose { text: body },
    }
}

/// The file behind a kdl block: mdBook hides the lines that start with book.toml's hidelines prefix `#` and drops it
/// (https://rust-lang.github.io/mdBook/format/mdbook.html#hiding-code-lines, `[output.html.code.hidelines]`); the
/// harness keeps them, without `# `.
fn unhide_lines(body: &str) -> String {
    body.lines().map(|l| if l == "#" { "" } else { l.strip_prefix("# ").unwrap_or(l) }).map(|l| format!("{l}\n")).collect()
}

/// A kdl line mdBook would hide (its prefix `#` after any indentation) that the harness would not: the reader and
/// the test would see different files.
fn misleading_hidden_line(text: &str) -> Option<&str> {
    text.lines().find(|l| l.trim_start().starts_with('#') && !(*l == "#" || l.starts_with("# ")))
}

/// What one page's run found wrong, each naming page:line.
type Failures = Vec<String>;

/// The text of the kdl block whose fence opens at `line` (empty for another language), as written in the page.
fn raw_kdl(page: &str, line: usize) -> String {
    let mut lines = page.lines().skip(line - 1);
    if !lines.next().is_some_and(|fence| fence.trim_start_matches('`').starts_with("kdl")) {
        return String::new();
    }
    lines.take_while(|l| !l.starts_with("```")).map(|l| format!("{l}\n")).collect()
}

/// A page's scratch directory and its shell's working directory (a `cd` carries to the next command).
struct Scratch {
    dir: tempfile::TempDir,
    cwd: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        let scratch = Scratch { dir, cwd };
        for args in [&["init", "-q"][..], &["config", "user.name", "Docs Reader"], &["config", "user.email", "reader@example.com"]] {
            let status = scratch.command("git").args(args).status().unwrap();
            assert!(status.success(), "git {args:?} in the scratch directory");
        }
        scratch
    }

    fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// `program` with the page's environment, in the current working directory.
    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        let bin = Path::new(env!("CARGO_BIN_EXE_gpuplan")).parent().unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        command.env_clear().env("PATH", path).env("HOME", self.root()).env("NO_COLOR", "1").env("GPUPLAN_NOW", NOW).env("LC_ALL", "C.UTF-8");
        command.current_dir(&self.cwd);
        command
    }

    /// Runs one console line in bash (stderr into stdout), returning its output and exit code; `cd` carries over.
    fn run(&mut self, line: &str) -> (String, i32) {
        let cwd_file = self.root().join(".git/docs-harness-cwd");
        let script = format!("exec 2>&1\n{line}\nstatus=$?\npwd > '{}'\nexit $status", cwd_file.display());
        let output = self.command("bash").arg("-c").arg(script).stdin(Stdio::null()).output().unwrap();
        if let Ok(cwd) = std::fs::read_to_string(&cwd_file) {
            self.cwd = PathBuf::from(cwd.trim_end());
        }
        (String::from_utf8_lossy(&output.stdout).into_owned(), output.status.code().unwrap_or(-1))
    }
}

/// `actual` against `expected` with snapbox's wildcards (`...`, `[..]`), the scratch path shown as `[ROOT]`.
fn matches(expected: &str, actual: &str, root: &Path) -> Result<(), String> {
    let mut redactions = snapbox::Redactions::new();
    redactions.insert("[ROOT]", root.to_path_buf()).unwrap();
    let assert = snapbox::Assert::new().action(snapbox::assert::Action::Verify).palette(snapbox::report::Palette::plain()).redact_with(redactions);
    // Not snapbox's Windows path normalisation: it would turn a profile's `\n` into `/n`.
    let assert = assert.normalize_paths(false);
    let trim = |s: &str| s.lines().map(str::trim_end).collect::<Vec<_>>().join("\n").trim_end_matches('\n').to_string();
    assert.try_eq(Some(&"actual"), snapbox::Data::text(trim(actual)), snapbox::Data::text(trim(expected))).map_err(|e| e.to_string())
}

/// The commands of a console block with their expected output (None when no lines follow the command).
fn commands(text: &str) -> Vec<(String, Option<String>)> {
    let mut found: Vec<(String, Vec<&str>)> = Vec::new();
    for line in text.lines() {
        match line.strip_prefix("$ ") {
            Some(command) => found.push((command.to_string(), Vec::new())),
            None => match found.last_mut() {
                Some((_, expected)) => expected.push(line),
                None => assert!(line.trim().is_empty(), "a console block's text before its first `$ ` line: {line:?}"),
            },
        }
    }
    found
        .into_iter()
        .map(|(command, expected)| {
            let expected = expected.join("\n");
            (command, (!expected.trim().is_empty()).then_some(expected))
        })
        .collect()
}

/// The error codes (E0142) in a command's output.
fn codes(output: &str) -> BTreeSet<String> {
    let re = regex::Regex::new(r"\bE\d{4}\b").unwrap();
    re.find_iter(output).map(|m| m.as_str().to_string()).collect()
}

/// Compiles a standalone profile in its own scratch directory.
fn check_profile(text: &str, fail: Option<&str>) -> Result<(), String> {
    let mut scratch = Scratch::new();
    std::fs::create_dir_all(scratch.root().join("profiles")).unwrap();
    std::fs::write(scratch.root().join("profiles/example.kdl"), text).unwrap();
    let (output, code) = scratch.run("gpuplan compile");
    let found = codes(&output);
    match fail {
        None if code == 0 => Ok(()),
        None => Err(format!("the profile does not compile (exit {code}):\n{output}")),
        Some(want) if code == 2 && found.len() == 1 && found.contains(want) => Ok(()),
        Some(want) => Err(format!("expected exit 2 with {want} and no other code; exit {code}, codes {found:?}:\n{output}")),
    }
}

fn check_console(scratch: &mut Scratch, text: &str, exit2: bool) -> Result<(), String> {
    let commands = commands(text);
    let last = commands.len().saturating_sub(1);
    for (i, (command, expected)) in commands.iter().enumerate() {
        let (output, code) = scratch.run(command);
        let want = if exit2 && i == last { 2 } else { 0 };
        if code != want {
            return Err(format!("`$ {command}` exited {code}, expected {want}; its output:\n{output}"));
        }
        if let Some(expected) = expected {
            matches(expected, &output, &scratch.root()).map_err(|diff| format!("`$ {command}` printed other output:\n{diff}"))?;
        }
    }
    Ok(())
}

/// What a prose block must not hold: a gpuplan command, or a profile (a top-level `profile`/`cluster` node).
fn check_prose(text: &str) -> Result<(), String> {
    let command = text.lines().any(|l| l.trim_start().trim_start_matches("$ ").starts_with("gpuplan "));
    let profile = text.lines().any(|l| ["profile \"", "cluster \"", "pool \""].iter().any(|node| l.starts_with(node)));
    match (command, profile) {
        (false, false) => Ok(()),
        _ => Err("a prose block holds a gpuplan command or a profile: make it a console block, a file or a kdl block".into()),
    }
}

/// Runs one page top to bottom; the failures name page:line.
fn run_page(page: &Page) -> (Failures, BTreeMap<&'static str, usize>) {
    let mut scratch = Scratch::new();
    let mut failures = Vec::new();
    let mut counts = BTreeMap::new();
    for Located { line, block } in blocks(&page.text) {
        if let Some(hidden) = misleading_hidden_line(&raw_kdl(&page.text, line)) {
            failures.push(format!("{}:{line}: mdBook hides `{hidden}` (kdl's hidelines prefix `#`); write hidden lines as `# ` at the start", page.path.display()));
        }
        let (kind, result) = match &block {
            Block::File { path, text } => {
                let target = scratch.cwd.join(path);
                std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                std::fs::write(&target, text).unwrap();
                ("file", Ok(()))
            }
            Block::Profile { text, fail } => ("profile", check_profile(text, fail.as_deref())),
            Block::Console { text, exit2 } => ("console", check_console(&mut scratch, text, *exit2)),
            Block::From { path, text } => (
                "from",
                match std::fs::read_to_string(scratch.cwd.join(path)) {
                    Ok(actual) => matches(text, &actual, &scratch.root()).map_err(|diff| format!("{path} differs from the block:\n{diff}")),
                    Err(e) => Err(format!("cannot read {path}: {e}")),
                },
            ),
            Block::Prose { text } => ("prose", check_prose(text)),
        };
        *counts.entry(kind).or_insert(0) += 1;
        if let Err(why) = result {
            failures.push(format!("{}:{line}: {why}", page.path.display()));
        }
    }
    (failures, counts)
}

#[test]
fn every_block_of_every_page_runs_as_written() {
    let started = std::time::Instant::now();
    let pages = pages();
    let results: Vec<_> = pages.par_iter().map(run_page).collect();
    let mut counts = BTreeMap::new();
    let mut failures = Vec::new();
    for (page_failures, page_counts) in results {
        failures.extend(page_failures);
        for (kind, n) in page_counts {
            *counts.entry(kind).or_insert(0) += n;
        }
    }
    eprintln!("{} pages, blocks checked: {counts:?}, in {:.1?}", pages.len(), started.elapsed());
    assert!(failures.is_empty(), "{} blocks fail:\n\n{}", failures.len(), failures.join("\n\n"));
}

/// mdBook's heading id: lowercase, spaces to `-`, anything but letters, digits, `_` and `-` dropped; a repeated id
/// gets `-1`, `-2`… (mdBook's `normalize_id` and `unique_id_from_content`).
fn heading_ids(text: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let mut heading: Option<String> = None;
    for (event, _) in parser(text) {
        match event {
            Event::Start(Tag::Heading { id, .. }) => heading = Some(id.map(|i| format!("{{#{i}}}")).unwrap_or_default()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut().filter(|h| !h.starts_with("{#")) {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let text = heading.take().unwrap_or_default();
                let base = match text.strip_prefix("{#").and_then(|t| t.strip_suffix('}')) {
                    Some(custom) => custom.to_string(),
                    None => text.chars().filter_map(|c| if c == ' ' { Some('-') } else if c.is_alphanumeric() || c == '_' || c == '-' { Some(c.to_ascii_lowercase()) } else { None }).flat_map(char::to_lowercase).collect(),
                };
                let mut id = base.clone();
                let mut n = 0;
                while ids.contains(&id) {
                    n += 1;
                    id = format!("{base}-{n}");
                }
                ids.insert(id);
            }
            _ => {}
        }
    }
    ids
}

/// The relative links of a page (not URLs), with their lines.
fn links(text: &str) -> Vec<(usize, String)> {
    parser(text)
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. }) | Event::Start(Tag::Image { dest_url, .. }) => Some((line_of(text, range.start), dest_url.to_string())),
            _ => None,
        })
        .filter(|(_, url)| !url.contains("://") && !url.starts_with("mailto:"))
        .collect()
}

#[test]
fn every_relative_link_names_an_existing_file_and_heading() {
    let mut pages: Vec<PathBuf> = vec!["README.md".into()];
    pages.extend(book_pages());
    let mut failures = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(repo().join(page)).unwrap();
        for (line, url) in links(&text) {
            let (file, anchor) = url.split_once('#').map_or((url.as_str(), None), |(f, a)| (f, Some(a)));
            let target = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
            let full = repo().join(&target);
            if !full.exists() {
                failures.push(format!("{}:{line}: `{url}`: no file {}", page.display(), target.display()));
            } else if let Some(anchor) = anchor.filter(|_| full.extension().is_some_and(|e| e == "md")) {
                if !heading_ids(&std::fs::read_to_string(&full).unwrap()).contains(anchor) {
                    failures.push(format!("{}:{line}: `{url}`: no heading #{anchor} in {}", page.display(), target.display()));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} broken links:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_page_is_in_the_summary_and_every_entry_exists() {
    let summary = std::fs::read_to_string(repo().join("docs/src/SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = links(&summary).into_iter().map(|(_, url)| Path::new("docs/src").join(url)).collect();
    let missing: Vec<_> = listed.iter().filter(|p| !repo().join(p).exists()).collect();
    assert!(missing.is_empty(), "SUMMARY.md lists pages that do not exist: {missing:?}");
    let unlisted: Vec<_> = book_pages().into_iter().filter(|p| !p.ends_with("SUMMARY.md") && !listed.contains(p)).collect();
    assert!(unlisted.is_empty(), "pages not in SUMMARY.md (mdBook would not build them): {unlisted:?}");
}

#[test]
fn the_readme_is_read_in_minutes() {
    let lines = std::fs::read_to_string(repo().join("README.md")).unwrap().lines().count();
    assert!(lines <= README_MAX_LINES, "README.md has {lines} lines; at most {README_MAX_LINES} (move the rest into the book)");
}

/// The README's picture is an excerpt of the real pull-request comment: each of its lines occurs in the page that
/// tests/action keeps equal to the comment gpuplan writes.
#[test]
fn the_readme_excerpt_of_the_comment_is_the_real_comment() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let page = std::fs::read_to_string(repo().join("docs/src/pull-request-review.md")).unwrap();
    let excerpt = blocks(&readme)
        .into_iter()
        .find_map(|b| match b.block {
            Block::Prose { text } if text.contains("gpuplan: changes to out/") => Some(text),
            _ => None,
        })
        .expect("README.md quotes the pull-request comment (a block with its `gpuplan: changes to out/` heading)");
    let missing: Vec<_> = excerpt.lines().filter(|l| !l.trim().is_empty() && !page.contains(l)).collect();
    assert!(missing.is_empty(), "lines of README.md's excerpt not in docs/src/pull-request-review.md: {missing:#?}");
}

/// CI runs the README's test command: the contributor's set-up says what CI does.
#[test]
fn ci_runs_the_readmes_commands() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(readme.contains("bash .ci/run") && readme.contains("cargo run -- compile"), "README.md's contributor set-up names its two commands");
    assert!(ci.lines().any(|l| l.trim() == "cargo test --locked") && readme.contains("cargo test --locked"), ".ci/run runs the README's test command");
}

/// The book builds with mdBook, without a warning (a broken SUMMARY entry, a missing file, a bad config).
#[test]
fn the_book_builds_without_a_warning() {
    let required = std::env::var("GPUPLAN_CONFORMANCE_REQUIRED").is_ok_and(|v| v == "1");
    let present = Command::new("mdbook").arg("--version").output().is_ok_and(|o| o.status.success());
    if !present {
        assert!(!required, "mdbook is not on PATH (.ci/run installs it)");
        eprintln!("skipped: mdbook is not on PATH (CI installs it and sets GPUPLAN_CONFORMANCE_REQUIRED=1)");
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let output = Command::new("mdbook").arg("build").arg(repo().join("docs")).arg("-d").arg(out.path()).output().unwrap();
    let log = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    eprintln!("mdbook build: {:.1?}", started.elapsed());
    assert!(output.status.success(), "mdbook build failed:\n{log}");
    let warnings: Vec<_> = log.lines().filter(|l| l.contains("WARN") || l.contains("ERROR")).collect();
    assert!(warnings.is_empty(), "mdbook build warned:\n{}", warnings.join("\n"));
    assert!(out.path().join("index.html").exists(), "mdbook wrote no index.html");
}

#[test]
fn mdbook_heading_ids() {
    let ids = heading_ids("# A `code` title, here!\n\n## Set-up (two commands)\n\n## Set-up (two commands)\n");
    assert_eq!(ids, ["a-code-title-here", "set-up-two-commands", "set-up-two-commands-1"].into_iter().map(String::from).collect());
}

/// The harness itself: each kind of block fails when the page is wrong, not only passes when it is right.
#[test]
fn the_harness_reads_every_kind_of_block() {
    let page = "```kdl profiles/a.kdl\n# cluster\nx\n```\n```kdl,fail=E0110\n```\n```console,exit=2\n$ false\n```\n```yaml,from=out/a.yaml\n```\n```text\nprose\n```\n";
    let kinds: Vec<String> = blocks(page).into_iter().map(|b| format!("{}:{:?}", b.line, b.block)).collect();
    assert_eq!(
        kinds,
        [
            r#"1:File { path: "profiles/a.kdl", text: "cluster\nx\n" }"#,
            r#"5:Profile { text: "", fail: Some("E0110") }"#,
            r#"7:Console { text: "$ false\n", exit2: true }"#,
            r#"10:From { path: "out/a.yaml", text: "" }"#,
            r#"12:Prose { text: "prose\n" }"#,
        ]
    );
    assert!(check_prose("a table\n").is_ok());
    for wrong in ["$ gpuplan compile\n", "gpuplan explain x\n", "pool \"a\" {\n}\n", "cluster \"c\" {\n}\n"] {
        assert!(check_prose(wrong).is_err(), "{wrong:?} in a prose block");
    }
    assert_eq!(misleading_hidden_line("# shown to the test\n    #hidden from the reader only\n"), Some("    #hidden from the reader only"));
}

#[test]
fn console_blocks_fail_on_other_output_or_exit_codes() {
    let mut scratch = Scratch::new();
    assert!(check_console(&mut scratch, "$ echo hi\nhi\n", false).is_ok());
    assert!(check_console(&mut scratch, "$ echo hi there\nhi [..]\n$ printf 'a\\nb\\nc\\n'\na\n...\n", false).is_ok());
    assert!(check_console(&mut scratch, "$ echo hi\nbye\n", false).unwrap_err().contains("bye"));
    assert!(check_console(&mut scratch, "$ false\n", false).is_err(), "a failing command in a block without exit=2");
    assert!(check_console(&mut scratch, "$ exit 2\n", true).is_ok());
    assert!(check_console(&mut scratch, "$ true\n", true).is_err(), "the last command of an exit=2 block must exit 2");
    // A `cd` carries to the next command; stderr is part of the output; the scratch path reads as [ROOT].
    assert!(check_console(&mut scratch, "$ mkdir d && cd d\n$ pwd; echo oops >&2\n[ROOT]/d\noops\n", false).is_ok());
    // The page's environment: the fixed clock, no colour, HOME in the scratch directory, gpuplan on PATH.
    assert!(check_console(&mut scratch, "$ echo $GPUPLAN_NOW $NO_COLOR $HOME; gpuplan --version >/dev/null\n2026-11-27T00:00:00Z 1 [ROOT]\n", false).is_ok());
}

#[test]
fn profiles_fail_with_exactly_the_declared_code() {
    let no_cluster = "pool \"a\" {\n    gpu { name \"L4\"; }\n    max-accelerators 4\n}\n";
    assert!(check_profile(no_cluster, Some("E0110")).is_ok());
    assert!(check_profile(no_cluster, Some("E0142")).is_err());
    assert!(check_profile(no_cluster, None).is_err());
    let fine = "cluster \"c\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\"\n    ami \"al2023@v20251023\"\n}\npool \"a\" {\n    gpu { name \"L4\"; }\n    max-accelerators 4\n}\n";
    assert!(check_profile(fine, None).is_ok());
    assert!(check_profile(fine, Some("E0110")).is_err(), "a profile that compiles does not pass as failing");
}
