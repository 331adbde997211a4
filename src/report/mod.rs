//! The report stage: what users read about a compilation, as opposed to the manifests it writes.
//!
//! * [`diff`]: what would change in out/, as a unified text diff or a semantic summary for reviewers.
//! * [`explain`]: the solver's decisions in words and numbers, per cluster, profile and NodePool.
//! * [`lint`]: the misconfiguration checks (stable `GPxxx` codes), also run by `compile` as warnings.

pub mod diff;
pub mod explain;
pub mod lint;
