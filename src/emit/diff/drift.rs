//! Part of the emit stage: what applying a change does to the nodes that already run. Karpenter marks a node
//! drifted, and replaces it, when its NodeClaim no longer matches the NodePool or node class it came from; this
//! decides that per node of the base, by Karpenter v1.14.1's rules, each cited where it is encoded:
//!
//! - the NodePool template hash: sigs.k8s.io/karpenter `pkg/apis/v1/nodepool.go` `NodePool.Hash` (hashstructure
//!   FormatV2 of `spec.template`, requirements ignored, slices as sets, zero values ignored), compared by
//!   `pkg/controllers/nodeclaim/disruption/drift.go` `areStaticFieldsDrifted` (the same hash version on both sides);
//! - requirements: drift.go `areRequirementsDrifted`, the NodeClaim's labels (`NewLabelRequirements`) `Compatible`
//!   with the head NodePool's requirements (`pkg/scheduling/requirements.go`, no undefined label allowed);
//! - the EC2NodeClass hash: karpenter-provider-aws `pkg/apis/v1/ec2nodeclass.go` `EC2NodeClass.Hash` (the spec but
//!   its selector terms, `ipPrefixCount` and `amiFamily`, plus the resolved AMI family and the cluster's CA bundle),
//!   compared by `pkg/cloudprovider/drift.go` `areStaticFieldsDrifted`;
//! - the provider's checks on resolved AWS state (`pkg/cloudprovider/drift.go`: AMI, security groups, subnets,
//!   capacity reservations, placement group): what the selector terms resolve to is account state, so a changed
//!   term is reported as a drift the terms cause unless they resolve to what the nodes already run, not proven.
//!
//! The first three are proven: `tests/conformance/drift.rs` compares every verdict with Karpenter's own controllers
//! (`conformance/karpenter/cmd/oracle/drift.go`). The objects are compared as the API server stores them (CRD
//! defaults applied, `Validator::defaulted`). The CA bundle is the same on both sides of a change, so it never
//! makes a difference here (an upgrade that changes it drifts every node: not a change to out/).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::simulate::instances::{TypeLabels, may_match, offerings};
use crate::simulate::manifests::{self, NodeClass, NodePool};
use crate::simulate::requirements::{Requirement, Requirements, WELL_KNOWN, normalize, offering_compatible};
use crate::validate::Validator;

/// The Karpenter release whose rules these are (the conformance harness's pinned modules).
pub const KARPENTER: &str = "v1.14.1";

/// Why a node drifts, in the order Karpenter checks (the first that holds is the reason its NodeClaim records).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriftRule {
    NodePoolHash,
    Requirements,
    NodeClassHash,
    Ami,
    SecurityGroups,
    Subnets,
    CapacityReservations,
    PlacementGroup,
    /// EKS Auto Mode's NodeClass: its drift rules are not public code; AWS documents that a changed NodeClass
    /// replaces its nodes (EKS User Guide, "Create a Node Class for Amazon EKS").
    AutoModeNodeClass,
}

impl DriftRule {
    /// The reason Karpenter writes on the NodeClaim's `Drifted` condition.
    pub fn reason(self) -> &'static str {
        match self {
            DriftRule::NodePoolHash => "NodePoolDrifted",
            DriftRule::Requirements => "RequirementsDrifted",
            DriftRule::NodeClassHash => "NodeClassDrift",
            DriftRule::Ami => "AMIDrift",
            DriftRule::SecurityGroups => "SecurityGroupDrift",
            DriftRule::Subnets => "SubnetDrift",
            DriftRule::CapacityReservations => "CapacityReservationDrift",
            DriftRule::PlacementGroup => "PlacementGroupDrift",
            DriftRule::AutoModeNodeClass => "NodeClassDrift",
        }
    }

    /// The upstream code the rule follows.
    pub fn source(self) -> &'static str {
        match self {
            DriftRule::NodePoolHash => "sigs.k8s.io/karpenter pkg/apis/v1/nodepool.go Hash, pkg/controllers/nodeclaim/disruption/drift.go areStaticFieldsDrifted",
            DriftRule::Requirements => "sigs.k8s.io/karpenter pkg/controllers/nodeclaim/disruption/drift.go areRequirementsDrifted",
            DriftRule::NodeClassHash => "karpenter-provider-aws pkg/apis/v1/ec2nodeclass.go Hash, pkg/cloudprovider/drift.go areStaticFieldsDrifted",
            DriftRule::Ami => "karpenter-provider-aws pkg/cloudprovider/drift.go isAMIDrifted",
            DriftRule::SecurityGroups => "karpenter-provider-aws pkg/cloudprovider/drift.go areSecurityGroupsDrifted",
            DriftRule::Subnets => "karpenter-provider-aws pkg/cloudprovider/drift.go isSubnetDrifted",
            DriftRule::CapacityReservations => "karpenter-provider-aws pkg/cloudprovider/drift.go isCapacityReservationDrifted",
            DriftRule::PlacementGroup => "karpenter-provider-aws pkg/cloudprovider/drift.go isPlacementGroupDrifted",
            DriftRule::AutoModeNodeClass => "EKS User Guide, \"Create a Node Class for Amazon EKS\" (not public code)",
        }
    }

    /// Whether the verdict is decided from the objects alone and checked against Karpenter's code; the others
    /// depend on what AWS resolves the terms to, or on code that is not public.
    pub fn proven(self) -> bool {
        matches!(self, DriftRule::NodePoolHash | DriftRule::Requirements | DriftRule::NodeClassHash)
    }
}

