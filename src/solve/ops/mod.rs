//! The operations part of a cluster's plan, decided from the same profiles as the pools once the pools are final, so
//! that every workload, alert and GPU Operator setting names real NodePools, limits and prices ([`OpsPlan`]):
//!
//! - [`workload`]: each `workload` block's NodePools, pod placement, PodDisruptionBudget and HPA ([`scaling`]) or KEDA
//!   ScaledObject ([`keda`]), and [`checks`] on them;
//! - [`gpu_operator`]: which ClusterPolicy components run, with which sharing configs and images;
//! - [`metrics`]: the utilization metric each workload scales on, in its unit, and which metric sources exist.
//!
//! `ops` renders all of it.

pub mod checks;
pub mod gpu_operator;
pub mod keda;
pub mod metrics;
pub mod plan;
pub mod scaling;
pub mod workload;

pub use plan::{plan_cluster, OpsPlan};
