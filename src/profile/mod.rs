//! Stage 1: KDL profiles → typed, spanned [`Profile`]s.
//!
//! One file is one profile. The grammar (KDL v2) is documented in README.md; in short:
//!
//! ```kdl
//! profile "llm-inference" priority=100      // optional; the file stem names the profile otherwise
//! cluster "ml-prod" { region "us-east-1"; zones "us-east-1a" "us-east-1b"; ami "al2023@v20251023" }
//! budget usd-per-hour=150
//! pool "llm" preset="inference-spot" {
//!     gpu { name "A10G" "L4"; memory-min "22GiB"; per-node max=1 }
//!     max-accelerators 40
//! }
//! ```
//!
//! The walk is written by hand over `kdl::KdlDocument` rather than through kdl's serde deserializer so that
//! every value keeps its own span: a contradiction found later (by the solver or lint) still points at the
//! exact text the user wrote, and unknown names get a "did you mean" from the list of names valid *there*.
//! The documents come from [`fast_kdl`] when the file is in the common subset of KDL it reads (every profile we
//! have seen), else from kdl-rs, which also reports every syntax error.
//!
//! Presets give defaults; every setting can be written at pool level and again inside a `tier`, the inner
//! one winning. Settings that came from a preset carry the span of the `preset=` property.
//!
//! The walk, file by file: `document` reads one file and its top-level nodes into a [`Profile`]; `cluster`
//! the `cluster` block; `pool` a `pool`, its preset and its tiers; `settings` one NodePool's settings (each
//! setting's node read by a typed parser there or in `accelerator`, `reserved`, `labels`, `disruption`,
//! `requirements`, `limits`, `overlay`, `static_pool`, `raw`); `ops` and `monitoring` the operations
//! intent; `queue` the Kueue queues. `parser` holds the walk's shared tools, `duration` the duration syntax.

use std::path::Path;

use crate::diagnostic::ErrorCode;
use crate::diagnostic::{ProfileDiagnostic, Sources, Span, Spanned};

/// The walk's `Parser` and the KDL readers and error helpers every part of it shares.
pub(crate) mod parser;
/// Durations (`1h30m`) as Karpenter and KEDA read them.
mod duration;
/// One file: its KDL document and top-level nodes.
mod document;
/// KDL's common subset, read without kdl-rs.
mod fast_kdl;
/// The `cluster` block.
mod cluster;
/// The cluster's Karpenter: the version the output targets and its interruption queue.
pub mod karpenter;
/// `pool` blocks, presets and tiers.
mod pool;
/// One NodePool's settings and the dispatcher over their parsers.
mod settings;
/// `gpu`, `neuron` and `cpu` blocks.
mod accelerator;
/// `reserved` blocks (capacity reservations).
mod reserved;
/// `label` and `taint` lines.
mod labels;
/// `disruption` blocks.
mod disruption;
/// `workload` nodes and the operations part of a profile ([`ops::ProfileOps`]).
pub mod ops;
/// The `monitoring` node.
pub mod monitoring;
/// The GPU Operator releases a `monitoring` block may name.
pub mod gpu_operator_releases;
/// `queue` nodes (Kueue queues).
pub mod queue;
/// `require` nodes (NodePool requirements on any well-known or user label).
mod requirements;
/// `limits` nodes (NodePool cpu and memory limits).
mod limits;
/// `overlay` blocks (NodeOverlays: price and capacity).
mod overlay;
/// `static replicas=… max-nodes=…` (static NodePools) and what a static pool refuses.
mod static_pool;
/// `kubelet { … }` and `raw "<Kind>" "<YAML>"`.
pub mod raw;
/// `gpuplan.kdl`, the repository config: settings every run repeats and the clusters profiles share.
pub mod config;
/// The language's nodes: names valid at each level (for unknown-name errors and their "did you mean") come
/// from one table, which `gpuplan schema` prints.
pub mod schema;
/// The commented starter profiles `gpuplan init` writes, one per preset.
pub mod starter;

