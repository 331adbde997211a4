//! The queues of one cluster, resolved against its NodePools: each queue's quota per flavor, the flavors
//! themselves, and the consistency checks between quotas, limits and the budget.
//!
//! Kueue's quota model (kubernetes-sigs/kueue v0.19.2, `site/content/en/docs/concepts/cluster_queue.md`,
//! "Flavors and Resources" and "Flavors and borrowing semantics"): a ClusterQueue has a quota per (flavor, resource); a workload is
//! admitted in the first flavor of the list, in order, that fits; a queue in a cohort may borrow the *unused*
//! nominal quota of the other queues of its cohort, up to its `borrowingLimit`, and lends at most its
//! `lendingLimit`. So borrowing moves quota between the queues of a cohort and never adds to it: what all
//! queues can hold at once in a flavor is Σ nominal quota there — the number checked against the NodePool's
//! limit (E0210) and priced against the budget (E0211).

use std::collections::BTreeMap;

use crate::diagnostic::ErrorCode;
use crate::catalog::cost::round_cents;
use crate::catalog::{AcceleratorKind, Catalog};
use crate::diagnostic::{ProfileDiagnostic, Sources};
use crate::profile::Profile;
use crate::profile::queue::{Amount, Queue};
use crate::simulate::requirements::Toleration;

use super::non_queued::non_queued_use;
use super::ops::workload::WorkloadPlan;
use super::pool::{ClusterPools, PoolPlan, NODEPOOL_LABEL, POOL_LABEL};

/// How long a node of a gang's pool may take from launch to running the gang's pods, which Kueue's
/// `waitForPodsReady.timeout` must not cut short (issue 32, item 3): Karpenter lets a launched node take up to 15 minutes
/// to register before it deletes it as failed (kubernetes-sigs/karpenter v1.14.1
/// `pkg/controllers/nodeclaim/lifecycle/liveness.go`, `registrationTimeout = time.Minute * 15`), and a registered GPU
/// node then needs its device plugin to advertise the accelerators (the GPU Operator's validator runs first): 5 more
/// minutes allowed here. A shorter timeout evicts and requeues a gang whose nodes are still coming up normally,
/// and with `blockAdmission` nothing else is admitted meanwhile.
pub const GANG_COLD_START_SECONDS: u32 = 20 * 60;

/// Everything Kueue needs for one cluster.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KueuePlan {
    /// Sorted by name.
    pub queues: Vec<QueuePlan>,
    /// One per NodePool some queue uses, sorted by name.
    pub flavors: Vec<FlavorPlan>,
}

impl KueuePlan {
    /// Whether some queue asks for all-or-nothing admission (Kueue's `waitForPodsReady` then has to be on).
    pub fn gang(&self) -> bool {
        self.queues.iter().any(|q| q.gang)
    }
}

/// A `ResourceFlavor`: the nodes of one NodePool. Kueue adds `nodeLabels` to an admitted pod's nodeSelector and
/// `tolerations` to its tolerations (`apis/kueue/v1beta2/resourceflavor_types.go`, `ResourceFlavorSpec`), so
/// a pod admitted in this flavor's quota lands on this NodePool and nowhere else.
#[derive(Debug, Clone, PartialEq)]
pub struct FlavorPlan {
    /// The NodePool's name.
    pub name: String,
    pub profile: String,
    pub source: String,
    /// The NodePool's template labels plus `karpenter.sh/nodepool` (which tells the tiers of a pool apart).
    pub node_labels: BTreeMap<String, String>,
    /// For every NoSchedule/NoExecute taint of the NodePool, as the pool's workloads get them.
    pub tolerations: Vec<Toleration>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct QueuePlan {
    pub name: String,
    pub namespace: String,
    pub profile: String,
    pub source: String,
    /// The pool (or tier) as written.
    pub pool: String,
    /// The quota line as written (`gpus share="50%" borrowing-limit=8`), for the annotation adopt reads back.
    pub quota_kdl: String,
    pub accelerator: AcceleratorKind,
    pub efa: bool,
    /// In the pool's fallback order (tier order).
    pub flavors: Vec<FlavorQuota>,
    /// The pool's NodePools left out of a share because the non-queued workloads fill them (`nodepools_with_room`).
    pub full: Vec<String>,
    pub cohort: Option<String>,
    pub gang: bool,
    /// withinClusterQueue, reclaimWithinCohort, borrowWithinCohort.policy.
    pub preemption: [String; 3],
}

impl QueuePlan {
    /// The resources every flavor of this queue covers, in `coveredResources` order.
    pub fn covered_resources(&self) -> Vec<&'static str> {
        let mut out = vec!["cpu", "memory", self.accelerator.resource()];
        if self.efa {
            out.push(crate::catalog::efa::EFA_RESOURCE);
        }
        out
    }
}

