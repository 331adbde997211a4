//! The example profiles end to end: out/ is current, every generated file validates against the real CRDs in
//! tests/fixtures/shared/schemas, compiles are byte-identical, snapshots of the rendered objects, and the CLI's exit codes.

use std::path::{Path, PathBuf};
use std::process::Command;

use gpuplan::compile::{compile, CompileOptions};
use gpuplan::emit::read_tree;
use gpuplan::layout::OutputTree;
use gpuplan::validate::Validator;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Compiles profiles/ exactly as `gpuplan compile` does in the repository root.
fn examples() -> OutputTree {
    std::env::set_current_dir(root()).unwrap();
    compile(&CompileOptions::default()).expect("the examples compile").output_tree()
}

#[test]
fn out_is_current() {
    let fresh = examples();
    let committed = read_tree(&root().join("out")).unwrap();
    let stale: Vec<_> = gpuplan::emit::changes(&committed, &fresh).into_iter().map(|c| c.path).collect();
    assert!(stale.is_empty(), "out/ is stale ({stale:?}): run `cargo run -- compile` and commit out/");
}

#[test]
fn compiles_are_byte_identical() {
    assert_eq!(examples(), examples());
}

/// The output does not depend on how many threads share the work: every parallel stage collects in input order.
/// The process with one worker thread and with four (more than this machine's cores) both find out/ current.
#[test]
fn output_is_the_same_on_any_number_of_threads() {
    for threads in ["1", "4"] {
        let run = Command::new(env!("CARGO_BIN_EXE_gpuplan"))
            .current_dir(root())
            .env("RAYON_NUM_THREADS", threads)
            .args(["compile", "--check", "--max-catalog-age-days", "100000"])
            .output()
            .unwrap();
        assert!(run.status.success(), "with {threads} thread(s) out/ differs:\n{}", String::from_utf8_lossy(&run.stdout));
    }
}

#[test]
fn every_file_in_out_validates_against_the_shared_crds() {
    let schemas = root().join("tests/fixtures/shared/schemas");
    let crds: Vec<PathBuf> = ["karpenter/karpenter.sh_nodepools.yaml", "karpenter/karpenter.k8s.aws_ec2nodeclasses.yaml", "karpenter/karpenter.sh_nodeoverlays.yaml", "argo-cd/application-crd.yaml", "flux/kustomize.toolkit.fluxcd.io_kustomizations.yaml", "gpu-operator/nvidia.com_clusterpolicies.yaml", "prometheus-operator/monitoring.coreos.com_prometheusrules.yaml", "prometheus-operator/monitoring.coreos.com_servicemonitors.yaml", "prometheus-operator/monitoring.coreos.com_podmonitors.yaml", "kueue/kueue.x-k8s.io_clusterqueues.yaml", "kueue/kueue.x-k8s.io_localqueues.yaml", "kueue/kueue.x-k8s.io_resourceflavors.yaml", "keda/keda.sh_scaledobjects.yaml"]
        .iter()
        .map(|p| schemas.join(p))
        .collect();
    let validator = Validator::from_crd_files(&crds).expect("the shared CRDs load");
    let tree = read_tree(&root().join("out")).unwrap();
    let mut kinds = std::collections::BTreeSet::new();
    let mut checked = 0;
    let mut gitops_apps = 0;
    for (path, text) in &tree.files {
        // values/helm/ holds Helm values files, not objects (tests/bootstrap.rs compares them with their ConfigMaps).
        if path.components().nth(2).is_some_and(|c| c.as_os_str() == "helm") {
            checked += 1;
            continue;
        }
        let object: serde_json::Value = serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // The GitOps objects point at their cluster's directory; Flux's GitRepository has no CRD in
        // tests/fixtures/shared/schemas, so its fields are checked here (source-controller docs, spec/v1/gitrepositories.md).
        if path.components().any(|c| c.as_os_str() == "gitops") {
            let cluster = path.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
            // The cluster's own, or the Flux Kustomization of its add-on values (out/<cluster>/values).
            let values = object["metadata"]["name"] == format!("gpuplan-{cluster}-values");
            assert!(values || object["metadata"]["name"] == format!("gpuplan-{cluster}"), "{}", path.display());
            gitops_apps += 1;
            if object["kind"] == "GitRepository" {
                assert_eq!(object["apiVersion"], "source.toolkit.fluxcd.io/v1");
                assert_eq!(object["spec"]["url"], "https://github.com/example/gpu-platform.git");
                assert_eq!(object["spec"]["ref"]["branch"], "main");
                assert!(object["spec"]["interval"].is_string());
                checked += 1;
                continue;
            }
            let target = object["spec"]["source"]["path"].as_str().or(object["spec"]["path"].as_str()).unwrap();
            let dir = if values { format!("out/{cluster}/values") } else { format!("out/{cluster}") };
            assert!(target.trim_start_matches("./") == dir, "{}: points at {target}", path.display());
        }
        let violations = validator.validate(&object);
        assert!(violations.is_empty(), "{}: {violations:#?}", path.display());
        assert!(text.starts_with("# Code generated by gpuplan from ") && text.lines().next().unwrap().ends_with(". DO NOT EDIT."), "{}: header", path.display());
        kinds.insert(object["kind"].as_str().unwrap().to_string());
        checked += 1;
    }
    assert_eq!(checked, tree.files.len());
    assert_eq!(gitops_apps, 4, "the examples ask for an Argo CD Application, and a Flux GitRepository and two Kustomizations (output, add-on values)");
    for kind in ["NodePool", "NodeOverlay", "EC2NodeClass", "PodDisruptionBudget", "HorizontalPodAutoscaler", "PrometheusRule", "ServiceMonitor", "ClusterPolicy", "ConfigMap", "Kustomization", "ResourceFlavor", "ClusterQueue", "LocalQueue", "ScaledObject"] {
        assert!(kinds.contains(kind), "the examples produce no {kind}");
    }
}

