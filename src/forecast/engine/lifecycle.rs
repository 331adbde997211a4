//! Nodes leaving: `expireAfter` (kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/nodeclaim/expiration/controller.go`:
//! the NodeClaim is deleted once `expireAfter` has passed since its creation, whatever the budgets say), spot
//! interruption (aws/karpenter-provider-aws v1.14.1 `pkg/controllers/interruption/controller.go`: the NodeClaim is
//! deleted on the two-minute notice; EC2 reclaims the instance 120 s after it), and termination
//! (`pkg/controllers/node/termination/controller.go`, `terminator/terminator.go`): the node is drained by evictions
//! that respect PodDisruptionBudgets and skip `karpenter.sh/do-not-disrupt` pods, until `terminationGracePeriod`
//! runs out (then every pod left is deleted); the instance is terminated once the node is drained.

use super::state::Deleting;
use super::Run;
use crate::forecast::timeline::{Decision, EndedBy};

/// EC2 reclaims a spot instance two minutes after its interruption notice.
pub const SPOT_NOTICE_SECONDS: u64 = 120;

/// aws/karpenter-provider-aws v1.14.1 `pkg/cache/cache.go` `UnavailableOfferingsTTL`: how long an offering marked
/// unavailable stays so.
pub const UNAVAILABLE_OFFERINGS_TTL_SECONDS: u64 = 180;

impl Run<'_, '_> {
    /// Expirations due now, then every draining node's evictions, deadlines and reclaims.
    pub(super) fn lifecycle(&mut self) {
        let now = self.now;
        let expired: Vec<usize> = (0..self.nodes.len())
            .filter(|&n| {
                let node = &self.nodes[n];
                node.live() && node.deleting.is_none() && !node.fixed && self.cluster.policies[node.template].expire_after.is_some_and(|e| node.launched_at + e <= now)
            })
            .collect();
        for n in expired {
            self.delete_node(n, EndedBy::Expired, Some(now), None);
            self.decisions.push(Decision { at: now, reason: EndedBy::Expired, nodes: vec![self.nodes[n].id.clone()], replacements: Vec::new() });
        }
        let forced: Vec<usize> = (0..self.nodes.len())
            .filter(|&n| self.nodes[n].live() && self.nodes[n].deleting.as_ref().is_some_and(|d| d.gone_at.is_some_and(|g| g <= now) || d.deadline.is_some_and(|g| g <= now)))
            .collect();
        for n in forced {
            for p in self.nodes[n].pods.clone() {
                self.evict_pod(p);
            }
            self.terminate(n);
        }
        self.drain_nodes();
    }

    /// Marks a node for deletion; it drains from `drain_from` (None: once its replacements are Ready).
    pub(super) fn delete_node(&mut self, n: usize, reason: EndedBy, drain_from: Option<u64>, gone_at: Option<u64>) {
        let grace = self.cluster.policies[self.nodes[n].template].termination_grace;
        let deadline = drain_from.and_then(|d| grace.map(|g| d + g));
        self.nodes[n].deleting = Some(Deleting { reason, drain_from, deadline, gone_at });
        self.disruption.dirty = true;
        self.kube_dirty = true;
    }

    /// Starts a marked node's drain now (its replacements are Ready).
    pub(super) fn start_drain(&mut self, n: usize) {
        let now = self.now;
        let grace = self.cluster.policies[self.nodes[n].template].termination_grace;
        if let Some(d) = self.nodes[n].deleting.as_mut().filter(|d| d.drain_from.is_none()) {
            d.drain_from = Some(now);
            d.deadline = grace.map(|g| now + g);
        }
        self.kube_dirty = true;
    }

    /// terminator.go `Drain`: every draining node evicts the pods it may (PDBs allowing, `do-not-disrupt` pods left to
    /// the grace period), and a drained node's instance is terminated.
    pub(super) fn drain_nodes(&mut self) {
        let now = self.now;
        let draining: Vec<usize> = (0..self.nodes.len()).filter(|&n| self.nodes[n].live() && self.nodes[n].deleting.as_ref().is_some_and(|d| d.drain_from.is_some_and(|f| f <= now))).collect();
        for n in draining {
            for p in self.nodes[n].pods.clone() {
                if !self.spec(p).do_not_disrupt && self.evictable(p) {
                    self.evict_pod(p);
                }
            }
            if self.nodes[n].pods.is_empty() {
                self.terminate(n);
            }
        }
    }

