//! A fast path for reading back the YAML that gpuplan's templates render.
//!
//! Every rendered template is parsed back into a `serde_json::Value`. serde-saphyr does that at about
//! 26 MB/s, which was 24% of a whole compile. The templates only produce a small, regular subset of YAML:
//! block mappings and sequences, one-line plain and double-quoted scalars, JSON written by minijinja's
//! auto-escape (double-quoted strings, flow objects and arrays), literal block scalars and comments.
//!
//! [`parse`] reads exactly that subset and returns `None` for anything else (anchors, tags, single quotes,
//! multi-line or ambiguous plain scalars, folded scalars, several documents, duplicate keys, tabs, ...),
//! and the caller falls back to serde-saphyr, which also writes the error message for malformed YAML.
//! Whenever it returns `Some(v)`, `v` is what `serde_saphyr::from_str::<Value>` returns with its default
//! options (YAML 1.1 booleans, duplicate keys rejected, non-finite floats rejected): plain scalars are
//! resolved only when the rule is certain, and otherwise the whole text goes to serde-saphyr.

use serde_json::{Map, Number, Value};

/// Nesting deeper than this goes to serde-saphyr (its own limit is 64).
const MAX_DEPTH: usize = 32;
/// Every node takes at least two bytes, so this keeps well under serde-saphyr's 250,000-node budget.
const MAX_LEN: usize = 256 * 1024;
/// YAML limits implicit keys to 1024 characters.
const MAX_KEY_LEN: usize = 1000;

/// Parses `text` when it is in the subset; `None` means "ask serde-saphyr".
pub fn parse(text: &str) -> Option<Value> {
    if text.len() > MAX_LEN || !chars_ok(text) {
        return None;
    }
    let mut p = Parser {
        lines: text.lines().map(Line::new).collect(),
        pos: 0,
        depth: 0,
        ends_nl: text.ends_with('\n'),
    };
    p.skip();
    if p.peek()?.raw.strip_prefix("---").is_some_and(|rest| {
        rest.is_empty() || (rest.starts_with(' ') && Line::new(rest).is_blank_or_comment())
    }) {
        p.pos += 1;
        p.skip();
    }
    p.peek()?;
    let root = p.block_node()?;
    p.skip();
    (p.pos == p.lines.len()).then_some(root)
}

/// Only newline and YAML's printable characters; no tabs, CRs, BOMs or Unicode line separators.
fn chars_ok(text: &str) -> bool {
    text.bytes().all(|b| (b >= 0x20 && b != 0x7f) || b == b'\n')
        && (text.is_ascii()
            || text.chars().all(|c| {
                !matches!(
                    c,
                    '\u{80}'
                        ..='\u{9f}'
                            | '\u{2028}'
                            | '\u{2029}'
                            | '\u{feff}'
                            | '\u{fffe}'
                            | '\u{ffff}'
                )
            }))
}

#[derive(Clone, Copy)]
struct Line<'a> {
    raw: &'a str,
    indent: usize,
    /// The line after its indentation: empty for blank lines.
    text: &'a str,
}

impl<'a> Line<'a> {
    fn new(raw: &'a str) -> Self {
        let text = raw.trim_start_matches(' ');
        Line {
            raw,
            indent: raw.len() - text.len(),
            text,
        }
    }

    fn is_blank_or_comment(&self) -> bool {
        self.text.is_empty() || self.text.starts_with('#')
    }
}

/// A block sequence entry: `-` followed by a space or the end of the line.
fn is_dash(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    pos: usize,
    depth: usize,
    ends_nl: bool,
}

