//! Packing and limits: kubernetes-sigs/karpenter `pkg/controllers/provisioning/scheduling/scheduler.go` (`Solve`,
//! `trySchedule`, `add`, `addToInflightNode`, `addToNewNodeClaim`, `subtractMax`, `filterByRemainingResources`),
//! `nodeclaim.go` (`CanAdd`, `filterInstanceTypesByRequirements`, `fits`), `queue.go` (pods by cpu then memory,
//! descending; a pod is retried until a full pass makes no progress), `preferences.go` (`Relax`, in its order: drop
//! the first of several required node affinity terms, the heaviest preferred pod affinity term, the heaviest
//! preferred pod anti-affinity term, the heaviest preferred node affinity term, a ScheduleAnyway spread constraint,
//! then tolerate PreferNoSchedule taints when a NodePool has one) and `pkg/utils/nodepool` `OrderByWeight` (weight
//! descending, equal weights by name descending). Topology spread and pod (anti-)affinity narrow a NodeClaim's
//! requirements in `can_add` and count a pod once it lands (`topology`); runs where no pod has such a
//! constraint skip that entirely.
//!
//! The only cluster state is the static NodePools' replicas (`static_nodes`), existing nodes tried before
//! anything planned in this run; every other pod goes to a NodeClaim planned in this run. DaemonSets
//! count as overhead per instance type (`daemons`). Not modelled: volume topology, DRA.

use std::collections::BTreeSet;

use super::instances::SimType;
use super::manifests::NodePool;
use super::pods::Pod;
use super::requirements::{offering_compatible, untolerated, Requirements, Toleration};
use super::topology::{Constraints, Domains, Owned, Topology};
use super::yaml::Resources;

/// A NodePool ready to schedule: its types, or why it takes no pods.
#[derive(Debug, Clone)]
pub struct Template {
    /// Shared between runs (Arc): each run's template is the prepared one with other offerings available.
    pub pool: std::sync::Arc<NodePool>,
    /// Shared between runs (Arc): a run with unavailable offerings copies only the types it changes.
    pub types: Vec<std::sync::Arc<SimType>>,
    /// Why the pool takes no pods at all (missing NodeClass, minValues, no type left).
    pub dropped: Option<String>,
    /// Whether provisioner.go hands the NodePool to `NewScheduler`: dynamic (not static) with its NodeClass ready. Only
    /// those decide whether relaxation tolerates PreferNoSchedule taints (scheduler.go `NewScheduler`).
    pub provisioned: bool,
}

/// A NodeClaim being planned.
#[derive(Debug, Clone)]
pub struct Claim {
    pub template: usize,
    pub pods: Vec<usize>,
    pub requests: Resources,
    pub requirements: Requirements,
    /// Indices into the template's types: the candidates still fitting every pod.
    pub types: Vec<usize>,
    /// The host ports its pods bind (nodeclaim.go `Add` records them in every daemon group's `HostPortUsage`).
    pub host_ports: Vec<super::pods::HostPort>,
    /// The placeholder hostname topology counts pods by (nodeclaim.go `NewNodeClaim`).
    pub hostname: String,
    /// A static NodePool's node (`static_nodes`): launched up front, whatever the pods.
    pub fixed: bool,
}

pub struct Outcome {
    pub claims: Vec<Claim>,
    /// Pod index → reason.
    pub pending: Vec<(usize, String)>,
}

/// pkg/utils/nodepool `OrderByWeight`.
pub fn order_by_weight(templates: &mut [Template]) {
    templates.sort_by(|a, b| b.pool.weight.cmp(&a.pool.weight).then_with(|| b.pool.name.cmp(&a.pool.name)));
}

pub fn sum(a: &Resources, b: &Resources) -> Resources {
    let mut out = a.clone();
    for (k, v) in b {
        *out.entry(k.clone()).or_default() += v;
    }
    out
}

/// A pod in the queue: the original, plus the relaxations applied in the current attempt.
#[derive(Clone)]
struct Attempt {
    required: usize,
    preferred: usize,
    tolerate_prefer_no_schedule: bool,
    /// How many preferred pod affinity / anti-affinity terms (heaviest first) are relaxed.
    preferred_affinity: usize,
    preferred_anti_affinity: usize,
    /// The spread constraints left, as positions in the pod's list (removal moves the last one into the gap, as
    /// preferences.go does).
    spread: Vec<usize>,
}