/// One flavor of a queue: its accelerator quota and what it costs at worst.
#[derive(Debug, Clone, PartialEq)]
pub struct FlavorQuota {
    /// The ResourceFlavor (= NodePool) name.
    pub flavor: String,
    /// The NodePool's limit, in the same units.
    pub limit: u32,
    /// What the cluster's non-queued workloads hold of the NodePool at max replicas (`non_queued`): a share divides
    /// the limit minus this.
    pub non_queued: u32,
    /// Accelerators on the NodePool's largest node: the size of the whole-node job a quota is measured in.
    pub node: u32,
    pub nominal: u32,
    pub borrowing_limit: Option<u32>,
    pub lending_limit: Option<u32>,
    /// Per covered resource (`covered_resources` order): nominal, borrowing limit, lending limit as quantities.
    pub resources: Vec<ResourceQuota>,
    /// Worst-case $/h of the NodePool holding the nominal quota, and nominal + borrowing (the pool's price basis).
    pub nominal_usd_per_hour: f64,
    pub reach_usd_per_hour: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ResourceQuota {
    pub name: &'static str,
    pub nominal: String,
    pub borrowing_limit: Option<String>,
    pub lending_limit: Option<String>,
}

/// The cluster's queues against its pools; E0205 (a name twice in the cluster), E0208 (lending above nominal
/// once shares are resolved), E0210 (Σ nominal above a NodePool's limit), E0211 (over the budget).
pub fn plan_cluster(cluster: ClusterPools, workloads: &[WorkloadPlan], profiles: &[&Profile], sources: &Sources, catalog: &Catalog) -> Result<KueuePlan, Vec<ProfileDiagnostic>> {
    let mut diagnostics = Vec::new();
    let non_queued = non_queued_use(cluster.pools, workloads);
    let mut plan = KueuePlan::default();
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for profile in profiles {
        let source = sources.source_name(profile.file).to_string();
        for q in &profile.queues {
            if let Some(other) = seen.insert(&q.name.value, &profile.name.value) {
                diagnostics.push(sources.error(q.name.span, ErrorCode::E0205, format!("queue `{}` is also defined by profile `{other}` in cluster `{}`", q.name.value, cluster.name)).help("a queue is a cluster-wide ClusterQueue: rename one"));
                continue;
            }
            let all = nodepools_of(cluster, &profile.name.value, &q.pool.value);
            let nodepools = nodepools_with_room(q, all.clone(), &non_queued);
            if let Some(d) = too_many_taints(q, &nodepools, sources) {
                diagnostics.push(d);
                continue;
            }
            let mut queue = queue_plan(q, &profile.name.value, &source, &nodepools, &non_queued, catalog);
            queue.full = all.iter().filter(|p| !nodepools.iter().any(|n| n.name == p.name)).map(|p| p.name.clone()).collect();
            diagnostics.extend(lending_above_nominal(q, &queue, sources));
            plan.queues.push(queue);
            for p in nodepools {
                if !plan.flavors.iter().any(|f| f.name == p.name) {
                    plan.flavors.push(flavor_plan(p));
                }
            }
        }
    }
    plan.queues.sort_by(|a, b| a.name.cmp(&b.name));
    plan.flavors.sort_by(|a, b| a.name.cmp(&b.name));
    diagnostics.extend(quota_above_limit(&plan, profiles, sources));
    diagnostics.extend(over_budget(cluster, &plan, profiles, sources));
    if diagnostics.is_empty() { Ok(plan) } else { Err(diagnostics) }
}

/// The NodePools of a queue's pool (every tier) or the one tier it names, in fallback order.
fn nodepools_of<'c>(cluster: ClusterPools<'c>, profile: &str, pool: &str) -> Vec<&'c PoolPlan> {
    let mut out: Vec<&PoolPlan> = cluster.pools.iter().filter(|p| p.profile == profile && (p.pool == pool || p.name == pool)).collect();
    out.sort_by_key(|p| p.tier_index);
    out
}

/// A ResourceFlavor holds at most 8 nodeLabels and 8 tolerations (the CRD's `maxProperties`/`maxItems`).
pub const FLAVOR_MAX: usize = 8;

