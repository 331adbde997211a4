//! The repository config, `gpuplan.kdl` at the repository root: what every run repeats (the profiles, out,
//! catalogs and templates directories, the catalog-age threshold) and the clusters the profiles share.
//!
//! It is KDL read by the profile walk's own [`Parser`], so its diagnostics are the profiles' (file:line:col, an
//! unknown node with "did you mean" from [`CONFIG_NODES`]). Files beside the profiles that are not profiles are named
//! `gpuplan.kdl` or `gpuplan.<what>.kdl` ([`is_repository_file`]); a profiles directory never yields them as profiles.
//! Where the file is found and how its settings rank against flags is the command line's (`src/cli/inputs.rs`).

use std::collections::BTreeMap;
use std::path::Path;

use kdl::KdlNode;

use super::parser::{args, Parser};
use super::schema::NodeSpec;
use super::Cluster;
use crate::diagnostic::{did_you_mean, ErrorCode, ProfileDiagnostic, Sources, Span, Spanned};

/// The config's file name, searched for from the working directory up to the repository's top.
pub const CONFIG_FILE: &str = "gpuplan.kdl";

/// The clusters `gpuplan.kdl` defines, by name: a profile's `cluster "name"` with no block takes one of them.
pub type SharedClusters = BTreeMap<String, Cluster>;

/// The config's nodes, as the profile language's table describes its own (`gpuplan schema` lists both).
pub const CONFIG_NODES: &[NodeSpec] = &[
    node("profiles", "<path>…", "profiles", "Profile files or directories of *.kdl files, relative to the config's directory.", "profiles \"profiles\""),
    node("out", "<path>", "out", "The output directory compile writes and `compile --check` compares.", "out \"out\""),
    node("catalogs", "<path>", "catalogs", "Directory of catalog snapshots (<region>.json); us-east-1 is built in.", "catalogs \"catalogs\""),
    node("templates", "<path>", "none (the built-in templates)", "Directory whose templates replace the built-in ones of the same name.", "templates \"templates\""),
    node("max-catalog-age-days", "<integer>", "30", "Warn when a catalog's newest data is older than this many days.", "max-catalog-age-days 60"),
    node("cluster", "<string>", "none", "A cluster block, as in a profile, shared by every profile that writes `cluster \"<name>\"` with no block.", "cluster \"c\" { region \"us-east-1\"; zones \"us-east-1a\"; ami \"al2023@v20251023\" }"),
];

const fn node(name: &'static str, args: &'static str, default: &'static str, doc: &'static str, example: &'static str) -> NodeSpec {
    NodeSpec { parent: "config", name, args, props: &[], default, doc, example }
}

/// What `gpuplan.kdl` says, every value with its span in the config. Paths as written: relative ones are relative to
/// the config's directory.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub profiles: Vec<Spanned<String>>,
    pub out: Option<Spanned<String>>,
    pub catalogs: Option<Spanned<String>>,
    pub templates: Option<Spanned<String>>,
    pub max_catalog_age_days: Option<Spanned<u64>>,
    pub clusters: SharedClusters,
}

/// The config's nodes written at most once (every one but `cluster`).
const SINGLE_NODES: &[&str] = &["profiles", "out", "catalogs", "templates", "max-catalog-age-days"];

/// The single-valued nodes met so far in a document, by name, at their name's span: see [`Parser::repeated`].
pub(crate) type Seen = BTreeMap<String, Span>;

/// Whether gpuplan reads `path` as something other than a profile: `gpuplan.kdl`, or `gpuplan.<what>.kdl` (a name
/// kept for the repository's other inputs, such as a demand file).
pub fn is_repository_file(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|name| name == CONFIG_FILE || (name.starts_with("gpuplan.") && name.ends_with(".kdl")))
}

/// Reads and parses the config at `path` into `sources`: the config, or None with the diagnostics when it has errors.
pub fn parse_config(path: &Path, sources: &mut Sources) -> (Option<Config>, Vec<ProfileDiagnostic>) {
    let name = crate::diagnostic::repository_paths::RepositoryPaths::new().resolve(path);
    let text = match crate::input::read_to_string(path) {
        Ok(text) => text,
        Err(err) => {
            let file = sources.add(path, name, String::new());
            let read = sources.error(Span { file, offset: 0, len: 0 }, ErrorCode::E0001, format!("cannot read {CONFIG_FILE}: {err}"));
            return (None, vec![read.help("check the file's permissions")]);
        }
    };
    let file = sources.add(path, name, text);
    parse_config_source(sources, file)
}

/// The config whose text is already `file` of `sources`: [`parse_config`] once the file is read (the fuzz targets,
/// fuzz/, call it on text in memory).
pub fn parse_config_source(sources: &Sources, file: usize) -> (Option<Config>, Vec<ProfileDiagnostic>) {
    let mut parser = Parser::new(sources, file);
    let config = parser.read_document().map(|doc| {
        let mut config = Config::default();
        let mut seen = Seen::new();
        for node in doc.nodes() {
            if !parser.repeated(node, &mut seen, SINGLE_NODES) {
                parser.config_node(node, &mut config);
            }
        }
        parser.confined_paths(&config, sources.path(file).parent().unwrap_or(Path::new("")));
        config
    });
    let failed = parser.diagnostics.iter().any(ProfileDiagnostic::is_error);
    (config.filter(|_| !failed), parser.diagnostics)
}

