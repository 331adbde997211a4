//! Issue 32 items 9 and 12: what the cluster must have for the output to work, stated by the profile where it can
//! know (`karpenter-version`, `interruption-queue`, `placement-group`), listed in each kustomization's header, and
//! linted where it is missing (GP050–GP053).
//!
//! Upstream: kubernetes-sigs/karpenter v1.14.1 `pkg/operator/options/options.go` (feature gates and their
//! defaults); aws/karpenter-provider-aws v1.14.1 `pkg/operator/options/options.go` (`--interruption-queue`),
//! `pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml` (`placementGroupSelector`); kubernetes v1.37.2
//! `pkg/controller/daemon/daemon_controller.go` (`predicates`: which taints keep a daemon off a node).

use std::path::PathBuf;
use std::process::Command;

mod common;
use common::{compile_one, profile, with_code};

/// A profile of cluster `ml` (three zones), with `cluster_lines` added to its cluster block, then `body`.
fn with_cluster(cluster_lines: &str, body: &str) -> String {
    let p = profile("p", 10, "al2023@v20251023", body);
    p.replacen("    ami \"al2023@v20251023\"\n", &format!("    ami \"al2023@v20251023\"\n{cluster_lines}"), 1)
}

/// The kustomization.yaml of cluster `ml` a compile of `text` writes.
fn kustomization(text: String) -> String {
    let c = compile_one(text);
    let tree = c.ok().output_tree();
    String::from_utf8(tree.files[std::path::Path::new("ml/kustomization.yaml")].clone().into()).unwrap()
}

/// A module's directory in the Go module cache, at the version `conformance/<module>/go.mod` pins; None (with the
/// reason printed) without Go, unless GPUPLAN_CONFORMANCE_REQUIRED=1.
fn module_dir(conformance: &str, module: &str) -> Option<PathBuf> {
    let required = std::env::var("GPUPLAN_CONFORMANCE_REQUIRED").is_ok_and(|v| v == "1");
    if Command::new("go").arg("version").output().is_err() {
        assert!(!required, "GPUPLAN_CONFORMANCE_REQUIRED=1 but `go` is not on PATH");
        eprintln!("skipped: no Go toolchain on PATH, so {module} cannot be read from the module cache");
        return None;
    }
    let out = Command::new("go")
        .current_dir(common::repo().join("conformance").join(conformance))
        .args(["mod", "download", "-json", module])
        .output()
        .expect("run go mod download");
    assert!(out.status.success(), "go mod download {module}: {}", String::from_utf8_lossy(&out.stderr));
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    Some(PathBuf::from(info["Dir"].as_str().expect("a module directory")))
}

const GPU_POOL: &str = "pool \"llm\" preset=\"general\" {\n    gpu { name \"L4\" }\n    capacity \"on-demand\"\n    max-accelerators 8\n}\n";
const SPOT_POOL: &str = "pool \"llm\" preset=\"inference-spot\" {\n    gpu { name \"L4\" \"A10G\" }\n    max-accelerators 8\n}\n";

// ---- item 12: the Karpenter version ----

#[test]
fn karpenter_version_other_than_the_pinned_one_is_e0380_at_its_line() {
    let c = compile_one(with_cluster("    karpenter-version \"v1.6.0\"\n", GPU_POOL));
    let Err(gpuplan::compile::CompileError::Profiles { diagnostics }) = &c.result else { panic!("v1.6.0 must be refused") };
    let e = with_code(diagnostics, "E0380");
    assert_eq!(e.len(), 1, "{diagnostics:?}");
    assert_eq!(e[0].location, c.loc("p.kdl", "\"v1.6.0\""));
    assert!(e[0].message.contains("v1.14.1") && e[0].help.as_deref().unwrap_or("").contains("karpenter-version \"v1.14.1\""), "{}", e[0].message);
}

#[test]
fn karpenter_version_v1_14_1_compiles_and_is_named_in_the_prerequisites() {
    let k = kustomization(with_cluster("    karpenter-version \"v1.14.1\"\n", GPU_POOL));
    assert!(k.contains("#   Karpenter v1.14.1 (the release whose CRDs validated this output"), "{k}");
    // Nothing in this cluster uses a gated feature.
    assert!(!k.contains("feature gate"), "{k}");
}

