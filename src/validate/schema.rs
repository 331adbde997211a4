//! Kubernetes structural schemas (a CRD version's `openAPIV3Schema`) → JSON Schema for the
//! `jsonschema` crate, plus the parts JSON Schema cannot express, kept as a [`Structural`] tree:
//! defaults (applied before validation, as the API server does), `x-kubernetes-validations`
//! (CEL) and `x-kubernetes-list-type: map` keys.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use super::cel::{self, Rule};

/// Formats whose JSON Schema meaning is the Kubernetes meaning. `int32`/`int64` on an integer become
/// bounds (below); others (`byte`, and notably `duration`, which JSON Schema reads as ISO 8601 but
/// Kubernetes as Go's `1h30m`) are dropped rather than checked differently from the API server.
const FORMATS: &[&str] = &["date-time", "ipv4", "ipv6", "uuid", "email"];

/// DNS-1123 subdomain, as Kubernetes checks object names.
pub(crate) const DNS_SUBDOMAIN: &str =
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
pub(crate) const DNS_LABEL: &str = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
/// `metadata.namespace`: a DNS-1123 label, or empty, which the API server reads as unset (k8s.io/apiserver
/// pkg/registry/rest/meta.go EnsureObjectNamespaceMatchesRequestNamespace: an empty namespace takes the request's).
const NAMESPACE: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$";
/// Qualified name (label and annotation keys): optional DNS subdomain prefix and `/`, then a name
/// of at most 63 characters.
pub(crate) const QUALIFIED_NAME: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$";
pub(crate) const LABEL_VALUE: &str = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";

/// The root `metadata` of every Kubernetes object we validate: ObjectMeta's fields, nothing else,
/// with the API server's checks on name, namespace, labels and annotation keys.
pub(crate) fn object_meta() -> Value {
    json!({
        "type": "object",
        "required": ["name"],
        "additionalProperties": false,
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 253, "pattern": DNS_SUBDOMAIN},
            "generateName": {"type": "string"},
            "namespace": {"type": "string", "maxLength": 63, "pattern": NAMESPACE},
            "labels": {
                "type": "object",
                "propertyNames": {"maxLength": 317, "pattern": QUALIFIED_NAME},
                "additionalProperties": {"type": "string", "maxLength": 63, "pattern": LABEL_VALUE}
            },
            "annotations": {
                "type": "object",
                "propertyNames": {"maxLength": 317, "pattern": QUALIFIED_NAME},
                "additionalProperties": {"type": "string"}
            },
            "finalizers": {"type": "array", "items": {"type": "string"}},
            "ownerReferences": {"type": "array", "items": {"type": "object"}},
            "uid": {"type": "string"},
            "resourceVersion": {"type": "string"},
            "generation": {"type": "integer"},
            "creationTimestamp": {"type": ["string", "null"]},
            "deletionTimestamp": {"type": ["string", "null"]},
            "deletionGracePeriodSeconds": {"type": "integer"},
            "managedFields": {"type": "array"},
            "selfLink": {"type": "string"}
        }
    })
}

/// What JSON Schema cannot say, at one schema location; subtrees without any of it are pruned.
pub(crate) struct Structural {
    /// Unique per node for the life of the process: the key of the rule-outcome memo in `walk`.
    pub(crate) id: u64,
    pub(crate) properties: Vec<(String, Structural)>,
    pub(crate) items: Option<Box<Structural>>,
    pub(crate) additional: Option<Box<Structural>>,
    pub(crate) default: Option<Value>,
    /// The location's `x-kubernetes-validations` entries as written; compiled by [`Structural::cel`].
    validations: Vec<Value>,
    cel: OnceLock<CelRules>,
    pub(crate) list_map_keys: Vec<String>,
}

