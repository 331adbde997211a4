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
    adopt_with(entry, pods, &[])
}

/// [`adopt`] with more arguments.
fn adopt_with(entry: &str, pods: Option<&str>, extra: &[&str]) -> (Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let catalogs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let input = corpus(entry);
    let mut args = vec!["adopt", input.to_str().unwrap(), "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--format", "json", "--accept-changes"];
    args.extend(SET);
    args.extend(extra);
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
const ADOPTED: [(&str, Option<&str>, u64); 12] = [
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
    ("provider-docs-node-overlay", None, 0),
    // The docs' static NodePool names no NodeClass (a fragment: the API server would refuse it), so the original
    // launches nothing and the adopted pool, given the profile's EC2NodeClass, places the probe: explained.
    ("provider-docs-static", None, 1),
];

#[test]
fn every_corpus_entry_adopts_compiles_and_verifies_with_every_change_explained() {
    for (entry, pods, changes) in ADOPTED {
        let (out, report) = adopt(entry, pods);
        assert!(out.status.success(), "{entry}: {}", text(&out));
        let v = &report["verification"];
        assert_eq!(v["unexplained"].as_u64(), v["fields_unexplained"].as_u64(), "{entry}: only field changes may be unexplained: {v:#}");
        assert_eq!(v["changed"], changes, "{entry} with {pods:?}: {v:#}");
    }
    // Every entry of the corpus is pinned here or below (a file added without an expectation fails).
    let mut entries: Vec<String> = std::fs::read_dir(corpus("")).unwrap().map(|e| e.unwrap()).filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    entries.sort();
    // The wild corpus's entries are pinned in wild.json (tests/adopt_corpus_wild.rs), with their pods and the values a
    // user supplies.
    let wild: serde_json::Map<String, Value> = serde_json::from_str(&std::fs::read_to_string(corpus("wild.json")).unwrap()).unwrap();
    let wild: Vec<String> = wild.keys().flat_map(|k| [k.clone(), format!("{k}-pods")]).filter(|e| corpus(e).is_dir()).chain(["values".to_string()]).collect();
    let mut pinned: Vec<&str> = ADOPTED.iter().flat_map(|(e, p, _)| [Some(*e), *p]).flatten().chain(["blueprints-reserved-capacity", "provider-general-purpose"]).chain(CLASS_ENTRIES).chain(wild.iter().map(String::as_str)).collect();
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
    // The userData is adopted, not carried: the one warning on it names what gpuplan adds to its settings.
    let all = text(&out);
    let mut warned = all.lines().filter(|l| l.contains("EC2NodeClass/gpu-bottlerocket spec.userData"));
    assert!(warned.all(|l| l.contains("gpuplan writes the time-slicing settings itself, with fail-requests-greater-than-one")), "{all}");
    // The blueprint's gpu-slices-* overlays only declare what `time-slicing replicas=4` compiles to: skipped, saying so.
    assert!(text(&out).contains("NodeOverlay/gpu-slices-1gpu (it only declares the GPU capacity that the `time-slicing`/`mig` of gpu-slices compiles to in gpuplan's own NodeOverlay"), "{}", text(&out));
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

/// The static NodePool of the Karpenter docs (concepts/nodepools.md, "Static NodePool"): `spec.replicas: 10` and
/// `limits.nodes: 15` adopt as `static replicas=10 max-nodes=15`, which compiles back to replicas and the node limit,
/// with no weight and no other limit (the CRD's static rules). Its one placement change is the missing NodeClass.
#[test]
fn the_docs_static_nodepool_adopts_into_a_static_pool_that_compiles_back_to_replicas() {
    let (_, report) = adopt("provider-docs-static", None);
    let p = &report["verification"]["placements"][0];
    assert!(p["reasons"].to_string().contains("the original NodePool static-capacity launched nothing (EC2NodeClass"), "{p:#}");
    let read = adopt_and_compile("provider-docs-static", "adopted");
    let nodepool = read("nodepool-static-capacity");
    assert!(nodepool.contains("replicas: 10") && nodepool.contains("nodes: \"15\"") && !nodepool.contains("weight:"), "{nodepool}");
}

/// The same NodePool with a nodeClassRef and an EC2NodeClass written into a copy: both sides launch the ten replicas
/// up front (the original has no capacity-type requirement, so the provider takes spot; adopt writes spot and
/// on-demand), and the probe lands on a static replica (its NodePool takes no pod through provisioning) of the same
/// type, capacity type and price.
#[test]
fn the_docs_static_nodepool_with_a_nodeclass_keeps_its_probe_on_a_static_replica() {
    let dir = tempfile::tempdir().unwrap();
    let entry = dir.path().join("static");
    std::fs::create_dir(&entry).unwrap();
    let original = std::fs::read_to_string(corpus("provider-docs-static/static-capacity.yaml")).unwrap();
    let class_ref = "  template:\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n";
    let class = "---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  role: KarpenterNodeRole-demo\n  amiSelectorTerms:\n  - alias: al2023@v20251023\n  subnetSelectorTerms:\n  - tags: {karpenter.sh/discovery: demo}\n  securityGroupSelectorTerms:\n  - tags: {karpenter.sh/discovery: demo}\n";
    std::fs::write(entry.join("static.yaml"), original.replacen("  template:\n    spec:\n", class_ref, 1) + class).unwrap();
    let (out, report) = adopt(entry.to_str().unwrap(), None);
    assert!(out.status.success(), "{}", text(&out));
    let v = &report["verification"];
    assert_eq!((v["changed"].as_u64(), v["unexplained"].as_u64()), (Some(0), Some(0)), "{v:#}");
    let p = &v["placements"][0];
    assert_eq!((p["before"]["instance_type"].as_str(), p["after"]["capacity_type"].as_str()), (Some("m5.large"), Some("spot")), "{p:#}");
    assert_eq!((p["before"]["nodepool"].as_str(), p["after"]["nodepool"].as_str()), (Some("static-capacity"), Some("static-capacity")), "{p:#}");
}

#[test]
fn the_odcr_blueprint_stops_at_adopt_asking_for_the_reservations_size() {
    let (out, _) = adopt("blueprints-reserved-capacity", None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NodePool/odcr-priority: a reserved pool needs what its capacity reservation holds, and the catalog knows no reservations: pass --reservation odcr-priority=INSTANCES (how many t3.small it holds), or add spec.limits.cpu = 2 × those instances (t3.small has 2 vCPUs), then adopt again"), "{}", text(&out));
    let (out, _) = adopt_with("blueprints-reserved-capacity", None, &["--reservation", "odcr=2"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--reservation odcr=…: no NodePool or capacity reservation id odcr in the inputs (their NodePools and the ids their classes select: odcr-priority)"), "{}", text(&out));
}

/// The same blueprint unchanged, its size given as the error asks (`--reservation odcr-priority=2`): the reserved
/// tier holds 2 × t3.small and the probe keeps its placement.
#[test]
fn the_odcr_blueprint_adopts_unchanged_with_its_size_given_on_the_command_line() {
    let (out, report) = adopt_with("blueprints-reserved-capacity", None, &["--reservation", "odcr-priority=2"]);
    assert!(out.status.success(), "{}", text(&out));
    let v = &report["verification"];
    assert_eq!((v["changed"].as_u64(), v["unexplained"].as_u64()), (Some(0), Some(0)), "{v:#}");
    assert_eq!(v["placements"][0]["after"]["instance_type"], "t3.small", "{v:#}");
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

/// Entries that exercise node classes: several EC2NodeClasses in one cluster (data-on-eks: 9 NodePools on 6 classes
/// with name-tag subnet and security-group selectors, RAID0, their own volumes, tags and userData), and the provider's
/// examples of what a class can say beyond gpuplan's settings (Bottlerocket volumes, several EBS volumes, a Custom
/// AMI family with AMI ids, instance-store ephemeral storage, AL2 user data, a node lifetime). Each adopts, compiles
/// and verifies with 0 placement changes; what no setting says is carried in `raw` blocks.
const CLASS_ENTRIES: [&str; 7] = [
    "data-on-eks-cluster",
    "provider-bottlerocket",
    "provider-multiple-ebs",
    "provider-custom-family",
    "provider-max-node-lifetime",
    "provider-instance-store-ephemeral-storage",
    "provider-al2-custom-userdata",
];

#[test]
fn class_entries_adopt_compile_and_verify_with_no_placement_change() {
    for entry in CLASS_ENTRIES {
        let (out, report) = adopt(entry, None);
        assert!(out.status.success(), "{entry}: {}", text(&out));
        let v = &report["verification"];
        assert_eq!((v["unexplained"].as_u64(), v["changed"].as_u64()), (Some(0), Some(0)), "{entry}: {v:#}");
    }
}

/// Issue 31, "a verification that can see": every behaviour field of each original NodePool and node class compared at
/// Karpenter's defaults; on every entry each difference is named by the adoption (a warning, a profile line's
/// provenance, the pool report's types, gpuplan's own metadata).
#[test]
fn every_field_change_of_every_corpus_entry_is_named() {
    let mut entries: Vec<(&str, Vec<&str>)> = ADOPTED.iter().filter(|(_, pods, _)| pods.is_none()).map(|(e, _, _)| (*e, vec![])).chain(CLASS_ENTRIES.iter().map(|e| (*e, vec![]))).collect();
    entries.push(("blueprints-reserved-capacity", vec!["--reservation", "odcr-priority=2"]));
    entries.dedup();
    let mut unnamed = Vec::new();
    for (entry, extra) in entries {
        let (out, report) = adopt_with(entry, None, &extra);
        assert!(out.status.success(), "{entry}: {}", text(&out));
        let v = &report["verification"];
        assert!(v["fields_changed"].as_u64().is_some_and(|n| n > 0), "{entry}: gpuplan's pool label at least: {v:#}");
        for f in v["fields"].as_array().unwrap().iter().filter(|f| f["reason"].is_null()) {
            unnamed.push((entry.to_string(), f["object"].as_str().unwrap().to_string(), f["field"].as_str().unwrap().to_string()));
        }
        assert_eq!(v["fields_unexplained"].as_u64(), Some(unnamed.iter().filter(|u| u.0 == entry).count() as u64), "{entry}: {v:#}");
    }
    unnamed.sort();
    assert!(unnamed.is_empty(), "field changes nothing names: {unnamed:#?}");
}

/// A leaf of an object: its path as keys and indexes, printed dotted (`spec.template.spec.requirements[2].key`, the
/// form adopt's provenance comments and warnings use).
fn leaf_fields(value: &Value, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, Value)>) {
    match value {
        Value::Object(m) if !m.is_empty() => m.iter().for_each(|(k, v)| {
            path.push(k.clone());
            leaf_fields(v, path, out);
            path.pop();
        }),
        Value::Array(a) if !a.is_empty() => a.iter().enumerate().for_each(|(i, v)| {
            path.push(format!("[{i}]"));
            leaf_fields(v, path, out);
            path.pop();
        }),
        _ => out.push((path.clone(), value.clone())),
    }
}

fn dotted(path: &[String]) -> String {
    path.iter().fold(String::new(), |acc, s| if s.starts_with('[') || acc.is_empty() { acc + s } else { acc + "." + s })
}

fn at<'v>(value: &'v Value, path: &[String]) -> &'v Value {
    path.iter().fold(value, |v, s| match s.strip_prefix('[').and_then(|i| i.strip_suffix(']')).and_then(|i| i.parse::<usize>().ok()) {
        Some(i) => &v[i],
        None => &v[s.as_str()],
    })
}

/// Adopts and compiles `entry`; returns every field of an original NodePool or of the EC2NodeClass it names that is
/// neither in the compiled counterpart (same path, same value: the NodePool of the same name, the class its
/// nodeClassRef names) nor named by the adopted profiles (a setting's provenance comment) or the report (a warning
/// that says why it is not carried).
fn lost_fields(entry: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let catalogs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).env("NO_COLOR", "1").args(args).output().unwrap();
    let input = corpus(entry);
    let mut args = vec!["adopt", input.to_str().unwrap(), "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--accept-changes", "--format", "json"];
    args.extend(SET);
    let adopted = run(&args);
    assert!(adopted.status.success(), "{}", text(&adopted));
    let compiled = run(&["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(compiled.status.success(), "{}", text(&compiled));
    // Named: by a profile line's provenance comment, or by a warning that keeps the field out of the output. A field a
    // warning says is carried in a `raw` block must be in the output.
    let report: Value = serde_json::from_slice(&adopted.stdout).unwrap();
    let mut named: Vec<String> = report["warnings"].as_array().unwrap().iter().filter(|w| !w["message"].as_str().unwrap().contains("carried verbatim")).map(|w| format!("{} {}", w["object"].as_str().unwrap(), w["field"].as_str().unwrap())).collect();
    for e in std::fs::read_dir(dir.path().join("profiles")).unwrap() {
        named.extend(std::fs::read_to_string(e.unwrap().path()).unwrap().lines().filter(|l| !l.contains("carried verbatim")).map(str::to_string));
    }
    let docs = |dir: &std::path::Path, fill: bool| -> Vec<Value> {
        let mut files: Vec<PathBuf> = walk(dir);
        files.sort();
        files.iter().filter(|p| p.extension().is_some_and(|e| e == "yaml")).flat_map(|p| {
            let mut t = std::fs::read_to_string(p).unwrap();
            if fill {
                for (k, v) in [("CLUSTER_NAME", "demo"), ("KARPENTER_NODE_IAM_ROLE_NAME", "KarpenterNodeRole-demo"), ("AZ", "us-east-1a")] {
                    t = t.replace(&format!("${{{k}}}"), v).replace(&format!("${k}"), v);
                }
            }
            serde_saphyr::from_multiple::<Value>(&t).unwrap()
        }).filter(|d| !d.is_null()).collect()
    };
    let originals = docs(&input, true);
    let out = docs(&dir.path().join("out"), false);
    let find = |set: &[Value], kind: &str, name: &Value| set.iter().find(|d| d["kind"] == kind && &d["metadata"]["name"] == name).cloned().unwrap_or(Value::Null);
    let mut lost = Vec::new();
    for np in originals.iter().filter(|d| d["kind"] == "NodePool") {
        let twin = find(&out, "NodePool", &np["metadata"]["name"]);
        let class_ref = &np["spec"]["template"]["spec"]["nodeClassRef"]["name"];
        let pairs = [(np.clone(), twin.clone()), (find(&originals, "EC2NodeClass", class_ref), find(&out, "EC2NodeClass", &twin["spec"]["template"]["spec"]["nodeClassRef"]["name"]))];
        for (original, compiled) in pairs.iter().filter(|(o, _)| !o.is_null()) {
            let mut fields = Vec::new();
            leaf_fields(original, &mut Vec::new(), &mut fields);
            for (path, value) in fields {
                let field = dotted(&path);
                // The names gpuplan gives classes (`<profile>[-nvme]`) are its own; the NodePool's names it.
                let renamed = field == "spec.template.spec.nodeClassRef.name" || (original["kind"] == "EC2NodeClass" && field == "metadata.name");
                let prefixes = (1..=path.len()).map(|n| dotted(&path[..n])).filter(|p| p.contains('.'));
                let object = format!("{}/{}", original["kind"].as_str().unwrap_or(""), original["metadata"]["name"].as_str().unwrap_or(""));
                let said = prefixes.into_iter().any(|p| named.iter().any(|line| line.contains(&object) && names(line, &p)));
                // A list item (a requirement, a volume) may be at another index: lists are compared as sets of items.
                let first_index = path.iter().position(|s| s.starts_with('['));
                let listed = first_index.is_some_and(|k| at(compiled, &path[..k]).as_array().is_some_and(|items| items.contains(at(original, &path[..=k]))));
                if at(compiled, &path) != &value && !listed && !renamed && !said {
                    lost.push(format!("{} {}/{} {field} = {value}", entry, original["kind"].as_str().unwrap_or(""), original["metadata"]["name"].as_str().unwrap_or("")));
                }
            }
        }
    }
    lost
}

/// Whether a provenance comment or warning names `field` as a whole (not a longer field it is a prefix of).
fn names(line: &str, field: &str) -> bool {
    line.match_indices(field).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + field.len()..].chars().next();
        matches!(before, Some(' ' | '"')) && !after.is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '[' | '/' | '-' | '_'))
    })
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).unwrap().flat_map(|e| {
        let p = e.unwrap().path();
        if p.is_dir() { walk(&p) } else { vec![p] }
    }).collect()
}

