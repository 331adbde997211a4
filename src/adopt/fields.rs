//! `adopt`'s field-by-field verification: every behaviour field of each original NodePool and node class compared
//! with what compiling the adopted profiles writes, both read at Karpenter's defaults, each difference named by what
//! the adoption already says (a warning, a profile line's provenance, the pool report's types) or left unexplained.
//!
//! Pairs: an original NodePool and the compiled NodePool of its name, with the tier NodePools gpuplan compiles for
//! it (labelled `gpuplan.dev/pool: <name>`, e.g. a reservation's `<name>-reserved`); the original's node class (by
//! its `nodeClassRef`) and the compiled class the compiled NodePool's `nodeClassRef` names.
//!
//! Normalisation, so that only behaviour differs:
//! - defaults: a missing field reads as the CRD's default (aws/karpenter-provider-aws v1.14.1
//!   `pkg/apis/crds/karpenter.sh_nodepools.yaml` and `karpenter.k8s.aws_ec2nodeclasses.yaml`, copied to
//!   /work/shared/schemas/karpenter; see [`nodepool_defaults`], [`class_defaults`]);
//! - quantities by value (`1k` = `1000`, [`crate::simulate::yaml::nano`]), durations by value (`168h0m0s` = `168h`);
//! - lists as sets of items; requirements by key (operator, values as a set, minValues); taints by (key, value,
//!   effect); labels and tags as maps;
//! - the requirements that select instance types (every key [`requirements::label`] evaluates on the catalog, among
//!   them the `instance-type` / `instance-family` lists gpuplan pins its selection with) as the set of catalog types
//!   each side admits ([`nodepool::matching`]); capacity types and zones as the sets they admit.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{json, Value};

use super::model::{AdoptedPool, AdoptedProfile, Line};
use super::pool_report::PoolReport;
use super::requirements::{self, capacity_types, zones, Requirement};
use super::Adoption;
use crate::catalog::Catalog;
use crate::compile::Compilation;

/// One behaviour field that differs between an original object and its compiled counterpart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// `NodePool/<name>` or `EC2NodeClass/<name>` (`NodeClass/<name>` on Auto Mode): the original's.
    pub object: String,
    /// `spec.…`, dotted; a requirement as `spec.template.spec.requirements[<key>]`, a taint as `…taints[key=value:effect]`.
    pub field: String,
    /// The value at Karpenter's default ("absent" when the field has none and is not set).
    pub before: String,
    pub after: String,
    /// What of the adoption names this change; None: nothing does (report it as a gpuplan bug).
    pub reason: Option<String>,
}

impl FieldChange {
    pub fn explained(&self) -> bool {
        self.reason.is_some()
    }
}

