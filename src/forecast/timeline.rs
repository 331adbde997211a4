//! What happened in one run: every NodeClaim's life and every disruption decision. The engine gives one and the
//! conformance oracle prints one (JSON, the same schema), and `summary` prices both the same way, so a difference in
//! cost is a difference in decisions.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timeline {
    pub horizon_seconds: u64,
    /// In launch order.
    pub nodes: Vec<NodeLife>,
    /// Per workload (`namespace/name`) or Job (`queue/name`): pod-seconds spent pending (created, not running).
    pub pending_pod_seconds: std::collections::BTreeMap<String, u64>,
    /// In time order.
    pub decisions: Vec<Decision>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeLife {
    /// Unique in the run; the oracle uses the NodeClaim's name.
    pub id: String,
    pub nodepool: String,
    pub instance_type: String,
    pub capacity_type: String,
    pub zone: String,
    /// Seconds from the start. Billing runs from launch to termination (EC2 bills per second while running).
    pub launched_at: u64,
    pub ready_at: Option<u64>,
    /// None: still running at the horizon (billed to it).
    pub terminated_at: Option<u64>,
    pub ended_by: Option<EndedBy>,
}

/// Why a node went away (Karpenter's disruption reason, or the cloud's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndedBy {
    /// Consolidation of an empty node (`Empty`).
    Empty,
    /// Consolidation of an underutilized node, deleted or replaced (`Underutilized`).
    Underutilized,
    /// `expireAfter` reached.
    Expired,
    /// Drift (only where the demand file states it).
    Drifted,
    /// A spot interruption.
    Interrupted,
}

/// One disruption command: the candidates it removes and the NodeClaims it launches in their place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    /// When the command was decided (validated), seconds from the start.
    pub at: u64,
    pub reason: EndedBy,
    /// Node ids removed.
    pub nodes: Vec<String>,
    /// Node ids launched as their replacements.
    pub replacements: Vec<String>,
}
