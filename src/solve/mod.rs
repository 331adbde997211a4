//! Stage 3: Intent + Catalog → [`Plan`]. Every number in the output is decided here, bounded and explained.
//!
//! Per NodePool (one per tier):
//! 1. **Filter** the catalog by the intent, recording for each constraint which types it removed, so that an
//!    empty result names the constraint that removed the last candidates.
//! 2. **Rank** by $/accelerator-hour (the price for the pool's capacity type; for spot, the highest spot price
//!    among the pool's zones), ties by name.
//! 3. **Price quality**: drop types whose $/accelerator-hour exceeds `price-ratio-max` × the cheapest.
//! 4. **Size** the accelerator limit: `max-accelerators`, and the profile's $/h budget split across its pools
//!    so that Σ limit × worst $/accelerator-hour ≤ budget (see [`size_limits`]). Types with more accelerators
//!    than the limit are dropped (they could never launch); if that empties a pool, it is an error.
//! 5. **Weights**, distinct across the cluster: profile priority first, then tier order.


use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::simulate::instances::TypeLabels;
use crate::catalog::{AcceleratorKind, Arch, CapacityType, Catalog, InstanceType};
use crate::catalog::cost::{self, Bound, Limits, NodeShape, SpotCeiling};
use crate::diagnostic::{ProfileDiagnostic, Sources, Span, Spanned};
use crate::profile::{DisruptionBudget, MaintenanceWindow, Profile, Reserved, Settings, Sharing, Taint, Tier};

/// `overlay` blocks: ranking by the overlaid price, units from capacity overlays, the NodeOverlays to render.
mod overlays;
pub use overlays::{idle as idle_overlays, OverlayPlan};
/// Static pools' fixed cost (`static replicas=…`).
pub mod static_pool;

/// The solver's decisions for every cluster of one compile.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub clusters: Vec<ClusterPlan>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClusterPlan {
    pub name: String,
    pub region: String,
    pub catalog_digest: String,
    pub accelerated_ami: bool,
    /// EKS Auto Mode (`auto-mode #true`): NodeClasses instead of EC2NodeClasses, and no GPU Operator or device-plugin
    /// add-ons (`ops`): Auto Mode ships them.
    pub auto_mode: bool,
    /// Argo CD / Flux objects to generate for out/<cluster> (the first profile of the cluster that asks).
    pub gitops: Option<crate::profile::Gitops>,
    pub node_classes: Vec<NodeClassPlan>,
    /// Sorted by weight, highest first.
    pub pools: Vec<PoolPlan>,
    pub profiles: Vec<ProfileSummary>,
    /// Workloads (PDB/HPA), alerts, GPU Operator config: see `ops`.
    pub ops: crate::ops::OpsPlan,
    /// Kueue flavors and queues: see `queue`.
    pub queues: crate::queue::plan::KueuePlan,
    /// The profiles' `overlay` blocks, one NodeOverlay each, sorted by name (see `overlays`).
    pub overlays: Vec<OverlayPlan>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProfileSummary {
    pub name: String,
    pub source: String,
    pub budget_usd_per_hour: Option<f64>,
    pub expected_usd_per_hour: f64,
    /// Steady state: every pool at its limits (see `cost::worst_case`).
    pub worst_case_usd_per_hour: f64,
    /// While nodes drain beside their replacements (see `cost::drain_peak`), for up to the longest
    /// `terminationGracePeriod` among the pools (None: some pool has none, so a drain may never end).
    pub drain_peak_usd_per_hour: f64,
    pub drain_peak_for: Option<String>,
    /// Types whose worst-case price is an estimate, with the source's words: what the budget check could not verify.
    pub unverified_prices: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NodeClassPlan {
    pub name: String,
    pub profile: String,
    pub source: String,
    /// `spec.role`: the cluster's `node-role` (its default when the line is absent); not rendered with `instance_profile`.
    pub role: String,
    /// The cluster's `instance-profile`: `spec.instanceProfile`, rendered instead of `spec.role`.
    pub instance_profile: Option<String>,
    pub ami_alias: String,
    pub discovery_tag: String,
    pub reserved: Option<Reserved>,
    /// `instanceStorePolicy: RAID0`: the instance's NVMe disks striped for the kubelet and containers.
    pub instance_store_raid0: bool,
    /// An EBS snapshot with pre-pulled images for the Bottlerocket data volume.
    pub image_cache_snapshot: Option<String>,
    /// Bottlerocket NVIDIA variants run the device plugin on the host: time-slicing is a setting in their user data
    /// (`settings.kubelet-device-plugins.nvidia`), so each replicas count gets its own class.
    pub time_slicing: Option<u32>,
    /// The profile's `user-data`, verbatim.
    pub user_data: Option<String>,
    /// An EKS Auto Mode `eks.amazonaws.com/v1` NodeClass (no AMI, user data or volumes: `ephemeral_storage` sizes the
    /// node's disk) rather than an EC2NodeClass.
    pub auto_mode: bool,
    /// Auto Mode: `ephemeralStorage.size`.
    pub ephemeral_storage: String,
    /// `kubelet { … }` of the pools that use this class: `spec.kubelet`.
    pub kubelet: Option<serde_json::Map<String, serde_json::Value>>,
    /// `raw` class fragments, merged in order after rendering: the cluster block's, then the pool's.
    pub raws: Vec<Spanned<crate::profile::Raw>>,
}

/// The Auto Mode NodeClass's disk when the cluster names none: the size of the EC2NodeClass's gp3 volume, so that
/// multi-GB ML images fit either way (Auto Mode's own default is 80Gi).
pub const AUTO_MODE_EPHEMERAL_STORAGE: &str = "200Gi";

/// Whether nodes of this AMI alias run the NVIDIA device plugin themselves: the Bottlerocket NVIDIA variants do
/// (bottlerocket-os/bottlerocket QUICKSTART-EKS.md, "aws-k8s-*-nvidia" variants: no device-plugin DaemonSet needed).
pub fn host_device_plugin(ami_alias: &str) -> bool {
    ami_alias.starts_with("bottlerocket@")
}

mod node_class_settings;

/// A profile's node class: `<profile>`, or `<profile>-nvme` for its pools that use local NVMe as scratch (the
/// instance-store policy is per EC2NodeClass).
fn default_class_name(profile: &str, raid0: bool, time_slicing: Option<u32>) -> String {
    let nvme = if raid0 { "-nvme" } else { "" };
    let shared = time_slicing.map(|r| format!("-ts{r}")).unwrap_or_default();
    format!("{profile}{nvme}{shared}")
}

/// The time-slicing a pool's node class must carry: Some only where the OS runs the device plugin (Bottlerocket).
fn class_time_slicing(tier: &Tier, host_plugin: bool) -> Option<u32> {
    match tier.settings.sharing.as_ref().map(|s| &s.value) {
        Some(Sharing::TimeSlicing { replicas }) if host_plugin => Some(*replicas),
        _ => None,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub name: String,
    pub family: String,
    /// Physical accelerators on the node.
    pub accelerators: u32,
    /// Schedulable units on the node: physical accelerators × time-slicing replicas or × the MIG devices this
    /// type's GPU model becomes under the pool's config.
    pub units: u32,
    pub accelerator_name: String,
    pub memory_mib_per_accelerator: u64,
    pub vcpu: u32,
    /// Memory as Karpenter counts it against a memory limit (capacity after VM overhead), MiB.
    pub memory_mib: u64,
    /// Expected price per hour (see `cost::quote`): spot when the pool allows spot (worst zone), else on-demand.
    pub usd_per_hour: f64,
    /// Expected price per schedulable accelerator-hour (time-slicing divides it): what candidates rank by.
    pub usd_per_accelerator_hour: f64,
    pub usd_per_accelerator_gib_hour: f64,
    /// The expected price is an estimate.
    pub estimate: bool,
    /// The worst-case price per hour: on-demand for spot (or the observed spot maximum, when opted in).
    pub ceiling_usd_per_hour: f64,
    pub ceiling_usd_per_accelerator_hour: f64,
    pub ceiling_estimate: bool,
    pub bound: Bound,
    /// The overlay whose price Karpenter ranks this type by (`usd_per_accelerator_hour` is then the overlaid price
    /// per unit; `usd_per_hour` and the ceiling stay list prices): "overlay discount (price-adjustment -30%)".
    pub overlay: Option<String>,
}

impl Candidate {
    pub fn shape(&self) -> NodeShape {
        NodeShape { accelerators: self.accelerators, units: self.units, vcpu: self.vcpu, memory_mib: self.memory_mib, expected: self.usd_per_hour, ceiling: self.ceiling_usd_per_hour }
    }

    /// Schedulable units per physical accelerator on this type.
    pub fn units_per_accelerator(&self) -> u32 {
        self.units / self.accelerators.max(1)
    }
}

/// Why a type did not make it into a pool.
#[derive(Debug, Clone, PartialEq)]
pub struct Removal {
    /// The constraint, in words ("gpu name in [A10G]", "price ratio ≤ 1.6 × cheapest").
    pub constraint: String,
    pub types: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
    pub min_values: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DisruptionPlan {
    pub consolidation_policy: String,
    pub consolidate_after: String,
    pub expire_after: String,
    pub termination_grace_period: Option<String>,
    pub budgets: Vec<DisruptionBudget>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PoolPlan {
    pub name: String,
    pub profile: String,
    pub source: String,
    pub pool: String,
    pub tier_index: usize,
    pub node_class: String,
    /// The node class is an EKS Auto Mode NodeClass: requirements use `eks.amazonaws.com/instance-*` labels.
    pub auto_mode: bool,
    pub accelerator: AcceleratorKind,
    pub capacity_types: Vec<CapacityType>,
    /// Zones the pool may launch in (empty: any zone of the region).
    pub zones: Vec<String>,
    /// Chosen types ranked by $/accelerator-hour, cheapest first. Shared with the other tiers that selected the
    /// same way until the limit drops some (`Arc::make_mut`).
    pub candidates: Arc<Vec<Candidate>>,
    /// Shared like `candidates`.
    pub removed: Arc<Vec<Removal>>,
    pub requirements: Vec<Requirement>,
    pub taints: Vec<Taint>,
    pub labels: BTreeMap<String, String>,
    /// Limit on the accelerator resource in schedulable units (physical × time-slicing replicas or MIG devices).
    pub limit: u32,
    /// Limit on `cpu` for shared pools: caps the physical nodes while Karpenter counts physical GPUs against a
    /// limit written in slices (see `cost`).
    pub cpu_limit: Option<u32>,
    /// `limits cpu=… memory=…` as the profile says them: the emitted cpu limit is the lower of this and the
    /// backstop, the memory limit is emitted as written; both cap the worst case, neither sizes the accelerator limit.
    pub resource_limits: crate::profile::ResourceLimits,
    /// A capacity reservation's or a static pool's fixed cost ($/h), billed whether used or not.
    pub fixed_usd_per_hour: Option<f64>,
    /// `static replicas=…`: a static NodePool (`spec.replicas`, no weight, no limits but `nodes`).
    pub static_pool: Option<crate::profile::StaticPool>,
    pub spot_ceiling: SpotCeiling,
    pub limit_reason: String,
    pub weight: u32,
    pub disruption: DisruptionPlan,
    pub sharing: Option<Sharing>,
    /// `efa #true`: every type has EFA, and the node needs the EFA device plugin (`ops::addons`).
    pub efa: bool,
    pub expected_usd_per_hour: f64,
    /// Steady state: the active nodes at the pool's limits.
    pub worst_case_usd_per_hour: f64,
    /// Nodes that can be deleting at once (outside the limit, beside their replacements): see `cost::draining_nodes`.
    pub draining_nodes: u32,
    /// The steady bound plus the draining nodes, for up to `terminationGracePeriod`.
    pub drain_peak_usd_per_hour: f64,
    pub budget_usd_per_hour: Option<f64>,
    /// Lint codes the profile silenced for this pool.
    pub allow: BTreeSet<String>,
    pub notes: Vec<String>,
    /// `raw "NodePool"` fragments, merged after rendering (the pool's, then the tier's).
    pub raws: Vec<Spanned<crate::profile::Raw>>,
}

impl PoolPlan {
    /// Whether the node's OS runs the NVIDIA device plugin (Bottlerocket), so the GPU Operator's must stay off it.
    pub fn host_device_plugin(&self) -> bool {
        self.labels.get(DEPLOY_DEVICE_PLUGIN_LABEL).is_some_and(|v| v == "false")
    }

    /// Schedulable units per physical accelerator: time-slicing replicas, or the MIG devices a GPU becomes — the
    /// fewest among the pool's types (MIG counts differ by GPU model), so a cap in physical accelerators × this
    /// never admits more physical accelerators than asked for.
    pub fn replicas(&self) -> u32 {
        self.candidates.iter().map(Candidate::units_per_accelerator).min().unwrap_or_else(|| units_per_accelerator(self.sharing.as_ref()))
    }

    pub fn resource(&self) -> &'static str {
        self.accelerator.resource()
    }

    /// Schedulable accelerators on the largest allowed node.
    pub fn largest_node(&self) -> u32 {
        self.candidates.iter().map(|c| c.units).max().unwrap_or(0)
    }

    /// What a pod with `accelerators` of the pool's resource needs to run on this pool, in Kubernetes' own shape.
    /// The selector names the pool (all its tiers), so the pod falls back across tiers but never lands on
    /// another pool; a toleration for every NoSchedule/NoExecute taint of the NodePool; on EFA pools, the EFA
    /// interfaces to request ([`PoolPlan::efa_request`]).
    pub fn pod_placement(&self, accelerators: u32) -> PodPlacement {
        let node_selector = BTreeMap::from([(POOL_LABEL.to_string(), self.pool.clone())]);
        let tolerations = self
            .taints
            .iter()
            .filter(|t| t.effect != "PreferNoSchedule")
            .map(|t| Toleration {
                key: t.key.clone(),
                operator: if t.value.is_some() { "Equal".into() } else { "Exists".into() },
                value: t.value.clone(),
                effect: t.effect.clone(),
            })
            .collect();
        let requests = self.efa_request(accelerators).map(|n| (crate::catalog::efa::EFA_RESOURCE.to_string(), n)).into_iter().collect();
        PodPlacement { node_selector, tolerations, requests }
    }

    /// The EFA interfaces a pod with `accelerators` should request on an `efa #true` pool. Karpenter attaches EFA
    /// interfaces only to a NodeClaim whose pods request `vpc.amazonaws.com/efa`, and then all of the type's
    /// (aws/karpenter-provider-aws `pkg/providers/instance/instance.go` `getEFACountForInstance`); the EFA device
    /// plugin hands each pod the interfaces it requests. So a pod asks for its share of a node's interfaces (all of
    /// them for a whole-node pod: 32 on p5.48xlarge, 4 on p4d.24xlarge), on the type that has the fewest per
    /// accelerator among those that can hold it, so that it fits every one; at least 1.
    pub fn efa_request(&self, accelerators: u32) -> Option<u32> {
        if !self.efa {
            return None;
        }
        let share = |c: &Candidate| {
            let per_node = u64::from(c.accelerators * self.replicas());
            let interfaces = crate::catalog::efa::interfaces(&c.name)?;
            (per_node >= u64::from(accelerators)).then(|| (u64::from(interfaces) * u64::from(accelerators) / per_node.max(1)).clamp(1, u64::from(interfaces)) as u32)
        };
        Some(self.candidates.iter().filter_map(share).min().unwrap_or(1))
    }

    pub fn uses_estimates(&self) -> bool {
        self.candidates.iter().any(|c| c.estimate)
    }

    /// The weakest of the candidates' bounds: guaranteed unless some ceiling is an observed spot maximum
    /// (empirical) or an estimated price (estimated).
    pub fn worst_case_bound(&self) -> Bound {
        self.candidates.iter().map(|c| c.bound).max().unwrap_or(Bound::Guaranteed)
    }

    /// The types whose worst-case price is an estimate.
    pub fn unverified_prices(&self) -> Vec<String> {
        self.candidates.iter().filter(|c| c.ceiling_estimate).map(|c| c.name.clone()).collect()
    }

    pub fn shapes(&self) -> Vec<NodeShape> {
        self.candidates.iter().map(Candidate::shape).collect()
    }

    /// The NodePool's limits for an accelerator limit `accelerators` on these shapes (the cpu backstop follows it).
    fn limits_for(&self, shapes: &[NodeShape], accelerators: u32) -> Limits {
        let shared = shapes.iter().any(|s| s.units > s.accelerators);
        Limits { accelerators, cpu: shared.then(|| cost::cpu_backstop(shapes, accelerators)), memory_mib: None }
    }

    /// The limits the NodePool carries: [`Self::limits_for`] with the profile's `limits cpu=… memory=…` (a cpu
    /// limit below the backstop replaces it). The budget sizes the accelerator limit without them, so that a cpu cap
    /// never buys an accelerator limit it would make meaningless; the worst case is figured with them.
    fn carried_limits(&self, shapes: &[NodeShape], accelerators: u32) -> Limits {
        let mut limits = self.limits_for(shapes, accelerators);
        if let Some(cpu) = self.resource_limits.cpu_vcpu() {
            limits.cpu = Some(limits.cpu.map_or(cpu, |backstop| backstop.min(cpu)));
        }
        limits.memory_mib = self.resource_limits.memory_mib();
        limits
    }

    /// Whether some type offers more schedulable units than accelerators (time-slicing, MIG).
    pub fn shared(&self) -> bool {
        self.candidates.iter().any(|c| c.units > c.accelerators)
    }

    /// Worst-case $/h at an accelerator limit: the reservation's fixed cost, or the bound of `cost::worst_case`.
    /// Called for every step of the budget's binary search: the shapes are built once per call.
    pub fn worst_case_at(&self, accelerators: u32) -> f64 {
        self.worst_case_on(&self.shapes(), accelerators)
    }

    /// [`Self::worst_case_at`] on shapes built beforehand (the budget's binary search asks each pool ~20 times).
    fn worst_case_on(&self, shapes: &[NodeShape], accelerators: u32) -> f64 {
        match self.fixed_usd_per_hour {
            Some(fixed) => fixed,
            None => cost::worst_case(shapes, self.limits_for(shapes, accelerators)),
        }
    }
}

/// The nodeSelector and tolerations a workload's pod template needs to land on a pool.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PodPlacement {
    #[serde(rename = "nodeSelector")]
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
    /// Requests besides the accelerators (`vpc.amazonaws.com/efa` on EFA pools), per pod.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<String, u32>,
}

impl PodPlacement {
    /// One line for annotations and alert texts, with the same items `explain` lists under "pods need":
    /// `nodeSelector {k: v}, toleration {…} and toleration {…}, and requests {vpc.amazonaws.com/efa: 32}`.
    pub fn describe(&self) -> String {
        let selector: Vec<String> = self.node_selector.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let mut items = vec![format!("nodeSelector {{{}}}", selector.join(", "))];
        items.extend(self.tolerations.iter().map(|t| format!("toleration {t}")));
        if !self.requests.is_empty() {
            items.push(format!("requests {{{}}}", self.requests_text()));
        }
        match items.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => items.join(""),
        }
    }

    /// `vpc.amazonaws.com/efa: 32`.
    pub fn requests_text(&self) -> String {
        self.requests.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", ")
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Toleration {
    pub key: String,
    pub operator: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub effect: String,
}

/// What a pod with `accelerators` needs to run on any of `pools` (the tiers of one pool a workload runs on): the
/// pool's nodeSelector, every tier's tolerations (once each, in tier order), and the smallest EFA request of the
/// tiers, so that the pod fits each. Empty when `pools` is.
pub fn workload_placement(pools: &[&PoolPlan], accelerators: u32) -> PodPlacement {
    let mut placements = pools.iter().map(|p| p.pod_placement(accelerators));
    let Some(mut out) = placements.next() else {
        return PodPlacement { node_selector: BTreeMap::new(), tolerations: Vec::new(), requests: BTreeMap::new() };
    };
    for other in placements {
        for t in other.tolerations {
            if !out.tolerations.contains(&t) {
                out.tolerations.push(t);
            }
        }
        for (k, v) in other.requests {
            let e = out.requests.entry(k).or_insert(v);
            *e = (*e).min(v);
        }
    }
    out
}

/// `{key: k, operator: Equal, value: v, effect: NoSchedule}`: how explain and the ops annotations print it.
impl std::fmt::Display for Toleration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = self.value.as_ref().map(|v| format!(", value: {v}")).unwrap_or_default();
        write!(f, "{{key: {}, operator: {}{value}, effect: {}}}", self.key, self.operator, self.effect)
    }
}

