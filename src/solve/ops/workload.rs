//! A `workload` block as the solver plans it ([`WorkloadPlan`]): the NodePools it runs on, where its pods must go,
//! its PodDisruptionBudget, and its HPA or KEDA ScaledObject (`ops::render` writes them, `ops::alerts` watches them).

use std::collections::BTreeMap;

use crate::profile::monitoring::Monitoring;
use crate::profile::ops::{IntOrPercent, PdbBudget, Workload};
use crate::profile::{Profile, Sharing};
use crate::solve::pool::{workload_placement, PodPlacement, PoolPlan};

use super::keda::{KedaInputs, KedaPlan};
use super::metrics::{gpu_metric, quantity};
use super::scaling::{HpaPlan, ScalingStyle};

#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadPlan {
    pub name: String,
    pub namespace: String,
    pub profile: String,
    pub source: String,
    /// The pool as written and the NodePools it stands for.
    pub pool: String,
    pub nodepools: Vec<String>,
    /// Where the pods must be placed to land on that pool only.
    pub placement: Placement,
    /// The GPU utilization metric of the pool (percent, or a 0–1 ratio on MIG pools).
    pub metric: String,
    /// scaleTargetRef kind.
    pub kind: String,
    pub selector: BTreeMap<String, String>,
    pub pdb: Option<PdbBudget>,
    /// None when KEDA scales the workload: KEDA creates and owns the HPA of its ScaledObject (see `keda.rs`).
    pub hpa: Option<HpaPlan>,
    /// The KEDA ScaledObject, for a workload that scales to zero or on a trigger (never together with `hpa`).
    pub keda: Option<KedaPlan>,
    pub replicas_min: u32,
    pub replicas_max: u32,
    pub gpus_per_replica: u32,
    /// `max-per-node`: at most this many replicas on one node.
    pub max_per_node: Option<u32>,
    /// CPU and memory per replica as the profile wrote them (`requests cpu=… memory=…`), Kubernetes quantities.
    pub requests: BTreeMap<String, String>,
}

/// Where a workload's pods must go to land on its pool and nowhere else: the pool label (`gpuplan.dev/pool:
/// <pool>` on every tier), a toleration for every taint of the pool's NodePools (the pool taint on pools whose
/// preset is not `general`, the accelerator's, the profile's own such as `workload=training`) and, on EFA pools,
/// the EFA interfaces to request: the same list `explain` prints under "pods need".
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// The profile's pool (a tier name resolves to its pool).
    pub pool: String,
    pub pod: PodPlacement,
}

impl Placement {
    /// One line for annotations and alert texts.
    pub fn describe(&self) -> String {
        self.pod.describe()
    }
}

impl WorkloadPlan {
    /// A PromQL regex for the names of the workload's pods: a Deployment's are `<name>-<pod-template-hash>-<5
    /// chars>` (ReplicaSet name + suffix), a StatefulSet's `<name>-<ordinal>`. Narrow enough that a workload
    /// named `<name>-x` does not match.
    pub fn pod_regex(&self) -> String {
        let name = self.name.replace('.', "\\\\.");
        match self.kind.as_str() {
            "StatefulSet" => format!("{name}-[0-9]+"),
            _ => format!("{name}-[a-z0-9]{{1,10}}-[a-z0-9]{{5}}"),
        }
    }

    /// The PromQL selector of the workload's pods.
    pub fn pod_selector(&self) -> String {
        format!("namespace=\"{}\",pod=~\"{}\"", self.namespace, self.pod_regex())
    }
}

/// Default when the profile gives no `disruption-budget`: one pod at a time, for workloads that can have
/// more than one replica.
///
/// Also the one form a workload that scales to zero gets (E0222 refuses min-available there). The disruption
/// controller counts the expected pods from the target's scale (`spec.replicas`): at 0 replicas there is nothing to
/// evict, and at 1 replica `maxUnavailable: 1` still allows the eviction, whereas `minAvailable: 1` (or any
/// percentage, rounded up) allows none. Kubernetes' "Specifying a Disruption Budget for your Application"
/// (kubernetes.io/docs/tasks/run-application/configure-pdb/): "If you set minAvailable to 100% or the number of
/// replicas … you are requiring zero voluntary evictions. When you set zero voluntary evictions for a workload object
/// such as ReplicaSet, then you cannot successfully drain a Node running one of those Pods." A scale-to-zero workload
/// sits at one replica whenever its trigger wakes it from zero, so min-available would block Karpenter's drains then.
pub fn default_pdb(replicas_max: u32) -> Option<PdbBudget> {
    (replicas_max >= 2).then_some(PdbBudget::MaxUnavailable(IntOrPercent::Int(1)))
}

