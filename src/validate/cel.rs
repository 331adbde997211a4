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

use cel::common::ast::{EntryExpr, Expr, SelectExpr};
use cel::common::types::{CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt};
use cel::common::value::Val;
use cel::{Context, Env, ExecutionError, IdedExpr, Program, Value};

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

/// Calls `f` with the compiled pattern, cached per thread: CRD rules use a handful of patterns on every object,
/// and compiling a regex costs far more than matching it. `f` borrows the cached `Regex` rather than a clone: a
/// cloned `Regex` starts with an empty pool of match caches, and building one cost more than the match.
fn with_regex<T>(function: &str, re: &CelString<'_>, f: impl FnOnce(&Regex) -> T) -> Result<T, ExecutionError> {
    thread_local! {
        static CACHE: std::cell::RefCell<HashMap<String, Regex>> = Default::default();
    }
    CACHE.with(|cache| {
        if let Some(compiled) = cache.borrow().get(re.inner()) {
            return Ok(f(compiled));
        }
        // RE2 syntax, as Kubernetes' CEL library uses; the regex crate implements the same leftmost-first semantics.
        let compiled = Regex::new(re.inner()).map_err(|e| ExecutionError::function_error(function, e.to_string()))?;
        let result = f(&compiled);
        cache.borrow_mut().insert(re.inner().to_string(), compiled);
        Ok(result)
    })
}

fn find(this: &CelString<'_>, re: &CelString<'_>) -> Result<CelString<'static>, ExecutionError> {
    with_regex("find", re, |re| {
        CelString::from(re.find(this.inner()).map_or_else(String::new, |m| m.as_str().to_string()))
    })
}

fn strings_list(items: Vec<String>) -> CelList<'static> {
    items
        .into_iter()
        .map(|s| Box::new(CelString::from(s)) as Box<dyn Val>)
        .collect::<Vec<_>>()
        .into()
}

fn find_all(this: &CelString<'_>, re: &CelString<'_>) -> Result<CelList<'static>, ExecutionError> {
    with_regex("findAll", re, |re| strings_list(re.find_iter(this.inner()).map(|m| m.as_str().to_string()).collect()))
}

fn find_all_n(
    this: &CelString<'_>,
    re: &CelString<'_>,
    n: &CelInt,
) -> Result<CelList<'static>, ExecutionError> {
    // Go's FindAllString: a negative limit means all matches.
    let limit = usize::try_from(*n.inner()).unwrap_or(usize::MAX);
    with_regex("findAll", re, |re| {
        strings_list(re.find_iter(this.inner()).take(limit).map(|m| m.as_str().to_string()).collect())
    })
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

/// A CEL context with `self` bound to one value, for every rule of a schema node: binding converts the value,
/// which cost more than evaluating when it was done once per rule.
pub(crate) struct Bound<'v>(Context<'v, 'v>);

impl<'v> Bound<'v> {
    pub(crate) fn new(value: &SelfValue<'v>) -> Bound<'v> {
        let mut ctx = Context::with_env(Arc::clone(env()));
        ctx.add_variable_as_val("self", value.to_val());
        Bound(ctx)
    }

    /// `self` and, for a transition rule, `oldSelf` (the stored object's value at the same place).
    pub(crate) fn with_old(value: &'v serde_json::Value, old: &'v serde_json::Value) -> Bound<'v> {
        let mut bound = Bound::new(&SelfValue::Whole(value));
        bound.0.add_variable_as_val("oldSelf", to_val(old));
        bound
    }
}

/// What `self` is bound to at one place: the whole value, or, when the rules there observe only part of `self`
/// (see [`observed`]) and the value is an object, that part. No rule can tell the two apart, and the part is far
/// cheaper to convert and to memoize than a whole `spec`.
pub(crate) enum SelfValue<'v> {
    Whole(&'v serde_json::Value),
    /// The observed fields the object has; when its keys are observed, every key, the values of the fields no
    /// rule selects left out (`None`, bound as `null`).
    Object(Vec<(&'v str, Option<&'v serde_json::Value>)>),
}

