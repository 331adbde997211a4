//! The replay: a [`Trace`]'s events through Karpenter v1.14.1's provisioning, disruption, lifecycle and termination,
//! and Kueue's admission, second by second where something happens, giving a [`Timeline`].
//!
//! | behaviour | follows (kubernetes-sigs/karpenter v1.14.1 unless named) | module |
//! |---|---|---|
//! | pending pods batched, scheduled on existing and in-flight nodes, else new NodeClaims; limits | `pkg/controllers/provisioning/{batcher,provisioner}.go`, `scheduling/scheduler.go` (the simulator's port) | [`provision`] |
//! | a pending pod binds to a Ready node it fits, its nominated one first | kube-scheduler | [`provision`] |
//! | scale-down deletes pods in the ReplicaSet controller's order | kubernetes `pkg/controller/replicaset/replica_set.go` `getPodsToDelete`, `controller_utils.go` `ActivePodsWithRanks` | [`workloads`] |
//! | Jobs admitted under quota, pods created on admission, quota back when they end | Kueue `pkg/scheduler` (the simulator's `admission`) | [`workloads`] |
//! | drift (the NodePool's nodes launched before the change replaced one command at a time) | `pkg/controllers/disruption/drift.go`, `nodeclaim/disruption/drift.go` | [`drift`] |
//! | emptiness, multi- and single-node consolidation, Balanced (k = 2), budgets, the 15 s validation, replacements Ready before candidates go | `pkg/controllers/disruption/` | [`disruption`], [`consolidation`] |
//! | `expireAfter`, drain with PDBs and `terminationGracePeriod`, spot interruption (reclaimed 120 s after the notice; its offering unavailable for 3 min) | `nodeclaim/expiration`, `node/termination`, `interruption` (aws provider, `markUnavailableOfferings`) | [`lifecycle`] |
//!
//! Event-driven: time jumps to the earliest of the trace's next event, a node's Ready, the batch window's end, a
//! drain deadline or reclaim, a shortage's end, a Job's end, the validation's end and the disruption controller's next
//! poll when one can decide anything new. Karpenter's disruption controller polls every 10 s (`controller.go`
//! `pollingPeriod`, and again at once after a command); a poll decides only from the cluster's state, the
//! `consolidateAfter` and `expireAfter` timers and the budgets' windows, so a poll where none of them changed since
//! the last one finds what that one found (nothing), and skipping it gives the same decisions: the polling mode
//! ([`Mode::Polling`]), which runs every poll, is tested to give the same timelines.
//!
//! Where Karpenter is random, the replay picks: the spot offering (EC2 Fleet's price-capacity-optimized) is the
//! cheapest, as `simulate`'s launch picks; candidates with equal disruption cost, which Karpenter orders by its
//! cluster state's map, go in launch order; existing nodes are tried Ready first, then in-flight, each in launch
//! order.
//!
//! Not modelled: pods' own start-up after binding (a pod runs when its node is Ready), pod priority and preemption,
//! topology spread counting pods already on existing nodes (only the batch's pods count, as in `simulate`),
//! consolidation moving pending pods, spot-to-spot consolidation (off by default in v1.14.1, as here), the multi-node
//! consolidation timeout, and a disruption cost changing order between polls as nodes age (`LifetimeRemaining`)
//! without any other change.

mod cluster;
mod consolidation;
mod disruption;
mod drift;
mod lifecycle;
pub mod policy;
mod provision;
mod state;
mod workloads;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::compile::Compilation;
use crate::forecast::timeline::{Decision, NodeLife, Timeline};
use crate::forecast::trace::{Event, Trace, DEFAULT_STARTUP_SECONDS};
use crate::simulate::instances::Unavailable;
use crate::simulate::scheduler::Template;

use cluster::{Cluster, Spec};
use state::{Node, Owner, PodState};

/// How the disruption controller's polls are run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Only the polls that can decide something new (the default).
    EventDriven,
    /// Every 10 s poll, as Karpenter runs them (for tests: same timelines, more work).
    Polling,
}

