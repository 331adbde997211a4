//! `adopt`'s proof that the adopted profiles behave like the manifests they came from: the same pods simulated
//! (gpuplan's `simulate`, proven against Karpenter's scheduler) on the original NodePools, EC2NodeClasses and
//! NodeOverlays, and on what compiling the adopted profiles writes; per pod, where it lands before and after, and
//! for every difference the known change that explains it (a type gpuplan removed and the constraint that removed
//! it, a weight, a label or taint, a pool that did not compile).
//!
//! The pods are the user's (`--verify PODS…`) or probes: one per original NodePool, requesting one of its
//! accelerators (or a CPU when it has none), tolerating its taints and selecting its template labels, as a user's
//! pod for that pool would. Each probe is simulated alone (two probes must not share a node and change each other's
//! placement); the user's pods together, as they would run.
//!
//! Pool identity: an adopted pool keeps its original NodePool's name (adopt writes `pool "<NodePool>"`, or a tier
//! `<pool>-<tier>` of gpuplan's own output), so the compiled NodePool of the same name is the original's.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{json, Value};

use super::read::Doc;
use super::pool_report::PoolReport;
use super::Adoption;
use crate::compile::Compilation;
use crate::simulate::manifests::Manifests;
use crate::simulate::placement_diff::Landing;
use crate::simulate::pods::Pod;
use crate::simulate::{self, yaml, InputError};

/// The exit code of `adopt` when a pod's placement changes and `--accept-changes` is not given (1, as `compile
/// --check` exits when out/ is stale: "look at this"; 2 stays bad input).
pub const EXIT_PLACEMENT_CHANGED: u8 = 1;

/// The namespace of the probe pods (`gpuplan-verify/probe-<NodePool>`).
pub const PROBE_NAMESPACE: &str = "gpuplan-verify";



#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// Same NodePool, instance type and capacity type (or pending before and after).
    Same,
    /// Same NodePool, another instance type or capacity type.
    OtherType,
    OtherPool,
    /// Scheduled before, pending after.
    Pends,
    /// Pending before, scheduled after.
    Schedules,
}

#[derive(Debug, Clone, Serialize)]
pub struct PodPlacement {
    pub cluster: String,
    pub pod: String,
    /// None: pending (see `pending_before`).
    pub before: Option<Landing>,
    pub after: Option<Landing>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_after: Option<String>,
    pub change: Change,
    /// Why it changed, from the adoption's known changes; empty when it did not.
    pub reasons: Vec<String>,
}

/// The given pods' run as a whole, per cluster: how many nodes and what they cost on each side. Every pod may land on
/// the same pool and type while the count differs (time-slicing the originals declare and the adopted output does not).
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub cluster: String,
    pub nodes_before: usize,
    pub nodes_after: usize,
    pub usd_per_hour_before: f64,
    pub usd_per_hour_after: f64,
    /// Pods of the run whose placement changed (each counted as a change of its own).
    pub pods_moved: usize,
    /// Why the count or cost differs; empty when neither does.
    pub reasons: Vec<String>,
}

impl RunSummary {
    pub fn changed(&self) -> bool {
        self.nodes_before != self.nodes_after || (self.usd_per_hour_before - self.usd_per_hour_after).abs() > 0.005
    }

