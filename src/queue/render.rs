//! KueuePlan → manifests, through the same template environment (and `--templates` overrides) as the pools.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::solve::queue::{FlavorPlan, QueuePlan};
use crate::render::{common_labels, object_path, provenance, Manifest, RenderError, Renderer};
use crate::solve::ClusterPlan;

/// The queue templates, which compile hands to `Renderer::new` after `render::BUILTIN_TEMPLATES`.
pub const TEMPLATES: &[(&str, &str)] = &[
    ("resourceflavor.yaml.j2", include_str!("../../templates/resourceflavor.yaml.j2")),
    ("clusterqueue.yaml.j2", include_str!("../../templates/clusterqueue.yaml.j2")),
    ("localqueue.yaml.j2", include_str!("../../templates/localqueue.yaml.j2")),
];

/// On a ClusterQueue: the pool (or tier) as the profile names it.
pub const POOL_ANNOTATION: &str = "gpuplan.dev/pool";
/// On a ClusterQueue: the quota line as written (a share stays a share when adopted back).
pub const QUOTA_ANNOTATION: &str = "gpuplan.dev/quota";
/// On a ClusterQueue that asked for gang admission.
pub const GANG_ANNOTATION: &str = "gpuplan.dev/gang";
/// The Kueue Configuration that all-or-nothing admission needs (see `compile::kueue_configuration`): the timeout is
/// the pools' cold start (`solve::queue::GANG_COLD_START_SECONDS`).
pub const WAIT_FOR_PODS_READY: &str = "waitForPodsReady: {timeout: 20m, blockAdmission: true}";
/// The Kueue Configuration every cluster with queues needs: Kueue refuses a Workload requesting a resource its
/// ClusterQueue does not cover ("resource ephemeral-storage unavailable in ClusterQueue", kubernetes-sigs/kueue
/// v0.19.2 `pkg/scheduler/flavorassigner/flavorassigner.go` `findFlavorForPodSets`), and the pools' nodes keep
/// their pods' scratch on the ephemeral store (the training classes' NVMe RAID0): with the prefix excluded, Kueue
/// drops the request from the Workload's (`pkg/workload/workload.go` `dropExcludedResources`) and the kubelet alone
/// accounts for it.
pub const EXCLUDE_RESOURCE_PREFIXES: &str = "resources: {excludeResourcePrefixes: [ephemeral-storage]}";
/// What the gang annotation says: Kueue's all-or-nothing admission is the cluster-wide `waitForPodsReady`.
pub const GANG_TEXT: &str = "all-or-nothing admission: needs Kueue's Configuration waitForPodsReady (see the kustomization's prerequisites)";

pub fn render_cluster(renderer: &Renderer, cluster: &ClusterPlan) -> Result<Vec<Manifest>, RenderError> {
    let mut out = Vec::new();
    for f in &cluster.queues.flavors {
        out.push(flavor(renderer, cluster, f)?);
    }
    for q in &cluster.queues.queues {
        out.extend(queue(renderer, cluster, q)?);
    }
    Ok(out)
}

fn flavor(renderer: &Renderer, cluster: &ClusterPlan, f: &FlavorPlan) -> Result<Manifest, RenderError> {
    let annotations = provenance(&f.profile, &f.source, cluster);
    let context = json!({ "labels": common_labels(), "annotations": annotations, "flavor": { "name": f.name, "node_labels": f.node_labels, "tolerations": f.tolerations } });
    Ok(Manifest { path: object_path(&cluster.name, "resourceflavor", &f.name), source: f.source.clone(), object: renderer.render_template("resourceflavor.yaml.j2", &f.name, context)? })
}

/// The ClusterQueue and its LocalQueue.
fn queue(renderer: &Renderer, cluster: &ClusterPlan, q: &QueuePlan) -> Result<[Manifest; 2], RenderError> {
    let mut annotations = provenance(&q.profile, &q.source, cluster);
    let local_annotations = annotations.clone();
    annotations.insert(POOL_ANNOTATION.into(), q.pool.clone());
    annotations.insert(QUOTA_ANNOTATION.into(), q.quota_kdl.clone());
    if q.gang {
        annotations.insert(GANG_ANNOTATION.into(), GANG_TEXT.into());
    }
    let context = json!({
        "labels": common_labels(),
        "annotations": annotations,
        "queue": { "name": q.name, "namespace": q.namespace, "cohort": q.cohort, "preemption": q.preemption, "resource_groups": [resource_group(q)] },
    });
    let cluster_queue = Manifest { path: object_path(&cluster.name, "clusterqueue", &q.name), source: q.source.clone(), object: renderer.render_template("clusterqueue.yaml.j2", &q.name, context)? };
    let context = json!({ "labels": common_labels(), "annotations": local_annotations, "queue": { "name": q.name, "namespace": q.namespace } });
    let path = object_path(&cluster.name, "localqueue", &format!("{}-{}", q.namespace, q.name));
    let local_queue = Manifest { path, source: q.source.clone(), object: renderer.render_template("localqueue.yaml.j2", &q.name, context)? };
    Ok([cluster_queue, local_queue])
}

/// One resource group: every flavor covers the same resources in the same order (the ClusterQueue CRD's rule
/// "flavors must have the same number of resources as the coveredResources", and Kueue's webhook checks names
/// and order), flavors in the pool's fallback order: Kueue tries them in list order.
fn resource_group(q: &QueuePlan) -> Value {
    let flavors: Vec<Value> = q
        .flavors
        .iter()
        .map(|f| {
            let resources: Vec<Value> = f
                .resources
                .iter()
                .map(|r| {
                    let mut v = BTreeMap::from([("name", json!(r.name)), ("nominalQuota", json!(r.nominal))]);
                    if let Some(b) = &r.borrowing_limit {
                        v.insert("borrowingLimit", json!(b));
                    }
                    if let Some(l) = &r.lending_limit {
                        v.insert("lendingLimit", json!(l));
                    }
                    json!(v)
                })
                .collect();
            json!({ "name": f.flavor, "resources": resources })
        })
        .collect();
    json!({ "coveredResources": q.covered_resources(), "flavors": flavors })
}