#[test]
fn the_pinned_version_is_the_one_whose_crds_validate_the_output() {
    // src/crds/karpenter holds aws/karpenter-provider-aws v1.14.1 `pkg/apis/crds/*.yaml` byte for byte: the release
    // `karpenter-version` accepts is the one whose CRDs validate every NodePool, EC2NodeClass and NodeOverlay.
    assert_eq!(gpuplan::profile::karpenter::KARPENTER_VERSION, "v1.14.1");
    let Some(dir) = module_dir("karpenter", "github.com/aws/karpenter-provider-aws") else { return };
    assert!(dir.ends_with(format!("karpenter-provider-aws@{}", gpuplan::profile::karpenter::KARPENTER_VERSION)), "conformance/karpenter pins {}", dir.display());
    for crd in ["karpenter.sh_nodepools.yaml", "karpenter.k8s.aws_ec2nodeclasses.yaml", "karpenter.sh_nodeoverlays.yaml"] {
        let ours = std::fs::read(common::repo().join("src/crds/karpenter").join(crd)).unwrap();
        assert!(ours == std::fs::read(dir.join("pkg/apis/crds").join(crd)).unwrap(), "src/crds/karpenter/{crd} is not the pinned release's");
    }
}

#[test]
fn feature_gate_defaults_are_karpenter_v1_14_1s() {
    use gpuplan::solve::prerequisites::FeatureGate;
    // sigs.k8s.io/karpenter v1.14.1 pkg/operator/options/options.go: the FEATURE_GATES default string.
    let Some(dir) = module_dir("karpenter", "sigs.k8s.io/karpenter") else { return };
    let options = std::fs::read_to_string(dir.join("pkg/operator/options/options.go")).unwrap();
    let defaults = options.split("\"FEATURE_GATES\", \"").nth(1).and_then(|s| s.split('"').next()).expect("the FEATURE_GATES default");
    for gate in [FeatureGate::NodeOverlay, FeatureGate::ReservedCapacity, FeatureGate::StaticCapacity] {
        let written = format!("{}={}", gate.name(), gate.default_on());
        assert!(defaults.split(',').any(|g| g == written), "{written} not in options.go's defaults {defaults}");
    }
}

#[test]
fn only_the_gates_the_clusters_objects_use_are_listed() {
    // A time-sliced pool's NodeOverlay needs NodeOverlay; a static pool StaticCapacity; nothing else is listed.
    let shared = "pool \"nb\" preset=\"general\" {\n    gpu { name \"L4\" }\n    time-slicing replicas=4\n    max-accelerators 8\n}\n";
    let k = kustomization(with_cluster("", shared));
    assert!(k.contains("Karpenter feature gate NodeOverlay=true (settings.featureGates.nodeOverlay; off by default: turn it on): time-sliced/MIG pools"), "{k}");
    assert!(!k.contains("StaticCapacity") && !k.contains("ReservedCapacity"), "{k}");
    let fixed = "pool \"warm\" preset=\"inference-on-demand\" {\n    gpu { name \"L4\"; per-node max=1 }\n    static replicas=2\n}\n";
    let k = kustomization(with_cluster("", fixed));
    assert!(k.contains("Karpenter feature gate StaticCapacity=true (settings.featureGates.staticCapacity; off by default: turn it on): static pools: warm"), "{k}");
    assert!(!k.contains("NodeOverlay"), "{k}");
}

// ---- item 9: the interruption queue ----

#[test]
fn spot_pool_without_interruption_queue_is_gp050_at_the_cluster_block() {
    let c = compile_one(with_cluster("", SPOT_POOL));
    let lint = c.lint();
    let f = with_code(&lint, "GP050");
    assert_eq!(f.len(), 1, "one finding per profile, not per NodePool: {lint:?}");
    assert_eq!(f[0].location, c.loc("p.kdl", "cluster \"ml\""));
    assert!(f[0].message.contains("llm-spot") && !f[0].message.contains("llm-on-demand"), "{}", f[0].message);
    assert!(f[0].help.as_deref().unwrap_or("").contains("interruption-queue"), "{:?}", f[0].help);
}

#[test]
fn interruption_queue_silences_gp050_and_is_listed() {
    let text = with_cluster("    interruption-queue \"Karpenter-ml\"\n", SPOT_POOL);
    let c = compile_one(text.clone());
    assert!(with_code(&c.lint(), "GP050").is_empty());
    let k = kustomization(text);
    assert!(k.contains("#   Karpenter interruption queue: SQS queue Karpenter-ml (settings.interruptionQueue)"), "{k}");
}

