//! Topology spread and pod (anti-)affinity for pending pods: which domains a pod may take on a NodeClaim, given the
//! pods already planned in this run.
//!
//! Follows kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/provisioning/scheduling/`:
//! - [`Domains`]: `topology.go` `buildDomainGroups` and `topologydomaingroup.go` (the universe of domains per key: the
//!   values of every NodePool requirement intersected with every instance type's labels, plus the values of `In`
//!   requirements and template labels, each remembered with the taints of the NodePool it came from);
//! - [`Group`]: `topologygroup.go` (one per constraint, selector, namespaces, maxSkew and node filter, shared by the
//!   pods that own it; counts of selected pods per domain; `nextDomainTopologySpread`, `nextDomainAffinity`,
//!   `nextDomainAntiAffinity`) and `topologynodefilter.go` (which NodeClaims a spread counts);
//! - [`Topology`]: `topology.go` (`NewTopology`/`Update`: groups created from each pod's constraints, inverse
//!   anti-affinity groups for pods with required anti-affinity; `AddRequirements`: narrow a NodeClaim's requirements
//!   to the allowed domains; `Register`/`Record`: count the pod once it lands).
//!
//! The only cluster state offline is the static NodePools' replicas: `countDomains` gives a new group their domains
//! (those its node filter matches) and finds no pod bound to count; a NodeClaim's hostname domain is registered when
//! its first pod lands (nodeclaim.go `Add`).
//!
//! Where Karpenter picks among equally good domains by Go map iteration (random), this module picks
//! deterministically: among the tied domains, first one the NodeClaim can still launch in (a candidate type has a
//! compatible available offering there), then by name. That is one of the outcomes Karpenter can produce, and the
//! one that does not leave a pod pending when another tied domain would have taken it.

use std::collections::{BTreeMap, BTreeSet};

use crate::catalog::Catalog;

use super::manifests::NodePool;
use super::pods::{Pod, PodTerm, Selector, Spread};
use super::requirements::{untolerated, Requirement, Requirements, Taint, Toleration};

pub const HOSTNAME: &str = "kubernetes.io/hostname";

/// Labels gpuplan folds into a NodePool's requirements that Karpenter's `buildDomainGroups` does not see (it reads
/// the spec's requirements and template labels only).
const NOT_SPEC: &[&str] = &["karpenter.sh/nodepool", "karpenter.k8s.aws/ec2nodeclass", "karpenter.sh/registered", "karpenter.sh/initialized"];

/// The universe of domains per topology key, each with the taint sets of the NodePools that offer it
/// (topologydomaingroup.go `TopologyDomainGroup`: an untainted NodePool makes the domain open to every pod).
#[derive(Debug, Clone, Default)]
pub struct Domains(BTreeMap<String, BTreeMap<String, Vec<Vec<Taint>>>>);

impl Domains {
    /// topology.go `buildDomainGroups` for the keys pods constrain, over the NodePools Karpenter schedules with
    /// (not static, NodeClass resolved; with whether the NodeClass selects capacity reservations) and every catalog
    /// type (the provider lists them all per NodeClass).
    pub fn build<'p>(catalog: &Catalog, pools: impl Iterator<Item = (&'p NodePool, bool)>, keys: &BTreeSet<String>) -> Domains {
        let mut d = Domains::default();
        let pools: Vec<(&NodePool, bool)> = pools.collect();
        for key in keys {
            for reserved in [false, true] {
                let type_values: Vec<Option<Requirement>> = catalog.instance_types.iter().map(|it| type_requirement(it, &catalog.region, key, reserved)).collect();
                for (pool, _) in pools.iter().filter(|(_, r)| *r == reserved) {
                    d.insert_pool_key(pool, key, &type_values);
                }
            }
        }
        d
    }

    fn insert_pool_key(&mut self, pool: &NodePool, key: &str, type_values: &[Option<Requirement>]) {
        let ours = pool.requirements.get(key).filter(|_| !NOT_SPEC.contains(&key));
        for theirs in type_values {
            let merged = match (ours, theirs) {
                (None, None) => continue,
                (Some(r), None) | (None, Some(r)) => r.clone(),
                (Some(a), Some(b)) => a.intersection(b),
            };
            // requirement.go `Values` lists the set as stored, also for a complement (NotIn's excluded values).
            for v in &merged.values {
                self.insert(key, v, &pool.taints);
            }
        }
        if let Some(r) = ours.filter(|r| r.operator() == "In") {
            for v in &r.values {
                self.insert(key, v, &pool.taints);
            }
        }
    }

    /// topologydomaingroup.go `Insert`: an untainted source replaces every taint set (anyone may use the domain).
    fn insert(&mut self, key: &str, domain: &str, taints: &[Taint]) {
        let groups = self.0.entry(key.to_string()).or_default().entry(domain.to_string()).or_default();
        if groups.is_empty() || taints.is_empty() {
            *groups = vec![taints.to_vec()];
        } else if !groups[0].is_empty() {
            groups.push(taints.to_vec());
        }
    }

    /// topologydomaingroup.go `ForEachDomain`: every domain, or (honouring taints) those with a taint set the pod
    /// tolerates.
    fn for_pod(&self, key: &str, tolerations: &[Toleration], honor_taints: bool) -> impl Iterator<Item = &String> {
        self.0.get(key).into_iter().flatten().filter(move |(_, groups)| !honor_taints || groups.iter().any(|t| untolerated(t, tolerations).is_none())).map(|(d, _)| d)
    }
}

