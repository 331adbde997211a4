//! `gpuplan simulate`: one Karpenter behaviour per test, on real catalog types (catalogs/us-east-1.json), with
//! hand-written NodePools unless the test says it runs on the examples' out/. Each test names the upstream code or test
//! it follows (kubernetes-sigs/karpenter at 2266468104f3, aws/karpenter-provider-aws at 1d927085dd81).

use std::path::{Path, PathBuf};
use std::process::Command;

use gpuplan::catalog::Catalog;
use gpuplan::simulate::{self, manifests, pods, yaml, Report, Unavailable};

fn catalog() -> Catalog {
    Catalog::load(Path::new("catalogs"), "us-east-1").unwrap()
}

const NODE_CLASS: &str = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  amiSelectorTerms:\n  - alias: al2023@latest\n";

/// A hand-written NodePool: `body` is YAML indented for `spec.template.spec` (requirements, taints...).
fn pool(name: &str, weight: i64, body: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {name}\nspec:\n  weight: {weight}\n  template:\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n{body}"
    )
}

fn with_limits(pool: String, limits: &str) -> String {
    pool.replace("  template:\n", &format!("  limits:\n{limits}  template:\n"))
}

fn types(names: &[&str]) -> String {
    let mut s = "      requirements:\n      - key: node.kubernetes.io/instance-type\n        operator: In\n        values:\n".to_string();
    for n in names {
        s.push_str(&format!("        - {n}\n"));
    }
    s
}

/// A bare pod: `spec` is YAML indented for the pod spec, after a container with the given requests.
fn pod(name: &str, cpu: &str, spec: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n  - name: c\n    resources:\n      requests:\n        cpu: \"{cpu}\"\n{spec}")
}

fn run_with(manifest_docs: &[String], pod_docs: &[String], unavailable: &[&str]) -> Report {
    let m = yaml::parse_docs(Path::new("manifests.yaml"), &[NODE_CLASS.to_string()].iter().chain(manifest_docs).cloned().collect::<Vec<_>>().join("---\n")).unwrap();
    let p = yaml::parse_docs(Path::new("pods.yaml"), &pod_docs.join("---\n")).unwrap();
    let unavailable: Vec<Unavailable> = unavailable.iter().map(|u| u.parse().unwrap()).collect();
    simulate::run(&catalog(), &manifests::manifests(&m).unwrap(), &pods::pods(&p).unwrap(), &unavailable)
}

fn run(manifest_docs: &[String], pod_docs: &[String]) -> Report {
    run_with(manifest_docs, pod_docs, &[])
}

fn placed(r: &Report, pod: &str) -> (String, String) {
    let c = r.nodeclaims.iter().find(|c| c.pods.iter().any(|p| p == pod)).unwrap_or_else(|| panic!("{pod} not placed: {:?}", r.pending));
    (c.nodepool.clone(), c.instance_type.clone())
}

fn reason(r: &Report, pod: &str) -> String {
    r.pending.iter().find(|p| p.pod == pod).unwrap_or_else(|| panic!("{pod} not pending: {:?}", r.nodeclaims)).reason.clone()
}

const GENERAL: &[&str] = &["m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge"];

// --- NodePool order -----------------------------------------------------------------------------------------------

// kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go "should schedule to the nodepool with the
// highest priority always" (Weighted NodePools).
#[test]
fn highest_weight_first() {
    let r = run(&[pool("light", 10, &types(GENERAL)), pool("heavy", 50, &types(GENERAL))], &[pod("p", "1", "")]);
    assert_eq!(placed(&r, "default/p").0, "heavy");
}

// pkg/utils/nodepool/nodepool.go OrderByWeight: equal weights are ordered by name, descending (not ascending).
#[test]
fn equal_weights_by_name_descending() {
    let r = run(&[pool("alpha", 10, &types(GENERAL)), pool("beta", 10, &types(GENERAL))], &[pod("p", "1", "")]);
    assert_eq!(placed(&r, "default/p").0, "beta");
}

// --- taints and tolerations -----------------------------------------------------------------------------------------

const GPU_TAINT: &str = "      taints:\n      - key: nvidia.com/gpu\n        effect: NoSchedule\n";

// pkg/scheduling/taints.go Tolerates; provisioning/suite_test.go "should schedule pods that tolerate taints": without a
// toleration the pod stays pending, and the reason names the NodePool and the taint.
#[test]
fn taint_without_toleration_is_pending_with_reason() {
    let r = run(&[pool("gpu", 10, &(types(&["g5.xlarge"]) + GPU_TAINT))], &[pod("p", "1", "")]);
    let why = reason(&r, "default/p");
    assert!(why.contains("NodePool gpu") && why.contains("did not tolerate taint nvidia.com/gpu:NoSchedule"), "{why}");
}

// k8s ToleratesTaint: operator Exists with the key tolerates any value; the effect must match when given.
#[test]
fn exists_toleration_schedules() {
    let tol = "  tolerations:\n  - key: nvidia.com/gpu\n    operator: Exists\n";
    let r = run(&[pool("gpu", 10, &(types(&["g5.xlarge"]) + GPU_TAINT))], &[pod("p", "1", tol)]);
    assert_eq!(placed(&r, "default/p").1, "g5.xlarge");
    let wrong_effect = "  tolerations:\n  - key: nvidia.com/gpu\n    operator: Exists\n    effect: NoExecute\n";
    let r = run(&[pool("gpu", 10, &(types(&["g5.xlarge"]) + GPU_TAINT))], &[pod("p", "1", wrong_effect)]);
    assert!(reason(&r, "default/p").contains("did not tolerate"));
}

// provisioning/scheduling/topology_test.go "should provision nodes with taints and schedule pods if the taint is only a
// startup taint": startupTaints are not checked against tolerations.
#[test]
fn startup_taints_are_not_checked() {
    let startup = "      startupTaints:\n      - key: example.com/init\n        effect: NoSchedule\n";
    let r = run(&[pool("p", 10, &(types(GENERAL) + startup))], &[pod("p", "1", "")]);
    assert!(r.pending.is_empty(), "{:?}", r.pending);
}

