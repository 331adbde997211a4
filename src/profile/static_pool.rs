//! `static replicas=<n> max-nodes=<m>`: a static pool, whose NodePool keeps `replicas` nodes whatever the pods
//! (kubernetes-sigs/karpenter v1.14.1 `designs/static-capacity.md`; NodePool `spec.replicas`, feature gate
//! `StaticCapacity`, alpha).
//!
//! Why one `static` line with a `replicas=` property rather than a bare `replicas 3`: the pool already has a
//! `replicas` (time-slicing's `time-slicing replicas=4`) and its workloads have theirs, so the word alone would read
//! as three different things; `static` names the mode the field switches on (upstream: "the existence of replicas
//! field will determine if NodePool is Static"), and `max-nodes=` (the NodePool's `limits.nodes`, the only limit a
//! static NodePool may carry) belongs on the same line.
//!
//! What the rest of the language means on a static pool, and what is refused (the CRD's rules in
//! `karpenter.sh_nodepools.yaml`, and provisioner.go `NewScheduler`, which leaves static NodePools out of dynamic
//! provisioning):
//! - one NodePool only, and no `reserved` block (E0302): a preset or `tier`s that add a fallback NodePool order it by weight, and a static
//!   NodePool has no weight and takes no part in dynamic provisioning, so the fallback would be an ordinary pool
//!   that the pods reach whether the static nodes are full or not;
//! - no `weight` (E0303: "'weight' is not supported on static NodePools");
//! - no `max-accelerators`, `max-cpu` or `limits` (E0304: "only 'limits.nodes' is supported on static NodePools");
//!   the size is `replicas`, the cap during replacements `max-nodes`;
//! - no `consolidation` / `consolidate-after` written in the pool (E0305: Karpenter ignores them on a static
//!   NodePool; the preset's are simply not emitted);
//! - `max-nodes` below `replicas` (E0301): Karpenter would stop at the limit and never reach the replicas.
//!
//! `replicas=0` is allowed, as the CRD allows it (`replicas` has `minimum: 0`): it parks the pool, a static
//! NodePool with no nodes and no cost that keeps its place (and its static mode, which the API server will not let
//! an existing NodePool leave: see `emit::transition`) until its replicas are raised again.

use kdl::KdlNode;

use super::parser::{prop, Parser};
use super::{Preset, Settings, Tier};
use crate::diagnostic::ErrorCode;
use crate::diagnostic::{Span, Spanned};

/// The most nodes a static pool may keep: a bound on what a typo (`replicas=1000000`) can cost.
pub const MAX_REPLICAS: i128 = 10_000;

/// A static pool: the NodePool's `spec.replicas`, and its `limits.nodes` when given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticPool {
    pub replicas: u32,
    pub max_nodes: Option<u32>,
}

impl Parser<'_> {
    /// `static replicas=<n> [max-nodes=<m>]`: E0300 without replicas, E0301 for max-nodes below replicas.
    pub(super) fn apply_static(&mut self, node: &KdlNode, s: &mut Settings) {
        self.check_entries(node, &["replicas", "max-nodes"], 0);
        let span = self.span(node.span());
        let Some(replicas) = prop(node, "replicas").and_then(|e| self.expect_integer(e, "replicas", 0, MAX_REPLICAS)) else {
            if prop(node, "replicas").is_none() {
                self.error(span, ErrorCode::E0300, "`static` needs replicas=<nodes>", "write static replicas=2 (the nodes the NodePool keeps, whatever the pods)");
            }
            return;
        };
        let max_nodes = match prop(node, "max-nodes").map(|e| self.expect_integer(e, "max-nodes", 1, MAX_REPLICAS)) {
            Some(None) => return,
            Some(Some(m)) if m.value < replicas.value => {
                let message = format!("max-nodes={} is below replicas={}: Karpenter stops at the node limit and never reaches the replicas", m.value, replicas.value);
                return self.error(m.span, ErrorCode::E0301, message, format!("raise max-nodes to at least {} (replicas plus the nodes a replacement may add), or remove it", replicas.value));
            }
            Some(Some(m)) => Some(m.value as u32),
            None => None,
        };
        s.static_pool = Some(Spanned::new(StaticPool { replicas: replicas.value as u32, max_nodes }, span));
    }

    /// The settings a static pool refuses (see the module doc), each at the line that wrote it. `preset_span` tells
    /// a value the user wrote from one the preset gave.
    pub(super) fn check_static(&mut self, preset: &Spanned<Preset>, tiers: &[Tier]) {
        let Some(at) = tiers.iter().find_map(|t| t.settings.static_pool.as_ref().map(|s| s.span)) else { return };
        if tiers.len() > 1 {
            let why = match preset.value {
                Preset::InferenceSpot => "preset \"inference-spot\" adds an on-demand NodePool after the spot one".to_string(),
                Preset::Tiered => format!("its {} tiers are NodePools in fallback order", tiers.len()),
                _ => "its `reserved` block adds a reservation NodePool in front of it".to_string(),
            };
            let message = format!("a static pool is one NodePool, but {why}: fallback order is weight, and a static NodePool has none and takes no part in dynamic provisioning");
            self.error(at, ErrorCode::E0302, message, "keep `static` in a pool of one NodePool (preset general, inference-on-demand, training-on-demand or batch-spot; capacity \"reserved\" alone for a reservation), and write the dynamic fallback as a pool of its own");
        }
        for tier in tiers.iter().filter(|t| t.settings.static_pool.is_some()) {
            self.check_static_settings(&tier.settings, preset.span);
        }
    }

    fn check_static_settings(&mut self, s: &Settings, preset_span: Span) {
        // A reservation is billed whole and sized by its instances; a static pool by its replicas. Two sizes for one
        // NodePool (and two fixed costs) would be counted twice or contradict each other.
        if let (Some(r), Some(st)) = (&s.reserved, &s.static_pool) {
            let message = format!("a static pool of {} replicas cannot also be a capacity reservation: the reservation is sized and billed by its instances", st.value.replicas);
            self.error(r.span, ErrorCode::E0302, message, "keep the reservation in a pool of its own (its reserved tier is kept up to its instances anyway), or drop `reserved` from the static pool");
        }
        if let Some(w) = &s.weight {
            self.error(w.span, ErrorCode::E0303, "a static NodePool takes no weight (the CRD refuses it: 'weight' is not supported on static NodePools)", "remove `weight`: the static nodes exist whatever the weights, and pods land on them before Karpenter launches anything");
        }
        let limits = [s.max_accelerators.as_ref().map(|m| (m.span, "max-accelerators")), s.max_cpu.as_ref().map(|m| (m.span, "max-cpu")), s.resource_limits.as_ref().map(|l| (l.span, "limits"))];
        for (span, what) in limits.into_iter().flatten() {
            let message = format!("`{what}` on a static pool: only limits.nodes is supported on static NodePools, and the pool's size is its replicas");
            self.error(span, ErrorCode::E0304, message, "remove it; cap the nodes a replacement may add with static replicas=… max-nodes=…");
        }
        let d = &s.disruption;
        for (value, what) in [(&d.consolidation_policy, "consolidation"), (&d.consolidate_after, "consolidate-after")] {
            if value.span != preset_span {
                let message = format!("`{what}` on a static pool: Karpenter ignores consolidation on a static NodePool (its nodes are kept, not consolidated)");
                self.error(value.span, ErrorCode::E0305, message, "remove it; expire-after, budgets and the grace period still apply to drift and expiry replacements");
            }
        }
    }
}
