//! Shell- and template-style placeholders in hand-written manifests (`$CLUSTER_NAME`, `${CLUSTER_NAME}`,
//! `<<CLUSTER_NAME>>`, as published blueprints write them for `envsubst` or a templating step): `--set NAME=value`
//! fills them in the text before it is parsed; any left is reported once per name, at its first place
//! (`file:line:col`), and stops adopt before anything is written (a placeholder adopted as a cluster name or a
//! discovery tag makes profiles that do not compile, or select nothing).
//!
//! Only values adopt reads are searched: `spec.userData` is a shell script, where `$VAR` is the script's own.

use std::collections::BTreeMap;

use serde_json::Value;

/// One placeholder without a value: its name, where it first appears, and how many places use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfilled {
    pub name: String,
    /// `file:line:col` (1-based; the column counts characters).
    pub at: String,
    /// As written there (`$NAME`, `${NAME}` or `<<NAME>>`).
    pub written: String,
    pub places: usize,
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_uppercase() || c == '_'
}

fn is_name(c: char) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'
}

/// The placeholders of a string: `(byte offset, length, name)` of each `${NAME}`, `$NAME` and `<<NAME>>`. Names are
/// upper case, as environment variables are written: `$1` or `$home` are left alone.
pub fn find(text: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        let found = if let Some(inner) = rest.strip_prefix("${") {
            inner.find('}').map(|end| (end + 3, &inner[..end])).filter(|(_, n)| valid(n))
        } else if let Some(inner) = rest.strip_prefix("<<") {
            inner.find(">>").map(|end| (end + 4, &inner[..end])).filter(|(_, n)| valid(n))
        } else if let Some(inner) = rest.strip_prefix('$') {
            let end = inner.find(|c: char| !is_name(c)).unwrap_or(inner.len());
            Some((end + 1, &inner[..end])).filter(|(_, n)| valid(n))
        } else {
            None
        };
        match found {
            Some((len, name)) => {
                out.push((i, len, name.to_string()));
                i += len;
            }
            None => i += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    out
}

fn valid(name: &str) -> bool {
    name.chars().next().is_some_and(is_name_start) && name.chars().all(is_name)
}

/// The text with every placeholder named in `values` replaced by its value.
pub fn fill(text: &str, values: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, len, name) in find(text) {
        if let Some(value) = values.get(&name) {
            out.push_str(&text[last..at]);
            out.push_str(value);
            last = at + len;
        }
    }
    out.push_str(&text[last..]);
    out
}

/// The placeholder names in an object's values, `spec.userData` aside.
pub fn names_in(object: &Value, out: &mut Vec<String>) {
    match object {
        Value::String(s) => out.extend(find(s).into_iter().map(|(_, _, n)| n)),
        Value::Array(a) => a.iter().for_each(|v| names_in(v, out)),
        Value::Object(m) => m.iter().filter(|(k, _)| k.as_str() != "userData").for_each(|(_, v)| names_in(v, out)),
        _ => {}
    }
}

/// The first place `name` appears as a placeholder in `text` (`file:line:col`, as written), and how many places it does.
pub fn locate(file: &str, text: &str, name: &str) -> Unfilled {
    let places: Vec<(usize, usize)> = find(text).into_iter().filter(|(_, _, n)| n == name).map(|(at, len, _)| (at, len)).collect();
    let (at, len) = places.first().copied().unwrap_or((0, 0));
    let line = text[..at].matches('\n').count() + 1;
    let col = text[..at].rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Unfilled { name: name.to_string(), at: format!("{file}:{line}:{col}"), written: text[at..at + len].to_string(), places: places.len() }
}

/// Parses `NAME=value` (`--set`).
pub fn parse_set(arg: &str) -> Result<(String, String), String> {
    let (name, value) = arg.split_once('=').ok_or_else(|| format!("`{arg}` is not NAME=value"))?;
    let name = name.trim_start_matches('$').trim_start_matches('{').trim_end_matches('}');
    if !valid(name) {
        return Err(format!("`{name}` is not a placeholder name (upper case letters, digits and _, as in $CLUSTER_NAME)"));
    }
    Ok((name.to_string(), value.to_string()))
}

/// The error message for placeholders left without a value.
pub fn message(unfilled: &[Unfilled]) -> String {
    let mut out = format!("{} placeholder(s) without a value: fill each with --set NAME=value (nothing was written)", unfilled.len());
    for u in unfilled {
        let more = if u.places > 1 { format!(" (and {} more place{})", u.places - 1, if u.places == 2 { "" } else { "s" }) } else { String::new() };
        out.push_str(&format!("\n  {}: {}{more}", u.at, u.written));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms_are_found_and_shell_lower_case_or_positional_variables_are_not() {
        let names: Vec<String> = find("a $CLUSTER_NAME ${REGION}-x <<ROLE>> $1 $home ${lower} $").into_iter().map(|(_, _, n)| n).collect();
        assert_eq!(names, ["CLUSTER_NAME", "REGION", "ROLE"]);
    }

    #[test]
    fn fill_replaces_only_the_names_given() {
        let values = BTreeMap::from([("A".to_string(), "x".to_string())]);
        assert_eq!(fill("$A-${A}-<<A>>-$B", &values), "x-x-x-$B");
    }

    #[test]
    fn locate_counts_lines_and_characters_from_one() {
        let u = locate("f.yaml", "a: b\nc: é ${X}\nd: $X\n", "X");
        assert_eq!((u.at.as_str(), u.written.as_str(), u.places), ("f.yaml:2:6", "${X}", 2));
    }
}
