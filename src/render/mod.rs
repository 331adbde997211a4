//! Stage 4: Plan → Manifests. Templates (minijinja) turn the plan into YAML; each result is parsed back into a
//! value (fast_yaml.rs, else serde-saphyr), so that what is validated and written is exactly what the templates
//! produced, then re-emitted canonically as serde-saphyr writes it (fast_emit.rs, else serde-saphyr): sorted keys,
//! strings that YAML 1.1 would misread quoted.
//!
//! Built-in templates are compiled into the binary; `--templates DIR` replaces any of them by file name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use minijinja::Environment;
use serde_json::{json, Value};

use crate::catalog::CapacityType;
use crate::solve::{ClusterPlan, NodeClassPlan, PoolPlan};

pub mod kustomization;
mod fast_emit;
mod fast_yaml;
#[cfg(test)]
mod test_rng;

/// One generated object, before the file header is added.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// Path relative to out/: `<cluster>/<kind>-<name>.yaml`.
    pub path: PathBuf,
    /// The profile file it came from ("gpuplan" for cluster-wide objects).
    pub source: String,
    pub object: Value,
}

impl Manifest {
    pub fn kind(&self) -> &str {
        self.object.get("kind").and_then(Value::as_str).unwrap_or("")
    }

    pub fn api_version(&self) -> &str {
        self.object.get("apiVersion").and_then(Value::as_str).unwrap_or("")
    }

    /// Canonical YAML text of the object.
    pub fn to_yaml(&self) -> String {
        to_yaml(&self.object)
    }
}

/// Canonical YAML for a value: serde_json's maps are BTreeMaps, so keys come out sorted.
/// Long strings stay on one line (no folded `>` scalars that reflow on every wording change); multi-line
/// strings (PromQL) become literal blocks. Strings YAML 1.1 would misread (`on`, `1:30`, `2026-01-01`) are quoted.
pub fn to_yaml(value: &Value) -> String {
    #[cfg(test)]
    tests::record_emitted(value);
    // Generated objects are a small regular subset of what serde-saphyr can write, which the fast path writes
    // the same way; anything it is not sure about goes to serde-saphyr.
    if let Some(text) = fast_emit::emit(value) {
        // Debug builds (the test suite) check every fast emission against serde-saphyr.
        debug_assert_eq!(text, saphyr_yaml(value), "fast_emit differs from serde-saphyr for {value}");
        return text;
    }
    saphyr_yaml(value)
}