/// Everything the solver needs from outside: the profiles, their sources, and a catalog (with its digest) per
/// region.
pub fn solve(
    profiles: &[Profile],
    sources: &Sources,
    catalogs: &BTreeMap<String, Catalog>,
    // The provenance digest of each catalog (`Catalog::load_with_digest`), by region.
    digests: &BTreeMap<String, String>,
    // Each catalog's type labels, by region: `require` lines read them, and compile keeps them for its simulations.
    labels: &BTreeMap<String, TypeLabels>,
) -> Result<Plan, Vec<ProfileDiagnostic>> {
    let mut diagnostics = Vec::new();
    let mut clusters: BTreeMap<String, Vec<&Profile>> = BTreeMap::new();
    for p in profiles {
        clusters.entry(p.cluster.name.value.clone()).or_default().push(p);
    }
    let indexes: BTreeMap<&String, AcceleratorIndex> = catalogs.iter().map(|(region, c)| (region, AcceleratorIndex::new(c))).collect();
    // The digest serializes the whole catalog: once per region, not once per cluster.
    let mut ready = Vec::new();
    for (cluster_name, mut members) in clusters {
        members.sort_by(|a, b| b.priority.value.cmp(&a.priority.value).then(a.name.value.cmp(&b.name.value)));
        let first = members[0];
        for other in &members[1..] {
            if other.cluster.region.value != first.cluster.region.value {
                diagnostics.push(
                    sources
                        .error(
                            other.cluster.region.span,
                            "E0150",
                            format!(
                                "cluster `{cluster_name}` is in {} here but in {} at {}",
                                other.cluster.region.value,
                                first.cluster.region.value,
                                sources.location(first.cluster.region.span)
                            ),
                            )
                        .help("a cluster lives in one region; use another cluster name for another region"),
                );
            }
        }
        let Some(catalog) = catalogs.get(&first.cluster.region.value) else {
            diagnostics.push(
                sources
                    .error(first.cluster.region.span, "E0151", format!("no catalog for region {}", first.cluster.region.value))
                    .help(format!("run `gpuplan catalog refresh --region {}`", first.cluster.region.value)),
            );
            continue;
        };
        let digest = digests.get(&first.cluster.region.value).cloned().unwrap_or_else(|| catalog.digest());
        let index = &indexes[&first.cluster.region.value];
        let Some(type_labels) = labels.get(&first.cluster.region.value) else { continue };
        ready.push((cluster_name, members, catalog, (index, type_labels), digest));
    }
    // Clusters are independent: solved on every core, collected in name order.
    use rayon::prelude::*;
    let solved: Vec<Result<ClusterPlan, Vec<ProfileDiagnostic>>> = ready
        .into_par_iter()
        .map(|(name, members, catalog, (index, type_labels), digest)| solve_cluster(&name, &members, sources, catalog, index, type_labels, digest))
        .collect();
    let mut plan = Plan { clusters: Vec::new() };
    for result in solved {
        match result {
            Ok(c) => plan.clusters.push(c),
            Err(d) => diagnostics.extend(d),
        }
    }
    if diagnostics.is_empty() { Ok(plan) } else { Err(diagnostics) }
}

