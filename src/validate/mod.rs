//! The validate stage: every generated manifest is checked against the real schemas before it is
//! written, as strictly as the Kubernetes API server with strict field validation would.
//!
//! - Custom resources: the CRDs under `src/crds/` (byte-for-byte copies of `tests/fixtures/shared/schemas`,
//!   compiled in). Each served version's `openAPIV3Schema` becomes a JSON Schema (unknown fields
//!   rejected unless `x-kubernetes-preserve-unknown-fields`, int-or-string, nullable, ...; see
//!   [`schema`]), defaults are applied first as the API server does, and every
//!   `x-kubernetes-validations` CEL rule is evaluated with `self` bound at each place its schema
//!   location reaches (see [`cel`]).
//! - Built-in kinds we emit: PodDisruptionBudget (policy/v1), HorizontalPodAutoscaler
//!   (autoscaling/v2) and ConfigMap (v1), from the upstream Kubernetes JSON schemas vendored under
//!   `src/crds/builtin/` (see its README), plus the API server's own checks that a schema cannot
//!   express (see [`builtin`]); and kustomize's Kustomization (`kustomization.yaml`), from
//!   SchemaStore's schema.
//! - Every Kubernetes object's root `metadata`: ObjectMeta fields only, a DNS-1123 `name`, label
//!   and annotation maps of strings with valid keys.
//!
//! An unknown kind or an unserved version is a violation, never a pass; so is a CEL rule that
//! cannot be compiled or evaluated.
//!
//! Deliberate differences from the API server:
//! - `null` for a field that is not `nullable` is a violation here; the API server silently drops
//!   it. In generated output a null is a template bug (and a perpetual GitOps diff), so we say so.
//! - Only the formats whose JSON Schema meaning matches Kubernetes' are checked (see
//!   `schema::FORMATS`), and `int32`/`int64` as ranges; `byte`/`duration`... are ignored.
//! - Transition rules (`oldSelf`) are skipped here: there is no old object at create time. On an update the
//!   caller that knows the previous object (out/) evaluates them with [`Validator::transition_violations`] (see
//!   [`transition`]).
//! - CEL cost budgets are not enforced, and `metadata.namespace` on a cluster-scoped kind is not
//!   rejected.
//! - The object is validated as the caller parsed it: YAML 1.1 scalars (`on`, `yes`, `0777`) are
//!   the renderer's concern.

mod builtin;
mod cel;
mod schema;
pub mod transition;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use schema::{Structural, escape};

/// One way an object breaks its schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// JSON pointer into the object, e.g. `/spec/disruption/budgets/0`; empty for the whole object.
    pub pointer: String,
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.pointer, self.message)
    }
}