/// An instance type's requirement on `key` (instances.rs `requirements`), computed only for the label families the
/// provider sets: a custom key (`capacity-spread`) is never a type label. A type is `reserved` only through a
/// NodeClass that selects capacity reservations (aws types.go `computeRequirements`).
fn type_requirement(it: &crate::catalog::InstanceType, region: &str, key: &str, reservations: bool) -> Option<Requirement> {
    match key {
        "topology.kubernetes.io/zone" => Some(Requirement::is_in(it.zones.iter().cloned())),
        "karpenter.sh/capacity-type" => {
            let reserved = crate::catalog::CapacityType::Reserved;
            Some(Requirement::is_in(it.capacity_types.iter().filter(|c| reservations || **c != reserved).map(|c| c.as_str().to_string())))
        }
        k if ["karpenter.k8s.aws/", "kubernetes.io/", "node.kubernetes.io/", "topology.kubernetes.io/"].iter().any(|p| k.starts_with(p)) => {
            super::instances::requirements(it, region).get(key).cloned()
        }
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Spread,
    Affinity,
    AntiAffinity,
}

impl Kind {
    fn describe(self) -> &'static str {
        match self {
            Kind::Spread => "topology spread",
            Kind::Affinity => "pod affinity",
            Kind::AntiAffinity => "pod anti-affinity",
        }
    }
}

/// topologynodefilter.go `TopologyNodeFilter`: which NodeClaims a spread constraint counts. The pod's nodeSelector
/// with each of its remaining required node affinity terms (any may match), and its tolerations.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeFilter {
    pub requirements: Vec<Requirements>,
    pub honor_affinity: bool,
    pub honor_taints: bool,
    pub tolerations: Vec<Toleration>,
}

impl NodeFilter {
    /// topologynodefilter.go `Matches`: `Compatible` without the caller's options, so a well-known label the
    /// NodeClaim leaves undefined does not match ([`Requirements::compatible_strict`]).
    fn matches(&self, taints: &[Taint], reqs: &Requirements) -> bool {
        let affinity = !self.honor_affinity || self.requirements.is_empty() || self.requirements.iter().any(|r| reqs.compatible_strict(r).is_ok());
        affinity && (!self.honor_taints || untolerated(taints, &self.tolerations).is_none())
    }
}

/// What makes two groups the same one (topologygroup.go `Hash`: key, type, namespaces, maxSkew, node filter,
/// selector; minDomains is not part of it, so the first pod's wins).
#[derive(Debug, Clone, PartialEq)]
struct GroupId {
    kind: Kind,
    key: String,
    namespaces: BTreeSet<String>,
    max_skew: i32,
    filter: Option<NodeFilter>,
    selector: Option<Selector>,
}

/// topologygroup.go `TopologyGroup`: counts of selected pods per domain.
#[derive(Debug, Clone)]
pub struct Group {
    id: GroupId,
    min_domains: Option<i32>,
    counts: BTreeMap<String, i32>,
    /// Domains known to hold no selected pod (`emptyDomains`).
    empty: BTreeSet<String>,
}

/// A pod's constraints in the current attempt (what preferences.go has not relaxed yet).
pub struct Constraints<'p> {
    pub spread: Vec<&'p Spread>,
    pub affinity: Vec<&'p PodTerm>,
    pub anti_affinity: Vec<&'p PodTerm>,
    /// The pod's nodeSelector with each remaining required node affinity term (topologynodefilter.go).
    pub node_filter: Vec<Requirements>,
    pub tolerations: Vec<Toleration>,
}

/// The groups a pod owns in its current attempt (topology.go `Update` re-registers the owner after each relaxation).
pub struct Owned(Vec<usize>);

fn sorted(selector: &Option<Selector>) -> Option<Selector> {
    selector.clone().map(|mut s| {
        s.expressions.sort();
        s
    })
}

