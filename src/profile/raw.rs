//! `kubelet { … }` and `raw "<Kind>" "<YAML>"`: what a pool's nodes are configured with beyond what gpuplan sizes.
//!
//! - `kubelet` is the EC2NodeClass's `spec.kubelet` (karpenter-provider-aws v1.14.1 `pkg/apis/v1/ec2nodeclass.go`
//!   `KubeletConfiguration`), written per pool: pools with different settings get different classes. Its fields
//!   change a node's allocatable (maxPods, podsPerCore, kubeReserved, systemReserved, evictionHard: `types.go`
//!   `NewInstanceType`), which compile's workload-fit check reads from the rendered class with the simulator's
//!   `simulate::instances::allocatable`, the one copy of that formula.
//! - `raw` carries an object fragment verbatim: compile merges it into the rendered object of its kind with RFC 7386
//!   merge-patch semantics (maps merge key by key, lists and scalars replace, `null` deletes), and the merged object
//!   is validated against the CRD like every object. A fragment may not touch what gpuplan computes or what a
//!   setting says ([`owner`]): that would silently break the cost bound, reachability or the setting.

use kdl::{KdlNode, KdlValue};
use serde_json::{Map, Value};

use super::parser::{args, Parser};
use super::{schema, Profile, Settings, Tier};
use crate::diagnostic::ErrorCode;
use crate::diagnostic::Spanned;

/// The kinds a `raw` fragment may patch: the pool's NodePool (pool or tier level), its node class (pool level, or
/// cluster level for every class of the profile).
pub const RAW_KINDS: [&str; 3] = ["NodePool", "EC2NodeClass", "NodeClass"];

/// One `raw "<Kind>" "<YAML>"` line: the fragment, parsed, as a JSON merge patch.
#[derive(Debug, Clone, PartialEq)]
pub struct Raw {
    pub kind: String,
    pub patch: Value,
}

/// Fields gpuplan writes from a setting or computes, per kind, as dotted paths (a `*` segment is any key with that
/// prefix), with the setting to use instead. A raw fragment touching one of these is E0312.
const OWNED: &[(&str, &str, &str)] = &[
    ("*", "apiVersion", "the object's kind and version are gpuplan's"),
    ("*", "kind", "the object's kind and version are gpuplan's"),
    ("*", "metadata.name", "the name is the pool's (NodePool) or gpuplan's class name"),
    ("*", "metadata.annotations.gpuplan.dev/*", "gpuplan's annotations record provenance and the budget: adopt and diff read them"),
    ("*", "metadata.labels.app.kubernetes.io/managed-by", "gpuplan's ownership label"),
    ("NodePool", "spec.template.spec.requirements", "`require`, `types`, `families`, `gpu { }`, `arch`, `capacity`, `zones`: the instance types are what the cost bound is computed over"),
    ("NodePool", "spec.template.spec.taints", "`taint` / `accelerator-taint`: the taints decide which pods reach the pool"),
    ("NodePool", "spec.template.spec.nodeClassRef", "the pool's class is gpuplan's: patch it with raw \"EC2NodeClass\""),
    ("NodePool", "spec.template.metadata.labels", "`label`: the gpuplan.dev/pool label is how workloads select the pool"),
    ("NodePool", "spec.limits", "`max-accelerators`, `max-cpu`, `limits`: the limits are the cost bound"),
    ("NodePool", "spec.weight", "`weight`: gpuplan keeps the cluster's weights distinct"),
    ("NodePool", "spec.replicas", "`static replicas=`: a static pool's nodes are billed whatever the pods, and the cost bound counts them"),
    ("NodePool", "spec.disruption", "`disruption { }`"),
    ("NodePool", "spec.template.spec.expireAfter", "`disruption { expire-after }`"),
    ("NodePool", "spec.template.spec.kubelet", "`kubelet { }`: karpenter.sh/v1 NodePools have no kubelet field (the API server drops it); Karpenter v1 reads kubelet settings from the EC2NodeClass, where `kubelet` renders them"),
    ("NodePool", "spec.template.spec.terminationGracePeriod", "`disruption { termination-grace-period }` (it sizes the drain peak)"),
    ("EC2NodeClass", "spec.role", "`node-role`"),
    ("EC2NodeClass", "spec.instanceProfile", "`instance-profile`"),
    ("EC2NodeClass", "spec.kubelet", "`kubelet { }` (its settings change allocatable, which compile checks workloads against)"),
    ("EC2NodeClass", "spec.userData", "`user-data` (gpuplan's Bottlerocket time-slicing settings follow it)"),
    ("EC2NodeClass", "spec.capacityReservationSelectorTerms", "`reserved { }`: a reservation's cost is counted in the bound"),
    ("EC2NodeClass", "spec.instanceStorePolicy", "`scratch`"),
    ("EC2NodeClass", "spec.tags.gpuplan.dev/*", "gpuplan's tags"),
    ("NodeClass", "spec.role", "`node-role`"),
    ("NodeClass", "spec.instanceProfile", "`node-role`: an EKS Auto Mode NodeClass names its nodes by role (E0317)"),
    ("NodeClass", "spec.ephemeralStorage.size", "`ephemeral-storage`"),
    ("NodeClass", "spec.capacityReservationSelectorTerms", "`reserved { }`: a reservation's cost is counted in the bound"),
    ("NodeClass", "spec.tags.gpuplan.dev/*", "gpuplan's tags"),
];