/// [`to_yaml`] through serde-saphyr.
fn saphyr_yaml(value: &Value) -> String {
    let mut options = serde_saphyr::SerializerOptions::default();
    options.folded_wrap_chars = usize::MAX / 2;
    let mut text = serde_saphyr::to_string_with_options(value, options).expect("a JSON value always serializes to YAML");
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The built-in templates: (file name, text).
pub const BUILTIN_TEMPLATES: &[(&str, &str)] = &[
    ("nodepool.yaml.j2", include_str!("../../templates/nodepool.yaml.j2")),
    ("flux-gitrepository.yaml.j2", include_str!("../../templates/flux-gitrepository.yaml.j2")),
    ("nodeoverlay.yaml.j2", include_str!("../../templates/nodeoverlay.yaml.j2")),
    ("ec2nodeclass.yaml.j2", include_str!("../../templates/ec2nodeclass.yaml.j2")),
    ("nodeclass.yaml.j2", include_str!("../../templates/nodeclass.yaml.j2")),
    ("argocd-application.yaml.j2", include_str!("../../templates/argocd-application.yaml.j2")),
    ("flux-kustomization.yaml.j2", include_str!("../../templates/flux-kustomization.yaml.j2")),
];

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("cannot read template {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("template {name}: {source:#}")]
    Template { name: String, source: minijinja::Error },
    /// A render that ran past [`crate::limits::TEMPLATE_FUEL`] (a `--templates` loop of a billion rounds), at the
    /// template's file and line.
    #[error("{path}:{line}: template {name} ran more than the {fuel} {counts}: bound the template's loops, or {raise}", counts = crate::limits::TEMPLATE_FUEL.counts, raise = crate::limits::TEMPLATE_FUEL.how_to_raise())]
    OutOfFuel { name: String, path: String, line: usize, fuel: u64 },
    /// A render that wrote past what [`crate::limits::RENDERED_BYTES`] had left.
    #[error("{path}: template {name} wrote past the {limit} {counts}: bound what the template writes, or {raise}", counts = crate::limits::RENDERED_BYTES.counts, raise = crate::limits::RENDERED_BYTES.how_to_raise())]
    TooLarge { name: String, path: String, limit: u64 },
    #[error("{0}")]
    Limit(std::io::Error),
    #[error("template {name} rendered YAML that does not parse for {object}: {message}\n--- rendered ---\n{text}")]
    Yaml { name: String, object: String, message: String, text: String },
}

pub struct Renderer {
    env: Environment<'static>,
    /// Each `--templates` override's path, by template name, for the fuel limit's file:line.
    overrides: Vec<(String, PathBuf)>,
    fuel: u64,
    /// [`crate::limits::RENDERED_BYTES`] in force, and the bytes the renders so far wrote.
    rendered_limit: u64,
    rendered: std::sync::atomic::AtomicU64,
    /// The instructions the renders so far ran, together: the fuel is for the whole compile, not per object (a loop
    /// of 999,999 in a template rendered for each of 20,000 pools would otherwise run 2·10¹⁰).
    used: std::sync::atomic::AtomicU64,
    /// (template, apiVersion, kind) as each template's text names them on literal top-level lines.
    kinds: Vec<(String, String, String)>,
}

/// The templates of out/<cluster>/gitops/ (rendered only for clusters with a `gitops` block).
const GITOPS_TEMPLATES: [&str; 3] = ["argocd-application.yaml.j2", "flux-gitrepository.yaml.j2", "flux-kustomization.yaml.j2"];

/// The `apiVersion:` and `kind:` a template's text writes at the top level, when both are literal.
fn literal_kind(text: &str) -> Option<(String, String)> {
    let field = |key: &str| text.lines().find_map(|l| l.strip_prefix(key)).map(str::trim).filter(|v| !v.is_empty() && !v.contains("{{"));
    Some((field("apiVersion:")?.to_string(), field("kind:")?.to_string()))
}

/// What one render writes into: a buffer that charges each write to the compile's running total (shared by the
/// renders of every thread) and refuses the one that would pass the limit, which minijinja turns into
/// `ErrorKind::WriteFailure` and the render stops (before the bytes are kept, so the limit is never passed).
struct CappedBuffer<'a> {
    bytes: Vec<u8>,
    rendered: &'a std::sync::atomic::AtomicU64,
    limit: u64,
}

impl std::io::Write for CappedBuffer<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let len = buf.len() as u64;
        if self.rendered.fetch_add(len, std::sync::atomic::Ordering::Relaxed) + len > self.limit {
            self.rendered.fetch_sub(len, std::sync::atomic::Ordering::Relaxed);
            return Err(std::io::Error::other("the rendered-bytes limit"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Renderer {
    /// The built-in templates, then those of each list of `more` (the stages that render with this one pass
    /// theirs: compile hands over the ops and queue templates), each replaced by `<dir>/<name>` when that file exists.
    pub fn new(template_dir: Option<&Path>, more: &[&[(&str, &str)]]) -> Result<Renderer, RenderError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        // minijinja counts each instruction a render runs against its fuel (`Environment::set_fuel`, docs.rs
        // minijinja "fuel" feature): a template loop cannot run without end.
        let fuel = crate::limits::TEMPLATE_FUEL.value().map_err(RenderError::Limit)?;
        env.set_fuel(Some(fuel));
        let rendered_limit = crate::limits::RENDERED_BYTES.value().map_err(RenderError::Limit)?;
        let mut kinds = Vec::new();
        let mut overrides = Vec::new();
        for (name, builtin) in BUILTIN_TEMPLATES.iter().chain(more.iter().copied().flatten()) {
            let text = match template_dir.map(|d| d.join(name)).filter(|p| p.exists()) {
                Some(path) => {
                    overrides.push((name.to_string(), path.clone()));
                    crate::input::read_to_string(&path).map_err(|source| RenderError::Read { path, source })?
                }
                None => builtin.to_string(),
            };
            if let Some((api_version, kind)) = literal_kind(&text) {
                kinds.push((name.to_string(), api_version, kind));
            }
            env.add_template_owned(name.to_string(), text)
                .map_err(|source| RenderError::Template { name: name.to_string(), source })?;
        }
        Ok(Renderer { env, overrides, fuel, rendered_limit, rendered: Default::default(), used: Default::default(), kinds })
    }

    /// The (apiVersion, kind) pairs the templates render, the GitOps apps' only when `gitops`: what the validator
    /// compiles before the first object exists (a hint: a kind missed here compiles when first validated).
    pub fn kinds(&self, gitops: bool) -> impl Iterator<Item = (&str, &str)> {
        self.kinds
            .iter()
            .filter(move |(name, _, _)| gitops || !GITOPS_TEMPLATES.contains(&name.as_str()))
            .map(|(_, api_version, kind)| (api_version.as_str(), kind.as_str()))
    }

    /// Renders one template and parses the result back (for the objects of the stages above: ops, queue).
    pub(crate) fn render_template(&self, name: &str, object: &str, context: Value) -> Result<Value, RenderError> {
        self.render(name, object, context)
    }

    fn render_error(&self, name: &str, source: minijinja::Error) -> RenderError {
        match source.kind() {
            minijinja::ErrorKind::OutOfFuel => self.out_of_fuel(name, source.line().unwrap_or(1)),
            // The only writer is the capped buffer, whose one failure is the limit.
            minijinja::ErrorKind::WriteFailure => RenderError::TooLarge { name: name.into(), path: self.template_path(name), limit: self.rendered_limit },
            _ => RenderError::Template { name: name.into(), source },
        }
    }

    fn out_of_fuel(&self, name: &str, line: usize) -> RenderError {
        RenderError::OutOfFuel { name: name.into(), path: self.template_path(name), line, fuel: self.fuel }
    }

    /// Where template `name` comes from, as its errors name it: the `--templates` override's path, else the built-in's.
    fn template_path(&self, name: &str) -> String {
        self.overrides.iter().find(|(n, _)| n == name).map_or_else(|| format!("templates/{name}"), |(_, p)| p.display().to_string())
    }

    fn render(&self, name: &str, object: &str, context: Value) -> Result<Value, RenderError> {
        let template = self.env.get_template(name).map_err(|source| RenderError::Template { name: name.into(), source })?;
        let mut out = CappedBuffer { bytes: Vec::new(), rendered: &self.rendered, limit: self.rendered_limit };
        let captured = template.render_captured_to(minijinja::value::Serde(&context), &mut out).map_err(|source| self.render_error(name, source))?;
        let consumed = captured.state().fuel_levels().map_or(0, |(consumed, _)| consumed);
        let used = self.used.fetch_add(consumed, std::sync::atomic::Ordering::Relaxed) + consumed;
        if used > self.fuel {
            return Err(self.out_of_fuel(name, 1));
        }
        drop(captured);
        // minijinja writes `str`s only, so the bytes are UTF-8.
        let text = String::from_utf8(out.bytes).expect("minijinja writes UTF-8");
        #[cfg(test)]
        tests::record(&text);
        // Our templates render a small regular subset of YAML, which the fast path reads; anything else (a
        // `--templates` override's anchors, say) and every malformed text go to serde-saphyr.
        if let Some(value) = fast_yaml::parse(&text) {
            // Debug builds (the test suite) check every fast parse against serde-saphyr.
            debug_assert_eq!(Some(&value), serde_saphyr::from_str::<Value>(&text).ok().as_ref(), "fast_yaml differs from serde-saphyr on:\n{text}");
            return Ok(value);
        }
        serde_saphyr::from_str::<Value>(&text).map_err(|err| RenderError::Yaml {
            name: name.into(),
            object: object.into(),
            message: err.to_string(),
            text,
        })
    }

    /// Renders the pool objects of one cluster: its node classes, NodePools and NodeOverlays, in plan order.
    pub fn render_pools(&self, cluster: &ClusterPlan) -> Result<Vec<Manifest>, RenderError> {
        let mut manifests = Vec::new();
        for class in &cluster.node_classes {
            let (kind, template) = if class.auto_mode { ("nodeclass", "nodeclass.yaml.j2") } else { ("ec2nodeclass", "ec2nodeclass.yaml.j2") };
            let mut object = self.render(template, &class.name, node_class_context(cluster, class))?;
            class.raws.iter().for_each(|raw| crate::profile::raw::merge_patch(&mut object, &raw.patch));
            manifests.push(Manifest { path: object_path(&cluster.name, kind, &class.name), source: class.source.clone(), object });
        }
        for pool in &cluster.pools {
            let mut object = self.render("nodepool.yaml.j2", &pool.name, node_pool_context(cluster, pool))?;
            pool.raws.iter().for_each(|raw| crate::profile::raw::merge_patch(&mut object, &raw.patch));
            manifests.push(Manifest { path: object_path(&cluster.name, "nodepool", &pool.name), source: pool.source.clone(), object });
            for (name, context) in node_overlay_contexts(cluster, pool) {
                manifests.push(Manifest {
                    path: object_path(&cluster.name, "nodeoverlay", &name),
                    source: pool.source.clone(),
                    object: self.render("nodeoverlay.yaml.j2", &name, context)?,
                });
            }
        }
        for o in &cluster.overlays {
            manifests.push(Manifest {
                path: object_path(&cluster.name, "nodeoverlay", &o.name),
                source: o.source.clone(),
                object: self.render("nodeoverlay.yaml.j2", &o.name, profile_overlay_context(cluster, o))?,
            });
        }
        Ok(manifests)
    }

    /// Every object of one cluster as out/<cluster>/ holds it, from `manifests` (the pools', the operations' and the
    /// queues' objects): each with its GitOps annotations, plus the cluster's gitops/ apps, sorted by path.
    pub fn finish_cluster(&self, cluster: &ClusterPlan, mut manifests: Vec<Manifest>) -> Result<Vec<Manifest>, RenderError> {
        let argocd = cluster.gitops.as_ref().is_some_and(|g| g.argocd);
        for m in &mut manifests {
            let name = m.object["metadata"]["name"].as_str().unwrap_or_default().to_string();
            let annotations = gitops_annotations(m.kind(), &name, argocd);
            if annotations.is_empty() {
                continue;
            }
            if let Some(metadata) = m.object.pointer_mut("/metadata").and_then(Value::as_object_mut)
                && let Some(map) = metadata.entry("annotations").or_insert_with(|| json!({})).as_object_mut() {
                    for (k, v) in annotations {
                        map.insert(k.to_string(), json!(v));
                    }
                }
        }
        let values = manifests.iter().any(|m| m.path.starts_with(Path::new(&cluster.name).join(crate::layout::VALUES_DIR)));
        manifests.extend(self.render_gitops_apps(cluster, values)?);
        manifests.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(manifests)
    }
}

impl Renderer {
    /// The Argo CD Application and/or Flux Kustomization that sync out/<cluster>, when the cluster asks for them, and
    /// for Flux a second Kustomization applying out/<cluster>/values/ (when `values`: the cluster has add-on Helm
    /// values) with no `dependsOn`, so that the charts reading them can wait for it while gpuplan's main
    /// Kustomization waits for the charts (the profile's `depends-on`): no cycle. They go to out/<cluster>/gitops/,
    /// which the cluster's kustomization does not list.
    fn render_gitops_apps(&self, cluster: &ClusterPlan, values: bool) -> Result<Vec<Manifest>, RenderError> {
        let Some(gitops) = &cluster.gitops else { return Ok(Vec::new()) };
        let out_path = gitops.path.trim_matches('/');
        let path = if out_path.is_empty() || out_path == "." { cluster.name.clone() } else { format!("{out_path}/{}", cluster.name) };
        let name = flux_kustomization(&cluster.name);
        let context = json!({
            "name": name,
            "source": name,
            "path": path,
            "gitops": {
                "repo": gitops.repo,
                "revision": gitops.revision,
                "ref_kind": flux_ref_kind(&gitops.revision),
                "depends_on": gitops.depends_on,
            },
            "labels": common_labels(),
        });
        let dir = PathBuf::from(&cluster.name).join(crate::layout::GITOPS_DIR);
        let mut apps = Vec::new();
        let [argocd, flux_repository, flux_kustomization] = GITOPS_TEMPLATES;
        for (wanted, template, file) in [
            (gitops.argocd, argocd, "argocd-application.yaml"),
            (gitops.flux, flux_repository, "flux-gitrepository.yaml"),
            (gitops.flux, flux_kustomization, "flux-kustomization.yaml"),
        ] {
            if wanted {
                apps.push(Manifest {
                    path: dir.join(file),
                    source: crate::layout::GPUPLAN_SOURCE.to_string(),
                    object: self.render(template, &name, context.clone())?,
                });
            }
        }
        if gitops.flux && values {
            let values_name = flux_values_kustomization(&cluster.name);
            let mut values_context = context.clone();
            values_context["name"] = json!(values_name);
            values_context["path"] = json!(format!("{path}/{}", crate::layout::VALUES_DIR));
            values_context["gitops"]["depends_on"] = json!([]);
            apps.push(Manifest {
                path: dir.join("flux-kustomization-values.yaml"),
                source: crate::layout::GPUPLAN_SOURCE.to_string(),
                object: self.render(flux_kustomization, &values_name, values_context)?,
            });
        }
        Ok(apps)
    }
}

pub use crate::layout::{flux_kustomization, flux_values_kustomization};

/// Which `spec.ref` field of a Flux GitRepository a revision goes in: a 40-hex commit, a `v1.2.3`-like tag, or
/// a branch (source-controller docs, spec/v1/gitrepositories.md: `ref.branch`, `ref.tag`, `ref.commit`).
pub fn flux_ref_kind(revision: &str) -> &'static str {
    let hex = revision.len() == 40 && revision.chars().all(|c| c.is_ascii_hexdigit());
    let tag = revision.strip_prefix('v').is_some_and(|v| v.split('.').count() >= 2 && v.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())));
    if hex {
        "commit"
    } else if tag {
        "tag"
    } else {
        "branch"
    }
}

