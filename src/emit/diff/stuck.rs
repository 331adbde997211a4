//! Part of the emit stage: drift that cannot finish. Karpenter replaces a drifted node only when its pods fit
//! somewhere else first (sigs.k8s.io/karpenter v1.14.1 `pkg/controllers/disruption/drift.go` `ComputeCommands`:
//! `SimulateScheduling` over the other nodes and new NodeClaims of the NodePools as they are now; when a pod fits
//! nowhere it publishes `DisruptionBlocked` and tries again on the next poll). A static NodePool's replacement must be
//! reserved within `limits.nodes` (`staticdrift.go` `ReserveNodeCount`). So a change whose new NodePools cannot hold
//! the pods that run on the old nodes leaves drift that never finishes: the old nodes stay until something else
//! removes them (expiry, an interruption, a person), and then their pods stay pending.
//!
//! The pods are the ones gpuplan tells users to write (`explain`'s placement, `PoolPlan::pod_placement`): a
//! nodeSelector on the base NodePool's `gpuplan.dev/pool` label and a toleration for each of its NoSchedule and
//! NoExecute taints. A workload that tolerates more, or selects less, may still fit: the verdict says whose pods it
//! judges.

use serde::Serialize;
use serde_json::Value;

use crate::simulate::manifests::{self, NodePool};
use crate::simulate::requirements::{Requirement, Requirements, Toleration};
use crate::simulate::scheduler::admits;
use crate::solve::POOL_LABEL;

/// One reason a NodePool's drift cannot finish, or cannot when a condition the objects do not show holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StuckDrift {
    /// Certain given the pods as gpuplan places them; otherwise it depends on what runs (`when`).
    pub certain: bool,
    /// What makes it stuck.
    pub why: String,
    /// The condition a non-certain verdict depends on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// What Karpenter then does, and what happens to the pods.
    pub next: String,
    /// How to make the change safely.
    pub fix: String,
    /// The upstream file that decides it.
    pub source: &'static str,
}

const DRIFT_GO: &str = "sigs.k8s.io/karpenter v1.14.1 pkg/controllers/disruption/drift.go (ComputeCommands, SimulateScheduling)";
const STATIC_DRIFT_GO: &str = "sigs.k8s.io/karpenter v1.14.1 pkg/controllers/disruption/staticdrift.go (ReserveNodeCount)";
const LIMITS_GO: &str = "sigs.k8s.io/karpenter v1.14.1 pkg/controllers/provisioning/scheduling/scheduler.go (remainingResources: limits less every other node)";
const BLOCKED: &str = "Karpenter skips the node (a DisruptionBlocked event) and retries every poll; the old nodes stay until expiry, an interruption or a person removes them, and then their pods stay pending";

/// Why the drift of `nodepool` (base → head) cannot finish, given every NodePool of the head's cluster; `lowered`
/// names the limits the head lowers.
pub fn stuck(base: &Value, head_pools: &[&Value], nodepool: &str, lowered: &[String]) -> Vec<StuckDrift> {
    // A head NodePool that does not read is left out: it could only hold more pods, never fewer (a pool that fits
    // none reads fine), so a verdict without it errs towards "cannot finish".
    let Some(base) = read(base) else { return Vec::new() };
    let pools: Vec<NodePool> = head_pools.iter().filter_map(|p| read(p)).collect();
    let Some(head) = pools.iter().find(|p| p.name == nodepool) else { return Vec::new() };
    // One certain cause is the verdict: what else could also stop it does not matter then.
    // A static NodePool's drift launches from the template without simulating the pods (staticdrift.go): it is
    // stopped by its node limit only.
    let certain = if head.static_replicas.is_some() { static_at_limit(head) } else { unplaceable(&base, &pools, head) };
    if let Some(s) = certain {
        return vec![s];
    }
    let mut out = Vec::new();
    if let Some(s) = reserved_only(&base, &pools, head) {
        out.push(s);
    }
    if !lowered.is_empty() && head.static_replicas.is_none() {
        out.push(StuckDrift {
            certain: false,
            why: format!("the lowered limit ({}) counts every other node of the pool, so a replacement fits only while the pool runs no more than the new limit", lowered.join(", ")),
            when: Some("the pool runs more than the new limit".into()),
            next: BLOCKED.into(),
            fix: "lower the limit in a change of its own once the drift has finished, or after the pool has shrunk below it".into(),
            source: LIMITS_GO,
        });
    }
    out
}