impl Attempt {
    fn new(pod: &Pod) -> Attempt {
        let spread = pod.topology.as_ref().map_or(0, |t| t.spread.len());
        Attempt { required: 0, preferred: 0, tolerate_prefer_no_schedule: false, preferred_affinity: 0, preferred_anti_affinity: 0, spread: (0..spread).collect() }
    }

    /// scheduling.NewStrictPodRequirements: the nodeSelector and the current required term, without preferences
    /// (topology's pod domains).
    fn strict_requirements(&self, pod: &Pod) -> Requirements {
        pod.required_terms.get(self.required).map_or_else(|| pod.node_selector.clone(), |t| pod.node_selector.merged(t))
    }

    /// The pod's topology constraints left in this attempt. Preferred pod (anti-)affinity terms count as constraints
    /// until relaxed (topology.go `newForAffinities` with the Respect preference policy).
    fn constraints<'p>(&self, pod: &'p Pod) -> Constraints<'p> {
        let t = pod.topology.as_deref().expect("only pods with topology have constraints");
        let node_filter = if pod.required_terms.is_empty() { vec![pod.node_selector.clone()] } else { pod.required_terms[self.required..].iter().map(|r| pod.node_selector.merged(r)).collect() };
        Constraints {
            spread: self.spread.iter().map(|&i| &t.spread[i]).collect(),
            affinity: t.affinity.iter().chain(&t.preferred_affinity[self.preferred_affinity..]).collect(),
            anti_affinity: t.anti_affinity.iter().chain(&t.preferred_anti_affinity[self.preferred_anti_affinity..]).collect(),
            node_filter,
            tolerations: self.tolerations(pod),
        }
    }

    fn requirements(&self, pod: &Pod) -> Requirements {
        let mut reqs = pod.node_selector.clone();
        for term in pod.preferred_terms.get(self.preferred).into_iter().chain(pod.required_terms.get(self.required)) {
            reqs = reqs.merged(term);
        }
        reqs
    }

    fn tolerations(&self, pod: &Pod) -> Vec<Toleration> {
        let mut t = pod.tolerations.clone();
        if self.tolerate_prefer_no_schedule {
            t.push(Toleration::prefer_no_schedule());
        }
        t
    }

    /// preferences.go `Relax`; false when nothing is left to relax.
    fn relax(&mut self, pod: &Pod, prefer_no_schedule_pools: bool) -> bool {
        let t = pod.topology.as_deref();
        let preferred_affinity = t.map_or(0, |t| t.preferred_affinity.len());
        let preferred_anti_affinity = t.map_or(0, |t| t.preferred_anti_affinity.len());
        let schedule_anyway = t.and_then(|t| self.spread.iter().position(|&i| t.spread[i].schedule_anyway));
        if pod.required_terms.len() > self.required + 1 {
            self.required += 1;
        } else if self.preferred_affinity < preferred_affinity {
            self.preferred_affinity += 1;
        } else if self.preferred_anti_affinity < preferred_anti_affinity {
            self.preferred_anti_affinity += 1;
        } else if self.preferred < pod.preferred_terms.len() {
            self.preferred += 1;
        } else if let Some(i) = schedule_anyway {
            self.spread.swap_remove(i);
        } else if prefer_no_schedule_pools && !self.tolerate_prefer_no_schedule {
            self.tolerate_prefer_no_schedule = true;
        } else {
            return false;
        }
        true
    }
}

pub struct Scheduler<'a> {
    pub templates: &'a [Template],
    pub pods: &'a [Pod],
    claims: Vec<Claim>,
    remaining: Vec<Resources>,
    prefer_no_schedule: bool,
    /// `None` when no pod has a spread constraint or pod (anti-)affinity: the fast path.
    topology: Option<Topology>,
}

/// A pod's topology in the current attempt: the groups it owns and its strict requirements.
struct PodTopology {
    owned: Owned,
    strict: Requirements,
}

/// Why filtering left no type (nodeclaim.go `InstanceTypeFilterError`), plus minValues.
#[derive(Default)]
struct FilterFlags {
    requirements: bool,
    fits: bool,
    offering: bool,
    first_key: Option<String>,
}

