//! Stage 1: KDL profiles → typed, spanned [`Profile`]s.
//!
//! One file is one profile. The grammar (KDL v2) is documented in README.md; in short:
//!
//! ```kdl
//! profile "llm-inference" priority=100      // optional; the file stem names the profile otherwise
//! cluster "ml-prod" { region "us-east-1"; zones "us-east-1a" "us-east-1b"; ami "al2023@v20251023" }
//! budget usd-per-hour=150
//! pool "llm" preset="inference-spot" {
//!     gpu { name "A10G" "L4"; memory-min "22GiB"; per-node max=1 }
//!     max-accelerators 40
//! }
//! ```
//!
//! The walk is written by hand over `kdl::KdlDocument` rather than through kdl's serde deserializer so that
//! every value keeps its own span: a contradiction found later (by the solver or lint) still points at the
//! exact text the user wrote, and unknown names get a "did you mean" from the list of names valid *there*.
//! The documents come from [`fast_kdl`] when the file is in the common subset of KDL it reads (every profile we
//! have seen), else from kdl-rs, which also reports every syntax error.
//!
//! Presets give defaults; every setting can be written at pool level and again inside a `tier`, the inner
//! one winning. Settings that came from a preset carry the span of the `preset=` property.

use std::collections::BTreeMap;
use std::path::Path;

use kdl::{KdlDocument, KdlEntry, KdlNode, KdlValue};

use crate::catalog::{AcceleratorKind, Arch, CapacityType};
use crate::diagnostic::{did_you_mean, ProfileDiagnostic, Sources, Span, Spanned};

/// `workload` and `monitoring` nodes (operations manifests), parsed with this module's helpers.
#[path = "../ops/intent.rs"]
mod ops_intent;
/// `queue` nodes (Kueue queues), parsed with this module's helpers.
mod queue;
/// `require` nodes (NodePool requirements on any well-known or user label), parsed with this module's helpers.
mod requirements;
/// `limits` nodes (NodePool cpu and memory limits).
mod limits;
pub use limits::ResourceLimits;
/// `overlay` blocks (NodeOverlays: price and capacity), parsed with this module's helpers.
mod overlay;
pub use overlay::{Overlay, OverlayPrice};
/// `static replicas=… max-nodes=…` (static NodePools) and what a static pool refuses.
mod static_pool;
pub use static_pool::StaticPool;
pub use requirements::{expressible as requirement_expressible, is_well_known as requirements_is_well_known, NodeRequirement};
pub(crate) use ops_intent::is_training_pool;

/// Lint/solver price-quality knob default: admit a type only if its $/accelerator-hour is at most this
/// multiple of the cheapest candidate's (see README "Price quality").
pub const DEFAULT_PRICE_RATIO_MAX: f64 = 1.6;

/// Help for label and taint keys (E0188, E0189): the Kubernetes rule in a line.
const LABEL_KEY_HELP: &str = "a key is a name of at most 63 characters (alphanumerics, '-', '_', '.', starting and ending with an alphanumeric), optionally after a lowercase DNS subdomain and '/': team, example.com/team";
/// Help for label and taint values (E0188, E0189).
const LABEL_VALUE_HELP: &str = "a value is empty or at most 63 characters: alphanumerics, '-', '_', '.', starting and ending with an alphanumeric";

/// Deepest `{ … }` nesting a profile may have (E0187). The language nests at most 4 deep; the cap keeps kdl-rs's
/// recursive descent (and fast_kdl's, which stops at 64) far from the 2 MiB stack of the threads that parse.
pub const MAX_NESTING: usize = 16;

#[derive(Debug, Clone)]
pub struct Profile {
    pub name: Spanned<String>,
    pub file: usize,
    /// Higher priority profiles get higher NodePool weights within their cluster.
    pub priority: Spanned<i64>,
    pub cluster: Cluster,
    pub budget_usd_per_hour: Option<Spanned<f64>>,
    pub pools: Vec<Pool>,
    /// Lint codes silenced for the whole profile.
    pub allow: Vec<Spanned<String>>,
    /// Workloads (PDB, HPA) and monitoring settings: see `ops`.
    pub ops: crate::ops::ProfileOps,
    /// Kueue queues: see `queue`.
    pub queues: Vec<crate::queue::Queue>,
}

#[derive(Debug, Clone)]
pub struct Cluster {
    pub name: Spanned<String>,
    pub region: Spanned<String>,
    pub zones: Vec<Spanned<String>>,
    /// Value of the `karpenter.sh/discovery` tag on subnets and security groups.
    pub discovery_tag: Spanned<String>,
    pub node_role: Spanned<String>,
    /// `instance-profile "<name>"`: a pre-provisioned IAM instance profile, rendered as the EC2NodeClass's
    /// `spec.instanceProfile` instead of `spec.role` (the CRD takes exactly one; `node-role` is then not written).
    pub instance_profile: Option<Spanned<String>>,
    /// EC2NodeClass AMI alias, e.g. `al2023@v20251023`.
    pub ami: Spanned<String>,
    /// True for EKS accelerated AMIs (NVIDIA driver and toolkit preinstalled).
    pub accelerated_ami: Spanned<bool>,
    /// Argo CD Application / Flux Kustomization pointing at out/<cluster>, when asked for.
    pub gitops: Option<Spanned<Gitops>>,
    /// `image-cache snapshot="snap-…"`: an EBS snapshot with the ML images pre-pulled, restored as the
    /// Bottlerocket data volume so new GPU nodes start without pulling multi-GB images.
    pub image_cache_snapshot: Option<Spanned<String>>,
    /// `user-data "…"`: the EC2NodeClass's userData, carried verbatim (before gpuplan's own Bottlerocket settings).
    pub user_data: Option<Spanned<String>>,
    /// `auto-mode #true`: the cluster runs EKS Auto Mode. Its NodePools reference an `eks.amazonaws.com/v1`
    /// NodeClass (emitted instead of an EC2NodeClass), select on `eks.amazonaws.com/instance-*` labels, and no GPU
    /// Operator or device-plugin add-on is installed (Auto Mode ships the NVIDIA and Neuron drivers and plugins).
    /// The span is the `auto-mode` line's (the cluster's name when absent).
    pub auto_mode: Spanned<bool>,
    /// `ephemeral-storage "200Gi"` (Auto Mode only): the NodeClass's `ephemeralStorage.size`.
    pub ephemeral_storage: Option<Spanned<String>>,
    /// `raw "EC2NodeClass" "<YAML>"` (or `"NodeClass"`): fragments merged into every node class of the profile.
    pub raws: Vec<Spanned<Raw>>,
    pub span: Span,
}

/// `gitops repo="…" revision="main" path="out" argocd=#true flux=#false` in a cluster block.
#[derive(Debug, Clone, PartialEq)]
pub struct Gitops {
    pub repo: String,
    pub revision: String,
    pub path: String,
    pub argocd: bool,
    pub flux: bool,
    /// Flux Kustomizations (in flux-system) that install what the output needs first — Karpenter's and the GPU
    /// Operator's CRDs: the Flux Kustomization's `dependsOn`.
    pub depends_on: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// One pool allowing spot and on-demand (Karpenter prefers spot within the pool).
    General,
    /// Spot first, on-demand fallback: two NodePools.
    InferenceSpot,
    InferenceOnDemand,
    TrainingOnDemand,
    BatchSpot,
    /// An ordered chain of user-defined `tier`s.
    Tiered,
}