impl<'a> Parser<'a> {
    fn skip(&mut self) {
        while self
            .lines
            .get(self.pos)
            .is_some_and(Line::is_blank_or_comment)
        {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<Line<'a>> {
        self.lines.get(self.pos).copied()
    }

    /// A block mapping or sequence starting at the current (non-blank) line.
    fn block_node(&mut self) -> Option<Value> {
        let line = self.peek()?;
        self.nest(|p| {
            if is_dash(line.text) {
                p.seq(line.indent)
            } else {
                p.map(line.indent)
            }
        })
    }

    fn nest(&mut self, f: impl FnOnce(&mut Self) -> Option<Value>) -> Option<Value> {
        self.depth += 1;
        let value = if self.depth > MAX_DEPTH {
            None
        } else {
            f(self)
        };
        self.depth -= 1;
        value
    }

    fn seq(&mut self, n: usize) -> Option<Value> {
        let mut items = Vec::new();
        loop {
            self.skip();
            let Some(line) = self.peek() else { break };
            if line.indent < n || (line.indent == n && !is_dash(line.text)) {
                break;
            }
            if line.indent > n {
                return None;
            }
            let rest = line.text[1..].trim_start_matches(' ');
            let col = n + line.text.len() - rest.len();
            items.push(self.item(rest, col, n)?);
        }
        Some(Value::Array(items))
    }

    /// One sequence entry; `- key: v` and `- - x` become a collection starting at column `col`.
    fn item(&mut self, rest: &'a str, col: usize, n: usize) -> Option<Value> {
        if rest.is_empty() || rest.starts_with('#') {
            self.pos += 1;
            return self.nested(n, false);
        }
        if is_dash(rest) || split_key(rest).is_some() {
            self.lines[self.pos] = Line {
                raw: self.lines[self.pos].raw,
                indent: col,
                text: rest,
            };
            return self.block_node();
        }
        self.pos += 1;
        self.inline_value(rest, n)
    }

    fn map(&mut self, n: usize) -> Option<Value> {
        let mut map = Map::new();
        loop {
            self.skip();
            let Some(line) = self.peek() else { break };
            if line.indent < n || (line.indent == n && is_dash(line.text)) {
                break;
            }
            if line.indent > n {
                return None;
            }
            let (key, rest) = split_key(line.text)?;
            self.pos += 1;
            let value = if rest.is_empty() || rest.starts_with('#') {
                self.nested(n, true)?
            } else if let Some(header) = rest.strip_prefix('|') {
                self.literal(header, n)?
            } else {
                self.inline_value(rest, n)?
            };
            if map.insert(key, value).is_some() {
                return None; // serde-saphyr's default DuplicateKeyPolicy::Error
            }
        }
        Some(Value::Object(map))
    }

    /// The value of an entry whose line ends after `key:` or `-`: a more indented block node (or, for a
    /// mapping, a sequence at the key's own indentation), else null.
    fn nested(&mut self, n: usize, seq_at_same_indent: bool) -> Option<Value> {
        self.skip();
        match self.peek() {
            Some(l) if l.indent > n => self.block_node(),
            Some(l) if seq_at_same_indent && l.indent == n && is_dash(l.text) => {
                self.nest(|p| p.seq(n))
            }
            _ => Some(Value::Null),
        }
    }

    /// A value on the rest of the entry's line. A more indented line after it would continue a plain
    /// scalar (or be an error), so that bails, comments included.
    fn inline_value(&self, text: &str, n: usize) -> Option<Value> {
        if self.lines[self.pos..]
            .iter()
            .find(|l| !l.text.is_empty())
            .is_some_and(|l| l.indent > n)
        {
            return None;
        }
        let (value, used) = match text.as_bytes()[0] {
            b'"' => dq(text).map(|(s, used)| (Value::String(s), used))?,
            b'{' | b'[' => {
                let mut flow = Flow {
                    s: text,
                    i: 0,
                    depth: self.depth,
                };
                (flow.value()?, flow.i)
            }
            _ => return plain(text),
        };
        let after = text[used..].trim_start_matches(' ');
        (after.is_empty() || (after.starts_with('#') && after.len() < text.len() - used))
            .then_some(value)
    }

    /// A literal block scalar (`|`, `|-`, `|+`) after `key:` at indentation `n`; the lines are current.
    fn literal(&mut self, header: &str, n: usize) -> Option<Value> {
        let chomp = header.trim_end_matches(' ');
        if !matches!(chomp, "" | "-" | "+") {
            return None;
        }
        let m = self.lines[self.pos..]
            .iter()
            .find(|l| !l.text.is_empty())?
            .indent;
        if m <= n {
            return None;
        }
        let (mut out, mut seen_text) = (String::new(), false);
        while let Some(l) = self.lines.get(self.pos) {
            if l.text.is_empty() && (l.indent <= m || !seen_text) {
                // An empty line; spaces beyond the indentation are content after the first text line, and an
                // error before it.
                if l.indent > m {
                    return None;
                }
            } else if l.indent < m {
                break;
            } else {
                out.push_str(&l.raw[m..]);
                seen_text = true;
            }
            out.push('\n');
            self.pos += 1;
        }
        if self.pos == self.lines.len() && !self.ends_nl {
            return None;
        }
        let body = out.trim_end_matches('\n');
        Some(Value::String(match chomp {
            "-" => body.to_owned(),
            "+" => out,
            _ if body.is_empty() => String::new(),
            _ => format!("{body}\n"),
        }))
    }
}

/// `key: rest` or `"key": rest`, with `rest` starting after the spaces that follow the colon.
fn split_key(text: &str) -> Option<(String, &str)> {
    let (key, after) = if text.starts_with('"') {
        let (key, used) = dq(text)?;
        (key, &text[used..])
    } else {
        let end = text
            .bytes()
            .position(|b| !(b.is_ascii_alphanumeric() || b"-_./".contains(&b)))?;
        let key = &text[..end];
        if !matches!(resolve(key)?, Value::String(_)) {
            return None;
        }
        (key.to_owned(), &text[end..])
    };
    if key.len() > MAX_KEY_LEN || key == "<<" {
        return None;
    }
    let rest = after.strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    Some((key, rest.trim_start_matches(' ')))
}

/// A one-line plain scalar in block context, up to a ` #` comment.
fn plain(text: &str) -> Option<Value> {
    let t = text
        .find(" #")
        .map_or(text, |i| &text[..i])
        .trim_end_matches(' ');
    if t.contains(": ")
        || t.ends_with(':')
        || t.bytes()
            .any(|b| matches!(b, b'[' | b']' | b'{' | b'}') || !b.is_ascii())
    {
        return None;
    }
    resolve(t)
}

/// serde-saphyr's typeless resolution of a plain scalar, or `None` where it is not certain.
/// Null: `~ null Null NULL`; bool: YAML 1.1 (`y yes true on n no false off`, any case); then integers
/// and floats; anything else that starts like a number goes to serde-saphyr.
fn resolve(t: &str) -> Option<Value> {
    if matches!(t, "~" | "null" | "Null" | "NULL") {
        return Some(Value::Null);
    }
    if let Some(b) = yaml11_bool(t) {
        return Some(Value::Bool(b));
    }
    if let Some(n) = number(t) {
        return Some(Value::Number(n));
    }
    let body = t.strip_prefix(['-', '+']).unwrap_or(t);
    let first = *body.as_bytes().first()?;
    if first.is_ascii_digit() {
        // Could be hex, octal, binary, underscored, exponent or overflowing: not decided here.
        if body
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || b"_xXoObB.+-".contains(&b))
        {
            return None;
        }
    } else if body.len() < t.len() || !(first.is_ascii_alphabetic() || b"/_$(".contains(&first)) {
        return None;
    }
    Some(Value::String(t.to_owned()))
}

