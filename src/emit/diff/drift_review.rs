//! Part of the emit stage: what the review says of drift. Per NodePool that a change touches (itself or its node
//! class), which of its running nodes Karpenter replaces and why ([`super::drift`] decides per node), and what the
//! fields that drift nothing do to running nodes.

use serde_json::Value;

pub use super::drift::{DriftCause, PoolDrift};
use super::drift::{Comparison, DriftRule, KARPENTER, Node, Side, base_nodes};
use super::objects::{ObjKey, objects};
use crate::catalog::Catalog;
use crate::layout::OutputTree;
use crate::simulate::instances::TypeLabels;

/// The catalog of a region and its types' labels, for the nodes a base NodePool could run.
pub type CatalogFor<'a> = dyn Fn(&str) -> Option<(&'a Catalog, &'a TypeLabels)> + 'a;

/// What runs when the change merges: the NodeClaims given (`--cluster-state`), by cluster, and the merge's time (the
/// budgets' schedules are read at it).
#[derive(Debug, Clone, Default)]
pub struct Running {
    /// Per cluster, its NodeClaims' NodePools and nodes ([`nodeclaims`]).
    pub nodeclaims: std::collections::BTreeMap<String, Vec<(String, Node)>>,
    pub merge_unix: i64,
}

/// Every NodePool in both trees whose change (or its class's) drifts nodes or acts on running nodes, sorted by
/// cluster and name. A NodePool only one side has is added or removed, not drifted (removal is said apart).
pub fn pool_drifts(old: &OutputTree, new: &OutputTree, catalog_for: &CatalogFor, running: &Running) -> Vec<PoolDrift> {
    let (before, after) = (objects(old), objects(new));
    let value = |m: &std::collections::BTreeMap<ObjKey, super::objects::Obj>, k: &ObjKey| m.get(k).and_then(|o| o.value.as_ref().ok()).cloned();
    // Per cluster, its head as Karpenter sees it after the merge (every NodePool and node class), read once.
    let mut heads: std::collections::BTreeMap<String, Vec<Value>> = std::collections::BTreeMap::new();
    let mut out = Vec::new();
    for key in before.keys().filter(|k| k.kind == "NodePool" && after.contains_key(k)) {
        let (Some(base_pool), Some(head_pool)) = (value(&before, key), value(&after, key)) else { continue };
        let class_key = |pool: &Value| {
            let kind = pool.pointer("/spec/template/spec/nodeClassRef/kind").and_then(Value::as_str).unwrap_or("EC2NodeClass");
            let name = pool.pointer("/spec/template/spec/nodeClassRef/name").and_then(Value::as_str).unwrap_or_default();
            ObjKey { cluster: key.cluster.clone(), kind: kind.into(), namespace: None, name: name.into() }
        };
        let (base_class, head_class) = (value(&before, &class_key(&base_pool)), value(&after, &class_key(&head_pool)));
        if base_pool == head_pool && base_class == head_class {
            continue;
        }
        let base = Side { pool: &base_pool, class: base_class.as_ref() };
        let head = Side { pool: &head_pool, class: head_class.as_ref() };
        let region = base_pool.pointer("/metadata/annotations/gpuplan.dev~1catalog").and_then(Value::as_str).and_then(|c| c.split('@').next()).unwrap_or("us-east-1");
        let catalog = catalog_for(region);
        // No node listed (the class is not in out/, or the region has no offering for it) is not known, not none.
        let nodes = catalog.map(|(c, l)| base_nodes(base, c, l)).filter(|ns| !ns.is_empty());
        let mut drift = judge(&key.cluster, &key.name, base, head, nodes.as_deref());
        let class = class_key(&head_pool);
        drift.node_class = format!("{} {}", class.kind, class.name);
        if drift.drifts() {
            let cluster = heads.entry(key.cluster.clone()).or_insert_with(|| {
                after.iter().filter(|(k, _)| k.cluster == key.cluster && matches!(k.kind.as_str(), "NodePool" | "EC2NodeClass" | "NodeClass")).filter_map(|(k, _)| value(&after, k)).collect()
            });
            let pools: Vec<&Value> = cluster.iter().filter(|o| o["kind"] == "NodePool").collect();
            drift.stuck = super::stuck::stuck(&base_pool, &pools, &key.name, &lowered_limits(&base_pool, &head_pool));
            if let (false, Some((c, l))) = (drift.stuck(), catalog) {
                let claims = running.nodeclaims.get(&key.cluster);
                drift.roll = roll(c, l, cluster, base, head, &key.name, claims.map(Vec::as_slice), running.merge_unix);
            }
        }
        if drift.drifts() || !drift.effects.is_empty() {
            out.push(drift);
        }
    }
    out
}

