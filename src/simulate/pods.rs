//! Pods input: Pod, Deployment, StatefulSet, ReplicaSet (replicas × template), Job (parallelism, capped by completions); other kinds are
//! ignored. Requests follow Kubernetes (`k8s.io/component-helpers/resource` `PodRequests`, which Karpenter's
//! `resources.RequestsForPods` calls): a container's request defaults to its limit; the pod's request is the larger of
//! the containers' sum and the largest init container, plus overhead. Requirements follow kubernetes-sigs/karpenter
//! `pkg/scheduling/requirements.go` `newPodRequirements`: nodeSelector, the heaviest preferred term and the *first*
//! required nodeSelectorTerm; the rest are kept for relaxation (`provisioning/scheduling/preferences.go`).
//! Topology (read by `topology`): the pod's namespace and labels (what other pods' selectors match),
//! `topologySpreadConstraints` and `podAffinity`/`podAntiAffinity` terms, as `scheduling/topology.go`
//! `newForTopologies`/`newForAffinities` read them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::requirements::{normalize, Requirement, Requirements, Toleration};
use super::yaml::{err, integer, list, map, resources, string, Doc, InputError, Resources};

/// The default cap on pods per simulation: far above a cluster's GPU pods, far below what would exhaust a CI
/// runner (a Deployment with `replicas: 2000000000` allocated 6 GiB before it was capped).
pub const DEFAULT_MAX_PODS: u64 = 100_000;

/// The environment variable that changes the cap.
pub const MAX_PODS_ENV: &str = "GPUPLAN_MAX_PODS";

/// One pod to schedule (or, from a DaemonSet, the pod it runs on every node: [`daemon_sets`]).
#[derive(Debug, Clone, Default)]
pub struct Pod {
    /// `namespace/name` or `namespace/W-i`.
    pub key: String,
    pub requests: Resources,
    pub node_selector: Requirements,
    /// Required node affinity terms (OR); the first is tried until it fails everywhere.
    pub required_terms: Vec<Requirements>,
    /// Preferred node affinity terms, heaviest first; each is a hard constraint until relaxed.
    pub preferred_terms: Vec<Requirements>,
    pub tolerations: Vec<Toleration>,
    /// The host ports its containers bind: two pods binding one port cannot share a node.
    pub host_ports: Vec<HostPort>,
    /// Namespace, labels, spread constraints and pod (anti-)affinity terms; `None` for a pod with none of them
    /// (the scheduler skips topology altogether when no pod [`PodTopology::constrains`]).
    pub topology: Option<Box<PodTopology>>,
    /// The Kueue Workload the pod belongs to, when its object has the `kueue.x-k8s.io/queue-name` label
    /// (`admission` decides whether it runs).
    pub queued: Option<std::sync::Arc<Queued>>,
}

/// The label that submits an object to a Kueue LocalQueue of its namespace.
pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";

/// The label naming a Kueue WorkloadPriorityClass (jobframework/utils.go `WorkloadPriorityClassName`).
pub const PRIORITY_CLASS_LABEL: &str = "kueue.x-k8s.io/priority-class";

/// What Kueue reads of a queued object to make its Workload. The Workload is the object for a Job (one PodSet of
/// `min(parallelism, completions)` pods: pkg/controller/jobs/job/job_controller.go `PodSets`, `podsCount`), a Pod,
/// and a StatefulSet (its pods form one pod group: pkg/controller/jobs/statefulset); each pod of a Deployment or
/// ReplicaSet is a Workload of its own (pod integration, pkg/controller/jobs/pod).
#[derive(Debug, Clone, PartialEq)]
pub struct Queued {
    /// `namespace/name` of the Workload's object, or the pod's key for a Deployment's or ReplicaSet's pods.
    pub workload: String,
    pub namespace: String,
    /// The LocalQueue (in `namespace`).
    pub queue: String,
    /// The `kueue.x-k8s.io/priority-class` label (a WorkloadPriorityClass), which Kueue reads before the pods'
    /// `priorityClassName` (jobframework/reconciler.go `ExtractPriority`).
    pub workload_priority_class: Option<String>,
    pub priority_class_name: Option<String>,
    /// `metadata.creationTimestamp` (RFC 3339, UTC) when given: such objects were created before the run, the others
    /// are created now in input order.
    pub created: Option<String>,
    /// The object's position among the inputs.
    pub order: usize,
}

