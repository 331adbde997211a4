//! GP015: a PrometheusRule without a label for Prometheus to select it by (kube-prometheus-stack selects
//! release=<release>): none of gpuplan's alerts would load.

use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp015,
    name: "monitoring-without-selector-label",
    summary: "PrometheusRule without a label for Prometheus to select it by (kube-prometheus-stack selects release=<release>)",
    checks_output: true,
    check: Scope::Cluster(check),
};

/// GP015: the cluster's rendered PrometheusRule carries no label but gpuplan's own: kube-prometheus-stack's
/// Prometheus selects rules and ServiceMonitors by `release: <release>` (ruleSelectorNilUsesHelmValues), so
/// none of the alerts would load. Points at the `monitoring` block that removed the default label.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    let (cluster, profiles) = (lint.cluster(), &lint.ctx.profiles);
    let Some(rule) = lint.rendered.first("PrometheusRule") else { return };
    let labels = rule["metadata"]["labels"].as_object().map(|l| l.keys().filter(|k| *k != "app.kubernetes.io/managed-by").count()).unwrap_or(0);
    if labels > 0 {
        return;
    }
    let Some(profile) = profiles.iter().find(|p| p.ops.monitoring.is_some()).or_else(|| profiles.first()).copied() else { return };
    let span = profile.ops.monitoring.as_ref().map_or(profile.cluster.name.span, |m| m.span);
    out.profile(
        profile,
        RULE.code,
        span,
        format!("the PrometheusRule and ServiceMonitors of cluster `{}` carry no label for Prometheus to select them by: kube-prometheus-stack loads only those labelled `release: <its release>`, so no gpuplan alert would fire", cluster.name),
        "keep the default label \"release\" \"kube-prometheus-stack\" in the `monitoring` block, or set your Prometheus' label (e.g. label \"release\" \"prom\")".into(),
    );
}