/// Objects a GitOps prune must never delete: deleting a NodePool deletes its NodeClaims at once, without its
/// disruption budgets (karpenter.sh docs, concepts/disruption "Manual" and concepts/nodeclaims), and deleting its
/// EC2NodeClass (or EKS Auto Mode NodeClass) blocks every node of the pools that name it; without the ClusterPolicy or the device-plugin config the
/// GPU Operator tears its operands down. Renaming a pool (or changing a preset, which renames its NodePools) would
/// otherwise prune the old fleet on the next sync; `gpuplan commit` names such removals and wants `--allow-removal`.
/// A Namespace (the GPU Operator's, written with its Helm values) would take the operator installed in it along.
pub fn prune_protected(kind: &str, name: &str) -> bool {
    matches!(kind, "NodePool" | "EC2NodeClass" | "NodeClass" | "ClusterPolicy" | "Namespace") || (kind == "ConfigMap" && name == crate::charts::gpu_operator::DEVICE_PLUGIN_CONFIG_MAP)
}

/// The GitOps annotations of one object: prune protection for Argo CD (`argocd.argoproj.io/sync-options:
/// Prune=false`, argoproj/argo-cd docs/user-guide/sync-options.md "No Prune Resources") and Flux
/// (`kustomize.toolkit.fluxcd.io/prune: disabled`, fluxcd/kustomize-controller docs/spec/v1/kustomizations.md
/// "Prune"), whoever syncs the cluster; plus, for clusters gpuplan's own Argo CD Application syncs, its sync waves and
/// options. Argo CD reads several sync options from one annotation, comma-separated.
pub fn gitops_annotations(kind: &str, name: &str, argocd: bool) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut sync_options = Vec::new();
    if prune_protected(kind, name) {
        out.push(("kustomize.toolkit.fluxcd.io/prune", "disabled".to_string()));
        sync_options.push("Prune=false");
    }
    if argocd {
        for (k, v) in argocd_sync_annotations(kind) {
            match k {
                "argocd.argoproj.io/sync-options" => sync_options.push(v),
                _ => out.push((k, v.to_string())),
            }
        }
    }
    if !sync_options.is_empty() {
        out.push(("argocd.argoproj.io/sync-options", sync_options.join(",")));
    }
    out
}

