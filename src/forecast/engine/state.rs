//! The cluster as the replay holds it between events: nodes (launched NodeClaims), pods, and what each pod is
//! waiting for.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::forecast::timeline::EndedBy;
use crate::simulate::instances::{Offering, SimType};
use crate::simulate::requirements::Requirements;
use crate::simulate::scheduler::sum;
use crate::simulate::yaml::Resources;

/// A launched NodeClaim and its node.
#[derive(Debug, Clone)]
pub struct Node {
    pub id: String,
    /// Its NodePool's position among the prepared templates (weight order).
    pub template: usize,
    pub ty: Arc<SimType>,
    pub offering: Offering,
    /// The NodePool's and the type's requirements, pinned to the type, zone and capacity type.
    pub requirements: Requirements,
    pub launched_at: u64,
    pub ready_at: u64,
    pub terminated_at: Option<u64>,
    pub ended_by: Option<EndedBy>,
    /// Pods bound to it or nominated to it (in-flight): the scheduler counts both.
    pub pods: BTreeSet<usize>,
    pub requests: Resources,
    /// nodeclaim `Status.LastPodEventTime`: when a pod last bound to it or left it (consolidateAfter counts from it,
    /// or from Ready when no pod ever came).
    pub last_pod_event: Option<u64>,
    pub deleting: Option<Deleting>,
    /// A static NodePool's replica: never consolidated.
    pub fixed: bool,
    /// NodeClaim `Drifted` condition: since when its NodePool's spec no longer matches it (None: not drifted).
    pub drifted_at: Option<u64>,
}

/// A node on its way out.
#[derive(Debug, Clone)]
pub struct Deleting {
    pub reason: EndedBy,
    /// Draining starts (a replacement command waits for its replacements to be Ready; None until then).
    pub drain_from: Option<u64>,
    /// `terminationGracePeriod`: pods still there are deleted then.
    pub deadline: Option<u64>,
    /// A spot reclaim: the instance is gone then, whatever is left on it.
    pub gone_at: Option<u64>,
}

impl Node {
    pub fn live(&self) -> bool {
        self.terminated_at.is_none()
    }

    pub fn ready(&self, now: u64) -> bool {
        self.live() && self.ready_at <= now
    }

    /// Takes new pods: live and not on its way out (candidates are tainted `karpenter.sh/disrupted:NoSchedule`).
    pub fn schedulable(&self) -> bool {
        self.live() && self.deleting.is_none()
    }

    pub fn add_pod(&mut self, pod: usize, requests: &Resources) {
        if self.pods.insert(pod) {
            self.requests = sum(&self.requests, requests);
        }
    }

    pub fn remove_pod(&mut self, pod: usize, requests: &Resources, now: u64) {
        if self.pods.remove(&pod) {
            for (k, v) in requests {
                if let Some(r) = self.requests.get_mut(k) {
                    *r -= v;
                }
            }
            self.last_pod_event = Some(now);
        }
    }

    /// nodeclaim/disruption/consolidation.go: consolidatable `consolidateAfter` after the last pod event, or after
    /// initialization when no pod ever came.
    pub fn consolidatable_at(&self, consolidate_after: u64) -> u64 {
        self.last_pod_event.unwrap_or(self.ready_at).max(self.ready_at) + consolidate_after
    }

    /// The hourly price Karpenter compares (the offering's ordering price).
    pub fn price(&self) -> f64 {
        self.offering.usd_per_hour
    }

    /// types.go `computeRescheduleDisruptionCost`: `PerNodeBaseDisruptionCost` (1) plus each pod's eviction cost (1:
    /// the trace has no deletion cost or priority). Balanced's scores and `SavingsRatio` divide by it.
    pub fn reschedule_cost(&self) -> f64 {
        1.0 + self.pods.len() as f64
    }
}

/// Who owns a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Owner {
    /// A workload (index into the run's workloads).
    Workload(usize),
    /// A Job (index into the run's jobs).
    Job(usize),
}

/// One pod object.
#[derive(Debug, Clone)]
pub struct PodState {
    pub owner: Owner,
    /// Which of its owner's specs it copies (a Job's pods after flavor injection).
    pub spec: usize,
    pub created_at: u64,
    /// Since when it has been waiting to run (created, or evicted and recreated); None while it runs.
    pub pending_since: Option<u64>,
    /// Bound, or nominated to an in-flight node.
    pub node: Option<usize>,
    pub running: bool,
    pub gone: bool,
}
