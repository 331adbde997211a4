//! What the checks hand the simulator: a cluster's generated objects in its form, and pods placed as gpuplan tells
//! users to place them: the pool's nodeSelector and tolerations (`PoolPlan::pod_placement`) and the workload's
//! accelerators per replica.

use std::borrow::Cow;
use std::path::PathBuf;

use crate::solve::ops::workload::WorkloadPlan;
use crate::render::Manifest;
use crate::simulate::manifests::{self, Manifests};
use crate::simulate::pods::{Pod, PodTerm, PodTopology, Selector, Spread};
use crate::simulate::requirements::{Requirement, Requirements, Toleration};
use crate::simulate::yaml::{Doc, Resources};
use crate::solve::{ClusterPlan, PoolPlan};

/// A cluster's generated NodePools, EC2NodeClasses, NodeOverlays and Kueue objects (`manifests`, the cluster's
/// objects), the DaemonSets of the add-ons they configure and the EKS node DaemonSets the cluster runs
/// (`node_daemons`: its `ClusterPlan::node_daemons`), as `simulate --manifests out/<cluster>` would read them.
pub fn cluster_manifests(manifests: &[Manifest], node_daemons: &[String]) -> Manifests {
    let docs: Vec<Doc> = manifests
        .iter()
        .filter(|m| matches!(m.kind(), "NodePool" | "EC2NodeClass" | "NodeClass" | "NodeOverlay" | "ResourceFlavor" | "ClusterQueue" | "LocalQueue"))
        // The text only locates input errors, which generated (schema-validated) objects do not have.
        .map(|m| Doc { path: PathBuf::from("out").join(&m.path), line: 1, text: String::new(), value: Cow::Borrowed(&m.object) })
        .collect();
    // Generated objects passed schema validation; a parse failure here would be a gpuplan bug.
    let mut out = manifests::manifests(&docs).unwrap_or_default();
    // The add-ons' DaemonSets take their requests from every node they run on, as `simulate` counts them.
    let objects: Vec<&serde_json::Value> = manifests.iter().map(|m| &m.object).collect();
    out.daemon_sets = crate::simulate::daemons::daemon_pods(&crate::simulate::daemons::add_ons(&objects, &[], node_daemons));
    out
}

/// `replicas` pods of `per_replica` accelerators each, placed as gpuplan tells users to place them on `pools`
/// (`solve::workload_placement`: nodeSelector, tolerations, EFA request).
pub fn pool_pods(namespace: &str, name: &str, pools: &[&PoolPlan], per_replica: u32, replicas: u32) -> Vec<Pod> {
    let Some(first) = pools.first() else { return Vec::new() };
    let placement = crate::solve::workload_placement(pools, per_replica);
    let mut node_selector = Requirements::default();
    for (k, v) in &placement.node_selector {
        node_selector.add(k, Requirement::is_in([v.clone()]));
    }
    let tolerations: Vec<Toleration> = placement.tolerations;
    let mut requests = Resources::from([(first.resource().to_string(), per_replica as i128 * 1000), ("pods".to_string(), 1000)]);
    requests.extend(placement.requests.into_iter().map(|(k, v)| (k, v as i128 * 1000)));
    (0..replicas)
        .map(|i| Pod { key: format!("{namespace}/{name}-{i}"), requests: requests.clone(), node_selector: node_selector.clone(), tolerations: tolerations.clone(), ..Pod::default() })
        .collect()
}

/// The PoolPlans of a workload's NodePools.
pub(super) fn workload_pools<'a>(cluster: &'a ClusterPlan, nodepools: &[String]) -> Vec<&'a PoolPlan> {
    cluster.pools.iter().filter(|p| nodepools.contains(&p.name)).collect()
}

/// The pods `simulate_workloads` simulates: every workload of the cluster at max replicas, placed on its pools
/// (the conformance harness writes them as YAML for Karpenter's scheduler).
pub fn workload_pods(cluster: &ClusterPlan) -> Vec<Pod> {
    cluster
        .ops
        .workloads
        .iter()
        .flat_map(|w| replicas(cluster, w, w.replicas_max))
        .collect()
}

/// `count` pods of a workload as its pod spec would request: its pool's placement, its accelerators and its
/// `requests` (cpu, memory).
pub fn replicas(cluster: &ClusterPlan, w: &WorkloadPlan, count: u32) -> Vec<Pod> {
    let mut pods = pool_pods(&w.namespace, &w.name, &workload_pools(cluster, &w.nodepools), w.gpus_per_replica.max(1), count);
    let requests: Resources = w.requests.iter().filter_map(|(k, v)| Some((k.clone(), crate::simulate::yaml::milli(v)?))).collect();
    let topology = topology(w);
    for pod in &mut pods {
        pod.requests.extend(requests.clone());
        pod.topology = topology.clone();
    }
    pods
}

/// The spread gpuplan tells a workload's pods to carry (`PodPlacement::spread`: the serving pools' zone and host
/// preferences, `max-per-node`'s hard host spread or anti-affinity), over its own pods: labelled with its selector,
/// selecting by it.
fn topology(w: &WorkloadPlan) -> Option<Box<PodTopology>> {
    let spread = &w.placement.pod.spread;
    if spread.is_empty() && !w.placement.pod.one_per_node {
        return None;
    }
    let selector = Selector { match_labels: w.selector.clone(), expressions: Vec::new() };
    let anti_affinity = if w.placement.pod.one_per_node {
        vec![PodTerm { key: crate::solve::HOST_KEY.to_string(), selector: Some(selector.clone()), namespaces: std::collections::BTreeSet::from([w.namespace.clone()]) }]
    } else {
        Vec::new()
    };
    let spread = spread
        .iter()
        .map(|s| Spread {
            key: s.topology_key.clone(),
            max_skew: s.max_skew as i32,
            schedule_anyway: s.when_unsatisfiable == "ScheduleAnyway",
            selector: Some(selector.clone()),
            min_domains: None,
            honor_taints: false,
            honor_affinity: true,
        })
        .collect();
    Some(Box::new(PodTopology { namespace: w.namespace.clone(), labels: w.selector.clone(), spread, anti_affinity, ..PodTopology::default() }))
}

/// Whether the pod `key` is one of the workload's replicas (`<namespace>/<name>-<i>`).
pub(super) fn replica_of(key: &str, namespace: &str, name: &str) -> bool {
    key.strip_prefix(&format!("{namespace}/{name}-")).is_some_and(|i| i.chars().all(|c| c.is_ascii_digit()))
}