/// Argo CD sync waves (lowest first; argoproj/argo-cd docs/user-guide/sync-waves.md) and sync options per kind:
/// the EC2NodeClass before the NodePools and NodeOverlays that name it, then everything else; objects of a CRD
/// that another Application installs skip the dry run until it exists (docs/user-guide/sync-options.md,
/// `SkipDryRunOnMissingResource`). Inert for Flux, which orders by kind itself.
pub fn argocd_sync_annotations(kind: &str) -> Vec<(&'static str, &'static str)> {
    let wave = match kind {
        "EC2NodeClass" | "NodeClass" => "-1",
        "NodePool" | "NodeOverlay" => "0",
        _ => "1",
    };
    let mut annotations = vec![("argocd.argoproj.io/sync-wave", wave)];
    if matches!(kind, "EC2NodeClass" | "NodeClass" | "NodePool" | "NodeOverlay" | "ClusterPolicy" | "PrometheusRule" | "ServiceMonitor") {
        annotations.push(("argocd.argoproj.io/sync-options", "SkipDryRunOnMissingResource=true"));
    }
    annotations
}

/// True for the objects of out/<cluster>/gitops/ (Argo CD Application, Flux GitRepository and Kustomization),
/// which the cluster's kustomization does not list.
pub fn is_gitops_app(path: &std::path::Path) -> bool {
    path.components().nth(1).is_some_and(|c| c.as_os_str() == crate::layout::GITOPS_DIR)
}

