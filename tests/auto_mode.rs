//! EKS Auto Mode (issue 19 item 4): `cluster { auto-mode #true }` compiles to NodePools whose nodeClassRef is an
//! `eks.amazonaws.com/v1` NodeClass and whose requirements use `eks.amazonaws.com/instance-*` labels, plus that
//! NodeClass (validated against src/crds/eks, written from the EKS User Guide), and nothing Auto Mode installs itself
//! (no GPU Operator, device-plugin values, Karpenter ServiceMonitor). Settings Auto Mode cannot honour are located
//! errors E0270–E0278. simulate reads the NodeClass and the labels; adopt reads them back into the same profile.
//! The Auto Mode facts and their pages: src/catalog/auto_mode.rs.

use std::path::Path;
use std::process::Output;

mod common;
use common::{repo, gpuplan, text};

fn catalogs() -> String {
    repo().join("catalogs").to_string_lossy().into_owned()
}

/// A tempdir holding profiles/<name> with `profile`; compiled into out/ when `compile`.
fn project(profile: &str) -> (tempfile::TempDir, Output) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("profiles")).unwrap();
    std::fs::write(dir.path().join("profiles/auto-mode.kdl"), profile).unwrap();
    let out = gpuplan(dir.path(), &["compile", "--catalogs", &catalogs()]);
    (dir, out)
}

fn example() -> String {
    std::fs::read_to_string(repo().join("tests/fixtures/auto-mode/auto-mode.kdl")).unwrap()
}

fn compiled_example() -> tempfile::TempDir {
    let (dir, out) = project(&example());
    assert!(out.status.success(), "{}", text(&out));
    dir
}

fn files(dir: &Path) -> Vec<String> {
    let mut f: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    f.sort();
    f
}

/// The file without the lines that follow the catalog's prices and digest (expected/ pins the rest, exactly).
fn without_prices(text: &str) -> String {
    text.lines()
        .filter(|l| !["gpuplan-digest", "gpuplan.dev/catalog", "usd-per-hour", "drain-peak-basis"].iter().any(|k| l.contains(k)))
        .map(|l| format!("{l}\n"))
        .collect()
}

// --- emission ---

#[test]
fn an_auto_mode_nodeclass_is_emitted_exactly() {
    let dir = compiled_example();
    let got = std::fs::read_to_string(dir.path().join("out/ml-auto/nodeclass-auto-mode.yaml")).unwrap();
    assert_eq!(without_prices(&got), std::fs::read_to_string(repo().join("tests/fixtures/auto-mode/expected/nodeclass-auto-mode.yaml")).unwrap());
}

#[test]
fn an_auto_mode_nodepool_is_emitted_exactly_with_eks_labels_and_no_os_requirement() {
    let dir = compiled_example();
    let got = std::fs::read_to_string(dir.path().join("out/ml-auto/nodepool-neuron.yaml")).unwrap();
    assert_eq!(without_prices(&got), std::fs::read_to_string(repo().join("tests/fixtures/auto-mode/expected/nodepool-neuron.yaml")).unwrap());
    let spot = std::fs::read_to_string(dir.path().join("out/ml-auto/nodepool-inference-spot.yaml")).unwrap();
    assert!(spot.contains("- key: eks.amazonaws.com/instance-family") && !spot.contains("karpenter.k8s.aws") && !spot.contains("kubernetes.io/os"), "{spot}");
}

#[test]
fn an_auto_mode_cluster_gets_no_ec2nodeclass_gpu_operator_device_plugin_values_or_karpenter_service_monitor() {
    let dir = compiled_example();
    let f = files(&dir.path().join("out/ml-auto"));
    assert_eq!(f, ["kustomization.yaml", "nodeclass-auto-mode.yaml", "nodepool-inference-on-demand.yaml", "nodepool-inference-spot.yaml", "nodepool-neuron.yaml", "prometheusrule-gpuplan-ml-auto.yaml"]);
    let kustomization = std::fs::read_to_string(dir.path().join("out/ml-auto/kustomization.yaml")).unwrap();
    assert!(kustomization.contains("CRD: NodeClass eks.amazonaws.com/v1 (from EKS Auto Mode"), "{kustomization}");
}

