//! Issue 21, part 7: a bounded-time fuzz suite over the input front ends — the KDL profile reader and the pods and
//! manifests YAML readers of `simulate` (which `adopt` shares) — fed arbitrary bytes and structured mutations of the
//! real examples (profiles/, tests/fixtures/simulate/, out/ml-prod/). Every case must end without a panic or an abort
//! (a stack overflow kills this binary: that fails the suite too), and every error must be located: `file:line:col`
//! for a profile, `file:line` for YAML. About 4,000 cases in all; under 30 s in a debug build, so CI runs it on every
//! change (`cargo test --test fuzz`). `PROPTEST_CASES` scales every property for a longer local run.
//!
//! Issue 42: the coverage-guided fuzz targets (fuzz/, cargo-fuzz on nightly) keep a minimised corpus per target in
//! fuzz/corpus/<target>/; the `fuzz_corpus_*` tests replay every file of it through the targets' own functions
//! (fuzz/src/lib.rs, included here), so stable CI covers what the fuzzer found too.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use gpuplan::diagnostic::Sources;
use gpuplan::simulate::{manifests, pods, yaml};
use proptest::prelude::*;

/// The fuzz targets' functions (fuzz/src/lib.rs): each panics on a crash or an unlocated error.
#[path = "../fuzz/src/lib.rs"]
mod targets;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn texts(dir: &str, ext: &str) -> Vec<String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(repo().join(dir)).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == ext)).collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
}

/// The examples each mutation starts from.
fn seeds() -> &'static (Vec<String>, Vec<String>) {
    static SEEDS: OnceLock<(Vec<String>, Vec<String>)> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let kdl = texts("profiles", "kdl");
        let mut yaml = texts("tests/fixtures/simulate", "yaml");
        let pools: Vec<String> = texts("out/ml-prod", "yaml").into_iter().filter(|t| t.contains("kind: NodePool") || t.contains("kind: EC2NodeClass")).collect();
        yaml.push(pools.join("---\n"));
        (kdl, yaml)
    })
}

/// Fragments that break structure where they land: brackets, quotes, separators, types swapped, huge numbers.
const SNIPPETS: &[&str] = &[
    "{", "}", "{ gpu ", "\"", "#", "#\"", "\"#", "/*", "*/", "//", "/-", ";", "\n", "=", "(", ")", "\\", "---\n", ": ", "- ", "[", "]",
    "[[[[[[[[", "{{{{{{{{", "\"x\"", "-1", "0", "2000000000", "1e400", "null", "#null", "#true", "~", "&a ", "*a", "!!str ",
    "label \"../../etc\" \"x\"\n", "taint \"a b\" value=\"x\"\n", "reserved { id \"cr-1\" }\n", "node-role \"\"\n",
    "weight: \"heavy\"\n", "containers: \"x\"\n", "replicas: 2000000000\n", "price: \"-1\"\n", "é", "\u{0}", "\u{feff}",
];