/// The CEL rules of one schema location, compiled.
pub(crate) struct CelRules {
    pub(crate) rules: Vec<Rule>,
    /// What the rules can observe of `self`, when it is less than all of it (see `cel::observed`).
    pub(crate) observed: Option<cel::Observed>,
    /// Rules skipped on create because they are transition rules (they use `oldSelf`).
    pub(crate) transition_rules: usize,
    /// The transition rules this implementation evaluates on an update (`transition.rs`): all of them but
    /// `optionalOldSelf` ones, which bind `oldSelf` as a CEL optional the `cel` crate lacks.
    pub(crate) transitions: Vec<Rule>,
}

impl Default for Structural {
    fn default() -> Structural {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Structural {
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            properties: Vec::new(),
            items: None,
            additional: None,
            default: None,
            validations: Vec::new(),
            cel: OnceLock::new(),
            list_map_keys: Vec::new(),
        }
    }
}

impl Structural {
    fn is_empty(&self) -> bool {
        self.properties.is_empty()
            && self.items.is_none()
            && self.additional.is_none()
            && self.default.is_none()
            && self.validations.is_empty()
            && self.list_map_keys.is_empty()
    }

    /// The location's CEL rules, compiled the first time they are needed (validation reaches the location only when
    /// an object has a value there): many rules of a large CRD sit on fields gpuplan never writes (an EC2NodeClass
    /// has 54), and the cel crate's parser takes ~0.5M instructions a rule. A thread that reaches a location while
    /// another compiles its rules waits for them.
    pub(crate) fn cel(&self) -> &CelRules {
        self.cel.get_or_init(|| compile_rules(&self.validations))
    }

    /// Every compiled rule with its schema location (`/spec/template/*` style: `*` for array
    /// items and map values), for reports and tests.
    pub(crate) fn visit_rules<'a>(&'a self, at: &str, f: &mut dyn FnMut(&str, &'a Rule)) {
        for r in &self.cel().rules {
            f(at, r);
        }
        for (name, child) in &self.properties {
            child.visit_rules(&format!("{at}/{}", escape(name)), f);
        }
        if let Some(i) = &self.items {
            i.visit_rules(&format!("{at}/*"), f);
        }
        if let Some(a) = &self.additional {
            a.visit_rules(&format!("{at}/*"), f);
        }
    }

    pub(crate) fn count_transition_rules(&self) -> usize {
        self.cel().transition_rules
            + self
                .properties
                .iter()
                .map(|(_, c)| c.count_transition_rules())
                .sum::<usize>()
            + self
                .items
                .as_ref()
                .map_or(0, |i| i.count_transition_rules())
            + self
                .additional
                .as_ref()
                .map_or(0, |a| a.count_transition_rules())
    }
}

/// JSON pointer escaping of one reference token.
pub(crate) fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Converts a structural schema. `value_validation` is set inside `allOf/anyOf/oneOf/not`, whose
/// branches only constrain values and must not reject fields as unknown.
///
/// One step per schema construct, in this order (the order the keys are written): type, value keywords, integer
/// formats, list types, default, properties and additionalProperties, items, the logical branches, and the CEL
/// rules.
pub(crate) fn convert(s: &Value, value_validation: bool) -> (Value, Structural) {
    let mut st = Structural::default();
    let Some(s) = s.as_object() else {
        return (json!({}), st);
    };
    let mut out = Map::new();
    let nullable = flag(s, "nullable");
    if let Some(t) = schema_type(s, nullable) {
        out.insert("type".into(), t);
    }
    value_keywords(s, nullable, &mut out);
    integer_format_bounds(s, &mut out);
    list_type(s, &mut out, &mut st);
    if !value_validation {
        st.default = s.get("default").cloned();
    }
    let has_props = properties(s, value_validation, &mut out, &mut st);
    additional_properties(s, value_validation, has_props, &mut out, &mut st);
    if let Some(items) = s.get("items") {
        let (schema, child) = convert(items, value_validation);
        out.insert("items".into(), schema);
        if !child.is_empty() {
            st.items = Some(Box::new(child));
        }
    }
    logical_branches(s, &mut out);
    if let Some(Value::Array(rules)) = s.get("x-kubernetes-validations") {
        st.validations.clone_from(rules);
    }
    (Value::Object(out), st)
}

