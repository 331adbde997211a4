//! `gpuplan simulate`: what Karpenter v1 would launch for a set of pods on a set of NodePools, and at what cost.
//!
//! One module per concern, each citing the upstream code it follows:
//! [`pods`] (pods input), [`manifests`] (NodePool / EC2NodeClass / NodeOverlay input), [`requirements`]
//! (requirements and taints), [`scheduler`] (packing and limits), [`topology`] (topology spread and pod
//! (anti-)affinity), [`instances`] (instance types, allocatable,
//! offerings, unavailability), [`launch`] (launch filters and capacity-type priority), [`report`] (table, json,
//! markdown); the `check` stage uses it in compile (workloads), lint (tier fallback) and explain (placement).
//! Before Karpenter, [`admission`] decides which pods labelled `kueue.x-k8s.io/queue-name` Kueue admits under the
//! ClusterQueues of the manifests ([`kueue`]): only those are scheduled, with their flavor's nodeSelector and
//! tolerations.
//!
//! Upstream sources read (kubernetes-sigs/karpenter at 2266468104f3, aws/karpenter-provider-aws at 1d927085dd81):
//! `pkg/controllers/provisioning/scheduling/{scheduler,nodeclaim,nodeclaimtemplate,queue,preferences}.go`,
//! `topology.go`, `topologygroup.go`, `topologydomaingroup.go`, `topologynodefilter.go` (v1.14.1),
//! `pkg/scheduling/{requirement,requirements,taints}.go`, `pkg/utils/nodepool/nodepool.go`, `pkg/apis/v1/labels.go`;
//! `pkg/providers/instancetype/types.go`, `pkg/providers/instance/instance.go`,
//! `pkg/providers/instance/filter/filter.go`.
//!
//! [`daemons`] is the DaemonSet overhead per NodePool and instance type; [`overlays`] the NodeOverlays Karpenter
//! accepts (conflicts).
//!
//! Not modelled (no cluster state offline): existing nodes and the pods on them (so topology counts only the pods of
//! this run), volumes and volume topology, namespaceSelector in pod (anti-)affinity terms (no Namespace objects), DRA,
//! the number of reserved instances a capacity reservation holds.

pub mod admission;
pub mod blast;
pub mod daemons;
pub mod instances;
pub mod kueue;
pub mod launch;
pub mod manifests;
pub mod overlays;
pub mod placement_diff;
pub mod pods;
pub mod report;
pub mod requirements;
pub mod scheduler;
pub mod static_nodes;
pub mod topology;
pub mod yaml;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::catalog::Catalog;

pub use instances::Unavailable;
pub use report::{Format, Report};
use scheduler::{Scheduler, Template};

pub use yaml::InputError;

/// What to simulate.
#[derive(Debug, Clone)]
pub struct Options {
    pub manifests: Vec<PathBuf>,
    pub pods: Vec<PathBuf>,
    pub region: Option<String>,
    pub catalogs_dir: PathBuf,
    pub unavailable: Vec<Unavailable>,
    /// DaemonSet files or directories, beside the DaemonSets in the manifests and pods files.
    pub daemonsets: Vec<PathBuf>,
    /// Whether the DaemonSets of the add-ons the manifests configure are counted ([`daemons::add_ons`]) when the
    /// inputs do not hold a DaemonSet of the same namespace and name.
    pub add_on_daemonsets: bool,
    /// The EKS node DaemonSets counted with the add-ons (`charts::node_daemons`); None: the default for the manifests
    /// ([`daemons::default_node_daemons`]: all four, none when every node class is EKS Auto Mode's).
    pub node_daemons: Option<Vec<String>>,
}