/// Every field change of the adoption, originals in input order.
pub fn compare(adoption: &Adoption, compiled: &Compilation, pool_reports: &[PoolReport]) -> Vec<FieldChange> {
    let mut out = Vec::new();
    let mut classes_done = BTreeSet::new();
    for np in &adoption.node_pools {
        let tier_of = np.object["spec"]["template"]["metadata"]["labels"][crate::solve::POOL_LABEL].as_str();
        let Some((profile, pool)) = adopted_pool(adoption, np, tier_of) else { continue };
        // The cluster's objects: two clusters' NodePools and classes may share names.
        let rendered = compiled.manifests_of(&profile.cluster.name);
        let Some(catalog) = adoption.catalogs.get(&profile.cluster.region).or_else(|| adoption.catalogs.values().next()) else { continue };
        let Some(twin) = rendered.iter().find(|m| m.kind() == "NodePool" && m.object["metadata"]["name"] == np.name.as_str()) else { continue };
        // Tiers gpuplan compiles for this pool, unless an original NodePool of that name is their counterpart.
        let tiers: Vec<&Value> = rendered
            .iter()
            .filter(|m| m.kind() == "NodePool" && m.object["spec"]["template"]["metadata"]["labels"][crate::solve::POOL_LABEL] == np.name.as_str())
            .filter(|m| m.object["metadata"]["name"] != np.name.as_str() && !adoption.node_pools.iter().any(|o| m.object["metadata"]["name"] == o.name.as_str()))
            .map(|m| &m.object)
            .collect();
        let names = Names { warnings: &adoption.warnings, cluster_from: Some(&profile.cluster.from), pool, report: pool_reports.iter().find(|r| r.node_pool == np.name) };
        let object = format!("NodePool/{}", np.name);
        let reserves = adoption.node_classes.iter().any(|c| np.object["spec"]["template"]["spec"]["nodeClassRef"]["name"] == c.name.as_str() && c.object["spec"]["capacityReservationSelectorTerms"].as_array().is_some_and(|t| !t.is_empty()));
        let mut diff = Diff { object: object.clone(), names: &names, out: Vec::new(), reserves };
        node_pool(&np.object, &twin.object, &tiers, catalog, &mut diff);
        out.append(&mut diff.out);
        // The original's class and the compiled NodePool's.
        let class_of = |v: &Value| v["spec"]["template"]["spec"]["nodeClassRef"]["name"].as_str().map(str::to_string);
        let dir = |file: &str| std::path::Path::new(file).parent().map(std::path::Path::to_path_buf);
        let named: Vec<&super::read::Doc> = class_of(&np.object).map(|c| adoption.node_classes.iter().filter(|d| d.name == c).collect()).unwrap_or_default();
        let Some(original_class) = named.iter().find(|d| dir(&d.file) == dir(&np.file)).or(named.first()).copied() else { continue };
        let Some(compiled_class) = class_of(&twin.object).and_then(|c| rendered.iter().find(|m| m.kind() == original_class.kind && m.object["metadata"]["name"] == c.as_str())) else { continue };
        if !classes_done.insert((original_class.file.clone(), original_class.name.clone(), profile.cluster.name.clone(), compiled_class.object["metadata"]["name"].to_string())) {
            continue;
        }
        let tier_classes: Vec<&Value> = tiers.iter().filter_map(|t| class_of(t)).filter_map(|c| rendered.iter().find(|m| m.kind() == original_class.kind && m.object["metadata"]["name"] == c.as_str())).map(|m| &m.object).collect();
        let mut diff = Diff { object: format!("{}/{}", original_class.kind, original_class.name), names: &names, out: Vec::new(), reserves };
        node_class(&original_class.object, &compiled_class.object, &tier_classes, &mut diff);
        out.append(&mut diff.out);
    }
    out
}

/// The adopted profile and pool of an original NodePool (its own, or the pool it is a gpuplan tier of): by name, and
/// by the file the pool came from where NodePools of several clusters share the name.
fn adopted_pool<'a>(adoption: &'a Adoption, np: &super::read::Doc, tier_of: Option<&str>) -> Option<(&'a AdoptedProfile, Option<&'a AdoptedPool>)> {
    let find = |name: Option<&str>| {
        let all: Vec<(&AdoptedProfile, &AdoptedPool)> = adoption.profiles.iter().flat_map(|p| p.pools.iter().filter(|x| Some(x.name.as_str()) == name).map(move |x| (p, x))).collect();
        all.iter().find(|(_, x)| x.from.contains(&np.file)).or(all.first()).map(|(p, x)| (*p, Some(*x)))
    };
    find(Some(np.name.as_str())).or_else(|| find(tier_of))
}

/// NodePool spec defaults (karpenter.sh_nodepools.yaml, v1.14.1): `spec.disruption` defaults to `{consolidateAfter:
/// 0s}`, `consolidationPolicy` to `WhenEmptyOrUnderutilized`, `budgets` to `[{nodes: 10%}]` (and a budget's `nodes`
/// to `10%`); `spec.template.spec.expireAfter` to `720h`. `weight` has none (absent). "When replicas is set,
/// ConsolidationPolicy [and ConsolidateAfter are] simply ignored" (the same file): a static pool's are left out.
pub fn nodepool_defaults(np: &Value) -> Value {
    let mut spec = np["spec"].clone();
    if !spec.is_object() {
        spec = json!({});
    }
    let disruption = &mut spec["disruption"];
    if !disruption.is_object() {
        *disruption = json!({});
    }
    for (key, default) in [("consolidateAfter", json!("0s")), ("consolidationPolicy", json!("WhenEmptyOrUnderutilized")), ("budgets", json!([{ "nodes": "10%" }]))] {
        if disruption[key].is_null() {
            disruption[key] = default;
        }
    }
    if let Some(budgets) = disruption["budgets"].as_array_mut() {
        for b in budgets.iter_mut().filter(|b| b.is_object() && b["nodes"].is_null()) {
            b["nodes"] = json!("10%");
        }
    }
    if !spec["replicas"].is_null()
        && let Some(d) = spec["disruption"].as_object_mut() {
            d.remove("consolidationPolicy");
            d.remove("consolidateAfter");
        }
    if spec["template"]["spec"].is_object() && spec["template"]["spec"]["expireAfter"].is_null() {
        spec["template"]["spec"]["expireAfter"] = json!("720h");
    }
    spec
}

