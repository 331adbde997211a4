//! Kueue admission before Karpenter: which queued Workloads (`pods::Queued`) a ClusterQueue admits under its
//! quotas, as Kueue's scheduler decides it (kubernetes-sigs/kueue v0.19.2, commit 8eab68778fc1, the version of the
//! CRDs in `tests/fixtures/shared/schemas/kueue`):
//!
//! - A Workload's quota is its pods' requests times its pod count, admitted whole or not at all
//!   (pkg/workload `TotalRequests`; no partial admission: the `job-min-parallelism` annotation is not read).
//! - Flavors are tried in the resourceGroup's order; a flavor whose nodeTaints the pods (with the flavor's
//!   tolerations) do not tolerate, or whose nodeLabels the pods' nodeSelector / required node affinity exclude, is
//!   skipped; the first flavor with room is taken, or with `whenCanBorrow: TryNextFlavor` the first that needs no
//!   borrowing (pkg/scheduler/flavorassigner/flavorassigner.go `findFlavorForPodSets`, `checkFlavorForPodSets`,
//!   `shouldTryNextFlavor`). A requested resource no resourceGroup covers makes the Workload inadmissible
//!   (`resource X unavailable in ClusterQueue`), unless its request is zero.
//! - Room is nominal quota plus what the flat cohort has unused, capped by the borrowingLimit; a member lends at most
//!   its lendingLimit (pkg/cache/scheduler/resource_node.go `available`, `potentialAvailable`, `localQuota`,
//!   `accumulateFromChild`).
//! - Scheduling cycles (pkg/scheduler/scheduler.go `schedule`): each ClusterQueue offers its head (highest priority,
//!   then oldest: pkg/cache/queue/cluster_queue.go queue ordering); heads that need no borrowing go first, then by
//!   priority, then creation (`makeClassicalIterator`); a head that no longer fits after an earlier admission in the
//!   cycle waits for the next. A head that does not fit is set aside under BestEffortFIFO (the next Workload
//!   becomes head) and blocks its queue under StrictFIFO (pkg/cache/queue/cluster_queue.go `RequeueIfNotPresent`). A
//!   Workload set aside returns when quota frees (workload_controller.go: a Workload finishes, is deleted or
//!   evicted), which never happens in a batch: usage only grows, so set aside is final.
//! - A head that would fit once a running Workload were preempted (its request within nominal quota, or the
//!   ClusterQueue may preempt while borrowing) finds no candidate here, and holds the quota back for the rest of its
//!   cycle unless the ClusterQueue has `reclaimWithinCohort: Any` (scheduler.go `reserveCapacityForUnreclaimablePreempt`,
//!   `quotaResourcesToReserve`); a StrictFIFO head does so every cycle.
//!
//! `tests/conformance/kueue.rs` checks all of this against Kueue's own scheduler (conformance/kueue).
//!
//! - A ClusterQueue admits only Workloads of the namespaces its namespaceSelector selects, and a missing (null) one
//!   selects none (pkg/workload `ValidateAdmissibility`); namespaces have the labels of the Namespace objects given,
//!   plus `kubernetes.io/metadata.name`.
//!
//! Not modelled: preemption (a Workload that would need it stays pending, and the capacity Kueue reserves for it in
//! that one cycle is not reserved here), fair sharing, admission checks, topology-aware scheduling, Cohort objects
//! (quotas of a cohort itself, nested cohorts), running Workloads (the quotas start empty).

use std::collections::BTreeMap;

use serde::Serialize;

use super::kueue::{ClusterQueue, Kueue, Quota, ResourceGroup};
use super::pods::{Pod, Queued};
use super::requirements::{untolerated, Requirement, Requirements, Taint};
use super::yaml::{show, Resources};

