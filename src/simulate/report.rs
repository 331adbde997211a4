//! The simulation's result and its three formats: a terminal table, stable JSON (read by tests and other tools),
//! markdown for a pull-request comment. Prices from estimates are marked `~` (table, markdown) and
//! `price_estimate: true` (json).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::catalog::Catalog;

use super::launch::launch;
use super::pods::Pod;
use super::scheduler::{Outcome, Template};
use super::yaml::show;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    #[default]
    Table,
    Json,
    Markdown,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    pub region: String,
    pub nodeclaims: Vec<NodeClaimReport>,
    pub pending: Vec<PendingPod>,
    pub nodepools: Vec<NodePoolReport>,
    pub usd_per_hour: f64,
    /// True when any price in the total is an estimate.
    pub price_estimate: bool,
    /// Kueue admission, when the manifests hold Kueue objects or a pod is queued (`admission`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admission: Option<super::admission::AdmissionReport>,
    /// Per workload of several replicas: what one node's or one zone's interruption takes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blast_radius: Vec<super::blast::BlastRadius>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NodeClaimReport {
    pub name: String,
    pub nodepool: String,
    pub instance_type: String,
    pub capacity_type: String,
    pub zone: String,
    pub usd_per_hour: f64,
    pub price_estimate: bool,
    /// The instance types the NodeClaim could launch (EC2 Fleet picks among them).
    pub candidates: Vec<String>,
    pub pods: Vec<String>,
    /// A static NodePool's replica: launched up front and billed whether pods run on it or not.
    #[serde(rename = "static", skip_serializing_if = "std::ops::Not::not")]
    pub static_node: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PendingPod {
    pub pod: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NodePoolReport {
    pub name: String,
    pub weight: i64,
    pub nodeclaims: usize,
    /// Capacity of the launched NodeClaims, for the resources the pool limits (and nodes).
    pub usage: BTreeMap<String, String>,
    pub limits: BTreeMap<String, String>,
    /// A static NodePool's `spec.replicas`: its nodes are launched up front (its `nodeclaims`), not by pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped: Option<String>,
}

pub fn build(catalog: &Catalog, templates: &[Template], pods: &[Pod], outcome: &Outcome) -> Report {
    let mut nodeclaims = Vec::new();
    let mut per_pool: Vec<(usize, BTreeMap<String, i128>)> = vec![(0, BTreeMap::new()); templates.len()];
    // Planning order is by pod count; report order is by NodePool order, then the first pod's key.
    let mut claims: Vec<&super::scheduler::Claim> = outcome.claims.iter().collect();
    claims.sort_by_key(|c| (c.template, c.pods.iter().map(|&p| pods[p].key.clone()).min()));
    for claim in claims {
        let t = &templates[claim.template];
        let requests = super::scheduler::sum(&claim.requests, &super::instances::claim_requests(&t.types, &claim.types));
        // A static replica was launched before any pod, over every type its NodePool admits.
        let l = if claim.fixed { super::static_nodes::replica_launch(t) } else { launch(&t.types, &claim.types, &claim.requirements, &requests) };
        let Some(l) = l else { continue };
        let (count, usage) = &mut per_pool[claim.template];
        *count += 1;
        for (k, v) in &t.types[l.instance_type].capacity {
            *usage.entry(k.clone()).or_default() += v;
        }
        let mut keys: Vec<String> = claim.pods.iter().map(|&p| pods[p].key.clone()).collect();
        keys.sort();
        nodeclaims.push(NodeClaimReport {
            name: format!("{}-{}", t.pool.name, count),
            nodepool: t.pool.name.clone(),
            instance_type: t.types[l.instance_type].name.clone(),
            capacity_type: l.offering.capacity_type.as_str().to_string(),
            zone: l.offering.zone.clone(),
            usd_per_hour: round(l.offering.billed_usd_per_hour),
            price_estimate: l.offering.estimate,
            candidates: l.candidates,
            pods: keys,
            static_node: claim.fixed,
        });
    }
    let mut pending: Vec<PendingPod> = outcome.pending.iter().map(|(p, r)| PendingPod { pod: pods[*p].key.clone(), reason: r.clone() }).collect();
    pending.sort_by(|a, b| a.pod.cmp(&b.pod));
    let nodepools = templates.iter().zip(per_pool).map(|(t, (count, usage))| pool_report(t, count, &usage)).collect();
    Report {
        region: catalog.region.clone(),
        usd_per_hour: round(nodeclaims.iter().map(|c| c.usd_per_hour).sum()),
        price_estimate: nodeclaims.iter().any(|c| c.price_estimate),
        blast_radius: super::blast::blast_radius(nodeclaims.iter().map(|c| (c.name.as_str(), c.zone.as_str(), c.pods.as_slice()))),
        nodeclaims,
        pending,
        nodepools,
        admission: None,
    }
}

fn pool_report(t: &Template, count: usize, usage: &BTreeMap<String, i128>) -> NodePoolReport {
    let limits: BTreeMap<String, String> = t.pool.limits.iter().map(|(k, v)| (k.clone(), show(k, *v))).collect();
    let mut used: BTreeMap<String, String> = t.pool.limits.keys().filter(|k| *k != "nodes").map(|k| (k.clone(), show(k, usage.get(k).copied().unwrap_or(0)))).collect();
    if t.pool.limits.contains_key("nodes") {
        used.insert("nodes".into(), count.to_string());
    }
    // A static NodePool is left out of provisioning by design, not dropped: pods land on its replicas.
    let dropped = t.dropped.clone().filter(|d| t.pool.static_replicas.is_none_or(|n| *d != super::static_nodes::reason(n)));
    NodePoolReport { name: t.pool.name.clone(), weight: t.pool.weight, nodeclaims: count, usage: used, limits, replicas: t.pool.static_replicas, dropped }
}

/// To 4 decimals; never -0 (an empty f64 sum is -0.0, which printed `$-0.00/h` when every pod was pending).
fn round(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0 + 0.0
}

/// `$1.23`, or `~$1.23` for an estimated price (also explain's per-workload section, `check::write_placements`).
pub fn price(v: f64, estimate: bool) -> String {
    format!("{}${v:.2}", if estimate { "~" } else { "" })
}

fn usage_text(p: &NodePoolReport) -> String {
    if p.limits.is_empty() {
        return "no limits".into();
    }
    p.limits.iter().map(|(k, l)| format!("{k} {}/{l}", p.usage.get(k).map_or("0", String::as_str))).collect::<Vec<_>>().join(", ")
}

pub fn render(r: &Report, format: Format) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(r).expect("a report serializes") + "\n",
        Format::Table => table(r),
        Format::Markdown => markdown(r),
    }
}