/// Node class spec defaults. EC2NodeClass (karpenter.k8s.aws_ec2nodeclasses.yaml, v1.14.1): `metadataOptions`
/// defaults to `{httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 1, httpTokens:
/// required}`, each field to the same when the object is given. EKS Auto Mode NodeClass (`eks.amazonaws.com/v1`,
/// no CRD among the schemas: AWS EKS User Guide, "Create a Node Class for Amazon EKS", `ephemeralStorage`;
/// gpuplan's `src/crds/eks/eks.amazonaws.com_nodeclasses.yaml` is written from it, its minimums being the defaults):
/// `size: 80Gi`, `iops: 3000`, `throughput: 125`.
pub fn class_defaults(class: &Value) -> Value {
    let mut spec = class["spec"].clone();
    if !spec.is_object() {
        spec = json!({});
    }
    let (field, defaults) = if class["kind"] == "NodeClass" {
        ("ephemeralStorage", json!({ "size": "80Gi", "iops": 3000, "throughput": 125 }))
    } else {
        ("metadataOptions", json!({ "httpEndpoint": "enabled", "httpProtocolIPv6": "disabled", "httpPutResponseHopLimit": 1, "httpTokens": "required" }))
    };
    if !spec[field].is_object() {
        spec[field] = json!({});
    }
    for (k, v) in defaults.as_object().into_iter().flatten() {
        if spec[field][k].is_null() {
            spec[field][k] = v.clone();
        }
    }
    if let Some(user_data) = spec["userData"].as_str() {
        spec["userData"] = json!(user_data_normalised(user_data));
    }
    spec
}

/// userData as the node reads it: trailing spaces and (outside a MIME multi-part document, whose blank lines
/// separate headers from bodies) blank lines do not change a TOML, YAML or shell document.
fn user_data_normalised(text: &str) -> String {
    let mime = text.contains("MIME-Version");
    text.lines().map(str::trim_end).filter(|l| mime || !l.is_empty()).collect::<Vec<_>>().join("\n")
}

/// Compares a NodePool (and the tiers compiled for it) field by field.
fn node_pool(original: &Value, twin: &Value, tiers: &[&Value], catalog: &Catalog, diff: &mut Diff) {
    let (mut before, mut after) = (nodepool_defaults(original), nodepool_defaults(twin));
    for spec in [&mut before, &mut after] {
        if let Some(t) = spec["template"]["spec"].as_object_mut() {
            t.remove("requirements");
            t.remove("taints");
            t.remove("startupTaints");
        }
    }
    if before["template"]["spec"]["nodeClassRef"].is_null() {
        // The API server requires one: a fragment of a NodePool, whose pool launches with its profile's class.
        if let Some(t) = after["template"]["spec"].as_object_mut() {
            t.remove("nodeClassRef");
        }
        diff.push_with("spec.template.spec.nodeClassRef", None, Some(&twin["spec"]["template"]["spec"]["nodeClassRef"]), Some("the original names no node class (the API server requires spec.template.spec.nodeClassRef): the adopted pool launches with its profile's".into()));
    }
    diff.walk("spec", Some(&before), Some(&after));
    for list in ["taints", "startupTaints"] {
        taints(list, original, twin, diff);
    }
    let mut sides: Vec<&Value> = vec![twin];
    sides.extend(tiers);
    requirement_changes(original, &sides, catalog, diff);
    for tier in tiers {
        let name = tier["metadata"]["name"].as_str().unwrap_or_default();
        let suffix = name.rsplit('-').next().unwrap_or_default();
        // The profile line the tier comes from (`reserved { … }` compiles to `<pool>-reserved`).
        let line = diff.names.pool.and_then(|p| all_lines(&p.lines).into_iter().find(|l| l.kdl.split_whitespace().next() == Some(suffix)));
        let reason = line.map(|l| format!("adopt's `{}` ({}) compiles to a tier NodePool of its own, {name}; with it the pool admits the original's capacity types and types", l.kdl.trim_end_matches(" {"), l.from));
        diff.push_with(&format!("(tier NodePool {name})"), None, Some(&json!(name)), reason);
    }
}

