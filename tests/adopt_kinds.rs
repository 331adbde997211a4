//! `gpuplan adopt` keeps behaviour by default (issue 31): one minimal input per kind of NodePool that adopt used to
//! change without a word. Each asserts what the adopted profile says, that it compiles, and that the verification
//! (the same probe pods on the original and on the compiled output, `gpuplan simulate`) finds no unexplained change.
//! Karpenter semantics: a NodePool admits every instance type its requirements admit (kubernetes-sigs/karpenter
//! pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go); a toleration with `operator: Equal` matches a taint's
//! value only (k8s.io/api core/v1 `Toleration.ToleratesTaint`); defaults of the NodePool CRD
//! (karpenter.sh_nodepools.yaml v1.14.1).

use std::path::Path;
use std::process::Output;

mod common;
use common::{gpuplan, repo, text};

use serde_json::Value;

/// An EC2NodeClass named `name`, optionally striping local NVMe.
fn class(name: &str, raid0: bool) -> String {
    let raid0 = if raid0 { "  instanceStorePolicy: RAID0\n" } else { "" };
    format!(
        "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: {name}\nspec:\n  role: KarpenterNodeRole-demo\n  amiSelectorTerms:\n    - alias: al2023@v20251001\n  subnetSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: demo\n  securityGroupSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: demo\n{raid0}"
    )
}

/// A NodePool `name` on class `class` with the given `spec.template.spec` lines (requirements, taints, indented by
/// six) and `spec` lines after the template (limits, indented by two).
fn pool(name: &str, class: &str, template: &str, spec: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {name}\nspec:\n  template:\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: {class}}}\n{template}{spec}"
    )
}

/// `docs` as `input.yaml` in a fresh directory; `gpuplan adopt input.yaml --into profiles --format json <extra>`.
fn adopt(docs: &[&str], extra: &[&str]) -> (tempfile::TempDir, Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("input.yaml"), docs.join("---\n")).unwrap();
    let catalogs = repo().join("catalogs");
    let mut args = vec!["adopt", "input.yaml", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let out = gpuplan(dir.path(), &args);
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (dir, out, report)
}

/// Adopt succeeded with every placement as before; the text of the profile `name`.
fn kept(dir: &Path, out: &Output, report: &Value, name: &str) -> String {
    assert!(out.status.success(), "{}", text(out));
    let v = &report["verification"];
    assert_eq!((v["changed"].as_u64(), v["unexplained"].as_u64()), (Some(0), Some(0)), "{v:#}");
    // The NodePool's own probe lands on both sides (pending on both would prove nothing).
    assert!(v["placements"][0]["before"].is_object() && v["placements"][0]["after"].is_object(), "{v:#}");
    std::fs::read_to_string(dir.join("profiles").join(format!("{name}.kdl"))).unwrap()
}

fn has_line(profile: &str, line: &str) -> bool {
    profile.lines().any(|l| l.trim_start().starts_with(line))
}

/// Item 1: a pool that selects Neuron families, carries the Neuron taint with a value and is bounded by cpu alone is
/// a `neuron` pool (before: a `gpu` pool, E0140, "report a gpuplan bug"); its limit is what the cpu limit allows.
#[test]
fn a_neuron_pool_by_family_and_taint_adopts_as_neuron_and_compiles() {
    let template = "      requirements:\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [inf2, trn1]}\n      taints:\n        - {key: aws.amazon.com/neuron, value: \"true\", effect: NoSchedule}\n";
    let (dir, out, report) = adopt(&[&class("neuron", false), &pool("neuron", "neuron", template, "  limits:\n    cpu: 1k\n")], &[]);
    let profile = kept(dir.path(), &out, &report, "neuron");
    assert!(has_line(&profile, "neuron {") || has_line(&profile, "neuron //"), "{profile}");
    assert!(has_line(&profile, "taint \"aws.amazon.com/neuron\" value=\"true\" effect=\"NoSchedule\""), "{profile}");
    assert!(has_line(&profile, "accelerator-taint #false"), "{profile}");
    assert!(text(&out).contains("the most that cpu limit lets Karpenter launch"), "{}", text(&out));
}

