//! Checks on the rendered ops objects that a schema cannot express, run by every compile next to the schema
//! validation (a failure is a compile error: nothing is written). They catch a `--templates` override — or a
//! gpuplan bug — that yields objects which pass their CRD but do not work:
//!
//! - a ClusterPolicy whose enabled component has no image (the operator cannot start it: `ops/gpu_operator.rs`);
//! - the prometheus-adapter ConfigMap: `config.yaml` must read as the adapter's config, and every rule must map
//!   series to pods;
//! - every HPA Pods metric must be served by a rule of its cluster's adapter ConfigMap (otherwise the HPA reports
//!   `FailedGetPodsMetric` and never scales);
//! - KEDA's admission webhook on ScaledObjects (`ops/keda.rs`): names, replica bounds, trigger names, and one scaler
//!   (HPA or ScaledObject) per target in a cluster.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::ops::{adapter, gpu_operator, keda};
use crate::render::Manifest;
use crate::validate::Violation;

fn violation(pointer: impl Into<String>, message: impl Into<String>) -> Violation {
    Violation { pointer: pointer.into(), message: message.into() }
}

fn cluster_of(path: &Path) -> PathBuf {
    path.components().next().map(|c| PathBuf::from(c.as_os_str())).unwrap_or_default()
}

/// All violations of the rendered manifests, by file.
pub fn rendered(manifests: &[Manifest]) -> Vec<(PathBuf, Violation)> {
    let mut out = Vec::new();
    for m in manifests {
        match m.kind() {
            "ClusterPolicy" => {
                for (pointer, message) in gpu_operator::check_images(&m.object) {
                    out.push((m.path.clone(), violation(pointer, message)));
                }
            }
            "ConfigMap" if m.object["metadata"]["name"] == adapter::CONFIG_MAP => {
                if let Err(v) = adapter_config(&m.object) {
                    out.extend(v.into_iter().map(|v| (m.path.clone(), v)));
                }
            }
            "HorizontalPodAutoscaler" => {
                for v in hpa_metrics_served(m, manifests) {
                    out.push((m.path.clone(), v));
                }
            }
            keda::KIND => out.extend(keda::check_scaled_object(&m.object).into_iter().map(|v| (m.path.clone(), v))),
            _ => {}
        }
    }
    let mut by_cluster: std::collections::BTreeMap<PathBuf, Vec<Manifest>> = std::collections::BTreeMap::new();
    for m in manifests.iter().filter(|m| matches!(m.kind(), keda::KIND | "HorizontalPodAutoscaler")) {
        by_cluster.entry(cluster_of(&m.path)).or_default().push(m.clone());
    }
    for cluster in by_cluster.values() {
        out.extend(keda::check_cluster(cluster));
    }
    out
}

/// The adapter config of a rendered ConfigMap, or why the adapter could not use it.
pub fn adapter_config(object: &Value) -> Result<adapter::AdapterConfig, Vec<Violation>> {
    let pointer = format!("/data/{}", adapter::CONFIG_KEY);
    let Some(text) = object["data"][adapter::CONFIG_KEY].as_str() else {
        return Err(vec![violation("/data", format!("no `{}` key: prometheus-adapter reads its rules from that file", adapter::CONFIG_KEY))]);
    };
    let config = adapter::parse(text).map_err(|e| vec![violation(&pointer, format!("not a prometheus-adapter config: {e}"))])?;
    let problems: Vec<Violation> = config
        .rules
        .iter()
        .enumerate()
        .flat_map(|(i, r)| adapter::rule_problems(r).into_iter().map(|p| (i, p)).collect::<Vec<_>>())
        .map(|(i, p)| violation(format!("{pointer} rules[{i}]"), p))
        .collect();
    if problems.is_empty() {
        Ok(config)
    } else {
        Err(problems)
    }
}

fn hpa_metrics_served(hpa: &Manifest, manifests: &[Manifest]) -> Vec<Violation> {
    let cluster = cluster_of(&hpa.path);
    let configs: Vec<adapter::AdapterConfig> = manifests
        .iter()
        .filter(|m| m.kind() == "ConfigMap" && m.object["metadata"]["name"] == adapter::CONFIG_MAP && cluster_of(&m.path) == cluster)
        .filter_map(|m| adapter_config(&m.object).ok())
        .collect();
    let metrics = hpa.object["spec"]["metrics"].as_array().cloned().unwrap_or_default();
    let mut out = Vec::new();
    for (i, metric) in metrics.iter().enumerate() {
        let Some(name) = metric["pods"]["metric"]["name"].as_str().filter(|_| metric["type"] == "Pods") else { continue };
        if !configs.iter().flat_map(|c| &c.rules).any(|r| adapter::serves(r, name)) {
            out.push(violation(
                format!("/spec/metrics/{i}/pods/metric/name"),
                format!("no prometheus-adapter rule serves Pods metric `{name}` (ConfigMap {} of this cluster): the HPA would never get a value", adapter::CONFIG_MAP),
            ));
        }
    }
    out
}

/// Objects of one cluster that the GPU Operator running in `operator_namespace` creates itself (the hand-kept
/// [`crate::charts::gpu_operator::OWNED`] table): each is a second writer of one object, which the operator replaces
/// or deletes on every reconcile (a ServiceMonitor loses gpuplan's labels and `honorLabels`, and the alerts fed by it
/// go silent or flap). gpuplan configures the operator's own object instead (Helm values or ClusterPolicy), so this
/// fires on a `--templates` override or a gpuplan bug.
pub fn operator_owned(manifests: &[Manifest], operator_namespace: &str) -> Vec<(PathBuf, Violation)> {
    let objects: Vec<&Value> = manifests.iter().map(|m| &m.object).collect();
    let values = crate::charts::add_ons::rendered_values(&objects, crate::charts::add_ons::GPU_OPERATOR_VALUES);
    manifests
        .iter()
        .filter_map(|m| {
            let metadata = &m.object["metadata"];
            let name = metadata["name"].as_str()?;
            let owned = crate::charts::gpu_operator::owner(m.kind(), metadata["namespace"].as_str(), name, operator_namespace, values.as_ref())?;
            let message = format!(
                "the GPU Operator creates {} {name} itself (NVIDIA/gpu-operator v26.7.0 {}) and overwrites or deletes any other writer's on every reconcile: configure the operator's object (its Helm values or the ClusterPolicy) instead of emitting a rival",
                owned.kind, owned.from
            );
            Some((m.path.clone(), violation("/metadata/name", message)))
        })
        .collect()
}
