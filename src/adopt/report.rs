//! What compiling the adopted profiles changes, per original NodePool: instance types added and removed, the
//! accelerator limit, the weight, worst-case and at-limit $/h (gpuplan's own cost model, `cost::worst_case` /
//! `cost::at_limit`, applied to both sides), and the lint findings the original has and the result has.
//!
//! The original's findings come from gpuplan's lint rules run over the original objects: the compilation of
//! the adopted profiles with its rendered NodePools and EC2NodeClasses replaced by the originals. Adopt adds
//! checks for defects gpuplan's profiles cannot produce (they need the original's requirements evaluated
//! against the catalog): AD001 AMD GPUs admitted under the NVIDIA taint, AD002 $/GPU spread beyond the default
//! price ratio, AD003 a spot pool over fewer types than spot-to-spot consolidation needs.

use std::collections::BTreeSet;

use serde::Serialize;

use super::pool_report::pool_report;
pub use super::pool_report::PoolReport;
use super::{model::Warning, Adoption};
use crate::compile::Compilation;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub pools: Vec<PoolReport>,
    /// The simulation of the original and adopted manifests (`super::verify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<super::verify::Verification>,
    pub warnings: Vec<Warning>,
    pub skipped: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ReportFormat {
    #[default]
    Table,
    Markdown,
    Json,
}

pub fn report(adoption: &Adoption, compiled: &Compilation) -> Report {
    let after = &compiled.findings;
    let rendered = compiled.manifests();
    let before = crate::report::lint::findings_on(compiled, &with_originals(&rendered, adoption));
    let pools = adoption
        .node_pools
        .iter()
        .map(|np| {
            let adopted = adoption.profiles.iter().find(|p| p.pools.iter().any(|x| x.name == np.name));
            let profile = adopted.map(|p| p.name.clone()).unwrap_or_default();
            let catalog = adopted.and_then(|p| adoption.catalogs.get(&p.cluster.region)).or_else(|| adoption.catalogs.values().next()).expect("adopt loads a catalog per profile");
            let rendered = rendered.iter().find(|m| m.kind() == "NodePool" && m.object["metadata"]["name"] == np.name.as_str()).map(|m| &m.object);
            pool_report(np, rendered, &profile, catalog, &before, after)
        })
        .collect();
    Report { pools, verification: None, warnings: adoption.warnings.clone(), skipped: adoption.skipped.clone() }
}

/// The rendered objects with each NodePool / EC2NodeClass replaced by the original of the same name (what the
/// cluster runs before adopting).
fn with_originals(rendered: &[crate::render::Manifest], adoption: &Adoption) -> Vec<crate::render::Manifest> {
    let mut originals = rendered.to_vec();
    for m in &mut originals {
        let name = m.object["metadata"]["name"].as_str().unwrap_or("").to_string();
        let docs = match m.kind() {
            "NodePool" => &adoption.node_pools,
            "EC2NodeClass" => &adoption.node_classes,
            _ => continue,
        };
        if let Some(doc) = docs.iter().find(|d| d.name == name) {
            m.object = doc.object.clone();
        }
    }
    originals
}

fn money(v: Option<f64>) -> String {
    v.map_or("unbounded".into(), |v| format!("${v:.2}"))
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// One row per original NodePool; columns in the order a reviewer reads them: cost first.
pub fn render(report: &Report, format: ReportFormat) -> String {
    match format {
        ReportFormat::Json => serde_json::to_string_pretty(report).expect("a report serializes") + "\n",
        ReportFormat::Markdown => markdown(report),
        ReportFormat::Table => table(report),
    }
}

fn rows(report: &Report) -> Vec<[String; 7]> {
    report
        .pools
        .iter()
        .map(|p| {
            [
                p.node_pool.clone(),
                format!("{} → {}", money(p.worst_case_before), money(p.worst_case_after)),
                format!("{} → {}", money(p.at_limit_before), money(p.at_limit_after)),
                format!("{} → {}", opt(p.limit_before.clone()), opt(p.limit_after.clone())),
                format!("{} → {}", opt(p.weight_before), opt(p.weight_after)),
                format!("{} → {} (+{} −{})", p.types_before, p.types_after, p.types_added.len(), p.types_removed.len()),
                format!("{} → {}", codes(&p.findings_before), codes(&p.findings_after)),
            ]
        })
        .collect()
}

fn codes(findings: &[String]) -> String {
    let c: Vec<&str> = findings.iter().filter_map(|f| f.split(' ').next()).collect::<BTreeSet<_>>().into_iter().collect();
    if c.is_empty() { "none".into() } else { c.join(",") }
}

const HEADER: [&str; 7] = ["NodePool", "worst case $/h", "at limit $/h", "limit", "weight", "types", "lint"];

fn table(report: &Report) -> String {
    let rows = rows(report);
    let width: Vec<usize> = (0..7).map(|i| rows.iter().map(|r| r[i].chars().count()).chain([HEADER[i].len()]).max().unwrap_or(0)).collect();
    let line = |cells: Vec<&str>| cells.iter().enumerate().map(|(i, c)| format!("{c:<w$}", w = width[i])).collect::<Vec<_>>().join("  ").trim_end().to_string() + "\n";
    let mut out = line(HEADER.to_vec());
    for r in &rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out.push_str(&details(report, false));
    out
}

fn markdown(report: &Report) -> String {
    let mut out = format!("| {} |\n|{}|\n", HEADER.join(" | "), ["---"; 7].join("|"));
    for r in rows(report) {
        out.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    out.push_str(&details(report, true));
    out
}

fn details(report: &Report, md: bool) -> String {
    let bullet = if md { "- " } else { "  " };
    let mut out = String::new();
    for p in &report.pools {
        out.push_str(&format!("\n{}{} ({}, profile {}):\n", if md { "**" } else { "" }, p.node_pool, p.file, p.profile).replace(":\n", if md { ":**\n" } else { ":\n" }));
        if !p.types_added.is_empty() {
            out.push_str(&format!("{bullet}types added: {}\n", p.types_added.join(", ")));
        }
        if !p.types_removed.is_empty() {
            out.push_str(&format!("{bullet}types removed: {}\n", p.types_removed.join(", ")));
        }
        for f in &p.findings_before {
            out.push_str(&format!("{bullet}original: {f}\n"));
        }
        for f in &p.findings_after {
            out.push_str(&format!("{bullet}adopted: {f}\n"));
        }
    }
    if let Some(v) = &report.verification {
        out.push_str(&super::verify::render(v, md));
    }
    if !report.warnings.is_empty() {
        out.push_str(&format!("\n{} field(s) no profile setting says (carried verbatim in `raw` blocks; fields gpuplan writes itself kept as comments):\n", report.warnings.len()));
        for w in &report.warnings {
            out.push_str(&format!("{bullet}{}: {} {}: {}\n", w.file, w.object, w.field, w.message));
        }
    }
    if !report.skipped.is_empty() {
        out.push_str("\nskipped (not adopted, with the reason):\n");
        for s in &report.skipped {
            out.push_str(&format!("{bullet}{s}\n"));
        }
    }
    out
}
