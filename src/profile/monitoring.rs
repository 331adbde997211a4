//! The `monitoring` profile node: where the PrometheusRule and ServiceMonitors go and what Prometheus selects
//! them by, where Karpenter, dcgm-exporter, prometheus-adapter and the GPU Operator run, the Prometheus KEDA
//! queries, the GPU Operator release and image overrides, and the alert thresholds. Error codes E0179 and E0227
//! (E0175, a second `monitoring` block, is reported where the blocks are gathered: `ops`).
//!
//! ```kdl
//! monitoring namespace="monitoring" {
//!     label "release" "kube-prometheus-stack"
//!     karpenter namespace="kube-system"
//!     dcgm-exporter namespace="gpu-operator"
//!     prometheus-adapter namespace="monitoring"    // where its release runs (default: the monitoring namespace)
//!     prometheus url="http://prometheus-operated.monitoring.svc:9090"   // what KEDA's triggers query
//!     gpu-operator namespace="gpu-operator" manage=#true values=#true version="v26.7.0" {
//!         image "devicePlugin" repository="registry.example.com/nvidia"   // per component; unset fields: the release's
//!     }
//!     alerts near-limit=90 low-gpu-utilization=20 pending-for="15m"
//! }
//! ```

use std::collections::BTreeMap;

use kdl::{KdlEntry, KdlNode, KdlValue};

use super::gpu_operator_releases;
use super::parser::{args, prop, Parser};
use crate::diagnostic::ErrorCode;
use crate::diagnostic::{did_you_mean, Spanned};

const MONITORING_CHILDREN: &[&str] = &["label", "karpenter", "dcgm-exporter", "prometheus-adapter", "prometheus", "gpu-operator", "alerts"];

/// Which metric sources a cluster's Prometheus can scrape, so that alerts and autoscaling use only metrics that exist.
///
/// - Karpenter's: on self-managed Karpenter only. EKS Auto Mode runs Karpenter in the AWS-managed control plane, with
///   no metrics endpoint in the cluster; its compute autoscaling is observable only through the AUTO_MODE_COMPUTE_LOGS
///   vended logs (EKS User Guide, "Access AWS-Managed Component Logs For EKS Auto", auto-managed-component-logs.adoc).
/// - dcgm-exporter's: from the GPU Operator gpuplan manages, or from an exporter run elsewhere (`gpu-operator
///   manage=#false`, scraped by gpuplan's own ServiceMonitor). Auto Mode installs no GPU Operator and its NVIDIA device
///   plugin runs outside the cluster (EKS User Guide, "Deploy an accelerated workload"), so with `manage=#true`
///   nothing there exports DCGM metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricSources {
    pub karpenter: bool,
    pub dcgm: bool,
}

impl MetricSources {
    pub fn of(auto_mode: bool, monitoring: &Monitoring) -> MetricSources {
        MetricSources { karpenter: !auto_mode, dcgm: !auto_mode || !monitoring.manage_gpu_operator }
    }
}

/// The label kube-prometheus-stack's Prometheus selects PrometheusRules and ServiceMonitors by when installed as
/// release `kube-prometheus-stack` (`ruleSelectorNilUsesHelmValues: true` → `matchLabels: {release: <release>}`,
/// charts/kube-prometheus-stack/templates/prometheus/prometheus.yaml).
pub const DEFAULT_MONITORING_LABEL: (&str, &str) = ("release", "kube-prometheus-stack");

/// `gpu-operator { image "<component>" repository=… image=… version=… }`: unset fields keep the release's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageOverride {
    pub repository: Option<String>,
    pub image: Option<String>,
    pub version: Option<String>,
}

/// `monitoring namespace="monitoring" { … }`: where the PrometheusRule and ServiceMonitors go and what
/// Prometheus selects them by. One per cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Monitoring {
    /// Namespace of the PrometheusRule.
    pub namespace: String,
    /// Labels on the PrometheusRule and ServiceMonitors (Prometheus' ruleSelector/serviceMonitorSelector).
    pub labels: BTreeMap<String, String>,
    pub karpenter_namespace: String,
    pub dcgm_namespace: String,
    /// Namespace of prometheus-adapter's release (its config ConfigMap goes there); None: `namespace`.
    pub prometheus_adapter_namespace: Option<String>,
    /// Namespace the GPU Operator runs in (the time-slicing ConfigMap goes there).
    pub gpu_operator_namespace: String,
    /// Whether gpuplan generates the ClusterPolicy (false: the operator is managed elsewhere; gpuplan then
    /// emits its own dcgm-exporter ServiceMonitor).
    pub manage_gpu_operator: bool,
    /// Whether gpuplan writes the Helm values for the GPU Operator chart (`ops::addons`); false: the user's install
    /// runs with values gpuplan does not know, read as the chart's defaults.
    pub gpu_operator_values: bool,
    /// GPU Operator release whose images the ClusterPolicy pins (a version of `gpu_operator_releases::RELEASES`).
    pub gpu_operator_release: String,
    /// Per-component image overrides, by ClusterPolicy spec path (`devicePlugin`, `driver.manager`, …).
    pub gpu_operator_images: BTreeMap<String, ImageOverride>,
    /// `prometheus url=…`: the Prometheus KEDA's prometheus triggers query (their `serverAddress`); None: the
    /// kube-prometheus-stack default in the monitoring namespace (see [`Monitoring::prometheus_url`]).
    pub prometheus_url: Option<String>,
    /// Alert thresholds.
    pub near_limit_percent: u32,
    pub low_utilization_percent: u32,
    pub pending_for: String,
}

