//! prometheus-adapter's configuration for the HPAs' Pods metrics.
//!
//! An HPA `type: Pods` metric reads the custom metrics API (`custom.metrics.k8s.io`), which prometheus-adapter
//! serves from Prometheus series by its discovery rules. A dcgm-exporter series carries the `pod` and
//! `namespace` of the workload using the GPU (the ServiceMonitor honours them), so one rule per metric maps it
//! to pods and averages a pod's GPUs.
//!
//! The rules go into a ConfigMap with a `config.yaml` key, the file the adapter reads (`--config=/etc/adapter/
//! config.yaml`, mounted from `rules.existing` when set: charts/prometheus-adapter/templates/deployment.yaml).
//! The structs below follow the adapter's own config types (kubernetes-sigs/prometheus-adapter
//! pkg/config/config.go) field for field; [`parse`] reads a config back strictly, so a rendered ConfigMap that
//! the adapter would misread fails the compile (see `check.rs`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::solve::ops::workload::WorkloadPlan;

pub const CONFIG_MAP: &str = "gpuplan-prometheus-adapter";
pub const CONFIG_KEY: &str = "config.yaml";

/// `MetricsDiscoveryConfig`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterConfig {
    pub rules: Vec<DiscoveryRule>,
    #[serde(rename = "externalRules", default, skip_serializing_if = "Vec::is_empty")]
    pub external_rules: Vec<DiscoveryRule>,
    #[serde(rename = "resourceRules", default, skip_serializing_if = "Option::is_none")]
    pub resource_rules: Option<serde_json::Value>,
}

/// `DiscoveryRule`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscoveryRule {
    #[serde(rename = "seriesQuery")]
    pub series_query: String,
    #[serde(rename = "seriesFilters", default)]
    pub series_filters: Vec<RegexFilter>,
    pub resources: ResourceMapping,
    pub name: NameMapping,
    #[serde(rename = "metricsQuery", default, skip_serializing_if = "String::is_empty")]
    pub metrics_query: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegexFilter {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub is: String,
    #[serde(rename = "isNot", default, skip_serializing_if = "String::is_empty")]
    pub is_not: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceMapping {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub template: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub overrides: BTreeMap<String, GroupResource>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupResource {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    pub resource: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NameMapping {
    #[serde(default)]
    pub matches: String,
    #[serde(rename = "as", default)]
    pub as_: String,
}

/// The rule serving one dcgm-exporter metric per pod, under its own name.
pub fn pod_rule(metric: &str) -> DiscoveryRule {
    let resource = |r: &str| GroupResource { group: String::new(), resource: r.to_string() };
    DiscoveryRule {
        // Only series attributed to a pod: idle GPUs have no pod label.
        series_query: format!("{metric}{{namespace!=\"\",pod!=\"\"}}"),
        series_filters: Vec::new(),
        resources: ResourceMapping {
            template: String::new(),
            overrides: BTreeMap::from([("namespace".to_string(), resource("namespace")), ("pod".to_string(), resource("pod"))]),
        },
        name: NameMapping { matches: format!("^{metric}$"), as_: metric.to_string() },
        // A pod with several GPUs (or MIG devices) reports one series each: its utilization is their mean.
        metrics_query: "avg by (<<.GroupBy>>) (<<.Series>>{<<.LabelMatchers>>})".into(),
    }
}

/// The adapter config for a cluster's HPAs (one rule per metric they use); None when no workload autoscales.
pub fn config(workloads: &[WorkloadPlan]) -> Option<AdapterConfig> {
    let metrics: BTreeSet<&str> = workloads.iter().filter_map(|w| w.hpa.as_ref()).map(|h| h.metric.as_str()).collect();
    (!metrics.is_empty()).then(|| AdapterConfig {
        rules: metrics.into_iter().map(pod_rule).collect(),
        external_rules: Vec::new(),
        resource_rules: None,
    })
}

/// Reads a `config.yaml` as the adapter would (unknown fields are errors here: the adapter would ignore them and
/// serve nothing).
pub fn parse(text: &str) -> Result<AdapterConfig, String> {
    serde_saphyr::from_str(text).map_err(|e| e.to_string())
}

/// Problems that keep a rule from serving a per-pod metric: an empty series query, no pod/namespace mapping,
/// or a metrics query without the placeholders the adapter fills in.
pub fn rule_problems(rule: &DiscoveryRule) -> Vec<String> {
    let mut out = Vec::new();
    if rule.series_query.trim().is_empty() {
        out.push("seriesQuery is empty".to_string());
    }
    for label in ["namespace", "pod"] {
        if rule.resources.overrides.get(label).is_none_or(|g| g.resource != label) && rule.resources.template.is_empty() {
            out.push(format!("resources.overrides does not map label `{label}` to resource `{label}`"));
        }
    }
    for placeholder in ["<<.Series>>", "<<.LabelMatchers>>", "<<.GroupBy>>"] {
        if !rule.metrics_query.is_empty() && !rule.metrics_query.contains(placeholder) {
            out.push(format!("metricsQuery lacks {placeholder}"));
        }
    }
    out
}

/// The custom-metrics name a rule serves for a series name: `name.as`, or the series name itself.
pub fn serves(rule: &DiscoveryRule, metric: &str) -> bool {
    if !rule.name.as_.is_empty() {
        return rule.name.as_ == metric;
    }
    let pattern = if rule.name.matches.is_empty() { ".*" } else { rule.name.matches.as_str() };
    regex::Regex::new(pattern).is_ok_and(|r| r.is_match(metric)) && rule.series_query.contains(metric)
}