/// Replays a trace over its horizon on a compiled cluster. A cluster the compilation does not have gives an empty
/// timeline (no node ever launches).
pub fn replay(c: &Compilation, cluster: &str, trace: &Trace) -> Timeline {
    replay_with(c, cluster, trace, Mode::EventDriven)
}

/// [`replay`] with the disruption controller's polls run as `mode` says.
pub fn replay_with(c: &Compilation, cluster: &str, trace: &Trace, mode: Mode) -> Timeline {
    let Some(cluster) = Cluster::read(c, cluster, trace.horizon_seconds, trace.start_unix) else {
        return Timeline { horizon_seconds: trace.horizon_seconds, ..Timeline::default() };
    };
    Run::new(&cluster, trace, mode).replay()
}

/// [`replay_with`] on a cluster given as objects (NodePools, NodeClasses, Kueue objects, PodDisruptionBudgets) on a
/// catalog, with no EKS node DaemonSets: for benchmarks and tests that write their own cluster.
pub fn replay_objects(catalog: &crate::catalog::Catalog, objects: &[serde_json::Value], trace: &Trace, mode: Mode) -> Timeline {
    let labels = crate::simulate::instances::TypeLabels::new(catalog);
    let cluster = Cluster::from_manifests(catalog, &labels, &cluster::manifests(objects), &[], trace.horizon_seconds, trace.start_unix);
    Run::new(&cluster, trace, mode).replay()
}

/// A Job of the trace.
struct Job {
    key: String,
    /// Its pods as Kueue reads them (not yet admitted), and once admitted, with the flavor injected.
    specs: Vec<Spec>,
    admitted: Option<u64>,
    /// When all its pods first ran together; it ends `duration` later.
    started: Option<u64>,
    duration: u64,
    finished: bool,
    pods: Vec<usize>,
    arrived: u64,
}

/// The replay's whole state.
struct Run<'a, 'c> {
    cluster: &'a Cluster<'c>,
    trace: &'a Trace,
    mode: Mode,
    now: u64,
    next_event: usize,
    /// The templates as the current shortages leave them.
    templates: Vec<Template>,
    shortages: Vec<(u64, Unavailable)>,
    nodes: Vec<Node>,
    pods: Vec<PodState>,
    workloads: Vec<(String, Option<Spec>)>,
    /// Per workload, its live pods.
    replicas: Vec<Vec<usize>>,
    jobs: Vec<Job>,
    /// The provisioner's batch window: (first pod, last pod) seconds.
    batch: Option<(u64, u64)>,
    /// Something changed that may let a pending pod bind or a draining node lose a pod.
    kube_dirty: bool,
    disruption: disruption::Controller,
    pending_seconds: BTreeMap<String, u64>,
    decisions: Vec<Decision>,
    node_serial: usize,
}

impl<'a, 'c> Run<'a, 'c> {
    fn new(cluster: &'a Cluster<'c>, trace: &'a Trace, mode: Mode) -> Run<'a, 'c> {
        let workloads = trace.workloads.iter().map(|(k, v)| (k.clone(), cluster::specs(v).and_then(|s| s.into_iter().next()))).collect::<Vec<_>>();
        let replicas = vec![Vec::new(); workloads.len()];
        let mut run = Run {
            cluster,
            trace,
            mode,
            now: 0,
            next_event: 0,
            templates: cluster.prepared.templates_with(&[]),
            shortages: Vec::new(),
            nodes: Vec::new(),
            pods: Vec::new(),
            workloads,
            replicas,
            jobs: Vec::new(),
            batch: None,
            kube_dirty: false,
            disruption: disruption::Controller::default(),
            pending_seconds: BTreeMap::new(),
            decisions: Vec::new(),
            node_serial: 0,
        };
        run.launch_static_nodes();
        run
    }

    fn replay(mut self) -> Timeline {
        let horizon = self.trace.horizon_seconds;
        while let Some(t) = self.next_time().filter(|t| *t < horizon) {
            self.now = t;
            self.step();
        }
        self.now = horizon;
        self.finish()
    }

