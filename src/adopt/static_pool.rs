//! A static NodePool (`spec.replicas`) adopts into a static pool: `static replicas=<n>`, with `max-nodes=` from
//! `spec.limits.nodes`. What the profile's static pool refuses, the NodePool cannot carry either (the CRD's rules:
//! no weight, no limit but `nodes`), except consolidation, which Karpenter ignores on a static NodePool and the
//! profile refuses (E0305): it is consumed here with a warning, not written.

use serde_json::Value;

use super::consumed::Consumed;
use super::model::{Line, Warning};
use crate::adopt::read::Doc;

/// `static replicas=… [max-nodes=…]`, or None for a dynamic NodePool.
pub fn line(doc: &Doc, used: &mut Consumed, from: &dyn Fn(&str) -> String) -> Option<Line> {
    let replicas = doc.object["spec"]["replicas"].as_u64()?;
    used.take("spec.replicas");
    let mut kdl = format!("static replicas={replicas}");
    let mut fields = vec!["spec.replicas"];
    if let Some(nodes) = node_limit(&doc.object) {
        used.take("spec.limits.nodes");
        kdl.push_str(&format!(" max-nodes={nodes}"));
        fields.push("spec.limits.nodes");
    }
    Some(Line::new(kdl, from(&fields.join(", "))))
}

/// `spec.limits.nodes` as a whole number (written as an integer or a string).
fn node_limit(np: &Value) -> Option<u64> {
    match &np["spec"]["limits"]["nodes"] {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Consolidation settings of a static NodePool: ignored by Karpenter, so consumed with a warning (none for gpuplan's
/// own output) rather than written.
pub fn drop_consolidation(doc: &Doc, used: &mut Consumed, warnings: &mut Vec<Warning>) {
    // gpuplan writes them itself on a static NodePool (the CRD requires consolidateAfter): nothing is lost.
    let own = doc.is_gpuplans();
    for (key, field) in [("consolidationPolicy", "spec.disruption.consolidationPolicy"), ("consolidateAfter", "spec.disruption.consolidateAfter")] {
        let Some(v) = doc.object["spec"]["disruption"][key].as_str() else { continue };
        used.take(field);
        if own {
            continue;
        }
        warnings.push(Warning {
            file: doc.file.clone(),
            object: format!("NodePool/{}", doc.name),
            field: field.to_string(),
            message: format!("{key} {v} is ignored by Karpenter on a static NodePool (spec.replicas): not adopted"),
        });
    }
}