/// What admission decided: the pods that go on to Karpenter (queued ones with their flavor's nodeSelector and
/// tolerations), the pods of Workloads left pending with why, and the report section.
pub struct Outcome {
    pub pods: Vec<Pod>,
    pub pending: Vec<(String, String)>,
    pub report: AdmissionReport,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AdmissionReport {
    pub cluster_queues: Vec<ClusterQueueReport>,
    /// Admitted Workloads in admission order, then the pending ones in queue order.
    pub workloads: Vec<WorkloadReport>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClusterQueueReport {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<String>,
    pub queueing_strategy: &'static str,
    pub quotas: Vec<QuotaReport>,
}

/// One flavor's resource in a ClusterQueue after admission.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct QuotaReport {
    pub flavor: String,
    pub resource: String,
    pub used: String,
    pub nominal: String,
    /// Usage above nominal, taken from the cohort.
    pub borrowed: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub borrowing_limit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lending_limit: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WorkloadReport {
    pub name: String,
    /// The LocalQueue, `namespace/name`.
    pub queue: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_queue: Option<String>,
    pub pods: usize,
    pub priority: i64,
    pub admitted: bool,
    /// Resource → flavor, for an admitted Workload.
    pub flavors: BTreeMap<String, String>,
    pub borrowing: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A Workload: its pods (indices into the run's pods, all alike) and what Kueue orders it by.
struct Workload<'p> {
    queued: &'p Queued,
    pods: Vec<usize>,
    /// Total requests (pod requests × count), `pods` counted as pods.
    requests: Resources,
    priority: i64,
    /// Its ClusterQueue, or why it cannot be queued at all.
    cluster_queue: Result<usize, String>,
}

/// A Workload's place in its queue (pkg/cache/queue/cluster_queue.go `baseCompareFunc`): priority (higher first),
/// then creation (objects with a creationTimestamp first, by it), then input order.
type QueueOrder<'a> = (std::cmp::Reverse<i64>, bool, Option<&'a str>, usize);

impl Workload<'_> {
    fn order(&self) -> QueueOrder<'_> {
        (std::cmp::Reverse(self.priority), self.queued.created.is_none(), self.queued.created.as_deref(), self.queued.order)
    }
}

#[derive(Debug, Clone)]
enum Status {
    Pending,
    Admitted { flavors: BTreeMap<String, String>, borrowing: bool, seq: usize },
    Inadmissible(String),
}

/// Runs admission over the queued pods; pods without a queue label pass through unchanged.
pub fn admit(k: &Kueue, pods: &[Pod]) -> Outcome {
    let workloads = workloads(k, pods);
    let status = schedule(k, pods, &workloads);
    let mut out_pods: Vec<Pod> = pods.iter().filter(|p| p.queued.is_none()).cloned().collect();
    let mut pending = Vec::new();
    for (w, s) in workloads.iter().zip(&status) {
        match s {
            Status::Admitted { flavors, .. } => out_pods.extend(w.pods.iter().map(|&i| inject(k, &pods[i], flavors))),
            Status::Inadmissible(reason) => pending.extend(w.pods.iter().map(|&i| (pods[i].key.clone(), reason.clone()))),
            Status::Pending => unreachable!("scheduling ends with every Workload admitted or set aside"),
        }
    }
    let report = AdmissionReport { cluster_queues: k.cluster_queues.iter().enumerate().map(|(i, cq)| cq_report(cq, &usage_of(&workloads, &status, i))).collect(), workloads: workload_reports(k, &workloads, &status) };
    Outcome { pods: out_pods, pending, report }
}

/// The queued pods grouped into Workloads (first appearance order), each resolved to its ClusterQueue and priority.
fn workloads<'p>(k: &Kueue, pods: &'p [Pod]) -> Vec<Workload<'p>> {
    let mut out: Vec<Workload<'p>> = Vec::new();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, pod) in pods.iter().enumerate() {
        let Some(q) = pod.queued.as_deref() else { continue };
        let at = *index.entry(&q.workload).or_insert_with(|| {
            out.push(Workload { queued: q, pods: Vec::new(), requests: Resources::new(), priority: 0, cluster_queue: Err(String::new()) });
            out.len() - 1
        });
        out[at].pods.push(i);
    }
    for w in &mut out {
        let pod = &pods[w.pods[0]];
        let count = w.pods.len() as i128;
        w.requests = pod.requests.iter().filter(|(r, _)| *r != "pods").map(|(r, v)| (r.clone(), v * count)).collect();
        let (priority, cq) = match priority(k, w.queued) {
            Ok(p) => (p, cluster_queue(k, w.queued)),
            Err(e) => (0, Err(format!("pending in queue {}/{}: {e}", w.queued.namespace, w.queued.queue))),
        };
        w.priority = priority;
        w.cluster_queue = cq;
        if w.cluster_queue.as_ref().is_ok_and(|&c| covers(&k.cluster_queues[c], "pods")) {
            w.requests.insert("pods".into(), count * 1000);
        }
    }
    out
}

