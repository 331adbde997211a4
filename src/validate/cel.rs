//! CEL (`x-kubernetes-validations`) support on top of the `cel` crate 0.15.
//!
//! The environment is the CEL standard library plus what the Kubernetes API server adds and the
//! CRDs we validate against use: the strings extension (`split`, `lowerAscii`, ...; cel-go's
//! `ext.Strings`, which Kubernetes enables) and the Kubernetes regex library (`find`, `findAll`),
//! which the crate lacks and which is implemented here on top of the `regex` crate (RE2 syntax). Other Kubernetes
//! libraries (`isSorted`, `quantity`, `url`, `ip`, `cidr`, `format`...) are not registered: none of
//! the embedded CRDs uses them, and a rule that does fails to evaluate, which is reported as a
//! violation, never as a pass.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use cel::common::types::{CelInt, CelList, CelString};
use cel::common::value::Val;
use cel::objects::{Key, Map};
use cel::{Context, Env, ExecutionError, Program, Value};

use regex::Regex;

/// One `x-kubernetes-validations` entry, compiled.
pub(crate) struct Rule {
    pub(crate) rule: String,
    /// The rule's `message`, or the rule text when it has none.
    pub(crate) message: String,
    /// `Err` when the rule does not compile: reported at every place it applies.
    pub(crate) program: Result<Program, String>,
    /// `messageExpression`, compiled: when it evaluates to a string, that is the message.
    pub(crate) message_expression: Option<Program>,
    /// `fieldPath` as a JSON pointer suffix (`.a.b` → `/a/b`), when it has that simple form.
    pub(crate) field_path: Option<String>,
}

// `Program` holds an AST of plain data; the validator is shared behind a `OnceLock`, so check the
// bounds the compiler needs here, where a change in the `cel` crate would show first.
const _: fn() = || {
    fn sync_send<T: Send + Sync>() {}
    sync_send::<Program>();
    sync_send::<Env>();
};

pub(crate) fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        env.add_extension(cel::extensions::strings).expect("strings extension");
        cel::add_member_overload!(env, fn find: (CelString, CelString) -> Result<CelString>)
            .expect("find");
        cel::add_member_overload!(env, fn find_all: (CelString, CelString) -> Result<CelList>)
            .expect("findAll");
        cel::add_member_overload!(env, fn find_all_n: (CelString, CelString, CelInt) -> Result<CelList>,
            name = "findAll")
        .expect("findAll(n)");
        Arc::new(env)
    })
}

/// Compiled patterns, cached per thread: CRD rules use a handful of patterns on every object, and compiling a
/// regex costs far more than matching it.
fn compile_regex(function: &str, re: &CelString<'_>) -> Result<Regex, ExecutionError> {
    thread_local! {
        static CACHE: std::cell::RefCell<std::collections::HashMap<String, Regex>> = Default::default();
    }
    CACHE.with(|cache| {
        if let Some(compiled) = cache.borrow().get(re.inner()) {
            return Ok(compiled.clone());
        }
        // RE2 syntax, as Kubernetes' CEL library uses; the regex crate implements the same leftmost-first semantics.
        let compiled = Regex::new(re.inner()).map_err(|e| ExecutionError::function_error(function, e.to_string()))?;
        cache.borrow_mut().insert(re.inner().to_string(), compiled.clone());
        Ok(compiled)
    })
}

fn find(this: &CelString<'_>, re: &CelString<'_>) -> Result<CelString<'static>, ExecutionError> {
    Ok(CelString::from(
        compile_regex("find", re)?.find(this.inner()).map_or_else(String::new, |m| m.as_str().to_string()),
    ))
}

fn strings_list(items: Vec<String>) -> CelList<'static> {
    items
        .into_iter()
        .map(|s| Box::new(CelString::from(s)) as Box<dyn Val>)
        .collect::<Vec<_>>()
        .into()
}