// provisioning/suite_test.go "should not match NodePool with PreferNoSchedule taint when other NodePool match": a
// PreferNoSchedule taint is a hard constraint until relaxed, so the lighter untainted pool wins.
#[test]
fn prefer_no_schedule_is_hard_until_relaxed() {
    let soft = "      taints:\n      - key: foo\n        value: bar\n        effect: PreferNoSchedule\n";
    let r = run(&[pool("tainted", 100, &(types(GENERAL) + soft)), pool("plain", 1, &types(GENERAL))], &[pod("p", "1", "")]);
    assert_eq!(placed(&r, "default/p").0, "plain");
    // provisioning/suite_test.go "should tolerate PreferNoSchedule taint only after trying to relax Affinity terms".
    let r = run(&[pool("tainted", 100, &(types(GENERAL) + soft))], &[pod("p", "1", "")]);
    assert_eq!(placed(&r, "default/p").0, "tainted");
}

// --- requirements ---------------------------------------------------------------------------------------------------

// pkg/scheduling/requirements.go Compatible; scheduling/suite_test.go "should not schedule if node selector outside of
// NodePool constraints": a custom label the NodePool does not define is denied; a template label defines it.
#[test]
fn undefined_custom_label_is_denied() {
    let sel = "  nodeSelector:\n    team: ml\n";
    let r = run(&[pool("p", 10, &types(GENERAL))], &[pod("p", "1", sel)]);
    assert!(reason(&r, "default/p").contains("label \"team\" does not have known values"));
    let labelled = pool("p", 10, &types(GENERAL)).replace("  template:\n    spec:\n", "  template:\n    metadata:\n      labels:\n        team: ml\n    spec:\n");
    let r = run(&[labelled], &[pod("p", "1", sel)]);
    assert!(r.pending.is_empty(), "{:?}", r.pending);
}

// scheduling/suite_test.go "should schedule pods that have node selectors with NotIn operator and undefined key" and
// "should schedule pods that with DoesNotExists operator and undefined key".
#[test]
fn notin_and_doesnotexist_on_undefined_keys_schedule() {
    for op in ["NotIn\n      values: [a]", "DoesNotExist"] {
        let aff = format!("  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions:\n          - key: team\n            operator: {op}\n");
        let aff = aff.replace("      values", "            values");
        let r = run(&[pool("p", 10, &types(GENERAL))], &[pod("p", "1", &aff)]);
        assert!(r.pending.is_empty(), "{op}: {:?}", r.pending);
    }
}

// pkg/apis/v1/labels.go NormalizedLabels: a deprecated alias in a pod's nodeSelector is translated.
#[test]
fn deprecated_aliases_are_normalized() {
    let sel = "  nodeSelector:\n    beta.kubernetes.io/arch: arm64\n";
    let r = run(&[pool("p", 10, &types(&["m5.large", "m6g.large"]))], &[pod("p", "500m", sel)]);
    assert_eq!(placed(&r, "default/p").1, "m6g.large");
}

// aws/karpenter-provider-aws pkg/providers/instancetype/types.go computeRequirements (instance-cpu label);
// scheduling/suite_test.go "should schedule compatible requirements with Operator=Gt".
#[test]
fn gt_on_instance_cpu() {
    let aff = "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions:\n          - key: karpenter.k8s.aws/instance-cpu\n            operator: Gt\n            values: [\"8\"]\n";
    let r = run(&[pool("p", 10, &types(GENERAL))], &[pod("p", "1", aff)]);
    assert_eq!(placed(&r, "default/p").1, "m5.4xlarge");
}

fn terms(zones: &[&str]) -> String {
    let mut s = "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n".to_string();
    for z in zones {
        s.push_str(&format!("        - matchExpressions:\n          - key: topology.kubernetes.io/zone\n            operator: In\n            values: [{z}]\n"));
    }
    s
}

// pkg/scheduling/requirements.go newPodRequirements: only the first required nodeSelectorTerm is used while it can
// schedule somewhere (a scheduler would accept either term; Karpenter tries them in order).
#[test]
fn first_required_term_only() {
    let r = run(&[pool("p", 10, &types(GENERAL))], &[pod("p", "1", &terms(&["us-east-1c", "us-east-1a"]))]);
    assert_eq!(r.nodeclaims[0].zone, "us-east-1c");
}

// scheduling/suite_test.go "should relax multiple terms": when the first term fails in every pool, the next is tried.
#[test]
fn next_required_term_after_failure() {
    let r = run(&[pool("p", 10, &types(GENERAL))], &[pod("p", "1", &terms(&["us-east-1z", "us-east-1b"]))]);
    assert_eq!(r.nodeclaims[0].zone, "us-east-1b");
}

// pkg/scheduling/requirements.go newPodRequirements (the heaviest preferred term is a requirement) and preferences.go
// Relax; scheduling/suite_test.go "should schedule compatible preferences and requirements with Operator=In" and
// "should relax to use lighter weights".
#[test]
fn preferred_affinity_is_hard_until_relaxed() {
    let pref = |zones: &[(&str, i64)]| {
        let mut s = "  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n".to_string();
        for (z, w) in zones {
            s.push_str(&format!("      - weight: {w}\n        preference:\n          matchExpressions:\n          - key: topology.kubernetes.io/zone\n            operator: In\n            values: [{z}]\n"));
        }
        s
    };
    let r = run(&[pool("p", 10, &types(GENERAL))], &[pod("p", "1", &pref(&[("us-east-1d", 1)]))]);
    assert_eq!(r.nodeclaims[0].zone, "us-east-1d", "the cheapest-zone tie-break would pick us-east-1a");
    let r = run(&[pool("p", 10, &types(GENERAL))], &[pod("p", "1", &pref(&[("us-east-1z", 50), ("us-east-1c", 10)]))]);
    assert_eq!(r.nodeclaims[0].zone, "us-east-1c");
}