impl<'a> Scheduler<'a> {
    pub fn new(templates: &'a [Template], pods: &'a [Pod]) -> Scheduler<'a> {
        // scheduler.go NewScheduler loops over the NodePools it is given, dynamic ones: a static NodePool's taint does
        // not make relaxation tolerate PreferNoSchedule (seed 22 case 756: a pod stays off a replica tainted so).
        let prefer_no_schedule = templates.iter().filter(|t| t.provisioned).any(|t| t.pool.taints.iter().any(|x| x.effect == "PreferNoSchedule"));
        let remaining = templates.iter().map(|t| t.pool.limits.clone()).collect();
        Scheduler { templates, pods, claims: Vec::new(), remaining, prefer_no_schedule, topology: None }
    }

    /// Starts with these nodes (static NodePools' replicas) existing: pods are tried on them first, in this order.
    pub fn with_static_nodes(mut self, nodes: Vec<Claim>) -> Scheduler<'a> {
        self.claims.extend(nodes);
        self
    }

    /// Starts with these NodePool limits left (per template: the limits less what existing nodes use, as the
    /// provisioner computes them from cluster state: provisioner.go `NewScheduler`, `nodepoolutils` limits).
    pub fn with_remaining(mut self, remaining: Vec<Resources>) -> Scheduler<'a> {
        self.remaining = remaining;
        self
    }

    /// Models topology with these domains when some pod has a spread constraint or pod (anti-)affinity; call after
    /// [`Scheduler::with_static_nodes`], whose nodes' domains the groups learn (topology.go `countDomains`).
    pub fn with_topology(mut self, domains: impl FnOnce() -> Domains) -> Scheduler<'a> {
        if self.pods.iter().any(|p| p.topology.as_ref().is_some_and(|t| t.constrains())) {
            let existing = self
                .claims
                .iter()
                .filter(|c| c.fixed)
                .map(|c| super::topology::Existing { taints: self.templates[c.template].pool.taints.clone(), requirements: c.requirements.clone(), hostname: c.hostname.clone() })
                .collect();
            self.topology = Some(Topology::new(domains(), self.pods, existing, |pod| Attempt::new(pod).constraints(pod)));
        }
        self
    }

    /// topology.go `Update` for the attempt: the groups the pod owns now.
    fn pod_topology(&mut self, pod: &Pod, attempt: &Attempt) -> Option<PodTopology> {
        let topology = self.topology.as_mut()?;
        pod.topology.as_ref()?;
        Some(PodTopology { owned: topology.owned(pod, &attempt.constraints(pod)), strict: attempt.strict_requirements(pod) })
    }

    /// nodeclaim.go `Add`: the pod counts in the topology of the claim it landed on.
    fn record_topology(&mut self, p: usize, c: usize) {
        let Some(topology) = self.topology.as_mut() else { return };
        let claim = &self.claims[c];
        topology.record(p, &self.pods[p], &self.templates[claim.template].pool.taints, &claim.requirements, &claim.hostname);
    }

    /// nodeclaim.go `CanAdd`'s topology step, last before the instance types are filtered: `merged` narrowed to the
    /// domains the pod may take on this NodeClaim.
    fn narrow_topology(&self, claim: &Claim, pod: &Pod, topo: Option<&PodTopology>, merged: Requirements) -> Result<Requirements, String> {
        let (Some(topology), Some(pt)) = (&self.topology, topo) else { return Ok(merged) };
        let template = &self.templates[claim.template];
        let viable = |key: &str, domain: &str| launchable(template, &claim.types, &merged, key, domain);
        topology.narrow(pod, &pt.owned, &template.pool.taints, &pt.strict, &merged, &claim.hostname, &viable)
    }

    /// scheduler.go `Solve`: the queue, sorted by cpu then memory descending (input order breaks ties, standing in for
    /// creation time); a failed pod goes to the back and is retried until a full pass makes no progress.
    pub fn solve(mut self) -> Outcome {
        let mut queue: Vec<usize> = (0..self.pods.len()).collect();
        let req = |i: usize, k: &str| self.pods[i].requests.get(k).copied().unwrap_or(0);
        queue.sort_by(|&a, &b| req(b, "cpu").cmp(&req(a, "cpu")).then(req(b, "memory").cmp(&req(a, "memory"))).then(a.cmp(&b)));
        let mut queue: std::collections::VecDeque<usize> = queue.into();
        let mut last_len = vec![usize::MAX; self.pods.len()];
        let mut errors: Vec<Option<String>> = vec![None; self.pods.len()];
        while let Some(&p) = queue.front() {
            if last_len[p] == queue.len() {
                break;
            }
            queue.pop_front();
            match self.try_schedule(p) {
                Ok(()) => errors[p] = None,
                Err(e) => {
                    errors[p] = Some(e);
                    queue.push_back(p);
                    last_len[p] = queue.len();
                }
            }
        }
        let pending = errors.into_iter().enumerate().filter_map(|(i, e)| e.map(|e| (i, e))).collect();
        Outcome { claims: self.claims, pending }
    }

    /// scheduler.go `trySchedule`: relax until it fits or nothing is left to relax.
    fn try_schedule(&mut self, p: usize) -> Result<(), String> {
        let pod = &self.pods[p];
        let mut attempt = Attempt::new(pod);
        loop {
            match self.add(p, &attempt) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    if !attempt.relax(pod, self.prefer_no_schedule) {
                        return Err(e);
                    }
                }
            }
        }
    }

    /// scheduler.go `add`: an existing node first (`addToExistingNode`: the static replicas, the first that takes the
    /// pod in node-name order, which is their launch order here), then an in-flight NodeClaim (`addToInflightNode`:
    /// fewest pods first), then a new one by NodePool weight.
    fn add(&mut self, p: usize, attempt: &Attempt) -> Result<(), String> {
        let pod = &self.pods[p];
        let reqs = attempt.requirements(pod);
        let tolerations = attempt.tolerations(pod);
        let topo = self.pod_topology(pod, attempt);
        // Stable: the static replicas keep their launch order, whatever pods they hold.
        self.claims.sort_by_key(|c| if c.fixed { (0, 0) } else { (1, c.pods.len()) });
        for i in 0..self.claims.len() {
            if let Ok((r, types)) = self.can_add(&self.claims[i], pod, &reqs, &tolerations, topo.as_ref()) {
                let claim = &mut self.claims[i];
                claim.pods.push(p);
                claim.requests = sum(&claim.requests, &pod.requests);
                claim.requirements = r;
                claim.types = types;
                claim.host_ports.extend(pod.host_ports.iter().cloned());
                self.record_topology(p, i);
                return Ok(());
            }
        }
        self.add_to_new_claim(p, &reqs, &tolerations, topo.as_ref())
    }

    /// scheduler.go `addToNewNodeClaim`: the first NodePool (by weight) whose fresh NodeClaim takes the pod; the claim is
    /// charged against the pool's limits by the largest capacity among its candidates (`subtractMax`).
    fn add_to_new_claim(&mut self, p: usize, reqs: &Requirements, tolerations: &[Toleration], topo: Option<&PodTopology>) -> Result<(), String> {
        let pod = &self.pods[p];
        let mut errors = Vec::new();
        if self.templates.is_empty() {
            return Err("no NodePool in the manifests".into());
        }
        for (t, template) in self.templates.iter().enumerate() {
            let name = &template.pool.name;
            if let Some(why) = &template.dropped {
                errors.push(format!("NodePool {name}: {why}"));
                continue;
            }
            let types = match self.within_limits(t) {
                Ok(types) => types,
                Err(e) => {
                    errors.push(format!("NodePool {name}: {e}"));
                    continue;
                }
            };
            let hostname = format!("hostname-placeholder-{:04}", self.claims.len() + 1);
            let claim = Claim { template: t, pods: Vec::new(), requests: Resources::new(), requirements: template.pool.requirements.clone(), types, hostname, host_ports: Vec::new(), fixed: false };
            match self.can_add(&claim, pod, reqs, tolerations, topo) {
                Ok((r, types)) => {
                    // subtractMax charges the largest capacity among the candidates. Instance types have no `nodes`
                    // capacity, so NodeClaims planned in one run do not use up a `nodes` limit (only nodes that exist
                    // do, and there are none offline): Karpenter v1.14.1 launches them all in one batch.
                    let charge = max_capacity(types.iter().map(|&i| &template.types[i].capacity));
                    let remaining = &mut self.remaining[t];
                    for (k, v) in remaining.iter_mut() {
                        *v -= charge.get(k).copied().unwrap_or(0);
                    }
                    self.claims.push(Claim { pods: vec![p], requests: pod.requests.clone(), requirements: r, types, host_ports: pod.host_ports.clone(), ..claim });
                    self.record_topology(p, self.claims.len() - 1);
                    return Ok(());
                }
                Err(e) => errors.push(format!("NodePool {name}: {e}")),
            }
        }
        Err(errors.join("; "))
    }

    /// scheduler.go: `nodes` limit exhausted (a limit of 0: no nodes exist offline), else `filterByRemainingResources`.
    fn within_limits(&self, t: usize) -> Result<Vec<usize>, String> {
        let remaining = &self.remaining[t];
        let template = &self.templates[t];
        if remaining.get("nodes").is_some_and(|n| *n <= 0) {
            return Err(format!("node limits have been exhausted (limits: nodes {})", template.pool.limits["nodes"] / 1000));
        }
        let types: Vec<usize> = (0..template.types.len())
            .filter(|&i| remaining.iter().all(|(k, v)| k == "nodes" || template.types[i].capacity.get(k).copied().unwrap_or(0) <= *v))
            .collect();
        if types.is_empty() {
            let limits: Vec<String> = template.pool.limits.iter().map(|(k, v)| format!("{k} {}", super::yaml::show(k, *v))).collect();
            return Err(format!("all available instance types exceed limits for nodepool (limits: {})", limits.join(", ")));
        }
        Ok(types)
    }

    /// nodeclaim.go `CanAdd`: taints, requirement compatibility, then the candidate types that still fit every pod plus
    /// the type's DaemonSet overhead and have an available offering (`filterInstanceTypesByRequirements`, which skips
    /// the types whose daemons, or the claim's pods, bind one of the pod's host ports); Strict minValues.
    fn can_add(&self, claim: &Claim, pod: &Pod, reqs: &Requirements, tolerations: &[Toleration], topo: Option<&PodTopology>) -> Result<(Requirements, Vec<usize>), String> {
        let template = &self.templates[claim.template];
        admits(&template.pool.taints, &claim.requirements, reqs, tolerations)?;
        // A static replica was launched requesting nothing, so without EFA interfaces: the provider attaches them only
        // when the NodeClaim requests EFA or the NodeClass configures network interfaces (aws/karpenter-provider-aws
        // v1.14.1 instance.go `getEFACountForInstance`; cloudprovider.go `instanceToNodeClaim` then advertises none).
        // NodeClass networkInterfaces are not modelled (instances.rs).
        if claim.fixed && template.pool.static_replicas.is_some() && pod.requests.get(crate::catalog::efa::EFA_RESOURCE).is_some_and(|v| *v > 0) {
            return Err(format!("exceeds node resources: the static replica was launched without {} interfaces", crate::catalog::efa::EFA_RESOURCE));
        }
        let merged = self.narrow_topology(claim, pod, topo, claim.requirements.merged(reqs))?;
        let requests = sum(&claim.requests, &pod.requests);
        let mut flags = FilterFlags::default();
        let mut remaining = Vec::new();
        // A clash with a pod already on the claim is a clash in every daemon group: no type is looked at.
        let ports_free = !super::pods::ports_conflict(&pod.host_ports, &claim.host_ports);
        for &i in claim.types.iter().filter(|_| ports_free) {
            let it = &template.types[i];
            if it.daemons.blocks_ports(&pod.host_ports) {
                continue;
            }
            let compatible = match it.requirements.intersects(&merged) {
                Ok(()) => true,
                Err(e) => {
                    flags.first_key.get_or_insert(e);
                    false
                }
            };
            let fit = it.daemons.fits(&requests, &it.allocatable);
            let offering = it.offerings.iter().any(|o| o.available && offering_compatible(&merged, &o.zone, o.capacity_type.as_str()));
            flags.requirements |= compatible;
            flags.fits |= fit;
            flags.offering |= offering;
            if compatible && fit && offering {
                remaining.push(i);
            }
        }
        if remaining.is_empty() {
            return Err(filter_error(&flags, &requests));
        }
        // nodeclaim.go `offeringsToReserve` (the provisioner's strict reserved-offering mode): a NodeClaim holding
        // reserved offerings takes a pod only if some reserved offering stays compatible. Reservations are assumed to
        // have room (instances.rs), so a new NodeClaim always gets its reserved offerings.
        let reserved = |types: &[usize], reqs: &Requirements| {
            types.iter().any(|&i| template.types[i].offerings.iter().any(|o| o.available && o.capacity_type == crate::catalog::CapacityType::Reserved && offering_compatible(reqs, &o.zone, o.capacity_type.as_str())))
        };
        if !claim.pods.is_empty() && reserved(&claim.types, &claim.requirements) && !reserved(&remaining, &merged) {
            return Err("satisfying updated nodeclaim constraints would remove all compatible reserved offering options".into());
        }
        min_values(&merged, remaining.iter().map(|&i| &*template.types[i]))?;
        Ok((merged, remaining))
    }

    pub fn remaining(&self) -> &[Resources] {
        &self.remaining
    }
}