fn solve_cluster(
    name: &str,
    profiles: &[&Profile],
    sources: &Sources,
    catalog: &Catalog,
    index: &AcceleratorIndex,
    labels: &TypeLabels,
    catalog_digest: String,
) -> Result<ClusterPlan, Vec<ProfileDiagnostic>> {
    let mut diagnostics = Vec::new();
    let mut pools: Vec<(PoolPlan, Option<Spanned<u32>>, Span)> = Vec::new();
    let mut node_classes = Vec::new();
    let mut summaries = Vec::new();
    let mut selections = Selections::default();
    diagnostics.extend(mixed_auto_mode(name, profiles, sources));

    for profile in profiles {
        let source = sources.source_name(profile.file).to_string();
        let zones: Vec<String> = profile.cluster.zones.iter().map(|z| z.value.clone()).collect();
        for zone in &profile.cluster.zones {
            if !catalog.zones.is_empty() && !catalog.zones.contains(&zone.value) {
                diagnostics.push(
                    sources
                        .error(zone.span, "E0152", format!("the {} catalog knows no zone `{}`", catalog.region, zone.value))
                        .help(format!("zones in the catalog: {}", catalog.zones.join(", "))),
                );
            }
        }
        let default_class = NodeClassPlan {
            name: profile.name.value.clone(),
            profile: profile.name.value.clone(),
            source: source.clone(),
            role: profile.cluster.node_role.value.clone(),
            instance_profile: profile.cluster.instance_profile.as_ref().map(|p| p.value.clone()),
            ami_alias: profile.cluster.ami.value.clone(),
            discovery_tag: profile.cluster.discovery_tag.value.clone(),
            reserved: None,
            instance_store_raid0: false,
            image_cache_snapshot: profile.cluster.image_cache_snapshot.as_ref().map(|s| s.value.clone()),
            time_slicing: None,
            user_data: profile.cluster.user_data.as_ref().map(|u| u.value.clone()),
            auto_mode: profile.cluster.auto_mode.value,
            ephemeral_storage: profile.cluster.ephemeral_storage.as_ref().map_or(AUTO_MODE_EPHEMERAL_STORAGE, |s| s.value.as_str()).to_string(),
            kubelet: None,
            raws: profile.cluster.raws.clone(),
        };
        let auto_mode = profile.cluster.auto_mode.value.then_some(profile.cluster.auto_mode.span);
        if auto_mode.is_some() && default_class.name == "default" {
            // E0278: the NodeClass is named after the profile, and `default` is the built-in NodeClass of Auto Mode's
            // `system` and `general-purpose` NodePools (EKS User Guide, create-node-class: "Do not name your custom
            // node class `default`").
            diagnostics.push(
                sources
                    .error(profile.name.span, "E0278", "an EKS Auto Mode profile named `default` would replace Auto Mode's built-in NodeClass `default`")
                    .label("the NodeClass's name")
                    .help("rename the profile: its NodeClass takes its name"),
            );
        }
        let host_plugin = host_device_plugin(&profile.cluster.ami.value);
        let mut profile_pools = Vec::new();
        let mut used_default_classes = BTreeMap::new();
        let mut own_classes = node_class_settings::OwnClasses::default();
        diagnostics.extend(node_class_settings::auto_mode_refusals(profile, auto_mode, sources));
        diagnostics.extend(overlays_in_auto_mode(profile, auto_mode, sources));
        diagnostics.extend(node_class_settings::ami_family_refusals(profile, sources));
        for pool in &profile.pools {
            for (tier_index, tier) in pool.tiers.iter().enumerate() {
                if let Some(d) = mig_on_host_plugin(tier, host_plugin, sources).or_else(|| sharing_in_auto_mode(tier, auto_mode, sources)) {
                    diagnostics.push(d);
                    continue;
                }
                if let Some(d) = time_slicing_in_user_data(profile, tier, host_plugin, sources) {
                    diagnostics.push(d);
                    continue;
                }
                match selections.select(tier, catalog, index, labels, &zones, auto_mode, sources) {
                    Ok((candidates, removed)) => {
                        if let Some(d) = overlays::conflict(tier, &candidates, catalog, &zones, auto_mode.is_some(), sources) {
                            diagnostics.push(d);
                            continue;
                        }
                        // Local NVMe as scratch (RAID0) only where the pool asks and its types have any. Auto Mode
                        // formats and stripes local NVMe itself (EKS User Guide, Auto Mode managed instances).
                        let raid0 = auto_mode.is_none()
                            && tier.settings.instance_store_scratch.value
                            && candidates.iter().any(|c| catalog.get(&c.name).is_some_and(|t| t.local_nvme_gb.is_some()));
                        let time_slicing = class_time_slicing(tier, host_plugin);
                        let own = node_class_settings::Own::of(&tier.settings);
                        let node_class = match &tier.settings.reserved {
                            Some(reserved) => {
                                node_classes.push(own.apply(NodeClassPlan {
                                    name: tier.name.value.clone(),
                                    reserved: Some(reserved.value.clone()),
                                    instance_store_raid0: raid0,
                                    time_slicing,
                                    ..default_class.clone()
                                }));
                                tier.name.value.clone()
                            }
                            None => {
                                let base = own_classes.base(&default_class.name, &tier.name.value, &own);
                                let name = default_class_name(&base, raid0, time_slicing);
                                used_default_classes.insert((raid0, time_slicing, base), own);
                                name
                            }
                        };
                        let allow: BTreeSet<String> = profile
                            .allow
                            .iter()
                            .chain(&tier.settings.allow)
                            .map(|a| a.value.clone())
                            .collect();
                        let mut plan = pool_plan(tier, tier_index, pool, profile, &source, node_class, &zones, candidates, removed, allow);
                        for key in unchecked_requires(&tier.settings, catalog) {
                            plan.notes.push(format!("require {key}: the catalog has no such label, so Karpenter alone applies it (it may launch fewer of the listed types, never others; the cost bound stays an upper bound)"));
                        }
                        profile_pools.push((plan, tier));
                    }
                    Err(d) => diagnostics.push(d),
                }
            }
        }
        diagnostics.extend(pin_efa_zones(&mut profile_pools, catalog, &zones, sources));
        for ((raid0, time_slicing, base), own) in used_default_classes {
            node_classes.push(own.apply(NodeClassPlan {
                name: default_class_name(&base, raid0, time_slicing),
                instance_store_raid0: raid0,
                time_slicing,
                ..default_class.clone()
            }));
        }
        if let Err(d) = size_limits(profile, &mut profile_pools, sources) {
            diagnostics.extend(d);
            continue;
        }
        let mut summary = ProfileSummary {
            name: profile.name.value.clone(),
            source: source.clone(),
            budget_usd_per_hour: profile.budget_usd_per_hour.as_ref().map(|b| b.value),
            expected_usd_per_hour: 0.0,
            worst_case_usd_per_hour: 0.0,
            drain_peak_usd_per_hour: 0.0,
            drain_peak_for: longest_grace_period(profile_pools.iter().map(|(p, _)| p)),
            unverified_prices: Vec::new(),
        };
        for (plan, tier) in profile_pools {
            summary.expected_usd_per_hour += plan.expected_usd_per_hour;
            summary.worst_case_usd_per_hour += plan.worst_case_usd_per_hour;
            summary.drain_peak_usd_per_hour += plan.drain_peak_usd_per_hour;
            summary.unverified_prices.extend(plan.unverified_prices());
            pools.push((plan, tier.settings.weight.clone(), tier.name.span));
        }
        summary.unverified_prices.sort();
        summary.unverified_prices.dedup();
        summaries.push(summary);
    }

    // Weights: pools arrive in (profile priority, tier order); explicit weights win, the rest are spread
    // evenly, highest first, in the room between the explicit ones.
    // A static NodePool has no weight (the CRD refuses one) and takes no part in the order of dynamic provisioning.
    let (statics, mut pools): (Vec<_>, Vec<_>) = pools.into_iter().partition(|(p, _, _)| p.static_pool.is_some());
    if let Err(d) = assign_weights(&mut pools, name, sources) {
        diagnostics.extend(d);
        return Err(diagnostics);
    }
    let mut by_weight: BTreeMap<u32, (String, Span)> = BTreeMap::new();
    for (plan, explicit, span) in &pools {
        if let Some((other, _)) = by_weight.insert(plan.weight, (plan.name.clone(), explicit.as_ref().map_or(*span, |w| w.span))) {
            let span = explicit.as_ref().map_or(*span, |w| w.span);
            diagnostics.push(
                sources
                    .error(span, "E0153", format!("NodePool `{}` and `{other}` both have weight {} in cluster `{name}`", plan.name, plan.weight))
                    .help("Karpenter breaks weight ties by name, silently; give every pool of a cluster a distinct weight"),
            );
        }
    }
    pools.extend(statics);
    let mut names: BTreeMap<&str, &str> = BTreeMap::new();
    for (plan, _, span) in &pools {
        if let Some(other_profile) = names.insert(&plan.name, &plan.profile) {
            diagnostics.push(
                sources
                    .error(*span, "E0154", format!("NodePool `{}` is also defined by profile `{other_profile}` in cluster `{name}`", plan.name))
                    .help("NodePool names are cluster-wide: rename the pool"),
            );
        }
    }
    node_classes.sort_by(|a, b| a.name.cmp(&b.name));
    diagnostics.extend(class_name_collisions(&node_classes, &pools, sources));
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let mut pools: Vec<PoolPlan> = pools.into_iter().map(|(p, _, _)| p).collect();
    pools.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.name.cmp(&b.name)));
    node_classes.dedup_by(|a, b| a.name == b.name);
    summaries.sort_by(|a, b| a.name.cmp(&b.name));
    let mut cluster = ClusterPlan {
        name: name.to_string(),
        region: catalog.region.clone(),
        catalog_digest,
        accelerated_ami: profiles.iter().all(|p| p.cluster.accelerated_ami.value),
        auto_mode: profiles.iter().any(|p| p.cluster.auto_mode.value),
        gitops: profiles.iter().find_map(|p| p.cluster.gitops.as_ref().map(|g| g.value.clone())),
        node_classes,
        pools,
        profiles: summaries,
        ops: Default::default(),
        queues: Default::default(),
        overlays: Vec::new(),
    };
    cluster.overlays = overlays::plan_overlays(&cluster, profiles, sources)?;
    cluster.ops = crate::ops::plan_cluster(&cluster, profiles, sources)?;
    cluster.queues = crate::queue::plan_cluster(&cluster, profiles, sources, catalog)?;
    Ok(cluster)
}

/// EFA pools launch in one zone, the same for all their tiers. EFA's OS-bypass traffic stays within an
/// Availability Zone (AWS EC2 user guide, "Elastic Fabric Adapter", limitations: historically one subnet): a
/// multi-node job spread over zones gets no EFA between its nodes and NCCL falls back to TCP. The zone is `efa zone="…"`, or the first of the cluster's zones that
/// offers the most of the pool's types; types not offered there are removed (they could never launch).
fn pin_efa_zones(pools: &mut [(PoolPlan, &Tier)], catalog: &Catalog, zones: &[String], sources: &Sources) -> Vec<ProfileDiagnostic> {
    let mut out = Vec::new();
    let efa_pools: BTreeSet<String> = pools.iter().filter(|(p, _)| p.efa).map(|(p, _)| p.pool.clone()).collect();
    let offers = |t: &str, zone: &str| catalog.get(t).is_some_and(|it| it.zones.iter().any(|z| z == zone));
    for pool in efa_pools {
        let members: Vec<usize> = (0..pools.len()).filter(|&i| pools[i].0.pool == pool).collect();
        let types: BTreeSet<String> = members.iter().flat_map(|&i| pools[i].0.candidates.iter().map(|c| c.name.clone())).collect();
        let explicit = members.iter().find_map(|&i| pools[i].1.settings.efa_zone.clone());
        let zone = match explicit {
            Some(z) if zones.contains(&z.value) => z.value,
            Some(z) => {
                out.push(sources.error(z.span, "E0152", format!("EFA zone `{}` is not one of the cluster's zones", z.value)).help(format!("one of: {}", zones.join(", "))));
                continue;
            }
            None => {
                let best = zones.iter().map(|z| types.iter().filter(|t| offers(t, z)).count()).max().unwrap_or(0);
                let Some(z) = zones.iter().find(|z| types.iter().filter(|t| offers(t, z)).count() == best) else { continue };
                z.clone()
            }
        };
        for &i in &members {
            let (plan, tier) = &mut pools[i];
            let (kept, dropped): (Vec<Candidate>, Vec<Candidate>) = Arc::make_mut(&mut plan.candidates).drain(..).partition(|c| offers(&c.name, &zone));
            plan.candidates = Arc::new(kept);
            if !dropped.is_empty() {
                Arc::make_mut(&mut plan.removed).push(Removal { constraint: format!("offered in EFA zone {zone}"), types: dropped.into_iter().map(|c| c.name).collect() });
            }
            if plan.candidates.is_empty() {
                let span = tier.settings.efa.as_ref().map_or(tier.name.span, |e| e.span);
                out.push(sources.error(span, "E0140", format!("no instance type of pool `{}` is offered in its EFA zone {zone}", plan.name)).help("name another zone: efa #true zone=\"…\""));
            }
            plan.zones = vec![zone.clone()];
            let reservation = if tier.settings.reserved.is_some() { format!("; the reservation must be in {zone}") } else { String::new() };
            plan.notes.push(format!("EFA: nodes launch in {zone} only, so a multi-node job's EFA traffic stays in one Availability Zone{reservation}"));
        }
    }
    out
}