    /// Everything due at `self.now`, in the order the controllers would see it.
    fn step(&mut self) {
        self.apply_events();
        self.nodes_ready();
        self.expire_shortages();
        self.lifecycle();
        self.jobs_tick();
        self.kube_schedule();
        self.provision_if_due();
        self.disrupt_if_due();
        // A command executed or a node deleted may have freed pods to bind at once.
        self.kube_schedule();
    }

    /// The next second anything is due, if any.
    fn next_time(&self) -> Option<u64> {
        let now = self.now;
        let after = |t: u64| (t > now).then_some(t);
        let first = self.next_event == 0 && self.trace.events.first().is_some_and(|e| e.at() == 0);
        let event = self.trace.events.get(self.next_event).map(Event::at).filter(|t| *t > now || first);
        let ready = self.nodes.iter().filter(|n| n.live() && n.ready_at > now).map(|n| n.ready_at).min();
        let batch = self.batch.map(|(first, last)| (last + provision::BATCH_IDLE_SECONDS).min(first + provision::BATCH_MAX_SECONDS));
        let shortage = self.shortages.iter().map(|(until, _)| *until).min();
        [event, ready.and_then(after), batch.map(|b| b.max(now + 1)), shortage.and_then(after), self.lifecycle_next(), self.jobs_next(), self.disruption_next()].into_iter().flatten().min()
    }

    fn apply_events(&mut self) {
        while let Some(e) = self.trace.events.get(self.next_event).filter(|e| e.at() <= self.now) {
            self.next_event += 1;
            match e {
                Event::Replicas { workload, replicas, .. } => self.scale(workload, *replicas),
                Event::Job { name, queue, pods, duration_seconds, pod, .. } => self.submit_job(name, queue, *pods, *duration_seconds, pod),
                Event::Interruption { instance_type, zone, share, .. } => self.interrupt(instance_type, zone, *share),
                Event::Shortage { until, instance_type, zone, capacity_type, .. } => {
                    let u = Unavailable { instance_type: instance_type.clone(), zone: zone.clone(), capacity_type: capacity_type.clone() };
                    self.shortages.push((*until, u));
                    self.refresh_templates();
                }
                Event::Drift { nodepool, .. } => self.drift_nodepool(nodepool),
            }
        }
    }

    fn expire_shortages(&mut self) {
        let before = self.shortages.len();
        let now = self.now;
        self.shortages.retain(|(until, _)| *until > now);
        if self.shortages.len() != before {
            self.refresh_templates();
            // Pods that found no offering may find one now (the provisioner is triggered again).
            self.open_batch();
        }
    }

    fn refresh_templates(&mut self) {
        let unavailable: Vec<Unavailable> = self.shortages.iter().map(|(_, u)| u.clone()).collect();
        self.templates = self.cluster.prepared.templates_with(&unavailable);
        self.disruption.dirty = true;
    }

    /// Nodes whose Ready time is now: their nominated pods bind and run.
    fn nodes_ready(&mut self) {
        let now = self.now;
        let ready: Vec<usize> = (0..self.nodes.len()).filter(|&n| self.nodes[n].live() && self.nodes[n].ready_at == now).collect();
        for n in ready {
            let pods: Vec<usize> = self.nodes[n].pods.iter().copied().collect();
            for p in pods {
                self.start_running(p, n);
            }
            self.disruption.dirty = true;
            self.kube_dirty = true;
        }
    }

    /// A pod bound to a Ready node runs from now: its pending time is counted.
    fn start_running(&mut self, p: usize, n: usize) {
        let now = self.now;
        let pod = &mut self.pods[p];
        if pod.running || pod.gone {
            return;
        }
        pod.running = true;
        if let Some(since) = pod.pending_since.take() {
            let owner = self.owner_name(self.pods[p].owner);
            *self.pending_seconds.entry(owner).or_default() += now - since;
        }
        self.nodes[n].last_pod_event = Some(now);
        self.disruption.dirty = true;
        if let Owner::Job(j) = self.pods[p].owner {
            self.job_pod_started(j);
        }
    }

