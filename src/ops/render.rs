//! OpsPlan → manifests, through the same template environment (and `--templates` overrides) as the pools.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::ops::{adapter, addons};
use crate::ops::gpu_operator::{CLUSTER_POLICY_NAME, DEVICE_PLUGIN_CONFIG_MAP, MIG_PARTED_CONFIG_MAP};
use crate::ops::keda::KedaPlan;
use crate::ops::workload::{pdb_field, HpaPlan, WorkloadPlan};
use crate::render::{common_labels, object_path, provenance, to_yaml, Manifest, RenderError, Renderer};
use crate::solve::ClusterPlan;

/// The ops templates, appended to `render::BUILTIN_TEMPLATES`.
pub const TEMPLATES: &[(&str, &str)] = &[
    ("poddisruptionbudget.yaml.j2", include_str!("../../templates/poddisruptionbudget.yaml.j2")),
    ("horizontalpodautoscaler.yaml.j2", include_str!("../../templates/horizontalpodautoscaler.yaml.j2")),
    ("scaledobject.yaml.j2", include_str!("../../templates/scaledobject.yaml.j2")),
    ("prometheusrule.yaml.j2", include_str!("../../templates/prometheusrule.yaml.j2")),
    ("servicemonitor.yaml.j2", include_str!("../../templates/servicemonitor.yaml.j2")),
    ("clusterpolicy.yaml.j2", include_str!("../../templates/clusterpolicy.yaml.j2")),
    ("device-plugin-configmap.yaml.j2", include_str!("../../templates/device-plugin-configmap.yaml.j2")),
    ("prometheus-adapter-configmap.yaml.j2", include_str!("../../templates/prometheus-adapter-configmap.yaml.j2")),
    ("helm-values-configmap.yaml.j2", include_str!("../../templates/helm-values-configmap.yaml.j2")),
];

/// On the PrometheusRule: the profile whose `monitoring` block the cluster uses (absent when none has one).
pub const MONITORING_PROFILE_ANNOTATION: &str = "gpuplan.dev/monitoring-profile";

/// Cluster-wide objects carry all the cluster's profiles.
fn cluster_annotations(cluster: &ClusterPlan) -> BTreeMap<String, String> {
    let profiles: Vec<&str> = cluster.profiles.iter().map(|p| p.name.as_str()).collect();
    let sources: Vec<&str> = cluster.profiles.iter().map(|p| p.source.as_str()).collect();
    provenance(&profiles.join(","), &sources.join(","), cluster)
}

fn labels_with(extra: &BTreeMap<String, String>) -> Value {
    let mut labels = common_labels();
    for (k, v) in extra {
        labels[k] = json!(v);
    }
    labels
}

