//! GP036: the cluster's Kueue Configuration (the `kueue-system/kueue-manager-config` ConfigMap, key
//! `controller_manager_config.yaml`, given to `gpuplan lint --manifests`) sets a `waitForPodsReady.timeout` shorter
//! than a gang queue's pool takes to cold-start (`solve::queue::GANG_COLD_START_SECONDS`: Karpenter's 15-minute
//! registration timeout, kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/nodeclaim/lifecycle/liveness.go`, plus
//! 5 minutes for the GPUs to be advertised). Kueue evicts and requeues a Workload whose pods are not all ready
//! within the timeout (kubernetes-sigs/kueue v0.19.2 `apis/config/v1beta2/configuration_types.go`
//! `WaitForPodsReady.Timeout`), so a gang waiting for fresh nodes is evicted while they still come up, over and over.

use serde_json::Value;

use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::kueue::queue_finding;
use crate::lint::rule::{Rule, Scope};
use crate::solve::queue::GANG_COLD_START_SECONDS;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp036,
    name: "wait-for-pods-ready-below-cold-start",
    summary: "Kueue's waitForPodsReady timeout is shorter than a gang queue's nodes take to start (gangs are evicted while their nodes come up)",
    checks_output: true,
    check: Scope::Cluster(check),
};

/// The ConfigMap Kueue's manifests and chart install its Configuration in, and its key.
const CONFIG_MAP: &str = "kueue-manager-config";
const CONFIG_KEY: &str = "controller_manager_config.yaml";

/// The `waitForPodsReady.timeout` of the cluster's Kueue Configuration, as written and in seconds.
fn timeout(lint: &LintCtx) -> Option<(String, u32)> {
    let text = lint.rendered.get("ConfigMap", CONFIG_MAP)?["data"][CONFIG_KEY].as_str()?;
    let config: Value = serde_saphyr::from_str(text).ok()?;
    let written = config["waitForPodsReady"]["timeout"].as_str()?.to_string();
    let seconds = crate::profile::duration_seconds(&written)?;
    Some((written, seconds))
}

/// GP036 at the first gang queue, once per cluster.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    let Some(gang) = lint.ctx.cluster.queues.queues.iter().find(|q| q.gang) else { return };
    let Some((written, seconds)) = timeout(lint) else { return };
    if seconds >= GANG_COLD_START_SECONDS {
        return;
    }
    let message = format!(
        "Kueue's waitForPodsReady timeout ({written}, ConfigMap {CONFIG_MAP}) is shorter than the {}m a node of gang queue `{}`'s pool may take to start: its jobs are evicted and requeued while their nodes still come up",
        GANG_COLD_START_SECONDS / 60,
        gang.name
    );
    let help = format!("set waitForPodsReady.timeout to at least {}m (Karpenter allows a node 15m to register, then its GPUs are advertised), as the kustomization's prerequisites say", GANG_COLD_START_SECONDS / 60);
    queue_finding(lint, out, &gang.name, RULE.code, message, help);
}
