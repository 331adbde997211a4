//! GP042: the GPU Operator runs with Helm values gpuplan does not write (`gpu-operator manage=#false values=#false`),
//! so nothing configures the dcgm-exporter ServiceMonitor the operator creates itself. Since v26.7.0 the chart turns
//! it on by default with `honorLabels: false` and no extra labels (NVIDIA/gpu-operator
//! `deployments/gpu-operator/values.yaml` `dcgmExporter.serviceMonitor`, commit 2e241753f): kube-prometheus-stack's
//! Prometheus may not select it, and its series get the exporter's pod/namespace, not the workload's, which the
//! per-workload GPU alerts and the HPA rules read. gpuplan cannot write a ServiceMonitor of its own instead: the
//! operator replaces or deletes one of that name on every reconcile (`charts::gpu_operator::OWNED`). A risk the user
//! may accept (their values may already say it): a warning.

use crate::catalog::AcceleratorKind;
use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp042,
    name: "operator-service-monitor-unconfigured",
    summary: "the GPU Operator runs with values gpuplan does not write: its dcgm-exporter ServiceMonitor keeps the chart's defaults (no honorLabels, no selector label)",
    checks_output: false,
    check: Scope::Cluster(check),
};

/// GP042 on a cluster running the GPU Operator (NVIDIA pools, not EKS Auto Mode) with `manage=#false values=#false`,
/// at its `monitoring` block.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    let cluster = lint.cluster();
    let monitoring = &cluster.ops.monitoring;
    let nvidia = cluster.pools.iter().any(|p| p.accelerator == AcceleratorKind::Nvidia);
    if cluster.auto_mode || !nvidia || monitoring.manage_gpu_operator || monitoring.gpu_operator_values {
        return;
    }
    let Some(profile) = lint.ctx.profiles.iter().find(|p| p.ops.monitoring.is_some()).copied() else { return };
    let span = profile.ops.monitoring.as_ref().map_or(profile.cluster.name.span, |m| m.span);
    let labels: Vec<String> = monitoring.labels.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    out.profile(
        profile,
        RULE.code,
        span,
        format!(
            "cluster `{}` runs the GPU Operator with Helm values gpuplan does not write (`gpu-operator manage=#false values=#false`): its dcgm-exporter ServiceMonitor keeps the chart's defaults (honorLabels false, no additional labels), so Prometheus may not select it and the workloads' GPU alerts and HPA metric lose their pod labels",
            cluster.name
        ),
        format!(
            "set `dcgmExporter.serviceMonitor: {{enabled: true, honorLabels: true, additionalLabels: {{{}}}}}` in your values (then `allow \"GP042\"`), or let gpuplan write them (`values=#true`)",
            labels.join(", ")
        ),
    );
}