/// A container port bound on the node (kubernetes-sigs/karpenter `pkg/scheduling/hostportusage.go` `GetHostPorts`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    /// `hostIP`, "0.0.0.0" when unset; `None` when it does not parse (Go's `net.ParseIP` gives nil).
    pub ip: Option<std::net::IpAddr>,
    pub port: i64,
    /// As written: the pods Karpenter reads are not defaulted by an API server, so an unset protocol is "", not TCP.
    pub protocol: String,
}

impl HostPort {
    /// hostportusage.go `Matches`: same protocol and port, and the same IP unless either is unspecified.
    pub fn matches(&self, other: &HostPort) -> bool {
        let unspecified = |ip: &Option<std::net::IpAddr>| ip.is_some_and(|ip| ip.is_unspecified());
        self.protocol == other.protocol && self.port == other.port && (self.ip == other.ip || unspecified(&self.ip) || unspecified(&other.ip))
    }
}

/// Whether any of `ports` matches any of `used`.
pub fn ports_conflict(ports: &[HostPort], used: &[HostPort]) -> bool {
    ports.iter().any(|p| used.iter().any(|u| p.matches(u)))
}

/// What the topology stage reads of a pod.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodTopology {
    pub namespace: String,
    pub labels: BTreeMap<String, String>,
    pub spread: Vec<Spread>,
    /// Required pod affinity terms (never relaxed).
    pub affinity: Vec<PodTerm>,
    pub anti_affinity: Vec<PodTerm>,
    /// Preferred terms, heaviest first (preferences.go sorts them stably by weight and removes the first).
    pub preferred_affinity: Vec<PodTerm>,
    pub preferred_anti_affinity: Vec<PodTerm>,
}

impl PodTopology {
    /// Whether the pod takes part in topology at all: it has a constraint, or it has labels another pod's term
    /// may select (every labelled pod does; a pod without labels is matched only by an empty selector).
    pub fn constrains(&self) -> bool {
        !(self.spread.is_empty() && self.affinity.is_empty() && self.anti_affinity.is_empty() && self.preferred_affinity.is_empty() && self.preferred_anti_affinity.is_empty())
    }
}

/// A `topologySpreadConstraint` (k8s.io/api core/v1 `TopologySpreadConstraint`), with `matchLabelKeys` already
/// folded into the selector (topology.go `newForTopologies`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spread {
    pub key: String,
    pub max_skew: i32,
    /// `whenUnsatisfiable: ScheduleAnyway`: a preference, removed by preferences.go `removeTopologySpreadScheduleAnyway`.
    pub schedule_anyway: bool,
    pub selector: Option<Selector>,
    pub min_domains: Option<i32>,
    /// `nodeTaintsPolicy: Honor` (default Ignore) and `nodeAffinityPolicy: Honor` (the default) (topologygroup.go
    /// `NewTopologyGroup`).
    pub honor_taints: bool,
    pub honor_affinity: bool,
}

/// A pod (anti-)affinity term (k8s.io/api core/v1 `PodAffinityTerm`). `namespaces` is the pod's own namespace when
/// the term names none (topology.go `buildNamespaceList`); a namespaceSelector adds nothing offline, where no
/// Namespace objects exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodTerm {
    pub key: String,
    pub selector: Option<Selector>,
    pub namespaces: BTreeSet<String>,
}

/// A metav1 `LabelSelector`. `None` where one is used means no selector, which selects nothing
/// (`metav1.LabelSelectorAsSelector(nil)` is `labels.Nothing()`); an empty one selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Selector {
    pub match_labels: BTreeMap<String, String>,
    /// (key, operator, values): In, NotIn, Exists, DoesNotExist.
    pub expressions: Vec<(String, String, Vec<String>)>,
}

