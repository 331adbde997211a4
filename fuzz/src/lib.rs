//! What each fuzz target does with one input: the library's own entry point for that front end, on the input as
//! text in memory. An input passes when the call returns (no panic, no abort; libFuzzer's `-timeout` and
//! `-rss_limit_mb` catch a hang or a runaway allocation) and every error it reports is located: a span inside the
//! input, and a `file:line:col` that names it. tests/fuzz.rs includes this file and replays the committed corpus
//! (fuzz/corpus/<target>/) through the same functions, so stable CI covers it too.
//!
//! Bytes that are not UTF-8 stop at the bounded reader (`gpuplan::input::read_to_string`, an E0001 error), so only
//! UTF-8 reaches the parsers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gpuplan::diagnostic::{ProfileDiagnostic, Sources};

/// Every diagnostic of file `name` (the input's, `len` bytes) has its span inside it and a `name:line:col` location;
/// a diagnostic of another file (a CSV the demand file names) is left to that file's own check. Rendering the first,
/// as the CLI does (miette, with the source excerpt), must not panic either (rendering all of them took a third of
/// a run, mostly miette's line wrapping, for spans the check above has already bounded).
fn assert_located(name: &str, len: usize, diagnostics: &[ProfileDiagnostic]) {
    for d in diagnostics.iter().filter(|d| d.src.name() == name) {
        let end = d.span.offset() + d.span.len();
        assert!(end <= len, "{} {}: span {}..{end} outside the input ({len} bytes): {}", d.code, d.location, d.span.offset(), d.message);
        let position = d.location.strip_prefix(name).and_then(|r| r.strip_prefix(':')).and_then(|r| r.split_once(':'));
        let located = position.is_some_and(|(line, col)| line.parse::<usize>().is_ok_and(|l| l >= 1) && col.parse::<usize>().is_ok_and(|c| c >= 1));
        assert!(located, "unlocated diagnostic {} {}: {}", d.code, d.location, d.message);
    }
    let _ = gpuplan::diagnostic::render_plain(&diagnostics[..diagnostics.len().min(1)]);
}

/// A KDL profile (`profiles/fuzz.kdl`): `gpuplan::profile::parse_source`, what `parse_files` runs on each file it
/// reads.
pub fn profile(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = Path::new("profiles/fuzz.kdl");
    let mut sources = Sources::default();
    let file = sources.add(path, path.display().to_string(), text.to_string());
    let (_, diagnostics) = gpuplan::profile::parse_source(&sources, file, path, &Default::default());
    assert_located("profiles/fuzz.kdl", text.len(), &diagnostics);
}

/// The repository config (`gpuplan.kdl`): `gpuplan::profile::config::parse_config_source`; its shared clusters then
/// feed a profile that names one, as `compile` does.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = Path::new("gpuplan.kdl");
    let mut sources = Sources::default();
    let file = sources.add(path, path.display().to_string(), text.to_string());
    let (config, diagnostics) = gpuplan::profile::config::parse_config_source(&sources, file);
    assert_located("gpuplan.kdl", text.len(), &diagnostics);
    let Some(config) = config else { return };
    let Some(name) = config.clusters.keys().next() else { return };
    let profile = format!("cluster \"{name}\"\npool \"p\" {{ gpu {{ name \"L4\"; }} }}\n");
    let path = Path::new("profiles/shared.kdl");
    let file = sources.add(path, path.display().to_string(), profile);
    let (_, diagnostics) = gpuplan::profile::parse_source(&sources, file, path, &config.clusters);
    assert_located("gpuplan.kdl", text.len(), &diagnostics);
}

/// The demand file (`gpuplan.demand.kdl`): `gpuplan::forecast::demand::parse`, which also reads the CSVs it names
/// relative to its directory, `dir` (fuzz/csv/, which holds `demand/llm.csv`).
pub fn demand(dir: &Path, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Err(diagnostics) = gpuplan::forecast::demand::parse(&dir.join("gpuplan.demand.kdl"), text) {
        assert_located(&dir.join("gpuplan.demand.kdl").display().to_string(), text.len(), &diagnostics);
    }
}