/// nodeclaim.go `CanAdd`'s first two checks, before any instance type is looked at: the pod tolerates every taint,
/// and its requirements are compatible with the NodeClaim's.
pub fn admits(taints: &[super::requirements::Taint], requirements: &Requirements, reqs: &Requirements, tolerations: &[Toleration]) -> Result<(), String> {
    if let Some(taint) = untolerated(taints, tolerations) {
        return Err(format!("did not tolerate taint {}", taint.describe()));
    }
    requirements.compatible(reqs).map_err(|e| format!("incompatible requirements, {e}"))
}

/// Whether a NodeClaim could still launch in a topology domain: one of its candidate types has an available offering
/// there compatible with its requirements (zone, capacity type), or carries the label value (other keys).
fn launchable(template: &Template, types: &[usize], reqs: &Requirements, key: &str, domain: &str) -> bool {
    types.iter().map(|&i| &template.types[i]).any(|it| match key {
        "topology.kubernetes.io/zone" => it.offerings.iter().any(|o| o.available && o.zone == domain && offering_compatible(reqs, &o.zone, o.capacity_type.as_str())),
        "karpenter.sh/capacity-type" => it.offerings.iter().any(|o| o.available && o.capacity_type.as_str() == domain && offering_compatible(reqs, &o.zone, domain)),
        _ => it.requirements.get(key).is_none_or(|r| r.has(domain)),
    })
}

