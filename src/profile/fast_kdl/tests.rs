//! The fast KDL path against kdl-rs: field by field on hand-written cases, the repository's profiles, and
//! generated and mutated documents (the correctness rule: `Some` only for text kdl-rs accepts, and then equal).

mod common {
//! Shared helpers: compare a fast-path document with kdl-rs's on every field the
//! profile reader uses (not `PartialEq`, which also compares formatting).
#![allow(dead_code)]

use kdl::{KdlDocument, KdlEntry, KdlNode, KdlValue};

/// `Err(path: difference)` on the first mismatch.
pub fn same_doc(fast: &KdlDocument, slow: &KdlDocument, path: &str) -> Result<(), String> {
    if fast.span() != slow.span() {
        return Err(format!(
            "{path}: doc span {:?} != {:?}",
            fast.span(),
            slow.span()
        ));
    }
    if fast.nodes().len() != slow.nodes().len() {
        return Err(format!(
            "{path}: {} nodes != {}",
            fast.nodes().len(),
            slow.nodes().len()
        ));
    }
    for (i, (f, s)) in fast.nodes().iter().zip(slow.nodes()).enumerate() {
        same_node(f, s, &format!("{path}/{i}:{}", s.name().value()))?;
    }
    Ok(())
}

fn same_node(f: &KdlNode, s: &KdlNode, path: &str) -> Result<(), String> {
    let check = |what: &str, ok: bool, fv: String, sv: String| {
        if ok {
            Ok(())
        } else {
            Err(format!("{path}: {what} {fv} != {sv}"))
        }
    };
    check(
        "name",
        f.name().value() == s.name().value(),
        f.name().value().into(),
        s.name().value().into(),
    )?;
    check(
        "name span",
        f.name().span() == s.name().span(),
        format!("{:?}", f.name().span()),
        format!("{:?}", s.name().span()),
    )?;
    check(
        "node span",
        f.span() == s.span(),
        format!("{:?}", f.span()),
        format!("{:?}", s.span()),
    )?;
    check(
        "entry count",
        f.entries().len() == s.entries().len(),
        f.entries().len().to_string(),
        s.entries().len().to_string(),
    )?;
    for (i, (fe, se)) in f.entries().iter().zip(s.entries()).enumerate() {
        same_entry(fe, se).map_err(|e| format!("{path} entry {i}: {e}"))?;
    }
    match (f.children(), s.children()) {
        (None, None) => Ok(()),
        (Some(fc), Some(sc)) => same_doc(fc, sc, path),
        (fc, sc) => Err(format!(
            "{path}: children {} != {}",
            fc.is_some(),
            sc.is_some()
        )),
    }
}

fn same_entry(f: &KdlEntry, s: &KdlEntry) -> Result<(), String> {
    let fname = f.name().map(|n| n.value());
    let sname = s.name().map(|n| n.value());
    if fname != sname {
        return Err(format!("name {fname:?} != {sname:?}"));
    }
    // Not read by gpuplan, but cheap to keep exact too.
    let (fspan, sspan) = (f.name().map(|n| n.span()), s.name().map(|n| n.span()));
    if fspan != sspan {
        return Err(format!("key span {fspan:?} != {sspan:?}"));
    }
    if !same_value(f.value(), s.value()) {
        return Err(format!("value {:?} != {:?}", f.value(), s.value()));
    }
    if f.span() != s.span() {
        return Err(format!("span {:?} != {:?}", f.span(), s.span()));
    }
    Ok(())
}

fn same_value(f: &KdlValue, s: &KdlValue) -> bool {
    match (f, s) {
        (KdlValue::Float(a), KdlValue::Float(b)) => a.to_bits() == b.to_bits(),
        (KdlValue::String(a), KdlValue::String(b)) => a == b,
        (KdlValue::Integer(a), KdlValue::Integer(b)) => a == b,
        (KdlValue::Bool(a), KdlValue::Bool(b)) => a == b,
        (KdlValue::Null, KdlValue::Null) => true,
        _ => false,
    }
}

/// The correctness rule for one input. `Ok(true)` if the fast path took it.
pub fn check(text: &str) -> Result<bool, String> {
    let slow = KdlDocument::parse(text);
    match (super::super::parse(text), slow) {
        (None, _) => Ok(false),
        (Some(_), Err(e)) => Err(format!(
            "fast accepted text kdl-rs rejects: {:?}",
            e.diagnostics.first().and_then(|d| d.message.clone())
        )),
        (Some(f), Ok(s)) => same_doc(&f, &s, "").map(|()| true),
    }
}

/// Reads every `*.kdl` file in `dir` (sorted), as (name, text).
pub fn read_dir(dir: &str) -> Vec<(String, String)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "kdl"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| (p.display().to_string(), std::fs::read_to_string(p).unwrap()))
        .collect()
}
}

