//! The adopt corpus (issue 19, "Done when"): published, hand-written Karpenter manifests (tests/fixtures/adopt-corpus,
//! each file's origin, commit and licence in its README) adopted, compiled and verified by simulation. Every entry's
//! outcome is pinned here: the placement changes it has, each with the reason the verification gives. A change that
//! no known change explains fails every test (`unexplained` must stay 0). Karpenter semantics: see tests/adopt_verify.rs.

use std::path::PathBuf;
use std::process::{Command, Output};

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

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The reasons of every changed pod and run, one list.
fn reasons(report: &Value) -> Vec<String> {
    let v = &report["verification"];
    let pods = v["placements"].as_array().unwrap().iter().filter(|p| p["change"] != "same");
    let runs = v["runs"].as_array().unwrap().iter().filter(|r| r["reasons"].as_array().is_some_and(|r| !r.is_empty()));
    pods.chain(runs).flat_map(|p| p["reasons"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string())).collect()
}

/// (entry, pods, placement changes): every entry that adopts and compiles, with the number of changes its README
/// lists as explained.
const ADOPTED: [(&str, Option<&str>, u64); 10] = [
    ("blueprints-nvidia", None, 0),
    ("blueprints-nvidia", Some("blueprints-nvidia-pods"), 0),
    ("blueprints-neuron", None, 0),
    ("blueprints-neuron", Some("blueprints-neuron-pods"), 0),
    ("blueprints-node-overlay", None, 0),
    ("blueprints-node-overlay", Some("blueprints-node-overlay-pods"), 1),
    ("data-on-eks-gpu", None, 1),
    ("provider-general-purpose", None, 1),
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
    let mut pinned: Vec<&str> = ADOPTED.iter().flat_map(|(e, p, _)| [Some(*e), *p]).flatten().chain(["blueprints-reserved-capacity"]).collect();
    pinned.sort();
    pinned.dedup();
    assert_eq!(entries, pinned);
}

#[test]
fn the_time_sliced_blueprint_keeps_each_pods_placement_but_needs_four_nodes_because_its_overlays_and_userdata_are_not_adopted() {
    let (_, report) = adopt("blueprints-node-overlay", Some("blueprints-node-overlay-pods"));
    let run = &report["verification"]["runs"][0];
    assert_eq!((run["nodes_before"].as_u64(), run["nodes_after"].as_u64()), (Some(1), Some(4)), "{run:#}");
    let reasons = reasons(&report);
    assert!(reasons.iter().any(|r| r.starts_with("the original NodeOverlay gpu-slices-1gpu (capacity nvidia.com/gpu=4) has no counterpart")), "{reasons:#?}");
    assert!(reasons.iter().any(|r| r.contains("EC2NodeClass/gpu-bottlerocket spec.userData")), "{reasons:#?}");
}

#[test]
fn an_untainted_gpu_pool_gains_the_nvidia_taint_and_its_probe_pends() {
    let (_, report) = adopt("data-on-eks-gpu", None);
    let p = &report["verification"]["placements"][0];
    assert_eq!(p["change"], "pends", "{p:#}");
    assert!(reasons(&report).contains(&"the adopted NodePool gpu adds taint nvidia.com/gpu:NoSchedule".to_string()), "{:#?}", reasons(&report));
}

#[test]
fn a_cpu_pool_adopts_as_a_gpu_pool_and_the_verification_names_the_types_it_lost() {
    let (_, report) = adopt("provider-general-purpose", None);
    let p = &report["verification"]["placements"][0];
    assert_eq!((p["change"].as_str(), p["before"]["instance_type"].as_str()), (Some("pends"), Some("c6a.large")), "{p:#}");
    assert!(reasons(&report).iter().any(|r| r.starts_with("the adopted NodePool general-purpose names 3 instance type(s) (") && r.ends_with("), not c6a.large")), "{:#?}", reasons(&report));
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