/// The longest `terminationGracePeriod` among pools that can have nodes draining beside their replacements: how long
/// a profile's drain peak can last. None when such a pool has none (its drain can block forever on a PDB).
fn longest_grace_period<'a>(pools: impl Iterator<Item = &'a PoolPlan>) -> Option<String> {
    let mut longest: Option<(u32, String)> = None;
    for pool in pools.filter(|p| p.draining_nodes > 0) {
        let grace = pool.disruption.termination_grace_period.as_ref()?;
        let minutes = crate::profile::duration_minutes(grace).unwrap_or(u32::MAX);
        if longest.as_ref().is_none_or(|(m, _)| minutes > *m) {
            longest = Some((minutes, grace.clone()));
        }
    }
    Some(longest.map_or_else(|| "0s".to_string(), |(_, g)| g))
}

/// Gives every pool a weight: explicit ones as written; each run of pools without one gets distinct weights
/// spaced up to 10 apart, strictly between the explicit weights around it (100 at the top of the cluster).
fn assign_weights(pools: &mut [(PoolPlan, Option<Spanned<u32>>, Span)], cluster: &str, sources: &Sources) -> Result<(), Vec<ProfileDiagnostic>> {
    let n = pools.len();
    let mut i = 0;
    while i < n {
        if let Some(w) = &pools[i].1 {
            pools[i].0.weight = w.value;
            i += 1;
            continue;
        }
        let start = i;
        while i < n && pools[i].1.is_none() {
            i += 1;
        }
        let run = (i - start) as u32;
        let lower = pools.get(i).and_then(|p| p.1.as_ref()).map_or(0, |w| w.value);
        let above = start.checked_sub(1).map(|k| pools[k].0.weight);
        // Candidate weights: `first - k·step` for k in 0..run, all > lower.
        let (first, step) = match above {
            // Top of the cluster: start at 100.
            None => (100, if run > 1 { (99u32.saturating_sub(lower) / (run - 1)).clamp(1, 10) } else { 10 }),
            // Below an explicit weight: start one step under it.
            Some(upper) => {
                let step = (upper.saturating_sub(lower + 1) / run).clamp(1, 10);
                (upper.saturating_sub(step), step)
            }
        };
        let room = match above {
            None => 100u32.saturating_sub(lower),
            Some(upper) => upper.saturating_sub(lower + 1),
        };
        if room < run {
            let span = pools[start].2;
            return Err(vec![sources
                .error(span, "E0153", match above {
                    Some(upper) => format!("no room for distinct weights in cluster `{cluster}`: {run} pool(s) must fit between weights {lower} and {upper}"),
                    None => format!("no room for distinct weights in cluster `{cluster}`: {run} pool(s) must rank above the explicit weight {lower}, and 100 is the maximum"),
                })
                .help("spread the explicit `weight`s further apart, or remove them and let gpuplan assign weights")]);
        }
        for (k, pool) in pools[start..i].iter_mut().enumerate() {
            pool.0.weight = first - k as u32 * step;
        }
    }
    Ok(())
}

/// A catalog's types by the one kind of accelerator they have (see [`has_only`]), in catalog order: every tier's
/// first filter, worked out once per catalog instead of once per tier over all of its types.
struct AcceleratorIndex<'c> {
    by_kind: BTreeMap<AcceleratorKind, Vec<&'c InstanceType>>,
}

impl<'c> AcceleratorIndex<'c> {
    fn new(catalog: &'c Catalog) -> AcceleratorIndex<'c> {
        let mut by_kind: BTreeMap<AcceleratorKind, Vec<&InstanceType>> = BTreeMap::new();
        for t in &catalog.instance_types {
            for kind in [AcceleratorKind::Nvidia, AcceleratorKind::Amd, AcceleratorKind::Neuron, AcceleratorKind::Cpu] {
                if has_only(kind, t) {
                    by_kind.entry(kind).or_default().push(t);
                }
            }
        }
        AcceleratorIndex { by_kind }
    }
}

/// The type has accelerators of this kind (whole or fractional GPUs) and of no other kind; for `Cpu`, none at all
/// (a CPU pool never launches a GPU node, whose price is paid for devices its pods do not use).
fn has_only(kind: AcceleratorKind, t: &InstanceType) -> bool {
    if kind == AcceleratorKind::Cpu {
        return t.gpus.is_empty() && t.neuron.is_none();
    }
    let others = t.gpus.iter().any(|g| crate::catalog::manufacturer_kind(&g.manufacturer) != Some(kind))
        || (kind != AcceleratorKind::Neuron && t.neuron.is_some());
    !others && (t.accelerators(kind) > 0 || (t.has_partial_gpus() && kind != AcceleratorKind::Neuron))
}

/// One requirement of a tier on instance types: its words (in removals and E0140), where the profile says it, and
/// the test. The words name every value the test reads: they are also the key under which [`Selections`] shares
/// the result between tiers.
struct Constraint<'a> {
    label: String,
    span: Span,
    keep: Box<dyn Fn(&InstanceType) -> bool + 'a>,
}

impl<'a> Constraint<'a> {
    fn new(label: impl Into<String>, span: Span, keep: impl Fn(&InstanceType) -> bool + 'a) -> Constraint<'a> {
        Constraint { label: label.into(), span, keep: Box::new(keep) }
    }
}

/// What selection decided for a tier: the candidates ranked cheapest first, and what each constraint removed.
/// The candidates are shared (`Arc`) by every tier that selects the same way.
type Selected = (Arc<Vec<Candidate>>, Arc<Vec<Removal>>);

/// The selections of one cluster's solve, by tier key (the constraints' words and the ranking inputs). A file of
/// 200,000 pools written from one preset selects once instead of 200,000 times (issue 21: 200,000 pools within
/// seconds). Failures are not kept: they carry the failing tier's own location.
#[derive(Default)]
struct Selections {
    memo: HashMap<String, Selected>,
}

impl Selections {
    /// Filters and ranks the catalog for one tier. On failure, names the constraint that removed the last types.
    #[allow(clippy::too_many_arguments)]
    fn select(&mut self, tier: &Tier, catalog: &Catalog, index: &AcceleratorIndex, labels: &TypeLabels, zones: &[String], auto_mode: Option<Span>, sources: &Sources) -> Result<Selected, ProfileDiagnostic> {
        let s = &tier.settings;
        let mut constraints = constraints(tier, catalog, labels, zones, sources)?;
        if let Some(span) = auto_mode {
            // Applied last, so that what it removes is reported as Auto Mode's doing.
            constraints.push(Constraint::new("EKS Auto Mode launches the type (a supported family, > 1 vCPU, not nano/micro/small)", span, crate::catalog::auto_mode::supports));
        }
        let mut key: String = constraints.iter().map(|c| c.label.as_str()).collect::<Vec<_>>().join("\n");
        key.push_str(&format!("\n{:?} {:?} {:?} {} {:?} {zones:?}", s.accelerator.value, s.sharing.as_ref().map(|x| &x.value), s.spot_ceiling.value, s.price_ratio_max.value, s.capacity.value));
        key.push_str(&overlays::memo_key(s));
        if let Some(selected) = self.memo.get(&key) {
            return Ok(selected.clone());
        }
        let start = match index.by_kind.get(&s.accelerator.value) {
            Some(types) => types.clone(),
            // Only the index's types pass the first constraint; without any, it reports on the whole catalog.
            None => catalog.instance_types.iter().collect(),
        };
        let (remaining, mut removed) = narrow(start, &constraints).map_err(|e| e.diagnostic(tier, sources))?;
        let ranked = rank(&remaining, tier, catalog, zones);
        let (kept, by_price) = admit_by_price(ranked, s);
        removed.extend(by_price);
        let selected = (Arc::new(kept), Arc::new(removed));
        self.memo.insert(key, selected.clone());
        Ok(selected)
    }
}

/// The tier's constraints, in the order they are applied (and reported).
fn constraints<'a>(tier: &'a Tier, catalog: &'a Catalog, labels: &'a TypeLabels, zones: &[String], sources: &Sources) -> Result<Vec<Constraint<'a>>, ProfileDiagnostic> {
    let s = &tier.settings;
    let kind = s.accelerator.value;
    let named = move |t: &InstanceType| s.types.iter().any(|n| n.value == t.name);
    let list = |items: &[Spanned<String>]| items.iter().map(|i| i.value.clone()).collect::<Vec<_>>();
    let what = match kind {
        AcceleratorKind::Nvidia => "NVIDIA GPUs",
        AcceleratorKind::Amd => "AMD GPUs",
        AcceleratorKind::Neuron => "AWS Neuron devices",
        AcceleratorKind::Cpu => "",
    };
    let first = if kind == AcceleratorKind::Cpu { "has no GPU or Neuron device (a CPU pool)".to_string() } else { format!("has {what} (and no other accelerator)") };
    let mut out = vec![
        Constraint::new(first, s.accelerator.span, move |t| has_only(kind, t)),
        Constraint::new("whole accelerators (fractional-GPU types only when named in `types`)", s.accelerator.span, move |t| {
            (!t.has_partial_gpus() && t.accelerators(kind) > 0) || named(t)
        }),
    ];
    if !s.accelerator_names.is_empty() {
        let names: Vec<String> = s.accelerator_names.iter().map(|n| n.value.to_ascii_lowercase()).collect();
        let label = format!("accelerator name in [{}]", list(&s.accelerator_names).join(", "));
        out.push(Constraint::new(label, s.accelerator_names[0].span, move |t| {
            let model = match kind {
                AcceleratorKind::Neuron => t.neuron.as_ref().map(|n| n.name.to_ascii_lowercase()),
                _ => t.single_gpu_model().map(|g| g.name.to_ascii_lowercase()),
            };
            model.is_some_and(|m| names.contains(&m))
        }));
    }
    if kind == AcceleratorKind::Cpu {
        out.extend(cpu_pool_defaults(s));
    }
    // MIG: only GPUs that have the pool's MIG config (an A10G can never land in a MIG pool).
    if let Some((label, span, keep)) = crate::ops::mig::pool_filter(s, catalog, sources)? {
        out.push(Constraint { label, span, keep });
    }
    if let Some(min) = &s.memory_min_mib {
        let v = min.value;
        let per = if kind == AcceleratorKind::Cpu { "vCPU" } else { "accelerator" };
        out.push(Constraint::new(format!("memory per {per} ≥ {v} MiB"), min.span, move |t| accelerator_memory_mib(t, kind) >= v));
    }
    if let Some(min) = &s.per_node_min {
        let v = min.value;
        out.push(Constraint::new(format!("accelerators per node ≥ {v}"), min.span, move |t| t.accelerators(kind) >= v || named(t)));
    }
    if let Some(max) = &s.per_node_max {
        let v = max.value;
        out.push(Constraint::new(format!("accelerators per node ≤ {v}"), max.span, move |t| t.accelerators(kind) <= v));
    }
    if !s.arch.is_empty() {
        let arch: Vec<Arch> = s.arch.iter().map(|a| a.value).collect();
        let label = format!("arch in [{}]", arch.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", "));
        out.push(Constraint::new(label, s.arch[0].span, move |t| t.arch.iter().any(|a| arch.contains(a))));
    }
    if let Some(g) = &s.generation_min {
        let v = g.value;
        out.push(Constraint::new(format!("instance generation ≥ {v}"), g.span, move |t| t.generation >= v));
    }
    if !s.families.is_empty() {
        let families = list(&s.families);
        out.push(Constraint::new(format!("family in [{}]", families.join(", ")), s.families[0].span, move |t| families.contains(&t.family)));
    }
    if !s.exclude_families.is_empty() {
        let families = list(&s.exclude_families);
        out.push(Constraint::new(format!("family not in [{}]", families.join(", ")), s.exclude_families[0].span, move |t| !families.contains(&t.family)));
    }
    if !s.types.is_empty() {
        out.push(Constraint::new(format!("type in [{}]", list(&s.types).join(", ")), s.types[0].span, named));
    }
    if !s.exclude_types.is_empty() {
        let types = list(&s.exclude_types);
        out.push(Constraint::new(format!("type not in [{}]", types.join(", ")), s.exclude_types[0].span, move |t| !types.contains(&t.name)));
    }
    out.extend(require_constraints(tier, catalog, labels));
    if let Some(efa) = &s.efa {
        let v = efa.value;
        out.push(Constraint::new(format!("EFA {}", if v { "supported" } else { "not required" }), efa.span, move |t| !v || t.efa));
    }
    out.extend(capacity_and_zone_constraints(tier, catalog, zones));
    if let Some(reserved_type) = s.reserved.as_ref().and_then(|r| r.instance_type.clone()) {
        let label = format!("the reservation's instance type {}", reserved_type.value);
        out.push(Constraint::new(label, reserved_type.span, move |t| t.name == reserved_type.value));
    }
    Ok(out)
}