#[derive(Debug, thiserror::Error)]
pub enum SimulateError {
    #[error("{0}")]
    Input(InputError),
    #[error("{0}")]
    Catalog(#[from] crate::catalog::CatalogError),
}

/// What a run reads: the manifests (DaemonSets included), the pods, and the catalog region.
pub struct Inputs {
    pub manifests: manifests::Manifests,
    pub pods: Vec<pods::Pod>,
    pub region: String,
    /// The add-ons' DaemonSets counted because the inputs configure the add-on but hold no DaemonSet of that
    /// namespace and name, as apps/v1 objects: what another simulator must be given to see the same cluster.
    pub add_on_daemon_sets: Vec<serde_json::Value>,
}

/// Reads the inputs of a run.
pub fn read_inputs(opts: &Options) -> Result<Inputs, InputError> {
    let manifest_docs = yaml::read_docs(&opts.manifests)?;
    let mut manifests = manifests::manifests(&manifest_docs)?;
    let pod_docs = yaml::read_docs(&opts.pods)?;
    let pods = pods::pods(&pod_docs)?;
    manifests.daemon_sets.extend(pods::daemon_sets(&pod_docs)?);
    manifests.daemon_sets.extend(pods::daemon_sets(&yaml::read_docs(&opts.daemonsets)?)?);
    // A DaemonSet given twice (a file named by two options, overlapping directories) is one DaemonSet to Karpenter,
    // which lists them from the API: the first of a namespace/name counts.
    let mut seen = std::collections::BTreeSet::new();
    manifests.daemon_sets.retain(|d| seen.insert(d.key.clone()));
    let mut add_on_daemon_sets = Vec::new();
    if opts.add_on_daemonsets {
        let objects: Vec<&serde_json::Value> = manifest_docs.iter().map(|d| &*d.value).collect();
        let node_daemons = opts.node_daemons.clone().unwrap_or_else(|| daemons::default_node_daemons(&objects));
        add_on_daemon_sets = daemons::add_ons(&objects, &manifests.daemon_sets, &node_daemons);
        manifests.daemon_sets.extend(daemons::daemon_pods(&add_on_daemon_sets));
    }
    let region = opts
        .region
        .clone()
        .or_else(|| manifests.node_pools.iter().find_map(|p| p.catalog_region.clone()))
        .unwrap_or_else(|| "us-east-1".to_string());
    Ok(Inputs { manifests, pods, region, add_on_daemon_sets })
}

/// Reads the inputs and simulates.
pub fn simulate(opts: &Options) -> Result<Report, SimulateError> {
    let inputs = read_inputs(opts).map_err(SimulateError::Input)?;
    let catalog = Catalog::load(&opts.catalogs_dir, &inputs.region)?;
    Ok(run(&catalog, &inputs.manifests, &inputs.pods, &opts.unavailable))
}

/// Simulates parsed inputs against a catalog: Kueue admission when the manifests hold Kueue objects or a pod is
/// queued, then Karpenter for the pods that run.
pub fn run(catalog: &Catalog, m: &manifests::Manifests, pods: &[pods::Pod], unavailable: &[Unavailable]) -> Report {
    let prepared = prepare(catalog, &instances::TypeLabels::new(catalog), m, &m.node_pools);
    if m.kueue.is_empty() && pods.iter().all(|p| p.queued.is_none()) {
        return run_prepared(&prepared, pods, unavailable);
    }
    run_admitted(&prepared, &m.kueue, pods, unavailable)
}

/// Kueue admission under `kueue`, then Karpenter on prepared NodePools for the pods that run; the pods Kueue leaves
/// pending are pending in the report with its reason.
pub fn run_admitted(prepared: &Prepared, kueue: &kueue::Kueue, pods: &[pods::Pod], unavailable: &[Unavailable]) -> Report {
    let admitted = admission::admit(kueue, pods);
    let mut report = run_prepared(prepared, &admitted.pods, unavailable);
    report.pending.extend(admitted.pending.into_iter().map(|(pod, reason)| report::PendingPod { pod, reason }));
    report.pending.sort_by(|a, b| a.pod.cmp(&b.pod));
    report.admission = Some(admitted.report);
    report
}

/// NodePools resolved against a catalog once (types, labels, allocatable, overlays), in weight order; runs with other
/// pods or other unavailable offerings reuse it.
pub struct Prepared<'c> {
    catalog: &'c Catalog,
    templates: Vec<Template>,
    /// Per template: `None` when Karpenter does not schedule with its NodePool at all (static, NodeClass missing),
    /// else whether its NodeClass selects capacity reservations. Such NodePools' requirements, with their types'
    /// labels, are the topology domains (provisioner.go `NewScheduler`, topology.go `buildDomainGroups`).
    domain_pools: Vec<Option<bool>>,
}

impl<'c> Prepared<'c> {
    /// The NodePools' templates in weight order, every offering as the catalog has it.
    pub fn templates(&self) -> &[Template] {
        &self.templates
    }

    /// The catalog the templates were resolved against.
    pub fn catalog(&self) -> &'c Catalog {
        self.catalog
    }

    /// The templates with `unavailable` offerings marked (types left without an available compatible offering drop
    /// out): what one run schedules with.
    pub fn templates_with(&self, unavailable: &[Unavailable]) -> Vec<Template> {
        let touched = instances::UnavailableTypes::new(unavailable);
        self.templates.iter().map(|t| with_availability(t, &touched)).collect()
    }

    /// The topology domains of the keys `pods` constrain (a run with existing nodes schedules with them).
    pub fn topology_domains(&self, pods: &[pods::Pod]) -> topology::Domains {
        topology_domains(self, pods)
    }
}