mod cases {
//! Hand-written edge cases: each must satisfy the correctness rule, and the ones
//! in `SUPPORTED` must also take the fast path.
use super::common;

const SUPPORTED: &[&str] = &[
    "",
    "\n\n  ",
    "foo",
    "foo bar  \n",
    "  a 1 /* c */ k = \"v\" // x\nb;c;",
    "a { b 1}",
    "a {  }",
    "a {\n  b\n  c ;  \n}\n",
    "a 1e5 1E5 +1.5 1_000.5_ 1.5_e3 0e5 -0 -12",
    "a\r\nb\rc\r\n",
    "a it's k=spot",
    "a #true #false #null k=#null",
    "\"quoted name\" \"x\"=1",
    "a \"esc \\n\\r\\t\\\\\\\"\\b\\f\\s \\u{1F600} \\u{0}\"",
    "a \"ünï\tcode\"",
    "a /* x /* nested */ y */ b",
    "a 1//c",
    "a 1/* c */2",
    "a // end",
    "a;",
    "a {\n}\n",
    "a { b { c { d 1; }; }; }",
    "a k =  1 \"q\" = 2",
    "node-role \"x\"; ami \"al2023@v20251023\"",
    "a 1.0 2.5e3 -3.25E-2",
    "/* lead */ a\n// c\n\nb",
    "a \"\"",
    "\"\" 1",
    "a \"\\u{10FFFF}\" \"\\u{fffd}\"",
    "a b*c x!y <z> a:b a.b a-b a_b a@b",
];

const REJECTED_OR_BAIL: &[&str] = &[
    "a;;b",
    "a; ;",
    "a{}",
    "a \"x\"{}",
    "-inf",
    "a -inf",
    "a 1.e5",
    "a #true=1",
    "a k\n=v",
    "a 1abc",
    "a true",
    "a k=null",
    "a /- b",
    "a \\\n b",
    "(t)a",
    "a (t)1",
    "a 0x10 0o7 0b1",
    "a #inf #-inf #nan",
    "\u{feff}a",
    "a #\"raw\"#",
    "a \"\"\"\nx\n\"\"\"",
    "a \"x\\\n y\"",
    "a b=",
    "a =1",
    "a }",
    "}",
    "a {",
    "a \"unterminated",
    "a /* open",
    "a \"bad\u{7}\"",
    "a 1_000_000_000_000_000_000_000_000_000_000_000_000_000",
    "ä",
    "a\u{a0}b",
    "a\u{2028}b",
    "a // c\u{85}b",
    "a \u{3000}",
    "a .5",
    "a +x",
    "a k=v=w",
    "a\u{b}b",
    "a \"\\u{D800}\"",
    "a \"\\u{110000}\"",
    "a \"\\u{1234567}\"",
    "a \"\u{7f}\"",
    "a \"\\x\"",
    "a \"\u{202a}\"",
    // `raw` blocks (multi-line raw strings) and `kubelet` signals (dotted property keys): the fast path may bail,
    // and whatever it accepts must equal kdl-rs's document.
    "raw \"NodePool\" #\"\"\"\n    spec:\n      x: 1\n    \"\"\"#",
    "raw \"NodePool\" #\"spec: {x: \"y\"}\"#",
    "eviction-hard memory.available=\"5%\" nodefs.available=\"10%\"",
];

#[test]
fn supported_cases_take_fast_path() {
    for text in SUPPORTED {
        match common::check(text) {
            Ok(true) => {}
            Ok(false) => panic!("{text:?}: fast path bailed"),
            Err(e) => panic!("{text:?}: {e}"),
        }
    }
}

#[test]
fn other_cases_obey_the_rule() {
    for text in REJECTED_OR_BAIL {
        if let Err(e) = common::check(text) {
            panic!("{text:?}: {e}");
        }
    }
}
}