/// jobframework/reconciler.go `ExtractPriority`: the WorkloadPriorityClass label, else the pods' PriorityClass,
/// else the globalDefault PriorityClass (the lowest if several), else 0. A class that does not exist leaves the
/// object without a Workload.
fn priority(k: &Kueue, q: &Queued) -> Result<i64, String> {
    if let Some(c) = &q.workload_priority_class {
        return k.workload_priority_classes.get(c).copied().ok_or_else(|| format!("WorkloadPriorityClass {c:?} is not in the manifests: Kueue creates no Workload for it"));
    }
    if let Some(c) = &q.priority_class_name {
        return k.priority_classes.get(c).map(|p| p.0).ok_or_else(|| format!("PriorityClass {c:?} is not in the manifests: Kueue creates no Workload for it"));
    }
    Ok(k.priority_classes.values().filter(|p| p.1).map(|p| p.0).min().unwrap_or(0))
}

/// The LocalQueue's ClusterQueue, if it exists and is active (every flavor it names exists, no stopPolicy:
/// pkg/cache/scheduler/clusterqueue.go `updateQueueStatus`).
fn cluster_queue(k: &Kueue, q: &Queued) -> Result<usize, String> {
    let lq = format!("{}/{}", q.namespace, q.queue);
    let name = k.local_queues.get(&lq).ok_or_else(|| format!("pending: LocalQueue {lq} is not in the manifests"))?;
    let at = k.cluster_queues.iter().position(|c| &c.name == name).ok_or_else(|| format!("pending in queue {lq}: ClusterQueue {name} is not in the manifests"))?;
    let cq = &k.cluster_queues[at];
    if let Some(missing) = cq.groups.iter().flat_map(|g| &g.flavors).map(|f| &f.0).find(|f| !k.flavors.contains_key(*f)) {
        return Err(format!("pending in queue {lq}: ClusterQueue {name} is inactive: ResourceFlavor {missing} is not in the manifests"));
    }
    if cq.stopped {
        return Err(format!("pending in queue {lq}: ClusterQueue {name} is inactive (stopPolicy)"));
    }
    // pkg/workload `ValidateAdmissibility`: the Workload's namespace must match the namespaceSelector.
    if !cq.namespace_selector.as_ref().is_some_and(|s| s.matches(&k.namespace_labels(&q.namespace))) {
        let why = if cq.namespace_selector.is_none() { "has no namespaceSelector, which selects no namespace (namespaceSelector: {} selects all)" } else { "has a namespaceSelector that does not select it" };
        return Err(format!("pending in queue {lq}: namespace {} is not eligible: ClusterQueue {name} {why}", q.namespace));
    }
    Ok(at)
}

fn covers(cq: &ClusterQueue, resource: &str) -> bool {
    cq.groups.iter().any(|g| g.covered.iter().any(|r| r == resource))
}

/// The queue position of a Workload and the reason it is pending.
fn prefix(w: &Workload, cq: &ClusterQueue) -> String {
    format!("pending in queue {}/{} (ClusterQueue {})", w.queued.namespace, w.queued.queue, cq.name)
}

// --- scheduling cycles ----------------------------------------------------------------------------------------------

/// scheduler.go `schedule`, repeated while a cycle changes something: a cycle that admits nothing and sets nothing
/// aside leaves the state as it found it, so every later cycle would too.
fn schedule(k: &Kueue, pods: &[Pod], workloads: &[Workload]) -> Vec<Status> {
    let mut s = Scheduling::new(k, workloads);
    while s.cycle(pods) {}
    s.finish();
    s.status
}

/// The scheduler's state between cycles.
struct Scheduling<'a, 'p> {
    k: &'a Kueue,
    workloads: &'a [Workload<'p>],
    status: Vec<Status>,
    /// Per ClusterQueue, its Workloads in queue order.
    queues: Vec<Vec<usize>>,
    /// Per StrictFIFO ClusterQueue, the head that does not fit: it stays the head, nominated every cycle.
    blocked: Vec<Option<usize>>,
    /// Why a Workload still pending was last passed over.
    reasons: Vec<Option<String>>,
    usage: Usage<'a>,
    admitted: usize,
}

/// A head as nominated: its assignment, or why not and what quota it holds back for the cycle.
type Entry = (usize, usize, Result<Assignment, Rejected>);