impl Selector {
    /// k8s.io/apimachinery `labels.Selector.Matches`; an unknown operator matches nothing (the selector fails to
    /// parse, and `NewTopologyGroup` falls back to `labels.Nothing()`).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.expressions.iter().all(|(k, op, values)| match op.as_str() {
                "In" => labels.get(k).is_some_and(|v| values.contains(v)),
                "NotIn" => labels.get(k).is_none_or(|v| !values.contains(v)),
                "Exists" => labels.contains_key(k),
                "DoesNotExist" => !labels.contains_key(k),
                _ => false,
            })
    }
}

/// Reads pods from documents; replicas of a workload are `namespace/W-i`.
pub fn pods(docs: &[Doc]) -> Result<Vec<Pod>, InputError> {
    let cap = crate::input::env_limit(MAX_PODS_ENV, DEFAULT_MAX_PODS).map_err(|e| err(MAX_PODS_ENV.to_string(), e.to_string()))?;
    let mut out = Vec::new();
    let mut total: u64 = 0;
    for (order, doc) in docs.iter().enumerate() {
        let (copies, spec, prefix) = match doc.kind() {
            "Pod" => (None, doc.value.get("spec"), "spec"),
            "Deployment" | "StatefulSet" | "ReplicaSet" => (Some(int(doc, "replicas", 1)?), template_spec(doc), "spec.template.spec"),
            // The Job controller runs min(parallelism, completions) pods at once (job_controller.go `podsCount` in
            // Kueue reads the same).
            "Job" => (Some(int(doc, "parallelism", 1)?.min(int(doc, "completions", u64::MAX)?)), template_spec(doc), "spec.template.spec"),
            _ => continue,
        };
        // Counted before any pod is made: the cap bounds memory, not just the report.
        total = total.saturating_add(copies.unwrap_or(1));
        if total > cap {
            let field = if doc.kind() == "Job" { "parallelism:" } else { "replicas:" };
            let at = if copies.is_some() { doc.at(field) } else { doc.at("kind:") };
            return Err(err(at, format!("{total} pods so far, more than the {cap} a simulation takes: simulate fewer replicas, or raise {MAX_PODS_ENV}")));
        }
        let meta = map(doc, doc.value.get("metadata"), "metadata")?;
        let name = string(doc, meta.and_then(|m| m.get("name")), "metadata.name")?.ok_or_else(|| err(doc.at("kind:"), format!("{} without metadata.name", doc.kind())))?;
        let namespace = string(doc, meta.and_then(|m| m.get("namespace")), "metadata.namespace")?.unwrap_or("default");
        let spec = spec.ok_or_else(|| err(doc.at("kind:"), format!("{} {name} has no pod spec", doc.kind())))?;
        map(doc, Some(spec), prefix)?;
        let mut template = pod_from_spec(doc, spec, prefix)?;
        // A workload's pods carry its template's labels; a Pod its own.
        let labels = if copies.is_some() { doc.value.pointer("/spec/template/metadata/labels") } else { meta.and_then(|m| m.get("labels")) };
        template.topology = topology(doc, spec, namespace, labels)?;
        let queued = queued(doc, meta, labels, spec, namespace, name, order)?;
        let per_pod = matches!(doc.kind(), "Deployment" | "ReplicaSet");
        let key = |i: Option<u64>| i.map_or_else(|| format!("{namespace}/{name}"), |i| format!("{namespace}/{name}-{i}"));
        let pod = |i: Option<u64>| {
            let queued = queued.as_ref().map(|q| if per_pod { std::sync::Arc::new(Queued { workload: key(i), ..(**q).clone() }) } else { std::sync::Arc::clone(q) });
            Pod { key: key(i), queued, ..template.clone() }
        };
        match copies {
            None => out.push(pod(None)),
            Some(n) => out.extend((0..n).map(|i| pod(Some(i)))),
        }
    }
    Ok(out)
}