/// A boolean extension or keyword of the schema; absent is false.
fn flag(s: &Map<String, Value>, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// `type`, widened by `x-kubernetes-int-or-string` and `nullable`; None when the schema names no type.
fn schema_type(s: &Map<String, Value>, nullable: bool) -> Option<Value> {
    let mut types: Vec<Value> = if flag(s, "x-kubernetes-int-or-string") {
        vec!["integer".into(), "string".into()]
    } else if let Some(t) = s.get("type").and_then(Value::as_str) {
        vec![t.into()]
    } else {
        vec![]
    };
    if types.is_empty() {
        return None;
    }
    if nullable {
        types.push("null".into());
    }
    Some(if types.len() == 1 { types[0].clone() } else { Value::Array(types.clone()) })
}

/// The value keywords JSON Schema reads as OpenAPI does (copied), `enum` (with null when nullable), OpenAPI v3.0's
/// boolean exclusive bounds, and the formats of [`FORMATS`].
fn value_keywords(s: &Map<String, Value>, nullable: bool, out: &mut Map<String, Value>) {
    for kw in [
        "pattern",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "required",
        "uniqueItems",
        "multipleOf",
    ] {
        if let Some(v) = s.get(kw) {
            out.insert(kw.into(), v.clone());
        }
    }
    if let Some(Value::Array(values)) = s.get("enum") {
        let mut values = values.clone();
        if nullable && !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
        out.insert("enum".into(), Value::Array(values));
    }
    // OpenAPI v3.0's boolean exclusiveMinimum/Maximum → JSON Schema's numeric ones.
    for (ex, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if flag(s, ex)
            && let Some(b) = out.remove(bound)
        {
            out.insert(ex.into(), b);
        }
    }
    if let Some(f) = s.get("format").and_then(Value::as_str)
        && FORMATS.contains(&f)
    {
        out.insert("format".into(), f.into());
    }
}

/// An `integer` with format int32/int64 must fit it (k8s.io/kube-openapi pkg/validation/validate/schema.go
/// numberValidator passes the format on when the type is exactly "integer": "Checked value must be of type
/// integer with format int32"); the tighter of that range and the schema's own bounds applies.
fn integer_format_bounds(s: &Map<String, Value>, out: &mut Map<String, Value>) {
    let range = match s.get("format").and_then(Value::as_str) {
        Some("int32") => Some((i64::from(i32::MIN), i64::from(i32::MAX))),
        Some("int64") => Some((i64::MIN, i64::MAX)),
        _ => None,
    };
    if s.get("type").and_then(Value::as_str) == Some("integer")
        && let Some((lo, hi)) = range
    {
        let tighter = |current: Option<&Value>, bound: i64, keep: fn(f64, f64) -> bool| match current.and_then(Value::as_f64) {
            Some(c) if keep(c, bound as f64) => current.cloned().unwrap(),
            _ => Value::from(bound),
        };
        if !out.contains_key("exclusiveMinimum") {
            let v = tighter(out.get("minimum"), lo, |c, b| c >= b);
            out.insert("minimum".into(), v);
        }
        if !out.contains_key("exclusiveMaximum") {
            let v = tighter(out.get("maximum"), hi, |c, b| c <= b);
            out.insert("maximum".into(), v);
        }
    }
}

/// `x-kubernetes-list-type`: a `set` has unique items; a `map`'s keys are kept for correlating items.
fn list_type(s: &Map<String, Value>, out: &mut Map<String, Value>, st: &mut Structural) {
    if s.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("set") {
        out.insert("uniqueItems".into(), true.into());
    }
    if s.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map")
        && let Some(Value::Array(keys)) = s.get("x-kubernetes-list-map-keys")
    {
        st.list_map_keys = keys
            .iter()
            .filter_map(|k| k.as_str().map(str::to_owned))
            .collect();
    }
}

/// `properties`, each converted, plus the fields every `x-kubernetes-embedded-resource` has. Whether the schema
/// declares properties (so it is an object).
fn properties(s: &Map<String, Value>, value_validation: bool, out: &mut Map<String, Value>, st: &mut Structural) -> bool {
    let mut props_out = Map::new();
    if let Some(Value::Object(props)) = s.get("properties") {
        for (name, p) in props {
            let (schema, child) = convert(p, value_validation);
            props_out.insert(name.clone(), schema);
            if !child.is_empty() {
                st.properties.push((name.clone(), child));
            }
        }
    }
    let embedded = flag(s, "x-kubernetes-embedded-resource");
    if embedded {
        for (k, v) in [
            ("apiVersion", json!({"type": "string"})),
            ("kind", json!({"type": "string"})),
            ("metadata", json!({"type": "object"})),
        ] {
            props_out.entry(k).or_insert(v);
        }
    }
    let has_props = s.contains_key("properties") || embedded;
    if has_props {
        out.insert("properties".into(), Value::Object(props_out));
    }
    has_props
}

/// `additionalProperties` as written (a schema is converted), else `false` for an object that does not preserve
/// unknown fields.
fn additional_properties(s: &Map<String, Value>, value_validation: bool, has_props: bool, out: &mut Map<String, Value>, st: &mut Structural) {
    match s.get("additionalProperties") {
        Some(Value::Bool(b)) => {
            out.insert("additionalProperties".into(), (*b).into());
        }
        Some(a @ Value::Object(_)) => {
            let (schema, child) = convert(a, value_validation);
            out.insert("additionalProperties".into(), schema);
            if !child.is_empty() {
                st.additional = Some(Box::new(child));
            }
        }
        _ => {
            // Structurally, an object keeps only the fields its schema declares; with strict
            // field validation anything else is an error ("unknown field").
            let is_object = s.get("type").and_then(Value::as_str) == Some("object") || has_props;
            if is_object && !flag(s, "x-kubernetes-preserve-unknown-fields") && !value_validation {
                out.insert("additionalProperties".into(), false.into());
            }
        }
    }
}

/// `allOf`, `anyOf`, `oneOf` and `not`, whose branches only constrain values.
fn logical_branches(s: &Map<String, Value>, out: &mut Map<String, Value>) {
    let int_or_string = flag(s, "x-kubernetes-int-or-string");
    for kw in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = s.get(kw) {
            // `anyOf: [{type: integer}, {type: string}]` beside int-or-string only repeats the
            // `type` above (and would report the same error twice).
            let only_types = branches.iter().all(|b| {
                b.as_object().is_some_and(|o| {
                    o.len() == 1
                        && matches!(
                            o.get("type").and_then(Value::as_str),
                            Some("integer" | "string")
                        )
                })
            });
            if int_or_string && only_types {
                continue;
            }
            let branches: Vec<Value> = branches.iter().map(|b| convert(b, true).0).collect();
            out.insert(kw.into(), Value::Array(branches));
        }
    }
    if let Some(n) = s.get("not") {
        out.insert("not".into(), convert(n, true).0);
    }
}

