//! Consolidation of underutilized nodes (kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/disruption/`):
//! `consolidation.go` `computeConsolidation` (the candidates' pods rescheduled without them: all on other nodes is a
//! delete; exactly one new NodeClaim cheaper than the candidates is a replace, `filterByPrice`; spot candidates are
//! not replaced by spot, spot-to-spot consolidation being off by default), `multinodeconsolidation.go`
//! (`firstNConsolidationOption`: a binary search for the most candidates, up to 100, that one command removes),
//! `singlenodeconsolidation.go` (the first candidate, in disruption-cost order, that a command removes) and
//! `balanced.go` (`Balanced`: a move is approved when its share of the NodePool's cost saved over its share of the
//! NodePool's disruption is at least 1/k, k = 2).

use super::policy::Consolidation;
use super::provision::Scope;
use super::Run;
use crate::catalog::CapacityType;
use crate::forecast::timeline::EndedBy;
use crate::simulate::requirements::{offering_compatible, Requirements};
use crate::simulate::scheduler::Claim;

/// multinodeconsolidation.go `MaxMultiNodeConsolidationCandidates`... the batch bound (100).
pub const MULTI_NODE_MAX: usize = 100;

/// `v1.BalancedK`.
pub const BALANCED_K: f64 = 2.0;

/// One disruption command.
#[derive(Debug, Clone)]
pub struct Command {
    pub reason: EndedBy,
    pub candidates: Vec<usize>,
    /// The one NodeClaim launched in their place, if any (its types already filtered by price).
    pub replacement: Option<Claim>,
}

impl Run<'_, '_> {
    /// computeConsolidation over these candidates, None when no valid command removes them.
    pub(super) fn consolidate(&self, candidates: &[usize]) -> Option<Command> {
        let pods: Vec<usize> = candidates.iter().flat_map(|&n| self.nodes[n].pods.iter().copied()).collect();
        let placement = self.schedule(&pods, Scope { ready_only: false, provision: true, without: candidates });
        if !placement.pending.is_empty() || placement.new_claims.len() > 1 {
            return None;
        }
        let price: f64 = candidates.iter().map(|&n| self.nodes[n].price()).sum();
        let Some(mut claim) = placement.new_claims.into_iter().next() else {
            return Some(Command { reason: EndedBy::Underutilized, candidates: candidates.to_vec(), replacement: None });
        };
        let all_spot = candidates.iter().all(|&n| self.nodes[n].offering.capacity_type == CapacityType::Spot);
        // consolidation.go `computeConsolidation`: all candidates spot and a replacement that may be spot goes to
        // `computeSpotToSpotConsolidation`, which does nothing with the SpotToSpotConsolidation gate off (the
        // default). Only the capacity type is asked: the zone has no part in it.
        let may_be_spot = claim.requirements.get("karpenter.sh/capacity-type").is_none_or(|r| r.has(CapacityType::Spot.as_str()));
        if all_spot && may_be_spot {
            return None;
        }
        // filterByPrice: only types whose cheapest compatible available offering is cheaper than the candidates.
        claim.types.retain(|&i| self.cheapest_offering(claim.template, &claim.requirements, i) < price);
        if claim.types.is_empty() {
            return None;
        }
        Some(Command { reason: EndedBy::Underutilized, candidates: candidates.to_vec(), replacement: Some(claim) })
    }

    /// The command's price saved per hour: the candidates' prices less the replacement's cheapest offering.
    fn savings(&self, cmd: &Command) -> f64 {
        let price: f64 = cmd.candidates.iter().map(|&n| self.nodes[n].price()).sum();
        let replacement = cmd.replacement.as_ref().map_or(0.0, |c| c.types.iter().map(|&i| self.cheapest_offering(c.template, &c.requirements, i)).fold(f64::MAX, f64::min));
        price - replacement
    }

    /// The price of type `i` of template `t` at its cheapest available offering these requirements allow (f64::MAX
    /// when none): what `filterByPrice`, the savings and `filterOutSameInstanceType` all compare.
    fn cheapest_offering(&self, t: usize, requirements: &Requirements, i: usize) -> f64 {
        let offerings = self.templates[t].types[i].offerings.iter();
        offerings.filter(|o| o.available && offering_compatible(requirements, &o.zone, o.capacity_type.as_str())).map(|o| o.usd_per_hour).fold(f64::MAX, f64::min)
    }

    /// balanced.go `EvaluateBalancedMove`: every Balanced NodePool among the candidates' approves its share of the
    /// move (savings over the NodePool's total cost, against the move's reschedule cost over the NodePool's total
    /// disruption cost, at least 1/k); other policies approve every move.
    fn approved(&self, cmd: &Command) -> bool {
        let savings = self.savings(cmd);
        let total_price: f64 = cmd.candidates.iter().map(|&n| self.nodes[n].price()).sum();
        let mut pools: Vec<usize> = cmd.candidates.iter().map(|&n| self.nodes[n].template).collect();
        pools.dedup();
        pools.iter().filter(|&&t| self.cluster.policies[t].consolidation == Consolidation::Balanced).all(|&t| {
            let in_pool: Vec<usize> = cmd.candidates.iter().copied().filter(|&n| self.nodes[n].template == t).collect();
            let pool_price: f64 = in_pool.iter().map(|&n| self.nodes[n].price()).sum();
            let pool_savings = if pools.len() > 1 && total_price > 0.0 { savings * pool_price / total_price } else { savings };
            let move_disruption: f64 = in_pool.iter().map(|&n| self.nodes[n].reschedule_cost()).sum();
            self.balanced_score_passes(t, pool_savings, move_disruption)
        })
    }