/// Item 2: `nvidia.com/gpu=true:NoSchedule` keeps its value (a pod tolerating it by value keeps scheduling: the probe
/// tolerates with `operator: Equal`).
#[test]
fn a_taint_value_is_kept() {
    let template = "      requirements:\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6]}\n      taints:\n        - {key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}\n";
    let (dir, out, report) = adopt(&[&class("gpu", false), &pool("gpu", "gpu", template, "  limits:\n    nvidia.com/gpu: 16\n")], &[]);
    let profile = kept(dir.path(), &out, &report, "gpu");
    assert!(has_line(&profile, "taint \"nvidia.com/gpu\" value=\"true\" effect=\"NoSchedule\""), "{profile}");
}

/// Items 3 and 4: a pool admitting CPU and GPU types keeps both (a CPU pod stays on a c type, a GPU pod on a g type),
/// and price-ratio narrowing is not applied: no type is removed.
#[test]
fn a_mixed_cpu_and_gpu_pool_keeps_both_kinds_of_types() {
    let template = "      requirements:\n        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, g]}\n        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}\n";
    let (dir, out, report) = adopt(&[&class("mixed", false), &pool("mixed", "mixed", template, "  limits:\n    cpu: 1000\n")], &[]);
    let profile = kept(dir.path(), &out, &report, "mixed");
    assert!(has_line(&profile, "admit \"as-required\""), "{profile}");
    let pool = &report["pools"][0];
    assert_eq!(pool["types_removed"], serde_json::json!([]), "{pool:#}");
    let probes: Vec<&str> = report["verification"]["placements"].as_array().unwrap().iter().map(|p| p["pod"].as_str().unwrap()).collect();
    let gpu = report["verification"]["placements"].as_array().unwrap().iter().find(|p| p["pod"] == "gpuplan-verify/probe-mixed-nvidia-com").unwrap_or_else(|| panic!("{probes:?}"));
    assert!(gpu["before"]["instance_type"].as_str().is_some_and(|t| t.starts_with('g')) && gpu["before"] == gpu["after"], "{gpu:#}");
}

/// Item 3: no `minValues` is added (a pod pinned to one family of a spot pool still schedules), no
/// terminationGracePeriod is written where the original has none, and a class that stripes NVMe keeps its name (before:
/// `neuron` → `neuron-nvme`, and every node drifts).
#[test]
fn no_min_values_no_grace_period_and_the_class_keeps_its_name() {
    let template = "      requirements:\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6, g6e]}\n        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}\n      taints:\n        - {key: nvidia.com/gpu, effect: NoSchedule}\n";
    let (dir, out, report) = adopt(&[&class("gpu-local", true), &pool("gpu", "gpu-local", template, "  limits:\n    nvidia.com/gpu: 16\n")], &[]);
    let profile = kept(dir.path(), &out, &report, "gpu-local");
    assert!(has_line(&profile, "termination-grace-period \"none\""), "{profile}");
    assert!(has_line(&profile, "node-class \"gpu-local\""), "{profile}");
    let compiled = gpuplan(dir.path(), &["compile", "--catalogs", repo().join("catalogs").to_str().unwrap()]);
    assert!(compiled.status.success(), "{}", text(&compiled));
    let np = std::fs::read_to_string(dir.path().join("out/demo/nodepool-gpu.yaml")).unwrap();
    assert!(!np.contains("minValues") && !np.contains("terminationGracePeriod: ") && np.contains("name: gpu-local"), "{np}");
    assert!(dir.path().join("out/demo/ec2nodeclass-gpu-local.yaml").exists());
}