impl Preset {
    pub const NAMES: [&'static str; 6] =
        ["general", "inference-spot", "inference-on-demand", "training-on-demand", "batch-spot", "tiered"];

    fn parse(name: &str) -> Option<Preset> {
        Some(match name {
            "general" => Preset::General,
            "inference-spot" => Preset::InferenceSpot,
            "inference-on-demand" => Preset::InferenceOnDemand,
            "training-on-demand" => Preset::TrainingOnDemand,
            "batch-spot" => Preset::BatchSpot,
            "tiered" => Preset::Tiered,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        Preset::NAMES[self as usize]
    }
}

#[derive(Debug, Clone)]
pub struct Pool {
    pub name: Spanned<String>,
    pub preset: Spanned<Preset>,
    /// In fallback order: the first tier gets the highest weight. Each tier becomes one NodePool.
    pub tiers: Vec<Tier>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Tier {
    /// The NodePool name.
    pub name: Spanned<String>,
    pub settings: Settings,
}

/// GPU sharing on the pool's nodes.
#[derive(Debug, Clone, PartialEq)]
pub enum Sharing {
    /// Device-plugin time-slicing: each GPU is advertised `replicas` times.
    TimeSlicing { replicas: u32 },
    /// A mig-parted configuration name (e.g. `all-1g.10gb`), applied via the `nvidia.com/mig.config` label.
    Mig { config: String },
}

/// On-demand capacity reservations or capacity blocks the pool launches into.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reserved {
    pub ids: Vec<String>,
    pub tags: BTreeMap<String, String>,
    /// The reserved instance type and how many instances the reservation holds: a reservation is billed
    /// whether used or not, so its full cost is fixed and counted first against the budget.
    pub instance_type: Option<Spanned<String>>,
    pub instances: Option<Spanned<u32>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    pub effect: String,
}

pub use crate::catalog::cost::DisruptionBudget;

/// A weekly maintenance window, UTC: the only time training nodes may be disrupted voluntarily.
#[derive(Debug, Clone, PartialEq)]
pub struct MaintenanceWindow {
    /// 0 = Sunday … 6 = Saturday (cron numbering).
    pub weekday: u32,
    pub start_minute_of_day: u32,
    pub duration_minutes: u32,
    /// Nodes that may be disrupted at once inside the window.
    pub nodes: String,
}

#[derive(Debug, Clone)]
pub struct Disruption {
    pub consolidation_policy: Spanned<String>,
    pub consolidate_after: Spanned<String>,
    pub expire_after: Spanned<String>,
    pub termination_grace_period: Option<Spanned<String>>,
    pub maintenance_window: Option<Spanned<MaintenanceWindow>>,
    /// Explicit budgets; when given they replace the preset's.
    pub budgets: Vec<Spanned<DisruptionBudget>>,
}

/// Everything that decides one NodePool.
#[derive(Debug, Clone)]
pub struct Settings {
    pub accelerator: Spanned<AcceleratorKind>,
    /// GPU or Neuron device names, case-insensitive ("A10G", "L4", "Inferentia2"). Empty = any.
    pub accelerator_names: Vec<Spanned<String>>,
    pub memory_min_mib: Option<Spanned<u64>>,
    pub per_node_min: Option<Spanned<u32>>,
    pub per_node_max: Option<Spanned<u32>>,
    pub arch: Vec<Spanned<Arch>>,
    pub generation_min: Option<Spanned<u32>>,
    pub families: Vec<Spanned<String>>,
    pub exclude_families: Vec<Spanned<String>>,
    /// Named types: the only way fractional-GPU types get in.
    pub types: Vec<Spanned<String>>,
    pub exclude_types: Vec<Spanned<String>>,
    pub efa: Option<Spanned<bool>>,
    /// `efa #true zone="…"`: the one zone the pool's nodes launch in (default: chosen by the solver). EFA traffic
    /// stays within a subnet, hence a zone, so a multi-node job must not spread.
    pub efa_zone: Option<Spanned<String>>,
    pub capacity: Spanned<Vec<CapacityType>>,
    pub max_accelerators: Option<Spanned<u32>>,
    /// A CPU pool's limit in vCPUs (`max-cpu`): the same role as `max_accelerators` (see [`Settings::max_units`]).
    pub max_cpu: Option<Spanned<u32>>,
    /// Explicit NodePool weight (1–100); computed from priority and tier order when absent.
    pub weight: Option<Spanned<u32>>,
    pub price_ratio_max: Spanned<f64>,
    /// What bounds a spot node's price in the worst case (see `cost`): on-demand (guaranteed) by default.
    pub spot_ceiling: Spanned<crate::catalog::cost::SpotCeiling>,
    /// `scratch "instance-store"`: local NVMe striped into one RAID0 volume for the kubelet and containers
    /// (EC2NodeClass `instanceStorePolicy: RAID0`); the training preset's default.
    pub instance_store_scratch: Spanned<bool>,
    pub sharing: Option<Spanned<Sharing>>,
    pub reserved: Option<Spanned<Reserved>>,
    pub disruption: Disruption,
    pub labels: BTreeMap<String, Spanned<String>>,
    pub taints: Vec<Spanned<Taint>>,
    /// `require`: NodePool requirements beyond the dedicated settings, one per key.
    pub requires: Vec<Spanned<NodeRequirement>>,
    /// `limits cpu=… memory=…`: the NodePool's cpu and memory limits.
    pub resource_limits: Option<Spanned<ResourceLimits>>,
    /// `static replicas=…`: the NodePool keeps this many nodes whatever the pods (see `static_pool`).
    pub static_pool: Option<Spanned<StaticPool>>,
    /// `accelerator-taint #false`: no `<resource>:NoSchedule` taint (lint GP007 says why it is worth keeping).
    pub accelerator_taint: Spanned<bool>,
    pub allow: Vec<Spanned<String>>,
    /// `kubelet { … }`: the pool's class's `spec.kubelet`, CRD field names (see `raw`).
    pub kubelet: Option<Spanned<serde_json::Map<String, serde_json::Value>>>,
    /// `raw "<Kind>" "<YAML>"`: fragments merged into the pool's NodePool or class, the pool's then the tier's.
    pub raws: Vec<Spanned<Raw>>,
    /// `overlay` blocks: NodeOverlays scoped to the NodePools that carry them (a pool's are inherited by its tiers).
    pub overlays: Vec<Spanned<Overlay>>,
}

impl Settings {
    /// The pool's limit in its own unit: vCPUs for a CPU pool (`max-cpu`), physical accelerators otherwise.
    pub fn max_units(&self) -> Option<&Spanned<u32>> {
        if self.accelerator.value == AcceleratorKind::Cpu { self.max_cpu.as_ref() } else { self.max_accelerators.as_ref() }
    }
}

/// Parses every profile; returns them with all diagnostics (errors and warnings) found, in file order. Files
/// are read and parsed on every core; each file is parsed on its own.
pub fn parse_files(paths: &[&Path], sources: &mut Sources) -> (Vec<Profile>, Vec<ProfileDiagnostic>) {
    use rayon::prelude::*;
    // Each file read and its repository path resolved (a few system calls each) on every core.
    let resolver = crate::diagnostic::RepositoryPaths::new();
    let texts: Vec<(std::io::Result<String>, String)> = paths.par_iter().map(|p| (crate::input::read_to_string(p), resolver.resolve(p))).collect();
    let mut diagnostics = Vec::new();
    let mut readable = Vec::new();
    for (path, (text, name)) in paths.iter().zip(texts) {
        match text {
            Ok(text) => readable.push((sources.add(path, name, text), *path)),
            Err(err) => {
                let file = sources.add(path, name, String::new());
                diagnostics.push(
                    sources
                        .error(Span { file, offset: 0, len: 0 }, "E0001", format!("cannot read profile: {err}"))
                        .help("check the path; `gpuplan compile` reads profiles/*.kdl by default"),
                );
            }
        }
    }
    let sources: &Sources = sources;
    let parsed: Vec<(Option<Profile>, Vec<ProfileDiagnostic>)> = readable
        .par_iter()
        .map(|&(file, path)| {
            let mut parser = Parser { sources, file, diagnostics: Vec::new() };
            let profile = parser.parse_profile(path);
            (profile, parser.diagnostics)
        })
        .collect();
    let mut profiles = Vec::with_capacity(parsed.len());
    for (profile, found) in parsed {
        diagnostics.extend(found);
        profiles.extend(profile);
    }
    (profiles, diagnostics)
}

struct Parser<'s> {
    sources: &'s Sources,
    file: usize,
    diagnostics: Vec<ProfileDiagnostic>,
}

mod fast_kdl;
/// `kubelet { … }` and `raw "<Kind>" "<YAML>"`.
pub mod raw;
pub use raw::Raw;
/// The language's nodes: names valid at each level (for unknown-name errors and their "did you mean") come
/// from one table, which `gpuplan schema` prints.
pub mod schema;

impl Parser<'_> {
    fn span(&self, span: miette::SourceSpan) -> Span {
        Span::new(self.file, span)
    }

    fn error_labelled(&mut self, span: Span, code: &'static str, message: impl Into<String>, label: &str, help: &str) {
        let d = self.sources.error(span, code, message).label(label).help(help);
        self.diagnostics.push(d);
    }

    fn error(&mut self, span: Span, code: &'static str, message: impl Into<String>, help: impl Into<String>) {
        let help = help.into();
        let mut d = self.sources.error(span, code, message);
        if !help.is_empty() {
            d = d.help(help);
        }
        self.diagnostics.push(d);
    }

    fn unknown_node(&mut self, node: &KdlNode, valid: &[&str], context: &str) {
        let name = node.name().value();
        let mut help = did_you_mean(name, valid.iter().copied()).unwrap_or_default();
        if !help.is_empty() {
            help.push(' ');
        }
        help.push_str(&format!("valid here: {}", valid.join(", ")));
        self.error(
            self.span(node.name().span()),
            "E0102",
            format!("unknown node `{}` in {context}", crate::input::excerpt(name)),
            help,
        );
    }

    /// Rejects properties other than `allowed`, and arguments beyond `max_args`.
    fn check_entries(&mut self, node: &KdlNode, allowed: &[&str], max_args: usize) {
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
                        "E0103",
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
                            "E0104",
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

    fn expect_string(&mut self, entry: &KdlEntry, what: &str) -> Option<Spanned<String>> {
        let span = self.span(entry.span());
        match entry.value() {
            KdlValue::String(s) => Some(Spanned::new(s.clone(), span)),
            other => {
                self.error(
                    span,
                    "E0105",
                    format!("{what} must be a string, found {}", describe(other)),
                    format!("quote it: \"{}\"", value_text(other)),
                );
                None
            }
        }
    }

    fn expect_integer(&mut self, entry: &KdlEntry, what: &str, min: i128, max: i128) -> Option<Spanned<i128>> {
        let span = self.span(entry.span());
        match entry.value() {
            KdlValue::Integer(i) if (min..=max).contains(i) => Some(Spanned::new(*i, span)),
            KdlValue::Integer(i) => {
                self.error(span, "E0106", format!("{what} must be between {min} and {max}, found {i}"), "");
                None
            }
            other => {
                self.error(
                    span,
                    "E0105",
                    format!("{what} must be an integer, found {}", describe(other)),
                    "write a whole number without quotes, e.g. 8",
                );
                None
            }
        }
    }

    fn expect_number(&mut self, entry: &KdlEntry, what: &str) -> Option<Spanned<f64>> {
        let span = self.span(entry.span());
        let value = match entry.value() {
            KdlValue::Integer(i) => *i as f64,
            KdlValue::Float(f) => *f,
            other => {
                self.error(
                    span,
                    "E0105",
                    format!("{what} must be a number, found {}", describe(other)),
                    "write a number without quotes or units, e.g. 150 or 12.5",
                );
                return None;
            }
        };
        if !value.is_finite() || value <= 0.0 {
            self.error(span, "E0106", format!("{what} must be a positive number, found {value}"), "");
            return None;
        }
        Some(Spanned::new(value, span))
    }

    fn expect_bool(&mut self, entry: &KdlEntry, what: &str) -> Option<Spanned<bool>> {
        let span = self.span(entry.span());
        match entry.value() {
            KdlValue::Bool(b) => Some(Spanned::new(*b, span)),
            other => {
                self.error(
                    span,
                    "E0105",
                    format!("{what} must be #true or #false, found {}", describe(other)),
                    "KDL v2 booleans are written #true and #false",
                );
                None
            }
        }
    }

    /// The node's single argument as a string, or an error pointing at the node.
    fn single_string(&mut self, node: &KdlNode) -> Option<Spanned<String>> {
        self.check_entries(node, &[], 1);
        match args(node).next() {
            Some(entry) => self.expect_string(entry, &format!("`{}`", node.name().value())),
            None => {
                self.error(
                    self.span(node.span()),
                    "E0107",
                    format!("`{}` needs a value", node.name().value()),
                    format!("write it as {} \"…\"", node.name().value()),
                );
                None
            }
        }
    }

    fn strings(&mut self, node: &KdlNode) -> Vec<Spanned<String>> {
        self.check_entries(node, &[], usize::MAX);
        let entries: Vec<&KdlEntry> = args(node).collect();
        if entries.is_empty() {
            self.error(
                self.span(node.span()),
                "E0107",
                format!("`{}` needs at least one value", node.name().value()),
                "",
            );
        }
        entries.into_iter().filter_map(|e| self.expect_string(e, &format!("`{}`", node.name().value()))).collect()
    }

    fn no_children(&mut self, node: &KdlNode) {
        if let Some(children) = node.children() {
            self.error(
                self.span(children.span()),
                "E0108",
                format!("`{}` takes no block", node.name().value()),
                "remove the { … }",
            );
        }
    }

    fn parse_profile(&mut self, path: &Path) -> Option<Profile> {
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
            self.error(span, "E0187", message, help);
            return None;
        }
        // The common subset of KDL is read by the fast path; anything else (and every error, with its diagnostics)
        // by kdl-rs.
        let parsed = fast_kdl::parse(&text).map(Ok).unwrap_or_else(|| parse_on_a_large_stack(&text));
        let doc = match parsed {
            Ok(doc) => doc,
            Err(err) => {
                for d in err.diagnostics {
                    let message = d.message.clone().unwrap_or_else(|| "invalid KDL".to_string());
                    let help = d.help.clone().unwrap_or_else(|| {
                        "gpuplan profiles are KDL v2 documents (https://kdl.dev): strings in double quotes, booleans #true/#false".into()
                    });
                    let mut diag = self.sources.error(self.span(d.span), "E0101", format!("malformed KDL: {message}"), );
                    diag = diag.help(help).label(d.label.clone().unwrap_or_else(|| "here".into()));
                    self.diagnostics.push(diag);
                }
                return None;
            }
        };

        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let whole = Span { file: self.file, offset: 0, len: 0 };
        let mut name = Spanned::new(stem, whole);
        let mut priority = Spanned::new(0i64, whole);
        let mut cluster: Option<Cluster> = None;
        let mut budget = None;
        let mut pool_nodes = Vec::new();
        let mut allow = Vec::new();
        let (mut workload_nodes, mut monitoring_nodes, mut queue_nodes) = (Vec::new(), Vec::new(), Vec::new());

        for node in doc.nodes() {
            match node.name().value() {
                "profile" => {
                    self.check_entries(node, &["priority"], 1);
                    self.no_children(node);
                    if let Some(arg) = args(node).next() {
                        if let Some(n) = self.expect_string(arg, "the profile name") {
                            self.check_name(&n, "profile");
                            name = n;
                        }
                    }
                    if let Some(p) = prop(node, "priority") {
                        if let Some(p) = self.expect_integer(p, "priority", 0, 1000) {
                            priority = Spanned::new(p.value as i64, p.span);
                        }
                    }
                }
                "cluster" => {
                    if cluster.is_some() {
                        self.error(
                            self.span(node.span()),
                            "E0109",
                            "a profile has one cluster",
                            "split pools for another cluster into their own profile file",
                        );
                        continue;
                    }
                    cluster = self.parse_cluster(node);
                }
                "budget" => {
                    self.check_entries(node, &["usd-per-hour"], 0);
                    self.no_children(node);
                    match prop(node, "usd-per-hour") {
                        Some(entry) => budget = self.expect_number(entry, "budget usd-per-hour"),
                        None => self.error(
                            self.span(node.span()),
                            "E0107",
                            "`budget` needs usd-per-hour",
                            "write it as budget usd-per-hour=150",
                        ),
                    }
                }
                "pool" => pool_nodes.push(node),
                "allow" => allow.extend(self.strings(node)),
                "workload" => workload_nodes.push(node),
                "monitoring" => monitoring_nodes.push(node),
                "queue" => queue_nodes.push(node),
                _ => self.unknown_node(node, &schema::names("profile"), "a profile"),
            }
        }

        let Some(cluster) = cluster else {
            self.error(
                whole,
                "E0110",
                "the profile has no `cluster` block",
                "add cluster \"name\" { region \"us-east-1\"; zones \"us-east-1a\"; ami \"al2023@vYYYYMMDD\" }",
            );
            return None;
        };
        let wrote_pools = !pool_nodes.is_empty();
        let pools: Vec<Pool> = pool_nodes.into_iter().filter_map(|n| self.parse_pool(n)).collect();
        if !wrote_pools {
            self.error(whole, "E0111", "the profile has no `pool`", "add pool \"name\" preset=\"inference-spot\" { gpu { … } }");
        }
        let mut seen: BTreeMap<String, Span> = BTreeMap::new();
        for tier in pools.iter().flat_map(|p| &p.tiers) {
            if let Some(first) = seen.insert(tier.name.value.clone(), tier.name.span) {
                let first_at = self.sources.location(first);
                self.error(
                    tier.name.span,
                    "E0112",
                    format!("NodePool name `{}` is used twice in this profile (first at {first_at})", tier.name.value),
                    "give each pool and tier a distinct name",
                );
            }
        }
        self.check_overlays(&pools);
        let ops = self.parse_ops(&workload_nodes, &monitoring_nodes, &pools);
        let queues = self.parse_queues(&queue_nodes, &pools);
        Some(Profile { name, file: self.file, priority, cluster, budget_usd_per_hour: budget, pools, allow, ops, queues })
    }

    /// Kubernetes object names: lowercase RFC 1123 labels (we use them as NodePool names).
    fn check_name(&mut self, name: &Spanned<String>, what: &str) {
        let ok = !name.is_empty()
            && name.len() <= 50
            && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !name.starts_with('-')
            && !name.ends_with('-');
        if !ok {
            self.error(
                name.span,
                "E0113",
                format!("{what} name `{}` is not a valid Kubernetes name", crate::input::excerpt(&name.value)),
                "use at most 50 lowercase letters, digits and '-', starting and ending with a letter or digit",
            );
        }
    }

    /// A value that lands in a generated object, checked by `rule` (see `crate::names`): `code` at its span
    /// otherwise, quoting at most the start of a long value.
    fn check_value(&mut self, value: &Spanned<String>, rule: impl Fn(&str) -> Result<(), String>, code: &'static str, what: &str, help: &str) {
        if let Err(reason) = rule(&value.value) {
            let message = format!("{what} `{}` is not valid: {reason}", crate::input::excerpt(&value.value));
            self.error(value.span, code, message, help);
        }
    }

    /// E0316: `node-role` and `instance-profile` both written (the EC2NodeClass CRD takes exactly one of `role` and
    /// `instanceProfile`: karpenter.k8s.aws_ec2nodeclasses.yaml v1.14.1, "must specify exactly one of ['role',
    /// 'instanceProfile']"). E0317: `instance-profile` in EKS Auto Mode, whose NodeClass names its nodes' identity by
    /// role: the EKS User Guide's Node Class Specification ("Create a Node Class for Amazon EKS") documents `role` as
    /// required and no instance profile, and Auto Mode's access entries are per role.
    fn check_node_identity(&mut self, node_role: Option<&Spanned<String>>, instance_profile: Option<&Spanned<String>>, auto_mode: bool) {
        let Some(profile) = instance_profile else { return };
        if let Some(role) = node_role {
            let message = format!("`instance-profile` and `node-role` (at {}) are both written: a node class takes exactly one", self.sources.location(role.span));
            self.error(profile.span, "E0316", message, "keep `instance-profile` for a pre-provisioned instance profile (Karpenter then manages none), or `node-role` for Karpenter to create one for the role; remove the other line");
        } else if auto_mode {
            self.error(
                profile.span,
                "E0317",
                "an EKS Auto Mode NodeClass names its nodes' IAM identity by role, not by instance profile",
                "write node-role \"<the role in the instance profile>\" (it needs an EKS access entry), or leave out `auto-mode #true` to emit an EC2NodeClass, which takes an instanceProfile",
            );
        }
    }

    /// E0270–E0272: cluster settings EKS Auto Mode cannot honour (it picks and manages the node image itself: EKS User
    /// Guide, "Learn about Amazon EKS Auto Mode managed instances", AMI support; a NodeClass has no AMI, user-data or
    /// block-device fields: "Create a Node Class for Amazon EKS").
    fn check_auto_mode_cluster(&mut self, written: AutoModeWritten) {
        if !written.ami.is_empty() {
            self.error_labelled(
                written.ami.span,
                "E0270",
                format!("EKS Auto Mode chooses the node image itself: the cluster cannot pin AMI `{}`", written.ami.value),
                "an AMI alias",
                "leave out `ami` (Auto Mode updates its Bottlerocket-based image weekly and replaces nodes within 21 days), or leave out `auto-mode #true` to emit an EC2NodeClass for self-managed Karpenter",
            );
        }
        if let Some(snap) = written.image_cache {
            self.error_labelled(
                snap.span,
                "E0271",
                "EKS Auto Mode cannot restore an image cache: its NodeClass has no block device mappings or snapshots",
                "an EBS snapshot",
                "leave out `image-cache` (size the node's disk with `ephemeral-storage \"…Gi\"`), or leave out `auto-mode #true`",
            );
        }
        if let Some(span) = written.accelerated_ami {
            self.error_labelled(
                span,
                "E0272",
                "`accelerated-ami` has no meaning in EKS Auto Mode: Auto Mode ships and manages the NVIDIA and Neuron drivers",
                "a driver setting",
                "leave out `accelerated-ami` (no GPU Operator is installed in an Auto Mode cluster)",
            );
        }
        if let Some(user_data) = written.user_data {
            self.error_labelled(
                user_data.span,
                "E0279",
                "EKS Auto Mode nodes take no user data: its NodeClass has no userData field, so this would be dropped",
                "user data",
                "leave out `user-data` (Auto Mode configures its nodes itself), or leave out `auto-mode #true` to emit an EC2NodeClass that carries it",
            );
        }
    }

    fn parse_cluster(&mut self, node: &KdlNode) -> Option<Cluster> {
        self.check_entries(node, &[], 1);
        let name = args(node).next().and_then(|e| self.expect_string(e, "the cluster name"));
        let Some(name) = name else {
            self.error(self.span(node.span()), "E0107", "`cluster` needs a name", "write cluster \"ml-prod\" { … }");
            return None;
        };
        self.check_name(&name, "cluster");
        let node_span = self.span(node.name().span());
        let mut region = None;
        let mut zones = Vec::new();
        let mut discovery_tag = None;
        let mut node_role = None;
        let mut instance_profile = None;
        let mut ami = None;
        let mut accelerated_ami = Spanned::new(true, node_span);
        let mut accelerated_ami_written = false;
        let mut auto_mode = Spanned::new(false, node_span);
        let mut ephemeral_storage = None;
        let mut gitops = None;
        let mut image_cache_snapshot: Option<Spanned<String>> = None;
        let mut user_data = None;
        let mut raws = Vec::new();
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            if child.name().value() != "gitops" {
                self.no_children(child);
            }
            match child.name().value() {
                "region" => region = self.single_string(child),
                "image-cache" => {
                    self.check_entries(child, &["snapshot"], 0);
                    match prop(child, "snapshot").and_then(|e| self.expect_string(e, "snapshot")) {
                        Some(snap) if snap.starts_with("snap-") && snap.len() > 5 => image_cache_snapshot = Some(snap),
                        Some(snap) => self.error(snap.span, "E0105", format!("`{}` is not an EBS snapshot id", snap.value), "write image-cache snapshot=\"snap-0123456789abcdef0\""),
                        None => self.error(self.span(child.span()), "E0107", "`image-cache` needs snapshot", "write image-cache snapshot=\"snap-0123456789abcdef0\""),
                    }
                }
                "zones" => zones = self.strings(child),
                "discovery-tag" => {
                    discovery_tag = self.single_string(child);
                    if let Some(tag) = &discovery_tag {
                        let non_empty = |t: &str| if t.is_empty() { Err("it is empty, and Karpenter refuses an empty tag value in a selector term".to_string()) } else { Ok(()) };
                        self.check_value(tag, non_empty, "E0191", "discovery tag", "write the karpenter.sh/discovery tag value of the cluster's subnets, or leave the line out (the cluster name)");
                    }
                }
                "node-role" => {
                    node_role = self.single_string(child);
                    if let Some(role) = &node_role {
                        self.check_value(role, crate::names::check_role_name, "E0191", "node role", "write the IAM role name of the nodes, or leave the line out (KarpenterNodeRole-<cluster>)");
                    }
                }
                "instance-profile" => {
                    // Spanned at the line's name: E0316 and E0317 are about the line, not its value.
                    if let Some(profile) = self.single_string(child) {
                        self.check_value(&profile, crate::names::check_instance_profile_name, "E0191", "instance profile", "write the name of the IAM instance profile the nodes launch with (already created, with the node role in it)");
                        instance_profile = Some(Spanned::new(profile.value, self.span(child.name().span())));
                    }
                }
                "ami" => ami = self.single_string(child),
                "user-data" => user_data = self.single_string(child),
                "raw" => raws.extend(self.parse_raw(child, &["EC2NodeClass", "NodeClass"])),
                "accelerated-ami" => {
                    self.check_entries(child, &[], 1);
                    if let Some(b) = args(child).next().and_then(|e| self.expect_bool(e, "accelerated-ami")) {
                        accelerated_ami = b;
                        accelerated_ami_written = true;
                    }
                }
                "auto-mode" => {
                    self.check_entries(child, &[], 1);
                    if let Some(b) = args(child).next().and_then(|e| self.expect_bool(e, "auto-mode")) {
                        auto_mode = Spanned::new(b.value, self.span(child.span()));
                    }
                }
                "ephemeral-storage" => {
                    ephemeral_storage = self.single_string(child);
                    if let Some(size) = &ephemeral_storage {
                        self.check_value(size, check_ephemeral_storage, "E0275", "ephemeral storage size", "write a size in Auto Mode's ranges: 1-59000Gi, 1-64000G, 1-58Ti or 1-64T, e.g. ephemeral-storage \"200Gi\"");
                    }
                }
                "gitops" => {
                    self.check_entries(child, &["repo", "revision", "path", "argocd", "flux"], 0);
                    let span = self.span(child.span());
                    let text = |p: &mut Self, key: &str, default: &str| {
                        prop(child, key).and_then(|e| p.expect_string(e, key)).map_or_else(|| default.to_string(), |v| v.value)
                    };
                    let flag = |p: &mut Self, key: &str, default: bool| {
                        prop(child, key).and_then(|e| p.expect_bool(e, key)).map_or(default, |v| v.value)
                    };
                    let repo = text(self, "repo", "");
                    if repo.is_empty() {
                        self.error(span, "E0107", "`gitops` needs repo", "write gitops repo=\"https://github.com/org/platform.git\" revision=\"main\"");
                    }
                    let mut depends_on = Vec::new();
                    for grandchild in child.children().map(|c| c.nodes()).unwrap_or_default() {
                        self.no_children(grandchild);
                        match grandchild.name().value() {
                            "depends-on" => depends_on.extend(self.strings(grandchild).into_iter().map(|d| d.value)),
                            _ => self.unknown_node(grandchild, &schema::names("gitops"), "`gitops`"),
                        }
                    }
                    let settings = Gitops {
                        repo,
                        revision: text(self, "revision", "HEAD"),
                        path: text(self, "path", "out"),
                        argocd: flag(self, "argocd", true),
                        flux: flag(self, "flux", false),
                        depends_on,
                    };
                    if settings.flux && settings.revision == "HEAD" {
                        self.error(
                            span,
                            "E0157",
                            "Flux needs the revision to follow: `gitops` has none (HEAD)",
                            "a GitRepository without a ref follows `master`, not the default branch: write revision=\"main\" (a branch, a v1.2.3 tag or a commit)",
                        );
                    }
                    if settings.argocd && settings.flux {
                        self.error(
                            span,
                            "E0155",
                            "`gitops` asks for both Argo CD and Flux on the same path",
                            "two pruning controllers fight over the same objects (each reverts the other's applies and prunes what its own source lacks): keep one, argocd=#true flux=#false or argocd=#false flux=#true",
                        );
                    }
                    gitops = Some(Spanned::new(settings, span));
                }
                _ => self.unknown_node(child, &schema::names("cluster"), "`cluster`"),
            }
        }
        let Some(region) = region else {
            self.error(node_span, "E0107", "the cluster has no `region`", "add region \"us-east-1\" to the cluster block");
            return None;
        };
        if !region.value.split('-').count().eq(&3) || !region.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
            self.error(region.span, "E0114", format!("`{}` is not an AWS region name", region.value), "e.g. us-east-1");
        }
        for zone in &zones {
            let suffix_ok = zone.strip_prefix(region.as_str()).is_some_and(|s| s.len() == 1 && s.chars().all(|c| c.is_ascii_lowercase()));
            if !suffix_ok {
                self.error(
                    zone.span,
                    "E0114",
                    format!("zone `{}` is not an availability zone of {}", zone.value, region.value),
                    format!("zones of {0} look like {0}a, {0}b, …", region.value),
                );
            }
        }
        self.check_node_identity(node_role.as_ref(), instance_profile.as_ref(), auto_mode.value);
        let ami = ami.unwrap_or_else(|| Spanned::new(String::new(), node_span));
        if auto_mode.value {
            let written = AutoModeWritten { ami: &ami, image_cache: image_cache_snapshot.as_ref(), accelerated_ami: accelerated_ami_written.then_some(accelerated_ami.span), user_data: user_data.as_ref() };
            self.check_auto_mode_cluster(written);
        } else if let Some(size) = &ephemeral_storage {
            self.error(size.span, "E0276", "`ephemeral-storage` is an EKS Auto Mode NodeClass setting, and the cluster is not in Auto Mode", "add `auto-mode #true` to the cluster block, or leave the line out (EC2NodeClasses get a 200Gi gp3 volume)");
        } else if ami.is_empty() {
            self.error(
                node_span,
                "E0115",
                "the cluster has no `ami`",
                "pin an EC2NodeClass AMI alias, e.g. ami \"al2023@v20251023\" (see README: why not @latest)",
            );
        } else if !valid_ami_alias(&ami) {
            self.error(
                ami.span,
                "E0115",
                format!("`{}` is not an AMI alias", ami.value),
                "write family@version, e.g. al2023@v20251023 or bottlerocket@v1.50.0",
            );
        }
        if let Some(snap) = &image_cache_snapshot
            && !auto_mode.value
            && !ami.value.starts_with("bottlerocket@")
        {
            self.error(
                snap.span,
                "E0156",
                format!("`image-cache` needs a Bottlerocket AMI, but the cluster uses `{}`", ami.value),
                "AL2023 has one root volume and no separate data volume to restore the snapshot into: use ami \"bottlerocket@…\" (images live on /dev/xvdb) or remove image-cache",
            );
        }
        Some(Cluster {
            image_cache_snapshot,
            user_data,
            raws,
            auto_mode,
            ephemeral_storage,
            discovery_tag: discovery_tag.unwrap_or_else(|| name.clone()),
            node_role: node_role.unwrap_or_else(|| Spanned::new(format!("KarpenterNodeRole-{}", name.value), name.span)),
            instance_profile,
            name,
            region,
            zones,
            ami,
            accelerated_ami,
            gitops,
            span: node_span,
        })
    }

    fn parse_pool(&mut self, node: &KdlNode) -> Option<Pool> {
        self.check_entries(node, &["preset"], 1);
        let name = args(node).next().and_then(|e| self.expect_string(e, "the pool name"));
        let Some(name) = name else {
            self.error(self.span(node.span()), "E0107", "`pool` needs a name", "write pool \"llm\" preset=\"inference-spot\" { … }");
            return None;
        };
        self.check_name(&name, "pool");
        let preset = match prop(node, "preset") {
            None => Spanned::new(Preset::General, name.span),
            Some(entry) => {
                let s = self.expect_string(entry, "preset")?;
                match Preset::parse(&s) {
                    Some(p) => Spanned::new(p, s.span),
                    None => {
                        let mut help = did_you_mean(&s, Preset::NAMES).unwrap_or_default();
                        if !help.is_empty() {
                            help.push(' ');
                        }
                        help.push_str(&format!("presets: {}", Preset::NAMES.join(", ")));
                        self.error(s.span, "E0116", format!("unknown preset `{}`", s.value), help);
                        return None;
                    }
                }
            }
        };
        let mut settings = preset_defaults(preset.value, preset.span);
        self.one_kind(node.children().map(|c| c.nodes()).unwrap_or_default(), "the pool");
        let mut tier_nodes = Vec::new();
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            if child.name().value() == "tier" {
                tier_nodes.push(child);
            } else {
                self.apply_setting(child, &mut settings, "`pool`");
            }
        }

        let mut tiers = Vec::new();
        let preset_tiers: Vec<(&str, Vec<CapacityType>)> = match preset.value {
            Preset::InferenceSpot => {
                vec![("spot", vec![CapacityType::Spot]), ("on-demand", vec![CapacityType::OnDemand])]
            }
            Preset::Tiered => Vec::new(),
            _ => vec![("", settings.capacity.value.clone())],
        };
        if preset.value == Preset::Tiered {
            if let Some(r) = &settings.reserved {
                self.error(
                    r.span,
                    "E0133",
                    "a `reserved` block at the level of a tiered pool would make every tier reserved",
                    "move it into the tier that launches into the reservation: tier \"reserved\" { reserved { … } }",
                );
            }
            if tier_nodes.is_empty() {
                self.error(
                    preset.span,
                    "E0117",
                    "a `tiered` pool needs at least one `tier`",
                    "add tier \"a10g-spot\" capacity=\"spot\" { gpu { name \"A10G\" } } in fallback order",
                );
            }
            for tier_node in tier_nodes {
                self.check_entries(tier_node, &["capacity"], 1);
                let Some(tier_name) = args(tier_node).next().and_then(|e| self.expect_string(e, "the tier name")) else {
                    self.error(self.span(tier_node.span()), "E0107", "`tier` needs a name", "write tier \"t4-spot\" capacity=\"spot\" { … }");
                    continue;
                };
                let mut tier_settings = settings.clone();
                if let Some(entry) = prop(tier_node, "capacity") {
                    if let Some(c) = self.expect_string(entry, "capacity").and_then(|c| self.capacity_type(&c)) {
                        tier_settings.capacity = Spanned::new(vec![c.value], c.span);
                    }
                }
                self.one_kind(tier_node.children().map(|c| c.nodes()).unwrap_or_default(), "the tier");
                for child in tier_node.children().map(|c| c.nodes()).unwrap_or_default() {
                    self.apply_setting(child, &mut tier_settings, "`tier`");
                }
                if let Some(r) = tier_settings.reserved.as_ref().filter(|_| !tier_settings.capacity.contains(&CapacityType::Reserved)) {
                    tier_settings.capacity = Spanned::new(vec![CapacityType::Reserved], r.span);
                }
                let full = Spanned::new(format!("{}-{}", name.value, tier_name.value), tier_name.span);
                self.check_name(&full, "tier");
                tiers.push(Tier { name: full, settings: tier_settings });
            }
        } else {
            for tier_node in tier_nodes {
                self.error(
                    self.span(tier_node.name().span()),
                    "E0117",
                    format!("`tier` is only valid in a pool with preset=\"tiered\" (this pool is {})", preset.value.as_str()),
                    "use preset=\"tiered\" to write your own fallback chain",
                );
            }
            tiers.extend(reservation_tier(&name, &mut settings));
            for (suffix, capacity) in preset_tiers {
                let mut tier_settings = settings.clone();
                if !suffix.is_empty() {
                    tier_settings.capacity = Spanned::new(capacity, settings.capacity.span);
                }
                let tier_name = if suffix.is_empty() { name.value.clone() } else { format!("{}-{suffix}", name.value) };
                tiers.push(Tier { name: Spanned::new(tier_name, name.span), settings: tier_settings });
            }
        }
        for tier in &tiers {
            self.check_settings(&tier.settings);
        }
        self.one_kind_of_tiers(&tiers);
        self.check_static(&preset, &tiers);
        Some(Pool { name, preset, tiers, span: self.span(node.name().span()) })
    }

    fn capacity_type(&mut self, s: &Spanned<String>) -> Option<Spanned<CapacityType>> {
        let c = match s.as_str() {
            "spot" => CapacityType::Spot,
            "on-demand" => CapacityType::OnDemand,
            "reserved" => CapacityType::Reserved,
            other => {
                let help = did_you_mean(other, ["spot", "on-demand", "reserved"]).unwrap_or_else(|| "one of spot, on-demand, reserved".into());
                self.error(s.span, "E0118", format!("unknown capacity type `{other}`"), help);
                return None;
            }
        };
        Some(Spanned::new(c, s.span))
    }

    /// Applies one setting node (valid in `pool` and `tier`) over the inherited settings.
    fn apply_setting(&mut self, node: &KdlNode, s: &mut Settings, context: &str) {
        let name = node.name().value();
        let node_span = self.span(node.span());
        if !matches!(name, "gpu" | "neuron" | "cpu" | "disruption" | "reserved" | "kubelet" | "overlay") {
            self.no_children(node);
        }
        match name {
            "gpu" | "neuron" => {
                self.check_entries(node, &[], 0);
                let mut kind = if name == "gpu" { AcceleratorKind::Nvidia } else { AcceleratorKind::Neuron };
                let mut names = Vec::new();
                for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
                    self.no_children(child);
                    match child.name().value() {
                        "name" => names = self.strings(child),
                        "manufacturer" if name == "gpu" => {
                            if let Some(m) = self.single_string(child) {
                                match m.to_ascii_lowercase().as_str() {
                                    "nvidia" => kind = AcceleratorKind::Nvidia,
                                    "amd" => kind = AcceleratorKind::Amd,
                                    other => self.error(
                                        m.span,
                                        "E0118",
                                        format!("unknown GPU manufacturer `{other}`"),
                                        "one of nvidia, amd (for AWS Inferentia/Trainium write a `neuron` block)",
                                    ),
                                }
                            }
                        }
                        "memory-min" => {
                            if let Some(m) = self.single_string(child) {
                                s.memory_min_mib = self.memory_mib(&m);
                            }
                        }
                        "per-node" => {
                            self.check_entries(child, &["min", "max"], 0);
                            if let Some(e) = prop(child, "min") {
                                s.per_node_min = self.expect_integer(e, "per-node min", 1, 64).map(|v| Spanned::new(v.value as u32, v.span));
                            }
                            if let Some(e) = prop(child, "max") {
                                s.per_node_max = self.expect_integer(e, "per-node max", 1, 64).map(|v| Spanned::new(v.value as u32, v.span));
                            }
                        }
                        _ => {
                            let valid: Vec<&str> = schema::names("gpu")
                                .iter()
                                .copied()
                                .filter(|c| name == "gpu" || *c != "manufacturer")
                                .collect();
                            self.unknown_node(child, &valid, &format!("`{name}`"));
                        }
                    }
                }
                s.accelerator = Spanned::new(kind, node_span);
                s.accelerator_names = names;
            }
            "cpu" => self.cpu_block(node, s),
            "max-cpu" => {
                self.check_entries(node, &[], 1);
                s.max_cpu = args(node).next().and_then(|e| self.expect_integer(e, "max-cpu", 1, 10_000_000)).map(|v| Spanned::new(v.value as u32, v.span));
            }
            "arch" => {
                s.arch = self
                    .strings(node)
                    .into_iter()
                    .filter_map(|a| match a.as_str() {
                        "amd64" | "x86_64" => Some(Spanned::new(Arch::Amd64, a.span)),
                        "arm64" | "aarch64" => Some(Spanned::new(Arch::Arm64, a.span)),
                        other => {
                            self.error(a.span, "E0118", format!("unknown architecture `{other}`"), "one of amd64, arm64");
                            None
                        }
                    })
                    .collect();
            }
            "generation-min" => {
                self.check_entries(node, &[], 1);
                s.generation_min = args(node)
                    .next()
                    .and_then(|e| self.expect_integer(e, "generation-min", 1, 99))
                    .map(|v| Spanned::new(v.value as u32, v.span));
            }
            "families" => s.families = self.strings(node),
            "exclude-families" => s.exclude_families = self.strings(node),
            "types" => s.types = self.strings(node),
            "exclude-types" => s.exclude_types = self.strings(node),
            "efa" => {
                self.check_entries(node, &["zone"], 1);
                s.efa = args(node).next().and_then(|e| self.expect_bool(e, "efa"));
                s.efa_zone = prop(node, "zone").and_then(|e| self.expect_string(e, "zone"));
            }
            "capacity" => {
                let types: Vec<Spanned<CapacityType>> =
                    self.strings(node).iter().filter_map(|c| self.capacity_type(c)).collect();
                if !types.is_empty() {
                    let mut values: Vec<CapacityType> = types.iter().map(|t| t.value).collect();
                    values.sort();
                    values.dedup();
                    s.capacity = Spanned::new(values, node_span);
                }
            }
            "max-accelerators" => {
                self.check_entries(node, &[], 1);
                s.max_accelerators = args(node)
                    .next()
                    .and_then(|e| self.expect_integer(e, "max-accelerators", 1, 100_000))
                    .map(|v| Spanned::new(v.value as u32, v.span));
            }
            "weight" => {
                self.check_entries(node, &[], 1);
                s.weight = args(node)
                    .next()
                    .and_then(|e| self.expect_integer(e, "weight", 1, 100))
                    .map(|v| Spanned::new(v.value as u32, v.span));
            }
            "price-ratio-max" => {
                self.check_entries(node, &[], 1);
                if let Some(r) = args(node).next().and_then(|e| self.expect_number(e, "price-ratio-max")) {
                    if r.value < 1.0 {
                        self.error(r.span, "E0106", "price-ratio-max must be at least 1.0 (1.0 admits only the cheapest $/accelerator-hour)", "");
                    } else {
                        s.price_ratio_max = r;
                    }
                }
            }
            "spot-ceiling" => {
                if let Some(v) = self.single_string(node) {
                    match crate::catalog::cost::SpotCeiling::parse(&v) {
                        Some(c) => s.spot_ceiling = Spanned::new(c, v.span),
                        None => {
                            let help = did_you_mean(&v, crate::catalog::cost::SpotCeiling::NAMES)
                                .unwrap_or_else(|| "one of on-demand (guaranteed bound), observed-max (empirical bound)".into());
                            self.error(v.span, "E0118", format!("unknown spot ceiling `{}`", v.value), help);
                        }
                    }
                }
            }
            "scratch" => {
                if let Some(v) = self.single_string(node) {
                    match v.as_str() {
                        "instance-store" => s.instance_store_scratch = Spanned::new(true, v.span),
                        "ebs" => s.instance_store_scratch = Spanned::new(false, v.span),
                        other => {
                            let help = did_you_mean(other, ["instance-store", "ebs"])
                                .unwrap_or_else(|| "one of instance-store (local NVMe in RAID0), ebs (the root/data volume)".into());
                            self.error(v.span, "E0118", format!("unknown scratch `{other}`"), help);
                        }
                    }
                }
            }
            "time-slicing" => {
                self.check_entries(node, &["replicas"], 0);
                match prop(node, "replicas") {
                    Some(e) => {
                        if let Some(r) = self.expect_integer(e, "time-slicing replicas", i128::MIN, i128::MAX) {
                            if r.value < 2 || r.value > 64 {
                                self.error(
                                    r.span,
                                    "E0119",
                                    format!("time-slicing replicas must be between 2 and 64, found {}", r.value),
                                    "the device plugin rejects replicas < 2; for no sharing remove `time-slicing`",
                                );
                            } else {
                                s.sharing = Some(Spanned::new(Sharing::TimeSlicing { replicas: r.value as u32 }, node_span));
                            }
                        }
                    }
                    None => self.error(node_span, "E0107", "`time-slicing` needs replicas", "write time-slicing replicas=4"),
                }
            }
            "mig" => {
                if let Some(config) = self.single_string(node) {
                    s.sharing = Some(Spanned::new(Sharing::Mig { config: config.value }, config.span));
                }
            }
            "reserved" => {
                self.check_entries(node, &[], 0);
                let mut reserved = Reserved::default();
                for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
                    self.no_children(child);
                    match child.name().value() {
                        "id" => {
                            for id in self.strings(child) {
                                let help = "copy the id from the EC2 console or `aws ec2 describe-capacity-reservations`";
                                self.check_value(&id, crate::names::check_reservation_id, "E0190", "capacity reservation id", help);
                                reserved.ids.push(id.value);
                            }
                        }
                        "instance-type" => reserved.instance_type = self.single_string(child),
                        "instances" => {
                            self.check_entries(child, &[], 1);
                            reserved.instances = args(child)
                                .next()
                                .and_then(|e| self.expect_integer(e, "instances", 1, 10_000))
                                .map(|v| Spanned::new(v.value as u32, v.span));
                        }
                        "tag" => {
                            self.check_entries(child, &[], 2);
                            let kv: Vec<_> = args(child).filter_map(|e| self.expect_string(e, "tag")).collect();
                            if let [k, v] = kv.as_slice() {
                                // The EC2NodeClass CRD refuses empty tag keys and values in a selector term.
                                let non_empty = |t: &str| if t.is_empty() { Err("it is empty, and Karpenter refuses empty tag keys and values".to_string()) } else { Ok(()) };
                                self.check_value(k, non_empty, "E0190", "reservation tag key", "write the tag's key and value as EC2 shows them");
                                self.check_value(v, non_empty, "E0190", "reservation tag value", "write the tag's key and value as EC2 shows them (\"*\" matches any value)");
                                reserved.tags.insert(k.value.clone(), v.value.clone());
                            } else {
                                self.error(self.span(child.span()), "E0107", "`tag` needs a key and a value", "write tag \"purpose\" \"training\"");
                            }
                        }
                        _ => self.unknown_node(child, &schema::names("reserved"), "`reserved`"),
                    }
                }
                // The EC2NodeClass CRD takes at most 20 tags in a capacity reservation selector term.
                if reserved.tags.len() > 20 {
                    let message = format!("`reserved` selects by {} tags, and Karpenter takes at most 20", reserved.tags.len());
                    self.error(node_span, "E0190", message, "keep the tags that single out the reservation, or name it by id");
                }
                if reserved.instance_type.is_none() || reserved.instances.is_none() {
                    self.error(
                        node_span,
                        "E0132",
                        "`reserved` needs the reservation's `instance-type` and `instances`",
                        "a capacity reservation is billed whether used or not, so gpuplan counts its full cost: add e.g. instance-type \"p5.48xlarge\" and instances 2",
                    );
                }
                s.reserved = Some(Spanned::new(reserved, node_span));
            }
            "disruption" => {
                self.check_entries(node, &[], 0);
                self.parse_disruption(node, &mut s.disruption);
            }
            "label" => {
                self.check_entries(node, &[], 2);
                let kv: Vec<_> = args(node).filter_map(|e| self.expect_string(e, "label")).collect();
                match kv.as_slice() {
                    [k, v] => {
                        self.check_value(k, crate::names::check_node_label_key, "E0188", "label key", LABEL_KEY_HELP);
                        self.check_value(v, crate::names::check_label_value, "E0188", "label value", LABEL_VALUE_HELP);
                        s.labels.insert(k.value.clone(), v.clone());
                    }
                    _ => self.error(node_span, "E0107", "`label` needs a key and a value", "write label \"team\" \"ml\""),
                }
            }
            "taint" => {
                self.check_entries(node, &["value", "effect"], 1);
                let key = args(node).next().and_then(|e| self.expect_string(e, "taint key"));
                let value = prop(node, "value").and_then(|e| self.expect_string(e, "taint value"));
                let effect = prop(node, "effect")
                    .and_then(|e| self.expect_string(e, "taint effect"))
                    .unwrap_or_else(|| Spanned::new("NoSchedule".into(), node_span));
                if !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect.as_str()) {
                    let help = did_you_mean(&effect, ["NoSchedule", "PreferNoSchedule", "NoExecute"])
                        .unwrap_or_else(|| "one of NoSchedule, PreferNoSchedule, NoExecute".into());
                    self.error(effect.span, "E0118", format!("unknown taint effect `{}`", effect.value), help);
                }
                if let Some(key) = &key {
                    self.check_value(key, crate::names::check_taint_key, "E0189", "taint key", LABEL_KEY_HELP);
                }
                if let Some(value) = &value {
                    self.check_value(value, crate::names::check_taint_value, "E0189", "taint value", LABEL_VALUE_HELP);
                }
                if let Some(key) = key {
                    s.taints.push(Spanned::new(
                        Taint { key: key.value, value: value.map(|v| v.value), effect: effect.value },
                        node_span,
                    ));
                }
            }
            "allow" => s.allow.extend(self.strings(node)),
            "require" => self.apply_require(node, s),
            "limits" => self.apply_limits(node, s),
            "kubelet" => self.apply_kubelet(node, s),
            "raw" => s.raws.extend(self.parse_raw(node, &raw::RAW_KINDS)),
            "overlay" => self.apply_overlay(node, s),
            "static" => self.apply_static(node, s),
            "accelerator-taint" => {
                self.check_entries(node, &[], 1);
                match args(node).next().and_then(|e| self.expect_bool(e, "accelerator-taint")) {
                    Some(v) => s.accelerator_taint = v,
                    None if args(node).next().is_none() => self.error(node_span, "E0107", "`accelerator-taint` needs #true or #false", "write accelerator-taint #false"),
                    None => {}
                }
            }
            _ => self.unknown_node(node, &schema::names("pool"), context),
        }
    }

    /// `cpu { per-node min= max=; memory-min "4GiB" }`: a CPU pool, whose unit is the vCPU. Per-node bounds count
    /// vCPUs; memory-min is per vCPU (what tells c, m and r types apart).
    fn cpu_block(&mut self, node: &KdlNode, s: &mut Settings) {
        self.check_entries(node, &[], 0);
        s.memory_min_mib = None;
        s.accelerator_names = Vec::new();
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            self.no_children(child);
            match child.name().value() {
                "per-node" => {
                    self.check_entries(child, &["min", "max"], 0);
                    let bound = |this: &mut Self, key: &str| {
                        prop(child, key).and_then(|e| this.expect_integer(e, &format!("per-node {key} (vCPUs)"), 1, 4096)).map(|v| Spanned::new(v.value as u32, v.span))
                    };
                    s.per_node_min = bound(self, "min");
                    s.per_node_max = bound(self, "max");
                }
                "memory-min" => {
                    if let Some(m) = self.single_string(child) {
                        s.memory_min_mib = self.memory_mib(&m);
                    }
                }
                "name" | "manufacturer" => self.error(
                    self.span(child.name().span()),
                    "E0260",
                    format!("`{}` selects an accelerator, and a `cpu` pool has none", child.name().value()),
                    "remove it, or write a `gpu { … }` / `neuron { … }` block instead of `cpu { … }`",
                ),
                _ => self.unknown_node(child, &schema::names("cpu"), "`cpu`"),
            }
        }
        s.accelerator = Spanned::new(AcceleratorKind::Cpu, self.span(node.span()));
    }

    /// A pool (or tier) says what it runs on once: `gpu`, `neuron` or `cpu`, not two of them (the last would win
    /// silently).
    fn one_kind(&mut self, nodes: &[KdlNode], context: &str) {
        let kinds: Vec<&KdlNode> = nodes.iter().filter(|n| matches!(n.name().value(), "gpu" | "neuron" | "cpu")).collect();
        if let [first, second, ..] = kinds.as_slice() {
            let at = self.sources.location(self.span(first.name().span()));
            self.error(
                self.span(second.name().span()),
                "E0261",
                format!("{context} says both `{}` (at {at}) and `{}`: a NodePool runs on one kind of node", first.name().value(), second.name().value()),
                "keep one; for CPU and GPU capacity side by side write two pools",
            );
        }
    }

    fn parse_disruption(&mut self, node: &KdlNode, d: &mut Disruption) {
        let mut budgets = Vec::new();
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            self.no_children(child);
            let span = self.span(child.span());
            match child.name().value() {
                "consolidation" => {
                    if let Some(p) = self.single_string(child) {
                        if ["WhenEmpty", "WhenEmptyOrUnderutilized"].contains(&p.as_str()) {
                            d.consolidation_policy = p;
                        } else {
                            let help = did_you_mean(&p, ["WhenEmpty", "WhenEmptyOrUnderutilized"])
                                .unwrap_or_else(|| "one of WhenEmpty, WhenEmptyOrUnderutilized".into());
                            self.error(p.span, "E0118", format!("unknown consolidation policy `{}`", p.value), help);
                        }
                    }
                }
                "consolidate-after" => {
                    if let Some(v) = self.single_string(child).and_then(|v| self.duration(v, true)) {
                        d.consolidate_after = v;
                    }
                }
                "expire-after" => {
                    if let Some(v) = self.single_string(child).and_then(|v| self.duration(v, true)) {
                        d.expire_after = v;
                    }
                }
                "termination-grace-period" => {
                    d.termination_grace_period = self.single_string(child).and_then(|v| self.duration(v, false));
                }
                "maintenance-window" => {
                    self.check_entries(child, &["day", "start", "duration", "nodes"], 0);
                    let day = prop(child, "day").and_then(|e| self.expect_string(e, "day"));
                    let start = prop(child, "start").and_then(|e| self.expect_string(e, "start"));
                    let duration = prop(child, "duration").and_then(|e| self.expect_string(e, "duration"));
                    let nodes = prop(child, "nodes").and_then(|e| self.expect_string(e, "nodes"));
                    let (Some(day), Some(start), Some(duration)) = (day, start, duration) else {
                        self.error(
                            span,
                            "E0107",
                            "`maintenance-window` needs day, start and duration",
                            "write maintenance-window day=\"sunday\" start=\"02:00\" duration=\"4h\" (UTC)",
                        );
                        continue;
                    };
                    let weekday = WEEKDAYS.iter().position(|w| w.eq_ignore_ascii_case(&day) || w[..3].eq_ignore_ascii_case(&day));
                    let start_minute = parse_hhmm(&start);
                    let minutes = self.duration(duration.clone(), false).and_then(|d| duration_minutes(&d));
                    match (weekday, start_minute, minutes) {
                        (None, _, _) => self.error(day.span, "E0118", format!("unknown day `{}`", day.value), "sunday … saturday"),
                        (_, None, _) => self.error(start.span, "E0118", format!("`{}` is not a UTC time of day", start.value), "write HH:MM, e.g. 02:00"),
                        (_, _, None) => {}
                        (Some(_), Some(_), Some(m)) if m == 0 || m >= 7 * 24 * 60 => self.error(
                            duration.span,
                            "E0106",
                            "a maintenance window lasts between 1 minute and 1 week",
                            "",
                        ),
                        (Some(w), Some(s), Some(m)) => {
                            let nodes = nodes.map(|n| n.value).unwrap_or_else(|| "1".into());
                            if !valid_budget_nodes(&nodes) {
                                self.error(span, "E0118", format!("nodes `{nodes}` is not a count or a percentage"), "write e.g. nodes=\"1\" or nodes=\"10%\"");
                            }
                            d.maintenance_window = Some(Spanned::new(
                                MaintenanceWindow { weekday: w as u32, start_minute_of_day: s, duration_minutes: m, nodes },
                                span,
                            ));
                        }
                    }
                }
                "budget" => {
                    self.check_entries(child, &["nodes", "schedule", "duration", "reasons"], 0);
                    let nodes = prop(child, "nodes").and_then(|e| self.expect_string(e, "budget nodes"));
                    let Some(nodes) = nodes else {
                        self.error(span, "E0107", "`budget` needs nodes", "write budget nodes=\"10%\" (a count or a percentage, quoted)");
                        continue;
                    };
                    if !valid_budget_nodes(&nodes) {
                        self.error(nodes.span, "E0118", format!("nodes `{}` is not a count or a percentage", nodes.value), "write e.g. nodes=\"1\" or nodes=\"10%\"");
                    }
                    let schedule = prop(child, "schedule").and_then(|e| self.expect_string(e, "budget schedule"));
                    let duration = prop(child, "duration").and_then(|e| self.expect_string(e, "budget duration"));
                    if schedule.is_some() != duration.is_some() {
                        self.error(
                            span,
                            "E0120",
                            "a scheduled budget needs both schedule and duration",
                            "write both, e.g. schedule=\"0 9 * * 1-5\" duration=\"8h\" (cron in UTC); or neither for an always-on budget",
                        );
                    }
                    if let Some(s) = &schedule {
                        if s.split_whitespace().count() != 5 && !s.starts_with('@') {
                            self.error(s.span, "E0118", format!("`{}` is not a 5-field cron schedule", s.value), "minute hour day-of-month month day-of-week, in UTC, e.g. \"0 9 * * 1-5\"");
                        }
                    }
                    let duration = duration.and_then(|d| self.duration(d, false));
                    let reasons = prop(child, "reasons").and_then(|e| self.expect_string(e, "budget reasons"));
                    let mut reason_list = Vec::new();
                    if let Some(r) = &reasons {
                        for reason in r.split([',', ' ']).filter(|s| !s.is_empty()) {
                            if ["Underutilized", "Empty", "Drifted"].contains(&reason) {
                                reason_list.push(reason.to_string());
                            } else {
                                let help = did_you_mean(reason, ["Underutilized", "Empty", "Drifted"])
                                    .unwrap_or_else(|| "reasons are Underutilized, Empty, Drifted (comma-separated)".into());
                                self.error(r.span, "E0118", format!("unknown disruption reason `{reason}`"), help);
                            }
                        }
                    }
                    budgets.push(Spanned::new(
                        DisruptionBudget {
                            nodes: nodes.value,
                            schedule: schedule.map(|s| s.value),
                            duration: duration.map(|d| d.value),
                            reasons: reason_list,
                        },
                        span,
                    ));
                }
                _ => self.unknown_node(child, &schema::names("disruption"), "`disruption`"),
            }
        }
        if !budgets.is_empty() {
            d.budgets = budgets;
        }
    }

    /// Karpenter durations: `^([0-9]+(s|m|h))+$`, or `Never` where allowed.
    fn duration(&mut self, v: Spanned<String>, never_ok: bool) -> Option<Spanned<String>> {
        if (never_ok && v.as_str() == "Never") || duration_minutes(&v).is_some() {
            return Some(v);
        }
        let help = if never_ok {
            "write a Go duration in s, m and h (e.g. \"30m\", \"720h\", \"1h30m\") or \"Never\"; days are not a unit (\"7d\" → \"168h\")"
        } else {
            "write a Go duration in s, m and h, e.g. \"30m\", \"4h\", \"1h30m\"; days are not a unit (\"7d\" → \"168h\")"
        };
        self.error(v.span, "E0121", format!("`{}` is not a duration", v.value), help);
        None
    }

    /// "24GiB", "22888MiB" → MiB. Decimal units are rejected: EC2 reports MiB and "GB" is ambiguous.
    fn memory_mib(&mut self, m: &Spanned<String>) -> Option<Spanned<u64>> {
        let text = m.trim();
        let digits: String = text.chars().take_while(|c| c.is_ascii_digit()).collect();
        let unit = text[digits.len()..].trim();
        let number: Option<u64> = digits.parse().ok();
        let factor = match unit {
            "GiB" | "Gi" => Some(1024),
            "MiB" | "Mi" => Some(1),
            _ => None,
        };
        match (number, factor) {
            (Some(n), Some(f)) if n > 0 => Some(Spanned::new(n * f, m.span)),
            (Some(_), None) => {
                self.error(
                    m.span,
                    "E0122",
                    format!("unknown memory unit `{unit}` in `{}`", m.value),
                    "use binary units GiB or MiB (EC2 reports GPU memory in MiB; \"24GB\" → \"24GiB\")",
                );
                None
            }
            _ => {
                self.error(m.span, "E0122", format!("`{}` is not a memory size", m.value), "write a whole number with a unit, e.g. \"24GiB\"");
                None
            }
        }
    }

    /// Contradictions within one NodePool's settings.
    fn check_settings(&mut self, s: &Settings) {
        if let (Some(min), Some(max)) = (&s.per_node_min, &s.per_node_max) {
            if min.value > max.value {
                self.error(
                    min.span,
                    "E0130",
                    format!("per-node min={} is greater than max={}", min.value, max.value),
                    "no instance type can satisfy both; lower min or raise max",
                );
            }
        }
        for (included, excluded, what) in [(&s.families, &s.exclude_families, "family"), (&s.types, &s.exclude_types, "type")] {
            for inc in included {
                if let Some(exc) = excluded.iter().find(|e| e.value == inc.value) {
                    let at = self.sources.location(exc.span);
                    self.error(
                        inc.span,
                        "E0130",
                        format!("{what} `{}` is both included and excluded (excluded at {at})", inc.value),
                        "remove it from one of the two lists",
                    );
                }
            }
        }
        if matches!(s.sharing.as_ref().map(|x| &x.value), Some(Sharing::Mig { .. }) | Some(Sharing::TimeSlicing { .. }))
            && s.accelerator.value != AcceleratorKind::Nvidia
        {
            let span = s.sharing.as_ref().map(|x| x.span).unwrap_or(s.accelerator.span);
            self.error(span, "E0130", "GPU sharing (time-slicing, MIG) is an NVIDIA device-plugin feature", "remove it, or select NVIDIA GPUs");
        }
        self.check_limit_unit(s);
        if s.capacity.contains(&CapacityType::Reserved) && s.reserved.is_none() {
            self.error(
                s.capacity.span,
                "E0131",
                "capacity \"reserved\" needs a `reserved` block naming the capacity reservations",
                "add reserved { id \"cr-0123456789abcdef0\" } or reserved { tag \"purpose\" \"training\" }",
            );
        }
        if let Some(r) = &s.reserved {
            if r.ids.is_empty() && r.tags.is_empty() {
                self.error(r.span, "E0131", "`reserved` selects no capacity reservation", "add id \"cr-…\" or tag \"key\" \"value\"");
            }
        }
    }
}