/// resources.MaxResources over the candidates' capacity.
pub fn max_capacity<'b>(caps: impl Iterator<Item = &'b Resources>) -> Resources {
    let mut out = Resources::new();
    for c in caps {
        for (k, v) in c {
            let e = out.entry(k.clone()).or_insert(*v);
            *e = (*e).max(*v);
        }
    }
    out
}

fn filter_error(f: &FilterFlags, requests: &Resources) -> String {
    let what = match (f.requirements, f.fits, f.offering) {
        (false, false, false) => "no instance type met the scheduling requirements or had enough resources or had a required offering",
        (false, false, true) => "no instance type met the scheduling requirements or had enough resources",
        (false, true, false) => "no instance type met the scheduling requirements or had a required offering",
        (true, false, false) => "no instance type had enough resources or had a required offering",
        (false, true, true) => "no instance type met all requirements",
        (true, false, true) => "no instance type has enough resources",
        (true, true, false) => "no instance type has the required offering",
        (true, true, true) => "no instance type met the requirements/resources/offering tuple",
    };
    let mut text = what.to_string();
    if !f.requirements
        && let Some(k) = &f.first_key {
            text.push_str(&format!(" ({k})"));
        }
    if !f.fits {
        let r: Vec<String> = requests.iter().filter(|(k, _)| *k != "pods").map(|(k, v)| format!("{k}={}", super::yaml::show(k, *v))).collect();
        text.push_str(&format!(", requests {}", r.join(" ")));
    }
    text
}

/// cloudprovider `InstanceTypes.SatisfiesMinValues`: each key with minValues needs that many distinct values among the
/// remaining types.
pub fn min_values<'b>(reqs: &Requirements, types: impl Iterator<Item = &'b SimType> + Clone) -> Result<(), String> {
    for (key, req) in &reqs.0 {
        let Some(min) = req.min_values else { continue };
        let values: BTreeSet<&String> = types.clone().filter_map(|t| t.requirements.get(key)).flat_map(|r| r.values.iter().filter(|v| req.has(v))).collect();
        if values.len() < min {
            return Err(format!("minValues requirement is not met for label {key} (needs {min}, has {})", values.len()));
        }
    }
    Ok(())
}
