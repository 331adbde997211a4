//! The whole pipeline for one `gpuplan compile`: profiles → Intent → (catalogs) → Plan → Manifests → files.
//! Nothing here touches out/: the caller decides whether to write, check or diff.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::diagnostic::ErrorCode;
use crate::catalog::{Catalog, CatalogError};
use crate::check::ClusterCtx;
use crate::diagnostic::{ProfileDiagnostic, Sources};
use crate::layout::{with_header, OutputTree};
use crate::lint::Finding;
use crate::profile::{self, Profile};
use crate::render::{Manifest, RenderError, Renderer};
use crate::solve::{self, Plan};

#[derive(Debug, Clone)]
pub struct CompileOptions {
    /// Profile files, or directories whose `*.kdl` files are all read (sorted by name).
    pub profiles: Vec<PathBuf>,
    /// Where `<region>.json` catalog snapshots live; us-east-1 falls back to the built-in snapshot.
    pub catalogs_dir: PathBuf,
    pub templates_dir: Option<PathBuf>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions { profiles: vec![PathBuf::from("profiles")], catalogs_dir: PathBuf::from("catalogs"), templates_dir: None }
    }
}

/// Everything one compile produced, for compile/check/diff/commit/explain/lint to use.
#[derive(Debug)]
pub struct Compilation {
    pub sources: Sources,
    pub profiles: Vec<Profile>,
    pub catalogs: BTreeMap<String, Catalog>,
    pub plan: Plan,
    /// Every generated object as out/ holds it, sorted by path.
    pub generated: Vec<Generated>,
    /// The lint findings (also among `warnings`), sorted by file, position and code, for `explain`.
    pub findings: Vec<Finding>,
    /// Warnings (lint findings, stale catalog) that did not stop the compile.
    pub warnings: Vec<ProfileDiagnostic>,
    /// (cluster, profile name) → position in `profiles`, for [`Compilation::profile`].
    profile_index: BTreeMap<(String, String), usize>,
    /// Cluster → positions in `profiles` (file order), for [`Compilation::profiles_of`].
    cluster_profiles: BTreeMap<String, Vec<usize>>,
    /// Per region, the simulator's instance-type labels of its catalog, shared by every cluster's simulations.
    type_labels: BTreeMap<String, crate::simulate::instances::TypeLabels>,
}

/// One generated object as a [`Compilation`] keeps it: the file for out/ (header and canonical YAML) and the
/// fields the kustomization notes read. Its parsed value lives only while its cluster is compiled (validated,
/// checked and linted): kept for every object to the end, the values of 10,000 profiles took half a gigabyte.
/// [`Generated::manifest`] parses the text again for the commands that read objects after a compile.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// Path relative to out/.
    pub path: PathBuf,
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    /// The file's text: generated-code header, then the object's canonical YAML.
    pub text: String,
}

impl Generated {
    fn new(m: &Manifest) -> Generated {
        Generated {
            path: m.path.clone(),
            api_version: m.api_version().to_string(),
            kind: m.kind().to_string(),
            namespace: m.object["metadata"]["namespace"].as_str().map(str::to_string),
            text: with_header(&m.source, &m.to_yaml()),
        }
    }

    /// The object parsed back from its text (what a reader of out/ gets), with the source its header names.
    pub fn manifest(&self) -> Manifest {
        let header = crate::layout::parse_header(&self.text).expect("gpuplan writes its header on every file");
        let object = serde_saphyr::from_str(header.body).expect("gpuplan parses the YAML it wrote");
        Manifest { path: self.path.clone(), source: header.source.to_string(), object }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("{} error{} in the profiles", .diagnostics.iter().filter(|d| d.is_error()).count(), if .diagnostics.iter().filter(|d| d.is_error()).count() == 1 { "" } else { "s" })]
    Profiles { diagnostics: Vec<ProfileDiagnostic> },
    #[error("no profiles found in {0}; write one (`gpuplan init`) or pass profile files")]
    NoProfiles(String),
    #[error("{0} is not a profile: gpuplan.kdl and gpuplan.<what>.kdl are the repository's config and inputs; pass profile files or their directory")]
    NotAProfile(String),
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    Render(#[from] RenderError),
    /// A rendered object does not satisfy its CRD or API schema: a template (built-in or `--templates`) bug.
    #[error("{} generated object(s) fail schema validation; nothing was written:\n{}", .violations.len(), .violations.iter().map(|(path, v)| format!("  {}: {v}", path.display())).collect::<Vec<_>>().join("\n"))]
    Invalid { violations: Vec<(PathBuf, crate::validate::Violation)> },
}

impl CompileError {
    /// The profiles' errors, one per cause (see [`crate::diagnostic::one_per_cause`]).
    pub fn profiles(diagnostics: Vec<ProfileDiagnostic>) -> CompileError {
        CompileError::Profiles { diagnostics: crate::diagnostic::one_per_cause(diagnostics) }
    }
}

/// Expands directories into their `*.kdl` files, sorted, so the compile order never depends on the file system.
pub fn profile_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CompileError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = crate::confine::read_dir(path).map_err(|source| CompileError::Read { path: path.clone(), source })?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "kdl") && !profile::config::is_repository_file(p))
                .collect();
            found.sort();
            files.extend(found);
        } else if profile::config::is_repository_file(path) {
            return Err(CompileError::NotAProfile(path.display().to_string()));
        } else {
            files.push(path.clone());
        }
    }
    if files.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(CompileError::NoProfiles(shown.join(", ")));
    }
    Ok(files)
}

