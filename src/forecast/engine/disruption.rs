//! The disruption controller (kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/disruption/controller.go`): every
//! poll tries its methods in order (emptiness, drift, multi-node, then single-node consolidation) and stops at the
//! first that finds a command; a command is validated 15 s later (`validation.go`, `commandValidationDelay`), then
//! executed (`queue.go`: replacements launched first, candidates deleted once they are Ready). Polls come every 10 s
//! (`pollingPeriod`) and again at once after a command.

use super::consolidation::Command;
use super::Mode;
use super::Run;
use crate::forecast::timeline::{Decision, EndedBy};

/// controller.go `pollingPeriod`.
pub const POLLING_SECONDS: u64 = 10;
/// consolidation.go `commandValidationDelay`.
pub const VALIDATION_SECONDS: u64 = 15;

/// The controller's own state between polls.
#[derive(Debug, Default)]
pub struct Controller {
    /// The next poll's time (the phase of the 10 s loop).
    pub next_poll: u64,
    /// The cluster changed since the last poll (event-driven mode polls only then, or when a timer passed).
    pub dirty: bool,
    /// A timer (consolidateAfter, a budget window) that changes what a poll finds, after the last poll.
    pub wake_at: Option<u64>,
    /// A command waiting for its validation: (when, command).
    pub validating: Option<(u64, Command)>,
    /// Executed commands whose replacements are not Ready yet: (candidates, replacements).
    pub orchestrating: Vec<(Vec<usize>, Vec<usize>)>,
}

impl Controller {
    /// The first poll of the loop at or after `t`.
    fn poll_at_or_after(&self, t: u64) -> u64 {
        if t <= self.next_poll {
            return self.next_poll;
        }
        self.next_poll + (t - self.next_poll).div_ceil(POLLING_SECONDS) * POLLING_SECONDS
    }
}

impl Run<'_, '_> {
    /// When the controller next does anything: a validation, or the next poll that can find something new.
    pub(super) fn disruption_next(&self) -> Option<u64> {
        let d = &self.disruption;
        if let Some((at, _)) = &d.validating {
            return Some(*at);
        }
        let poll = match self.mode {
            Mode::Polling => Some(d.next_poll),
            Mode::EventDriven if d.dirty => Some(d.poll_at_or_after(self.now)),
            Mode::EventDriven => d.wake_at.map(|w| d.poll_at_or_after(w)),
        };
        poll.map(|p| p.max(self.now + 1))
    }

    /// Orchestration, validation and the poll due now.
    pub(super) fn disrupt_if_due(&mut self) {
        self.orchestrate();
        let now = self.now;
        if let Some((at, cmd)) = self.disruption.validating.take() {
            if at > now {
                self.disruption.validating = Some((at, cmd));
                return;
            }
            if let Some(valid) = self.validate(&cmd) {
                self.execute(valid);
            }
            // A command executed or abandoned: the controller reconciles again at once.
            self.disruption.next_poll = now;
            self.poll();
            return;
        }
        // Polls skipped while nothing could change keep the loop's phase: the next one is on it.
        self.disruption.next_poll = self.disruption.poll_at_or_after(now);
        if now < self.disruption.next_poll {
            return;
        }
        let due = match self.mode {
            Mode::Polling => true,
            Mode::EventDriven => self.disruption.dirty || self.disruption.wake_at.is_some_and(|w| w <= now),
        };
        if due {
            self.poll();
        } else {
            self.disruption.next_poll = self.disruption.poll_at_or_after(now + 1);
        }
    }

    /// One reconcile: the methods in order (controller.go `NewMethods`: emptiness, drift, multi-node, single-node);
    /// a consolidation command goes to validation; drift has no validator, so its command executes at once and the
    /// controller reconciles again.
    fn poll(&mut self) {
        let now = self.now;
        self.disruption.dirty = false;
        let mut cmd = self.emptiness();
        while cmd.is_none() {
            let Some((candidate, replacements)) = self.drift() else { break };
            self.execute_with(EndedBy::Drifted, vec![candidate], &replacements);
            cmd = self.emptiness();
        }
        let cmd = cmd.or_else(|| self.multi_node()).or_else(|| self.single_node());
        match cmd {
            Some(cmd) => self.disruption.validating = Some((now + VALIDATION_SECONDS, cmd)),
            None => self.disruption.next_poll = now + POLLING_SECONDS,
        }
        self.disruption.wake_at = self.disruption_timers();
    }

