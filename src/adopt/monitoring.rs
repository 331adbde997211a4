//! gpuplan's own cluster-wide operations objects → the cluster's `monitoring` block (the inverse of
//! `ops::intent`'s parse and `ops::render` for the PrometheusRule, ServiceMonitors, prometheus-adapter and
//! device-plugin ConfigMaps and ClusterPolicy).
//!
//! These objects carry every profile of their cluster in `gpuplan.dev/profile`, which is how they are grouped by
//! cluster; the block goes into the profile the PrometheusRule's `gpuplan.dev/monitoring-profile` names (a
//! cluster has one block), else — output from before that annotation — into the first of the cluster's profiles.
//! Each setting is read from the one object that shows it; a setting no object shows (the dcgm-exporter namespace
//! while gpuplan manages the GPU Operator, say) keeps its default, which compiles to the same objects.

use std::collections::BTreeMap;

use serde_json::Value;

use super::model::{q, Line, Warning};
use super::read::Doc;
use crate::ops::alerts::{LOW_UTILIZATION, NEAR_LIMIT, PODS_PENDING};
use crate::charts::add_ons::GPU_OPERATOR_VALUES;
use crate::charts::gpu_operator::DEVICE_PLUGIN_CONFIG_MAP;
use crate::profile::gpu_operator_releases as gpu_operator;
use crate::ops::render::MONITORING_PROFILE_ANNOTATION;
use crate::ops::adapter;
use crate::profile::monitoring::{Monitoring, DEFAULT_MONITORING_LABEL};
use crate::solve::ops::metrics::metric_is_ratio;

/// One cluster's `monitoring` block and the profiles it may go into (in the objects' order).
#[derive(Debug, Clone)]
pub struct ClusterMonitoring {
    pub profiles: Vec<String>,
    /// The profile that held the block (`gpuplan.dev/monitoring-profile`), when the output records it.
    pub owner: Option<String>,
    /// None when every setting the objects show is the default and no profile is recorded as holding a block.
    pub block: Option<Line>,
    /// `file Kind/name` of the objects it was read from, the PrometheusRule first when there is one (for the
    /// skipped list when none of the profiles is adopted, and the warning when the owner is not recorded).
    pub objects: Vec<String>,
}

/// The cluster-wide objects of one cluster, by kind (ServiceMonitors by name).
#[derive(Default)]
struct Objects<'a> {
    rule: Option<&'a Doc>,
    karpenter: Option<&'a Doc>,
    dcgm: Option<&'a Doc>,
    adapter: Option<&'a Doc>,
    device_plugin: Option<&'a Doc>,
    policy: Option<&'a Doc>,
    /// gpuplan's Helm values for the GPU Operator chart: without `clusterPolicy.deployCR: false`, the chart owns the
    /// ClusterPolicy (`manage=#false`).
    operator_values: Option<&'a Doc>,
    /// A KEDA ScaledObject of one of the cluster's profiles: its triggers' `serverAddress` is `prometheus url=…`.
    scaled_object: Option<&'a Doc>,
}

