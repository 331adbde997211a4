//! `gpuplan diff --pods FILE…`: the same pods simulated on out/ as it is and on what compile would write, cluster by
//! cluster; every pod whose NodePool, instance type or capacity type changes is listed with the $/h change of the
//! node it lands on ("training/trainer-0: p4d.24xlarge → p5.48xlarge, +$43.08/h").

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::catalog::Catalog;
use crate::layout::OutputTree;

use super::manifests::{self, Manifests};
use super::pods::Pod;
use super::report::Report;
use super::{yaml, InputError, SimulateError};

/// Where one pod lands: "pool/type (capacity) $x/h", or pending.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Landing {
    pub nodepool: String,
    pub instance_type: String,
    pub capacity_type: String,
    pub usd_per_hour: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlacementChange {
    pub cluster: String,
    pub pod: String,
    /// None: pending.
    pub before: Option<Landing>,
    pub after: Option<Landing>,
}

fn cluster_manifests(tree: &OutputTree) -> Result<BTreeMap<String, Manifests>, InputError> {
    let mut docs: BTreeMap<String, Vec<yaml::Doc>> = BTreeMap::new();
    for (path, text) in &tree.files {
        let Some(cluster) = path.components().next().map(|c| c.as_os_str().to_string_lossy().into_owned()) else { continue };
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        docs.entry(cluster).or_default().extend(yaml::parse_docs(&Path::new("out").join(path), text)?);
    }
    docs.into_iter().map(|(k, d)| Ok((k, manifests::manifests(&d)?))).collect()
}

fn landings(r: &Report) -> BTreeMap<String, Landing> {
    r.nodeclaims
        .iter()
        .flat_map(|n| {
            n.pods.iter().map(move |p| {
                (p.clone(), Landing { nodepool: n.nodepool.clone(), instance_type: n.instance_type.clone(), capacity_type: n.capacity_type.clone(), usd_per_hour: n.usd_per_hour })
            })
        })
        .collect()
}

fn region(m: &Manifests) -> String {
    m.node_pools.iter().find_map(|p| p.catalog_region.clone()).unwrap_or_else(|| "us-east-1".into())
}

/// The placement changes of `pods` between two output trees.
pub fn placement_changes(old: &OutputTree, new: &OutputTree, pods: &[PathBuf], catalogs_dir: &Path) -> Result<Vec<PlacementChange>, SimulateError> {
    let pods: Vec<Pod> = super::pods::pods(&yaml::read_docs(pods).map_err(SimulateError::Input)?).map_err(SimulateError::Input)?;
    let (old, new) = (cluster_manifests(old).map_err(SimulateError::Input)?, cluster_manifests(new).map_err(SimulateError::Input)?);
    let mut catalogs: BTreeMap<String, Catalog> = BTreeMap::new();
    let mut out = Vec::new();
    let empty = Manifests::default();
    for cluster in old.keys().chain(new.keys()).collect::<std::collections::BTreeSet<_>>() {
        let (before_m, after_m) = (old.get(cluster).unwrap_or(&empty), new.get(cluster).unwrap_or(&empty));
        let mut run = |m: &Manifests| -> Result<BTreeMap<String, Landing>, SimulateError> {
            let region = region(m);
            if !catalogs.contains_key(&region) {
                catalogs.insert(region.clone(), Catalog::load(catalogs_dir, &region)?);
            }
            Ok(landings(&super::run(&catalogs[&region], m, &pods, &[])))
        };
        let (before, after) = (run(before_m)?, run(after_m)?);
        for pod in &pods {
            let (b, a) = (before.get(&pod.key), after.get(&pod.key));
            let same = |x: &Landing, y: &Landing| x.nodepool == y.nodepool && x.instance_type == y.instance_type && x.capacity_type == y.capacity_type;
            if match (b, a) {
                (Some(x), Some(y)) => !same(x, y),
                (None, None) => false,
                _ => true,
            } {
                out.push(PlacementChange { cluster: cluster.clone(), pod: pod.key.clone(), before: b.cloned(), after: a.cloned() });
            }
        }
    }
    Ok(out)
}

fn side(l: &Option<Landing>) -> String {
    match l {
        Some(l) => format!("{} ({}, {})", l.instance_type, l.nodepool, l.capacity_type),
        None => "pending".into(),
    }
}

/// The node $/h change of a pod's move, signed: `+0.08`, `-0.08`.
fn delta(c: &PlacementChange) -> String {
    let price = |l: &Option<Landing>| l.as_ref().map_or(0.0, |l| l.usd_per_hour);
    // Rounded first: a move between equal prices is +0.00, never -0.00.
    let delta = ((price(&c.after) - price(&c.before)) * 100.0).round() / 100.0;
    format!("{}{:.2}", if delta < 0.0 { "-" } else { "+" }, delta.abs())
}

/// The placement changes as a markdown table, for the pull-request comment.
pub fn render_markdown(changes: &[PlacementChange], pods: &[PathBuf]) -> String {
    let files: Vec<String> = pods.iter().map(|p| format!("`{}`", p.display())).collect();
    if changes.is_empty() {
        return format!("\n#### Placement\n\nNo pod of {} changes NodePool, instance type or capacity type.\n", files.join(", "));
    }
    let mut out = format!("\n#### Placement\n\nPods of {} that move (node $/h, as `gpuplan simulate` plans them):\n\n| Cluster | Pod | Before | After | $/h |\n|---|---|---|---|---|\n", files.join(", "));
    for (c, delta) in changes.iter().map(|c| (c, delta(c))) {
        let _ = writeln!(out, "| `{}` | `{}` | {} | {} | {delta} |", c.cluster, c.pod, side(&c.before).replace('|', "\\|"), side(&c.after).replace('|', "\\|"));
    }
    out
}

/// One line per change: "ml-prod training/trainer-0: p4d.24xlarge (training, on-demand) → p5.48xlarge (…), +$43.08/h".
pub fn render(changes: &[PlacementChange], pods: &[PathBuf]) -> String {
    let files: Vec<String> = pods.iter().map(|p| p.display().to_string()).collect();
    if changes.is_empty() {
        return format!("placement: no pod of {} changes NodePool, instance type or capacity type\n", files.join(", "));
    }
    let mut out = format!("placement changes for {} (node $/h, as `gpuplan simulate` plans them):\n", files.join(", "));
    for c in changes {
        let d = delta(c);
        let (sign, amount) = d.split_at(1);
        let _ = writeln!(out, "  {} {}: {} → {}, {sign}${amount}/h", c.cluster, c.pod, side(&c.before), side(&c.after));
    }
    out
}