impl Violation {
    fn new(pointer: impl Into<String>, message: impl Into<String>) -> Violation {
        Violation {
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

/// Building a [`Validator`] failed: a schema could not be read or compiled.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Crd { path: PathBuf, message: String },
    #[error("schema of {kind} ({api_version}) does not compile: {message}")]
    Schema {
        api_version: String,
        kind: String,
        message: String,
    },
}

struct Entry {
    schema: jsonschema::Validator,
    /// Defaults, CEL rules and list-map keys (CRDs only).
    structural: Option<Structural>,
    /// The CRD version's `openAPIV3Schema` as written (CRDs only).
    openapi: Option<Value>,
    /// The API server's hand-written validation of a built-in kind.
    checks: Option<fn(&Value, &mut Vec<Violation>)>,
}

/// Compiled schemas per (apiVersion, kind), with their compiled CEL programs.
pub struct Validator {
    kinds: BTreeMap<(String, String), Entry>,
    /// (group, kind) → every version the schemas define, and whether it is served.
    versions: BTreeMap<(String, String), Vec<(String, bool)>>,
    /// Embedded CRDs by (group, kind), compiled the first time an object of that kind is validated: a compile
    /// that emits no ClusterPolicy never pays for its 150 kB schema.
    lazy: BTreeMap<(String, String), LazyCrd>,
}

/// One CRD compiled into the binary: its path under `src/crds/`, its group and kind, and its document as JSON
/// (converted from the upstream YAML by build.rs).
#[derive(Debug, Clone, Copy)]
pub struct EmbeddedCrd {
    pub path: &'static str,
    pub group: &'static str,
    pub kind: &'static str,
    pub json: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/embedded_crds.rs"));

/// One embedded CRD, compiled on first use into a validator of its own.
struct LazyCrd {
    crd: &'static EmbeddedCrd,
    compiled: OnceLock<Validator>,
}

impl LazyCrd {
    fn get(&self) -> &Validator {
        self.compiled.get_or_init(|| {
            let mut v = Validator::empty();
            let doc: Value = serde_json::from_str(self.crd.json).expect("build.rs wrote JSON");
            v.add_crd_docs(Path::new(self.crd.path), vec![doc]).expect("embedded CRD compiles");
            v
        })
    }
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validator")
            .field("kinds", &self.kinds.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// A CEL rule of a CRD, as compiled (for reports and tests).
#[derive(Debug, Clone, PartialEq)]
pub struct CelRuleInfo {
    pub api_version: String,
    pub kind: String,
    /// Schema location, `*` standing for any array item or map value.
    pub location: String,
    pub rule: String,
    pub message: String,
    /// `Some(reason)` when the rule cannot be used: it did not compile, or did not evaluate on a
    /// sample value built from its schema (every field present).
    pub unsupported: Option<String>,
}

impl Validator {
    /// The CRDs compiled into the binary plus the built-in kinds we emit; built once.
    pub fn builtin() -> &'static Validator {
        static BUILTIN: OnceLock<Validator> = OnceLock::new();
        BUILTIN.get_or_init(|| {
            let mut v = Validator::empty();
            for crd in EMBEDDED_CRDS {
                v.lazy.insert((crd.group.to_owned(), crd.kind.to_owned()), LazyCrd { crd, compiled: OnceLock::new() });
            }
            builtin::register(&mut v).expect("built-in schemas compile");
            v
        })
    }

    /// The lazily compiled embedded CRD for an apiVersion's group and a kind, if any.
    fn lazy_for(&self, api_version: &str, kind: &str) -> Option<&Validator> {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        self.lazy.get(&(group.to_owned(), kind.to_owned())).map(LazyCrd::get)
    }

    /// Compiles the embedded CRDs of these kinds now, each on its own core (the largest take milliseconds), so
    /// that validating objects in parallel does not wait on another thread compiling the schema it needs (a
    /// location's CEL rules still compile on first use: see `schema::Structural::cel`).
    pub fn prepare<'k>(&self, kinds: impl IntoIterator<Item = (&'k str, &'k str)>) {
        use rayon::prelude::*;
        let wanted: std::collections::BTreeSet<(&str, &str)> = kinds.into_iter().collect();
        wanted.into_par_iter().for_each(|(api_version, kind)| {
            self.lazy_for(api_version, kind);
        });
    }

    /// From CRD YAML files on disk, plus the built-in kinds we emit (they have no CRD).
    pub fn from_crd_files(paths: &[PathBuf]) -> Result<Validator, ValidateError> {
        let mut v = Validator::empty();
        for path in paths {
            let text = crate::input::read_to_string(path).map_err(|source| ValidateError::Io {
                path: path.clone(),
                source,
            })?;
            v.add_crd(path, &text)?;
        }
        builtin::register(&mut v)?;
        Ok(v)
    }

    fn empty() -> Validator {
        Validator {
            kinds: BTreeMap::new(),
            versions: BTreeMap::new(),
            lazy: BTreeMap::new(),
        }
    }

    fn add_crd(&mut self, path: &Path, text: &str) -> Result<(), ValidateError> {
        let docs: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| ValidateError::Crd {
            path: path.to_owned(),
            message: format!("not YAML: {e}"),
        })?;
        self.add_crd_docs(path, docs)
    }

    /// Takes the documents: each served version's `openAPIV3Schema` moves into its entry (a copy of the Argo CD
    /// Application's cost a millisecond).
    fn add_crd_docs(&mut self, path: &Path, docs: Vec<Value>) -> Result<(), ValidateError> {
        let err = |message: String| ValidateError::Crd {
            path: path.to_owned(),
            message,
        };
        let mut found = false;
        for mut doc in docs.into_iter().filter(|d| !d.is_null()) {
            if doc.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
                return Err(err("not a CustomResourceDefinition".into()));
            }
            found = true;
            let Some(spec) = doc.get_mut("spec") else {
                return Err(err("no spec.group".into()));
            };
            let group = spec["group"]
                .as_str()
                .ok_or_else(|| err("no spec.group".into()))?
                .to_owned();
            let kind = spec["names"]["kind"]
                .as_str()
                .ok_or_else(|| err("no spec.names.kind".into()))?
                .to_owned();
            let versions = spec
                .get_mut("versions")
                .and_then(Value::as_array_mut)
                .ok_or_else(|| err("no spec.versions".into()))?;
            for ver in versions {
                let name = ver["name"]
                    .as_str()
                    .ok_or_else(|| err("a version has no name".into()))?
                    .to_owned();
                let served = ver["served"].as_bool().unwrap_or(false);
                self.versions
                    .entry((group.clone(), kind.clone()))
                    .or_default()
                    .push((name.clone(), served));
                if !served {
                    continue;
                }
                let api_version = format!("{group}/{name}");
                let open_api = ver.get_mut("schema").and_then(|s| s.get_mut("openAPIV3Schema")).map_or(Value::Null, Value::take);
                if !open_api.is_object() {
                    return Err(err(format!("version {name} has no openAPIV3Schema")));
                }
                let (mut json_schema, structural) = schema::convert(&open_api, false);
                json_schema["$schema"] = "https://json-schema.org/draft/2020-12/schema".into();
                json_schema["properties"]["metadata"] = schema::object_meta();
                add_required(&mut json_schema, &["apiVersion", "kind", "metadata"]);
                self.insert(
                    &api_version,
                    &kind,
                    &json_schema,
                    Some((structural, open_api)),
                    None,
                )?;
            }
        }
        if !found {
            return Err(err("no document".into()));
        }
        Ok(())
    }

    fn insert(
        &mut self,
        api_version: &str,
        kind: &str,
        json_schema: &Value,
        structural: Option<(Structural, Value)>,
        checks: Option<fn(&Value, &mut Vec<Violation>)>,
    ) -> Result<(), ValidateError> {
        let schema_err = |message: String| ValidateError::Schema {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            message,
        };
        let compiled = jsonschema::options()
            .should_validate_formats(true)
            .should_ignore_unknown_formats(true)
            .build(json_schema)
            .map_err(|e| schema_err(e.to_string()))?;
        let key = (api_version.to_owned(), kind.to_owned());
        if self.kinds.contains_key(&key) {
            return Err(schema_err("defined twice".into()));
        }
        let (structural, openapi) = match structural {
            Some((s, o)) => (Some(s), Some(o)),
            None => (None, None),
        };
        self.kinds.insert(
            key,
            Entry {
                schema: compiled,
                structural,
                openapi,
                checks,
            },
        );
        Ok(())
    }

    /// The object as the API server stores it: every schema default applied (what a controller reads, and so what
    /// Karpenter's hash functions see). An object of a kind without a schema comes back as it is.
    pub fn defaulted(&self, object: &Value) -> Value {
        let mut copy = object.clone();
        let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
        let key = (api_version.to_owned(), kind.to_owned());
        let entry = self.kinds.get(&key).or_else(|| self.lazy_for(api_version, kind).and_then(|v| v.kinds.get(&key)));
        if let Some(st) = entry.and_then(|e| e.structural.as_ref()) {
            schema::apply_defaults(st, &mut copy);
        }
        copy
    }

    /// All violations of one object (parsed from the rendered YAML). Empty = valid.
    pub fn validate(&self, object: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        let Some(obj) = object.as_object() else {
            return vec![Violation::new("", "an object must be a mapping")];
        };
        let api_version = obj.get("apiVersion").and_then(Value::as_str);
        let kind = obj.get("kind").and_then(Value::as_str);
        let (Some(api_version), Some(kind)) = (api_version, kind) else {
            if api_version.is_none() {
                out.push(Violation::new(
                    "/apiVersion",
                    "apiVersion must be set (a string)",
                ));
            }
            if kind.is_none() {
                out.push(Violation::new("/kind", "kind must be set (a string)"));
            }
            return out;
        };
        let Some(entry) = self.kinds.get(&(api_version.to_owned(), kind.to_owned())) else {
            if let Some(crd) = self.lazy_for(api_version, kind) {
                return crd.validate(object);
            }
            return vec![self.unknown(api_version, kind)];
        };

        // Defaulting happens before validation in the API server.
        let defaulted;
        let object = match &entry.structural {
            Some(st) if schema::lacks_defaults(st, object) => {
                let mut copy = object.clone();
                schema::apply_defaults(st, &mut copy);
                defaulted = copy;
                &defaulted
            }
            _ => object,
        };

        // The API server skips every CEL rule once the schema reports a "blocking" error: a wrong type, a value
        // not in an enum, a missing required field, a string or list over its maximum (apiextensions-apiserver
        // pkg/registry/customresource/strategy.go hasBlockingErr); the object is rejected either way.
        let mut blocking = false;
        for e in entry.schema.iter_errors(object) {
            let at = e.instance_path().as_str().to_owned();
            use jsonschema::error::ValidationErrorKind as K;
            blocking |= matches!(
                e.kind(),
                K::Type { .. } | K::Enum { .. } | K::Required { .. } | K::MaxLength { .. } | K::MaxItems { .. } | K::MaxProperties { .. }
            );
            match e.kind() {
                jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                    for field in unexpected {
                        out.push(Violation::new(
                            format!("{at}/{}", escape(field)),
                            format!("unknown field \"{field}\""),
                        ));
                    }
                }
                _ => out.push(Violation::new(at, e.to_string())),
            }
        }
        if let Some(st) = &entry.structural
            && !blocking
        {
            let mut pointer = String::new();
            walk(st, object, &mut pointer, &mut out);
        }
        if let Some(checks) = entry.checks {
            checks(object, &mut out);
        }
        out
    }