/// The NodePools a workload runs on: every tier of its pool, or the one tier it names.
pub fn nodepools_of<'c>(pools: &'c [PoolPlan], profile: &Profile, w: &Workload) -> Vec<&'c PoolPlan> {
    pools.iter().filter(|p| p.profile == profile.name.value && (p.pool == w.pool.value || p.name == w.pool.value)).collect()
}

/// The plan of one workload of `profile` on its NodePools (as [`nodepools_of`] finds them).
pub fn plan_workload(w: &Workload, profile: &Profile, source: &str, nodepools: &[&PoolPlan], monitoring: &Monitoring) -> WorkloadPlan {
    let training = crate::profile::is_training_pool(&profile.pools, &w.pool.value);
    let mig = nodepools.iter().any(|p| matches!(p.sharing, Some(Sharing::Mig { .. })));
    let metric = w.autoscale.as_ref().and_then(|a| a.value.metric.clone()).unwrap_or_else(|| gpu_metric(mig).to_string());
    // Only a workload that asks for `autoscale` gets an HPA: scaling down a notebook server or a trainer
    // that never asked for it kills sessions and steps. A workload KEDA scales gets none (KEDA owns the HPA).
    let style = if training { ScalingStyle::Training } else { ScalingStyle::Inference };
    let hpa = w.autoscale.as_ref().filter(|_| !w.keda()).map(|a| HpaPlan {
        min: w.replicas_min.value,
        max: w.replicas_max.value,
        metric: metric.clone(),
        target_utilization: a.value.gpu_utilization,
        target_quantity: quantity(&metric, a.value.gpu_utilization),
        style,
    });
    // As the solver labelled and tainted the workload's NodePools (a tier name resolves to its pool).
    let pool_name = nodepools.first().map_or_else(|| w.pool.value.clone(), |p| p.pool.clone());
    let mut pod = workload_placement(nodepools, w.gpus_per_replica.value);
    // `max-per-node` replaces the serving pools' host preference: 1 by a required anti-affinity (a strict cap), N by
    // a hard host spread of skew N.
    if let Some(n) = &w.max_per_node {
        pod.spread.retain(|s| s.topology_key != crate::solve::HOST_KEY);
        match n.value {
            1 => pod.one_per_node = true,
            n => pod.spread.push(crate::solve::SpreadAdvice::max_per_node(n)),
        }
    }
    let mut names: Vec<String> = nodepools.iter().map(|p| p.name.clone()).collect();
    names.sort();
    let mut plan = WorkloadPlan {
        name: w.name.value.clone(),
        namespace: w.namespace.value.clone(),
        profile: profile.name.value.clone(),
        source: source.to_string(),
        pool: w.pool.value.clone(),
        nodepools: names,
        placement: Placement { pool: pool_name, pod },
        metric: metric.clone(),
        kind: w.kind.value.clone(),
        selector: w.selector.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect(),
        pdb: w.disruption_budget.as_ref().map(|b| b.value).or_else(|| default_pdb(w.replicas_max.value)),
        hpa,
        keda: None,
        replicas_min: w.replicas_min.value,
        replicas_max: w.replicas_max.value,
        gpus_per_replica: w.gpus_per_replica.value,
        max_per_node: w.max_per_node.as_ref().map(|m| m.value),
        requests: w.requests.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect(),
    };
    if w.keda() {
        let triggers: Vec<crate::profile::ops::Trigger> = w.triggers.iter().map(|t| t.value.clone()).collect();
        plan.keda = Some(KedaPlan::new(&KedaInputs {
            min: w.replicas_min.value,
            max: w.replicas_max.value,
            scale_to_zero: w.scale_to_zero.as_ref().map(|s| s.value),
            triggers: &triggers,
            gpu: w.autoscale.as_ref().map(|a| (metric.as_str(), a.value.gpu_utilization)),
            pod_selector: &plan.pod_selector(),
            server_address: &monitoring.prometheus_url(),
            style,
        }));
    }
    plan
}
