//! `explain --why-not TYPE`: for each NodePool of the selected profiles, whether the type is a candidate (its rank
//! and price) or which constraint removed it, with the type's own figure and the profile line of the constraint.
//! Read from the solver's record ([`crate::solve::Removal`]), never by running the filters again: what this says is
//! what the solver did.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::catalog::Catalog;
use crate::compile::Compilation;
use crate::diagnostic::did_you_mean;
use crate::solve::{ClusterPlan, PoolPlan};

use super::model::ExplainError;
use super::profile_pools;

/// What `--why-not` answers for one instance type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhyNot {
    pub instance_type: String,
    /// Its accelerators (or vCPUs and memory), as the removals' figures say them.
    pub has: String,
    pub pools: Vec<WhyNotPool>,
}

/// One NodePool's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhyNotPool {
    pub cluster: String,
    pub profile: String,
    /// The NodePool name.
    pub nodepool: String,
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// A candidate, or what removed the type.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// In the NodePool's instance-type list, at this rank (1 = cheapest $/accelerator-hour).
    Candidate { rank: usize, of: usize, usd_per_hour: f64, usd_per_accelerator_hour: f64, estimate: bool },
    Removed {
        /// The constraint's words, as in the pool's removal list.
        constraint: String,
        /// What the type has that the constraint reads ("1 × L4 24 GiB", "arch arm64").
        figure: String,
        /// The profile line of the constraint (None: the solver's own rule; see `reason`).
        location: Option<String>,
        /// The profile's line there, without its comment (`memory-min "40GiB"`).
        says: Option<String>,
        /// For a removal by the pool's limit: why the limit is what it is.
        reason: Option<String>,
    },
    /// The cluster's region has no such type.
    NotInRegion { region: String },
}

/// The answers for `types` over every NodePool of `profile` (None: all profiles). A type no catalog of the compile
/// has is an error with a did-you-mean.
pub fn why_not(c: &Compilation, profile: Option<&str>, types: &[String]) -> Result<Vec<WhyNot>, ExplainError> {
    for name in types {
        if !c.catalogs.values().any(|catalog| catalog.get(name).is_some()) {
            let known: BTreeSet<&str> = c.catalogs.values().flat_map(|catalog| catalog.instance_types.iter().map(|t| t.name.as_str())).collect();
            return Err(ExplainError::UnknownType { name: name.clone(), suggestion: did_you_mean(name, known) });
        }
    }
    Ok(types
        .iter()
        .map(|name| {
            let has = c.catalogs.values().find_map(|catalog| catalog.get(name)).map(crate::solve::node_summary).unwrap_or_default();
            WhyNot { instance_type: name.clone(), has, pools: answers(c, profile, name) }
        })
        .collect())
}

fn answers(c: &Compilation, profile: Option<&str>, name: &str) -> Vec<WhyNotPool> {
    let mut out = Vec::new();
    for cluster in &c.plan.clusters {
        let Some(catalog) = c.catalogs.get(&cluster.region) else { continue };
        for summary in cluster.profiles.iter().filter(|s| profile.is_none_or(|p| p == s.name)) {
            let Some(intent) = c.profile(&cluster.name, &summary.name) else { continue };
            for plan in profile_pools(cluster, &summary.name, intent) {
                out.push(WhyNotPool {
                    cluster: cluster.name.clone(),
                    profile: summary.name.clone(),
                    nodepool: plan.name.clone(),
                    verdict: verdict(c, cluster, catalog, intent, plan, name),
                });
            }
        }
    }
    out
}

fn verdict(c: &Compilation, cluster: &ClusterPlan, catalog: &Catalog, intent: &crate::profile::Profile, plan: &PoolPlan, name: &str) -> Verdict {
    let Some(t) = catalog.get(name) else { return Verdict::NotInRegion { region: cluster.region.clone() } };
    if let Some(i) = plan.candidates.iter().position(|cand| cand.name == name) {
        let cand = &plan.candidates[i];
        return Verdict::Candidate {
            rank: i + 1,
            of: plan.candidates.len(),
            usd_per_hour: super::r4(cand.usd_per_hour),
            usd_per_accelerator_hour: super::r4(cand.usd_per_accelerator_hour),
            estimate: cand.estimate,
        };
    }
    let at = |span: crate::diagnostic::Span| (Some(c.sources.location(span)), Some(profile_line(c, span)));
    if let Some((removal, figure)) = plan.removed.iter().find_map(|r| r.figure_of(name).map(|f| (r, f))) {
        let (location, says) = removal.span.map_or((None, None), at);
        let reason = removal.span.is_none().then(|| plan.limit_reason.clone());
        return Verdict::Removed { constraint: removal.constraint.clone(), figure: figure.to_string(), location, says, reason };
    }
    // The solver starts from the types with the pool's kind of accelerator and does not list the rest (every other
    // kind's types): a type in no removal was never among them.
    let span = intent.pools.iter().flat_map(|p| &p.tiers).find(|tier| tier.name.value == plan.name).map(|tier| tier.settings.accelerator.span);
    let (location, says) = span.map_or((None, None), at);
    Verdict::Removed {
        constraint: format!("has {} and no other accelerator (the pool's kind)", plan.resource()),
        figure: crate::solve::node_summary(t),
        location,
        says,
        reason: None,
    }
}

/// The profile line a span starts on, trimmed and without a trailing `//` comment.
fn profile_line(c: &Compilation, span: crate::diagnostic::Span) -> String {
    let text = c.sources.text(span.file);
    let offset = span.offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = &text[start..end];
    line.split(" //").next().unwrap_or(line).trim().to_string()
}

impl Verdict {
    /// The answer in one line, as the table and markdown formats print it.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Candidate { rank, of, usd_per_hour, usd_per_accelerator_hour, estimate } => {
                let star = if *estimate { " (estimated price)" } else { "" };
                format!("candidate, rank {rank} of {of}: ${usd_per_hour:.4}/h, ${usd_per_accelerator_hour:.4}/accelerator-hour{star}")
            }
            Verdict::Removed { constraint, figure, location, says, reason } => {
                let whence = match (location, says) {
                    (Some(at), Some(says)) => format!(" at {at} (`{says}`)"),
                    (Some(at), None) => format!(" at {at}"),
                    _ => String::new(),
                };
                let reason = reason.as_ref().map(|r| format!("; the limit: {r}")).unwrap_or_default();
                format!("removed by `{constraint}`{whence}: {figure}{reason}")
            }
            Verdict::NotInRegion { region } => format!("not in the {region} catalog"),
        }
    }

    pub fn is_candidate(&self) -> bool {
        matches!(self, Verdict::Candidate { .. })
    }
}