pub fn compile(opts: &CompileOptions) -> Result<Compilation, CompileError> {
    compile_with_config(opts, None)
}

/// [`compile`], the profiles sharing the clusters of the repository config at `config` (`gpuplan.kdl`), whose
/// errors are reported with the profiles'.
pub fn compile_with_config(opts: &CompileOptions, config: Option<&Path>) -> Result<Compilation, CompileError> {
    let mut sources = Sources::default();
    let (config, mut diagnostics) = match config {
        Some(path) => profile::config::parse_config(path, &mut sources),
        None => (Some(profile::config::Config::default()), Vec::new()),
    };
    // A config with errors is the cause: its shared clusters, missing, would make every profile naming one a second
    // error, and its directories were not applied (so the profiles may not be found either).
    let Some(config) = config else { return Err(CompileError::profiles(diagnostics)) };
    let files = profile_files(&opts.profiles)?;
    let shared = config.clusters;
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (profiles, found) = profile::parse_files_sharing(&paths, &mut sources, &shared);
    diagnostics.extend(found);
    if diagnostics.iter().any(ProfileDiagnostic::is_error) {
        return Err(CompileError::profiles(diagnostics));
    }
    if let Some(over) = too_many_pools(&profiles, &sources) {
        return Err(CompileError::profiles(vec![over]));
    }
    let warnings = diagnostics;

    // A template error is reported after any catalog or profile error, as when rendering came after solving.
    let renderer = Renderer::new(opts.templates_dir.as_deref(), &STAGE_TEMPLATES);
    // Setup in parallel: the catalogs are loaded and the plan solved while the schemas of the kinds the templates
    // render compile (otherwise each schema compiles on first use, and clusters validated in parallel wait on one
    // another for it).
    let gitops = profiles.iter().any(|p| p.cluster.gitops.is_some());
    let (planned, validator) = rayon::join(
        || load_catalogs_and_solve(&profiles, &sources, &opts.catalogs_dir),
        || {
            let validator = crate::validate::Validator::builtin();
            if let Ok(renderer) = &renderer {
                validator.prepare(renderer.kinds(gitops));
            }
            validator
        },
    );
    let (catalogs, type_labels, plan) = planned?;
    let renderer = renderer?;
    let profile_index = profiles.iter().enumerate().map(|(i, p)| ((p.cluster.name.value.clone(), p.name.value.clone()), i)).collect();
    let mut cluster_profiles: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, p) in profiles.iter().enumerate() {
        cluster_profiles.entry(p.cluster.name.value.clone()).or_default().push(i);
    }
    let mut compilation =
        Compilation { sources, profiles, catalogs, plan, generated: Vec::new(), findings: Vec::new(), warnings, profile_index, cluster_profiles, type_labels };
    // Clusters are independent: each is rendered, validated, checked and linted on its own core, and keeps only
    // its files; the ordered collect keeps every report deterministic.
    let compiled: Vec<ClusterOutcome> =
        compilation.plan.clusters.par_iter().map(|cluster| compile_cluster(&compilation, &renderer, validator, cluster)).collect();
    let (generated, findings) = merge_cluster_outcomes(compiled)?;
    compilation.generated = generated;
    compilation.warnings.extend(findings.iter().map(|f| f.diagnostic.clone()));
    compilation.findings = findings;
    // By file, then position in the file (not the location string: line 12 sorts after line 9).
    compilation.warnings.sort_by_cached_key(|d| (d.src.name().to_string(), d.span.offset(), d.code));
    compilation.warnings = crate::diagnostic::one_per_cause(std::mem::take(&mut compilation.warnings));
    Ok(compilation)
}