/// The object's Workload when it (or, for a Deployment, ReplicaSet or StatefulSet, its pod template) has the queue
/// label. A Job's template label is not read: Kueue's job integration reads the Job's own labels, and pods owned by
/// a Job are not managed by the pod integration.
fn queued(doc: &Doc, meta: Option<&serde_json::Map<String, Value>>, template_labels: Option<&Value>, spec: &Value, namespace: &str, name: &str, order: usize) -> Result<Option<std::sync::Arc<Queued>>, InputError> {
    let own = map(doc, meta.and_then(|m| m.get("labels")), "metadata.labels")?;
    let label = |key: &str| -> Result<Option<&str>, InputError> {
        if let Some(v) = string(doc, own.and_then(|l| l.get(key)), &format!("metadata.labels.{key}"))? {
            return Ok(Some(v));
        }
        if matches!(doc.kind(), "Deployment" | "ReplicaSet" | "StatefulSet") {
            return string(doc, template_labels.and_then(|l| l.get(key)), &format!("spec.template.metadata.labels.{key}"));
        }
        Ok(None)
    };
    let Some(queue) = label(QUEUE_LABEL)?.filter(|q| !q.is_empty()) else { return Ok(None) };
    let created = string(doc, meta.and_then(|m| m.get("creationTimestamp")), "metadata.creationTimestamp")?;
    if let Some(t) = created.filter(|t| !rfc3339_utc(t)) {
        return Err(err(doc.at("creationTimestamp:"), format!("metadata.creationTimestamp must be an RFC 3339 UTC time such as 2026-01-02T15:04:05Z, not {:?}", crate::input::excerpt(t))));
    }
    Ok(Some(std::sync::Arc::new(Queued {
        workload: format!("{namespace}/{name}"),
        namespace: namespace.to_string(),
        queue: queue.to_string(),
        workload_priority_class: label(PRIORITY_CLASS_LABEL)?.filter(|c| !c.is_empty()).map(str::to_string),
        priority_class_name: string(doc, spec.get("priorityClassName"), "priorityClassName")?.filter(|c| !c.is_empty()).map(str::to_string),
        created: created.map(str::to_string),
        order,
    })))
}

/// `YYYY-MM-DDTHH:MM:SS[.frac]Z`, the form the API server writes: such times order as strings.
fn rfc3339_utc(t: &str) -> bool {
    let b = t.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let seconds = b.len() >= 20 && digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10) && b[10] == b'T' && digits(11..13) && b[13] == b':' && digits(14..16) && b[16] == b':' && digits(17..19);
    seconds && t.ends_with('Z') && (b.len() == 20 || (b[19] == b'.' && digits(20..b.len() - 1) && b.len() > 21))
}

fn template_spec<'d>(doc: &'d Doc) -> Option<&'d Value> {
    doc.value.pointer("/spec/template/spec")
}

fn int(doc: &Doc, field: &str, default: u64) -> Result<u64, InputError> {
    match doc.value.get("spec").and_then(|s| s.get(field)) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v.as_u64().ok_or_else(|| err(doc.at(&format!("{field}:")), format!("spec.{field} must be a non-negative integer, not {v}"))),
    }
}

fn pod_from_spec(doc: &Doc, spec: &Value, prefix: &str) -> Result<Pod, InputError> {
    Ok(Pod {
        key: String::new(),
        requests: requests(doc, spec, prefix)?,
        node_selector: node_selector(doc, spec.get("nodeSelector"), prefix)?,
        required_terms: required_terms(doc, spec)?,
        preferred_terms: preferred_terms(doc, spec)?,
        tolerations: tolerations(doc, spec, prefix)?,
        host_ports: host_ports(doc, spec, prefix)?,
        topology: None,
        queued: None,
    })
}

/// hostportusage.go `GetHostPorts`: the regular containers' ports with a hostPort (init containers' are not counted).
/// Each field has the type the API gives it (`hostPort: "80"` is an error at its line, not a port left out).
fn host_ports(doc: &Doc, spec: &Value, prefix: &str) -> Result<Vec<HostPort>, InputError> {
    let path = format!("{prefix}.containers[].ports");
    let mut out = Vec::new();
    for c in containers(doc, spec, prefix, "containers")? {
        for p in list(doc, c.get("ports"), &path)? {
            map(doc, Some(p), &format!("{path}[]"))?;
            let Some(port) = integer(doc, p.get("hostPort"), &format!("{path}[].hostPort"), 0..=65535)?.filter(|port| *port != 0) else { continue };
            let ip = string(doc, p.get("hostIP"), &format!("{path}[].hostIP"))?.filter(|ip| !ip.is_empty()).unwrap_or("0.0.0.0");
            let protocol = string(doc, p.get("protocol"), &format!("{path}[].protocol"))?.unwrap_or("").to_string();
            out.push(HostPort { ip: ip.parse().ok(), port, protocol });
        }
    }
    Ok(out)
}