    /// A change of its own: the run differs while every pod lands as before (else the pods' changes say it).
    pub fn counts(&self) -> bool {
        self.changed() && self.pods_moved == 0
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Verification {
    /// "probe pods, one per original NodePool", or the pod files given.
    pub pods: String,
    pub placements: Vec<PodPlacement>,
    /// The given pods' runs (none for probes, each simulated alone).
    pub runs: Vec<RunSummary>,
    /// Placements that changed (every kind but `same`), and runs whose node count or cost changed while every pod
    /// landed as before.
    pub changed: usize,
    /// Changed placements no known change explains (a gpuplan bug to report).
    pub unexplained: usize,
    /// `--accept-changes` was given: changes are reported, and adopt exits 0.
    pub accepted: bool,
    /// EC2NodeClasses the original NodePools name and the inputs lack: the originals were simulated with a stand-in
    /// ([`STAND_IN_CLASS`]), so their pods are placed, not pending on both sides.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stand_in_classes: Vec<String>,
    /// Behaviour fields of the original NodePools and node classes that differ after compiling, at Karpenter's
    /// defaults ([`super::fields`]), each with what names it.
    pub fields: Vec<super::fields::FieldChange>,
    pub fields_changed: usize,
    /// Field changes nothing of the adoption names (counted in `unexplained` too).
    pub fields_unexplained: usize,
}

impl Verification {
    pub fn changes(&self) -> impl Iterator<Item = &PodPlacement> {
        self.placements.iter().filter(|p| p.change != Change::Same)
    }
}

/// What one side of a cluster's simulation gives a pod: where it landed, or why it pends.
type Outcome = (Option<Landing>, Option<String>);

/// The originals as `simulate` reads them (NodePools, EC2NodeClasses, NodeOverlays, DaemonSets, and the DaemonSets
/// of the add-ons they configure) and the pods to verify with.
pub struct Originals {
    manifests: Manifests,
    /// Node classes the originals' NodePools name and the inputs lack, simulated as [`STAND_IN_CLASS`].
    stand_ins: Vec<String>,
    pods: Vec<Pod>,
    /// The pod files (none: probes).
    files: Vec<PathBuf>,
}

/// Reads the pod files (before adopt writes anything, so that a bad one stops it with nothing written) and the
/// originals from adopt's texts (placeholders filled), as `simulate::read_inputs` reads manifests and pods.
pub fn read(texts: &[(PathBuf, String)], class_texts: &[(PathBuf, String)], pods: &[PathBuf]) -> Result<Originals, InputError> {
    let mut docs = Vec::new();
    for (path, text) in texts {
        docs.extend(yaml::parse_docs(path, text)?);
    }
    // `--classes`: their node classes only, and not where the inputs have one of the same name.
    for (path, text) in class_texts {
        let key = |d: &yaml::Doc| (d.kind().to_string(), d.value["metadata"]["name"].as_str().unwrap_or_default().to_string());
        let have: BTreeSet<(String, String)> = docs.iter().filter(|d| matches!(d.kind(), "EC2NodeClass" | "NodeClass")).map(key).collect();
        docs.extend(yaml::parse_docs(path, text)?.into_iter().filter(|d| matches!(d.kind(), "EC2NodeClass" | "NodeClass") && !have.contains(&key(d))));
    }
    // Verification runs Karpenter's side only (`run_prepared`, no Kueue admission), and the Kueue objects of several
    // clusters' out/ share names (one ClusterQueue per cluster), which one simulation input refuses: left out.
    let karpenter_side: Vec<_> = docs.iter().filter(|d| !d.api_version().starts_with("kueue.x-k8s.io/")).cloned().collect();
    let mut manifests = simulate::manifests::manifests(&karpenter_side)?;
    let stand_ins = add_stand_in_classes(&mut manifests)?;
    let pod_docs = yaml::read_docs(pods)?;
    let parsed = simulate::pods::pods(&pod_docs)?;
    manifests.daemon_sets.extend(simulate::pods::daemon_sets(&docs)?);
    manifests.daemon_sets.extend(simulate::pods::daemon_sets(&pod_docs)?);
    let mut seen = BTreeSet::new();
    manifests.daemon_sets.retain(|d| seen.insert(d.key.clone()));
    let objects: Vec<&Value> = docs.iter().map(|d| &*d.value).collect();
    let add_ons = simulate::daemons::add_ons(&objects, &manifests.daemon_sets, &simulate::daemons::default_node_daemons(&objects));
    manifests.daemon_sets.extend(simulate::daemons::daemon_pods(&add_ons));
    Ok(Originals { manifests, stand_ins, pods: parsed, files: pods.to_vec() })
}

/// The class a NodePool without its node class among the inputs is simulated with: what `adopt` compiles for it
/// (AL2023 and Karpenter's defaults; an EKS Auto Mode NodeClass with Auto Mode's for an Auto Mode pool), so that its
/// pods are placed on both sides instead of pending on both (which would prove nothing).
pub const STAND_IN_CLASS: &str = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: NAME}\nspec:\n  amiSelectorTerms: [{alias: al2023@latest}]\n  role: stand-in\n  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: stand-in}}]\n  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: stand-in}}]\n";