/// A NodePool and the node class it names, on one side of a change.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub pool: &'a Value,
    pub class: Option<&'a Value>,
}

/// A node the base could run: its offering, and the labels its NodeClaim carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub instance_type: String,
    pub zone: String,
    pub capacity_type: String,
    pub reservation_id: Option<String>,
    pub labels: BTreeMap<String, String>,
}

/// One change of a NodePool (and its class), its hashed fields compared once.
#[derive(Debug)]
pub struct Comparison {
    /// The fields of the template hash that differ (`spec.template.spec.expireAfter`, `…metadata.labels.team`).
    pub pool_fields: Vec<String>,
    /// The fields of the EC2NodeClass hash that differ; empty for an Auto Mode class.
    pub class_fields: Vec<String>,
    /// The provider's resolved-state checks the class's terms call for, with the fields behind each.
    pub resolved: Vec<(DriftRule, Vec<String>)>,
    /// A requirement names a label gpuplan's catalog does not carry ([`UNCARRIED_LABELS`]), or changes one whose
    /// value Karpenter drew: the requirement verdict is not proven.
    pub uncarried_labels: bool,
    head_requirements: Requirements,
}

/// Labels of instance-type data gpuplan's catalog does not carry (conformance/KNOWN_DIFFERENCES.md, "Instance-type
/// data"): a node's real value is unknown here, so a requirement on one is not judged.
pub const UNCARRIED_LABELS: &[&str] = &[
    "karpenter.k8s.aws/instance-hypervisor",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-ebs-bandwidth",
    "karpenter.k8s.aws/instance-network-bandwidth",
];

impl Comparison {
    pub fn new(base: Side, head: Side) -> Comparison {
        let defaulted = |v: &Value| Validator::builtin().defaulted(v);
        let (base_pool, head_pool) = (defaulted(base.pool), defaulted(head.pool));
        let pool_fields = differing(&template_hash_form(&base_pool), &template_hash_form(&head_pool), "spec.template");
        let (base_class, head_class) = (base.class.map(defaulted), head.class.map(defaulted));
        let (class_fields, resolved) = match (&base_class, &head_class) {
            (Some(b), Some(h)) if is_auto_mode_class(b) || is_auto_mode_class(h) => {
                let fields = differing(&hash_form(b.get("spec").unwrap_or(&Value::Null)), &hash_form(h.get("spec").unwrap_or(&Value::Null)), "spec");
                (Vec::new(), if fields.is_empty() { Vec::new() } else { vec![(DriftRule::AutoModeNodeClass, fields)] })
            }
            (Some(b), Some(h)) => (differing(&class_hash_form(b), &class_hash_form(h), ""), resolved_checks(b, h)),
            _ => (Vec::new(), Vec::new()),
        };
        let head_requirements = pool_requirements(&head_pool);
        let base_requirements = pool_requirements(&base_pool);
        // A custom label whose value Karpenter drew (an `In` list, a complement) is known here only as one the base
        // admits: a change of that requirement is not judged.
        let drawn = base_requirements.0.iter().any(|(k, r)| is_custom(k) && (r.complement || r.values.len() != 1) && head_requirements.get(k) != Some(r));
        let uncarried_labels = drawn || [&base_requirements, &head_requirements].iter().any(|r| r.0.keys().any(|k| UNCARRIED_LABELS.contains(&k.as_str())));
        Comparison { pool_fields, class_fields, resolved, uncarried_labels, head_requirements }
    }

