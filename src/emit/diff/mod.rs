//! Part of the emit stage: what would change in out/, as a unified text diff or as a semantic summary a reviewer reads.
//!
//! The semantic diff parses every YAML object of the old and new trees (header comments are not part of the
//! YAML, so they never count), matches objects by cluster (top-level directory), kind, namespace and name (not by
//! file, so a renamed file is not an add + remove), and describes each changed object in words. Karpenter
//! NodePools get the words that matter for capacity and cost (instance types, capacity types, limits, weight,
//! disruption, the `gpuplan.dev/*-usd-per-hour` annotations); every other field, and every other kind, is
//! reported by JSON path.

mod compare;
mod detail;
pub mod drift;
pub mod drift_review;
pub mod forecast;
mod markdown;
mod objects;
pub mod policy;
pub mod pools;
pub mod roll;
mod semantic;
pub mod stuck;
mod unified;

pub use detail::{
    BUDGET_COST_ANNOTATION, CAPACITY_TYPE_LABEL, ClusterCost, CostMeasure, Detail, AT_LIMIT_COST_ANNOTATION,
    INSTANCE_TYPE_LABEL, ObjectChange, WORST_CASE_BASIS_ANNOTATION, WORST_CASE_COST_ANNOTATION,
};
pub use markdown::{ReviewContext, WorkloadAt, WorkloadRow, render_markdown, render_review};
pub use semantic::{REMOVAL_WARNING, RemovedNodePool, cluster_costs, removed_node_pools, semantic_changes};
pub use unified::render_unified;

use crate::layout::OutputTree;

/// Output format of [`render_diff`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiffFormat {
    /// A git-style unified diff of the files, paths as `a/out/...` / `b/out/...`.
    #[default]
    Unified,
    /// A summary for a pull-request comment: per cluster a table of changed objects and the worst-case $/h delta.
    Markdown,
    /// The [`ObjectChange`] list as JSON.
    Json,
}

/// Renders what changes from `old` to `new` in the given format. Unified diff paths are `a/out/<path>` and
/// `b/out/<path>`; see [`render_unified`] for another out/ name.
pub fn render_diff(old: &OutputTree, new: &OutputTree, format: DiffFormat) -> String {
    match format {
        DiffFormat::Unified => render_unified(old, new, "out"),
        DiffFormat::Markdown => render_markdown(old, new),
        DiffFormat::Json => {
            let mut s =
                serde_json::to_string_pretty(&semantic_changes(old, new)).expect("serializable");
            s.push('\n');
            s
        }
    }
}
