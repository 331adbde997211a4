//! What a lint rule is: its code, its name and one line for `--help`, the README and `explain`, and its check.

use crate::profile::Profile;

use super::code::RuleCode;
use super::context::{LintCtx, PoolCtx};
use super::finding::Findings;

/// One lint rule: what each `src/lint/rules/gpNNN_<name>.rs` declares as its `RULE`.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub code: RuleCode,
    /// Short kebab-case name.
    pub name: &'static str,
    /// What it checks, one line.
    pub summary: &'static str,
    /// Whether it reads the rendered manifests (`true`) or the plan/profile (`false`).
    pub checks_output: bool,
    /// What it looks at, and its check.
    pub check: Scope,
}

/// What a rule looks at, with its check: the driver (`lint::cluster_findings`) calls it once per NodePool, per
/// profile or per cluster.
#[derive(Debug, Clone, Copy)]
pub enum Scope {
    /// Each rendered NodePool of the cluster, with its plan, profile and tier.
    Pool(fn(&PoolCtx, &mut Findings)),
    /// Each profile of the cluster, in file order.
    Profile(fn(&LintCtx, &Profile, &mut Findings)),
    /// The cluster as a whole.
    Cluster(fn(&LintCtx, &mut Findings)),
}