/// serde-saphyr's YAML 1.1 booleans (parse_scalars.rs `parse_yaml11_bool`, without its trimming); fast_emit quotes
/// the same words.
pub(super) fn yaml11_bool(t: &str) -> Option<bool> {
    let is = |words: [&str; 4]| words.iter().any(|w| t.eq_ignore_ascii_case(w));
    if is(["true", "yes", "y", "on"]) {
        Some(true)
    } else if is(["false", "no", "n", "off"]) {
        Some(false)
    } else {
        None
    }
}

/// `0`, `[1-9][0-9]*` (u64), `-[1-9][0-9]*` (i64), and those followed by `.[0-9]+` (f64).
fn number(t: &str) -> Option<Number> {
    let negative = t.starts_with('-');
    let unsigned = if negative { &t[1..] } else { t };
    let (int, frac) = match unsigned.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (unsigned, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || (int.len() > 1 && int.starts_with('0')) {
        return None;
    }
    match frac {
        None if negative && int == "0" => None,
        None if negative => t.parse::<i64>().ok().map(Number::from),
        None => t.parse::<u64>().ok().map(Number::from),
        Some(frac) if digits(frac) => Number::from_f64(t.parse().ok()?),
        Some(_) => None,
    }
}

/// A double-quoted scalar on one line with JSON's escapes (all valid YAML ones meaning the same).
/// Returns the string and the bytes used, closing quote included.
fn dq(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    let mut out = String::new();
    let mut start = 1;
    loop {
        let i = start + b[start..].iter().position(|&c| c == b'"' || c == b'\\')?;
        out.push_str(&s[start..i]);
        if b[i] == b'"' {
            return Some((out, i + 1));
        }
        let (c, len) = escape(&b[i + 1..])?;
        out.push(c);
        start = i + 1 + len;
    }
}

fn escape(b: &[u8]) -> Option<(char, usize)> {
    let c = match *b.first()? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let hex = b.get(1..5)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            let code = u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
            return Some((char::from_u32(code)?, 5)); // surrogates bail
        }
        _ => return None,
    };
    Some((c, 1))
}

