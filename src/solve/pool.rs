//! One NodePool as the solver decides it ([`PoolPlan`]): the chosen types ranked ([`Candidate`]), what was removed
//! and why ([`Removal`]), its requirements, disruption and limits, and where a workload's pods must go to land on it
//! ([`PodPlacement`]). Also the view of a cluster's finished pools the later plans read ([`ClusterPools`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::catalog::cost::{self, Bound, Limits, NodeShape, SpotCeiling};
use crate::catalog::{AcceleratorKind, CapacityType, InstanceType};
use crate::diagnostic::Spanned;
use crate::profile::{DisruptionBudget, Sharing, Taint};
use crate::simulate::requirements::Toleration;

use super::mig::MigConfigs;
use crate::charts::gpu_operator::DEPLOY_DEVICE_PLUGIN_LABEL;


/// The node label (and, for non-general pools, the NoSchedule taint key) that names a node's gpuplan pool.
pub const POOL_LABEL: &str = "gpuplan.dev/pool";

/// Karpenter labels each node with its NodePool's name: the one node label that tells the tiers of a pool apart.
pub const NODEPOOL_LABEL: &str = "karpenter.sh/nodepool";

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
    /// The likely price per hour (see `cost::quote`): spot when the pool allows spot (worst zone), else on-demand.
    pub usd_per_hour: f64,
    /// The likely price per schedulable accelerator-hour (time-slicing divides it): what candidates rank by.
    pub usd_per_accelerator_hour: f64,
    pub usd_per_accelerator_gib_hour: f64,
    /// The likely price is an estimate.
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
        NodeShape { accelerators: self.accelerators, units: self.units, vcpu: self.vcpu, memory_mib: self.memory_mib, likely: self.usd_per_hour, ceiling: self.ceiling_usd_per_hour }
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
    /// The profile line that says it (None: a rule of the solver's own, such as the limit the budget sets, whose
    /// reason is the pool's `limit_reason`).
    pub span: Option<crate::diagnostic::Span>,
    pub types: Vec<String>,
    /// Each removed type's own figure for the constraint, in `types`' order ("1 × L4 24 GiB", "arch arm64"):
    /// what `explain --why-not` shows against the constraint's words.
    pub figures: Vec<String>,
}

impl Removal {
    /// A removal of `dropped` (type name, its figure) by `constraint`.
    pub fn new(constraint: String, span: Option<crate::diagnostic::Span>, dropped: impl IntoIterator<Item = (String, String)>) -> Removal {
        let (types, figures) = dropped.into_iter().unzip();
        Removal { constraint, span, types, figures }
    }

    /// The figure recorded for `name`, if this constraint removed it.
    pub fn figure_of(&self, name: &str) -> Option<&str> {
        self.types.iter().position(|t| t == name).map(|i| self.figures[i].as_str())
    }
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
    /// The pool's own cap (`max-accelerators`/`max-cpu`) when the budget keeps its limit below it: the cap as written
    /// and the smallest budget with which the limit reaches it (lint GP039).
    pub cap_unreached: Option<CapUnreached>,
    pub weight: u32,
    pub disruption: DisruptionPlan,
    pub sharing: Option<Sharing>,
    /// `efa #true`: every type has EFA, and the node needs the EFA device plugin (`ops::addons`).
    pub efa: bool,
    pub at_limit_usd_per_hour: f64,
    /// Steady state: the active nodes at the pool's limits.
    pub worst_case_usd_per_hour: f64,
    /// What every node's EBS volumes cost, at most ($/h; its node class's `volumes`, priced by `catalog::ebs`): added
    /// to each type's price in every cost figure.
    pub node_storage_usd_per_hour: f64,
    /// Those volumes in words ("200 GiB gp3 at 10000 IOPS / 500 MiB/s").
    pub node_storage: String,
    /// Whose EBS prices priced them, in words (`catalog::ebs::PriceBasis`): the catalog's refresh or the table.
    pub node_storage_prices: String,
    /// Nodes that can be deleting at once (outside the limit, beside their replacements): every node (`cost::max_nodes`).
    pub draining_nodes: u32,
    /// The steady bound plus the draining nodes, for up to `terminationGracePeriod`.
    pub drain_peak_usd_per_hour: f64,
    pub budget_usd_per_hour: Option<f64>,
    /// Lint codes the profile silenced for this pool.
    pub allow: BTreeSet<String>,
    /// `admit "as-required"`, what `adopt` writes: the pool keeps its original's behaviour, so a whole-cluster problem
    /// the original YAML already had is a warning, not an error ([`PoolPlan::whole_cluster_severity`]).
    pub adopted: bool,
    /// An inference preset's pool (`inference-spot`, `inference-on-demand`, `tiered`): its pods are told to spread
    /// over zones and hosts ([`PodPlacement::spread`]).
    pub serving: bool,
    pub notes: Vec<String>,
    /// `raw "NodePool"` fragments, merged after rendering (the pool's, then the tier's).
    pub raws: Vec<Spanned<crate::profile::Raw>>,
}