    /// The earliest time after now at which a node becomes consolidatable or a budget window opens or closes.
    fn disruption_timers(&self) -> Option<u64> {
        let now = self.now;
        let consolidatable = self.nodes.iter().filter(|n| n.live() && n.deleting.is_none() && !n.fixed).filter_map(|n| {
            let after = self.cluster.policies[n.template].consolidate_after?;
            Some(n.consolidatable_at(after)).filter(|t| *t > now)
        });
        let budgets = self.cluster.policies.iter().flat_map(|p| p.budget_boundaries(now));
        consolidatable.chain(budgets).min()
    }

    /// helpers.go `BuildDisruptionBudgetMapping`: per template, the disruptions its NodePool's budgets allow for the
    /// reason now, less the nodes already disrupting (initialized nodes not Ready or marked for deletion).
    pub(super) fn budget_mapping(&self, reason: EndedBy) -> Vec<u64> {
        let templates = self.cluster.prepared.templates();
        let mut nodes = vec![0u64; templates.len()];
        let mut disrupting = vec![0u64; templates.len()];
        for n in self.nodes.iter().filter(|n| n.ready(self.now)) {
            nodes[n.template] += 1;
            disrupting[n.template] += u64::from(n.deleting.is_some());
        }
        (0..templates.len()).map(|t| self.cluster.policies[t].allowed_disruptions(self.now, nodes[t], reason).saturating_sub(disrupting[t])).collect()
    }

    /// helpers.go `GetCandidates` / types.go `NewCandidate`: initialized nodes of dynamic NodePools that consolidate,
    /// not marked for deletion, consolidatable (`consolidateAfter` passed since the last pod event), with no
    /// `do-not-disrupt` pod and every pod evictable under its PDBs (graceful disruption); in launch order, then by
    /// disruption cost (consolidation.go `sortCandidates`, stable).
    pub(super) fn candidates(&self) -> Vec<usize> {
        let now = self.now;
        let mut out = self.disruptable(|node| self.cluster.policies[node.template].consolidate_after.is_some_and(|after| node.consolidatable_at(after) <= now));
        out.sort_by(|&a, &b| self.disruption_cost(a).total_cmp(&self.disruption_cost(b)));
        out
    }

    /// The nodes any graceful method may disrupt (types.go `NewCandidate`) that the method's `ShouldDisrupt` keeps, in
    /// launch order.
    pub(super) fn disruptable(&self, should_disrupt: impl Fn(&super::state::Node) -> bool) -> Vec<usize> {
        self.disruptable_as(false, should_disrupt)
    }

    /// [`Run::disruptable`] for a method of the eventual class (drift): types.go `NewCandidate` keeps a node whose pods
    /// a PDB or `do-not-disrupt` holds when its NodeClaim has a `terminationGracePeriod` (`EventualDisruptionClass`:
    /// bounded by it, whatever the PDBs say).
    pub(super) fn disruptable_as(&self, eventual: bool, should_disrupt: impl Fn(&super::state::Node) -> bool) -> Vec<usize> {
        let now = self.now;
        (0..self.nodes.len())
            .filter(|&n| {
                let node = &self.nodes[n];
                node.ready(now) && node.deleting.is_none() && !node.fixed && should_disrupt(node)
            })
            .filter(|&n| {
                let bounded = eventual && self.cluster.policies[self.nodes[n].template].termination_grace.is_some();
                self.nodes[n].pods.iter().all(|&p| self.pods[p].running && (bounded || (!self.spec(p).do_not_disrupt && self.evictable(p))))
            })
            .collect()
    }

    /// types.go `NewCandidate` `DisruptionCost`: the pods' eviction costs (1 each: no deletion cost or priority in
    /// the trace) times `LifetimeRemaining` (utils/disruption: the share of `expireAfter` left).
    pub(super) fn disruption_cost(&self, n: usize) -> f64 {
        let node = &self.nodes[n];
        let lifetime = self.cluster.policies[node.template].expire_after.map_or(1.0, |e| ((e as f64 - (self.now - node.launched_at) as f64) / e as f64).clamp(0.0, 1.0));
        node.pods.len() as f64 * lifetime
    }

