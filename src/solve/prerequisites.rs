//! What the cluster's Karpenter must be and have for the output to work, as the kustomization's header lists it
//! ([`karpenter`]): the release the objects were validated against, the feature gates they use, the interruption
//! queue, the node labels kube-state-metrics must export for the alerts, and for EFA pools the security-group
//! rule and placement groups. The profile states the queue
//! ([`interruption_queue`]); lint GP050 and GP051 warn where a prerequisite is missing.

use crate::catalog::CapacityType;
use crate::diagnostic::{ErrorCode, ProfileDiagnostic, Sources};
use crate::profile::karpenter::KARPENTER_VERSION;
use crate::profile::Profile;

use super::plan::ClusterPlan;
use super::pool::PoolPlan;

/// A Karpenter v1.14.1 feature gate the cluster's objects may need, with its default in that release
/// (kubernetes-sigs/karpenter v1.14.1 `pkg/operator/options/options.go`, `--feature-gates` / `FEATURE_GATES` default
/// `NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=false,NodeOverlay=false,StaticCapacity=false,
/// CapacityBuffer=false`, and `DefaultFeatureGates`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FeatureGate {
    /// Alpha, off by default: without it Karpenter ignores every NodeOverlay (shared pools then count physical GPUs,
    /// and an overlay block's price no longer ranks the types nor its capacity is offered).
    NodeOverlay,
    /// Beta, on by default: turning it off leaves capacity reservations unused.
    ReservedCapacity,
    /// Alpha, off by default: without it a static NodePool is accepted and no node is ever launched for it.
    StaticCapacity,
}

impl FeatureGate {
    pub fn name(self) -> &'static str {
        match self {
            FeatureGate::NodeOverlay => "NodeOverlay",
            FeatureGate::ReservedCapacity => "ReservedCapacity",
            FeatureGate::StaticCapacity => "StaticCapacity",
        }
    }

    /// Its value when the Helm chart sets none (options.go `DefaultFeatureGates`).
    pub fn default_on(self) -> bool {
        matches!(self, FeatureGate::ReservedCapacity)
    }
}

/// The feature gates the cluster's objects use, each with what uses it: NodeOverlay objects (overlay blocks, and
/// the overlays of time-sliced and MIG pools), static pools, reserved capacity. EKS Auto Mode has no gates to set
/// (it runs Karpenter itself and supports static pools: EKS User Guide, "Static-capacity node pools in EKS Auto
/// Mode"), so none is listed there.
pub fn feature_gates(cluster: &ClusterPlan) -> Vec<(FeatureGate, String)> {
    if cluster.auto_mode {
        return Vec::new();
    }
    let mut out = Vec::new();
    let shared = cluster.pools.iter().any(|p| p.sharing.is_some() && p.replicas() > 1);
    let overlays: Vec<&str> = cluster.overlays.iter().map(|o| o.name.as_str()).collect();
    let uses = match (shared, overlays.is_empty()) {
        (true, true) => Some("time-sliced/MIG pools".to_string()),
        (false, false) => Some(format!("overlay blocks: {}", overlays.join(", "))),
        (true, false) => Some(format!("time-sliced/MIG pools; overlay blocks: {}", overlays.join(", "))),
        (false, true) => None,
    };
    out.extend(uses.map(|u| (FeatureGate::NodeOverlay, u)));
    let reserved = pool_names(cluster, |p| p.capacity_types.contains(&CapacityType::Reserved));
    if !reserved.is_empty() {
        out.push((FeatureGate::ReservedCapacity, format!("reserved pools: {reserved}")));
    }
    let fixed = pool_names(cluster, |p| p.static_pool.is_some());
    if !fixed.is_empty() {
        out.push((FeatureGate::StaticCapacity, format!("static pools: {fixed}")));
    }
    out
}