/// What a CPU pool leaves out unless told otherwise, because ranking by $/vCPU-hour alone would keep nothing else:
/// - burstable types (instance category `t`): their price buys a baseline share of each vCPU (5–40 %), and the rest
///   is billed as CPU credits, so their $/vCPU-hour is not comparable (t3a.nano is a sixteenth of c6a.large's); a
///   `families` or `types` entry naming them admits them;
/// - less than 2 GiB of memory per vCPU (the compute-optimized c types' ratio) unless `cpu { memory-min … }` says
///   otherwise or `types` names the type: a 0.5 GiB node holds little beside its DaemonSets.
fn cpu_pool_defaults<'a>(s: &'a Settings) -> Vec<Constraint<'a>> {
    let mut out = Vec::new();
    let asked = move |t: &InstanceType| s.families.iter().any(|f| f.value == t.family) || s.types.iter().any(|n| n.value == t.name);
    out.push(Constraint::new("not burstable (t types only when named in `families` or `types`)", s.accelerator.span, move |t| t.category != "t" || asked(t)));
    if s.memory_min_mib.is_none() {
        out.push(Constraint::new(
            format!("memory per vCPU ≥ {CPU_POOL_MEMORY_MIB_PER_VCPU} MiB (a CPU pool's default)"),
            s.accelerator.span,
            move |t| t.memory_mib / u64::from(t.vcpu.max(1)) >= CPU_POOL_MEMORY_MIB_PER_VCPU || s.types.iter().any(|n| n.value == t.name),
        ));
    }
    out
}

/// `require` lines on a key the catalog's types are labelled with (`simulate::instances::requirements`, the labels
/// Karpenter's provider computes): a type stays when its label and the requirement intersect as Karpenter's
/// `Requirements.Intersects` has it (an absent label satisfies NotIn and DoesNotExist). Keys the catalog has no
/// label for (hypervisor, bandwidths, …) filter nothing here: [`unchecked_requires`] notes them. A type's labels are
/// the catalog's cached ones (`labels`, built once per catalog and kept by compile for its simulations): one lookup
/// per type and `require` line, instead of building the whole label set each time.
fn require_constraints<'a>(tier: &'a Tier, catalog: &'a Catalog, labels: &'a TypeLabels) -> Vec<Constraint<'a>> {
    use crate::simulate::requirements::{Requirement as Wanted, Requirements};
    let probe = (!catalog.instance_types.is_empty()).then(|| labels.get(catalog, 0));
    let labelled = |key: &str| probe.is_some_and(|p| p.get(key).is_some());
    let mut out = Vec::new();
    for r in tier.settings.requires.iter().filter(|r| labelled(&r.key)) {
        let Some(wanted) = Wanted::new(&r.operator, &r.values) else { continue };
        let mut incoming = Requirements::default();
        incoming.add(&r.key, wanted);
        out.push(Constraint::new(r.describe(), r.span, move |t| labels.of(catalog, t).intersects(&incoming).is_ok()));
    }
    out
}

/// The least memory per vCPU a CPU pool admits by default (see [`cpu_pool_defaults`]).
pub const CPU_POOL_MEMORY_MIB_PER_VCPU: u64 = 2048;

/// The `require` keys no catalog label lets gpuplan check: Karpenter applies them, so the NodePool may launch fewer
/// of the listed types (never others: the instance-type requirement still names them), and the cost bound, a
/// maximum over the listed types, stays an upper bound.
fn unchecked_requires(s: &Settings, catalog: &Catalog) -> Vec<String> {
    let Some(first) = catalog.instance_types.first() else { return Vec::new() };
    let labels = crate::simulate::instances::requirements(first, &catalog.region);
    s.requires.iter().filter(|r| crate::profile::requirements_is_well_known(&r.key) && labels.get(&r.key).is_none()).map(|r| r.key.clone()).collect()
}

/// The pool's capacity types must be offered, in its zones, with prices to bound them.
fn capacity_and_zone_constraints<'a>(tier: &'a Tier, catalog: &Catalog, zones: &[String]) -> Vec<Constraint<'a>> {
    let s = &tier.settings;
    let capacity = &s.capacity.value;
    let supports = move |t: &InstanceType| {
        capacity.iter().all(|c| match c {
            CapacityType::Reserved => t.capacity_types.contains(&CapacityType::OnDemand) || t.capacity_types.contains(&CapacityType::Reserved),
            other => t.capacity_types.contains(other),
        })
    };
    let offered_label = if zones.is_empty() { format!("offered in {}", catalog.region) } else { format!("offered in one of [{}]", zones.join(", ")) };
    let (offered_zones, priced_zones) = (zones.to_vec(), zones.to_vec());
    vec![
        Constraint::new(format!("supports capacity type {}", capacity.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(" and ")), s.capacity.span, supports),
        Constraint::new(offered_label, tier.name.span, move |t| {
            if offered_zones.is_empty() { !t.zones.is_empty() } else { t.zones.iter().any(|z| offered_zones.contains(z)) }
        }),
        Constraint::new("has on-demand and capacity-type prices", s.capacity.span, move |t| {
            capacity.iter().all(|c| t.price(*c, &priced_zones).is_some()) && t.on_demand.is_some()
        }),
    ]
}

/// A constraint removed the last types: which, what it removed, and what the earlier ones removed.
struct Exhausted {
    label: String,
    span: Span,
    dropped: Vec<String>,
    before: Vec<Removal>,
}

impl Exhausted {
    /// E0140, at the constraint that removed the last candidates.
    fn diagnostic(self, tier: &Tier, sources: &Sources) -> ProfileDiagnostic {
        let Exhausted { label, span, dropped, before, .. } = self;
        let examples: Vec<&str> = dropped.iter().take(8).map(String::as_str).collect();
        let more = dropped.len().saturating_sub(examples.len());
        let before: Vec<String> = before.iter().map(|r| format!("{} removed {}", r.constraint, r.types.len())).collect();
        sources
            .error(span, "E0140", format!("no instance type satisfies pool `{}`: `{label}` removed the last {} candidate{}", tier.name.value, dropped.len(), if dropped.len() == 1 { "" } else { "s" }))
            .label(format!("this removed {}{}", examples.join(", "), if more > 0 { format!(" and {more} more") } else { String::new() }))
            .help(if before.is_empty() { "relax this constraint".to_string() } else { format!("relax this constraint; before it: {}", before.join("; ")) })
    }
}

/// Applies the constraints in order, recording what each removed (the accelerator-kind filter aside: every
/// other kind's types are not worth listing).
fn narrow<'c>(mut remaining: Vec<&'c InstanceType>, constraints: &[Constraint]) -> Result<(Vec<&'c InstanceType>, Vec<Removal>), Exhausted> {
    let mut removed = Vec::new();
    for c in constraints {
        let (kept, dropped): (Vec<&InstanceType>, Vec<&InstanceType>) = remaining.iter().partition(|t| (c.keep)(t));
        let dropped: Vec<String> = dropped.iter().map(|t| t.name.clone()).collect();
        if kept.is_empty() {
            return Err(Exhausted { label: c.label.clone(), span: c.span, dropped, before: removed });
        }
        if !dropped.is_empty() && !c.label.starts_with("has ") {
            removed.push(Removal { constraint: c.label.clone(), types: dropped });
        }
        remaining = kept;
    }
    Ok((remaining, removed))
}

/// Prices each remaining type for the tier and ranks by $/accelerator-hour, ties by name.
fn rank(remaining: &[&InstanceType], tier: &Tier, catalog: &Catalog, zones: &[String]) -> Vec<Candidate> {
    let s = &tier.settings;
    let kind = s.accelerator.value;
    let sharing = s.sharing.as_ref().map(|x| &x.value);
    let mut candidates: Vec<Candidate> = remaining
        .iter()
        .map(|t| {
            let accelerators = t.accelerators(kind).max(1);
            let quote = cost::quote(t, catalog, &s.capacity.value, zones, s.spot_ceiling.value).expect("filtered on having prices");
            let memory = accelerator_memory_mib(t, kind);
            let node_units = overlays::overlaid_units(s, t, &catalog.region).filter(|u| *u > 0).unwrap_or_else(|| accelerators * units_per_gpu(sharing, t));
            let units = f64::from(node_units);
            // Karpenter ranks by the overlaid price; the expected and worst-case figures stay at list price.
            let (ranked, overlay) = overlays::ranked_price(s, t, &catalog.region, zones, quote.expected);
            let per_unit = ranked / units;
            Candidate {
                name: t.name.clone(),
                family: t.family.clone(),
                accelerators,
                units: node_units,
                accelerator_name: match kind {
                    AcceleratorKind::Neuron => t.neuron.as_ref().map(|n| n.name.clone()).unwrap_or_default(),
                    _ => t.gpus.iter().map(|g| g.name.clone()).collect::<Vec<_>>().join("+"),
                },
                memory_mib_per_accelerator: memory,
                vcpu: t.vcpu,
                memory_mib: crate::simulate::instances::memory_mib(t).max(1) as u64,
                usd_per_hour: quote.expected,
                usd_per_accelerator_hour: per_unit,
                usd_per_accelerator_gib_hour: if memory > 0 { per_unit / (memory as f64 / 1024.0) } else { 0.0 },
                estimate: quote.expected_is_estimate,
                ceiling_usd_per_hour: quote.ceiling,
                ceiling_usd_per_accelerator_hour: quote.ceiling / units,
                ceiling_estimate: quote.ceiling_is_estimate,
                bound: quote.bound,
                overlay,
            }
        })
        .collect();
    candidates.sort_by(cheapest_first);
    candidates
}

fn cheapest_first(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    a.usd_per_accelerator_hour.total_cmp(&b.usd_per_accelerator_hour).then(a.name.cmp(&b.name))
}

/// Price quality: a 1-GPU 16xlarge costs 4× a 1-GPU xlarge per GPU; keeps only types within `price-ratio-max` of
/// the best $/accelerator-hour, unless the user named them. Spot diversity: spot-to-spot consolidation needs
/// SPOT_MIN_TYPES candidates, so when the ratio leaves fewer, the next cheapest types up to
/// SPOT_DIVERSITY_RATIO_MAX × cheapest are admitted too (a spot pool that can always find capacity is worth a
/// somewhat worse $/accelerator-hour; the worst case still bounds the cost).
fn admit_by_price(ranked: Vec<Candidate>, s: &Settings) -> (Vec<Candidate>, Option<Removal>) {
    let cheapest = ranked[0].usd_per_accelerator_hour;
    let ratio = s.price_ratio_max.value;
    let spot = s.capacity.value.contains(&CapacityType::Spot);
    let (mut kept, mut dropped): (Vec<Candidate>, Vec<Candidate>) = ranked
        .into_iter()
        .partition(|c| c.usd_per_accelerator_hour <= cheapest * ratio + 1e-9 || s.types.iter().any(|t| t.value == c.name));
    if spot && kept.len() < SPOT_MIN_TYPES {
        let widen = ratio.max(SPOT_DIVERSITY_RATIO_MAX);
        let admit: Vec<usize> = dropped
            .iter()
            .enumerate()
            .filter(|(_, c)| c.usd_per_accelerator_hour <= cheapest * widen + 1e-9)
            .map(|(i, _)| i)
            .take(SPOT_MIN_TYPES - kept.len())
            .collect();
        for i in admit.into_iter().rev() {
            kept.push(dropped.remove(i));
        }
        kept.sort_by(cheapest_first);
    }
    let removal = (!dropped.is_empty()).then(|| Removal {
        constraint: format!(
            "$/{}-hour ≤ {ratio} × cheapest (${cheapest:.4}) [price-ratio-max{}]",
            if s.accelerator.value == AcceleratorKind::Cpu { "vCPU" } else { "accelerator" },
            if spot { format!("; spot pools widen to {SPOT_DIVERSITY_RATIO_MAX} × to reach {SPOT_MIN_TYPES} types") } else { String::new() }
        ),
        types: dropped.iter().map(|c| c.name.clone()).collect(),
    });
    (kept, removal)
}

/// Memory per accelerator in MiB (per GPU, or per Neuron device; for a CPU pool, host memory per vCPU).
fn accelerator_memory_mib(t: &InstanceType, kind: AcceleratorKind) -> u64 {
    match kind {
        AcceleratorKind::Cpu => t.memory_mib / u64::from(t.vcpu.max(1)),
        AcceleratorKind::Neuron => t.neuron.as_ref().map_or(0, |n| n.memory_mib_per_device),
        _ => t.gpus.iter().map(|g| g.memory_mib).min().unwrap_or(0),
    }
}