    fn unknown(&self, api_version: &str, kind: &str) -> Violation {
        let (group, version) = match api_version.rsplit_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        match self.versions.get(&(group.to_owned(), kind.to_owned())) {
            None => Violation::new(
                "/kind",
                format!("no schema for kind {kind} in group/version {api_version}"),
            ),
            Some(versions) => {
                let served: Vec<&str> = versions
                    .iter()
                    .filter(|(_, s)| *s)
                    .map(|(v, _)| v.as_str())
                    .collect();
                let served = served.join(", ");
                let message = if versions.iter().any(|(v, s)| v == version && !s) {
                    format!(
                        "version {version} of kind {kind} in group {group} is not served (served versions: {served})"
                    )
                } else {
                    format!(
                        "no schema for kind {kind} in group/version {api_version} (served versions: {served})"
                    )
                };
                Violation::new("/apiVersion", message)
            }
        }
    }

    /// The (apiVersion, kind) pairs this validator knows.
    pub fn kinds(&self) -> Vec<(String, String)> {
        let mut kinds: Vec<(String, String)> = self.kinds.keys().cloned().collect();
        kinds.extend(self.lazy.values().flat_map(|crd| crd.get().kinds()));
        kinds.sort();
        kinds
    }

    /// Every non-transition CEL rule of one kind, each evaluated once on a sample value built from
    /// its schema with every field present, to find rules this implementation cannot evaluate.
    /// Also returns how many transition rules (`oldSelf`) were skipped.
    pub fn cel_rules(&self, api_version: &str, kind: &str) -> (Vec<CelRuleInfo>, usize) {
        let Some(entry) = self.kinds.get(&(api_version.to_owned(), kind.to_owned())) else {
            return self.lazy_for(api_version, kind).map_or((Vec::new(), 0), |crd| crd.cel_rules(api_version, kind));
        };
        let (Some(st), Some(openapi_schema)) = (&entry.structural, &entry.openapi) else {
            return (Vec::new(), 0);
        };
        let mut rules = Vec::new();
        st.visit_rules("", &mut |location, rule| {
            let sub = schema_at(openapi_schema, location);
            let sample = sub.map(sample_value).unwrap_or(Value::Null);
            let unsupported = match cel::evaluate(rule, &sample) {
                cel::Outcome::Pass | cel::Outcome::Fail => None,
                cel::Outcome::Error(e) => Some(e),
            };
            rules.push(CelRuleInfo {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
                location: location.to_owned(),
                rule: rule.rule.clone(),
                message: rule.message.clone(),
                unsupported,
            });
        });
        (rules, st.count_transition_rules())
    }
}

