//! Reading existing manifests: YAML files (multi-document) or directories of them, into the objects `adopt`
//! understands (Karpenter NodePools and EC2NodeClasses, and gpuplan's own GitOps and operations objects) and a
//! list of everything else it skipped, each with the reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod quantities;

/// One object read from a file, with where it came from (for warnings and provenance comments).
#[derive(Debug, Clone)]
pub struct Doc {
    pub file: String,
    pub kind: String,
    pub name: String,
    pub object: Value,
    /// gpuplan generated the file and someone edited it since (its digest no longer matches): adopt reads the
    /// fields it knows, and says so, because a compile rewrites the rest.
    pub hand_edited: bool,
}

/// Whether gpuplan generated an object (its `app.kubernetes.io/managed-by: gpuplan` label): adopt reads its own
/// output back as the profile that wrote it, and a hand-written object as the behaviour to keep.
pub fn generated_by_gpuplan(object: &Value) -> bool {
    object["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpuplan"
}

impl Doc {
    /// [`generated_by_gpuplan`].
    pub fn is_gpuplans(&self) -> bool {
        generated_by_gpuplan(&self.object)
    }

    /// `file NodePool/name`, how warnings and comments name an object.
    pub fn at(&self) -> String {
        format!("{} {}/{}", self.file, self.kind, self.name)
    }
}

#[derive(Debug, Default)]
pub struct Read {
    pub node_pools: Vec<Doc>,
    pub node_classes: Vec<Doc>,
    /// gpuplan's own Argo CD Applications, Flux GitRepositories and Kustomizations (out/<cluster>/gitops/): the
    /// cluster's `gitops` line.
    pub gitops: Vec<Doc>,
    /// gpuplan's own operations objects (labelled `app.kubernetes.io/managed-by: gpuplan`): PodDisruptionBudgets,
    /// HorizontalPodAutoscalers, KEDA ScaledObjects, the PrometheusRule, ServiceMonitors, the prometheus-adapter and device-plugin
    /// ConfigMaps, the ClusterPolicy. They become `workload` and `monitoring` blocks.
    pub ops: Vec<Doc>,
    /// gpuplan's own Kueue ClusterQueues: they become `queue` blocks.
    pub queues: Vec<Doc>,
    /// NodeOverlays, hand-written or from a profile's `overlay` block (not gpuplan's own sharing overlays): they
    /// become `overlay` blocks (the `overlays` module).
    pub overlays: Vec<Doc>,
    /// `file kind/name (reason)` of everything else: listed, not adopted.
    pub skipped: Vec<String>,
    /// Each file's text with the `--set` placeholders filled: what the verification simulates as the originals.
    pub texts: Vec<(PathBuf, String)>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("{0} is not YAML: {1}")]
    Yaml(PathBuf, String),
    /// A bad document, located (`file:line: what`): YAML that does not parse, or a field of the wrong type.
    #[error("{0}")]
    Input(crate::simulate::yaml::InputError),
    /// Placeholders left without a value (`super::placeholders::message`).
    #[error("{}", super::placeholders::message(.0))]
    Placeholders(Vec<super::placeholders::Unfilled>),
    /// A Helm control structure or Terraform directive: a template to render before adopting it, located.
    #[error("{0}")]
    Template(String),
}

/// Every *.yaml / *.yml under `paths` (directories recursively, sorted), split into documents, with the
/// placeholders `set` names filled (any other placeholder is an error: [`super::placeholders`]), and the quantities
/// adopt reads in the form a profile writes them ([`quantities`]).
pub fn read(paths: &[PathBuf], set: &BTreeMap<String, String>) -> Result<Read, ReadError> {
    let mut files = Vec::new();
    for path in paths {
        collect(path, &mut files)?;
    }
    // Each file read when its turn comes: a read error stops at that file, as a bad document does.
    read_texts(files.into_iter().map(|file| crate::input::read_to_string(&file).map(|raw| (file.clone(), raw)).map_err(|e| ReadError::Io(file, e))), set)
}

