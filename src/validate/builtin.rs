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
const NAMESPACE: &str = include_str!("../crds/builtin/kubernetes/namespace-v1.json");
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
        // Its name is a DNS label (k8s.io/kubernetes pkg/apis/core/validation ValidateNamespace,
        // ValidateNamespaceName = apimachinery NameIsDNSLabel): gpuplan's namespaces are checked as such when parsed.
        ("v1", "Namespace", NAMESPACE, no_checks),
    ] {
        let mut s: Value = serde_json::from_str(text).expect("vendored kind schema");
        // The files refer to `/api/_definitions.json#/$defs/...`: inline the definitions instead
        // of resolving a URI (the validator does no I/O).
        rewrite_refs(&mut s);
        s["$schema"] = "https://json-schema.org/draft/2020-12/schema".into();
        // Upstream ObjectMeta accepts anything (no name required, null everywhere): use ours.
        s["properties"]["metadata"] = schema::object_meta();
        if kind == "PodDisruptionBudget" {
            // A PDB's name is only checked as a path segment (k8s.io/kubernetes pkg/apis/policy/validation
            // ValidatePodDisruptionBudget checks the spec only; k8s.io/apiserver pkg/registry/rest/create.go
            // ValidateCreate adds ValidateObjectMetaAccessor with path.ValidatePathSegmentName).
            s["properties"]["metadata"]["properties"]["name"] = path_segment_name();
        }
        if kind == "Namespace" {
            // A namespace's name is a DNS-1123 label, no dots (k8s.io/kubernetes pkg/apis/core/validation
            // ValidateNamespaceName = apimachinery NameIsDNSLabel), not the subdomain other objects take.
            s["properties"]["metadata"]["properties"]["name"] = json!({"type": "string", "minLength": 1, "maxLength": 63, "pattern": schema::DNS_LABEL});
        }
        s["required"] = json!(["apiVersion", "kind", "metadata"]);
        s["$defs"] = reachable_defs(&s, &defs["$defs"]);
        bound_go_integers(&mut s);
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

/// `IsValidPathSegmentName` (k8s.io/apimachinery pkg/api/validate/content/path.go): not `.` or `..`, no `/` or `%`.
fn path_segment_name() -> Value {
    json!({"type": "string", "minLength": 1, "pattern": "^[^/%]*$", "not": {"enum": [".", ".."]}})
}

/// The API server decodes a built-in kind into Go structs, so an integer outside its Go type fails decoding
/// ("cannot unmarshal number 2147483648 into Go struct field ... of type int32"): `format: int32`/`int64` become
/// bounds, and so does IntOrString's integer (k8s.io/apimachinery pkg/util/intstr: `IntVal int32`).
fn bound_go_integers(v: &mut Value) {
    const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
    match v {
        Value::Object(m) => {
            let bounds = match m.get("format").and_then(Value::as_str) {
                Some("int32") => Some((i64::from(i32::MIN), i64::from(i32::MAX))),
                Some("int64") => Some((i64::MIN, i64::MAX)),
                _ => None,
            };
            if let Some((min, max)) = bounds {
                m.insert("minimum".into(), json!(min));
                m.insert("maximum".into(), json!(max));
            }
            if let Some(Value::Array(branches)) = m.get_mut("$defs").and_then(|d| d.get_mut(INT_OR_STRING)).and_then(|d| d.get_mut("oneOf")) {
                for b in branches {
                    if b["type"].as_array().is_some_and(|t| t.contains(&json!("integer"))) {
                        b["minimum"] = json!(i32::MIN);
                        b["maximum"] = json!(i32::MAX);
                    }
                }
            }
            for c in m.values_mut() {
                bound_go_integers(c);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(bound_go_integers),
        _ => {}
    }
}

fn is_path_segment_name(s: &str) -> bool {
    s != "." && s != ".." && !s.contains(['/', '%'])
}

fn matches(pattern: &'static str, s: &str) -> bool {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<&'static str, regex::Regex>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    cache.entry(pattern).or_insert_with(|| regex::Regex::new(pattern).expect("valid pattern")).is_match(s)
}

/// `IsQualifiedName` (label keys): an optional DNS-1123 subdomain prefix of at most 253 characters and `/`, then
/// a name of at most 63.
fn is_qualified_name(s: &str) -> bool {
    let prefix_ok = s.rsplit_once('/').is_none_or(|(p, _)| p.len() <= 253);
    prefix_ok && matches(schema::QUALIFIED_NAME, s)
}

/// `IsValidLabelValue`: at most 63 characters of the label-value syntax (empty allowed).
fn is_label_value(s: &str) -> bool {
    s.len() <= 63 && matches(schema::LABEL_VALUE, s)
}

/// resource.ParseQuantity's syntax (k8s.io/apimachinery pkg/api/resource/quantity.go): a decimal number with an
/// optional sign, then a binary-SI (`Ki`…`Ei`), decimal-SI (`n u m k M G T P E`) or decimal-exponent (`e3`, `E-2`)
/// suffix. The sign of its value (-1, 0, 1), or None when it does not parse. Quantities decode from JSON numbers
/// too.
fn quantity_sign(v: &Value) -> Option<i8> {
    let text = match v {
        Value::String(s) => s.trim().to_owned(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, &text[..]),
    };
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(end);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return None;
    }
    let suffix_ok = matches!(suffix, "" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E")
        || suffix
            .strip_prefix(['e', 'E'])
            .map(|e| e.strip_prefix(['+', '-']).unwrap_or(e))
            .is_some_and(|e| !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()));
    if !suffix_ok {
        return None;
    }
    let zero = number.bytes().all(|b| b == b'0' || b == b'.');
    Some(if zero { 0 } else if negative { -1 } else { 1 })
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
        Value::Number(n)
            if n.as_i64().is_none_or(|i| i < 0) => {
                push(out, pointer, "must be a non-negative integer");
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

/// metav1validation.ValidateLabelSelector with AllowInvalidLabelValueInSelector false (k8s.io/apimachinery
/// pkg/apis/meta/v1/validation/validation.go): matchLabels keys and values, matchExpressions operators, keys and
/// values.
fn label_selector(sel: &Value, pointer: &str, out: &mut Vec<Violation>) {
    for (k, v) in sel.get("matchLabels").and_then(Value::as_object).into_iter().flatten() {
        let at = format!("{pointer}/matchLabels/{}", schema::escape(k));
        if !is_qualified_name(k) {
            push(out, &at, format!("{k:?}: not a valid label key"));
        }
        if v.as_str().is_some_and(|v| !is_label_value(v)) {
            push(out, &at, format!("{v}: not a valid label value"));
        }
    }
    let Some(exprs) = sel.get("matchExpressions").and_then(Value::as_array) else {
        return;
    };
    for (i, e) in exprs.iter().enumerate() {
        let at = format!("{pointer}/matchExpressions/{i}");
        let values = e.get("values").and_then(Value::as_array);
        let n = values.map_or(0, Vec::len);
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
        if let Some(k) = e.get("key").and_then(Value::as_str)
            && !is_qualified_name(k)
        {
            push(out, &format!("{at}/key"), format!("{k:?}: not a valid label key"));
        }
        for (j, v) in values.into_iter().flatten().enumerate() {
            if v.as_str().is_some_and(|v| !is_label_value(v)) {
                push(out, &format!("{at}/values/{j}"), format!("{v}: not a valid label value"));
            }
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

// The HPA checks below are lifted from one upstream file, one function per upstream function and under its name,
// each citing the release and lines it follows (as karmada-io/karmada `pkg/util/lifted` does): `+lifted:source`,
// and `+lifted:changed` where gpuplan's version differs (the doc comment says how). The release is the one the
// vendored schemas and `conformance/consumers` pin (v1.37).

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L36-L41

/// The largest allowed scaling policy period (in seconds).
const MAX_PERIOD_SECONDS: i64 = 1800;
/// The largest allowed stabilization window (in seconds).
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L147-L151
// +lifted:changed

/// ValidateHorizontalPodAutoscaler on create: the metadata is checked by the schema ([`schema::object_meta`]), the
/// spec here.
fn hpa(obj: &Value, out: &mut Vec<Violation>) {
    validate_horizontal_pod_autoscaler_spec(obj.get("spec").unwrap_or(&Value::Null), out);
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L72-L97
// +lifted:changed

/// k8s.io/kubernetes pkg/apis/autoscaling/validation/validation.go validateHorizontalPodAutoscalerSpec, with the
/// options the registry uses on create (pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go
/// validationOptionsForHorizontalPodAutoscaler: minReplicas ≥ 1 (HPAScaleToZero is off by default), the scale
/// target's apiVersion must name a group unless the kind is ReplicationController, an Object metric's may not).
fn validate_horizontal_pod_autoscaler_spec(spec: &Value, out: &mut Vec<Violation>) {
    let min = spec.get("minReplicas").and_then(Value::as_i64);
    if let Some(m) = min
        && m < 1
    {
        push(out, "/spec/minReplicas", "must be greater than or equal to 1");
    }
    // A missing maxReplicas (or spec) is the schema's "required property" already.
    if let Some(max) = spec.get("maxReplicas").and_then(Value::as_i64) {
        if max == 0 {
            push(out, "/spec/maxReplicas", "must be set and greater than 0");
        } else if max < 0 {
            push(out, "/spec/maxReplicas", "must be greater than or equal to 1");
        }
        if min.is_some_and(|n| max < n) {
            push(out, "/spec/maxReplicas", "must be greater than or equal to `minReplicas`");
        }
    }
    let target = spec.get("scaleTargetRef").unwrap_or(&Value::Null);
    let rc = target.get("kind").and_then(Value::as_str) == Some("ReplicationController");
    validate_cross_version_object_reference(target, "/spec/scaleTargetRef", rc, out);
    validate_metrics(spec.get("metrics"), "/spec/metrics", out);
    validate_behavior(spec.get("behavior"), "/spec/behavior", out);
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L101-L130

/// ValidateCrossVersionObjectReference: kind and name required path segments, apiVersion a group/version (with a
/// group unless `allow_empty_group`).
fn validate_cross_version_object_reference(r: &Value, at: &str, allow_empty_group: bool, out: &mut Vec<Violation>) {
    for f in ["kind", "name"] {
        match r.get(f).and_then(Value::as_str).unwrap_or("") {
            "" => push(out, &format!("{at}/{f}"), "Required value"),
            v if !is_path_segment_name(v) => push(out, &format!("{at}/{f}"), "may not be '.' or '..' or contain '/' or '%'"),
            _ => {}
        }
    }
    let api_version = r.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if let Some(message) = validate_api_version(api_version, allow_empty_group) {
        push(out, &format!("{at}/apiVersion"), message);
    }
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L132-L143
// +lifted:changed

/// ValidateAPIVersion without `AllowInvalidAPIVersion` (only an update sets it): what is wrong with the
/// reference's apiVersion, if anything.
fn validate_api_version(api_version: &str, allow_empty_group: bool) -> Option<String> {
    // schema.ParseGroupVersion: "" and "v1" are group-less; "a/b" has a group; more than one '/' is an error.
    let group = match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [_] => Some(""),
        [g, _] => Some(*g),
        _ => None,
    };
    match group {
        None => Some(format!("unexpected GroupVersion string: {api_version}")),
        Some("") if !allow_empty_group => Some("apiVersion must specify API group".to_owned()),
        Some(_) => None,
    }
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L200-L224
// +lifted:changed

/// validateMetrics: each metric spec. The scale-to-zero check (an Object or External metric when minReplicas is 0)
/// is left out: minReplicas 0 is already refused above.
fn validate_metrics(metrics: Option<&Value>, at: &str, out: &mut Vec<Violation>) {
    for (i, m) in metrics.and_then(Value::as_array).into_iter().flatten().enumerate() {
        validate_metric_spec(m, &format!("{at}/{i}"), out);
    }
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L226-L237

/// validateBehavior: the scale-up and scale-down rules, when set.
fn validate_behavior(behavior: Option<&Value>, at: &str, out: &mut Vec<Violation>) {
    for dir in ["scaleUp", "scaleDown"] {
        let Some(rules) = behavior.and_then(|b| b.get(dir)).filter(|r| !r.is_null()) else {
            continue;
        };
        validate_scaling_rules(rules, &format!("{at}/{dir}"), out);
    }
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L242-L270
// +lifted:changed

/// validateScalingRules, after the API server's defaulting: absent policies are defaulted, so only an empty list
/// fails; one message for a window outside 0–3600 (upstream has one per side); the tolerance is a quantity that
/// must parse and not be negative.
fn validate_scaling_rules(rules: &Value, at: &str, out: &mut Vec<Violation>) {
    if let Some(w) = rules.get("stabilizationWindowSeconds").and_then(Value::as_i64)
        && !(0..=MAX_STABILIZATION_WINDOW_SECONDS).contains(&w)
    {
        push(out, &format!("{at}/stabilizationWindowSeconds"), "must be between 0 and 3600");
    }
    if let Some(p) = rules.get("selectPolicy").and_then(Value::as_str)
        && !["Max", "Min", "Disabled"].contains(&p)
    {
        push(out, &format!("{at}/selectPolicy"), "supported values: \"Disabled\", \"Max\", \"Min\"");
    }
    // Absent policies are defaulted (pkg/apis/autoscaling/v2/defaults.go copyHPAScalingRules copies only
    // non-nil fields over the defaults); an empty list stays empty and fails.
    let policies = rules.get("policies").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    if policies.is_empty() && rules.get("policies").is_some_and(|p| !p.is_null()) {
        push(out, &format!("{at}/policies"), "must specify at least one Policy");
    }
    for (i, p) in policies.iter().enumerate() {
        validate_scaling_policy(p, &format!("{at}/policies/{i}"), out);
    }
    if let Some(t) = rules.get("tolerance") {
        match quantity_sign(t) {
            None => push(out, &format!("{at}/tolerance"), "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
            Some(-1) => push(out, &format!("{at}/tolerance"), "must be greater than or equal to 0"),
            Some(_) => {}
        }
    }
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L275-L291
// +lifted:changed

/// validateScalingPolicy, with one message for a period outside 1–1800 (upstream has one per side).
fn validate_scaling_policy(p: &Value, at: &str, out: &mut Vec<Violation>) {
    if !matches!(p.get("type").and_then(Value::as_str), Some("Pods" | "Percent")) {
        push(out, &format!("{at}/type"), "supported values: \"Percent\", \"Pods\"");
    }
    if p.get("value").and_then(Value::as_i64).is_none_or(|v| v <= 0) {
        push(out, &format!("{at}/value"), "must be greater than zero");
    }
    if p.get("periodSeconds").and_then(Value::as_i64).is_none_or(|s| !(1..=MAX_PERIOD_SECONDS).contains(&s)) {
        push(out, &format!("{at}/periodSeconds"), "must be greater than zero and less than or equal to 1800");
    }
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L299-L386
// +lifted:changed

/// validateMetricSpec: a known source type, its source validated, no other source set. An unknown type is
/// reported once (upstream reports it twice).
fn validate_metric_spec(m: &Value, at: &str, out: &mut Vec<Violation>) {
    let sources = ["object", "external", "pods", "resource", "containerResource"];
    let present: Vec<&str> = sources.into_iter().filter(|f| m.get(*f).is_some_and(|v| !v.is_null())).collect();
    let ty = m.get("type").and_then(Value::as_str).unwrap_or("");
    if ty.is_empty() {
        push(out, &format!("{at}/type"), "must specify a metric source type");
    }
    let expected = match ty {
        "Object" => Some("object"),
        "Pods" => Some("pods"),
        "Resource" => Some("resource"),
        "External" => Some("external"),
        "ContainerResource" => Some("containerResource"),
        _ => None,
    };
    if expected.is_none() {
        push(out, &format!("{at}/type"), format!("supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\", not {ty:?}"));
    }
    // Only the first source present (in validateMetricSpec's order) is validated.
    if let Some(first) = present.first() {
        let (src, at) = (&m[*first], format!("{at}/{first}"));
        match *first {
            "object" => validate_object_source(src, &at, out),
            "external" => validate_external_source(src, &at, out),
            "pods" => validate_pods_source(src, &at, out),
            "resource" => validate_resource_source(src, &at, out),
            _ => validate_container_resource_source(src, &at, out),
        }
    }
    if present.len() != 1 {
        for other in present.iter().filter(|f| Some(**f) != expected) {
            push(out, &format!("{at}/{other}"), "must populate the given metric source only");
        }
    }
    if let Some(field) = expected
        && !present.contains(&field)
    {
        push(out, &format!("{at}/{field}"), "must populate information for the given metric source");
    }
}

/// A metric source's `target` (null when absent).
fn target_of(src: &Value) -> &Value {
    src.get("target").unwrap_or(&Value::Null)
}

/// Whether a metric target sets `field` (a null is unset).
fn sets(target: &Value, field: &str) -> bool {
    target.get(field).is_some_and(|v| !v.is_null())
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L388-L399

/// validateObjectSource: the described object (which may name a group-less apiVersion), the metric and a value or
/// average value target.
fn validate_object_source(src: &Value, at: &str, out: &mut Vec<Violation>) {
    let target = target_of(src);
    validate_cross_version_object_reference(src.get("describedObject").unwrap_or(&Value::Null), &format!("{at}/describedObject"), true, out);
    validate_metric_identifier(src.get("metric").unwrap_or(&Value::Null), &format!("{at}/metric"), out);
    validate_metric_target(target, &format!("{at}/target"), out);
    if !sets(target, "value") && !sets(target, "averageValue") {
        push(out, &format!("{at}/target/averageValue"), "must set either a target value or averageValue");
    }
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L401-L416

/// validateExternalSource: the metric, and exactly one of a value and an average value target.
fn validate_external_source(src: &Value, at: &str, out: &mut Vec<Violation>) {
    let target = target_of(src);
    validate_metric_identifier(src.get("metric").unwrap_or(&Value::Null), &format!("{at}/metric"), out);
    validate_metric_target(target, &format!("{at}/target"), out);
    if !sets(target, "value") && !sets(target, "averageValue") {
        push(out, &format!("{at}/target/averageValue"), "must set either a target value for metric or a per-pod target");
    }
    if sets(target, "value") && sets(target, "averageValue") {
        push(out, &format!("{at}/target/value"), "may not set both a target value for metric and a per-pod target");
    }
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L418-L429

/// validatePodsSource: the metric, and an average value target.
fn validate_pods_source(src: &Value, at: &str, out: &mut Vec<Violation>) {
    let target = target_of(src);
    validate_metric_identifier(src.get("metric").unwrap_or(&Value::Null), &format!("{at}/metric"), out);
    validate_metric_target(target, &format!("{at}/target"), out);
    if !sets(target, "averageValue") {
        push(out, &format!("{at}/target/averageValue"), "must specify a positive target averageValue");
    }
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L431-L457
// +lifted:changed

/// validateContainerResourceSource: a resource name (not checked further: ValidateContainerResourceName is not
/// lifted), a DNS-1123 label container, and a utilization or average value target.
fn validate_container_resource_source(src: &Value, at: &str, out: &mut Vec<Violation>) {
    if src.get("name").and_then(Value::as_str).is_none_or(str::is_empty) {
        push(out, &format!("{at}/name"), "must specify a resource name");
    }
    match src.get("container").and_then(Value::as_str).unwrap_or("") {
        "" => push(out, &format!("{at}/container"), "must specify a container"),
        c if c.len() > 63 || !matches(schema::DNS_LABEL, c) => push(out, &format!("{at}/container"), "must be a DNS-1123 label"),
        _ => {}
    }
    resource_target(target_of(src), at, out);
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L459-L477

/// validateResourceSource: a resource name, and a utilization or average value target.
fn validate_resource_source(src: &Value, at: &str, out: &mut Vec<Violation>) {
    if src.get("name").and_then(Value::as_str).is_none_or(str::is_empty) {
        push(out, &format!("{at}/name"), "must specify a resource name");
    }
    resource_target(target_of(src), at, out);
}

/// The target checks validateResourceSource and validateContainerResourceSource share (upstream repeats them):
/// a valid target with exactly one of averageUtilization and averageValue.
fn resource_target(target: &Value, at: &str, out: &mut Vec<Violation>) {
    validate_metric_target(target, &format!("{at}/target"), out);
    if !sets(target, "averageUtilization") && !sets(target, "averageValue") {
        push(out, &format!("{at}/target/averageUtilization"), "must set either a target raw value or a target utilization");
    }
    if sets(target, "averageUtilization") && sets(target, "averageValue") {
        push(out, &format!("{at}/target/averageValue"), "may not set both a target raw value and a target utilization");
    }
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L479-L505
// +lifted:changed

/// validateMetricTarget; quantities that do not parse fail decoding in the API server. A missing type gets the
/// one "must be either" message (upstream adds "must specify a metric target type").
fn validate_metric_target(t: &Value, at: &str, out: &mut Vec<Violation>) {
    if !matches!(t.get("type").and_then(Value::as_str), Some("Utilization" | "Value" | "AverageValue")) {
        push(out, &format!("{at}/type"), "must be either Utilization, Value, or AverageValue");
    }
    for f in ["value", "averageValue"] {
        if let Some(q) = t.get(f).filter(|v| !v.is_null()) {
            match quantity_sign(q) {
                None => push(out, &format!("{at}/{f}"), "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
                Some(1) => {}
                Some(_) => push(out, &format!("{at}/{f}"), "must be positive"),
            }
        }
    }
    if let Some(u) = t.get("averageUtilization").and_then(Value::as_i64)
        && u < 1
    {
        push(out, &format!("{at}/averageUtilization"), "must be greater than 0");
    }
}

// +lifted:source=https://github.com/kubernetes/kubernetes/blob/v1.37.2/pkg/apis/autoscaling/validation/validation.go#L507-L518

/// validateMetricIdentifier: a required path-segment name.
fn validate_metric_identifier(id: &Value, at: &str, out: &mut Vec<Violation>) {
    match id.get("name").and_then(Value::as_str).unwrap_or("") {
        "" => push(out, &format!("{at}/name"), "must specify a metric name"),
        n if !is_path_segment_name(n) => push(out, &format!("{at}/name"), "may not be '.' or '..' or contain '/' or '%'"),
        _ => {}
    }
}

/// Kinds whose hand-written validation has nothing a schema leaves out for what gpuplan writes.
fn no_checks(_: &Value, _: &mut Vec<Violation>) {}

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