    /// Every rule that drifts `node`, in Karpenter's order.
    pub fn rules(&self, node: &Node) -> Vec<DriftRule> {
        let mut rules = Vec::new();
        if !self.pool_fields.is_empty() {
            rules.push(DriftRule::NodePoolHash);
        }
        if self.requirement_mismatch(node).is_some() {
            rules.push(DriftRule::Requirements);
        }
        if !self.class_fields.is_empty() {
            rules.push(DriftRule::NodeClassHash);
        }
        for (rule, _) in &self.resolved {
            if *rule != DriftRule::CapacityReservations || node.capacity_type == "reserved" {
                rules.push(*rule);
            }
        }
        rules
    }

    /// drift.go `areRequirementsDrifted`: the first head requirement the node's labels do not satisfy.
    pub fn requirement_mismatch(&self, node: &Node) -> Option<String> {
        let mut labels = Requirements::default();
        for (k, v) in &node.labels {
            labels.add(k, Requirement::is_in([v.clone()]));
        }
        labels.compatible_strict(&self.head_requirements).err()
    }
}

/// Every node the base could have launched: each instance type its requirements admit (with the template labels
/// and the NodePool label, as `NewNodeClaimTemplate` folds them), in each zone and capacity type it is offered in
/// and the requirements allow, with the labels its NodeClaim gets.
pub fn base_nodes(base: Side, catalog: &Catalog, type_labels: &TypeLabels) -> Vec<Node> {
    let Some((pool, class)) = simulated(base) else { return Vec::new() };
    let pool_value = Validator::builtin().defaulted(base.pool);
    let claim_labels = claim_labels(&pool_value, &pool);
    let reservation = base.class.and_then(reservation_id);
    let mut nodes = Vec::new();
    for (i, it) in catalog.instance_types.iter().enumerate() {
        if !may_match(it, &pool.requirements) || (class.auto_mode && !crate::catalog::auto_mode::supports(it)) {
            continue;
        }
        let labels = type_labels.get(catalog, i);
        if labels.intersects(&pool.requirements).is_err() {
            continue;
        }
        for o in offerings(catalog, it, &class) {
            let ct = o.capacity_type.as_str();
            if !offering_compatible(&pool.requirements, &o.zone, ct) {
                continue;
            }
            let reserved = ct == "reserved";
            let resolved = resolved_labels(labels, &o.zone, ct, reserved.then(|| reservation.clone().unwrap_or_default()), class.auto_mode);
            // pkg/controllers/nodeclaim/lifecycle/launch.go PopulateNodeClaimDetails: the NodeClaim's own labels win.
            let labels = resolved.into_iter().chain(claim_labels.clone()).collect();
            nodes.push(Node { instance_type: it.name.clone(), zone: o.zone.clone(), capacity_type: ct.to_owned(), reservation_id: reserved.then(|| reservation.clone()).flatten(), labels });
        }
    }
    nodes
}

/// The base's NodePool and class as the simulator reads them.
fn simulated(base: Side) -> Option<(NodePool, NodeClass)> {
    let m = manifests::of_objects(std::iter::once(base.pool).chain(base.class)).ok()?;
    let pool = m.node_pools.into_iter().next()?;
    let class = m.node_classes.into_iter().find(|c| c.serves(&pool))?;
    Some((pool, class))
}

/// nodeclaimtemplate.go `NewNodeClaimTemplate` and `ToNodeClaim`: the template labels, the NodePool and node class
/// labels, and a label for every custom (not well-known) requirement (`resolveCustomLabelsFromRequirements`:
/// `Requirement.Any()`, one of an `In` list's values or a random integer the requirement admits). Which value Karpenter
/// drew is not known here: the label takes one the base admits, and [`Comparison`] marks a requirement verdict on such a
/// key not proven when the change touches it.
fn claim_labels(pool_value: &Value, pool: &NodePool) -> BTreeMap<String, String> {
    let mut labels = pool.labels.clone();
    labels.insert("karpenter.sh/nodepool".into(), pool.name.clone());
    let group = str_at(pool_value, "/spec/template/spec/nodeClassRef/group").unwrap_or_default();
    let kind = str_at(pool_value, "/spec/template/spec/nodeClassRef/kind").unwrap_or_default().to_ascii_lowercase();
    labels.insert(format!("{group}/{kind}"), pool.node_class.clone());
    for (key, req) in &pool_requirements(pool_value).0 {
        if is_custom(key) && !labels.contains_key(key)
            && let Some(value) = any_value(req)
        {
            labels.insert(key.clone(), value);
        }
    }
    labels
}