fn add_required(schema: &mut Value, fields: &[&str]) {
    let required = schema
        .as_object_mut()
        .expect("schema object")
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = required {
        for f in fields {
            if !list.iter().any(|v| v == f) {
                list.push((*f).into());
            }
        }
    }
}

/// CEL rules and list-map keys at every place the object reaches.
/// The failures of a schema node's CEL rules on one value: (field path below the node, message).
type RuleFailures = std::sync::Arc<Vec<(String, String)>>;

fn rule_failures(rules: &[cel::Rule], value: &cel::SelfValue) -> Vec<(String, String)> {
    let bound = cel::Bound::new(value);
    let mut failures = Vec::new();
    for rule in rules {
        let at = rule.field_path.clone().unwrap_or_default();
        match cel::evaluate_cel(rule, &bound) {
            cel::Outcome::Pass => {}
            cel::Outcome::Fail => failures.push((at, rule.message_for(&bound))),
            cel::Outcome::Error(e) => failures.push((at, format!("{} ({e}; rule: {})", rule.message, rule.rule))),
        }
    }
    failures
}

/// Values whose memo key is larger than this are evaluated without the memo (they rarely repeat, and their key would cost memory).
const MEMO_MAX_VALUE_BYTES: usize = 2048;
/// The memo is cleared when it grows past this many entries (bounded memory on any input).
const MEMO_MAX_ENTRIES: usize = 50_000;

