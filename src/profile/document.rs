//! One profile file: the KDL document (refused when nested too deep, E0187; read by the fast path or by kdl-rs,
//! whose syntax errors become E0101) and its top-level nodes — `profile`, `cluster`, `budget`, `pool`, `allow`,
//! `workload`, `monitoring`, `queue` — parsed into a [`Profile`].

use std::collections::BTreeMap;
use std::path::Path;

use kdl::{KdlDocument, KdlNode};

use super::config::SharedClusters;
use super::parser::{args, prop, Parser};
use super::{fast_kdl, schema, Cluster, Pool, Profile};
use crate::diagnostic::ErrorCode;
use crate::diagnostic::{ProfileDiagnostic, Span, Spanned};

/// Deepest `{ … }` nesting a profile may have (E0187). The language nests at most 4 deep; the cap keeps kdl-rs's
/// recursive descent (and fast_kdl's, which stops at 64) far from the 2 MiB stack of the threads that parse.
pub const MAX_NESTING: usize = 16;

/// A profile's top-level nodes as read: the one-line ones parsed, the blocks gathered to be parsed once the
/// pools they refer to are known.
struct TopLevel<'d> {
    name: Spanned<String>,
    priority: Spanned<i64>,
    cluster: Option<Cluster>,
    budget: Option<Spanned<f64>>,
    pools: Vec<&'d KdlNode>,
    allow: Vec<Spanned<String>>,
    workloads: Vec<&'d KdlNode>,
    monitoring: Vec<&'d KdlNode>,
    queues: Vec<&'d KdlNode>,
    /// The clusters `gpuplan.kdl` defines, for a `cluster "name"` with no block.
    shared: &'d SharedClusters,
}

