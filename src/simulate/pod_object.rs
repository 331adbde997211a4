//! A [`Pod`] written back as the core/v1 Pod object [`super::pods::pods`] reads (the inverse for the fields gpuplan's
//! own pods carry: requests, a single-valued nodeSelector, tolerations, labels, topology spread and required
//! anti-affinity), for what hands pods to another reader: the forecast's trace, the conformance oracle's pod files.

use serde_json::{json, Map, Value};

use super::pods::{Pod, PodTerm, Selector};

impl Pod {
    /// The Pod object; `None` for a nodeSelector value that is not one value per key (not a nodeSelector then).
    pub fn to_object(&self) -> Value {
        let (namespace, name) = self.key.split_once('/').unwrap_or(("default", &self.key));
        let mut spec = Map::new();
        let node_selector: Map<String, Value> = self.node_selector.0.iter().filter_map(|(k, r)| (!r.complement && r.values.len() == 1).then(|| (k.clone(), json!(r.values.iter().next())))).collect();
        if !node_selector.is_empty() {
            spec.insert("nodeSelector".into(), Value::Object(node_selector));
        }
        if !self.tolerations.is_empty() {
            let tolerations = self.tolerations.iter().map(|t| {
                let mut o = Map::new();
                for (field, v) in [("key", &t.key), ("operator", &t.operator), ("value", &t.value), ("effect", &t.effect)] {
                    if !v.is_empty() {
                        o.insert(field.into(), json!(v));
                    }
                }
                Value::Object(o)
            });
            spec.insert("tolerations".into(), Value::Array(tolerations.collect()));
        }
        let requests: Map<String, Value> = self.requests.iter().filter(|(k, _)| *k != "pods").map(|(k, v)| (k.clone(), json!(quantity(*v)))).collect();
        spec.insert("containers".into(), json!([{ "name": "app", "image": "app:1", "resources": { "requests": requests } }]));
        let mut metadata = json!({ "name": name, "namespace": namespace });
        if let Some(t) = &self.topology {
            if !t.labels.is_empty() {
                metadata["labels"] = json!(t.labels);
            }
            if !t.spread.is_empty() {
                let spread = t.spread.iter().map(|s| {
                    json!({
                        "topologyKey": s.key,
                        "maxSkew": s.max_skew,
                        "whenUnsatisfiable": if s.schedule_anyway { "ScheduleAnyway" } else { "DoNotSchedule" },
                        "labelSelector": s.selector.as_ref().map(selector),
                    })
                });
                spec.insert("topologySpreadConstraints".into(), Value::Array(spread.collect()));
            }
            if !t.anti_affinity.is_empty() {
                let terms: Vec<Value> = t.anti_affinity.iter().map(term).collect();
                spec.insert("affinity".into(), json!({ "podAntiAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": terms } }));
            }
        }
        json!({ "apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec })
    }
}

/// A milli-quantity as Kubernetes writes it: whole units bare, else with `m`.
fn quantity(milli: i128) -> String {
    if milli % 1000 == 0 { (milli / 1000).to_string() } else { format!("{milli}m") }
}

fn selector(s: &Selector) -> Value {
    let mut o = json!({ "matchLabels": s.match_labels });
    if !s.expressions.is_empty() {
        o["matchExpressions"] = s.expressions.iter().map(|(k, op, values)| json!({ "key": k, "operator": op, "values": values })).collect();
    }
    o
}

fn term(t: &PodTerm) -> Value {
    json!({ "topologyKey": t.key, "labelSelector": t.selector.as_ref().map(selector), "namespaces": t.namespaces })
}
