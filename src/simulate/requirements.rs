//! Node selector requirements and taints, as Karpenter compares them.
//!
//! Follows kubernetes-sigs/karpenter `pkg/scheduling/requirement.go` (a requirement is a value set that may be a
//! complement, with optional integer bounds), `pkg/scheduling/requirements.go` (`Compatible`: a custom label the
//! NodePool does not define is denied unless the pod says NotIn/DoesNotExist; well-known labels may be undefined;
//! `Intersects`: every shared key must intersect), `pkg/scheduling/taints.go` (`Tolerates`: every taint, whatever
//! its effect, needs a toleration; startup taints are not checked) and `pkg/apis/v1/labels.go` (`NormalizedLabels`,
//! the deprecated aliases pod requirements are translated from; `WellKnownLabels`). The AWS labels come from
//! aws/karpenter-provider-aws `pkg/apis/v1/labels.go`.

use std::collections::{BTreeMap, BTreeSet};

/// Label keys a pod may constrain although a NodePool does not define them (Karpenter's `WellKnownLabels`, core and
/// AWS provider): `AllowUndefinedWellKnownLabels`.
pub const WELL_KNOWN: &[&str] = &[
    "karpenter.sh/nodepool",
    "karpenter.sh/capacity-type",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "node.kubernetes.io/windows-build",
    "topology.k8s.aws/zone-id",
    "karpenter.k8s.aws/instance-hypervisor",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-local-nvme",
    "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-ebs-bandwidth",
    "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-capability-flex",
    "karpenter.k8s.aws/capacity-reservation-id",
    "karpenter.k8s.aws/capacity-reservation-type",
];

/// Deprecated label keys Karpenter translates in pod requirements (`NormalizedLabels`).
pub fn normalize(key: &str) -> &str {
    match key {
        "failure-domain.beta.kubernetes.io/zone" => "topology.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region" => "topology.kubernetes.io/region",
        "beta.kubernetes.io/arch" => "kubernetes.io/arch",
        "beta.kubernetes.io/os" => "kubernetes.io/os",
        "beta.kubernetes.io/instance-type" => "node.kubernetes.io/instance-type",
        other => other,
    }
}

/// One key's allowed values: `values` (or everything but them when `complement`), within integer bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub complement: bool,
    pub values: BTreeSet<String>,
    pub gte: Option<i64>,
    pub lte: Option<i64>,
    pub min_values: Option<usize>,
}

impl Requirement {
    /// From a node selector operator (In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte); None for others.
    pub fn new(operator: &str, values: &[String]) -> Option<Requirement> {
        let set = |c: bool, v: &[String]| Requirement { complement: c, values: v.iter().cloned().collect(), gte: None, lte: None, min_values: None };
        let bound = |v: &[String]| v.first().and_then(|s| s.parse::<i64>().ok());
        Some(match operator {
            "In" => set(false, values),
            "NotIn" => set(true, values),
            "Exists" => set(true, &[]),
            "DoesNotExist" => set(false, &[]),
            "Gt" => Requirement { gte: Some(bound(values)? + 1), ..set(true, &[]) },
            "Lt" => Requirement { lte: Some(bound(values)? - 1), ..set(true, &[]) },
            "Gte" => Requirement { gte: Some(bound(values)?), ..set(true, &[]) },
            "Lte" => Requirement { lte: Some(bound(values)?), ..set(true, &[]) },
            _ => return None,
        })
    }

    pub fn is_in(values: impl IntoIterator<Item = String>) -> Requirement {
        Requirement { complement: false, values: values.into_iter().collect(), gte: None, lte: None, min_values: None }
    }

