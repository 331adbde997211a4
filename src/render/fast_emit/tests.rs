//! The fast YAML emitter against serde-saphyr: the layouts and scalars it writes and what it leaves (`subset`),
//! generated and mutated values (`props`: when it answers, serde-saphyr must write the same bytes), and every
//! value the bundled examples write.

use serde_json::Value;

mod subset {
//! Hand-picked values (each checked against serde-saphyr), tricky strings in every position, and what the
//! fast path leaves to serde-saphyr.

use serde_json::{Value, json};

use super::super::emit;
use crate::render::saphyr_yaml;

fn same(value: Value) -> String {
    let fast = emit(&value).unwrap_or_else(|| panic!("expected the fast path for {value}"));
    assert_eq!(fast, saphyr_yaml(&value), "{value}");
    fast
}

#[test]
fn layouts() {
    assert_eq!(
        same(json!({
            "b": {"c": 1, "d": [true, null, -7, 0.5]},
            "a": [],
            "e": {},
            "f": [{"x": 1, "y": [2, 3]}, [4, [5, 6], {}], [], {"z": {"w": "v"}}],
        })),
        concat!(
            "a: []\n",
            "b:\n  c: 1\n  d:\n  - true\n  - null\n  - -7\n  - 0.5\n",
            "e: {}\n",
            "f:\n- x: 1\n  \"y\":\n  - 2\n  - 3\n- - 4\n  - - 5\n    - 6\n  - {}\n- []\n- z:\n    w: v\n",
        )
    );
    assert_eq!(
        same(json!([[["deep"]], {"k": {"j": []}}])),
        "- - - deep\n- k:\n    j: []\n"
    );
    assert_eq!(same(json!({})), "{}\n");
    assert_eq!(same(json!([])), "[]\n");
    assert_eq!(same(json!(null)), "null\n");
    assert_eq!(same(json!("text")), "text\n");
    assert_eq!(same(json!(42)), "42\n");
}

#[test]
fn literal_blocks() {
    let promql = "sum by (pod) (\n  rate(x[5m])\n) > 0.9\n";
    assert_eq!(
        same(json!({"spec": {"groups": [{"rules": [{"expr": promql}]}]}})),
        "spec:\n  groups:\n  - rules:\n    - expr: |\n        sum by (pod) (\n          rate(x[5m])\n        ) > 0.9\n"
    );
    assert_eq!(same(json!({"k": "a\nb"})), "k: |-\n  a\n  b\n");
    assert_eq!(same(json!({"k": "a\n\nb\n\n"})), "k: |+\n  a\n\n  b\n\n");
    assert_eq!(same(json!({"k": "  lead\nb\n"})), "k: |2\n    lead\n  b\n");
    assert_eq!(same(json!({"k": "\n"})), "k: |+\n\n");
    assert_eq!(same(json!(["x\ny\n"])), "- |\n  x\n  y\n");
    assert_eq!(same(json!("top\nlevel")), "|-\n  top\n  level\n");
    // Not allowed in a block scalar: double-quoted with escapes.
    assert_eq!(same(json!({"k": "a\r\nb"})), "k: \"a\\r\\nb\"\n");
}

#[test]
fn scalars() {
    assert_eq!(
        same(
            json!({"on": "on", "k": "1", "y": "yes", "t": "a\tb", "e": "", "q": "say \"hi\"", "c": "a: b"})
        ),
        concat!(
            "c: \"a: b\"\n",
            "e: \"\"\n",
            "k: \"1\"\n",
            "\"on\": \"on\"\n",
            "q: say \"hi\"\n",
            "t: \"a\\tb\"\n",
            "\"y\": \"yes\"\n",
        )
    );
    assert_eq!(
        same(json!([".", "#", "-", "--", "0.50", "1.2.3", "200Gi"])),
        "- '.'\n- '#'\n- '-'\n- --\n- \"0.50\"\n- \"1.2.3\"\n- 200Gi\n"
    );
    // No folding, however long (folded_wrap_chars is usize::MAX / 2).
    let long = "word ".repeat(400) + "end";
    assert_eq!(same(json!({"k": long})), format!("k: {long}\n"));
    assert_eq!(
        same(json!([
            1.25,
            -0.5,
            2.0,
            0.0,
            -0.0,
            1e14,
            0.0001,
            18446744073709551615u64,
            -9223372036854775808i64
        ])),
        "- 1.25\n- -0.5\n- 2.0\n- 0.0\n- -0.0\n- 100000000000000.0\n- 0.0001\n- 18446744073709551615\n- -9223372036854775808\n"
    );
}

/// Strings whose quoting rule is not reproduced (or needs a non-ASCII escape): `None` as values.
const LEFT_TO_SERDE_SAPHYR: &[&str] = &[
    "1:30",
    "12:30:45",
    "-1:30",
    "2026-01-01",
    "2026-01-01T10:00:00Z",
    "2026-1-1 1:2:3",
    "2026-",
    "\u{85}",
    "a\u{85}\nb",
    "a\u{2028}b",
    "\u{feff}x",
    "\u{9f}",
    "x\u{ffff}",
];

/// Everything else here takes the fast path in every position.
const TRICKY: &[&str] = &[
    // YAML 1.1 booleans, nulls, special floats
    "on",
    "On",
    "ON",
    "off",
    "yes",
    "Yes",
    "no",
    "NO",
    "y",
    "Y",
    "n",
    "N",
    "true",
    "False",
    "tRUE",
    "~",
    "null",
    "Null",
    "NULL",
    "nULL",
    "nan",
    "NaN",
    ".nan",
    "inf",
    "-inf",
    "+inf",
    ".inf",
    "-.Inf",
    "+.INF",
    // numbers as strings
    "1",
    "-1",
    "+1",
    "0",
    "-0",
    "00",
    "0777",
    "1.5",
    "0.50",
    "1.",
    ".5",
    "-.5",
    "1e3",
    "1E3",
    "1.0e+3",
    "12e03",
    "1e",
    "e1",
    "0x1F",
    "0X1f",
    "0xZZ",
    "0o17",
    "0b101",
    "0b",
    "0b+1",
    "-0b1",
    "1_000",
    "1__0",
    "_1",
    "1_",
    "0x_1",
    "1._0",
    "1.2.3",
    "1..2",
    "18446744073709551616",
    "99999999999999999999999",
    "2026",
    "20260-01-01",
    "1-2",
    "1+2",
    "1,5",
    // indicators at the start
    "-",
    "--",
    "---",
    "--- a",
    "---a",
    "...",
    "... x",
    "....",
    "-a",
    "- a",
    "-\ta",
    "?",
    "?a",
    "? a",
    ":",
    ":a",
    ",a",
    "[a",
    "]a",
    "{a",
    "}a",
    "#a",
    "&a",
    "*a",
    "!a",
    "|",
    "|a",
    ">",
    ">a",
    "'a'",
    "\"a\"",
    "%a",
    "@a",
    "`a",
    ".",
    "#",
    "<<",
    "=",
    "==",
    "<",
    "$value",
    "(a)",
    "/x",
    "_x",
    // inside
    "a: b",
    "a:b",
    "a:",
    "a :",
    "a: ",
    "a:\u{3000}",
    "a #b",
    "a#b",
    "a\u{a0}#b",
    "a\u{3000}#b",
    "a\t#b",
    "a,b",
    "a[b]",
    "a{b}",
    "a'b",
    "a\"b",
    "a\\b",
    "a!b",
    "a&b",
    "a*b",
    "a|b",
    "a>b",
    "a%b",
    "a@b",
    "a`b",
    "a=b",
    "http://x.y/z?a=1&b=2",
    "{{ $labels.pod }}",
    "nvidia.com/gpu",
    "karpenter.sh/v1",
    "v1.2.3",
    "200Gi",
    "15m",
    "4.6.0-4.8.3-distroless",
    "SkipDryRunOnMissingResource=true",
    "0 9 * * 1-5",
    // white space and controls
    "",
    " ",
    "trail ",
    " lead",
    "  ",
    "a  b",
    "\t",
    "a\tb",
    "tab\t",
    "\r",
    "a\rb",
    "\u{0}",
    "\u{1}",
    "\u{7}",
    "\u{8}",
    "\u{b}",
    "\u{c}",
    "\u{1b}",
    "\u{1f}",
    "\u{7f}",
    "back\\slash\"quote",
    // non-ASCII
    "é",
    "日本",
    "😀",
    "0–1 ratio",
    "3 × 4",
    "\u{a0}",
    "a\u{a0}",
    "\u{a0}a",
    "\u{3000}",
    "\u{e000}",
    "\u{fffd}",
    // multi-line
    "a\nb",
    "a\nb\n",
    "a\nb\n\n",
    "a\n",
    "\n",
    "\n\n",
    "\na",
    "\n\na\n",
    "  a\nb",
    "\n  a",
    " \na",
    "a\n  b\n",
    "a\n\n\nb",
    "a\r\nb\n",
    "a\u{1}\nb",
    "a\t\nb",
    "\ta\nb",
    "a \nb ",
    "é\n😀\n",
    "- a\n- b\n",
    "key: value\n# comment\n",
    "|\n>",
    "a\n ",
    "\n \n",
];

const KEYS: &[&str] = &["k", "a.b/c", "1", "on", "a b", "-a", "\"q\""];

/// `s` in every position: map value, key, sequence item, the root, after a dash, deeper in a mapping.
fn positions(s: &str) -> Vec<Value> {
    let keys = KEYS.iter().map(|k| (k.to_string(), json!(s)));
    vec![
        json!({"k": s}),
        json!({s: "v"}),
        json!({s: [s], "m": {s: s}}),
        json!([s]),
        json!(s),
        json!({"a": [{"b": s, "c": [s, s]}, s]}),
        json!([[s, {"k": s, s: [s]}], s]),
        json!({"a": {"b": {"c": s}}}),
        Value::Object(keys.collect()),
    ]
}

#[test]
fn tricky_strings() {
    for s in TRICKY {
        for value in positions(s) {
            assert_eq!(emit(&value), Some(saphyr_yaml(&value)), "{s:?} in {value}");
        }
    }
}

#[test]
fn leaves_the_rest_to_serde_saphyr() {
    for s in LEFT_TO_SERDE_SAPHYR {
        assert_eq!(emit(&json!({"k": s})), None, "{s:?}");
        for value in positions(s) {
            if let Some(text) = emit(&value) {
                assert_eq!(text, saphyr_yaml(&value), "{value}");
            }
        }
    }
    // Keys serde-saphyr writes as `? key`.
    let long = "k".repeat(1025);
    assert_eq!(emit(&json!({long.clone(): 1})), None);
    assert!(emit(&json!({&long[1..]: 1})).is_some());
    // Floats with 16 or more significant digits, or that zmij writes with an exponent.
    for f in [
        0.1 + 0.2,
        1e15,
        1e16,
        1e300,
        0.00001,
        1e-7,
        f64::MIN_POSITIVE,
        f64::MAX,
        1234567890123456.0,
    ] {
        assert_eq!(emit(&json!(f)), None, "{f}");
    }
    // Nesting deeper than 64.
    let mut deep = json!(1);
    for _ in 0..65 {
        deep = json!([deep]);
    }
    assert_eq!(emit(&deep), None);
}
}