fn compile_rules(validations: &[Value]) -> CelRules {
    let mut compiled = CelRules { rules: Vec::new(), observed: None, transition_rules: 0, transitions: Vec::new() };
    for entry in validations {
        let Some(rule) = cel::compile_entry(entry) else { continue };
        if rule.program.as_ref().is_ok_and(cel::is_transition_rule) {
            // A transition rule compares with the stored object (`oldSelf`). At create time
            // there is no old object, and the API server does not evaluate them: kept for updates.
            compiled.transition_rules += 1;
            if entry.get("optionalOldSelf").and_then(Value::as_bool) != Some(true) {
                compiled.transitions.push(rule);
            }
            continue;
        }
        compiled.rules.push(rule);
    }
    compiled.observed = cel::observed(&compiled.rules);
    compiled
}

/// Whether [`apply_defaults`] would change the value (some missing property has a default): most generated
/// objects spell every default out, and copying the object to default nothing cost more than the CEL rules.
pub(crate) fn lacks_defaults(st: &Structural, value: &Value) -> bool {
    match value {
        Value::Object(obj) => {
            st.properties.iter().any(|(name, child)| match obj.get(name) {
                None => child.default.is_some(),
                Some(v) => lacks_defaults(child, v),
            }) || st.additional.as_ref().is_some_and(|a| obj.values().any(|v| lacks_defaults(a, v)))
        }
        Value::Array(items) => st.items.as_ref().is_some_and(|i| items.iter().any(|v| lacks_defaults(i, v))),
        _ => false,
    }
}