/// The pod each DaemonSet runs on a node, as Karpenter builds it for its overhead (sigs.k8s.io/karpenter
/// `pkg/utils/daemonset/daemonset.go` `PodForDaemonSet`: the template's spec, limits defaulting requests; provisioner.go
/// `getDaemonSetPods`: the template's required node affinity). Preferred node affinity does not decide where a daemon
/// runs (scheduler.go `isDaemonPodCompatible` reads only the strict requirements), so none is kept. Keys are
/// `namespace/name`.
pub fn daemon_sets(docs: &[Doc]) -> Result<Vec<Pod>, InputError> {
    let mut out = Vec::new();
    for doc in docs.iter().filter(|d| d.kind() == "DaemonSet") {
        let meta = map(doc, doc.value.get("metadata"), "metadata")?;
        let name = string(doc, meta.and_then(|m| m.get("name")), "metadata.name")?.ok_or_else(|| err(doc.at("kind:"), "DaemonSet without metadata.name"))?;
        let namespace = string(doc, meta.and_then(|m| m.get("namespace")), "metadata.namespace")?.unwrap_or("default");
        let spec = template_spec(doc).ok_or_else(|| err(doc.at("kind:"), format!("DaemonSet {name} has no pod spec (spec.template.spec)")))?;
        map(doc, Some(spec), "spec.template.spec")?;
        let pod = pod_from_spec(doc, spec, "spec.template.spec")?;
        out.push(Pod { key: format!("{namespace}/{name}"), preferred_terms: Vec::new(), ..pod });
    }
    Ok(out)
}

/// The pod's topology, or `None` when it has no labels, no spread constraint and no pod (anti-)affinity term (its
/// namespace is then its key's). Every field has the type the API gives it: a wrong one is an error at its line
/// (`topologyKey: 5` used to read as a constraint on no key).
fn topology(doc: &Doc, spec: &Value, namespace: &str, labels: Option<&Value>) -> Result<Option<Box<PodTopology>>, InputError> {
    let labels = string_map(doc, labels, "metadata.labels")?;
    let terms = |path: &str| list(doc, spec.pointer(path), leaf(path))?.iter().map(|t| pod_term(doc, t, namespace)).collect::<Result<Vec<_>, _>>();
    let t = PodTopology {
        namespace: namespace.to_string(),
        spread: list(doc, spec.get("topologySpreadConstraints"), "topologySpreadConstraints")?.iter().map(|c| spread(doc, c, &labels)).collect::<Result<_, _>>()?,
        affinity: terms("/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution")?,
        anti_affinity: terms("/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution")?,
        preferred_affinity: weighted_terms(doc, spec, "/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution", namespace)?,
        preferred_anti_affinity: weighted_terms(doc, spec, "/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution", namespace)?,
        labels,
    };
    Ok((t.constrains() || !t.labels.is_empty()).then(|| Box::new(t)))
}

/// The last key of a JSON pointer, as messages name a field.
fn leaf(pointer: &str) -> &str {
    pointer.rsplit('/').next().unwrap_or(pointer)
}

/// Preferred pod (anti-)affinity terms, heaviest first (preferences.go sorts them stably by weight). The API requires
/// a weight from 1 to 100.
fn weighted_terms(doc: &Doc, spec: &Value, pointer: &str, namespace: &str) -> Result<Vec<PodTerm>, InputError> {
    let path = leaf(pointer);
    let mut ts = Vec::new();
    for t in list(doc, spec.pointer(pointer), path)? {
        map(doc, Some(t), &format!("{path}[]"))?;
        let weight = integer(doc, t.get("weight"), &format!("{path}[].weight"), 1..=100)?.ok_or_else(|| err(doc.at(&format!("{path}:")), format!("{path}[] needs a weight from 1 to 100")))?;
        ts.push((weight, pod_term(doc, t.get("podAffinityTerm").unwrap_or(&Value::Null), namespace)?));
    }
    ts.sort_by_key(|t| std::cmp::Reverse(t.0));
    Ok(ts.into_iter().map(|t| t.1).collect())
}