/// Taints (or startup taints) as a set of (key, value, effect): one change per taint only one side has.
fn taints(list: &str, original: &Value, twin: &Value, diff: &mut Diff) {
    let set = |v: &Value| -> BTreeSet<String> {
        v["spec"]["template"]["spec"][list]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                let value = t["value"].as_str().filter(|v| !v.is_empty()).map(|v| format!("={v}")).unwrap_or_default();
                format!("{}{value}:{}", t["key"].as_str().unwrap_or_default(), t["effect"].as_str().unwrap_or_default())
            })
            .collect()
    };
    let (before, after) = (set(original), set(twin));
    for t in before.symmetric_difference(&after) {
        let present = json!("present");
        let (b, a) = if before.contains(t) { (Some(&present), None) } else { (None, Some(&present)) };
        diff.push(&format!("spec.template.spec.{list}[{t}]"), b, a);
    }
}

/// Requirements by key. Those that select instance types compare as the set of catalog types each side admits
/// (the tiers' together), capacity types and zones as the sets they admit, `kubernetes.io/os` as the Linux EKS
/// runs, minValues by key, every other key as (operator, values) written.
fn requirement_changes(original: &Value, sides: &[&Value], catalog: &Catalog, diff: &mut Diff) {
    let before = requirements::requirements(original);
    let after: Vec<Vec<Requirement>> = sides.iter().map(|s| requirements::requirements(s)).collect();
    let field = |key: &str| format!("spec.template.spec.requirements[{key}]");
    let type_key = |key: &str| catalog.instance_types.first().is_some_and(|t| requirements::label(t, key).is_some());
    // The types each side admits.
    let names = |ts: Vec<&crate::catalog::InstanceType>| ts.into_iter().map(|t| t.name.clone()).collect::<BTreeSet<_>>();
    let types_before = names(super::nodepool::matching(original, catalog));
    let types_after: BTreeSet<String> = sides.iter().flat_map(|s| names(super::nodepool::matching(s, catalog))).collect();
    if types_before != types_after {
        let added: Vec<&String> = types_after.difference(&types_before).collect();
        let removed: Vec<&String> = types_before.difference(&types_after).collect();
        let unlisted: Vec<&&String> = added.iter().chain(&removed).filter(|t| !diff.names.report.is_some_and(|r| r.types_added.contains(t) || r.types_removed.contains(t))).collect();
        let listed = unlisted.is_empty();
        let mut after_text = format!("{} types (+{} −{})", types_after.len(), list(&added), list(&removed));
        if !listed {
            after_text.push_str(&format!("; the pool report does not list {}", list(&unlisted)));
        }
        let reason = listed.then(|| "the pool report lists the types added and removed".to_string());
        diff.push_text("spec.template.spec.requirements (instance types admitted)", &format!("{} types", types_before.len()), &after_text, reason);
    }
    // `reserved` launches only from a reservation the node class selects (aws/karpenter-provider-aws v1.14.1
    // `pkg/providers/instance/instance.go`, see `requirements::capacity_types`): admitted without one, it is not.
    let reserves = diff.reserves;
    let capacity = |rs: &[Requirement]| capacity_types(rs).into_iter().filter(|c| reserves || *c != crate::catalog::CapacityType::Reserved).map(|c| c.as_str().to_string()).collect::<BTreeSet<_>>();
    let (cb, ca) = (capacity(&before), after.iter().flat_map(|rs| capacity(rs)).collect::<BTreeSet<_>>());
    if cb != ca {
        diff.push_text(&field("karpenter.sh/capacity-type"), &list(&cb), &list(&ca), None);
    }
    let zone_set = |rs: &[Requirement]| -> BTreeSet<String> {
        let z = zones(rs);
        if z.is_empty() { catalog.zones.iter().cloned().collect() } else { z.into_iter().collect() }
    };
    let (zb, za) = (zone_set(&before), after.iter().flat_map(|rs| zone_set(rs)).collect::<BTreeSet<_>>());
    if zb != za {
        diff.push_text(&field("topology.kubernetes.io/zone"), &list(&zb), &list(&za), None);
    }
    let keys: BTreeSet<&str> = before.iter().chain(after.iter().flatten()).map(|r| r.key.as_str()).collect();
    for key in keys {
        let of = |rs: &[Requirement]| rs.iter().filter(|r| r.key == key).cloned().collect::<Vec<_>>();
        let (b, a): (Vec<Requirement>, Vec<Requirement>) = (of(&before), of(&after[0]));
        let min = |rs: &[Requirement]| rs.iter().filter_map(|r| r.min_values).max();
        if min(&b) != min(&a) {
            let show = |m: Option<u64>| m.map_or("absent".to_string(), |m| m.to_string());
            diff.push_text(&format!("{}.minValues", field(key)), &show(min(&b)), &show(min(&a)), None);
        }
        if type_key(key) || matches!(key, "karpenter.sh/capacity-type" | "topology.kubernetes.io/zone") {
            continue;
        }
        let (wb, wa) = (written(&b), written(&a));
        if wb != wa {
            let linux = key == "kubernetes.io/os" && ((b.is_empty() && wa == "In [linux]") || (a.is_empty() && wb == "In [linux]"));
            let reason = linux.then(|| "EKS nodes Karpenter launches run Linux only: `kubernetes.io/os In [linux]` admits every node the original does".to_string());
            diff.push_text(&field(key), &wb, &wa, reason);
        }
    }
}

