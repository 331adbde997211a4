//! out/<cluster>/kustomization.yaml: one kustomize.config.k8s.io/v1beta1 Kustomization per cluster directory,
//! listing that directory's files, so Argo CD and Flux apply exactly what compile wrote; and, where the cluster has
//! add-on Helm values, out/<cluster>/values/kustomization.yaml listing them (applied on their own, see
//! [`crate::layout::VALUES_DIR`]) with each chart's values as a plain file under values/helm/.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::layout::{GITOPS_DIR, GPUPLAN_SOURCE, HELM_VALUES_DIR, KUSTOMIZATION_FILE, OutputTree, VALUES_DIR, cluster_of, parse_header, slash_path, with_header};

/// Which kustomization of its cluster lists a file (by its path inside the cluster directory), if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Listed {
    /// out/<cluster>/kustomization.yaml.
    Cluster,
    /// out/<cluster>/values/kustomization.yaml.
    Values,
}

fn listed_by(rel: &Path) -> Option<Listed> {
    let in_values = rel.starts_with(VALUES_DIR);
    let kustomization = rel.file_name().is_some_and(|f| f == KUSTOMIZATION_FILE);
    if rel.starts_with(GITOPS_DIR) || kustomization || rel.starts_with(Path::new(VALUES_DIR).join(HELM_VALUES_DIR)) {
        None
    } else if in_values {
        Some(Listed::Values)
    } else {
        Some(Listed::Cluster)
    }
}

/// Adds out/<cluster>/kustomization.yaml for every top-level directory of `tree`: a Kustomization whose `resources`
/// lists that directory's files sorted (paths relative to the directory, excluding itself and the `gitops/` and
/// `values/` sub-directories), with the header, and `notes`' lines for that cluster as comments at the top
/// (kustomize, Argo CD and Flux ignore comments; reviewers read them). A cluster with files in `values/` also gets
/// values/kustomization.yaml listing them, and values/helm/<name>.yaml per values ConfigMap (its values file).
/// Idempotent: existing kustomizations and plain values files are replaced.
pub fn add_kustomizations(tree: &mut OutputTree, notes: &BTreeMap<String, Vec<String>>) {
    add_plain_values(tree);
    let mut per_dir: BTreeMap<(String, Listed), Vec<String>> = BTreeMap::new();
    for path in tree.files.keys() {
        let Some(cluster) = cluster_of(path) else {
            continue;
        };
        let rel = path.strip_prefix(&cluster).expect("cluster is the first component");
        match listed_by(rel) {
            Some(Listed::Cluster) => per_dir.entry((cluster, Listed::Cluster)).or_default().push(slash_path(rel)),
            Some(Listed::Values) => {
                let in_dir = rel.strip_prefix(VALUES_DIR).expect("listed_by checked it");
                per_dir.entry((cluster, Listed::Values)).or_default().push(slash_path(in_dir));
            }
            None => {}
        }
    }
    for ((cluster, listed), mut resources) in per_dir {
        resources.sort();
        let body = super::to_yaml(&serde_json::json!({
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": resources,
        }));
        let (path, comments) = match listed {
            Listed::Cluster => (Path::new(&cluster).join(KUSTOMIZATION_FILE), notes.get(&cluster).into_iter().flatten().map(|line| format!("# {line}\n")).collect()),
            Listed::Values => (Path::new(&cluster).join(VALUES_DIR).join(KUSTOMIZATION_FILE), values_note(&cluster)),
        };
        tree.files.insert(path, with_header(GPUPLAN_SOURCE, &format!("{comments}{body}")));
    }
}

/// The head of values/kustomization.yaml: why it is separate, and the edge that lives in the user's repository
/// (a Flux Kustomization's `dependsOn` names Kustomizations only, and the HelmRelease is the user's).
fn values_note(cluster: &str) -> String {
    let flux = super::flux_values_kustomization(cluster);
    [
        "The add-on charts' Helm values, applied on their own, before the charts that read them. Flux: Kustomization".to_string(),
        format!("{flux} (gitops/), which depends on nothing; give the Kustomization of your GPU Operator HelmRelease"),
        format!("`dependsOn: [{{name: {flux}}}]` (a HelmRelease whose valuesFrom ConfigMap is missing fails to install)."),
        format!("Argo CD and helm read the plain files in {HELM_VALUES_DIR}/ instead (multi-source `$values`, `helm -f`)."),
    ]
    .iter()
    .map(|line| format!("# {line}\n"))
    .collect()
}

/// values/helm/<name>.yaml for every values ConfigMap in values/: its values file, as Helm reads it.
fn add_plain_values(tree: &mut OutputTree) {
    let mut plain: Vec<(PathBuf, String)> = Vec::new();
    for (path, text) in &tree.files {
        let Some(cluster) = cluster_of(path) else { continue };
        let rel = path.strip_prefix(&cluster).expect("cluster is the first component");
        let Some(name) = rel.strip_prefix(VALUES_DIR).ok().and_then(|r| r.to_str()).and_then(|r| r.strip_prefix("configmap-")).and_then(|r| r.strip_suffix(".yaml")) else {
            continue;
        };
        let Some(header) = parse_header(text) else { continue };
        let Ok(object) = serde_saphyr::from_str::<serde_json::Value>(header.body) else { continue };
        let Some(values) = object["data"][crate::charts::add_ons::VALUES_KEY].as_str() else { continue };
        plain.push((Path::new(&cluster).join(VALUES_DIR).join(HELM_VALUES_DIR).join(format!("{name}.yaml")), with_header(header.source, values)));
    }
    for (path, text) in plain {
        tree.files.insert(path, text);
    }
}