pub fn object_path(cluster: &str, kind: &str, name: &str) -> PathBuf {
    PathBuf::from(cluster).join(format!("{kind}-{name}.yaml"))
}

/// Labels every generated object carries.
pub fn common_labels() -> Value {
    json!({ "app.kubernetes.io/managed-by": "gpuplan" })
}

/// Provenance annotations every generated object carries.
pub fn provenance(profile: &str, source: &str, cluster: &ClusterPlan) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("gpuplan.dev/profile".to_string(), profile.to_string()),
        ("gpuplan.dev/source".to_string(), source.to_string()),
        ("gpuplan.dev/catalog".to_string(), format!("{}@{}", cluster.region, cluster.catalog_digest)),
    ])
}

/// On NodePools of `efa #true` pools.
pub const EFA_ANNOTATION: &str = "gpuplan.dev/efa";

/// The EFA annotation's text: where the EFA device plugin comes from. Self-managed Karpenter: the chart, with the
/// tolerations gpuplan writes into its values ConfigMap (`ops::addons::values`). EKS Auto Mode: Auto Mode itself, which
/// is why gpuplan emits no values there (`ops::addons::devices`), and so names no ConfigMap.
fn efa_annotation(pool: &PoolPlan) -> String {
    if pool.auto_mode {
        "required: every type has EFA; EKS Auto Mode runs the EFA device plugin on these nodes itself (the aws-efa-k8s-device-plugin chart's DaemonSet skips eks.amazonaws.com/compute-type=auto nodes)".to_string()
    } else {
        format!("required: every type has EFA; the EFA device plugin runs here with ConfigMap {}/{}", crate::charts::add_ons::DEVICE_PLUGIN_NAMESPACE, crate::charts::add_ons::EFA_VALUES)
    }
}

fn usd(v: f64) -> String {
    format!("{v:.2}")
}