impl Monitoring {
    pub fn adapter_namespace(&self) -> &str {
        self.prometheus_adapter_namespace.as_deref().unwrap_or(&self.namespace)
    }

    /// Where KEDA's prometheus triggers read Prometheus: `prometheus url=…`, else the Service kube-prometheus-stack
    /// creates for its Prometheus when installed as release `kube-prometheus-stack` in the monitoring namespace
    /// (charts/kube-prometheus-stack templates/prometheus/service.yaml: `<fullname>-prometheus`, port 9090). KEDA
    /// queries Prometheus itself: prometheus-adapter serves only the HPAs' Pods metrics.
    pub fn prometheus_url(&self) -> String {
        self.prometheus_url.clone().unwrap_or_else(|| default_prometheus_url(&self.namespace))
    }
}

/// kube-prometheus-stack's Prometheus Service in `namespace` (see [`Monitoring::prometheus_url`]).
pub fn default_prometheus_url(namespace: &str) -> String {
    format!("http://kube-prometheus-stack-prometheus.{namespace}.svc:9090")
}

impl Default for Monitoring {
    fn default() -> Self {
        Monitoring {
            namespace: "monitoring".into(),
            labels: BTreeMap::from([(DEFAULT_MONITORING_LABEL.0.to_string(), DEFAULT_MONITORING_LABEL.1.to_string())]),
            karpenter_namespace: "kube-system".into(),
            dcgm_namespace: "gpu-operator".into(),
            prometheus_adapter_namespace: None,
            gpu_operator_namespace: "gpu-operator".into(),
            manage_gpu_operator: true,
            gpu_operator_values: true,
            gpu_operator_release: gpu_operator_releases::DEFAULT_RELEASE.to_string(),
            gpu_operator_images: BTreeMap::new(),
            prometheus_url: None,
            near_limit_percent: 90,
            low_utilization_percent: 20,
            pending_for: "15m".into(),
        }
    }
}

