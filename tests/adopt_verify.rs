//! `gpuplan adopt`'s verification (issue 19 item 1): the same pods simulated on the original manifests and on the
//! compiled adopted profiles, every placement change reported with the known change that explains it, exit 1 unless
//! `--accept-changes`. The simulator is gpuplan's `simulate` (proven against kubernetes-sigs/karpenter's scheduler,
//! see tests/conformance); Karpenter semantics the probes rely on: a pod tolerating a NodePool's taints and selecting
//! its template labels may schedule on it (kubernetes-sigs/karpenter pkg/scheduling/taints.go `ToleratesPod`,
//! pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{repo, text};

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures/adopt-verify").join(name)
}

/// `gpuplan adopt INPUT EXTRA…` in a fresh directory: the directory and the output.
fn run(input: &Path, extra: &[&str]) -> (tempfile::TempDir, Output) {
    let dir = tempfile::tempdir().unwrap();
    let catalogs = repo().join("catalogs");
    let mut args = vec!["adopt", input.to_str().unwrap(), "--into", "profiles", "--catalogs", catalogs.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).env("NO_COLOR", "1").args(&args).output().unwrap();
    (dir, out)
}

/// [`run`] with `--format json`, and the report parsed.
fn adopt(input: &Path, extra: &[&str]) -> (tempfile::TempDir, Output, Value) {
    let (dir, out) = run(input, &[&["--format", "json"], extra].concat());
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (dir, out, report)
}

fn placements(report: &Value) -> &Vec<Value> {
    report["verification"]["placements"].as_array().unwrap_or_else(|| panic!("no verification in {report}"))
}

