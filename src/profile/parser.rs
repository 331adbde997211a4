//! The walk's tools: the [`Parser`] every part of the profile walk is a method of, its diagnostics helpers
//! (one error code each for an unknown node E0102, an unknown property E0103, a surplus argument E0104, a value
//! of the wrong type or range E0105/E0106, a missing value E0107, an unwanted block E0108, a keyword outside its
//! list E0118), and the small readers of KDL nodes the others share.

use std::ops::RangeInclusive;

use kdl::{KdlEntry, KdlNode, KdlValue};

use crate::diagnostic::ErrorCode;
use crate::diagnostic::{did_you_mean, did_you_mean_among, ProfileDiagnostic, Sources, Span, Spanned};

/// One file's walk: the sources (for spans and locations), the file, the diagnostics found so far, and what failed.
pub(crate) struct Parser<'s> {
    pub(crate) sources: &'s Sources,
    pub(crate) file: usize,
    pub(crate) diagnostics: Vec<ProfileDiagnostic>,
    pub(crate) failed: Failed,
}

/// The entities whose own diagnostic has been raised and that the profile therefore lacks (a pool with an unknown
/// preset, a cluster without a name): later checks that look them up skip them, so one cause is one diagnostic (no
/// "unknown pool" after "unknown preset", no "no cluster block" after "`cluster` needs a name").
#[derive(Debug, Default)]
pub(crate) struct Failed {
    /// A `cluster` block was written but could not be read.
    pub(crate) cluster: bool,
    /// The pools written but not read, by name (None: the name itself was unreadable).
    pub(crate) pools: Vec<Option<String>>,
}

impl Failed {
    /// Whether `name` may be a pool (or one of its tiers' NodePools, named `<pool>-<tier>`) that failed to parse.
    pub(crate) fn may_name_a_pool(&self, name: &str) -> bool {
        self.pools.iter().any(|p| p.as_deref().is_none_or(|p| name == p || name.strip_prefix(p).is_some_and(|rest| rest.starts_with('-'))))
    }
}