#[test]
fn missing_interruption_queue_is_listed_only_for_spot_pools() {
    assert!(kustomization(with_cluster("", SPOT_POOL)).contains("none named, so spot pools llm-spot are not drained"));
    assert!(!kustomization(with_cluster("", GPU_POOL)).contains("interruption queue"));
}

#[test]
fn interruption_queue_url_is_e0381() {
    let c = compile_one(with_cluster("    interruption-queue \"https://sqs.us-east-1.amazonaws.com/1/q\"\n", GPU_POOL));
    let Err(gpuplan::compile::CompileError::Profiles { diagnostics }) = &c.result else { panic!("a URL must be refused") };
    assert_eq!(with_code(diagnostics, "E0381").len(), 1, "{diagnostics:?}");
}

#[test]
fn two_profiles_naming_different_queues_is_e0382_at_the_second() {
    let a = with_cluster("    interruption-queue \"q-a\"\n", SPOT_POOL);
    let b = with_cluster("    interruption-queue \"q-b\"\n", "pool \"vision\" preset=\"general\" {\n    gpu { name \"A10G\" }\n    max-accelerators 8\n}\n").replace("profile \"p\" priority=10", "profile \"q\" priority=5");
    let c = common::compile_profiles(&[("a.kdl", a), ("b.kdl", b)], &[]);
    let Err(gpuplan::compile::CompileError::Profiles { diagnostics }) = &c.result else { panic!("two queues must be refused") };
    let e = with_code(diagnostics, "E0382");
    assert_eq!(e.len(), 1, "{diagnostics:?}");
    assert_eq!(e[0].location, c.loc("b.kdl", "\"q-b\""));
}

#[test]
fn interruption_queue_option_is_karpenter_provider_aws_v1_14_1s() {
    // aws/karpenter-provider-aws v1.14.1: the flag, its env variable, and "disabled if not specified".
    let Some(dir) = module_dir("karpenter", "github.com/aws/karpenter-provider-aws") else { return };
    let options = std::fs::read_to_string(dir.join("pkg/operator/options/options.go")).unwrap();
    assert!(options.contains("\"interruption-queue\", env.WithDefaultString(\"INTERRUPTION_QUEUE\", \"\")"));
    assert!(options.contains("Interruption handling is disabled if not specified"));
    let values = std::fs::read_to_string(dir.join("charts/karpenter/values.yaml")).unwrap();
    assert!(values.contains("  interruptionQueue: \"\""), "the Helm value the prerequisites name");
}

// ---- item 9: EFA pools, placement groups ----

const EFA_POOL: &str = "pool \"train\" preset=\"training-on-demand\" {\n    gpu { name \"H100\" }\n    efa #true\n    max-accelerators 16\n}\n";

/// `EFA_POOL` with `line` added after its `efa #true`.
fn efa_pool_with(line: &str) -> String {
    EFA_POOL.replace("    efa #true\n", &format!("    efa #true\n    {line}\n"))
}

fn refusal(text: String, code: &str) -> (common::Compiled, gpuplan::diagnostic::ProfileDiagnostic) {
    let c = compile_one(text);
    let Err(gpuplan::compile::CompileError::Profiles { diagnostics }) = &c.result else { panic!("expected {code}") };
    let found = with_code(diagnostics, code);
    assert_eq!(found.len(), 1, "{}", gpuplan::diagnostic::render_plain(diagnostics));
    let d = found[0].clone();
    (c, d)
}

#[test]
fn placement_group_on_an_efa_pool_sets_its_ec2nodeclass_placement_group_selector() {
    // aws/karpenter-provider-aws v1.14.1 pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml: placementGroupSelector
    // {name | id}; the compile validates the class against that CRD.
    let c = compile_one(with_cluster("", &efa_pool_with("placement-group \"train-ml\"")));
    let manifests = c.ok().manifests();
    let np = manifests.iter().find(|m| m.kind() == "NodePool" && m.object["metadata"]["name"] == "train").expect("NodePool train");
    let class = np.object["spec"]["template"]["spec"]["nodeClassRef"]["name"].as_str().unwrap();
    let ec2 = manifests.iter().find(|m| m.kind() == "EC2NodeClass" && m.object["metadata"]["name"] == class).unwrap();
    assert_eq!(ec2.object["spec"]["placementGroupSelector"], serde_json::json!({"name": "train-ml"}));
    assert!(with_code(&c.lint(), "GP051").is_empty(), "a placement group silences GP051");
}