/// E0451 at the first pool past [`crate::limits::POOLS`], counted over every profile, before any is solved.
fn too_many_pools(profiles: &[Profile], sources: &Sources) -> Option<ProfileDiagnostic> {
    let limit = crate::limits::POOLS;
    let cap = match limit.value() {
        Ok(cap) => usize::try_from(cap).unwrap_or(usize::MAX),
        Err(e) => {
            let span = profiles.first()?.name.span;
            return Some(sources.error(span, ErrorCode::E0451, format!("the pool limit cannot be read: {e}")).help(format!("set {} to a positive whole number, or unset it", limit.env)));
        }
    };
    let first_over = profiles.iter().flat_map(|p| p.pools.iter()).nth(cap)?;
    let total: usize = profiles.iter().map(|p| p.pools.len()).sum();
    let message = format!("{total} pools in this compile, more than the {cap} {}", limit.counts);
    Some(sources.error(first_over.name.span, ErrorCode::E0451, message).help(format!("split the profiles into repositories or merge pools that ask for the same; {}", limit.how_to_raise())))
}

/// One catalog per region the profiles use (each region on its own core), and the plan solved against them.
/// Each catalog's type labels are built (lazily, per type) before the solve, which reads them for `require` lines, and
/// kept for the simulations after it.
#[allow(clippy::type_complexity)]
fn load_catalogs_and_solve(profiles: &[Profile], sources: &Sources, catalogs_dir: &Path) -> Result<(BTreeMap<String, Catalog>, BTreeMap<String, crate::simulate::instances::TypeLabels>, Plan), CompileError> {
    let regions: std::collections::BTreeSet<&String> = profiles.iter().map(|p| &p.cluster.region.value).collect();
    let loaded: Vec<_> = regions.into_par_iter().map(|region| (region, Catalog::load_with_digest(catalogs_dir, region))).collect();
    let mut catalogs = BTreeMap::new();
    let mut digests = BTreeMap::new();
    // In region order, so that of two unreadable catalogs the error is always the same one.
    for (region, result) in loaded {
        let (catalog, digest) = result?;
        catalogs.insert(region.clone(), catalog);
        digests.insert(region.clone(), digest);
    }
    let type_labels = catalogs.iter().map(|(region, catalog)| (region.clone(), crate::simulate::instances::TypeLabels::new(catalog))).collect();
    let plan = solve::solve(profiles, sources, &catalogs, &digests, &type_labels).map_err(CompileError::profiles)?;
    Ok((catalogs, type_labels, plan))
}

/// The templates of the stages that render with render's building blocks, after render's own.
const STAGE_TEMPLATES: [&[(&str, &str)]; 2] = [crate::ops::render::TEMPLATES, crate::queue::render::TEMPLATES];

/// Every object of one cluster: the pools' (render), the operations' (ops) and the queues' (queue), each with its
/// GitOps annotations, plus the cluster's GitOps apps, sorted by path.
fn render_cluster(renderer: &Renderer, cluster: &solve::ClusterPlan) -> Result<Vec<Manifest>, RenderError> {
    let mut manifests = renderer.render_pools(cluster)?;
    manifests.extend(crate::ops::render::render_cluster(renderer, cluster)?);
    manifests.extend(crate::queue::render::render_cluster(renderer, cluster)?);
    renderer.finish_cluster(cluster, manifests)
}

/// What compiling one cluster gave: its files and lint findings, or why it failed, by stage.
enum ClusterOutcome {
    Compiled { generated: Vec<Generated>, findings: Vec<Finding> },
    RenderFailed(RenderError),
    /// Schema violations and what the checks a schema cannot express found, each in path order.
    Invalid { schema: Vec<(PathBuf, crate::validate::Violation)>, checks: Vec<(PathBuf, crate::validate::Violation)> },
    Unschedulable(Vec<ProfileDiagnostic>),
}