/// [`STAND_IN_CLASS`] of an EKS Auto Mode pool.
const STAND_IN_AUTO_MODE_CLASS: &str = "apiVersion: eks.amazonaws.com/v1\nkind: NodeClass\nmetadata: {name: NAME}\nspec:\n  role: stand-in\n";

/// Adds a stand-in for each node class the NodePools name and the manifests lack (by name and kind: an Auto Mode pool's
/// NodeClass is not an EC2NodeClass of the same name); their names.
fn add_stand_in_classes(manifests: &mut Manifests) -> Result<Vec<String>, InputError> {
    let missing: BTreeSet<(String, bool)> = manifests
        .node_pools
        .iter()
        .filter(|p| !p.node_class.is_empty() && !manifests.node_classes.iter().any(|k| k.serves(p)))
        .map(|p| (p.node_class.clone(), p.auto_mode))
        .collect();
    for (name, auto_mode) in &missing {
        let text = if *auto_mode { STAND_IN_AUTO_MODE_CLASS } else { STAND_IN_CLASS }.replace("NAME", name);
        let docs = yaml::parse_docs(std::path::Path::new("stand-in class"), &text)?;
        manifests.node_classes.extend(simulate::manifests::manifests(&docs)?.node_classes.into_iter().filter(|c| c.auto_mode == *auto_mode));
    }
    Ok(missing.into_iter().map(|(name, _)| name).collect())
}