mod generated {
//! Property tests: random documents from the supported grammar (with random
//! formatting), random mutations of them, and random token soup. For every input:
//! if the fast path returns `Some`, kdl-rs must accept it and the documents must
//! match; if kdl-rs rejects it, the fast path must return `None`.
//! Case count: PROPTEST_CASES (default 256 per test here; run with e.g. 20000).
use super::common;

use proptest::prelude::*;

/// Tiny deterministic generator driven by a proptest seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const IDENT_START: &[&str] = &[
    "a",
    "b",
    "z",
    "pool",
    "gpu",
    "node-role",
    "_",
    "x",
    "T",
    "*",
    "!",
    "?",
    "$",
    "'",
    "<",
    "~",
    "é",
    "k",
    "m",
    "n",
];
const IDENT_REST: &[&str] = &[
    "a", "1", "-", "_", ".", ":", "@", "+", "e", "0", "'", ",", "|", "^", "%", "&", ">", "`",
];
const STRING_PARTS: &[&str] = &[
    "a",
    "Z",
    " ",
    "1",
    "\\n",
    "\\r",
    "\\t",
    "\\\\",
    "\\\"",
    "\\b",
    "\\f",
    "\\s",
    "\\u{41}",
    "\\u{1F600}",
    "\\u{0}",
    "ü",
    "日本",
    "\t",
    "{",
    "}",
    ";",
    "=",
    "#",
    "/",
    "//",
    "/*",
    "'",
    "%",
    "\\u{10FFFF}",
];
const SPACE: &[&str] = &[
    " ",
    "  ",
    "\t",
    " /* c */ ",
    "/*c*/",
    " /* a /* nested */ b */ ",
    " \t ",
];
const TERMINATOR: &[&str] = &[
    "\n",
    ";",
    "\r\n",
    "\r",
    " ;\n",
    " // comment\n",
    "\n\n",
    ";\n",
    "\n   \n",
    "// x\r\n",
    "\n/* c */\n",
];
const LEADING: &[&str] = &[
    "",
    "",
    "\n",
    "  ",
    "// head\n",
    "/* c */ ",
    "\r\n\r\n",
    "\t/* x\n y */\n",
];
const EQUALS: &[&str] = &["=", "=", " = ", "= ", " =", "/*x*/=/*y*/"];

fn ident(r: &mut Rng) -> String {
    let mut s = r.pick(IDENT_START).to_string();
    for _ in 0..r.below(6) {
        s.push_str(r.pick(IDENT_REST));
    }
    s
}

fn quoted(r: &mut Rng) -> String {
    let mut s = String::from("\"");
    for _ in 0..r.below(6) {
        s.push_str(r.pick(STRING_PARTS));
    }
    s + "\""
}

fn digits(r: &mut Rng) -> String {
    let mut s = r.below(10).to_string();
    let len = if r.chance(3) {
        30 + r.below(20)
    } else {
        r.below(5)
    };
    for _ in 0..len {
        s.push_str(r.pick(&["0", "1", "5", "9", "_", "3"]));
    }
    s
}

fn number(r: &mut Rng) -> String {
    let sign = r.pick(&["", "", "-", "+"]);
    let mut s = format!("{sign}{}", digits(r));
    if r.chance(40) {
        s = format!("{s}.{}", digits(r));
    }
    if r.chance(25) {
        s = format!(
            "{s}{}{}{}",
            r.pick(&["e", "E"]),
            r.pick(&["", "-", "+"]),
            digits(r)
        );
    }
    s
}

fn value(r: &mut Rng) -> String {
    match r.below(6) {
        0 | 1 => quoted(r),
        2 | 3 => number(r),
        4 => r.pick(&["#true", "#false", "#null"]).to_string(),
        _ => ident(r),
    }
}

fn name(r: &mut Rng) -> String {
    if r.chance(15) { quoted(r) } else { ident(r) }
}

fn node(r: &mut Rng, depth: usize) -> String {
    let mut s = name(r);
    for _ in 0..r.below(5) {
        s.push_str(r.pick(SPACE));
        if r.chance(40) {
            s = format!("{s}{}{}{}", name(r), r.pick(EQUALS), value(r));
        } else {
            s.push_str(&value(r));
        }
    }
    if depth < 3 && r.chance(35) {
        s.push_str(r.pick(SPACE));
        s.push('{');
        s.push_str(&nodes(r, depth + 1));
        s.push('}');
    }
    if r.chance(30) {
        s.push_str(r.pick(SPACE));
    }
    s
}

fn nodes(r: &mut Rng, depth: usize) -> String {
    let mut s = r.pick(LEADING).to_string();
    let count = r.below(if depth == 0 { 6 } else { 4 });
    for i in 0..count {
        s.push_str(&node(r, depth));
        if i + 1 < count || r.chance(60) {
            s.push_str(r.pick(TERMINATOR));
        }
    }
    s
}

