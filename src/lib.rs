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

pub mod adopt;
pub mod catalog;
pub mod check;
pub mod compile;
pub mod diagnostic;
pub mod emit;
pub mod input;
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