#[test]
fn the_add_on_daemonsets_model_sees_nothing_installed_in_an_auto_mode_cluster() {
    // The cluster's objects and its add-on values (values/, where the charts' ConfigMaps go; not values/helm/).
    let objects = |dir: &Path| -> Vec<serde_json::Value> {
        [dir.to_path_buf(), dir.join("values")]
            .iter()
            .filter(|d| d.is_dir())
            .flat_map(|d| files(d).into_iter().map(move |f| d.join(f)))
            .filter(|p| p.is_file())
            .map(|p| serde_saphyr::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
            .collect()
    };
    let auto = compiled_example();
    let values = objects(&auto.path().join("out/ml-auto"));
    assert!(gpuplan::charts::daemon_sets::daemon_set_objects(&values.iter().collect::<Vec<_>>()).is_empty());
    // The same pools on self-managed Karpenter: the GPU Operator (NFD, operands) and the Neuron device plugin.
    let (karpenter, out) = project(&example().replace("    auto-mode #true\n    ephemeral-storage \"250Gi\"\n", "    ami \"al2023@v20251023\"\n"));
    assert!(out.status.success(), "{}", text(&out));
    let values = objects(&karpenter.path().join("out/ml-auto"));
    assert!(!gpuplan::charts::daemon_sets::daemon_set_objects(&values.iter().collect::<Vec<_>>()).is_empty());
}

#[test]
fn explain_names_the_types_auto_mode_does_not_launch() {
    let dir = compiled_example();
    let out = gpuplan(dir.path(), &["explain", "auto-mode", "--catalogs", &catalogs()]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // g7 is not in the EKS User Guide's supported instance reference.
    let line = stdout.lines().find(|l| l.contains("EKS Auto Mode launches the type")).unwrap_or_default();
    assert!(line.contains("g7.2xlarge"), "{stdout}");
}

#[test]
fn a_reserved_pool_in_auto_mode_gets_a_nodeclass_with_its_reservation_and_no_gp010() {
    let profile = format!("{}\npool \"reserved-l4\" preset=\"inference-on-demand\" {{\n    gpu {{\n        name \"L4\"\n    }}\n    reserved {{ id \"cr-0123456789abcdef0\"; instance-type \"g6.xlarge\"; instances 2; }}\n    max-accelerators 4\n}}\n", example());
    let (dir, out) = project(&profile);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!text(&out).contains("GP010"), "{}", text(&out));
    let class = std::fs::read_to_string(dir.path().join("out/ml-auto/nodeclass-reserved-l4-reserved.yaml")).unwrap();
    assert!(class.contains("kind: NodeClass") && class.contains("capacityReservationSelectorTerms:\n  - id: cr-0123456789abcdef0"), "{class}");
    let pool = std::fs::read_to_string(dir.path().join("out/ml-auto/nodepool-reserved-l4-reserved.yaml")).unwrap();
    assert!(pool.contains("kind: NodeClass\n        name: reserved-l4-reserved"), "{pool}");
}

/// EKS Auto Mode supports static NodePools itself (EKS User Guide, "Static-capacity node pools in EKS Auto Mode"):
/// the NodePool carries `replicas` on the NodeClass, and the kustomization names no Karpenter feature gate to set,
/// since Auto Mode has none a user can set.
#[test]
fn a_static_pool_in_auto_mode_compiles_and_asks_for_no_feature_gate() {
    let profile = format!("{}\npool \"warm\" preset=\"inference-on-demand\" {{\n    gpu {{\n        name \"L4\"\n    }}\n    static replicas=2\n}}\n", example());
    let (dir, out) = project(&profile);
    assert!(out.status.success(), "{}", text(&out));
    let pool = std::fs::read_to_string(dir.path().join("out/ml-auto/nodepool-warm.yaml")).unwrap();
    assert!(pool.contains("  replicas: 2\n") && pool.contains("kind: NodeClass"), "{pool}");
    let kustomization = std::fs::read_to_string(dir.path().join("out/ml-auto/kustomization.yaml")).unwrap();
    assert!(!kustomization.contains("StaticCapacity"), "{kustomization}");
}

// --- located errors: settings Auto Mode cannot honour ---

/// Compiles the example with `from` replaced by `to`; asserts exit 2, nothing written, and the code at `line`.
fn assert_error(from: &str, to: &str, code: &str, line: usize) -> String {
    let profile = example();
    assert!(profile.contains(from), "{from}");
    let (dir, out) = project(&profile.replacen(from, to, 1));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!dir.path().join("out").exists(), "nothing is written on error");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(stderr.contains(code) && stderr.contains(&format!("profiles/auto-mode.kdl:{line}:")), "{code} at line {line}: {stderr}");
    stderr
}