/// [`read`] of files already read, `(path, text)` each (the fuzz targets, fuzz/, give it text in memory).
pub fn read_texts(files: impl IntoIterator<Item = Result<(PathBuf, String), ReadError>>, set: &BTreeMap<String, String>) -> Result<Read, ReadError> {
    let mut read = Read::default();
    let mut unfilled: BTreeMap<String, super::placeholders::Unfilled> = BTreeMap::new();
    for file in files {
        let (file, raw) = file?;
        let shown = file.display().to_string();
        let (text, inserted) = super::placeholders::fill_tracked(&super::placeholders::decide_conditionals(&raw, set), set);
        // What a value inserted is its own text, not a placeholder.
        let outside = |at: usize| !inserted.iter().any(|r| r.contains(&at));
        // Read as simulate reads manifests: each document with the line it starts on, so that a bad one is located.
        let mut docs = match crate::simulate::yaml::parse_docs(&file, &text) {
            Ok(docs) => docs,
            Err(e) => {
                // A template (`{{- if }}` lines) or a placeholder can be what makes the text unparseable (`{{ .Values.x }}`
                // unquoted begins a flow mapping): then they are the error, wherever they are.
                if let Some(message) = super::placeholders::directive_message(&shown, &text, |_, at| outside(at)) {
                    return Err(ReadError::Template(message));
                }
                let found = super::placeholders::unfilled(&shown, &text, |_, at| outside(at));
                if found.is_empty() {
                    return Err(ReadError::Input(e));
                }
                found.into_iter().for_each(|u| add_unfilled(&mut unfilled, u));
                continue;
            }
        };
        // Placeholders count in the kinds adopt reads; another kind's (a Deployment's `$IMAGE`) are its own business.
        let read_lines: Vec<std::ops::Range<usize>> = docs
            .iter()
            .filter(|d| matches!(d.kind(), "NodePool" | "EC2NodeClass" | "NodeClass" | "NodeOverlay"))
            .map(|d| d.line..d.line + d.text.lines().count())
            .collect();
        let counts = |line: usize, at: usize| outside(at) && read_lines.iter().any(|r| r.contains(&line));
        // A PrometheusRule's `{{ if }}` is Prometheus's own template; in a NodePool it is Helm's, to render first.
        if let Some(message) = super::placeholders::directive_message(&shown, &text, counts) {
            return Err(ReadError::Template(message));
        }
        let found = super::placeholders::unfilled(&shown, &text, counts);
        found.into_iter().for_each(|u| add_unfilled(&mut unfilled, u));
        // A placeholder in a typed field (`weight: ${WEIGHT}`) is reported as a placeholder, not as a bad type.
        if unfilled.is_empty() {
            docs.iter_mut().try_for_each(quantities::normalise).map_err(ReadError::Input)?;
            check_types(&docs)?;
        }
        read.texts.push((file.clone(), text.clone()));
        let hand_edited = crate::layout::header_status(&text) == crate::layout::HeaderStatus::HandEdited;
        for object in docs.into_iter().map(|d| d.value.into_owned()) {
            let kind = object["kind"].as_str().unwrap_or("<no kind>").to_string();
            let name = object["metadata"]["name"].as_str().unwrap_or("<no name>").to_string();
            let doc = Doc { file: file.display().to_string(), kind, name, object, hand_edited };
            match role(&doc) {
                Role::NodePool => read.node_pools.push(doc),
                Role::NodeClass => read.node_classes.push(doc),
                Role::GitOps => read.gitops.push(doc),
                Role::Ops => read.ops.push(doc),
                Role::Queue => read.queues.push(doc),
                Role::Overlay => read.overlays.push(doc),
                Role::Skipped(reason) => read.skipped.push(format!("{} ({reason})", doc.at())),
            }
        }
    }
    if !unfilled.is_empty() {
        return Err(ReadError::Placeholders(unfilled.into_values().collect()));
    }
    Ok(read)
}

/// One name's places across files: the first file's place, every file's count.
fn add_unfilled(all: &mut BTreeMap<String, super::placeholders::Unfilled>, u: super::placeholders::Unfilled) {
    all.entry(u.name.clone()).and_modify(|first| first.places += u.places).or_insert(u);
}

/// The fields adopt reads from NodePools and EC2NodeClasses have the types Kubernetes gives them (a `weight: "heavy"`
/// used to read as no weight): simulate's typed reader of the same kinds decides, with `file:line` on failure.
fn check_types(docs: &[crate::simulate::yaml::Doc]) -> Result<(), ReadError> {
    crate::simulate::manifests::manifests(docs).map(drop).map_err(ReadError::Input)
}