fn find_all(this: &CelString<'_>, re: &CelString<'_>) -> Result<CelList<'static>, ExecutionError> {
    Ok(strings_list(
        compile_regex("findAll", re)?.find_iter(this.inner()).map(|m| m.as_str().to_string()).collect(),
    ))
}

fn find_all_n(
    this: &CelString<'_>,
    re: &CelString<'_>,
    n: &CelInt,
) -> Result<CelList<'static>, ExecutionError> {
    Ok(strings_list(
        {
            // Go's FindAllString: a negative limit means all matches.
            let limit = usize::try_from(*n.inner()).unwrap_or(usize::MAX);
            compile_regex("findAll", re)?.find_iter(this.inner()).take(limit).map(|m| m.as_str().to_string()).collect()
        },
    ))
}

/// Whether a rule is a transition rule (refers to `oldSelf`).
pub(crate) fn is_transition_rule(program: &Program) -> bool {
    program.references().has_variable("oldSelf")
}

pub(crate) fn compile(rule: &str, message: Option<&str>) -> Rule {
    let program = env()
        .compile(rule)
        .map_err(|e| format!("rule does not compile: {e}"));
    Rule {
        rule: rule.to_owned(),
        message: message.filter(|m| !m.is_empty()).unwrap_or(rule).to_owned(),
        program,
        message_expression: None,
        field_path: None,
    }
}

/// A rule from its `x-kubernetes-validations` entry (`rule`, `message`, `messageExpression`,
/// `fieldPath`; `reason` only picks the HTTP status and is not needed here).
pub(crate) fn compile_entry(entry: &serde_json::Value) -> Option<Rule> {
    let rule = entry.get("rule")?.as_str()?;
    let mut compiled = compile(
        rule,
        entry.get("message").and_then(serde_json::Value::as_str),
    );
    compiled.message_expression = entry
        .get("messageExpression")
        .and_then(serde_json::Value::as_str)
        .and_then(|m| env().compile(m).ok());
    compiled.field_path = entry
        .get("fieldPath")
        .and_then(serde_json::Value::as_str)
        .and_then(|p| p.strip_prefix('.'))
        .filter(|p| {
            p.split('.')
                .all(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        })
        .map(|p| p.split('.').map(|t| format!("/{t}")).collect());
    Some(compiled)
}

impl Rule {
    /// The message for a failure: `messageExpression`'s string when it yields one, else `message`.
    pub(crate) fn message_for(&self, bound: &Bound) -> String {
        if let Some(expr) = &self.message_expression
            && let Ok(Value::String(s)) = expr.execute(&bound.0)
            && !s.is_empty()
        {
            return s.to_string();
        }
        self.message.clone()
    }
}

/// A CEL context with `self` bound to one value, for every rule of a schema node: binding copies the whole value,
/// which cost more than evaluating when it was done once per rule.
pub(crate) struct Bound(Context<'static, 'static>);

impl Bound {
    pub(crate) fn new(value: Value) -> Bound {
        let mut ctx = Context::with_env(Arc::clone(env()));
        ctx.add_variable_from_value("self", value);
        Bound(ctx)
    }
}

/// JSON → CEL, the way the API server binds `self`: integers as `int` (i64, never `uint`, so that
/// `x.values.size() >= x.minValues` compares int with int), other numbers as `double`, objects as
/// maps with string keys (so `has(x.f)` and `x.f` behave as on an object).
pub(crate) fn to_cel(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => match n.as_u64() {
                // Larger than i64::MAX: the API server's int64 cannot hold it either.
                Some(u) => Value::UInt(u),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
        },
        serde_json::Value::String(s) => Value::String(Arc::new(s.clone())),
        serde_json::Value::Array(a) => Value::List(Arc::new(a.iter().map(to_cel).collect())),
        serde_json::Value::Object(o) => {
            let map: HashMap<Key, Value> = o
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v)))
                .collect();
            Value::Map(Map { map: Arc::new(map) })
        }
    }
}

