//! Pods input: Pod, Deployment, StatefulSet, ReplicaSet (replicas × template), Job (parallelism); other kinds are
//! ignored. Requests follow Kubernetes (`k8s.io/component-helpers/resource` `PodRequests`, which Karpenter's
//! `resources.RequestsForPods` calls): a container's request defaults to its limit; the pod's request is the larger of
//! the containers' sum and the largest init container, plus overhead. Requirements follow kubernetes-sigs/karpenter
//! `pkg/scheduling/requirements.go` `newPodRequirements`: nodeSelector, the heaviest preferred term and the *first*
//! required nodeSelectorTerm; the rest are kept for relaxation (`provisioning/scheduling/preferences.go`).

use serde_json::Value;

use super::requirements::{normalize, Requirement, Requirements, Toleration};
use super::yaml::{err, resources, Doc, InputError, Resources};

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

/// Reads pods from documents; replicas of a workload are `namespace/W-i`.
pub fn pods(docs: &[Doc]) -> Result<Vec<Pod>, InputError> {
    let mut out = Vec::new();
    for doc in docs {
        let (copies, spec) = match doc.kind() {
            "Pod" => (None, doc.value.get("spec")),
            "Deployment" | "StatefulSet" | "ReplicaSet" => (Some(int(doc, "replicas", 1)?), template_spec(doc)),
            "Job" => (Some(int(doc, "parallelism", 1)?), template_spec(doc)),
            _ => continue,
        };
        let meta = doc.value.get("metadata");
        let name = meta.and_then(|m| m.get("name")).and_then(Value::as_str).ok_or_else(|| err(doc.at("kind:"), format!("{} without metadata.name", doc.kind())))?;
        let namespace = meta.and_then(|m| m.get("namespace")).and_then(Value::as_str).unwrap_or("default");
        let spec = spec.ok_or_else(|| err(doc.at("kind:"), format!("{} {name} has no pod spec", doc.kind())))?;
        let template = pod_from_spec(doc, spec)?;
        match copies {
            None => out.push(Pod { key: format!("{namespace}/{name}"), ..template }),
            Some(n) => out.extend((0..n).map(|i| Pod { key: format!("{namespace}/{name}-{i}"), ..template.clone() })),
        }
    }
    Ok(out)
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

fn pod_from_spec(doc: &Doc, spec: &Value) -> Result<Pod, InputError> {
    Ok(Pod {
        key: String::new(),
        requests: requests(doc, spec)?,
        node_selector: node_selector(doc, spec.get("nodeSelector"))?,
        required_terms: required_terms(doc, spec)?,
        preferred_terms: preferred_terms(doc, spec)?,
        tolerations: tolerations(spec),
        host_ports: host_ports(spec),
    })
}

/// hostportusage.go `GetHostPorts`: the regular containers' ports with a hostPort (init containers' are not counted).
fn host_ports(spec: &Value) -> Vec<HostPort> {
    array(spec.get("containers"))
        .flat_map(|c| array(c.get("ports")))
        .filter_map(|p| {
            let port = p.get("hostPort").and_then(Value::as_i64).filter(|port| *port != 0)?;
            let ip = p.get("hostIP").and_then(Value::as_str).filter(|ip| !ip.is_empty()).unwrap_or("0.0.0.0");
            let protocol = p.get("protocol").and_then(Value::as_str).unwrap_or("").to_string();
            Some(HostPort { ip: ip.parse().ok(), port, protocol })
        })
        .collect()
}

/// The pod each DaemonSet runs on a node, as Karpenter builds it for its overhead (sigs.k8s.io/karpenter
/// `pkg/utils/daemonset/daemonset.go` `PodForDaemonSet`: the template's spec, limits defaulting requests; provisioner.go
/// `getDaemonSetPods`: the template's required node affinity). Preferred node affinity does not decide where a daemon
/// runs (scheduler.go `isDaemonPodCompatible` reads only the strict requirements), so none is kept. Keys are
/// `namespace/name`.
pub fn daemon_sets(docs: &[Doc]) -> Result<Vec<Pod>, InputError> {
    let mut out = Vec::new();
    for doc in docs.iter().filter(|d| d.kind() == "DaemonSet") {
        let meta = doc.value.get("metadata");
        let name = meta.and_then(|m| m.get("name")).and_then(Value::as_str).ok_or_else(|| err(doc.at("kind:"), "DaemonSet without metadata.name"))?;
        let namespace = meta.and_then(|m| m.get("namespace")).and_then(Value::as_str).unwrap_or("default");
        let spec = template_spec(doc).ok_or_else(|| err(doc.at("kind:"), format!("DaemonSet {name} has no pod spec (spec.template.spec)")))?;
        let pod = pod_from_spec(doc, spec)?;
        out.push(Pod { key: format!("{namespace}/{name}"), preferred_terms: Vec::new(), ..pod });
    }
    Ok(out)
}

/// The pod's effective requests (component-helpers `PodRequests`).
fn requests(doc: &Doc, spec: &Value) -> Result<Resources, InputError> {
    let mut sum = Resources::new();
    for c in array(spec.get("containers")) {
        for (k, v) in container_requests(doc, c)? {
            *sum.entry(k).or_default() += v;
        }
    }
    // Sidecars (init containers with restartPolicy Always) run alongside: they add to the sum, and to every later init
    // container's peak (component-helpers `PodRequests`).
    let mut sidecars = Resources::new();
    let mut init_peak = Resources::new();
    for c in array(spec.get("initContainers")) {
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

/// A container's requests, each defaulting to its limit (Kubernetes defaulting).
fn container_requests(doc: &Doc, c: &Value) -> Result<Resources, InputError> {
    let at = |m: String| err(doc.at(&m.split(':').next().unwrap_or("").to_string()), m);
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

fn array(v: Option<&Value>) -> impl Iterator<Item = &Value> {
    v.and_then(Value::as_array).into_iter().flatten()
}

fn node_selector(doc: &Doc, v: Option<&Value>) -> Result<Requirements, InputError> {
    let mut reqs = Requirements::default();
    let Some(map) = v.and_then(Value::as_object) else { return Ok(reqs) };
    for (k, val) in map {
        let value = val.as_str().map(str::to_string).unwrap_or_else(|| val.to_string());
        reqs.add(normalize(k), Requirement::is_in([value]));
    }
    let _ = doc;
    Ok(reqs)
}

/// A nodeSelectorTerm's matchExpressions (NewNodeSelectorRequirements, keys normalized).
pub fn expressions(doc: &Doc, exprs: Option<&Value>) -> Result<Requirements, InputError> {
    let mut reqs = Requirements::default();
    for e in array(exprs) {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let op = e.get("operator").and_then(Value::as_str).unwrap_or("");
        let values: Vec<String> = array(e.get("values")).map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())).collect();
        let req = Requirement::new(op, &values).ok_or_else(|| err(doc.at(&format!("operator: {op}")), format!("requirement on {key:?}: unknown operator {op:?} or missing integer value")))?;
        let req = Requirement { min_values: e.get("minValues").and_then(Value::as_u64).map(|n| n as usize), ..req };
        reqs.add(normalize(key), req);
    }
    Ok(reqs)
}

fn required_terms(doc: &Doc, spec: &Value) -> Result<Vec<Requirements>, InputError> {
    array(spec.pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms"))
        .map(|t| expressions(doc, t.get("matchExpressions")))
        .collect()
}

fn preferred_terms(doc: &Doc, spec: &Value) -> Result<Vec<Requirements>, InputError> {
    let mut terms: Vec<(i64, Requirements)> = array(spec.pointer("/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution"))
        .map(|t| Ok((t.get("weight").and_then(Value::as_i64).unwrap_or(0), expressions(doc, t.pointer("/preference/matchExpressions"))?)))
        .collect::<Result<_, InputError>>()?;
    // preferences.go sorts descending by weight (stable) and removes the heaviest first.
    terms.sort_by_key(|t| std::cmp::Reverse(t.0));
    Ok(terms.into_iter().map(|t| t.1).collect())
}

fn tolerations(spec: &Value) -> Vec<Toleration> {
    let s = |t: &Value, k: &str| t.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    array(spec.get("tolerations"))
        .map(|t| Toleration { key: s(t, "key"), operator: if s(t, "operator").is_empty() { "Equal".into() } else { s(t, "operator") }, value: s(t, "value"), effect: s(t, "effect") })
        .collect()
}