impl<'v> SelfValue<'v> {
    pub(crate) fn new(value: &'v serde_json::Value, observed: Option<&Observed>) -> SelfValue<'v> {
        match (value, observed) {
            (serde_json::Value::Object(obj), Some(seen)) if seen.keys => SelfValue::Object(
                obj.iter().map(|(k, v)| (k.as_str(), seen.fields.binary_search(k).is_ok().then_some(v))).collect(),
            ),
            (serde_json::Value::Object(obj), Some(seen)) => SelfValue::Object(
                seen.fields
                    .iter()
                    .filter_map(|f| obj.get_key_value(f.as_str()))
                    .map(|(k, v)| (k.as_str(), Some(v)))
                    .collect(),
            ),
            _ => SelfValue::Whole(value),
        }
    }

    fn to_val(&self) -> Box<dyn Val + 'v> {
        let field = |v: &Option<&'v serde_json::Value>| v.map_or_else(|| Box::new(CelNull) as Box<dyn Val>, to_val);
        match self {
            SelfValue::Whole(value) => to_val(value),
            SelfValue::Object(fields) => Box::new(CelMap::from(
                fields.iter().map(|(k, v)| (CelMapKey::from(*k), field(v))).collect::<HashMap<_, _>>(),
            )),
        }
    }
}

impl SelfValue<'_> {
    /// What the rules see, encoded without ambiguity (type tags, lengths, raw bytes), for the memo of
    /// `rule_failures`: cheaper to write than JSON text (no escaping, no number formatting). `None` when longer
    /// than `max` bytes, found without encoding all of a large value.
    pub(crate) fn memo_key(&self, max: usize) -> Option<Vec<u8>> {
        let mut key = MemoKey { bytes: Vec::new(), max };
        match self {
            SelfValue::Whole(value) => key.value(value)?,
            SelfValue::Object(fields) => {
                key.len(b'{', fields.len())?;
                for (name, value) in fields {
                    key.str(name)?;
                    match value {
                        Some(value) => key.value(value)?,
                        None => key.bytes.push(b'_'),
                    }
                }
            }
        }
        Some(key.bytes)
    }
}

struct MemoKey {
    bytes: Vec<u8>,
    max: usize,
}

impl MemoKey {
    /// A tag and a 64-bit word: a length, or a number's bits.
    fn word(&mut self, tag: u8, word: u64) {
        self.bytes.push(tag);
        self.bytes.extend_from_slice(&word.to_le_bytes());
    }

    /// A tag and a length, in 4 bytes (never more than `max` anyway).
    fn len(&mut self, tag: u8, len: usize) -> Option<()> {
        self.bytes.push(tag);
        self.bytes.extend_from_slice(&u32::try_from(len).ok()?.to_le_bytes());
        Some(())
    }

    fn str(&mut self, s: &str) -> Option<()> {
        self.len(b's', s.len())?;
        self.bytes.extend_from_slice(s.as_bytes());
        (self.bytes.len() <= self.max).then_some(())
    }

    /// Numbers as `to_val` reads them: int, else uint, else double.
    fn value(&mut self, v: &serde_json::Value) -> Option<()> {
        match v {
            serde_json::Value::Null => self.bytes.push(b'n'),
            serde_json::Value::Bool(b) => self.bytes.push(if *b { b't' } else { b'f' }),
            serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => self.word(b'i', i as u64),
                (None, Some(u)) => self.word(b'u', u),
                (None, None) => self.word(b'd', n.as_f64().unwrap_or(f64::NAN).to_bits()),
            },
            serde_json::Value::String(s) => self.str(s)?,
            serde_json::Value::Array(items) => {
                self.len(b'[', items.len())?;
                for item in items {
                    self.value(item)?;
                }
            }
            serde_json::Value::Object(obj) => {
                self.len(b'{', obj.len())?;
                for (name, value) in obj {
                    self.str(name)?;
                    self.value(value)?;
                }
            }
        }
        (self.bytes.len() <= self.max).then_some(())
    }
}

