//! gpuplan: a compiler for GPU capacity on Kubernetes.
//!
//! The pipeline, one stage per module, one typed value between stages:
//! profiles/*.kdl → [`intent`] → Intent; catalogs/*.json → [`catalog`] → Catalog;
//! [`solve`] → Plan; [`render`] → Manifests; [`validate`] → checked; [`output`] → out/.

pub mod catalog;
pub mod import;
pub mod diagnostic;
pub mod intent;
pub mod solve;
pub mod compile;
pub mod output;
pub mod render;
pub mod ops;
