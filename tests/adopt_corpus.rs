//! The adopt corpus (issue 19, "Done when"): published, hand-written Karpenter manifests (tests/fixtures/adopt-corpus,
//! each file's origin, commit and licence in its README) adopted, compiled and verified by simulation. Every entry's
//! outcome is pinned here: the placement changes it has, each with the reason the verification gives. A change that
//! no known change explains fails every test (`unexplained` must stay 0). Karpenter semantics: see tests/adopt_verify.rs.

use std::path::PathBuf;
use std::process::{Command, Output};

mod common;
use common::{text};

use serde_json::Value;

fn corpus(entry: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adopt-corpus").join(entry)
}

/// The placeholders the corpus files use, filled as a user would with `--set`.
const SET: [&str; 6] = ["--set", "CLUSTER_NAME=demo", "--set", "KARPENTER_NODE_IAM_ROLE_NAME=KarpenterNodeRole-demo", "--set", "AZ=us-east-1a"];

/// `gpuplan adopt <entry> --accept-changes --format json [--verify <pods>]`: the output and the report.
fn adopt(entry: &str, pods: Option<&str>) -> (Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let catalogs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let input = corpus(entry);
    let mut args = vec!["adopt", input.to_str().unwrap(), "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--format", "json", "--accept-changes"];
    args.extend(SET);
    let pods = pods.map(corpus);
    if let Some(p) = &pods {
        args.extend(["--verify", p.to_str().unwrap()]);
    }
    let out = Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).env("NO_COLOR", "1").args(&args).output().unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, report)
}

/// (entry, pods, placement changes): every entry that adopts and compiles, with the number of changes its README
/// lists as explained.
const ADOPTED: [(&str, Option<&str>, u64); 10] = [
    ("blueprints-nvidia", None, 0),
    ("blueprints-nvidia", Some("blueprints-nvidia-pods"), 0),
    ("blueprints-neuron", None, 0),
    ("blueprints-neuron", Some("blueprints-neuron-pods"), 0),
    ("blueprints-node-overlay", None, 0),
    ("blueprints-node-overlay", Some("blueprints-node-overlay-pods"), 0),
    ("data-on-eks-gpu", None, 0),
    ("provider-general-purpose", None, 0),
    ("blueprints-nvidia-automode", None, 0),
    ("blueprints-neuron-automode", None, 0),
];

#[test]
fn every_corpus_entry_adopts_compiles_and_verifies_with_every_change_explained() {
    for (entry, pods, changes) in ADOPTED {
        let (out, report) = adopt(entry, pods);
        assert!(out.status.success(), "{entry}: {}", text(&out));
        let v = &report["verification"];
        assert_eq!(v["unexplained"], 0, "{entry}: {v:#}");
        assert_eq!(v["changed"], changes, "{entry} with {pods:?}: {v:#}");
    }
    // Every entry of the corpus is pinned here or below (a file added without an expectation fails).
    let mut entries: Vec<String> = std::fs::read_dir(corpus("")).unwrap().map(|e| e.unwrap()).filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    entries.sort();
    let mut pinned: Vec<&str> = ADOPTED.iter().flat_map(|(e, p, _)| [Some(*e), *p]).flatten().chain(["blueprints-reserved-capacity", "provider-general-purpose"]).collect();
    pinned.sort();
    pinned.dedup();
    assert_eq!(entries, pinned);
}

/// The blueprint time-slices on Bottlerocket (userData `settings.kubelet-device-plugins.nvidia`, 4 replicas) and tells
/// Karpenter with NodeOverlays (nvidia.com/gpu = 4 × GPUs). Adopted, the class's settings become `time-slicing
/// replicas=4`, which compiles to the same user data and to gpuplan's own overlay: the four pods share one node, as
/// in the original, and the host's device plugin is the only one (no GPU Operator plugin on Bottlerocket).
#[test]
fn the_time_sliced_blueprint_runs_its_four_pods_on_one_node_as_the_original_does() {
    let (out, report) = adopt("blueprints-node-overlay", Some("blueprints-node-overlay-pods"));
    let run = &report["verification"]["runs"][0];
    assert_eq!((run["nodes_before"].as_u64(), run["nodes_after"].as_u64()), (Some(1), Some(1)), "{run:#}");
    assert_eq!(run["usd_per_hour_before"], run["usd_per_hour_after"], "{run:#}");
    assert!(!text(&out).contains("EC2NodeClass/gpu-bottlerocket spec.userData"), "the userData is adopted, not warned: {}", text(&out));
    assert!(text(&out).contains("a hand-written NodeOverlay is not adopted as such"), "{}", text(&out));
}