/// JSON → CEL, the way the API server binds `self`: integers as `int` (i64, never `uint`, so that
/// `x.values.size() >= x.minValues` compares int with int), other numbers as `double`, objects as
/// maps with string keys (so `has(x.f)` and `x.f` behave as on an object). Strings and keys borrow from
/// the JSON: nothing is copied but the structure.
pub(crate) fn to_val(v: &serde_json::Value) -> Box<dyn Val + '_> {
    match v {
        serde_json::Value::Null => Box::new(CelNull),
        serde_json::Value::Bool(b) => Box::new(CelBool::from(*b)),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Box::new(CelInt::from(i)),
            None => match n.as_u64() {
                // Larger than i64::MAX: the API server's int64 cannot hold it either.
                Some(u) => Box::new(CelUInt::from(u)),
                None => Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
            },
        },
        serde_json::Value::String(s) => Box::new(CelString::from(s.as_str())),
        serde_json::Value::Array(a) => Box::new(CelList::from(a.iter().map(to_val).collect::<Vec<_>>())),
        serde_json::Value::Object(o) => Box::new(CelMap::from(
            o.iter().map(|(k, v)| (CelMapKey::from(k.as_str()), to_val(v))).collect::<HashMap<_, _>>(),
        )),
    }
}

/// What the rules at one place observe of `self`, when it is less than all of it (see [`observed`]).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Observed {
    /// The fields selected by name (`self.f`, `has(self.f)`), sorted, without repeats.
    pub(crate) fields: Vec<String>,
    /// Whether a macro iterates over `self` (`self.all(k, ...)`): on an object, that sees every key, no value.
    pub(crate) keys: bool,
}

/// What these rules (and their message expressions) can observe of `self`: `Some` when every use of `self`
/// selects a named field or is the range of a macro (`self.all(k, k != '')`); `None` when some rule uses `self`
/// as a whole (`size(self)`, `self[k]`, `self == ...`, `string(self)`).
pub(crate) fn observed(rules: &[Rule]) -> Option<Observed> {
    let mut seen = Observed::default();
    for rule in rules {
        let programs = rule.program.as_ref().ok().into_iter().chain(&rule.message_expression);
        for program in programs {
            if !partial_use(program.expression(), &mut seen) {
                return None;
            }
        }
    }
    seen.fields.sort();
    seen.fields.dedup();
    Some(seen)
}

fn is_self(e: &IdedExpr) -> bool {
    matches!(&e.expr, Expr::Ident(name) if name == "self")
}

/// Whether every `self` in `e` is a field selection's operand or a macro's range; records what they observe. A
/// macro variable named `self` only makes the answer more cautious (a field too many, or a whole use).
fn partial_use(e: &IdedExpr, seen: &mut Observed) -> bool {
    match &e.expr {
        Expr::Select(SelectExpr { operand, field, .. }) if is_self(operand) => {
            seen.fields.push(field.clone());
            true
        }
        Expr::Select(select) => partial_use(&select.operand, seen),
        Expr::Ident(name) => name != "self",
        Expr::Unspecified | Expr::Literal(_) => true,
        Expr::Call(call) => {
            call.target.iter().all(|t| partial_use(t, seen)) && call.args.iter().all(|a| partial_use(a, seen))
        }
        Expr::Comprehension(c) => {
            // A comprehension over a map binds its variable to each key in turn, never to a value.
            let range = if is_self(&c.iter_range) && c.iter_var2.is_none() {
                seen.keys = true;
                true
            } else {
                partial_use(&c.iter_range, seen)
            };
            range && [&c.accu_init, &c.loop_cond, &c.loop_step, &c.result].into_iter().all(|x| partial_use(x, seen))
        }
        Expr::List(list) => list.elements.iter().all(|x| partial_use(x, seen)),
        Expr::Map(map) => map.entries.iter().all(|entry| entry_partial_use(&entry.expr, seen)),
        Expr::Struct(st) => st.entries.iter().all(|entry| entry_partial_use(&entry.expr, seen)),
    }
}