fn node_pool_context(cluster: &ClusterPlan, pool: &PoolPlan) -> Value {
    let mut annotations = provenance(&pool.profile, &pool.source, cluster);
    annotations.insert("gpuplan.dev/at-limit-usd-per-hour".into(), usd(pool.at_limit_usd_per_hour));
    annotations.insert("gpuplan.dev/worst-case-usd-per-hour".into(), usd(pool.worst_case_usd_per_hour));
    if let Some(b) = pool.budget_usd_per_hour {
        annotations.insert("gpuplan.dev/budget-usd-per-hour".into(), usd(b));
    }
    annotations.insert("gpuplan.dev/worst-case-basis".into(), worst_case_basis(pool));
    if let Some(fixed) = pool.fixed_usd_per_hour {
        annotations.insert("gpuplan.dev/fixed-usd-per-hour".into(), usd(fixed));
    }
    // On every NodePool (a reservation's is its fixed cost), so that diff's per-cluster sums are whole.
    annotations.insert(DRAIN_PEAK_ANNOTATION.into(), usd(pool.drain_peak_usd_per_hour));
    if pool.draining_nodes > 0 {
        annotations.insert(DRAIN_PEAK_BASIS_ANNOTATION.into(), drain_peak_basis(pool));
    }
    if pool.efa {
        // Read back by adopt (`efa #true`, from the `required` prefix): the EFA device plugin must reach these nodes.
        annotations.insert(EFA_ANNOTATION.into(), efa_annotation(pool));
    }
    if pool.uses_estimates() {
        annotations.insert(
            "gpuplan.dev/price-estimate".into(),
            "the at-limit cost uses estimated spot prices (no observed spot data in the catalog); refresh the catalog for real ones".into(),
        );
    }
    let requirements: Vec<Value> = pool
        .requirements
        .iter()
        .map(|r| json!({ "key": r.key, "operator": r.operator, "values": r.values, "min_values": r.min_values }))
        .collect();
    let budgets: Vec<Value> = pool
        .disruption
        .budgets
        .iter()
        .map(|b| json!({ "nodes": b.nodes, "schedule": b.schedule, "duration": b.duration, "reasons": b.reasons }))
        .collect();
    let taints: Vec<Value> = pool.taints.iter().map(|t| json!({ "key": t.key, "value": t.value, "effect": t.effect })).collect();
    json!({
        "labels": common_labels(),
        "annotations": annotations,
        "pool": {
            "name": pool.name,
            "weight": pool.weight,
            "resource": pool.resource(),
            "limit": pool.limit,
            "cpu_limit": pool.cpu_limit,
            "memory_limit": pool.resource_limits.memory,
            "static": pool.static_pool.map(|s| json!({ "replicas": s.replicas, "max_nodes": s.max_nodes })),
            "node_class": pool.node_class,
            "node_class_group": if pool.auto_mode { crate::catalog::auto_mode::GROUP } else { "karpenter.k8s.aws" },
            "node_class_kind": if pool.auto_mode { "NodeClass" } else { "EC2NodeClass" },
            "labels": pool.labels,
            "requirements": requirements,
            "taints": taints,
            "capacity_types": pool.capacity_types.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
            "reserved": pool.capacity_types.contains(&CapacityType::Reserved),
            "disruption": {
                "consolidation_policy": pool.disruption.consolidation_policy,
                "consolidate_after": pool.disruption.consolidate_after,
                "expire_after": pool.disruption.expire_after,
                "termination_grace_period": pool.disruption.termination_grace_period,
                "budgets": budgets,
            },
        },
    })
}

/// One NodeOverlay per physical GPU count among a shared pool's types (the overlay's capacity is a fixed number,
/// and `karpenter.k8s.aws/instance-gpu-count` is one of the labels a NodeOverlay may select on). When types with
/// the same GPU count offer different units (MIG devices per GPU differ by model: p4d's A100-40GB and p4de's
/// A100-80GB), each units value gets its own overlay, `<pool>-<gpus>gpu-x<units per GPU>`, naming its types.
fn node_overlay_contexts(cluster: &ClusterPlan, pool: &PoolPlan) -> Vec<(String, Value)> {
    let mut groups: BTreeMap<u32, BTreeMap<u32, Vec<&str>>> = BTreeMap::new();
    // Only sharing makes gpuplan declare capacity itself: units a profile's capacity overlay set are its own NodeOverlay.
    for c in pool.candidates.iter().filter(|c| pool.sharing.is_some() && c.units > c.accelerators) {
        groups.entry(c.accelerators).or_default().entry(c.units).or_default().push(&c.name);
    }
    let mut contexts = Vec::new();
    for (gpus, by_units) in groups {
        let split = by_units.len() > 1;
        for (units, mut types) in by_units {
            types.sort();
            let name = if split { format!("{}-{gpus}gpu-x{}", pool.name, units / gpus) } else { format!("{}-{gpus}gpu", pool.name) };
            let mut requirements = vec![
                json!({ "key": "karpenter.sh/nodepool", "operator": "In", "values": [pool.name] }),
                json!({ "key": "karpenter.k8s.aws/instance-gpu-count", "operator": "In", "values": [gpus.to_string()] }),
            ];
            if split {
                requirements.push(json!({ "key": "node.kubernetes.io/instance-type", "operator": "In", "values": types }));
            }
            let context = json!({
                "labels": common_labels(),
                "annotations": provenance(&pool.profile, &pool.source, cluster),
                "overlay": { "name": name, "weight": 10, "requirements": requirements, "price": null, "price_adjustment": null, "capacity": [[pool.resource(), units.to_string()]] },
            });
            contexts.push((name, context));
        }
    }
    contexts
}

