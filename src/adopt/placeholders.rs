//! Placeholders in published manifests, of every kind a templating step leaves in them: envsubst and shell (`$NAME`,
//! `${NAME}`), Terraform interpolations in heredocs and `templatefile` (`${module.eks.cluster_name}`,
//! `${var.cluster_name}`, `${join(",", var.azs)}`), Helm actions (`{{ .Values.clusterName }}`,
//! `{{ include "x.fullname" . }}`) and `<<NAME>>`. They are found in the raw text, before it is parsed (an unquoted
//! `{{ .Values.x }}` begins a YAML flow mapping, and the parser's complaint would hide the real reason).
//!
//! `--set NAME=value` fills every place whose name is NAME: the name of a placeholder is what is written between its
//! delimiters with the surrounding spaces trimmed (Helm's `-` trim markers too), so `${module.eks.cluster_name}` is
//! `module.eks.cluster_name` and `{{- .Values.clusterName }}` is `.Values.clusterName`. Any left is reported once
//! per name, at its first place (`file:line:col`, as written, with how many places use it), and stops adopt before
//! anything is written (a placeholder adopted as a cluster name or a discovery tag makes profiles that do not
//! compile, or select nothing).
//!
//! `spec.userData` is a shell script: `$NAME`, `${NAME}` (and `${NAME:-default}`) there are the script's own and are
//! neither reported nor filled. Terraform's `${…}` and Helm's `{{ }}` in it are placeholders all the same: Terraform
//! and Helm render them before the shell ever runs (a script that means its own `${NAME}` in a Terraform heredoc
//! writes `$${NAME}`, which is left alone). Helm control structures (`{{ if }}`, `{{ range }}`, `{{ end }}`, …) and
//! Terraform template directives (`%{ if }`, `%{ for }`) cannot be filled with a value: the template must be
//! rendered first ([`directive_message`]).

use std::collections::BTreeMap;
use std::ops::Range;

/// What delimits a placeholder, and so which tool fills it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `$NAME` or `${NAME}` (envsubst, or a shell variable inside `spec.userData`).
    Env,
    /// `${expression}` that only Terraform writes: a reference (`var.x`, `local.x`, `module.x.y`, …) or a call.
    Terraform,
    /// `{{ expression }}` (Helm, Go templates).
    Helm,
    /// `<<NAME>>`.
    Angle,
    /// `{{ if }}`, `{{ range }}`, `{{ end }}`, `{{/* … */}}`: not a value, cannot be filled.
    HelmControl,
    /// `%{ if }`, `%{ for }`, `%{ endif }`: not a value, cannot be filled.
    TerraformDirective,
}

impl Kind {
    /// Control structures and directives, which a value cannot replace.
    pub fn is_directive(self) -> bool {
        matches!(self, Kind::HelmControl | Kind::TerraformDirective)
    }
}

/// One placeholder in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Byte offset and length of the placeholder as written, delimiters included.
    pub at: usize,
    pub len: usize,
    /// What `--set` names it by: the text between the delimiters, trimmed.
    pub name: String,
    pub kind: Kind,
}

/// One placeholder without a value: its name, where it first appears, and how many places use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfilled {
    pub name: String,
    /// `file:line:col` (1-based; the column counts characters).
    pub at: String,
    /// As written there (`$NAME`, `${var.x}`, `{{ .Values.x }}`, `<<NAME>>`).
    pub written: String,
    pub places: usize,
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `$NAME` without braces counts only in upper case, as environment variables are written: `$1`, `$home` are left alone.
fn is_upper_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase() || c == '_') && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Terraform's references (`var.`, `local.`, `module.`, `data.`, `each.`, `count.`, `path.`, `terraform.`, a resource
/// `aws_x.y.z`) and function calls (`join(…)`): what a shell's `${…}` never is.
fn is_terraform(expr: &str) -> bool {
    let head: String = expr.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    let after = &expr[head.len()..];
    !head.is_empty() && !head.starts_with(|c: char| c.is_ascii_digit()) && (after.starts_with('.') || after.trim_start().starts_with('('))
}

