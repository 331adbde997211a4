//! A fast path for writing the canonical YAML of a generated object.
//!
//! Every generated file goes through [`super::to_yaml`], which serialized with serde-saphyr 2.1 (default
//! options, but `folded_wrap_chars = usize::MAX / 2`): 15% of the instructions of a 1,000-profile compile,
//! most of them in serde's per-node dispatch, formatted writes and the quoting checks. A `serde_json::Value`
//! needs only a small part of that serializer: block mappings (keys sorted by the BTreeMap), block
//! sequences, `{}`/`[]`, plain and double-quoted scalars, literal block scalars (`|`) for multi-line strings,
//! integers and floats.
//!
//! [`emit`] writes exactly that subset, following serde-saphyr's decisions (each function names the one it
//! follows, in `serde-saphyr-2.1.1/src/ser/`), and returns `None` wherever the rule is not reproduced here:
//! strings that look like YAML 1.1 timestamps (`2026-01-01…`) or base-60 numbers (`1:30`), characters that
//! would need a `\x`/`\u`/`\N`/`\L`/`\P` escape beyond ASCII, keys longer than 1024 bytes (serde-saphyr writes
//! them as `? key`), floats outside the range and precision where Rust's shortest formatting is certainly
//! zmij's, and nesting deeper than 64. The caller then asks serde-saphyr. Whenever it returns `Some(text)`,
//! `text` is byte for byte what `to_yaml` writes through serde-saphyr (debug builds check every call).
//!
//! Layout with `indent_step` 2 and `compact_list_indent` (serializer.rs `serialize_map`/`serialize_seq`,
//! serializer/compound.rs `MapSer`/`SeqSer`): a mapping's entries sit at one column, each `key:` followed by
//! ` scalar`, ` {}`/` []`, or a line break and the nested mapping two columns deeper or the nested
//! sequence's dashes at the key's own column. After a `- ` the first entry of a mapping, or the first item of
//! a sequence, stays on the dash's line and the rest align two columns past the dash. A literal block's body
//! is indented two columns past its parent (the key, the dash, or column 0 at the top).

use serde_json::{Map, Number, Value};

/// Nesting deeper than this goes to serde-saphyr (which recurses as deep as the value).
const MAX_DEPTH: usize = 64;
/// compound.rs `SIMPLE_KEY_MAX_LEN`: longer keys are written as `? key`, which this path does not write.
const MAX_KEY_LEN: usize = 1024;

/// The canonical YAML of `value` (ending in a newline), or `None` for "ask serde-saphyr".
pub fn emit(value: &Value) -> Option<String> {
    let mut e = Emitter {
        out: String::with_capacity(1024),
        depth: 0,
    };
    e.node(value, Place::Top, 0)?;
    Some(e.out)
}

/// Where a node starts: what is already on its line decides how it continues.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// The document's root, at the start of a line.
    Top,
    /// After `key:` (nothing written after the colon yet).
    Value,
    /// After `- `.
    Item,
}

struct Emitter {
    out: String,
    depth: usize,
}

impl Emitter {
    /// One node at `place`; `col` is the column of its parent's key or dash (0 at the top).
    fn node(&mut self, value: &Value, place: Place, col: usize) -> Option<()> {
        match value {
            Value::Object(map) if !map.is_empty() => self.nest(|e| e.map_node(map, place, col)),
            Value::Array(items) if !items.is_empty() => {
                self.nest(|e| e.seq_node(items, place, col))
            }
            Value::String(s) => self.string(s, place, col),
            _ => {
                self.space_after_colon(place);
                match value {
                    Value::Null => self.out.push_str("null"),
                    Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
                    Value::Number(n) => push_number(&mut self.out, n)?,
                    // Empty collections (empty_as_braces, the default): `{}` and `[]` on the node's line.
                    Value::Object(_) => self.out.push_str("{}"),
                    _ => self.out.push_str("[]"),
                }
                self.out.push('\n');
                Some(())
            }
        }
    }