/// The NodePools of `cluster` that `pick` selects, comma-separated.
fn pool_names(cluster: &ClusterPlan, pick: impl Fn(&PoolPlan) -> bool) -> String {
    cluster.pools.iter().filter(|p| pick(p)).map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// The cluster's spot NodePools, comma-separated (empty: none).
pub fn spot_pools(cluster: &ClusterPlan) -> String {
    pool_names(cluster, |p| p.capacity_types.contains(&CapacityType::Spot))
}

/// The node labels kube-state-metrics must expose for `GpuplanNodePoolOutsideProfiles` and the budgets' orphan term: every node
/// of a gpuplan NodePool carries its template's `gpuplan.dev/pool`, and Karpenter sets `karpenter.sh/nodepool`
/// (sigs.k8s.io/karpenter@v1.14.1 pkg/apis/v1/labels.go `NodePoolLabelKey`). Karpenter's own metrics carry only the
/// NodePool's name, so they cannot tell a NodePool gpuplan generated once from anyone else's.
pub const KSM_NODE_LABELS: &str = "kube-state-metrics --metric-labels-allowlist=nodes=[gpuplan.dev/pool,karpenter.sh/nodepool] (kube-prometheus-stack value kube-state-metrics.metricLabelsAllowlist: [\"nodes=[gpuplan.dev/pool,karpenter.sh/nodepool]\"])";

/// How the header names a named queue, before its name (adopt reads the name back: no object records it).
pub const INTERRUPTION_QUEUE_LINE: &str = "  Karpenter interruption queue: SQS queue ";

/// The kustomization header's lines about Karpenter (the release, its feature gates, the interruption queue) and
/// about EFA networking.
pub fn lines(cluster: &ClusterPlan) -> Vec<String> {
    if cluster.auto_mode {
        return Vec::new();
    }
    let mut lines = karpenter(cluster);
    lines.extend(efa(cluster));
    lines
}

fn karpenter(cluster: &ClusterPlan) -> Vec<String> {
    let mut lines = vec![format!("  Karpenter {KARPENTER_VERSION} (the release whose CRDs validated this output: cluster setting karpenter-version)")];
    for (gate, uses) in feature_gates(cluster) {
        let default = if gate.default_on() { "on by default: keep it on" } else { "off by default: turn it on" };
        lines.push(format!("  Karpenter feature gate {}=true (settings.featureGates.{}; {default}): {uses}", gate.name(), lower_first(gate.name())));
    }
    let spot = spot_pools(cluster);
    match &cluster.interruption_queue {
        Some(queue) => lines.push(format!("{INTERRUPTION_QUEUE_LINE}{queue} (settings.interruptionQueue) with the EventBridge rules that feed it EC2 spot interruptions, rebalance recommendations, scheduled events and instance state changes")),
        None if !spot.is_empty() => lines.push(format!("  Karpenter interruption queue (settings.interruptionQueue; cluster setting interruption-queue): none named, so spot pools {spot} are not drained ahead of a spot interruption (lint GP050)")),
        None => {}
    }
    if !cluster.pools.is_empty() {
        lines.push(format!("  {KSM_NODE_LABELS}: the alerts GpuplanNodePoolOutsideProfiles and GpuplanProfileOverBudget find NodePools renamed or removed but still running (Argo CD Prune=false, Flux prune: disabled) by these node labels (kube_node_labels)"));
    }
    lines
}

/// EFA pools need what gpuplan cannot create: their nodes' security group must let EFA traffic through between the
/// group's own members, inbound and outbound (AWS EC2 User Guide, Elastic Fabric Adapter, "Prepare an EFA-enabled
/// security group": an inbound and an outbound rule for all traffic whose source/destination is the group itself;
/// without them NCCL's EFA traffic between nodes is dropped), and each `placement-group` must exist in its pools' zone (a
/// reservation used there must have been created in it: EC2 User Guide, "Capacity Reservations in cluster
/// placement groups").
fn efa(cluster: &ClusterPlan) -> Vec<String> {
    let mut lines = Vec::new();
    let efa: Vec<&PoolPlan> = cluster.pools.iter().filter(|p| p.efa).collect();
    if !efa.is_empty() {
        let mut tags: Vec<&str> = efa.iter().filter_map(|p| cluster.node_classes.iter().find(|c| c.name == p.node_class)).map(|c| c.discovery_tag.as_str()).collect();
        tags.sort_unstable();
        tags.dedup();
        lines.push(format!(
            "  EFA security group (pools {}): the security groups tagged karpenter.sh/discovery={} need a rule allowing all traffic from the group itself, inbound and outbound (AWS EC2 User Guide, \"Prepare an EFA-enabled security group\")",
            efa.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", "),
            tags.join(" / ")
        ));
    }
    let mut groups: std::collections::BTreeMap<&str, Vec<&PoolPlan>> = std::collections::BTreeMap::new();
    for pool in &cluster.pools {
        if let Some(group) = cluster.node_classes.iter().find(|c| c.name == pool.node_class).and_then(|c| c.placement_group.as_deref()) {
            groups.entry(group).or_default().push(pool);
        }
    }
    for (group, pools) in groups {
        let mut zones: Vec<&str> = pools.iter().flat_map(|p| p.zones.iter().map(String::as_str)).collect();
        zones.sort_unstable();
        zones.dedup();
        let reserved = pools.iter().any(|p| p.capacity_types.contains(&CapacityType::Reserved));
        lines.push(format!(
            "  EC2 placement group {group} (strategy cluster, in {}; pools {}): create it beforehand{}",
            zones.join(", "),
            pools.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", "),
            if reserved { "; the capacity reservations these pools use must have been created in it" } else { "" }
        ));
    }
    lines
}

/// `nodeOverlay` from `NodeOverlay`: the Helm chart's key under `settings.featureGates`.
fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    chars.next().map(|c| c.to_ascii_lowercase().to_string() + chars.as_str()).unwrap_or_default()
}

/// The cluster's interruption queue: the one its profiles name (the first in priority order), or E0382 where two
/// profiles of the cluster name different queues (one Karpenter reads one queue).
pub fn interruption_queue(cluster: &str, profiles: &[&Profile], sources: &Sources) -> Result<Option<String>, ProfileDiagnostic> {
    let mut named = profiles.iter().filter_map(|p| p.cluster.interruption_queue.as_ref());
    let Some(first) = named.next() else { return Ok(None) };
    match named.find(|q| q.value != first.value) {
        None => Ok(Some(first.value.clone())),
        Some(other) => Err(sources
            .error(other.span, ErrorCode::E0382, format!("cluster `{cluster}` gets interruption queue `{}` here and `{}` at {}: one Karpenter reads one queue", other.value, first.value, sources.location(first.span)))
            .label("a second queue")
            .help(format!("name the queue Karpenter's settings.interruptionQueue holds in every profile of cluster `{cluster}` (or in one, leaving the others out)"))),
    }
}
