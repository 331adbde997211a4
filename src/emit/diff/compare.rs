//! What changed inside one object: NodePools field group by field group (requirements, limits, weight,
//! disruption, the worst-case basis, costs), everything else by JSON path.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::detail::{CAPACITY_TYPE_LABEL, CostMeasure, Detail, INSTANCE_TYPE_LABEL, WORST_CASE_BASIS_ANNOTATION, value_text};
use super::objects::{cost_of, str_at};

/// Requirements of a NodePool by (key, operator) → the requirement minus key and operator; removed from `v`.
fn take_requirements(v: &mut Value) -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    let Some(reqs) = v
        .pointer_mut("/spec/template/spec/requirements")
        .map(Value::take)
    else {
        return out;
    };
    if let Some(obj) = v
        .pointer_mut("/spec/template/spec")
        .and_then(Value::as_object_mut)
    {
        obj.remove("requirements");
    }
    let Value::Array(reqs) = reqs else { return out };
    for (i, mut req) in reqs.into_iter().enumerate() {
        let key = str_at(&req, "/key")
            .map(str::to_owned)
            .unwrap_or_else(|| format!("[{i}]"));
        let op = str_at(&req, "/operator").unwrap_or_default().to_owned();
        if let Some(o) = req.as_object_mut() {
            o.remove("key");
            o.remove("operator");
        }
        out.insert((key, op), req);
    }
    out
}

fn values_of(req: Option<&Value>) -> Vec<String> {
    req.and_then(|r| r.get("values"))
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |a| a.iter().map(value_text).collect())
}

fn requirement_text(op: &str, req: &Value) -> String {
    let mut s = op.to_owned();
    if let Some(values) = req.get("values").and_then(Value::as_array) {
        s.push_str(&format!(
            " [{}]",
            values.iter().map(value_text).collect::<Vec<_>>().join(", ")
        ));
    }
    if let Some(obj) = req.as_object() {
        for (k, v) in obj {
            if k != "values" {
                s.push_str(&format!(" {k}={}", value_text(v)));
            }
        }
    }
    s
}

fn budget_text(b: &Value) -> String {
    let Some(obj) = b.as_object() else {
        return value_text(b);
    };
    let mut parts = Vec::new();
    if let Some(n) = obj.get("nodes") {
        parts.push(format!("nodes {}", value_text(n)));
    }
    if let Some(Value::Array(r)) = obj.get("reasons") {
        parts.push(format!(
            "reasons {}",
            r.iter().map(value_text).collect::<Vec<_>>().join("|")
        ));
    }
    if let Some(s) = obj.get("schedule") {
        parts.push(format!("schedule \"{}\"", value_text(s)));
    }
    if let Some(d) = obj.get("duration") {
        parts.push(format!("for {}", value_text(d)));
    }
    for (k, v) in obj {
        if !matches!(k.as_str(), "nodes" | "reasons" | "schedule" | "duration") {
            parts.push(format!("{k} {}", value_text(v)));
        }
    }
    parts.join(" ")
}

fn budgets_text(v: Option<&Value>) -> Option<String> {
    let v = v?;
    Some(match v {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(budget_text).collect::<Vec<_>>().join("; ")
        ),
        other => value_text(other),
    })
}

fn take_pointer(v: &mut Value, parent: &str, key: &str) -> Option<Value> {
    v.pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .and_then(|o| o.remove(key))
}

/// A NodePool's changes, one field group at a time. Each group takes its fields out of both copies, so the
/// generic diff of what is left ([`field_details`]) does not report them again.
pub(super) fn nodepool_details(old: &Value, new: &Value) -> Vec<Detail> {
    let mut o = old.clone();
    let mut n = new.clone();
    let mut details = requirement_details(&mut o, &mut n);
    details.extend(limit_details(&mut o, &mut n));
    details.extend(weight_detail(&mut o, &mut n));
    details.extend(disruption_details(&mut o, &mut n));
    let costs = cost_details(old, new);
    match basis_detail(&mut o, &mut n, !costs.is_empty()) {
        Some(Basis::Unguaranteed(note)) => details.insert(0, note),
        Some(Basis::Changed(field)) => details.push(field),
        None => {}
    }

    // Costs.
    details.extend(costs);
    for v in [&mut o, &mut n] {
        for m in CostMeasure::ALL {
            take_pointer(v, "/metadata/annotations", m.annotation());
        }
        take_pointer(v, "/metadata/annotations", super::detail::LEGACY_AT_LIMIT_COST_ANNOTATION);
    }

    details.extend(field_details(&o, &n));
    details
}