/// One cluster, start to finish: render its objects, validate each against its schema and CEL rules, check what a
/// schema cannot say, prove its workloads schedule, lint it, and keep only the files.
fn compile_cluster(c: &Compilation, renderer: &Renderer, validator: &crate::validate::Validator, cluster: &solve::ClusterPlan) -> ClusterOutcome {
    let manifests = match render_cluster(renderer, cluster) {
        Ok(manifests) => manifests,
        Err(err) => return ClusterOutcome::RenderFailed(err),
    };
    let schema: Vec<_> = manifests
        .par_iter()
        .flat_map_iter(|m| validator.validate(&m.object).into_iter().map(|v| (m.path.clone(), v)))
        .collect();
    // A violation inside a `raw` fragment is the fragment's: reported at its line in the profile (E0315).
    let (in_raw, schema): (Vec<_>, Vec<_>) = schema.into_iter().partition(|(path, v)| raw_at(cluster, &manifests, path, v).is_some());
    if !in_raw.is_empty() {
        return ClusterOutcome::Unschedulable(in_raw.iter().map(|(path, v)| raw_violation(c, cluster, &manifests, path, v)).collect());
    }
    // So is one inside the class's kubelet settings: the `kubelet` block's (E0161).
    let in_kubelet: Vec<ProfileDiagnostic> = schema.iter().filter_map(|(path, v)| kubelet_violation(c, cluster, &manifests, path, v)).collect();
    if !in_kubelet.is_empty() {
        return ClusterOutcome::Unschedulable(in_kubelet);
    }
    // What a schema cannot say: ClusterPolicy images, the adapter config, HPA metrics served.
    let mut checks = crate::check::ops::rendered(&manifests);
    // Nothing the GPU Operator creates itself, where it runs (not on EKS Auto Mode, whose pools need no add-on).
    if cluster.pools.iter().any(|p| crate::ops::addons::devices(p).contains(&crate::charts::add_ons::Device::Nvidia)) {
        checks.extend(crate::check::ops::operator_owned(&manifests, &cluster.ops.monitoring.gpu_operator_namespace));
    }
    if !schema.is_empty() || !checks.is_empty() {
        return ClusterOutcome::Invalid { schema, checks };
    }
    // Every accelerator NodePool's node gets the DaemonSets that make its devices schedulable (E0184).
    let unreachable = addon_diagnostics(c, cluster, &manifests);
    if !unreachable.is_empty() {
        return ClusterOutcome::Unschedulable(unreachable);
    }
    let simulated = crate::check::cluster_manifests(&manifests, &cluster.node_daemons);
    let ctx = c.cluster_ctx(cluster);
    // The pools' placement groups, a probe pod per pool with kubelet settings (E0160: they can leave no room for a
    // pod), every workload at max replicas on the generated NodePools (E0180/E0181), then the whole-cluster checks:
    // every declared demand at once (E0340) and each tier of a tiered pool alone (E0350). On adopted pools these
    // are warnings, reported with lint's findings (issue 32: the YAML they came from had the problem).
    let (mut unschedulable, mut adopted) = by_severity(crate::check::placement::placement_group_zones(&ctx, &manifests));
    unschedulable.extend(crate::check::kubelet_diagnostics(&ctx, &simulated));
    if unschedulable.is_empty() {
        unschedulable = crate::check::workload_diagnostics(&ctx, &simulated);
    }
    let whole_cluster: [&dyn Fn() -> Vec<crate::check::PoolDiagnostic>; 2] =
        [&|| crate::check::demand_diagnostics(&ctx, &simulated), &|| crate::check::tier_load_diagnostics(&ctx, &simulated)];
    for check in whole_cluster {
        if unschedulable.is_empty() {
            let (errors, warnings) = by_severity(check());
            unschedulable.extend(errors);
            adopted.extend(warnings);
        }
    }
    if !unschedulable.is_empty() {
        return ClusterOutcome::Unschedulable(unschedulable);
    }
    let mut findings = crate::lint::cluster_findings(&ctx, &manifests, &simulated);
    findings.extend(adopted.into_iter().map(|d| Finding { code: d.diagnostic.code.as_str(), cluster: cluster.name.clone(), profile: d.profile, pool: Some(d.nodepool), span: d.span, diagnostic: d.diagnostic }));
    crate::lint::sort(&mut findings);
    let generated = manifests.par_iter().map(Generated::new).collect();
    ClusterOutcome::Compiled { generated, findings }
}

/// A whole-cluster check's diagnostics split into the errors that stop the compile and the warnings of adopted pools.
fn by_severity(diagnostics: Vec<crate::check::PoolDiagnostic>) -> (Vec<ProfileDiagnostic>, Vec<crate::check::PoolDiagnostic>) {
    let (errors, warnings): (Vec<_>, Vec<_>) = diagnostics.into_iter().partition(|d| d.diagnostic.is_error());
    (errors.into_iter().map(|d| d.diagnostic).collect(), warnings)
}