const INSERTS: &[&str] = &[
    "\"", "{", "}", ";", "=", "#", "/", "\\", "\n", "\r", " ", "-", "/-", "(t)", "(", ")", ".",
    "e", "0", "_", "*", "\u{a0}", "\u{85}", "\u{2028}", "#\"", "\"\"\"", "\t", "'", "+", "true",
    "inf", "nan", "\u{feff}", "\u{7f}", "é", "\u{b}", "\u{c}", "\u{0}", "\u{200e}", "0x1", "#inf",
    "#-inf", "//", "/*", "*/", "\\\n", "[", "]", "\\u{", "\\s",
];

fn mutate(r: &mut Rng, text: &str) -> String {
    let mut s = text.to_string();
    for _ in 0..1 + r.below(3) {
        let mut at = r.below(s.len() + 1);
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        if r.chance(50) && at < s.len() {
            s.remove(at);
        } else {
            s.insert_str(at, r.pick(INSERTS));
        }
    }
    s
}

const SOUP: &[&str] = &[
    "a", "node", " ", " ", "\n", ";", "{", "}", "=", "\"s\"", "\"", "1", "-1", "1.5", "1e3",
    "#true", "#null", "#x", "//c\n", "/*c*/", "/*", "*/", "/-", "\\", "(t)", "k=v", "\r\n", "\r",
    "\t", "\"\\n\"", "é", "\u{a0}", "x.y", "-", "+", ".", "0x", "true", "\"\"\"", "#\"r\"#", "_",
    "1_0", "e", "'",
];

fn soup(r: &mut Rng) -> String {
    (0..r.below(24)).map(|_| r.pick(SOUP)).collect()
}

fn assert_rule(text: &str) -> bool {
    match common::check(text) {
        Ok(fast) => fast,
        Err(e) => panic!("input {text:?}: {e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn generated_documents(seed in 1u64..) {
        let text = nodes(&mut Rng(seed), 0);
        assert_rule(&text);
    }

    #[test]
    fn mutated_documents(seed in 1u64..) {
        let mut r = Rng(seed);
        let text = nodes(&mut r, 0);
        assert_rule(&mutate(&mut r, &text));
    }

    #[test]
    fn token_soup(seed in 1u64..) {
        assert_rule(&soup(&mut Rng(seed)));
    }

    #[test]
    fn mutated_real_profiles(seed in 1u64..) {
        let files = common::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/profiles"));
        let mut r = Rng(seed);
        let (_, text) = &files[r.below(files.len())];
        assert_rule(&mutate(&mut r, text));
    }
}

/// The generators exercise the fast path, not only the fallback: most generated documents (built from the
/// supported grammar) take it, and some of the mutated ones do. The rates print with --nocapture.
#[test]
fn fast_path_rates() {
    type Generator = fn(&mut Rng) -> String;
    let gens: [(&str, Generator); 3] = [
        ("generated", |r| nodes(r, 0)),
        ("mutated", |r| {
            let t = nodes(r, 0);
            mutate(r, &t)
        }),
        ("soup", soup),
    ];
    for (label, generate) in gens {
        let (mut fast, mut valid, n) = (0, 0, 2000);
        for seed in 1..=n {
            let text = generate(&mut Rng(seed * 0x9E37_79B9));
            valid += usize::from(kdl::KdlDocument::parse(&text).is_ok());
            fast += usize::from(assert_rule(&text));
        }
        eprintln!("{label}: {n} inputs, {valid} valid for kdl-rs, {fast} via fast path");
        match label {
            "generated" => assert!(fast * 10 >= n as usize * 6, "{label}: only {fast} of {n} took the fast path"),
            _ => assert!(fast > 0, "{label}: none took the fast path"),
        }
    }
}
}

mod corpus {
//! Every profile in the repository (the examples and the test fixtures) takes the fast path and matches kdl-rs.
use super::common;

#[test]
fn every_repository_profile_takes_the_fast_path_and_matches_kdl_rs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["profiles", "tests/fixtures/adopt/ops", "tests/fixtures/simulate"] {
        if root.join(dir).is_dir() {
            files.extend(common::read_dir(root.join(dir).to_str().unwrap()));
        }
    }
    assert!(files.len() >= 7, "found {} profiles", files.len());
    for (path, text) in &files {
        match common::check(text) {
            Ok(true) => {}
            Ok(false) => panic!("{path}: the fast path bailed on a repository profile"),
            Err(e) => panic!("{path}: {e}"),
        }
    }
}
}