    /// The eviction API's PDB check: every PodDisruptionBudget selecting the pod allows one more disruption (pods of
    /// the same selection that exist count as expected, those running as healthy).
    pub(super) fn evictable(&self, p: usize) -> bool {
        let spec = self.spec(p);
        self.cluster.pdbs.iter().filter(|b| b.selects(spec)).all(|b| {
            let (mut expected, mut healthy) = (0, 0);
            for q in self.live_pod_ids() {
                if b.selects(self.spec(q)) {
                    expected += 1;
                    healthy += u64::from(self.pods[q].running);
                }
            }
            b.disruptions_allowed(expected, healthy) > 0
        })
    }

    fn live_pod_ids(&self) -> impl Iterator<Item = usize> + '_ {
        let jobs = self.jobs.iter().flat_map(|j| j.pods.iter().copied());
        self.replicas.iter().flatten().copied().chain(jobs).filter(|&p| !self.pods[p].gone)
    }

    /// The instance goes: billing ends, pods left are evicted (recreated, pending).
    pub(super) fn terminate(&mut self, n: usize) {
        for p in self.nodes[n].pods.clone() {
            self.evict_pod(p);
        }
        let reason = self.nodes[n].deleting.as_ref().map(|d| d.reason);
        let node = &mut self.nodes[n];
        node.terminated_at = Some(self.now);
        node.ended_by = reason;
        self.disruption.dirty = true;
        self.kube_dirty = true;
        // Capacity and limits freed: pods the provisioner could not place may fit now.
        if !self.unplaced().is_empty() {
            self.open_batch();
        }
    }

    /// A spot interruption notice: the oldest `ceil(share × n)` of the live spot nodes of the type and zone. The
    /// interruption controller also marks the spot offering of that type and zone unavailable for the cache's TTL
    /// (`pkg/controllers/interruption/utils.go` `markUnavailableOfferings`, once per interrupted NodeClaim): the
    /// replacements launch on another offering, as under a shortage over `[notice, notice + 180)`.
    pub(super) fn interrupt(&mut self, instance_type: &str, zone: &str, share: f64) {
        let now = self.now;
        let mut hit: Vec<usize> = (0..self.nodes.len())
            .filter(|&n| {
                let node = &self.nodes[n];
                node.live() && node.ty.name == instance_type && node.offering.zone == zone && node.offering.capacity_type == crate::catalog::CapacityType::Spot && node.deleting.as_ref().is_none_or(|d| d.gone_at.is_none())
            })
            .collect();
        hit.sort_by_key(|&n| (self.nodes[n].launched_at, n));
        let count = ((share.clamp(0.0, 1.0) * hit.len() as f64).ceil() as usize).min(hit.len());
        hit.truncate(count);
        for &n in &hit {
            self.delete_node(n, EndedBy::Interrupted, Some(now), Some(now + SPOT_NOTICE_SECONDS));
        }
        if !hit.is_empty() {
            let offering = crate::simulate::instances::Unavailable { instance_type: instance_type.to_string(), zone: zone.to_string(), capacity_type: crate::catalog::CapacityType::Spot.as_str().to_string() };
            self.shortages.push((now + UNAVAILABLE_OFFERINGS_TTL_SECONDS, offering));
            self.refresh_templates();
            self.decisions.push(Decision { at: now, reason: EndedBy::Interrupted, nodes: hit.iter().map(|&n| self.nodes[n].id.clone()).collect(), replacements: Vec::new() });
        }
    }

    /// The next expiry, reclaim or grace-period end.
    pub(super) fn lifecycle_next(&self) -> Option<u64> {
        let now = self.now;
        self.nodes
            .iter()
            .filter(|n| n.live())
            .flat_map(|n| {
                let expiry = n.deleting.is_none().then(|| self.cluster.policies[n.template].expire_after.filter(|_| !n.fixed).map(|e| n.launched_at + e)).flatten();
                let (gone, deadline) = n.deleting.as_ref().map_or((None, None), |d| (d.gone_at, d.deadline));
                [expiry, gone, deadline]
            })
            .flatten()
            .filter(|t| *t > now)
            .min()
    }
}