#[test]
fn an_ami_in_an_auto_mode_cluster_is_e0270() {
    let e = assert_error("    auto-mode #true\n", "    auto-mode #true\n    ami \"al2023@v20251023\"\n", "E0270", 12);
    assert!(e.contains("chooses the node image itself"), "{e}");
}

#[test]
fn an_image_cache_in_an_auto_mode_cluster_is_e0271() {
    assert_error("    auto-mode #true\n", "    auto-mode #true\n    image-cache snapshot=\"snap-0123456789abcdef0\"\n", "E0271", 12);
}

#[test]
fn accelerated_ami_in_an_auto_mode_cluster_is_e0272() {
    assert_error("    auto-mode #true\n", "    auto-mode #true\n    accelerated-ami #false\n", "E0272", 12);
}

#[test]
fn time_slicing_in_an_auto_mode_cluster_is_e0273() {
    let e = assert_error("    max-accelerators 8\n", "    max-accelerators 8\n    time-slicing replicas=4\n", "E0273", 21);
    assert!(e.contains("managed by AWS"), "{e}");
}

#[test]
fn mig_in_an_auto_mode_cluster_is_e0274() {
    assert_error("    max-accelerators 8\n", "    max-accelerators 8\n    mig \"all-1g.10gb\"\n", "E0274", 21);
}

/// Auto Mode documents no NodeOverlay (its CRDs are NodePool, NodeClaim and NodeClass): an overlay's price would not
/// rank the types there, while gpuplan's ranking would say it does.
#[test]
fn an_overlay_block_in_an_auto_mode_cluster_is_e0332() {
    let e = assert_error("    max-accelerators 8\n", "    max-accelerators 8\n    overlay \"discount\" { price-adjustment \"-20%\"; }\n", "E0332", 21);
    assert!(e.contains("overlay `discount` is in an EKS Auto Mode cluster"), "{e}");
}

#[test]
fn an_ephemeral_storage_size_outside_the_guides_ranges_is_e0275() {
    assert_error("\"250Gi\"", "\"60000Gi\"", "E0275", 12);
}

#[test]
fn ephemeral_storage_without_auto_mode_is_e0276() {
    assert_error("    auto-mode #true\n", "    ami \"al2023@v20251023\"\n", "E0276", 12);
}