/// Resolves `pools` (of `m`, whose NodeClasses and NodeOverlays they use) against the catalog; `labels` are the
/// catalog's, shared with other calls.
pub fn prepare<'c, 'm>(catalog: &'c Catalog, labels: &instances::TypeLabels, m: &manifests::Manifests, pools: impl IntoIterator<Item = &'m manifests::NodePool>) -> Prepared<'c> {
    // Karpenter settles NodeOverlay conflicts over every NodePool of the cluster before it schedules with any.
    let overlays = overlays::accepted(catalog, labels, m);
    let mut templates: Vec<Template> = pools.into_iter().map(|p| template(catalog, labels, m, &overlays, p)).collect();
    scheduler::order_by_weight(&mut templates);
    let class = |t: &Template| m.node_classes.iter().find(|c| c.serves(&t.pool) && t.pool.static_replicas.is_none());
    let domain_pools = templates.iter().map(|t| class(t).map(|c| c.capacity_reservations)).collect();
    Prepared { catalog, templates, domain_pools }
}

pub fn run_prepared(p: &Prepared, pods: &[pods::Pod], unavailable: &[Unavailable]) -> Report {
    let (templates, outcome) = solve(p, pods, unavailable);
    report::build(p.catalog, &templates, pods, &outcome)
}

/// What lint GP016 reads of a run: the NodePool of the report's first NodeClaim and the reason of its first pending
/// pod.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstPlacement {
    pub nodepool: Option<String>,
    pub pending: Option<String>,
}

/// [`run_prepared`]'s first NodeClaim's NodePool and first pending pod, without building the report (launching every
/// NodeClaim and formatting every NodePool's usage was a sixth of GP016's work). The report orders NodeClaims by
/// NodePool (weight order), then first pod key, and drops none: scheduling keeps only types that fit the claim's
/// requests with an available compatible offering, so `launch` always finds one. Pending pods are in key order.
pub fn first_placement(p: &Prepared, pods: &[pods::Pod], unavailable: &[Unavailable]) -> FirstPlacement {
    let (templates, outcome) = solve(p, pods, unavailable);
    // A static replica with no pod is not a placement (it exists whatever the pods).
    let first_claim = outcome.claims.iter().filter(|c| !c.pods.is_empty()).map(|c| c.template).min();
    let first_pending = outcome.pending.iter().min_by(|a, b| pods[a.0].key.cmp(&pods[b.0].key));
    FirstPlacement { nodepool: first_claim.map(|t| templates[t].pool.name.clone()), pending: first_pending.map(|(_, reason)| reason.clone()) }
}

/// One run: the prepared templates with the run's unavailable offerings marked, and where the scheduler put the pods.
fn solve(p: &Prepared, pods: &[pods::Pod], unavailable: &[Unavailable]) -> (Vec<Template>, scheduler::Outcome) {
    let templates = p.templates_with(unavailable);
    let outcome = Scheduler::new(&templates, pods).with_static_nodes(static_nodes::claims(&templates)).with_topology(|| topology_domains(p, pods)).solve();
    (templates, outcome)
}

/// The topology domains of the keys the pods constrain.
fn topology_domains(p: &Prepared, pods: &[pods::Pod]) -> topology::Domains {
    let keys: std::collections::BTreeSet<String> = pods
        .iter()
        .filter_map(|pod| pod.topology.as_deref())
        .flat_map(|t| t.spread.iter().map(|s| s.key.clone()).chain([&t.affinity, &t.anti_affinity, &t.preferred_affinity, &t.preferred_anti_affinity].into_iter().flatten().map(|a| a.key.clone())))
        .collect();
    let pools = p.templates.iter().zip(&p.domain_pools).filter_map(|(t, d)| d.map(|reserved| (&*t.pool, reserved)));
    topology::Domains::build(p.catalog, pools, &keys)
}

