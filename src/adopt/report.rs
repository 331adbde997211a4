//! What compiling the adopted profiles changes, per original NodePool: instance types added and removed, the
//! accelerator limit, the weight, worst-case and expected $/h (gpuplan's own cost model, `cost::worst_case` /
//! `cost::expected`, applied to both sides), and the lint findings the original has and the result has.
//!
//! The original's findings come from gpuplan's lint rules run over the original objects: the compilation of
//! the adopted profiles with its rendered NodePools and EC2NodeClasses replaced by the originals. Adopt adds
//! checks for defects gpuplan's profiles cannot produce (they need the original's requirements evaluated
//! against the catalog): AD001 AMD GPUs admitted under the NVIDIA taint, AD002 $/GPU spread beyond the default
//! price ratio, AD003 a spot pool over fewer types than spot-to-spot consolidation needs.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::requirements::{capacity_types, matches, requirements, zones};
use super::{model::Warning, Adoption};
use crate::catalog::{AcceleratorKind, Catalog, CapacityType, InstanceType};
use crate::compile::Compilation;
use crate::catalog::cost::{self, Limits, NodeShape, SpotCeiling};
use crate::profile::DEFAULT_PRICE_RATIO_MAX;
use crate::solve::SPOT_MIN_TYPES;

#[derive(Debug, Clone, Serialize)]
pub struct PoolReport {
    pub node_pool: String,
    pub file: String,
    pub profile: String,
    pub types_added: Vec<String>,
    pub types_removed: Vec<String>,
    pub types_before: usize,
    pub types_after: usize,
    pub limit_before: Option<String>,
    pub limit_after: Option<String>,
    pub weight_before: Option<u64>,
    pub weight_after: Option<u64>,
    /// None: no limit, so no bound.
    pub worst_case_before: Option<f64>,
    pub worst_case_after: Option<f64>,
    pub expected_before: Option<f64>,
    pub expected_after: Option<f64>,
    /// `CODE message`, sorted.
    pub findings_before: Vec<String>,
    pub findings_after: Vec<String>,
}

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

fn kind_of(np: &Value, catalog: &Catalog) -> AcceleratorKind {
    let limits = &np["spec"]["limits"];
    if super::map::is_cpu_pool(np, &requirements(np), catalog) {
        AcceleratorKind::Cpu
    } else if !limits["aws.amazon.com/neuron"].is_null() {
        AcceleratorKind::Neuron
    } else if !limits["amd.com/gpu"].is_null() {
        AcceleratorKind::Amd
    } else {
        AcceleratorKind::Nvidia
    }
}

/// The instance types a NodePool admits (the accelerated ones; a CPU pool's, those without accelerators): every requirement gpuplan can evaluate on the catalog
/// (see `requirements::matches`), offered in its zones and capacity types.
pub fn admitted<'c>(np: &Value, catalog: &'c Catalog) -> Vec<&'c InstanceType> {
    let reqs = requirements(np);
    let zones = zones(&reqs);
    let capacity = capacity_types(&reqs);
    // A CPU pool admits the types without accelerators; every other pool, the accelerated ones.
    let cpu = super::map::is_cpu_pool(np, &reqs, catalog);
    catalog
        .instance_types
        .iter()
        .filter(|t| (!t.gpus.is_empty() || t.neuron.is_some()) != cpu)
        .filter(|t| reqs.iter().all(|r| matches(t, r).unwrap_or(true)))
        .filter(|t| zones.is_empty() || t.zones.iter().any(|z| zones.contains(z)))
        .filter(|t| capacity.iter().any(|c| t.capacity_types.contains(c) || *c == CapacityType::Reserved))
        .collect()
}