impl Parser<'_> {
    /// A CPU pool's limit counts vCPUs (`max-cpu`), an accelerated pool's counts devices (`max-accelerators`):
    /// each keyword where the other unit is meant is an error, not a silent reinterpretation.
    fn check_limit_unit(&mut self, s: &Settings) {
        let cpu = s.accelerator.value == AcceleratorKind::Cpu;
        if let (true, Some(m)) = (cpu, &s.max_accelerators) {
            self.error(m.span, "E0262", "a `cpu` pool has no accelerators to limit", format!("write max-cpu {} for a limit of {} vCPUs", m.value, m.value));
        }
        // A CPU pool's cpu limit is its `max-cpu` (the NodePool's `limits.cpu`): a second one would be a second `cpu`
        // key in that map.
        if let (true, Some(l)) = (cpu, s.resource_limits.as_ref().filter(|l| l.value.cpu.is_some())) {
            let cpu_limit = l.value.cpu.clone().unwrap_or_default();
            self.error(l.span, "E0266", "a `cpu` pool's cpu limit is its `max-cpu`, not `limits cpu=`", format!("write max-cpu {cpu_limit} (keep `limits memory=` if you need it)"));
        }
        if let (false, Some(m)) = (cpu, &s.max_cpu) {
            self.error(m.span, "E0263", "`max-cpu` limits a CPU pool (one with a `cpu { … }` block)", format!("an accelerated pool's limit is max-accelerators; or add `cpu {{ }}` to make this a CPU pool of {} vCPUs", m.value));
        }
    }

    /// Every NodePool of a pool runs on the same kind of node: pods select the pool, so a CPU tier in a GPU pool
    /// would take the pool's GPU pods' fallback (and the reverse), and queues and workloads of a pool count one
    /// resource.
    fn one_kind_of_tiers(&mut self, tiers: &[Tier]) {
        let Some(first) = tiers.first() else { return };
        let cpu = |t: &Tier| t.settings.accelerator.value == AcceleratorKind::Cpu;
        if let Some(other) = tiers.iter().find(|t| cpu(t) != cpu(first)) {
            let (a, b) = if cpu(first) { ("CPU", "accelerated") } else { ("accelerated", "CPU") };
            self.error(other.settings.accelerator.span, "E0264", format!("tier `{}` is {b} while tier `{}` is {a}: a pool's tiers run on one kind of node", other.name.value, first.name.value), "write the CPU capacity as a pool of its own");
        }
    }
}