// --- requests and allocatable ---------------------------------------------------------------------------------------

// provisioning/suite_test.go "should not schedule if resource requests are not defined and limits (requests) are too
// large": a request defaults to the limit.
#[test]
fn requests_default_from_limits() {
    let p = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    resources:\n      limits:\n        cpu: \"3\"\n".to_string();
    let r = run(&[pool("p", 10, &types(GENERAL))], &[p]);
    assert_eq!(placed(&r, "default/p").1, "m5.xlarge");
}

// scheduling/suite_test.go "should take into account initContainer resource requests when binpacking"; provisioning/
// suite_test.go "should schedule based on the max resource requests of containers and initContainers with sidecar
// containers": max(containers + sidecars, largest init container + earlier sidecars).
#[test]
fn init_containers_and_sidecars() {
    let init = "  initContainers:\n  - name: i\n    resources:\n      requests:\n        cpu: \"6\"\n";
    let r = run(&[pool("p", 10, &types(GENERAL))], &[pod("p", "1", init)]);
    assert_eq!(placed(&r, "default/p").1, "m5.2xlarge");
    let sidecar = "  initContainers:\n  - name: s\n    restartPolicy: Always\n    resources:\n      requests:\n        cpu: \"2\"\n";
    let r = run(&[pool("p", 10, &types(GENERAL))], &[pod("p", "1", sidecar)]);
    assert_eq!(placed(&r, "default/p").1, "m5.xlarge", "1 + 2 sidecar cpu does not fit m5.large");
}

// aws/karpenter-provider-aws pkg/providers/instancetype/types.go (VM memory overhead 7.5%, kube-reserved, eviction
// threshold 100Mi, ENI-limited max pods) against Karpenter's own reference (website reference/instance-types.md,
// /work/shared/data/karpenter-instance-types.json): cpu, memory and pods allocatable match for the catalog's types.
#[test]
fn allocatable_matches_karpenter_reference() {
    let reference: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/shared/data/karpenter-instance-types.json")).expect("reference data")).unwrap();
    let catalog = catalog();
    let class = manifests::NodeClass { eni_limited_pods: true, eni_limited_memory_overhead: true, pods_per_core_enabled: true, ..Default::default() };
    let (mut checked, mut mismatched) = (0, Vec::new());
    for t in reference["instance_types"].as_array().unwrap() {
        let Some(it) = catalog.get(t["name"].as_str().unwrap()) else { continue };
        let cap = simulate::instances::capacity(it, &class);
        let alloc = simulate::instances::allocatable(it, &class, &cap);
        let want = |k: &str| yaml::milli(t["resources"][k].as_str().unwrap()).unwrap();
        checked += 1;
        if alloc["cpu"] != want("cpu") || alloc["memory"] != want("memory") || alloc["pods"] != want("pods") {
            mismatched.push(it.name.clone());
        }
    }
    println!("allocatable: {} of {checked} types differ from the reference: {mismatched:?}", mismatched.len());
    assert!(checked > 1000, "{checked}");
    // The ENI table is moto's DescribeInstanceTypes snapshot; a handful of types changed limits since.
    assert!(mismatched.len() * 200 < checked, "{} of {checked} differ: {mismatched:?}", mismatched.len());
    for gpu in ["g5.xlarge", "g4dn.xlarge", "p5.48xlarge", "g6.xlarge", "p4d.24xlarge"] {
        assert!(!mismatched.contains(&gpu.to_string()), "{gpu}");
    }
}

// --- packing --------------------------------------------------------------------------------------------------------

// scheduling/suite_test.go "should not launch a second node if there is an in-flight node that can support the pod";
// nodeclaim.go CanAdd/Add: the NodeClaim keeps the candidate types that fit all its pods and launches the cheapest.
#[test]
fn pods_join_a_planned_nodeclaim_which_keeps_its_candidates() {
    let r = run(&[pool("p", 10, &types(GENERAL))], &[pod("a", "1", ""), pod("b", "1", "")]);
    assert_eq!(r.nodeclaims.len(), 1);
    let c = &r.nodeclaims[0];
    assert_eq!(c.instance_type, "m5.xlarge", "2 cpu do not fit m5.large's 1930m");
    assert!(!c.candidates.contains(&"m5.large".to_string()) && c.candidates.contains(&"m5.4xlarge".to_string()), "{:?}", c.candidates);
}

// scheduler.go add: an in-flight NodeClaim is tried before any new one, whatever a new one would cost: the second pod
// joins the expensive heavy-pool claim although the light pool would launch a cheaper node for it alone.
#[test]
fn joining_ignores_cost() {
    let big = pool("heavy", 100, &types(&["m5.4xlarge"]));
    let small = pool("light", 50, &types(&["m5.large"]));
    let sel = "  nodeSelector:\n    karpenter.sh/nodepool: heavy\n";
    let r = run(&[big, small], &[pod("a", "4", sel), pod("b", "500m", "")]);
    assert_eq!(placed(&r, "default/b").0, "heavy");
    assert_eq!(r.nodeclaims.len(), 1);
}

// --- limits ---------------------------------------------------------------------------------------------------------

fn zone(z: &str) -> String {
    format!("  nodeSelector:\n    topology.kubernetes.io/zone: {z}\n")
}

// scheduler.go subtractMax and filterByRemainingResources; provisioning/suite_test.go "should partially schedule if
// limits would be exceeded": a planned NodeClaim is charged by its largest candidate (m5.4xlarge, 16 cpu), so a second
// 4-cpu node does not fit a 16-cpu limit although 4 + 4 ≤ 16.
#[test]
fn limits_charge_the_largest_candidate() {
    let p = with_limits(pool("p", 10, &types(&["m5.xlarge", "m5.2xlarge", "m5.4xlarge"])), "    cpu: \"16\"\n");
    let r = run(&[p], &[pod("a", "1", &zone("us-east-1a")), pod("b", "1", &zone("us-east-1b"))]);
    assert_eq!(r.nodeclaims.len(), 1);
    let why = reason(&r, "default/b");
    assert!(why.contains("NodePool p: all available instance types exceed limits") && why.contains("cpu 16"), "{why}");
}