mod props {
//! Generated values, and mutations of the examples' values: when the fast path answers, serde-saphyr must
//! write exactly the same text. `FAST_EMIT_CASES` (default 3,000 per test) and `FAST_EMIT_SEED` change the run.

use serde_json::{Map, Value};

use super::super::emit;
use crate::render::saphyr_yaml;

use crate::render::test_rng::{Rng, settings};

const WORDS: &[&str] = &[
    "gpuplan",
    "nvidia.com/gpu",
    "karpenter.sh/v1",
    "200Gi",
    "15m",
    "WhenEmptyOrUnderutilized",
    "NoSchedule",
    "0.50",
    "1",
    "-1",
    "1.5",
    "true",
    "on",
    "y",
    "~",
    "null",
    "",
    " ",
    "a b",
    "a: b",
    "a:b",
    "a #b",
    "a#b",
    "-",
    "- a",
    "-a",
    "?",
    ":x",
    "#",
    ".",
    "...",
    "---",
    "&a",
    "*a",
    "!a",
    "|",
    ">",
    "%",
    "@",
    "`",
    "'",
    "\"",
    "\\",
    "{{ $value }}",
    "[x]",
    "{x}",
    ",",
    "1e3",
    "0x1F",
    "0o7",
    "1_0",
    ".inf",
    "nan",
    "1:30",
    "2026-01-01",
    "é",
    "×",
    "日本",
    "\u{a0}",
    "\u{3000}",
    "\u{85}",
    "\u{feff}",
    "\t",
    "\r",
    "\u{1}",
    "\u{7f}",
    "\n",
    "\n\n",
    "  ",
];

/// Characters for random strings: the ones quoting and block scalars care about, and some ordinary ones.
const CHARS: &[char] = &[
    'a', 'b', 'z', 'A', '0', '1', '9', ' ', ' ', ':', '#', '-', '?', '.', '_', '+', 'e', 'x',
    '\n', '\n', '\t', '"', '\'', '\\', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '%',
    '@', '`', '~', '/', '=', '<', 'é', '\u{a0}', '\u{3000}', '\u{85}', '\u{2028}', '\r',
    '\u{0}', '\u{1b}', '\u{7f}', '😀',
];

struct Gen<'r> {
    rng: &'r mut Rng,
}