/// A label key that is neither well known nor Karpenter's or Kubernetes' own.
fn is_custom(key: &str) -> bool {
    !WELL_KNOWN.contains(&key) && !key.starts_with("karpenter.sh/") && !key.contains("kubernetes.io/") && !key.starts_with("karpenter.k8s.aws/")
}

/// requirement.go `Any`: a value the requirement admits (the first of an `In` list; for a complement, the first
/// integer within its bounds it does not exclude); none for `DoesNotExist`.
fn any_value(req: &Requirement) -> Option<String> {
    if !req.complement {
        return req.values.iter().next().cloned();
    }
    let from = req.gte.unwrap_or(0);
    (from..from.saturating_add(64)).map(|n| n.to_string()).find(|v| req.has(v))
}

/// karpenter-provider-aws `pkg/cloudprovider/cloudprovider.go` `instanceToNodeClaim`: the type's single-valued
/// labels but the reservation's, then the zone, the zone ID (the zone's name here, as the conformance oracle's
/// subnets have it: the real ID is the account's), the capacity type, the default tenancy and, when reserved, the
/// reservation's labels.
fn resolved_labels(type_labels: &Requirements, zone: &str, ct: &str, reservation: Option<String>, auto_mode: bool) -> BTreeMap<String, String> {
    const RESERVATION: [&str; 3] = ["karpenter.k8s.aws/capacity-reservation-id", "karpenter.k8s.aws/capacity-reservation-type", "karpenter.k8s.aws/capacity-reservation-interruptible"];
    let mut labels: BTreeMap<String, String> = type_labels
        .0
        .iter()
        // gpuplan's type labels carry Auto Mode's `eks.amazonaws.com/instance-*` twins, which only Auto Mode's nodes have.
        .filter(|(k, _)| !RESERVATION.contains(&k.as_str()) && (auto_mode || !k.starts_with("eks.amazonaws.com/")))
        .filter(|(_, r)| !r.complement && r.values.len() == 1 && r.gte.is_none() && r.lte.is_none())
        .map(|(k, r)| (k.clone(), r.values.iter().next().cloned().unwrap_or_default()))
        .collect();
    labels.insert("topology.kubernetes.io/zone".into(), zone.into());
    labels.insert("topology.k8s.aws/zone-id".into(), zone.into());
    labels.insert("karpenter.sh/capacity-type".into(), ct.into());
    labels.insert("karpenter.k8s.aws/instance-tenancy".into(), "default".into());
    if let Some(id) = reservation {
        labels.insert(RESERVATION[0].into(), id);
        labels.insert(RESERVATION[1].into(), "default".into());
        labels.insert(RESERVATION[2].into(), "false".into());
    }
    labels
}

/// The reservation a reserved node of the class runs in: the first reservation the class selects by ID.
fn reservation_id(class: &Value) -> Option<String> {
    class.pointer("/spec/capacityReservationSelectorTerms")?.as_array()?.iter().find_map(|t| t.get("id")?.as_str().map(str::to_owned))
}

/// `NewNodeSelectorRequirementsWithMinValues(spec.template.spec.requirements)`: keys normalized, one requirement
/// per key (repeats intersect).
fn pool_requirements(pool: &Value) -> Requirements {
    let mut reqs = Requirements::default();
    for r in pool.pointer("/spec/template/spec/requirements").and_then(Value::as_array).into_iter().flatten() {
        let (Some(key), Some(op)) = (r.get("key").and_then(Value::as_str), r.get("operator").and_then(Value::as_str)) else { continue };
        let values: Vec<String> = r.get("values").and_then(Value::as_array).into_iter().flatten().filter_map(|v| v.as_str().map(str::to_owned)).collect();
        if let Some(req) = Requirement::new(op, &values) {
            reqs.add(normalize(key), req);
        }
    }
    reqs
}

fn str_at<'v>(v: &'v Value, pointer: &str) -> Option<&'v str> {
    v.pointer(pointer).and_then(Value::as_str)
}