// provisioning/suite_test.go "should not schedule if limits would be exceeded (node)" counts nodes that exist (from
// earlier provisioning loops). Within one scheduling run, planned NodeClaims do not use up the `nodes` limit
// (scheduler.go subtractMax: instance types have no `nodes` capacity), so both pods launch; a limit of 0 blocks the
// pool. Confirmed by Karpenter's own scheduler (tests/conformance/karpenter.rs).
#[test]
fn node_limit() {
    let p = with_limits(pool("p", 10, &types(GENERAL)), "    nodes: \"1\"\n");
    let r = run(&[p], &[pod("a", "1", &zone("us-east-1a")), pod("b", "1", &zone("us-east-1b"))]);
    assert_eq!(r.nodeclaims.len(), 2, "{:?}", r.pending);
    let p = with_limits(pool("p", 10, &types(GENERAL)), "    nodes: \"0\"\n");
    let r = run(&[p], &[pod("a", "1", &zone("us-east-1a"))]);
    assert!(reason(&r, "default/a").contains("node limits have been exhausted"), "{r:?}");
}

// kubernetes-sigs/karpenter pkg/controllers/nodeoverlay (capacity overlays) with scheduler.go subtractMax, on the
// examples' out/: the time-sliced notebooks-shared pool's NodeOverlay declares 4 nvidia.com/gpu per 1-GPU node, so 32
// one-GPU pods fill 8 nodes and exactly reach the 32-GPU limit; a 33rd stays pending on the limit.
#[test]
fn node_overlay_capacity_counts_against_limits_on_examples() {
    let pods: String = (0..33).map(|_| "").collect();
    let _ = pods;
    let mut docs = String::from("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: jupyter\n  namespace: notebooks\nspec:\n  replicas: 33\n  template:\n    spec:\n      nodeSelector:\n        gpuplan.dev/pool: notebooks-shared\n      tolerations:\n      - operator: Exists\n      containers:\n      - name: c\n        resources:\n          requests:\n            cpu: 500m\n            memory: 1Gi\n          limits:\n            nvidia.com/gpu: 1\n");
    docs.push('\n');
    let m = yaml::read_docs(&[PathBuf::from("out/ml-research")]).unwrap();
    let p = yaml::parse_docs(Path::new("pods.yaml"), &docs).unwrap();
    let r = simulate::run(&catalog(), &manifests::manifests(&m).unwrap(), &pods::pods(&p).unwrap(), &[]);
    let pool = r.nodepools.iter().find(|p| p.name == "notebooks-shared").unwrap();
    assert_eq!(pool.nodeclaims, 8, "{:?}", r.nodeclaims);
    assert_eq!(pool.usage["nvidia.com/gpu"], "32");
    assert_eq!(r.pending.len(), 1);
    assert!(r.pending[0].reason.contains("NodePool notebooks-shared: all available instance types exceed limits"), "{}", r.pending[0].reason);
}

// --- minValues, capacity types, launch filters ----------------------------------------------------------------------

// provisioning/suite_test.go "should not schedule when minValues requirement is not met" (minValuesPolicy Strict):
// the pool is dropped, with the reason.
#[test]
fn min_values_strict_drops_the_pool() {
    let body = "      requirements:\n      - key: node.kubernetes.io/instance-type\n        operator: In\n        values: [m5.large, m5.xlarge]\n        minValues: 3\n";
    let r = run(&[pool("p", 10, body)], &[pod("a", "1", "")]);
    let why = reason(&r, "default/a");
    assert!(why.contains("NodePool p: minValues requirement is not met for label node.kubernetes.io/instance-type (needs 3, has 2)"), "{why}");
    assert!(r.nodepools[0].dropped.is_some());
}

const BOTH: &str = "      - key: karpenter.sh/capacity-type\n        operator: In\n        values: [spot, on-demand]\n";

// aws/karpenter-provider-aws pkg/providers/instance/instance.go getCapacityType: reserved > spot > on-demand; with spot
// unavailable (--unavailable *:*:spot, the insufficient-capacity cache) the same NodeClaim falls back to on-demand.
#[test]
fn capacity_type_priority_and_fallback() {
    let p = pool("p", 10, &(types(GENERAL) + BOTH));
    let r = run(std::slice::from_ref(&p), &[pod("a", "1", "")]);
    assert_eq!(r.nodeclaims[0].capacity_type, "spot");
    assert!(r.nodeclaims[0].price_estimate);
    let r = run_with(&[p], &[pod("a", "1", "")], &["*:*:spot"]);
    assert_eq!((r.nodeclaims[0].capacity_type.as_str(), r.nodeclaims[0].price_estimate), ("on-demand", false));
}

// --unavailable with a glob: the pool falls back to another zone, then (all zones gone) to the next NodePool by weight.
#[test]
fn unavailable_offerings_fall_back_zone_then_pool() {
    let pools = [pool("first", 100, &types(&["m5.xlarge"])), pool("second", 10, &types(&["m5.2xlarge"]))];
    let r = run_with(&pools, &[pod("a", "1", "")], &["m5.xlarge:us-east-1a:*"]);
    assert_eq!((placed(&r, "default/a").0.as_str(), r.nodeclaims[0].zone.as_str()), ("first", "us-east-1b"));
    let r = run_with(&pools, &[pod("a", "1", "")], &["m5.x*:*:*"]);
    assert_eq!(placed(&r, "default/a"), ("second".to_string(), "m5.2xlarge".to_string()));
}