/// The `raw` fragment of the rendered object at `path` whose fields the violation is at (or under, or above: a CEL
/// rule on `spec.kubelet` fails at `/spec/kubelet` for a fragment's `imageGCLowThresholdPercent`).
fn raw_at<'p>(cluster: &'p solve::ClusterPlan, manifests: &[Manifest], path: &Path, v: &crate::validate::Violation) -> Option<&'p crate::diagnostic::Spanned<profile::Raw>> {
    let m = manifests.iter().find(|m| m.path == path)?;
    let name = m.object["metadata"]["name"].as_str()?;
    let raws = match m.kind() {
        "NodePool" => &cluster.pools.iter().find(|p| p.name == name)?.raws,
        "EC2NodeClass" | "NodeClass" => &cluster.node_classes.iter().find(|n| n.name == name)?.raws,
        _ => return None,
    };
    let related = |leaf: &str| leaf.starts_with(&v.pointer) || v.pointer.starts_with(leaf);
    raws.iter().rev().find(|r| !v.pointer.is_empty() && profile::raw::leaf_pointers(&r.patch).iter().any(|l| related(l)))
}

/// E0315: the merged object is invalid where a `raw` fragment wrote it.
fn raw_violation(c: &Compilation, cluster: &solve::ClusterPlan, manifests: &[Manifest], path: &Path, v: &crate::validate::Violation) -> ProfileDiagnostic {
    let raw = raw_at(cluster, manifests, path, v).expect("partitioned on raw_at");
    c.sources
        .error(raw.span, ErrorCode::E0315, format!("the raw {} fragment makes {} invalid at {}: {}", raw.kind, path.display(), v.pointer, v.message))
        .label("raw fragment")
        .help("fix the fragment's field (it is merged into gpuplan's object and validated against the CRD with it)")
}

/// E0161: a node class invalid under `/spec/kubelet` (the CRD's rules: a soft eviction threshold without its grace
/// period, an image GC low threshold above the high one), reported at the `kubelet` block of a pool using the class.
fn kubelet_violation(c: &Compilation, cluster: &solve::ClusterPlan, manifests: &[Manifest], path: &Path, v: &crate::validate::Violation) -> Option<ProfileDiagnostic> {
    let m = manifests.iter().find(|m| m.path == path && m.kind() == "EC2NodeClass")?;
    if !v.pointer.starts_with("/spec/kubelet") {
        return None;
    }
    let class = m.object["metadata"]["name"].as_str()?;
    let pool = cluster.pools.iter().find(|p| p.node_class == class)?;
    let tiers = c.profile(&cluster.name, &pool.profile).into_iter().flat_map(|p| &p.pools).flat_map(|p| &p.tiers);
    let kubelet = tiers.filter(|t| cluster.pools.iter().any(|p| p.name == t.name.value && p.node_class == class)).find_map(|t| t.settings.kubelet.as_ref())?;
    Some(
        c.sources
            .error(kubelet.span, ErrorCode::E0161, format!("these kubelet settings make {} invalid at {}: {}", path.display(), v.pointer, v.message))
            .label("kubelet settings")
            .help("each eviction-soft signal needs its eviction-soft-grace-period, and image-gc-low-threshold-percent must be below the high one (the EC2NodeClass CRD's rules)"),
    )
}

/// E0184, at the NodePool's name in its profile: an add-on DaemonSet its nodes need would never run there (see
/// `ops::addons`), so its devices never become schedulable and its NodeClaims never initialize.
fn addon_diagnostics(c: &Compilation, cluster: &solve::ClusterPlan, manifests: &[Manifest]) -> Vec<ProfileDiagnostic> {
    let mut out = Vec::new();
    for u in crate::ops::addons::unreachable(&cluster.pools, manifests) {
        let Some(pool) = cluster.pools.iter().find(|p| p.name == u.nodepool) else { continue };
        let Some(tier) = c.profile(&cluster.name, &pool.profile).into_iter().flat_map(|p| &p.pools).flat_map(|p| &p.tiers).find(|t| t.name.value == u.nodepool) else {
            continue;
        };
        let taint = u.taint.describe();
        out.push(
            c.sources
                .error(tier.name.span, ErrorCode::E0184, format!(
                    "NodePool `{}` would never get its devices: {} not tolerate the node's taint {taint}",
                    u.nodepool,
                    u.subject()
                ))
                .label(format!("nodes of this pool keep {} off", u.daemonsets.join(", ")))
                .help(format!(
                    "its tolerations come from {}; add `{{key: {}, operator: Exists, effect: {}}}` there (with `gpu-operator values=#true`, the default, gpuplan writes the GPU Operator's values itself)",
                    u.from, u.taint.key, u.taint.effect
                )),
        );
    }
    out
}

