//! What no profile setting says, carried verbatim: the fields of a NodePool or node class that no line consumed
//! become a `raw "<Kind>"` block (compile merges it back into the same object, so the verification simulates it),
//! and kubelet settings become a `kubelet { … }` block. Only fields gpuplan owns (`profile::raw::owner`: it writes
//! them from a setting or computes them) stay a warning and a `// not adopted:` comment, since a raw block may not
//! set them.

use serde_json::{Map, Value};

use super::consumed::{leaves, Consumed};
use super::model::{q, q_text, Line, Warning};
use super::read::Doc;
use crate::profile::raw::{kubelet_name, owner};

/// The unconsumed fields of `doc` a raw fragment may carry (lists whole: a merge patch replaces them), and the
/// unconsumed leaf paths it may not (owned by gpuplan).
fn split(value: &Value, path: &str, used: &Consumed, kind: &str, owned: &mut Vec<String>) -> Option<Value> {
    if !path.is_empty() && used.covers(path) {
        return None;
    }
    match value {
        Value::Object(map) if !map.is_empty() => {
            let mut out = Map::new();
            for (k, v) in map {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                if let Some(x) = split(v, &p, used, kind, owned) {
                    out.insert(k.clone(), x);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        _ => {
            let mut all = Vec::new();
            leaves(value, path, &mut all);
            let open: Vec<String> = all.into_iter().map(|(p, _)| p).filter(|p| !used.covers(p)).collect();
            if open.is_empty() {
                return None;
            }
            if owner(kind, path).is_some() {
                owned.extend(open);
                return None;
            }
            Some(value.clone())
        }
    }
}

/// A `raw` line for the object's unconsumed fields (with one warning per top-level field carried, naming it), and
/// the unconsumed paths gpuplan owns (for [`Consumed::leftovers`]).
pub fn carry(doc: &Doc, used: &Consumed, kind: &str, warnings: &mut Vec<Warning>) -> (Option<Line>, Vec<String>) {
    carry_with_defaults(doc, used, kind, &[], warnings)
}

/// [`carry`], where `defaults` are fields the original lacks and adopt wrote in at the value the original gets by
/// default (an Auto Mode NodeClass's ephemeral storage): named as such, not as the original's.
pub fn carry_with_defaults(doc: &Doc, used: &Consumed, kind: &str, defaults: &[String], warnings: &mut Vec<Warning>) -> (Option<Line>, Vec<String>) {
    let mut owned = Vec::new();
    let fragment = split(&doc.object, "", used, kind, &mut owned);
    let Some(fragment) = fragment else { return (None, owned) };
    let mut fields = Vec::new();
    crate::profile::raw::leaf_paths(&fragment, "", &mut fields);
    let mut deleted = Vec::new();
    null_paths(&fragment, "", &mut deleted);
    for field in &fields {
        let message = if defaults.contains(field) {
            format!("not in the original: its default written in a `raw {}` block, so gpuplan's template's value does not apply", q(kind))
        } else if deleted.contains(field) {
            format!("not in the original (Karpenter's default applies): `{field}: null` in a `raw {}` block keeps out what gpuplan's template writes there (delete that line to take gpuplan's)", q(kind))
        } else {
            format!("no profile setting says it; carried verbatim in a `raw {}` block", q(kind))
        };
        warnings.push(Warning { file: doc.file.clone(), object: format!("{}/{}", doc.kind, doc.name), field: field.clone(), message });
    }
    // The comment names only fields the original has: a deletion is of a field it lacks, said as such.
    let (defaulted, fields): (Vec<String>, Vec<String>) = fields.into_iter().partition(|f| defaults.contains(f));
    let (absent, carried): (Vec<String>, Vec<String>) = fields.into_iter().partition(|f| deleted.contains(f));
    let mut from = Vec::new();
    if !defaulted.is_empty() {
        from.push(format!("absent from {} {}/{}: {} (the default written in, so gpuplan's template's does not apply)", doc.file, doc.kind, doc.name, defaulted.join(", ")));
    }
    if !carried.is_empty() {
        from.push(format!("{} {}/{}: no profile setting for {}: carried verbatim", doc.file, doc.kind, doc.name, carried.join(", ")));
    }
    if !absent.is_empty() {
        from.push(format!("absent from {} {}/{}: {} (`null` keeps out what gpuplan's template writes: Karpenter's default applies)", doc.file, doc.kind, doc.name, absent.join(", ")));
    }
    let from = from.join("; ");
    (Some(raw_line(kind, &fragment, from)), owned)
}

/// The paths of the `null` leaves of a fragment, as [`crate::profile::raw::leaf_paths`] writes them: the deletions.
fn null_paths(value: &Value, prefix: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| null_paths(v, &if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, out)),
        Value::Null => out.push(prefix.to_string()),
        _ => {}
    }
}

/// The fragment [`carry`] writes for `doc` (None when everything was consumed).
pub fn unconsumed(doc: &Doc, used: &Consumed) -> Option<Value> {
    split(&doc.object, "", used, &doc.kind, &mut Vec::new())
}

/// `fragment` without what `base` already says with the same value (a class's `raw` beside the cluster block's,
/// which compile merges into every class of the profile first).
pub fn without(fragment: &Value, base: Option<&Value>) -> Option<Value> {
    match (fragment, base) {
        (_, Some(b)) if b == fragment => None,
        (Value::Object(map), Some(Value::Object(b))) => {
            let rest: Map<String, Value> = map.iter().filter_map(|(k, v)| without(v, b.get(k)).map(|v| (k.clone(), v))).collect();
            (!rest.is_empty()).then_some(Value::Object(rest))
        }
        _ => Some(fragment.clone()),
    }
}

/// `null` for each field of `base` (the cluster block's fragment, merged into every class) that `object` (another
/// class) does not have, so that its pools' `raw` removes it again.
pub fn deletions(base: &Value, object: &Value) -> Option<Value> {
    let (Value::Object(b), Value::Object(o)) = (base, object) else { return None };
    let out: Map<String, Value> = b.iter().filter_map(|(k, v)| match o.get(k) {
        None => Some((k.clone(), Value::Null)),
        Some(x) => deletions(v, x).map(|d| (k.clone(), d)),
    }).collect();
    (!out.is_empty()).then_some(Value::Object(out))
}

/// gpuplan's own GitOps annotations on its own objects (prune protection, Argo CD sync waves and options:
/// `render::gitops_annotations`) are derived from the cluster's `gitops` line, not the object's fields.
pub fn take_gitops_annotations(doc: &Doc, used: &mut Consumed) {
    if !doc.is_gpuplans() {
        return;
    }
    for (key, _) in crate::render::gitops_annotations(&doc.kind, &doc.name, true) {
        used.take(format!("metadata.annotations.{key}"));
    }
}

/// `raw "<Kind>" #"""…"""#`: the fragment as canonical YAML in a KDL v2 multi-line raw string (dedented by the
/// closing line's indentation, which `write` indents with the block), or, for the rare text holding `"""`, one
/// escaped line.
pub fn raw_line(kind: &str, fragment: &Value, from: String) -> Line {
    let yaml = crate::render::to_yaml(fragment);
    let kdl = if yaml.contains("\"\"\"") {
        format!("raw {} {}", q(kind), q_text(&yaml))
    } else {
        let body: String = yaml.lines().map(|l| if l.is_empty() { "\n".to_string() } else { format!("    {l}\n") }).collect();
        format!("raw {} #\"\"\"\n{body}    \"\"\"#", q(kind))
    };
    Line::new(kdl, from)
}

/// `kubelet { … }` from a `spec.kubelet` (the EC2NodeClass's, or a v1beta1-style NodePool template's), taking the
/// fields it says; a field without a `kubelet` child stays unconsumed.
pub fn kubelet_block(kubelet: &Value, field: &str, at: &str, used: &mut Consumed) -> Option<Line> {
    let map = kubelet.as_object()?;
    let mut children = Vec::new();
    for (k, v) in map {
        let Some(name) = kubelet_name(k) else { continue };
        let value = match v {
            Value::Object(m) => m.iter().map(|(key, x)| format!("{}={}", prop_key(key), q(&scalar(x)))).collect::<Vec<_>>().join(" "),
            Value::Array(items) => items.iter().map(|x| q(&scalar(x))).collect::<Vec<_>>().join(" "),
            Value::Bool(b) => if *b { "#true".into() } else { "#false".into() },
            other => scalar(other),
        };
        if value.is_empty() {
            continue;
        }
        children.push(Line::new(format!("{name} {value}"), format!("{at} {field}.{k}")));
        used.take(format!("{field}.{k}"));
    }
    (!children.is_empty()).then(|| Line::block("kubelet", format!("{at} {field}"), children))
}

fn scalar(v: &Value) -> String {
    v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())
}

/// A KDL property key: bare when it is a plain identifier (`memory.available`), quoted otherwise.
fn prop_key(key: &str) -> String {
    let bare = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')) && !key.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    if bare { key.to_string() } else { q(key) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A second class's pools carry only what differs from the cluster block's fragment (compile merges that one into
    /// every class first), and delete what the cluster's adds but the class lacks.
    #[test]
    fn another_classs_raw_is_what_differs_from_the_cluster_blocks() {
        let cluster = json!({"spec": {"tags": {"team": "ml", "cost": "a"}, "metadataOptions": {"httpTokens": "optional"}}});
        let other = json!({"spec": {"tags": {"team": "ml", "cost": "b"}, "metadataOptions": {"httpTokens": "optional"}}});
        assert_eq!(without(&other, Some(&cluster)), Some(json!({"spec": {"tags": {"cost": "b"}}})));
        assert_eq!(without(&cluster, Some(&cluster)), None);
        let object = json!({"spec": {"tags": {"team": "ml"}}});
        assert_eq!(deletions(&cluster, &object), Some(json!({"spec": {"tags": {"cost": null}, "metadataOptions": null}})));
    }
}