impl Parser<'_> {
    /// The file's profile; None when it has none to give (a syntax error, no cluster).
    pub(super) fn parse_profile(&mut self, path: &Path, shared: &SharedClusters) -> Option<Profile> {
        let doc = self.read_document()?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let whole = Span { file: self.file, offset: 0, len: 0 };
        let mut top = TopLevel {
            name: Spanned::new(stem, whole),
            priority: Spanned::new(0i64, whole),
            cluster: None,
            budget: None,
            pools: Vec::new(),
            allow: Vec::new(),
            workloads: Vec::new(),
            monitoring: Vec::new(),
            queues: Vec::new(),
            shared,
        };
        let mut seen = super::config::Seen::new();
        for node in doc.nodes() {
            // `cluster` has its own error (E0109, a profile has one cluster).
            if !self.repeated(node, &mut seen, &["profile", "budget"]) {
                self.top_level_node(node, &mut top);
            }
        }
        let Some(cluster) = top.cluster.take() else {
            if self.failed.cluster {
                return None;
            }
            self.error(
                whole,
                ErrorCode::E0110,
                "the profile has no `cluster` block",
                "add cluster \"name\" { region \"us-east-1\"; zones \"us-east-1a\"; ami \"al2023@vYYYYMMDD\" }, or cluster \"name\" alone for a cluster gpuplan.kdl defines",
            );
            return None;
        };
        let wrote_pools = !top.pools.is_empty();
        let pools: Vec<Pool> = top.pools.iter().filter_map(|n| self.parse_pool_or_mark_failed(n)).collect();
        if !wrote_pools {
            self.error(whole, ErrorCode::E0111, "the profile has no `pool`", "add pool \"name\" preset=\"inference-spot\" { gpu { … } }");
        }
        self.adopted_cluster_warnings(&pools);
        self.check_nodepool_names(&pools);
        self.check_overlays(&pools);
        let ops = self.parse_ops(&top.workloads, &top.monitoring, &pools);
        let queues = self.parse_queues(&top.queues, &pools);
        let TopLevel { name, priority, budget, allow, .. } = top;
        Some(Profile { name, file: self.file, priority, cluster, budget_usd_per_hour: budget, pools, allow, ops, queues })
    }

    /// The file as a KDL document: E0187 when nested too deep, E0101 for each syntax error.
    pub(crate) fn read_document(&mut self) -> Option<KdlDocument> {
        let text = self.sources.text(self.file).to_string();
        // Both parsers, this walk and the document's drop recurse once per block: a deeper document would overflow
        // the stack (a 6 KB profile nested 1,500 deep aborted every command), so it is refused before any of them.
        if let Some((offset, too_deep)) = crate::input::nesting_depth(&text, MAX_NESTING) {
            let span = Span { file: self.file, offset, len: 1 };
            let (message, help) = match too_deep {
                crate::input::TooDeep::Blocks => (
                    format!("blocks nested more than {MAX_NESTING} deep"),
                    "the profile language nests at most 4 deep (profile, pool, tier, gpu): close the blocks above this one",
                ),
                crate::input::TooDeep::Comment => (
                    format!("a /* */ comment or a run of /- slashdashes of more than {} parts", crate::input::MAX_COMMENT_PARTS),
                    "kdl-rs recurses once per part: write long comments as // lines, and one /- per node or entry",
                ),
            };
            self.error(span, ErrorCode::E0187, message, help);
            return None;
        }
        // The common subset of KDL is read by the fast path; anything else (and every error, with its diagnostics)
        // by kdl-rs.
        let parsed = fast_kdl::parse(&text).map(Ok).unwrap_or_else(|| parse_on_a_large_stack(&text));
        match parsed {
            Ok(doc) => Some(doc),
            Err(err) => {
                for d in err.diagnostics {
                    if let Some(diag) = self.unquoted_quantity(self.span(d.span)) {
                        self.diagnostics.push(diag);
                        continue;
                    }
                    let message = d.message.clone().unwrap_or_else(|| "invalid KDL".to_string());
                    let help = d.help.clone().unwrap_or_else(|| {
                        "gpuplan profiles are KDL v2 documents (https://kdl.dev): strings in double quotes, booleans #true/#false".into()
                    });
                    let mut diag = self.sources.error(self.span(d.span), ErrorCode::E0101, format!("malformed KDL: {message}"), );
                    diag = diag.help(help).label(d.label.clone().unwrap_or_else(|| "here".into()));
                    self.diagnostics.push(diag);
                }
                None
            }
        }
    }

    /// E0101 for a quantity written bare (`memory-min 40GiB`, `consolidate-after 30m`, `1.5h`): KDL reads a
    /// leading digit as a number and fails on the unit ("Did you want a space here?"), while every quantity of a
    /// profile is a string. The help writes the line's setting with the value quoted.
    fn unquoted_quantity(&self, span: Span) -> Option<ProfileDiagnostic> {
        // KDL's span is the value (`memory-min 40GiB`) or, for a property (`memory=200Gi`), the node up to the
        // value's digits: the first bare quantity from the span's start to the end of its line is the one.
        let text = self.sources.text(self.file);
        let start = span.offset.min(text.len());
        let line_end = text[start + span.len.min(text.len() - start)..].find('\n').map_or(text.len(), |e| start + span.len + e);
        let (at, token) = bare_values(&text[start..line_end]).find(|(_, word)| looks_like_quantity(word))?;
        let offset = start + at;
        let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let before = &text[line_start..offset];
        let setting = before.trim_end().rsplit(|c: char| c.is_whitespace() || c == ';' || c == '{').next().unwrap_or_default();
        let quoted = match setting {
            "" => format!("\"{token}\""),
            s if s.ends_with('=') => format!("{s}\"{token}\""),
            s => format!("{s} \"{token}\""),
        };
        let at = Span { file: self.file, offset, len: token.len() };
        Some(
            self.sources
                .error(at, ErrorCode::E0101, format!("`{token}` is not quoted: sizes, durations and prices are strings in a profile"))
                .label("quote this value")
                .help(format!("quote it: `{quoted}`")),
        )
    }

    /// One top-level node into `top`.
    fn top_level_node<'d>(&mut self, node: &'d KdlNode, top: &mut TopLevel<'d>) {
        match node.name().value() {
            "profile" => {
                self.check_entries(node, &["priority"], 1);
                self.no_children(node);
                if let Some(arg) = args(node).next()
                    && let Some(n) = self.expect_string(arg, "the profile name") {
                        self.check_name(&n, "profile");
                        top.name = n;
                    }
                if let Some(p) = prop(node, "priority")
                    && let Some(p) = self.expect_integer(p, "priority", 0, 1000) {
                        top.priority = Spanned::new(p.value as i64, p.span);
                    }
            }
            "cluster" => {
                if top.cluster.is_some() {
                    self.error(
                        self.span(node.span()),
                        ErrorCode::E0109,
                        "a profile has one cluster",
                        "split pools for another cluster into their own profile file",
                    );
                    return;
                }
                top.cluster = self.profile_cluster(node, top.shared);
                self.failed.cluster = top.cluster.is_none();
            }
            "budget" => {
                self.check_entries(node, &["usd-per-hour"], 0);
                self.no_children(node);
                match prop(node, "usd-per-hour") {
                    Some(entry) => top.budget = self.expect_number(entry, "budget usd-per-hour"),
                    None => self.error(
                        self.span(node.span()),
                        ErrorCode::E0107,
                        "`budget` needs usd-per-hour",
                        "write it as budget usd-per-hour=150",
                    ),
                }
            }
            "pool" => top.pools.push(node),
            "allow" => top.allow.extend(self.strings(node)),
            "workload" => top.workloads.push(node),
            "monitoring" => top.monitoring.push(node),
            "queue" => top.queues.push(node),
            _ => self.unknown_node(node, &schema::names("profile"), "a profile"),
        }
    }

    /// A profile `adopt` wrote (pools with `admit "as-required"`) keeps its original's behaviour: a cluster-level
    /// problem its YAML already had (E0360, a Flux Kustomization waiting for its own) is a warning, as
    /// `PoolPlan::whole_cluster_severity` makes a whole-cluster one.
    fn adopted_cluster_warnings(&mut self, pools: &[Pool]) {
        let adopted = pools.iter().flat_map(|p| &p.tiers).any(|t| t.settings.admit.value == super::Admit::AsRequired);
        if !adopted {
            return;
        }
        for d in self.diagnostics.iter_mut().filter(|d| d.code == crate::diagnostic::DiagnosticCode::Error(ErrorCode::E0360)) {
            *d = d.clone().warning();
        }
    }

    /// E0112: every NodePool name (pools and tiers) once in the profile.
    fn check_nodepool_names(&mut self, pools: &[Pool]) {
        let mut seen: BTreeMap<String, Span> = BTreeMap::new();
        for tier in pools.iter().flat_map(|p| &p.tiers) {
            if let Some(first) = seen.insert(tier.name.value.clone(), tier.name.span) {
                let first_at = self.sources.location(first);
                self.error(
                    tier.name.span,
                    ErrorCode::E0112,
                    format!("NodePool name `{}` is used twice in this profile (first at {first_at})", tier.name.value),
                    "give each pool and tier a distinct name",
                );
            }
        }
    }
}