fn read(object: &Value) -> Option<NodePool> {
    manifests::of_objects([object]).ok()?.node_pools.pop()
}

/// The pods on the base's nodes as gpuplan places them: its pool label selected, its taints tolerated.
fn placed_pods(base: &NodePool) -> (Requirements, Vec<Toleration>) {
    let mut selector = Requirements::default();
    if let Some(pool) = base.labels.get(POOL_LABEL) {
        selector.add(POOL_LABEL, Requirement::is_in([pool.clone()]));
    }
    let mut tolerations: Vec<Toleration> = base
        .taints
        .iter()
        .filter(|t| t.effect != "PreferNoSchedule")
        .map(|t| Toleration { key: t.key.clone(), operator: if t.value.is_empty() { "Exists".into() } else { "Equal".into() }, value: t.value.clone(), effect: t.effect.clone() })
        .collect();
    // Karpenter's relaxation tolerates PreferNoSchedule taints when nothing else fits (scheduling/scheduler.go
    // `toleratePreferNoSchedule`): they never keep a pod off a NodePool.
    tolerations.push(Toleration::prefer_no_schedule());
    (selector, tolerations)
}

/// The base's pods fit no dynamic NodePool of the head (a taint they do not tolerate, a label they select removed).
fn unplaceable(base: &NodePool, pools: &[NodePool], head: &NodePool) -> Option<StuckDrift> {
    let (selector, tolerations) = placed_pods(base);
    let dynamic = || pools.iter().filter(|p| p.static_replicas.is_none());
    if dynamic().any(|p| admits(&p.taints, &p.requirements, &selector, &tolerations).is_ok()) {
        return None;
    }
    let refusal = admits(&head.taints, &head.requirements, &selector, &tolerations).err().unwrap_or_else(|| "is static".into());
    let whose = match base.labels.get(POOL_LABEL) {
        Some(pool) => format!("nodeSelector {POOL_LABEL}={pool}"),
        None => "no nodeSelector".into(),
    };
    let tolerated: Vec<String> = tolerations.iter().filter(|t| !t.key.is_empty()).map(|t| format!("{}:{}", t.key, t.effect)).collect();
    Some(StuckDrift {
        certain: true,
        why: format!(
            "the pods on its nodes ({whose}, tolerating {}) fit no NodePool after the change: NodePool `{}` {refusal}",
            if tolerated.is_empty() { "no taint".to_owned() } else { tolerated.join(", ") },
            head.name
        ),
        when: None,
        next: format!("{BLOCKED}; a scale-up launches nodes its pods cannot use"),
        fix: "make the workloads tolerate (or stop selecting) what the change adds or removes first, merge that, then make this change; or keep the old NodePool as a temporary tier until the pods have moved".into(),
        source: DRIFT_GO,
    })
}

/// A static NodePool whose node limit leaves no room for a replacement next to its replicas.
fn static_at_limit(head: &NodePool) -> Option<StuckDrift> {
    let replicas = head.static_replicas?;
    let limit = head.limits.get("nodes").map(|m| m / 1000)?;
    (limit <= i128::from(replicas)).then(|| StuckDrift {
        certain: true,
        why: format!("a static NodePool of {replicas} replicas with limits.nodes {limit}: Karpenter reserves the replacement within the limit before the node goes, and none is left"),
        when: None,
        next: "Karpenter replaces none of its drifted nodes, on every poll".into(),
        fix: format!("raise limits.nodes above {replicas} (by the nodes that may be replaced at once) for the roll"),
        source: STATIC_DRIFT_GO,
    })
}

