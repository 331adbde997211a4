//! The whole pipeline for one `gpuplan compile`: profiles → Intent → (catalogs) → Plan → Manifests → files.
//! Nothing here touches out/: the caller decides whether to write, check or diff.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::catalog::{Catalog, CatalogError};
use crate::diagnostic::{ProfileDiagnostic, Sources};
use crate::emit::{with_header, OutputTree};
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
    pub manifests: Vec<Manifest>,
    /// Warnings (lint findings, stale catalog) that did not stop the compile.
    pub warnings: Vec<ProfileDiagnostic>,
    /// (cluster, profile name) → position in `profiles`, for [`Compilation::profile`].
    profile_index: BTreeMap<(String, String), usize>,
}

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("{} error{} in the profiles", .diagnostics.iter().filter(|d| d.is_error()).count(), if .diagnostics.iter().filter(|d| d.is_error()).count() == 1 { "" } else { "s" })]
    Profiles { diagnostics: Vec<ProfileDiagnostic> },
    #[error("no profiles found in {0}; write one (see README) or pass profile files")]
    NoProfiles(String),
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

/// Expands directories into their `*.kdl` files, sorted, so the compile order never depends on the file system.
pub fn profile_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CompileError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|source| CompileError::Read { path: path.clone(), source })?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "kdl"))
                .collect();
            found.sort();
            files.extend(found);
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
    let files = profile_files(&opts.profiles)?;
    let mut sources = Sources::default();
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (profiles, diagnostics) = profile::parse_files(&paths, &mut sources);
    if diagnostics.iter().any(ProfileDiagnostic::is_error) {
        return Err(CompileError::Profiles { diagnostics });
    }
    let warnings = diagnostics;

    // One catalog per region the profiles use, each read and parsed on its own core.
    let regions: std::collections::BTreeSet<&String> = profiles.iter().map(|p| &p.cluster.region.value).collect();
    let loaded: Vec<_> = regions.into_par_iter().map(|region| (region, Catalog::load_with_digest(&opts.catalogs_dir, region))).collect();
    let mut catalogs = BTreeMap::new();
    let mut digests = BTreeMap::new();
    // In region order, so that of two unreadable catalogs the error is always the same one.
    for (region, result) in loaded {
        let (catalog, digest) = result?;
        catalogs.insert(region.clone(), catalog);
        digests.insert(region.clone(), digest);
    }

    let plan = solve::solve(&profiles, &sources, &catalogs, &digests).map_err(|diagnostics| CompileError::Profiles { diagnostics })?;
    let renderer = Renderer::new(opts.templates_dir.as_deref())?;
    // The built-in schemas compile on one core while the other starts rendering.
    let (manifests, validator) = rayon::join(|| renderer.render_plan(&plan), crate::validate::Validator::builtin);
    let manifests = manifests?;
    validator.prepare(manifests.iter().map(|m| (m.object["apiVersion"].as_str().unwrap_or(""), m.kind())));
    // Every object independently, on every core; the ordered collect keeps the report deterministic.
    let mut violations: Vec<_> = manifests
        .par_iter()
        // Flux's GitRepository is the one kind without a schema here (its CRD is not among ../shared/schemas);
        // tests check its fields.
        .filter(|m| !(crate::render::is_gitops_app(&m.path) && m.kind() == "GitRepository"))
        .flat_map_iter(|m| validator.validate(&m.object).into_iter().map(|v| (m.path.clone(), v)))
        .collect();
    // What a schema cannot say: ClusterPolicy images, the adapter config, HPA metrics served.
    violations.extend(crate::ops::check::rendered(&manifests));
    if !violations.is_empty() {
        return Err(CompileError::Invalid { violations });
    }
    let profile_index = profiles.iter().enumerate().map(|(i, p)| ((p.cluster.name.value.clone(), p.name.value.clone()), i)).collect();
    let mut compilation = Compilation { sources, profiles, catalogs, plan, manifests, warnings, profile_index };
    // Every workload at max replicas on the generated NodePools (E0180/E0181): proves the limits hold its pods.
    let unschedulable = crate::simulate::check::workload_diagnostics(&compilation);
    if !unschedulable.is_empty() {
        return Err(CompileError::Profiles { diagnostics: unschedulable });
    }
    compilation.warnings.extend(crate::report::lint::lint(&compilation));
    // By file, then position in the file (not the location string: line 12 sorts after line 9).
    compilation.warnings.sort_by_key(|d| (d.src.name().to_string(), d.span.offset(), d.code));
    Ok(compilation)
}

impl Compilation {
    /// The profile of this name in this cluster (looked up, never scanned for: callers ask once per pool or workload).
    pub fn profile(&self, cluster: &str, name: &str) -> Option<&Profile> {
        self.profile_index.get(&(cluster.to_string(), name.to_string())).map(|&i| &self.profiles[i])
    }

    /// The objects under out/<cluster>/. Manifests are sorted by path, component by component, so a cluster's
    /// objects are one contiguous run found by two binary searches (scanning all of them per cluster was
    /// quadratic in the number of clusters).
    pub fn manifests_of(&self, cluster: &str) -> &[Manifest] {
        cluster_run(&self.manifests, cluster)
    }