/// Issue 19 item 2, "never silently dropped": on the class entries, every original field is in the compiled output or
/// named (by the profile line that says it, or by a warning).
#[test]
fn no_field_of_a_class_entry_is_lost_between_the_original_and_the_compiled_output() {
    let lost: Vec<String> = CLASS_ENTRIES.iter().flat_map(|e| lost_fields(e)).collect();
    assert!(lost.is_empty(), "{} field(s) lost:\n{}", lost.len(), lost.join("\n"));
}

/// The Karpenter docs' NodeOverlay example (v1.14 concepts/nodeoverlays.md, "Example Conflict Resolution": overlay-a
/// -10% at weight 5, overlay-b -20% at weight 10, both on m5.large, no NodePool named) next to the provider's
/// general-purpose NodePool. Karpenter applies both to every compatible NodePool
/// (v1.14.1 pkg/controllers/nodeoverlay/controller.go `getOverlaidOfferings`) and ranks by the overlaid price
/// (pkg/cloudprovider/types.go `OrderByPrice`, `AdjustedPrice`): m5.large at $0.096 × 0.8 = $0.0768 beats m5a.large at
/// $0.086. Adopted, each becomes an `overlay` block of the pool, and a pod that may take either type lands on m5.large
/// on both sides (without the overlays the adopted side would launch m5a.large).
#[test]
fn a_published_price_overlay_adopts_into_overlay_blocks_and_its_discounted_type_still_launches() {
    let dir = tempfile::tempdir().unwrap();
    let pod = dir.path().join("m5-or-m5a.yaml");
    std::fs::write(&pod, "apiVersion: v1\nkind: Pod\nmetadata: {name: m5-or-m5a, namespace: default}\nspec:\n  nodeSelector: {karpenter.k8s.aws/instance-size: large}\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions:\n          - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, m5a]}\n  containers:\n  - {name: c, image: x, resources: {requests: {cpu: \"1\"}}}\n").unwrap();
    let catalogs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let input = corpus("provider-docs-node-overlay");
    let mut args = vec!["adopt", input.to_str().unwrap(), "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--format", "json", "--accept-changes", "--verify", pod.to_str().unwrap()];
    args.extend(SET);
    let out = Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).env("NO_COLOR", "1").args(&args).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &report["verification"]["placements"][0];
    assert_eq!((p["before"]["instance_type"].as_str(), p["after"]["instance_type"].as_str(), p["change"].as_str()), (Some("m5.large"), Some("m5.large"), Some("same")), "{p:#}");
    assert_eq!(p["after"]["usd_per_hour"], 0.0768, "{p:#}");
    let profile = std::fs::read_to_string(dir.path().join("profiles/default.kdl")).unwrap();
    assert!(profile.contains("overlay \"overlay-b\" {") && profile.contains("price-adjustment \"-20%\"") && profile.contains("capacity \"custom-device/gpu\" \"1\""), "{profile}");
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
    // --optimize: gpuplan's own selection (fewer, cheaper types), under which the backstop falls below 100.
    let mut args = vec!["adopt", input.to_str().unwrap(), "--into", "first", "--catalogs", catalogs.to_str().unwrap(), "--accept-changes", "--optimize"];
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