/// A NodePool that launches reserved capacity only: a replacement needs a free instance of the reservation, launched
/// before the node it replaces goes.
fn reserved_only(base: &NodePool, pools: &[NodePool], head: &NodePool) -> Option<StuckDrift> {
    let capacity = head.requirements.get("karpenter.sh/capacity-type")?;
    if !(capacity.has("reserved") && !capacity.has("on-demand") && !capacity.has("spot")) || head.static_replicas.is_some() {
        return None;
    }
    let (selector, tolerations) = placed_pods(base);
    let fallback: Vec<&str> =
        pools.iter().filter(|p| p.name != head.name && p.static_replicas.is_none() && admits(&p.taints, &p.requirements, &selector, &tolerations).is_ok()).map(|p| p.name.as_str()).collect();
    let next = if fallback.is_empty() {
        BLOCKED.to_owned()
    } else {
        format!("each replacement launches in NodePool {} instead, so the roll finishes with the reservation idle but still billed", fallback.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "))
    };
    Some(StuckDrift {
        certain: false,
        why: "it launches reserved capacity only, and each replacement must run before the node it replaces goes".into(),
        when: Some("the capacity reservation has no unused instance".into()),
        next,
        fix: "roll it when the reservation has a free instance (one per node replaced at once), or allow on-demand in the pool for the roll".into(),
        source: DRIFT_GO,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pool(name: &str, taint: Option<&str>, label: Option<&str>) -> Value {
        let mut labels = serde_json::Map::new();
        if let Some(l) = label {
            labels.insert(POOL_LABEL.into(), json!(l));
        }
        let taints: Vec<Value> = taint.into_iter().map(|t| json!({"key": t, "effect": "NoSchedule"})).collect();
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": {"template": {"metadata": {"labels": labels}, "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "c"}, "taints": taints,
            "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]}}}})
    }

    /// drift.go: a candidate whose pods do not all schedule is skipped (`DisruptionBlocked`), every poll.
    #[test]
    fn a_taint_the_pods_do_not_tolerate_leaves_drift_that_cannot_finish() {
        let (base, head) = (pool("a", Some("gpu"), Some("a")), pool("a", Some("dedicated"), Some("a")));
        let s = stuck(&base, &[&head], "a", &[]);
        assert_eq!(s.len(), 1, "{s:#?}");
        assert!(s[0].certain && s[0].why.contains("did not tolerate taint dedicated:NoSchedule"), "{s:#?}");
        assert!(stuck(&base, &[&base], "a", &[]).is_empty(), "the same taint fits");
        let tolerant = pool("a", Some("gpu"), Some("a"));
        assert!(stuck(&base, &[&head, &tolerant], "a", &[]).is_empty(), "another NodePool holds the pods");
    }

    /// scheduler.go `toleratePreferNoSchedule`: a PreferNoSchedule taint on both sides keeps no pod off.
    #[test]
    fn a_prefer_no_schedule_taint_is_no_stuck_drift() {
        let mut p = pool("a", Some("gpu"), Some("a"));
        p["spec"]["template"]["spec"]["taints"] = json!([{"key": "spare", "effect": "PreferNoSchedule"}]);
        assert!(stuck(&p, &[&p], "a", &[]).is_empty());
    }

    #[test]
    fn a_removed_pool_label_the_pods_select_leaves_drift_that_cannot_finish() {
        let s = stuck(&pool("a", None, Some("a")), &[&pool("a", None, None)], "a", &[]);
        assert!(s.len() == 1 && s[0].certain && s[0].why.contains("incompatible requirements"), "{s:#?}");
    }

    /// staticdrift.go: `ReserveNodeCount(limit)` gives no replacement when the replicas fill `limits.nodes`.
    #[test]
    fn a_static_pool_at_its_node_limit_cannot_replace_a_node() {
        let mut head = pool("s", None, Some("s"));
        head["spec"]["replicas"] = json!(2);
        head["spec"]["limits"] = json!({"nodes": "2"});
        let s = stuck(&pool("s", None, Some("s")), &[&head], "s", &[]);
        assert!(s.iter().any(|s| s.certain && s.source == STATIC_DRIFT_GO), "{s:#?}");
        head["spec"]["limits"] = json!({"nodes": "3"});
        assert!(!stuck(&pool("s", None, Some("s")), &[&head], "s", &[]).iter().any(|s| s.source == STATIC_DRIFT_GO));
    }

    #[test]
    fn a_reserved_only_pool_depends_on_a_free_instance_and_names_its_fallback() {
        let mut head = pool("r", None, Some("t"));
        head["spec"]["template"]["spec"]["requirements"][0]["values"] = json!(["reserved"]);
        let s = stuck(&head, &[&head], "r", &[]);
        assert!(s.len() == 1 && !s[0].certain && s[0].next.contains("DisruptionBlocked"), "{s:#?}");
        let on_demand = pool("t-on-demand", None, Some("t"));
        let s = stuck(&head, &[&head, &on_demand], "r", &[]);
        assert!(s[0].next.contains("`t-on-demand`"), "{s:#?}");
    }
}
