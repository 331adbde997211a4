//! Reading existing manifests: YAML files (multi-document) or directories of them, into the objects `adopt`
//! understands (Karpenter NodePools and EC2NodeClasses) and a list of everything else it skipped.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One object read from a file, with where it came from (for warnings and provenance comments).
#[derive(Debug, Clone)]
pub struct Doc {
    pub file: String,
    pub kind: String,
    pub name: String,
    pub object: Value,
}

impl Doc {
    /// `file NodePool/name`, how warnings and comments name an object.
    pub fn at(&self) -> String {
        format!("{} {}/{}", self.file, self.kind, self.name)
    }
}

#[derive(Debug, Default)]
pub struct Read {
    pub node_pools: Vec<Doc>,
    pub node_classes: Vec<Doc>,
    /// gpuplan's own Argo CD Applications and Flux Kustomizations (out/<cluster>/gitops/): the cluster's `gitops`;
    /// and its dcgm-exporter ServiceMonitor, which it writes only when it does not manage the GPU Operator.
    pub gitops: Vec<Doc>,
    /// `file kind/name` of objects of other kinds (ClusterPolicy, PDBs, …): listed, not adopted.
    pub skipped: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("{0} is not YAML: {1}")]
    Yaml(PathBuf, String),
}

/// Every *.yaml / *.yml under `paths` (directories recursively, sorted), split into documents.
pub fn read(paths: &[PathBuf]) -> Result<Read, ReadError> {
    let mut files = Vec::new();
    for path in paths {
        collect(path, &mut files)?;
    }
    let mut read = Read::default();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| ReadError::Io(file.clone(), e))?;
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).map_err(|e| ReadError::Yaml(file.clone(), e.to_string()))?;
        for object in docs.into_iter().filter(|d| !d.is_null()) {
            let kind = object["kind"].as_str().unwrap_or("<no kind>").to_string();
            let name = object["metadata"]["name"].as_str().unwrap_or("<no name>").to_string();
            let api = object["apiVersion"].as_str().unwrap_or("").to_string();
            let doc = Doc { file: file.display().to_string(), kind: kind.clone(), name, object };
            match (kind.as_str(), api.split('/').next().unwrap_or("")) {
                ("NodePool", "karpenter.sh") => read.node_pools.push(doc),
                ("EC2NodeClass", "karpenter.k8s.aws") => read.node_classes.push(doc),
                ("Application", "argoproj.io")
                | ("Kustomization", "kustomize.toolkit.fluxcd.io")
                | ("GitRepository", "source.toolkit.fluxcd.io")
                | ("ServiceMonitor", "monitoring.coreos.com")
                    if (doc.kind != "ServiceMonitor" || doc.name == "nvidia-dcgm-exporter") && doc.object["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpuplan" =>
                {
                    read.gitops.push(doc)
                }
                _ => read.skipped.push(doc.at()),
            }
        }
    }
    Ok(read)
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), ReadError> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| ReadError::Io(path.to_path_buf(), e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for entry in entries {
            if entry.is_dir() || entry.extension().is_some_and(|x| x == "yaml" || x == "yml") {
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