/// CEL rule outcomes depend only on the schema node and the value: generated objects repeat the same small
/// values (requirements, taints, budgets, label maps) thousands of times, so each (node, value) is evaluated
/// once per thread. Interpreting CEL is the most expensive part of validation.
fn memoized_rule_failures(st: &Structural, value: &Value) -> RuleFailures {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static MEMO: RefCell<HashMap<(u64, Vec<u8>), RuleFailures>> = RefCell::new(HashMap::new());
    }
    let cel = st.cel();
    // Keyed by what the rules can observe: a `spec` whose rules read three fields is one entry per distinct three.
    let value = cel::SelfValue::new(value, cel.observed.as_ref());
    let Some(key) = value.memo_key(MEMO_MAX_VALUE_BYTES) else {
        return std::sync::Arc::new(rule_failures(&cel.rules, &value));
    };
    let key = (st.id, key);
    if let Some(hit) = MEMO.with(|m| m.borrow().get(&key).cloned()) {
        return hit;
    }
    let failures = std::sync::Arc::new(rule_failures(&cel.rules, &value));
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= MEMO_MAX_ENTRIES {
            m.clear();
        }
        m.insert(key, failures.clone());
    });
    failures
}

/// Appends `/` and one escaped JSON pointer token; most names need no escaping, and then no allocation.
fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    if token.contains(['~', '/']) {
        pointer.push_str(&escape(token));
    } else {
        pointer.push_str(token);
    }
}