impl Group {
    fn new(id: GroupId, min_domains: Option<i32>, domains: &Domains, tolerations: &[Toleration]) -> Group {
        // topologygroup.go `NewTopologyGroup`: spread groups ignore taints unless nodeTaintsPolicy is Honor; affinity
        // groups have a zero filter whose policy is not Ignore, so they honour them.
        let honor = id.filter.as_ref().is_none_or(|f| f.honor_taints);
        let empty: BTreeSet<String> = domains.for_pod(&id.key, tolerations, honor).cloned().collect();
        let counts = empty.iter().map(|d| (d.clone(), 0)).collect();
        Group { id, min_domains, counts, empty }
    }

    fn selects(&self, namespace: &str, labels: &BTreeMap<String, String>) -> bool {
        self.id.namespaces.contains(namespace) && self.id.selector.as_ref().is_some_and(|s| s.matches(labels))
    }

    /// topologygroup.go `Counts`.
    fn counts_pod(&self, namespace: &str, labels: &BTreeMap<String, String>, taints: &[Taint], reqs: &Requirements) -> bool {
        self.selects(namespace, labels) && self.id.filter.as_ref().is_none_or(|f| f.matches(taints, reqs))
    }

    /// topologygroup.go `Record`.
    fn record(&mut self, domain: &str) {
        *self.counts.entry(domain.to_string()).or_default() += 1;
        self.empty.remove(domain);
    }

    /// topologygroup.go `Register`.
    fn register(&mut self, domain: &str) {
        if !self.counts.contains_key(domain) {
            self.counts.insert(domain.to_string(), 0);
            self.empty.insert(domain.to_string());
        }
    }

    fn count(&self, domain: &str) -> i32 {
        self.counts.get(domain).copied().unwrap_or(0)
    }

    /// topologygroup.go `Get`: the domains the pod may take on a NodeClaim whose requirements allow `node`.
    fn next(&self, selects: bool, pod: &Requirement, node: &Requirement, viable: &dyn Fn(&str) -> bool) -> Requirement {
        match self.id.kind {
            Kind::Spread => self.next_spread(selects, pod, node, viable),
            Kind::Affinity => self.next_affinity(selects, pod, node, viable),
            Kind::AntiAffinity => self.next_anti_affinity(pod, node),
        }
    }

    /// The candidate domains for a NodeClaim: its `In` values that are known domains, else every known domain it
    /// allows (both branches of the `nextDomain*` functions).
    fn candidates<'a>(&'a self, node: &'a Requirement) -> Box<dyn Iterator<Item = &'a String> + 'a> {
        if is_in(node) {
            Box::new(node.values.iter().filter(|d| self.counts.contains_key(*d)))
        } else {
            Box::new(self.counts.keys().filter(|d| node.has(d)))
        }
    }

    /// topologygroup.go `nextDomainTopologySpread`: on a hostname, this NodeClaim if it stays within maxSkew; else
    /// the least-used domain among those within maxSkew of the minimum.
    fn next_spread(&self, selects: bool, pod: &Requirement, node: &Requirement, viable: &dyn Fn(&str) -> bool) -> Requirement {
        let own = i64::from(selects);
        if self.id.key == HOSTNAME && is_in(node) && node.values.len() == 1 {
            let host = node.values.iter().next().unwrap();
            return domain_set((i64::from(self.count(host)) + own <= i64::from(self.id.max_skew)).then(|| host.clone()));
        }
        let min = self.min_count(pod);
        let within: Vec<(&String, i64)> = self.candidates(node).map(|d| (d, i64::from(self.count(d)) + own)).filter(|(_, c)| c - min <= i64::from(self.id.max_skew)).collect();
        let least = within.iter().map(|(_, c)| *c).min();
        let tied = within.iter().filter(|(_, c)| Some(*c) == least).map(|(d, _)| *d);
        domain_set(pick(tied, viable))
    }

    /// topologygroup.go `domainMinCount`: the least count among the domains the pod may use (0 on hostnames, and 0
    /// while fewer than minDomains of them exist).
    fn min_count(&self, pod: &Requirement) -> i64 {
        if self.id.key == HOSTNAME {
            return 0;
        }
        let supported: Vec<i32> = self.counts.iter().filter(|(d, _)| pod.has(d)).map(|(_, c)| *c).collect();
        if self.min_domains.is_some_and(|m| (supported.len() as i64) < i64::from(m)) {
            return 0;
        }
        supported.iter().min().map_or(i64::from(i32::MAX), |m| i64::from(*m))
    }

    /// topologygroup.go `nextDomainAffinity`: domains already holding a selected pod; a pod that selects itself may
    /// open the first domain when none holds one yet.
    fn next_affinity(&self, selects: bool, pod: &Requirement, node: &Requirement, viable: &dyn Fn(&str) -> bool) -> Requirement {
        let all_empty = self.counts.len() == self.empty.len();
        let any_compatible = self.counts.iter().any(|(d, c)| pod.has(d) && *c > 0);
        let may_open = selects && (all_empty || !any_compatible);
        if self.id.key == HOSTNAME && is_in(node) && node.values.len() == 1 {
            let host = node.values.iter().next().unwrap();
            let ok = pod.has(host) && (self.count(host) > 0 || may_open);
            return domain_set(ok.then(|| host.clone()));
        }
        let held: BTreeSet<String> = self.candidates(node).filter(|d| pod.has(d) && self.count(d) > 0).cloned().collect();
        if !held.is_empty() || !may_open {
            return Requirement::is_in(held);
        }
        // Two picks, as upstream: the first domain both allow, and the first the pod allows.
        let both = pod.intersection(node);
        let first = pick(self.counts.keys().filter(|d| both.has(d)), viable);
        let second = pick(self.counts.keys().filter(|d| pod.has(d)), viable);
        Requirement::is_in(first.into_iter().chain(second))
    }

    /// topologygroup.go `nextDomainAntiAffinity`: domains holding no selected pod.
    fn next_anti_affinity(&self, pod: &Requirement, node: &Requirement) -> Requirement {
        if self.id.key == HOSTNAME && is_in(node) && node.values.len() == 1 {
            let host = node.values.iter().next().unwrap();
            return domain_set((self.count(host) == 0).then(|| host.clone()));
        }
        Requirement::is_in(self.empty.iter().filter(|d| node.has(d) && pod.has(d)).cloned())
    }
}