    fn nest(&mut self, f: impl FnOnce(&mut Self) -> Option<()>) -> Option<()> {
        self.depth += 1;
        let done = if self.depth > MAX_DEPTH {
            None
        } else {
            f(self)
        };
        self.depth -= 1;
        done
    }

    /// serializer.rs `write_space_if_pending`: a scalar after `key:` is separated by one space.
    fn space_after_colon(&mut self, place: Place) {
        if place == Place::Value {
            self.out.push(' ');
        }
    }

    /// A non-empty mapping. As a value it starts on the next line, two columns deeper than its key
    /// (`serialize_map`: `depth_next = base + 1`); after a dash its first key stays on the dash's line and the
    /// others align two columns past the dash (`MapSer::write_simple_key`, `align_after_dash`).
    fn map_node(&mut self, map: &Map<String, Value>, place: Place, col: usize) -> Option<()> {
        match place {
            Place::Top => self.entries(map, 0, false),
            Place::Value => {
                self.out.push('\n');
                self.entries(map, col + 2, false)
            }
            Place::Item => self.entries(map, col + 2, true),
        }
    }

    /// A non-empty sequence. As a value its dashes go at the key's own column on the next lines
    /// (`serialize_seq` with `compact_list_indent`); after a dash the first item stays on that line (`- - x`)
    /// and the others align two columns past it.
    fn seq_node(&mut self, items: &[Value], place: Place, col: usize) -> Option<()> {
        match place {
            Place::Top => self.items(items, 0, false),
            Place::Value => {
                self.out.push('\n');
                self.items(items, col, false)
            }
            Place::Item => self.items(items, col + 2, true),
        }
    }

    /// `key: value` lines at column `col`; the first one continues the current line when `inline_first`.
    fn entries(&mut self, map: &Map<String, Value>, col: usize, inline_first: bool) -> Option<()> {
        for (i, (key, value)) in map.iter().enumerate() {
            if i > 0 || !inline_first {
                pad(&mut self.out, col);
            }
            push_key(&mut self.out, key)?;
            self.out.push(':');
            self.node(value, Place::Value, col)?;
        }
        Some(())
    }

    /// `- item` lines at column `col`; the first one continues the current line when `inline_first`.
    fn items(&mut self, items: &[Value], col: usize, inline_first: bool) -> Option<()> {
        for (i, item) in items.iter().enumerate() {
            if i > 0 || !inline_first {
                pad(&mut self.out, col);
            }
            self.out.push_str("- ");
            self.node(item, Place::Item, col)?;
        }
        Some(())
    }

    /// serializer.rs `serialize_str` in block context: a multi-line string that a block scalar can hold
    /// becomes a literal block; others are plain when `is_plain_value_safe`, else double-quoted. (Automatic
    /// folding never applies: `folded_wrap_chars` is `usize::MAX / 2`.)
    fn string(&mut self, s: &str, place: Place, col: usize) -> Option<()> {
        let chars = scan(s)?;
        self.space_after_colon(place);
        if chars.newline && !chars.block_unsafe {
            // is_block_scalar_content_safe && is_auto_block_scalar_readable (non-empty: it has a newline).
            literal_block(&mut self.out, s, col + 2);
            return Some(());
        }
        if let [c @ (b'.' | b'#' | b'-')] = s.as_bytes() {
            // `serialize_str`'s special case: these one-character strings are single-quoted.
            self.out.extend(['\'', char::from(*c), '\'']);
        } else if is_plain_value(s, &chars)? {
            self.out.push_str(s);
        } else {
            push_double_quoted(&mut self.out, s);
        }
        self.out.push('\n');
        Some(())
    }
}

fn pad(out: &mut String, mut col: usize) {
    const SPACES: &str = "                                                                ";
    while col > 0 {
        let n = col.min(SPACES.len());
        out.push_str(&SPACES[..n]);
        col -= n;
    }
}

