//! A fresh cluster's bootstrap from the examples' committed out/, as a model of the two GitOps controllers (a real
//! bootstrap needs a cluster; this runs offline). It proves what issue 32 item 4 asks: no dependency cycle, and no
//! object applied before its namespace, its CRD or the Helm values a chart reads.
//!
//! Flux (out/ml-vision): Kustomizations reconcile once every `dependsOn` is Ready
//! (github.com/fluxcd/kustomize-controller@v1.9.4 internal/controller/kustomization_controller.go `checkDependencies`:
//! the dependency must exist, be Ready and observed); one apply stages CRDs, ClusterRoles and Namespaces first, then
//! `*Class` kinds, then the rest (github.com/fluxcd/pkg/ssa@v0.76.1 manager_apply.go `ApplyAllStaged`), and with
//! `wait` it is Ready only when all of it applied. A HelmRelease whose `valuesFrom` ConfigMap is missing (and not
//! `optional`) fails (github.com/fluxcd/pkg/chartutil@v1.27.1 values.go `ChartValuesFromReferences`), so the
//! Kustomization health-checking it is never Ready. The user's Kustomizations are modelled as the README tells users
//! to write them: the GPU Operator's `dependsOn` gpuplan's values Kustomization.
//!
//! Argo CD (out/ml-batch-west): one sync orders by phase, then wave, then kind (namespaces first, then other
//! Kubernetes resources, then custom resources), then name (github.com/argoproj/argo-cd/v3@v3.5.1
//! docs/user-guide/sync-waves.md "How Does It Work?"), retrying failed syncs (`syncPolicy.retry`); the GPU Operator's
//! Application reads gpuplan's values from git with a multi-source `$values` ref (docs/user-guide/multiple_sources.md),
//! so it needs no object of gpuplan's Application.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn yaml(path: &Path) -> Value {
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

/// The objects a kustomization.yaml directory applies: its `resources`, read from the committed out/.
fn kustomize(dir: &Path) -> Vec<Value> {
    let k = yaml(&dir.join("kustomization.yaml"));
    k["resources"].as_array().unwrap().iter().map(|r| yaml(&dir.join(r.as_str().unwrap()))).collect()
}

/// Built-in API groups (no CRD needed).
fn built_in(api_version: &str) -> bool {
    !api_version.contains('/') || ["apps/", "policy/", "autoscaling/", "batch/", "rbac.authorization.k8s.io/"].iter().any(|g| api_version.starts_with(g))
}

fn group_kind(o: &Value) -> String {
    let api = o["apiVersion"].as_str().unwrap_or_default();
    format!("{}/{}", api.split('/').next().unwrap_or_default(), o["kind"].as_str().unwrap_or_default())
}

/// What exists in the cluster: namespaces, CRDs (group/kind), and objects (kind/namespace/name).
#[derive(Default)]
struct Cluster {
    namespaces: BTreeSet<String>,
    crds: BTreeSet<String>,
    objects: BTreeSet<String>,
}

impl Cluster {
    fn fresh() -> Cluster {
        Cluster { namespaces: ["default", "kube-system", "flux-system", "argocd"].map(String::from).into(), ..Cluster::default() }
    }

    /// Why `o` cannot be applied now, if it cannot: its CRD or its namespace is missing.
    fn refuses(&self, o: &Value) -> Option<String> {
        let api = o["apiVersion"].as_str().unwrap_or_default();
        if !built_in(api) && !self.crds.contains(&group_kind(o)) {
            return Some(format!("no CRD for {}", group_kind(o)));
        }
        match o["metadata"]["namespace"].as_str() {
            Some(ns) if !self.namespaces.contains(ns) => Some(format!("namespace {ns} does not exist")),
            _ => None,
        }
    }

