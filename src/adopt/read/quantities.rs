//! The Kubernetes quantities adopt reads, read as the API server reads them ([`crate::simulate::yaml::nano`]: every
//! form of k8s.io/apimachinery `pkg/api/resource/quantity.go`, `1k`, `1000m`, `1e3`, `1E3`, `500Gi`, `0.5`, `+1`,
//! `1.5k`, `100M`) and handed to the mapping in the form a profile writes, so that the profile says exactly the
//! original's value:
//!
//! - A NodePool's `spec.limits` of a counted resource (cpu, accelerators, `nodes`, `pods`, any extended resource)
//!   becomes the whole number it is (`cpu: 1k` → `1000`, so `max-cpu 1000`). A count that is not whole (`cpu: 1500m`,
//!   `nvidia.com/gpu: 0.5`) stops adopt at its `file:line:col`: the profile counts whole vCPUs and accelerators, and
//!   compile would write the limit rounded.
//! - `memory`, `ephemeral-storage`, `storage` and `hugepages-*` count bytes: a string stays as written (the profile's
//!   `limits memory="…"` carries it, and compile writes it back as written); a YAML number that is whole becomes an
//!   integer (`1e12`, which YAML reads as the float 1000000000000.0).
//! - A NodeOverlay's `spec.capacity` is checked and written the same way (the profile's `capacity` carries the text).
//! - A NodeOverlay's `spec.price` and `spec.priceAdjustment` are strings in its CRD: a number there is refused by the
//!   API server, and named here.
//! - `spec.limits.resources` is Karpenter v1alpha5's Provisioner field: a NodePool's limits are one level up.
//!
//! A value that is no quantity at all is refused as the API server refuses it. Requirement values (`Gt`/`Lt` on
//! numeric labels) are integers, not quantities, and are read where requirements are.

use serde_json::Value;

use crate::simulate::yaml::{err, nano, Doc, InputError};

const NANO: i128 = 1_000_000_000;

/// Whether a resource counts bytes (its value may be any quantity) rather than things (a whole number).
fn counts_bytes(resource: &str) -> bool {
    matches!(resource, "memory" | "ephemeral-storage" | "storage") || resource.starts_with("hugepages-")
}

/// Checks and rewrites the quantities of one document (NodePools and NodeOverlays of karpenter.sh; others untouched).
pub fn normalise(doc: &mut Doc) -> Result<(), InputError> {
    let karpenter = doc.api_version().starts_with("karpenter.sh/");
    match doc.kind() {
        "NodePool" if karpenter => {
            if let Some(resources) = doc.value.pointer("/spec/limits/resources") {
                return Err(v1alpha5_limits(doc, resources));
            }
            quantities(doc, &["spec", "limits"], true)
        }
        "NodeOverlay" if karpenter => {
            for field in ["price", "priceAdjustment"] {
                if let Some(v) = doc.value["spec"].get(field).filter(|v| v.is_number()) {
                    let message = format!("spec.{field} must be a string, not the number {v} (the NodeOverlay CRD's type; the API server refuses a number): write {field}: \"{v}\"");
                    return Err(err(locate(doc, &["spec", field]), message));
                }
            }
            quantities(doc, &["spec", "capacity"], false)
        }
        _ => Ok(()),
    }
}

/// Each value of the map at `path`: refused when it is no quantity (or, where `whole_counts`, a count that is not
/// whole), else rewritten as described in the module doc.
fn quantities(doc: &mut Doc, path: &[&str], whole_counts: bool) -> Result<(), InputError> {
    let Some(Value::Object(map)) = crate::simulate::yaml::field(&doc.value, path) else { return Ok(()) };
    let mut rewritten = Vec::new();
    for (resource, value) in map {
        let field = format!("{}.{resource}", path.join("."));
        let at = || {
            let mut keys = path.to_vec();
            keys.push(resource);
            locate(doc, &keys)
        };
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            other => return Err(err(at(), format!("{field} must be a Kubernetes quantity, not {other} (the API server refuses it)"))),
        };
        let Some(n) = nano(&text) else {
            let message = format!("{field} `{text}` is not a Kubernetes quantity (the API server refuses it): write a number with an optional suffix, e.g. 1000, 1k, 1e3, 500Gi");
            return Err(err(at(), message));
        };
        if n < 0 {
            return Err(err(at(), format!("{field} `{text}` is negative: a limit or capacity below zero admits nothing; write the amount it should allow")));
        }
        let whole = n % NANO == 0;
        if whole_counts && !counts_bytes(resource) && !whole {
            return Err(err(at(), not_whole(&field, resource, &text, n)));
        }
        // A count is written as the whole number it is (a string stays a string: `"1k"` → `"1000"`); bytes as
        // written, unless YAML made a float of them.
        if whole && (value.is_number() || !counts_bytes(resource) && whole_counts) {
            let count = match u64::try_from(n / NANO) {
                Ok(c) if value.is_number() => Value::from(c),
                _ => Value::String((n / NANO).to_string()),
            };
            rewritten.push((resource.clone(), count));
        }
    }
    if let Some(Value::Object(map)) = path.iter().try_fold(doc.value.to_mut(), |v, key| v.get_mut(*key)) {
        map.extend(rewritten);
    }
    Ok(())
}

