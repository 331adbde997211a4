//! Pods input: Pod, Deployment, StatefulSet, ReplicaSet (replicas × template), Job (parallelism); other kinds are
//! ignored. Requests follow Kubernetes (`k8s.io/component-helpers/resource` `PodRequests`, which Karpenter's
//! `resources.RequestsForPods` calls): a container's request defaults to its limit; the pod's request is the larger of
//! the containers' sum and the largest init container, plus overhead. Requirements follow kubernetes-sigs/karpenter
//! `pkg/scheduling/requirements.go` `newPodRequirements`: nodeSelector, the heaviest preferred term and the *first*
//! required nodeSelectorTerm; the rest are kept for relaxation (`provisioning/scheduling/preferences.go`).

use serde_json::Value;

use super::requirements::{normalize, Requirement, Requirements, Toleration};
use super::yaml::{err, list, map, resources, string, Doc, InputError, Resources};

/// The default cap on pods per simulation: far above a cluster's GPU pods, far below what would exhaust a CI
/// runner (a Deployment with `replicas: 2000000000` allocated 6 GiB before it was capped).
pub const DEFAULT_MAX_PODS: u64 = 100_000;

/// The environment variable that changes the cap.
pub const MAX_PODS_ENV: &str = "GPUPLAN_MAX_PODS";

/// One pod to schedule.
#[derive(Debug, Clone)]
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
}

/// Reads pods from documents; replicas of a workload are `namespace/W-i`.
pub fn pods(docs: &[Doc]) -> Result<Vec<Pod>, InputError> {
    let cap = crate::input::env_limit(MAX_PODS_ENV, DEFAULT_MAX_PODS).map_err(|e| err(MAX_PODS_ENV.to_string(), e.to_string()))?;
    let mut out = Vec::new();
    let mut total: u64 = 0;
    for doc in docs {
        let (copies, spec, prefix) = match doc.kind() {
            "Pod" => (None, doc.value.get("spec"), "spec"),
            "Deployment" | "StatefulSet" | "ReplicaSet" => (Some(int(doc, "replicas", 1)?), template_spec(doc), "spec.template.spec"),
            "Job" => (Some(int(doc, "parallelism", 1)?), template_spec(doc), "spec.template.spec"),
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
        let template = pod_from_spec(doc, spec, prefix)?;
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

fn pod_from_spec(doc: &Doc, spec: &Value, prefix: &str) -> Result<Pod, InputError> {
    Ok(Pod {
        key: String::new(),
        requests: requests(doc, spec, prefix)?,
        node_selector: node_selector(doc, spec.get("nodeSelector"), prefix)?,
        required_terms: required_terms(doc, spec)?,
        preferred_terms: preferred_terms(doc, spec)?,
        tolerations: tolerations(doc, spec, prefix)?,
    })
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