/// A JSON value in YAML flow style on one line: double-quoted strings, `true false null`, simple numbers.
struct Flow<'a> {
    s: &'a str,
    i: usize,
    depth: usize,
}

impl Flow<'_> {
    fn spaces(&mut self) {
        while self.s.as_bytes().get(self.i) == Some(&b' ') {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.spaces();
        let hit = self.s.as_bytes().get(self.i) == Some(&c);
        self.i += usize::from(hit);
        hit
    }

    fn value(&mut self) -> Option<Value> {
        self.spaces();
        match *self.s.as_bytes().get(self.i)? {
            b'{' => self.nest(Self::object),
            b'[' => self.nest(Self::array),
            b'"' => self.string().map(Value::String),
            _ => {
                let start = self.i;
                while matches!(
                    self.s.as_bytes().get(self.i),
                    Some(b'0'..=b'9' | b'a'..=b'z' | b'-' | b'.')
                ) {
                    self.i += 1;
                }
                match &self.s[start..self.i] {
                    "true" => Some(Value::Bool(true)),
                    "false" => Some(Value::Bool(false)),
                    "null" => Some(Value::Null),
                    t => number(t).map(Value::Number),
                }
            }
        }
    }

    fn string(&mut self) -> Option<String> {
        let (s, used) = dq(&self.s[self.i..])?;
        self.i += used;
        Some(s)
    }

    fn nest(&mut self, f: fn(&mut Self) -> Option<Value>) -> Option<Value> {
        self.depth += 1;
        self.i += 1;
        let value = if self.depth > MAX_DEPTH {
            None
        } else {
            f(self)
        };
        self.depth -= 1;
        value
    }

    fn object(&mut self) -> Option<Value> {
        let mut map = Map::new();
        if self.eat(b'}') {
            return Some(Value::Object(map));
        }
        loop {
            self.spaces();
            if self.s.as_bytes().get(self.i) != Some(&b'"') {
                return None;
            }
            let key = self.string()?;
            if key.len() > MAX_KEY_LEN || key == "<<" || !self.eat(b':') {
                return None;
            }
            let value = self.value()?;
            if map.insert(key, value).is_some() {
                return None;
            }
            if self.eat(b'}') {
                return Some(Value::Object(map));
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    fn array(&mut self) -> Option<Value> {
        let mut items = Vec::new();
        if self.eat(b']') {
            return Some(Value::Array(items));
        }
        loop {
            items.push(self.value()?);
            if self.eat(b']') {
                return Some(Value::Array(items));
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests;
