//! One run's concrete events, after every random draw and every autoscaler decision: what the engine and the
//! conformance oracle (`conformance/karpenter`, `oracle forecast --trace F`) both replay. JSON (`serde`), version 1.
//!
//! Times are seconds from the start of the run (`at`), integers: Karpenter and the HPA act on whole seconds at best.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The trace format's version; a reader refuses another.
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    pub version: u32,
    pub cluster: String,
    pub seed: u64,
    pub horizon_seconds: u64,
    /// The calendar instant of second 0, in Unix seconds (UTC): where the NodePools' budget schedules (cron, which
    /// Karpenter reads in UTC) fire and the pods' creation timestamps fall. The draw sets it from the demand's start
    /// weekday ([`start_unix_on`]). Absent: [`START_UNIX`], a Monday; not written when it is that, so readers that
    /// predate the field (the conformance oracle refuses unknown fields) still read Monday traces.
    #[serde(default = "default_start_unix", skip_serializing_if = "is_default_start_unix")]
    pub start_unix: i64,
    /// The pod each workload's replicas run (a core/v1 Pod object as `simulate --pods` reads it: requests,
    /// nodeSelector, tolerations, affinity, topology spread), by workload `namespace/name`.
    pub workloads: BTreeMap<String, serde_json::Value>,
    /// Per NodePool: seconds from a NodeClaim's launch until its node is Ready and takes pods (boot, add-ons, image
    /// pull). A NodePool not named takes [`DEFAULT_STARTUP_SECONDS`].
    pub startup_seconds: BTreeMap<String, u64>,
    /// Sorted by `at`, then in the order drawn; events at the same second apply in this order.
    pub events: Vec<Event>,
}

/// Where second 0 falls when nothing says otherwise: Monday 2026-01-05 00:00 UTC. A trace has no date of its own; a
/// week starting on a Monday at midnight is the assumption, stated as one.
pub const START_UNIX: i64 = 1_767_571_200;

/// The second 0 of a run starting on `weekday` (0 = Monday … 6 = Sunday): that day of [`START_UNIX`]'s week, at
/// midnight UTC.
pub fn start_unix_on(weekday: u8) -> i64 {
    START_UNIX + i64::from(weekday) * 86_400
}

fn default_start_unix() -> i64 {
    START_UNIX
}

fn is_default_start_unix(start: &i64) -> bool {
    *start == START_UNIX
}

/// Start-up delay when the demand file names none: EC2 launch and boot (~60 s), node registration and the GPU
/// Operator's/device plugin's readiness (~60 s), image pull (~60 s). An assumption, stated as one.
pub const DEFAULT_STARTUP_SECONDS: u64 = 180;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Event {
    /// A workload's desired replicas from this second on (its HPA's or KEDA's decision, or the pattern itself when
    /// the workload does not autoscale). Scale-down deletes pods as the ReplicaSet controller ranks them
    /// (`pkg/controller/replicaset` `getPodsToDelete`).
    Replicas { at: u64, workload: String, replicas: u32 },
    /// A Job submitted to a LocalQueue (`namespace/name`): `pods` pods of the given object (as `workloads`' values),
    /// each running `duration_seconds` once all of them run (Kueue admits it whole, and a gang starts together).
    Job { at: u64, name: String, queue: String, pods: u32, duration_seconds: u64, pod: serde_json::Value },
    /// A spot interruption notice for one instance type in one zone: the oldest `ceil(share × n)` of the n running
    /// spot nodes of that type and zone are reclaimed (Karpenter's interruption controller drains them on the
    /// notice; EC2 reclaims them 120 s later).
    Interruption { at: u64, instance_type: String, zone: String, share: f64 },
    /// No capacity for an offering over `[at, until)` (an insufficient-capacity error on launch; Karpenter marks it
    /// unavailable and tries the next offering).
    Shortage { at: u64, until: u64, instance_type: String, zone: String, capacity_type: String },
    /// The NodePool's nodes drift from this second on (its NodeClass or AMI changed: only where the demand file says
    /// so); Karpenter replaces them as its disruption budgets allow.
    Drift { at: u64, nodepool: String },
}

impl Event {
    pub fn at(&self) -> u64 {
        match self {
            Event::Replicas { at, .. } | Event::Job { at, .. } | Event::Interruption { at, .. } | Event::Shortage { at, .. } | Event::Drift { at, .. } => *at,
        }
    }
}