#[derive(Debug, Clone)]
enum Mutation {
    Insert { at: f64, snippet: usize, times: usize },
    Delete { at: f64, len: usize },
    DuplicateLine { at: f64 },
    /// A scalar after `: ` or a quoted string replaced by a snippet (a type swap).
    SwapValue { at: f64, snippet: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let snippet = 0..SNIPPETS.len();
    prop_oneof![
        (0.0..1.0f64, snippet.clone(), prop_oneof![Just(1usize), 1..5usize, Just(200usize)]).prop_map(|(at, snippet, times)| Mutation::Insert { at, snippet, times }),
        (0.0..1.0f64, 1..40usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (0.0..1.0f64).prop_map(|at| Mutation::DuplicateLine { at }),
        (0.0..1.0f64, snippet).prop_map(|(at, snippet)| Mutation::SwapValue { at, snippet }),
    ]
}

/// The char boundary nearest below `at` × len.
fn position(text: &str, at: f64) -> usize {
    let mut i = ((text.len() as f64) * at) as usize;
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i.min(text.len())
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut out = text.to_string();
    match *m {
        Mutation::Insert { at, snippet, times } => out.insert_str(position(text, at), &SNIPPETS[snippet].repeat(times)),
        Mutation::Delete { at, len } => {
            let start = position(text, at);
            let mut end = (start + len).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            out.replace_range(start..end, "");
        }
        Mutation::DuplicateLine { at } => {
            let start = text[..position(text, at)].rfind('\n').map_or(0, |i| i + 1);
            let end = text[start..].find('\n').map_or(text.len(), |i| start + i + 1);
            out.insert_str(start, &text[start..end]);
        }
        Mutation::SwapValue { at, snippet } => {
            let from = position(text, at);
            if let Some(colon) = text[from..].find(": ").map(|i| from + i + 2) {
                let end = text[colon..].find('\n').map_or(text.len(), |i| colon + i);
                out.replace_range(colon..end, SNIPPETS[snippet].trim_end());
            }
        }
    }
    out
}

/// Parses `text` as profile `p.kdl` (through a file, as compile reads it) and checks every diagnostic is located.
fn check_profile(dir: &Path, text: &[u8]) -> Result<(), TestCaseError> {
    let path = dir.join("p.kdl");
    std::fs::write(&path, text).unwrap();
    let mut sources = Sources::default();
    let (_, diagnostics) = gpuplan::profile::parse_files(&[path.as_path()], &mut sources);
    let prefix = format!("{}:", path.display());
    for d in &diagnostics {
        let rest = d.location.strip_prefix(&prefix);
        let located = rest.and_then(|r| r.split_once(':')).is_some_and(|(line, col)| line.parse::<usize>().is_ok_and(|l| l >= 1) && col.parse::<usize>().is_ok_and(|c| c >= 1));
        prop_assert!(located, "unlocated diagnostic {} {}: {}", d.code, d.location, d.message);
    }
    // Rendering (miette, with the source excerpt) must not panic either.
    let _ = gpuplan::diagnostic::render_plain(&diagnostics);
    Ok(())
}

/// Reads `text` as pods.yaml and as manifests and checks every error is `pods.yaml:<line>` within the file.
fn check_yaml(text: &str) -> Result<(), TestCaseError> {
    let path = Path::new("pods.yaml");
    // YAML breaks lines at `\r` as well as `\n` (an upper bound: `\r\n` counts twice).
    let lines = text.split(['\n', '\r']).count();
    let located = |e: &yaml::InputError| {
        e.location.strip_prefix("pods.yaml:").and_then(|l| l.parse::<usize>().ok()).is_some_and(|l| (1..=lines + 1).contains(&l))
    };
    match yaml::parse_docs(path, text) {
        Err(e) => prop_assert!(located(&e), "unlocated YAML error: {e}"),
        Ok(docs) => {
            if let Err(e) = pods::pods(&docs) {
                prop_assert!(located(&e), "unlocated pods error: {e}");
            }
            if let Err(e) = manifests::manifests(&docs) {
                prop_assert!(located(&e), "unlocated manifests error: {e}");
            }
        }
    }
    Ok(())
}

/// Mutated replica counts between the pod cap and a few thousand would only make the suite slow: such a case is
/// replaced by one far above the cap (refused before any pod is made).
fn bounded(text: String) -> String {
    text.lines()
        .map(|l| match l.trim_start().strip_prefix("replicas: ").or_else(|| l.trim_start().strip_prefix("parallelism: ")).and_then(|n| n.parse::<u64>().ok()) {
            Some(n) if n > 1_000 => l.replace(&n.to_string(), "2000000000"),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// 1,000 cases per property, or `PROPTEST_CASES`.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000)
}

/// A fixed seed, so a failure in CI replays anywhere; `PROPTEST_RNG_SEED=<n>` explores other inputs.
fn seed() -> proptest::test_runner::RngSeed {
    proptest::test_runner::RngSeed::Fixed(std::env::var("PROPTEST_RNG_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x6770_7570_6c61_6e))
}

fn tempdir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, max_shrink_iters: 500, rng_seed: seed(), ..ProptestConfig::default() })]

    #[test]
    fn kdl_front_end_survives_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let dir = tempdir().join("bytes");
        std::fs::create_dir_all(&dir).unwrap();
        check_profile(&dir, &bytes)?;
    }

    #[test]
    fn kdl_front_end_survives_mutated_examples(seed in 0..7usize, mutations in proptest::collection::vec(mutation(), 1..6)) {
        let (kdl, _) = seeds();
        let text = mutations.iter().fold(kdl[seed % kdl.len()].clone(), |t, m| apply(&t, m));
        let dir = tempdir().join("mutated");
        std::fs::create_dir_all(&dir).unwrap();
        check_profile(&dir, text.as_bytes())?;
    }

    #[test]
    fn yaml_readers_survive_arbitrary_text(text in "(?s).{0,400}") {
        check_yaml(&bounded(text))?;
    }

    #[test]
    fn yaml_readers_survive_mutated_examples(seed in 0..5usize, mutations in proptest::collection::vec(mutation(), 1..6)) {
        let (_, yaml) = seeds();
        let text = mutations.iter().fold(yaml[seed % yaml.len()].clone(), |t, m| apply(&t, m));
        check_yaml(&bounded(text))?;
    }
}

/// Every file of fuzz/corpus/<target>/, sorted, fed to `run`; a panic names the file (`cargo +nightly fuzz run
/// <target> <file>` replays it under the fuzzer).
fn replay(target: &str, run: impl Fn(&[u8]) + std::panic::RefUnwindSafe) {
    let dir = repo().join("fuzz/corpus").join(target);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).map(|e| e.unwrap().path()).collect();
    paths.sort();
    assert!(paths.len() >= 5, "fuzz/corpus/{target} holds {} inputs: the committed corpus is missing", paths.len());
    for path in paths {
        let data = std::fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| run(&data));
        assert!(outcome.is_ok(), "fuzz/corpus/{target}/{} fails its target", path.file_name().unwrap().to_string_lossy());
    }
}