/// Requirements: the instance-type and capacity-type `In` values as added/removed sets (first), then every other
/// requirement change as `Op [values]`.
fn requirement_details(o: &mut Value, n: &mut Value) -> Vec<Detail> {
    let ro = take_requirements(o);
    let rn = take_requirements(n);
    let keys: BTreeSet<&(String, String)> = ro.keys().chain(rn.keys()).collect();
    let (mut it, mut ct, mut other) = (None, None, Vec::new());
    for k in keys {
        let (a, b) = (ro.get(k), rn.get(k));
        if a == b {
            continue;
        }
        let special = k.1 == "In" && (k.0 == INSTANCE_TYPE_LABEL || k.0 == CAPACITY_TYPE_LABEL);
        if special {
            if let Some(sets) = value_changes(a, b) {
                let d = if k.0 == INSTANCE_TYPE_LABEL {
                    &mut it
                } else {
                    &mut ct
                };
                *d = Some(sets);
            }
            other.extend(requirement_rest(k, a, b));
        } else {
            other.push(Detail::Requirement {
                key: k.0.clone(),
                old: a.map(|r| requirement_text(&k.1, r)),
                new: b.map(|r| requirement_text(&k.1, r)),
            });
        }
    }
    let mut details = Vec::new();
    if let Some((added, removed)) = it {
        details.push(Detail::InstanceTypes { added, removed });
    }
    if let Some((added, removed)) = ct {
        details.push(Detail::CapacityTypes { added, removed });
    }
    details.extend(other);
    details
}

/// The values a requirement gained and lost; `None` when the set is the same.
fn value_changes(a: Option<&Value>, b: Option<&Value>) -> Option<(Vec<String>, Vec<String>)> {
    let (va, vb) = (values_of(a), values_of(b));
    let added: Vec<String> = vb.iter().filter(|x| !va.contains(x)).cloned().collect();
    let removed: Vec<String> = va.iter().filter(|x| !vb.contains(x)).cloned().collect();
    (!added.is_empty() || !removed.is_empty()).then_some((added, removed))
}

/// Anything else about the requirement (minValues, order only): say so.
fn requirement_rest(k: &(String, String), a: Option<&Value>, b: Option<&Value>) -> Option<Detail> {
    let strip = |r: Option<&Value>| {
        r.cloned().map(|mut r| {
            if let Some(o) = r.as_object_mut() {
                o.remove("values");
            }
            r
        })
    };
    let (sa, sb) = (strip(a), strip(b));
    (sa != sb).then(|| Detail::Requirement {
        key: k.0.clone(),
        old: sa.map(|r| requirement_text(&k.1, &r)),
        new: sb.map(|r| requirement_text(&k.1, &r)),
    })
}

/// Limits: one detail per resource whose `spec.limits` value changed.
fn limit_details(o: &mut Value, n: &mut Value) -> Vec<Detail> {
    let lo = take_pointer(o, "/spec", "limits");
    let ln = take_pointer(n, "/spec", "limits");
    let empty = serde_json::Map::new();
    let (lo_m, ln_m) = (
        lo.as_ref().and_then(Value::as_object).unwrap_or(&empty),
        ln.as_ref().and_then(Value::as_object).unwrap_or(&empty),
    );
    let resources: BTreeSet<&String> = lo_m.keys().chain(ln_m.keys()).collect();
    let mut details = Vec::new();
    for r in resources {
        let (a, b) = (lo_m.get(r).map(value_text), ln_m.get(r).map(value_text));
        if a != b {
            details.push(Detail::Limit {
                resource: r.clone(),
                old: a,
                new: b,
            });
        }
    }
    details
}

/// Weight: `spec.weight`.
fn weight_detail(o: &mut Value, n: &mut Value) -> Option<Detail> {
    let (wo, wn) = (
        take_pointer(o, "/spec", "weight"),
        take_pointer(n, "/spec", "weight"),
    );
    (wo != wn).then(|| Detail::Weight {
        old: wo.as_ref().map(value_text),
        new: wn.as_ref().map(value_text),
    })
}

/// Disruption: consolidation policy, consolidate-after and the budgets (compactly); other disruption fields are
/// put back for the generic diff.
fn disruption_details(o: &mut Value, n: &mut Value) -> Vec<Detail> {
    let mut details = Vec::new();
    let dobj = |v: &mut Value| take_pointer(v, "/spec", "disruption").unwrap_or(Value::Null);
    let (mut dob, mut dnb) = (dobj(o), dobj(n));
    for field in ["consolidationPolicy", "consolidateAfter", "budgets"] {
        let a = dob.as_object_mut().and_then(|m| m.remove(field));
        let b = dnb.as_object_mut().and_then(|m| m.remove(field));
        if a != b {
            let render = |v: Option<&Value>| {
                if field == "budgets" {
                    budgets_text(v)
                } else {
                    v.map(value_text)
                }
            };
            details.push(Detail::Disruption {
                field: field.into(),
                old: render(a.as_ref()),
                new: render(b.as_ref()),
            });
        }
    }
    // Other disruption fields fall through to the generic diff.
    for (v, d) in [(o, dob), (n, dnb)] {
        if let (Some(spec), Value::Object(m)) =
            (v.pointer_mut("/spec").and_then(Value::as_object_mut), d)
            && !m.is_empty()
        {
            spec.insert("disruption".into(), Value::Object(m));
        }
    }
    details
}