/// The end (exclusive, after the closer) of a `{`-opened expression starting at `from`, skipping nested braces and
/// double-quoted strings; None when it is not closed.
fn closing_brace(text: &str, from: usize) -> Option<usize> {
    let (mut depth, mut quoted, mut escaped) = (1, false, false);
    for (i, c) in text[from..].char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '\u{22}' => quoted = !quoted,
            '\n' if !quoted => return None,
            '{' if !quoted => depth += 1,
            '}' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    return Some(from + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The end (exclusive) of a `{{` action starting at `from`: its `}}` outside strings.
fn closing_action(text: &str, from: usize) -> Option<usize> {
    let (mut quoted, mut escaped) = (None, false);
    let bytes = text.as_bytes();
    for (i, c) in text[from..].char_indices() {
        let at = from + i;
        match (c, quoted) {
            _ if escaped => escaped = false,
            ('\\', Some('\u{22}')) => escaped = true,
            ('\u{22}' | '`', None) => quoted = Some(c),
            (c, Some(q)) if c == q => quoted = None,
            ('}', None) if bytes.get(at + 1) == Some(&b'}') => return Some(at + 2),
            _ => {}
        }
    }
    None
}

const HELM_CONTROL: [&str; 9] = ["if", "else", "end", "range", "with", "define", "block", "break", "continue"];

/// The placeholder starting at byte `i` of `text`, if one does.
fn at(text: &str, i: usize) -> Option<Found> {
    let rest = &text[i..];
    let found = |len: usize, name: &str, kind| Some(Found { at: i, len, name: name.trim().to_string(), kind });
    if rest.starts_with("${") {
        let end = closing_brace(text, i + 2)?;
        let inner = text[i + 2..end - 1].trim();
        let kind = if is_terraform(inner) { Kind::Terraform } else { Kind::Env };
        return if inner.is_empty() { None } else { found(end - i, inner, kind) };
    }
    if rest.starts_with("%{") {
        let end = closing_brace(text, i + 2)?;
        return found(end - i, text[i + 2..end - 1].trim().trim_start_matches('~').trim_end_matches('~'), Kind::TerraformDirective);
    }
    if rest.starts_with("{{") {
        let end = closing_action(text, i + 2)?;
        let inner = text[i + 2..end - 2].trim();
        // Trim markers: `{{- x -}}` (a dash then a space; `{{-3}}` is the number -3).
        let inner = inner.strip_prefix("- ").unwrap_or(inner).trim();
        let inner = inner.strip_suffix(" -").unwrap_or(inner).trim();
        let word = inner.split(|c: char| !c.is_ascii_alphabetic()).next().unwrap_or("");
        let control = inner.starts_with("/*") || HELM_CONTROL.contains(&word) && inner[word.len()..].chars().next().is_none_or(|c| !c.is_ascii_alphanumeric() && c != '.');
        return if inner.is_empty() { None } else { found(end - i, inner, if control { Kind::HelmControl } else { Kind::Helm }) };
    }
    if let Some(inner) = rest.strip_prefix("<<") {
        let end = inner.find(">>")?;
        let name = &inner[..end];
        let ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        return if ok { found(end + 4, name, Kind::Angle) } else { None };
    }
    let inner = rest.strip_prefix('$')?;
    let end = inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(inner.len());
    if is_upper_name(&inner[..end]) { found(end + 1, &inner[..end], Kind::Env) } else { None }
}

/// The byte ranges of `spec.userData` values (block scalars, and plain or quoted ones with their continuation lines):
/// what a shell reads. Found by indentation, so that it works on text that does not parse.
fn shell_ranges(text: &str) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let mut open: Option<(usize, usize)> = None; // (start, key indentation)
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let blank = line.trim().is_empty();
        if let Some((start, key_indent)) = open
            && !blank
            && indent <= key_indent
        {
            ranges.push(start..offset);
            open = None;
        }
        let body = line.trim_start_matches(' ');
        let body = body.strip_prefix("- ").unwrap_or(body);
        if open.is_none()
            && let Some(value) = body.strip_prefix("userData:").or_else(|| body.strip_prefix("\"userData\":"))
        {
            open = Some((offset + line.len() - value.len(), line.len() - line.trim_start_matches([' ', '-']).len()));
        }
        offset += line.len();
    }
    if let Some((start, _)) = open {
        ranges.push(start..text.len());
    }
    ranges
}