fn is_in(r: &Requirement) -> bool {
    r.operator() == "In"
}

fn domain_set(d: Option<String>) -> Requirement {
    Requirement::is_in(d)
}

/// Karpenter takes the first of the tied domains in map order (random); we take the first the NodeClaim can launch
/// in, by name.
fn pick<'a>(tied: impl Iterator<Item = &'a String>, viable: &dyn Fn(&str) -> bool) -> Option<String> {
    let tied: Vec<&String> = tied.collect();
    tied.iter().find(|d| viable(d)).or(tied.first()).map(|d| (*d).clone())
}

fn exists() -> Requirement {
    Requirement { complement: true, values: BTreeSet::new(), gte: None, lte: None, min_values: None }
}

/// A pod's namespace (its key's when it has no topology) and labels.
fn identity(pod: &Pod) -> (&str, &BTreeMap<String, String>) {
    static NONE: std::sync::OnceLock<BTreeMap<String, String>> = std::sync::OnceLock::new();
    match &pod.topology {
        Some(t) => (&t.namespace, &t.labels),
        None => (pod.key.split_once('/').map_or("default", |(ns, _)| ns), NONE.get_or_init(BTreeMap::new)),
    }
}

/// An existing node (a static NodePool's replica, `static_nodes`): its taints, requirements (single values
/// for the labels it carries) and hostname.
pub struct Existing {
    pub taints: Vec<Taint>,
    pub requirements: Requirements,
    pub hostname: String,
}

impl Existing {
    /// The node's label value for `key`, if it has one.
    fn domain(&self, key: &str) -> Option<&String> {
        if key == HOSTNAME {
            return Some(&self.hostname);
        }
        self.requirements.get(key).filter(|r| !r.complement && r.values.len() == 1).and_then(|r| r.values.iter().next())
    }
}

/// topology.go `countDomains`: a new group knows the domain of every existing node its node filter matches (affinity
/// groups have none: all of them), with no pod counted there (none is bound offline).
fn register_existing(g: &mut Group, existing: &[Existing]) {
    for n in existing {
        if g.id.filter.as_ref().is_none_or(|f| f.matches(&n.taints, &n.requirements))
            && let Some(d) = n.domain(&g.id.key) {
                g.register(d);
            }
    }
}

/// topology.go `Topology`: the groups of this run and the inverse anti-affinity groups.
pub struct Topology {
    domains: Domains,
    /// The existing nodes (static replicas): taints, requirements, hostname.
    existing: Vec<Existing>,
    groups: Vec<Group>,
    /// Inverse anti-affinity groups (topology.go `inverseTopologyGroups`) with the pods that own them: they count
    /// where the owners landed, and keep the pods they select out of those domains.
    inverse: Vec<(Group, BTreeSet<usize>)>,
}

impl Topology {
    /// topology.go `NewTopology`: every pod's groups (in input order), and an inverse group per required
    /// anti-affinity term.
    pub fn new(domains: Domains, pods: &[Pod], existing: Vec<Existing>, initial: impl Fn(&Pod) -> Constraints) -> Topology {
        let mut t = Topology { domains, existing, groups: Vec::new(), inverse: Vec::new() };
        for (p, pod) in pods.iter().enumerate() {
            let Some(topo) = &pod.topology else { continue };
            for term in &topo.anti_affinity {
                t.add_inverse(p, term, &pod.tolerations);
            }
            t.owned(pod, &initial(pod));
        }
        t
    }