/// Item 5: a reservation selected by id with a family requirement, as ODCR and Capacity Block examples write it, is
/// adopted with `--reservation ID=TYPE×COUNT`; a Capacity Block gets `capacity-block` and a warning that its up-front
/// price is not in the YAML.
#[test]
fn a_capacity_block_by_id_and_family_adopts_with_the_reservation_flag() {
    let class = format!("{}  capacityReservationSelectorTerms:\n    - id: cr-0123456789abcdef0\n", class("cb", false));
    let template = "      requirements:\n        - {key: karpenter.sh/capacity-type, operator: In, values: [reserved]}\n        - {key: karpenter.k8s.aws/capacity-reservation-type, operator: In, values: [capacity-block]}\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p5]}\n      taints:\n        - {key: nvidia.com/gpu, effect: NoSchedule}\n";
    let np = pool("gpu-cb", "cb", template, "");
    let (dir, out, _) = adopt(&[&class, &np], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--reservation gpu-cb=TYPExCOUNT (or ID=TYPExCOUNT"), "{}", text(&out));
    assert!(!dir.path().join("profiles").exists());
    let (dir, out, _) = adopt(&[&class, &np], &["--reservation", "cr-0123456789abcdef0=p5.48xlarge×2", "--accept-changes"]);
    assert!(out.status.success(), "{}", text(&out));
    let profile = std::fs::read_to_string(dir.path().join("profiles/cb.kdl")).unwrap();
    for line in ["instance-type \"p5.48xlarge\"", "instances 2", "capacity-block"] {
        assert!(has_line(&profile, line), "{line}: {profile}");
    }
    assert!(text(&out).contains("a Capacity Block is paid up front"), "{}", text(&out));
}

/// Item 6: a pool of retired types the catalog lacks stops adopt with the types and the reason, nothing written
/// (before: profiles written, E0140 at compile, "report a gpuplan bug").
#[test]
fn a_pool_of_types_the_catalog_lacks_stops_adopt_naming_them() {
    let template = "      requirements:\n        - {key: node.kubernetes.io/instance-type, operator: In, values: [p3.2xlarge, p3.8xlarge]}\n";
    let (dir, out, _) = adopt(&[&class("p3", false), &pool("p3", "p3", template, "  limits:\n    nvidia.com/gpu: 8\n")], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("its instance types p3.2xlarge, p3.8xlarge are not in the us-east-1 catalog"), "{}", text(&out));
    assert!(!dir.path().join("profiles").exists());
}

/// Item 8: a NodePool given without its EC2NodeClass is verified against a stand-in class, said so (before: every pod
/// pended on both sides, counted as no change); `--classes` gives the real one.
#[test]
fn a_fragment_verifies_against_a_stand_in_class_or_the_classes_given() {
    let template = "      requirements:\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}\n      taints:\n        - {key: nvidia.com/gpu, effect: NoSchedule}\n";
    let np = pool("gpu", "gpu", template, "  limits:\n    nvidia.com/gpu: 8\n");
    let (_dir, out, report) = adopt(&[&np], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(report["verification"]["stand_in_classes"], serde_json::json!(["gpu"]));
    assert!(report["verification"]["placements"][0]["before"].is_object(), "{:#}", report["verification"]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("classes.yaml"), class("gpu", false)).unwrap();
    let classes = dir.path().join("classes.yaml");
    let (adopted, out, report) = adopt(&[&np], &["--classes", classes.to_str().unwrap()]);
    assert!(out.status.success() && report["verification"].get("stand_in_classes").is_none(), "{}", text(&out));
    let profile = std::fs::read_to_string(adopted.path().join("profiles/gpu.kdl")).unwrap();
    assert!(has_line(&profile, "ami \"al2023@v20251001\""), "{profile}");
}

/// `--optimize` is gpuplan's selection: the dear g5.16xlarge (1 GPU at 4× a g5.xlarge's $/GPU-hour) goes, and the
/// report says so with the $/h it saves in the worst case.
#[test]
fn optimize_narrows_and_reports_what_it_removes() {
    let template = "      requirements:\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}\n        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n      taints:\n        - {key: nvidia.com/gpu, effect: NoSchedule}\n";
    let (_dir, out, report) = adopt(&[&class("gpu", false), &pool("gpu", "gpu", template, "  limits:\n    nvidia.com/gpu: 8\n")], &["--optimize", "--accept-changes"]);
    assert!(out.status.success(), "{}", text(&out));
    let pool = &report["pools"][0];
    assert!(pool["types_removed"].as_array().unwrap().iter().any(|t| t == "g5.16xlarge"), "{pool:#}");
    assert!(pool["worst_case_after"].as_f64() < pool["worst_case_before"].as_f64(), "{pool:#}");
}

/// A failed adopt leaves `--into` as it was (the rollback itself: `adopt::write` unit test): a profile of the same name
/// already there keeps its text when adopt stops; two NodePools of one name (one object to the API server) stop adopt
/// at once (before: profiles written, then E0153 at compile).
#[test]
fn a_failed_adopt_leaves_into_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let template = "      requirements:\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}\n";
    let np = |c: &str| pool("gpu", c, template, "  limits:\n    nvidia.com/gpu: 8\n");
    std::fs::write(dir.path().join("a.yaml"), [class("a", false), np("a")].join("---\n")).unwrap();
    std::fs::write(dir.path().join("b.yaml"), [class("b", false), np("b")].join("---\n")).unwrap();
    std::fs::create_dir(dir.path().join("profiles")).unwrap();
    std::fs::write(dir.path().join("profiles/a.kdl"), "// mine\n").unwrap();
    let out = gpuplan(dir.path(), &["adopt", "a.yaml", "b.yaml", "--into", "profiles", "--catalogs", repo().join("catalogs").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("two NodePools named `gpu` (a.yaml and b.yaml)"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(dir.path().join("profiles/a.kdl")).unwrap(), "// mine\n");
    assert!(!dir.path().join("profiles/b.kdl").exists());
}

/// A Capacity Block's worst case is its up-front price over its hours, not the on-demand table; without a price the
/// figure says it leaves the block out (Capacity Blocks for ML: paid up front for the block, from start to end).
#[test]
fn a_capacity_block_is_priced_per_block_or_says_it_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("profiles")).unwrap();
    let profile = |block: &str| format!("profile \"cb\" priority=1\ncluster \"ml\" {{\n    region \"us-east-1\"\n    zones \"us-east-1a\"\n    ami \"al2023@v20251001\"\n}}\npool \"train\" preset=\"training-on-demand\" {{\n    capacity \"reserved\"\n    reserved {{ id \"cr-0123456789abcdef0\"; instance-type \"p5.48xlarge\"; instances 2; {block} }}\n}}\n");
    let explain = |block: &str| {
        std::fs::write(dir.path().join("profiles/cb.kdl"), profile(block)).unwrap();
        let out = gpuplan(dir.path(), &["explain", "cb", "--catalogs", repo().join("catalogs").to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // 168 hours, $31,464 for the block: $187.29/h while it runs.
    let priced = explain("capacity-block price-usd=31464 start=\"2026-12-01T11:30:00Z\" end=\"2026-12-08T11:30:00Z\"");
    assert!(priced.contains("Capacity Block: 2 × p5.48xlarge") && priced.contains("$31464.00 paid up front for 168 h") && priced.contains("$187.29/h while it runs"), "{priced}");
    let unpriced = explain("capacity-block");
    assert!(unpriced.contains("its up-front price is NOT in the worst case"), "{unpriced}");
}

/// Item 6: a pool of fractional-GPU types alone (g6f: EC2 reports a fraction of an L4) launches nothing for a GPU pod
/// unless a NodeOverlay declares whole GPUs on them: without one adopt stops, naming the types; with the overlay, as
/// such manifests publish it, the pool adopts and its probe lands on g6f on both sides.
#[test]
fn fractional_gpu_types_need_the_overlay_that_declares_their_gpu() {
    let template = "      requirements:\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6f]}\n      taints:\n        - {key: nvidia.com/gpu, effect: NoSchedule}\n";
    let np = pool("frac", "frac", template, "  limits:\n    nvidia.com/gpu: 8\n");
    let (dir, out, _) = adopt(&[&class("frac", false), &np], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("it admits only fractional-GPU types (g6f."), "{}", text(&out));
    assert!(!dir.path().join("profiles").exists());
    let overlay = "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata:\n  name: g6f-gpu\nspec:\n  requirements:\n    - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6f]}\n  capacity:\n    nvidia.com/gpu: \"1\"\n";
    let (dir, out, report) = adopt(&[&class("frac", false), &np, overlay], &[]);
    kept(dir.path(), &out, &report, "frac");
    assert!(report["verification"]["placements"][0]["before"]["instance_type"].as_str().is_some_and(|t| t.starts_with("g6f.")), "{:#}", report["verification"]);
}

/// `minValues` on the family or type requirement (Karpenter's spot-diversity examples) adopts as `family-min-values` /
/// `type-min-values` and compiles back onto gpuplan's own family and type requirements (before: dropped, unseen).
#[test]
fn min_values_on_family_and_type_are_kept() {
    let template = "      requirements:\n        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}\n        - {key: karpenter.k8s.aws/instance-family, operator: Exists, minValues: 5}\n        - {key: node.kubernetes.io/instance-type, operator: Exists, minValues: 10}\n        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}\n";
    let (dir, out, report) = adopt(&[&class("cpu", false), &pool("cpu", "cpu", template, "  limits:\n    cpu: 1000\n")], &[]);
    let profile = kept(dir.path(), &out, &report, "cpu");
    assert!(has_line(&profile, "family-min-values 5") && has_line(&profile, "type-min-values 10"), "{profile}");
    assert_eq!(report["verification"]["fields_unexplained"], 0, "{:#}", report["verification"]);
}

/// A Windows NodePool stops adopt, saying why (gpuplan compiles Linux nodes; before: adopted as Linux, unseen).
#[test]
fn a_windows_pool_stops_adopt() {
    let template = "      requirements:\n        - {key: kubernetes.io/os, operator: In, values: [windows]}\n";
    let (dir, out, _) = adopt(&[&class("win", false), &pool("win", "win", template, "  limits:\n    cpu: 100\n")], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("it asks for kubernetes.io/os In [windows], and gpuplan compiles Linux nodes only"), "{}", text(&out));
    assert!(!dir.path().join("profiles").exists());
}

/// Issue 32 item 9 on hand-written YAML: a class that selects a cluster placement group by name adopts as the pool's
/// `placement-group` line, and the pool, which may launch in every zone of the region, gets E0383 as a warning, not an
/// error (the original already had it: a cluster placement group is in one zone, EC2 User Guide "Placement groups";
/// aws/karpenter-provider-aws v1.14.1 pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml `placementGroupSelector`).
#[test]
fn a_placement_group_by_name_adopts_as_a_line_and_its_multi_zone_pool_is_a_warning() {
    let class = format!("{}  placementGroupSelector:\n    name: train-pg\n", class("train", false));
    let template = "      requirements:\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6]}\n      taints:\n        - {key: nvidia.com/gpu, effect: NoSchedule}\n";
    let (dir, out, report) = adopt(&[&class, &pool("train", "train", template, "  limits:\n    nvidia.com/gpu: 16\n")], &[]);
    let profile = kept(dir.path(), &out, &report, "train");
    assert!(has_line(&profile, "placement-group \"train-pg\""), "{profile}");
    let compiled = gpuplan(dir.path(), &["compile", "--catalogs", repo().join("catalogs").to_str().unwrap()]);
    assert!(compiled.status.success(), "{}", text(&compiled));
    assert!(text(&compiled).contains("E0383"), "{}", text(&compiled));
}