#[test]
fn placement_group_is_listed_in_the_prerequisites_with_its_zone() {
    let k = kustomization(with_cluster("", &efa_pool_with("placement-group \"train-ml\"")));
    assert!(k.contains("#   EC2 placement group train-ml (strategy cluster, in us-east-1"), "{k}");
    assert!(k.contains("pools train): create it beforehand\n"), "{k}");
}

#[test]
fn efa_pool_lists_the_self_referencing_security_group_rule() {
    // AWS EC2 User Guide, "Prepare an EFA-enabled security group": all traffic from and to the group itself.
    let k = kustomization(with_cluster("", EFA_POOL));
    assert!(k.contains("#   EFA security group (pools train): the security groups tagged karpenter.sh/discovery=ml need a rule allowing all traffic from the group itself, inbound and outbound"), "{k}");
    assert!(!kustomization(with_cluster("", GPU_POOL)).contains("EFA security group"));
}

#[test]
fn efa_pool_without_placement_group_is_gp051_at_its_efa_line() {
    let c = compile_one(with_cluster("", EFA_POOL));
    let lint = c.lint();
    let f = with_code(&lint, "GP051");
    assert_eq!(f.len(), 1, "{lint:?}");
    assert_eq!(f[0].location, c.loc("p.kdl", "#true"));
    assert!(f[0].help.as_deref().unwrap_or("").contains("placement-group"), "{:?}", f[0].help);
}

#[test]
fn placement_group_on_a_pool_of_several_zones_is_e0383_at_its_line() {
    // A cluster placement group is in one Availability Zone (AWS EC2 User Guide, "Placement strategies for your
    // placement groups"); a non-EFA pool launches in all three zones of the cluster.
    let pool = "pool \"train\" preset=\"training-on-demand\" {\n    gpu { name \"A10G\" }\n    placement-group \"pg\"\n    max-accelerators 8\n}\n";
    let (c, d) = refusal(with_cluster("", pool), "E0383");
    assert_eq!(d.location, c.loc("p.kdl", "\"pg\""));
    assert!(d.message.contains("us-east-1a, us-east-1b, us-east-1c"), "{}", d.message);
}

#[test]
fn placement_group_on_an_adopted_pool_of_several_zones_is_a_warning() {
    // Issue 32's severity rule: a pool adopt wrote (`admit "as-required"`) keeps its original's behaviour, so the
    // problem is reported, not refused.
    let pool = "pool \"train\" preset=\"training-on-demand\" {\n    gpu { name \"A10G\" }\n    admit \"as-required\"\n    placement-group \"pg\"\n    max-accelerators 8\n}\n";
    let c = compile_one(with_cluster("", pool));
    let warnings = &c.ok().warnings;
    let w = with_code(warnings, "E0383");
    assert_eq!(w.len(), 1, "{}", gpuplan::diagnostic::render_plain(warnings));
    assert_eq!(w[0].severity, miette::Severity::Warning);
    assert_eq!(w[0].location, c.loc("p.kdl", "\"pg\""));
}

#[test]
fn placement_group_name_empty_is_e0384() {
    refusal(with_cluster("", &efa_pool_with("placement-group \"\"")), "E0384");
}

#[test]
fn placement_group_in_auto_mode_is_e0385() {
    let text = profile("p", 10, "al2023@v20251023", "pool \"train\" preset=\"training-on-demand\" {\n    gpu { name \"L4\" }\n    placement-group \"pg\"\n    max-accelerators 8\n}\n")
        .replace("    ami \"al2023@v20251023\"\n", "    node-role \"AmazonEKSAutoNodeRole\"\n    auto-mode #true\n");
    let (c, d) = refusal(text, "E0385");
    assert_eq!(d.location, c.loc("p.kdl", "\"pg\""));
}

// ---- item 9: the cluster's own DaemonSets against the pools' taints (lint --manifests) ----

const TAINTED_POOL: &str = "pool \"train\" preset=\"training-on-demand\" {\n    gpu { name \"A10G\" }\n    taint \"workload\" value=\"training\" effect=\"NoSchedule\"\n    max-accelerators 8\n}\n";