/// The roll of a drifting NodePool, replayed on its cluster's head objects, with the nodes that drift counted from the
/// NodeClaims given (those of the NodePool whose labels a rule drifts) or else the base's limits' worst case.
#[allow(clippy::too_many_arguments)]
fn roll(catalog: &Catalog, labels: &TypeLabels, cluster: &[Value], base: Side, head: Side, nodepool: &str, claims: Option<&[(String, Node)]>, merge_unix: i64) -> Option<super::roll::Roll> {
    use super::roll::NodeSource;
    // The base's NodePool among the head's classes bounds what runs at the merge; the node replayed is one the head
    // launches (the replay runs on the head's objects).
    let objects: Vec<Value> = cluster.iter().filter(|o| o["kind"] != "NodePool").cloned().chain([base.pool.clone()]).collect();
    let (_, limit) = super::roll::worst_case(catalog, labels, &objects, nodepool)?;
    let (node, _) = super::roll::worst_case(catalog, labels, cluster, nodepool)?;
    let (count, source) = match claims {
        Some(claims) => {
            let cmp = Comparison::new(base, head);
            let of_pool: Vec<&Node> = claims.iter().filter(|(p, _)| p == nodepool).map(|(_, n)| n).collect();
            ((of_pool.iter().filter(|n| !cmp.rules(n).is_empty()).count() as u32, of_pool.len() as u32), NodeSource::ClusterState)
        }
        None => ((limit?, limit?), NodeSource::Limits),
    };
    super::roll::replay(catalog, labels, cluster, nodepool, &node, count, source, merge_unix)
}