    /// The operator this requirement amounts to (requirement.go `Operator`).
    pub fn operator(&self) -> &'static str {
        match (self.complement, self.values.is_empty()) {
            (true, false) => "NotIn",
            (true, true) => "Exists",
            (false, false) => "In",
            (false, true) => "DoesNotExist",
        }
    }

    fn within(&self, value: &str, gte: Option<i64>, lte: Option<i64>) -> bool {
        if gte.is_none() && lte.is_none() {
            return true;
        }
        let Ok(v) = value.parse::<i64>() else { return false };
        gte.is_none_or(|g| v >= g) && lte.is_none_or(|l| v <= l)
    }

    /// True when the value is allowed.
    pub fn has(&self, value: &str) -> bool {
        self.values.contains(value) != self.complement && self.within(value, self.gte, self.lte)
    }

    /// requirement.go `HasIntersection`.
    pub fn intersects(&self, other: &Requirement) -> bool {
        let gte = max_opt(self.gte, other.gte);
        let lte = min_opt(self.lte, other.lte);
        if let (Some(g), Some(l)) = (gte, lte)
            && g > l {
                return false;
            }
        match (self.complement, other.complement) {
            (true, true) => true,
            (true, false) => other.values.iter().any(|v| !self.values.contains(v) && self.within(v, gte, lte)),
            (false, true) => self.values.iter().any(|v| !other.values.contains(v) && self.within(v, gte, lte)),
            (false, false) => self.values.iter().any(|v| other.values.contains(v) && self.within(v, gte, lte)),
        }
    }

    /// requirement.go `Intersection`.
    pub fn intersection(&self, other: &Requirement) -> Requirement {
        let gte = max_opt(self.gte, other.gte);
        let lte = min_opt(self.lte, other.lte);
        let min_values = max_opt(self.min_values, other.min_values);
        if let (Some(g), Some(l)) = (gte, lte)
            && g > l {
                return Requirement { complement: false, values: BTreeSet::new(), gte: None, lte: None, min_values };
            }
        let (complement, values): (bool, BTreeSet<String>) = match (self.complement, other.complement) {
            (true, true) => (true, self.values.union(&other.values).cloned().collect()),
            (true, false) => (false, other.values.difference(&self.values).cloned().collect()),
            (false, true) => (false, self.values.difference(&other.values).cloned().collect()),
            (false, false) => (false, self.values.intersection(&other.values).cloned().collect()),
        };
        let values = if complement { values } else { values.into_iter().filter(|v| self.within(v, gte, lte)).collect() };
        Requirement { complement, values, gte, lte, min_values }
    }

    /// A short human form for reasons: `In [a b]`, `Exists`, `> 3`.
    pub fn describe(&self) -> String {
        let mut text = self.operator().to_string();
        if !self.values.is_empty() {
            text.push_str(&format!(" [{}]", self.values.iter().cloned().collect::<Vec<_>>().join(" ")));
        }
        if let Some(g) = self.gte {
            text.push_str(&format!(" >={g}"));
        }
        if let Some(l) = self.lte {
            text.push_str(&format!(" <={l}"));
        }
        text
    }
}

