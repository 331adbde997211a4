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

/// Every NodePool in both trees whose change (or its class's) drifts nodes or acts on running nodes, sorted by
/// cluster and name. A NodePool only one side has is added or removed, not drifted (removal is said apart).
pub fn pool_drifts(old: &OutputTree, new: &OutputTree, catalog_for: &CatalogFor) -> Vec<PoolDrift> {
    let (before, after) = (objects(old), objects(new));
    let value = |m: &std::collections::BTreeMap<ObjKey, super::objects::Obj>, k: &ObjKey| m.get(k).and_then(|o| o.value.as_ref().ok()).cloned();
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
        // No node listed (the class is not in out/, or the region has no offering for it) is not known, not none.
        let nodes = catalog_for(region).map(|(c, l)| base_nodes(base, c, l)).filter(|ns| !ns.is_empty());
        let mut drift = judge(&key.cluster, &key.name, base, head, nodes.as_deref());
        let class = class_key(&head_pool);
        drift.node_class = format!("{} {}", class.kind, class.name);
        if drift.drifts() || !drift.effects.is_empty() {
            out.push(drift);
        }
    }
    out
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
    PoolDrift { cluster: cluster.into(), nodepool: nodepool.into(), node_class: String::new(), causes, offerings_drifting: drifting, offerings: nodes.map(<[Node]>::len), effects: effects(base.pool, head.pool) }
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
    let mut s = format!("\n### Disruption\n\nMerging replaces running nodes (Karpenter {KARPENTER}'s drift: each drifted node is replaced as the NodePool's disruption budgets allow).\n\n| Cluster | NodePool | Nodes replaced | Why (field → Karpenter's reason) | Proven |\n|---|---|---|---|---|\n");
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
    for d in drifts.iter().filter(|d| !d.effects.is_empty()) {
        s.push_str(&format!("\n- `{}` NodePool `{}`: {}", d.cluster, d.nodepool, d.effects.join("; ")));
    }
    s.push('\n');
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