/// The clusters' outcomes as one result, failing as a whole-plan compile would: the first template error (in
/// cluster order), else every schema violation then every check violation (each in path order), else every
/// unschedulable workload.
fn merge_cluster_outcomes(clusters: Vec<ClusterOutcome>) -> Result<(Vec<Generated>, Vec<Finding>), CompileError> {
    let (mut generated, mut findings, mut unschedulable) = (Vec::new(), Vec::new(), Vec::new());
    let (mut schema, mut checks) = (Vec::new(), Vec::new());
    for cluster in clusters {
        match cluster {
            ClusterOutcome::RenderFailed(err) => return Err(err.into()),
            ClusterOutcome::Invalid { schema: s, checks: c } => {
                schema.extend(s);
                checks.extend(c);
            }
            ClusterOutcome::Unschedulable(d) => unschedulable.extend(d),
            ClusterOutcome::Compiled { generated: g, findings: f } => {
                generated.extend(g);
                findings.extend(f);
            }
        }
    }
    if !schema.is_empty() || !checks.is_empty() {
        // Stable sorts: an object's own violations keep their order.
        schema.sort_by(|a, b| a.0.cmp(&b.0));
        checks.sort_by(|a, b| a.0.cmp(&b.0));
        schema.extend(checks);
        return Err(CompileError::Invalid { violations: schema });
    }
    if !unschedulable.is_empty() {
        return Err(CompileError::profiles(unschedulable));
    }
    generated.sort_by(|a, b| a.path.cmp(&b.path));
    crate::lint::sort(&mut findings);
    Ok((generated, findings))
}

impl Compilation {
    /// The profile of this name in this cluster (looked up, never scanned for: callers ask once per pool or workload).
    pub fn profile(&self, cluster: &str, name: &str) -> Option<&Profile> {
        self.profile_index.get(&(cluster.to_string(), name.to_string())).map(|&i| &self.profiles[i])
    }

    /// What the checks and the lint rules see of this compile for one of its clusters: its sources, plan, profiles and
    /// catalog. Every cluster has its region's catalog: solve refuses one without (E0151).
    pub fn cluster_ctx<'c>(&'c self, cluster: &'c solve::ClusterPlan) -> ClusterCtx<'c> {
        let (catalog, type_labels) = self.simulation_catalog(&cluster.region).expect("solve refuses a cluster without its region's catalog (E0151)");
        ClusterCtx::new(&self.sources, cluster, self.profiles_of(&cluster.name).collect(), catalog, type_labels)
    }

    /// A region's catalog with its simulator labels, for the simulation checks.
    pub fn simulation_catalog(&self, region: &str) -> Option<(&Catalog, &crate::simulate::instances::TypeLabels)> {
        Some((self.catalogs.get(region)?, self.type_labels.get(region)?))
    }

    /// Every profile of a cluster, in file order (two files may give their profiles the same name).
    pub fn profiles_of<'c>(&'c self, cluster: &str) -> impl Iterator<Item = &'c Profile> + 'c {
        self.cluster_profiles.get(cluster).into_iter().flatten().map(|&i| &self.profiles[i])
    }

    /// The files under out/<cluster>/. They are sorted by path, component by component, so a cluster's files are one
    /// contiguous run found by two binary searches (scanning all of them per cluster was quadratic in the number
    /// of clusters).
    pub fn generated_of(&self, cluster: &str) -> &[Generated] {
        cluster_run(&self.generated, cluster)
    }

    /// The objects of a cluster parsed back from their files, for commands that read them after a compile
    /// (explain, adopt, tests).
    pub fn manifests_of(&self, cluster: &str) -> Vec<Manifest> {
        self.generated_of(cluster).iter().map(Generated::manifest).collect()
    }

    /// Every object parsed back from its file, sorted by path.
    pub fn manifests(&self) -> Vec<Manifest> {
        self.generated.iter().map(Generated::manifest).collect()
    }

    /// Everything for out/: one file per object with the generated-code header, and a sorted kustomization.yaml
    /// per cluster.
    pub fn output_tree(&self) -> OutputTree {
        tree_of(&self.plan, self.generated.clone())
    }

    /// [`Compilation::output_tree`] without a copy of every file: the files move into the tree and the compilation
    /// keeps none (for `compile`, `diff` and `commit`, which need nothing else from it).
    pub fn take_output_tree(&mut self) -> OutputTree {
        tree_of(&self.plan, std::mem::take(&mut self.generated))
    }
}

