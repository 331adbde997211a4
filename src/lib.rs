//! gpuplan: a compiler for GPU capacity on Kubernetes.
//!
//! # The stages
//!
//! A stage is a module (a folder, or one file for the small ones: `input`, `names`, `layout`, `compile`); each
//! imports only the stages below it in [`LAYERS`] (held by `tests/layering.rs`) and hands the next a typed value
//! (`Profile`, `Plan`, `Manifest`, `Compilation`; a manifest's object itself is JSON, as the API server sees it):
//!
//! | stage | reads | gives |
//! |---|---|---|
//! | [`confine`] | paths | every path read or written resolved and kept inside the repository root |
//! | [`input`] | files | bounded reads: a hostile input cannot hang or exhaust the process |
//! | [`limits`] | – | every limit on the work an input may ask for, its default and how to raise it |
//! | [`names`] | – | the Kubernetes and AWS name rules |
//! | [`diagnostic`] | – | `ProfileDiagnostic` at file:line:col, with an `ErrorCode` from the table |
//! | [`layout`] | – | where files go in out/, their header and digest (`OutputTree`) |
//! | [`validate`] | CRDs | the API server's checks (OpenAPI schema and CEL) on any object |
//! | [`catalog`] | catalogs/*.json | `Catalog`: instance types, prices, and the cost bounds over them |
//! | [`charts`] | – | what the add-on Helm charts create and own (DaemonSets, GPU Operator objects) |
//! | [`simulate`] | manifests, pods | what Karpenter's scheduler would launch (its code, ported and cited) |
//! | [`profile`] | profiles/*.kdl | `Profile`: the intent, every value with its span |
//! | [`solve`] | profiles, catalogs | `Plan`: per cluster the NodePools' types, limits and costs, and the ops and queue plans |
//! | [`render`] | a `ClusterPlan` | `Manifest`s from templates/*.yaml.j2, canonical YAML |
//! | [`ops`], [`queue`] | a `ClusterPlan` | the workloads', monitoring's, GPU Operator's and Kueue's manifests |
//! | [`check`] | a cluster's manifests | errors where the objects together cannot do what the profile asks |
//! | [`lint`] | a cluster's manifests | findings (GP001…), one rule per file under `lint/rules/` |
//! | [`compile`] | all of the above | `Compilation`: every cluster rendered, validated, checked and linted in parallel, each file with its header; nothing written |
//! | [`forecast`] | a `Compilation`, `gpuplan.demand.kdl` | what the clusters cost over days under their demand: Karpenter's provisioning and disruption replayed |
//! | [`emit`], [`report`] | a `Compilation` | out/ written, diffed, committed; explain, diff and lint output |
//! | [`adopt`] | existing YAML | profiles that compile back to it, and the differences named |
//! | `cli` (the binary, `src/cli/`) | arguments | one file per command, calling the stages above |
//!
//! # One profile line, followed to the NodePool it becomes
//!
//! From `profiles/llm-inference.kdl` (cluster `ml-prod`), trimmed:
//!
//! ```kdl
//! budget usd-per-hour=150
//! pool "llm-inference" preset="inference-spot" {
//!     gpu {
//!         name "A10G" "L4" "L40S"
//!         memory-min "22GiB"
//!     }
//! }
//! ```
//!
//! 1. **profile.** [`profile::parse_files`] reads the KDL. `profile/pool.rs` turns the pool and its preset into
//!    tiers (`preset_tiers`: inference-spot gives `llm-inference-spot`, then `llm-inference-on-demand`), each with
//!    its `Settings`; `profile/settings.rs` sends `gpu { … }` to `profile/accelerator.rs`, whose `Accelerator`
//!    copies `names` and `memory_min_mib` (22528 MiB, with its span) onto the tier's `Settings`.
//!    `profile/document.rs` reads `budget` into `Profile::budget_usd_per_hour`.
//! 2. **solve.** [`solve::solve`] works per cluster, and `solve/profile_pools.rs` per profile, tier by tier:
//!    `solve/constraints.rs` makes one `Constraint` per setting ("memory per accelerator ≥ 22528 MiB", the named
//!    GPUs); `solve/select.rs` narrows the catalog with them and ranks what is left by price (nothing left is
//!    E0140, at the span of the constraint that removed the last type); `solve/tier.rs` `pool_plan` makes the
//!    tier's `PoolPlan`. Then `solve/limits.rs` `size_limits` picks one accelerator limit L for all the profile's
//!    usage pools, the largest whose worst cases (`catalog::cost`) add up to at most the budget (here 46 GPUs per
//!    tier: $93.66/h + $55.75/h ≤ $150/h), drops the types bigger than L, and writes each tier's `requirements`
//!    (`tier::requirements`: instance types, capacity type, zones, arch, …).
//! 3. **render.** `Renderer::render_pools` fills `templates/nodepool.yaml.j2` with `node_pool_context`, where the
//!    `PoolPlan` becomes template variables: `spec.limits` from `limit`, `spec.template.spec.requirements` from
//!    `requirements`, the cost annotations from the plan's figures.
//! 4. **compile.** [`compile`] validates every object against the real CRD ([`validate`]), runs the whole-cluster
//!    [`check`]s and the [`lint`] rules on what was rendered, and gives each file its header ([`layout`]).
//! 5. **emit.** [`emit`] writes `out/ml-prod/nodepool-llm-inference-spot.yaml` (and `…-on-demand.yaml`);
//!    `report::explain` prints the same figures with the reason for each.

// No unsafe code: every input a pull request controls meets only safe Rust (which is also why the fuzz targets, fuzz/,
// run without AddressSanitizer).
#![forbid(unsafe_code)]
#![deny(clippy::too_many_lines)]
#![allow(
    clippy::result_large_err,
    reason = "a ProfileDiagnostic carries its source and span so it prints file:line:col; it is built on the error path only, never in the solver's loops"
)]

pub mod adopt;
pub mod catalog;
pub mod charts;
pub mod check;
pub mod compile;
pub mod confine;
pub mod diagnostic;
pub mod emit;
pub mod forecast;
pub mod input;
pub mod layout;
pub mod limits;
pub mod lint;
pub mod names;
pub mod ops;
pub mod profile;
pub mod queue;
pub mod render;
pub mod report;
pub mod simulate;
pub mod solve;
pub mod validate;

/// The stages from the bottom up: a stage may import only the stages of the layers below its own (never one of
/// its own layer, never one above). `tests/layering.rs` reads every import of the library and fails on any edge
/// against this order, and on any circle of files inside a stage.
pub const LAYERS: &[&[&str]] = &[
    &["confine"],
    &["input"],
    &["limits"],
    &["names"],
    &["diagnostic"],
    &["layout"],
    &["validate"],
    &["catalog"],
    &["charts"],
    &["simulate"],
    &["profile"],
    &["solve"],
    &["render"],
    &["ops", "queue"],
    &["check"],
    &["lint"],
    &["compile"],
    &["forecast"],
    &["emit", "report"],
    &["adopt"],
    &["cli"],
];
