//! Which fields of an original object a profile line consumed: the rest are carried in `raw` blocks or reported.

use std::collections::BTreeSet;

use serde_json::Value;

use super::model::Warning;
use super::read::Doc;

/// Leaf fields of an object as (dotted path, value), arrays indexed (`requirements[2].values[0]`).
pub fn leaves(value: &Value, prefix: &str, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                leaves(v, &if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                leaves(v, &format!("{prefix}[{i}]"), out);
            }
        }
        _ => out.push((prefix.to_string(), value.clone())),
    }
}

/// The value at a dotted path with `[i]` indexes (keys may contain dots: the longest matching key wins).
fn lookup<'v>(value: &'v Value, path: &str) -> &'v Value {
    if path.is_empty() {
        return value;
    }
    if let Some(rest) = path.strip_prefix('[') {
        let (i, rest) = rest.split_once(']').unwrap_or((rest, ""));
        return lookup(&value[i.parse::<usize>().unwrap_or(usize::MAX)], rest.trim_start_matches('.'));
    }
    if let Some(map) = value.as_object() {
        let mut keys: Vec<&String> = map.keys().filter(|k| path == k.as_str() || path.starts_with(&format!("{k}.")) || path.starts_with(&format!("{k}["))).collect();
        keys.sort_by_key(|k| std::cmp::Reverse(k.len()));
        if let Some(k) = keys.first() {
            return lookup(&map[k.as_str()], path[k.len()..].trim_start_matches('.'));
        }
    }
    &Value::Null
}

/// Consumed field prefixes of one object; the rest become warnings.
#[derive(Default)]
pub struct Consumed(BTreeSet<String>);

impl Consumed {
    pub fn take(&mut self, path: impl Into<String>) {
        self.0.insert(path.into());
    }

    /// Whether `path` or a prefix of it that ends before a `.` or `[` was taken. Each such prefix is looked up in
    /// the set, rather than every taken prefix tried against the path: that made a NodePool with n requirements
    /// cost n² (10,000 requirements: 14 s).
    pub(super) fn covers(&self, path: &str) -> bool {
        let boundaries = path.match_indices(['.', '[']).map(|(i, _)| i).chain([path.len()]);
        boundaries.into_iter().any(|end| self.0.contains(&path[..end]))
    }

    /// Warnings (and profile comments) for the leaves not consumed that no `raw` block may carry (`owned`, from
    /// `raw::carry`: fields gpuplan writes itself).
    pub fn leftovers(&self, doc: &Doc, owned: &[String], warnings: &mut Vec<Warning>) -> Vec<String> {
        let mut comments = Vec::new();
        let mut reported = BTreeSet::new();
        for path in owned.iter().cloned() {
            // One warning per list item (a whole requirement, budget, taint), not per leaf.
            let path = match path.find(']') {
                Some(end) => path[..=end].to_string(),
                None => path,
            };
            if !reported.insert(path.clone()) {
                continue;
            }
            let shown = lookup(&doc.object, &path).to_string();
            let instead = crate::profile::raw::owner(&doc.kind, &path).map_or("", |o| o.1);
            warnings.push(Warning {
                file: doc.file.clone(),
                object: format!("{}/{}", doc.kind, doc.name),
                field: path.clone(),
                message: format!("not expressible in a profile, and not as raw either: gpuplan writes this field from {instead} (value {shown}); kept as a comment"),
            });
            comments.push(format!("not adopted: {path} = {shown} ({} {}/{})", doc.file, doc.kind, doc.name));
        }
        comments
    }
}