/// A map of strings (labels, matchLabels): `tier: 1` is an error, as the API server's decoding makes it.
fn string_map(doc: &Doc, v: Option<&Value>, path: &str) -> Result<BTreeMap<String, String>, InputError> {
    let mut out = BTreeMap::new();
    for (k, v) in map(doc, v, path)?.into_iter().flatten() {
        out.insert(k.clone(), string(doc, Some(v), &format!("{path}.{k}"))?.unwrap_or("").to_string());
    }
    Ok(out)
}

/// A metav1 LabelSelector (`None` for an absent or null one). Operators are kept as written: an unknown one matches
/// nothing ([`Selector::matches`]), as in Karpenter.
pub fn selector(doc: &Doc, v: Option<&Value>, path: &str) -> Result<Option<Selector>, InputError> {
    let Some(v) = map(doc, v, path)? else { return Ok(None) };
    let match_labels = string_map(doc, v.get("matchLabels"), &format!("{path}.matchLabels"))?;
    let exprs = format!("{path}.matchExpressions");
    let mut expressions = Vec::new();
    for e in list(doc, v.get("matchExpressions"), &exprs)? {
        map(doc, Some(e), &format!("{exprs}[]"))?;
        let s = |k: &str| string(doc, e.get(k), &format!("{exprs}[].{k}")).map(|v| v.unwrap_or("").to_string());
        let values = list(doc, e.get("values"), &format!("{exprs}[].values"))?.iter().map(|v| string(doc, Some(v), &format!("{exprs}[].values[]")).map(|v| v.unwrap_or("").to_string())).collect::<Result<_, _>>()?;
        expressions.push((s("key")?, s("operator")?, values));
    }
    Ok(Some(Selector { match_labels, expressions }))
}

/// topology.go `newForTopologies`: `matchLabelKeys` adds `key In [the pod's value]` for each key the pod has. The
/// enumerations are checked as the API server checks them (core/v1 validation `validateTopologySpreadConstraints`):
/// a misspelt `whenUnsatisfiable` used to read as DoNotSchedule.
fn spread(doc: &Doc, c: &Value, labels: &BTreeMap<String, String>) -> Result<Spread, InputError> {
    const PATH: &str = "topologySpreadConstraints[]";
    map(doc, Some(c), PATH)?;
    let field = |k: &str| string(doc, c.get(k), &format!("{PATH}.{k}"));
    let one_of = |k: &str, allowed: &[&str], default: Option<&str>| -> Result<String, InputError> {
        match field(k)?.or(default) {
            Some(v) if allowed.contains(&v) => Ok(v.to_string()),
            v => Err(err(doc.at(&if v.is_some() { format!("{k}:") } else { "topologySpreadConstraints:".to_string() }), format!("{PATH}.{k} must be one of {}, not {}", allowed.join(", "), v.map_or("missing".to_string(), |v| format!("{v:?}"))))),
        }
    };
    let key = field("topologyKey")?.filter(|k| !k.is_empty()).ok_or_else(|| err(doc.at("topologySpreadConstraints:"), format!("{PATH} needs a topologyKey")))?;
    let mut selector = selector(doc, c.get("labelSelector"), &format!("{PATH}.labelSelector"))?;
    for key in list(doc, c.get("matchLabelKeys"), &format!("{PATH}.matchLabelKeys"))? {
        let key = string(doc, Some(key), &format!("{PATH}.matchLabelKeys[]"))?.unwrap_or("");
        if let (Some(sel), Some(v)) = (selector.as_mut(), labels.get(key)) {
            sel.expressions.push((key.to_string(), "In".into(), vec![v.clone()]));
        }
    }
    let max_skew = integer(doc, c.get("maxSkew"), &format!("{PATH}.maxSkew"), 1..=i64::from(i32::MAX))?.ok_or_else(|| err(doc.at("topologySpreadConstraints:"), "topologySpreadConstraint without an integer maxSkew".to_string()))?;
    Ok(Spread {
        key: key.to_string(),
        max_skew: max_skew as i32,
        schedule_anyway: one_of("whenUnsatisfiable", &["DoNotSchedule", "ScheduleAnyway"], None)? == "ScheduleAnyway",
        selector,
        min_domains: integer(doc, c.get("minDomains"), &format!("{PATH}.minDomains"), 1..=i64::from(i32::MAX))?.map(|n| n as i32),
        honor_taints: one_of("nodeTaintsPolicy", &["Honor", "Ignore"], Some("Ignore"))? == "Honor",
        honor_affinity: one_of("nodeAffinityPolicy", &["Honor", "Ignore"], Some("Honor"))? == "Honor",
    })
}