impl PoolPlan {
    /// A whole-cluster check's diagnostic as this pool reports it: an error, or a warning on an adopted pool (the
    /// YAML it was adopted from already had the problem; issue 32's severity rule).
    pub fn whole_cluster_severity(&self, diagnostic: crate::diagnostic::ProfileDiagnostic) -> crate::diagnostic::ProfileDiagnostic {
        if self.adopted { diagnostic.warning() } else { diagnostic }
    }

    /// The forceful drains that can take every node of this pool at once, disruption budgets or not
    /// (`cost::forceful_drains`, which cites Karpenter's code for each).
    pub fn forceful_drains(&self) -> String {
        cost::forceful_drains(&self.disruption.expire_after, self.capacity_types.contains(&CapacityType::Spot))
    }

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
                value: t.value.clone().unwrap_or_default(),
                effect: t.effect.clone(),
            })
            .collect();
        let requests = self.efa_request(accelerators).map(|n| (crate::catalog::efa::EFA_RESOURCE.to_string(), n)).into_iter().collect();
        let spread = if self.serving { SpreadAdvice::serving() } else { Vec::new() };
        PodPlacement { node_selector, tolerations, requests, spread, one_per_node: false }
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
        self.candidates.iter().map(|c| c.shape().with_node_cost(self.node_storage_usd_per_hour)).collect()
    }

    /// The NodePool's limits for an accelerator limit `accelerators` on these shapes (the cpu backstop follows it).
    pub(super) fn limits_for(&self, shapes: &[NodeShape], accelerators: u32) -> Limits {
        let shared = shapes.iter().any(|s| s.units > s.accelerators);
        Limits { accelerators, cpu: shared.then(|| cost::cpu_backstop(shapes, accelerators)), memory_mib: None }
    }

    /// The limits the NodePool carries: [`Self::limits_for`] with the profile's `limits cpu=… memory=…` (a cpu
    /// limit below the backstop replaces it). The budget sizes the accelerator limit without them, so that a cpu cap
    /// never buys an accelerator limit it would make meaningless; the worst case is figured with them.
    pub(super) fn carried_limits(&self, shapes: &[NodeShape], accelerators: u32) -> Limits {
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
    pub(super) fn worst_case_on(&self, shapes: &[NodeShape], accelerators: u32) -> f64 {
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
    /// `topologySpreadConstraints` over the workload's own pods (labelSelector: its selector), on serving pools.
    #[serde(rename = "topologySpreadConstraints", skip_serializing_if = "Vec::is_empty")]
    pub spread: Vec<SpreadAdvice>,
    /// `max-per-node 1`: a required pod anti-affinity on `kubernetes.io/hostname` over the workload's own pods, the
    /// one strict per-node cap the scheduler keeps: a topology spread's skew is counted against the emptiest eligible
    /// node, so once every node holds a replica kube-scheduler may put a second one anywhere
    /// (k8s.io/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/filtering.go `minMatchNum`).
    #[serde(rename = "oneReplicaPerNode", skip_serializing_if = "std::ops::Not::not")]
    pub one_per_node: bool,
}

/// One `topologySpreadConstraint` gpuplan tells a workload's pods to carry (the labelSelector is the workload's).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SpreadAdvice {
    #[serde(rename = "topologyKey")]
    pub topology_key: String,
    #[serde(rename = "maxSkew")]
    pub max_skew: u32,
    #[serde(rename = "whenUnsatisfiable")]
    pub when_unsatisfiable: String,
}

/// How [`PodPlacement::describe`] names `max-per-node 1`'s anti-affinity (adopt reads it back).
pub const ONE_PER_NODE: &str = "podAntiAffinity over the workload's pods";

/// The zone label Karpenter and the scheduler spread over.
pub const ZONE_KEY: &str = "topology.kubernetes.io/zone";
/// The host label: one domain per node.
pub const HOST_KEY: &str = "kubernetes.io/hostname";

impl SpreadAdvice {
    /// A serving workload's spread: zones, then hosts, each `maxSkew: 1` as a preference (`ScheduleAnyway`): a spot
    /// shortage in one zone must not leave replicas pending, and Karpenter tries a preference as required before it
    /// relaxes it (sigs.k8s.io/karpenter@v1.14.1 pkg/controllers/provisioning/scheduling/preferences.go
    /// `removeTopologySpreadScheduleAnyway`), so new nodes follow it.
    pub fn serving() -> Vec<SpreadAdvice> {
        [ZONE_KEY, HOST_KEY].iter().map(|k| SpreadAdvice { topology_key: k.to_string(), max_skew: 1, when_unsatisfiable: "ScheduleAnyway".into() }).collect()
    }