/// Requirements on one key as written: `Op [values…]` each, values as a set; "absent" when there are none.
fn written(rs: &[Requirement]) -> String {
    if rs.is_empty() {
        return "absent".into();
    }
    let mut parts: Vec<String> = rs.iter().map(|r| format!("{} {}", r.operator, list(r.values.iter().collect::<BTreeSet<_>>()))).collect();
    parts.sort();
    parts.join("; ")
}

fn list<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    format!("[{}]", items.into_iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", "))
}

/// Compares a node class field by field; reservations against the tiers' classes too (a reserved tier launches
/// from a class of its own).
fn node_class(original: &Value, twin: &Value, tier_classes: &[&Value], diff: &mut Diff) {
    let (before, mut after) = (class_defaults(original), class_defaults(twin));
    let reservations = "capacityReservationSelectorTerms";
    let mut terms: Vec<Value> = after[reservations].as_array().cloned().unwrap_or_default();
    for c in tier_classes {
        terms.extend(c["spec"][reservations].as_array().cloned().unwrap_or_default());
    }
    if !terms.is_empty() {
        after[reservations] = Value::Array(terms);
    }
    diff.walk("spec", Some(&before), Some(&after));
}

/// What names a change: the adoption's warnings, its profile lines' provenance, gpuplan's own metadata.
#[derive(Default)]
struct Names<'a> {
    warnings: &'a [super::model::Warning],
    /// The adopted profile's cluster block provenance, per setting.
    cluster_from: Option<&'a BTreeMap<&'static str, String>>,
    pool: Option<&'a AdoptedPool>,
    report: Option<&'a PoolReport>,
}

