//! gpuplan: a compiler for GPU capacity on Kubernetes.
//!
//! The pipeline, one stage per folder, one typed value between stages:
//! profiles/*.kdl → [`profile`] → Profiles; catalogs/*.json → [`catalog`] → Catalog;
//! [`solve`] → Plan; [`render`] → Manifests; [`validate`] → checked; [`emit`] → out/.
//! [`report`] is what users read about a compilation (diffs, explanations, lint findings).
//! [`simulate`] answers what Karpenter would launch for a set of pods on the generated manifests;
//! [`adopt`] turns existing manifests into profiles. [`ops`] holds the operations manifests (workloads,
//! monitoring, GPU Operator) that ride along with the capacity pipeline.
//! [`compile`] runs them in order; `main.rs` is a thin command line over the library.

#![deny(clippy::too_many_lines)]

pub mod adopt;
pub mod catalog;
pub mod charts;
pub mod check;
pub mod compile;
pub mod diagnostic;
pub mod emit;
pub mod input;
pub mod layout;
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
    &["input"],
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
    &["emit", "report"],
    &["adopt"],
    &["cli"],
];