/// A reservation backs its pool: `<pool>-reserved`, a tier of the pool (same label and taints, the highest weight
/// of the pool), limited to the reservation, in front of the preset's tiers, which then carry no reservation. Pods
/// select the pool, so Karpenter launches into the reservation first and falls back when it is full (a separate
/// pool with its own label would sit idle while its $/h is billed). Only a pool whose capacity is exactly
/// `"reserved"` is the reservation alone.
fn reservation_tier(name: &Spanned<String>, settings: &mut Settings) -> Option<Tier> {
    let reserved = settings.reserved.clone()?;
    if settings.capacity.value == [CapacityType::Reserved] {
        return None;
    }
    let mut tier = settings.clone();
    tier.capacity = Spanned::new(vec![CapacityType::Reserved], reserved.span);
    settings.reserved = None;
    // An explicit weight is the pool's place among the cluster's pools: the reservation's tier (the pool's highest)
    // takes it, and the fallback tiers rank below it (two NodePools of one weight would be E0153).
    settings.weight = None;
    Some(Tier { name: Spanned::new(format!("{}-reserved", name.value), reserved.span), settings: tier })
}

fn args(node: &KdlNode) -> impl Iterator<Item = &KdlEntry> {
    node.entries().iter().filter(|e| e.name().is_none())
}

