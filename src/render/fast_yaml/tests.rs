//! The fast YAML path against serde-saphyr: the subset it takes and what it leaves (`subset`), generated and
//! mutated documents (`props`: when it answers, serde-saphyr must agree), and the examples' rendered templates.

mod subset {
//! The subset the fast path takes (each checked against serde-saphyr), and what it leaves to serde-saphyr.

use serde_json::{Value, json};

fn same(text: &str) -> Value {
    let fast =
        super::super::parse(text).unwrap_or_else(|| panic!("expected the fast path for:\n{text}"));
    let slow: Value = serde_saphyr::from_str(text).unwrap();
    assert_eq!(fast, slow, "{text}");
    fast
}

#[test]
fn takes_the_subset() {
    let v = same(concat!(
        "\n---\n# header\n",
        "apiVersion: karpenter.sh/v1\n",
        "metadata:\n  name: \"p00023\"\n  labels: {\"app.kubernetes.io/managed-by\":\"gpuplan\"}\n",
        "spec:\n  weight: 100   # trailing\n  ratio: -0.25\n  neg: -7\n  yes_: yes\n  no_: N\n  nothing:\n  tilde: ~\n",
        "  size: 200Gi\n  url: https://kubernetes.default.svc\n  \"nvidia.com/gpu\": \"32\"\n",
        "  esc: \"\\u003cnode\\u003e \\u0027x\\u0027 \\\"q\\\" \\\\ \\/ \\n\\t é😀\"\n",
        "  values: [\"a\", \"b\" , 1, -2, 0.5, true, null, {}, [], {\"k\": [1]}]\n",
        "  requirements:\n    - key: \"a\"\n      values: [\"x\"]\n    -   key: b\n        minValues: 2\n",
        "    - - nested\n      - 1\n    -\n      late: map\n    - # empty\n",
        "  same:\n  - one\n  -\n  - two\n",
        "  script: |\n    line 1\n\n      indented\n    # not a comment\n",
        "  strip: |-\n    a\n\n\n  keep: |+\n    b\n\n",
        "# end\n",
    ));
    assert_eq!(v["spec"]["weight"], json!(100));
    assert!(v["spec"]["neg"].is_i64() && v["spec"]["ratio"].is_f64());
    assert_eq!(v["spec"]["yes_"], json!(true));
    assert_eq!(v["spec"]["no_"], json!(false));
    assert_eq!(v["spec"]["nothing"], Value::Null);
    assert_eq!(
        v["spec"]["script"],
        json!("line 1\n\n  indented\n# not a comment\n")
    );
    assert_eq!(v["spec"]["strip"], json!("a"));
    assert_eq!(v["spec"]["keep"], json!("b\n\n"));
    assert_eq!(v["spec"]["same"], json!(["one", null, "two"]));
    same("- a\n- b: 1\n  c: [2]\n");
    same("--- # comment\na: 1\n");
    same("a: |\n  no newline at the end\nb: 1");
}

#[test]
fn leaves_the_rest_to_serde_saphyr() {
    for text in [
        "",
        "# only a comment\n",
        "a: 1\na: 2\n",           // duplicate key (serde-saphyr: error)
        "a: {\"x\":1,\"x\":2}\n", // duplicate key in flow
        "a: 1\n---\nb: 2\n",      // several documents
        "a: 1\n...\n",
        "%YAML 1.2\n---\na: 1\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "? a\n: b\n",
        "<<: {\"a\":1}\n",
        "a: 'single'\n",
        "a: >\n  folded\n",
        "a: |2\n   explicit\n",
        "a: plain\n  continued\n",
        "a: \"multi\n  line\"\n",
        "a: [1,\n  2]\n",
        "a: [x, y]\n", // plain scalars in flow
        "a: 0x10\n",
        "a: 1e3\n",
        "a: 01\n",
        "a: +1\n",
        "a: .5\n",
        "a: 1_000\n",
        "a: .inf\n",
        "a: 2026-01-01\n",
        "a: 18446744073709551616\n",
        "a: \"\\x41\"\n",          // YAML-only escape
        "a: \"\\ud83d\\ude00\"\n", // surrogate pair
        "a:\tb\n",
        "a: b\r\n",
        "\u{feff}a: b\n",
        "a: b\n    # more indented comment after a one-line value\n",
        "a: |\n\nb: 1\n", // empty block scalar
        "a:\n  b\n",      // scalar on its own line
        "a: -\n",
    ] {
        assert_eq!(super::super::parse(text), None, "{text:?}");
    }
}
}