    fn add_inverse(&mut self, p: usize, term: &PodTerm, tolerations: &[Toleration]) {
        let id = GroupId { kind: Kind::AntiAffinity, key: term.key.clone(), namespaces: term.namespaces.clone(), max_skew: i32::MAX, filter: None, selector: sorted(&term.selector) };
        match self.inverse.iter_mut().find(|(g, _)| g.id == id) {
            Some((_, owners)) => {
                owners.insert(p);
            }
            None => self.inverse.push((Group::new(id, None, &self.domains, tolerations), BTreeSet::from([p]))),
        }
    }

    /// topology.go `Update`: the groups of the pod's current constraints, created when new (with the domains the
    /// pod may use, and no counts: pods planned earlier in the run are not counted into a group made later).
    pub fn owned(&mut self, pod: &Pod, c: &Constraints) -> Owned {
        let Some(topo) = &pod.topology else { return Owned(Vec::new()) };
        let mut ids: Vec<(GroupId, Option<i32>)> = Vec::new();
        for s in &c.spread {
            let filter = NodeFilter { requirements: c.node_filter.clone(), honor_affinity: s.honor_affinity, honor_taints: s.honor_taints, tolerations: c.tolerations.clone() };
            let id = GroupId { kind: Kind::Spread, key: s.key.clone(), namespaces: BTreeSet::from([topo.namespace.clone()]), max_skew: s.max_skew, filter: Some(filter), selector: sorted(&s.selector) };
            ids.push((id, s.min_domains));
        }
        for (kind, terms) in [(Kind::Affinity, &c.affinity), (Kind::AntiAffinity, &c.anti_affinity)] {
            for term in terms {
                ids.push((GroupId { kind, key: term.key.clone(), namespaces: term.namespaces.clone(), max_skew: i32::MAX, filter: None, selector: sorted(&term.selector) }, None));
            }
        }
        let mut owned = Vec::new();
        for (id, min_domains) in ids {
            let i = match self.groups.iter().position(|g| g.id == id) {
                Some(i) => i,
                None => {
                    let mut g = Group::new(id, min_domains, &self.domains, &c.tolerations);
                    register_existing(&mut g, &self.existing);
                    self.groups.push(g);
                    self.groups.len() - 1
                }
            };
            if !owned.contains(&i) {
                owned.push(i);
            }
        }
        Owned(owned)
    }

    /// topology.go `AddRequirements`: `node` narrowed to the domains each group the pod owns, and each inverse group
    /// that selects it, allows on the NodeClaim `host`. `strict` is the pod's required node requirements (preferred
    /// node affinity does not narrow a pod's domains); `viable` says whether the NodeClaim can still launch in a
    /// domain (for tie-breaks).
    #[allow(clippy::too_many_arguments)]
    pub fn narrow(&self, pod: &Pod, owned: &Owned, taints: &[Taint], strict: &Requirements, node: &Requirements, host: &str, viable: &dyn Fn(&str, &str) -> bool) -> Result<Requirements, String> {
        let (namespace, labels) = identity(pod);
        let inverse = self.inverse.iter().map(|(g, _)| g).filter(|g| g.counts_pod(namespace, labels, taints, node));
        let mut narrowed = node.clone();
        for g in owned.0.iter().map(|&i| &self.groups[i]).chain(inverse) {
            let key = g.id.key.as_str();
            let pod_domains = strict.get(key).cloned().unwrap_or_else(exists);
            let node_domains = if key == HOSTNAME { Requirement::is_in([host.to_string()]) } else { node.get(key).cloned().unwrap_or_else(exists) };
            let domains = g.next(g.selects(namespace, labels), &pod_domains, &node_domains, &|d| viable(key, d));
            if domains.operator() == "DoesNotExist" {
                return Err(format!("unsatisfiable topology constraint for {}, key={key}", g.id.kind.describe()));
            }
            // The NodeClaim's own hostname is not one of its requirements here (Karpenter removes it before launch,
            // nodeclaim.go `FinalizeScheduling`); it was checked above.
            if key != HOSTNAME {
                narrowed.add(key, domains);
            }
        }
        node.compatible(&narrowed).map_err(|e| format!("unsatisfiable topology constraint, {e}"))?;
        Ok(narrowed)
    }