/// One NodePool's verdict, from the nodes its base could run (None: no catalog to list them).
fn judge(cluster: &str, nodepool: &str, base: Side, head: Side, nodes: Option<&[Node]>) -> PoolDrift {
    let cmp = Comparison::new(base, head);
    let mut causes = Vec::new();
    let cause = |rule: DriftRule, fields: Vec<String>, nodes: String| {
        let unproven = match rule {
            DriftRule::AutoModeNodeClass => Some("EKS Auto Mode's rules are not public code".to_owned()),
            r if !r.proven() => Some("depends on what AWS resolves the terms to".to_owned()),
            _ => None,
        };
        DriftCause { rule, reason: rule.reason(), fields, nodes, proven: unproven.is_none(), unproven, source: rule.source() }
    };
    if !cmp.pool_fields.is_empty() {
        causes.push(cause(DriftRule::NodePoolHash, cmp.pool_fields.clone(), "every node".into()));
    }
    let mismatched: Vec<&Node> = nodes.unwrap_or_default().iter().filter(|n| cmp.requirement_mismatch(n).is_some()).collect();
    if !mismatched.is_empty() {
        let mut c = cause(DriftRule::Requirements, vec![format!("spec.template.spec.requirements ({})", cmp.requirement_mismatch(mismatched[0]).unwrap_or_default())], types_of(&mismatched));
        if cmp.uncarried_labels {
            c.proven = false;
            c.unproven = Some("a label whose node value gpuplan does not know (not in its catalog, or drawn by Karpenter)".into());
        }
        causes.push(c);
    } else if nodes.is_none() && requirements_changed(base.pool, head.pool) {
        let mut c = cause(DriftRule::Requirements, vec!["spec.template.spec.requirements".into()], "the nodes the new requirements no longer admit".into());
        c.proven = false;
        c.unproven = Some("the nodes the base can run are not known (no catalog, or its node class is not in out/)".into());
        causes.push(c);
    }
    if !cmp.class_fields.is_empty() {
        causes.push(cause(DriftRule::NodeClassHash, cmp.class_fields.clone(), "every node".into()));
    }
    let any_reserved = nodes.is_none_or(|ns| ns.iter().any(|n| n.capacity_type == "reserved"));
    for (rule, fields) in cmp.resolved.iter().filter(|(r, _)| *r != DriftRule::CapacityReservations || any_reserved) {
        let which = if *rule == DriftRule::CapacityReservations { "reserved nodes" } else { "every node" };
        causes.push(cause(*rule, fields.clone(), which.into()));
    }
    // EKS Auto Mode runs its own Karpenter, of a version AWS does not publish: the core rules are its documented
    // behaviour there, not proven against its code.
    if [base.class, head.class].iter().flatten().any(|c| c.get("apiVersion").and_then(Value::as_str).is_some_and(|a| a.starts_with("eks.amazonaws.com/"))) {
        for c in causes.iter_mut().filter(|c| c.proven) {
            c.proven = false;
            c.unproven = Some("EKS Auto Mode runs its own Karpenter, not public code".into());
        }
    }
    let drifting = nodes.map(|ns| ns.iter().filter(|n| !cmp.rules(n).is_empty()).count());
    PoolDrift { cluster: cluster.into(), nodepool: nodepool.into(), node_class: String::new(), causes, offerings_drifting: drifting, offerings: nodes.map(<[Node]>::len), effects: effects(base.pool, head.pool), stuck: Vec::new(), roll: None, expire_after: expire_after(head.pool) }
}

/// "p5.48xlarge (reserved), g6e.xlarge" and how many more: the types of the drifting nodes.
fn types_of(nodes: &[&Node]) -> String {
    let mut types: Vec<String> = nodes.iter().map(|n| n.instance_type.clone()).collect();
    types.dedup();
    types.sort();
    types.dedup();
    let more = types.len().saturating_sub(5);
    let shown = types.into_iter().take(5).collect::<Vec<_>>().join(", ");
    if more > 0 { format!("nodes of {shown} and {more} more types") } else { format!("nodes of {shown}") }
}

/// The head NodePool's `expireAfter` as the API server stores it (`720h` when left out).
fn expire_after(pool: &Value) -> String {
    pool.pointer("/spec/template/spec/expireAfter").and_then(Value::as_str).unwrap_or("720h").to_owned()
}

fn requirements_changed(base: &Value, head: &Value) -> bool {
    base.pointer("/spec/template/spec/requirements") != head.pointer("/spec/template/spec/requirements")
}

/// What the NodePool fields that drift nothing do to the nodes that run (sigs.k8s.io/karpenter
/// pkg/controllers/disruption: budgets and consolidation are read on every pass; pkg/controllers/provisioning:
/// limits and weight are read when a node is launched).
fn effects(base: &Value, head: &Value) -> Vec<String> {
    let at = |v: &Value, p: &str| v.pointer(p).cloned();
    let mut out = Vec::new();
    if at(base, "/spec/disruption") != at(head, "/spec/disruption") {
        out.push("disruption (consolidation, budgets) changes act on the running nodes at once".into());
    }
    // A raised limit needs no word: it acts on the next launch, as every reviewer expects.
    let lowered = lowered_limits(base, head);
    if !lowered.is_empty() {
        out.push(format!("lower limit ({}): removes no running node, so the saving follows only as nodes leave for other reasons; while the nodes exceed it, none launches in this pool (drift replacements included)", lowered.join(", ")));
    }
    if at(base, "/spec/weight") != at(head, "/spec/weight") {
        out.push("weight changes only which pool new launches use".into());
    }
    out
}