/// Everything for out/ from these files: each file, and a kustomization.yaml per cluster.
fn tree_of(plan: &Plan, generated: Vec<Generated>) -> OutputTree {
    let notes = prerequisites_of(plan, &generated);
    let mut tree = OutputTree::default();
    for g in generated {
        tree.insert(g.path, g.text);
    }
    crate::render::kustomization::add_kustomizations(&mut tree, &notes);
    tree
}

/// What each cluster needs before its output works, for the top of its kustomization.yaml: the namespaces
/// the objects live in (not emitted: the GPU Operator's and kube-prometheus-stack's charts create theirs,
/// and workload namespaces belong to the workloads), the CRDs other charts install, the Helm values gpuplan
/// hands the add-on charts (`ops::addons`), and the Karpenter feature gates the NodePools rely on.
fn prerequisites_of(plan: &Plan, generated: &[Generated]) -> BTreeMap<String, Vec<String>> {
    type Lines = std::collections::BTreeSet<String>;
    let mut per_cluster: BTreeMap<String, (Lines, Lines, Lines)> = BTreeMap::new();
    for g in generated.iter().filter(|g| !crate::render::is_gitops_app(&g.path)) {
        let Some(cluster) = crate::layout::cluster_of(&g.path) else { continue };
        let (namespaces, crds, helm) = per_cluster.entry(cluster.clone()).or_default();
        // values/ is applied on its own (with the namespace it needs): its objects are not this kustomization's.
        if g.path.starts_with(Path::new(&cluster).join(crate::layout::VALUES_DIR)) {
            if let (Some(ns), Some(chart)) = (&g.namespace, crate::charts::add_ons::chart_of_values_file(&g.path)) {
                let name = g.path.file_stem().unwrap_or_default().to_string_lossy().trim_start_matches("configmap-").to_string();
                helm.insert(format!(
                    "Helm values for {chart}: values/{}/{name}.yaml (helm -f, Argo CD multi-source $values), or ConfigMap {ns}/{name} (key {}; Flux valuesFrom) applied by values/",
                    crate::layout::HELM_VALUES_DIR,
                    crate::charts::add_ons::VALUES_KEY
                ));
            }
            continue;
        }
        if let Some(ns) = &g.namespace {
            namespaces.insert(ns.clone());
        }
        let api_version = g.api_version.as_str();
        let from = match api_version.split('/').next().unwrap_or("") {
            "karpenter.sh" | "karpenter.k8s.aws" => Some("Karpenter"),
            "eks.amazonaws.com" => Some("EKS Auto Mode, which installs it when the cluster has Auto Mode enabled"),
            "nvidia.com" => Some("the NVIDIA GPU Operator"),
            "monitoring.coreos.com" => Some("kube-prometheus-stack (prometheus-operator)"),
            "kueue.x-k8s.io" => Some("Kueue ≥ v0.19"),
            "keda.sh" => Some("KEDA ≥ v2.20, whose operator also creates the ScaledObject's HPA"),
            _ => None,
        };
        if let Some(from) = from {
            crds.insert(format!("{} {api_version} (from {from})", g.kind));
        }
    }
    let mut notes = BTreeMap::new();
    for cluster in &plan.clusters {
        let Some((namespaces, crds, helm)) = per_cluster.get(&cluster.name) else { continue };
        let mut lines = vec!["Prerequisites (not managed by this kustomization):".to_string()];
        if !namespaces.is_empty() {
            lines.push(format!("  namespaces: {}", namespaces.iter().cloned().collect::<Vec<_>>().join(", ")));
        }
        lines.extend(crds.iter().map(|c| format!("  CRD: {c}")));
        lines.extend(helm.iter().map(|h| format!("  {h}")));
        lines.extend(solve::prerequisites::lines(cluster));
        lines.extend(kueue_configuration(cluster));
        notes.insert(cluster.name.clone(), lines);
    }
    notes
}