/// The placeholders of a text, in order: each `${…}`, `$NAME`, `{{ … }}`, `<<NAME>>`, `%{ … }`, except a shell's own
/// variables inside `spec.userData`. Terraform's escapes `$${` and `%%{` are literal text.
pub fn find(text: &str) -> Vec<Found> {
    let shell = shell_ranges(text);
    let mut out = Vec::new();
    let mut i = 0;
    // Where the last `>>` starts: a `<<` after it has no close, and scanning the rest for one is skipped.
    let last_angle_close = text.rfind(">>");
    while i < text.len() {
        let rest = &text[i..];
        if rest.starts_with("$${") || rest.starts_with("%%{") {
            i += 3;
            continue;
        }
        match at(text, i) {
            Some(f) => {
                i += f.len;
                let shells = matches!(f.kind, Kind::Env | Kind::Angle) && shell.iter().any(|r| r.contains(&f.at));
                if !shells {
                    out.push(f);
                }
            }
            None => i += not_a_placeholder(rest, i, last_angle_close),
        }
    }
    out
}

/// How far [`find`] moves on from byte `i` (`rest` onwards), where no placeholder starts. Past a whole run of `{`
/// when a `{{` there found none: the scan for its `}}` from the run's next brace reads the same text (a brace changes
/// nothing it tracks) and finds none either, so a run of n braces would otherwise scan the rest of the file n times
/// (a fuzzed adopt input of 1,300 braces took a second). Past a run of `<` when no `>>` follows.
fn not_a_placeholder(rest: &str, i: usize, last_angle_close: Option<usize>) -> usize {
    let run = |c: u8| rest.bytes().take_while(|&b| b == c).count();
    if rest.starts_with("{{") {
        return run(b'{');
    }
    if rest.starts_with("<<") && last_angle_close.is_none_or(|last| last < i + 2) {
        return run(b'<');
    }
    rest.chars().next().map_or(1, char::len_utf8)
}

/// The text with every placeholder named in `values` replaced by its value (a directive is never filled).
pub fn fill(text: &str, values: &BTreeMap<String, String>) -> String {
    fill_tracked(text, values).0
}

/// [`fill`], with the byte ranges of the values it inserted: a value is literal text (a block from `--set NAME=@FILE`
/// may hold a script's `$VAR`), so what looks like a placeholder inside it is none.
pub fn fill_tracked(text: &str, values: &BTreeMap<String, String>) -> (String, Vec<Range<usize>>) {
    let mut inserted = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for f in find(text).into_iter().filter(|f| !f.kind.is_directive()) {
        if let Some(value) = values.get(&f.name) {
            out.push_str(&text[last..f.at]);
            // A value of several lines (a YAML block, `--set NAME=@FILE`) continues at the placeholder's column: where
            // a block placeholder written alone on its line (`  ${indent(2, ec2nodeclass)}`) puts it.
            let column = " ".repeat(text[..f.at].rsplit('\n').next().map_or(0, |l| l.chars().count()));
            let start = out.len();
            out.push_str(&value.trim_end_matches('\n').replace('\n', &format!("\n{column}")));
            inserted.push(start..out.len());
            last = f.at + f.len;
        }
    }
    out.push_str(&text[last..]);
    (out, inserted)
}

/// Terraform's conditional directives decided by `--set` values (`%{ if kms_key_id != "" ~}…%{ endif ~}`, the idiom of
/// templates that add an optional field): each `if` whose condition names a set value keeps its branch and drops the
/// other, honouring `~` (strip the whitespace on that side, Terraform's "Strip Markers"). Conditions of the forms
/// `NAME`, `!NAME`, `NAME == "…"`, `NAME != "…"` are decided; any other directive (a `for`, or a condition on an unset
/// name) is left as written, for the render-first error.
pub fn decide_conditionals(text: &str, values: &BTreeMap<String, String>) -> String {
    let directives: Vec<Found> = find(text).into_iter().filter(|f| f.kind == Kind::TerraformDirective).collect();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    // (decided value, in the else branch) for each open `if`; None for one left as written.
    let mut open: Vec<Option<(bool, bool)>> = Vec::new();
    let keeping = |open: &[Option<(bool, bool)>]| open.iter().flatten().all(|(value, in_else)| value != in_else);
    for f in &directives {
        let words: Vec<&str> = f.name.split_whitespace().collect();
        let decided = match words.as_slice() {
            ["if", rest @ ..] => Some(condition(&rest.join(" "), values)),
            ["else"] | ["endif"] => open.last().copied().map(|o| o.map(|(v, _)| v)),
            _ => None,
        };
        let Some(decided) = decided.flatten() else {
            if words.first() == Some(&"if") {
                open.push(None);
            } else if words.first() == Some(&"endif") {
                open.pop();
            }
            continue;
        };
        let written = &text[f.at..f.at + f.len];
        let before = if written.starts_with("%{~") { text[last..f.at].trim_end_matches([' ', '\t', '\n', '\r']) } else { &text[last..f.at] };
        if keeping(&open) {
            out.push_str(before);
        }
        match words[0] {
            "if" => open.push(Some((decided, false))),
            "else" => {
                open.pop();
                open.push(Some((decided, true)));
            }
            _ => {
                open.pop();
            }
        }
        last = f.at + f.len;
        if written.ends_with("~}") {
            last += text[last..].len() - text[last..].trim_start_matches([' ', '\t', '\n', '\r']).len();
        }
    }
    out.push_str(&text[last..]);
    out
}