pub use cluster::{check_ephemeral_storage, Cluster, Gitops};
pub use disruption::{Disruption, DisruptionBudget, MaintenanceWindow};
pub use document::MAX_NESTING;
pub use duration::{duration_minutes, duration_seconds, format_seconds};
pub use labels::Taint;
pub use limits::ResourceLimits;
pub(crate) use ops::is_training_pool;
pub use overlay::{Overlay, OverlayPrice};
pub use pool::{on_demand_after_spot, Pool, Preset, Tier, DEFAULT_PRICE_RATIO_MAX, FALLBACK_CONSOLIDATE_AFTER, SERVING_GRACE_PERIOD};
pub use raw::Raw;
pub use requirements::{expressible as requirement_expressible, is_well_known as requirements_is_well_known, NodeRequirement};
pub use reserved::Reserved;
pub use settings::{Admit, Settings, Sharing};
pub use static_pool::StaticPool;

use parser::Parser;


#[derive(Debug, Clone)]
pub struct Profile {
    pub name: Spanned<String>,
    pub file: usize,
    /// Higher priority profiles get higher NodePool weights within their cluster.
    pub priority: Spanned<i64>,
    pub cluster: Cluster,
    pub budget_usd_per_hour: Option<Spanned<f64>>,
    pub pools: Vec<Pool>,
    /// Lint codes silenced for the whole profile.
    pub allow: Vec<Spanned<String>>,
    /// Workloads (PDB, HPA) and monitoring settings: see `ops`.
    pub ops: ops::ProfileOps,
    /// Kueue queues: see `queue`.
    pub queues: Vec<queue::Queue>,
}

/// Parses every profile; returns them with all diagnostics (errors and warnings) found, in file order. Files
/// are read and parsed on every core; each file is parsed on its own.
pub fn parse_files(paths: &[&Path], sources: &mut Sources) -> (Vec<Profile>, Vec<ProfileDiagnostic>) {
    parse_files_sharing(paths, sources, &config::SharedClusters::new())
}

/// [`parse_files`], where a profile's `cluster "name"` with no block takes the cluster of that name in `shared`.
pub fn parse_files_sharing(paths: &[&Path], sources: &mut Sources, shared: &config::SharedClusters) -> (Vec<Profile>, Vec<ProfileDiagnostic>) {
    use rayon::prelude::*;
    // Each file read and its repository path resolved (a few system calls each) on every core.
    let resolver = crate::diagnostic::repository_paths::RepositoryPaths::new();
    let texts: Vec<(std::io::Result<String>, String)> = paths.par_iter().map(|p| (crate::input::read_to_string(p), resolver.resolve(p))).collect();
    let mut diagnostics = Vec::new();
    let mut readable = Vec::new();
    for (path, (text, name)) in paths.iter().zip(texts) {
        match text {
            Ok(text) => readable.push((sources.add(path, name, text), *path)),
            Err(err) => {
                let file = sources.add(path, name, String::new());
                diagnostics.push(
                    sources
                        .error(Span { file, offset: 0, len: 0 }, ErrorCode::E0001, format!("cannot read profile: {err}"))
                        .help("check the path; `gpuplan compile` reads profiles/*.kdl by default"),
                );
            }
        }
    }
    let sources: &Sources = sources;
    let parsed: Vec<(Option<Profile>, Vec<ProfileDiagnostic>)> = readable
        .par_iter()
        .map(|&(file, path)| parse_source(sources, file, path, shared))
        .collect();
    let mut profiles = Vec::with_capacity(parsed.len());
    for (profile, found) in parsed {
        diagnostics.extend(found);
        profiles.extend(profile);
    }
    (profiles, diagnostics)
}

/// One profile whose text is already `file` of `sources` (`path` names it: its stem is the profile's name): what
/// [`parse_files_sharing`] does for each file it has read. The fuzz targets (fuzz/) call it on text in memory.
pub fn parse_source(sources: &Sources, file: usize, path: &Path, shared: &config::SharedClusters) -> (Option<Profile>, Vec<ProfileDiagnostic>) {
    let mut parser = Parser::new(sources, file);
    let profile = parser.parse_profile(path, shared);
    (profile, parser.diagnostics)
}
