//! out/<cluster>/kustomization.yaml: one kustomize.config.k8s.io/v1beta1 Kustomization per cluster directory,
//! listing that directory's files, so Argo CD and Flux apply exactly what compile wrote.

use std::collections::BTreeMap;
use std::path::Path;

use crate::layout::{GITOPS_DIR, GPUPLAN_SOURCE, KUSTOMIZATION_FILE, OutputTree, cluster_of, slash_path, with_header};

/// Adds out/<cluster>/kustomization.yaml for every top-level directory of `tree`: a Kustomization whose `resources`
/// lists that directory's files sorted (paths relative to the directory, excluding itself and the `gitops/`
/// sub-directory), with the header, and `notes`' lines for that cluster as comments at the top (kustomize, Argo CD
/// and Flux ignore comments; reviewers read them). Idempotent: an existing kustomization.yaml is replaced.
pub fn add_kustomizations(tree: &mut OutputTree, notes: &BTreeMap<String, Vec<String>>) {
    let mut per_cluster: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in tree.files.keys() {
        let Some(cluster) = cluster_of(path) else {
            continue;
        };
        let rel = path
            .strip_prefix(&cluster)
            .expect("cluster is the first component");
        let list = per_cluster.entry(cluster).or_default();
        let is_self = rel == Path::new(KUSTOMIZATION_FILE);
        let in_gitops = rel.starts_with(GITOPS_DIR);
        if !is_self && !in_gitops {
            list.push(slash_path(rel));
        }
    }
    for (cluster, mut resources) in per_cluster {
        resources.sort();
        let body = super::to_yaml(&serde_json::json!({
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": resources,
        }));
        let comments: String = notes.get(&cluster).into_iter().flatten().map(|line| format!("# {line}\n")).collect();
        tree.files.insert(
            Path::new(&cluster).join(KUSTOMIZATION_FILE),
            with_header(GPUPLAN_SOURCE, &format!("{comments}{body}")),
        );
    }
}