/// serializer.rs `serialize_str`, `StrStyle::Literal`: header `|`, then `2` (the indentation indicator) when
/// the first non-empty line starts with a space, then the chomping indicator (`-` without a final newline,
/// none for exactly one, `+` for more or for nothing but newlines); each line at `body_col` (empty lines
/// stay empty) and one empty line per extra final newline.
fn literal_block(out: &mut String, s: &str, body_col: usize) {
    let content = s.trim_end_matches('\n');
    let trailing = s.len() - content.len();
    out.push('|');
    // wrapping.rs `first_line_leading_spaces`: spaces only, on the first line that is not empty.
    if content
        .split('\n')
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with(' '))
    {
        out.push('2');
    }
    match trailing {
        0 => out.push('-'),
        1 if !content.is_empty() => {}
        _ => out.push('+'),
    }
    out.push('\n');
    if content.is_empty() {
        pad_newlines(out, trailing);
        return;
    }
    for line in content.split('\n') {
        if !line.is_empty() {
            pad(out, body_col);
            out.push_str(line);
        }
        out.push('\n');
    }
    pad_newlines(out, trailing.saturating_sub(1));
}

fn pad_newlines(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n('\n', n));
}

/// What the quoting rules ask of a string's characters.
struct Chars {
    newline: bool,
    /// quoting.rs `is_controll_which_needs_escaping` for some character (here always an ASCII control).
    control: bool,
    /// Not allowed in a block scalar (quoting.rs `is_block_scalar_content_safe`): a control other than tab
    /// and newline.
    block_unsafe: bool,
    colon: bool,
    /// `,` `[` `]` `{` `}`: structural in flow context, where keys must also be safe.
    flow_indicator: bool,
    /// quoting.rs `has_comment_start`: a `#` right after a (Unicode) white-space character.
    comment: bool,
}

// Byte classes for [`scan`] and [`plain_start_and_edges`].
const NEWLINE: u8 = 1;
const CONTROL: u8 = 2;
const BLOCK_UNSAFE: u8 = 4;
const COLON: u8 = 8;
const FLOW: u8 = 16;
const HASH: u8 = 32;
const NON_ASCII: u8 = 64;
/// Cannot start a plain scalar (`-` and `?` only before white space).
const INDICATOR: u8 = 128;

static CLASS: [u8; 256] = {
    let mut class = [0; 256];
    let mut b = 0;
    while b < 256 {
        class[b] = match b as u8 {
            b'\n' => NEWLINE | CONTROL,
            b'\t' => CONTROL,
            // The other C0 controls, and DEL.
            0..=0x1f | 0x7f => CONTROL | BLOCK_UNSAFE,
            b':' => COLON | INDICATOR,
            b',' | b'[' | b']' | b'{' | b'}' => FLOW | INDICATOR,
            b'#' => HASH | INDICATOR,
            b'&' | b'*' | b'!' | b'|' | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' => INDICATOR,
            0x80.. => NON_ASCII,
            _ => 0,
        };
        b += 1;
    }
    class
};

/// The characters of `s`, or `None` when one would need a non-ASCII escape (C1 controls, NEL, BOM, the
/// line and paragraph separators, U+FFFE, U+FFFF: `is_controll_which_needs_escaping` beyond ASCII).
/// One pass over the bytes; the rare `#` and non-ASCII strings get a second look.
fn scan(s: &str) -> Option<Chars> {
    let classes = s.bytes().fold(0, |seen, b| seen | CLASS[usize::from(b)]);
    if classes & NON_ASCII != 0 && s.chars().any(|c| !c.is_ascii() && needs_escape(c)) {
        return None;
    }
    let has = |class: u8| classes & class != 0;
    Some(Chars {
        newline: has(NEWLINE),
        control: has(CONTROL),
        block_unsafe: has(BLOCK_UNSAFE),
        colon: has(COLON),
        flow_indicator: has(FLOW),
        comment: has(HASH) && has_comment_start(s),
    })
}