fn table(r: &Report) -> String {
    let mut out = String::new();
    let rows: Vec<[String; 6]> = r
        .nodeclaims
        .iter()
        .map(|c| [c.name.clone(), c.instance_type.clone(), c.capacity_type.clone(), c.zone.clone(), price(c.usd_per_hour, c.price_estimate), pods_text(c, " ")])
        .collect();
    let header = ["NODECLAIM", "TYPE", "CAPACITY", "ZONE", "$/H", "PODS"];
    let widths: Vec<usize> = (0..5).map(|i| rows.iter().map(|row| row[i].len()).chain([header[i].len()]).max().unwrap_or(0)).collect();
    let line = |cells: [&str; 6]| {
        let mut l = String::new();
        for i in 0..5 {
            let _ = write!(l, "{:<w$}  ", cells[i], w = widths[i]);
        }
        l + cells[5] + "\n"
    };
    out.push_str(&line(header));
    for row in &rows {
        out.push_str(&line([&row[0], &row[1], &row[2], &row[3], &row[4], &row[5]]));
    }
    if !r.pending.is_empty() {
        let _ = writeln!(out, "\npending ({}):", r.pending.len());
        for p in &r.pending {
            let _ = writeln!(out, "  {}: {}", p.pod, p.reason);
        }
    }
    if let Some(a) = &r.admission {
        out.push_str(&admission_text(a, "  "));
    }
    out.push_str("\nnodepools (weight order):\n");
    for p in &r.nodepools {
        let _ = writeln!(out, "  {} ({}): {} nodeclaims; {}{}", p.name, pool_rank(p), p.nodeclaims, usage_text(p), p.dropped.as_ref().map(|d| format!("; takes no pods: {d}")).unwrap_or_default());
    }
    if !r.blast_radius.is_empty() {
        // Forceful disruption (spot interruption, maintenance events, node repair) ignores disruption budgets.
        out.push_str("\nblast radius (replicas one interruption takes, whatever the PodDisruptionBudget):\n");
        for b in &r.blast_radius {
            let _ = writeln!(out, "  {}", b.text());
        }
    }
    let _ = writeln!(out, "\ntotal: {}/h{}", price(r.usd_per_hour, r.price_estimate), if r.price_estimate { " (~ = estimated spot price)" } else { "" });
    out
}

/// A NodePool's place: its weight, or that it is static (no weight; its replicas are launched up front).
fn pool_rank(p: &NodePoolReport) -> String {
    p.replicas.map_or(format!("weight {}", p.weight), |r| format!("static, {r} replicas launched up front"))
}

/// A NodeClaim's pods; a static replica says so (it runs, and is billed, with none).
fn pods_text(c: &NodeClaimReport, sep: &str) -> String {
    let pods = c.pods.join(sep);
    match (c.static_node, pods.is_empty()) {
        (false, _) => pods,
        (true, true) => "(static replica, no pods)".to_string(),
        (true, false) => format!("{pods} (static replica)"),
    }
}