    fn apply(&mut self, o: &Value) {
        let name = o["metadata"]["name"].as_str().unwrap_or_default().to_string();
        if o["kind"] == "Namespace" {
            self.namespaces.insert(name.clone());
        }
        self.objects.insert(format!("{}/{}/{name}", o["kind"].as_str().unwrap_or_default(), o["metadata"]["namespace"].as_str().unwrap_or_default()));
    }
}

/// A Flux Kustomization as the model runs it: the objects it applies, the CRDs a chart it installs brings, and the
/// ConfigMaps its HelmRelease reads with `valuesFrom` (namespace/name).
struct Kustomization {
    name: String,
    depends_on: Vec<String>,
    objects: Vec<Value>,
    installs_crds: Vec<&'static str>,
    values_from: Vec<String>,
}

/// ssa `ApplyAllStaged`: CRDs, ClusterRoles and Namespaces, then `*Class` kinds, then the rest.
fn stage(o: &Value) -> u8 {
    let kind = o["kind"].as_str().unwrap_or_default();
    match kind {
        "CustomResourceDefinition" | "ClusterRole" | "Namespace" => 0,
        k if k.ends_with("Class") => 1,
        _ => 2,
    }
}

/// Reconciles until nothing changes; returns the Kustomizations left not Ready, each with why.
fn flux_bootstrap(kustomizations: &[Kustomization], cluster: &mut Cluster) -> BTreeMap<String, String> {
    let mut ready: BTreeSet<String> = BTreeSet::new();
    let mut why: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let before = ready.len();
        for k in kustomizations {
            if ready.contains(&k.name) {
                continue;
            }
            if let Some(dep) = k.depends_on.iter().find(|d| !ready.contains(*d)) {
                why.insert(k.name.clone(), format!("dependency '{dep}' is not ready"));
                continue;
            }
            let mut objects: Vec<&Value> = k.objects.iter().collect();
            objects.sort_by_key(|o| stage(o));
            let refused = objects.iter().find_map(|o| {
                let r = cluster.refuses(o).map(|r| format!("{}/{}: {r}", o["kind"].as_str().unwrap_or_default(), o["metadata"]["name"].as_str().unwrap_or_default()));
                if r.is_none() {
                    cluster.apply(o);
                }
                r
            });
            let missing_values = k.values_from.iter().find(|v| !cluster.objects.contains(&format!("ConfigMap/{v}")));
            match (refused, missing_values) {
                (Some(r), _) => {
                    why.insert(k.name.clone(), r);
                }
                (None, Some(v)) => {
                    why.insert(k.name.clone(), format!("HelmRelease valuesFrom: ConfigMap {v} not found"));
                }
                (None, None) => {
                    cluster.crds.extend(k.installs_crds.iter().map(|c| c.to_string()));
                    ready.insert(k.name.clone());
                    why.remove(&k.name);
                }
            }
        }
        if ready.len() == before {
            return why;
        }
    }
}

/// The `dependsOn` graph has no cycle (a topological order exists).
fn acyclic(kustomizations: &[Kustomization]) -> bool {
    let mut done: BTreeSet<&str> = BTreeSet::new();
    while done.len() < kustomizations.len() {
        let next = kustomizations.iter().find(|k| !done.contains(k.name.as_str()) && k.depends_on.iter().all(|d| done.contains(d.as_str())));
        match next {
            Some(k) => done.insert(k.name.as_str()),
            None => return false,
        };
    }
    true
}

/// gpuplan's Flux Kustomizations for a cluster, from its committed gitops/ directory.
fn gpuplans_flux(cluster: &str) -> Vec<Kustomization> {
    let gitops = repo().join("out").join(cluster).join("gitops");
    let mut out = Vec::new();
    for file in ["flux-kustomization.yaml", "flux-kustomization-values.yaml"] {
        let k = yaml(&gitops.join(file));
        let path = k["spec"]["path"].as_str().unwrap().trim_start_matches("./");
        out.push(Kustomization {
            name: k["metadata"]["name"].as_str().unwrap().to_string(),
            depends_on: k["spec"]["dependsOn"].as_array().into_iter().flatten().map(|d| d["name"].as_str().unwrap().to_string()).collect(),
            objects: kustomize(&repo().join(path)),
            installs_crds: Vec::new(),
            values_from: Vec::new(),
        });
    }
    out
}

