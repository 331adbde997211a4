//! E0160: kubelet settings that leave no room for a pod, proven by the simulator on the cluster's generated objects.

use crate::diagnostic::ErrorCode;
use crate::diagnostic::ProfileDiagnostic;
use crate::simulate::{self, manifests::Manifests};

use super::context::ClusterCtx;
use super::simulated::pool_pods;

/// E0160: a pool whose `kubelet` settings leave no room for one pod of one accelerator (or vCPU): `max-pods 0`, a
/// `kube-reserved` above the node's CPU, an eviction threshold above its memory. Each such pool gets a probe pod,
/// simulated alone on the cluster's generated objects (the allocatable is Karpenter's, `instances::allocatable`); a
/// probe that pends is reported at the `kubelet` block with the scheduler's reason. Pools without kubelet settings
/// need no probe: the solver only admits types that hold one unit.
pub fn kubelet_diagnostics(ctx: &ClusterCtx, simulated: &Manifests) -> Vec<ProfileDiagnostic> {
    let cluster = ctx.cluster;
    let mut out = Vec::new();
    for pool in &cluster.pools {
        let has_kubelet = cluster.node_classes.iter().any(|k| k.name == pool.node_class && k.kubelet.is_some());
        let Some(kubelet) = ctx.profile(&pool.profile).into_iter().flat_map(|p| &p.pools).flat_map(|p| &p.tiers).find(|t| t.name.value == pool.name).and_then(|t| t.settings.kubelet.as_ref()) else { continue };
        if !has_kubelet {
            continue;
        }
        let probe = pool_pods("gpuplan-probe", &pool.name, &[pool], 1, 1);
        let report = simulate::run_prepared(&simulate::prepare(ctx.catalog, ctx.type_labels, simulated, &simulated.node_pools), &probe, &[]);
        let Some(pending) = report.pending.first() else { continue };
        out.push(
            ctx.sources
                .error(kubelet.span, ErrorCode::E0160, format!("with these kubelet settings no node of NodePool `{}` takes a pod of one {}: {}", pool.name, pool.resource(), pending.reason))
                .label("kubelet settings")
                .help("leave room for pods: max-pods above the DaemonSets' pods, kube-reserved and system-reserved below the node's cpu and memory, eviction thresholds below its capacity"),
        );
    }
    out
}