    /// emptiness.go `ComputeCommands`: every empty candidate its NodePool's budget for `Empty` allows, one command.
    fn emptiness(&self) -> Option<Command> {
        let mut budgets = self.budget_mapping(EndedBy::Empty);
        let mut empty = Vec::new();
        for n in self.candidates() {
            let t = self.nodes[n].template;
            if self.nodes[n].pods.is_empty() && budgets[t] > 0 {
                budgets[t] -= 1;
                empty.push(n);
            }
        }
        (!empty.is_empty()).then_some(Command { reason: EndedBy::Empty, candidates: empty, replacement: None })
    }

    /// validation.go: 15 s later the candidates must still be candidates within the budgets, and the command still
    /// valid (empty nodes still empty; a consolidation still a delete, or a replace by one cheaper NodeClaim).
    fn validate(&self, cmd: &Command) -> Option<Command> {
        let candidates = self.candidates();
        let mut budgets = self.budget_mapping(cmd.reason);
        for &n in &cmd.candidates {
            let t = self.nodes[n].template;
            if !candidates.contains(&n) || budgets[t] == 0 {
                return None;
            }
            budgets[t] -= 1;
        }
        if cmd.reason == EndedBy::Empty {
            return cmd.candidates.iter().all(|&n| self.nodes[n].pods.is_empty()).then(|| cmd.clone());
        }
        // validation.go `validateCandidates`: the simulation again, without the price filter; the command stands as it
        // was decided when it still needs no new NodeClaim, or one whose types include every type the command chose.
        let pods: Vec<usize> = cmd.candidates.iter().flat_map(|&n| self.nodes[n].pods.iter().copied()).collect();
        let placement = self.schedule(&pods, super::provision::Scope { ready_only: false, provision: true, without: &cmd.candidates });
        if !placement.pending.is_empty() || placement.new_claims.len() > 1 {
            return None;
        }
        let names = |c: &crate::simulate::scheduler::Claim| -> Vec<(String, String)> {
            let t = &self.templates[c.template];
            c.types.iter().map(|&i| (t.pool.name.clone(), t.types[i].name.clone())).collect()
        };
        match (placement.new_claims.first(), &cmd.replacement) {
            (None, None) => Some(cmd.clone()),
            (Some(now), Some(chosen)) => {
                let now = names(now);
                names(chosen).iter().all(|t| now.contains(t)).then(|| cmd.clone())
            }
            _ => None,
        }
    }

    /// queue.go `StartCommand`: replacements launched, candidates marked (tainted); without replacements they are
    /// deleted at once.
    fn execute(&mut self, cmd: Command) {
        self.execute_with(cmd.reason, cmd.candidates, cmd.replacement.as_slice());
    }

    /// [`Self::execute`] for any command: these NodeClaims launched, the candidates marked.
    pub(super) fn execute_with(&mut self, reason: EndedBy, candidates: Vec<usize>, claims: &[crate::simulate::scheduler::Claim]) {
        let now = self.now;
        let replacements: Vec<usize> = claims.iter().filter_map(|c| self.launch_claim(&crate::simulate::scheduler::Claim { pods: Vec::new(), ..c.clone() })).collect();
        // queue.go: a replacement that cannot launch abandons the command; its candidates stay.
        if !claims.is_empty() && replacements.is_empty() {
            return;
        }
        let drain_from = replacements.is_empty().then_some(now);
        for &n in &candidates {
            self.delete_node(n, reason, drain_from, None);
        }
        self.decisions.push(Decision {
            at: now,
            reason,
            nodes: candidates.iter().map(|&n| self.nodes[n].id.clone()).collect(),
            replacements: replacements.iter().map(|&n| self.nodes[n].id.clone()).collect(),
        });
        if !replacements.is_empty() {
            self.disruption.orchestrating.push((candidates, replacements));
        }
    }

    /// queue.go `waitOrTerminate`: once every replacement is Ready, the candidates drain; a replacement that failed
    /// (gone) un-marks them.
    fn orchestrate(&mut self) {
        let now = self.now;
        let mut waiting = std::mem::take(&mut self.disruption.orchestrating);
        waiting.retain(|(candidates, replacements)| {
            if replacements.iter().any(|&r| !self.nodes[r].live()) {
                for &n in candidates {
                    self.nodes[n].deleting = None;
                }
                self.disruption.dirty = true;
                return false;
            }
            if replacements.iter().all(|&r| self.nodes[r].ready(now)) {
                for &n in candidates {
                    self.start_drain(n);
                }
                return false;
            }
            true
        });
        self.disruption.orchestrating = waiting;
    }
}