/// The user's Kustomizations for the charts: Karpenter, kube-prometheus-stack (its namespace and CRDs), and the GPU
/// Operator's HelmRelease (`install.createNamespace`), reading gpuplan's values ConfigMap and depending, as the
/// README and values/kustomization.yaml say, on `operator_depends_on`.
fn users_flux(operator_depends_on: Vec<String>) -> Vec<Kustomization> {
    let namespace = |name: &str| json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } });
    vec![
        Kustomization { name: "karpenter".into(), depends_on: vec![], objects: vec![], installs_crds: vec!["karpenter.sh/NodePool", "karpenter.k8s.aws/EC2NodeClass", "karpenter.sh/NodeOverlay"], values_from: vec![] },
        Kustomization {
            name: "kube-prometheus-stack".into(),
            depends_on: vec![],
            objects: vec![namespace("monitoring")],
            installs_crds: vec!["monitoring.coreos.com/ServiceMonitor", "monitoring.coreos.com/PrometheusRule"],
            values_from: vec![],
        },
        Kustomization {
            name: "gpu-operator".into(),
            depends_on: operator_depends_on,
            objects: vec![],
            installs_crds: vec!["nvidia.com/ClusterPolicy"],
            values_from: vec!["gpu-operator/gpuplan-gpu-operator-values".into()],
        },
    ]
}

#[test]
fn flux_bootstraps_ml_vision_with_no_cycle_and_every_object_after_its_namespace_crd_and_values() {
    let mut all = gpuplans_flux("ml-vision");
    let values = all.iter().find(|k| k.name.ends_with("-values")).expect("the values Kustomization");
    assert!(values.depends_on.is_empty(), "the values must not wait for the charts that read them");
    assert!(values.objects.iter().all(|o| o["metadata"]["labels"]["reconcile.fluxcd.io/watch"] == "Enabled" || o["kind"] == "Namespace"), "helm-controller watches only labelled ConfigMaps");
    let values_name = values.name.clone();
    all.extend(users_flux(vec![values_name]));
    assert!(acyclic(&all));
    let mut cluster = Cluster::fresh();
    let stuck = flux_bootstrap(&all, &mut cluster);
    assert!(stuck.is_empty(), "{stuck:?}");
    assert!(cluster.objects.contains("ServiceMonitor/kube-system/karpenter") && cluster.objects.contains("NodePool//vision-a10g-spot"), "{:?}", cluster.objects);
}

/// The layout issue 32 found: the values ConfigMap inside the Kustomization that `dependsOn` the GPU Operator,
/// whose HelmRelease needs it. The model must report the deadlock (nothing ever syncs), or it proves nothing above.
#[test]
fn flux_model_reports_the_deadlock_of_values_applied_after_the_operator() {
    let mut all = gpuplans_flux("ml-vision");
    let values = all.pop().unwrap();
    let main = &mut all[0];
    main.objects.extend(values.objects);
    main.depends_on = vec!["karpenter".into(), "gpu-operator".into()];
    all.extend(users_flux(vec![]));
    let stuck = flux_bootstrap(&all, &mut Cluster::fresh());
    assert_eq!(stuck.get("gpu-operator").map(String::as_str), Some("HelmRelease valuesFrom: ConfigMap gpu-operator/gpuplan-gpu-operator-values not found"), "{stuck:?}");
    assert_eq!(stuck.get("gpuplan-ml-vision").map(String::as_str), Some("dependency 'gpu-operator' is not ready"));
}

/// A profile `depends-on` that names gpuplan's own values Kustomization from the operator's side would be the
/// user's cycle: the model's cycle check sees it.
#[test]
fn flux_model_finds_a_dependency_cycle() {
    let mut all = gpuplans_flux("ml-vision");
    all[1].depends_on = vec!["gpu-operator".into()];
    all.extend(users_flux(vec![all[1].name.clone()]));
    assert!(!acyclic(&all));
}

