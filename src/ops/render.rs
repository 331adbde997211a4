//! OpsPlan → manifests, through the same template environment (and `--templates` overrides) as the pools: one
//! function per object kind, each building its template's context and handing it to [`Objects`].

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::charts::add_ons::{DEVICE_PLUGIN_NAMESPACE, GPU_OPERATOR_VALUES, VALUES_KEY};
use crate::charts::gpu_operator::{CLUSTER_POLICY_NAME, DEVICE_PLUGIN_CONFIG_MAP, MIG_PARTED_CONFIG_MAP};
use crate::ops::{adapter, addons};
use crate::ops::gpu_operator::GpuOperatorPlan;
use crate::ops::workload::pdb_field;
use crate::solve::ops::keda::KedaPlan;
use crate::solve::ops::scaling::HpaPlan;
use crate::solve::ops::workload::WorkloadPlan;
use crate::render::{common_labels, object_path, provenance, to_yaml, Manifest, RenderError, Renderer};
use crate::solve::ClusterPlan;

/// The ops templates, which compile hands to `Renderer::new` after `render::BUILTIN_TEMPLATES`.
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
    ("namespace.yaml.j2", include_str!("../../templates/namespace.yaml.j2")),
];

/// helm-controller reconciles a HelmRelease when a ConfigMap its `valuesFrom` names changes, if the ConfigMap carries
/// this label (fluxcd/pkg apis/meta `labels.go` `LabelKeyWatch`/`LabelValueWatchEnabled`; helm-controller v1.6.3
/// docs/spec/v2/helmreleases.md "all ConfigMaps and Secrets referenced in valuesFrom should be labelled").
pub const FLUX_WATCH_LABEL: (&str, &str) = ("reconcile.fluxcd.io/watch", "Enabled");

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

/// What every operations object of one cluster shares: the renderer, and the cluster whose out/ directory holds it.
struct Objects<'a> {
    renderer: &'a Renderer,
    cluster: &'a ClusterPlan,
}

impl Objects<'_> {
    /// A cluster-wide object (gpuplan's own source), rendered from `template` as `<cluster>/<kind>-<name>.yaml`.
    fn manifest(&self, kind: &str, name: &str, template: &str, context: Value) -> Result<Manifest, RenderError> {
        Ok(Manifest {
            path: object_path(&self.cluster.name, kind, name),
            source: crate::layout::GPUPLAN_SOURCE.into(),
            object: self.renderer.render_template(template, name, context)?,
        })
    }

    /// One of a workload's objects (its profile's source), rendered from `template` as
    /// `<cluster>/<kind>-<namespace>-<name>.yaml`.
    fn workload_manifest(&self, w: &WorkloadPlan, kind: &str, template: &str, context: Value) -> Result<Manifest, RenderError> {
        Ok(Manifest {
            path: object_path(&self.cluster.name, kind, &format!("{}-{}", w.namespace, w.name)),
            source: w.source.clone(),
            object: self.renderer.render_template(template, &w.name, context)?,
        })
    }
}

/// Every operations object of one cluster: each workload's, the PrometheusRule and its ServiceMonitors,
/// prometheus-adapter's rules, the GPU Operator's ClusterPolicy and device-plugin configs, and the add-on charts'
/// Helm values.
pub fn render_cluster(renderer: &Renderer, cluster: &ClusterPlan) -> Result<Vec<Manifest>, RenderError> {
    let objects = Objects { renderer, cluster };
    let annotations = cluster_annotations(cluster);
    let mut out = Vec::new();
    for w in &cluster.ops.workloads {
        out.extend(workload_objects(&objects, w)?);
    }
    out.push(prometheus_rule(&objects, &annotations)?);
    out.extend(service_monitors(&objects, &annotations)?);
    out.extend(adapter_config_map(&objects, &annotations)?);
    if let Some(g) = &cluster.ops.gpu_operator {
        out.push(cluster_policy(&objects, g, &annotations)?);
        if !g.time_slicing.is_empty() {
            out.push(device_plugin_config_map(&objects, g, &annotations)?);
        }
    }
    out.extend(addon_values(&objects, &annotations)?);
    Ok(out)
}

/// A workload's PodDisruptionBudget, HorizontalPodAutoscaler and KEDA ScaledObject, each when it asks for one.
fn workload_objects(objects: &Objects, w: &WorkloadPlan) -> Result<Vec<Manifest>, RenderError> {
    let mut annotations = provenance(&w.profile, &w.source, objects.cluster);
    annotations.insert("gpuplan.dev/pool".into(), w.pool.clone());
    annotations.insert("gpuplan.dev/nodepools".into(), w.nodepools.join(","));
    annotations.insert("gpuplan.dev/placement".into(), format!("pods need {} to run on pool {} only", w.placement.describe(), w.placement.pool));
    let workload = json!({ "name": w.name, "namespace": w.namespace, "kind": w.kind, "selector": w.selector });
    let mut out = Vec::new();
    if let Some(pdb) = w.pdb {
        let (field, value) = pdb_field(pdb);
        let context = json!({ "labels": common_labels(), "annotations": annotations, "workload": workload, "pdb": { "field": field, "value": value } });
        out.push(objects.workload_manifest(w, "poddisruptionbudget", "poddisruptionbudget.yaml.j2", context)?);
    }
    if let Some(hpa) = &w.hpa {
        out.push(horizontal_pod_autoscaler(objects, w, hpa, &annotations, &workload)?);
    }
    if let Some(keda) = &w.keda {
        out.push(scaled_object(objects, w, keda, &annotations, &workload)?);
    }
    Ok(out)
}