fn is_auto_mode_class(class: &Value) -> bool {
    class.get("apiVersion").and_then(Value::as_str).is_some_and(|a| a.starts_with("eks.amazonaws.com/"))
}

/// What `NodePool.Hash` reads of a defaulted NodePool, in the form hashstructure tells apart: the template's labels
/// and annotations (karpenter's `ObjectMeta` has no other field), taints, startup taints, node class reference and
/// the two durations; requirements are `hash:"ignore"` (pkg/apis/v1/nodeclaim.go).
fn template_hash_form(pool: &Value) -> Value {
    let template = pool.pointer("/spec/template").cloned().unwrap_or(Value::Null);
    let mut out = Map::new();
    for key in ["labels", "annotations"] {
        if let Some(v) = template.pointer(&format!("/metadata/{key}")) {
            out.insert(format!("metadata.{key}"), v.clone());
        }
    }
    let spec = template.get("spec").cloned().unwrap_or(Value::Null);
    for key in ["taints", "startupTaints", "nodeClassRef"] {
        if let Some(v) = spec.get(key) {
            out.insert(format!("spec.{key}"), without_empty_strings(v));
        }
    }
    // pkg/apis/v1/duration.go: `Never` is a nil duration, which hashes as no value; any other is its length.
    for key in ["expireAfter", "terminationGracePeriod"] {
        match spec.get(key).and_then(Value::as_str) {
            Some("Never") | None => {}
            Some(d) => {
                out.insert(format!("spec.{key}"), crate::profile::duration_seconds(d).map_or_else(|| Value::String(d.into()), Value::from));
            }
        }
    }
    hash_form(&Value::Object(out))
}

/// What `EC2NodeClass.Hash` reads of a defaulted EC2NodeClass: the spec without the fields tagged `hash:"ignore"`
/// (ec2nodeclass.go: the subnet, security group, capacity reservation and AMI selector terms, `ipPrefixCount`,
/// `amiFamily`), the resolved AMI family (`AMIFamily()`: the field, else the alias's family, else Custom), and the
/// Go fields that are not pointers without their zero values (`role`, `rootVolume`, network interface indices).
fn class_hash_form(class: &Value) -> Value {
    let mut spec = class.get("spec").and_then(Value::as_object).cloned().unwrap_or_default();
    let family = ami_family(&spec);
    for ignored in ["subnetSelectorTerms", "securityGroupSelectorTerms", "capacityReservationSelectorTerms", "ipPrefixCount", "amiSelectorTerms", "amiFamily"] {
        spec.remove(ignored);
    }
    if spec.get("role").is_some_and(|r| r == "") {
        spec.remove("role");
    }
    for (list, zero_fields) in [("blockDeviceMappings", &[("rootVolume", Value::Bool(false))][..]), ("networkInterfaces", &[("networkCardIndex", Value::from(0)), ("deviceIndex", Value::from(0)), ("interfaceType", Value::from(""))][..])] {
        if let Some(Value::Array(items)) = spec.get_mut(list) {
            for item in items.iter_mut().filter_map(Value::as_object_mut) {
                for (field, zero) in zero_fields {
                    if item.get(*field) == Some(zero) {
                        item.remove(*field);
                    }
                }
            }
        }
    }
    let mut out = Map::new();
    for (k, v) in spec {
        out.insert(format!("spec.{k}"), v);
    }
    out.insert("amiFamily (resolved)".into(), Value::String(family));
    hash_form(&Value::Object(out))
}

/// ec2nodeclass.go `AMIFamily`: `spec.amiFamily`, else the family of the first alias term (`AMIFamilyFromAlias`).
fn ami_family(spec: &Map<String, Value>) -> String {
    if let Some(f) = spec.get("amiFamily").and_then(Value::as_str) {
        return f.to_owned();
    }
    let alias = spec.get("amiSelectorTerms").and_then(Value::as_array).into_iter().flatten().find_map(|t| t.get("alias").and_then(Value::as_str));
    let Some(alias) = alias else { return "Custom".into() };
    match alias.split('@').next().unwrap_or_default() {
        "al2023" => "AL2023",
        "al2" => "AL2",
        "bottlerocket" => "Bottlerocket",
        "windows2019" => "Windows2019",
        "windows2022" => "Windows2022",
        "windows2025" => "Windows2025",
        _ => "Custom",
    }
    .into()
}