/// Argo CD's order inside one sync: phase, wave, kind (namespaces, other Kubernetes kinds, custom resources), name.
fn argocd_order(o: &Value) -> (i64, u8, String) {
    let wave = o["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"].as_str().unwrap_or("0").parse().unwrap();
    let kind = match o["kind"].as_str().unwrap_or_default() {
        "Namespace" => 0,
        _ if built_in(o["apiVersion"].as_str().unwrap_or_default()) => 1,
        _ => 2,
    };
    (wave, kind, o["metadata"]["name"].as_str().unwrap_or_default().to_string())
}

#[test]
fn argocd_bootstraps_ml_batch_west_from_git_values_with_every_object_after_its_namespace_and_crd() {
    let app = yaml(&repo().join("out/ml-batch-west/gitops/argocd-application.yaml"));
    let dir = repo().join(app["spec"]["source"]["path"].as_str().unwrap());
    let mut objects = kustomize(&dir);
    // The operator's Application: the chart from NVIDIA's Helm repository, valueFiles
    // `$values/out/ml-batch-west/values/helm/gpuplan-gpu-operator-values.yaml` from this repository (ref: values),
    // the very values gpuplan's ConfigMap carries for Flux. Nothing of gpuplan's Application is needed first.
    let plain = std::fs::read_to_string(dir.join("values/helm/gpuplan-gpu-operator-values.yaml")).unwrap();
    let config_map = yaml(&dir.join("values/configmap-gpuplan-gpu-operator-values.yaml"));
    let body = gpuplan::layout::parse_header(&plain).unwrap().body;
    assert_eq!(body, config_map["data"]["values.yaml"].as_str().unwrap());
    assert!(!objects.iter().any(|o| o["kind"] == "ConfigMap" && o["metadata"]["name"] == "gpuplan-gpu-operator-values"), "Argo CD cannot read Helm values from a ConfigMap");
    objects.sort_by_key(argocd_order);
    // A sync before the charts' Applications have installed their CRDs fails at the first such object (skipped by
    // the dry run, `SkipDryRunOnMissingResource`) and is retried; the charts' Applications depend on nothing of it.
    let mut cluster = Cluster::fresh();
    let retries = app["spec"]["syncPolicy"]["retry"]["limit"].as_i64().unwrap();
    for o in objects.iter().filter(|o| cluster.refuses(o).is_some()) {
        let options = o["metadata"]["annotations"]["argocd.argoproj.io/sync-options"].as_str().unwrap_or_default();
        assert!(options.contains("SkipDryRunOnMissingResource=true"), "{}: {options}", group_kind(o));
    }
    assert!(retries >= 1);
    // Then the charts' Applications (the operator's with CreateNamespace) have run: every object applies in order.
    cluster.namespaces.extend(["gpu-operator", "monitoring"].map(String::from));
    cluster.crds.extend(["karpenter.sh/NodePool", "karpenter.k8s.aws/EC2NodeClass", "nvidia.com/ClusterPolicy", "monitoring.coreos.com/ServiceMonitor", "monitoring.coreos.com/PrometheusRule"].map(String::from));
    let mut applied_classes = BTreeSet::new();
    for o in &objects {
        assert_eq!(cluster.refuses(o), None, "{}", group_kind(o));
        if o["kind"] == "NodePool" {
            let class = o["spec"]["template"]["spec"]["nodeClassRef"]["name"].as_str().unwrap();
            assert!(applied_classes.contains(class), "NodePool {} before its EC2NodeClass {class}", o["metadata"]["name"]);
        }
        if o["kind"] == "EC2NodeClass" {
            applied_classes.insert(o["metadata"]["name"].as_str().unwrap().to_string());
        }
        cluster.apply(o);
    }
}