    /// balanced.go `ScoreMove(...).Approved()` for template `t`'s NodePool: the move's share of the NodePool's cost
    /// saved over its share of the NodePool's disruption, at least 1/k.
    fn balanced_score_passes(&self, t: usize, pool_savings: f64, move_disruption: f64) -> bool {
        let pool_nodes = self.nodes.iter().filter(|n| n.template == t && n.live() && n.ready(self.now));
        let (total_cost, total_disruption) = pool_nodes.fold((0.0, 0.0), |(c, d), n| (c + n.price(), d + n.reschedule_cost()));
        if total_cost <= 0.0 || total_disruption <= 0.0 {
            return true;
        }
        let (savings_fraction, disruption_fraction) = (pool_savings / total_cost, move_disruption / total_disruption);
        let score = if savings_fraction <= 0.0 { 0.0 } else if disruption_fraction == 0.0 { f64::INFINITY } else { savings_fraction / disruption_fraction };
        score >= 1.0 / BALANCED_K
    }

    /// balanced.go `CanPassThreshold`: a Balanced NodePool's candidate whose best move, a delete (its whole price
    /// saved, nothing launched), scores below the threshold can give no approved command, so single-node
    /// consolidation skips it before simulating (singlenodeconsolidation.go); other policies always pass.
    fn can_pass_threshold(&self, n: usize) -> bool {
        let node = &self.nodes[n];
        self.cluster.policies[node.template].consolidation != Consolidation::Balanced || self.balanced_score_passes(node.template, node.price(), node.reschedule_cost())
    }

    /// The candidates of NodePools that consolidate underutilized nodes, as many as the `Underutilized` budgets allow.
    fn underutilized_candidates(&self) -> Vec<usize> {
        let mut budgets = self.budget_mapping(EndedBy::Underutilized);
        self.by_savings_ratio(self.candidates())
            .into_iter()
            .filter(|&n| self.cluster.policies[self.nodes[n].template].consolidation.underutilized())
            .filter(|&n| {
                let t = self.nodes[n].template;
                let ok = budgets[t] > 0;
                budgets[t] = budgets[t].saturating_sub(1);
                ok
            })
            .collect()
    }

    /// consolidation.go `ShouldDisrupt` and `sortCandidates`: empty nodes are Emptiness's alone (its budget, its
    /// reason), and the rest go dearest per unit of disruption first: `SavingsRatio` = price / (1 + the pods'
    /// eviction costs, 1 each without a deletion cost or priority in the trace), highest first (a stable sort, so
    /// equal ratios keep the candidates' order). Single-node's interleaving by NodePool is not modelled.
    fn by_savings_ratio(&self, candidates: Vec<usize>) -> Vec<usize> {
        let ratio = |n: usize| self.nodes[n].price() / self.nodes[n].reschedule_cost();
        let mut out: Vec<usize> = candidates.into_iter().filter(|&n| !self.nodes[n].pods.is_empty()).collect();
        out.sort_by(|&a, &b| ratio(b).total_cmp(&ratio(a)));
        out
    }

    /// multinodeconsolidation.go `ComputeCommands` / `firstNConsolidationOption`.
    pub(super) fn multi_node(&self) -> Option<Command> {
        let mut candidates = self.underutilized_candidates();
        candidates.truncate(MULTI_NODE_MAX);
        if candidates.len() < 2 {
            return None;
        }
        let (mut min, mut max) = (1, candidates.len() - 1);
        let mut saved = None;
        while min <= max {
            let mid = (min + max) / 2;
            let cmd = self.consolidate(&candidates[..=mid]).and_then(|c| self.without_same_type(c)).filter(|c| self.approved(c));
            if cmd.is_some() {
                saved = cmd;
                min = mid + 1;
            } else if mid == 0 {
                break;
            } else {
                max = mid - 1;
            }
        }
        saved
    }

    /// multinodeconsolidation.go `filterOutSameInstanceType`: a replacement may not be a candidate's own type, nor
    /// anything as dear as the cheapest such (merging nodes into one of the same kind saves nothing the deletes do
    /// not); a replacement left without types is no command.
    fn without_same_type(&self, mut cmd: Command) -> Option<Command> {
        let Some(claim) = cmd.replacement.as_mut() else { return Some(cmd) };
        let template = &self.templates[claim.template];
        let options: Vec<&str> = claim.types.iter().map(|&i| template.types[i].name.as_str()).collect();
        let max_price = cmd.candidates.iter().map(|&n| &self.nodes[n]).filter(|n| options.contains(&n.ty.name.as_str())).map(|n| n.price()).fold(f64::MAX, f64::min);
        claim.types.retain(|&i| self.cheapest_offering(claim.template, &claim.requirements, i) < max_price);
        (!claim.types.is_empty()).then_some(cmd)
    }

    /// singlenodeconsolidation.go `ComputeCommands`: the first candidate a command removes.
    pub(super) fn single_node(&self) -> Option<Command> {
        let budgets = self.budget_mapping(EndedBy::Underutilized);
        for n in self.by_savings_ratio(self.candidates()) {
            let t = self.nodes[n].template;
            // singlenodeconsolidation.go checks the budget is not exhausted; it does not spend it per candidate tried.
            if !self.cluster.policies[t].consolidation.underutilized() || budgets[t] == 0 || !self.can_pass_threshold(n) {
                continue;
            }
            if let Some(cmd) = self.consolidate(&[n]).filter(|c| self.approved(c)) {
                return Some(cmd);
            }
        }
        None
    }
}