fn max_opt<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn min_opt<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A set of requirements keyed by label (requirements.go `Requirements`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirements(pub BTreeMap<String, Requirement>);

impl Requirements {
    /// Adds (intersects) a requirement.
    pub fn add(&mut self, key: &str, req: Requirement) {
        let merged = match self.0.get(key) {
            Some(existing) => existing.intersection(&req),
            None => req,
        };
        self.0.insert(key.to_string(), merged);
    }

    pub fn merged(&self, other: &Requirements) -> Requirements {
        let mut out = self.clone();
        for (k, r) in &other.0 {
            out.add(k, r.clone());
        }
        out
    }

    pub fn get(&self, key: &str) -> Option<&Requirement> {
        self.0.get(key)
    }

    /// requirements.go `Compatible` with `AllowUndefinedWellKnownLabels`: Err names the first offending key.
    pub fn compatible(&self, incoming: &Requirements) -> Result<(), String> {
        self.compatible_with(incoming, true)
    }

    /// `Compatible` without `AllowUndefinedWellKnownLabels`: a well-known label these requirements leave undefined is
    /// an error too. What topologynodefilter.go `Matches` does: it calls `matchesRequirements(requirements)` without
    /// the options its caller passed (sigs.k8s.io/karpenter v1.14.1 topologynodefilter.go:71), so a spread
    /// constraint whose pod selects `kubernetes.io/arch` counts no pod on a NodeClaim that leaves arch open.
    pub fn compatible_strict(&self, incoming: &Requirements) -> Result<(), String> {
        self.compatible_with(incoming, false)
    }

    fn compatible_with(&self, incoming: &Requirements, allow_undefined_well_known: bool) -> Result<(), String> {
        // EKS Auto Mode's Karpenter knows its `eks.amazonaws.com/instance-*` twins of the well-known labels (EKS User
        // Guide, "EKS Auto Mode Supported" labels); its NodePools carry `eks.amazonaws.com/compute-type`.
        let auto_mode = self.0.contains_key(crate::catalog::auto_mode::COMPUTE_TYPE_LABEL);
        let auto_mode_well_known = |key: &str| auto_mode && crate::catalog::auto_mode::karpenter_label(key).is_some_and(|k| WELL_KNOWN.contains(&k.as_str()));
        for (key, req) in &incoming.0 {
            let well_known = WELL_KNOWN.contains(&key.as_str()) || auto_mode_well_known(key);
            if (allow_undefined_well_known && well_known) || self.0.contains_key(key) || matches!(req.operator(), "NotIn" | "DoesNotExist") {
                continue;
            }
            return Err(format!("label {key:?} does not have known values"));
        }
        self.intersects(incoming)
    }

    /// requirements.go `Intersects`: Err names the first key whose values do not intersect.
    pub fn intersects(&self, incoming: &Requirements) -> Result<(), String> {
        for (key, theirs) in &incoming.0 {
            let Some(ours) = self.0.get(key) else { continue };
            if ours.intersects(theirs) {
                continue;
            }
            let negative = |r: &Requirement| matches!(r.operator(), "NotIn" | "DoesNotExist");
            if negative(theirs) && negative(ours) {
                continue;
            }
            return Err(format!("key {key}, {} not in {}", theirs.describe(), ours.describe()));
        }
        Ok(())
    }

    pub fn has_min_values(&self) -> bool {
        self.0.values().any(|r| r.min_values.is_some())
    }
}

/// A taint (NodePool `spec.template.spec.taints`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taint {
    pub key: String,
    pub value: String,
    pub effect: String,
}

impl Taint {
    pub fn describe(&self) -> String {
        if self.value.is_empty() { format!("{}:{}", self.key, self.effect) } else { format!("{}={}:{}", self.key, self.value, self.effect) }
    }
}

/// A pod toleration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toleration {
    pub key: String,
    /// "Equal" (default) or "Exists".
    pub operator: String,
    pub value: String,
    /// Empty matches every effect.
    pub effect: String,
}

impl Toleration {
    /// Tolerates every PreferNoSchedule taint: what preferences.go `toleratePreferNoScheduleTaints` adds to a pod
    /// (in `Relax`, and always for daemon pods in scheduler.go `isDaemonPodCompatible`).
    pub fn prefer_no_schedule() -> Toleration {
        Toleration { key: String::new(), operator: "Exists".into(), value: String::new(), effect: "PreferNoSchedule".into() }
    }

    /// The value as written out: none for `Exists`, which matches every value of the key.
    fn written_value(&self) -> Option<&str> {
        (self.operator != "Exists").then_some(self.value.as_str())
    }

    /// k8s.io/api core/v1 `Toleration.ToleratesTaint`: effects match when equal or the toleration's is empty; an
    /// empty key matches every key; `Exists` ignores the value, `Equal` (or no operator) compares it, and any other
    /// operator tolerates nothing.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if !self.effect.is_empty() && self.effect != taint.effect {
            return false;
        }
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        match self.operator.as_str() {
            "Exists" => true,
            "" | "Equal" => self.value == taint.value,
            _ => false,
        }
    }
}

