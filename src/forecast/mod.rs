//! `gpuplan forecast`: what the clusters will cost under the demand they really have, not only what they may cost.
//!
//! The stage, in the order a run goes through it:
//!
//! | module | reads | gives |
//! |---|---|---|
//! | `demand` | `gpuplan.demand.kdl` | `Demand`: per cluster, workloads' replicas or metric over time, Job arrivals per queue, start-up delays, spot interruptions and shortages, every value with its span |
//! | `scaler` | a `Compilation`'s HorizontalPodAutoscaler or ScaledObject | what scales a workload: min, max, targets, behaviour (autoscaling/v2's defaults where absent), KEDA's polling and cooldown |
//! | `draw` | a `Demand`, a `Compilation`'s cluster, a seed | a [`trace::Trace`]: the concrete events of one run (HPA/KEDA decisions made, arrivals and interruptions drawn), random streams keyed per entity |
//! | `engine` | a `Trace`, the cluster's manifests | a [`timeline::Timeline`]: every node's life and every disruption decision, discrete-event, deterministic |
//! | `summary` | `Timeline`s, prices, budgets | `Forecast`: $/day, $/month, node-hours, pending pod-minutes, p50/p95 hourly spend, hours over budget |
//! | `report`, `picture` | a `Forecast` | table, markdown, JSON; the SVG picture |
//!
//! A [`trace::Trace`] and a [`timeline::Timeline`] are also the interchange with the conformance oracle
//! (`conformance/karpenter`, `oracle forecast`): it replays the same trace through Karpenter v1.14.1's controllers and
//! prints a `Timeline`, which `summary` prices the same way.

pub mod demand;
pub mod draw;
pub mod engine;
pub mod picture;
pub mod report;
pub mod run;
pub mod scaler;
pub mod summary;
pub mod timeline;
pub mod trace;