/// Simulates the pods (or probes) on the originals and on `compiled`, cluster by cluster.
pub fn verify(adoption: &Adoption, compiled: &Compilation, pool_reports: &[PoolReport], originals: &Originals) -> Result<Verification, InputError> {
    let pods = &originals.files;
    let mut placements = Vec::new();
    let mut summaries = Vec::new();
    for cluster in &compiled.plan.clusters {
        let Some((catalog, labels)) = compiled.simulation_catalog(&cluster.region) else { continue };
        let names: BTreeSet<&str> = adoption.profiles.iter().filter(|p| p.cluster.name == cluster.name).flat_map(|p| p.pools.iter().map(|x| x.name.as_str())).collect();
        let originals_here: Vec<&Doc> = adoption.node_pools.iter().filter(|np| names.contains(np.name.as_str()) || tier_of(np).is_some_and(|t| names.contains(t))).collect();
        if originals_here.is_empty() {
            continue;
        }
        let keep: BTreeSet<&str> = originals_here.iter().map(|np| np.name.as_str()).collect();
        let mut before_m = originals.manifests.clone();
        before_m.node_pools.retain(|p| keep.contains(p.name.as_str()));
        let rendered = compiled.manifests_of(&cluster.name);
        let after_m = crate::check::cluster_manifests(&rendered, &cluster.node_daemons);
        let before_p = simulate::prepare(catalog, labels, &before_m, &before_m.node_pools);
        let after_p = simulate::prepare(catalog, labels, &after_m, &after_m.node_pools);
        let runs: Vec<Vec<Pod>> = if pods.is_empty() { originals_here.iter().map(|np| probes(np, catalog)).collect::<Result<Vec<_>, _>>()?.concat() } else { vec![originals.pods.clone()] };
        let dropped = |p: &simulate::Prepared| simulate::run_prepared(p, &[], &[]).nodepools.into_iter().filter_map(|n| Some((n.name, n.dropped?))).collect();
        let ctx = Context { adoption, compiled, cluster: &cluster.name, pool_reports, rendered: &rendered, dropped_before: dropped(&before_p), dropped_after: dropped(&after_p) };
        for run in runs {
            let (before_r, after_r) = (simulate::run_prepared(&before_p, &run, &[]), simulate::run_prepared(&after_p, &run, &[]));
            let (b, a) = (outcomes(&before_r), outcomes(&after_r));
            let first = placements.len();
            for pod in &run {
                let before = b.get(&pod.key).cloned().unwrap_or_default();
                let after = a.get(&pod.key).cloned().unwrap_or_default();
                placements.push(ctx.placement(&pod.key, before, after));
            }
            if !pods.is_empty() {
                let moved = placements[first..].iter().filter(|p| p.change != Change::Same).count();
                summaries.push(ctx.summary(&before_r, &after_r, &before_m, &after_m, moved));
            }
        }
    }
    let changed = placements.iter().filter(|p| p.change != Change::Same).count() + summaries.iter().filter(|r| r.counts()).count();
    let unexplained = placements.iter().filter(|p| p.change != Change::Same && p.reasons.iter().all(|r| r.starts_with(UNEXPLAINED))).count()
        + summaries.iter().filter(|r| r.counts() && r.reasons.iter().all(|r| r.starts_with(UNEXPLAINED))).count();
    let described = if pods.is_empty() { "probe pods: per original NodePool, one requesting its accelerator (a CPU for a CPU pool), one per instance family it admits, one per accelerator kind of a mixed pool".to_string() } else { pods.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ") };
    let fields = super::fields::compare(adoption, compiled, pool_reports);
    let fields_unexplained = fields.iter().filter(|f| !f.explained()).count();
    let (fields_changed, unexplained) = (fields.len(), unexplained + fields_unexplained);
    Ok(Verification { pods: described, placements, runs: summaries, changed, unexplained, accepted: false, stand_in_classes: originals.stand_ins.clone(), fields, fields_changed, fields_unexplained })
}

const UNEXPLAINED: &str = "no change adopt knows of explains it";

/// gpuplan's `gpuplan.dev/pool` label: the pool a tier NodePool belongs to.
fn tier_of(np: &Doc) -> Option<&str> {
    np.object["spec"]["template"]["metadata"]["labels"][crate::solve::POOL_LABEL].as_str()
}

/// Each pod's landing or pending reason in a simulation report.
fn outcomes(r: &simulate::Report) -> BTreeMap<String, Outcome> {
    let mut out: BTreeMap<String, Outcome> = BTreeMap::new();
    for n in &r.nodeclaims {
        for p in &n.pods {
            let landing = Landing { nodepool: n.nodepool.clone(), instance_type: n.instance_type.clone(), capacity_type: n.capacity_type.clone(), usd_per_hour: n.usd_per_hour };
            out.insert(p.clone(), (Some(landing), None));
        }
    }
    for p in &r.pending {
        out.insert(p.pod.clone(), (None, Some(p.reason.clone())));
    }
    out
}

/// The most families one NodePool's probes pin (one probe each): a general-purpose pool admits dozens.
const MAX_FAMILY_PROBES: usize = 64;

/// The probe pods of an original NodePool, parsed as `simulate` parses a user's pod: one requesting one of its
/// accelerators (or a CPU for a CPU pool), tolerating its taints as written (by value where they have one) and
/// selecting its template labels; then the same pinned to each instance family it admits
/// (`karpenter.k8s.aws/instance-family`), so a family the adopted pool lost, or a `minValues` a one-family pod cannot
/// meet, shows; and for a pool that admits CPU and accelerated types (a mixed pool), a probe per accelerator kind.
pub fn probes(np: &Doc, catalog: &crate::catalog::Catalog) -> Result<Vec<Vec<Pod>>, InputError> {
    use crate::catalog::AcceleratorKind;
    let kind = super::nodepool::kind(&np.object, catalog);
    let mut runs = vec![probe_pod(np, kind.resource(), None, String::new())?];
    let admitted = super::nodepool::admitted_as(&np.object, catalog, kind);
    if kind == AcceleratorKind::Cpu {
        for other in [AcceleratorKind::Nvidia, AcceleratorKind::Neuron, AcceleratorKind::Amd] {
            if admitted.iter().any(|t| t.accelerators(other) > 0) {
                runs.push(probe_pod(np, other.resource(), None, format!("-{}", other.resource().split('/').next().unwrap_or_default().replace('.', "-")))?);
            }
        }
    }
    let families: BTreeSet<&str> = admitted.iter().filter(|t| kind == AcceleratorKind::Cpu || t.accelerators(kind) > 0).map(|t| t.family.as_str()).collect();
    if families.len() > 1 {
        for family in families.into_iter().take(MAX_FAMILY_PROBES) {
            runs.push(probe_pod(np, kind.resource(), Some(family), format!("-{family}"))?);
        }
    }
    Ok(runs)
}

/// One probe: `probe-<NodePool><suffix>`, requesting one `resource`, pinned to `family` if given.
fn probe_pod(np: &Doc, resource: &str, family: Option<&str>, suffix: String) -> Result<Vec<Pod>, InputError> {
    let spec = &np.object["spec"]["template"]["spec"];
    let requests = json!({ resource: "1" });
    let tolerations: Vec<Value> = spec["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| match t["value"].as_str().filter(|v| !v.is_empty()) {
            Some(v) => json!({ "key": t["key"], "operator": "Equal", "value": v, "effect": t["effect"] }),
            None => json!({ "key": t["key"], "operator": "Exists", "effect": t["effect"] }),
        })
        .collect();
    let mut selector = np.object["spec"]["template"]["metadata"]["labels"].clone();
    if !selector.is_object() {
        selector = json!({});
    }
    if let Some(family) = family {
        selector["karpenter.k8s.aws/instance-family"] = json!(family);
    }
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": { "name": format!("probe-{}{suffix}", np.name), "namespace": PROBE_NAMESPACE },
        "spec": {
            "nodeSelector": selector,
            "tolerations": tolerations,
            "containers": [{ "name": "probe", "image": "probe", "resources": { "requests": requests.clone(), "limits": requests } }],
        },
    });
    let doc = yaml::Doc { path: PathBuf::from(format!("probe for {}", np.at())), line: 1, text: String::new(), value: Cow::Owned(pod) };
    simulate::pods::pods(&[doc])
}