impl<'a, 'p> Scheduling<'a, 'p> {
    fn new(k: &'a Kueue, workloads: &'a [Workload<'p>]) -> Self {
        let status = workloads.iter().map(|w| w.cluster_queue.as_ref().err().map_or(Status::Pending, |e| Status::Inadmissible(e.clone()))).collect();
        let mut queues: Vec<Vec<usize>> = vec![Vec::new(); k.cluster_queues.len()];
        for (i, w) in workloads.iter().enumerate() {
            if let Ok(c) = w.cluster_queue {
                queues[c].push(i);
            }
        }
        queues.iter_mut().for_each(|q| q.sort_by(|&a, &b| workloads[a].order().cmp(&workloads[b].order())));
        let n = queues.len();
        Scheduling { k, workloads, status, blocked: vec![None; n], reasons: vec![None; workloads.len()], queues, usage: Usage::new(k), admitted: 0 }
    }

    /// Each ClusterQueue's head: its first pending Workload (under StrictFIFO, the blocked head stays first).
    fn heads(&self) -> Vec<(usize, usize)> {
        (0..self.queues.len()).filter_map(|c| self.queues[c].iter().find(|&&w| matches!(self.status[w], Status::Pending)).map(|&w| (c, w))).collect()
    }

    /// One cycle: every ClusterQueue's head is assigned flavors against the usage at the cycle's start, then tried in
    /// `makeClassicalIterator` order (non-borrowing first, then priority, then creation). A head that would need
    /// preemption, which finds no candidate, holds back its quota for the rest of the cycle unless its ClusterQueue
    /// can always reclaim (scheduler.go `reserveCapacityForUnreclaimablePreempt`). True when something changed.
    fn cycle(&mut self, pods: &[Pod]) -> bool {
        let w = self.workloads;
        let mut entries: Vec<Entry> = self.heads().into_iter().map(|(c, i)| (c, i, assign(self.k, &self.usage, c, &pods[w[i].pods[0]], &w[i].requests))).collect();
        let borrows = |a: &Result<Assignment, Rejected>| match a {
            Ok(a) => a.borrowing,
            Err(r) => r.reserve.as_ref().is_some_and(|a| a.borrowing),
        };
        entries.sort_by_key(|(_, i, a)| (borrows(a), w[*i].order()));
        let mut reserved = Vec::new();
        let mut changed = false;
        for (c, i, assigned) in entries {
            match assigned {
                Err(rejected) => {
                    if let Some(a) = rejected.reserve.filter(|_| !self.k.cluster_queues[c].can_always_reclaim) {
                        let r = self.usage.reservation(c, &a);
                        self.usage.add(c, &r);
                        reserved.push((c, r));
                    }
                    changed |= self.set_aside(c, i, format!("{}: {}", prefix(&w[i], &self.k.cluster_queues[c]), rejected.reason));
                }
                Ok(a) if self.usage.fits(c, &a.usage) => {
                    self.usage.add(c, &a.usage);
                    self.status[i] = Status::Admitted { flavors: a.flavors, borrowing: a.borrowing, seq: self.admitted };
                    self.admitted += 1;
                    changed = true;
                }
                // No longer fits after an earlier admission or reservation this cycle: tried again next cycle.
                Ok(_) => self.reasons[i] = Some(format!("{}: the quota it was nominated for went to an earlier head of the cycle, or is held back for a Workload waiting for preemption", prefix(&w[i], &self.k.cluster_queues[c]))),
            }
        }
        for (c, r) in reserved {
            self.usage.sub(c, &r);
        }
        changed
    }

    /// BestEffortFIFO sets the head aside; StrictFIFO keeps it at the head (cluster_queue.go `RequeueIfNotPresent`).
    /// True when that is new.
    fn set_aside(&mut self, c: usize, i: usize, reason: String) -> bool {
        if self.k.cluster_queues[c].strict_fifo {
            let new = self.blocked[c] != Some(i);
            self.blocked[c] = Some(i);
            self.reasons[i] = Some(reason);
            return new;
        }
        self.status[i] = Status::Inadmissible(reason);
        true
    }

    /// Every Workload still pending gets its reason: the head of its queue its own, the others the head's name.
    fn finish(&mut self) {
        for c in 0..self.queues.len() {
            let Some(head) = self.queues[c].iter().copied().find(|&i| matches!(self.status[i], Status::Pending)) else { continue };
            let order = if self.k.cluster_queues[c].strict_fifo { "in StrictFIFO order (Kueue admits none of its queue until it fits)" } else { "(the head is tried first every cycle)" };
            for &i in &self.queues[c] {
                if matches!(self.status[i], Status::Pending) {
                    let own = self.reasons[i].clone().filter(|_| i == head).unwrap_or_default();
                    let why = if i == head { own } else { format!("{}: behind {} {order}", prefix(&self.workloads[i], &self.k.cluster_queues[c]), self.workloads[head].queued.workload) };
                    self.status[i] = Status::Inadmissible(why);
                }
            }
        }
    }
}

/// A flavor per requested resource, and the quota it takes.
struct Assignment {
    flavors: BTreeMap<String, String>,
    usage: BTreeMap<(String, String), i128>,
    borrowing: bool,
}

/// Why a head is not admitted; with the assignment it would have after preemption (flavorassigner.go Preempt mode)
/// when its flavors have the room in nominal quota that preemption would free.
struct Rejected {
    reason: String,
    reserve: Option<Assignment>,
}

/// flavorassigner.go `assignFlavors` for one PodSet: each requested resource's resourceGroup picks one flavor for all
/// the resources it covers.
fn assign(k: &Kueue, usage: &Usage, c: usize, pod: &Pod, requests: &Resources) -> Result<Assignment, Rejected> {
    let cq = &k.cluster_queues[c];
    let mut a = Assignment { flavors: BTreeMap::new(), usage: BTreeMap::new(), borrowing: false };
    let mut preempt = Vec::new();
    for (resource, &quantity) in requests {
        if a.flavors.contains_key(resource) {
            continue;
        }
        let Some(group) = cq.groups.iter().find(|g| g.covered.contains(resource)) else {
            if quantity == 0 {
                continue;
            }
            let reason = format!("resource {resource} unavailable in ClusterQueue {} (Kueue admits a Workload only when its ClusterQueue covers every resource it requests)", cq.name);
            return Err(Rejected { reason, reserve: None });
        };
        let wanted: Resources = requests.iter().filter(|(r, _)| group.covered.contains(r)).map(|(r, v)| (r.clone(), *v)).collect();
        let (flavor, borrowing) = match find_flavor(k, usage, c, group, pod, &wanted) {
            Ok(choice) => choice,
            Err((reason, Some(choice))) => {
                preempt.push(reason);
                choice
            }
            Err((reason, None)) => return Err(Rejected { reason, reserve: None }),
        };
        for (r, v) in wanted {
            a.usage.insert((flavor.clone(), r.clone()), v);
            a.flavors.insert(r, flavor.clone());
        }
        a.borrowing |= borrowing;
    }
    if preempt.is_empty() {
        return Ok(a);
    }
    Err(Rejected { reason: preempt.join("; "), reserve: Some(a) })
}

/// A flavor, and whether it borrows.
type FlavorChoice = (String, bool);

/// flavorassigner.go `findFlavorForPodSets` without preemption: the first flavor that matches the pods and has room
/// for every resource; with `whenCanBorrow: TryNextFlavor`, the first that needs no borrowing, else the first that
/// borrows. Err holds each flavor's reason, and the first flavor that preemption could make room in (Preempt mode,
/// which finds no candidate here), with whether it borrows.
fn find_flavor(k: &Kueue, usage: &Usage, c: usize, group: &ResourceGroup, pod: &Pod, wanted: &Resources) -> Result<FlavorChoice, (String, Option<FlavorChoice>)> {
    let cq = &k.cluster_queues[c];
    let mut reasons = Vec::new();
    let mut borrowing_fit = None;
    let mut preempt = None;
    for (name, _) in &group.flavors {
        if let Err(why) = flavor_matches(k, name, pod) {
            reasons.push(why);
            continue;
        }
        let rooms: Vec<Room> = wanted.iter().map(|(r, &v)| usage.room(c, &(name.clone(), r.clone()), v)).collect();
        let borrows = rooms.iter().any(|r| matches!(r, Room::Fits { borrows: true } | Room::Preempt { borrows: true, .. }));
        if let Some(why) = rooms.iter().find_map(|r| if let Room::NoFit(why) = r { Some(why) } else { None }) {
            reasons.push(format!("flavor {name}: {why}"));
        } else if let Some(why) = rooms.iter().find_map(|r| if let Room::Preempt { why, .. } = r { Some(why) } else { None }) {
            reasons.push(format!("flavor {name}: {why}"));
            preempt = preempt.or(Some((name.clone(), borrows)));
        } else if !borrows || !cq.try_next_when_borrowing {
            return Ok((name.clone(), borrows));
        } else {
            borrowing_fit = borrowing_fit.or(Some(name.clone()));
        }
    }
    if reasons.is_empty() {
        reasons.push(format!("no flavor in the resourceGroup of {}", group.covered.join(", ")));
    }
    borrowing_fit.map(|f| (f, true)).ok_or_else(|| (reasons.join("; "), preempt))
}

/// flavorassigner.go `checkFlavorForPodSets`: the flavor's NoSchedule/NoExecute nodeTaints are tolerated by the pods'
/// tolerations plus the flavor's, and the pods' nodeSelector and required node affinity, on the flavor's label keys
/// only (`flavorSelector`), match its nodeLabels.
fn flavor_matches(k: &Kueue, name: &str, pod: &Pod) -> Result<(), String> {
    let flavor = &k.flavors[name];
    let hard: Vec<Taint> = flavor.node_taints.iter().filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute").cloned().collect();
    let tolerations: Vec<_> = pod.tolerations.iter().chain(&flavor.tolerations).cloned().collect();
    if let Some(t) = untolerated(&hard, &tolerations) {
        return Err(format!("flavor {name}: untolerated taint {}", t.describe()));
    }
    let keys = |r: &Requirements| -> Requirements { Requirements(r.0.iter().filter(|(key, _)| flavor.node_labels.contains_key(*key)).map(|(k, v)| (k.clone(), v.clone())).collect()) };
    let selects = |r: &Requirements| r.0.iter().all(|(key, req)| label_matches(req, flavor.node_labels.get(key)));
    // A term left empty matches every flavor, so the terms then constrain nothing.
    let terms: Vec<Requirements> = pod.required_terms.iter().map(keys).collect();
    let affinity = terms.is_empty() || terms.iter().any(|t| t.0.is_empty()) || terms.iter().any(selects);
    if !selects(&keys(&pod.node_selector)) || !affinity {
        return Err(format!("flavor {name}: its nodeLabels do not match the pods' nodeSelector or node affinity"));
    }
    Ok(())
}

/// A node selector requirement against a node's label (absent: only NotIn and DoesNotExist match).
fn label_matches(req: &Requirement, value: Option<&String>) -> bool {
    match value {
        Some(v) => req.has(v),
        None => matches!(req.operator(), "NotIn" | "DoesNotExist") && req.gte.is_none() && req.lte.is_none(),
    }
}

/// pkg/podset/podset.go `FromAssignment` and `Merge`: the flavors' nodeLabels join the pods' nodeSelector, and the
/// flavors' tolerations (not already there) their tolerations.
fn inject(k: &Kueue, pod: &Pod, flavors: &BTreeMap<String, String>) -> Pod {
    let mut pod = pod.clone();
    let mut names: Vec<&String> = flavors.values().collect();
    names.dedup();
    for flavor in names.into_iter().map(|n| &k.flavors[n]) {
        for (key, value) in &flavor.node_labels {
            pod.node_selector.add(super::requirements::normalize(key), Requirement::is_in([value.clone()]));
        }
        for t in &flavor.tolerations {
            if !pod.tolerations.contains(t) {
                pod.tolerations.push(t.clone());
            }
        }
    }
    pod
}

// --- quota ----------------------------------------------------------------------------------------------------------

/// Whether a quantity fits a flavor's resource now ([`Usage::room`]).
enum Room {
    Fits { borrows: bool },
    Preempt { why: String, borrows: bool },
    NoFit(String),
}

/// Per ClusterQueue, the quota its admitted Workloads use; a cohort's usage is what its members use beyond what they
/// keep for themselves (resource_node.go `accumulateFromChild`).
struct Usage<'k> {
    k: &'k Kueue,
    used: Vec<BTreeMap<(String, String), i128>>,
}

