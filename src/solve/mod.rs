//! Stage 3: Intent + Catalog → [`Plan`]. Every number in the output is decided here, bounded and explained.
//!
//! Per NodePool (one per tier):
//! 1. **Filter** the catalog by the intent, recording for each constraint which types it removed, so that an
//!    empty result names the constraint that removed the last candidates.
//! 2. **Rank** by $/accelerator-hour (the price for the pool's capacity type; for spot, the highest spot price
//!    among the pool's zones), ties by name.
//! 3. **Price quality**: drop types whose $/accelerator-hour exceeds `price-ratio-max` × the cheapest.
//! 4. **Size** the accelerator limit: `max-accelerators`, and the profile's $/h budget split across its pools
//!    so that Σ limit × worst $/accelerator-hour ≤ budget (see `limits::size_limits`). Types with more accelerators
//!    than the limit are dropped (they could never launch); if that empties a pool, it is an error.
//! 5. **Weights**, distinct across the cluster: profile priority first, then tier order.
//!
//! Then, from the cluster's finished pools ([`ClusterPools`]): its NodeOverlays (`overlays`), its ops plan ([`ops`]:
//! workloads, the GPU Operator) and its Kueue plan ([`queue`]).
//!
//! Where each step lives: `cluster` runs them for every cluster, `profile_pools` for one profile; `refusals`, then
//! `select` with `constraints`, are steps 1–3 for a tier; `tier` and `disruption` build its [`PoolPlan`],
//! `node_class` and `node_class_settings` its node class; `efa` pins an EFA pool to one zone; `limits` (with
//! [`static_pool`]) is step 4 and `weights` step 5. `pool` and `plan` hold the types the later stages read; [`mig`]
//! knows which MIG configs exist for which GPU.

pub mod catalog_names;
mod cluster;
mod constraints;
mod disruption;
mod efa;
mod limits;
pub mod mig;
mod node_class;
mod node_class_settings;
mod non_queued;
pub mod ops;
/// `overlay` blocks: ranking by the overlaid price, units from capacity overlays, the NodeOverlays to render.
mod overlays;
mod plan;
mod pool;
/// What the cluster's Karpenter needs for the output: release, feature gates, interruption queue, EFA networking.
pub mod prerequisites;
mod profile_pools;
pub mod queue;
mod refusals;
mod select;
/// Static pools' fixed cost (`static replicas=…`).
pub mod static_pool;
mod tier;
mod weights;

pub use cluster::solve;
pub use constraints::{has_only, node_summary, CPU_POOL_MEMORY_MIB_PER_VCPU};
pub use disruption::{outside_window, way_back, without_redundant_budgets, PROTECTED_REASONS};
pub use limits::VCPUS_PER_ACCELERATOR;
pub use node_class::{default_class_name, host_device_plugin, NodeClassPlan, AUTO_MODE_EPHEMERAL_STORAGE};
pub use overlays::{idle as idle_overlays, OverlayPlan};
pub use plan::{ClusterPlan, Plan, ProfileSummary};
pub use pool::{
    units_per_accelerator, units_per_gpu, workload_placement, Candidate, ClusterPools, DisruptionPlan, PodPlacement, PoolPlan, Removal, Requirement, SpreadAdvice,
    HOST_KEY, NODEPOOL_LABEL, ONE_PER_NODE, POOL_LABEL, ZONE_KEY,
};
pub use select::{SPOT_DIVERSITY_RATIO_MAX, SPOT_MIN_TYPES};

pub use crate::catalog::cost::round_cents;