#[allow(clippy::too_many_arguments)]
fn pool_plan(
    tier: &Tier,
    tier_index: usize,
    pool_node: &crate::profile::Pool,
    profile: &Profile,
    source: &str,
    node_class: String,
    zones: &[String],
    candidates: Arc<Vec<Candidate>>,
    removed: Arc<Vec<Removal>>,
    allow: BTreeSet<String>,
) -> PoolPlan {
    let s = &tier.settings;
    let pool = pool_node.name.value.as_str();
    let mut labels: BTreeMap<String, String> = s.labels.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect();
    // One label for all tiers of the pool: a workload selects its pool, and Karpenter falls back across its
    // tiers by weight (karpenter.sh/nodepool names the tier).
    labels.insert(POOL_LABEL.into(), pool.to_string());
    let host_plugin = s.accelerator.value == AcceleratorKind::Nvidia && host_device_plugin(&profile.cluster.ami.value);
    if host_plugin {
        // The GPU Operator keeps an operand off a node whose `nvidia.com/gpu.deploy.<operand>` label is already set
        // (NVIDIA/gpu-operator v26.7.0 controllers/state_manager.go `addGPUStateLabels`: "If a required state label
        // already exists on the node with a non-empty value, honor it"): the host's plugin is the only one.
        labels.insert(DEPLOY_DEVICE_PLUGIN_LABEL.into(), "false".into());
        labels.insert(DEPLOY_MIG_MANAGER_LABEL.into(), "false".into());
    }
    match s.sharing.as_ref().map(|x| &x.value) {
        // On Bottlerocket the node class's user data carries it (`class_time_slicing`).
        Some(Sharing::TimeSlicing { replicas }) if !host_plugin => {
            labels.insert("nvidia.com/device-plugin.config".into(), format!("time-slicing-{replicas}"));
        }
        Some(Sharing::Mig { config }) => {
            labels.insert("nvidia.com/mig.config".into(), config.clone());
        }
        _ => {}
    }
    // A CPU pool has no accelerator taint: it is where the cluster's ordinary pods (which tolerate nothing) run; nor
    // does a pool written with `accelerator-taint #false` (lint GP007 says why the taint is worth keeping).
    let mut taints: Vec<Taint> = Vec::new();
    if s.accelerator.value.is_accelerator() && s.accelerator_taint.value {
        taints.push(Taint { key: s.accelerator.value.resource().to_string(), value: None, effect: "NoSchedule".into() });
    }
    // Isolation: without a pool taint, any pod that tolerates the accelerator taint lands on the
    // highest-weight pool that fits it (an 8-GPU trainer on the inference pool). Only `general` pools take
    // such pods; every other pool admits only pods that tolerate its own taint.
    // (The pool's own preset: looking it up among the profile's pools by name made a file of n pools cost n².)
    let general = pool_node.preset.value == crate::profile::Preset::General;
    if !general {
        taints.push(Taint { key: POOL_LABEL.into(), value: Some(pool.to_string()), effect: "NoSchedule".into() });
    }
    for t in &s.taints {
        if !taints.iter().any(|x| x.key == t.key && x.effect == t.effect) {
            taints.push(t.value.clone());
        }
    }
    let disruption = DisruptionPlan {
        consolidation_policy: s.disruption.consolidation_policy.value.clone(),
        consolidate_after: s.disruption.consolidate_after.value.clone(),
        expire_after: s.disruption.expire_after.value.clone(),
        termination_grace_period: s.disruption.termination_grace_period.as_ref().map(|g| g.value.clone()),
        budgets: budgets(s),
    };
    PoolPlan {
        name: tier.name.value.clone(),
        profile: profile.name.value.clone(),
        source: source.to_string(),
        pool: pool.to_string(),
        tier_index,
        node_class,
        auto_mode: profile.cluster.auto_mode.value,
        accelerator: s.accelerator.value,
        capacity_types: s.capacity.value.clone(),
        zones: zones.to_vec(),
        // Filled in by size_limits, once the limit has dropped the types too big for it.
        requirements: Vec::new(),
        candidates,
        removed,
        taints,
        labels,
        limit: 0,
        cpu_limit: None,
        resource_limits: s.resource_limits.as_ref().map(|l| l.value.clone()).unwrap_or_default(),
        fixed_usd_per_hour: None,
        static_pool: s.static_pool.as_ref().map(|x| x.value),
        spot_ceiling: s.spot_ceiling.value,
        raws: s.raws.iter().filter(|r| r.kind == "NodePool").cloned().collect(),
        limit_reason: String::new(),
        weight: 0,
        disruption,
        sharing: s.sharing.as_ref().map(|x| x.value.clone()),
        efa: s.efa.as_ref().is_some_and(|e| e.value),
        expected_usd_per_hour: 0.0,
        worst_case_usd_per_hour: 0.0,
        draining_nodes: 0,
        drain_peak_usd_per_hour: 0.0,
        budget_usd_per_hour: None,
        allow,
        notes: Vec::new(),
    }
}

/// E0287: on Bottlerocket, a time-sliced pool's class gets gpuplan's `settings.kubelet-device-plugins.nvidia` after
/// the cluster's `user-data`; user data that sets that table too would declare it twice (invalid TOML, or two
/// sharing settings of which the node applies one).
fn time_slicing_in_user_data(profile: &Profile, tier: &Tier, host_plugin: bool, sources: &Sources) -> Option<ProfileDiagnostic> {
    class_time_slicing(tier, host_plugin)?;
    let user_data = profile.cluster.user_data.as_ref().filter(|u| u.contains("kubelet-device-plugins"))?;
    Some(
        sources
            .error(user_data.span, "E0287", format!("the cluster's `user-data` sets Bottlerocket's kubelet-device-plugins, and pool `{}` asks for time-slicing, which gpuplan writes there too", tier.name.value))
            .help("remove the device-plugin settings from `user-data` (the pool's `time-slicing replicas=N` writes them), or remove `time-slicing` from the pool"),
    )
}

/// E0185: MIG on a Bottlerocket NVIDIA variant is a host setting keyed by GPU model
/// (`settings.kubelet-device-plugins.nvidia.mig.profile`, bottlerocket.dev API settings "kubelet-device-plugins"), not
/// a mig-parted config the GPU Operator's MIG manager applies; gpuplan does not write those settings yet.
fn mig_on_host_plugin(tier: &Tier, host_plugin: bool, sources: &Sources) -> Option<ProfileDiagnostic> {
    let sharing = tier.settings.sharing.as_ref().filter(|s| host_plugin && matches!(s.value, Sharing::Mig { .. }))?;
    Some(
        sources
            .error(sharing.span, "E0185", format!("MIG on Bottlerocket: pool `{}` runs the Bottlerocket NVIDIA variant, whose host device plugin takes MIG profiles per GPU model from its own settings, not from the GPU Operator's mig-parted configs", tier.name.value))
            .label("a mig-parted config")
            .help("use an AL2023 AMI (`ami \"al2023@v…\"`) for MIG pools, or time-slicing on Bottlerocket (written into the EC2NodeClass user data)"),
    )
}

/// What a node class renders from, leaving out where it was written (the pools of one class each record it, with
/// their own `raw` lines' spans).
fn class_settings(c: &NodeClassPlan) -> impl PartialEq + '_ {
    let raws: Vec<(&String, &serde_json::Value)> = c.raws.iter().map(|r| (&r.value.kind, &r.value.patch)).collect();
    ((&c.profile, &c.role, &c.ami_alias, &c.discovery_tag, &c.reserved, c.instance_store_raid0), (&c.image_cache_snapshot, c.time_slicing, &c.user_data, c.auto_mode, &c.ephemeral_storage, &c.kubelet, raws))
}

/// E0158: two node classes of one cluster with one name and different settings (class names are derived: `<profile>`,
/// `-nvme`, `-ts<N>`, `-<tier>` for a pool's own kubelet or raw settings, so profile `ml`'s pool `x` and a profile
/// named `ml-x` can meet). One file would be written and the other pools would launch with its settings: the
/// reported pool is one that uses each.
fn class_name_collisions(sorted: &[NodeClassPlan], pools: &[(PoolPlan, Option<Spanned<u32>>, Span)], sources: &Sources) -> Vec<ProfileDiagnostic> {
    let mut out = Vec::new();
    for pair in sorted.windows(2) {
        let [a, b] = pair else { continue };
        if a.name != b.name || class_settings(a) == class_settings(b) || out.iter().any(|d: &(String, ProfileDiagnostic)| d.0 == a.name) {
            continue;
        }
        let pool_of = |c: &NodeClassPlan| pools.iter().find(|(p, _, _)| p.node_class == c.name && p.profile == c.profile).map(|(p, _, span)| (p.name.clone(), *span));
        let (Some((first, _)), Some((second, span))) = (pool_of(a), pool_of(b)) else { continue };
        let (first, second) = if first == second { (format!("{first} (profile {})", a.profile), format!("{second} (profile {})", b.profile)) } else { (first, second) };
        let d = sources
            .error(span, "E0158", format!("node class `{}` would be written twice with different settings: for pool {first} and for pool {second}", a.name))
            .label("this pool's class")
            .help("rename a pool or a profile (class names are `<profile>`, `<profile>-<pool>` for a pool's own kubelet or raw settings, `-nvme`, `-ts<N>`)");
        out.push((a.name.clone(), d));
    }
    out.into_iter().map(|(_, d)| d).collect()
}

/// E0277: the profiles of one cluster disagree on `auto-mode`. One cluster's output is one kustomization; a mixed
/// cluster (Auto Mode beside self-managed Karpenter) is possible on EKS but AWS advises against it, and gpuplan would
/// have to emit the GPU Operator for some nodes and keep it off the others.
fn mixed_auto_mode(cluster: &str, profiles: &[&Profile], sources: &Sources) -> Option<ProfileDiagnostic> {
    let auto = profiles.iter().find(|p| p.cluster.auto_mode.value)?;
    let other = profiles.iter().find(|p| !p.cluster.auto_mode.value)?;
    Some(
        sources
            .error(auto.cluster.auto_mode.span, "E0277", format!("cluster `{cluster}` is in EKS Auto Mode for profile `{}` but not for profile `{}`", auto.name.value, other.name.value))
            .label("auto-mode here")
            .help(format!("write `auto-mode #true` in the cluster block of profile `{}` too ({}), or remove it here", other.name.value, sources.location(other.cluster.span))),
    )
}

/// E0273 (time-slicing) and E0274 (MIG): device-plugin sharing in an EKS Auto Mode cluster. Auto Mode runs its own
/// NVIDIA device plugin, "not visible as a daemon set within your cluster" (EKS User Guide, "Deploy an accelerated
/// workload"), and its NodeClass has no user data: neither the GPU Operator's ConfigMap nor Bottlerocket settings
/// reach it, so a pool's slices would never be advertised.
fn sharing_in_auto_mode(tier: &Tier, auto_mode: Option<Span>, sources: &Sources) -> Option<ProfileDiagnostic> {
    auto_mode?;
    let sharing = tier.settings.sharing.as_ref()?;
    let (code, what, label) = match sharing.value {
        Sharing::TimeSlicing { .. } => ("E0273", "time-slicing", "time-slicing here"),
        Sharing::Mig { .. } => ("E0274", "MIG", "a mig-parted config"),
    };
    Some(
        sources
            .error(sharing.span, code, format!("EKS Auto Mode cannot configure {what}: pool `{}` is in an Auto Mode cluster, whose NVIDIA device plugin is managed by AWS and takes no GPU Operator or user-data settings", tier.name.value))
            .label(label)
            .help("give each pod whole GPUs in Auto Mode (remove this line), or run this pool on self-managed Karpenter: a cluster without `auto-mode #true` gets an EC2NodeClass and the GPU Operator"),
    )
}