/// The provider's general-purpose EC2NodeClass sets no `blockDeviceMappings`, so Karpenter gives its nodes the AMI
/// family's default root volume (AL2023: 20Gi; aws/karpenter-provider-aws v1.14.1 `pkg/providers/amifamily`
/// `DefaultBlockDeviceMappings`). gpuplan's class template writes a 200Gi volume; adopted, the class's `raw` block
/// carries `blockDeviceMappings: null`, so a pod asking for 30Gi of ephemeral storage pends on both sides (with
/// the 200Gi volume it would have scheduled after adopting: a placement change and a bigger EBS bill).
#[test]
fn a_class_without_volumes_keeps_karpenters_default_disk_after_adopting() {
    let dir = tempfile::tempdir().unwrap();
    let pod = dir.path().join("scratch.yaml");
    std::fs::write(&pod, "apiVersion: v1\nkind: Pod\nmetadata: {name: scratch, namespace: default}\nspec:\n  containers:\n  - {name: c, image: x, resources: {requests: {cpu: \"1\", ephemeral-storage: 30Gi}}}\n").unwrap();
    let (out, report) = adopt_with("provider-general-purpose", None, &["--verify", pod.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let p = &report["verification"]["placements"][0];
    assert_eq!(p["change"], "same", "{p:#}");
    assert!(p["pending_before"].is_string() && p["pending_after"].is_string(), "pends on both sides: {p:#}");
    assert!(text(&out).contains("spec.blockDeviceMappings: not in the original (Karpenter's default applies)"), "{}", text(&out));
}

/// The time-slicing blueprint with a price added to its 1-GPU overlay (`priceAdjustment: "-10%"`): the overlay keeps
/// its price as an `overlay` block, its GPU capacity is left to the pool's `time-slicing` (and the block's comment says
/// so), and since `gpu-slices-1gpu` is the name gpuplan gives its own sharing overlay for NodePool `gpu-slices`, the
/// block is renamed `gpu-slices-1gpu-adopted`: before, compile refused the adopted profile (E0295).
#[test]
fn a_priced_time_slicing_overlay_adopts_under_a_name_that_does_not_shadow_gpuplans_own() {
    let dir = tempfile::tempdir().unwrap();
    let entry = dir.path().join("priced");
    std::fs::create_dir(&entry).unwrap();
    for file in std::fs::read_dir(corpus("blueprints-node-overlay")).unwrap() {
        let path = file.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.replacen("  name: gpu-slices-1gpu\nspec:\n  weight: 10\n", "  name: gpu-slices-1gpu\nspec:\n  weight: 10\n  priceAdjustment: \"-10%\"\n", 1);
        std::fs::write(entry.join(path.file_name().unwrap()), text).unwrap();
    }
    let catalogs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let pods = corpus("blueprints-node-overlay-pods");
    // `--accept-changes`: the report is pinned here, not the exit code; no placement may change.
    let mut args = vec!["adopt", entry.to_str().unwrap(), "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--format", "json", "--verify", pods.to_str().unwrap(), "--accept-changes"];
    args.extend(SET);
    let out = Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).env("NO_COLOR", "1").args(&args).output().unwrap();
    assert!(out.status.success(), "adopts, compiles and verifies: {}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = &report["verification"];
    assert_eq!((v["changed"].as_u64(), v["unexplained"].as_u64()), (Some(0), v["fields_unexplained"].as_u64()), "{v:#}");
    let profile = std::fs::read_to_string(dir.path().join("profiles/gpu-bottlerocket.kdl")).unwrap();
    assert!(profile.contains("overlay \"gpu-slices-1gpu-adopted\" {") && profile.contains("price-adjustment \"-10%\""), "{profile}");
    assert!(profile.contains("(its capacity nvidia.com/gpu=4 is the pool's time-slicing/mig now: check they agree)"), "{profile}");
}

/// The fields a provenance comment of an adopted profile names (`<file> <Kind>/<name> spec.…`), each with the object it
/// names: the first `Kind/name` of the comment (or of its `;`-separated part). Skipped: parts that say the field is
/// absent (`absent from …`, `no spec.x`, `spec.x: absent`), which name a field to say the original lacks it.
fn provenance_fields(comment: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for part in comment.split("; ").filter(|p| !p.starts_with("absent from")) {
        let tokens: Vec<&str> = part.split_whitespace().collect();
        let trim = |t: &str| t.trim_end_matches([',', ':', ';', ')']).trim_start_matches('(').to_string();
        let object = tokens.iter().map(|t| trim(t)).find(|t| t.split_once('/').is_some_and(|(kind, name)| kind.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && kind.chars().all(|c| c.is_ascii_alphanumeric()) && !name.is_empty()));
        let Some(object) = object else { continue };
        for (i, token) in tokens.iter().enumerate() {
            let field = trim(token);
            let negated = i > 0 && matches!(tokens[i - 1], "no" | "(no");
            let said_absent = token.ends_with(':') && tokens.get(i + 1).is_some_and(|n| n.starts_with("absent"));
            if (field.starts_with("spec.") || field.starts_with("metadata.")) && !negated && !said_absent {
                out.push((object.clone(), field));
            }
        }
    }
    out
}

/// Whether `path` (dotted, with `[i]` indexes; keys may hold dots, as `nvidia.com/gpu` does) is a field of `value`.
fn has_field(value: &Value, path: &str) -> bool {
    if path.is_empty() {
        return true;
    }
    if let Some(rest) = path.strip_prefix('[') {
        let (index, rest) = rest.split_once(']').unwrap_or((rest, ""));
        return index.parse::<usize>().ok().and_then(|i| value.as_array()?.get(i)).is_some_and(|v| has_field(v, rest.strip_prefix('.').unwrap_or(rest)));
    }
    value.as_object().into_iter().flatten().any(|(k, v)| {
        path.strip_prefix(k.as_str()).is_some_and(|rest| match rest.chars().next() {
            None => true,
            Some('.') => has_field(v, &rest[1..]),
            Some('[') => has_field(v, rest),
            _ => false,
        })
    })
}

/// The reviewer's defect: the adopted `ami` line of provider-custom-family (a class with AMI ids, no alias) named
/// `spec.amiSelectorTerms[0].alias`, and a class without a role had its default `node-role` attributed to `spec.role`.
/// On every corpus entry (and the instance-profile fixture), each field a provenance comment names is a field of the
/// original object it names; a default says it is one ("absent from …: gpuplan's default").
#[test]
fn no_provenance_comment_names_a_field_its_original_lacks() {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut entries: Vec<(PathBuf, Vec<&str>)> = ADOPTED.iter().map(|(e, _, _)| *e).chain(CLASS_ENTRIES).map(|e| (corpus(e), vec![])).collect();
    entries.push((corpus("blueprints-reserved-capacity"), vec!["--reservation", "odcr-priority=2"]));
    entries.push((fixtures.join("adopt-instance-profile"), vec![]));
    entries.push((fixtures.join("adopt-classes"), vec![]));
    entries.dedup();
    let catalogs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (input, extra) in &entries {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["adopt", input.to_str().unwrap(), "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--accept-changes"];
        args.extend(SET);
        args.extend(extra);
        let out = Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).env("NO_COLOR", "1").args(&args).output().unwrap();
        assert!(out.status.success(), "{}: {}", input.display(), text(&out));
        let originals: Vec<Value> = walk(input).iter().filter(|p| p.extension().is_some_and(|e| e == "yaml")).flat_map(|p| serde_saphyr::from_multiple::<Value>(&std::fs::read_to_string(p).unwrap()).unwrap()).filter(|d| !d.is_null()).collect();
        for file in walk(&dir.path().join("profiles")) {
            let profile = std::fs::read_to_string(&file).unwrap();
            for comment in profile.lines().filter_map(|l| l.split_once("// ").map(|(_, c)| c)) {
                for (object, field) in provenance_fields(comment) {
                    let (kind, name) = object.split_once('/').unwrap();
                    let original = originals.iter().find(|d| d["kind"] == kind && d["metadata"]["name"].as_str().is_some_and(|n| n.replace("${CLUSTER_NAME}", "demo") == name));
                    checked += 1;
                    if !original.is_some_and(|o| has_field(o, &field)) {
                        wrong.push(format!("{}: `{object} {field}` in: {comment}", input.display()));
                    }
                }
            }
        }
    }
    assert!(checked > 200, "{checked} fields checked: the comments were not read");
    assert!(wrong.is_empty(), "{} comment(s) name a field the original lacks:\n{}", wrong.len(), wrong.join("\n"));
}