    /// nodeclaim.go `Add`: `Register` the NodeClaim's hostname, then topology.go `Record` the pod in every group that
    /// counts it on a NodeClaim with these taints and requirements, and in the inverse groups it owns.
    pub fn record(&mut self, p: usize, pod: &Pod, taints: &[Taint], reqs: &Requirements, host: &str) {
        for g in self.groups.iter_mut().chain(self.inverse.iter_mut().map(|(g, _)| g)) {
            if g.id.key == HOSTNAME {
                g.register(host);
            }
        }
        let (namespace, labels) = identity(pod);
        let domains = |key: &str| -> Vec<String> {
            if key == HOSTNAME {
                return vec![host.to_string()];
            }
            // requirement.go `Values`: the stored set, also for a complement (NotIn's excluded values).
            reqs.get(key).map_or(Vec::new(), |r| r.values.iter().cloned().collect())
        };
        let single = |key: &str| reqs.get(key).is_some_and(|r| !r.complement && r.values.len() == 1) || key == HOSTNAME;
        for g in &mut self.groups {
            if !g.counts_pod(namespace, labels, taints, reqs) {
                continue;
            }
            // Anti-affinity blocks every domain the pod may land in; spread and affinity count only a known domain.
            if g.id.kind == Kind::AntiAffinity {
                domains(&g.id.key).iter().for_each(|d| g.record(d));
            } else if single(&g.id.key) {
                domains(&g.id.key).iter().for_each(|d| g.record(d));
            }
        }
        for (g, owners) in &mut self.inverse {
            if owners.contains(&p) {
                domains(&g.id.key).iter().for_each(|d| g.record(d));
            }
        }
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::pods::pods;
    use crate::simulate::yaml::parse_docs;

    /// Pods from a Deployment of `n` replicas labelled app: web with `extra` pod spec fields.
    fn web(n: u32, extra: &str) -> Vec<Pod> {
        let text = format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: {n}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n{extra}      containers:\n      - name: app\n        resources:\n          requests: {{cpu: \"1\"}}\n");
        pods(&parse_docs(std::path::Path::new("pods.yaml"), &text).unwrap()).unwrap()
    }

    fn spread(key: &str, max_skew: u32) -> String {
        format!("      topologySpreadConstraints:\n      - maxSkew: {max_skew}\n        topologyKey: {key}\n        whenUnsatisfiable: DoNotSchedule\n        labelSelector:\n          matchLabels: {{app: web}}\n")
    }

    fn term(kind: &str, key: &str) -> String {
        format!("      affinity:\n        {kind}:\n          requiredDuringSchedulingIgnoredDuringExecution:\n          - labelSelector:\n              matchLabels: {{app: web}}\n            topologyKey: {key}\n")
    }

    fn zones(names: &[&str]) -> Domains {
        let mut d = Domains::default();
        for z in names {
            d.insert("topology.kubernetes.io/zone", z, &[]);
        }
        d
    }

    fn constraints(pod: &Pod) -> Constraints<'_> {
        let t = pod.topology.as_deref().unwrap();
        Constraints { spread: t.spread.iter().collect(), affinity: t.affinity.iter().collect(), anti_affinity: t.anti_affinity.iter().collect(), node_filter: vec![pod.node_selector.clone()], tolerations: pod.tolerations.clone() }
    }

    /// The NodeClaim requirements `narrow` allows for pod `p` on the NodeClaim `host` with `node` requirements.
    fn narrow(t: &mut Topology, pods: &[Pod], p: usize, node: &Requirements, host: &str) -> Result<Requirements, String> {
        let owned = t.owned(&pods[p], &constraints(&pods[p]));
        t.narrow(&pods[p], &owned, &[], &pods[p].node_selector, node, host, &|_, _| true)
    }

    fn zone(r: &Requirements) -> Vec<String> {
        r.get("topology.kubernetes.io/zone").map(|r| r.values.iter().cloned().collect()).unwrap_or_default()
    }

    fn in_zone(z: &str) -> Requirements {
        let mut r = Requirements::default();
        r.add("topology.kubernetes.io/zone", Requirement::is_in([z.to_string()]));
        r
    }

    // topology_test.go "should balance pods across nodes": with maxSkew 1 on the hostname, a NodeClaim holding one
    // selected pod takes no second one, and a fresh NodeClaim does.
    #[test]
    fn hostname_spread_with_max_skew_1_refuses_a_second_pod_on_a_nodeclaim() {
        let pods = web(2, &spread(HOSTNAME, 1));
        let mut t = Topology::new(Domains::default(), &pods, Vec::new(), constraints);
        assert!(narrow(&mut t, &pods, 0, &Requirements::default(), "h1").is_ok());
        t.record(0, &pods[0], &[], &Requirements::default(), "h1");
        assert!(narrow(&mut t, &pods, 1, &Requirements::default(), "h1").is_err());
        assert!(narrow(&mut t, &pods, 1, &Requirements::default(), "h2").is_ok());
    }

    // topology_test.go "should balance pods on the same hostname up to maxskew".
    #[test]
    fn hostname_spread_with_max_skew_2_takes_a_second_pod_but_not_a_third() {
        let pods = web(3, &spread(HOSTNAME, 2));
        let mut t = Topology::new(Domains::default(), &pods, Vec::new(), constraints);
        for p in 0..2 {
            assert!(narrow(&mut t, &pods, p, &Requirements::default(), "h1").is_ok(), "pod {p}");
            t.record(p, &pods[p], &[], &Requirements::default(), "h1");
        }
        assert!(narrow(&mut t, &pods, 2, &Requirements::default(), "h1").is_err());
    }

    // topology_test.go "should balance pods across zones": each pod goes to the least-used zone (ties by name here,
    // random in Karpenter), and a NodeClaim already in a zone at maxSkew takes no more.
    #[test]
    fn zone_spread_narrows_to_the_least_used_zone() {
        let pods = web(3, &spread("topology.kubernetes.io/zone", 1));
        let mut t = Topology::new(zones(&["a", "b", "c"]), &pods, Vec::new(), constraints);
        let first = narrow(&mut t, &pods, 0, &Requirements::default(), "h1").unwrap();
        assert_eq!(zone(&first), ["a"]);
        t.record(0, &pods[0], &[], &first, "h1");
        assert!(narrow(&mut t, &pods, 1, &first, "h1").is_err(), "zone a would be 2 against 0");
        assert_eq!(zone(&narrow(&mut t, &pods, 1, &Requirements::default(), "h2").unwrap()), ["b"]);
    }

    // topology.go `countDomains`: an existing node's zone is a domain of the groups whose node filter matches it, with
    // no pod there; a zone spread then counts it as the minimum (seed case reproduced in tests/conformance/
    // karpenter.rs `a_static_replicas_zone_is_a_spread_domain_in_both`).
    #[test]
    fn an_existing_nodes_zone_is_a_spread_domain_with_no_pod() {
        let pods = web(2, &spread("topology.kubernetes.io/zone", 1));
        let existing = vec![Existing { taints: Vec::new(), requirements: in_zone("a"), hostname: "static-1".into() }];
        let mut t = Topology::new(zones(&["b"]), &pods, existing, constraints);
        let first = narrow(&mut t, &pods, 0, &in_zone("b"), "h1").unwrap();
        t.record(0, &pods[0], &[], &first, "h1");
        assert!(narrow(&mut t, &pods, 1, &in_zone("b"), "h2").is_err(), "zone b would be 2 against zone a's 0");
        let mut none = Topology::new(zones(&["b"]), &pods, Vec::new(), constraints);
        let first = narrow(&mut none, &pods, 0, &in_zone("b"), "h1").unwrap();
        none.record(0, &pods[0], &[], &first, "h1");
        assert!(narrow(&mut none, &pods, 1, &in_zone("b"), "h2").is_ok(), "without the node, b is the only domain");
    }

    // Karpenter breaks ties in map order; gpuplan prefers a tied zone the NodeClaim can launch in.
    #[test]
    fn zone_spread_prefers_a_tied_zone_the_nodeclaim_can_launch_in() {
        let pods = web(1, &spread("topology.kubernetes.io/zone", 1));
        let mut t = Topology::new(zones(&["a", "b"]), &pods, Vec::new(), constraints);
        let owned = t.owned(&pods[0], &constraints(&pods[0]));
        let r = t.narrow(&pods[0], &owned, &[], &Requirements::default(), &Requirements::default(), "h1", &|_, d| d == "b").unwrap();
        assert_eq!(zone(&r), ["b"]);
    }

    // topology_test.go "should respect NodePool zonal constraints": a NodeClaim limited to some zones gets one of them.
    #[test]
    fn zone_spread_stays_within_the_nodeclaims_zones() {
        let pods = web(1, &spread("topology.kubernetes.io/zone", 1));
        let mut t = Topology::new(zones(&["a", "b", "c"]), &pods, Vec::new(), constraints);
        let mut node = Requirements::default();
        node.add("topology.kubernetes.io/zone", Requirement::is_in(["b".to_string(), "c".to_string()]));
        assert_eq!(zone(&narrow(&mut t, &pods, 0, &node, "h1").unwrap()), ["b"]);
    }

    // topology_test.go "should ignore unknown topology keys": no domain, so the pod cannot schedule.
    #[test]
    fn spread_on_a_key_no_nodepool_defines_is_unsatisfiable() {
        let pods = web(1, &spread("unknown", 1));
        let mut t = Topology::new(zones(&["a"]), &pods, Vec::new(), constraints);
        assert!(narrow(&mut t, &pods, 0, &Requirements::default(), "h1").unwrap_err().contains("topology spread"));
    }

    // topology_test.go "should not violate pod anti-affinity on zone (Schrödinger)": a pod that may land in several
    // zones blocks all of them.
    #[test]
    fn zone_anti_affinity_blocks_every_zone_the_pod_may_land_in() {
        let pods = web(2, &term("podAntiAffinity", "topology.kubernetes.io/zone"));
        let mut t = Topology::new(zones(&["a", "b"]), &pods, Vec::new(), constraints);
        let first = narrow(&mut t, &pods, 0, &Requirements::default(), "h1").unwrap();
        assert_eq!(zone(&first), ["a", "b"]);
        t.record(0, &pods[0], &[], &first, "h1");
        assert!(narrow(&mut t, &pods, 1, &Requirements::default(), "h2").is_err());
    }

    // topology_test.go "should not violate pod anti-affinity on zone (inverse)": a pod without terms is kept out of the
    // zone of a pod whose anti-affinity selects it.
    #[test]
    fn inverse_anti_affinity_keeps_selected_pods_out_of_the_owners_zone() {
        let mut pods = web(1, &term("podAntiAffinity", "topology.kubernetes.io/zone"));
        pods.extend(web(1, ""));
        pods[1].key = "default/plain".into();
        let mut t = Topology::new(zones(&["a", "b"]), &pods, Vec::new(), constraints);
        t.record(0, &pods[0], &[], &in_zone("a"), "h1");
        let owned = t.owned(&pods[1], &Constraints { spread: vec![], affinity: vec![], anti_affinity: vec![], node_filter: vec![], tolerations: vec![] });
        let r = t.narrow(&pods[1], &owned, &[], &Requirements::default(), &Requirements::default(), "h2", &|_, _| true).unwrap();
        assert_eq!(zone(&r), ["b"]);
    }

    // topology_test.go "should respect self pod affinity for first empty topology domain only (hostname)": the first
    // pod opens a NodeClaim, the next may only join it.
    #[test]
    fn self_affinity_on_hostname_opens_only_the_first_nodeclaim() {
        let pods = web(2, &term("podAffinity", HOSTNAME));
        let mut t = Topology::new(Domains::default(), &pods, Vec::new(), constraints);
        assert!(narrow(&mut t, &pods, 0, &Requirements::default(), "h1").is_ok());
        t.record(0, &pods[0], &[], &Requirements::default(), "h1");
        assert!(narrow(&mut t, &pods, 1, &Requirements::default(), "h2").is_err());
        assert!(narrow(&mut t, &pods, 1, &Requirements::default(), "h1").is_ok());
    }

    // A spread whose selector does not match its own pod never counts it: every pod may take the least-used zone.
    #[test]
    fn spread_with_a_foreign_selector_does_not_count_its_own_pods() {
        let pods = web(2, &spread("topology.kubernetes.io/zone", 1).replace("{app: web}", "{app: other}"));
        let mut t = Topology::new(zones(&["a", "b"]), &pods, Vec::new(), constraints);
        let first = narrow(&mut t, &pods, 0, &Requirements::default(), "h1").unwrap();
        t.record(0, &pods[0], &[], &first, "h1");
        assert_eq!(zone(&narrow(&mut t, &pods, 1, &first, "h1").unwrap()), ["a"]);
    }

    // topology.go `buildDomainGroups` / topologydomaingroup.go: a domain offered only by a tainted NodePool is a
    // domain for a spread (taints ignored by default) but not for an affinity term of a pod that does not tolerate it.
    #[test]
    fn tainted_domains_count_for_spread_but_not_for_affinity_of_an_intolerant_pod() {
        let mut d = zones(&["a"]);
        d.insert("topology.kubernetes.io/zone", "b", &[Taint { key: "gpu".into(), value: String::new(), effect: "NoSchedule".into() }]);
        assert_eq!(d.for_pod("topology.kubernetes.io/zone", &[], false).count(), 2);
        assert_eq!(d.for_pod("topology.kubernetes.io/zone", &[], true).collect::<Vec<_>>(), ["a"]);
    }

    // A nil labelSelector selects nothing (metav1.LabelSelectorAsSelector(nil) is labels.Nothing()); an empty one
    // selects every pod of the namespace.
    #[test]
    fn a_missing_selector_selects_nothing_and_an_empty_one_everything() {
        let pods = web(1, "");
        let labels = &pods[0].topology.as_ref().unwrap().labels;
        assert!(Selector::default().matches(labels));
        let group = |selector| Group::new(GroupId { kind: Kind::Spread, key: "k".into(), namespaces: BTreeSet::from(["default".to_string()]), max_skew: 1, filter: None, selector }, None, &Domains::default(), &[]);
        assert!(!group(None).selects("default", labels));
        assert!(group(Some(Selector::default())).selects("default", labels));
        assert!(!group(Some(Selector::default())).selects("other", labels));
    }
}