impl Parser<'_> {
    /// A `monitoring` block over the defaults (see [`Monitoring::default`]).
    pub(super) fn parse_monitoring(&mut self, node: &KdlNode) -> Option<Spanned<Monitoring>> {
        self.check_entries(node, &["namespace"], 0);
        let span = self.span(node.name().span());
        let mut m = Monitoring::default();
        if let Some(ns) = prop(node, "namespace").and_then(|e| self.expect_string(e, "namespace")) {
            self.check_name(&ns, "namespace");
            m.namespace = ns.value;
        }
        let namespace_of = |p: &mut Self, child: &KdlNode, target: &mut String| {
            if let Some(ns) = prop(child, "namespace").and_then(|e| p.expect_string(e, "namespace")) {
                p.check_name(&ns, "namespace");
                *target = ns.value;
            }
        };
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            if child.name().value() != "gpu-operator" {
                self.no_children(child);
            }
            match child.name().value() {
                "label" => self.monitoring_label(child, &mut m.labels),
                "karpenter" => {
                    self.check_entries(child, &["namespace"], 0);
                    namespace_of(self, child, &mut m.karpenter_namespace);
                }
                "dcgm-exporter" => {
                    self.check_entries(child, &["namespace"], 0);
                    namespace_of(self, child, &mut m.dcgm_namespace);
                }
                "prometheus-adapter" => {
                    self.check_entries(child, &["namespace"], 0);
                    let mut ns = m.namespace.clone();
                    namespace_of(self, child, &mut ns);
                    m.prometheus_adapter_namespace = Some(ns);
                }
                "prometheus" => {
                    self.check_entries(child, &["url"], 0);
                    if let Some(url) = prop(child, "url").and_then(|e| self.expect_string(e, "url")) {
                        match check_server_address(&url.value) {
                            Ok(()) => m.prometheus_url = Some(url.value),
                            Err(reason) => self.error(url.span, ErrorCode::E0227, format!("Prometheus url `{}` {reason}", crate::input::excerpt(&url.value)), "write the URL KEDA queries Prometheus at, e.g. url=\"http://prometheus-operated.monitoring.svc:9090\""),
                        }
                    }
                }
                "gpu-operator" => {
                    self.check_entries(child, &["namespace", "manage", "values", "version"], 0);
                    namespace_of(self, child, &mut m.gpu_operator_namespace);
                    if let Some(b) = prop(child, "manage").and_then(|e| self.expect_bool(e, "manage")) {
                        m.manage_gpu_operator = b.value;
                    }
                    if let Some(b) = prop(child, "values").and_then(|e| self.expect_bool(e, "values")) {
                        m.gpu_operator_values = b.value;
                    }
                    self.gpu_operator_release(child, &mut m);
                }
                "alerts" => {
                    self.check_entries(child, &["near-limit", "low-gpu-utilization", "pending-for"], 0);
                    if let Some(v) = prop(child, "near-limit").and_then(|e| self.expect_integer(e, "near-limit (percent)", 1, 100)) {
                        m.near_limit_percent = v.value as u32;
                    }
                    if let Some(v) = prop(child, "low-gpu-utilization").and_then(|e| self.expect_integer(e, "low-gpu-utilization (percent)", 1, 100)) {
                        m.low_utilization_percent = v.value as u32;
                    }
                    if let Some(v) = prop(child, "pending-for").and_then(|e| self.expect_string(e, "pending-for")).and_then(|v| self.duration(v, false)) {
                        m.pending_for = v.value;
                    }
                }
                _ => self.unknown_node(child, MONITORING_CHILDREN, "`monitoring`"),
            }
        }
        Some(Spanned::new(m, span))
    }

    /// `label "release" "prom"` sets a label of the PrometheusRule and ServiceMonitors; `label "release" #null`
    /// removes one (the default `release=kube-prometheus-stack` included; lint GP015 warns when none is left).
    fn monitoring_label(&mut self, child: &KdlNode, labels: &mut BTreeMap<String, String>) {
        self.check_entries(child, &[], 2);
        let entries: Vec<&KdlEntry> = args(child).collect();
        let [key, value] = entries.as_slice() else {
            let span = self.span(child.span());
            self.error(span, ErrorCode::E0107, "`label` needs a key and a value", "write label \"release\" \"kube-prometheus-stack\" (or a #null value to remove a default label)");
            return;
        };
        let Some(key) = self.expect_string(key, "label key") else { return };
        if matches!(value.value(), KdlValue::Null) {
            labels.remove(&key.value);
        } else if let Some(v) = self.expect_string(value, "label value") {
            labels.insert(key.value, v.value);
        }
    }

    /// `gpu-operator version="v26.7.0" { image "devicePlugin" repository=… image=… version=… }`.
    fn gpu_operator_release(&mut self, node: &KdlNode, m: &mut Monitoring) {
        if let Some(v) = prop(node, "version").and_then(|e| self.expect_string(e, "version")) {
            let known: Vec<&str> = gpu_operator_releases::RELEASES.iter().map(|r| r.version).collect();
            if gpu_operator_releases::release(&v.value).is_some() {
                m.gpu_operator_release = v.value;
            } else {
                let mut help = did_you_mean(&v, known.iter().copied()).map(|d| format!("{d} ")).unwrap_or_default();
                help.push_str(&format!(
                    "gpuplan pins the images of GPU Operator release(s) {} (src/profile/gpu_operator_releases.rs); override single images with `image \"<component>\" version=\"…\"` inside this node",
                    known.join(", ")
                ));
                self.error(v.span, ErrorCode::E0179, format!("unknown GPU Operator release `{}`", v.value), help);
            }
        }
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            self.no_children(child);
            if child.name().value() != "image" {
                self.unknown_node(child, &["image"], "`gpu-operator`");
                continue;
            }
            if let Some((component, o)) = self.image_override(child) {
                m.gpu_operator_images.insert(component, o);
            }
        }
    }

    fn image_override(&mut self, child: &KdlNode) -> Option<(String, ImageOverride)> {
        self.check_entries(child, &["repository", "image", "version"], 1);
        let components = gpu_operator_releases::components();
        let Some(component) = args(child).next().and_then(|e| self.expect_string(e, "the component")) else {
            let span = self.span(child.span());
            self.error(span, ErrorCode::E0107, "`image` needs the ClusterPolicy component it overrides", format!("write image \"devicePlugin\" version=\"…\"; components: {}", components.join(", ")));
            return None;
        };
        if !components.contains(&component.as_str()) {
            let mut help = did_you_mean(&component, components.iter().copied()).map(|d| format!("{d} ")).unwrap_or_default();
            help.push_str(&format!("components with an image: {}", components.join(", ")));
            self.error(component.span, ErrorCode::E0118, format!("unknown GPU Operator component `{}`", component.value), help);
            return None;
        }
        let mut field = |key: &str| -> Option<String> {
            prop(child, key).and_then(|e| self.expect_string(e, key)).map(|v| v.value).filter(|v| !v.trim().is_empty())
        };
        let o = ImageOverride { repository: field("repository"), image: field("image"), version: field("version") };
        if o == ImageOverride::default() {
            self.error(component.span, ErrorCode::E0107, format!("`image \"{}\"` overrides nothing", component.value), "set repository=, image= and/or version= (non-empty)");
            return None;
        }
        Some((component.value, o))
    }
}

/// A Prometheus address KEDA can query: an http(s) URL with a host and nothing YAML or PromQL would misread.
pub fn check_server_address(url: &str) -> Result<(), String> {
    let rest = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")).ok_or("is not an http:// or https:// URL")?;
    if rest.is_empty() || rest.starts_with('/') || rest.starts_with(':') {
        return Err("has no host".into());
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control() || c == '"') {
        return Err("contains whitespace or quotes".into());
    }
    Ok(())
}