impl<'k> Usage<'k> {
    fn new(k: &'k Kueue) -> Self {
        Usage { k, used: vec![BTreeMap::new(); k.cluster_queues.len()] }
    }

    fn quota(&self, c: usize, fr: &(String, String)) -> Quota {
        self.k.cluster_queues[c].groups.iter().flat_map(|g| &g.flavors).find(|f| f.0 == fr.0).and_then(|f| f.1.get(&fr.1)).copied().unwrap_or_default()
    }

    fn used(&self, c: usize, fr: &(String, String)) -> i128 {
        self.used[c].get(fr).copied().unwrap_or(0)
    }

    /// resource_node.go `localQuota`: what a lendingLimit keeps out of the cohort.
    fn local_quota(&self, c: usize, fr: &(String, String)) -> i128 {
        let q = self.quota(c, fr);
        q.lending_limit.map_or(0, |l| (q.nominal - l).max(0))
    }

    fn members(&self, c: usize) -> impl Iterator<Item = usize> + '_ {
        let cohort = self.k.cluster_queues[c].cohort.clone();
        (0..self.used.len()).filter(move |&m| cohort.is_some() && self.k.cluster_queues[m].cohort == cohort)
    }

    /// The cohort's quota (members' nominal less what they keep) less its usage: what is unused in the cohort.
    fn cohort_unused(&self, c: usize, fr: &(String, String)) -> i128 {
        self.members(c).map(|m| self.quota(m, fr).nominal - self.local_quota(m, fr) - (self.used(m, fr) - self.local_quota(m, fr)).max(0)).sum()
    }

    /// resource_node.go `available` (floored at 0 by clusterqueue_snapshot.go `Available`).
    fn available(&self, c: usize, fr: &(String, String)) -> i128 {
        let q = self.quota(c, fr);
        let used = self.used(c, fr);
        if self.k.cluster_queues[c].cohort.is_none() {
            return (q.nominal - used).max(0);
        }
        let local = self.local_quota(c, fr);
        let mut parent = self.cohort_unused(c, fr);
        if let Some(limit) = q.borrowing_limit {
            let in_parent = q.nominal - local - (used - local).max(0);
            parent = parent.min(in_parent + limit);
        }
        ((local - used).max(0) + parent).max(0)
    }

    /// resource_node.go `potentialAvailable`: the most the queue could ever have, with nothing in use.
    fn potential(&self, c: usize, fr: &(String, String)) -> i128 {
        let q = self.quota(c, fr);
        if self.k.cluster_queues[c].cohort.is_none() {
            return q.nominal;
        }
        let whole: i128 = self.members(c).map(|m| self.quota(m, fr).nominal - self.local_quota(m, fr)).sum();
        let potential = self.local_quota(c, fr) + whole;
        q.borrowing_limit.map_or(potential, |l| potential.min(q.nominal + l))
    }

    /// flavorassigner.go `fitsResourceQuota` without preemption candidates: whether `v` fits (and borrows), or would
    /// fit once preemption freed quota (it is within nominal, or the ClusterQueue may preempt while borrowing), or
    /// not at all.
    fn room(&self, c: usize, fr: &(String, String), v: i128) -> Room {
        let (flavor, resource) = fr;
        let cq = &self.k.cluster_queues[c];
        let q = self.quota(c, fr);
        let used = self.used(c, fr);
        let shown = |x: i128| show(resource, x);
        let borrowed = format!("borrowed {}{}", shown((used - q.nominal).max(0)), match (&cq.cohort, q.borrowing_limit) {
            (None, _) => " (no cohort)".to_string(),
            (Some(_), Some(l)) => format!(" of {}", shown(l)),
            (Some(_), None) => " (no borrowing limit)".to_string(),
        });
        let potential = self.potential(c, fr);
        if v > potential {
            return Room::NoFit(format!("needs {} {resource}, more than the {} it can ever have (nominal {}, {borrowed})", shown(v), shown(potential), shown(q.nominal)));
        }
        let free = self.available(c, fr);
        let borrows = cq.cohort.is_some() && used + v > q.nominal;
        if v <= free {
            return Room::Fits { borrows };
        }
        let why = format!("needs {} {resource}, {} of {} free (nominal {}, used {}, {borrowed}{})", shown(v), shown(free), shown(potential), shown(q.nominal), shown(used), self.cohort_note(c, fr, flavor));
        if v <= q.nominal || cq.preempt_while_borrowing {
            return Room::Preempt { why, borrows };
        }
        Room::NoFit(why)
    }

    /// scheduler.go `quotaResourcesToReserve` for a head in Preempt mode: up to its borrowing limit when it borrows,
    /// else up to its nominal quota.
    fn reservation(&self, c: usize, a: &Assignment) -> BTreeMap<(String, String), i128> {
        let amount = |fr: &(String, String), v: i128| {
            let (q, used) = (self.quota(c, fr), self.used(c, fr));
            let cap = if a.borrowing { q.borrowing_limit.map(|l| q.nominal + l - used) } else { Some(q.nominal - used) };
            cap.map_or(v, |cap| v.min(cap)).max(0)
        };
        a.usage.iter().map(|(fr, &v)| (fr.clone(), amount(fr, v))).collect()
    }

    fn cohort_note(&self, c: usize, fr: &(String, String), flavor: &str) -> String {
        match &self.k.cluster_queues[c].cohort {
            Some(cohort) => format!(", cohort {cohort} has {} of {flavor} unused", show(&fr.1, self.cohort_unused(c, fr).max(0))),
            None => String::new(),
        }
    }

    /// clusterqueue_snapshot.go `Fits`.
    fn fits(&self, c: usize, usage: &BTreeMap<(String, String), i128>) -> bool {
        usage.iter().all(|(fr, v)| *v <= self.available(c, fr))
    }

    fn add(&mut self, c: usize, usage: &BTreeMap<(String, String), i128>) {
        for (fr, v) in usage {
            *self.used[c].entry(fr.clone()).or_default() += v;
        }
    }

    fn sub(&mut self, c: usize, usage: &BTreeMap<(String, String), i128>) {
        for (fr, v) in usage {
            *self.used[c].entry(fr.clone()).or_default() -= v;
        }
    }
}