#[test]
fn fuzz_corpus_profile_replays() {
    replay("profile", targets::profile);
}

#[test]
fn fuzz_corpus_config_replays() {
    replay("config", targets::config);
}

#[test]
fn fuzz_corpus_demand_replays() {
    replay("demand", |data| targets::demand(&repo().join("fuzz/csv"), data));
}

#[test]
fn fuzz_corpus_demand_csv_replays() {
    replay("demand_csv", targets::demand_csv);
}

#[test]
fn fuzz_corpus_adopt_yaml_replays() {
    replay("adopt_yaml", targets::adopt_yaml);
}

/// `name version` of every package in a Cargo.lock.
fn locked_packages(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value = |line: &str, key: &str| line.strip_prefix(key).map(|v| v.trim_matches('"').to_string());
    let lines: Vec<&str> = text.lines().collect();
    lines.windows(2).filter_map(|w| Some((value(w[0], "name = ")?, value(w[1], "version = ")?))).collect()
}

/// The fuzz crate has its own workspace and Cargo.lock (fuzz/Cargo.toml says why): every package it shares with
/// the product must be locked at the product's version, or the fuzzer tests code the binary does not ship (its lock
/// was made from a copy of the product's; `cargo +nightly fuzz build` only adds libfuzzer-sys and its own crate).
#[test]
fn the_fuzz_crate_locks_the_products_versions() {
    let product = locked_packages(&repo().join("Cargo.lock"));
    let fuzz = locked_packages(&repo().join("fuzz/Cargo.lock"));
    assert!(fuzz.len() > 50, "fuzz/Cargo.lock holds {} packages", fuzz.len());
    let shared: Vec<_> = fuzz.iter().filter(|(name, _)| product.iter().any(|(n, _)| n == name)).collect();
    let differ: Vec<_> = shared.iter().filter(|p| !product.contains(p)).collect();
    assert!(differ.is_empty(), "fuzz/Cargo.lock locks other versions than Cargo.lock: {differ:?} (copy Cargo.lock to fuzz/ and build the fuzz crate again)");
    assert!(shared.len() > 50, "only {} packages shared", shared.len());
}