mod props {
//! Generated documents from the supported grammar (and a bit beyond), plus random mutations of them.
//! For every input: when the fast path answers, serde-saphyr must succeed with an equal value.
//! `FAST_YAML_CASES` (default 3,000 per test; the fast path was also run on 3 million) and `FAST_YAML_SEED` change the run.

use serde_json::Value;

use crate::render::test_rng::{Rng, settings};

const TRICKY: &[&str] = &[
    "true",
    "True",
    "TRUE",
    "tRuE",
    "false",
    "False",
    "yes",
    "Yes",
    "YES",
    "no",
    "No",
    "on",
    "On",
    "ON",
    "off",
    "Off",
    "y",
    "Y",
    "n",
    "N",
    "null",
    "Null",
    "NULL",
    "nULL",
    "~",
    "1",
    "-1",
    "0",
    "-0",
    "+0",
    "00",
    "01",
    "-01",
    "+1",
    "1.5",
    "-1.5",
    "0.5",
    "-0.0",
    "1.",
    "1.0e3",
    "1e3",
    "1E3",
    "1e999",
    "-1e999",
    ".5",
    "-.5",
    "0x10",
    "0X1f",
    "0o17",
    "0b101",
    "0xZZ",
    "1_000",
    "1__0",
    "_1",
    "12:30",
    "1:30:00",
    "2026-01-01",
    "2026-01-01T10:00:00Z",
    "inf",
    "Inf",
    "-inf",
    "infinity",
    "nan",
    "NaN",
    ".inf",
    "-.inf",
    ".nan",
    ".NaN",
    "+.inf",
    "-",
    "--",
    "-a",
    "+a",
    "a: b",
    "#x",
    "a #b",
    "a#b",
    "a:b",
    "http://x.y/z?a=1&b=2",
    "15m",
    "200Gi",
    "30s",
    "10m",
    "168h",
    "2m",
    "4.6.0-4.8.3-distroless",
    "v26.7.0",
    "karpenter.sh/v1",
    "nvidia.com/gpu",
    "1d",
    "1h",
    "0.9",
    "10%",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999999",
    "a,b",
    "a b c",
    "avg by (x)",
    "$value",
    "(a)",
    "a'b",
    "a\"b",
    "a!b",
    "a&b",
    "a*b",
    "a|b",
    "a>b",
    "a%b",
    "a@b",
    "a`b",
    "a=b",
    "=",
    "<<",
    "?",
    "?a",
    ":a",
    "a:",
    "%a",
    "@a",
    "`a",
    "!a",
    "&a",
    "*a",
    "|",
    ">",
    "'a'",
    "\"a\"",
    "a\\b",
    "/x",
    "_x",
    "é",
    "aé",
    "0.1.2",
    "1-2",
    "1+2",
    "1e",
    "e1",
    "0e0",
    "123456789012345678901234567890.5",
    "ServerSideApply=true",
    "x]",
    "x}",
    "x[",
    "x{",
    "a, b",
    "a ,b",
];

const KEYS: &[&str] = &[
    "a",
    "b",
    "c",
    "name",
    "key",
    "values",
    "nvidia.com/gpu",
    "karpenter.sh/discovery",
    "on",
    "y",
    "null",
    "1",
    "_x",
    "a-b",
    "a.b",
    "x/y",
    "true",
    "<<",
    "-a",
    "~",
    "a b",
    "A",
    "k8s",
    "0x1",
];

const STRINGS: &[&str] = &[
    "",
    "a",
    "on",
    "yes",
    "null",
    "1",
    "1.5",
    "a: b",
    "a #b",
    "<node>",
    "'x'",
    "tab\there",
    "line\nbreak",
    "quote\"d",
    "back\\slash",
    "é",
    "日本",
    "😀",
    "\u{1}",
    "\u{a0}",
    "{{ $value }}",
    " lead",
    "trail ",
    "#",
    "- x",
    "[1]",
    "{a}",
    "\r",
    "\u{0}",
    "\u{3000}",
    // raw in the output: not YAML-printable or special, so the fast path bails
    "\u{7f}",
    "\u{85}",
    "\u{2028}",
    "\u{feff}",
    "\u{9f}",
];

fn line(out: &mut String, indent: usize, text: &str) {
    out.push_str(&" ".repeat(indent));
    out.push_str(text);
    out.push('\n');
}

const SAFE: &[&str] = &[
    "abc",
    "gp3",
    "enabled",
    "Exists",
    "15m",
    "200Gi",
    "1",
    "0",
    "-7",
    "42",
    "1.5",
    "-0.25",
    "true",
    "false",
    "null",
    "~",
    "karpenter.sh/v1",
    "a b",
    "x:y",
    "v1.2.3",
    "https://kubernetes.default.svc",
    "ServerSideApply=true",
    "a#b",
];

struct Gen<'r> {
    rng: &'r mut Rng,
    out: String,
    /// Percent of choices that may leave the subset.
    wild: usize,
}