/// What the reasons are read from: the adoption, its compilation and the two sides' manifests.
struct Context<'a> {
    adoption: &'a Adoption,
    compiled: &'a Compilation,
    cluster: &'a str,
    pool_reports: &'a [PoolReport],
    rendered: &'a [crate::render::Manifest],
    /// NodePool → why the simulator plans nothing with it (no NodeClass, no type), on each side.
    dropped_before: BTreeMap<String, String>,
    dropped_after: BTreeMap<String, String>,
}

impl Context<'_> {
    /// Nodes and $/h of one run on both sides, with what explains a difference: pods that moved, the originals'
    /// NodeOverlays the adopted output lacks (capacity such as time-slicing replicas), the EC2NodeClass userData adopt
    /// did not carry (Bottlerocket device-plugin settings live there).
    fn summary(&self, before: &simulate::Report, after: &simulate::Report, before_m: &Manifests, after_m: &Manifests, moved: usize) -> RunSummary {
        let mut s = RunSummary {
            cluster: self.cluster.to_string(),
            nodes_before: before.nodeclaims.len(),
            nodes_after: after.nodeclaims.len(),
            usd_per_hour_before: before.usd_per_hour,
            usd_per_hour_after: after.usd_per_hour,
            pods_moved: moved,
            reasons: Vec::new(),
        };
        if !s.changed() {
            return s;
        }
        if moved > 0 {
            s.reasons.push(format!("{moved} pod(s) changed placement (above)"));
        }
        // An original overlay adopts as `overlay` blocks named as it is, or `<name>-<nodepool>` when it applied to
        // several NodePools (`overlays::attach`); one with no block was skipped (the adopt report says why).
        let kept: BTreeSet<&str> = after_m.overlays.iter().map(|o| o.name.as_str()).collect();
        let adopted = |name: &str| kept.contains(name) || kept.iter().any(|k| k.strip_prefix(name).is_some_and(|rest| rest.starts_with('-')));
        for o in before_m.overlays.iter().filter(|o| !adopted(&o.name)) {
            let capacity: Vec<String> = o.capacity.iter().map(|(k, v)| format!("{k}={}", v / 1000)).collect();
            let what = if capacity.is_empty() { "price".to_string() } else { format!("capacity {}", capacity.join(", ")) };
            s.reasons.push(format!("the original NodeOverlay {} ({what}) has no counterpart in the adopted output (adopt skipped it: see the skipped objects)", o.name));
        }
        for w in self.adoption.warnings.iter().filter(|w| w.field == "spec.userData" && w.message.starts_with("not expressible")) {
            s.reasons.push(format!("adopt did not carry {} {} {} (settings there, such as Bottlerocket's time-slicing, are lost)", w.file, w.object, w.field));
        }
        if s.reasons.is_empty() {
            s.reasons.push(format!("{UNEXPLAINED} (report it as a gpuplan bug)"));
        }
        s
    }

    fn placement(&self, pod: &str, before: Outcome, after: Outcome) -> PodPlacement {
        let change = match (&before.0, &after.0) {
            (None, None) => Change::Same,
            (Some(_), None) => Change::Pends,
            (None, Some(_)) => Change::Schedules,
            (Some(b), Some(a)) if b.nodepool != a.nodepool => Change::OtherPool,
            (Some(b), Some(a)) if b.instance_type != a.instance_type || b.capacity_type != a.capacity_type => Change::OtherType,
            _ => Change::Same,
        };
        let mut reasons = if change == Change::Same { Vec::new() } else { self.reasons(pod, change, &before, &after) };
        if change != Change::Same && reasons.is_empty() {
            reasons.push(format!("{UNEXPLAINED} (report it as a gpuplan bug)"));
        }
        PodPlacement { cluster: self.cluster.to_string(), pod: pod.to_string(), before: before.0, after: after.0, pending_before: before.1, pending_after: after.1, change, reasons }
    }

    /// The original NodePools that matter to this pod: where it landed on either side, and for a probe its own.
    fn pools_of(&self, pod: &str, before: &Outcome, after: &Outcome) -> Vec<String> {
        let mut pools: Vec<String> = [&before.0, &after.0].into_iter().flatten().map(|l| l.nodepool.clone()).collect();
        if let Some(own) = pod.strip_prefix(&format!("{PROBE_NAMESPACE}/probe-")) {
            pools.push(own.to_string());
        }
        let mut seen = BTreeSet::new();
        pools.retain(|p| seen.insert(p.clone()));
        pools
    }

    fn reasons(&self, pod: &str, change: Change, before: &Outcome, after: &Outcome) -> Vec<String> {
        let mut out = Vec::new();
        if let (Some(b), Some(a)) = (&before.0, &after.0) {
            out.extend(self.type_reasons(b, a));
        }
        for pool in self.pools_of(pod, before, after) {
            out.extend(self.pool_reasons(&pool, change, before.0.as_ref().map(|l| l.instance_type.as_str())));
        }
        if let Some(why) = &after.1
            && before.0.is_some() {
                out.push(format!("after adoption the simulator says: {why}"));
            }
        out
    }

    /// A type the pod landed on before that gpuplan removed (with the constraint that removed it), a cheaper one it
    /// added, another capacity type.
    fn type_reasons(&self, b: &Landing, a: &Landing) -> Vec<String> {
        let mut out = Vec::new();
        if b.instance_type != a.instance_type
            && let Some(report) = self.pool_report(&a.nodepool).filter(|r| r.types_added.contains(&a.instance_type)) {
                out.push(format!("gpuplan added {} to NodePool {} ({} types → {})", a.instance_type, report.node_pool, report.types_before, report.types_after));
            }
        if b.capacity_type != a.capacity_type {
            out.push(format!("the adopted NodePool {} launches {} where the original launched {}", a.nodepool, a.capacity_type, b.capacity_type));
        }
        out
    }

    /// What changed about one original NodePool that moves pods: not compiled, the type the pod used removed,
    /// its weight (when the pod moved between pools: weights order pools, they do not change a pool's types), its
    /// template labels and taints.
    fn pool_reasons(&self, pool: &str, change: Change, used: Option<&str>) -> Vec<String> {
        let mut out = Vec::new();
        let original = self.adoption.node_pools.iter().find(|np| np.name == pool);
        let Some(adopted) = self.rendered.iter().find(|m| m.kind() == "NodePool" && m.object["metadata"]["name"] == pool) else {
            if original.is_some() {
                out.push(format!("NodePool {pool} has no adopted NodePool of its name"));
            }
            return out;
        };
        match (self.dropped_before.get(pool), self.dropped_after.get(pool)) {
            (None, Some(why)) => out.push(format!("the adopted NodePool {pool} launches nothing: {why}")),
            (Some(why), None) => out.push(format!("the original NodePool {pool} launched nothing ({why}); the adopted one does")),
            _ => {}
        }
        if let (Some(report), Some(used)) = (self.pool_report(pool), used) {
            if report.types_removed.iter().any(|t| t == used) {
                out.push(self.removal(pool, used, report));
            } else if let Some(named) = named_types(&adopted.object).filter(|n| !n.iter().any(|t| t == used)) {
                // A type adopt's report does not count (it compares accelerated types): say what the pool names instead.
                let shown: Vec<&str> = named.iter().take(5).map(String::as_str).collect();
                let more = if named.len() > 5 { format!(" and {} more", named.len() - 5) } else { String::new() };
                out.push(format!("the adopted NodePool {pool} names {} instance type(s) ({}{more}), not {used}", named.len(), shown.join(", ")));
            }
        }
        if let Some(report) = self.pool_report(pool).filter(|r| change == Change::OtherPool && r.weight_before != r.weight_after) {
            let w = |w: Option<u64>| w.map_or("none".to_string(), |w| w.to_string());
            out.push(format!("the adopted NodePool {pool}'s weight is {} (was {})", w(report.weight_after), w(report.weight_before)));
        }
        if let Some(original) = original {
            out.extend(template_differences(pool, &original.object, &adopted.object));
        }
        out
    }

    /// Why gpuplan removed a type from a pool: the constraint the solve recorded, else the adopted requirements.
    fn removal(&self, pool: &str, used: &str, report: &PoolReport) -> String {
        let plan = self.compiled.plan.clusters.iter().filter(|c| c.name == self.cluster).flat_map(|c| &c.pools).find(|p| p.name == pool);
        let constraint = plan.and_then(|p| p.removed.iter().find(|r| r.types.iter().any(|t| t == used)));
        match (plan, constraint) {
            (Some(p), Some(r)) => format!(
                "gpuplan narrowed NodePool {pool} to {} types ({} before) and removed {used}: `{}` removed it (with {} other{})",
                p.candidates.len(),
                report.types_before,
                r.constraint,
                r.types.len() - 1,
                if r.types.len() == 2 { "" } else { "s" }
            ),
            _ => format!("the adopted NodePool {pool}'s requirements do not admit {used} ({} types → {}; see the adopt warnings for requirements not adopted)", report.types_before, report.types_after),
        }
    }

    fn pool_report(&self, pool: &str) -> Option<&PoolReport> {
        self.pool_reports.iter().find(|r| r.node_pool == pool)
    }
}