/// Each cluster's block, and `file Kind/name (reason)` for the cluster-wide objects that are not adopted (a kind
/// or name gpuplan does not write, no `gpuplan.dev/profile`, a second object for one slot).
pub fn adopt(ops: &[Doc], warnings: &mut Vec<Warning>) -> (Vec<ClusterMonitoring>, Vec<String>) {
    let mut clusters: BTreeMap<&str, Objects> = BTreeMap::new();
    let mut skipped = Vec::new();
    for doc in ops {
        // Workload objects (PDBs, HPAs) carry one profile and belong to workloads.rs.
        if !matches!(doc.kind.as_str(), "PrometheusRule" | "ServiceMonitor" | "ConfigMap" | "ClusterPolicy") {
            continue;
        }
        let Some(profiles) = doc.object["metadata"]["annotations"]["gpuplan.dev/profile"].as_str() else {
            skipped.push(format!("{} (no gpuplan.dev/profile annotation: the cluster whose `monitoring` block it shows is not recorded)", doc.at()));
            continue;
        };
        let o = clusters.entry(profiles).or_default();
        let slot = match (doc.kind.as_str(), doc.name.as_str()) {
            ("PrometheusRule", _) => &mut o.rule,
            ("ServiceMonitor", "karpenter") => &mut o.karpenter,
            ("ServiceMonitor", "nvidia-dcgm-exporter") => &mut o.dcgm,
            ("ConfigMap", adapter::CONFIG_MAP) => &mut o.adapter,
            ("ConfigMap", DEVICE_PLUGIN_CONFIG_MAP) => &mut o.device_plugin,
            ("ConfigMap", GPU_OPERATOR_VALUES) => &mut o.operator_values,
            ("ClusterPolicy", _) => &mut o.policy,
            (kind, _) => {
                skipped.push(format!(
                    "{} (labelled as gpuplan's, but not one gpuplan writes: its {kind}s are {}; not adopted)",
                    doc.at(),
                    match kind {
                        "ServiceMonitor" => "`karpenter` and `nvidia-dcgm-exporter`".to_string(),
                        _ => format!("`{}` and `{DEVICE_PLUGIN_CONFIG_MAP}`", adapter::CONFIG_MAP),
                    }
                ));
                continue;
            }
        };
        if let Some(first) = slot {
            skipped.push(format!("{} (a second {} for profiles {profiles}: adopted from the first, {})", doc.at(), doc.kind, first.at()));
            continue;
        }
        *slot = Some(doc);
        if doc.hand_edited {
            warnings.push(Warning {
                file: doc.file.clone(),
                object: format!("{}/{}", doc.kind, doc.name),
                field: "(file)".into(),
                message: "edited after gpuplan generated it: adopted from the settings the monitoring block has; compiling rewrites every other field".into(),
            });
        }
    }
    // A ScaledObject carries its own profile only: it joins the cluster whose objects list that profile.
    for doc in ops.iter().filter(|d| d.kind == crate::ops::keda::KIND) {
        let Some(profile) = doc.object["metadata"]["annotations"]["gpuplan.dev/profile"].as_str() else { continue };
        if let Some(o) = clusters.iter_mut().find(|(profiles, _)| profiles.split(',').any(|p| p == profile)).map(|(_, o)| o) {
            o.scaled_object.get_or_insert(doc);
        }
    }
    let adopted = clusters
        .into_iter()
        .map(|(profiles, o)| {
            let owner = o.rule.and_then(|d| d.object["metadata"]["annotations"][MONITORING_PROFILE_ANNOTATION].as_str()).map(str::to_string);
            let block = block(&o, owner.is_some(), warnings);
            let objects = [o.rule, o.karpenter, o.dcgm, o.adapter, o.device_plugin, o.policy].into_iter().flatten().map(Doc::at).collect();
            ClusterMonitoring { profiles: profiles.split(',').map(str::to_string).collect(), owner, block, objects }
        })
        .collect();
    (adopted, skipped)
}

/// The block, or None when every setting the objects show is the default and no profile is recorded as holding
/// one (the profiles then have none; a recorded block is written even when empty, since it is what puts the
/// annotation there).
fn block(o: &Objects, recorded: bool, warnings: &mut Vec<Warning>) -> Option<Line> {
    let defaults = Monitoring::default();
    let namespace = o.rule.and_then(|d| d.object["metadata"]["namespace"].as_str()).unwrap_or(&defaults.namespace).to_string();
    let mut children = labels(o);
    let default_labels = children.is_empty() || children.len() == 1 && children[0].kdl == format!("label {} {}", q(DEFAULT_MONITORING_LABEL.0), q(DEFAULT_MONITORING_LABEL.1));
    let mut settings = Vec::new();
    let at = |d: Option<&Doc>, default: &str| d.and_then(|d| d.object["metadata"]["namespace"].as_str()).filter(|ns| *ns != default).map(|ns| (ns.to_string(), d.map(Doc::at).unwrap_or_default()));
    if let Some((ns, from)) = at(o.karpenter, &defaults.karpenter_namespace) {
        settings.push(Line::new(format!("karpenter namespace={}", q(&ns)), format!("{from} metadata.namespace")));
    }
    if let Some((ns, from)) = at(o.dcgm, &defaults.dcgm_namespace) {
        settings.push(Line::new(format!("dcgm-exporter namespace={}", q(&ns)), format!("{from} metadata.namespace")));
    }
    if let Some((ns, from)) = at(o.adapter, &namespace) {
        settings.push(Line::new(format!("prometheus-adapter namespace={}", q(&ns)), format!("{from} metadata.namespace")));
    }
    if let Some((url, from)) = prometheus_url(o, &namespace) {
        settings.push(Line::new(format!("prometheus url={}", q(&url)), from));
    }
    settings.extend(gpu_operator(o, &defaults, warnings));
    settings.extend(alerts(o, &defaults));
    if !recorded && settings.is_empty() && default_labels && namespace == defaults.namespace {
        return None;
    }
    children.extend(settings);
    let mut from = o.rule.map(|d| format!("{} metadata.namespace", d.at())).unwrap_or_else(|| "no PrometheusRule among the inputs: the default namespace".into());
    if recorded {
        from.push_str(&format!("; profile from metadata.annotations.{MONITORING_PROFILE_ANNOTATION}"));
    }
    Some(Line::block(format!("monitoring namespace={}", q(&namespace)), from, children))
}