/// E0332: an `overlay` block in an EKS Auto Mode cluster. Auto Mode runs Karpenter itself and installs the NodePool,
/// NodeClaim and NodeClass CRDs (EKS User Guide, "Create a Node Pool for EKS Auto Mode", "Create a Node Class"); it
/// documents no NodeOverlay and no feature gate a user can turn on, so the overlay's price would not rank the types
/// and its capacity would not be offered, while gpuplan's ranking and explain would say they do. Each block is reported
/// once (a pool's blocks are inherited by its tiers).
fn overlays_in_auto_mode(profile: &Profile, auto_mode: Option<Span>, sources: &Sources) -> Vec<ProfileDiagnostic> {
    if auto_mode.is_none() {
        return Vec::new();
    }
    let mut seen = BTreeSet::new();
    let overlays = profile.pools.iter().flat_map(|p| &p.tiers).flat_map(|t| &t.settings.overlays).filter(|o| seen.insert((o.span.file, o.span.offset)));
    overlays
        .map(|o| {
            sources
                .error(o.span, "E0332", format!("overlay `{}` is in an EKS Auto Mode cluster, which documents no NodeOverlay support: its price would not rank the types and its capacity would not be offered", o.value.name.value))
                .label("a NodeOverlay here")
                .help("remove the block (in Auto Mode, narrow the types with `types`, `families` or `require` instead), or run this pool on self-managed Karpenter: a cluster without `auto-mode #true`")
        })
        .collect()
}

// MOVED(issue 29): re-export until the merge (also used here)
pub use crate::charts::gpu_operator::{DEPLOY_DEVICE_PLUGIN_LABEL, DEPLOY_MIG_MANAGER_LABEL};

/// The node label (and, for non-general pools, the NoSchedule taint key) that names a node's gpuplan pool.
pub const POOL_LABEL: &str = "gpuplan.dev/pool";

/// Karpenter spot-to-spot consolidation wants ≥ 15 candidate types; diversity across families is asked for
/// with `minValues` on the family requirement (2 when at least 2 families qualify).
pub const SPOT_MIN_TYPES: usize = 15;

/// How far above the cheapest $/accelerator-hour a spot pool may reach to get SPOT_MIN_TYPES types.
pub const SPOT_DIVERSITY_RATIO_MAX: f64 = 3.0;

/// The NodePool's requirements. In EKS Auto Mode the family label is `eks.amazonaws.com/instance-family` and
/// `kubernetes.io/os` is left out: the EKS User Guide lists it as not supported (Auto Mode is Linux only).
fn requirements(s: &Settings, zones: &[String], candidates: &[Candidate], auto_mode: bool) -> Vec<Requirement> {
    let mut types: Vec<String> = candidates.iter().map(|c| c.name.clone()).collect();
    types.sort();
    let families: BTreeSet<String> = candidates.iter().map(|c| c.family.clone()).collect();
    let mut reqs = vec![
        Requirement {
            key: "karpenter.sh/capacity-type".into(),
            operator: "In".into(),
            values: s.capacity.value.iter().map(|c| c.as_str().to_string()).collect(),
            min_values: None,
        },
        Requirement {
            key: if auto_mode { "eks.amazonaws.com/instance-family" } else { "karpenter.k8s.aws/instance-family" }.into(),
            operator: "In".into(),
            min_values: (s.capacity.contains(&CapacityType::Spot) && families.len() >= 2).then_some(2),
            values: families.into_iter().collect(),
        },
        Requirement { key: "node.kubernetes.io/instance-type".into(), operator: "In".into(), values: types, min_values: None },
    ];
    let arch: BTreeSet<&str> = if s.arch.is_empty() {
        BTreeSet::from(["amd64"])
    } else {
        s.arch.iter().map(|a| a.value.as_str()).collect()
    };
    reqs.push(Requirement { key: "kubernetes.io/arch".into(), operator: "In".into(), values: arch.into_iter().map(String::from).collect(), min_values: None });
    if !auto_mode {
        reqs.push(Requirement { key: "kubernetes.io/os".into(), operator: "In".into(), values: vec!["linux".into()], min_values: None });
    }
    if !zones.is_empty() {
        let mut z = zones.to_vec();
        z.sort();
        reqs.push(Requirement { key: "topology.kubernetes.io/zone".into(), operator: "In".into(), values: z, min_values: None });
    }
    // In Auto Mode the instance labels are `eks.amazonaws.com/instance-*` (the profile says `karpenter.k8s.aws/…`, as
    // adopt reads Auto Mode's twins): each `require` on one is written in Auto Mode's domain.
    let key = |k: &str| if auto_mode { crate::catalog::auto_mode::auto_label(k).unwrap_or_else(|| k.to_string()) } else { k.to_string() };
    reqs.extend(s.requires.iter().map(|r| Requirement { key: key(&r.key), operator: r.operator.clone(), values: r.values.clone(), min_values: r.min_values }));
    reqs.sort_by(|a, b| a.key.cmp(&b.key));
    reqs
}

/// Disruption budgets. Explicit budgets win, as written.
///
/// A maintenance window becomes a scheduled `nodes: "0"` budget for the rest of the week *scoped to the
/// reasons that hurt running work* (`Drifted`, `Underutilized`), plus an always-on budget with the window's
/// node count. Karpenter applies, per reason, the most restrictive active budget among those that name the
/// reason or name none (kubernetes-sigs/karpenter pkg/apis/v1/nodepool.go, `GetAllowedDisruptionsByReason`), so:
/// empty nodes may go at any time (an idle p5 does not wait for Sunday), drift and consolidation only inside
/// the window, and an inactive schedule never leaves disruption unbounded. Budgets that cannot change the
/// outcome (see [`without_redundant_budgets`]) are left out.
fn budgets(s: &Settings) -> Vec<DisruptionBudget> {
    let d = &s.disruption;
    if !d.budgets.is_empty() {
        return d.budgets.iter().map(|b| b.value.clone()).collect();
    }
    let always = |nodes: &str, reasons: &[&str]| DisruptionBudget {
        nodes: nodes.into(),
        schedule: None,
        duration: None,
        reasons: reasons.iter().map(|r| r.to_string()).collect(),
    };
    let mut budgets = match &d.maintenance_window {
        Some(w) => {
            let (schedule, duration) = outside_window(&w.value);
            vec![
                DisruptionBudget {
                    nodes: "0".into(),
                    schedule: Some(schedule),
                    duration: Some(duration),
                    reasons: PROTECTED_REASONS.iter().map(|r| r.to_string()).collect(),
                },
                always(&w.nodes, &[]),
            ]
        }
        None => vec![always("10%", &[])],
    };
    // Nodes that never expire are replaced only when they drift (an AMI release): one at a time.
    if d.expire_after.value == "Never" {
        budgets.push(always("1", &["Drifted"]));
    }
    without_redundant_budgets(budgets)
}

/// The disruption reasons a maintenance window holds back: replacing a node for drift or to repack it restarts
/// the GPU work on it. `Empty` is not among them: an empty node runs nothing.
pub const PROTECTED_REASONS: [&str; 2] = ["Drifted", "Underutilized"];

/// Drops each budget that another makes redundant: an always-on budget that applies to at least the same
/// reasons and allows no more nodes (in the same unit: counts with counts, percentages with percentages) is
/// always at least as restrictive, so the dropped budget could never be the one Karpenter applies.
pub fn without_redundant_budgets(budgets: Vec<DisruptionBudget>) -> Vec<DisruptionBudget> {
    let covers = |a: &DisruptionBudget, b: &DisruptionBudget| {
        a.schedule.is_none() && (a.reasons.is_empty() || (!b.reasons.is_empty() && b.reasons.iter().all(|r| a.reasons.contains(r))))
    };
    let at_most = |a: &str, b: &str| match (a.strip_suffix('%'), b.strip_suffix('%')) {
        (Some(a), Some(b)) => a.parse::<u32>().ok().zip(b.parse::<u32>().ok()).is_some_and(|(a, b)| a <= b),
        (None, None) => a.parse::<u32>().ok().zip(b.parse::<u32>().ok()).is_some_and(|(a, b)| a <= b),
        _ => false,
    };
    let redundant = |i: usize, b: &DisruptionBudget| {
        budgets.iter().enumerate().any(|(j, a)| {
            j != i && covers(a, b) && at_most(&a.nodes, &b.nodes) && !(covers(b, a) && at_most(&b.nodes, &a.nodes) && j > i)
        })
    };
    let keep: Vec<bool> = budgets.iter().enumerate().map(|(i, b)| !redundant(i, b)).collect();
    budgets.into_iter().zip(keep).filter_map(|(b, k)| k.then_some(b)).collect()
}

/// The cron schedule (UTC) and duration of the complement of a weekly window: it starts when the window ends.
pub fn outside_window(w: &MaintenanceWindow) -> (String, String) {
    const WEEK: u32 = 7 * 24 * 60;
    let end = (w.weekday * 24 * 60 + w.start_minute_of_day + w.duration_minutes) % WEEK;
    let (day, minute_of_day) = (end / (24 * 60), end % (24 * 60));
    let schedule = format!("{} {} * * {}", minute_of_day % 60, minute_of_day / 60, day);
    let rest = WEEK - w.duration_minutes;
    let duration = if rest % 60 == 0 { format!("{}h", rest / 60) } else { format!("{}h{}m", rest / 60, rest % 60) };
    (schedule, duration)
}

/// Sizes each pool's accelerator limit and fills in the cost figures.
///
/// A capacity reservation is billed whether used or not: its pool's limit is the reservation
/// (instances × accelerators) and its full cost is fixed, counted first. The rest of the budget B goes to the
/// usage-based pools p₁…pₙ (caps cᵢ from `max-accelerators`, ∞ when absent): the solver picks the largest
/// common limit L with Σ worstᵢ(min(cᵢ, L)) ≤ B − fixed, where worstᵢ is the pool's bound from
/// [`cost::worst_case`] (spot at its ceiling, shared GPUs counted as Karpenter counts them at launch). Every
/// tier can carry the same number of accelerators, so a fallback tier can take over all the work of the tier
/// above it, and the sum of all worst cases never exceeds the budget. Types with more accelerators than their
/// pool's limit are then dropped and L recomputed (dropping types never raises a pool's bound).
fn size_limits(profile: &Profile, pools: &mut [(PoolPlan, &Tier)], sources: &Sources) -> Result<(), Vec<ProfileDiagnostic>> {
    let budget = profile.budget_usd_per_hour.as_ref();
    let mut diagnostics = Vec::new();
    for (plan, tier) in pools.iter() {
        if budget.is_none() && tier.settings.max_units().is_none() && tier.settings.reserved.is_none() && tier.settings.static_pool.is_none() {
            let (keyword, example) = limit_keyword(plan.accelerator);
            diagnostics.push(
                sources
                    .error(tier.name.span, "E0141", format!("pool `{}` is unbounded: it has no {keyword} and the profile has no budget", plan.name))
                    .help(format!("add `{keyword} {example}` to the pool or `budget usd-per-hour=100` to the profile; gpuplan never emits a NodePool without limits")),
            );
        }
    }
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let reserved = size_reservations(pools);
    let statics = static_pool::size(pools);
    let fixed = reserved + statics;
    let usage_budget = match budget {
        Some(b) if statics > 0.0 && fixed > b.value + 1e-9 => {
            let span = pools.iter().find_map(|(p, t)| p.static_pool.and(t.settings.static_pool.as_ref()).map(|s| s.span)).unwrap_or(b.span);
            let with = if reserved > 0.0 { format!(" (with ${reserved:.2}/h of reservations)") } else { String::new() };
            return Err(vec![sources
                .error(span, "E0306", format!("the static pools of profile `{}` cost up to ${statics:.2}/h{with}, more than its budget of ${:.2}/h", profile.name.value, b.value))
                .label("billed whether pods run or not")
                .help(format!("a static pool's nodes are billed always, each at most the dearest type it admits: keep fewer replicas, admit cheaper types (`types`, `exclude-types`), or raise the budget to at least ${fixed:.2}/h"))]);
        }
        Some(b) if fixed > b.value + 1e-9 => {
            return Err(vec![sources
                .error(b.span, "E0143", format!("the capacity reservations of profile `{}` cost ${fixed:.2}/h, more than its budget of ${:.2}/h", profile.name.value, b.value))
                .help("a reservation is billed whether used or not: raise the budget to at least the reservations' cost, or reserve fewer instances")]);
        }
        Some(b) => Some(b.value - fixed),
        None => None,
    };
    let cap = |tier: &Tier, plan: &PoolPlan| tier.settings.max_units().map(|m| m.value * plan.replicas());
    let usage_pools = pools.iter().filter(|(p, _)| p.fixed_usd_per_hour.is_none()).count();
    let scale = unit_scale(pools);

    for _round in 0..2 {
        let common = usage_budget.map(|b| {
            let usage = UsagePools::new(pools.iter().filter(|(p, _)| p.fixed_usd_per_hour.is_none()).map(|(p, t)| (p, cap(t, p), scale(p))));
            // Largest L with Σ worst(min(cᵢ, L)) ≤ B; each bound is non-decreasing in L: binary search.
            let cost = |l: u32| usage.worst_case(l);
            let (mut lo, mut hi) = (0u32, 1_000_000u32);
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                if cost(mid) <= b + 1e-9 { lo = mid } else { hi = mid - 1 }
            }
            lo
        });
        for (plan, tier) in pools.iter_mut().filter(|(p, _)| p.fixed_usd_per_hour.is_none()) {
            let capped = cap(tier, plan);
            let keyword = limit_keyword(plan.accelerator).0;
            let unit = scale(plan);
            let (limit, reason) = match (capped, common) {
                (Some(c), Some(l)) if c <= l * unit => (c, format!("{keyword} {}{}", c / plan.replicas(), replicas_note(plan))),
                (_, Some(l)) => (
                    l * unit,
                    format!(
                        "budget ${:.2}/h{} split evenly across the profile's {usage_pools} usage-based pool(s): Σ worst case ≤ budget{}",
                        budget.map_or(0.0, |b| b.value),
                        match (reserved > 0.0, statics > 0.0) {
                            (false, false) => String::new(),
                            (true, false) => format!(" minus ${fixed:.2}/h of reservations"),
                            (false, true) => format!(" minus ${fixed:.2}/h of static pools"),
                            (true, true) => format!(" minus ${fixed:.2}/h of reservations and static pools"),
                        },
                        if unit > 1 { format!(" ({unit} vCPUs for each accelerator of the GPU/Neuron pools beside it)") } else { String::new() },
                    ),
                ),
                (Some(c), None) => (c, format!("{keyword} {}{}", c / plan.replicas(), replicas_note(plan))),
                (None, None) => unreachable!("checked above"),
            };
            let (limit, reason) = round_to_whole_nodes(plan, limit, reason);
            plan.limit = limit;
            plan.limit_reason = reason;
            drop_nodes_above_limit(plan);
        }
    }

    for (plan, tier) in pools.iter_mut() {
        if plan.candidates.is_empty() {
            diagnostics.push(too_small(profile, plan, tier, sources));
            continue;
        }
        plan.requirements = requirements(&tier.settings, &plan.zones, &plan.candidates, plan.auto_mode);
        let unverified = plan.unverified_prices().len();
        if unverified > 0 && plan.fixed_usd_per_hour.is_none() && budget.is_some() {
            plan.limit_reason.push_str(&format!(
                " (unverified: the on-demand prices of {unverified} of its {} types are catalog estimates)",
                plan.candidates.len()
            ));
        }
        if let Some(s) = plan.static_pool {
            static_pool::finish(plan, s);
            plan.budget_usd_per_hour = profile.budget_usd_per_hour.as_ref().map(|b| b.value);
            continue;
        }
        let shapes = plan.shapes();
        let limits = plan.carried_limits(&shapes, plan.limit);
        plan.cpu_limit = limits.cpu;
        plan.expected_usd_per_hour = round_cents(plan.fixed_usd_per_hour.unwrap_or_else(|| cost::expected(&shapes, limits)));
        plan.worst_case_usd_per_hour = round_cents(plan.fixed_usd_per_hour.unwrap_or_else(|| cost::worst_case(&shapes, limits)));
        plan.draining_nodes = draining_nodes(plan);
        plan.drain_peak_usd_per_hour =
            round_cents(plan.fixed_usd_per_hour.unwrap_or_else(|| cost::drain_peak(&shapes, limits, plan.draining_nodes)));
        plan.budget_usd_per_hour = profile.budget_usd_per_hour.as_ref().map(|b| b.value);
    }
    if diagnostics.is_empty() { Ok(()) } else { Err(diagnostics) }
}