/// The provider's resolved-state checks a change of the class's terms calls for (pkg/cloudprovider/drift.go): each
/// term list compared as the API server stores it.
fn resolved_checks(base: &Value, head: &Value) -> Vec<(DriftRule, Vec<String>)> {
    let mut out = Vec::new();
    for (rule, field) in [
        (DriftRule::Ami, "amiSelectorTerms"),
        (DriftRule::SecurityGroups, "securityGroupSelectorTerms"),
        (DriftRule::Subnets, "subnetSelectorTerms"),
        (DriftRule::CapacityReservations, "capacityReservationSelectorTerms"),
        (DriftRule::PlacementGroup, "placementGroupSelector"),
    ] {
        let at = |v: &Value| v.pointer(&format!("/spec/{field}")).map(hash_form).unwrap_or(Value::Null);
        if at(base) != at(head) {
            out.push((rule, vec![format!("spec.{field}")]));
        }
    }
    out
}

/// A value as hashstructure (FormatV2, `SlicesAsSets`, `ZeroNil`) tells values apart: null is no value; key order
/// never counts; a list is a set whose elements' hashes are XORed, so order does not count and an element written
/// twice cancels out.
fn hash_form(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, Value> = m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, hash_form(v))).collect();
            Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
        Value::Array(items) => {
            let mut counts: BTreeMap<String, (usize, Value)> = BTreeMap::new();
            for item in items {
                let form = hash_form(item);
                counts.entry(form.to_string()).or_insert((0, form)).0 += 1;
            }
            Value::Array(counts.into_values().filter(|(n, _)| n % 2 == 1).map(|(_, v)| v).collect())
        }
        other => other.clone(),
    }
}

/// Strings that are empty dropped from objects (a Go `string` field's zero value is ignored by the hash).
fn without_empty_strings(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().filter(|(_, v)| v.as_str() != Some("")).map(|(k, v)| (k.clone(), without_empty_strings(v))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(without_empty_strings).collect()),
        other => other.clone(),
    }
}

/// The keys of two hash forms whose values differ, named under `prefix`; a map of labels, annotations or tags
/// names the key that differs.
fn differing(base: &Value, head: &Value, prefix: &str) -> Vec<String> {
    let empty = Map::new();
    let (b, h) = (base.as_object().unwrap_or(&empty), head.as_object().unwrap_or(&empty));
    let keys: std::collections::BTreeSet<&String> = b.keys().chain(h.keys()).collect();
    let mut out = Vec::new();
    for key in keys {
        let (bv, hv) = (b.get(key), h.get(key));
        if bv == hv {
            continue;
        }
        let name = if prefix.is_empty() || key.contains(' ') { key.clone() } else { format!("{prefix}.{key}") };
        match (bv, hv) {
            (Some(Value::Object(bm)), Some(Value::Object(hm))) if key.ends_with("labels") || key.ends_with("annotations") || key.ends_with("tags") => {
                let inner: std::collections::BTreeSet<&String> = bm.keys().chain(hm.keys()).collect();
                out.extend(inner.into_iter().filter(|k| bm.get(*k) != hm.get(*k)).map(|k| format!("{name}.{k}")));
            }
            _ => out.push(name),
        }
    }
    out
}

/// What applying the change does to one NodePool's running nodes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolDrift {
    pub cluster: String,
    pub nodepool: String,
    /// The node class the head NodePool names (`EC2NodeClass name`).
    pub node_class: String,
    /// Why nodes drift, in the order Karpenter checks; empty when none does.
    pub causes: Vec<DriftCause>,
    /// Of the (type, zone, capacity type) offerings the base could run, how many drift; `None` without a catalog.
    pub offerings_drifting: Option<usize>,
    pub offerings: Option<usize>,
    /// What the fields that drift nothing do to running nodes.
    pub effects: Vec<String>,
    /// Why the drift cannot finish (or cannot when a condition holds): `stuck`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stuck: Vec<super::stuck::StuckDrift>,
    /// The head's `expireAfter` (`720h` when left out): when its nodes leave at the latest.
    #[serde(skip)]
    pub expire_after: String,
    /// The roll replayed (`roll`): none when the drift cannot finish or no count of nodes is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roll: Option<super::roll::Roll>,
}