impl Parser<'_> {
    pub(crate) fn new(sources: &Sources, file: usize) -> Parser<'_> {
        Parser { sources, file, diagnostics: Vec::new(), failed: Failed::default() }
    }

    /// An unknown pool (E0170, E0201): what the help lists (did-you-mean, the pools and NodePools of the profile),
    /// or None when `name` may be a pool that failed to parse (its own diagnostic is the cause).
    pub(crate) fn unknown_pool_help(&self, name: &str, pools: &[super::Pool]) -> Option<String> {
        if self.failed.may_name_a_pool(name) {
            return None;
        }
        let mut candidates: Vec<&str> = pools.iter().map(|p| p.name.as_str()).collect();
        candidates.extend(pools.iter().flat_map(|p| p.tiers.iter().map(|t| t.name.as_str())));
        candidates.sort();
        candidates.dedup();
        let help = did_you_mean_among(name, &candidates, "pools (and NodePools) of this profile");
        Some(help)
    }

    pub(crate) fn span(&self, span: miette::SourceSpan) -> Span {
        Span::new(self.file, span)
    }

    pub(crate) fn error_labelled(&mut self, span: Span, code: ErrorCode, message: impl Into<String>, label: &str, help: &str) {
        let d = self.sources.error(span, code, message).label(label).help(help);
        self.diagnostics.push(d);
    }

    pub(crate) fn error(&mut self, span: Span, code: ErrorCode, message: impl Into<String>, help: impl Into<String>) {
        let help = help.into();
        let mut d = self.sources.error(span, code, message);
        if !help.is_empty() {
            d = d.help(help);
        }
        self.diagnostics.push(d);
    }

    pub(crate) fn unknown_node(&mut self, node: &KdlNode, valid: &[&str], context: &str) {
        let name = node.name().value();
        let mut help = did_you_mean(name, valid.iter().copied()).unwrap_or_default();
        if !help.is_empty() {
            help.push(' ');
        }
        help.push_str(&format!("valid here: {}", valid.join(", ")));
        self.error(
            self.span(node.name().span()),
            ErrorCode::E0102,
            format!("unknown node `{}` in {context}", crate::input::excerpt(name)),
            help,
        );
    }

    /// Rejects properties other than `allowed`, and arguments beyond `max_args`.
    pub(crate) fn check_entries(&mut self, node: &KdlNode, allowed: &[&str], max_args: usize) {
        let mut args = 0;
        for entry in node.entries() {
            match entry.name() {
                Some(name) if !allowed.contains(&name.value()) => {
                    let mut help = did_you_mean(name.value(), allowed.iter().copied()).unwrap_or_default();
                    if allowed.is_empty() {
                        help = format!("`{}` takes no properties", node.name().value());
                    } else {
                        if !help.is_empty() {
                            help.push(' ');
                        }
                        help.push_str(&format!("valid properties: {}", allowed.join(", ")));
                    }
                    self.error(
                        self.span(entry.span()),
                        ErrorCode::E0103,
                        format!("unknown property `{}` on `{}`", name.value(), node.name().value()),
                        help,
                    );
                }
                Some(_) => {}
                None => {
                    args += 1;
                    if args > max_args {
                        self.error(
                            self.span(entry.span()),
                            ErrorCode::E0104,
                            format!(
                                "`{}` takes {} argument{}",
                                node.name().value(),
                                if max_args == 0 { "no".to_string() } else { format!("at most {max_args}") },
                                if max_args == 1 { "" } else { "s" }
                            ),
                            "remove the extra value",
                        );
                    }
                }
            }
        }
    }

    pub(crate) fn expect_string(&mut self, entry: &KdlEntry, what: &str) -> Option<Spanned<String>> {
        let span = self.span(entry.span());
        match entry.value() {
            KdlValue::String(s) => Some(Spanned::new(s.clone(), span)),
            other => {
                self.error(
                    span,
                    ErrorCode::E0105,
                    format!("{what} must be a string, found {}", describe(other)),
                    format!("quote it: \"{}\"", value_text(other)),
                );
                None
            }
        }
    }

    pub(crate) fn expect_integer(&mut self, entry: &KdlEntry, what: &str, min: i128, max: i128) -> Option<Spanned<i128>> {
        let span = self.span(entry.span());
        match entry.value() {
            KdlValue::Integer(i) if (min..=max).contains(i) => Some(Spanned::new(*i, span)),
            KdlValue::Integer(i) => {
                self.error(span, ErrorCode::E0106, format!("{what} must be between {min} and {max}, found {i}"), "");
                None
            }
            other => {
                self.error(
                    span,
                    ErrorCode::E0105,
                    format!("{what} must be an integer, found {}", describe(other)),
                    "write a whole number without quotes, e.g. 8",
                );
                None
            }
        }
    }

    pub(crate) fn expect_number(&mut self, entry: &KdlEntry, what: &str) -> Option<Spanned<f64>> {
        let span = self.span(entry.span());
        let value = match entry.value() {
            KdlValue::Integer(i) => *i as f64,
            KdlValue::Float(f) => *f,
            other => {
                // A price written as one (`$50`, "50", "$12.5"): the number it means, to write instead.
                let meant = other.as_string().map(|s| s.trim_start_matches('$')).filter(|s| s.parse::<f64>().is_ok_and(f64::is_finite));
                let help = match (meant, entry.name()) {
                    (Some(n), Some(key)) => format!("write the number alone, without quotes or `$`: `{}={n}`", key.value()),
                    (Some(n), None) => format!("write the number alone, without quotes or `$`: `{n}`"),
                    _ => "write a number without quotes or units, e.g. 150 or 12.5".to_string(),
                };
                self.error(span, ErrorCode::E0105, format!("{what} must be a number, found {}", describe(other)), help);
                return None;
            }
        };
        if !value.is_finite() || value <= 0.0 {
            self.error(span, ErrorCode::E0106, format!("{what} must be a positive number, found {value}"), "");
            return None;
        }
        Some(Spanned::new(value, span))
    }

    pub(crate) fn expect_bool(&mut self, entry: &KdlEntry, what: &str) -> Option<Spanned<bool>> {
        let span = self.span(entry.span());
        match entry.value() {
            KdlValue::Bool(b) => Some(Spanned::new(*b, span)),
            other => {
                self.error(
                    span,
                    ErrorCode::E0105,
                    format!("{what} must be #true or #false, found {}", describe(other)),
                    "KDL v2 booleans are written #true and #false",
                );
                None
            }
        }
    }

    /// The node's single argument as a string, or an error pointing at the node.
    pub(crate) fn single_string(&mut self, node: &KdlNode) -> Option<Spanned<String>> {
        self.check_entries(node, &[], 1);
        match args(node).next() {
            Some(entry) => self.expect_string(entry, &format!("`{}`", node.name().value())),
            None => {
                self.error(
                    self.span(node.span()),
                    ErrorCode::E0107,
                    format!("`{}` needs a value", node.name().value()),
                    format!("write it as {} \"…\"", node.name().value()),
                );
                None
            }
        }
    }

    pub(crate) fn strings(&mut self, node: &KdlNode) -> Vec<Spanned<String>> {
        self.check_entries(node, &[], usize::MAX);
        let entries: Vec<&KdlEntry> = args(node).collect();
        if entries.is_empty() {
            self.error(
                self.span(node.span()),
                ErrorCode::E0107,
                format!("`{}` needs at least one value", node.name().value()),
                "",
            );
        }
        entries.into_iter().filter_map(|e| self.expect_string(e, &format!("`{}`", node.name().value()))).collect()
    }

    pub(crate) fn no_children(&mut self, node: &KdlNode) {
        if let Some(children) = node.children() {
            self.error(
                self.span(children.span()),
                ErrorCode::E0108,
                format!("`{}` takes no block", node.name().value()),
                "remove the { … }",
            );
        }
    }

    /// Kubernetes object names: lowercase RFC 1123 labels (we use them as NodePool names).
    pub(crate) fn check_name(&mut self, name: &Spanned<String>, what: &str) {
        let ok = !name.is_empty()
            && name.len() <= 50
            && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !name.starts_with('-')
            && !name.ends_with('-');
        if !ok {
            self.error(
                name.span,
                ErrorCode::E0113,
                format!("{what} name `{}` is not a valid Kubernetes name", crate::input::excerpt(&name.value)),
                "use at most 50 lowercase letters, digits and '-', starting and ending with a letter or digit",
            );
        }
    }

    /// A value that lands in a generated object, checked by `rule` (see `crate::names`): `code` at its span
    /// otherwise, quoting at most the start of a long value.
    pub(crate) fn check_value(&mut self, value: &Spanned<String>, rule: impl Fn(&str) -> Result<(), String>, code: ErrorCode, what: &str, help: &str) {
        if let Err(reason) = rule(&value.value) {
            let message = format!("{what} `{}` is not valid: {reason}", crate::input::excerpt(&value.value));
            self.error(value.span, code, message, help);
        }
    }

    /// The node's one integer argument within `range` (`weight 50`, `max-accelerators 40`): E0105 for another
    /// type, E0106 outside the range, and None (nothing written) for a missing or refused value.
    pub(crate) fn bounded_u32(&mut self, node: &KdlNode, what: &str, range: RangeInclusive<u32>) -> Option<Spanned<u32>> {
        self.check_entries(node, &[], 1);
        let (min, max) = (i128::from(*range.start()), i128::from(*range.end()));
        args(node).next().and_then(|e| self.expect_integer(e, what, min, max)).map(|v| Spanned::new(v.value as u32, v.span))
    }

    /// The value of `choices` that `value` spells; E0118 (`unknown <what> `…``) otherwise, see [`Self::unknown_keyword`].
    pub(crate) fn keyword<T: Copy>(&mut self, value: &Spanned<String>, what: &str, choices: &[(&str, T)], help: &str) -> Option<Spanned<T>> {
        match choices.iter().find(|(name, _)| *name == value.as_str()) {
            Some((_, v)) => Some(Spanned::new(*v, value.span)),
            None => {
                self.unknown_keyword(value, what, choices.iter().map(|(name, _)| *name), help);
                None
            }
        }
    }

    /// E0118 for a keyword outside its list: "did you mean" the closest of `known`, else `help` (the list, said
    /// with what each choice means).
    pub(crate) fn unknown_keyword<'k>(&mut self, value: &Spanned<String>, what: &str, known: impl IntoIterator<Item = &'k str>, help: &str) {
        let help = did_you_mean(value, known).map_or_else(|| help.into(), |d| format!("{d} {help}"));
        self.error(value.span, ErrorCode::E0118, format!("unknown {what} `{}`", value.value), help);
    }
}

pub(crate) fn args(node: &KdlNode) -> impl Iterator<Item = &KdlEntry> {
    node.entries().iter().filter(|e| e.name().is_none())
}

/// The last value given for a property (KDL: later properties override earlier ones).
pub(crate) fn prop<'n>(node: &'n KdlNode, key: &str) -> Option<&'n KdlEntry> {
    node.entries().iter().rev().find(|e| e.name().is_some_and(|n| n.value() == key))
}

pub(crate) fn describe(value: &KdlValue) -> String {
    match value {
        KdlValue::String(s) => format!("the string \"{s}\""),
        KdlValue::Integer(i) => format!("the integer {i}"),
        KdlValue::Float(f) => format!("the number {f}"),
        KdlValue::Bool(b) => format!("#{b}"),
        KdlValue::Null => "#null".into(),
    }
}

fn value_text(value: &KdlValue) -> String {
    match value {
        KdlValue::String(s) => s.clone(),
        KdlValue::Integer(i) => i.to_string(),
        KdlValue::Float(f) => f.to_string(),
        KdlValue::Bool(b) => b.to_string(),
        KdlValue::Null => "null".into(),
    }
}