// aws/karpenter-provider-aws pkg/providers/instance/filter/filter.go ExoticInstanceTypeFilter (filter_test.go "should
// reject metal instance types", "should include ... exotic resources if there are no other options"): a pod that needs
// no GPU launches the dearer m5.4xlarge rather than the cheaper g4dn.xlarge.
#[test]
fn exotic_types_dropped_at_launch() {
    let r = run(&[pool("p", 10, &types(&["g4dn.xlarge", "m5.4xlarge"]))], &[pod("a", "1", "")]);
    assert_eq!(r.nodeclaims[0].instance_type, "m5.4xlarge");
    let r = run(&[pool("p", 10, &types(&["g4dn.xlarge"]))], &[pod("a", "1", "")]);
    assert_eq!(r.nodeclaims[0].instance_type, "g4dn.xlarge");
}

// --- the examples' out/ ---------------------------------------------------------------------------------------------

fn vision_pods(n: usize) -> Vec<String> {
    vec![format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: detector\n  namespace: vision\nspec:\n  replicas: {n}\n  template:\n    spec:\n      nodeSelector:\n        gpuplan.dev/pool: vision\n      tolerations:\n      - key: nvidia.com/gpu\n        operator: Exists\n      - key: gpuplan.dev/pool\n        value: vision\n      containers:\n      - name: c\n        resources:\n          limits:\n            nvidia.com/gpu: 1\n")]
}

fn run_examples(dir: &str, pod_docs: &[String], unavailable: &[&str]) -> Report {
    let m = yaml::read_docs(&[PathBuf::from(dir)]).unwrap();
    let p = yaml::parse_docs(Path::new("pods.yaml"), &pod_docs.join("---\n")).unwrap();
    let unavailable: Vec<Unavailable> = unavailable.iter().map(|u| u.parse().unwrap()).collect();
    simulate::run(&catalog(), &manifests::manifests(&m).unwrap(), &pods::pods(&p).unwrap(), &unavailable)
}

// The tiered-fallback example (out/ml-vision): a10g-spot (100) → t4-spot (50) → a10g-on-demand (10), and the
// 12-GPU limit of the first tier sends the 13th replica to the next tier.
#[test]
fn tiered_example_falls_back_in_order() {
    let r = run_examples("out/ml-vision", &vision_pods(1), &[]);
    assert_eq!(r.nodeclaims[0].nodepool, "vision-a10g-spot");
    let r = run_examples("out/ml-vision", &vision_pods(1), &["g5.*:*:spot"]);
    assert_eq!(r.nodeclaims[0].nodepool, "vision-t4-spot");
    let r = run_examples("out/ml-vision", &vision_pods(1), &["g5.*:*:spot", "g4dn.*:*:*"]);
    assert_eq!((r.nodeclaims[0].nodepool.as_str(), r.nodeclaims[0].capacity_type.as_str()), ("vision-a10g-on-demand", "on-demand"));
    let r = run_examples("out/ml-vision", &vision_pods(13), &[]);
    assert_eq!(r.nodeclaims.iter().filter(|c| c.nodepool == "vision-a10g-spot").count(), 12);
    assert_eq!(placed(&r, "vision/detector-12").0, "vision-t4-spot");
}

// `first_placement` (what lint GP016 reads) is the report's first NodeClaim's NodePool and first pending pod's reason,
// on every example cluster, with one pod and many, each tier available, then unavailable in turn, then everything.
#[test]
fn first_placement_agrees_with_the_report() {
    let catalog = catalog();
    let labels = simulate::instances::TypeLabels::new(&catalog);
    let unavailable: [&[&str]; 5] = [&[], &["g5.*:*:spot"], &["g5.*:*:spot", "g4dn.*:*:*"], &["g5.xlarge:*:*", "g4dn.xlarge:us-east-1a:spot"], &["*:*:*"]];
    for dir in std::fs::read_dir("out").unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
        let m = manifests::manifests(&yaml::read_docs(&[dir.clone()]).unwrap()).unwrap();
        let prepared = simulate::prepare(&catalog, &labels, &m, &m.node_pools);
        for n in [1, 13, 40] {
            let p = pods::pods(&yaml::parse_docs(Path::new("pods.yaml"), &vision_pods(n).join("---\n")).unwrap()).unwrap();
            for u in unavailable {
                let u: Vec<Unavailable> = u.iter().map(|u| u.parse().unwrap()).collect();
                let r = simulate::run_prepared(&prepared, &p, &u);
                let expected = simulate::FirstPlacement { nodepool: r.nodeclaims.first().map(|c| c.nodepool.clone()), pending: r.pending.first().map(|p| p.reason.clone()) };
                assert_eq!(simulate::first_placement(&prepared, &p, &u), expected, "{} with {n} pods, unavailable {u:?}", dir.display());
            }
        }
    }
}

// The JSON shape other tools read (issue 10): nodeclaims, pending, nodepools, usd_per_hour.
#[test]
fn json_shape_is_stable() {
    let r = run_examples("out/ml-vision", &vision_pods(2), &[]);
    let v: serde_json::Value = serde_json::from_str(&simulate::report::render(&r, simulate::Format::Json)).unwrap();
    let claim = &v["nodeclaims"][0];
    for key in ["name", "nodepool", "instance_type", "capacity_type", "zone", "usd_per_hour", "pods"] {
        assert!(!claim[key].is_null(), "{key}");
    }
    assert!(v["pending"].is_array() && v["nodepools"][0]["usage"].is_object() && v["nodepools"][0]["limits"].is_object());
    assert!((v["usd_per_hour"].as_f64().unwrap() - 2.0 * claim["usd_per_hour"].as_f64().unwrap()).abs() < 1e-9);
}

// --- the command ----------------------------------------------------------------------------------------------------

fn gpuplan(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gpuplan")).args(args).output().unwrap()
}