/// The last value given for a property (KDL: later properties override earlier ones).
fn prop<'n>(node: &'n KdlNode, key: &str) -> Option<&'n KdlEntry> {
    node.entries().iter().rev().find(|e| e.name().is_some_and(|n| n.value() == key))
}

const WEEKDAYS: [&str; 7] = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

fn parse_hhmm(s: &str) -> Option<u32> {
    let (h, m) = s.split_once(':')?;
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some(h * 60 + m)
}

/// Minutes in a Go-style duration made of h/m/s parts ("1h30m"); None if malformed. Seconds round down.
pub fn duration_minutes(s: &str) -> Option<u32> {
    total_seconds(s).map(|s| (s / 60) as u32)
}

/// Seconds in a Go-style duration made of h/m/s parts ("1h30m"); None if malformed or beyond u32.
pub fn duration_seconds(s: &str) -> Option<u32> {
    total_seconds(s).and_then(|s| u32::try_from(s).ok())
}

fn total_seconds(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut total_seconds: u64 = 0;
    let mut number = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            number.push(c);
        } else {
            let n: u64 = number.parse().ok()?;
            number.clear();
            total_seconds += n * match c {
                'h' => 3600,
                'm' => 60,
                's' => 1,
                _ => return None,
            };
        }
    }
    number.is_empty().then_some(total_seconds)
}