/// The Prometheus KEDA's triggers query, when it is not the default for the monitoring namespace.
fn prometheus_url(o: &Objects, namespace: &str) -> Option<(String, String)> {
    let doc = o.scaled_object?;
    let url = doc.object["spec"]["triggers"].as_array()?.iter().find_map(|t| t["metadata"]["serverAddress"].as_str())?;
    (url != crate::profile::monitoring::default_prometheus_url(namespace)).then(|| (url.to_string(), format!("{} spec.triggers[].metadata.serverAddress", doc.at())))
}

/// The PrometheusRule's labels (Prometheus' ruleSelector), gpuplan's own `managed-by` aside; the default
/// `release` label, when gone, is removed with `#null`.
fn labels(o: &Objects) -> Vec<Line> {
    let Some(doc) = o.rule.or(o.karpenter) else { return Vec::new() };
    let labels = doc.object["metadata"]["labels"].as_object().cloned().unwrap_or_default();
    let from = format!("{} metadata.labels", doc.at());
    let mut lines: Vec<Line> = labels
        .iter()
        .filter(|(k, _)| k.as_str() != "app.kubernetes.io/managed-by")
        .map(|(k, v)| Line::new(format!("label {} {}", q(k), q(v.as_str().unwrap_or_default())), from.clone()))
        .collect();
    if !labels.contains_key(DEFAULT_MONITORING_LABEL.0) {
        lines.push(Line::new(format!("label {} #null", q(DEFAULT_MONITORING_LABEL.0)), format!("{from}: no {} label", DEFAULT_MONITORING_LABEL.0)));
    }
    lines
}

/// `gpu-operator [namespace=…] [manage=#false] [version=…] { image … }`: unmanaged when gpuplan wrote its own
/// dcgm-exporter ServiceMonitor (it does only then); the namespace from the device-plugin ConfigMap; the release
/// from the ClusterPolicy's annotation, and every image field that differs from that release's.
fn gpu_operator(o: &Objects, defaults: &Monitoring, warnings: &mut Vec<Warning>) -> Option<Line> {
    let mut props = Vec::new();
    let mut from = Vec::new();
    if let Some(d) = o.device_plugin.filter(|d| d.object["metadata"]["namespace"] != defaults.gpu_operator_namespace.as_str()) {
        props.push(format!("namespace={}", q(d.object["metadata"]["namespace"].as_str().unwrap_or_default())));
        from.push(format!("{} metadata.namespace", d.at()));
    }
    let chart_owns_policy = |d: &&Doc| {
        let values = crate::charts::add_ons::rendered_values(&[&d.object], GPU_OPERATOR_VALUES);
        values.and_then(|v| v.pointer("/clusterPolicy/deployCR").and_then(serde_json::Value::as_bool)) != Some(false)
    };
    if let Some(d) = o.dcgm {
        props.push("manage=#false".into());
        from.push(format!("{}: gpuplan scrapes dcgm-exporter itself when it does not manage the GPU Operator (EKS Auto Mode)", d.at()));
    } else if let Some(d) = o.operator_values.filter(chart_owns_policy) {
        props.push("manage=#false".into());
        from.push(format!("{}: the values leave the ClusterPolicy to the chart (no clusterPolicy.deployCR: false)", d.at()));
    }
    let mut images = Vec::new();
    if let Some(policy) = o.policy {
        let annotated = policy.object["metadata"]["annotations"]["gpuplan.dev/gpu-operator-release"].as_str().and_then(|r| r.split(':').next()).unwrap_or(gpu_operator::DEFAULT_RELEASE);
        let release = gpu_operator::release(annotated).unwrap_or_else(|| {
            warnings.push(Warning {
                file: policy.file.clone(),
                object: format!("ClusterPolicy/{}", policy.name),
                field: "metadata.annotations.gpuplan.dev/gpu-operator-release".into(),
                message: format!("GPU Operator release `{annotated}` is not one gpuplan pins (src/profile/gpu_operator_releases.rs): images are compared with {}'s", gpu_operator::DEFAULT_RELEASE),
            });
            &gpu_operator::RELEASES[0]
        });
        if release.version != defaults.gpu_operator_release {
            props.push(format!("version={}", q(release.version)));
            from.push(format!("{} metadata.annotations.gpuplan.dev/gpu-operator-release", policy.at()));
        }
        images = image_overrides(policy, release);
    }
    if props.is_empty() && images.is_empty() {
        return None;
    }
    let kdl = ["gpu-operator".to_string()].into_iter().chain(props).collect::<Vec<_>>().join(" ");
    let from = if from.is_empty() { o.policy.map(|p| format!("{} spec images", p.at())).unwrap_or_default() } else { from.join(" + ") };
    Some(Line::block(kdl, from, images))
}

