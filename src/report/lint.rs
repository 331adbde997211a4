//! `gpuplan lint` over a compilation: the findings compile kept, or those of other objects than its own (a
//! `--templates` override's, what adopt read, what `--cluster-objects` reads from a running cluster). The rules
//! themselves are the lint stage's ([`crate::lint`]).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::compile::Compilation;
use crate::diagnostic::ProfileDiagnostic;
use crate::render::Manifest;

use crate::lint::Finding;

/// The compile's lint findings as warnings, sorted by file and position.
pub fn lint(c: &Compilation) -> Vec<ProfileDiagnostic> {
    c.findings.iter().map(|f| f.diagnostic.clone()).collect()
}

/// The lint findings on other objects than the compile's own (say, as a `--templates` override would render
/// them), as warnings.
pub fn lint_on(c: &Compilation, manifests: &[Manifest]) -> Vec<ProfileDiagnostic> {
    findings_on(c, manifests).into_iter().map(|f| f.diagnostic).collect()
}

/// The lint findings on other objects than the compile's own (adopt lints the NodePools it read), every cluster
/// on its own core, sorted.
pub fn findings_on(c: &Compilation, manifests: &[Manifest]) -> Vec<Finding> {
    use rayon::prelude::*;
    let mut by_cluster: BTreeMap<String, Vec<Manifest>> = BTreeMap::new();
    for m in manifests {
        if let Some(cluster) = crate::layout::cluster_of(&m.path) {
            by_cluster.entry(cluster).or_default().push(m.clone());
        }
    }
    let none = Vec::new();
    let mut out: Vec<Finding> = c
        .plan
        .clusters
        .par_iter()
        .flat_map_iter(|cluster| {
            let own = by_cluster.get(&cluster.name).unwrap_or(&none);
            crate::lint::cluster_findings(&c.cluster_ctx(cluster), own, &crate::check::cluster_manifests(own, &cluster.node_daemons))
        })
        .collect();
    crate::lint::sort(&mut out);
    out
}

/// Objects read from a running cluster (`kubectl get hpa,scaledobjects,pdb -A -o yaml`: the items of a `List` count
/// one by one) or any YAML files, as objects of `cluster`, for [`lint_on`]: the rules that read the output (GP024's
/// HPA beside a ScaledObject, GP025's PDB) then judge what is really there. An object with the kind, namespace and
/// name of one of `own` (the compile's) replaces it: the cluster's copy is the live one.
pub fn with_cluster_objects(cluster: &str, own: Vec<Manifest>, paths: &[std::path::PathBuf]) -> Result<Vec<Manifest>, String> {
    let mut read = Vec::new();
    for file in yaml_files(paths)? {
        let text = crate::input::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let docs = crate::simulate::yaml::parse_docs(&file, &text).map_err(|e| e.to_string())?;
        for doc in docs {
            let value = doc.value.into_owned();
            let items = match value["kind"].as_str() {
                Some(kind) if kind.ends_with("List") => value["items"].as_array().cloned().unwrap_or_default(),
                _ => vec![value],
            };
            for (i, object) in items.into_iter().enumerate() {
                // One path component under the cluster (what `emit::cluster_of` reads): the file's name and where.
                let name = format!("{}:{}#{i}", file.file_name().unwrap_or_default().to_string_lossy(), doc.line);
                read.push(Manifest { path: std::path::Path::new(cluster).join(name), source: file.display().to_string(), object });
            }
        }
    }
    let id = |o: &Value| (o["kind"].to_string(), o["metadata"]["namespace"].as_str().unwrap_or("default").to_string(), o["metadata"]["name"].to_string());
    let replaced: BTreeSet<_> = read.iter().map(|m| id(&m.object)).collect();
    let mut out: Vec<Manifest> = own.into_iter().filter(|m| crate::layout::cluster_of(&m.path).as_deref() != Some(cluster) || !replaced.contains(&id(&m.object))).collect();
    out.extend(read);
    Ok(out)
}

/// Every *.yaml / *.yml under `paths` (directories recursively), sorted per directory.
fn yaml_files(paths: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>, String> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut entries: Vec<std::path::PathBuf> = crate::confine::read_dir(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?.filter_map(|e| e.ok().map(|e| e.path())).collect();
            entries.sort();
            let entries: Vec<_> = entries.into_iter().filter(|e| e.is_dir() || e.extension().is_some_and(|x| x == "yaml" || x == "yml")).collect();
            out.extend(yaml_files(&entries)?);
        } else if path.exists() {
            out.push(path.clone());
        } else {
            return Err(format!("cannot read {}: no such file or directory", path.display()));
        }
    }
    Ok(out)
}