// Exit codes: 0; 1 with --exit-code when a pod is pending; 2 with file:line on bad input.
#[test]
fn command_exit_codes_and_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("pods.yaml");
    std::fs::write(&good, vision_pods(1)[0].clone() + "---\n" + &pod("stray", "1", "")).unwrap();
    let good = good.to_str().unwrap();
    let out = gpuplan(&["simulate", "--manifests", "out/ml-vision", "--pods", good]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("default/stray: NodePool vision-a10g-spot: did not tolerate taint"));
    let out = gpuplan(&["simulate", "--manifests", "out/ml-vision", "--pods", good, "--exit-code", "--format", "markdown"]);
    assert_eq!(out.status.code(), Some(1));
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, pod("ok", "1", "") + "---\n" + &pod("p", "lots", "")).unwrap();
    let out = gpuplan(&["simulate", "--manifests", "out/ml-vision", "--pods", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.yaml:21") && err.contains("\"lots\" is not a Kubernetes quantity"), "{err}");
    assert!(out.stdout.is_empty());
}

// A topology or host-port field of the wrong type, or an enumeration the API server refuses, is an error at its line
// (core/v1 validation `validateTopologySpreadConstraints`, `validateContainerPorts`); before, `whenUnsatisfiable:
// ScheduleAnyways` read as DoNotSchedule and `hostPort: "80"` as no host port, and the placement was silently wrong.
#[test]
fn a_misspelt_or_mistyped_topology_or_host_port_field_is_an_error_at_its_line() {
    let spread = |field: &str| pod("p", "1", &format!("  topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: topology.kubernetes.io/zone\n{field}    labelSelector:\n      matchLabels: {{app: a}}\n"));
    let cases = [
        (spread("    whenUnsatisfiable: ScheduleAnyways\n"), 14, "whenUnsatisfiable must be one of DoNotSchedule, ScheduleAnyway, not \"ScheduleAnyways\""),
        (spread(""), 11, "whenUnsatisfiable must be one of DoNotSchedule, ScheduleAnyway, not missing"),
        (spread("    whenUnsatisfiable: DoNotSchedule\n    nodeTaintsPolicy: honour\n"), 15, "nodeTaintsPolicy must be one of Honor, Ignore"),
        (spread("    whenUnsatisfiable: DoNotSchedule\n    minDomains: \"2\"\n"), 15, "minDomains must be an integer from 1"),
        (pod("p", "1", "").replace("  - name: c\n", "  - name: c\n    ports:\n    - containerPort: 80\n      hostPort: \"80\"\n"), 10, "hostPort must be an integer from 0 to 65535"),
        (pod("p", "1", "  affinity:\n    podAntiAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n      - podAffinityTerm:\n          topologyKey: kubernetes.io/hostname\n"), 13, "needs a weight from 1 to 100"),
        (pod("p", "1", "").replace("  name: p\n", "  name: p\n  labels:\n    tier: 1\n"), 6, "metadata.labels.tier must be a string, not 1"),
    ];
    for (doc, line, message) in cases {
        let docs = yaml::parse_docs(Path::new("pods.yaml"), &doc).unwrap();
        let e = pods::pods(&docs).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains(&format!("pods.yaml:{line}")) && e.contains(message), "{e}\n{doc}");
    }
}

// --- compile, lint, explain ------------------------------------------------------------------------------------------

mod common;

// compile simulates every workload at max replicas on the generated NodePools: 2 GPUs per replica on a pool of
// 1-GPU nodes fits the pool's limit (E0176 passes) but no node takes a replica (nodeclaim.go fits): E0180, with
// Karpenter's reason.
#[test]
fn compile_rejects_a_workload_that_cannot_schedule() {
    let body = "pool \"vision\" preset=\"inference-on-demand\" {\n    gpu { name \"A10G\"; per-node max=1; }\n    max-accelerators 8\n}\nworkload \"detector\" namespace=\"vision\" pool=\"vision\" {\n    selector \"app\" \"detector\"\n    replicas 2\n    gpus-per-replica 2\n}\n";
    let compiled = common::compile_one(common::profile("p", 50, "al2023@v20251023", body));
    let Err(gpuplan::compile::CompileError::Profiles { diagnostics }) = &compiled.result else { panic!("compiled") };
    let e = common::with_code(diagnostics, "E0180");
    assert_eq!(e.len(), 1, "{}", gpuplan::diagnostic::render_plain(diagnostics));
    let text = gpuplan::diagnostic::render_plain(diagnostics);
    assert!(text.contains("workload `vision/detector` cannot fully schedule at 2 replicas") && text.contains("no instance type has enough resources"), "{text}");
}

// The same workload with 1 GPU per replica compiles, and explain's placement puts every replica on its pool.
#[test]
fn compile_accepts_and_places_a_schedulable_workload() {
    let body = "pool \"vision\" preset=\"inference-on-demand\" {\n    gpu { name \"A10G\"; per-node max=1; }\n    max-accelerators 8\n}\nworkload \"detector\" namespace=\"vision\" pool=\"vision\" {\n    selector \"app\" \"detector\"\n    replicas 3\n}\n";
    let compiled = common::compile_one(common::profile("p", 50, "al2023@v20251023", body));
    let c = compiled.ok();
    let placements = gpuplan::report::explain::workload_placements(c, &c.plan.clusters[0]);
    assert_eq!(placements.len(), 1);
    assert_eq!(placements[0].nodeclaims.len(), 3);
    assert!(placements[0].nodeclaims.iter().all(|n| n.nodepool == "vision" && n.instance_type.starts_with("g5.")));
    assert_eq!(placements[0].pending, 0);
}

// Lint GP016: a tier that repeats the tier before it (same GPU, same capacity type) can never receive pods: with the
// first tier out of capacity its offerings are gone too, and the pod falls through to the third tier.
#[test]
fn lint_finds_a_tier_that_never_receives_pods() {
    let body = "budget usd-per-hour=60\nallow \"GP006\"\npool \"vision\" preset=\"tiered\" {\n    gpu { per-node max=1; }\n    tier \"first\" capacity=\"spot\" {\n        gpu { name \"A10G\"; per-node max=1; }\n        weight 100\n    }\n    tier \"shadow\" capacity=\"spot\" {\n        gpu { name \"A10G\"; per-node max=1; }\n        weight 50\n    }\n    tier \"last\" capacity=\"on-demand\" {\n        gpu { name \"A10G\"; per-node max=1; }\n        weight 10\n    }\n}\n";
    let compiled = common::compile_one(common::profile("p", 50, "al2023@v20251023", body));
    let c = compiled.ok();
    let found = &c.findings;
    let gp020: Vec<_> = found.iter().filter(|f| f.code == "GP016").collect();
    assert_eq!(gp020.len(), 1, "{:?}", found.iter().map(|f| &f.diagnostic.message).collect::<Vec<_>>());
    assert_eq!(gp020[0].pool.as_deref(), Some("vision-shadow"));
    assert!(gp020[0].diagnostic.message.contains("goes to NodePool vision-last"), "{}", gp020[0].diagnostic.message);
}