/// `karpenter.sh/nodepool` alone picks the NodePool's nodes; the pool's label and then its other labels (in key
/// order) follow while the CRD's 8 allow, so the flavor reads like the NodePool it stands for.
fn flavor_plan(p: &PoolPlan) -> FlavorPlan {
    let mut node_labels = BTreeMap::from([(NODEPOOL_LABEL.to_string(), p.name.clone())]);
    let pool_label = p.labels.get_key_value(POOL_LABEL);
    for (k, v) in pool_label.into_iter().chain(&p.labels) {
        if node_labels.len() < FLAVOR_MAX {
            node_labels.insert(k.clone(), v.clone());
        }
    }
    let tolerations = p.pod_placement(1).tolerations;
    FlavorPlan { name: p.name.clone(), profile: p.profile.clone(), source: p.source.clone(), node_labels, tolerations }
}

/// A share of a NodePool the non-queued workloads fill is a share of nothing: such flavors are left out (Kueue would
/// admit nothing there) while another tier of the pool has room. Counts stay as written in every flavor.
fn nodepools_with_room<'c>(q: &Queue, nodepools: Vec<&'c PoolPlan>, non_queued: &BTreeMap<String, u32>) -> Vec<&'c PoolPlan> {
    let room = |p: &&PoolPlan| p.limit > non_queued.get(&p.name).copied().unwrap_or(0);
    if !matches!(q.quota.value.nominal.value, Amount::Percent(_)) || !nodepools.iter().any(room) {
        return nodepools;
    }
    nodepools.into_iter().filter(room).collect()
}

fn queue_plan(q: &Queue, profile: &str, source: &str, nodepools: &[&PoolPlan], non_queued: &BTreeMap<String, u32>, catalog: &Catalog) -> QueuePlan {
    let quota = &q.quota.value;
    // Every flavor covers the same resources (Kueue's rule): EFA interfaces when any tier is an EFA pool.
    let efa = nodepools.iter().any(|p| p.efa);
    let flavors: Vec<FlavorQuota> = nodepools.iter().map(|p| flavor_quota(q, p, non_queued.get(&p.name).copied().unwrap_or(0), catalog, efa)).collect();
    let mut quota_kdl = format!("{} {}={}", quota.node, if matches!(quota.nominal.value, Amount::Percent(_)) { "share" } else { "nominal" }, quota.nominal.kdl());
    if let Some(b) = &quota.borrowing_limit {
        quota_kdl.push_str(&format!(" borrowing-limit={}", b.kdl()));
    }
    if let Some(l) = &quota.lending_limit {
        quota_kdl.push_str(&format!(" lending-limit={}", l.kdl()));
    }
    let p = &q.preemption;
    QueuePlan {
        name: q.name.value.clone(),
        namespace: q.namespace.value.clone(),
        profile: profile.to_string(),
        source: source.to_string(),
        pool: q.pool.value.clone(),
        quota_kdl,
        accelerator: nodepools.first().map_or(AcceleratorKind::Nvidia, |p| p.accelerator),
        efa,
        flavors,
        full: Vec::new(),
        cohort: q.cohort.as_ref().map(|c| c.value.clone()),
        gang: q.gang.as_ref().is_some_and(|g| g.value),
        preemption: [p.within_cluster_queue().to_string(), p.reclaim_within_cohort().to_string(), p.borrow_within_cohort().to_string()],
    }
}

/// A share divides what the NodePool has left once the non-queued workloads hold theirs (`non_queued`), so admitted
/// jobs and those workloads fit together.
fn flavor_quota(q: &Queue, p: &PoolPlan, non_queued: u32, catalog: &Catalog, efa: bool) -> FlavorQuota {
    let quota = &q.quota.value;
    let room = p.limit.saturating_sub(non_queued);
    let nominal = quota.nominal.of(room);
    let borrowing_limit = quota.borrowing_limit.as_ref().map(|b| b.of(room));
    let lending_limit = quota.lending_limit.as_ref().map(|l| l.of(room));
    let per_node = NodeResources::of(p, catalog);
    let covered = ["cpu", "memory", p.resource(), crate::catalog::efa::EFA_RESOURCE];
    let resources = covered
        .into_iter()
        .take(if efa { 4 } else { 3 })
        .enumerate()
        .map(|(i, name)| {
            let quantity = |units: u32| per_node.quantity(i, units);
            ResourceQuota { name, nominal: quantity(nominal), borrowing_limit: borrowing_limit.map(quantity), lending_limit: lending_limit.map(quantity) }
        })
        .collect();
    FlavorQuota {
        flavor: p.name.clone(),
        limit: p.limit,
        non_queued,
        node: p.largest_node(),
        nominal,
        borrowing_limit,
        lending_limit,
        resources,
        nominal_usd_per_hour: round_cents(p.worst_case_at(nominal)),
        reach_usd_per_hour: round_cents(p.worst_case_at(nominal + borrowing_limit.unwrap_or(0))),
    }
}