    /// Everything for out/: one file per object with the generated-code header, and a sorted kustomization.yaml
    /// per cluster.
    pub fn output_tree(&self) -> OutputTree {
        let mut tree = OutputTree::default();
        let files: Vec<(PathBuf, String)> =
            self.manifests.par_iter().map(|m| (m.path.clone(), with_header(&m.source, &m.to_yaml()))).collect();
        for (path, text) in files {
            tree.insert(path, text);
        }
        tree.add_kustomizations_with_notes(&self.prerequisites());
        tree
    }

    /// What each cluster needs before its output works, for the top of its kustomization.yaml: the namespaces
    /// the objects live in (not emitted: the GPU Operator's and kube-prometheus-stack's charts create theirs,
    /// and workload namespaces belong to the workloads), the CRDs other charts install, and the Karpenter
    /// feature gates the NodePools rely on.
    pub fn prerequisites(&self) -> BTreeMap<String, Vec<String>> {
        let mut per_cluster: BTreeMap<String, (std::collections::BTreeSet<String>, std::collections::BTreeSet<String>)> = BTreeMap::new();
        for m in self.manifests.iter().filter(|m| !crate::render::is_gitops_app(&m.path)) {
            let Some(cluster) = crate::emit::cluster_of(&m.path) else { continue };
            let (namespaces, crds) = per_cluster.entry(cluster).or_default();
            if let Some(ns) = m.object["metadata"]["namespace"].as_str() {
                namespaces.insert(ns.to_string());
            }
            let api_version = m.object["apiVersion"].as_str().unwrap_or("");
            let from = match api_version.split('/').next().unwrap_or("") {
                "karpenter.sh" | "karpenter.k8s.aws" => Some("Karpenter"),
                "nvidia.com" => Some("the NVIDIA GPU Operator"),
                "monitoring.coreos.com" => Some("kube-prometheus-stack (prometheus-operator)"),
                _ => None,
            };
            if let Some(from) = from {
                crds.insert(format!("{} {api_version} (from {from})", m.kind()));
            }
        }
        let mut notes = BTreeMap::new();
        for cluster in &self.plan.clusters {
            let Some((namespaces, crds)) = per_cluster.get(&cluster.name) else { continue };
            let mut lines = vec!["Prerequisites (not managed by this kustomization):".to_string()];
            if !namespaces.is_empty() {
                lines.push(format!("  namespaces: {}", namespaces.iter().cloned().collect::<Vec<_>>().join(", ")));
            }
            lines.extend(crds.iter().map(|c| format!("  CRD: {c}")));
            let mut gates = Vec::new();
            if cluster.pools.iter().any(|p| p.replicas() > 1) {
                gates.push("NodeOverlay=true (time-sliced/MIG pools)");
            }
            if cluster.pools.iter().any(|p| p.capacity_types.contains(&crate::catalog::CapacityType::Reserved)) {
                gates.push("ReservedCapacity=true (reserved pools)");
            }
            if !gates.is_empty() {
                lines.push(format!("  Karpenter feature gates: {}", gates.join(", ")));
            }
            notes.insert(cluster.name.clone(), lines);
        }
        notes
    }
}

/// The run of `manifests` (sorted by path) whose first path component is `cluster`.
fn cluster_run<'m>(manifests: &'m [Manifest], cluster: &str) -> &'m [Manifest] {
    debug_assert!(manifests.is_sorted_by(|a, b| a.path <= b.path), "manifests are sorted by path");
    fn first(m: &Manifest) -> &std::ffi::OsStr {
        m.path.iter().next().unwrap_or_default()
    }
    let cluster = std::ffi::OsStr::new(cluster);
    let start = manifests.partition_point(|m| first(m) < cluster);
    let len = manifests[start..].partition_point(|m| first(m) == cluster);
    &manifests[start..start + len]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paths sort component by component, so `ml/…` comes before `ml-prod/…` and `ml.x/…` (while the strings
    /// "ml-prod/a" < "ml/a"): each cluster's objects are one run, whatever its name is a prefix of.
    #[test]
    fn a_clusters_manifests_are_one_run_even_when_its_name_prefixes_another() {
        let manifest = |path: &str| Manifest { path: PathBuf::from(path), source: String::new(), object: serde_json::Value::Null };
        let mut manifests: Vec<Manifest> = ["ml-prod/b.yaml", "ml/z.yaml", "ml.x/a.yaml", "ml/a.yaml", "ml/gitops/app.yaml", "m/a.yaml", "mlx/a.yaml"]
            .into_iter()
            .map(manifest)
            .collect();
        manifests.sort_by(|a, b| a.path.cmp(&b.path));
        let names = |run: &[Manifest]| run.iter().map(|m| m.path.display().to_string()).collect::<Vec<_>>();
        assert_eq!(names(cluster_run(&manifests, "ml")), ["ml/a.yaml", "ml/gitops/app.yaml", "ml/z.yaml"]);
        assert_eq!(names(cluster_run(&manifests, "ml-prod")), ["ml-prod/b.yaml"]);
        assert_eq!(names(cluster_run(&manifests, "ml.x")), ["ml.x/a.yaml"]);
        assert!(cluster_run(&manifests, "m-l").is_empty());
    }
}
