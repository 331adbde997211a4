//! Kueue queues, compiled from the same profiles as the NodePools so that what a queue may admit never drifts
//! from what its pool may launch:
//!
//! - the intent ([`Queue`]), parsed (and defined) by `profile/queue.rs`;
//! - [`plan`] (now `solve::queue`, planned with the pools): each queue's quota per flavor (one flavor per NodePool
//!   of its pool, in the pool's fallback order),
//!   and the checks against the NodePools: Σ nominal quota of a flavor ≤ that NodePool's limit (E0210), and
//!   what the queues can admit priced like the budget check (E0211);
//! - [`render`]: the Kueue v1beta2 objects — a `ResourceFlavor` per NodePool a queue uses, a `ClusterQueue` per
//!   queue, a `LocalQueue` in the queue's namespace.
//!
//! The Kueue API is the one `tests/fixtures/shared/schemas/kueue` defines (kubernetes-sigs/kueue v0.19.2,
//! `apis/kueue/v1beta2`). Error codes E0200–E0219 belong to queues (parsing in `profile/queue.rs`; E0205 across
//! profiles, E0208 once shares resolve, E0210–E0212 in `solve::queue`); lint codes GP020–GP021 read the rendered objects (`report/lint.rs`).

pub mod render;


/// The Kueue API group and version gpuplan emits.
pub const API_VERSION: &str = "kueue.x-k8s.io/v1beta2";
/// The label a Job (or any Kueue-managed workload) names its LocalQueue with.
pub const QUEUE_NAME_LABEL: &str = "kueue.x-k8s.io/queue-name";