/// The cpu, memory and EFA interfaces that come with one schedulable accelerator on the pool's richest type in
/// each (vCPUs and memory as EC2 reports them; allocatable is less): a cpu or memory quota derived from them never
/// stops a workload the accelerator quota admits, and Kueue needs every resource a pod requests covered by the
/// ClusterQueue (kueue v0.19.2 `pkg/scheduler/flavorassigner/flavorassigner.go`: a pod set requesting a resource
/// no resource group covers gets "resource … unavailable in ClusterQueue" and is not admitted). EFA pools also
/// cover `vpc.amazonaws.com/efa`, which their pods request (`solve::PoolPlan::efa_request`).
struct NodeResources {
    types: Vec<TypeResources>,
}

/// One candidate type's accelerators (at least 1), vCPUs, memory and EFA interfaces.
struct TypeResources {
    units: u32,
    vcpu: u32,
    memory_mib: u64,
    efa: u32,
}

impl NodeResources {
    fn of(p: &PoolPlan, catalog: &Catalog) -> NodeResources {
        let types = p
            .candidates
            .iter()
            .map(|c| {
                let memory = catalog.get(&c.name).map_or(0, |t| t.memory_mib);
                TypeResources { units: c.units.max(1), vcpu: c.vcpu, memory_mib: memory, efa: crate::catalog::efa::interfaces(&c.name).unwrap_or(0) }
            })
            .collect();
        NodeResources { types }
    }

    /// Resource `i` (cpu, memory, accelerator, EFA) for `units` accelerators, as a canonical quantity.
    fn quantity(&self, i: usize, units: u32) -> String {
        let most = |per: &dyn Fn(&TypeResources) -> u64| self.types.iter().map(|t| (u64::from(units) * per(t)).div_ceil(u64::from(t.units))).max().unwrap_or(0);
        match i {
            0 => most(&|t| u64::from(t.vcpu)).to_string(),
            1 => mebibytes(most(&|t| t.memory_mib)),
            2 => units.to_string(),
            _ => most(&|t| u64::from(t.efa)).to_string(),
        }
    }
}

/// MiB as the API server writes the quantity back (canonical form: the largest binary suffix that keeps an
/// integer, apimachinery `resource.Quantity.String`), so GitOps sees no drift: 2048 → `2Gi`, 1536 → `1536Mi`.
pub fn mebibytes(mib: u64) -> String {
    if mib == 0 {
        return "0".into();
    }
    let (mut value, mut suffix) = (mib, 0);
    const SUFFIXES: [&str; 5] = ["Mi", "Gi", "Ti", "Pi", "Ei"];
    while value % 1024 == 0 && suffix + 1 < SUFFIXES.len() {
        value /= 1024;
        suffix += 1;
    }
    format!("{value}{}", SUFFIXES[suffix])
}

/// E0212: a NodePool with more NoSchedule/NoExecute taints than a ResourceFlavor has room for tolerations.
fn too_many_taints(q: &Queue, nodepools: &[&PoolPlan], sources: &Sources) -> Option<ProfileDiagnostic> {
    let p = nodepools.iter().find(|p| p.pod_placement(1).tolerations.len() > FLAVOR_MAX)?;
    let n = p.pod_placement(1).tolerations.len();
    Some(
        sources
            .error(q.pool.span, ErrorCode::E0212, format!("NodePool `{}` has {n} NoSchedule/NoExecute taints, more than the {FLAVOR_MAX} tolerations a Kueue ResourceFlavor holds", p.name))
            .help("drop some of the pool's `taint`s: Kueue could not add a toleration for each to the pods it admits"),
    )
}

/// E0208 once a share resolves: a lending limit above the queue's nominal quota in some flavor.
fn lending_above_nominal(q: &Queue, plan: &QueuePlan, sources: &Sources) -> Option<ProfileDiagnostic> {
    let l = q.quota.lending_limit.as_ref()?;
    let f = plan.flavors.iter().find(|f| f.lending_limit.is_some_and(|l| l > f.nominal))?;
    Some(
        sources
            .error(l.span, ErrorCode::E0208, format!("queue `{}` lends {} {} in flavor `{}`, more than its nominal quota of {} there", plan.name, f.lending_limit.unwrap_or(0), plan.accelerator.resource(), f.flavor, f.nominal))
            .help("a queue lends at most its own nominal quota (Kueue rejects the ClusterQueue otherwise): lower lending-limit"),
    )
}