/// A NodePool's NodeClaimTemplate before availability: the catalog types compatible with its requirements that have a
/// compatible offering (scheduler.go `NewScheduler` pre-filter), or why there are none.
fn template(catalog: &Catalog, labels: &instances::TypeLabels, m: &manifests::Manifests, overlays: &[manifests::NodeOverlay], pool: &manifests::NodePool) -> Template {
    let pool = Arc::new(pool.clone());
    let Some(class) = m.node_classes.iter().find(|c| c.serves(&pool)) else {
        let kind = manifests::NodeClass::kind(pool.auto_mode);
        let why = format!("{kind} {:?} is not in the manifests (Karpenter ignores a NodePool whose NodeClass is not ready)", pool.node_class);
        return Template { pool, types: Vec::new(), dropped: Some(why), provisioned: false };
    };
    // Labels are looked up only for types that pass the cheap name/family/category check: most types fail a
    // NodePool's requirements there (gpuplan's pools name their types).
    let types: Vec<Arc<instances::SimType>> = candidate_indices(catalog, &pool.requirements)
        .filter(|&i| instances::may_match(&catalog.instance_types[i], &pool.requirements))
        // EKS Auto Mode launches only the types it supports, whatever the requirements admit.
        .filter(|&i| !class.auto_mode || crate::catalog::auto_mode::supports(&catalog.instance_types[i]))
        .map(|i| (&catalog.instance_types[i], labels.get(catalog, i)))
        .filter(|(_, reqs)| reqs.intersects(&pool.requirements).is_ok())
        .map(|(it, reqs)| instances::sim_type(catalog, it, reqs, &pool, class, overlays))
        .filter(|t| t.offerings.iter().any(|o| requirements::offering_compatible(&pool.requirements, &o.zone, o.capacity_type.as_str())))
        .map(|t| Arc::new(with_daemons(t, &pool, &m.daemon_sets)))
        .collect();
    let dropped = types.is_empty().then(|| "no instance type in the catalog meets its requirements with an offering".to_string());
    // A static NodePool keeps its types (its replicas launch on one of them) but takes no pod through provisioning.
    let dropped = dropped.or(pool.static_replicas.map(static_nodes::reason));
    let provisioned = pool.static_replicas.is_none();
    Template { pool, types, dropped, provisioned }
}

/// The type with the overhead of the DaemonSets that run on it in `pool`.
fn with_daemons(mut t: instances::SimType, pool: &manifests::NodePool, daemon_sets: &[pods::Pod]) -> instances::SimType {
    if !daemon_sets.is_empty() {
        t.daemons = Arc::new(daemons::DaemonOverhead::of(pool, &t.requirements, daemon_sets));
    }
    t
}

/// The catalog positions of the types a NodePool's requirements may admit, in catalog order: only the named ones when
/// it lists its instance types with `In` (as gpuplan's NodePools do), else all of them.
fn candidate_indices<'a>(catalog: &'a Catalog, reqs: &'a requirements::Requirements) -> Box<dyn Iterator<Item = usize> + 'a> {
    match reqs.get("node.kubernetes.io/instance-type") {
        Some(named) if !named.complement => Box::new(named.values.iter().filter_map(|name| catalog.index_of(name))),
        _ => Box::new(0..catalog.instance_types.len()),
    }
}

/// The template with the run's unavailable offerings marked: types left without an available compatible offering
/// drop out, and minValues (Strict) is checked on what remains.
fn with_availability(t: &Template, touched: &instances::UnavailableTypes) -> Template {
    if t.dropped.is_some() && (t.pool.static_replicas.is_none() || t.types.is_empty()) {
        return t.clone();
    }
    let pool = &t.pool;
    let before = t.types.len();
    let usable = |o: &instances::Offering, available: bool| available && requirements::offering_compatible(&pool.requirements, &o.zone, o.capacity_type.as_str());
    let types: Vec<Arc<instances::SimType>> = t
        .types
        .iter()
        .filter_map(|ty| {
            if !touched.names(&ty.name) {
                return ty.offerings.iter().any(|o| usable(o, o.available)).then(|| Arc::clone(ty));
            }
            // Only a type that keeps a usable offering is copied (and its offerings marked): the fallback check makes
            // whole tiers unavailable, and copying every type it then drops dominated lint's time.
            let available: Vec<bool> = ty.offerings.iter().map(|o| o.available && !touched.matches(&ty.name, &o.zone, o.capacity_type)).collect();
            if !ty.offerings.iter().zip(&available).any(|(o, a)| usable(o, *a)) {
                return None;
            }
            let mut copy = (**ty).clone();
            copy.offerings.iter_mut().zip(available).for_each(|(o, a)| o.available = a);
            Some(Arc::new(copy))
        })
        .collect();
    let dropped = if let Some(n) = pool.static_replicas.filter(|_| !types.is_empty()) {
        Some(static_nodes::reason(n))
    } else if types.is_empty() {
        Some(format!("all offerings of its {before} instance type(s) are unavailable (--unavailable)"))
    } else {
        scheduler::min_values(&pool.requirements, types.iter().map(|t| &**t)).err().map(|e| format!("{e} (minValuesPolicy Strict)"))
    };
    Template { pool: Arc::clone(pool), types, dropped, provisioned: t.provisioned }
}

/// Pod keys by NodePool, for callers that check placement (compile, lint).
pub fn placement(report: &Report) -> BTreeMap<String, String> {
    report.nodeclaims.iter().flat_map(|c| c.pods.iter().map(move |p| (p.clone(), c.nodepool.clone()))).collect()
}