fn walk(st: &Structural, value: &Value, pointer: &mut String, out: &mut Vec<Violation>) {
    if !st.cel().rules.is_empty() {
        for (at, message) in memoized_rule_failures(st, value).iter() {
            out.push(Violation::new(format!("{pointer}{at}"), message.clone()));
        }
    }
    let len = pointer.len();
    match value {
        Value::Object(obj) => {
            for (name, child) in &st.properties {
                if let Some(v) = obj.get(name) {
                    push_token(pointer, name);
                    walk(child, v, pointer, out);
                    pointer.truncate(len);
                }
            }
            if let Some(a) = &st.additional {
                for (name, v) in obj {
                    push_token(pointer, name);
                    walk(a, v, pointer, out);
                    pointer.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            if !st.list_map_keys.is_empty() {
                let mut seen: Vec<Vec<&Value>> = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let key: Vec<&Value> = st
                        .list_map_keys
                        .iter()
                        .map(|k| item.get(k).unwrap_or(&Value::Null))
                        .collect();
                    if seen.contains(&key) {
                        let shown: Vec<String> = st
                            .list_map_keys
                            .iter()
                            .zip(&key)
                            .map(|(k, v)| format!("{k}={v}"))
                            .collect();
                        out.push(Violation::new(
                            format!("{pointer}/{i}"),
                            format!("duplicate entry in a map list ({})", shown.join(", ")),
                        ));
                    } else {
                        seen.push(key);
                    }
                }
            }
            if let Some(i) = &st.items {
                for (n, v) in items.iter().enumerate() {
                    pointer.push('/');
                    pointer.push_str(&n.to_string());
                    walk(i, v, pointer, out);
                    pointer.truncate(len);
                }
            }
        }
        _ => {}
    }
}

/// The sub-schema of an `openAPIV3Schema` at a `visit_rules` location.
fn schema_at<'a>(schema: &'a Value, location: &str) -> Option<&'a Value> {
    let mut at = schema;
    for token in location.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        at = if token == "*" {
            at.get("items").or_else(|| at.get("additionalProperties"))?
        } else {
            at.get("properties")?.get(&token)?
        };
    }
    Some(at)
}