/// The profile's `raw` fragments of `kind`, each once (a pool's fragments are inherited by its tiers), the cluster
/// block's first; the tiers `skip` holds for leave theirs out.
pub fn fragments_once<'p>(profile: &'p Profile, kind: &str, skip: impl Fn(&Tier) -> bool) -> Vec<&'p Spanned<Raw>> {
    let tiers = profile.pools.iter().flat_map(|p| &p.tiers).filter(|t| !skip(t)).flat_map(|t| &t.settings.raws);
    let mut out: Vec<&Spanned<Raw>> = Vec::new();
    for raw in profile.cluster.raws.iter().chain(tiers).filter(|r| r.kind == kind) {
        if !out.iter().any(|r| r.span == raw.span) {
            out.push(raw);
        }
    }
    out
}

/// Dotted paths of a fragment's leaves (and of each `null`, which deletes): `spec.template.spec.startupTaints`.
/// Lists are leaves: a merge patch replaces them whole.
pub fn leaf_paths(value: &Value, prefix: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                leaf_paths(v, &if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

/// The owned field a leaf path falls under (or that falls under it: `spec: null` deletes them all), with what to
/// use instead.
pub fn owner(kind: &str, path: &str) -> Option<(&'static str, &'static str)> {
    OWNED.iter().filter(|(k, _, _)| *k == "*" || *k == kind).find_map(|(_, owned, instead)| {
        let hit = match owned.strip_suffix('*') {
            Some(stem) => path.starts_with(stem) || stem.starts_with(&format!("{path}.")),
            None => path == *owned || path.starts_with(&format!("{owned}.")) || owned.starts_with(&format!("{path}.")),
        };
        hit.then_some((*owned, *instead))
    })
}

/// RFC 7386 JSON merge patch: `patch`'s maps merge into `target`'s key by key, `null` removes a key, anything
/// else (lists, scalars) replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let map = target.as_object_mut().expect("made an object above");
    for (k, v) in patch {
        if v.is_null() {
            map.remove(k);
        } else {
            merge_patch(map.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// JSON pointers (`/spec/kubelet/maxPods`) of a fragment's leaves, for pointing a validation error back at it.
pub fn leaf_pointers(patch: &Value) -> Vec<String> {
    let mut paths = Vec::new();
    pointers(patch, "", &mut paths);
    paths
}

fn pointers(value: &Value, prefix: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                pointers(v, &format!("{prefix}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

/// `kubelet` children: KDL name → (CRD field, value shape).
const KUBELET: &[(&str, &str, Shape)] = &[
    ("max-pods", "maxPods", Shape::Count),
    ("pods-per-core", "podsPerCore", Shape::Count),
    ("system-reserved", "systemReserved", Shape::Quantities),
    ("kube-reserved", "kubeReserved", Shape::Quantities),
    ("eviction-hard", "evictionHard", Shape::Quantities),
    ("eviction-soft", "evictionSoft", Shape::Quantities),
    ("eviction-soft-grace-period", "evictionSoftGracePeriod", Shape::Quantities),
    ("eviction-max-pod-grace-period", "evictionMaxPodGracePeriod", Shape::Count),
    ("image-gc-high-threshold-percent", "imageGCHighThresholdPercent", Shape::Count),
    ("image-gc-low-threshold-percent", "imageGCLowThresholdPercent", Shape::Count),
    ("cpu-cfs-quota", "cpuCFSQuota", Shape::Bool),
    ("cluster-dns", "clusterDNS", Shape::Strings),
];

/// The KDL names of `kubelet`'s children (for the schema and "did you mean").
pub fn kubelet_names() -> Vec<&'static str> {
    KUBELET.iter().map(|(n, _, _)| *n).collect()
}

/// The `kubelet` child for a CRD field (adopt writes them back).
pub fn kubelet_name(field: &str) -> Option<&'static str> {
    KUBELET.iter().find(|(_, f, _)| *f == field).map(|(n, _, _)| *n)
}

#[derive(Clone, Copy)]
enum Shape {
    /// A non-negative int32 (the CRD's `minimum: 0`, `format: int32`).
    Count,
    /// `key="value"` properties: resource or signal → quantity, percentage or duration (the CRD's CEL rules check
    /// the keys).
    Quantities,
    Bool,
    Strings,
}

impl Parser<'_> {
    /// `kubelet { max-pods 110; kube-reserved cpu="200m" memory="100Mi"; … }` → `Settings::kubelet`, the CRD's
    /// field names and shapes; a tier's block replaces its pool's.
    pub(super) fn apply_kubelet(&mut self, node: &KdlNode, s: &mut Settings) {
        self.check_entries(node, &[], 0);
        let mut fields = Map::new();
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            self.no_children(child);
            let name = child.name().value();
            let Some((_, field, shape)) = KUBELET.iter().find(|(n, _, _)| *n == name) else {
                self.unknown_node(child, &schema::names("kubelet"), "`kubelet`");
                continue;
            };
            if let Some(value) = self.kubelet_value(child, *shape) {
                fields.insert(field.to_string(), value);
            }
        }
        s.kubelet = Some(Spanned::new(fields, self.span(node.span())));
    }

    fn kubelet_value(&mut self, child: &KdlNode, shape: Shape) -> Option<Value> {
        let what = format!("`{}`", child.name().value());
        match shape {
            Shape::Count => {
                self.check_entries(child, &[], 1);
                let entry = args(child).next().or_else(|| {
                    self.error(self.span(child.span()), ErrorCode::E0107, format!("{what} needs a value"), format!("write {} 110", child.name().value()));
                    None
                })?;
                self.expect_integer(entry, &what, 0, i128::from(i32::MAX)).map(|v| Value::from(v.value as i64))
            }
            Shape::Bool => {
                self.check_entries(child, &[], 1);
                let entry = args(child).next()?;
                self.expect_bool(entry, &what).map(|v| Value::Bool(v.value))
            }
            Shape::Strings => Some(Value::Array(self.strings(child).into_iter().map(|s| Value::String(s.value)).collect())),
            Shape::Quantities => {
                let mut map = Map::new();
                for entry in child.entries() {
                    let Some(key) = entry.name() else {
                        self.error(self.span(entry.span()), ErrorCode::E0104, format!("{what} takes key=\"value\" properties, not arguments"), "write memory.available=\"5%\"");
                        continue;
                    };
                    let value = match entry.value() {
                        KdlValue::String(s) => s.clone(),
                        KdlValue::Integer(i) => i.to_string(),
                        _ => {
                            self.expect_string(entry, &format!("{what} {}", key.value()));
                            continue;
                        }
                    };
                    map.insert(key.value().to_string(), Value::String(value));
                }
                if map.is_empty() {
                    let example = format!("{} memory=\"100Mi\"", child.name().value());
                    self.error(self.span(child.span()), ErrorCode::E0107, format!("{what} needs key=\"value\" properties"), format!("write {example}"));
                    return None;
                }
                Some(Value::Object(map))
            }
        }
    }

    /// `raw "<Kind>" "<YAML>"`: E0310 for a kind that is not patchable here, E0311 for a fragment that is not a
    /// YAML mapping, E0312 for one that touches a field gpuplan owns ([`owner`]).
    pub(super) fn parse_raw(&mut self, node: &KdlNode, kinds: &[&str]) -> Option<Spanned<Raw>> {
        self.check_entries(node, &[], 2);
        let span = self.span(node.span());
        let mut entries = args(node);
        let (Some(kind), Some(text)) = (entries.next(), entries.next()) else {
            self.error(span, ErrorCode::E0107, "`raw` needs a kind and a YAML fragment", "write raw \"NodePool\" \"spec: {template: {spec: {startupTaints: [{key: example.com/init, effect: NoSchedule}]}}}\"");
            return None;
        };
        let kind = self.expect_string(kind, "the raw kind")?;
        let text = self.expect_string(text, "the raw YAML fragment")?;
        if !kinds.contains(&kind.value.as_str()) {
            let help = format!("a raw fragment here patches one of: {}", kinds.join(", "));
            self.error(kind.span, ErrorCode::E0310, format!("`raw` cannot patch a `{}` here", crate::input::excerpt(&kind.value)), help);
            return None;
        }
        let patch = match serde_saphyr::from_str::<Value>(&text.value) {
            Ok(v @ Value::Object(_)) => v,
            Ok(other) => {
                let found = match other { Value::Null => "nothing", Value::Array(_) => "a list", _ => "a scalar" };
                self.error(text.span, ErrorCode::E0311, format!("the raw {} fragment must be a YAML mapping, found {found}", kind.value), "write the object's fields from its top: spec: { … }");
                return None;
            }
            Err(err) => {
                let message = format!("the raw {} fragment is not YAML: {}", kind.value, crate::input::excerpt(&err.to_string()));
                self.error(text.span, ErrorCode::E0311, message, "write a YAML mapping (a KDL raw string #\"\"\" … \"\"\"# keeps it verbatim)");
                return None;
            }
        };
        let mut leaves = Vec::new();
        leaf_paths(&patch, "", &mut leaves);
        for leaf in &leaves {
            if let Some((owned, instead)) = owner(&kind.value, leaf) {
                let message = format!("the raw {} fragment sets `{leaf}`, which gpuplan writes itself (`{owned}`)", kind.value);
                self.error_labelled(text.span, ErrorCode::E0312, message, "raw fragment", &format!("say it with {instead}"));
                return None;
            }
        }
        Some(Spanned::new(Raw { kind: kind.value, patch }, span))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_merges_maps_and_replaces_lists_as_rfc_7386_says() {
        // RFC 7386 section 3's example.
        let mut target = json!({"title": "Goodbye!", "author": {"givenName": "John", "familyName": "Doe"}, "tags": ["example", "sample"], "content": "x"});
        merge_patch(&mut target, &json!({"title": "Hello!", "phoneNumber": "+01-123-456-7890", "author": {"familyName": null}, "tags": ["example"]}));
        assert_eq!(target, json!({"title": "Hello!", "author": {"givenName": "John"}, "tags": ["example"], "content": "x", "phoneNumber": "+01-123-456-7890"}));
    }

    #[test]
    fn kubelet_children_are_the_schema_tables() {
        assert_eq!(kubelet_names(), crate::profile::schema::names("kubelet"));
    }

    #[test]
    fn owner_names_the_owned_field_above_below_or_at_a_leaf() {
        assert_eq!(owner("NodePool", "spec.template.spec.requirements").map(|o| o.0), Some("spec.template.spec.requirements"));
        assert_eq!(owner("NodePool", "spec.limits.cpu").map(|o| o.0), Some("spec.limits"));
        assert_eq!(owner("NodePool", "spec").map(|o| o.0), Some("spec.template.spec.requirements"), "spec: null deletes owned fields");
        assert_eq!(owner("EC2NodeClass", "spec.tags.gpuplan.dev/cluster").map(|o| o.0), Some("spec.tags.gpuplan.dev/*"));
        assert_eq!(owner("NodePool", "spec.template.spec.startupTaints"), None);
        assert_eq!(owner("EC2NodeClass", "spec.blockDeviceMappings"), None);
        assert_eq!(owner("EC2NodeClass", "spec.tags.team"), None);
    }
}