pub fn render_cluster(renderer: &Renderer, cluster: &ClusterPlan) -> Result<Vec<Manifest>, RenderError> {
    let ops = &cluster.ops;
    let mut out = Vec::new();
    let path = |kind: &str, name: &str| -> PathBuf { object_path(&cluster.name, kind, name) };

    for w in &ops.workloads {
        let annotations = provenance(&w.profile, &w.source, cluster);
        let mut annotations = annotations;
        annotations.insert("gpuplan.dev/pool".into(), w.pool.clone());
        annotations.insert("gpuplan.dev/nodepools".into(), w.nodepools.join(","));
        annotations.insert("gpuplan.dev/placement".into(), format!("pods need {} to run on pool {} only", w.placement.describe(), w.placement.pool));
        let workload = json!({ "name": w.name, "namespace": w.namespace, "kind": w.kind, "selector": w.selector });
        if let Some(pdb) = w.pdb {
            let (field, value) = pdb_field(pdb);
            out.push(Manifest {
                path: path("poddisruptionbudget", &format!("{}-{}", w.namespace, w.name)),
                source: w.source.clone(),
                object: renderer.render_template(
                    "poddisruptionbudget.yaml.j2",
                    &w.name,
                    json!({ "labels": common_labels(), "annotations": annotations, "workload": workload, "pdb": { "field": field, "value": value } }),
                )?,
            });
        }
        if let Some(hpa) = &w.hpa {
            let mut annotations = annotations.clone();
            let unit = if crate::ops::metric_is_ratio(&hpa.metric) { "a 0–1 ratio" } else { "percent" };
            annotations.insert(
                "gpuplan.dev/metric".into(),
                format!(
                    "{} (dcgm-exporter, {unit}; target {}% = {}) served per pod by prometheus-adapter from ConfigMap {}/{}",
                    hpa.metric,
                    hpa.target_utilization,
                    hpa.target_quantity,
                    ops.monitoring.adapter_namespace(),
                    adapter::CONFIG_MAP
                ),
            );
            out.push(Manifest {
                path: path("horizontalpodautoscaler", &format!("{}-{}", w.namespace, w.name)),
                source: w.source.clone(),
                object: renderer.render_template(
                    "horizontalpodautoscaler.yaml.j2",
                    &w.name,
                    json!({
                        "labels": common_labels(),
                        "annotations": annotations,
                        "workload": workload,
                        "hpa": { "min": hpa.min, "max": hpa.max, "metric": hpa.metric, "target": hpa.target_quantity, "behavior": hpa.behavior() },
                    }),
                )?,
            });
        }
        if let Some(keda) = &w.keda {
            out.push(scaled_object(renderer, cluster, w, keda, &annotations, &workload)?);
        }
    }

    let labels = labels_with(&ops.monitoring.labels);
    let annotations = cluster_annotations(cluster);
    // Derived here rather than kept in the plan: the rules' text is the bulk of the PrometheusRule, and a plan of
    // 10,000 profiles held 48 MB of it until the end of the compile.
    let alerts = crate::ops::alerts::plan(cluster, &ops.monitoring, &ops.workloads);
    let groups: Vec<Value> = alerts
        .groups
        .iter()
        .map(|g| {
            json!({
                "name": g.name,
                "rules": g.rules.iter().map(|r| json!({ "alert": r.alert, "expr": r.expr, "for": r.for_, "labels": r.labels, "annotations": r.annotations })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let rule_name = format!("gpuplan-{}", cluster.name);
    // Which profile's `monitoring` block applies (the others list every profile of the cluster): adopt puts it back.
    let mut rule_annotations = annotations.clone();
    if let Some((profile, _)) = &ops.monitoring_from {
        rule_annotations.insert(MONITORING_PROFILE_ANNOTATION.into(), profile.clone());
    }
    out.push(Manifest {
        path: path("prometheusrule", &rule_name),
        source: crate::layout::GPUPLAN_SOURCE.into(),
        object: renderer.render_template(
            "prometheusrule.yaml.j2",
            &rule_name,
            json!({ "name": rule_name, "namespace": ops.monitoring.namespace, "labels": labels, "annotations": rule_annotations, "groups": groups }),
        )?,
    });

    // EKS Auto Mode runs Karpenter in the AWS-managed control plane: there is no Karpenter pod to scrape.
    let mut monitors = Vec::new();
    if !cluster.auto_mode {
        monitors.push(json!({
            "name": "karpenter",
            "namespace": ops.monitoring.karpenter_namespace,
            "match_labels": { "app.kubernetes.io/name": "karpenter" },
            "port": "http-metrics",
            "honor_labels": false,
        }));
    }
    if ops.dcgm_service_monitor {
        monitors.push(json!({
            "name": "nvidia-dcgm-exporter",
            "namespace": ops.monitoring.dcgm_namespace,
            "match_labels": { "app": "nvidia-dcgm-exporter" },
            "port": "gpu-metrics",
            // dcgm-exporter labels each series with the pod/namespace using the GPU; without honorLabels
            // Prometheus renames them exported_pod/exported_namespace and sets the exporter's own.
            "honor_labels": true,
        }));
    }
    for monitor in monitors {
        let name = monitor["name"].as_str().unwrap_or_default().to_string();
        out.push(Manifest {
            path: path("servicemonitor", &name),
            source: crate::layout::GPUPLAN_SOURCE.into(),
            object: renderer.render_template(
                "servicemonitor.yaml.j2",
                &name,
                json!({ "labels": labels, "annotations": annotations, "monitor": monitor }),
            )?,
        });
    }

    if let Some(config) = adapter::config(&ops.workloads) {
        let name = adapter::CONFIG_MAP;
        let data = BTreeMap::from([(adapter::CONFIG_KEY.to_string(), to_yaml(&serde_json::to_value(&config).expect("adapter config serializes")))]);
        out.push(Manifest {
            path: path("configmap", name),
            source: crate::layout::GPUPLAN_SOURCE.into(),
            object: renderer.render_template(
                "prometheus-adapter-configmap.yaml.j2",
                name,
                json!({ "name": name, "namespace": ops.monitoring.adapter_namespace(), "labels": common_labels(), "annotations": annotations, "data": data }),
            )?,
        });
    }

    if let Some(g) = &ops.gpu_operator {
        let mut tolerations: BTreeSet<(String, String)> = BTreeSet::from([("nvidia.com/gpu".to_string(), "NoSchedule".to_string())]);
        for p in cluster.pools.iter().filter(|p| p.accelerator == crate::catalog::AcceleratorKind::Nvidia) {
            for t in &p.taints {
                tolerations.insert((t.key.clone(), t.effect.clone()));
            }
        }
        let tolerations: Vec<Value> = tolerations.into_iter().map(|(key, effect)| json!({ "key": key, "effect": effect })).collect();
        let device_plugin_config = (!g.time_slicing.is_empty()).then(|| json!({ "name": DEVICE_PLUGIN_CONFIG_MAP, "default": "default" }));
        let mut policy_annotations = annotations.clone();
        policy_annotations.insert("gpuplan.dev/gpu-operator-release".into(), format!("{}: images pinned to this release's chart defaults (see src/ops/gpu_operator.rs)", g.release));
        policy_annotations.insert(
            "gpuplan.dev/mig-strategy".into(),
            match g.mig_strategy {
                "single" => "single: every MIG config in use gives each GPU one profile, advertised as nvidia.com/gpu (the resource the NodePools limit)".into(),
                _ => "none: no pool uses MIG".to_string(),
            },
        );
        out.push(Manifest {
            path: path("clusterpolicy", CLUSTER_POLICY_NAME),
            source: crate::layout::GPUPLAN_SOURCE.into(),
            object: renderer.render_template(
                "clusterpolicy.yaml.j2",
                CLUSTER_POLICY_NAME,
                json!({
                    "labels": common_labels(),
                    "annotations": policy_annotations,
                    "policy": {
                        "name": CLUSTER_POLICY_NAME,
                        "driver_enabled": g.driver_enabled,
                        "toolkit_enabled": g.toolkit_enabled,
                        "device_plugin_config": device_plugin_config,
                        "service_monitor_labels": g.service_monitor_labels,
                        "mig_strategy": g.mig_strategy,
                        "mig_manager": !g.mig_configs.is_empty(),
                        "mig_config_map": MIG_PARTED_CONFIG_MAP,
                        "tolerations": tolerations,
                        "images": g.images,
                        "release": g.release,
                    },
                }),
            )?,
        });
        if !g.time_slicing.is_empty() {
            let data: BTreeMap<String, String> = g.device_plugin_configs().into_iter().map(|(k, v)| (k, to_yaml(&v))).collect();
            out.push(Manifest {
                path: path("configmap", DEVICE_PLUGIN_CONFIG_MAP),
                source: crate::layout::GPUPLAN_SOURCE.into(),
                object: renderer.render_template(
                    "device-plugin-configmap.yaml.j2",
                    DEVICE_PLUGIN_CONFIG_MAP,
                    json!({ "name": DEVICE_PLUGIN_CONFIG_MAP, "namespace": g.namespace, "labels": common_labels(), "annotations": annotations, "data": data }),
                )?,
            });
        }
    }
    out.extend(addon_values(renderer, cluster, &annotations)?);
    Ok(out)
}

/// A workload's KEDA ScaledObject (instead of its HPA: see `ops::keda`).
fn scaled_object(renderer: &Renderer, cluster: &ClusterPlan, w: &WorkloadPlan, keda: &KedaPlan, annotations: &BTreeMap<String, String>, workload: &Value) -> Result<Manifest, RenderError> {
    let mut annotations = annotations.clone();
    let server = keda.triggers.first().map(|t| t.server_address.as_str()).unwrap_or_default();
    if let Some((metric, percent)) = &keda.gpu {
        let unit = if crate::ops::metric_is_ratio(metric) { "a 0–1 ratio" } else { "percent" };
        let value = crate::ops::threshold(metric, *percent);
        annotations.insert(
            "gpuplan.dev/metric".into(),
            format!("{metric} (dcgm-exporter, {unit}; target {percent}% = {value}) summed over the pods, read by KEDA trigger {} from Prometheus at {server}", crate::ops::keda::GPU_TRIGGER),
        );
    }
    let behavior = HpaPlan { min: keda.min, max: keda.max, metric: String::new(), target_utilization: 0, target_quantity: String::new(), style: keda.style }.behavior();
    let scale_to_zero = keda.scale_to_zero.map(|s| json!({ "cooldown": s.cooldown_seconds, "polling": s.polling_seconds }));
    let triggers: Vec<Value> = keda.triggers.iter().map(|t| t.to_json()).collect();
    Ok(Manifest {
        path: object_path(&cluster.name, "scaledobject", &format!("{}-{}", w.namespace, w.name)),
        source: w.source.clone(),
        object: renderer.render_template(
            "scaledobject.yaml.j2",
            &w.name,
            json!({
                "labels": common_labels(),
                "annotations": annotations,
                "workload": workload,
                "keda": { "min": keda.min, "max": keda.max, "scale_to_zero": scale_to_zero, "behavior": behavior, "triggers": triggers },
            }),
        )?,
    })
}

/// One ConfigMap of Helm values per add-on chart the cluster's pools need (see `ops::addons`).
fn addon_values(renderer: &Renderer, cluster: &ClusterPlan, annotations: &BTreeMap<String, String>) -> Result<Vec<Manifest>, RenderError> {
    let monitoring = &cluster.ops.monitoring;
    let values = addons::values(&cluster.pools, cluster.ops.gpu_operator.is_some(), monitoring.gpu_operator_values);
    let mut out = Vec::new();
    for (name, values) in values {
        let namespace = if name == addons::GPU_OPERATOR_VALUES { monitoring.gpu_operator_namespace.as_str() } else { addons::DEVICE_PLUGIN_NAMESPACE };
        let data = BTreeMap::from([(addons::VALUES_KEY.to_string(), to_yaml(&values))]);
        out.push(Manifest {
            path: object_path(&cluster.name, "configmap", name),
            source: crate::layout::GPUPLAN_SOURCE.into(),
            object: renderer.render_template(
                "helm-values-configmap.yaml.j2",
                name,
                json!({ "name": name, "namespace": namespace, "labels": common_labels(), "annotations": annotations, "data": data }),
            )?,
        });
    }
    Ok(out)
}