impl Parser<'_> {
    /// E0441 when `node` is one of `single` (the document's nodes that take one value) and `seen` has it already:
    /// true, and the caller skips it. One diagnostic, at the second node, naming the first; the last one silently
    /// winning would hide the first from its reader. Used by gpuplan.kdl, the demand file and a profile's top level.
    pub(crate) fn repeated(&mut self, node: &KdlNode, seen: &mut Seen, single: &[&str]) -> bool {
        let name = node.name().value();
        if !single.contains(&name) {
            return false;
        }
        let span = self.span(node.name().span());
        let Some(first) = seen.get(name).copied() else {
            seen.insert(name.to_string(), span);
            return false;
        };
        let message = format!("`{name}` is written twice: it takes one value, first written at {}", self.sources.location(first));
        self.error_labelled(span, ErrorCode::E0441, message, "written again here", &format!("keep one `{name}`: remove this one, or the first"));
        true
    }

    /// E0440 at each path of the config that is absolute or climbs out of the repository (`crate::confine`): the
    /// config is the pull request's, so it can never name a place outside the checkout.
    fn confined_paths(&mut self, config: &Config, dir: &Path) {
        let paths = config.profiles.iter().chain(&config.out).chain(&config.catalogs).chain(&config.templates);
        for written in paths {
            if let Err((message, help)) = crate::confine::check_written(&written.value, dir) {
                self.error(written.span, ErrorCode::E0440, message, help);
            }
        }
    }

    /// One top-level node of the config into `config`.
    fn config_node(&mut self, node: &KdlNode, config: &mut Config) {
        let name = node.name().value();
        if name != "cluster" {
            self.no_children(node);
        }
        match name {
            "profiles" => {
                self.check_entries(node, &[], usize::MAX);
                config.profiles = self.strings(node);
            }
            "out" => config.out = self.single_string(node),
            "catalogs" => config.catalogs = self.single_string(node),
            "templates" => config.templates = self.single_string(node),
            "max-catalog-age-days" => {
                config.max_catalog_age_days = self.bounded_u32(node, "max-catalog-age-days", 0..=36_500).map(|d| Spanned::new(u64::from(d.value), d.span));
            }
            "cluster" => self.shared_cluster(node, &mut config.clusters),
            _ => self.unknown_node(node, &CONFIG_NODES.iter().map(|n| n.name).collect::<Vec<_>>(), CONFIG_FILE),
        }
    }

    /// A `cluster` block of the config: each name once (E0402).
    fn shared_cluster(&mut self, node: &KdlNode, clusters: &mut SharedClusters) {
        let Some(cluster) = self.parse_cluster(node) else { return };
        if let Some(first) = clusters.get(&cluster.name.value) {
            let message = format!("cluster `{}` is defined twice in {CONFIG_FILE} (first at {})", cluster.name.value, self.sources.location(first.name.span));
            self.error(cluster.name.span, ErrorCode::E0402, message, "keep one `cluster` block per name: profiles that name it share it");
            return;
        }
        clusters.insert(cluster.name.value.clone(), cluster);
    }

    /// A profile's `cluster` node: its own block, or with no block the one `gpuplan.kdl` defines under that name.
    /// A block for a name the config also defines is an error (E0400): two definitions of one cluster would drift.
    pub(super) fn profile_cluster(&mut self, node: &KdlNode, shared: &SharedClusters) -> Option<Cluster> {
        let named = args(node).next().and_then(|a| a.value().as_string()).map(str::to_string);
        match (node.children().is_some(), named.as_deref().and_then(|n| shared.get(n))) {
            (true, None) => self.parse_cluster(node),
            (true, Some(shared)) => {
                let message = format!("cluster `{}` is defined here and in the repository config, at {}", shared.name.value, self.sources.location(shared.name.span));
                let help = "remove this block to use the shared definition, or give this cluster another name";
                self.error_labelled(self.span(node.name().span()), ErrorCode::E0400, message, "a second definition", help);
                None
            }
            (false, Some(shared)) => {
                self.check_entries(node, &[], 1);
                Some(shared.clone())
            }
            (false, None) if named.is_none() => self.parse_cluster(node),
            (false, None) => {
                self.unknown_shared_cluster(node, named.as_deref().unwrap_or_default(), shared);
                None
            }
        }
    }

    /// E0401: `cluster "name"` with no block, and no such cluster in the config.
    fn unknown_shared_cluster(&mut self, node: &KdlNode, name: &str, shared: &SharedClusters) {
        let span = args(node).next().map_or_else(|| self.span(node.span()), |a| self.span(a.span()));
        let message = format!("cluster `{name}` has no block here and {CONFIG_FILE} defines no cluster of that name");
        let help = if shared.is_empty() {
            format!("add a block, cluster \"{name}\" {{ region \"us-east-1\"; zones \"us-east-1a\"; ami \"al2023@vYYYYMMDD\" }}, here or in {CONFIG_FILE} at the repository root")
        } else {
            let names: Vec<&str> = shared.keys().map(String::as_str).collect();
            let mut help = did_you_mean(name, names.iter().copied()).map(|d| format!("{d} ")).unwrap_or_default();
            help.push_str(&format!("{CONFIG_FILE} defines: {}", names.join(", ")));
            help
        };
        self.error(span, ErrorCode::E0401, message, help);
    }
}