/// A pod (anti-)affinity term; its namespaces are the pod's own when it names none and has no namespaceSelector
/// (topology.go `buildNamespaceList`).
fn pod_term(doc: &Doc, t: &Value, namespace: &str) -> Result<PodTerm, InputError> {
    const PATH: &str = "podAffinityTerm";
    map(doc, Some(t), PATH)?;
    let mut namespaces = BTreeSet::new();
    for n in list(doc, t.get("namespaces"), &format!("{PATH}.namespaces"))? {
        namespaces.insert(string(doc, Some(n), &format!("{PATH}.namespaces[]"))?.unwrap_or("").to_string());
    }
    let has_selector = map(doc, t.get("namespaceSelector"), &format!("{PATH}.namespaceSelector"))?.is_some();
    if namespaces.is_empty() && !has_selector {
        namespaces.insert(namespace.to_string());
    }
    let key = string(doc, t.get("topologyKey"), &format!("{PATH}.topologyKey"))?.filter(|k| !k.is_empty()).ok_or_else(|| err(doc.at("labelSelector:"), "a pod (anti-)affinity term needs a topologyKey".to_string()))?;
    Ok(PodTerm { key: key.to_string(), selector: selector(doc, t.get("labelSelector"), &format!("{PATH}.labelSelector"))?, namespaces })
}

/// The pod's effective requests (component-helpers `PodRequests`).
fn requests(doc: &Doc, spec: &Value, prefix: &str) -> Result<Resources, InputError> {
    let mut sum = Resources::new();
    for c in containers(doc, spec, prefix, "containers")? {
        for (k, v) in container_requests(doc, c)? {
            *sum.entry(k).or_default() += v;
        }
    }
    // Sidecars (init containers with restartPolicy Always) run alongside: they add to the sum, and to every later init
    // container's peak (component-helpers `PodRequests`).
    let mut sidecars = Resources::new();
    let mut init_peak = Resources::new();
    for c in containers(doc, spec, prefix, "initContainers")? {
        let req = container_requests(doc, c)?;
        let sidecar = c.get("restartPolicy").and_then(Value::as_str) == Some("Always");
        if sidecar {
            for (k, v) in &req {
                *sidecars.entry(k.clone()).or_default() += v;
            }
        }
        let peak = if sidecar { sidecars.clone() } else { add(&req, &sidecars) };
        for (k, v) in peak {
            let e = init_peak.entry(k).or_default();
            *e = (*e).max(v);
        }
    }
    let mut sum = add(&sum, &sidecars);
    for (k, v) in init_peak {
        let e = sum.entry(k).or_default();
        *e = (*e).max(v);
    }
    let overhead = resources(spec.get("overhead")).map_err(|m| err(doc.at("overhead:"), m))?;
    for (k, v) in overhead {
        *sum.entry(k).or_default() += v;
    }
    *sum.entry("pods".into()).or_default() += 1000;
    Ok(sum)
}

/// The containers (or init containers) of a pod spec: a list of maps.
fn containers<'s>(doc: &Doc, spec: &'s Value, prefix: &str, field: &str) -> Result<&'s [Value], InputError> {
    let items = list(doc, spec.get(field), &format!("{prefix}.{field}"))?;
    for c in items {
        map(doc, Some(c), &format!("{prefix}.{field}[]"))?;
    }
    Ok(items)
}

