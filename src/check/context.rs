//! The narrow view of a compilation that the checks and the lint rules get: compile builds one per cluster
//! (`Compilation::cluster_ctx`), and it is all they see of the compile (as cargo-deny hands each check a `CheckCtx`).

use std::collections::BTreeMap;

use crate::catalog::Catalog;
use crate::diagnostic::{ProfileDiagnostic, Sources, Span};
use crate::profile::Profile;
use crate::simulate::instances::TypeLabels;
use crate::solve::ClusterPlan;

/// What the whole-cluster checks and the lint rules read of one cluster's compile.
#[derive(Debug)]
pub struct ClusterCtx<'a> {
    /// Every profile's text, to word diagnostics at their spans.
    pub sources: &'a Sources,
    pub cluster: &'a ClusterPlan,
    /// The cluster's profiles, in file order.
    pub profiles: Vec<&'a Profile>,
    /// The catalog of the cluster's region (solve refuses a cluster without one: E0151).
    pub catalog: &'a Catalog,
    /// The simulator's instance-type labels of that catalog, shared by every simulation of the compile.
    pub type_labels: &'a TypeLabels,
    /// The profiles by name, looked up once per pool or workload (of two profiles of one name, the later one, as
    /// compile's own index keeps it).
    by_name: BTreeMap<&'a str, &'a Profile>,
}

impl<'a> ClusterCtx<'a> {
    /// The context of `cluster`, whose profiles are `profiles` (file order).
    pub fn new(sources: &'a Sources, cluster: &'a ClusterPlan, profiles: Vec<&'a Profile>, catalog: &'a Catalog, type_labels: &'a TypeLabels) -> ClusterCtx<'a> {
        let by_name = profiles.iter().map(|p| (p.name.value.as_str(), *p)).collect();
        ClusterCtx { sources, cluster, profiles, catalog, type_labels, by_name }
    }

    /// The cluster's profile of this name.
    pub fn profile(&self, name: &str) -> Option<&'a Profile> {
        self.by_name.get(name).copied()
    }
}

/// A whole-cluster check's diagnostic and the pool it is about: an error, or on an adopted pool a warning
/// ([`crate::solve::PoolPlan::whole_cluster_severity`]) that compile reports among lint's findings (the check stage
/// builds no findings).
#[derive(Debug, Clone)]
pub struct PoolDiagnostic {
    pub profile: String,
    /// The NodePool it is reported under.
    pub nodepool: String,
    pub span: Span,
    pub diagnostic: ProfileDiagnostic,
}