/// quoting.rs `has_comment_start`.
fn has_comment_start(s: &str) -> bool {
    s.match_indices('#')
        .any(|(i, _)| s[..i].chars().next_back().is_some_and(char::is_whitespace))
}

/// quoting.rs `is_controll_which_needs_escaping`.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{FEFF}' | '\u{2028}' | '\u{2029}' | '\u{FFFE}' | '\u{FFFF}'
        )
}

/// quoting.rs `is_plain_value_safe(s, yaml_12 = false, in_flow = false)`. Ambiguity is asked last, so that
/// only strings that would otherwise be plain can be `None` (undecided).
fn is_plain_value(s: &str, chars: &Chars) -> Option<bool> {
    // A colon is fine unless a space follows it or it ends the scalar.
    let bad_colon = chars.colon && (s.contains(": ") || s.trim().ends_with(':'));
    if chars.control || chars.comment || bad_colon || !plain_start_and_edges(s) {
        return Some(false);
    }
    Some(!is_ambiguous(s, false)?)
}

/// helpers.rs `KeyScalarSink::serialize_str`: a key is plain when both `is_plain_safe` (YAML 1.2 ambiguity,
/// no `:` at all) and `is_plain_value_safe(yaml_12 = false, in_flow = true)` (YAML 1.1 ambiguity, no flow
/// indicators) allow it; otherwise double-quoted.
#[expect(clippy::nonminimal_bool, reason = "each line is one of the two checks the doc comment names; De Morgan's form hides them")]
fn push_key(out: &mut String, key: &str) -> Option<()> {
    let chars = scan(key)?;
    let plain = !(chars.colon || chars.control || chars.flow_indicator || chars.comment)
        && plain_start_and_edges(key)
        && !is_ambiguous(key, true)?
        && !is_ambiguous(key, false)?;
    let start = out.len();
    if plain {
        out.push_str(key);
    } else {
        push_double_quoted(out, key);
    }
    // compound.rs `is_simple_key_text` (bytes bound characters from above, so this is conservative).
    (out.len() - start <= MAX_KEY_LEN).then_some(())
}

/// The checks `is_plain_safe` and `is_plain_value_safe` share after ambiguity: no document marker, no
/// white space at either end, and no indicator at the start (`-`/`?` alone or before white space).
fn plain_start_and_edges(s: &str) -> bool {
    let bytes = s.as_bytes();
    let marker = s.strip_prefix("---").or_else(|| s.strip_prefix("..."));
    if marker.is_some_and(|rest| rest.bytes().next().is_none_or(|b| b.is_ascii_whitespace())) {
        return false; // starts_with_document_marker
    }
    if bytes.first().is_some_and(u8::is_ascii_whitespace)
        || bytes.last().is_some_and(u8::is_ascii_whitespace)
    {
        return false;
    }
    let indicator = match bytes {
        [b'-' | b'?'] => true,
        [b'-' | b'?', next, ..] => next.is_ascii_whitespace(),
        [first, ..] => CLASS[usize::from(*first)] & INDICATOR != 0,
        [] => false,
    };
    !indicator
}

/// quoting.rs `is_ambiguous`: whether a reader could resolve the plain scalar as something else than this
/// string. `None` (ask serde-saphyr) for what might be a YAML 1.1 timestamp (four digits and a dash) or a
/// base-60 number (a digit first and a colon), whose rules are not reproduced here.
fn is_ambiguous(s: &str, yaml_12: bool) -> Option<bool> {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return Some(true);
    };
    // Most strings start with a letter that starts none of `is_word`'s words (the longest has five
    // letters), and no number, timestamp, `~`, `<<` or `=` starts with a letter.
    let word_start = matches!(
        first.to_ascii_lowercase(),
        b'n' | b't' | b'f' | b'i' | b'y' | b'o'
    );
    if first.is_ascii_alphabetic() && (b.len() > 5 || !word_start) {
        return Some(false);
    }
    if b.len() >= 5 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' {
        return None; // is_yaml11_timestamp
    }
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    if unsigned.starts_with(|c: char| c.is_ascii_digit()) && s.contains(':') {
        return None; // is_yaml11_sexagesimal
    }
    Some(
        s == "~"
            || is_word(s, yaml_12)
            || is_numeric(s, yaml_12)
            || (!yaml_12 && matches!(s, "<<" | "=")),
    )
}