fn valid_budget_nodes(nodes: &str) -> bool {
    let digits = nodes.strip_suffix('%').unwrap_or(nodes);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) && (!nodes.ends_with('%') || digits.parse::<u32>().is_ok_and(|p| p <= 100))
}

/// The cluster settings an Auto Mode cluster must not write, where they are written.
struct AutoModeWritten<'a> {
    ami: &'a Spanned<String>,
    image_cache: Option<&'a Spanned<String>>,
    accelerated_ami: Option<Span>,
    user_data: Option<&'a Spanned<String>>,
}

/// Auto Mode's `ephemeralStorage.size` ranges (EKS User Guide, "Create a Node Class for Amazon EKS", Node Class
/// Specification: "Range: 1-59000Gi or 1-64000G or 1-58Ti or 1-64T").
pub fn check_ephemeral_storage(size: &str) -> Result<(), String> {
    let (number, max) = [("Gi", 59000), ("G", 64000), ("Ti", 58), ("T", 64)]
        .into_iter()
        .find_map(|(unit, max)| size.strip_suffix(unit).filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).map(|n| (n, max)))
        .ok_or_else(|| "not a whole number of Gi, G, Ti or T".to_string())?;
    match number.parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(()),
        _ => Err(format!("out of range (1 to {max} in this unit)")),
    }
}