/// Under the headline, when the bound falls: which part of it merging does not save at once. A lower limit removes
/// no running node (sigs.k8s.io/karpenter v1.14.1: limits are read when the provisioner launches, `scheduler.go`
/// `remainingResources`; no controller deletes nodes above them), so the spend follows only as nodes leave for
/// other reasons, at the latest when they expire; the NodePools whose nodes drift are replaced by the roll instead.
pub fn savings_note(drifts: &[PoolDrift], worst_case_delta: f64) -> Option<String> {
    if worst_case_delta >= 0.0 {
        return None;
    }
    let lowered: Vec<&PoolDrift> = drifts.iter().filter(|d| !d.drifts() && d.effects.iter().any(|e| e.starts_with("lower limit"))).collect();
    if lowered.is_empty() {
        return None;
    }
    let names: Vec<String> = lowered.iter().map(|d| format!("`{}`", d.nodepool)).collect();
    let expiry: std::collections::BTreeSet<&str> = lowered.iter().map(|d| d.expire_after.as_str()).collect();
    let latest = match expiry.iter().copied().collect::<Vec<_>>().as_slice() {
        ["Never"] => "; their nodes never expire, so it may never follow in full".into(),
        [one] => format!(", at the latest when they expire (`expireAfter` {one})"),
        many => format!(", at the latest when they expire (`expireAfter` {})", many.join(", ")),
    };
    Some(format!(
        "
**Not saved at merge:** the lower limits of NodePool {} lower the bound at once, but remove no running node; the spend follows as nodes leave (consolidation, interruptions{latest}).
",
        names.join(", ")
    ))
}

/// The resources whose limit the head lowers, or sets where the base had none (no limit is unbounded).
fn lowered_limits(base: &Value, head: &Value) -> Vec<String> {
    let limits = |v: &Value| v.pointer("/spec/limits").and_then(Value::as_object).cloned().unwrap_or_default();
    let (b, h) = (limits(base), limits(head));
    // A limit is a quantity, written as a string or (in hand-written YAML) a number.
    let milli = |v: Option<&Value>| v.and_then(|v| v.as_str().map(str::to_owned).or_else(|| v.is_number().then(|| v.to_string()))).and_then(|q| crate::simulate::yaml::milli(&q));
    h.keys()
        .filter(|k| match (milli(b.get(*k)), milli(h.get(*k))) {
            (Some(x), Some(y)) => y < x,
            (None, Some(_)) => true,
            _ => false,
        })
        .cloned()
        .collect()
}

/// The comment's "Disruption" section: one line when nothing drifts, else a row per NodePool (drifts first).
pub fn markdown_section(drifts: &[PoolDrift]) -> String {
    let drifting: Vec<&PoolDrift> = drifts.iter().filter(|d| d.drifts()).collect();
    if drifting.is_empty() {
        let mut s = format!("\n**Disruption:** no running node is replaced (no field Karpenter {KARPENTER} hashes or checks for drift changes).\n");
        for d in drifts {
            s.push_str(&format!("- `{}` NodePool `{}`: {}\n", d.cluster, d.nodepool, d.effects.join("; ")));
        }
        return s;
    }
    let mut s = format!("\n### Disruption\n\nMerging replaces running nodes (Karpenter {KARPENTER}'s drift: each drifted node is replaced as the NodePool's disruption budgets allow).\n");
    s.push_str(&stuck_list(&drifting));
    s.push_str("\n| Cluster | NodePool | Nodes replaced | Why (field → Karpenter's reason) | Proven |\n|---|---|---|---|---|\n");
    for d in &drifting {
        for c in &d.causes {
            let share = match (d.offerings_drifting, d.offerings) {
                (Some(n), Some(of)) if c.nodes == "every node" && of > 0 => format!("{} ({n} of {of} offerings)", c.nodes),
                _ => c.nodes.clone(),
            };
            s.push_str(&format!(
                "| `{}` | `{}` | {} | {} → `{}` | {} |\n",
                d.cluster,
                d.nodepool,
                share.replace('|', "\\|"),
                c.fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ").replace('|', "\\|"),
                c.reason,
                c.unproven.as_ref().map_or_else(|| "yes".to_owned(), |why| format!("no: {why}"))
            ));
        }
    }
    s.push_str(&roll_table(&drifting));
    s.push_str(&role_prerequisites(&drifting));
    for d in drifts.iter().filter(|d| !d.effects.is_empty()) {
        s.push_str(&format!("\n- `{}` NodePool `{}`: {}", d.cluster, d.nodepool, d.effects.join("; ")));
    }
    s.push('\n');
    s
}