/// How gpuplan writes a toleration (explain's `placement`, a ResourceFlavor's `tolerations`): key, operator, value,
/// effect, the value left out of an `Exists` toleration (it matches any value) and written for every other, even
/// empty.
impl serde::Serialize for Toleration {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let value = self.written_value();
        let mut out = serializer.serialize_struct("Toleration", if value.is_some() { 4 } else { 3 })?;
        out.serialize_field("key", &self.key)?;
        out.serialize_field("operator", &self.operator)?;
        match value {
            Some(v) => out.serialize_field("value", v)?,
            None => out.skip_field("value")?,
        }
        out.serialize_field("effect", &self.effect)?;
        out.end()
    }
}

/// `{key: k, operator: Equal, value: v, effect: NoSchedule}`: how explain and the ops annotations print it.
impl std::fmt::Display for Toleration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = self.written_value().map(|v| format!(", value: {v}")).unwrap_or_default();
        write!(f, "{{key: {}, operator: {}{value}, effect: {}}}", self.key, self.operator, self.effect)
    }
}

/// taints.go `Tolerates`: the first taint no toleration matches.
pub fn untolerated<'a>(taints: &'a [Taint], tolerations: &[Toleration]) -> Option<&'a Taint> {
    taints.iter().find(|t| !tolerations.iter().any(|tol| tol.tolerates(t)))
}

/// An offering's zone and capacity type against the requirements (offering requirements are those two labels).
pub fn offering_compatible(reqs: &Requirements, zone: &str, capacity_type: &str) -> bool {
    reqs.get("topology.kubernetes.io/zone").is_none_or(|r| r.has(zone)) && reqs.get("karpenter.sh/capacity-type").is_none_or(|r| r.has(capacity_type))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(op: &str, v: &[&str]) -> Requirement {
        Requirement::new(op, &v.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    // kubernetes-sigs/karpenter pkg/scheduling/requirement_test.go: Gt/Lt bounds, NotIn vs In.
    #[test]
    fn intersections_follow_requirement_go() {
        assert!(r("Gt", &["3"]).intersects(&r("In", &["4"])));
        assert!(!r("Gt", &["3"]).intersects(&r("In", &["3"])));
        assert!(!r("Gt", &["5"]).intersects(&r("Lt", &["6"])));
        assert!(r("NotIn", &["a"]).intersects(&r("In", &["a", "b"])));
        assert!(!r("NotIn", &["a"]).intersects(&r("In", &["a"])));
        assert!(!r("DoesNotExist", &[]).intersects(&r("Exists", &[])));
        assert_eq!(r("In", &["a", "b"]).intersection(&r("NotIn", &["a"])).values.len(), 1);
    }

    // pkg/scheduling/requirements_test.go: a custom label the NodePool does not define is denied, unless the pod's
    // operator is NotIn or DoesNotExist; a well-known label may be undefined.
    #[test]
    fn undefined_custom_labels_are_denied() {
        let pool = Requirements::default();
        let mut pod = Requirements::default();
        pod.add("team", r("In", &["a"]));
        assert!(pool.compatible(&pod).unwrap_err().contains("does not have known values"));
        let mut pod = Requirements::default();
        pod.add("team", r("NotIn", &["a"]));
        assert!(pool.compatible(&pod).is_ok());
        let mut pod = Requirements::default();
        pod.add("topology.kubernetes.io/zone", r("In", &["us-east-1a"]));
        assert!(pool.compatible(&pod).is_ok());
    }

    // pkg/scheduling/taints_test.go and k8s ToleratesTaint: Exists with an empty key tolerates everything; Equal
    // compares values; an effect narrows.
    #[test]
    fn tolerations() {
        let taint = Taint { key: "k".into(), value: "v".into(), effect: "NoSchedule".into() };
        let tol = |k: &str, op: &str, v: &str, e: &str| Toleration { key: k.into(), operator: op.into(), value: v.into(), effect: e.into() };
        assert!(tol("", "Exists", "", "").tolerates(&taint));
        assert!(tol("k", "Equal", "v", "").tolerates(&taint));
        assert!(!tol("k", "Equal", "w", "").tolerates(&taint));
        assert!(!tol("k", "Exists", "", "NoExecute").tolerates(&taint));
    }
}