#[test]
fn the_examples_out_verifies_with_zero_changes_probes_for_every_nodepool_and_family() {
    let (_dir, out, report) = adopt(&repo().join("out"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let v = &report["verification"];
    assert_eq!(v["changed"], 0, "{v:#}");
    assert!(v["pods"].as_str().unwrap().starts_with("probe pods: per original NodePool"), "{v:#}");
    // A probe per NodePool of out/ and per family it admits, each scheduled on both sides (a probe that pends on both
    // would prove nothing).
    let nodepools = report["pools"].as_array().unwrap().len();
    let probes: std::collections::BTreeSet<&str> = placements(&report).iter().map(|p| p["pod"].as_str().unwrap()).collect();
    assert!(probes.len() > nodepools, "{probes:?}");
    let pools: Vec<&str> = report["pools"].as_array().unwrap().iter().map(|p| p["node_pool"].as_str().unwrap()).collect();
    for p in placements(&report) {
        assert_eq!(p["change"], "same", "{p:#}");
        // The probe of each NodePool schedules; one pinned to a family may pend on both sides: a spot pool's
        // `minValues: 2` on instance-family is what Karpenter refuses a one-family pod (and so it shows here).
        let base = pools.iter().any(|np| p["pod"] == format!("gpuplan-verify/probe-{np}"));
        assert!(!base || p["before"].is_object(), "{p:#}");
        assert!(p["before"].is_object() || p["pending_before"].as_str().unwrap().contains("minValues"), "{p:#}");
    }
}

#[test]
fn a_narrowed_pool_that_moves_a_pod_exits_1_and_names_the_constraint() {
    let pods = fixture("big-trainer.yaml");
    let (_dir, out, report) = adopt(&fixture("any-nvidia.yaml"), &["--optimize", "--verify", pods.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let changed: Vec<&Value> = placements(&report).iter().filter(|p| p["change"] != "same").collect();
    assert_eq!(changed.len(), 1, "{changed:#?}");
    let reasons: Vec<&str> = changed[0]["reasons"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    // The type the pod used was removed by the price ratio (solve's recorded constraint), named with the narrowing.
    let used = changed[0]["before"]["instance_type"].as_str().unwrap();
    assert!(reasons.iter().any(|r| r.starts_with("gpuplan narrowed NodePool gpu to ") && r.contains(&format!("removed {used}")) && r.contains("[price-ratio-max]")), "{reasons:#?}");
    assert_eq!(report["verification"]["unexplained"], 0);
    // Profiles and report are written all the same: the exit code only asks for a review.
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrote profiles/gpu.kdl"), "{}", text(&out));
}

/// A spot GPU pool over two families, its taint with a value. The field verification (issue 31) compares every
/// behaviour field at Karpenter's defaults: adopted faithfully, each difference is named (gpuplan's pool label, the
/// weight its line says it wrote, `kubernetes.io/os In [linux]`), the taint keeps its value, and adopt exits 0.
const SPOT_POOL: &str = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: gpu}\nspec:\n  amiSelectorTerms: [{alias: al2023@latest}]\n  role: KarpenterNodeRole-demo\n  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]\n  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]\n---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  limits: {nvidia.com/gpu: \"8\"}\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}\n      taints: [{key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}]\n      requirements:\n      - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}\n      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6]}\n";

fn spot_pool() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("spot.yaml");
    std::fs::write(&input, SPOT_POOL).unwrap();
    (dir, input)
}

#[test]
fn a_faithful_adoption_names_every_field_it_changes_and_exits_0() {
    let (_input_dir, input) = spot_pool();
    let (_dir, out, report) = adopt(&input, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let v = &report["verification"];
    assert_eq!((v["fields_unexplained"].as_u64(), v["unexplained"].as_u64()), (Some(0), Some(0)), "{v:#}");
    let fields: Vec<&str> = v["fields"].as_array().unwrap().iter().map(|f| f["field"].as_str().unwrap()).collect();
    assert!(fields.contains(&"spec.weight") && fields.contains(&"spec.template.metadata.labels.gpuplan.dev/pool"), "{fields:?}");
    assert!(!fields.iter().any(|f| f.contains("taints")), "the taint keeps its value: {fields:?}");
}

/// `--optimize` adds `minValues: 2` on a spot pool's instance families (a pod pinned to one family then pends): the
/// field verification sees the change and the adoption names it (the `--optimize` warning on the requirements), so it
/// is reported as a change, not as unexplained. (An unnamed field change counts as unexplained and exits 1: the
/// `fields` unit tests and `unexplained`'s exit code, shared with placements, cover that path.)
#[test]
fn optimize_names_the_min_values_it_adds() {
    let (_input_dir, input) = spot_pool();
    let (_dir, out, report) = adopt(&input, &["--optimize", "--accept-changes"]);
    assert!(out.status.success(), "{}", text(&out));
    let v = &report["verification"];
    let min_values = v["fields"].as_array().unwrap().iter().find(|f| f["field"] == "spec.template.spec.requirements[karpenter.k8s.aws/instance-family].minValues").unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!((min_values["before"].as_str(), min_values["after"].as_str()), (Some("absent"), Some("2")));
    assert!(min_values["reason"].as_str().is_some_and(|r| r.contains("--optimize: gpuplan's selection")), "{min_values:#}");
    assert_eq!(v["fields_unexplained"], 0, "{v:#}");
}

/// Issue 31: adopt keeps behaviour by default. The pool `--optimize` narrows (and the trainer then pends) is adopted
/// with `admit "as-required"`: the same types, the same placement, exit 0.
#[test]
fn by_default_the_adopted_pool_admits_what_the_original_admits_and_the_pod_keeps_its_place() {
    let pods = fixture("big-trainer.yaml");
    let (dir, out, report) = adopt(&fixture("any-nvidia.yaml"), &["--verify", pods.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(report["verification"]["changed"], 0, "{:#}", report["verification"]);
    let profile = std::fs::read_to_string(dir.path().join("profiles/gpu.kdl")).unwrap();
    assert!(profile.contains("admit \"as-required\""), "{profile}");
}

#[test]
fn accept_changes_reports_the_same_changes_and_exits_0() {
    let pods = fixture("big-trainer.yaml");
    let (_dir, out, report) = adopt(&fixture("any-nvidia.yaml"), &["--optimize", "--verify", pods.to_str().unwrap(), "--accept-changes"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(report["verification"]["changed"], 1);
    assert_eq!(report["verification"]["accepted"], true);
}

#[test]
fn verify_simulates_the_given_pods_instead_of_probes() {
    let pods = fixture("big-trainer.yaml");
    let (_dir, _out, report) = adopt(&fixture("any-nvidia.yaml"), &["--verify", pods.to_str().unwrap(), "--accept-changes"]);
    let keys: Vec<&str> = placements(&report).iter().map(|p| p["pod"].as_str().unwrap()).collect();
    assert_eq!(keys, ["ml/big-0"]);
    assert_eq!(report["verification"]["pods"], pods.to_str().unwrap());
}

#[test]
fn a_pod_that_pends_after_adoption_is_reported_with_the_simulators_reason() {
    let pods = fixture("big-trainer.yaml");
    let (_dir, out, report) = adopt(&fixture("any-nvidia.yaml"), &["--optimize", "--verify", pods.to_str().unwrap(), "--accept-changes"]);
    let p = &placements(&report)[0];
    assert_eq!(p["change"], "pends", "{p:#}");
    assert!(p["before"]["nodepool"] == "gpu" && p["after"].is_null(), "{p:#}");
    assert!(p["pending_after"].as_str().unwrap().contains("no instance type has enough resources"), "{p:#}");
    // The human form says it too, with the verdict.
    let (_dir, table) = run(&fixture("any-nvidia.yaml"), &["--optimize", "--verify", pods.to_str().unwrap()]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("≠ demo ml/big-0: gpu/") && table.contains(" → pending (NodePool gpu: no instance type has enough resources"), "{table}");
    assert!(table.contains("1 placement change(s): review them, then run again with --accept-changes (exit 1)"), "{table}\n{}", text(&out));
}

#[test]
fn a_bad_pod_file_stops_adopt_with_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("pods.yaml");
    std::fs::write(&bad, "kind: Pod\nmetadata: [\n").unwrap();
    let (adopted, out, _) = adopt(&fixture("any-nvidia.yaml"), &["--verify", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pods.yaml"), "{}", text(&out));
    assert!(!adopted.path().join("profiles").exists());
}

fn catalog() -> gpuplan::catalog::Catalog {
    gpuplan::catalog::Catalog::load(&std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("catalogs"), "us-east-1").unwrap()
}

fn pool_doc(object: Value) -> gpuplan::adopt::read::Doc {
    gpuplan::adopt::read::Doc { file: "f.yaml".into(), kind: "NodePool".into(), name: "p".into(), object, hand_edited: false }
}

/// The first probe's requests, and every probe's name.
fn probes_of(object: Value) -> (Vec<gpuplan::simulate::pods::Pod>, Vec<String>) {
    let runs = gpuplan::adopt::verify::probes(&pool_doc(object), &catalog()).unwrap();
    let names = runs.iter().flatten().map(|p| p.key.clone()).collect();
    (runs.into_iter().flatten().collect(), names)
}

#[test]
fn probes_request_the_pools_accelerator_tolerate_its_taints_and_select_its_labels() {
    let (probes, _) = probes_of(serde_json::json!({"spec": {
        "limits": {"aws.amazon.com/neuron": "8"},
        "template": {"metadata": {"labels": {"team": "ml"}}, "spec": {"taints": [{"key": "aws.amazon.com/neuron", "effect": "NoSchedule"}, {"key": "team", "value": "ml", "effect": "NoExecute"}]}}
    }}));
    let probe = &probes[0];
    assert_eq!(probe.key, "gpuplan-verify/probe-p");
    assert_eq!(probe.requests.get("aws.amazon.com/neuron"), Some(&1000));
    let tolerated: Vec<(&str, &str, &str)> = probe.tolerations.iter().map(|t| (t.key.as_str(), t.operator.as_str(), t.effect.as_str())).collect();
    assert_eq!(tolerated, [("aws.amazon.com/neuron", "Exists", "NoSchedule"), ("team", "Equal", "NoExecute")]);
    assert!(probe.node_selector.get("team").is_some(), "{:?}", probe.node_selector);
    // No limit, no taint: the requirements say which accelerator (instance-gpu-* → NVIDIA); none → a CPU.
    let (gpu, _) = probes_of(serde_json::json!({"spec": {"template": {"spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Exists"}]}}}}));
    assert_eq!(gpu[0].requests.get("nvidia.com/gpu"), Some(&1000));
    let (cpu, _) = probes_of(serde_json::json!({"spec": {"template": {"spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m"]}]}}}}));
    assert!(cpu[0].requests.get("cpu") == Some(&1000) && !cpu[0].requests.contains_key("nvidia.com/gpu"), "{:?}", cpu[0].requests);
}

/// Issue 31, item 1: a Neuron pool is recognised by every signal it may carry, not only an `aws.amazon.com/neuron`
/// limit: its families or types (the catalog says they have Neuron devices), its taint, a `neuroncore` limit, Auto
/// Mode's accelerator labels. Each is the minimal pool of its kind.
#[test]
fn a_neuron_pool_is_recognised_by_family_type_taint_core_limit_or_auto_mode_label() {
    let requirement = |key: &str, values: &[&str]| serde_json::json!({"spec": {"template": {"spec": {"requirements": [{"key": key, "operator": "In", "values": values}]}}}});
    let kinds = [
        ("family", requirement("karpenter.k8s.aws/instance-family", &["inf2", "trn1"])),
        ("category", requirement("karpenter.k8s.aws/instance-category", &["inf", "trn"])),
        ("type", requirement("node.kubernetes.io/instance-type", &["trn1.32xlarge"])),
        ("auto mode", requirement("eks.amazonaws.com/instance-family", &["inf2"])),
        ("taint", serde_json::json!({"spec": {"template": {"spec": {"taints": [{"key": "aws.amazon.com/neuron", "value": "true", "effect": "NoSchedule"}]}}}})),
        ("core limit", serde_json::json!({"spec": {"limits": {"aws.amazon.com/neuroncore": "64"}, "template": {"spec": {}}}})),
    ];
    for (what, object) in kinds {
        let (probes, _) = probes_of(object.clone());
        assert_eq!(probes[0].requests.get("aws.amazon.com/neuron"), Some(&1000), "{what}: {:?}", probes[0].requests);
        assert_eq!(gpuplan::adopt::nodepool::kind(&object, &catalog()), gpuplan::catalog::AcceleratorKind::Neuron, "{what}");
    }
}

/// Issue 31, items 2 and 3: a taint with a value is tolerated by value (a pod tolerating `nvidia.com/gpu=true` with
/// `operator: Equal` is what the original admits); a pool admitting CPU and GPU types is a CPU pool whose probes
/// include one per accelerator kind it admits; a pool admitting several families gets a probe pinned to each.
#[test]
fn probes_tolerate_by_value_cover_a_mixed_pools_gpus_and_pin_each_family() {
    let (probes, names) = probes_of(serde_json::json!({"spec": {"template": {"spec": {
        "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
        "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5", "g6"]}]
    }}}}));
    assert_eq!((probes[0].tolerations[0].operator.as_str(), probes[0].tolerations[0].value.as_str()), ("Equal", "true"));
    assert_eq!(names, ["gpuplan-verify/probe-p", "gpuplan-verify/probe-p-g5", "gpuplan-verify/probe-p-g6"]);
    let pinned = probes[1].node_selector.get("karpenter.k8s.aws/instance-family");
    assert!(format!("{pinned:?}").contains("\"g5\""), "{pinned:?}");
    let (mixed, names) = probes_of(serde_json::json!({"spec": {"template": {"spec": {
        "requirements": [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "g"]}]
    }}}}));
    assert!(mixed[0].requests.contains_key("cpu"), "{:?}", mixed[0].requests);
    assert!(mixed[1].requests.contains_key("nvidia.com/gpu") && names[1] == "gpuplan-verify/probe-p-nvidia-com", "{names:?}");
}