/// A directive's condition on set values: `NAME`, `!NAME`, `NAME == "v"`, `NAME != "v"`; None otherwise.
fn condition(expression: &str, values: &BTreeMap<String, String>) -> Option<bool> {
    let unquote = |v: &str| v.trim().strip_prefix('"').and_then(|v| v.strip_suffix('"')).map(str::to_string);
    if let Some((name, v)) = expression.split_once("!=") {
        return Some(values.get(name.trim())? != &unquote(v)?);
    }
    if let Some((name, v)) = expression.split_once("==") {
        return Some(values.get(name.trim())? == &unquote(v)?);
    }
    let (negated, name) = expression.strip_prefix('!').map_or((false, expression), |n| (true, n));
    let value = match values.get(name.trim())?.as_str() {
        "true" => true,
        "false" => false,
        _ => return None,
    };
    Some(value != negated)
}

/// 1-based line and column (in characters) of byte `at`.
pub fn position(text: &str, at: usize) -> (usize, usize) {
    let line = text[..at].matches('\n').count() + 1;
    let col = text[..at].rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// The byte ranges of YAML comments (`# …` at a line's start or after a space, outside quotes), `spec.userData`
/// aside (a `#` there is the script's). A placeholder in a comment ("# replace ${CLUSTER_NAME}") is no value to fill;
/// a directive there still is one, since Helm and Terraform render comments like any text.
fn comment_ranges(text: &str) -> Vec<Range<usize>> {
    let shell = shell_ranges(text);
    let mut ranges = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        if shell.iter().any(|r| r.contains(&start)) {
            continue;
        }
        let (mut quoted, mut previous) = (None, ' ');
        for (i, c) in line.char_indices() {
            match (c, quoted) {
                ('\u{27}' | '\u{22}', None) if previous.is_whitespace() || "[{,".contains(previous) => quoted = Some(c),
                (c, Some(q)) if c == q => quoted = None,
                ('#', None) if previous.is_whitespace() => {
                    ranges.push(start + i..start + line.len());
                    break;
                }
                _ => {}
            }
            previous = c;
        }
    }
    ranges
}

/// The placeholders of `text` on the lines `counts` admits, one per name at its first place, with how many places use
/// it; comments aside ([`comment_ranges`]).
pub fn unfilled(file: &str, text: &str, counts: impl Fn(usize, usize) -> bool) -> Vec<Unfilled> {
    let comments = comment_ranges(text);
    let mut by_name: BTreeMap<String, Unfilled> = BTreeMap::new();
    for f in find(text).into_iter().filter(|f| !f.kind.is_directive()) {
        let (line, col) = position(text, f.at);
        if !counts(line, f.at) || comments.iter().any(|r| r.contains(&f.at)) {
            continue;
        }
        by_name.entry(f.name.clone()).and_modify(|u| u.places += 1).or_insert_with(|| Unfilled {
            name: f.name.clone(),
            at: format!("{file}:{line}:{col}"),
            written: text[f.at..f.at + f.len].to_string(),
            places: 1,
        });
    }
    by_name.into_values().collect()
}

