//! gpuplan: a compiler for GPU capacity on Kubernetes.
//!
//! The pipeline, one stage per module, one typed value between stages:
//! profiles/*.kdl → [`intent`] → Profiles; catalogs/*.json → [`catalog`] → Catalog;
//! [`solve`] → Plan; [`render`] → Manifests; [`validate`] → checked; [`output`] → out/.
//! [`simulate`] answers what Karpenter would launch for a set of pods on the generated manifests.
//! [`compile`] runs them in order; `main.rs` is a thin command line over the library.

pub mod adopt;
pub mod aws;
pub mod catalog;
pub mod compile;
pub mod cost;
pub mod diagnostic;
pub mod diff;
pub mod explain;
pub mod gitops;
pub mod import;
pub mod intent;
pub mod lint;
pub mod output;
pub mod refresh;
pub mod render;
pub mod simulate;
pub mod ops;
pub mod solve;
pub mod validate;