#[test]
fn placeholders_are_reported_once_each_where_they_first_are_and_nothing_is_written() {
    let (dir, out) = run(&fixture("placeholders.yaml"), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let file = fixture("placeholders.yaml").display().to_string();
    // Each name once, at its first place as written; userData's shell variables ($HOME, ${PATH}) are the script's.
    assert!(stderr.contains("2 placeholder(s) without a value: fill each with --set NAME=value (nothing was written)"), "{stderr}");
    assert!(stderr.contains(&format!("  {file}:31:28: ${{CLUSTER_NAME}} (and 2 more places)\n")), "{stderr}");
    assert!(stderr.contains(&format!("  {file}:41:11: <<TEAM>>")), "{stderr}");
    assert!(!stderr.contains("HOME") && !stderr.contains("PATH"), "{stderr}");
    assert!(!dir.path().join("profiles").exists());
}

#[test]
fn set_fills_placeholders_before_adopting() {
    let (dir, out) = run(&fixture("placeholders.yaml"), &["--set", "CLUSTER_NAME=ml-prod", "--set", "TEAM=ml"]);
    assert!(out.status.success(), "{}", text(&out));
    let profile = std::fs::read_to_string(dir.path().join("profiles/gpu.kdl")).unwrap();
    assert!(profile.contains("cluster \"ml-prod\" {") && profile.contains("discovery-tag \"ml-prod\"") && profile.contains("node-role \"KarpenterNodeRole-ml-prod\""), "{profile}");
    // The script's own variables are left as they were.
    assert!(profile.contains("$HOME ${PATH}"), "{profile}");
    let (_dir, bad) = run(&fixture("placeholders.yaml"), &["--set", "cluster name"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--set `cluster name` is not NAME=value"), "{}", text(&bad));
}

#[test]
fn the_missing_ami_warning_names_the_nodepool_file_when_no_node_class_is_given() {
    let (_dir, out) = run(&fixture("no-node-class.yaml"), &["--accept-changes"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let file = fixture("no-node-class.yaml").display().to_string();
    assert!(stderr.contains(&format!("warning: {file}: NodePool/gpu spec.amiSelectorTerms: no AMI alias: profile `default` says `al2023@latest`; pin a version")), "{stderr}");
    assert!(!stderr.contains("warning: : "), "{stderr}");
}

/// A reservation selected by id: the EC2NodeClass gives the id, the NodePool's single instance type the type, and its
/// limit ÷ the type's GPUs the instance count (karpenter-provider-aws pkg/apis/v1/ec2nodeclass.go
/// `CapacityReservationSelectorTerm`: id or tags; the reservation's size is not in the manifests).
#[test]
fn a_reservation_selected_by_id_adopts_with_type_and_count_from_the_nodepool_compiles_and_verifies() {
    let (dir, out, report) = adopt(&fixture("reserved-by-id.yaml"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    // A NodePool of capacity type reserved alone is the reservation alone (no on-demand fallback tier).
    let p = &placements(&report)[0];
    assert!(p["change"] == "same" && p["before"]["capacity_type"] == "reserved", "{p:#}");
    let profile = std::fs::read_to_string(dir.path().join("profiles/training.kdl")).unwrap_or_else(|e| panic!("{e}\n{}", text(&out)));
    assert!(profile.contains("id \"cr-0123456789abcdef0\""), "{profile}");
    assert!(profile.contains("instance-type \"p5.48xlarge\" // requirements node.kubernetes.io/instance-type"), "{profile}");
    assert!(profile.contains("instances 2 // spec.limits.nvidia.com/gpu ÷ 8 per p5.48xlarge"), "{profile}");
    assert!(profile.contains("capacity \"reserved\" //"), "{profile}");
}

#[test]
fn a_reservation_whose_size_the_inputs_do_not_say_stops_adopt_naming_the_field_to_add() {
    let (dir, out) = run(&fixture("reserved-by-id-no-limit.yaml"), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the inputs do not say what the profiles need (nothing was written)"), "{stderr}");
    assert!(stderr.contains("NodePool/training: a reserved pool needs what its capacity reservation holds, and the catalog knows no reservations: pass --reservation training=INSTANCES (how many p5.48xlarge it holds), or add spec.limits.nvidia.com/gpu = 8 × those instances (p5.48xlarge has 8 nvidia.com/gpu), then adopt again"), "{stderr}");
    assert!(!dir.path().join("profiles").exists());
    // Given as it asks, the reservation adopts with that size (and its provenance says where it came from).
    let (dir, out) = run(&fixture("reserved-by-id-no-limit.yaml"), &["--reservation", "training=3", "--accept-changes"]);
    assert!(out.status.success(), "{}", text(&out));
    let profile = std::fs::read_dir(dir.path().join("profiles")).unwrap().map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap()).collect::<String>();
    assert!(profile.contains("instances 3 // --reservation training=3"), "{profile}");
}

/// kubernetes-sigs/karpenter pkg/utils/nodepool/nodepool.go `OrderByWeight`: weight descending (absent = 0), ties by
/// name descending. gpuplan needs distinct weights (E0153): adopt keeps the distinct ones, resolves the rest in that
/// order, and the verification proves the order held.
#[test]
fn distinct_weights_are_kept_and_only_collisions_and_absent_ones_are_resolved_in_karpenters_order() {
    let (dir, out, report) = adopt(&fixture("weights.yaml"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(report["verification"]["changed"], 0, "{:#}", report["verification"]);
    let profile = std::fs::read_to_string(dir.path().join("profiles/gpu.kdl")).unwrap();
    let weight = |pool: &str| {
        let block = &profile[profile.find(&format!("pool \"{pool}\"")).unwrap_or_else(|| panic!("{pool}:\n{profile}"))..];
        block.lines().find(|l| l.trim_start().starts_with("weight ")).unwrap().trim().to_string()
    };
    assert!(weight("gpu-reserved-like").starts_with("weight 90 // "), "{profile}");
    // gpu-spot and gpu-on-demand share 50: gpu-spot is first by name (descending), keeps it; gpu-on-demand gets 49.
    assert!(weight("gpu-spot").starts_with("weight 50 // "), "{profile}");
    assert!(weight("gpu-on-demand").ends_with("NodePool/gpu-on-demand spec.weight 50, shared with NodePool/gpu-spot (Karpenter breaks the tie by name, descending): made distinct in that order"), "{profile}");
    assert!(weight("gpu-on-demand").starts_with("weight 49 // "), "{profile}");
    assert!(weight("gpu-fallback").starts_with("weight 48 // ") && weight("gpu-fallback").contains("no spec.weight (Karpenter reads 0"), "{profile}");
}