// --- report ---------------------------------------------------------------------------------------------------------

/// The quota ClusterQueue `c` uses once admission is done.
fn usage_of(workloads: &[Workload], status: &[Status], c: usize) -> BTreeMap<(String, String), i128> {
    let mut used = BTreeMap::new();
    for (w, s) in workloads.iter().zip(status) {
        if let (Status::Admitted { flavors, .. }, Ok(wc)) = (s, &w.cluster_queue) {
            for (r, f) in flavors.iter().filter(|_| *wc == c) {
                *used.entry((f.clone(), r.clone())).or_insert(0) += w.requests.get(r).copied().unwrap_or(0);
            }
        }
    }
    used
}

fn cq_report(cq: &ClusterQueue, used: &BTreeMap<(String, String), i128>) -> ClusterQueueReport {
    let mut quotas = Vec::new();
    for group in &cq.groups {
        for (flavor, resources) in &group.flavors {
            for resource in &group.covered {
                let q = resources.get(resource).copied().unwrap_or_default();
                let u = used.get(&(flavor.clone(), resource.clone())).copied().unwrap_or(0);
                let s = |v: i128| show(resource, v);
                quotas.push(QuotaReport { flavor: flavor.clone(), resource: resource.clone(), used: s(u), nominal: s(q.nominal), borrowed: s((u - q.nominal).max(0)), borrowing_limit: q.borrowing_limit.map(s), lending_limit: q.lending_limit.map(s) });
            }
        }
    }
    ClusterQueueReport { name: cq.name.clone(), cohort: cq.cohort.clone(), queueing_strategy: if cq.strict_fifo { "StrictFIFO" } else { "BestEffortFIFO" }, quotas }
}