/// One rule that drifts nodes of the pool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftCause {
    pub rule: DriftRule,
    /// The reason Karpenter writes on the NodeClaim's `Drifted` condition.
    pub reason: &'static str,
    /// The fields that differ.
    pub fields: Vec<String>,
    /// Which nodes: "every node", or the types whose nodes drift.
    pub nodes: String,
    /// Decided from the objects and checked against Karpenter's code (`tests/conformance/drift.rs`); otherwise the
    /// verdict depends on what AWS resolves the terms to, or on code that is not public.
    pub proven: bool,
    /// Why it is not proven.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unproven: Option<String>,
    pub source: &'static str,
}

impl PoolDrift {
    /// Whether any running node is replaced.
    pub fn drifts(&self) -> bool {
        !self.causes.is_empty()
    }

    /// Whether the drift certainly cannot finish (given the pods as gpuplan places them).
    pub fn stuck(&self) -> bool {
        self.stuck.iter().any(|s| s.certain)
    }

    /// The one line a reviewer reads: `every node is replaced: spec.template.spec.expireAfter (NodePoolDrifted)`.
    pub fn sentence(&self) -> String {
        if self.causes.is_empty() {
            return format!("no node is replaced; {}", self.effects.join("; "));
        }
        let why: Vec<String> = self
            .causes
            .iter()
            .map(|c| format!("{} of {}: {} ({}{})", c.nodes, c.fields.join(", "), c.reason, c.rule_word(), if c.proven { "" } else { ", not proven" }))
            .collect();
        let share = match (self.offerings_drifting, self.offerings) {
            (Some(d), Some(n)) if n > 0 => format!(" ({d} of the {n} offerings it can run)"),
            _ => String::new(),
        };
        let stuck: Vec<String> = self.stuck.iter().map(|s| match &s.when {
            None => format!("; CANNOT FINISH: {}", s.why),
            Some(when) => format!("; cannot finish when {when}: {}", s.why),
        }).collect();
        let roll = self.roll.as_ref().map_or_else(String::new, |r| format!("; the roll: {} replaced, {} at once, {}, ${:.2} extra ({})", r.nodes_words(), r.at_once, r.duration_words(), r.extra_usd, r.source.words()));
        format!("nodes drift and are replaced{share}: {}{}{roll}", why.join("; "), stuck.concat())
    }
}