enum Role {
    NodePool,
    NodeClass,
    GitOps,
    Ops,
    Queue,
    Overlay,
    Skipped(&'static str),
}

/// The API group of `apiVersion` (`""` for the core group's `v1`).
fn group(object: &Value) -> &str {
    object["apiVersion"].as_str().and_then(|a| a.rsplit_once('/')).map_or("", |(g, _)| g)
}

/// What adopt does with one object, by kind, API group and whether gpuplan generated it.
fn role(doc: &Doc) -> Role {
    let ours = doc.is_gpuplans();
    match (doc.kind.as_str(), group(&doc.object)) {
        ("NodePool", "karpenter.sh") => Role::NodePool,
        ("EC2NodeClass", "karpenter.k8s.aws") | ("NodeClass", "eks.amazonaws.com") => Role::NodeClass,
        ("Application", "argoproj.io") | ("Kustomization", "kustomize.toolkit.fluxcd.io") | ("GitRepository", "source.toolkit.fluxcd.io") if ours => Role::GitOps,
        ("PodDisruptionBudget", "policy")
        | ("HorizontalPodAutoscaler", "autoscaling")
        | ("PrometheusRule" | "ServiceMonitor", "monitoring.coreos.com")
        | ("ClusterPolicy", "nvidia.com")
        | ("ScaledObject", "keda.sh")
            if ours =>
        {
            Role::Ops
        }
        ("ConfigMap", "") if ours && [crate::ops::adapter::CONFIG_MAP, crate::charts::gpu_operator::DEVICE_PLUGIN_CONFIG_MAP, crate::charts::add_ons::GPU_OPERATOR_VALUES].contains(&doc.name.as_str()) => Role::Ops,
        ("ClusterQueue", "kueue.x-k8s.io") if ours => Role::Queue,
        ("ResourceFlavor" | "LocalQueue", "kueue.x-k8s.io") if ours => Role::Skipped("gpuplan's own: compiled again from the adopted queues"),
        ("ClusterQueue" | "ResourceFlavor" | "LocalQueue", "kueue.x-k8s.io") => Role::Skipped(
            "not generated by gpuplan: a `queue` needs the pool its flavors stand for; write the queue block by hand (quota, cohort, preemption)",
        ),
        ("NodeOverlay", "karpenter.sh") if ours && sharing_overlay(&doc.object) => Role::Skipped("gpuplan's own: compiled again from the adopted pools' sharing"),
        ("NodeOverlay", "karpenter.sh") => Role::Overlay,
        ("ConfigMap", "") if ours && crate::charts::add_ons::is_values_config_map(&doc.name) => Role::Skipped("gpuplan's own: compiled again from the adopted pools' taints"),
        ("Kustomization", "kustomize.config.k8s.io") => Role::Skipped("the cluster's kustomization: compile writes it again from the objects it generates"),
        ("Namespace", "") if ours => Role::Skipped("gpuplan's own: the namespace of the add-on values, compiled again with them"),
        ("<no kind>", _) if std::path::Path::new(&doc.file).parent().is_some_and(|d| d.ends_with(std::path::Path::new(crate::layout::VALUES_DIR).join(crate::layout::HELM_VALUES_DIR))) => Role::Skipped("gpuplan's own Helm values file (values/helm/): compiled again with its ConfigMap"),
        ("PodDisruptionBudget" | "HorizontalPodAutoscaler" | "ScaledObject", _) => Role::Skipped(
            "not generated by gpuplan: a `workload` needs the pool its pods run on, which this object does not name; write the workload block by hand (selector, replicas, disruption-budget, autoscale, scale-to-zero, trigger)",
        ),
        ("PrometheusRule" | "ServiceMonitor" | "ClusterPolicy", _) => Role::Skipped(
            "not generated by gpuplan: gpuplan writes its own from the `monitoring` block; keep this one next to the compiled output, or delete it if gpuplan's replaces it",
        ),
        _ => Role::Skipped("not a kind adopt reads: NodePools, EC2NodeClasses, EKS Auto Mode NodeClasses and gpuplan's own workload, queue, monitoring and GitOps objects"),
    }
}

/// gpuplan's NodeOverlay for a time-sliced or MIG pool (`render::node_overlay_contexts`): capacity only, selected by
/// `karpenter.k8s.aws/instance-gpu-count`. A profile's `overlay` block is gpuplan's too, and is adopted.
fn sharing_overlay(o: &Value) -> bool {
    let spec = &o["spec"];
    let by_gpu_count = spec["requirements"].as_array().into_iter().flatten().any(|r| r["key"] == "karpenter.k8s.aws/instance-gpu-count");
    by_gpu_count && spec.get("price").is_none() && spec.get("priceAdjustment").is_none()
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), ReadError> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = crate::confine::read_dir(path)
            .map_err(|e| ReadError::Io(path.to_path_buf(), e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for entry in entries {
            if entry.is_dir() || is_manifest(&entry) {
                collect(&entry, out)?;
            }
        }
        Ok(())
    } else if path.exists() {
        out.push(path.to_path_buf());
        Ok(())
    } else {
        Err(ReadError::Io(path.to_path_buf(), std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory")))
    }
}

/// A file of manifests in a directory: `*.yaml`, `*.yml`, and the templates Terraform renders with `templatefile`
/// (`*.yaml.tpl`, `*.yaml.tftpl`, `*.tftpl`; their `${…}` are placeholders for `--set`).
fn is_manifest(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    [".yaml", ".yml", ".yaml.tpl", ".yml.tpl", ".yaml.tftpl", ".yml.tftpl", ".tftpl"].iter().any(|x| name.ends_with(x))
}