/// A demand CSV: `gpuplan::forecast::demand::csv::parse`; a refused row's offset and length must be a span of the
/// input on character boundaries, which a diagnostic at the CSV's file:line:col is then built from and rendered.
pub fn demand_csv(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Err((offset, len, message)) = gpuplan::forecast::demand::csv::parse(text) else { return };
    assert!(offset + len <= text.len() && text.is_char_boundary(offset) && text.is_char_boundary(offset + len), "row span {offset}+{len} outside the input: {message}");
    let path = Path::new("demand/fuzz.csv");
    let mut sources = Sources::default();
    let file = sources.add(path, path.display().to_string(), text.to_string());
    let d = sources.error(gpuplan::diagnostic::Span { file, offset, len }, gpuplan::diagnostic::ErrorCode::E0427, message);
    assert_located("demand/fuzz.csv", text.len(), &[d]);
}

/// The placeholders `adopt --set` fills in the corpus's inputs (tests/adopt_corpus.rs, tests/adopt_inputs.rs).
const SET: &[(&str, &str)] = &[
    ("CLUSTER_NAME", "demo"),
    ("KARPENTER_NODE_IAM_ROLE_NAME", "KarpenterNodeRole-demo"),
    ("AZ", "us-east-1a"),
    ("var.cluster_name", "demo"),
    (".Values.clusterName", "demo"),
];

/// `adopt`'s YAML front end and what it feeds: `gpuplan::adopt::read::read_texts` (documents, placeholders, Helm and
/// Terraform directives, quantities, field types), then `gpuplan::adopt::adopt_read` (the profiles written from
/// them), on the built-in us-east-1 catalog (`catalogs` names a directory with no snapshot: any other region is
/// an error). Every error is a value: none may panic.
pub fn adopt_yaml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let set: BTreeMap<String, String> = SET.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let read = match gpuplan::adopt::read::read_texts([Ok((PathBuf::from("karpenter/fuzz.yaml"), text.to_string()))], &set) {
        Ok(read) => read,
        Err(gpuplan::adopt::read::ReadError::Input(e)) => {
            // YAML breaks lines at `\r` as well as `\n` (an upper bound: `\r\n` counts twice).
            let lines = text.split(['\n', '\r']).count();
            // `file:line` or `file:line:col`.
            let position = e.location.strip_prefix("karpenter/fuzz.yaml:");
            let line = position.and_then(|p| p.split(':').next()).and_then(|l| l.parse::<usize>().ok());
            assert!(line.is_some_and(|l| (1..=lines + 1).contains(&l)), "unlocated YAML error: {e}");
            return;
        }
        Err(_) => return,
    };
    let options = gpuplan::adopt::AdoptOptions {
        paths: vec![PathBuf::from("karpenter/fuzz.yaml")],
        cluster: None,
        region: None,
        catalogs_dir: PathBuf::from("/nonexistent/gpuplan-fuzz-catalogs"),
        set,
        reservations: BTreeMap::new(),
        optimize: false,
        classes: Vec::new(),
    };
    let _ = gpuplan::adopt::adopt_read(read, &options, &|region| match region {
        "us-east-1" => Ok(built_in().clone()),
        _ => gpuplan::catalog::Catalog::load(&options.catalogs_dir, region),
    });
}

/// The built-in us-east-1 catalog, parsed once (1.5 MB of JSON each run would be most of the target's time).
fn built_in() -> &'static gpuplan::catalog::Catalog {
    static CATALOG: std::sync::OnceLock<gpuplan::catalog::Catalog> = std::sync::OnceLock::new();
    CATALOG.get_or_init(|| gpuplan::catalog::Catalog::load(Path::new("/nonexistent/gpuplan-fuzz-catalogs"), "us-east-1").expect("the built-in catalog"))
}