/// kdl-rs's parse on a thread of its own with a 64 MiB stack (reserved, and touched only as deep as it recurses).
/// kdl-rs recurses once per block, per part of a block comment and per slashdash, and on paths its error recovery
/// takes: the scan before it (E0187) refuses what is known to be deep, and this stack gives everything else 32 times
/// the room of the 2 MiB rayon thread that called it (a fuzzed profile found a third recursion the scan now covers).
fn parse_on_a_large_stack(text: &str) -> Result<KdlDocument, kdl::KdlError> {
    std::thread::scope(|scope| {
        let parse = std::thread::Builder::new().name("kdl-rs".into()).stack_size(64 << 20);
        match parse.spawn_scoped(scope, || KdlDocument::parse(text)) {
            Ok(handle) => handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: parse here, as before.
            Err(_) => KdlDocument::parse(text),
        }
    })
}

#[cfg(test)]
mod nesting_tests {
    /// The deepest nesting E0187 lets through (twice MAX_NESTING, by the brace count, and a block comment of
    /// MAX_COMMENT_PARTS parts, each a level of kdl-rs's `commented_block`) parses in kdl-rs on a thread
    /// with the default 2 MiB stack, the size of the rayon threads that parse profiles, in an unoptimised build.
    #[test]
    fn kdl_rs_parses_the_deepest_nesting_the_scan_lets_through_on_a_small_stack() {
        let depth = 2 * super::MAX_NESTING;
        let text = format!("{}{}", "a {\n".repeat(depth), "}\n".repeat(depth));
        assert!(crate::input::nesting_depth(&text, depth).is_none());
        let comment = format!("{}\n/*{}*/", "a {\n".repeat(depth), "*x".repeat(crate::input::MAX_COMMENT_PARTS / 2 - 1));
        let text = format!("{comment}{}", "}\n".repeat(depth));
        assert!(crate::input::nesting_depth(&text, depth).is_none());
        let parsed = std::thread::Builder::new().stack_size(2 << 20).spawn(move || kdl::KdlDocument::parse(&text).is_ok()).unwrap().join().unwrap();
        assert!(parsed);
    }
}

/// A number with a unit glued on (`40GiB`, `30m`, `1.5h`, `10%`), or a price (`$20`): what a reader writes for a
/// quantity, and KDL cannot read bare.
fn looks_like_quantity(token: &str) -> bool {
    let number = token.strip_prefix('$').unwrap_or(token);
    let digits = number.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(number.len());
    let (value, unit) = number.split_at(digits);
    !value.is_empty() && value.starts_with(|c: char| c.is_ascii_digit()) && (token.starts_with('$') || (!unit.is_empty() && unit.chars().all(|c| c.is_ascii_alphabetic() || c == '%')))
}

/// The bare words of a stretch of KDL and where each starts: what follows whitespace, `;`, `{` or a property's `=`.
fn bare_values(text: &str) -> impl Iterator<Item = (usize, &str)> {
    fn separator(c: char) -> bool {
        c.is_whitespace() || matches!(c, ';' | '{' | '}' | '=')
    }
    text.char_indices().filter(move |&(i, c)| !separator(c) && (i == 0 || text[..i].ends_with(separator))).map(move |(i, _)| {
        let end = text[i..].find(separator).map_or(text.len(), |e| i + e);
        (i, &text[i..end])
    })
}
