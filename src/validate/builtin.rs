//! Built-in kinds we emit that have no CRD: their upstream JSON schemas (vendored under
//! `src/crds/builtin/`, see the README there) and the API server's hand-written validation that a
//! schema cannot express (mutually exclusive fields, ranges, cross-field rules), following
//! `k8s.io/kubernetes/pkg/apis/{policy,autoscaling,core}/validation`.

use serde_json::{Value, json};

use super::{ValidateError, Validator, Violation, schema};

const DEFINITIONS: &str = include_str!("../crds/builtin/kubernetes/_definitions.json");
const PDB: &str = include_str!("../crds/builtin/kubernetes/poddisruptionbudget-policy-v1.json");
const HPA: &str =
    include_str!("../crds/builtin/kubernetes/horizontalpodautoscaler-autoscaling-v2.json");
const CONFIGMAP: &str = include_str!("../crds/builtin/kubernetes/configmap-v1.json");
const KUSTOMIZATION: &str = include_str!("../crds/builtin/kustomize/kustomization.json");

pub(super) fn register(v: &mut Validator) -> Result<(), ValidateError> {
    let defs: Value = serde_json::from_str(DEFINITIONS).expect("vendored _definitions.json");
    for (api_version, kind, text, checks) in [
        (
            "policy/v1",
            "PodDisruptionBudget",
            PDB,
            pdb as fn(&Value, &mut Vec<Violation>),
        ),
        ("autoscaling/v2", "HorizontalPodAutoscaler", HPA, hpa),
        ("v1", "ConfigMap", CONFIGMAP, configmap),
    ] {
        let mut s: Value = serde_json::from_str(text).expect("vendored kind schema");
        // The files refer to `/api/_definitions.json#/$defs/...`: inline the definitions instead
        // of resolving a URI (the validator does no I/O).
        rewrite_refs(&mut s);
        s["$schema"] = "https://json-schema.org/draft/2020-12/schema".into();
        // Upstream ObjectMeta accepts anything (no name required, null everywhere): use ours.
        s["properties"]["metadata"] = schema::object_meta();
        s["required"] = json!(["apiVersion", "kind", "metadata"]);
        s["$defs"] = reachable_defs(&s, &defs["$defs"]);
        v.insert(api_version, kind, &s, None, Some(checks))?;
        record_version(v, api_version, kind);
    }
    let k: Value = serde_json::from_str(KUSTOMIZATION).expect("vendored kustomization.json");
    v.insert(
        "kustomize.config.k8s.io/v1beta1",
        "Kustomization",
        &k,
        None,
        None,
    )?;
    record_version(v, "kustomize.config.k8s.io/v1beta1", "Kustomization");
    Ok(())
}

fn record_version(v: &mut Validator, api_version: &str, kind: &str) {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    v.versions
        .entry((group.to_owned(), kind.to_owned()))
        .or_default()
        .push((version.to_owned(), true));
}

/// The definitions `schema` reaches through `#/$defs/…` references, directly or through other definitions: the
/// validator indexes every definition it is given, and each kind reaches a few of the 34.
fn reachable_defs(schema: &Value, defs: &Value) -> Value {
    let mut reached = serde_json::Map::new();
    let mut pending = Vec::new();
    collect_def_refs(schema, &mut pending);
    while let Some(name) = pending.pop() {
        if reached.contains_key(&name) {
            continue;
        }
        if let Some(def) = defs.get(&name) {
            collect_def_refs(def, &mut pending);
            reached.insert(name, def.clone());
        }
    }
    Value::Object(reached)
}

/// The definition names of every `$ref: "#/$defs/NAME"` in `v` (after [`rewrite_refs`]).
fn collect_def_refs(v: &Value, names: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, val) in o {
                match (k.as_str(), val) {
                    ("$ref", Value::String(r)) => names.extend(r.strip_prefix("#/$defs/").map(str::to_owned)),
                    _ => collect_def_refs(val, names),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|item| collect_def_refs(item, names)),
        _ => {}
    }
}