fn limit(np: &Value, resource: &str) -> Option<String> {
    match &np["spec"]["limits"][resource] {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn costs(np: &Value, types: &[&InstanceType], catalog: &Catalog, kind: AcceleratorKind) -> (Option<f64>, Option<f64>) {
    let reqs = requirements(np);
    let capacity = capacity_types(&reqs);
    let zones = if zones(&reqs).is_empty() { catalog.zones.clone() } else { zones(&reqs) };
    let sharing = super::map::sharing_of(np);
    let shapes: Vec<NodeShape> = types
        .iter()
        .filter_map(|t| {
            let q = cost::quote(t, catalog, &capacity, &zones, SpotCeiling::OnDemand)?;
            Some(NodeShape::of(t, kind, crate::solve::units_per_gpu(sharing.as_ref(), t), &q))
        })
        .collect();
    let Some(accelerators) = limit(np, kind.resource()).and_then(|l| l.parse::<u32>().ok()) else { return (None, None) };
    if shapes.is_empty() {
        return (None, None);
    }
    let cpu = limit(np, "cpu").and_then(|c| c.parse().ok());
    let memory_mib = limit(np, "memory").and_then(|m| crate::simulate::yaml::milli(&m)).map(|m| u64::try_from((m / 1000 / (1024 * 1024)).max(0)).unwrap_or(u64::MAX));
    let limits = Limits { accelerators, cpu, memory_mib };
    (Some(cost::round_cents(cost::worst_case(&shapes, limits))), Some(cost::round_cents(cost::expected(&shapes, limits))))
}

fn pool_report(np: &super::read::Doc, rendered: Option<&Value>, profile: &str, catalog: &Catalog, before: &[crate::report::lint::Finding], after: &[crate::report::lint::Finding]) -> PoolReport {
    let kind = kind_of(&np.object, catalog);
    let types_before = admitted(&np.object, catalog);
    let types_after: Vec<&InstanceType> = rendered.map(|r| admitted(r, catalog)).unwrap_or_default();
    let names = |ts: &[&InstanceType]| ts.iter().map(|t| t.name.clone()).collect::<BTreeSet<String>>();
    let (b, a) = (names(&types_before), names(&types_after));
    let (worst_before, expected_before) = costs(&np.object, &types_before, catalog, kind);
    let (worst_after, expected_after) = rendered.map(|r| costs(r, &types_after, catalog, kind)).unwrap_or((None, None));
    let select = |fs: &[crate::report::lint::Finding]| {
        let mut out: Vec<String> = fs
            .iter()
            .filter(|f| f.profile == profile && f.pool.as_deref().is_none_or(|p| p == np.name))
            .map(|f| format!("{} {}", f.code, f.diagnostic.message))
            .collect();
        out.sort();
        out.dedup();
        out
    };
    let mut findings_before = select(before);
    // gpuplan's own NodePools were built under these rules (with the profile's explicit price-ratio-max and
    // allows): only hand-written ones get the adopt checks.
    if np.object["metadata"]["labels"]["app.kubernetes.io/managed-by"] != "gpuplan" {
        findings_before.extend(adopt_checks(&np.object, &types_before, catalog, kind));
    }
    findings_before.sort();
    PoolReport {
        node_pool: np.name.clone(),
        file: np.file.clone(),
        profile: profile.to_string(),
        types_added: a.difference(&b).cloned().collect(),
        types_removed: b.difference(&a).cloned().collect(),
        types_before: b.len(),
        types_after: a.len(),
        limit_before: limit(&np.object, kind.resource()),
        limit_after: rendered.and_then(|r| limit(r, kind.resource())),
        weight_before: np.object["spec"]["weight"].as_u64(),
        weight_after: rendered.and_then(|r| r["spec"]["weight"].as_u64()),
        worst_case_before: worst_before,
        worst_case_after: worst_after,
        expected_before,
        expected_after,
        findings_before,
        findings_after: select(after),
    }
}

/// Defects of hand-written NodePools that need their requirements evaluated on the catalog.
fn adopt_checks(np: &Value, types: &[&InstanceType], catalog: &Catalog, kind: AcceleratorKind) -> Vec<String> {
    let mut out = Vec::new();
    let tainted_nvidia = np["spec"]["template"]["spec"]["taints"].as_array().into_iter().flatten().any(|t| t["key"] == "nvidia.com/gpu");
    let amd: Vec<&str> = types.iter().filter(|t| t.gpus.iter().any(|g| g.manufacturer.eq_ignore_ascii_case("amd"))).map(|t| t.name.as_str()).collect();
    if tainted_nvidia && !amd.is_empty() {
        out.push(format!("AD001 AMD GPU types admitted under the nvidia.com/gpu taint ({}): NVIDIA pods tolerate it and land on GPUs they cannot use; constrain karpenter.k8s.aws/instance-gpu-manufacturer", amd.join(", ")));
    }
    let reqs = requirements(np);
    let capacity = capacity_types(&reqs);
    let zones = if zones(&reqs).is_empty() { catalog.zones.clone() } else { zones(&reqs) };
    let per_accelerator: Vec<(f64, &str)> = types
        .iter()
        .filter_map(|t| Some((cost::quote(t, catalog, &capacity, &zones, SpotCeiling::OnDemand)?.ceiling / f64::from(t.accelerators(kind).max(1)), t.name.as_str())))
        .collect();
    let cheapest = per_accelerator.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    if let Some((priciest, name)) = per_accelerator.iter().copied().max_by(|a, b| a.0.total_cmp(&b.0)) {
        if cheapest.is_finite() && priciest > cheapest * DEFAULT_PRICE_RATIO_MAX {
            out.push(format!(
                "AD002 $/accelerator-hour spread {:.1}× (up to {name}): Karpenter may launch it at that price; gpuplan keeps types within {DEFAULT_PRICE_RATIO_MAX}× of the cheapest",
                priciest / cheapest
            ));
        }
    }
    if capacity.contains(&CapacityType::Spot) && types.len() < SPOT_MIN_TYPES {
        out.push(format!("AD003 spot pool over {} instance types (< {SPOT_MIN_TYPES}): more interruptions and insufficient-capacity errors", types.len()));
    }
    out
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
                format!("{} → {}", money(p.expected_before), money(p.expected_after)),
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

const HEADER: [&str; 7] = ["NodePool", "worst case $/h", "expected $/h", "limit", "weight", "types", "lint"];

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
