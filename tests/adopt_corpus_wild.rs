//! The adopt corpus in the wild (issue 31, "Done when"): published Karpenter manifests from nine more public sources
//! (AWS user guides and best-practices guides, workshops, sample repositories, Terraform templates, a Helm chart; each
//! file's origin, commit and licence in tests/fixtures/adopt-corpus/README.md), adopted as a user would (the `--set`,
//! `--reservation` values in `wild.json`, `VALUES/` being the corpus's `values/` folder of what a user supplies). Each
//! entry is pinned in `wild.json`: it adopts, compiles and verifies with no unexplained placement or field change and
//! the number of (explained) placement changes given; or it stops at adopt, before anything is written, with the
//! error given (templates that need their engine, types the catalog does not offer, a published text the API server
//! refuses).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

mod common;
use common::text;

use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct Entry {
    /// Arguments a user gives (`--set`, `--reservation`), `VALUES/` for the corpus's values folder.
    #[serde(default)]
    args: Vec<String>,
    /// "adopts": adopts, compiles, verifies with nothing unexplained; else the start of the error adopt stops with.
    outcome: String,
    /// Placement changes (explained) when it adopts.
    #[serde(default)]
    changed: u64,
}

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adopt-corpus")
}

fn entries() -> BTreeMap<String, Entry> {
    serde_json::from_str(&std::fs::read_to_string(corpus().join("wild.json")).unwrap()).unwrap()
}

#[test]
fn every_wild_entry_adopts_and_verifies_or_stops_with_its_error_and_nothing_written() {
    let catalogs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let values = corpus().join("values");
    let mut failures = Vec::new();
    for (name, entry) in entries() {
        let dir = tempfile::tempdir().unwrap();
        let input = corpus().join(&name);
        let mut args: Vec<String> = ["adopt", input.to_str().unwrap(), "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--format", "json", "--accept-changes"].map(String::from).to_vec();
        args.extend(entry.args.iter().map(|a| a.replace("VALUES", values.to_str().unwrap())));
        let pods = corpus().join(format!("{name}-pods"));
        if pods.is_dir() {
            args.extend(["--verify".to_string(), pods.to_str().unwrap().to_string()]);
        }
        let out = Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).env("NO_COLOR", "1").args(&args).output().unwrap();
        if entry.outcome == "adopts" {
            let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            let v = &report["verification"];
            if !out.status.success() || v["unexplained"] != 0 || v["changed"] != entry.changed {
                failures.push(format!("{name}: exit {:?}, changed {} (pinned {}), unexplained {}\n{}\n{v:#}", out.status.code(), v["changed"], entry.changed, v["unexplained"], text(&out)));
            }
        } else {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let written = dir.path().join("profiles").exists();
            if out.status.code() != Some(2) || !stderr.contains(&entry.outcome) || written {
                failures.push(format!("{name}: expected exit 2 with `{}` and nothing written (written: {written})\n{}", entry.outcome, text(&out)));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// At least 40 NodePools that adopt (the bar: the entries that stop do not count), from at least 8 sources
/// beyond the first three (the README's origins), every one of them pinned.
#[test]
fn at_least_forty_wild_node_pools_adopt() {
    let mut node_pools = 0;
    for (name, _) in entries().iter().filter(|(_, e)| e.outcome == "adopts") {
        for file in std::fs::read_dir(corpus().join(name)).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            node_pools += text.lines().filter(|l| l.trim_end() == "kind: NodePool").count();
        }
    }
    assert!(node_pools >= 40, "{node_pools}");
}
