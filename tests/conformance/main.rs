//! The real consumers judge gpuplan's output. Each module drives one Go program under `conformance/` (upstream code
//! imported as pinned Go modules, never copied) on files gpuplan wrote, and compares what it prints with what gpuplan
//! says. `cargo test --test conformance` is the one entry point; `conformance/run` is the same for people.
//!
//! - [`karpenter`]: Karpenter's own scheduler (sigs.k8s.io/karpenter + aws/karpenter-provider-aws) against
//!   `gpuplan simulate`;
//! - [`consumers`]: the API server's validation and kustomize against out/;
//! - [`addons`]: the add-on charts' own values against what gpuplan encodes of them;
//! - [`reach`]: Kubernetes' DaemonSet controller decides whether the GPU add-ons run on every pool's nodes;
//! - [`forecast`]: Karpenter's own controllers over time (`oracle forecast`) on forecast traces;
//! - [`drift`]: Karpenter's drift decision (its hash functions and the NodeClaim disruption controller) against
//!   `emit::diff::drift`;
//! - [`kueue`]: Kueue's own scheduler (sigs.k8s.io/kueue) against `gpuplan simulate`'s admission.
//! - [`hpa`]: Kubernetes' HorizontalPodAutoscaler controller code against the forecast's HPA port.
//!
//! Without a Go toolchain the tests skip with a reason, unless `GPUPLAN_CONFORMANCE_REQUIRED=1` (set by `.ci/run`),
//! where a missing toolchain is a failure.

mod go;

mod addons;
mod consumers;
mod drift;
mod forecast;
mod hpa;
mod karpenter;
mod kueue;
mod reach;