impl DriftCause {
    fn rule_word(&self) -> &'static str {
        match self.rule {
            DriftRule::NodePoolHash => "the NodePool template hash",
            DriftRule::Requirements => "the requirements no longer admit them",
            DriftRule::NodeClassHash => "the EC2NodeClass hash",
            DriftRule::Ami => "a new AMI, unless the terms resolve to the one the nodes run",
            DriftRule::SecurityGroups => "other security groups, unless the terms resolve to the same ones",
            DriftRule::Subnets => "a subnet the nodes are not in, unless the terms still select theirs",
            DriftRule::CapacityReservations => "reserved nodes outside the selected reservations",
            DriftRule::PlacementGroup => "another placement group",
            DriftRule::AutoModeNodeClass => "EKS Auto Mode's NodeClass, modeled from its documentation",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pool() -> Value {
        json!({
            "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
            "spec": {"template": {
                "metadata": {"labels": {"workload": "inference"}},
                "spec": {
                    "expireAfter": "720h",
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                    "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6e.xlarge", "g6e.2xlarge"]}],
                    "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}, {"key": "workload", "value": "inference", "effect": "NoSchedule"}]
                }
            }}
        })
    }

    fn class() -> Value {
        json!({
            "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "gpu"},
            "spec": {"role": "KarpenterNodeRole-demo", "amiSelectorTerms": [{"alias": "al2023@v20251023"}],
                "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
                "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]}
        })
    }

    fn node(instance_type: &str) -> Node {
        let labels = [("node.kubernetes.io/instance-type", instance_type), ("workload", "inference"), ("karpenter.sh/nodepool", "gpu")];
        Node { instance_type: instance_type.into(), zone: "us-east-1a".into(), capacity_type: "on-demand".into(), reservation_id: None, labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect() }
    }

    fn rules(head_pool: &Value, head_class: &Value, n: &Node) -> Vec<DriftRule> {
        let (p, c) = (pool(), class());
        Comparison::new(Side { pool: &p, class: Some(&c) }, Side { pool: head_pool, class: Some(head_class) }).rules(n)
    }

    // sigs.k8s.io/karpenter pkg/apis/v1/nodepool.go Hash: the template but its requirements; the expireAfter the
    // CRD defaults (720h) is the one written out.
    #[test]
    fn the_template_hash_covers_durations_and_taints_but_not_their_order() {
        let mut p = pool();
        p["spec"]["template"]["spec"]["expireAfter"] = json!("336h");
        assert_eq!(rules(&p, &class(), &node("g6e.xlarge")), vec![DriftRule::NodePoolHash]);
        let mut p = pool();
        p["spec"]["template"]["spec"].as_object_mut().unwrap().remove("expireAfter");
        assert!(rules(&p, &class(), &node("g6e.xlarge")).is_empty(), "the CRD's default is 720h");
        let mut p = pool();
        p["spec"]["template"]["spec"]["taints"].as_array_mut().unwrap().reverse();
        assert!(rules(&p, &class(), &node("g6e.xlarge")).is_empty(), "hashstructure SlicesAsSets");
        let mut p = pool();
        p["spec"]["limits"] = json!({"nvidia.com/gpu": "8"});
        p["spec"]["weight"] = json!(10);
        assert!(rules(&p, &class(), &node("g6e.xlarge")).is_empty(), "limits and weight are outside the template");
    }

    // hashstructure FormatV2 with SlicesAsSets XORs the elements' hashes: a taint written twice cancels out.
    #[test]
    fn a_list_element_written_twice_cancels_out() {
        let mut p = pool();
        let taints = p["spec"]["template"]["spec"]["taints"].as_array_mut().unwrap();
        let first = taints[0].clone();
        taints.push(first.clone());
        taints.push(first);
        assert!(rules(&p, &class(), &node("g6e.xlarge")).is_empty(), "three copies hash as one");
        let mut p = pool();
        let taints = p["spec"]["template"]["spec"]["taints"].as_array_mut().unwrap();
        let first = taints[0].clone();
        taints.push(first);
        assert_eq!(rules(&p, &class(), &node("g6e.xlarge")), vec![DriftRule::NodePoolHash], "two copies hash as none");
    }

    // pkg/controllers/nodeclaim/disruption/drift.go areRequirementsDrifted: only the nodes the new requirements
    // no longer admit drift.
    #[test]
    fn a_removed_type_drifts_only_its_nodes() {
        let mut p = pool();
        p["spec"]["template"]["spec"]["requirements"][0]["values"] = json!(["g6e.2xlarge"]);
        assert_eq!(rules(&p, &class(), &node("g6e.xlarge")), vec![DriftRule::Requirements]);
        assert!(rules(&p, &class(), &node("g6e.2xlarge")).is_empty());
        // A custom label the nodes do not carry is not satisfied (Compatible without AllowUndefined).
        let mut p = pool();
        p["spec"]["template"]["spec"]["requirements"].as_array_mut().unwrap().push(json!({"key": "example.com/team", "operator": "Exists"}));
        assert_eq!(rules(&p, &class(), &node("g6e.2xlarge")), vec![DriftRule::Requirements]);
    }

    // karpenter-provider-aws pkg/apis/v1/ec2nodeclass.go Hash: the role is hashed, the AMI terms are not (the AMI
    // family they resolve to is); pkg/cloudprovider/drift.go isAMIDrifted decides a new alias release.
    #[test]
    fn the_class_hash_covers_the_role_and_the_ami_family_not_the_alias_release() {
        let mut c = class();
        c["spec"]["role"] = json!("KarpenterNodeRole-other");
        assert_eq!(rules(&pool(), &c, &node("g6e.xlarge")), vec![DriftRule::NodeClassHash]);
        let mut c = class();
        c["spec"]["amiSelectorTerms"] = json!([{"alias": "al2023@v20251111"}]);
        assert_eq!(rules(&pool(), &c, &node("g6e.xlarge")), vec![DriftRule::Ami]);
        let mut c = class();
        c["spec"]["amiSelectorTerms"] = json!([{"alias": "bottlerocket@latest"}]);
        assert_eq!(rules(&pool(), &c, &node("g6e.xlarge")), vec![DriftRule::NodeClassHash, DriftRule::Ami]);
        let mut c = class();
        c["spec"]["subnetSelectorTerms"] = json!([{"tags": {"karpenter.sh/discovery": "other"}}]);
        assert_eq!(rules(&pool(), &c, &node("g6e.xlarge")), vec![DriftRule::Subnets]);
        assert!(!DriftRule::Subnets.proven() && DriftRule::NodeClassHash.proven());
    }
}