    fn owner_name(&self, owner: Owner) -> String {
        match owner {
            Owner::Workload(w) => self.workloads[w].0.clone(),
            Owner::Job(j) => self.jobs[j].key.clone(),
        }
    }

    fn spec(&self, p: usize) -> &Spec {
        let pod = &self.pods[p];
        match pod.owner {
            Owner::Workload(w) => self.workloads[w].1.as_ref().expect("pods exist only for workloads with a spec"),
            Owner::Job(j) => &self.jobs[j].specs[pod.spec],
        }
    }

    /// A new pod object, pending.
    fn create_pod(&mut self, owner: Owner, spec: usize) -> usize {
        self.pods.push(PodState { owner, spec, created_at: self.now, pending_since: Some(self.now), node: None, running: false, gone: false });
        self.kube_dirty = true;
        self.pods.len() - 1
    }

    /// A pod goes away (deleted by its controller, or its Job ended): its node loses it.
    fn delete_pod(&mut self, p: usize) {
        let now = self.now;
        if self.pods[p].gone {
            return;
        }
        if let Some(since) = self.pods[p].pending_since.take() {
            let owner = self.owner_name(self.pods[p].owner);
            *self.pending_seconds.entry(owner).or_default() += now - since;
        }
        if let Some(n) = self.pods[p].node.take() {
            let requests = self.spec(p).pod.requests.clone();
            self.nodes[n].remove_pod(p, &requests, now);
        }
        let pod = &mut self.pods[p];
        pod.gone = true;
        pod.running = false;
        self.disruption.dirty = true;
        self.kube_dirty = true;
    }

    /// An evicted pod: its controller recreates it (same owner and spec, pending again).
    fn evict_pod(&mut self, p: usize) {
        let owner = self.pods[p].owner;
        let spec = self.pods[p].spec;
        self.delete_pod(p);
        let new = self.create_pod(owner, spec);
        match owner {
            Owner::Workload(w) => self.replicas[w].iter_mut().filter(|x| **x == p).for_each(|x| *x = new),
            Owner::Job(j) => {
                self.jobs[j].pods.iter_mut().filter(|x| **x == p).for_each(|x| *x = new);
                // A gang restarts: its clock runs again once all its pods run.
                self.jobs[j].started = None;
            }
        }
    }

    fn finish(mut self) -> Timeline {
        let horizon = self.now;
        for p in 0..self.pods.len() {
            if let Some(since) = self.pods[p].pending_since.filter(|_| !self.pods[p].gone) {
                let owner = self.owner_name(self.pods[p].owner);
                *self.pending_seconds.entry(owner).or_default() += horizon - since;
            }
        }
        let nodes = self
            .nodes
            .iter()
            .map(|n| NodeLife {
                id: n.id.clone(),
                nodepool: self.cluster.prepared.templates()[n.template].pool.name.clone(),
                instance_type: n.ty.name.clone(),
                capacity_type: n.offering.capacity_type.as_str().to_string(),
                zone: n.offering.zone.clone(),
                launched_at: n.launched_at,
                ready_at: Some(n.ready_at).filter(|r| *r <= n.terminated_at.unwrap_or(horizon) && *r <= horizon),
                terminated_at: n.terminated_at,
                ended_by: n.ended_by,
            })
            .collect();
        self.decisions.sort_by_key(|d| d.at);
        Timeline { horizon_seconds: horizon, nodes, pending_pod_seconds: std::mem::take(&mut self.pending_seconds), decisions: self.decisions }
    }

    fn startup_seconds(&self, template: usize) -> u64 {
        let pool = &self.cluster.prepared.templates()[template].pool.name;
        self.trace.startup_seconds.get(pool).copied().unwrap_or(DEFAULT_STARTUP_SECONDS)
    }
}