/// The message for a count limit that is not whole: the exact value, what compile would make of it, what to write.
fn not_whole(field: &str, resource: &str, text: &str, n: i128) -> String {
    let exact = format!("{}.{}", n / NANO, format!("{:09}", n % NANO).trim_end_matches('0'));
    let (unit, would) = match resource {
        "cpu" => ("vCPUs", format!("compile would write {} (instance types have whole vCPUs, so it admits the same nodes, but the value would not be the original's)", n / NANO)),
        _ => ("units", "the profile has no way to say a fraction of one".to_string()),
    };
    let (down, up) = (n / NANO, n / NANO + 1);
    format!("{field} `{text}` is {exact} {unit}, not a whole number: the profile counts whole {unit} and {would}; write {down} or {up} in the original and adopt again")
}

/// `spec.limits.resources`: the v1alpha5 Provisioner's field, to move up one level.
fn v1alpha5_limits(doc: &Doc, resources: &Value) -> InputError {
    let entries: Vec<String> = match resources {
        Value::Object(m) => m.iter().map(|(k, v)| format!("`{k}: {}`", v.as_str().map_or_else(|| v.to_string(), str::to_string))).collect(),
        other => vec![format!("`{other}`")],
    };
    let message = format!(
        "spec.limits.resources is the v1alpha5 Provisioner's field; a NodePool's limits are spec.limits.<resource> (karpenter.sh/v1beta1 and v1), and the API server refuses this one (spec.limits values are quantities, not a map): move {} up one level, under spec.limits, and delete `resources:`",
        entries.join(", ")
    );
    err(locate(doc, &["spec", "limits", "resources"]), message)
}

/// `file:line:col` of the key at the end of `keys` in the document's text: each key searched after the previous one
/// (`key:`, `"key":` or `'key':` at a line's start, after `{`, `,` or a space), so that `cpu:` of `spec.limits` is
/// not an earlier `cpu:` of a kubelet's reservations. The document's start when a key is not found.
pub fn locate(doc: &Doc, keys: &[&str]) -> String {
    let text = &doc.text;
    let mut from = 0;
    let mut found = None;
    for key in keys {
        let hit = [format!("{key}:"), format!("\"{key}\":"), format!("'{key}':")].iter().filter_map(|needle| key_at(text, from, needle)).min();
        match hit {
            Some(at) => {
                from = at + key.len();
                found = Some(at);
            }
            None => break,
        }
    }
    let (line, col) = found.map_or((1, 1), |at| super::super::placeholders::position(text, at));
    format!("{}:{}:{col}", doc.path.display(), doc.line + line - 1)
}

