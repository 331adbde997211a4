//! The report stage: what users read about a compilation, as opposed to the manifests it writes.
//!
//! * [`explain`]: the solver's decisions in words and numbers, per cluster, profile and NodePool.
//! * [`lint`]: the misconfiguration checks (stable `GPxxx` codes), also run by `compile` as warnings.

pub mod explain;
pub mod lint;