/// A logging DaemonSet with these `tolerations` and `node_selector` (YAML flow maps), linted with the compile of
/// `TAINTED_POOL` as `lint --manifests` does: its GP052 findings.
fn gp052(tolerations: &str, node_selector: &str) -> (common::Compiled, Vec<gpuplan::diagnostic::ProfileDiagnostic>) {
    let c = compile_one(with_cluster("", TAINTED_POOL));
    let ds = format!(
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: fluent-bit, namespace: logging}}\nspec:\n  selector: {{matchLabels: {{app: fluent-bit}}}}\n  template:\n    metadata: {{labels: {{app: fluent-bit}}}}\n    spec:\n      nodeSelector: {node_selector}\n      tolerations: {tolerations}\n      containers: [{{name: fb, image: fluent/fluent-bit:3.2}}]\n"
    );
    let file = c.dir.path().join("fluent-bit.yaml");
    std::fs::write(&file, ds).unwrap();
    let objects = gpuplan::report::lint::with_cluster_objects("ml", c.ok().manifests(), &[file]).unwrap();
    let found: Vec<_> = gpuplan::report::lint::lint_on(c.ok(), &objects).into_iter().filter(|d| d.code == "GP052").collect();
    (c, found)
}

#[test]
fn daemonset_tolerating_only_the_gpu_taint_is_gp052_naming_the_pool_and_the_toleration_to_add() {
    let (c, found) = gp052("[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]", "{kubernetes.io/os: linux}");
    assert_eq!(found.len(), 1, "one finding per DaemonSet: {found:?}");
    assert!(found[0].message.contains("DaemonSet logging/fluent-bit") && found[0].message.contains("NodePool train"), "{}", found[0].message);
    assert!(found[0].help.as_deref().unwrap_or("").contains("{key: workload, operator: Exists, effect: NoSchedule}"), "{:?}", found[0].help);
    assert!(!found[0].help.as_deref().unwrap_or("").contains("nvidia.com/gpu"), "a tolerated taint is not asked for: {:?}", found[0].help);
    assert_eq!(found[0].location, c.loc("p.kdl", "\"train\""));
}

#[test]
fn daemonset_tolerating_every_taint_is_silent() {
    assert!(gp052("[{operator: Exists}]", "{}").1.is_empty());
}

#[test]
fn daemonset_whose_node_selector_keeps_it_off_the_pool_is_silent() {
    // It does not want these nodes: the controller's node affinity check fails before taints matter.
    assert!(gp052("[]", "{node-role.example.com/system: \"true\"}").1.is_empty());
}

#[test]
fn daemonset_controller_counts_only_noschedule_and_noexecute_taints() {
    // kubernetes v1.37.2 pkg/controller/daemon/daemon_controller.go `predicates`, the rule GP052 encodes.
    let Some(dir) = module_dir("consumers", "k8s.io/kubernetes") else { return };
    let source = std::fs::read_to_string(dir.join("pkg/controller/daemon/daemon_controller.go")).unwrap();
    let predicates = source.split("func predicates(").nth(1).expect("predicates");
    let body = &predicates[..predicates.find("\n}\n").unwrap()];
    assert!(body.contains("return t.Effect == v1.TaintEffectNoExecute || t.Effect == v1.TaintEffectNoSchedule"), "{body}");
}

// ---- adopt reads them back ----

#[test]
fn adopt_reads_back_the_placement_group_and_the_interruption_queue() {
    // The queue is no object's field: adopt reads it from the kustomization header compile wrote; the placement
    // group is the class's placementGroupSelector. The adopted profile compiles back to the same out/, byte for byte.
    let text = with_cluster("    interruption-queue \"Karpenter-ml\"\n", &efa_pool_with("placement-group \"train-ml\""));
    let adopted = common::assert_round_trip(&text);
    assert!(adopted.contains("    interruption-queue \"Karpenter-ml\""), "{adopted}");
    assert!(adopted.contains("placement-group \"train-ml\""), "{adopted}");
}

#[test]
fn lint_manifests_on_a_daemonset_tolerating_only_the_gpu_taint_prints_gp052() {
    // What the issue found: `gpuplan lint --manifests <dir>` said nothing on such a DaemonSet.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("profiles")).unwrap();
    std::fs::create_dir_all(dir.path().join("live")).unwrap();
    std::fs::write(dir.path().join("profiles/p.kdl"), with_cluster("", TAINTED_POOL)).unwrap();
    std::fs::write(
        dir.path().join("live/agent.yaml"),
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: security-agent, namespace: security}\nspec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    spec:\n      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n      containers: [{name: agent, image: example/agent:1}]\n",
    )
    .unwrap();
    let catalogs = common::repo().join("catalogs");
    let out = common::gpuplan(dir.path(), &["lint", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--manifests", "live"]);
    let text = common::text(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("GP052") && text.contains("DaemonSet security/security-agent does not tolerate the taints of NodePool train"), "{text}");
    assert!(text.contains("{key: workload, operator: Exists, effect: NoSchedule}"), "{text}");
}