/// A profile's `overlay` block (`solve::OverlayPlan`) as the NodeOverlay template's context.
fn profile_overlay_context(cluster: &ClusterPlan, o: &crate::solve::OverlayPlan) -> Value {
    let requirements: Vec<Value> = o.requirements.iter().map(|r| json!({ "key": r.key, "operator": r.operator, "values": r.values })).collect();
    let (price, adjustment) = match &o.price {
        Some(crate::profile::OverlayPrice::Price(p)) => (Some(p), None),
        Some(crate::profile::OverlayPrice::Adjustment(a)) => (None, Some(a)),
        None => (None, None),
    };
    json!({
        "labels": common_labels(),
        "annotations": provenance(&o.profile, &o.source, cluster),
        "overlay": { "name": o.name, "weight": o.weight, "requirements": requirements, "price": price, "price_adjustment": adjustment, "capacity": o.capacity },
    })
}

/// What a NodePool can cost while nodes drain beside their replacements (`cost::drain_peak`).
pub const DRAIN_PEAK_ANNOTATION: &str = "gpuplan.dev/drain-peak-usd-per-hour";
/// How many nodes, for how long, and why the steady-state worst case does not cover them.
pub const DRAIN_PEAK_BASIS_ANNOTATION: &str = "gpuplan.dev/drain-peak-basis";

/// The `gpuplan.dev/drain-peak-basis` annotation, explain's words for the drain peak.
pub fn drain_peak_basis(pool: &PoolPlan) -> String {
    if let Some(s) = pool.static_pool {
        return crate::solve::static_pool::drain_peak_basis(pool, s);
    }
    let n = pool.draining_nodes;
    let nodes = if n == 1 { "1 node draining beside its replacement".to_string() } else { format!("{n} nodes draining beside their replacements") };
    let grace = match &pool.disruption.termination_grace_period {
        Some(g) => format!("for up to terminationGracePeriod {g}"),
        None => "with no terminationGracePeriod, so a drain a PodDisruptionBudget blocks never ends".to_string(),
    };
    format!(
        "{nodes} {grace}: every node the limits allow, since forceful drains ignore disruption budgets ({}); Karpenter leaves nodes being deleted out of the limits",
        pool.forceful_drains()
    )
}

/// The `gpuplan.dev/worst-case-basis` annotation: what the worst case assumes, in words. It is a steady-state
/// bound: the active nodes at the limits (nodes being deleted are the drain peak's).
pub fn worst_case_basis(pool: &PoolPlan) -> String {
    let bound = pool.worst_case_bound();
    let prices = if pool.capacity_types.contains(&CapacityType::Spot) || bound == crate::catalog::cost::Bound::Estimated {
        bound.describe().to_string()
    } else {
        "guaranteed: on-demand prices".to_string()
    };
    let mut basis = format!("steady state, {prices}");
    if let Some(s) = pool.static_pool {
        return crate::solve::static_pool::worst_case_basis(pool, s);
    }
    if let Some(fixed) = pool.fixed_usd_per_hour {
        basis = format!("fixed: a capacity reservation billed ${fixed:.2}/h whether used or not, its nodes' EBS volumes included");
        if bound == crate::catalog::cost::Bound::Estimated {
            basis.push_str(&format!(" ({})", crate::catalog::cost::ESTIMATED_BASIS));
        }
    }
    if let Some(cpu) = pool.cpu_limit.filter(|_| pool.shared()) {
        basis.push_str(&format!(
            "; shared GPUs counted as Karpenter counts them at launch: physical GPUs until nodes register, capped by the cpu limit {cpu}"
        ));
    }
    let user: Vec<String> = [("cpu", pool.resource_limits.cpu.as_ref()), ("memory", pool.resource_limits.memory.as_ref())]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k} {v}")))
        .collect();
    if !user.is_empty() {
        basis.push_str(&format!("; at most what the limits {} allow at the priciest $/vCPU and $/GiB", user.join(", ")));
    }
    if pool.node_storage_usd_per_hour > 0.0 {
        basis.push_str(&format!(
            "; every node with its volumes ({}, ${:.4}/h at most: {} over a 28-day month); covers {}",
            pool.node_storage,
            pool.node_storage_usd_per_hour,
            pool.node_storage_prices,
            crate::catalog::ebs::COVERS
        ));
    }
    basis
}

/// Bottlerocket user data (TOML, merged into the settings Karpenter generates) that makes the host's NVIDIA device
/// plugin time-slice every GPU: bottlerocket.dev API settings "kubelet-device-plugins", NVIDIA Time-Slicing
/// (`device-sharing-strategy`, `time-slicing.replicas`). `rename-by-default = false` keeps the resource
/// `nvidia.com/gpu` (the one the NodePool limits and pods request; true would advertise `nvidia.com/gpu.shared`), and
/// `fail-requests-greater-than-one` refuses a request for two slices, as the GPU Operator config does.
fn bottlerocket_time_slicing(replicas: u32) -> String {
    format!(
        "[settings.kubelet-device-plugins.nvidia]\ndevice-sharing-strategy = \"time-slicing\"\n\n[settings.kubelet-device-plugins.nvidia.time-slicing]\nreplicas = {replicas}\nrename-by-default = false\nfail-requests-greater-than-one = true\n"
    )
}