#[test]
fn profiles_of_one_cluster_that_disagree_on_auto_mode_are_e0277() {
    let dir = compiled_example();
    let other = example().replace("profile \"auto-mode\" priority=20", "profile \"classic\" priority=10").replace("    auto-mode #true\n    ephemeral-storage \"250Gi\"\n", "    ami \"al2023@v20251023\"\n").replace("pool \"inference\"", "pool \"inference2\"").replace("pool \"neuron\"", "pool \"neuron2\"");
    std::fs::write(dir.path().join("profiles/classic.kdl"), other).unwrap();
    let out = gpuplan(dir.path(), &["compile", "--catalogs", &catalogs()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("E0277") && text(&out).contains("profiles/auto-mode.kdl:11:"), "{}", text(&out));
}

#[test]
fn an_auto_mode_profile_named_default_is_e0278() {
    assert_error("profile \"auto-mode\" priority=20", "profile \"default\" priority=20", "E0278", 4);
}

// --- simulate ---

#[test]
fn simulate_places_a_gpu_pod_on_an_auto_mode_gpu_pool_by_its_eks_gpu_label() {
    let dir = compiled_example();
    // The EKS User Guide's accelerated-workload pod: an Auto Mode node with an NVIDIA GPU of a given name.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: nvidia-smi\nspec:\n  nodeSelector:\n    eks.amazonaws.com/compute-type: auto\n    eks.amazonaws.com/instance-gpu-name: l4\n    gpuplan.dev/pool: inference\n  tolerations:\n  - key: nvidia.com/gpu\n    operator: Exists\n  - key: gpuplan.dev/pool\n    operator: Exists\n  containers:\n  - name: c\n    image: nvidia/cuda\n    resources:\n      requests:\n        nvidia.com/gpu: 1\n      limits:\n        nvidia.com/gpu: 1\n";
    std::fs::write(dir.path().join("pod.yaml"), pod).unwrap();
    let out = gpuplan(dir.path(), &["simulate", "--pods", "pod.yaml", "--catalogs", &catalogs(), "--format", "json", "--exit-code"]);
    assert!(out.status.success(), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let claim = &report["nodeclaims"][0];
    assert_eq!(claim["nodepool"], "inference-spot", "{report:#}");
    assert!(claim["instance_type"].as_str().is_some_and(|t| t.starts_with("g6.")), "an L4 type: {report:#}");
}

#[test]
fn an_ec2nodeclass_of_the_same_name_does_not_serve_an_auto_mode_nodepool() {
    let dir = compiled_example();
    let nodeclass = dir.path().join("out/ml-auto/nodeclass-auto-mode.yaml");
    std::fs::remove_file(&nodeclass).unwrap();
    std::fs::write(dir.path().join("out/ml-auto/ec2nodeclass-auto-mode.yaml"), "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: auto-mode\nspec:\n  amiSelectorTerms:\n  - alias: al2023@latest\n").unwrap();
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  tolerations:\n  - operator: Exists\n  containers:\n  - name: c\n    image: x\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n";
    std::fs::write(dir.path().join("pod.yaml"), pod).unwrap();
    let out = gpuplan(dir.path(), &["simulate", "--pods", "pod.yaml", "--catalogs", &catalogs(), "--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert!(report["nodeclaims"].as_array().is_some_and(|c| c.is_empty()), "{}", text(&out));
}

// --- adopt round trip ---

/// Adopting an Auto Mode cluster's out/ and compiling the result reproduces it byte for byte (provenance included).
#[test]
fn adopting_an_auto_mode_clusters_out_reproduces_it_byte_for_byte() {
    let dir = compiled_example();
    std::fs::rename(dir.path().join("out"), dir.path().join("original")).unwrap();
    std::fs::rename(dir.path().join("profiles"), dir.path().join("written")).unwrap();
    let out = gpuplan(dir.path(), &["adopt", "original", "--into", "profiles", "--catalogs", &catalogs()]);
    assert!(out.status.success(), "{}", text(&out));
    let profile = std::fs::read_to_string(dir.path().join("profiles/auto-mode.kdl")).unwrap();
    assert!(profile.contains("    auto-mode #true //") && profile.contains("    ephemeral-storage \"250Gi\" //") && !profile.contains("    ami "), "{profile}");
    let again = gpuplan(dir.path(), &["compile", "--catalogs", &catalogs()]);
    assert!(again.status.success(), "{}", text(&again));
    let (a, b) = (dir.path().join("original/ml-auto"), dir.path().join("out/ml-auto"));
    assert_eq!(files(&a), files(&b));
    for f in files(&a) {
        assert_eq!(std::fs::read_to_string(b.join(&f)).unwrap(), std::fs::read_to_string(a.join(&f)).unwrap(), "{f} differs after adopt → compile");
    }
}

/// A NodePool written for Auto Mode's built-in NodeClass `default` (the EKS User Guide's GPU example): simulate assumes
/// that class (it exists whenever a built-in NodePool is enabled), so the original launches; adopt writes a profile
/// `auto-mode` (a profile named `default` is E0278). The original is an untainted GPU pool: it adopts with
/// `accelerator-taint #false` (issue 19 item 2), so the probe lands as before.
#[test]
fn a_nodepool_on_auto_modes_built_in_default_nodeclass_adopts_and_its_original_launches() {
    let dir = tempfile::tempdir().unwrap();
    let input = repo().join("tests/fixtures/auto-mode/gpu-nodepool-default-class.yaml");
    let out = gpuplan(dir.path(), &["adopt", input.to_str().unwrap(), "--into", "profiles", "--catalogs", &catalogs(), "--format", "json", "--accept-changes"]);
    assert!(out.status.success(), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &report["verification"]["placements"][0];
    assert_eq!((p["before"]["nodepool"].as_str(), p["before"]["instance_type"].as_str()), (Some("gpu"), Some("g6.xlarge")), "{p:#}");
    assert_eq!(report["verification"]["unexplained"], 0, "{:#}", report["verification"]);
    assert_eq!(p["change"], "same", "{p:#}");
    assert!(std::fs::read_to_string(dir.path().join("profiles/auto-mode.kdl")).unwrap().contains("accelerator-taint #false"));
}

/// A NodeClass has no userData field: `user-data` in an Auto Mode cluster would vanish, so it is refused at its line.
#[test]
fn user_data_in_an_auto_mode_cluster_is_e0279() {
    let e = assert_error("    auto-mode #true\n", "    auto-mode #true\n    user-data \"[settings]\"\n", "E0279", 12);
    assert!(e.contains("take no user data"), "{e}");
}

/// A `require` on an instance label is written in Auto Mode's domain (`eks.amazonaws.com/instance-*`, the labels the
/// EKS User Guide's "Create a Node Pool" lists), as adopt reads Auto Mode's twins back into the profile's words.
#[test]
fn a_require_on_an_instance_label_is_written_in_auto_modes_domain() {
    let profile = example().replacen("    max-accelerators 8\n", "    max-accelerators 8\n    require \"karpenter.k8s.aws/instance-generation\" \"Gt\" \"4\"\n", 1);
    let (dir, out) = project(&profile);
    assert!(out.status.success(), "{}", text(&out));
    let pool = std::fs::read_to_string(dir.path().join("out/ml-auto/nodepool-inference-spot.yaml")).unwrap();
    assert!(pool.contains("- key: eks.amazonaws.com/instance-generation\n        operator: Gt\n        values:\n        - \"4\""), "{pool}");
    assert!(!pool.contains("key: karpenter.k8s.aws/"), "no self-managed Karpenter label in an Auto Mode NodePool's requirements: {pool}");
}

// --- review fixes (stop 20) ---

/// An EFA pool in Auto Mode: Auto Mode runs the EFA device plugin itself (the chart's DaemonSet skips Auto Mode nodes),
/// so gpuplan writes no values ConfigMap, and the NodePool's EFA annotation must not name one. It still starts with
/// `required`, which adopt reads back as `efa #true`.
#[test]
fn an_auto_mode_efa_nodepool_names_no_configmap_that_is_not_emitted() {
    let profile = format!("{}\npool \"train\" preset=\"training-on-demand\" {{\n    gpu {{\n        name \"H100\"\n        per-node min=8\n    }}\n    efa #true\n    max-accelerators 16\n}}\n", example());
    let (dir, out) = project(&profile);
    assert!(out.status.success(), "{}", text(&out));
    let out_dir = dir.path().join("out/ml-auto");
    let pool = std::fs::read_to_string(out_dir.join("nodepool-train.yaml")).unwrap();
    let annotation = pool.lines().find(|l| l.contains("gpuplan.dev/efa:")).unwrap_or_default();
    assert!(annotation.contains("required: every type has EFA; EKS Auto Mode runs the EFA device plugin"), "{pool}");
    let emitted = files(&out_dir);
    assert!(!emitted.iter().any(|f| f.starts_with("configmap")), "{emitted:?}");
    for file in &emitted {
        let text = std::fs::read_to_string(out_dir.join(file)).unwrap();
        assert!(!text.contains("ConfigMap kube-system/"), "{file} names a ConfigMap that is not emitted:\n{text}");
    }
}

/// The example with a workload on its GPU pool (`body` inside the block) and `extra` appended.
fn with_workload(body: &str, extra: &str) -> String {
    format!("{}\nworkload \"chat\" namespace=\"serving\" pool=\"inference\" {{\n    selector \"app\" \"chat\"\n    replicas min=1 max=4\n{body}}}\n{extra}", example())
}

fn alert_names(dir: &Path) -> Vec<String> {
    let rule = std::fs::read_to_string(dir.join("out/ml-auto/prometheusrule-gpuplan-ml-auto.yaml")).unwrap();
    rule.lines().filter_map(|l| l.trim().strip_prefix("- alert: ")).map(String::from).collect()
}

/// Auto Mode exposes no Karpenter metrics and, without a GPU Operator, no DCGM metrics: the PrometheusRule keeps only
/// the kube-state-metrics alerts, and no expression reads a metric nothing scrapes.
#[test]
fn an_auto_mode_prometheusrule_has_no_rule_on_karpenter_or_dcgm_metrics() {
    let (dir, out) = project(&with_workload("", "budget usd-per-hour=40\n"));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(alert_names(dir.path()), ["GpuplanAcceleratorPodsPending", "GpuplanWorkloadPodsUnschedulable"]);
    let rule = std::fs::read_to_string(dir.path().join("out/ml-auto/prometheusrule-gpuplan-ml-auto.yaml")).unwrap();
    assert!(!rule.contains("karpenter_") && !rule.contains("DCGM_"), "{rule}");
    assert!(rule.contains("AUTO_MODE_COMPUTE_LOGS"), "the runbooks say where launch errors are: {rule}");
}

/// `gpu-operator manage=#false` says a dcgm-exporter runs anyway: its ServiceMonitor and the GPU-utilization alerts
/// come back (still no Karpenter ones), and `autoscale` compiles.
#[test]
fn an_auto_mode_cluster_with_its_own_dcgm_exporter_gets_the_gpu_utilization_alerts_and_may_autoscale() {
    let (dir, out) = project(&with_workload("    autoscale gpu-utilization=70\n", "monitoring {\n    gpu-operator manage=#false\n}\n"));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(alert_names(dir.path()), ["GpuplanGPUUtilizationLow", "GpuplanAcceleratorPodsPending", "GpuplanWorkloadPodsUnschedulable", "GpuplanWorkloadGPUUtilizationLow"]);
    assert!(dir.path().join("out/ml-auto/servicemonitor-nvidia-dcgm-exporter.yaml").exists());
}

#[test]
fn autoscale_on_gpu_utilization_in_auto_mode_without_a_dcgm_exporter_is_e0330() {
    let (dir, out) = project(&with_workload("    autoscale gpu-utilization=70\n", ""));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!dir.path().join("out").exists(), "nothing is written on error");
    let e = text(&out);
    assert!(e.contains("E0330") && e.contains("profiles/auto-mode.kdl:33:") && e.contains("gpu-operator manage=#false"), "{e}");
}

#[test]
fn autoscale_on_a_metric_of_the_users_own_in_auto_mode_compiles() {
    let (_dir, out) = project(&with_workload("    autoscale gpu-utilization=70 metric=\"vllm_gpu_cache_usage_perc\"\n", ""));
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn a_keda_trigger_on_a_dcgm_metric_in_auto_mode_without_a_dcgm_exporter_is_e0331() {
    let (_dir, out) = project(&with_workload("    trigger \"prometheus\" query=\"avg(DCGM_FI_DEV_GPU_UTIL)\" threshold=50\n", ""));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("E0331") && text(&out).contains("profiles/auto-mode.kdl:33:"), "{}", text(&out));
}

#[test]
fn a_budget_in_auto_mode_is_lint_gp032_on_its_line() {
    let (_dir, out) = project(&format!("{}budget usd-per-hour=40\n", example()));
    assert!(out.status.success(), "{}", text(&out));
    let e = text(&out);
    assert!(e.contains("GP032") && e.contains("profiles/auto-mode.kdl:29:") && e.contains("no spend alert"), "{e}");
}
