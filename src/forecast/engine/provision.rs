//! Provisioning over time: pending pods bind to Ready nodes (kube-scheduler), the rest open the provisioner's batch
//! window (kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/provisioning/batcher.go`: it closes after 1 s without a
//! new pod or 10 s after the first, `BATCH_IDLE_DURATION` / `BATCH_MAX_DURATION`), then the provisioner schedules
//! them (`provisioner.go` `Schedule`: existing nodes, in-flight NodeClaims, then new NodeClaims by NodePool weight,
//! within the NodePools' limits less what their nodes use) with the simulator's port of `scheduler.go`, and launches
//! each new NodeClaim on the provider's choice (`simulate::launch`).

use std::sync::Arc;

use super::state::Node;
use super::Run;
use crate::simulate::launch::launch;
use crate::simulate::pods::Pod;
use crate::simulate::scheduler::{Claim, Scheduler, Template};
use crate::simulate::static_nodes;
use crate::simulate::yaml::Resources;

pub const BATCH_IDLE_SECONDS: u64 = 1;
pub const BATCH_MAX_SECONDS: u64 = 10;

/// Where one scheduling pass put the pods it was given.
pub struct Placement {
    /// (pod, node) on existing or in-flight nodes.
    pub existing: Vec<(usize, usize)>,
    /// New NodeClaims: template, candidate types, requirements, requests, pods.
    pub new_claims: Vec<Claim>,
    /// Pods that fit nowhere.
    pub pending: Vec<usize>,
}

/// What a scheduling pass may use.
#[derive(Clone, Copy)]
pub struct Scope<'x> {
    /// Ready nodes only (kube-scheduler), or in-flight ones too (Karpenter).
    pub ready_only: bool,
    /// New NodeClaims allowed.
    pub provision: bool,
    /// Nodes left out (consolidation's candidates).
    pub without: &'x [usize],
}

impl Run<'_, '_> {
    /// The static NodePools' replicas, launched at the start (`static_nodes`).
    pub(super) fn launch_static_nodes(&mut self) {
        let templates = self.cluster.prepared.templates();
        for claim in static_nodes::claims(templates) {
            let template = &templates[claim.template];
            let Some(l) = static_nodes::replica_launch(template) else { continue };
            let ty = Arc::clone(&template.types[l.instance_type]);
            let node = self.new_node(claim.template, ty, l.offering);
            self.nodes[node].fixed = true;
        }
    }

    /// A NodeClaim launched now, Ready after its NodePool's start-up delay.
    pub(super) fn new_node(&mut self, template: usize, ty: Arc<crate::simulate::instances::SimType>, offering: crate::simulate::instances::Offering) -> usize {
        self.node_serial += 1;
        let t = &self.cluster.prepared.templates()[template];
        let requirements = static_nodes::pinned_requirements(&Template { types: vec![Arc::clone(&ty)], ..t.clone() }, 0, &offering);
        let ready_at = self.now + self.startup_seconds(template);
        self.nodes.push(Node {
            id: format!("{}-{:05}", t.pool.name, self.node_serial),
            template,
            ty,
            offering,
            requirements,
            launched_at: self.now,
            ready_at,
            terminated_at: None,
            ended_by: None,
            pods: Default::default(),
            requests: Resources::new(),
            last_pod_event: None,
            deleting: None,
            fixed: false,
            drifted_at: None,
        });
        self.disruption.dirty = true;
        self.nodes.len() - 1
    }

    /// Pending pods not nominated anywhere.
    pub(super) fn unplaced(&self) -> Vec<usize> {
        self.live_pods().filter(|&p| self.pods[p].node.is_none()).collect()
    }