/// A new node role replaces every node, and the replacements launch with it only if it is ready first: Karpenter
/// passes the role to the instance profile it creates (the controller needs `iam:PassRole` on it,
/// karpenter-provider-aws `pkg/providers/instanceprofile`), and the nodes join only with an EKS access entry of type
/// `EC2_LINUX` for it (or an `aws-auth` mapping). Without them the replacements never become Ready and the roll stalls.
fn role_prerequisites(drifting: &[&PoolDrift]) -> String {
    let pools: Vec<String> = drifting.iter().filter(|d| d.causes.iter().any(|c| c.fields.iter().any(|f| f == "spec.role"))).map(|d| format!("`{}`", d.nodepool)).collect();
    if pools.is_empty() {
        return String::new();
    }
    format!(
        "\n**Before merging** (a new node role, NodePool {}): give the Karpenter controller's IAM role `iam:PassRole` on the new role, and the cluster an EKS access entry of type `EC2_LINUX` for it (or an `aws-auth` mapping); without them no replacement joins and the roll stalls with every old node still running.\n",
        pools.join(", ")
    )
}

/// The rolls replayed: per drifting NodePool, the nodes replaced, at once, how long, and the extra $ meanwhile.
fn roll_table(drifting: &[&PoolDrift]) -> String {
    let rolls: Vec<(&PoolDrift, &super::roll::Roll)> = drifting.iter().filter_map(|d| Some((*d, d.roll.as_ref()?))).collect();
    if rolls.is_empty() {
        return String::new();
    }
    let mut s = "\nThe roll, replayed through the forecast engine (Karpenter's drift method, the NodePool's budgets at the merge's time, each replacement Ready before its node drains; one pod per node of the smallest type, the workloads' PDBs not counted; above one node at a time, Karpenter may start fewer at once and take longer):\n\n| Cluster | NodePool | Nodes replaced | At once | Duration | Extra during the roll | Counted from |\n|---|---|---|---|---|---|---|\n".to_owned();
    for (d, r) in rolls {
        let capped = if r.capped { format!(" (replayed at {})", super::roll::MAX_NODES) } else { String::new() };
        s.push_str(&format!(
            "| `{}` | `{}` | {}{capped} | {} | {} | ${:.2} | {} |\n",
            d.cluster,
            d.nodepool,
            r.nodes_words(),
            r.at_once,
            r.duration_words(),
            r.extra_usd,
            r.source.words()
        ));
    }
    s
}