/// Applies the schema defaults the API server would apply on create: a missing property that has
/// a `default` gets it, recursively (defaults themselves included).
pub(crate) fn apply_defaults(st: &Structural, value: &mut Value) {
    match value {
        Value::Object(obj) => {
            for (name, child) in &st.properties {
                if !obj.contains_key(name)
                    && let Some(d) = &child.default
                {
                    obj.insert(name.clone(), d.clone());
                }
                if let Some(v) = obj.get_mut(name) {
                    apply_defaults(child, v);
                }
            }
            if let Some(a) = &st.additional {
                for (_, v) in obj.iter_mut() {
                    apply_defaults(a, v);
                }
            }
        }
        Value::Array(items) => {
            if let Some(i) = &st.items {
                for v in items {
                    apply_defaults(i, v);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::{apply_defaults, convert, lacks_defaults};
    use serde_json::json;

    /// `lacks_defaults` says exactly when `apply_defaults` changes a value.
    #[test]
    fn validate_lacks_defaults_iff_defaulting_changes_the_value() {
        let schema = json!({"type": "object", "properties": {
            "size": {"type": "string", "default": "small"},
            "nested": {"type": "object", "default": {}, "properties": {"n": {"type": "integer", "default": 1}}},
            "list": {"type": "array", "items": {"type": "object", "properties": {"d": {"type": "string", "default": "x"}}}},
            "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"d": {"type": "boolean", "default": true}}}},
            "plain": {"type": "object", "properties": {"p": {"type": "string"}}}
        }});
        let (_, st) = convert(&schema, false);
        let complete = json!({"size": "large", "nested": {"n": 2}, "list": [{"d": "y"}], "map": {"a": {"d": false}}, "plain": {}});
        let mut values = vec![json!({}), json!("not an object"), json!(null), complete.clone()];
        for (pointer, replacement) in [
            ("/size", None), ("/nested", None), ("/nested/n", None), ("/list/0/d", None), ("/map/a/d", None),
            ("/list", Some(json!([]))), ("/map", Some(json!({}))), ("/plain", None), ("/nested", Some(json!(3))),
            ("/list", Some(json!([{"d": "y"}, {}]))), ("/map/b", Some(json!({}))), ("/extra", Some(json!({"size": 1}))),
        ] {
            let mut v = complete.clone();
            let (parent, name) = pointer.rsplit_once('/').unwrap();
            let at = v.pointer_mut(parent).unwrap();
            match (replacement, at) {
                (None, serde_json::Value::Object(o)) => {
                    o.remove(name);
                }
                (Some(r), serde_json::Value::Object(o)) => {
                    o.insert(name.to_owned(), r);
                }
                _ => unreachable!(),
            }
            values.push(v);
        }
        let mut lacking = 0;
        for v in values {
            let mut defaulted = v.clone();
            apply_defaults(&st, &mut defaulted);
            assert_eq!(lacks_defaults(&st, &v), defaulted != v, "{v}");
            lacking += usize::from(defaulted != v);
        }
        assert_eq!(lacking, 8);
    }
}