impl Gen<'_> {
    fn line(&mut self, indent: usize, text: &str) {
        line(&mut self.out, indent, text);
    }

    fn noise(&mut self, indent: usize) {
        match self.rng.below(12) {
            0 => self.out.push('\n'),
            1 => line(&mut self.out, self.rng.below(6), ""),
            2 => self.line(indent, "# comment"),
            3 if self.rng.chance(self.wild) => {
                line(&mut self.out, self.rng.below(8), "# anywhere: - [x]")
            }
            _ => {}
        }
    }

    fn key(&mut self) -> String {
        if !self.rng.chance(self.wild) {
            return format!("k{}", self.rng.below(100));
        }
        if self.rng.chance(25) {
            serde_json::to_string(self.rng.pick(KEYS)).unwrap()
        } else if self.rng.chance(60) {
            self.rng.pick(KEYS).to_string()
        } else {
            format!("k{}", self.rng.below(30))
        }
    }

    fn string(&mut self) -> String {
        let pool = if self.rng.chance(self.wild) {
            STRINGS
        } else {
            &STRINGS[..30]
        };
        (0..self.rng.below(4))
            .map(|_| self.rng.pick(pool))
            .collect()
    }

    fn dq(&mut self) -> String {
        let s = self.string();
        let mut q = serde_json::to_string(&s).unwrap();
        if !self.rng.chance(self.wild) {
            return q;
        }
        if self.rng.chance(20) {
            // minijinja's \u00XX style and other escapes serde_json does not use
            q = q
                .replace('<', "\\u003c")
                .replace('\'', "\\u0027")
                .replace('/', "\\/");
        }
        if self.rng.chance(5) {
            q = q.replacen(
                'a',
                self.rng.pick([
                    "\\x41",
                    "\\0",
                    "\\e",
                    "\\ ",
                    "\\N",
                    "\\_",
                    "\\ud83d\\ude00",
                    "\\U0001F600",
                    "\\uD800",
                ]),
                1,
            );
        }
        q
    }

    fn json(&mut self, depth: usize) -> Value {
        match self.rng.below(if depth > 3 { 5 } else { 7 }) {
            0 => Value::Null,
            1 => Value::Bool(self.rng.chance(50)),
            2 => Value::from(self.rng.next() >> self.rng.below(64)),
            3 => Value::from(-((self.rng.next() >> (1 + self.rng.below(63))) as i64)),
            4 => Value::String(self.string()),
            5 => Value::Array(
                (0..self.rng.below(4))
                    .map(|_| self.json(depth + 1))
                    .collect(),
            ),
            _ => Value::Object(
                (0..self.rng.below(4))
                    .map(|_| (self.rng.pick(KEYS).to_string(), self.json(depth + 1)))
                    .collect(),
            ),
        }
    }

    fn flow(&mut self) -> String {
        let v = self.json(0);
        let mut s = if self.rng.chance(30) {
            serde_json::to_string_pretty(&v).unwrap().replace('\n', "")
        } else {
            serde_json::to_string(&v).unwrap()
        };
        if !self.rng.chance(self.wild) {
            return s;
        }
        if self.rng.chance(10) {
            s = s
                .replacen(',', ",,", 1)
                .replacen("\":", "\" :", 1)
                .replacen(']', ",]", 1);
        }
        if self.rng.chance(10) {
            s = s.replacen('1', "1.25", 1).replacen('2', "2e3", 1);
        }
        s
    }

    /// A scalar (or flow collection) on the rest of a line.
    fn inline(&mut self) -> String {
        let mut s = match self.rng.below(4) {
            0 => self.dq(),
            1 => self.flow(),
            _ if self.rng.chance(self.wild) => self.rng.pick(TRICKY).to_string(),
            _ => self.rng.pick(SAFE).to_string(),
        };
        if self.rng.chance(10) {
            s.push_str(self.rng.pick([" # trailing", "  #x", "#x", "   "]));
        }
        s
    }

    fn literal(&mut self, indent: usize) {
        let body_indent = indent + 1 + self.rng.below(3);
        for _ in 0..1 + self.rng.below(4) {
            match self.rng.below(6) {
                0 => self.out.push('\n'),
                1 => line(
                    &mut self.out,
                    body_indent + 1 + self.rng.below(2),
                    "more indented",
                ),
                2 => self.line(body_indent, "# not a comment"),
                3 => line(&mut self.out, self.rng.below(body_indent + 2), ""),
                _ => line(&mut self.out, body_indent, self.rng.pick(TRICKY)),
            }
        }
    }

    fn value_after_key(&mut self, indent: usize, head: &str, depth: usize) {
        match self.rng.below(if depth > 4 { 4 } else { 8 }) {
            0 => line(
                &mut self.out,
                indent,
                &format!("{head}{}", self.rng.pick(["", " ", " # c"])),
            ),
            1 => {
                let header = if self.rng.chance(self.wild) {
                    self.rng
                        .pick(["|", "|-", "|+", "| ", ">", "|2", "| # c", "|1-"])
                } else {
                    self.rng.pick(["|", "|-", "|+"])
                };
                self.line(indent, &format!("{head} {header}"));
                self.literal(indent);
            }
            2 | 3 => {
                let v = self.inline();
                self.line(indent, &format!("{head} {v}"));
            }
            4 if self.rng.chance(30) => {
                // sequence at the key's own indentation
                self.line(indent, head);
                self.seq(indent, depth + 1);
            }
            _ => {
                self.line(indent, head);
                self.noise(indent);
                let child = indent + 1 + self.rng.below(3);
                self.node(child, depth + 1);
            }
        }
    }

    fn map(&mut self, indent: usize, depth: usize) {
        for _ in 0..1 + self.rng.below(4) {
            let key = self.key();
            self.value_after_key(indent, &format!("{key}:"), depth);
            self.noise(indent);
        }
    }

    fn seq(&mut self, indent: usize, depth: usize) {
        for _ in 0..1 + self.rng.below(4) {
            let gap = " ".repeat(
                1 + if self.rng.chance(15) {
                    self.rng.below(3)
                } else {
                    0
                },
            );
            match self.rng.below(if depth > 4 { 3 } else { 6 }) {
                0 => line(
                    &mut self.out,
                    indent,
                    &format!("-{}", self.rng.pick(["", " ", " # c"])),
                ),
                1 | 2 => {
                    let v = self.inline();
                    self.line(indent, &format!("-{gap}{v}"));
                }
                3 => {
                    // compact mapping: `- key: v` then more keys at the key's column
                    let col = indent + 1 + gap.len();
                    let start = self.out.len();
                    self.map(col, depth + 1);
                    let first = self.out[start..].find(|c| c != ' ').unwrap_or(0) + start;
                    let prefix = format!("{}-{gap}", " ".repeat(indent));
                    self.out.replace_range(start..first, &prefix);
                }
                4 => {
                    let col = indent + 1 + gap.len();
                    let start = self.out.len();
                    self.seq(col, depth + 1);
                    let first = self.out[start..].find(|c| c != ' ').unwrap_or(0) + start;
                    let prefix = format!("{}-{gap}", " ".repeat(indent));
                    self.out.replace_range(start..first, &prefix);
                }
                _ => {
                    self.line(indent, "-");
                    let child = indent + 1 + self.rng.below(3);
                    self.node(child, depth + 1);
                }
            }
            self.noise(indent);
        }
    }

    fn node(&mut self, indent: usize, depth: usize) {
        if self.rng.chance(30) {
            self.seq(indent, depth)
        } else {
            self.map(indent, depth)
        }
    }

    fn document(mut self) -> String {
        self.noise(0);
        if self.rng.chance(10) {
            line(
                &mut self.out,
                0,
                self.rng
                    .pick(["---", "--- ", "--- # c", "%YAML 1.2\n---", "...", "--- a"]),
            );
        }
        let indent = if self.rng.chance(5) { 2 } else { 0 };
        self.node(indent, 0);
        self.noise(0);
        if self.rng.chance(5) {
            line(
                &mut self.out,
                0,
                self.rng.pick(["---", "...", "--- {}", "# end"]),
            );
        }
        if self.rng.chance(10) {
            self.out.pop();
        }
        self.out
    }
}

fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(chars.len() + 1);
        match rng.below(6) {
            0 if at < chars.len() => {
                chars.remove(at);
            }
            1 => {
                // re-indent one line
                let start = chars[..at]
                    .iter()
                    .rposition(|&c| c == '\n')
                    .map_or(0, |i| i + 1);
                if rng.chance(50) {
                    chars.insert(start, ' ');
                } else if chars.get(start) == Some(&' ') {
                    chars.remove(start);
                }
            }
            _ => {
                let c = rng.pick([
                    ' ', ' ', '-', ':', '"', '#', '|', '{', '}', '[', ']', ',', '\n', '\t', '\'',
                    '&', '*', '!', '>', '?', '.', '0', '1', 'e', '\\', 'u', '~', '+', '\r',
                ]);
                chars.insert(at, c);
            }
        }
    }
    chars.into_iter().collect()
}

#[derive(Default, Debug)]
struct Stats {
    cases: usize,
    fast: usize,
    saphyr_ok: usize,
    saphyr_ok_fast_none: usize,
}

fn check(text: &str, stats: &mut Stats) {
    let fast = super::super::parse(text);
    let slow = serde_saphyr::from_str::<Value>(text);
    stats.cases += 1;
    stats.fast += usize::from(fast.is_some());
    stats.saphyr_ok += usize::from(slow.is_ok());
    stats.saphyr_ok_fast_none += usize::from(slow.is_ok() && fast.is_none());
    if let Some(fast) = fast {
        match slow {
            Ok(slow) => assert_eq!(fast, slow, "values differ for:\n{text}\n---- {text:?}"),
            Err(err) => panic!(
                "fast path accepted what serde-saphyr rejects ({err}):\n{text}\n---- {text:?}"
            ),
        }
    }
}