fn rewrite_refs(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, val) in o.iter_mut() {
                if k == "$ref"
                    && let Value::String(r) = val
                    && let Some(rest) = r.strip_prefix("/api/_definitions.json")
                {
                    *r = rest.to_owned();
                } else {
                    rewrite_refs(val);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

fn push(out: &mut Vec<Violation>, pointer: &str, message: impl Into<String>) {
    out.push(Violation::new(pointer, message));
}

/// `ValidatePositiveIntOrPercent` + `IsNotMoreThan100Percent`.
fn int_or_percent(v: &Value, pointer: &str, out: &mut Vec<Violation>) {
    match v {
        Value::Number(n) => {
            if n.as_i64().is_none_or(|i| i < 0) {
                push(out, pointer, "must be a non-negative integer");
            }
        }
        Value::String(s) => match s
            .strip_suffix('%')
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        {
            None => push(
                out,
                pointer,
                "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%')",
            ),
            Some(d) => {
                if !d.parse::<u64>().is_ok_and(|p| p <= 100) {
                    push(out, pointer, "must not be greater than 100%");
                }
            }
        },
        _ => {}
    }
}

fn label_selector(sel: &Value, pointer: &str, out: &mut Vec<Violation>) {
    let Some(exprs) = sel.get("matchExpressions").and_then(Value::as_array) else {
        return;
    };
    for (i, e) in exprs.iter().enumerate() {
        let at = format!("{pointer}/matchExpressions/{i}");
        let n = e
            .get("values")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        match e.get("operator").and_then(Value::as_str) {
            Some("In" | "NotIn") if n == 0 => push(
                out,
                &format!("{at}/values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            ),
            Some("Exists" | "DoesNotExist") if n > 0 => push(
                out,
                &format!("{at}/values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
            Some("In" | "NotIn" | "Exists" | "DoesNotExist") => {}
            Some(op) => push(
                out,
                &format!("{at}/operator"),
                format!("not a valid selector operator: {op:?}"),
            ),
            None => {}
        }
    }
}

fn pdb(obj: &Value, out: &mut Vec<Violation>) {
    let spec = &obj["spec"];
    if spec.get("minAvailable").is_some() && spec.get("maxUnavailable").is_some() {
        push(
            out,
            "/spec",
            "minAvailable and maxUnavailable cannot be both set",
        );
    }
    for f in ["minAvailable", "maxUnavailable"] {
        if let Some(v) = spec.get(f) {
            int_or_percent(v, &format!("/spec/{f}"), out);
        }
    }
    if let Some(p) = spec
        .get("unhealthyPodEvictionPolicy")
        .and_then(Value::as_str)
        && !["IfHealthyBudget", "AlwaysAllow"].contains(&p)
    {
        push(
            out,
            "/spec/unhealthyPodEvictionPolicy",
            "supported values: \"AlwaysAllow\", \"IfHealthyBudget\"",
        );
    }
    if let Some(sel) = spec.get("selector") {
        label_selector(sel, "/spec/selector", out);
    }
}

fn hpa(obj: &Value, out: &mut Vec<Violation>) {
    let spec = &obj["spec"];
    let min = spec.get("minReplicas").and_then(Value::as_i64);
    let max = spec.get("maxReplicas").and_then(Value::as_i64);
    if let Some(m) = min
        && m < 1
    {
        push(
            out,
            "/spec/minReplicas",
            "must be greater than or equal to 1",
        );
    }
    if let Some(m) = max {
        if m < 1 {
            push(
                out,
                "/spec/maxReplicas",
                "must be greater than or equal to 1",
            );
        }
        if min.is_some_and(|n| m < n) {
            push(
                out,
                "/spec/maxReplicas",
                "must be greater than or equal to `minReplicas`",
            );
        }
    }
    let target = &spec["scaleTargetRef"];
    for f in ["kind", "name"] {
        if target.is_object()
            && target
                .get(f)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
        {
            push(out, &format!("/spec/scaleTargetRef/{f}"), "Required value");
        }
    }
    let sources = [
        ("Object", "object"),
        ("Pods", "pods"),
        ("Resource", "resource"),
        ("ContainerResource", "containerResource"),
        ("External", "external"),
    ];
    for (i, m) in spec
        .get("metrics")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("/spec/metrics/{i}");
        let Some(t) = m.get("type").and_then(Value::as_str) else {
            push(
                out,
                &format!("{at}/type"),
                "must specify a metric source type",
            );
            continue;
        };
        let Some((_, field)) = sources.iter().find(|(ty, _)| *ty == t) else {
            push(
                out,
                &format!("{at}/type"),
                format!("unsupported metric source type {t:?}"),
            );
            continue;
        };
        for (_, other) in sources {
            if other != *field && m.get(other).is_some() {
                push(
                    out,
                    &format!("{at}/{other}"),
                    "must populate the given metric source only",
                );
            }
        }
        let Some(src) = m.get(*field) else {
            push(
                out,
                &format!("{at}/{field}"),
                "must populate information for the given metric source",
            );
            continue;
        };
        if let Some(target) = src.get("target") {
            let at = format!("{at}/{field}/target");
            let needs = match target.get("type").and_then(Value::as_str) {
                Some("Utilization") => "averageUtilization",
                Some("Value") => "value",
                Some("AverageValue") => "averageValue",
                other => {
                    push(
                        out,
                        &format!("{at}/type"),
                        format!(
                            "must be either Utilization, Value, or AverageValue, not {other:?}"
                        ),
                    );
                    continue;
                }
            };
            if target.get(needs).is_none() {
                push(
                    out,
                    &format!("{at}/{needs}"),
                    "must be set for this target type",
                );
            }
            if let Some(u) = target.get("averageUtilization").and_then(Value::as_i64)
                && u <= 0
            {
                push(
                    out,
                    &format!("{at}/averageUtilization"),
                    "must be greater than 0",
                );
            }
        }
    }
    for dir in ["scaleUp", "scaleDown"] {
        let Some(rules) = spec.get("behavior").and_then(|b| b.get(dir)) else {
            continue;
        };
        let at = format!("/spec/behavior/{dir}");
        if let Some(w) = rules
            .get("stabilizationWindowSeconds")
            .and_then(Value::as_i64)
            && !(0..=3600).contains(&w)
        {
            push(
                out,
                &format!("{at}/stabilizationWindowSeconds"),
                "must be between 0 and 3600",
            );
        }
        if let Some(p) = rules.get("selectPolicy").and_then(Value::as_str)
            && !["Max", "Min", "Disabled"].contains(&p)
        {
            push(
                out,
                &format!("{at}/selectPolicy"),
                "supported values: \"Disabled\", \"Max\", \"Min\"",
            );
        }
        for (i, p) in rules
            .get("policies")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("{at}/policies/{i}");
            if !matches!(
                p.get("type").and_then(Value::as_str),
                Some("Pods" | "Percent")
            ) {
                push(
                    out,
                    &format!("{at}/type"),
                    "supported values: \"Percent\", \"Pods\"",
                );
            }
            if p.get("value")
                .and_then(Value::as_i64)
                .is_none_or(|v| v <= 0)
            {
                push(out, &format!("{at}/value"), "must be greater than zero");
            }
            if p.get("periodSeconds")
                .and_then(Value::as_i64)
                .is_none_or(|s| !(1..=1800).contains(&s))
            {
                push(
                    out,
                    &format!("{at}/periodSeconds"),
                    "must be greater than zero and less than or equal to 1800",
                );
            }
        }
    }
}

fn configmap(obj: &Value, out: &mut Vec<Violation>) {
    for field in ["data", "binaryData"] {
        let Some(map) = obj.get(field).and_then(Value::as_object) else {
            continue;
        };
        for (k, v) in map {
            let at = format!("/{field}/{}", schema::escape(k));
            let key_ok = !k.is_empty()
                && k.len() <= 253
                && k != "."
                && k != ".."
                && k.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
            if !key_ok {
                push(
                    out,
                    &at,
                    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                );
            }
            if !v.is_string() {
                push(out, &at, "must be a string");
            }
            if field == "binaryData" && obj.get("data").and_then(|d| d.get(k)).is_some() {
                push(out, &at, "duplicate of key present in data");
            }
        }
    }
}