/// E0210: the queues' nominal quotas in a flavor add up to more than its NodePool may launch, so admitted work
/// would wait for nodes that never come. At the first queue's quota, naming every queue and both numbers.
fn quota_above_limit(plan: &KueuePlan, profiles: &[&Profile], sources: &Sources) -> Vec<ProfileDiagnostic> {
    let mut per_flavor: BTreeMap<&str, (u32, u32, Vec<String>)> = BTreeMap::new();
    for q in &plan.queues {
        for f in &q.flavors {
            let e = per_flavor.entry(&f.flavor).or_insert((0, f.limit, Vec::new()));
            e.0 += f.nominal;
            e.2.push(format!("{} {}", q.name, f.nominal));
        }
    }
    let mut out = Vec::new();
    for (flavor, (total, limit, queues)) in per_flavor.into_iter().filter(|(_, (t, l, _))| t > l) {
        let first = plan.queues.iter().find(|q| q.flavors.iter().any(|f| f.flavor == flavor)).expect("a flavor comes from a queue");
        let Some(span) = queue_of(profiles, &first.name).map(|q| q.quota.nominal.span) else { continue };
        let resource = first.accelerator.resource();
        out.push(
            sources
                .error(span, ErrorCode::E0210, format!("the queues' nominal quotas in flavor `{flavor}` add up to {total} {resource}, above NodePool `{flavor}`'s limit of {limit} ({})", queues.join(", ")))
                .label(format!("Σ nominal {total} > limit {limit}"))
                .help(format!("lower the queues' nominal quotas (share=\"…%\" divides what the non-queued workloads leave of the limit) or raise the pool's limit to {total}: admitted jobs would wait for nodes Karpenter may not launch")),
        );
    }
    out
}

/// E0211: what a profile's queues can hold at once (Σ nominal per flavor: borrowing only moves quota within a
/// cohort), priced as the budget check prices a NodePool at a limit (`PoolPlan::worst_case_at`: spot at its
/// ceiling, reservations at their fixed cost), above the profile's budget.
fn over_budget(cluster: ClusterPools, plan: &KueuePlan, profiles: &[&Profile], sources: &Sources) -> Vec<ProfileDiagnostic> {
    let mut out = Vec::new();
    for profile in profiles {
        let Some(budget) = &profile.budget_usd_per_hour else { continue };
        let mut held: BTreeMap<&str, u32> = BTreeMap::new();
        for q in plan.queues.iter().filter(|q| q.profile == profile.name.value) {
            for f in &q.flavors {
                *held.entry(&f.flavor).or_default() += f.nominal;
            }
        }
        let cost: f64 = held.iter().filter_map(|(f, n)| cluster.pools.iter().find(|p| p.name == *f).map(|p| p.worst_case_at(*n))).sum();
        let cost = round_cents(cost);
        if cost > budget.value + 1e-9 {
            let breakdown: Vec<String> = held.iter().map(|(f, n)| format!("{f} {n}")).collect();
            out.push(
                sources
                    .error(budget.span, ErrorCode::E0211, format!("the queues of profile `{}` can admit work costing ${cost:.2}/h at worst ({}), above its budget of ${:.2}/h", profile.name.value, breakdown.join(", "), budget.value))
                    .label(format!("queues ${cost:.2}/h > budget ${:.2}/h", budget.value))
                    .help("lower the queues' nominal quotas until Σ nominal per NodePool fits its limit (the limits are sized from the budget)"),
            );
        }
    }
    out
}

fn queue_of<'p>(profiles: &[&'p Profile], name: &str) -> Option<&'p Queue> {
    profiles.iter().flat_map(|p| &p.queues).find(|q| q.name.value == name)
}

#[cfg(test)]
mod tests {
    use super::mebibytes;

    /// apimachinery writes a binary quantity with the largest suffix that keeps it whole.
    #[test]
    fn memory_quotas_are_written_in_canonical_form() {
        assert_eq!(mebibytes(2048), "2Gi");
        assert_eq!(mebibytes(1536), "1536Mi");
        assert_eq!(mebibytes(2 * 1024 * 1024), "2Ti");
        assert_eq!(mebibytes(0), "0");
    }
}