impl Gen<'_> {
    fn string(&mut self) -> String {
        match self.rng.below(4) {
            0 => (0..self.rng.below(12))
                .map(|_| self.rng.pick(CHARS))
                .collect(),
            1 => {
                // multi-line, as PromQL and embedded YAML are
                let lines: Vec<String> = (0..1 + self.rng.below(4))
                    .map(|_| {
                        format!(
                            "{}{}",
                            " ".repeat(self.rng.pick([0, 0, 0, 1, 2, 4])),
                            self.rng.pick(WORDS)
                        )
                    })
                    .collect();
                lines.join("\n") + &"\n".repeat(self.rng.pick([0, 1, 1, 1, 2, 3]))
            }
            _ => (0..1 + self.rng.below(3))
                .map(|_| self.rng.pick(WORDS))
                .collect(),
        }
    }

    fn float(&mut self) -> f64 {
        let f = match self.rng.below(5) {
            0 => f64::from_bits(self.rng.next()),
            1 => self.rng.below(100_000) as f64 / 10f64.powi(self.rng.below(8) as i32),
            2 => self.rng.below(1 << 20) as f64 / (1u64 << self.rng.below(30)) as f64,
            3 => {
                (self.rng.next() >> self.rng.below(64)) as f64
                    * 10f64.powi(self.rng.below(40) as i32 - 20)
            }
            _ => self.rng.pick([
                0.1 + 0.2,
                1e15,
                999999999999999.9,
                0.00001,
                0.0001,
                1e-5,
                123456789012345.0,
            ]),
        };
        if self.rng.chance(30) { -f } else { f }
    }

    fn scalar(&mut self) -> Value {
        match self.rng.below(8) {
            0 => Value::Null,
            1 => Value::Bool(self.rng.chance(50)),
            2 => Value::from(self.rng.next() >> self.rng.below(64)),
            3 => Value::from(-((self.rng.next() >> (1 + self.rng.below(63))) as i64)),
            4 => serde_json::Number::from_f64(self.float()).map_or(Value::Null, Value::Number),
            _ => Value::String(self.string()),
        }
    }

    fn key(&mut self) -> String {
        if self.rng.chance(70) {
            format!("k{}", self.rng.below(20))
        } else {
            self.string()
        }
    }

    fn value(&mut self, depth: usize) -> Value {
        match if depth > 5 { 0 } else { self.rng.below(4) } {
            0 | 1 => self.scalar(),
            2 => Value::Array(
                (0..self.rng.below(4))
                    .map(|_| self.value(depth + 1))
                    .collect(),
            ),
            _ => Value::Object(
                (0..self.rng.below(5))
                    .map(|_| (self.key(), self.value(depth + 1)))
                    .collect(),
            ),
        }
    }
}