/// The usage-based pools of a profile as the budget's binary search sees them: pools that share their candidates
/// (one [`Selections`] entry) and their cap cost the same at every limit, so each such group is priced once with its
/// count, and its shapes are built once.
struct UsagePools<'p> {
    /// (a pool, its cap, its shapes, how many pools share them, the pool's units per step of the common limit).
    groups: Vec<(&'p PoolPlan, Option<u32>, Vec<NodeShape>, u32, u32)>,
}

impl<'p> UsagePools<'p> {
    fn new(pools: impl Iterator<Item = (&'p PoolPlan, Option<u32>, u32)>) -> UsagePools<'p> {
        let mut index: HashMap<(*const Vec<Candidate>, Option<u32>, u32), usize> = HashMap::new();
        let mut groups: Vec<(&PoolPlan, Option<u32>, Vec<NodeShape>, u32, u32)> = Vec::new();
        for (plan, cap, scale) in pools {
            let at = *index.entry((Arc::as_ptr(&plan.candidates), cap, scale)).or_insert_with(|| {
                groups.push((plan, cap, plan.shapes(), 0, scale));
                groups.len() - 1
            });
            groups[at].3 += 1;
        }
        UsagePools { groups }
    }

    /// Σ over the pools of the worst case at min(cap, `limit` × the pool's scale).
    fn worst_case(&self, limit: u32) -> f64 {
        self.groups
            .iter()
            .map(|(p, cap, shapes, count, scale)| {
                let own = limit.saturating_mul(*scale);
                f64::from(*count) * p.worst_case_on(shapes, cap.map_or(own, |c| c.min(own)))
            })
            .sum()
    }
}

/// vCPUs a CPU pool gets per accelerator the GPU/Neuron pools beside it get, when one budget sizes both. The
/// common limit of [`size_limits`] is a count of units; a vCPU and a GPU are not the same unit, so a CPU pool beside
/// accelerated pools counts its limit in steps of this many vCPUs: about what EC2's accelerated types carry per
/// accelerator (g5.2xlarge, g6e.2xlarge: 8 vCPUs per GPU; p4d.24xlarge: 12; p5.48xlarge: 24; g6.xlarge: 4), so the
/// CPU side of a cluster grows with its accelerated side. A profile of CPU pools only counts single vCPUs.
pub const VCPUS_PER_ACCELERATOR: u32 = 8;

/// Each usage pool's units per step of the common limit (see [`VCPUS_PER_ACCELERATOR`]).
fn unit_scale(pools: &[(PoolPlan, &Tier)]) -> impl Fn(&PoolPlan) -> u32 + 'static {
    let usage = || pools.iter().filter(|(p, _)| p.fixed_usd_per_hour.is_none());
    let mixed = usage().any(|(p, _)| p.accelerator == AcceleratorKind::Cpu) && usage().any(|(p, _)| p.accelerator != AcceleratorKind::Cpu);
    move |p: &PoolPlan| if mixed && p.accelerator == AcceleratorKind::Cpu { VCPUS_PER_ACCELERATOR } else { 1 }
}

/// The profile keyword that limits a pool of this kind, and an example value.
fn limit_keyword(kind: AcceleratorKind) -> (&'static str, u32) {
    if kind == AcceleratorKind::Cpu { ("max-cpu", 64) } else { ("max-accelerators", 16) }
}

/// Nodes of the pool that can be deleting at once, beside their replacements (`cost::draining_nodes`). A reserved
/// pool has none beside its reservation: a replacement cannot launch into a reservation its draining node still
/// holds, and the reservation is billed in full anyway. The pool's node count at its limit is counted in the
/// smallest nodes, physical accelerators (what Karpenter counts at launch).
fn draining_nodes(plan: &PoolPlan) -> u32 {
    if plan.fixed_usd_per_hour.is_some() {
        return 0;
    }
    let smallest = plan.candidates.iter().map(|c| c.accelerators.max(1)).min().unwrap_or(1);
    let nodes = plan.limit / smallest;
    cost::draining_nodes(nodes, plan.disruption.expire_after != "Never", &plan.disruption.budgets)
}

/// Reserved pools: the limit is the reservation, the cost its full price. Returns the total fixed $/h.
fn size_reservations(pools: &mut [(PoolPlan, &Tier)]) -> f64 {
    let mut total = 0.0;
    for (plan, tier) in pools.iter_mut() {
        let Some(r) = &tier.settings.reserved else { continue };
        let (Some(instances), Some(candidate)) = (&r.instances, plan.candidates.first()) else { continue };
        let fixed = f64::from(instances.value) * candidate.ceiling_usd_per_hour;
        plan.limit = instances.value * candidate.units;
        plan.limit_reason = format!(
            "capacity reservation: {} × {} ({} {} each), billed ${fixed:.2}/h whether used or not",
            instances.value,
            candidate.name,
            candidate.units,
            plan.resource()
        );
        plan.fixed_usd_per_hour = Some(fixed);
        total += fixed;
    }
    total
}

/// When every allowed node has the same number of accelerators, only multiples of it can ever be in use:
/// round down so the worst case is exact rather than an overestimate.
fn round_to_whole_nodes(plan: &PoolPlan, limit: u32, reason: String) -> (u32, String) {
    let sizes: BTreeSet<u32> = plan.candidates.iter().map(|c| c.units).collect();
    match sizes.iter().next() {
        Some(&size) if sizes.len() == 1 && size > 1 && limit >= size && limit % size != 0 => {
            (limit - limit % size, format!("{reason}; rounded down to whole {size}-accelerator nodes"))
        }
        _ => (limit, reason),
    }
}

/// A node with more accelerators than the limit could never launch: drop it.
fn drop_nodes_above_limit(plan: &mut PoolPlan) {
    let limit = plan.limit;
    let too_big: Vec<String> = plan.candidates.iter().filter(|c| c.units > limit).map(|c| c.name.clone()).collect();
    if !too_big.is_empty() {
        Arc::make_mut(&mut plan.candidates).retain(|c| c.units <= limit);
        Arc::make_mut(&mut plan.removed).push(Removal { constraint: format!("node accelerators ≤ limit {limit}"), types: too_big });
    }
}

/// E0142: the limit leaves no node that fits.
fn too_small(profile: &Profile, plan: &PoolPlan, tier: &Tier, sources: &Sources) -> ProfileDiagnostic {
    let (span, what) = match (&profile.budget_usd_per_hour, tier.settings.max_units()) {
        (Some(b), _) if plan.limit_reason.starts_with("budget") => (b.span, format!("the budget ${:.2}/h", b.value)),
        (_, Some(m)) => (m.span, format!("{} {}", limit_keyword(plan.accelerator).0, m.value)),
        (Some(b), None) => (b.span, format!("the budget ${:.2}/h", b.value)),
        (None, None) => (tier.name.span, "the limit".into()),
    };
    let smallest = plan.removed.last().map(|r| r.types.join(", ")).unwrap_or_default();
    sources
        .error(span, "E0142", format!("{what} is too small for one node of pool `{}`: its limit would be {} {}", plan.name, plan.limit, plan.resource()))
        .label(format!("allows {} {}", plan.limit, plan.resource()))
        .help(format!("raise it, or allow smaller nodes (every candidate has more accelerators than the limit: {smallest})"))
}

/// What one physical accelerator counts as in `nvidia.com/gpu`, at the least (for a pool whose types are not known
/// yet): the device plugin advertises each time-sliced GPU `replicas` times, and with MIG (strategy single) each MIG
/// device as one GPU — the fewest devices the config makes of any GPU model.
pub fn units_per_accelerator(sharing: Option<&Sharing>) -> u32 {
    match sharing {
        Some(Sharing::TimeSlicing { replicas }) => *replicas,
        Some(Sharing::Mig { config }) => crate::ops::mig::MigConfigs::builtin().devices_per_gpu(config),
        None => 1,
    }
}

/// What one physical accelerator of this type counts as: MIG devices depend on the GPU model (the GPU Operator's
/// mig-parted config gives `all-1g.10gb` 7 devices on an A100-80GB, p4de, and 4 on an A100-40GB, p4d). Limits,
/// prices per unit, NodeOverlays and the largest-node check all count these units per type.
pub fn units_per_gpu(sharing: Option<&Sharing>, t: &InstanceType) -> u32 {
    match (sharing, t.single_gpu_model()) {
        (Some(Sharing::Mig { config }), Some(gpu)) => crate::ops::mig::MigConfigs::builtin().devices_for(config, &gpu.name, gpu.memory_mib),
        _ => units_per_accelerator(sharing),
    }
}

fn replicas_note(plan: &PoolPlan) -> String {
    match (&plan.sharing, plan.replicas()) {
        (_, 1) => String::new(),
        (Some(Sharing::Mig { config }), r) => format!(" × {r} MIG devices per GPU ({config}; the fewest among the pool's GPU models)"),
        (_, r) => format!(" × time-slicing replicas {r}"),
    }
}

pub use crate::catalog::cost::round_cents;