/// data-on-eks's GPU pool has no `nvidia.com/gpu` taint, so pods that do not tolerate it land there. Adopted, the
/// pool says `accelerator-taint #false`: the probe schedules as before, and lint GP007 says why the taint is worth
/// adding (a warning, silenced by `allow "GP007"` once the choice is deliberate).
#[test]
fn an_untainted_gpu_pool_stays_untainted_and_lint_says_why_the_taint_is_worth_adding() {
    let (out, report) = adopt("data-on-eks-gpu", None);
    let p = &report["verification"]["placements"][0];
    assert_eq!(p["change"], "same", "{p:#}");
    let pool = report["pools"].as_array().unwrap().iter().find(|p| p["node_pool"] == "gpu").unwrap();
    assert!(pool["findings_after"].as_array().unwrap().iter().any(|f| f.as_str().unwrap().starts_with("GP007 ") && f.as_str().unwrap().contains("accelerator-taint #false")), "{pool:#}\n{}", text(&out));
}

#[test]
fn a_cpu_pool_adopts_as_a_cpu_pool_and_its_probe_keeps_its_type() {
    let (out, report) = adopt("provider-general-purpose", None);
    let p = &report["verification"]["placements"][0];
    // The probe requests cpu: 1 and tolerates nothing: it lands on c6a.large before and after. gpuplan's CPU pool
    // ranks by $/vCPU-hour without burstable (t) types and below 2 GiB per vCPU, and keeps the original's
    // instance-category [c, m, r] as a `require` line: c6a.large is the cheapest either way.
    assert_eq!((p["change"].as_str(), p["before"]["instance_type"].as_str(), p["after"]["instance_type"].as_str()), (Some("same"), Some("c6a.large"), Some("c6a.large")), "{p:#}");
    assert!(text(&out).contains("max-cpu 768"), "{}", text(&out));
    // Compiled: the category requirement is carried, and the general CPU pool has no taint at all.
    let read = adopt_and_compile("provider-general-purpose", "demo");
    let nodepool = read("nodepool-general-purpose");
    assert!(nodepool.contains("key: karpenter.k8s.aws/instance-category"), "{nodepool}");
    assert!(!nodepool.contains("taints:"), "{nodepool}");
}

/// EKS Auto Mode (issue 19 item 4): the original NodePools reference an `eks.amazonaws.com` NodeClass and select on
/// `eks.amazonaws.com/instance-*` labels; both sides launch the same type, and the adopted profile says `auto-mode`.
#[test]
fn auto_mode_blueprints_adopt_into_auto_mode_profiles_that_place_their_probe_as_before() {
    for (entry, placed) in [("blueprints-nvidia-automode", "gpu/g5g.xlarge"), ("blueprints-neuron-automode", "neuron/inf1.xlarge")] {
        let (_, report) = adopt(entry, None);
        let p = &report["verification"]["placements"][0];
        assert_eq!(p["change"], "same", "{entry}: {p:#}");
        let landed = format!("{}/{}", p["after"]["nodepool"].as_str().unwrap_or_default(), p["after"]["instance_type"].as_str().unwrap_or_default());
        assert_eq!(landed, placed, "{entry}: {p:#}");
    }
}

