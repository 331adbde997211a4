//! Drift (kubernetes-sigs/karpenter v1.14.1): when a NodePool's spec or its NodeClass changes, the NodeClaims
//! launched before the change no longer match its hash and get the `Drifted` condition
//! (`pkg/controllers/nodeclaim/disruption/drift.go`); NodeClaims launched after it carry the new hash and do not. The
//! disruption controller's drift method (`pkg/controllers/disruption/drift.go` `ComputeCommands`) then replaces them,
//! one candidate per command: drifted candidates in drift order, the empty ones first, the first whose NodePool's
//! budget for reason `Drifted` is not spent and whose pods all reschedule (on other nodes or new NodeClaims, the
//! replacements, any number of them) gives the command. Drift has no validator: the command executes at once
//! (replacements launched, the candidate drained once they are Ready, `queue.go`), and the controller reconciles again.

use super::Run;
use crate::forecast::timeline::EndedBy;
use crate::simulate::scheduler::Claim;

impl Run<'_, '_> {
    /// The trace's `Drift` event: the NodePool's live NodeClaims launched before now drift (the dynamic ones: a static
    /// NodePool's replicas are replaced by its own controller, `NewStaticDrift`, which the replay does not model).
    pub(super) fn drift_nodepool(&mut self, nodepool: &str) {
        let now = self.now;
        let templates = self.cluster.prepared.templates();
        for node in self.nodes.iter_mut().filter(|n| n.live() && !n.fixed && n.launched_at < now && n.drifted_at.is_none()) {
            if templates[node.template].pool.name == nodepool {
                node.drifted_at = Some(now);
            }
        }
        self.disruption.dirty = true;
    }

    /// drift.go `ComputeCommands`: the candidate to replace and its replacements, if any candidate can go now.
    pub(super) fn drift(&self) -> Option<(usize, Vec<Claim>)> {
        let mut candidates = self.disruptable_as(true, |node| node.drifted_at.is_some());
        if candidates.is_empty() {
            return None;
        }
        // Sorted by the Drifted condition's transition time (ties, which Go's unstable sort leaves open: launch order),
        // the empty ones first.
        candidates.sort_by_key(|&n| (!self.nodes[n].pods.is_empty(), self.nodes[n].drifted_at, n));
        let budgets = self.budget_mapping(EndedBy::Drifted);
        candidates.into_iter().filter(|&n| budgets[self.nodes[n].template] > 0).find_map(|n| {
            let placement = self.simulate_without(&[n]);
            placement.pending.is_empty().then_some((n, placement.new_claims))
        })
    }
}
