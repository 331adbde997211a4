//! Both sides on one case, and what makes them agree: gpuplan's engine (`forecast::engine::replay_objects`) and the
//! oracle on the same manifests and trace, priced by the one helper.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;
use std::sync::OnceLock;

use gpuplan::catalog::Catalog;
use gpuplan::forecast::engine::{replay_objects, Mode};
use gpuplan::forecast::timeline::Timeline;
use gpuplan::forecast::trace::Trace;

use super::super::go;

/// Cumulative cost must agree within this share, node-hours within [`NODE_HOURS_TOLERANCE`].
pub const COST_TOLERANCE: f64 = 0.05;
pub const NODE_HOURS_TOLERANCE: f64 = 0.10;
/// One disruption poll (disruption/controller.go pollingPeriod): a decision's time may differ by this much.
pub const POLL_SECONDS: u64 = 10;

pub fn catalog_path() -> std::path::PathBuf {
    go::root().join("catalogs/us-east-1.json")
}

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::load(&go::root().join("catalogs"), "us-east-1").expect("the committed us-east-1 catalog"))
}

/// gpuplan's engine on the manifests (YAML text, the same the oracle reads) and the trace.
pub fn engine(manifests: &str, trace: &Trace) -> Timeline {
    let docs = gpuplan::simulate::yaml::parse_docs(Path::new("manifests.yaml"), manifests).expect("the case's manifests parse");
    let objects: Vec<serde_json::Value> = docs.into_iter().map(|d| d.value.into_owned()).collect();
    replay_objects(catalog(), &objects, trace, Mode::EventDriven)
}

pub fn node_hours(tl: &Timeline) -> f64 {
    tl.nodes.iter().map(|n| (n.terminated_at.unwrap_or(tl.horizon_seconds) - n.launched_at) as f64 / 3600.0).sum()
}

fn within(a: f64, b: f64, share: f64) -> bool {
    let big = a.abs().max(b.abs());
    big < 1e-9 || (a - b).abs() <= share * big
}

/// The totals' differences: cost (±5%) and node-hours (±10%).
pub fn totals(oracle: &Timeline, gpuplan: &Timeline) -> Vec<String> {
    let mut out = Vec::new();
    let (co, cg) = (super::price(oracle, &catalog_path()), super::price(gpuplan, &catalog_path()));
    if !within(co, cg, COST_TOLERANCE) {
        out.push(format!("cost: Karpenter ${co:.2}, gpuplan ${cg:.2} (more than {:.0}% apart)", COST_TOLERANCE * 100.0));
    }
    let (ho, hg) = (node_hours(oracle), node_hours(gpuplan));
    if !within(ho, hg, NODE_HOURS_TOLERANCE) {
        out.push(format!("node-hours: Karpenter {ho:.2}, gpuplan {hg:.2} (more than {:.0}% apart)", NODE_HOURS_TOLERANCE * 100.0));
    }
    out
}

/// A node as a decision names it: type and zone (ids differ between the sides).
fn shape(tl: &Timeline, id: &str) -> String {
    tl.nodes.iter().find(|n| n.id == id).map(|n| format!("{}/{}", n.instance_type, n.zone)).unwrap_or_else(|| format!("{id}?"))
}

fn shapes(tl: &Timeline, ids: &[String]) -> Vec<String> {
    let mut v: Vec<String> = ids.iter().map(|id| shape(tl, id)).collect();
    v.sort();
    v
}

/// The decisions' differences: the same number, and pairwise the same reason, time within one poll, candidates and
/// replacements by type and zone.
pub fn decisions(oracle: &Timeline, gpuplan: &Timeline) -> Vec<String> {
    let mut out = Vec::new();
    if oracle.decisions.len() != gpuplan.decisions.len() {
        out.push(format!("{} decisions in Karpenter, {} in gpuplan", oracle.decisions.len(), gpuplan.decisions.len()));
    }
    for (i, (o, g)) in oracle.decisions.iter().zip(&gpuplan.decisions).enumerate() {
        if o.reason != g.reason {
            out.push(format!("decision {i}: Karpenter {:?}, gpuplan {:?}", o.reason, g.reason));
        }
        if o.at.abs_diff(g.at) > POLL_SECONDS {
            out.push(format!("decision {i}: Karpenter at {}s, gpuplan at {}s (more than one poll apart)", o.at, g.at));
        }
        let (co, cg) = (shapes(oracle, &o.nodes), shapes(gpuplan, &g.nodes));
        if co != cg {
            out.push(format!("decision {i}: candidates {co:?} in Karpenter, {cg:?} in gpuplan"));
        }
        let (ro, rg) = (shapes(oracle, &o.replacements), shapes(gpuplan, &g.replacements));
        let types = |v: &[String]| v.iter().map(|s| s.split('/').next().unwrap().to_string()).collect::<Vec<_>>();
        if types(&ro) != types(&rg) {
            out.push(format!("decision {i}: replacements {ro:?} in Karpenter, {rg:?} in gpuplan"));
        }
    }
    out
}

/// A reproducer for a disagreement: the manifests, the trace, both timelines, the differences.
pub fn write_reproducer(dir: &Path, manifests: &str, trace: &Trace, oracle: &Timeline, gpuplan: &Timeline, diffs: &[String]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("manifests.yaml"), manifests).unwrap();
    std::fs::write(dir.join("trace.json"), serde_json::to_string_pretty(trace).unwrap()).unwrap();
    std::fs::write(dir.join("karpenter.json"), serde_json::to_string_pretty(oracle).unwrap()).unwrap();
    std::fs::write(dir.join("gpuplan.json"), serde_json::to_string_pretty(gpuplan).unwrap()).unwrap();
    let mut text = String::new();
    for d in diffs {
        writeln!(text, "{d}").unwrap();
    }
    std::fs::write(dir.join("differences.txt"), text).unwrap();
}

/// A one-line summary of a timeline, for the test's output.
pub fn summary(tl: &Timeline) -> String {
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    for d in &tl.decisions {
        *by.entry(format!("{:?}", d.reason)).or_default() += 1;
    }
    format!("{} nodes, {:.1} node-hours, ${:.2}, decisions {by:?}", tl.nodes.len(), node_hours(tl), super::price(tl, &catalog_path()))
}