/// A value with every field present (one item per list, one entry per map), for rule self-checks.
fn sample_value(s: &Value) -> Value {
    if let Some(Value::Array(e)) = s.get("enum")
        && let Some(first) = e.first()
    {
        return first.clone();
    }
    if s.get("x-kubernetes-int-or-string").and_then(Value::as_bool) == Some(true) {
        return "1".into();
    }
    match s.get("type").and_then(Value::as_str) {
        Some("object") | None if s.get("properties").is_some() => Value::Object(
            s["properties"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), sample_value(v)))
                .collect(),
        ),
        Some("object") => match s.get("additionalProperties") {
            Some(a @ Value::Object(_)) => serde_json::json!({ "1": sample_value(a) }),
            _ => serde_json::json!({}),
        },
        Some("array") => Value::Array(s.get("items").map(sample_value).into_iter().collect()),
        Some("integer") => 1.into(),
        Some("number") => 1.5.into(),
        Some("boolean") => true.into(),
        // "1" parses as an int (for `int(x)` rules) and is a valid key and label value.
        Some("string") => "1".into(),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    /// The lazy index uses the group and kind build.rs read from each CRD: they must agree with the document.
    #[test]
    fn embedded_crds_are_indexed_by_their_group_and_kind() {
        use super::EMBEDDED_CRDS;
        for crd in EMBEDDED_CRDS {
            let doc: serde_json::Value = serde_json::from_str(crd.json).unwrap();
            assert_eq!((doc["spec"]["group"].as_str(), doc["spec"]["names"]["kind"].as_str()), (Some(crd.group), Some(crd.kind)), "{}", crd.path);
        }
        let kinds: Vec<String> = Validator::builtin().kinds().into_iter().map(|(_, k)| k).collect();
        for kind in ["NodePool", "EC2NodeClass", "NodeOverlay", "ClusterPolicy", "PrometheusRule", "ServiceMonitor", "PodDisruptionBudget"] {
            assert!(kinds.iter().any(|k| k == kind), "{kind} in {kinds:?}");
        }
    }

    use super::Validator;
    use serde_json::json;
    use std::path::Path;

    const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Cluster
  versions:
    - name: v1alpha1
      served: false
      storage: false
      schema: {openAPIV3Schema: {type: object}}
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            apiVersion: {type: string}
            kind: {type: string}
            metadata: {type: object}
            spec:
              type: object
              properties:
                size: {type: string, default: small}
                free: {type: object, x-kubernetes-preserve-unknown-fields: true}
                items:
                  type: array
                  x-kubernetes-list-type: map
                  x-kubernetes-list-map-keys: [name]
                  items:
                    type: object
                    properties: {name: {type: string}}
                sorted:
                  type: array
                  items: {type: integer}
                  x-kubernetes-validations:
                    - rule: self.isSorted()
                      message: must be sorted
              x-kubernetes-validations:
                - rule: self.size == oldSelf.size
                  message: size is immutable
                - rule: self.size in ['small', 'large']
                - rule: "!has(self.free) || !has(self.free.bad)"
                  messageExpression: "'free.bad is not allowed, got ' + string(self.free.bad)"
                  fieldPath: .free
"#;

    fn widgets() -> Validator {
        let mut v = Validator::empty();
        v.add_crd(Path::new("widgets.yaml"), CRD).unwrap();
        v
    }

    #[test]
    fn validate_unsupported_rule_is_a_violation_and_transition_rules_are_skipped() {
        let v = widgets();
        let w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                       "spec": {"sorted": [1, 2], "free": {"anything": [1]}}});
        let violations = v.validate(&w);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].pointer, "/spec/sorted");
        assert!(
            violations[0]
                .message
                .starts_with("must be sorted (rule failed to evaluate"),
            "{}",
            violations[0]
        );
        // default applied (size: small), so the non-transition rule on spec passes.
        let (rules, transition) = v.cel_rules("example.com/v1", "Widget");
        assert_eq!((rules.len(), transition), (3, 1));
        assert_eq!(rules.iter().filter(|r| r.unsupported.is_some()).count(), 1);
    }

    #[test]
    fn validate_unserved_version_and_list_map_keys() {
        let v = widgets();
        let w = json!({"apiVersion": "example.com/v1alpha1", "kind": "Widget", "metadata": {"name": "w"}});
        let violations = v.validate(&w);
        assert_eq!(violations[0].pointer, "/apiVersion");
        assert_eq!(
            violations[0].message,
            "version v1alpha1 of kind Widget in group example.com is not served (served versions: v1)"
        );
        let w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                       "spec": {"items": [{"name": "a"}, {"name": "a"}]}});
        let violations = v.validate(&w);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].pointer, "/spec/items/1");
        assert_eq!(
            violations[0].message,
            "duplicate entry in a map list (name=\"a\")"
        );
    }

    #[test]
    fn validate_field_path_and_message_expression() {
        let v = widgets();
        let w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                       "spec": {"free": {"bad": 3}}});
        let violations = v.validate(&w);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(
            violations[0].to_string(),
            "/spec/free: free.bad is not allowed, got 3"
        );
    }
}