/// A container's requests, each defaulting to its limit (Kubernetes defaulting).
fn container_requests(doc: &Doc, c: &Value) -> Result<Resources, InputError> {
    let at = |m: String| err(doc.at(m.split(':').next().unwrap_or("")), m);
    let mut req = resources(c.pointer("/resources/requests")).map_err(at)?;
    for (k, v) in resources(c.pointer("/resources/limits")).map_err(at)? {
        req.entry(k).or_insert(v);
    }
    Ok(req)
}

fn add(a: &Resources, b: &Resources) -> Resources {
    let mut out = a.clone();
    for (k, v) in b {
        *out.entry(k.clone()).or_default() += v;
    }
    out
}

fn node_selector(doc: &Doc, v: Option<&Value>, prefix: &str) -> Result<Requirements, InputError> {
    let mut reqs = Requirements::default();
    let Some(selector) = map(doc, v, &format!("{prefix}.nodeSelector"))? else { return Ok(reqs) };
    for (k, val) in selector {
        let value = val.as_str().map(str::to_string).unwrap_or_else(|| val.to_string());
        reqs.add(normalize(k), Requirement::is_in([value]));
    }
    Ok(reqs)
}

/// A nodeSelectorTerm's matchExpressions (NewNodeSelectorRequirements, keys normalized).
pub fn expressions(doc: &Doc, exprs: Option<&Value>) -> Result<Requirements, InputError> {
    let mut reqs = Requirements::default();
    for e in list(doc, exprs, "matchExpressions")? {
        map(doc, Some(e), "a requirement")?;
        let key = string(doc, e.get("key"), "key")?.unwrap_or("");
        let op = string(doc, e.get("operator"), "operator")?.unwrap_or("");
        let values: Vec<String> = list(doc, e.get("values"), "values")?.iter().map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())).collect();
        let req = Requirement::new(op, &values).ok_or_else(|| err(doc.at(&format!("operator: {op}")), format!("requirement on {key:?}: unknown operator {op:?} or missing integer value")))?;
        let req = Requirement { min_values: e.get("minValues").and_then(Value::as_u64).map(|n| n as usize), ..req };
        reqs.add(normalize(key), req);
    }
    Ok(reqs)
}

fn required_terms(doc: &Doc, spec: &Value) -> Result<Vec<Requirements>, InputError> {
    list(doc, spec.pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms"), "nodeSelectorTerms")?
        .iter()
        .map(|t| expressions(doc, t.get("matchExpressions")))
        .collect()
}

fn preferred_terms(doc: &Doc, spec: &Value) -> Result<Vec<Requirements>, InputError> {
    let mut terms: Vec<(i64, Requirements)> = list(doc, spec.pointer("/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution"), "preferredDuringSchedulingIgnoredDuringExecution")?
        .iter()
        .map(|t| Ok((t.get("weight").and_then(Value::as_i64).unwrap_or(0), expressions(doc, t.pointer("/preference/matchExpressions"))?)))
        .collect::<Result<_, InputError>>()?;
    // preferences.go sorts descending by weight (stable) and removes the heaviest first.
    terms.sort_by_key(|t| std::cmp::Reverse(t.0));
    Ok(terms.into_iter().map(|t| t.1).collect())
}

fn tolerations(doc: &Doc, spec: &Value, prefix: &str) -> Result<Vec<Toleration>, InputError> {
    let path = format!("{prefix}.tolerations");
    let mut out = Vec::new();
    for t in list(doc, spec.get("tolerations"), &path)? {
        map(doc, Some(t), &format!("{path}[]"))?;
        let s = |k: &str| string(doc, t.get(k), &format!("{path}[].{k}")).map(|v| v.unwrap_or("").to_string());
        let operator = s("operator")?;
        out.push(Toleration { key: s("key")?, operator: if operator.is_empty() { "Equal".into() } else { operator }, value: s("value")?, effect: s("effect")? });
    }
    Ok(out)
}