impl Names<'_> {
    /// Why `field` of `object` changed, if the adoption says so. A profile line's provenance names a change where
    /// the original lacks the field (the line then says what gpuplan wrote instead: "no spec.weight", "absent,
    /// chosen by adopt", "gpuplan's default") or where it quotes the original's value it replaced ("spec.weight 10,
    /// shared with …: made distinct"); a warning names its field and everything under it.
    fn reason(&self, object: &str, field: &str, before: Option<&str>) -> Option<String> {
        if let Some(own) = gpuplan_own(field) {
            return Some(own);
        }
        let warned = self.warnings.iter().find(|w| {
            w.object == object && !w.message.contains("carried verbatim") && (field == w.field || field.strip_prefix(w.field.as_str()).is_some_and(|rest| rest.starts_with(['.', '['])))
        });
        if let Some(w) = warned {
            return Some(format!("adopt's warning: {} {}", w.field, w.message));
        }
        let says = |from: &str| from.contains(object) && before.map_or(names_field(from, field), |b| names_field(from, &format!("{field} {b}")));
        let pool_lines = self.pool.map(|p| all_lines(&p.lines)).unwrap_or_default();
        if let Some(line) = pool_lines.into_iter().find(|l| says(&l.from)) {
            return Some(format!("the adopted profile's `{}` ({})", line.kdl.trim_end_matches(" {"), line.from));
        }
        self.cluster_from.into_iter().flatten().find(|(_, from)| says(from)).map(|(key, from)| format!("the adopted profile's cluster `{}` ({from})", key.replace('_', "-")))
    }
}

/// gpuplan's own marks: its pool label and taint, its tags, its managed-by label.
fn gpuplan_own(field: &str) -> Option<String> {
    let own = field.contains("gpuplan.dev/") || field.ends_with(".app.kubernetes.io/managed-by");
    own.then(|| "gpuplan's own metadata (how it finds and attributes the objects it writes)".to_string())
}

/// A line and its children, depth first.
fn all_lines(lines: &[Line]) -> Vec<&Line> {
    lines.iter().flat_map(|l| std::iter::once(l).chain(all_lines(&l.children))).collect()
}

/// Whether a provenance text names `field` as a whole (not a longer field it is a prefix of).
fn names_field(text: &str, field: &str) -> bool {
    text.match_indices(field).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + field.len()..].chars().next();
        matches!(before, None | Some(' ' | '(' | '"')) && !after.is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '[' | '/' | '-' | '_'))
    })
}

/// The changes of one object.
struct Diff<'a> {
    object: String,
    names: &'a Names<'a>,
    out: Vec<FieldChange>,
    /// The original NodePool's node class selects capacity reservations.
    reserves: bool,
}

impl Diff<'_> {
    /// Compares two values at `field`: objects key by key, lists as sets of items, scalars by value.
    fn walk(&mut self, field: &str, before: Option<&Value>, after: Option<&Value>) {
        let (before, after) = (before.filter(|v| !v.is_null()), after.filter(|v| !v.is_null()));
        let object = |v: Option<&Value>| v.is_none_or(Value::is_object);
        if object(before) && object(after) && (before.is_some() || after.is_some()) {
            let keys: BTreeSet<&String> = [before, after].into_iter().flatten().filter_map(Value::as_object).flat_map(|m| m.keys()).collect();
            for k in keys {
                self.walk(&format!("{field}.{k}"), before.map(|b| &b[k.as_str()]), after.map(|a| &a[k.as_str()]));
            }
        } else if !same(field, before, after) {
            self.push(field, before, after);
        }
    }

    fn push(&mut self, field: &str, before: Option<&Value>, after: Option<&Value>) {
        self.push_with(field, before, after, None);
    }

    fn push_with(&mut self, field: &str, before: Option<&Value>, after: Option<&Value>, reason: Option<String>) {
        let shown = before.filter(|v| !v.is_null()).map(|v| show(Some(v)));
        let reason = reason.or_else(|| self.names.reason(&self.object, field, shown.as_deref()));
        self.out.push(FieldChange { object: self.object.clone(), field: field.to_string(), before: show(before), after: show(after), reason });
    }

    fn push_text(&mut self, field: &str, before: &str, after: &str, reason: Option<String>) {
        let reason = reason.or_else(|| self.names.reason(&self.object, field, (before != "absent").then_some(before)));
        self.out.push(FieldChange { object: self.object.clone(), field: field.to_string(), before: before.to_string(), after: after.to_string(), reason });
    }
}