/// The first Helm control structure or Terraform directive of `text` on a line `counts` admits, as an error message
/// (`file:line:col`, as written, and how to render the template first); None when there is none.
pub fn directive_message(file: &str, text: &str, counts: impl Fn(usize, usize) -> bool) -> Option<String> {
    let (f, line, col) = find(text).into_iter().filter(|f| f.kind.is_directive()).map(|f| {
        let (line, col) = position(text, f.at);
        (f, line, col)
    }).find(|(f, line, _)| counts(*line, f.at))?;
    let written = crate::input::excerpt(&text[f.at..f.at + f.len]);
    Some(if f.kind == Kind::HelmControl {
        format!("{file}:{line}:{col}: `{written}` is a Helm control structure, not a value --set can fill: render the chart first (helm template <release> <chart> -f values.yaml > rendered.yaml) and adopt rendered.yaml (nothing was written)")
    } else {
        format!("{file}:{line}:{col}: `{written}` is a Terraform template directive, not a value --set can fill: render the template first (terraform console, then templatefile(\"<file>\", {{ … }}), or the manifest Terraform applies) and adopt the result (nothing was written)")
    })
}

/// Parses `--set NAME=value`. NAME is the placeholder as named between its delimiters, surrounding spaces trimmed
/// (`module.eks.cluster_name`, `.Values.clusterName`, `join(",", var.azs)`, `CLUSTER_NAME`); the delimiters may be
/// written too (`'${var.region}=us-east-1'`, `'{{ .Values.x }}=y'`). NAME ends at the first `=` outside quotes and
/// brackets, so `join(",", var.azs)=us-east-1a` names `join(",", var.azs)`.
pub fn parse_set(arg: &str) -> Result<(String, String), String> {
    let (mut depth, mut quoted) = (0_i32, None);
    let mut split = None;
    for (i, c) in arg.char_indices() {
        match (c, quoted) {
            ('\u{22}' | '\u{27}' | '`', None) => quoted = Some(c),
            (c, Some(q)) if c == q => quoted = None,
            ('(' | '[' | '{', None) => depth += 1,
            (')' | ']' | '}', None) => depth -= 1,
            ('=', None) if depth <= 0 => {
                split = Some(i);
                break;
            }
            _ => {}
        }
    }
    let split = split.ok_or_else(|| format!("`{arg}` is not NAME=value"))?;
    let (name, value) = (arg[..split].trim(), &arg[split + 1..]);
    // Written with its delimiters: the name is what is between them, as `find` names it.
    let name = match find(name).as_slice() {
        [f] if f.at == 0 && f.len == name.len() && !f.kind.is_directive() => f.name.clone(),
        _ => name.to_string(),
    };
    if name.is_empty() {
        return Err(format!("`{arg}` names no placeholder: write NAME=value, NAME as written between the placeholder's delimiters"));
    }
    Ok((name, value.to_string()))
}