fn workload_reports(k: &Kueue, workloads: &[Workload], status: &[Status]) -> Vec<WorkloadReport> {
    let mut rows: Vec<(Option<usize>, QueueOrder, WorkloadReport)> = Vec::new();
    for (w, s) in workloads.iter().zip(status) {
        let (seq, flavors, borrowing, reason) = match s {
            Status::Admitted { flavors, borrowing, seq } => (Some(*seq), flavors.clone(), *borrowing, None),
            Status::Inadmissible(r) => (None, BTreeMap::new(), false, Some(r.clone())),
            Status::Pending => (None, BTreeMap::new(), false, None),
        };
        let report = WorkloadReport {
            name: w.queued.workload.clone(),
            queue: format!("{}/{}", w.queued.namespace, w.queued.queue),
            cluster_queue: w.cluster_queue.as_ref().ok().map(|&c| k.cluster_queues[c].name.clone()),
            pods: w.pods.len(),
            priority: w.priority,
            admitted: seq.is_some(),
            flavors,
            borrowing,
            reason,
        };
        rows.push((seq, w.order(), report));
    }
    rows.sort_by(|a, b| (a.0.is_none(), a.0, &a.1).cmp(&(b.0.is_none(), b.0, &b.1)));
    rows.into_iter().map(|r| r.2).collect()
}