fn entry_partial_use(entry: &EntryExpr, seen: &mut Observed) -> bool {
    match entry {
        EntryExpr::StructField(f) => partial_use(&f.value, seen),
        EntryExpr::MapEntry(e) => partial_use(&e.key, seen) && partial_use(&e.value, seen),
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
    evaluate_cel(rule, &Bound::new(&SelfValue::Whole(value)))
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

/// The binding of `self` before it borrowed from the JSON (JSON → `cel::Value` → `Box<dyn Val>`, copying every
/// string), kept as the reference the direct conversion and the field projection are checked against.
#[cfg(test)]
mod reference {
    use super::{Bound, Observed, Outcome, Rule, SelfValue, evaluate_cel};
    use cel::objects::{Key, Map};
    use cel::{Context, Value};
    use std::collections::HashMap;
    use std::sync::Arc;

    fn to_cel(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => match n.as_u64() {
                    Some(u) => Value::UInt(u),
                    None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
                },
            },
            serde_json::Value::String(s) => Value::String(Arc::new(s.clone())),
            serde_json::Value::Array(a) => Value::List(Arc::new(a.iter().map(to_cel).collect())),
            serde_json::Value::Object(o) => {
                let map: HashMap<Key, Value> =
                    o.iter().map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v))).collect();
                Value::Map(Map { map: Arc::new(map) })
            }
        }
    }

    /// A rule's outcome and message, as text.
    pub(super) fn show(rule: &Rule, bound: &Bound) -> String {
        match evaluate_cel(rule, bound) {
            Outcome::Pass => "pass".into(),
            Outcome::Fail => format!("fail: {}", rule.message_for(bound)),
            Outcome::Error(e) => format!("error: {e}"),
        }
    }

    /// The outcome with `self` bound the old way.
    pub(super) fn old(rule: &Rule, value: &serde_json::Value) -> String {
        let mut ctx = Context::with_env(Arc::clone(super::env()));
        ctx.add_variable_from_value("self", to_cel(value));
        show(rule, &Bound(ctx))
    }

    /// The outcome with `self` bound to the whole value, or to the fields the rule observes.
    pub(super) fn new(rule: &Rule, value: &serde_json::Value, observed: Option<&Observed>) -> String {
        show(rule, &Bound::new(&SelfValue::new(value, observed)))
    }
}

#[cfg(test)]
mod binding_tests {
    use super::reference::{new, old};
    use super::{Observed, compile_entry, observed};
    use serde_json::json;

    /// Every JSON type, nested, with a key that needs escaping and one that is empty.
    fn every_type() -> serde_json::Value {
        json!({
            "nothing": null, "t": true, "f": false, "zero": 0, "int": 42, "neg": -7, "big": 18446744073709551615u64,
            "float": 1.5, "negf": -0.25, "whole": 2.0, "s": "text", "empty": "", "unicode": "żółw",
            "list": [1, "a", null, [true, 2.5], {"k": "v"}], "nil": [],
            "map": {"a/b": 1, "": "e", "nested": {"deep": [{"x": -1}]}}, "obj": {}
        })
    }

    const RULES: &[&str] = &[
        "self.nothing == null", "self.t && !self.f", "self.zero == 0 && self.int > 41 && self.neg < 0",
        "self.big == 18446744073709551615u", "self.float == 1.5 && self.negf < 0.0", "self.whole == 2.0",
        "self.whole == 2", "self.int == 42.0", "self.s + '!' == 'text!'", "self.empty.size() == 0",
        "self.unicode.size() == 4", "self.list.size() == 5", "self.list[1] == 'a' && self.list[2] == null",
        "self.list[3][1] > 2.0", "self.list[4].k == 'v'", "has(self.list[4].k)", "self.nil.size() == 0",
        "self.map['a/b'] == 1 && self.map[''] == 'e'", "self.map.nested.deep[0].x == -1",
        "has(self.map.nested) && !has(self.map.missing)", "self.obj.size() == 0 && self.obj == {}",
        "self.list == [1, 'a', null, [true, 2.5], {'k': 'v'}]", "self.map.nested == {'deep': [{'x': -1}]}",
        "'s' in self", "size(self) == 17", "self.all(k, k != 'nope')", "self.exists(k, self[k] == 'text')",
        "self.filter(k, type(self[k]) == int).size() == 3", "type(self.big) == uint", "type(self.float) == double",
        "type(self.nothing) == null_type", "self.missing == 1", "self.s.matches('^t.x') && self.s.find('e.') == 'ex'",
        "self.list.map(x, type(x)) == [int, string, null_type, list, map]", "int(self.s) == 1", "self.int",
    ];

    fn rule(text: &str) -> super::Rule {
        compile_entry(&json!({"rule": text, "messageExpression": "'got ' + string(self.int)"})).unwrap()
    }

