//! The generated commit message.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::paths::slash;
use crate::layout::OutputTree;
use crate::emit::diff::{ClusterCost, CostMeasure, ObjectChange, cluster_costs, semantic_changes};

/// The generated commit message: a subject line summarising the change, then one bullet per changed object, per
/// extra path, and the worst-case $/h totals per cluster.
pub fn commit_message(old: &OutputTree, new: &OutputTree, extra_changed: &[PathBuf]) -> String {
    let objects = semantic_changes(old, new);
    let costs: Vec<_> = cluster_costs(old, new)
        .into_iter()
        .filter(|c| c.measure == CostMeasure::WorstCase && c.old != c.new)
        .collect();
    let clusters: BTreeSet<&str> = objects
        .iter()
        .map(|o| o.cluster.as_str())
        .filter(|c| !c.is_empty())
        .collect();
    let mut msg = subject(&objects, &clusters, extra_changed, &costs);
    let mut body = Vec::new();
    for o in &objects {
        if clusters.len() > 1 {
            body.push(format!("- {}: {}", o.cluster, o.summary));
        } else {
            body.push(format!("- {}", o.summary));
        }
    }
    for p in extra_changed {
        body.push(format!("- {}", slash(p)));
    }
    if !body.is_empty() {
        msg.push_str("\n\n");
        msg.push_str(&body.join("\n"));
    }
    if !costs.is_empty() {
        msg.push_str("\n\n");
        let lines: Vec<String> = costs
            .iter()
            .map(|c| {
                let f = |v: Option<f64>| v.map_or("none".to_owned(), |v| format!("{v:.2}"));
                format!("Worst case $/h {}: {} → {}", c.cluster, f(c.old), f(c.new))
            })
            .collect();
        msg.push_str(&lines.join("\n"));
    }
    msg.push('\n');
    msg
}

/// The subject line: the clusters (up to three by name) and how many objects were added, changed, removed (or
/// the extra paths, or "regenerate out/"), then the worst-case $/h delta when it is not zero.
fn subject(objects: &[ObjectChange], clusters: &BTreeSet<&str>, extra_changed: &[PathBuf], costs: &[ClusterCost]) -> String {
    let count = |k| objects.iter().filter(|o| o.change == k).count();
    let (added, modified, removed) = (
        count(crate::emit::ChangeKind::Added),
        count(crate::emit::ChangeKind::Modified),
        count(crate::emit::ChangeKind::Removed),
    );
    let mut counts = Vec::new();
    for (n, w) in [
        (added, "added"),
        (modified, "changed"),
        (removed, "removed"),
    ] {
        if n > 0 {
            counts.push(format!("{n} {w}"));
        }
    }
    let scope = match clusters.len() {
        0 => String::new(),
        1..=3 => format!(
            "{}: ",
            clusters.iter().copied().collect::<Vec<_>>().join(", ")
        ),
        n => format!("{n} clusters: "),
    };
    let mut subject = if !counts.is_empty() {
        format!("gpuplan: {scope}{}", counts.join(", "))
    } else if !extra_changed.is_empty() {
        format!(
            "gpuplan: update {}",
            extra_changed
                .iter()
                .map(|p| slash(p))
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        "gpuplan: regenerate out/".to_owned()
    };
    let total_delta: f64 = costs
        .iter()
        .map(|c| c.new.unwrap_or(0.0) - c.old.unwrap_or(0.0))
        .sum();
    if !costs.is_empty()
        && format!("{total_delta:.2}") != "0.00"
        && format!("{total_delta:.2}") != "-0.00"
    {
        let sign = if total_delta < 0.0 { "-" } else { "+" };
        subject.push_str(&format!(", worst case {sign}${:.2}/h", total_delta.abs()));
    }
    subject
}