/// The drifts that cannot finish, certain ones first: what stops them, what Karpenter does, how to change safely.
fn stuck_list(drifting: &[&PoolDrift]) -> String {
    let mut rows: Vec<(bool, String)> = Vec::new();
    for d in drifting {
        for st in &d.stuck {
            let what = match &st.when {
                None => "**cannot finish**".to_owned(),
                Some(when) => format!("cannot finish when {when}"),
            };
            rows.push((!st.certain, format!("- `{}` NodePool `{}` {what}: {}. Then {}. Safely: {}. ({})\n", d.cluster, d.nodepool, st.why, st.next, st.fix, st.source)));
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    rows.sort_by_key(|(conditional, _)| *conditional);
    let mut s = "\nDrift that cannot finish (Karpenter replaces a drifted node only once its pods fit elsewhere):\n\n".to_owned();
    s.extend(rows.into_iter().map(|(_, row)| row));
    s
}

/// Each verdict on the object whose change causes it: the NodePool's entry when the NodePool changed, else its node
/// class's.
pub fn attach(changes: &mut [super::detail::ObjectChange], drifts: Vec<PoolDrift>) {
    for d in drifts {
        let own = changes.iter().position(|c| c.cluster == d.cluster && c.kind == "NodePool" && c.name == d.nodepool);
        let class = changes.iter().position(|c| c.cluster == d.cluster && d.node_class == format!("{} {}", c.kind, c.name));
        if let Some(i) = own.or(class) {
            changes[i].drift.push(d);
        }
    }
}

/// The NodeClaims of `kubectl get nodeclaims -o json` (a `List` of `karpenter.sh/v1` NodeClaims): per NodeClaim its
/// NodePool and the labels drift reads (its instance type, zone, capacity type, reservation and template labels).
pub fn nodeclaims(text: &str) -> Result<Vec<(String, Node)>, String> {
    let list: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e}): give the output of `kubectl get nodeclaims -o json`"))?;
    let items = list.get("items").and_then(Value::as_array).ok_or("no `items` list: give the output of `kubectl get nodeclaims -o json`")?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let labels: std::collections::BTreeMap<String, String> =
            item.pointer("/metadata/labels").and_then(Value::as_object).into_iter().flatten().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect();
        let label = |k: &str| labels.get(k).cloned();
        let Some(nodepool) = label("karpenter.sh/nodepool") else {
            return Err(format!("items[{i}] has no karpenter.sh/nodepool label: is it a NodeClaim?"));
        };
        let node = Node {
            instance_type: label("node.kubernetes.io/instance-type").unwrap_or_default(),
            zone: label("topology.kubernetes.io/zone").unwrap_or_default(),
            capacity_type: label("karpenter.sh/capacity-type").unwrap_or_default(),
            reservation_id: label("karpenter.k8s.aws/capacity-reservation-id"),
            labels,
        };
        out.push((nodepool, node));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pool(limit: &str, expire: Option<&str>) -> Value {
        let mut spec = json!({"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "c"}, "requirements": []});
        if let Some(e) = expire {
            spec["expireAfter"] = json!(e);
        }
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "p"}, "spec": {"limits": {"nvidia.com/gpu": limit}, "template": {"spec": spec}}})
    }

    /// A lower limit removes no node (limits are read at launch, scheduler.go `remainingResources`): the headline's
    /// saving is said not to be made at merge, with the expiry that bounds when it is.
    #[test]
    fn a_lowered_limit_is_not_a_saving_at_merge() {
        let (base, head) = (pool("40", None), pool("20", None));
        let d = judge("c", "p", Side { pool: &base, class: None }, Side { pool: &head, class: None }, None);
        assert!(!d.drifts() && d.effects[0].starts_with("lower limit (nvidia.com/gpu)"), "{d:?}");
        let note = savings_note(std::slice::from_ref(&d), -10.0).unwrap();
        assert!(note.contains("**Not saved at merge:**") && note.contains("`expireAfter` 720h"), "{note}");
        assert!(savings_note(std::slice::from_ref(&d), 5.0).is_none(), "a rise is no saving");
        let never = judge("c", "p", Side { pool: &pool("40", Some("Never")), class: None }, Side { pool: &pool("20", Some("Never")), class: None }, None);
        assert!(savings_note(&[never], -10.0).unwrap().contains("never expire"));
    }

    #[test]
    fn a_new_node_role_names_what_must_exist_first() {
        let mut d = judge("c", "p", Side { pool: &pool("4", None), class: None }, Side { pool: &pool("4", None), class: None }, None);
        d.causes.push(DriftCause { rule: DriftRule::NodeClassHash, reason: "NodeClassDrift", fields: vec!["spec.role".into()], nodes: "every node".into(), proven: true, unproven: None, source: "" });
        let text = role_prerequisites(&[&d]);
        assert!(text.contains("iam:PassRole") && text.contains("EC2_LINUX") && text.contains("`p`"), "{text}");
    }
}