/// `image "<component>" repository=… image=… version=…` for each field of the ClusterPolicy that is not the
/// release's (only the fields that differ: the rest keep following the release).
fn image_overrides(policy: &Doc, release: &gpu_operator::Release) -> Vec<Line> {
    let mut lines = Vec::new();
    for (component, repository, image, version) in release.images {
        let path = component.split('.').fold(&policy.object["spec"], |v, k| &v[k]);
        let props: Vec<String> = [("repository", repository), ("image", image), ("version", version)]
            .into_iter()
            .filter_map(|(field, default)| path[field].as_str().filter(|v| v != default).map(|v| format!("{field}={}", q(v))))
            .collect();
        if !props.is_empty() {
            lines.push(Line::new(format!("image {} {}", q(component), props.join(" ")), format!("{} spec.{component}", policy.at())));
        }
    }
    lines
}

/// `alerts near-limit=… low-gpu-utilization=… pending-for=…` from the rules that use them: the near-limit ratio
/// of `GpuplanNodePoolNearLimit`, the threshold of `GpuplanGPUUtilizationLow` (in its metric's unit) and the
/// `for` of `GpuplanAcceleratorPodsPending`. Written whole when any differs from the default.
fn alerts(o: &Objects, defaults: &Monitoring) -> Option<Line> {
    let doc = o.rule?;
    let rules: Vec<&Value> = doc.object["spec"]["groups"].as_array().into_iter().flatten().flat_map(|g| g["rules"].as_array().into_iter().flatten()).collect();
    let rule = |name: &str| rules.iter().copied().find(|r| r["alert"] == name);
    let threshold = |r: &Value, op: &str| r["expr"].as_str()?.trim_end().rsplit_once(op)?.1.trim().parse::<f64>().ok();
    let near = rule(NEAR_LIMIT).and_then(|r| threshold(r, ">=")).map_or(defaults.near_limit_percent, |v| (v * 100.0).round() as u32);
    let low = rule(LOW_UTILIZATION)
        .and_then(|r| threshold(r, "<").map(|v| if metric_is_ratio(r["labels"]["metric"].as_str().unwrap_or_default()) { v * 100.0 } else { v }))
        .map_or(defaults.low_utilization_percent, |v| v.round() as u32);
    let pending = rule(PODS_PENDING).and_then(|r| r["for"].as_str()).unwrap_or(&defaults.pending_for);
    if (near, low, pending) == (defaults.near_limit_percent, defaults.low_utilization_percent, defaults.pending_for.as_str()) {
        return None;
    }
    Some(Line::new(
        format!("alerts near-limit={near} low-gpu-utilization={low} pending-for={}", q(pending)),
        format!("{} {NEAR_LIMIT} expr, {LOW_UTILIZATION} expr, {PODS_PENDING} for", doc.at()),
    ))
}