#[derive(Default, Debug)]
struct Stats {
    cases: usize,
    fast: usize,
}

fn check(value: &Value, stats: &mut Stats) {
    stats.cases += 1;
    if let Some(fast) = emit(value) {
        stats.fast += 1;
        let slow = saphyr_yaml(value);
        assert_eq!(
            fast, slow,
            "texts differ for {value}\n--- fast_emit:\n{fast}--- serde-saphyr:\n{slow}"
        );
    }
}

#[test]
fn generated_values() {
    let (mut rng, cases) = settings("FAST_EMIT", 1);
    let mut stats = Stats::default();
    for _ in 0..cases {
        let value = Gen { rng: &mut rng }.value(0);
        check(&value, &mut stats);
    }
    eprintln!("generated: {stats:?}");
    assert!(
        stats.fast * 2 > stats.cases,
        "most generated values should take the fast path: {stats:?}"
    );
}

#[test]
fn floats() {
    let (mut rng, cases) = settings("FAST_EMIT", 2);
    let mut stats = Stats::default();
    for _ in 0..cases {
        let f = Gen { rng: &mut rng }.float();
        if let Some(n) = serde_json::Number::from_f64(f) {
            check(&Value::Number(n.clone()), &mut stats);
            check(&Value::Array(vec![Value::Number(n)]), &mut stats);
        }
    }
    eprintln!("floats: {stats:?}");
    assert!(stats.fast * 3 > stats.cases, "{stats:?}");
}