/// Gang admission is no ClusterQueue field: it is Kueue's own Configuration, `waitForPodsReady` (kubernetes-sigs/kueue
/// v0.19.2 `apis/config/v1beta2/configuration_types.go` `WaitForPodsReady`: present = on, `timeout` required;
/// `site/content/en/docs/tasks/manage/setup_wait_for_pods_ready.md`), in the `kueue-manager-config` ConfigMap of
/// Kueue's install, which gpuplan does not manage. `blockAdmission: true` admits the next job only once the last
/// one's pods all run, so two half-started gangs never hold each other's GPUs.
/// Every cluster with queues also excludes `ephemeral-storage` from Kueue's quota check
/// (`queue::render::EXCLUDE_RESOURCE_PREFIXES`): otherwise a pod requesting scratch space is never admitted.
fn kueue_configuration(cluster: &solve::ClusterPlan) -> Vec<String> {
    if cluster.queues.queues.is_empty() {
        return Vec::new();
    }
    const WHERE: &str = "Kueue Configuration (config.kueue.x-k8s.io/v1beta2, ConfigMap kueue-system/kueue-manager-config)";
    let mut lines = vec![format!(
        "  {WHERE}: {} (Kueue refuses a pod requesting a resource its ClusterQueue does not cover; the nodes' ephemeral store is theirs)",
        crate::queue::render::EXCLUDE_RESOURCE_PREFIXES
    )];
    let gangs: Vec<&str> = cluster.queues.queues.iter().filter(|q| q.gang).map(|q| q.name.as_str()).collect();
    if !gangs.is_empty() {
        lines.push(format!(
            "  {WHERE}: {} (gang admission for queues {}: a job's pods all start within the timeout, or it is evicted and requeued; the timeout covers a node's cold start, up to Karpenter's 15m registration timeout + 5m to advertise its GPUs)",
            crate::queue::render::WAIT_FOR_PODS_READY,
            gangs.join(", ")
        ));
    }
    lines
}

/// The run of `generated` (sorted by path) whose first path component is `cluster`.
fn cluster_run<'g>(generated: &'g [Generated], cluster: &str) -> &'g [Generated] {
    debug_assert!(generated.is_sorted_by(|a, b| a.path <= b.path), "generated files are sorted by path");
    fn first(g: &Generated) -> &std::ffi::OsStr {
        g.path.iter().next().unwrap_or_default()
    }
    let cluster = std::ffi::OsStr::new(cluster);
    let start = generated.partition_point(|g| first(g) < cluster);
    let len = generated[start..].partition_point(|g| first(g) == cluster);
    &generated[start..start + len]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What commands read after a compile (explain, adopt, tests) is each file parsed back: it must be the very
    /// object that was validated and linted, with the source its header names.
    #[test]
    fn a_generated_file_parses_back_to_the_object_it_was_written_from() {
        let c = compile(&CompileOptions::default()).expect("the examples compile");
        let renderer = Renderer::new(None, &STAGE_TEMPLATES).unwrap();
        let mut seen = 0;
        for cluster in &c.plan.clusters {
            for m in render_cluster(&renderer, cluster).unwrap() {
                let back = Generated::new(&m).manifest();
                assert_eq!(back.object, m.object, "{}", m.path.display());
                assert_eq!(back.source, m.source, "{}", m.path.display());
                seen += 1;
            }
        }
        assert_eq!(seen, c.generated.len());
    }

    /// Paths sort component by component, so `ml/…` comes before `ml-prod/…` and `ml.x/…` (while the strings
    /// "ml-prod/a" < "ml/a"): each cluster's objects are one run, whatever its name is a prefix of.
    #[test]
    fn a_clusters_manifests_are_one_run_even_when_its_name_prefixes_another() {
        let manifest = |path: &str| Generated { path: PathBuf::from(path), api_version: String::new(), kind: String::new(), namespace: None, text: String::new() };
        let mut manifests: Vec<Generated> = ["ml-prod/b.yaml", "ml/z.yaml", "ml.x/a.yaml", "ml/a.yaml", "ml/gitops/app.yaml", "m/a.yaml", "mlx/a.yaml"]
            .into_iter()
            .map(manifest)
            .collect();
        manifests.sort_by(|a, b| a.path.cmp(&b.path));
        let names = |run: &[Generated]| run.iter().map(|m| m.path.display().to_string()).collect::<Vec<_>>();
        assert_eq!(names(cluster_run(&manifests, "ml")), ["ml/a.yaml", "ml/gitops/app.yaml", "ml/z.yaml"]);
        assert_eq!(names(cluster_run(&manifests, "ml-prod")), ["ml-prod/b.yaml"]);
        assert_eq!(names(cluster_run(&manifests, "ml.x")), ["ml.x/a.yaml"]);
        assert!(cluster_run(&manifests, "m-l").is_empty());
    }
}