    fn live_pods(&self) -> impl Iterator<Item = usize> + '_ {
        let workload = self.replicas.iter().flatten().copied();
        let jobs = self.jobs.iter().filter(|j| j.admitted.is_some() && !j.finished).flat_map(|j| j.pods.iter().copied());
        workload.chain(jobs).filter(|&p| !self.pods[p].gone)
    }

    /// kube-scheduler: pending pods bind to Ready nodes they fit (nominated pods wait for their node); the rest open
    /// the provisioner's batch.
    pub(super) fn kube_schedule(&mut self) {
        if !self.kube_dirty {
            return;
        }
        self.kube_dirty = false;
        self.drain_nodes();
        let pending = self.unplaced();
        if pending.is_empty() {
            return;
        }
        let placement = self.schedule(&pending, Scope { ready_only: true, provision: false, without: &[] });
        for (p, n) in placement.existing {
            self.nominate(p, n);
            self.start_running(p, n);
        }
        if !placement.pending.is_empty() {
            self.open_batch();
        }
    }

    /// batcher.go `Trigger`: the window opens, or stays open one more idle second.
    pub(super) fn open_batch(&mut self) {
        let now = self.now;
        self.batch = Some(match self.batch {
            Some((first, _)) => (first, now),
            None => (now, now),
        });
    }

    /// At the window's end: the provisioner schedules every pending pod and launches what it planned.
    pub(super) fn provision_if_due(&mut self) {
        let Some((first, last)) = self.batch else { return };
        if self.now < (last + BATCH_IDLE_SECONDS).min(first + BATCH_MAX_SECONDS) {
            return;
        }
        self.batch = None;
        let pending = self.unplaced();
        if pending.is_empty() {
            return;
        }
        let placement = self.schedule(&pending, Scope { ready_only: false, provision: true, without: &[] });
        for (p, n) in placement.existing {
            self.nominate(p, n);
            if self.nodes[n].ready(self.now) {
                self.start_running(p, n);
            }
        }
        for claim in placement.new_claims {
            self.launch_claim(&claim);
        }
    }

    /// Launches a planned NodeClaim on the provider's choice; its pods are nominated to it.
    pub(super) fn launch_claim(&mut self, claim: &Claim) -> Option<usize> {
        let template = &self.templates[claim.template];
        let l = launch(&template.types, &claim.types, &claim.requirements, &claim.requests)?;
        let ty = Arc::clone(&template.types[l.instance_type]);
        let n = self.new_node(claim.template, ty, l.offering);
        for &p in &claim.pods {
            self.nominate(p, n);
            // A NodePool with no start-up delay: the node is Ready as it launches.
            if self.nodes[n].ready(self.now) {
                self.start_running(p, n);
            }
        }
        Some(n)
    }

    pub(super) fn nominate(&mut self, p: usize, n: usize) {
        let requests = self.spec(p).pod.requests.clone();
        self.pods[p].node = Some(n);
        self.nodes[n].add_pod(p, &requests);
    }

    /// One scheduler run over `pods` (pod ids) with the nodes `scope` allows as existing nodes (Ready first, then
    /// in-flight, each in launch order), their pods' requests counted; pods it places on a claim are given back as
    /// pod ids.
    pub(super) fn schedule(&self, pods: &[usize], scope: Scope) -> Placement {
        let specs: Vec<Pod> = pods.iter().map(|&p| self.spec(p).pod.clone()).collect();
        let mut templates: Vec<Template> = if scope.provision {
            self.templates.clone()
        } else {
            self.templates.iter().map(|t| Template { dropped: Some("kube-scheduler binds to existing nodes only".into()), ..t.clone() }).collect()
        };
        let base = templates.len();
        let mut order: Vec<usize> = (0..self.nodes.len()).filter(|&n| self.nodes[n].schedulable() && !scope.without.contains(&n)).collect();
        order.retain(|&n| !scope.ready_only || self.nodes[n].ready(self.now));
        // Without topology (whose domains existing nodes add to), a node that no pod could join alone changes nothing
        // in the run: it is left out, which is most of a big cluster's nodes for any one pass.
        if specs.iter().all(|p| p.topology.as_ref().is_none_or(|t| !t.constrains())) {
            order.retain(|&n| specs.iter().any(|p| self.could_join(n, p)));
        }
        order.sort_by_key(|&n| (!self.nodes[n].ready(self.now), n));
        let mut claims = Vec::with_capacity(order.len());
        for (k, &n) in order.iter().enumerate() {
            let node = &self.nodes[n];
            let pool = &self.cluster.prepared.templates()[node.template];
            // The type as it was launched, with its own offering available (a later shortage of that offering stops
            // new launches, not the node that runs).
            templates.push(Template { pool: Arc::clone(&pool.pool), types: vec![Arc::clone(&node.ty)], dropped: Some(String::new()), provisioned: false });
            claims.push(Claim {
                template: base + k,
                pods: Vec::new(),
                requests: node.requests.clone(),
                requirements: node.requirements.clone(),
                types: vec![0],
                host_ports: Vec::new(),
                hostname: node.id.clone(),
                fixed: true,
            });
        }
        // A consolidation's simulation leaves its candidates out of the NodePools' usage too (disruption/helpers.go
        // `SimulateScheduling` drops `candidateNames` from the state nodes; scheduler.go `updateRemainingResources`
        // subtracts only the nodes that remain).
        let remaining = self.remaining_limits(templates.len(), scope.without);
        let outcome = Scheduler::new(&templates, &specs)
            .with_static_nodes(claims)
            .with_remaining(remaining)
            .with_topology(|| self.cluster.prepared.topology_domains(&specs))
            .solve();
        let mut placement = Placement { existing: Vec::new(), new_claims: Vec::new(), pending: outcome.pending.iter().map(|(i, _)| pods[*i]).collect() };
        for claim in outcome.claims {
            if claim.template >= base {
                placement.existing.extend(claim.pods.iter().map(|&i| (pods[i], order[claim.template - base])));
            } else if !claim.pods.is_empty() {
                placement.new_claims.push(Claim { pods: claim.pods.iter().map(|&i| pods[i]).collect(), ..claim });
            }
        }
        placement
    }

    /// disruption/helpers.go `SimulateScheduling`: the candidates' pods scheduled together with the pods pending now
    /// (`GetPendingPods`) and those on nodes already deleting (`deletingNodePods`), without the candidates; a command
    /// needs every pod but the pending ones to fit (`AllNonPendingPodsScheduled`), so those are left out of
    /// `pending`. The new NodeClaims include what the pending pods need: Karpenter launches them with the command.
    pub(super) fn simulate_without(&self, candidates: &[usize]) -> Placement {
        let mut pods: Vec<usize> = candidates.iter().flat_map(|&n| self.nodes[n].pods.iter().copied()).collect();
        let deleting = self.nodes.iter().enumerate().filter(|(n, node)| node.live() && node.deleting.is_some() && !candidates.contains(n));
        pods.extend(deleting.flat_map(|(_, node)| node.pods.iter().copied()));
        let pending = self.unplaced();
        pods.extend(pending.iter().copied());
        let mut placement = self.schedule(&pods, Scope { ready_only: false, provision: true, without: candidates });
        placement.pending.retain(|p| !pending.contains(p));
        placement
    }

    /// Whether the pod alone could join the node: it tolerates the node's taints (a PreferNoSchedule taint counts as
    /// tolerated, as relaxation may tolerate it), its nodeSelector is compatible with the node (its affinity terms only
    /// narrow that), and it fits beside the node's pods and daemons. A necessary condition of `Scheduler`'s `can_add`.
    fn could_join(&self, n: usize, pod: &Pod) -> bool {
        let node = &self.nodes[n];
        let taints = &self.cluster.prepared.templates()[node.template].pool.taints;
        // Cheapest first, and none of them formats a reason (this runs for every node and pod of every pass).
        fits_beside(&node.ty.daemons, &node.requests, &pod.requests, &node.ty.allocatable)
            && taints.iter().all(|t| t.effect == "PreferNoSchedule" || pod.tolerations.iter().any(|x| x.tolerates(t)))
            && node.requirements.compatible(&pod.node_selector).is_ok()
    }

    /// Per template, its NodePool's limits less the capacity of its nodes (all but those being deleted, which
    /// Karpenter leaves out), `nodes` counted; templates past the NodePools' get their pool's limits untouched.
    pub(super) fn remaining_limits(&self, len: usize, without: &[usize]) -> Vec<Resources> {
        let templates = self.cluster.prepared.templates();
        let mut out: Vec<Resources> = (0..len).map(|t| templates.get(t).map(|t| t.pool.limits.clone()).unwrap_or_default()).collect();
        for (n, node) in self.nodes.iter().enumerate() {
            if !node.schedulable() || without.contains(&n) || node.fixed {
                continue;
            }
            let remaining = &mut out[node.template];
            for (k, v) in remaining.iter_mut() {
                *v -= if k == "nodes" { 1000 } else { node.ty.capacity.get(k).copied().unwrap_or(0) };
            }
        }
        out
    }
}

/// `daemons.fits(&sum(node, pod), allocatable)` without building the sum (this runs for every node and pod of every
/// scheduling pass): every resource the node's pods, the pod or the daemons request, summed, is at most allocatable
/// (or not positive).
fn fits_beside(daemons: &crate::simulate::daemons::DaemonOverhead, node: &Resources, pod: &Resources, allocatable: &Resources) -> bool {
    if !crate::simulate::yaml::allocatable_usable(allocatable) {
        return false;
    }
    let within = |k: &String, v: i128| v <= 0 || allocatable.get(k).is_some_and(|a| v <= *a);
    let total = |k: &String| node.get(k).copied().unwrap_or(0) + pod.get(k).copied().unwrap_or(0) + daemons.requests.get(k).copied().unwrap_or(0);
    pod.keys().all(|k| within(k, total(k)))
        && node.keys().filter(|k| !pod.contains_key(*k)).all(|k| within(k, total(k)))
        && daemons.requests.keys().filter(|k| !pod.contains_key(*k) && !node.contains_key(*k)).all(|k| within(k, total(k)))
}