/// The first `needle` at or after `from` that begins a key.
fn key_at(text: &str, from: usize, needle: &str) -> Option<usize> {
    let mut start = from;
    while let Some(i) = text[start..].find(needle) {
        let at = start + i;
        let before = text[..at].chars().next_back();
        if before.is_none_or(|c| c.is_whitespace() || c == '{' || c == ',') {
            return Some(at);
        }
        start = at + needle.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Doc<'static> {
        crate::simulate::yaml::parse_docs(std::path::Path::new("f.yaml"), text).unwrap().remove(0)
    }

    fn pool(limits: &str) -> Doc<'static> {
        doc(&format!("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: p}}\nspec:\n  template:\n    spec:\n      kubelet:\n        kubeReserved: {{cpu: 1}}\n  limits:\n{limits}"))
    }

    fn limit(limits: &str, resource: &str) -> Value {
        let mut d = pool(limits);
        normalise(&mut d).unwrap();
        d.value["spec"]["limits"][resource].clone()
    }

    /// The limit as the mapping reads it (a number or a string, as text).
    fn read_as(limits: &str, resource: &str) -> String {
        let v = limit(limits, resource);
        v.as_str().map_or_else(|| v.to_string(), str::to_string)
    }

    #[test]
    fn every_form_of_a_whole_count_becomes_the_number_it_is() {
        for form in ["1k", "1000000m", "1e3", "1E3", "\"1000\"", "1000", "+1000", "1.0k", "1000000000000n", "1000000000u"] {
            assert_eq!(read_as(&format!("    cpu: {form}\n"), "cpu"), "1000", "{form}");
        }
        // YAML's type is kept: a string stays a string, a number a number.
        assert_eq!(limit("    cpu: 1k\n", "cpu"), Value::from("1000"));
        assert_eq!(limit("    cpu: 1e3\n", "cpu"), Value::from(1000));
        assert_eq!(read_as("    nvidia.com/gpu: 0.008k\n", "nvidia.com/gpu"), "8");
        assert_eq!(read_as("    aws.amazon.com/neuroncore: 1.5k\n", "aws.amazon.com/neuroncore"), "1500");
        assert_eq!(read_as("    amd.com/gpu: 16000m\n", "amd.com/gpu"), "16");
        assert_eq!(read_as("    nodes: 100M\n", "nodes"), "100000000");
        assert_eq!(read_as("    cpu: 1000m\n", "cpu"), "1");
    }

    #[test]
    fn bytes_stay_as_written_unless_yaml_made_a_float_of_them() {
        assert_eq!(limit("    memory: 500Gi\n", "memory"), Value::from("500Gi"));
        assert_eq!(limit("    memory: 0.5\n", "memory"), serde_json::json!(0.5));
        assert_eq!(limit("    ephemeral-storage: 1e12\n", "ephemeral-storage"), Value::from(1_000_000_000_000_u64));
    }

    #[test]
    fn a_count_that_is_not_whole_is_refused_at_its_line_with_the_exact_value() {
        let e = normalise(&mut pool("    cpu: 1500m\n")).unwrap_err();
        assert_eq!(e.location, "f.yaml:10:5");
        assert!(e.message.starts_with("spec.limits.cpu `1500m` is 1.5 vCPUs, not a whole number") && e.message.contains("write 1 or 2"), "{e}");
        let e = normalise(&mut pool("    nvidia.com/gpu: 0.5\n")).unwrap_err();
        assert!(e.message.starts_with("spec.limits.nvidia.com/gpu `0.5` is 0.5 units"), "{e}");
    }

    #[test]
    fn what_is_no_quantity_is_refused_as_the_api_server_refuses_it() {
        let e = normalise(&mut pool("    cpu: 1 k\n")).unwrap_err();
        assert!(e.message.contains("is not a Kubernetes quantity"), "{e}");
        assert!(normalise(&mut pool("    cpu: [1]\n")).is_err());
        assert!(normalise(&mut pool("    cpu: -1\n")).unwrap_err().message.contains("negative"));
    }

    #[test]
    fn v1alpha5_limits_resources_names_the_move_at_its_place() {
        let e = normalise(&mut pool("    resources:\n      nvidia.com/gpu: 8\n")).unwrap_err();
        assert_eq!(e.location, "f.yaml:10:5");
        assert!(e.message.starts_with("spec.limits.resources is the v1alpha5 Provisioner's field; a NodePool's limits are spec.limits.<resource>"), "{e}");
        assert!(e.message.contains("move `nvidia.com/gpu: 8` up one level"), "{e}");
    }

    #[test]
    fn overlay_capacity_takes_every_form_and_a_numeric_price_is_named() {
        let overlay = |spec: &str| doc(&format!("apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {{name: o}}\nspec:\n{spec}"));
        let mut d = overlay("  capacity:\n    example.com/fpga: 2e0\n    example.com/mem: 1Gi\n");
        normalise(&mut d).unwrap();
        assert_eq!(d.value["spec"]["capacity"], serde_json::json!({"example.com/fpga": 2, "example.com/mem": "1Gi"}));
        let mut d = overlay("  capacity:\n    nvidia.com/gpu: \"4000m\"\n");
        normalise(&mut d).unwrap();
        assert_eq!(d.value["spec"]["capacity"]["nvidia.com/gpu"], "4000m", "a capacity string is carried as written");
        let e = normalise(&mut overlay("  price: 1.5\n")).unwrap_err();
        assert_eq!(e.location, "f.yaml:5:3");
        assert!(e.message.contains("write price: \"1.5\""), "{e}");
    }

    #[test]
    fn locate_finds_the_key_under_its_parents_and_in_flow_mappings() {
        let d = pool("    cpu: 1\n");
        assert_eq!(locate(&d, &["spec", "limits", "cpu"]), "f.yaml:10:5");
        let flow = doc("kind: NodePool\nspec: {limits: {cpu: 1k}}\n");
        assert_eq!(locate(&flow, &["spec", "limits", "cpu"]), "f.yaml:2:17");
    }
}