    /// `max-per-node N` (N ≥ 2): a hard host spread of skew N. Karpenter counts a node it may still create as a host
    /// domain holding none of the pods, so no node it launches gets more than N (pkg/controllers/provisioning/scheduling/
    /// topologygroup.go); kube-scheduler keeps the skew against the emptiest eligible node, not an absolute cap.
    pub fn max_per_node(n: u32) -> SpreadAdvice {
        SpreadAdvice { topology_key: HOST_KEY.into(), max_skew: n, when_unsatisfiable: "DoNotSchedule".into() }
    }
}

impl std::fmt::Display for SpreadAdvice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{{topologyKey: {}, maxSkew: {}, whenUnsatisfiable: {}}}", self.topology_key, self.max_skew, self.when_unsatisfiable)
    }
}

impl PodPlacement {
    /// One line for annotations and alert texts, with the same items `explain` lists under "pods need":
    /// `nodeSelector {k: v}, toleration {…} and toleration {…}, and requests {vpc.amazonaws.com/efa: 32}`.
    pub fn describe(&self) -> String {
        let selector: Vec<String> = self.node_selector.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let mut items = vec![format!("nodeSelector {{{}}}", selector.join(", "))];
        items.extend(self.tolerations.iter().map(|t| format!("toleration {t}")));
        items.extend(self.spread.iter().map(|s| format!("topologySpreadConstraint {s}")));
        if self.one_per_node {
            items.push(format!("{ONE_PER_NODE} {{topologyKey: {HOST_KEY}, requiredDuringSchedulingIgnoredDuringExecution}}"));
        }
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

/// What a pod with `accelerators` needs to run on any of `pools` (the tiers of one pool a workload runs on): the
/// pool's nodeSelector, every tier's tolerations (once each, in tier order), and the smallest EFA request of the
/// tiers, so that the pod fits each. Empty when `pools` is.
pub fn workload_placement(pools: &[&PoolPlan], accelerators: u32) -> PodPlacement {
    let mut placements = pools.iter().map(|p| p.pod_placement(accelerators));
    let Some(mut out) = placements.next() else {
        return PodPlacement { node_selector: BTreeMap::new(), tolerations: Vec::new(), requests: BTreeMap::new(), spread: Vec::new(), one_per_node: false };
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

/// What one physical accelerator counts as in `nvidia.com/gpu`, at the least (for a pool whose types are not known
/// yet): the device plugin advertises each time-sliced GPU `replicas` times, and with MIG (strategy single) each MIG
/// device as one GPU — the fewest devices the config makes of any GPU model.
pub fn units_per_accelerator(sharing: Option<&Sharing>) -> u32 {
    match sharing {
        Some(Sharing::TimeSlicing { replicas }) => *replicas,
        Some(Sharing::Mig { config }) => MigConfigs::builtin().devices_per_gpu(config),
        None => 1,
    }
}

/// What one physical accelerator of this type counts as: MIG devices depend on the GPU model (the GPU Operator's
/// mig-parted config gives `all-1g.10gb` 7 devices on an A100-80GB, p4de, and 4 on an A100-40GB, p4d). Limits,
/// prices per unit, NodeOverlays and the largest-node check all count these units per type.
pub fn units_per_gpu(sharing: Option<&Sharing>, t: &InstanceType) -> u32 {
    match (sharing, t.single_gpu_model()) {
        (Some(Sharing::Mig { config }), Some(gpu)) => MigConfigs::builtin().devices_for(config, &gpu.name, gpu.memory_mib),
        _ => units_per_accelerator(sharing),
    }
}

/// A cluster's NodePools once sized, weighted and sorted (steps 1–5 of the solve): what the overlay, ops and queue
/// plans are built from, before the `ClusterPlan` that holds them all exists.
#[derive(Debug, Clone, Copy)]
pub struct ClusterPools<'a> {
    pub name: &'a str,
    /// EKS Auto Mode: no GPU Operator, and nothing in the cluster exports DCGM metrics (see `ClusterPlan::auto_mode`).
    pub auto_mode: bool,
    /// Every profile of the cluster runs an accelerated AMI (the GPU Operator then leaves out the driver and toolkit).
    pub accelerated_ami: bool,
    /// Sorted by weight, highest first.
    pub pools: &'a [PoolPlan],
}

/// A cap the budget does not let the limit reach: `max-accelerators 32` where the budget buys 24.
#[derive(Debug, Clone, PartialEq)]
pub struct CapUnreached {
    /// The cap as written (accelerators or vCPUs, not slices), at its profile line.
    pub cap: crate::diagnostic::Spanned<u32>,
    /// The smallest budget ($/h, the profile's fixed costs included) with which the common limit reaches the cap.
    pub budget_needed: f64,
}