/// A workload's HPA on a dcgm-exporter metric, which prometheus-adapter serves per pod.
fn horizontal_pod_autoscaler(objects: &Objects, w: &WorkloadPlan, hpa: &HpaPlan, annotations: &BTreeMap<String, String>, workload: &Value) -> Result<Manifest, RenderError> {
    let mut annotations = annotations.clone();
    let unit = if crate::solve::ops::metrics::metric_is_ratio(&hpa.metric) { "a 0–1 ratio" } else { "percent" };
    annotations.insert(
        "gpuplan.dev/metric".into(),
        format!(
            "{} (dcgm-exporter, {unit}; target {}% = {}) served per pod by prometheus-adapter from ConfigMap {}/{}",
            hpa.metric,
            hpa.target_utilization,
            hpa.target_quantity,
            objects.cluster.ops.monitoring.adapter_namespace(),
            adapter::CONFIG_MAP
        ),
    );
    let context = json!({
        "labels": common_labels(),
        "annotations": annotations,
        "workload": workload,
        "hpa": { "min": hpa.min, "max": hpa.max, "metric": hpa.metric, "target": hpa.target_quantity, "behavior": hpa.behavior() },
    });
    objects.workload_manifest(w, "horizontalpodautoscaler", "horizontalpodautoscaler.yaml.j2", context)
}

/// A workload's KEDA ScaledObject (instead of its HPA: see `ops::keda`).
fn scaled_object(objects: &Objects, w: &WorkloadPlan, keda: &KedaPlan, annotations: &BTreeMap<String, String>, workload: &Value) -> Result<Manifest, RenderError> {
    let mut annotations = annotations.clone();
    let server = keda.triggers.first().map(|t| t.server_address.as_str()).unwrap_or_default();
    if let Some((metric, percent)) = &keda.gpu {
        let unit = if crate::solve::ops::metrics::metric_is_ratio(metric) { "a 0–1 ratio" } else { "percent" };
        let value = crate::solve::ops::metrics::threshold(metric, *percent);
        annotations.insert(
            "gpuplan.dev/metric".into(),
            format!("{metric} (dcgm-exporter, {unit}; target {percent}% = {value}) summed over the pods, read by KEDA trigger {} from Prometheus at {server}", crate::solve::ops::keda::GPU_TRIGGER),
        );
    }
    let behavior = HpaPlan { min: keda.min, max: keda.max, metric: String::new(), target_utilization: 0, target_quantity: String::new(), style: keda.style }.behavior();
    let scale_to_zero = keda.scale_to_zero.map(|s| json!({ "cooldown": s.cooldown_seconds, "polling": s.polling_seconds }));
    let triggers: Vec<Value> = keda.triggers.iter().map(|t| t.to_json()).collect();
    let context = json!({
        "labels": common_labels(),
        "annotations": annotations,
        "workload": workload,
        "keda": { "min": keda.min, "max": keda.max, "scale_to_zero": scale_to_zero, "behavior": behavior, "triggers": triggers },
    });
    objects.workload_manifest(w, "scaledobject", "scaledobject.yaml.j2", context)
}

/// The cluster's PrometheusRule: the alert groups of `ops::alerts`.
fn prometheus_rule(objects: &Objects, annotations: &BTreeMap<String, String>) -> Result<Manifest, RenderError> {
    let cluster = objects.cluster;
    let ops = &cluster.ops;
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
    let labels = labels_with(&ops.monitoring.labels);
    let context = json!({ "name": rule_name, "namespace": ops.monitoring.namespace, "labels": labels, "annotations": rule_annotations, "groups": groups });
    objects.manifest("prometheusrule", &rule_name, "prometheusrule.yaml.j2", context)
}