fn show(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "absent".into(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// Whether two values of `field` mean the same: lists as sets of items, quantities and durations by value except
/// in free-form maps (labels, annotations, tags: `1.0` is not `1` there) and userData.
fn same(field: &str, before: Option<&Value>, after: Option<&Value>) -> bool {
    let literal = [".labels.", ".annotations.", ".tags.", "userData"].iter().any(|f| field.contains(f));
    canonical(before.unwrap_or(&Value::Null), literal) == canonical(after.unwrap_or(&Value::Null), literal)
}

/// A value in a form where equal meanings are equal: object keys sorted, lists sorted (as sets), quantities in
/// nanos, durations in seconds, numbers as text.
fn canonical(v: &Value, literal: bool) -> String {
    match v {
        Value::Object(m) => {
            let inner: BTreeMap<&String, String> = m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, canonical(v, literal || k == "tags" || k == "labels"))).collect();
            format!("{{{}}}", inner.iter().map(|(k, v)| format!("{k}:{v}")).collect::<Vec<_>>().join(","))
        }
        Value::Array(a) => {
            let mut items: Vec<String> = a.iter().map(|v| canonical(v, literal)).collect();
            items.sort();
            items.dedup();
            format!("[{}]", items.join(","))
        }
        Value::Null => "absent".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) if literal => n.to_string(),
        Value::Number(n) => crate::simulate::yaml::nano(&n.to_string()).map_or(n.to_string(), |q| format!("q{q}")),
        Value::String(s) if literal => s.clone(),
        Value::String(s) => seconds(s).map(|d| format!("d{d}")).or_else(|| crate::simulate::yaml::nano(s).map(|q| format!("q{q}"))).unwrap_or_else(|| s.clone()),
    }
}

/// Seconds in a Go duration of h, m and s parts, as Karpenter's durations are written (`168h0m0s`) and the profile
/// reads them; None for anything else (a bare number is a quantity, not a duration).
fn seconds(s: &str) -> Option<u32> {
    crate::profile::duration_seconds(s)
}