/// `is_ambiguous`'s words, in any case: null, booleans, undotted infinities and NaN, and (YAML 1.1,
/// parse_scalars.rs `parse_yaml11_bool`) `y`/`yes`/`on` and `n`/`no`/`off`. (`parse_yaml11_bool` trims
/// white space first, which only matters for strings quoted for their white space anyway.)
fn is_word(s: &str, yaml_12: bool) -> bool {
    const WORDS: [&str; 7] = ["null", "true", "false", "nan", "inf", "+inf", "-inf"];
    // The YAML 1.1 booleans are the ones the reader of rendered YAML resolves: one table for both directions.
    WORDS.iter().any(|w| s.eq_ignore_ascii_case(w)) || (!yaml_12 && super::fast_yaml::yaml11_bool(s).is_some())
}

/// quoting.rs `is_numeric`, with its base-60 branch left to the caller (see [`is_ambiguous`]).
fn is_numeric(s: &str, yaml_12: bool) -> bool {
    if !matches!(
        s.as_bytes().first(),
        Some(b'0'..=b'9' | b'+' | b'-' | b'.' | b'_')
    ) {
        return false;
    }
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    if unsigned.eq_ignore_ascii_case(".inf") || unsigned.eq_ignore_ascii_case(".nan") {
        return true;
    }
    // YAML 1.1 radix forms accept any run of digits and underscores.
    if !yaml_12
        && radix_digits(unsigned).is_some_and(|(radix, digits)| is_digit_run(digits, radix, false))
    {
        return true;
    }
    // YAML 1.1 readers drop underscores before resolving.
    let normalized;
    let s = if !yaml_12 && s.contains('_') {
        normalized = s.replace('_', "");
        normalized.as_str()
    } else {
        s
    };
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    if let Some((radix, digits)) = radix_digits(unsigned) {
        // Go YAML's fallback accepts a sign after an unsigned lowercase `0b` or `0o`.
        let digits = if !yaml_12 && (s.starts_with("0b") || s.starts_with("0o")) {
            digits.strip_prefix(['+', '-']).unwrap_or(digits)
        } else {
            digits
        };
        return is_digit_run(digits, radix, true);
    }
    let mantissa = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => {
            if !is_digit_run(
                exponent.strip_prefix(['+', '-']).unwrap_or(exponent),
                10,
                true,
            ) {
                return false;
            }
            mantissa
        }
        None => unsigned,
    };
    match mantissa.split_once('.') {
        Some((whole, _)) if !whole.is_empty() && !is_digit_run(whole, 10, true) => false,
        // YAML 1.1 floats allow an empty integer part and `[0-9.]*` after the dot.
        Some((_, fraction)) if !yaml_12 => {
            fraction.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        }
        Some((whole, "")) => !whole.is_empty(),
        Some((_, fraction)) => is_digit_run(fraction, 10, true),
        None => is_digit_run(mantissa, 10, true),
    }
}

/// quoting.rs `radix_digits`.
fn radix_digits(s: &str) -> Option<(u32, &str)> {
    match s.as_bytes() {
        [b'0', b'b' | b'B', ..] => Some((2, &s[2..])),
        [b'0', b'o' | b'O', ..] => Some((8, &s[2..])),
        [b'0', b'x' | b'X', ..] => Some((16, &s[2..])),
        _ => None,
    }
}