/// The ServiceMonitors that feed the PrometheusRule: Karpenter's metrics and, when asked, dcgm-exporter's.
fn service_monitors(objects: &Objects, annotations: &BTreeMap<String, String>) -> Result<Vec<Manifest>, RenderError> {
    let ops = &objects.cluster.ops;
    // EKS Auto Mode runs Karpenter in the AWS-managed control plane: there is no Karpenter pod to scrape.
    let mut monitors = Vec::new();
    if !objects.cluster.auto_mode {
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
    let labels = labels_with(&ops.monitoring.labels);
    monitors
        .into_iter()
        .map(|monitor| {
            let name = monitor["name"].as_str().unwrap_or_default().to_string();
            objects.manifest("servicemonitor", &name, "servicemonitor.yaml.j2", json!({ "labels": labels, "annotations": annotations, "monitor": monitor }))
        })
        .collect()
}

/// prometheus-adapter's rules for the HPAs' metrics (`ops::adapter`), when a workload has an HPA.
fn adapter_config_map(objects: &Objects, annotations: &BTreeMap<String, String>) -> Result<Option<Manifest>, RenderError> {
    let ops = &objects.cluster.ops;
    let Some(config) = adapter::config(&ops.workloads) else { return Ok(None) };
    let name = adapter::CONFIG_MAP;
    let data = BTreeMap::from([(adapter::CONFIG_KEY.to_string(), to_yaml(&serde_json::to_value(&config).expect("adapter config serializes")))]);
    let context = json!({ "name": name, "namespace": ops.monitoring.adapter_namespace(), "labels": common_labels(), "annotations": annotations, "data": data });
    objects.manifest("configmap", name, "prometheus-adapter-configmap.yaml.j2", context).map(Some)
}

/// The taints the GPU Operator's operands must tolerate, as (key, effect): `nvidia.com/gpu` and every NVIDIA pool's.
fn operand_tolerations(cluster: &ClusterPlan) -> Vec<Value> {
    let mut tolerations: BTreeSet<(String, String)> = BTreeSet::from([("nvidia.com/gpu".to_string(), "NoSchedule".to_string())]);
    for p in cluster.pools.iter().filter(|p| p.accelerator == crate::catalog::AcceleratorKind::Nvidia) {
        for t in &p.taints {
            tolerations.insert((t.key.clone(), t.effect.clone()));
        }
    }
    tolerations.into_iter().map(|(key, effect)| json!({ "key": key, "effect": effect })).collect()
}

/// The GPU Operator's ClusterPolicy (see `ops::gpu_operator`).
fn cluster_policy(objects: &Objects, g: &GpuOperatorPlan, annotations: &BTreeMap<String, String>) -> Result<Manifest, RenderError> {
    let tolerations = operand_tolerations(objects.cluster);
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
    let context = json!({
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
    });
    objects.manifest("clusterpolicy", CLUSTER_POLICY_NAME, "clusterpolicy.yaml.j2", context)
}

/// The device plugin's configs, one per time-slicing setup in use (the ClusterPolicy's `devicePlugin.config`).
fn device_plugin_config_map(objects: &Objects, g: &GpuOperatorPlan, annotations: &BTreeMap<String, String>) -> Result<Manifest, RenderError> {
    let data: BTreeMap<String, String> = g.device_plugin_configs().into_iter().map(|(k, v)| (k, to_yaml(&v))).collect();
    let context = json!({ "name": DEVICE_PLUGIN_CONFIG_MAP, "namespace": g.namespace, "labels": common_labels(), "annotations": annotations, "data": data });
    objects.manifest("configmap", DEVICE_PLUGIN_CONFIG_MAP, "device-plugin-configmap.yaml.j2", context)
}

/// One ConfigMap of Helm values per add-on chart the cluster's pools need (see `ops::addons`), in out/<cluster>/values/
/// with the namespace they need (kube-system always exists): applied on their own, before the charts that read them.
fn addon_values(objects: &Objects, annotations: &BTreeMap<String, String>) -> Result<Vec<Manifest>, RenderError> {
    let cluster = objects.cluster;
    let monitoring = &cluster.ops.monitoring;
    let values = addons::values(&cluster.pools, cluster.ops.gpu_operator.is_some(), monitoring.gpu_operator_values, &monitoring.labels);
    let dir = std::path::Path::new(&cluster.name).join(crate::layout::VALUES_DIR);
    let mut labels = common_labels();
    labels[FLUX_WATCH_LABEL.0] = json!(FLUX_WATCH_LABEL.1);
    let mut out = Vec::new();
    let mut namespaces = BTreeSet::new();
    for (name, values) in values {
        let namespace = if name == GPU_OPERATOR_VALUES { monitoring.gpu_operator_namespace.as_str() } else { DEVICE_PLUGIN_NAMESPACE };
        if namespace != DEVICE_PLUGIN_NAMESPACE {
            namespaces.insert(namespace);
        }
        let data = BTreeMap::from([(VALUES_KEY.to_string(), to_yaml(&values))]);
        let context = json!({ "name": name, "namespace": namespace, "labels": labels, "annotations": annotations, "data": data });
        let mut m = objects.manifest("configmap", name, "helm-values-configmap.yaml.j2", context)?;
        m.path = dir.join(format!("configmap-{name}.yaml"));
        out.push(m);
    }
    for namespace in namespaces {
        let mut m = objects.manifest("namespace", namespace, "namespace.yaml.j2", json!({ "name": namespace, "labels": common_labels(), "annotations": annotations }))?;
        m.path = dir.join(format!("namespace-{namespace}.yaml"));
        out.push(m);
    }
    Ok(out)
}