/// The ODCR blueprint with the limit its error asks for (2 × t3.small = 4 vCPUs) written into a copy: a CPU pool
/// whose reservation tier and on-demand fallback keep the probe's placement (t3.small, on-demand in the simulator,
/// which knows no reservations).
#[test]
fn the_odcr_blueprint_with_its_cpu_limit_adopts_as_a_reserved_cpu_pool_with_no_placement_change() {
    let dir = tempfile::tempdir().unwrap();
    let entry = dir.path().join("odcr");
    std::fs::create_dir(&entry).unwrap();
    for file in std::fs::read_dir(corpus("blueprints-reserved-capacity")).unwrap() {
        let path = file.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.replacen("name: odcr-priority\nspec:\n", "name: odcr-priority\nspec:\n  limits:\n    cpu: \"4\"\n", 1);
        std::fs::write(entry.join(path.file_name().unwrap()), text).unwrap();
    }
    let (out, report) = adopt(entry.to_str().unwrap(), None);
    assert!(out.status.success(), "{}", text(&out));
    let v = &report["verification"];
    assert_eq!((v["changed"].as_u64(), v["unexplained"].as_u64()), (Some(0), Some(0)), "{v:#}");
    assert_eq!(v["placements"][0]["after"]["instance_type"], "t3.small", "{v:#}");
}