/// The changes per object, for the text and markdown reports: each with its reason, or "not named".
pub fn render(fields: &[FieldChange], md: bool) -> String {
    if fields.is_empty() {
        return String::new();
    }
    let bullet = if md { "- " } else { "  " };
    let because = if md { "  - " } else { "      " };
    let unexplained = fields.iter().filter(|f| !f.explained()).count();
    let mut out = format!("\n{}fields changed by adopting ({} changed, {unexplained} not named){}:\n", if md { "**" } else { "" }, fields.len(), if md { "**" } else { "" });
    let mut objects: Vec<&str> = fields.iter().map(|f| f.object.as_str()).collect();
    objects.dedup();
    for object in objects {
        out.push_str(&format!("{bullet}{object}:\n"));
        for f in fields.iter().filter(|f| f.object == object) {
            let mark = if f.explained() { "≠" } else { "✗" };
            out.push_str(&format!("{because}{mark} {}: {} → {}\n", f.field, f.before, f.after));
            let why = f.reason.clone().unwrap_or_else(|| "not named: report it as a gpuplan bug".to_string());
            out.push_str(&format!("{because}    because {why}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        Catalog { format: 1, region: "us-east-1".into(), zones: vec!["us-east-1a".into()], sources: BTreeMap::new(), instance_types: Vec::new(), ebs: None }
    }

    /// A NodePool of `spec` (YAML), with a class and a taint-free template unless the spec says otherwise.
    fn pool(spec: &str) -> Value {
        let mut np: Value = serde_saphyr::from_str(&format!("kind: NodePool\nmetadata: {{name: gpu}}\nspec:\n{spec}")).unwrap();
        if np["spec"]["template"]["spec"]["nodeClassRef"].is_null() {
            np["spec"]["template"]["spec"]["nodeClassRef"] = json!({ "group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu" });
        }
        np
    }

    /// The changes between two NodePools, nothing of an adoption naming them.
    fn changes(before: &Value, after: &Value) -> Vec<FieldChange> {
        let names = Names::default();
        let mut diff = Diff { object: "NodePool/gpu".into(), names: &names, out: Vec::new(), reserves: false };
        node_pool(before, after, &[], &catalog(), &mut diff);
        diff.out
    }

    #[test]
    fn a_default_written_out_is_no_change() {
        let explicit = pool("  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: [{nodes: 10%}]}\n  template: {spec: {expireAfter: 720h0m0s}}\n");
        assert_eq!(changes(&pool("  template: {spec: {}}\n"), &explicit), vec![]);
    }

    #[test]
    fn a_taint_value_dropped_is_an_unexplained_change() {
        let before = pool("  template: {spec: {taints: [{key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}]}}\n");
        let after = pool("  template: {spec: {taints: [{key: nvidia.com/gpu, effect: NoSchedule}]}}\n");
        let fields: Vec<(String, bool)> = changes(&before, &after).into_iter().map(|c| (c.field.clone(), c.explained())).collect();
        assert_eq!(fields, vec![("spec.template.spec.taints[nvidia.com/gpu:NoSchedule]".to_string(), false), ("spec.template.spec.taints[nvidia.com/gpu=true:NoSchedule]".to_string(), false)]);
    }

    #[test]
    fn a_quantity_written_another_way_is_no_change() {
        assert_eq!(changes(&pool("  limits: {cpu: 1k, memory: 1Gi}\n  template: {spec: {}}\n"), &pool("  limits: {cpu: \"1000\", memory: 1073741824}\n  template: {spec: {}}\n")), vec![]);
    }

    #[test]
    fn a_renamed_node_class_is_a_change() {
        let before = pool("  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: neuron}}}\n");
        let after = pool("  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: neuron-nvme}}}\n");
        let c = changes(&before, &after);
        assert_eq!(c.len(), 1, "{c:#?}");
        assert_eq!((c[0].field.as_str(), c[0].before.as_str(), c[0].after.as_str(), c[0].explained()), ("spec.template.spec.nodeClassRef.name", "neuron", "neuron-nvme", false));
    }

    #[test]
    fn a_min_values_added_is_a_change() {
        let before = pool("  template: {spec: {requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6]}]}}\n");
        let after = pool("  template: {spec: {requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [g6, g5], minValues: 2}]}}\n");
        let c = changes(&before, &after);
        assert_eq!(c.len(), 1, "{c:#?}");
        assert_eq!((c[0].field.as_str(), c[0].before.as_str(), c[0].after.as_str()), ("spec.template.spec.requirements[karpenter.k8s.aws/instance-family].minValues", "absent", "2"));
    }

    #[test]
    fn a_weight_the_profile_line_says_it_wrote_is_named() {
        let lines = vec![Line::new("weight 100", "f.yaml NodePool/gpu no spec.weight (Karpenter reads 0)")];
        let adopted = AdoptedPool { name: "gpu".into(), tier_of: None, preset: "general", from: String::new(), lines, comments: vec![], missing: vec![] };
        let names = Names { pool: Some(&adopted), ..Names::default() };
        let mut diff = Diff { object: "NodePool/gpu".into(), names: &names, out: Vec::new(), reserves: false };
        node_pool(&pool("  template: {spec: {}}\n"), &pool("  weight: 100\n  template: {spec: {}}\n"), &[], &catalog(), &mut diff);
        assert!(diff.out.len() == 1 && diff.out[0].reason.as_deref().is_some_and(|r| r.contains("`weight 100`")), "{:#?}", diff.out);
    }

    #[test]
    fn durations_compare_by_value() {
        assert_eq!(seconds("168h0m0s"), seconds("168h"));
        assert_eq!(seconds("90s"), Some(90));
        assert_eq!(seconds("10%"), None);
        assert_eq!(seconds("100"), None);
    }

    #[test]
    fn ec2nodeclass_metadata_options_default_as_the_crd_says() {
        let written = json!({ "kind": "EC2NodeClass", "spec": { "metadataOptions": { "httpEndpoint": "enabled", "httpProtocolIPv6": "disabled", "httpPutResponseHopLimit": 1, "httpTokens": "required" } } });
        assert_eq!(class_defaults(&json!({ "kind": "EC2NodeClass", "spec": {} })), class_defaults(&written));
    }
}