#[test]
fn every_object_carries_provenance() {
    for (path, text) in &examples().files {
        let object: serde_json::Value = serde_saphyr::from_str(text).unwrap();
        // kustomization.yaml and the Argo CD / Flux objects belong to the cluster directory, not to one profile; a
        // plain Helm values file (values/helm/) is no object.
        if object["kind"] == "Kustomization" || path.components().any(|c| c.as_os_str() == "gitops" || c.as_os_str() == "helm") {
            continue;
        }
        let annotations = &object["metadata"]["annotations"];
        assert!(annotations["gpuplan.dev/source"].as_str().is_some_and(|s| s.starts_with("profiles/")), "{}", path.display());
        assert!(annotations["gpuplan.dev/catalog"].as_str().is_some_and(|s| s.starts_with("us-east-1@") || s.starts_with("us-west-2@")), "{}", path.display());
        if object["kind"] == "NodePool" {
            for key in ["gpuplan.dev/profile", "gpuplan.dev/at-limit-usd-per-hour", "gpuplan.dev/worst-case-usd-per-hour"] {
                assert!(annotations[key].is_string(), "{}: {key}", path.display());
            }
            // Limits are strings (GitOps tools would otherwise show a permanent diff).
            for (_, limit) in object["spec"]["limits"].as_object().unwrap() {
                assert!(limit.is_string(), "{}", path.display());
            }
        }
    }
}

#[test]
fn kustomizations_list_their_files_sorted() {
    let tree = examples();
    for cluster in tree.clusters() {
        let text = &tree.files[&PathBuf::from(&cluster).join("kustomization.yaml")];
        let k: serde_json::Value = serde_saphyr::from_str(text).unwrap();
        let resources: Vec<&str> = k["resources"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
        let mut sorted = resources.clone();
        sorted.sort();
        assert_eq!(resources, sorted);
        let files: Vec<String> = tree
            .files
            .keys()
            .filter(|p| p.parent() == Some(Path::new(&cluster)) && !p.ends_with("kustomization.yaml"))
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(resources, files);
    }
}

/// Snapshots of the rendered NodePools and EC2NodeClasses, one per cluster: a reviewer sees every semantic
/// change of the solver or templates here.
#[test]
fn rendered_node_pools_snapshot() {
    let tree = examples();
    for cluster in tree.clusters() {
        let mut text = String::new();
        for (path, body) in &tree.files {
            let name = path.file_name().unwrap().to_string_lossy();
            if path.starts_with(&cluster) && (name.starts_with("nodepool-") || name.starts_with("ec2nodeclass-")) {
                text.push_str(&format!("--- {}\n{body}", path.display()));
            }
        }
        insta::assert_snapshot!(format!("nodepools-{cluster}"), text);
    }
}

/// `compile --check`: 0 when current, 1 (with a diff) when stale, 2 on a profile error; out/ never changes.
#[test]
fn check_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    std::fs::create_dir_all(work.join("profiles")).unwrap();
    for name in ["llm-inference.kdl", "tiered-fallback.kdl"] {
        std::fs::copy(root().join("profiles").join(name), work.join("profiles").join(name)).unwrap();
    }
    let gpuplan = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(work).args(args).output().unwrap();

    let first = gpuplan(&["compile"]);
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stderr));
    assert_eq!(gpuplan(&["compile", "--check"]).status.code(), Some(0));
    // compile on a current out/ writes nothing: every file keeps its inode (a rewrite swaps in new files) and its
    // modification time.
    let mtimes = || -> Vec<_> {
        use std::os::unix::fs::MetadataExt;
        let out = work.join("out");
        read_tree(&out).unwrap().files.keys().map(|p| std::fs::metadata(out.join(p)).unwrap()).map(|m| (m.ino(), m.modified().unwrap())).collect()
    };
    let before = mtimes();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let again = gpuplan(&["compile"]);
    assert_eq!(again.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&again.stderr).contains("files, 0 changed)"), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(mtimes(), before);

    // A stale out/: the check prints a diff naming the file and exits 1, changing nothing.
    let file = work.join("out/ml-vision/nodepool-vision-t4-spot.yaml");
    let edited = std::fs::read_to_string(&file).unwrap().replace("weight: 50", "weight: 55");
    std::fs::write(&file, &edited).unwrap();
    let stale = gpuplan(&["compile", "--check"]);
    assert_eq!(stale.status.code(), Some(1));
    let diff = String::from_utf8_lossy(&stale.stdout);
    assert!(diff.contains("nodepool-vision-t4-spot.yaml") && diff.contains("-  weight: 55") && diff.contains("+  weight: 50"), "{diff}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);

    // diff --exit-code agrees, in every format.
    assert_eq!(gpuplan(&["diff", "--exit-code"]).status.code(), Some(1));
    let markdown = gpuplan(&["diff", "--format", "markdown"]);
    assert!(String::from_utf8_lossy(&markdown.stdout).contains("vision-t4-spot"));
    let json = gpuplan(&["diff", "--format", "json"]);
    serde_json::from_slice::<serde_json::Value>(&json.stdout).expect("diff --format json is JSON");

    // A broken profile: exit 2, out/ untouched.
    std::fs::write(work.join("profiles/broken.kdl"), "pool \"x\" {\n").unwrap();
    assert_eq!(gpuplan(&["compile", "--check"]).status.code(), Some(2));
    assert_eq!(gpuplan(&["compile"]).status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
}