/// The outcome of one rule on one value.
pub(crate) enum Outcome {
    Pass,
    Fail,
    /// Did not compile, did not evaluate, or evaluated to something other than a bool.
    Error(String),
}

pub(crate) fn evaluate(rule: &Rule, value: &serde_json::Value) -> Outcome {
    evaluate_cel(rule, &Bound::new(to_cel(value)))
}

/// Evaluates a rule in a context where `self` is bound (bind once per location, evaluate every rule there).
pub(crate) fn evaluate_cel(rule: &Rule, bound: &Bound) -> Outcome {
    let program = match &rule.program {
        Ok(p) => p,
        Err(e) => return Outcome::Error(e.clone()),
    };
    match program.execute(&bound.0) {
        Ok(Value::Bool(true)) => Outcome::Pass,
        Ok(Value::Bool(false)) => Outcome::Fail,
        Ok(other) => Outcome::Error(format!("rule evaluated to {other:?}, not a bool")),
        Err(e) => Outcome::Error(format!("rule failed to evaluate: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::{Outcome, compile, evaluate, is_transition_rule};
    use serde_json::json;

    fn outcome(rule: &str, value: serde_json::Value) -> String {
        match evaluate(&compile(rule, None), &value) {
            Outcome::Pass => "pass".into(),
            Outcome::Fail => "fail".into(),
            Outcome::Error(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn validate_cel_kubernetes_functions() {
        assert_eq!(
            outcome("self.find('^[^@]+') == 'al2023'", json!("al2023@v20251023")),
            "pass"
        );
        assert_eq!(
            outcome(
                "self.find('^([^/]+)').endsWith('karpenter.sh')",
                json!("karpenter.sh/x")
            ),
            "pass"
        );
        assert_eq!(
            outcome("self.findAll('[0-9]+') == ['1', '22']", json!("a1b22")),
            "pass"
        );
        assert_eq!(
            outcome("self.findAll('[0-9]+', 1) == ['1']", json!("a1b22")),
            "pass"
        );
        assert_eq!(
            outcome(
                "self.split('@')[1] == 'latest'",
                json!("windows2022@latest")
            ),
            "pass"
        );
        assert_eq!(
            outcome(
                "self.all(k, k != '' && self[k] != '')",
                json!({"a": "b", "c": ""})
            ),
            "fail"
        );
        assert_eq!(
            outcome(
                "self.filter(x, has(x.r) ? x.r == true : false).size() <= 1",
                json!([{"r": true}, {"r": true}])
            ),
            "fail"
        );
    }

    #[test]
    fn validate_cel_integers_are_signed() {
        // JSON integers bind as int: comparing with size() (an int) must work.
        assert_eq!(
            outcome(
                "self.values.size() >= self.minValues",
                json!({"values": ["a", "b"], "minValues": 2})
            ),
            "pass"
        );
        assert_eq!(outcome("self.n > -1", json!({"n": 0})), "pass");
    }

    #[test]
    fn validate_cel_failures_are_errors_not_passes() {
        assert!(
            outcome("self.isSorted()", json!([1, 2])).starts_with("error: rule failed to evaluate")
        );
        assert!(
            outcome("self.missing == 1", json!({})).starts_with("error: rule failed to evaluate")
        );
        assert!(
            outcome("int(self) >= 0", json!("lots")).starts_with("error: rule failed to evaluate")
        );
        assert!(outcome("self ==", json!(1)).starts_with("error: rule does not compile"));
        assert!(outcome("1", json!(1)).starts_with("error: rule evaluated to"));
    }

    #[test]
    fn validate_cel_transition_rules_are_recognised() {
        let r = compile("self.group == oldSelf.group", None);
        assert!(is_transition_rule(r.program.as_ref().unwrap()));
        let r = compile("self.group != ''", Some("group may not be empty"));
        assert!(!is_transition_rule(r.program.as_ref().unwrap()));
        assert_eq!(r.message, "group may not be empty");
    }
}