#[test]
fn generated_documents() {
    let (mut rng, cases) = settings("FAST_YAML", 1);
    let mut stats = Stats::default();
    for _ in 0..cases {
        let wild = rng.pick([0, 2, 5, 20, 100]);
        let text = Gen {
            wild,
            rng: &mut rng,
            out: String::new(),
        }
        .document();
        if wild == 0
            && std::env::var("FAST_YAML_SHOW").is_ok()
            && super::super::parse(&text).is_none()
            && text.len() < 300
            && let Ok(v) = serde_saphyr::from_str::<Value>(&text)
        {
            eprintln!("=====\n{text}---- {v}");
        }
        check(&text, &mut stats);
    }
    eprintln!("generated: {stats:?}");
    assert!(
        stats.fast * 10 > stats.cases,
        "the generator should mostly stay in the subset: {stats:?}"
    );
}

#[test]
fn mutated_documents() {
    let (mut rng, cases) = settings("FAST_YAML", 2);
    let mut stats = Stats::default();
    for _ in 0..cases {
        let text = Gen {
            wild: rng.pick([0, 2, 5, 20, 100]),
            rng: &mut rng,
            out: String::new(),
        }
        .document();
        for _ in 0..4 {
            check(&mutate(&mut rng, &text), &mut stats);
        }
    }
    eprintln!("mutated: {stats:?}");
}

/// Mutations of what the built-in templates render for the bundled examples.
#[test]
fn mutated_corpus() {
    let (mut rng, cases) = settings("FAST_YAML", 3);
    let texts = super::super::super::tests::rendered_examples();
    let mut stats = Stats::default();
    for _ in 0..cases / 4 {
        let text = &texts[rng.below(texts.len())];
        check(&mutate(&mut rng, text), &mut stats);
    }
    eprintln!("mutated corpus: {stats:?}");
    assert!(stats.fast > 0, "some mutations stay in the subset: {stats:?}");
}

/// Each tricky plain scalar, as a mapping value, a sequence item and a flow item.
#[test]
fn tricky_scalars() {
    let mut stats = Stats::default();
    for t in TRICKY.iter().chain(KEYS) {
        for text in [
            format!("k: {t}\n"),
            format!("- {t}\n"),
            format!("{t}: v\n"),
            format!("- {t}: v\n"),
            format!("k: [{t}]\n"),
            format!("k: {{\"a\":{t}}}\n"),
            format!("k: {t} # c\n"),
            format!("k: |\n  {t}\n"),
            format!("k: \"{t}\"\n"),
        ] {
            check(&text, &mut stats);
        }
    }
    eprintln!("tricky: {stats:?}");
}
}