/// The error message for placeholders left without a value: each at its first place, as written; when a name is
/// not a plain variable's, how `--set` names it.
pub fn message(unfilled: &[Unfilled]) -> String {
    let mut out = format!("{} placeholder(s) without a value: fill each with --set NAME=value (nothing was written)", unfilled.len());
    for u in unfilled {
        let more = if u.places > 1 { format!(" (and {} more place{})", u.places - 1, if u.places == 2 { "" } else { "s" }) } else { String::new() };
        out.push_str(&format!("\n  {}: {}{more}", u.at, u.written));
    }
    if let Some(u) = unfilled.iter().find(|u| !is_env_name(&u.name)) {
        out.push_str(&format!("\nNAME is what is written between the delimiters, spaces trimmed: --set '{}=…' fills {}", u.name, u.written));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditionals_on_set_values_keep_one_branch_and_strip_as_marked() {
        let text = "a: 1\n%{ if kms != \"\" ~}\nkms: ${kms}\n%{ endif ~}\nb: 2\n";
        let set = |v: &str| BTreeMap::from([("kms".to_string(), v.to_string())]);
        assert_eq!(decide_conditionals(text, &set("")), "a: 1\nb: 2\n");
        assert_eq!(decide_conditionals(text, &set("k1")), "a: 1\nkms: ${kms}\nb: 2\n");
        let with_else = "%{ if gpu ~}\ng: 1\n%{ else ~}\nc: 1\n%{ endif ~}\n";
        assert_eq!(decide_conditionals(with_else, &BTreeMap::from([("gpu".to_string(), "false".to_string())])), "c: 1\n");
        // An unset name, or a `for`, stays for the render-first error.
        assert_eq!(decide_conditionals(text, &BTreeMap::new()), text);
        assert!(decide_conditionals("%{ for x in xs }${x}%{ endfor }", &set("")).contains("%{ for"));
    }

    #[test]
    fn what_a_value_inserts_is_literal_text() {
        let values = BTreeMap::from([("script".to_string(), "echo $HOME ${USER}".to_string())]);
        let (text, inserted) = fill_tracked("a: ${script}\nb: ${var.c}\n", &values);
        let outside = |_: usize, at: usize| !inserted.iter().any(|r| r.contains(&at));
        let names: Vec<String> = unfilled("f.yaml", &text, outside).into_iter().map(|u| u.name).collect();
        assert_eq!(names, ["var.c"]);
    }

    #[test]
    fn a_value_of_several_lines_continues_at_the_placeholders_column() {
        let values = BTreeMap::from([("indent(2, ec2nodeclass)".to_string(), "role: r\namiSelectorTerms:\n  - alias: al2023@latest\n".to_string())]);
        assert_eq!(fill("spec:\n  ${indent(2, ec2nodeclass)}\n", &values), "spec:\n  role: r\n  amiSelectorTerms:\n    - alias: al2023@latest\n");
    }

    fn names(text: &str) -> Vec<(String, Kind)> {
        find(text).into_iter().map(|f| (f.name, f.kind)).collect()
    }

    #[test]
    fn envsubst_forms_are_found_and_shell_lower_case_or_positional_variables_are_not() {
        let found = names("a $CLUSTER_NAME ${REGION}-x <<ROLE>> $1 $home $");
        assert_eq!(found, [("CLUSTER_NAME".into(), Kind::Env), ("REGION".into(), Kind::Env), ("ROLE".into(), Kind::Angle)]);
    }

    #[test]
    fn terraform_interpolations_are_found_by_their_expression() {
        let text = r#"name: ${module.eks.cluster_name}-${var.cluster_name} ${local.name} zones: ${join(",", var.azs)} t: ${jsonencode({a = "}"})}"#;
        let found: Vec<String> = find(text).into_iter().map(|f| f.name).collect();
        assert_eq!(found, ["module.eks.cluster_name", "var.cluster_name", "local.name", r#"join(",", var.azs)"#, r#"jsonencode({a = "}"})"#]);
        assert!(find(text).iter().all(|f| f.kind == Kind::Terraform));
    }

    #[test]
    fn helm_actions_are_named_without_trim_markers_and_control_structures_are_directives() {
        let text = r#"a: {{ .Values.clusterName }} b: {{- include "x.fullname" . -}} c: {{ .Release.Name }} {{- if .Values.gpu }}{{ end }}{{/* c */}}"#;
        assert_eq!(
            names(text),
            [
                (".Values.clusterName".into(), Kind::Helm),
                (r#"include "x.fullname" ."#.into(), Kind::Helm),
                (".Release.Name".into(), Kind::Helm),
                ("if .Values.gpu".into(), Kind::HelmControl),
                ("end".into(), Kind::HelmControl),
                ("/* c */".into(), Kind::HelmControl),
            ]
        );
    }

    #[test]
    fn terraform_directives_are_directives_and_escapes_are_text() {
        assert_eq!(names("%{ if var.gpu }x%{ endif } $${HOME} %%{ x }"), [("if var.gpu".into(), Kind::TerraformDirective), ("endif".into(), Kind::TerraformDirective)]);
    }

    #[test]
    fn user_data_keeps_its_shell_variables_but_not_terraform_or_helm() {
        let text = "spec:\n  userData: |\n    echo $HOME ${CLUSTER} ${X:-y} <<EOF>>\n    --b64 ${var.ca} {{ .Values.token }}\n  role: $ROLE\n";
        assert_eq!(names(text), [("var.ca".into(), Kind::Terraform), (".Values.token".into(), Kind::Helm), ("ROLE".into(), Kind::Env)]);
        let inline = "spec:\n  userData: \"echo ${CLUSTER} ${local.name}\"\n  role: ${ROLE}\n";
        assert_eq!(names(inline), [("local.name".into(), Kind::Terraform), ("ROLE".into(), Kind::Env)]);
    }

    #[test]
    fn fill_replaces_only_the_names_given_and_never_a_shell_variable_of_user_data() {
        let values = BTreeMap::from([("A".to_string(), "x".to_string()), ("var.b".into(), "y".into()), (".Values.c".into(), "z".into())]);
        assert_eq!(fill("$A-${A}-<<A>>-$B ${ var.b } {{- .Values.c }}", &values), "x-x-x-$B y z");
        assert_eq!(fill("userData: |\n  echo $A ${var.b}\nrole: $A\n", &values), "userData: |\n  echo $A y\nrole: x\n");
    }

    #[test]
    fn unfilled_counts_lines_and_characters_from_one_and_places_per_name() {
        let u = unfilled("f.yaml", "a: b\nc: é ${X}\nd: $X\ne: {{ .Values.y }}\n", |_, _| true);
        let got: Vec<(&str, &str, &str, usize)> = u.iter().map(|u| (u.name.as_str(), u.at.as_str(), u.written.as_str(), u.places)).collect();
        assert_eq!(got, [(".Values.y", "f.yaml:4:4", "{{ .Values.y }}", 1), ("X", "f.yaml:2:6", "${X}", 2)]);
    }

    #[test]
    fn a_placeholder_in_a_comment_is_not_one_to_fill() {
        let text = "# replace ${CLUSTER_NAME}\nrole: \"a#${ROLE}\" # or ${OTHER}\nx: 'it # ${Q}'\nuserData: |\n  # ${var.x}\n";
        let names: Vec<String> = unfilled("f.yaml", text, |_, _| true).into_iter().map(|u| u.name).collect();
        assert_eq!(names, ["Q", "ROLE", "var.x"]);
    }

    #[test]
    fn a_directive_is_reported_at_its_place_with_how_to_render() {
        let m = directive_message("c.yaml", "a: 1\n{{- if .Values.gpu }}\n", |_, _| true).unwrap();
        assert!(m.starts_with("c.yaml:2:1: `{{- if .Values.gpu }}` is a Helm control structure") && m.contains("helm template"), "{m}");
        let m = directive_message("t.yaml", "x: %{ for z in var.azs }\n", |_, _| true).unwrap();
        assert!(m.starts_with("t.yaml:1:4: `%{ for z in var.azs }` is a Terraform template directive"), "{m}");
        assert_eq!(directive_message("p.yaml", "a: ${var.x}\n", |_, _| true), None);
        assert_eq!(directive_message("p.yaml", "a: 1\nb: '{{ if .x }}'\n", |line, _| line == 1), None);
    }

    #[test]
    fn set_names_the_expression_between_the_delimiters() {
        let set = |a: &str| parse_set(a).unwrap();
        assert_eq!(set("CLUSTER_NAME=demo"), ("CLUSTER_NAME".into(), "demo".into()));
        assert_eq!(set("module.eks.cluster_name=demo"), ("module.eks.cluster_name".into(), "demo".into()));
        assert_eq!(set(".Values.clusterName=a=b"), (".Values.clusterName".into(), "a=b".into()));
        assert_eq!(set(r#"join(",", var.azs)=us-east-1a"#), (r#"join(",", var.azs)"#.into(), "us-east-1a".into()));
        assert_eq!(set("${var.region}=us-east-1"), ("var.region".into(), "us-east-1".into()));
        assert_eq!(set("{{ .Values.x }}=y"), (".Values.x".into(), "y".into()));
        assert_eq!(set("$X=1"), ("X".into(), "1".into()));
        assert!(parse_set("novalue").is_err());
        assert!(parse_set("=x").is_err());
    }

    #[test]
    fn the_message_says_how_set_names_an_expression() {
        let u = |name: &str, written: &str| Unfilled { name: name.into(), at: "f.yaml:1:1".into(), written: written.into(), places: 1 };
        let m = message(&[u("X", "$X"), u(".Values.x", "{{ .Values.x }}")]);
        assert!(m.starts_with("2 placeholder(s) without a value: fill each with --set NAME=value (nothing was written)\n  f.yaml:1:1: $X\n"), "{m}");
        assert!(m.ends_with("\nNAME is what is written between the delimiters, spaces trimmed: --set '.Values.x=…' fills {{ .Values.x }}"), "{m}");
        assert!(!message(&[u("X", "$X")]).contains("NAME is"));
    }
}