fn valid_ami_alias(alias: &str) -> bool {
    alias.split_once('@').is_some_and(|(family, version)| {
        ["al2023", "al2", "bottlerocket", "windows2019", "windows2022", "windows2025"].contains(&family)
            && !version.is_empty()
            && version.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
    })
}

fn describe(value: &KdlValue) -> String {
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

/// The `terminationGracePeriod` of the general, inference and tiered presets.
pub const SERVING_GRACE_PERIOD: &str = "1h";

/// The defaults each preset gives; every one can be overridden in the profile. Spans point at the preset.
fn preset_defaults(preset: Preset, span: Span) -> Settings {
    let s = |v: &str| Spanned::new(v.to_string(), span);
    // Every preset ends a drain: Karpenter leaves a deleting node out of the limits, so a drain a
    // PodDisruptionBudget blocks would otherwise keep a GPU node running, beside its replacement, forever
    // (`cost::drain_peak`). An hour lets a model server finish its requests and hand over.
    let serving_grace = || Some(s(SERVING_GRACE_PERIOD));
    let (capacity, consolidate_after, expire_after, grace, window) = match preset {
        Preset::General => (vec![CapacityType::Spot, CapacityType::OnDemand], "5m", "720h", serving_grace(), None),
        Preset::InferenceSpot | Preset::Tiered => (vec![CapacityType::Spot], "5m", "720h", serving_grace(), None),
        Preset::InferenceOnDemand => (vec![CapacityType::OnDemand], "10m", "720h", serving_grace(), None),
        // Training: never expire (a restart loses hours of progress), long grace to checkpoint, and voluntary
        // disruption only inside a weekly window (Sunday 02:00 UTC, 4h, one node at a time).
        Preset::TrainingOnDemand => (
            vec![CapacityType::OnDemand],
            "1h",
            "Never",
            Some(s("2h")),
            Some(MaintenanceWindow { weekday: 0, start_minute_of_day: 120, duration_minutes: 240, nodes: "1".into() }),
        ),
        Preset::BatchSpot => (vec![CapacityType::Spot], "2m", "168h", Some(s("30m")), None),
    };
    Settings {
        accelerator: Spanned::new(AcceleratorKind::Nvidia, span),
        accelerator_names: Vec::new(),
        memory_min_mib: None,
        per_node_min: None,
        per_node_max: None,
        // GPU images are overwhelmingly amd64: arm64 (g5g) only when asked for, so a pod never lands on a node
        // its image cannot run on.
        arch: vec![Spanned::new(Arch::Amd64, span)],
        generation_min: None,
        families: Vec::new(),
        exclude_families: Vec::new(),
        types: Vec::new(),
        exclude_types: Vec::new(),
        efa: None,
        efa_zone: None,
        capacity: Spanned::new(capacity, span),
        max_accelerators: None,
        max_cpu: None,
        weight: None,
        price_ratio_max: Spanned::new(DEFAULT_PRICE_RATIO_MAX, span),
        spot_ceiling: Spanned::new(crate::catalog::cost::SpotCeiling::OnDemand, span),
        // Training reads datasets and writes checkpoints locally: p4d/p5 carry 8 TB–30 TB of NVMe.
        instance_store_scratch: Spanned::new(preset == Preset::TrainingOnDemand, span),
        sharing: None,
        reserved: None,
        disruption: Disruption {
            // A node busy on its GPU looks idle to WhenEmptyOrUnderutilized (it judges CPU/memory only).
            consolidation_policy: s("WhenEmpty"),
            consolidate_after: s(consolidate_after),
            expire_after: s(expire_after),
            termination_grace_period: grace,
            maintenance_window: window.map(|w| Spanned::new(w, span)),
            budgets: Vec::new(),
        },
        labels: BTreeMap::new(),
        taints: Vec::new(),
        requires: Vec::new(),
        resource_limits: None,
        static_pool: None,
        accelerator_taint: Spanned::new(true, span),
        allow: Vec::new(),
        kubelet: None,
        raws: Vec::new(),
        overlays: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_follow_karpenter_pattern() {
        assert_eq!(duration_minutes("1h30m"), Some(90));
        assert_eq!(duration_minutes("720h"), Some(720 * 60));
        assert_eq!(duration_minutes("7d"), None);
        assert_eq!(duration_minutes("10"), None);
        assert_eq!(duration_minutes(""), None);
    }

    #[test]
    fn budget_nodes() {
        assert!(valid_budget_nodes("0"));
        assert!(valid_budget_nodes("10%"));
        assert!(!valid_budget_nodes("110%"));
        assert!(!valid_budget_nodes("ten"));
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