/// The instance types a NodePool names (`node.kubernetes.io/instance-type In`), as gpuplan's NodePools do.
fn named_types(np: &Value) -> Option<Vec<String>> {
    let reqs = np["spec"]["template"]["spec"]["requirements"].as_array()?;
    let r = reqs.iter().find(|r| r["key"] == "node.kubernetes.io/instance-type" && r["operator"] == "In")?;
    Some(r["values"].as_array()?.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
}

/// Template labels the original sets and the adopted NodePool does not (a pod selecting them pends), and taints the
/// adopted NodePool adds (a pod not tolerating them goes elsewhere).
fn template_differences(pool: &str, original: &Value, adopted: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let labels = |v: &Value| v["spec"]["template"]["metadata"]["labels"].as_object().cloned().unwrap_or_default();
    let (lb, la) = (labels(original), labels(adopted));
    for (k, v) in &lb {
        if la.get(k) != Some(v) {
            out.push(format!("the adopted NodePool {pool} does not set label {k}={} (spec.template.metadata.labels)", v.as_str().unwrap_or_default()));
        }
    }
    let taints = |v: &Value| v["spec"]["template"]["spec"]["taints"].as_array().cloned().unwrap_or_default();
    let key = |t: &Value| (t["key"].as_str().unwrap_or("").to_string(), t["value"].as_str().unwrap_or("").to_string(), t["effect"].as_str().unwrap_or("").to_string());
    let before: BTreeSet<_> = taints(original).iter().map(key).collect();
    for (k, v, e) in taints(adopted).iter().map(key) {
        if !before.contains(&(k.clone(), v.clone(), e.clone())) {
            out.push(format!("the adopted NodePool {pool} adds taint {k}{}:{e}", if v.is_empty() { String::new() } else { format!("={v}") }));
        }
    }
    out
}

fn side(l: &Option<Landing>, pending: &Option<String>) -> String {
    match (l, pending) {
        (Some(l), _) => format!("{}/{} {} ${:.2}/h", l.nodepool, l.instance_type, l.capacity_type, l.usd_per_hour),
        (None, Some(why)) => format!("pending ({why})"),
        (None, None) => "pending".to_string(),
    }
}

/// The human form: one line per pod (before → after), the reasons under each change, and the verdict.
pub fn render(v: &Verification, md: bool) -> String {
    let bullet = if md { "- " } else { "  " };
    // Under each changed line: indented text in the table, a nested list in markdown.
    let because = if md { "  - because" } else { "      because" };
    let mut out = format!("\n{}placement before → after adopting ({}, as `gpuplan simulate` plans them){}:\n", if md { "**" } else { "" }, v.pods, if md { "**" } else { "" });
    if !v.stand_in_classes.is_empty() {
        out.push_str(&format!("  the originals name EC2NodeClass(es) not among the inputs ({}): simulated with a stand-in (AL2023, Karpenter's defaults); pass --classes with yours to verify against them\n", v.stand_in_classes.join(", ")));
    }
    for p in &v.placements {
        let mark = if p.change == Change::Same { "=" } else { "≠" };
        out.push_str(&format!("{bullet}{mark} {} {}: {} → {}\n", p.cluster, p.pod, side(&p.before, &p.pending_before), side(&p.after, &p.pending_after)));
        for r in &p.reasons {
            out.push_str(&format!("{because} {r}\n"));
        }
    }
    for r in &v.runs {
        let mark = if r.changed() { "≠" } else { "=" };
        out.push_str(&format!("{bullet}{mark} {} all pods: {} node(s) ${:.2}/h → {} node(s) ${:.2}/h\n", r.cluster, r.nodes_before, r.usd_per_hour_before, r.nodes_after, r.usd_per_hour_after));
        for reason in &r.reasons {
            out.push_str(&format!("{because} {reason}\n"));
        }
    }
    out.push_str(&super::fields::render(&v.fields, md));
    if v.fields_unexplained > 0 {
        let then = if v.accepted { "accepted (--accept-changes)".to_string() } else { format!("exit {EXIT_PLACEMENT_CHANGED}") };
        out.push_str(&format!("{bullet}{} field change(s) no part of the adoption names: {then}\n", v.fields_unexplained));
    }
    let verdict = match (v.changed, v.accepted) {
        (0, _) => format!("no pod changes NodePool, instance type or capacity type ({} simulated)", v.placements.len()),
        (n, true) => format!("{n} placement change(s) accepted (--accept-changes)"),
        (n, false) => format!("{n} placement change(s): review them, then run again with --accept-changes (exit {EXIT_PLACEMENT_CHANGED})"),
    };
    out.push_str(&format!("{bullet}{verdict}\n"));
    out
}