/// quoting.rs `is_digit_run`: non-empty digits of `radix`; underscores anywhere, or (strict) only between
/// two digits.
fn is_digit_run(s: &str, radix: u32, strict_underscores: bool) -> bool {
    let is_digit = |b: u8| b.is_ascii() && char::from(b).is_digit(radix);
    let bytes = s.as_bytes();
    !bytes.is_empty()
        && bytes.iter().enumerate().all(|(i, &b)| {
            is_digit(b)
                || (b == b'_'
                    && (!strict_underscores
                        || (i > 0
                            && is_digit(bytes[i - 1])
                            && bytes.get(i + 1).is_some_and(|&n| is_digit(n)))))
        })
}

/// quoting.rs `escape_double_quoted`, for strings whose only escapes are ASCII ones ([`scan`] sent the rest
/// to serde-saphyr): YAML's named escapes, `\xNN` for the other controls, everything else as is.
fn push_double_quoted(out: &mut String, s: &str) {
    out.push('"');
    let mut plain_from = 0;
    for (i, b) in s.bytes().enumerate() {
        let named = match b {
            b'\\' => "\\\\",
            b'"' => "\\\"",
            0 => "\\0",
            7 => "\\a",
            8 => "\\b",
            b'\t' => "\\t",
            b'\n' => "\\n",
            0x0b => "\\v",
            0x0c => "\\f",
            b'\r' => "\\r",
            0x1b => "\\e",
            0..=0x1f | 0x7f => "",
            _ => continue,
        };
        out.push_str(&s[plain_from..i]);
        plain_from = i + 1;
        if named.is_empty() {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.extend([
                '\\',
                'x',
                char::from(HEX[usize::from(b >> 4)]),
                char::from(HEX[usize::from(b & 15)]),
            ]);
        } else {
            out.push_str(named);
        }
    }
    out.push_str(&s[plain_from..]);
    out.push('"');
}

/// serde_json serializes its numbers as u64, i64 or f64 (serializer.rs `serialize_u64`/`serialize_i64`:
/// `{v}`; `serialize_f64`: zmij_format.rs `write_float_string`).
fn push_number(out: &mut String, n: &Number) -> Option<()> {
    if let Some(u) = n.as_u64() {
        push_u64(out, u);
    } else if let Some(i) = n.as_i64() {
        out.push('-');
        push_u64(out, i.unsigned_abs());
    } else {
        push_f64(out, n.as_f64()?)?;
    }
    Some(())
}

fn push_u64(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[start..].iter().map(|&d| char::from(d)));
}

/// zmij_format.rs `write_float_string` over zmij's shortest round-trip digits: zmij writes fixed notation
/// for decimal exponents -5..=15 (and an exponent otherwise), serde-saphyr adds `.0` to a whole number.
/// Rust's `{}` also writes the shortest round-trip digits, never with an exponent. With at most 15
/// significant digits the shortest decimal is unique (any two such decimals are different doubles), so both
/// write the same digits; within exponents -4..=14 both write them the same way. Other floats: `None`.
fn push_f64(out: &mut String, f: f64) -> Option<()> {
    if f == 0.0 {
        // zmij writes zero as `0.0`, after the sign.
        out.push_str(if f.is_sign_negative() { "-0.0" } else { "0.0" });
        return Some(());
    }
    let text = f.to_string();
    let unsigned = text.strip_prefix('-').unwrap_or(&text);
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits: Vec<u8> = whole.bytes().chain(fraction.bytes()).collect();
    let first = digits.iter().position(|&d| d != b'0')?;
    let last = digits.iter().rposition(|&d| d != b'0')?;
    // The decimal exponent of the first significant digit, from -4 (0.000d) to 14 (15 whole digits).
    let exponent_ok = if whole == "0" {
        first <= 4
    } else {
        whole.len() <= 15
    };
    if last - first >= 15 || !exponent_ok {
        return None;
    }
    out.push_str(&text);
    if fraction.is_empty() {
        out.push_str(".0");
    }
    Some(())
}

#[cfg(test)]
mod tests;