fn markdown(r: &Report) -> String {
    let mut out = format!("### Simulated provisioning ({})\n\n", r.region);
    out.push_str("| NodeClaim | NodePool | Type | Capacity | Zone | $/h | Pods |\n|--|--|--|--|--|--:|--|\n");
    for c in &r.nodeclaims {
        let _ = writeln!(out, "| {} | {} | `{}` | {} | {} | {} | {} |", c.name, c.nodepool, c.instance_type, c.capacity_type, c.zone, price(c.usd_per_hour, c.price_estimate), pods_text(c, ", "));
    }
    if !r.pending.is_empty() {
        let _ = writeln!(out, "\n**{} pending pod(s)**\n\n| Pod | Reason |\n|--|--|", r.pending.len());
        for p in &r.pending {
            let _ = writeln!(out, "| {} | {} |", p.pod, p.reason.replace('|', "\\|"));
        }
    }
    if let Some(a) = &r.admission {
        out.push_str(&admission_markdown(a));
    }
    out.push_str("\n| NodePool | Weight | NodeClaims | Usage / limits |\n|--|--:|--:|--|\n");
    for p in &r.nodepools {
        let rank = p.replicas.map_or(p.weight.to_string(), |r| format!("static ({r} replicas)"));
        let _ = writeln!(out, "| {} | {} | {} | {}{} |", p.name, rank, p.nodeclaims, usage_text(p), p.dropped.as_ref().map(|d| format!(" (takes no pods: {d})")).unwrap_or_default());
    }
    let _ = writeln!(out, "\n**Total: {}/h**{}", price(r.usd_per_hour, r.price_estimate), if r.price_estimate { " (~ = estimated spot price)" } else { "" });
    out
}

/// A ClusterQueue's quotas: `flavor resource used/nominal`, with what is borrowed and the limits.
fn quota_text(cq: &super::admission::ClusterQueueReport) -> String {
    let one = |q: &super::admission::QuotaReport| {
        let mut s = format!("{} {} {}/{}", q.flavor, q.resource, q.used, q.nominal);
        let limits: Vec<String> = [("borrowed", Some(&q.borrowed).filter(|b| *b != "0")), ("borrowing limit", q.borrowing_limit.as_ref()), ("lending limit", q.lending_limit.as_ref())].into_iter().filter_map(|(k, v)| v.map(|v| format!("{k} {v}"))).collect();
        if !limits.is_empty() {
            let _ = write!(s, " ({})", limits.join(", "));
        }
        s
    };
    cq.quotas.iter().map(one).collect::<Vec<_>>().join("; ")
}

fn workload_text(w: &super::admission::WorkloadReport) -> String {
    let flavors: Vec<&str> = w.flavors.values().map(String::as_str).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    match &w.reason {
        None => format!("admitted {} ({} pods, priority {}): {}{}", w.name, w.pods, w.priority, flavors.join(", "), if w.borrowing { ", borrowing" } else { "" }),
        Some(reason) => format!("pending  {} ({} pods, priority {}): {reason}", w.name, w.pods, w.priority),
    }
}

/// The table's admission section.
fn admission_text(a: &super::admission::AdmissionReport, indent: &str) -> String {
    let mut out = String::from("\nadmission (Kueue ClusterQueues, before Karpenter):\n");
    for cq in &a.cluster_queues {
        let cohort = cq.cohort.as_ref().map(|c| format!(", cohort {c}")).unwrap_or_default();
        let _ = writeln!(out, "{indent}ClusterQueue {} ({}{cohort}): {}", cq.name, cq.queueing_strategy, quota_text(cq));
    }
    for w in &a.workloads {
        let _ = writeln!(out, "{indent}{}", workload_text(w));
    }
    out
}

fn admission_markdown(a: &super::admission::AdmissionReport) -> String {
    let mut out = String::from("\n| ClusterQueue | Strategy | Cohort | Usage / nominal |\n|--|--|--|--|\n");
    for cq in &a.cluster_queues {
        let _ = writeln!(out, "| {} | {} | {} | {} |", cq.name, cq.queueing_strategy, cq.cohort.as_deref().unwrap_or(""), quota_text(cq));
    }
    out.push_str("\n| Workload | Queue | Pods | Priority | Admission |\n|--|--|--:|--:|--|\n");
    for w in &a.workloads {
        let flavors: std::collections::BTreeSet<&str> = w.flavors.values().map(String::as_str).collect();
        let what = w.reason.clone().unwrap_or_else(|| format!("admitted: {}{}", flavors.into_iter().collect::<Vec<_>>().join(", "), if w.borrowing { " (borrowing)" } else { "" }));
        let _ = writeln!(out, "| {} | {} | {} | {} | {} |", w.name, w.queue, w.pods, w.priority, what.replace('|', "\\|"));
    }
    out
}