/// The class's userData: the profile's `user-data` verbatim, then gpuplan's Bottlerocket time-slicing settings
/// (Bottlerocket merges TOML tables, so both hold).
fn user_data(class: &NodeClassPlan) -> Option<String> {
    match (class.user_data.as_deref(), class.time_slicing.map(bottlerocket_time_slicing)) {
        (Some(user), Some(ours)) => Some(format!("{}\n{ours}", user.trim_end())),
        (user, ours) => ours.or_else(|| user.map(str::to_string)),
    }
}

fn node_class_context(cluster: &ClusterPlan, class: &NodeClassPlan) -> Value {
    let tags = BTreeMap::from([
        ("gpuplan.dev/profile".to_string(), class.profile.clone()),
        ("gpuplan.dev/cluster".to_string(), cluster.name.clone()),
    ]);
    json!({
        "labels": common_labels(),
        "annotations": provenance(&class.profile, &class.source, cluster),
        "tags": tags,
        "class": {
            "name": class.name,
            "role": class.role,
            "instance_profile": class.instance_profile,
            "ami_alias": class.ami_alias,
            "discovery_tag": class.discovery_tag,
            "volumes": class.volumes().iter().map(|v| json!({ "device": v.device, "size_gib": v.size_gib, "iops": v.iops, "throughput_mibps": v.throughput_mibps })).collect::<Vec<_>>(),
            "reserved": class.reserved.as_ref().map(|r| json!({ "ids": r.ids, "tags": r.tags })),
            "instance_store_raid0": class.instance_store_raid0,
            "user_data": user_data(class),
            "image_cache_snapshot": class.image_cache_snapshot,
            "ephemeral_storage": class.ephemeral_storage,
            "kubelet": class.kubelet,
            "placement_group": class.placement_group,
        },
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Texts the templates rendered and values `to_yaml` wrote while [`examples_recorded`] compiles the examples;
    /// nothing is kept outside that window. (A compile that another test runs at the same moment is recorded too.)
    static RECORDING: AtomicBool = AtomicBool::new(false);
    static RENDERED: Mutex<Vec<String>> = Mutex::new(Vec::new());
    static EMITTED: Mutex<Vec<serde_json::Value>> = Mutex::new(Vec::new());
    /// One recording window at a time.
    static WINDOW: Mutex<()> = Mutex::new(());

    pub(super) fn record(text: &str) {
        if RECORDING.load(Ordering::Relaxed) {
            RENDERED.lock().unwrap().push(text.to_string());
        }
    }

    pub(super) fn record_emitted(value: &serde_json::Value) {
        if RECORDING.load(Ordering::Relaxed) {
            EMITTED.lock().unwrap().push(value.clone());
        }
    }

    /// Compiles the bundled examples and builds their output tree, recording what was rendered and written.
    fn examples_recorded() -> (Vec<String>, Vec<serde_json::Value>) {
        let _window = WINDOW.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        RENDERED.lock().unwrap().clear();
        EMITTED.lock().unwrap().clear();
        RECORDING.store(true, Ordering::Relaxed);
        let compiled = crate::compile::compile(&crate::compile::CompileOptions::default());
        let _tree = compiled.as_ref().map(crate::compile::Compilation::output_tree);
        RECORDING.store(false, Ordering::Relaxed);
        compiled.expect("the examples compile");
        (std::mem::take(&mut *RENDERED.lock().unwrap()), std::mem::take(&mut *EMITTED.lock().unwrap()))
    }

    /// What the built-in templates render for the bundled examples.
    pub(crate) fn rendered_examples() -> Vec<String> {
        examples_recorded().0
    }

    /// Every value written as YAML for the bundled examples: objects, ConfigMap payloads, and the kustomizations
    /// of their output tree.
    pub(crate) fn emitted_examples() -> Vec<serde_json::Value> {
        examples_recorded().1
    }

    /// The built-in templates stay inside the fast path's subset: none of the examples' objects falls back to
    /// serde-saphyr (and debug builds check each fast parse against it).
    #[test]
    fn every_rendered_example_takes_the_fast_path() {
        let texts = rendered_examples();
        // The examples render 46 templates (their other files are built without one).
        assert!(texts.len() >= 40, "{} texts", texts.len());
        let slow: Vec<&String> = texts.iter().filter(|t| super::fast_yaml::parse(t).is_none()).collect();
        assert!(slow.is_empty(), "not on the fast path:\n{}", slow.iter().map(|t| t.as_str()).collect::<Vec<_>>().join("\n---\n"));
    }
}