    /// Binding borrows from the JSON now: every rule gives the outcome and message it gave when `self` was
    /// converted through `cel::Value`, on every JSON type and on values of each type alone.
    #[test]
    fn validate_cel_binding_gives_the_old_outcomes() {
        let value = every_type();
        let mut fails = 0;
        for text in RULES {
            let r = rule(text);
            let before = old(&r, &value);
            assert_eq!(new(&r, &value, None), before, "{text}");
            fails += usize::from(!before.starts_with("pass"));
        }
        assert_eq!(fails, 3, "the last three rules do not evaluate");
        for (_, field) in value.as_object().unwrap() {
            for text in ["self == self", "type(self) == type(self)", "self.size() >= 0", "self > 0", "!self"] {
                let r = rule(text);
                assert_eq!(new(&r, field, None), old(&r, field), "{text} on {field}");
            }
        }
    }

    fn observed_by(rules: &[&str]) -> Option<Observed> {
        let rules: Vec<super::Rule> = rules.iter().map(|r| compile_entry(&json!({"rule": r})).unwrap()).collect();
        observed(&rules)
    }

    fn fields(fields: &[&str], keys: bool) -> Option<Observed> {
        Some(Observed { fields: fields.iter().map(|f| f.to_string()).collect(), keys })
    }

    #[test]
    fn validate_cel_observed_parts_of_self() {
        assert_eq!(
            observed_by(&["!has(self.replicas) || !has(self.weight)", "self.limits.size() == 0 || 'nodes' in self.limits"]),
            fields(&["limits", "replicas", "weight"], false)
        );
        assert_eq!(
            observed_by(&["self.terms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'al2')", "[self.a, {'k': self.b}].size() == 2"]),
            fields(&["a", "b", "terms"], false)
        );
        assert_eq!(observed_by(&["self.a.b.c == 1 && self.a.d"]), fields(&["a"], false));
        assert_eq!(observed_by(&["1 == 1"]), fields(&[], false));
        // A macro over `self` sees its keys.
        assert_eq!(observed_by(&["self.all(k, k != '')", "self.exists(k, k.startsWith('a'))"]), fields(&[], true));
        assert_eq!(observed_by(&["self.filter(k, k != 'x').size() == 1 || has(self.x)"]), fields(&["x"], true));
        assert_eq!(observed_by(&["self.all(k, self.exists(j, j == k))"]), fields(&[], true));
        // Any other use of `self` binds the whole value.
        for whole in [
            "size(self) == 1", "self == {}", "'a' in self", "self['a'] == 1", "has(self.a) && self.size() == 1",
            "string(self) == ''", "self.?a.hasValue()", "self.all(k, self[k] != '')", "[self].all(x, x != {})",
            "self.map(k, k).size() == self.size()", "dyn(self).all(k, k != '')", "type(self) == map",
        ] {
            assert_eq!(observed_by(&["has(self.b)", whole]), None, "{whole}");
        }
        // A message expression sees `self` too.
        let r = compile_entry(&json!({"rule": "self.a == 1", "messageExpression": "'bad: ' + string(self)"})).unwrap();
        assert_eq!(observed(&[r]), None);
        let r = compile_entry(&json!({"rule": "self.a == 1", "messageExpression": "'bad: ' + string(self.b)"})).unwrap();
        assert_eq!(observed(&[r]), fields(&["a", "b"], false));
    }