/// What [`basis_detail`] says about the worst-case basis annotation.
enum Basis {
    /// The new worst case is not guaranteed: a note that leads the details.
    Unguaranteed(Detail),
    /// The basis text changed (and is guaranteed): a field detail at the end.
    Changed(Detail),
}

/// What the worst case assumes: say plainly when it is only empirical (spot-ceiling "observed-max") or computed
/// from estimated prices. The drain peak's words follow its figure (a Cost detail).
fn basis_detail(o: &mut Value, n: &mut Value, costs_changed: bool) -> Option<Basis> {
    let basis = |v: &mut Value| take_pointer(v, "/metadata/annotations", WORST_CASE_BASIS_ANNOTATION).and_then(|b| b.as_str().map(String::from));
    let (bo, bn) = (basis(o), basis(n));
    for v in [o, n] {
        take_pointer(v, "/metadata/annotations", crate::render::DRAIN_PEAK_BASIS_ANNOTATION);
    }
    let unguaranteed = bn.as_deref().and_then(|b| {
        if b.contains("EMPIRICAL") {
            Some("worst case is EMPIRICAL, not guaranteed (spot bounded by the highest observed spot price)")
        } else if b.contains("ESTIMATED") {
            Some("worst case is ESTIMATED, not guaranteed (on-demand prices the catalog marks as estimates)")
        } else {
            None
        }
    });
    if let Some(note) = unguaranteed.filter(|_| bo != bn || costs_changed) {
        Some(Basis::Unguaranteed(Detail::Note { text: note.into() }))
    } else if bo != bn {
        Some(Basis::Changed(Detail::Field { path: "worst-case basis".into(), old: bo.map(Value::String), new: bn.map(Value::String) }))
    } else {
        None
    }
}

pub(super) fn cost_details(old: &Value, new: &Value) -> Vec<Detail> {
    CostMeasure::ALL
        .into_iter()
        .filter_map(|measure| {
            let (a, b) = (cost_of(old, measure), cost_of(new, measure));
            (a != b).then_some(Detail::Cost {
                measure,
                old: a,
                new: b,
            })
        })
        .collect()
}

fn path_key(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (path.is_empty(), plain) {
        (true, true) => key.to_owned(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{}]", serde_json::to_string(key).expect("string")),
    }
}

/// Leaf-level differences by JSON path, ignoring the identity fields (kind, metadata.name, metadata.namespace).
pub(super) fn field_details(old: &Value, new: &Value) -> Vec<Detail> {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("kind");
        }
        take_pointer(&mut v, "/metadata", "name");
        take_pointer(&mut v, "/metadata", "namespace");
        v
    };
    let mut out = Vec::new();
    walk(
        String::new(),
        Some(&strip(old)),
        Some(&strip(new)),
        &mut out,
    );
    out
}

fn walk(path: String, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Detail>) {
    if a == b {
        return;
    }
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                walk(path_key(&path, k), x.get(k), y.get(k), out);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y)))
            if x.len() == y.len() && x.iter().chain(y).any(|v| v.is_object() || v.is_array()) =>
        {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                walk(format!("{path}[{i}]"), Some(p), Some(q), out);
            }
        }
        _ => out.push(Detail::Field {
            path: if path.is_empty() {
                "(document)".into()
            } else {
                path
            },
            old: a.cloned(),
            new: b.cloned(),
        }),
    }
}

/// Words for an added NodePool: how wide, what capacity, how big, what it may cost.
pub(super) fn nodepool_overview(v: &Value) -> String {
    let mut parts = Vec::new();
    let mut v2 = v.clone();
    let reqs = take_requirements(&mut v2);
    let key = |label: &str| (label.to_owned(), "In".to_owned());
    let types = values_of(reqs.get(&key(INSTANCE_TYPE_LABEL)));
    if !types.is_empty() {
        parts.push(format!(
            "{} instance type{}",
            types.len(),
            if types.len() == 1 { "" } else { "s" }
        ));
    }
    let caps = values_of(reqs.get(&key(CAPACITY_TYPE_LABEL)));
    if !caps.is_empty() {
        parts.push(caps.join("+"));
    }
    if let Some(limits) = v.pointer("/spec/limits").and_then(Value::as_object) {
        for (r, l) in limits {
            parts.push(format!("limit {r} {}", value_text(l)));
        }
    }
    if let Some(w) = v.pointer("/spec/weight") {
        parts.push(format!("weight {}", value_text(w)));
    }
    parts.join(", ")
}
