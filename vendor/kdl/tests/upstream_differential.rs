//! gpuplan's copy of kdl-rs 6.7.1 changes two functions of `src/v2_parser.rs` (`nodes` and `base_node`) so that
//! error recovery parses each part of the input once; this test holds it to the published 6.7.1 everywhere else
//! (see ../GPUPLAN.md).
//!
//! Every document of kdl-rs's compliance suite (`tests/test_cases/input`) and of gpuplan's fuzz corpora for the KDL
//! inputs (`../../fuzz/corpus/{profile,demand,config}`), each as it is and with three seeded random mutations: both
//! parsers must accept the same documents, with the same text, format and spans, and reject the others with the same
//! set of diagnostics (6.7.1 records a diagnostic once per time it parses the part in error, so its list has
//! duplicates the patched one does not). Every case is counted; none is skipped.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

type Diagnostic = (usize, usize, Option<String>, Option<String>, Option<String>);

fn patched(text: &str) -> Result<(String, String), BTreeSet<Diagnostic>> {
    kdl::KdlDocument::parse(text).map(|doc| (doc.to_string(), format!("{doc:?}"))).map_err(|err| {
        err.diagnostics
            .iter()
            .map(|d| (d.span.offset(), d.span.len(), d.message.clone(), d.label.clone(), d.help.clone()))
            .collect()
    })
}

fn upstream(text: &str) -> Result<(String, String), BTreeSet<Diagnostic>> {
    kdl_upstream::KdlDocument::parse(text).map(|doc| (doc.to_string(), format!("{doc:?}"))).map_err(|err| {
        err.diagnostics
            .iter()
            .map(|d| (d.span.offset(), d.span.len(), d.message.clone(), d.label.clone(), d.help.clone()))
            .collect()
    })
}

/// The files of `dirs`, sorted, that are at most 4,000 bytes: 6.7.1's recovery is exponential on some of them, and
/// every corpus input gpuplan's fuzzers kept so far is smaller.
fn inputs(dirs: &[PathBuf]) -> Vec<(PathBuf, String)> {
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())))
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, String::from_utf8_lossy(&bytes).into_owned())
        })
        .filter(|(_, text)| text.len() <= 4000)
        .collect()
}

/// xorshift64: a fixed seed, the same cases on every machine.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize
    }

    /// `text` with one edit: a run deleted, a run doubled, or a KDL token inserted, at a random place.
    fn mutate(&mut self, text: &str) -> String {
        let mut chars: Vec<char> = text.chars().collect();
        if chars.is_empty() {
            return String::new();
        }
        let at = self.next() % chars.len();
        const TOKENS: [&str; 13] = ["/-", "{", "}", "\"", "\n", "#", "=", ";", "/*", "*/", "(", ")", "\\"];
        match self.next() % 3 {
            0 => {
                let len = (self.next() % 8).min(chars.len() - at);
                chars.drain(at..at + len);
            }
            1 => {
                let len = (self.next() % 16).min(chars.len() - at);
                let run: Vec<char> = chars[at..at + len].to_vec();
                chars.splice(at..at, run);
            }
            _ => {
                let token = TOKENS[self.next() % TOKENS.len()];
                chars.splice(at..at, token.chars());
            }
        }
        chars.into_iter().collect()
    }
}

#[test]
fn the_patched_parser_agrees_with_kdl_rs_6_7_1() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = here.join("../../fuzz/corpus");
    let dirs = [here.join("tests/test_cases/input"), corpus.join("profile"), corpus.join("demand"), corpus.join("config")];
    let mut seeded = Seeded(0x9e37_79b9_7f4a_7c15);
    let (mut accepted, mut rejected, mut disagreements) = (0usize, 0usize, Vec::new());
    for (path, text) in inputs(&dirs) {
        let mutations: Vec<String> = (0..3).map(|_| seeded.mutate(&text)).collect();
        for case in std::iter::once(text).chain(mutations) {
            match (patched(&case), upstream(&case)) {
                (Ok(a), Ok(b)) if a == b => accepted += 1,
                (Err(a), Err(b)) if a == b => rejected += 1,
                (a, b) => disagreements.push(format!("{}: {case:?}\n  patched: {a:?}\n  6.7.1:   {b:?}", path.display())),
            }
        }
    }
    println!("{accepted} accepted alike, {rejected} rejected alike, {} disagreements", disagreements.len());
    assert!(accepted > 5000 && rejected > 10000, "too few cases: {accepted} accepted, {rejected} rejected");
    assert!(disagreements.is_empty(), "{} disagreements:\n{}", disagreements.len(), disagreements[..disagreements.len().min(5)].join("\n"));
}

/// kdl-rs#177 (open upstream): each nested slashdashed block doubles 6.7.1's work, 2^n for n levels (96 bytes took
/// 3 s and recorded 262,140 diagnostics). The patched parser records one diagnostic per cause, so its count here is
/// linear in the depth: the count stands for the work, which a test does not time (gpuplan's `bounded` bench does).
#[test]
fn nested_slashdashed_blocks_cost_linear_work() {
    for (shape, per_level) in [("a /-{\n", 2), ("/- a {\n b\n", 2)] {
        let text = shape.repeat(40);
        let diagnostics = kdl::KdlDocument::parse(&text).unwrap_err().diagnostics.len();
        assert!(diagnostics <= per_level * 40, "{shape:?} × 40: {diagnostics} diagnostics");
    }
}