    /// Binding only the observed part of `self` gives each rule the outcome and message binding the whole value
    /// gives: present, missing, null and wrongly typed fields, and a `self` that is not an object.
    #[test]
    fn validate_cel_observed_parts_give_the_whole_values_outcomes() {
        let rules = [
            "!has(self.replicas) || !has(self.weight)",
            "!has(self.replicas) || (!has(self.limits) || size(self.limits) == 0 || (size(self.limits) == 1 && 'nodes' in self.limits))",
            "self.terms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'al2') ? self.family == 'AL2' : true",
            "(has(self.role) && !has(self.profile)) || (!has(self.role) && has(self.profile))",
            "self.weight > 10",
            "self.all(k, k != 'other')",
            "self.all(k, k in ['replicas', 'weight', 'limits', 'role'] || !k.find('^([^/]+)').endsWith('x'))",
            "self.exists_one(k, k.startsWith('r'))",
            "self.filter(k, k.size() > 5).size() <= 1 && (!has(self.limits) || self.limits.size() > 0)",
            "self.map(k, k.size()).exists(n, n == 6)",
            "self.all(k, k.matches('^[a-z]+$'))",
        ];
        let values = [
            json!({}),
            json!({"replicas": 1, "weight": 5, "limits": {"nodes": "1"}, "role": "r", "other": [1, 2]}),
            json!({"replicas": null, "limits": {"cpu": "1", "nodes": 2}, "profile": "p", "weight": "heavy"}),
            json!({"terms": [{"alias": "al2@latest"}], "family": "Bottlerocket", "weight": 11.5, "role": "", "profile": ""}),
            json!({"terms": [{"id": "ami-1"}, {"alias": "al2023@v1"}], "family": "AL2", "limits": {}, "x": {"y": "z"}}),
            json!({"terms": "not a list", "limits": 3, "a/x": true, "rr": null}),
            json!("a string"),
            json!([1, 2]),
            json!(["other", "replicas"]),
            json!(null),
        ];
        for text in rules {
            let r = compile_entry(&json!({"rule": text, "messageExpression": "'weight ' + string(self.weight)"})).unwrap();
            let seen = observed(std::slice::from_ref(&r)).expect("observes part of self");
            for value in &values {
                assert_eq!(new(&r, value, Some(&seen)), new(&r, value, None), "{text} on {value}");
                assert_eq!(new(&r, value, None), old(&r, value), "{text} on {value}");
            }
        }
    }

    /// Memo keys tell apart every two values the rules could tell apart, and only grow past the limit on large
    /// values.
    #[test]
    fn validate_cel_memo_keys_are_unambiguous() {
        use super::SelfValue;
        let values = [
            json!(null), json!(true), json!(false), json!(0), json!(1), json!(-1), json!(1.0), json!(-0.0), json!(0.0),
            json!(18446744073709551615u64), json!(""), json!("1"), json!("true"), json!("null"), json!("ab"),
            json!(["ab"]), json!(["a", "b"]), json!([["a"], "b"]), json!([["a", "b"]]), json!([]), json!([[]]),
            json!({}), json!({"a": "b"}), json!({"ab": ""}), json!({"a": {"b": null}}), json!({"a": null}),
            json!({"a": ["b"]}), json!([{"a": "b"}]), json!({"a": "b", "c": 1}), json!({"a": "b", "c": 1.0}),
        ];
        let whole: Vec<Vec<u8>> = values.iter().map(|v| SelfValue::Whole(v).memo_key(2048).unwrap()).collect();
        for (i, a) in whole.iter().enumerate() {
            for (j, b) in whole.iter().enumerate().skip(i + 1) {
                assert_ne!(a, b, "{} and {}", values[i], values[j]);
            }
        }
        // Equal values, equal keys (objects whatever their insertion order).
        let a: serde_json::Value = serde_json::from_str(r#"{"x": 1, "y": [true, "z"]}"#).unwrap();
        let b: serde_json::Value = serde_json::from_str(r#"{"y": [true, "z"], "x": 1}"#).unwrap();
        assert_eq!(SelfValue::Whole(&a).memo_key(2048), SelfValue::Whole(&b).memo_key(2048));
        // A key whose value no rule reads differs from one whose value is null.
        let keys = Observed { fields: vec!["a".into()], keys: true };
        let v = json!({"a": null, "b": null});
        let key = SelfValue::new(&v, Some(&keys)).memo_key(2048).unwrap();
        let w = json!({"a": null, "b": 1});
        assert_eq!(SelfValue::new(&w, Some(&keys)).memo_key(2048).unwrap(), key, "b's value is not observed");
        let x = json!({"a": 1, "b": null});
        assert_ne!(SelfValue::new(&x, Some(&keys)).memo_key(2048).unwrap(), key, "a's is");
        // Past the limit: no key.
        let long = json!({"list": vec!["x".repeat(100); 30]});
        assert!(SelfValue::Whole(&long).memo_key(2048).is_none());
        assert!(SelfValue::Whole(&long).memo_key(4096).is_some());
        assert!(SelfValue::Whole(&json!("y".repeat(3000))).memo_key(2048).is_none());
    }
}