#[test]
fn an_auto_mode_blueprint_adopts_into_a_profile_that_says_auto_mode_and_compiles_back_to_a_nodeclass() {
    let dir = tempfile::tempdir().unwrap();
    let catalogs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let input = corpus("blueprints-nvidia-automode");
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).env("NO_COLOR", "1").args(args).output().unwrap();
    let out = run(&["adopt", input.to_str().unwrap(), "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--accept-changes", "--set", "CLUSTER_NAME=demo"]);
    assert!(out.status.success(), "{}", text(&out));
    let profile = std::fs::read_to_string(dir.path().join("profiles/gpu.kdl")).unwrap();
    assert!(profile.contains("    auto-mode #true //") && profile.contains("    ephemeral-storage \"100Gi\" //") && !profile.contains("    ami "), "{profile}");
    let out = run(&["compile", "profiles", "--out", "out", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let files: Vec<String> = std::fs::read_dir(dir.path().join("out/demo")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(files.contains(&"nodeclass-gpu.yaml".to_string()) && !files.iter().any(|f| f.starts_with("ec2nodeclass") || f.starts_with("clusterpolicy") || f.starts_with("configmap")), "{files:?}");
}

#[test]
fn the_odcr_blueprint_stops_at_adopt_asking_for_the_reservations_size() {
    let (out, _) = adopt("blueprints-reserved-capacity", None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NodePool/odcr-priority: a reserved pool needs what its capacity reservation holds, and the catalog knows no reservations: add spec.limits.cpu = 2 × the instances the reservation holds (t3.small has 2 vCPUs), then adopt again"), "{}", text(&out));
}

/// Adopts `entry` and compiles the profiles in a fresh directory; returns a reader of out/<cluster>/<prefix>*.
fn adopt_and_compile(entry: &str, cluster: &str) -> impl Fn(&str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let catalogs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).env("NO_COLOR", "1").args(args).output().unwrap();
    let input = corpus(entry);
    let mut args = vec!["adopt", input.to_str().unwrap(), "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--accept-changes"];
    args.extend(SET);
    let adopted = run(&args);
    assert!(adopted.status.success(), "{}", text(&adopted));
    let compiled = run(&["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(compiled.status.success(), "{}", text(&compiled));
    let out = dir.path().join("out").join(cluster);
    move |prefix: &str| {
        let _keep = &dir;
        let file = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).find(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix)).unwrap();
        std::fs::read_to_string(file).unwrap()
    }
}

/// Compiled, the adopted blueprint keeps Bottlerocket's own device plugin the only one (the GPU Operator's stays off
/// its nodes), carries the time-slicing settings in the class's user data, and the NodePool's limits: cpu at most
/// the blueprint's 100 (gpuplan's backstop when lower), memory as written.
#[test]
fn the_adopted_bottlerocket_pool_compiles_to_the_hosts_device_plugin_its_settings_and_its_limits() {
    let read = adopt_and_compile("blueprints-node-overlay", "demo");
    let nodepool = read("nodepool-gpu-slices");
    assert!(nodepool.contains("nvidia.com/gpu.deploy.device-plugin: \"false\"") && nodepool.contains("memory: 200Gi"), "{nodepool}");
    let cpu: u32 = nodepool.lines().find_map(|l| l.trim().strip_prefix("cpu: ")).unwrap().trim_matches('"').parse().unwrap();
    assert!(cpu <= 100, "{nodepool}");
    let class = read("ec2nodeclass-");
    assert!(class.contains("device-sharing-strategy = \"time-slicing\"") && class.contains("replicas = 4") && class.contains("rename-by-default = false"), "{class}");
}

/// data-on-eks's GPU class carries an AL2023 NodeConfig and a shell script in its userData (SOCI parallel pull, RAID0
/// scratch): adopted as the cluster's `user-data`, it compiles back byte for byte.
#[test]
fn a_classs_user_data_is_carried_verbatim_through_adopt_and_compile() {
    let read = adopt_and_compile("data-on-eks-gpu", "adopted");
    let compiled: Value = serde_saphyr::from_str(&read("ec2nodeclass-")).unwrap();
    let originals: Vec<Value> = serde_saphyr::from_multiple(&std::fs::read_to_string(corpus("data-on-eks-gpu/ec2nodeclass.yaml")).unwrap()).unwrap();
    let original = originals.iter().find(|c| c["metadata"]["name"] == "gpu").unwrap();
    assert!(original["spec"]["userData"].as_str().is_some_and(|u| u.contains("#!/bin/bash") || u.contains("NodeConfig")));
    assert_eq!(compiled["spec"]["userData"], original["spec"]["userData"]);
}

/// Round trip of a Bottlerocket time-sliced pool: gpuplan writes the shared pool's `spec.limits.cpu` itself (its backstop,
/// 80 here, below the profile's `limits cpu=100`), so adopting gpuplan's output must not read that number back as the
/// user's cap: the profile's own `limits cpu=100 memory="200Gi"` comes back (from the worst-case-basis annotation), and
/// compiling it again reproduces the NodePool byte for byte.
#[test]
fn adopting_gpuplans_bottlerocket_time_sliced_pool_gives_back_the_profiles_cpu_limit_not_the_backstop() {
    let dir = tempfile::tempdir().unwrap();
    let catalogs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).env("NO_COLOR", "1").args(args).output().unwrap();
    let input = corpus("blueprints-node-overlay");
    let mut args = vec!["adopt", input.to_str().unwrap(), "--into", "first", "--catalogs", catalogs.to_str().unwrap(), "--accept-changes"];
    args.extend(SET);
    assert!(run(&args).status.success());
    std::fs::rename(dir.path().join("first"), dir.path().join("profiles")).unwrap();
    assert!(run(&["compile", "--catalogs", catalogs.to_str().unwrap()]).status.success());
    let first = std::fs::read_to_string(dir.path().join("out/demo/nodepool-gpu-slices.yaml")).unwrap();
    assert!(first.contains("cpu: \"80\""), "the backstop is below the profile's 100: {first}");
    std::fs::rename(dir.path().join("out"), dir.path().join("original")).unwrap();
    std::fs::rename(dir.path().join("profiles"), dir.path().join("written")).unwrap();
    let adopted = run(&["adopt", "original", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--accept-changes"]);
    assert!(adopted.status.success(), "{}", text(&adopted));
    let profile = std::fs::read_to_string(dir.path().join("profiles/gpu-bottlerocket.kdl")).unwrap();
    assert!(profile.contains("    limits cpu=100 memory=\"200Gi\" //") && !profile.contains("cpu=80"), "{profile}");
    assert!(run(&["compile", "--catalogs", catalogs.to_str().unwrap()]).status.success());
    assert_eq!(std::fs::read_to_string(dir.path().join("out/demo/nodepool-gpu-slices.yaml")).unwrap(), first);
}
