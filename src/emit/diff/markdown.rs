//! The markdown summary of a change, for a pull-request comment.

use std::collections::BTreeSet;

use super::detail::{ClusterCost, CostMeasure, ObjectChange, money, signed_money};
use super::semantic::{REMOVAL_WARNING, change_words, cluster_costs, removed_node_pools, semantic_changes};
use super::unified::slash;
use crate::emit::{ChangeKind, FileChange, changes};
use crate::layout::{OutputTree, cluster_of};

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn cost_line(c: &ClusterCost) -> String {
    let label = c.measure.label();
    match (c.old, c.new) {
        (Some(o), Some(n)) if money(o) == money(n) => format!("{label}: {} (unchanged)", money(n)),
        (Some(o), Some(n)) => format!(
            "{label}: {} → {} (**{}**)",
            money(o),
            money(n),
            signed_money(n - o)
        ),
        (None, Some(n)) => format!("{label}: none → {} (**{}**)", money(n), signed_money(n)),
        (Some(o), None) => format!("{label}: {} → none (**{}**)", money(o), signed_money(-o)),
        (None, None) => format!("{label}: none"),
    }
}

/// The markdown summary: a heading, per cluster its cost totals (worst case first), a table of changed objects,
/// and the changed files in a collapsed list.
pub fn render_markdown(old: &OutputTree, new: &OutputTree) -> String {
    let files = changes(old, new);
    if files.is_empty() {
        return "## gpuplan: no changes to out/\n".into();
    }
    let objects = semantic_changes(old, new);
    let costs = cluster_costs(old, new);
    let removed = removed_node_pools(old, new);
    let clusters: BTreeSet<String> = files
        .iter()
        .map(|f| cluster_of(&f.path).unwrap_or_default())
        .chain(objects.iter().map(|o| o.cluster.clone()))
        .collect();

    let count = |k: ChangeKind| objects.iter().filter(|o| o.change == k).count();
    let mut s = format!(
        "## gpuplan: changes to out/\n\n{} object(s) changed: {} added, {} modified, {} removed; {} file(s).\n",
        objects.len(),
        count(ChangeKind::Added),
        count(ChangeKind::Modified),
        count(ChangeKind::Removed),
        files.len()
    );
    if !removed.is_empty() {
        s.push_str(&format!("\n> [!WARNING]\n> This change removes {} NodePool(s): {REMOVAL_WARNING}.\n", removed.len()));
        for r in &removed {
            s.push_str(&format!("> - {}\n", md_escape(&r.to_string())));
        }
    }
    for cluster in clusters {
        let title = if cluster.is_empty() {
            "out/".to_owned()
        } else {
            format!("`{cluster}`")
        };
        s.push_str(&format!("\n### {title}\n\n"));
        push_cluster_costs(&mut s, &costs, &cluster);
        push_object_table(&mut s, &objects, &cluster);
        push_file_list(&mut s, &files, &cluster);
    }
    s
}

/// The cluster's cost totals, worst case first, as a list.
fn push_cluster_costs(s: &mut String, costs: &[ClusterCost], cluster: &str) {
    let mut cluster_costs: Vec<&ClusterCost> =
        costs.iter().filter(|c| c.cluster == cluster).collect();
    cluster_costs.sort_by_key(|c| match c.measure {
        CostMeasure::WorstCase => 0,
        CostMeasure::DrainPeak => 1,
        CostMeasure::Expected => 2,
        CostMeasure::Budget => 3,
    });
    for c in &cluster_costs {
        s.push_str(&format!("- {}\n", cost_line(c)));
    }
    if !cluster_costs.is_empty() {
        s.push('\n');
    }
}

/// The cluster's changed objects as a table (or a line saying there are none).
fn push_object_table(s: &mut String, objects: &[ObjectChange], cluster: &str) {
    let mine: Vec<&ObjectChange> = objects.iter().filter(|o| o.cluster == cluster).collect();
    if mine.is_empty() {
        s.push_str("No object changes (formatting or header only).\n");
        return;
    }
    s.push_str("| | Object | Change |\n|---|---|---|\n");
    for o in mine {
        let sign = match o.change {
            ChangeKind::Added => "➕",
            ChangeKind::Removed => "➖",
            ChangeKind::Modified => "✏️",
        };
        let object = match &o.namespace {
            Some(ns) => format!("{} `{ns}/{}`", o.kind, o.name),
            None => format!("{} `{}`", o.kind, o.name),
        };
        s.push_str(&format!(
            "| {sign} | {} | {} |\n",
            md_escape(&object),
            md_escape(&change_words(o.change, &o.details))
        ));
    }
}

/// The cluster's changed files in a collapsed list.
fn push_file_list(s: &mut String, files: &[FileChange], cluster: &str) {
    let my_files: Vec<_> = files
        .iter()
        .filter(|f| cluster_of(&f.path).unwrap_or_default() == cluster)
        .collect();
    s.push_str(&format!(
        "\n<details><summary>{} file(s)</summary>\n\n",
        my_files.len()
    ));
    for f in my_files {
        let kind = match f.kind {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Removed => "removed",
        };
        s.push_str(&format!("- {kind} `out/{}`\n", slash(&f.path)));
    }
    s.push_str("\n</details>\n");
}