/// Replaces some leaves (and keys) of `value` with generated ones.
fn mutate(g: &mut Gen, value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let map: Map<String, Value> = map
                .iter()
                .map(|(k, v)| {
                    (
                        if g.rng.chance(3) { g.key() } else { k.clone() },
                        mutate(g, v),
                    )
                })
                .collect();
            Value::Object(map)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| mutate(g, v)).collect()),
        _ if g.rng.chance(15) => g.scalar(),
        leaf => leaf.clone(),
    }
}

/// The examples' values, with some of their keys and leaves replaced.
#[test]
fn mutated_examples() {
    let (mut rng, cases) = settings("FAST_EMIT", 3);
    let values = super::super::super::tests::emitted_examples();
    let mut stats = Stats::default();
    for _ in 0..cases / 4 {
        let value = &values[rng.below(values.len())];
        let mut g = Gen { rng: &mut rng };
        check(&mutate(&mut g, value), &mut stats);
    }
    eprintln!("mutated examples: {stats:?}");
    assert!(stats.fast > 0, "{stats:?}");
}
}

/// Every value the bundled examples write (objects, kustomizations, ConfigMap payloads) takes the fast path,
/// with serde-saphyr's bytes (which debug builds also check inside `to_yaml`).
#[test]
fn every_example_value_takes_the_fast_path() {
    let values = super::super::tests::emitted_examples();
    assert!(values.len() >= 50, "{} values", values.len());
    let has = |field: &str, wanted: &str| values.iter().any(|v| v[field] == wanted);
    assert!(has("kind", "ConfigMap") && has("apiVersion", "kustomize.config.k8s.io/v1beta1"));
    assert!(values.iter().any(|v| v.get("kind").is_none()), "no ConfigMap payload");
    let slow: Vec<String> = values
        .iter()
        .filter(|v| super::emit(v).is_none())
        .map(Value::to_string)
        .collect();
    assert!(
        slow.is_empty(),
        "not on the fast path:\n{}",
        slow.join("\n---\n")
    );
    for value in &values {
        assert_eq!(
            super::emit(value).as_deref(),
            Some(super::super::saphyr_yaml(value).as_str()),
            "{value}"
        );
    }
}