// The examples' tiered pool (profiles/tiered-fallback.kdl) falls back in its declared order: no GP016.
#[test]
fn example_tiers_fall_back_in_declared_order() {
    let compiled = gpuplan::compile::compile(&gpuplan::compile::CompileOptions::default()).unwrap();
    let gaps: Vec<_> = compiled.plan.clusters.iter().flat_map(|cluster| gpuplan::check::tier_gaps(&compiled.cluster_ctx(cluster), &gpuplan::check::cluster_manifests(&compiled.manifests_of(&cluster.name), &cluster.node_daemons))).collect();
    assert!(compiled.plan.clusters.iter().any(|c| c.pools.iter().any(|p| p.tier_index > 0)), "the examples have a tiered pool");
    assert!(gaps.is_empty(), "{gaps:?}");
}

// `diff --pods`: the same pods on out/ as it is and on what compile would write. out/ here has the A10G spot tier
// narrowed to g5.2xlarge by hand; compile restores g5.xlarge, so each replica moves to the cheaper type.
#[test]
fn diff_shows_placement_changes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for entry in std::fs::read_dir("out/ml-vision").unwrap() {
        let entry = entry.unwrap();
        if entry.path().is_dir() {
            continue; // gitops/: not cluster content
        }
        std::fs::create_dir_all(out.join("ml-vision")).unwrap();
        std::fs::copy(entry.path(), out.join("ml-vision").join(entry.file_name())).unwrap();
    }
    let np = out.join("ml-vision/nodepool-vision-a10g-spot.yaml");
    let text = std::fs::read_to_string(&np).unwrap();
    std::fs::write(&np, text.replace("        - g5.2xlarge\n        - g5.4xlarge\n        - g5.8xlarge\n        - g5.xlarge\n", "        - g5.2xlarge\n")).unwrap();
    let pods = dir.path().join("pods.yaml");
    std::fs::write(&pods, &vision_pods(1)[0]).unwrap();
    let result = gpuplan(&["diff", "profiles/tiered-fallback.kdl", "--out", out.to_str().unwrap(), "--pods", pods.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(stdout.contains("ml-vision vision/detector-0: g5.2xlarge (vision-a10g-spot, spot) → g5.xlarge (vision-a10g-spot, spot), -$0.08/h"), "{stdout}\n{}", String::from_utf8_lossy(&result.stderr));
    // In the pull-request comment: a table inside the comment, before its footer.
    let result = gpuplan(&["diff", "profiles/tiered-fallback.kdl", "--out", out.to_str().unwrap(), "--pods", pods.to_str().unwrap(), "--format", "markdown"]);
    let stdout = String::from_utf8_lossy(&result.stdout);
    let row = "| `ml-vision` | `vision/detector-0` | g5.2xlarge (vision-a10g-spot, spot) | g5.xlarge (vision-a10g-spot, spot) | -0.08 |";
    let (table, footer) = (stdout.find(row), stdout.find("<sub>Worst case"));
    assert!(table.is_some() && footer.is_some() && table < footer, "{stdout}");
}

// provisioning/suite_test.go "should not create NodeClaims for StaticNodePool": a NodePool with spec.replicas is
// skipped by provisioning, and the next pool by weight takes the pod (here with replicas 0: no static node exists).
#[test]
fn a_static_node_pool_is_skipped_by_provisioning_whatever_its_weight() {
    let fixed = pool("fixed", 100, &types(GENERAL)).replace("spec:\n  weight: 100\n", "spec:\n  weight: 100\n  replicas: 0\n");
    let r = run(&[fixed, pool("dynamic", 1, &types(GENERAL))], &[pod("a", "1", "")]);
    assert_eq!(placed(&r, "default/a").0, "dynamic");
}

// static/provisioning/controller.go Reconcile: the static NodePool's replicas are launched whatever the pods, and a
// pod that fits one lands there rather than on a new NodeClaim of a dynamic pool.
#[test]
fn a_pod_lands_on_a_static_replica_before_a_dynamic_pool_launches_anything() {
    let fixed = pool("fixed", 100, &types(GENERAL)).replace("spec:\n  weight: 100\n", "spec:\n  weight: 100\n  replicas: 2\n");
    let r = run(&[fixed, pool("dynamic", 1, &types(GENERAL))], &[pod("a", "1", "")]);
    assert_eq!(placed(&r, "default/a").0, "fixed");
    assert_eq!((r.nodeclaims.len(), r.nodeclaims.iter().all(|c| c.static_node && c.nodepool == "fixed")), (2, true), "{:?}", r.nodeclaims);
}

// provisioning/scheduling/nodeclaimtemplate.go NewNodeClaimTemplate: the NodeClaim carries its NodeClass label, so a
// pod may select a NodeClass; and a NodePool whose EC2NodeClass is missing takes no pods (it is not ready).
#[test]
fn node_class_label_and_missing_node_class() {
    let sel = "  nodeSelector:\n    karpenter.k8s.aws/ec2nodeclass: default\n";
    let r = run(&[pool("p", 10, &types(GENERAL))], &[pod("a", "1", sel)]);
    assert!(r.pending.is_empty(), "{:?}", r.pending);
    let orphan = pool("orphan", 10, &types(GENERAL)).replace("name: default\n", "name: missing\n");
    let r = run(&[orphan], &[pod("a", "1", "")]);
    assert!(reason(&r, "default/a").contains("NodePool orphan: EC2NodeClass \"missing\" is not in the manifests"));
}

// aws/karpenter-provider-aws pkg/providers/instance/filter/filter.go SpotOfferingFilter (instancetype/suite_test.go
// "should order the instance types by price and only consider the spot types that are cheaper than the cheapest
// on-demand"): a NodeOverlay prices m5.large spot above its on-demand price, so the spot offering is dropped and the
// NodeClaim launches on-demand despite spot's priority.
#[test]
fn spot_dearer_than_on_demand_is_dropped() {
    let overlay = "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata:\n  name: pricey-spot\nspec:\n  weight: 10\n  price: \"0.5\"\n  requirements:\n  - key: karpenter.sh/capacity-type\n    operator: In\n    values: [spot]\n".to_string();
    let p = pool("p", 10, &(types(&["m5.large"]) + BOTH));
    let r = run(&[p.clone()], &[pod("a", "500m", "")]);
    assert_eq!(r.nodeclaims[0].capacity_type, "spot");
    let r = run(&[p, overlay], &[pod("a", "500m", "")]);
    assert_eq!((r.nodeclaims[0].capacity_type.as_str(), r.nodeclaims[0].usd_per_hour), ("on-demand", 0.096));
}

// --- reservations and EFA on the examples' out/ml-prod (issue 23 items 3, 4, 7) ---------------------------------------

/// The trainer as `gpuplan.dev/placement` on its PDB tells users to write it (out/ml-prod): the pool's nodeSelector, a
/// toleration per taint of the pool and the EFA request; `workload_toleration` false leaves the `workload=training` one
/// out, as the annotation did before.
fn trainer_pods(replicas: usize, workload_toleration: bool) -> Vec<String> {
    let extra = if workload_toleration { "      - key: workload\n        operator: Equal\n        value: training\n        effect: NoSchedule\n" } else { "" };
    vec![format!(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: trainer\n  namespace: training\nspec:\n  replicas: {replicas}\n  template:\n    spec:\n      nodeSelector:\n        gpuplan.dev/pool: training\n      tolerations:\n      - key: nvidia.com/gpu\n        operator: Exists\n        effect: NoSchedule\n      - key: gpuplan.dev/pool\n        operator: Equal\n        value: training\n        effect: NoSchedule\n{extra}      containers:\n      - name: c\n        resources:\n          limits:\n            nvidia.com/gpu: 8\n            vpc.amazonaws.com/efa: 32\n"
    )]
}

// A reservation is a tier of the pool it backs: training-reserved carries the pool's label and taints at a higher weight,
// so the trainer's first NodeClaims go there and the rest to on-demand once its limit (the reservation) is used.
// kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/scheduler.go (NodePools tried by weight, limits
// from `remainingResources`); aws/karpenter-provider-aws pkg/providers/instance/instance.go `getCapacityType` (reserved
// first when offered).
#[test]
fn trainer_fills_the_reservation_first_then_on_demand() {
    let r = run_examples("out/ml-prod", &trainer_pods(4, true), &[]);
    assert!(r.pending.is_empty(), "{:?}", r.pending);
    let claims: Vec<(&str, &str, &str)> = r.nodeclaims.iter().map(|c| (c.nodepool.as_str(), c.capacity_type.as_str(), c.instance_type.as_str())).collect();
    assert_eq!(
        claims,
        [
            ("training-reserved", "reserved", "p5.48xlarge"),
            ("training-reserved", "reserved", "p5.48xlarge"),
            ("training", "on-demand", "p5.48xlarge"),
            ("training", "on-demand", "p5.48xlarge"),
        ]
    );
    // One zone for every node of the job, reserved or not: EFA does not cross Availability Zones.
    assert!(r.nodeclaims.iter().all(|c| c.zone == "us-east-1a"), "{:?}", r.nodeclaims);
}

// What the placement annotation said before: without the `workload=training` toleration the trainer never schedules
// (kubernetes-sigs/karpenter pkg/scheduling/taints.go `ToleratesPod`; suite_test.go "should not schedule pods that do not
// tolerate taints").
#[test]
fn trainer_without_the_workload_toleration_stays_pending() {
    let r = run_examples("out/ml-prod", &trainer_pods(1, false), &[]);
    assert!(r.nodeclaims.is_empty(), "{:?}", r.nodeclaims);
    assert!(reason(&r, "training/trainer-0").contains("workload"), "{}", reason(&r, "training/trainer-0"));
}

// Karpenter advertises each type's EFA interfaces as `vpc.amazonaws.com/efa` capacity (aws/karpenter-provider-aws
// pkg/providers/instancetype/types.go `efas`: DescribeInstanceTypes MaximumEfaInterfaces, 4 on p4d, 32 on p5), so a pod
// that requests 32 fits only a p5 and one that requests 4 gets the cheaper p4d.
#[test]
fn efa_request_fits_only_types_with_that_many_interfaces() {
    let nodepool = pool("efa", 10, &types(&["p4d.24xlarge", "p5.48xlarge"]));
    let efa_pod = |name: &str, efa: u32| pod(name, "1", &format!("      limits:\n        nvidia.com/gpu: 8\n        vpc.amazonaws.com/efa: {efa}\n"));
    let r = run(&[nodepool.clone()], &[efa_pod("all-of-a-p5", 32)]);
    assert_eq!(placed(&r, "default/all-of-a-p5").1, "p5.48xlarge");
    let r = run(&[nodepool.clone()], &[efa_pod("all-of-a-p4d", 4)]);
    assert_eq!(placed(&r, "default/all-of-a-p4d").1, "p4d.24xlarge");
    let r = run(&[nodepool], &[efa_pod("more-than-any", 64)]);
    assert!(reason(&r, "default/more-than-any").contains("vpc.amazonaws.com/efa"), "{}", reason(&r, "default/more-than-any"));
}
