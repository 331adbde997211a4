use std::path::Path;

use gpuplan::emit::diff::{
    ClusterCost, CostMeasure, Detail, DiffFormat, ObjectChange, cluster_costs, render_diff,
    semantic_changes,
};
use gpuplan::emit::ChangeKind;
use gpuplan::layout::{OutputTree, with_header};

const SRC: &str = "profiles/llm-inference.kdl";

#[allow(clippy::too_many_arguments)]
fn nodepool(
    name: &str,
    types: &[&str],
    capacity: &[&str],
    gpu_limit: &str,
    weight: u32,
    consolidate_after: &str,
    expected: &str,
    worst: &str,
) -> String {
    let types: String = types
        .iter()
        .map(|t| format!("            - {t}\n"))
        .collect();
    let capacity: String = capacity
        .iter()
        .map(|t| format!("            - {t}\n"))
        .collect();
    format!(
        r#"apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: {name}
  annotations:
    gpuplan.dev/budget-usd-per-hour: "150.00"
    gpuplan.dev/at-limit-usd-per-hour: "{expected}"
    gpuplan.dev/source: {SRC}
    gpuplan.dev/worst-case-usd-per-hour: "{worst}"
spec:
  weight: {weight}
  limits:
    nvidia.com/gpu: "{gpu_limit}"
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: {consolidate_after}
    budgets:
      - nodes: "10%"
  template:
    metadata:
      labels:
        gpuplan.dev/pool: {name}
    spec:
      expireAfter: 720h
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: gpu-al2023
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values:
{types}        - key: karpenter.sh/capacity-type
          operator: In
          values:
{capacity}        - key: karpenter.k8s.aws/instance-gpu-memory
          operator: Gt
          values:
            - "23000"
      taints:
        - key: nvidia.com/gpu
          effect: NoSchedule
"#
    )
}

const PDB: &str = r#"apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: llm-server
  namespace: inference
spec:
  minAvailable: 2
  selector:
    matchLabels:
      app: llm-server
"#;

const HPA_OLD: &str = r#"apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: llm-server
  namespace: inference
spec:
  minReplicas: 2
  maxReplicas: 8
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: llm-server
"#;

fn batch_hpa() -> String {
    HPA_OLD
        .replace("llm-server", "batch-worker")
        .replace("inference", "batch")
}

fn trees() -> (OutputTree, OutputTree) {
    let mut old = OutputTree::default();
    let mut new = OutputTree::default();
    // Spot pool: +g6e.xlarge +g6e.2xlarge, -g5.xlarge, limit 40→48, weight 50→60, consolidateAfter, costs.
    old.insert(
        "ml-prod/nodepool-gpu-inference-spot.yaml",
        with_header(
            SRC,
            &nodepool(
                "gpu-inference-spot",
                &["g5.xlarge", "g5.2xlarge", "g6.xlarge", "g6.2xlarge"],
                &["spot"],
                "40",
                50,
                "5m",
                "31.20",
                "112.00",
            ),
        ),
    );
    new.insert(
        "ml-prod/nodepool-gpu-inference-spot.yaml",
        with_header(
            SRC,
            &nodepool(
                "gpu-inference-spot",
                &[
                    "g5.2xlarge",
                    "g6.xlarge",
                    "g6.2xlarge",
                    "g6e.xlarge",
                    "g6e.2xlarge",
                ],
                &["spot"],
                "48",
                60,
                "10m",
                "35.84",
                "130.40",
            ),
        ),
    );
    // On-demand pool: unchanged as data, only re-formatted (extra comment) → no semantic change.
    let od = nodepool(
        "gpu-inference-od",
        &["g6.xlarge"],
        &["on-demand"],
        "8",
        10,
        "5m",
        "6.40",
        "12.80",
    );
    old.insert(
        "ml-prod/nodepool-gpu-inference-od.yaml",
        with_header(SRC, &od),
    );
    new.insert(
        "ml-prod/nodepool-gpu-inference-od.yaml",
        with_header(SRC, &format!("# pool for fallback\n{od}")),
    );
    // PDB removed, HPA added.
    old.insert(
        "ml-prod/poddisruptionbudget-inference-llm-server.yaml",
        with_header(SRC, PDB),
    );
    new.insert(
        "ml-prod/horizontalpodautoscaler-inference-llm-server.yaml",
        with_header(SRC, HPA_OLD),
    );
    // A second cluster: a new training pool and an HPA change elsewhere.
    new.insert(
        "ml-train/nodepool-train-od.yaml",
        with_header(
            "profiles/train.kdl",
            &nodepool(
                "train-od",
                &["p5.48xlarge"],
                &["on-demand"],
                "16",
                20,
                "Never",
                "98.32",
                "196.64",
            ),
        ),
    );
    old.insert(
        "ml-train/horizontalpodautoscaler-batch-worker.yaml",
        with_header("profiles/train.kdl", &batch_hpa()),
    );
    new.insert(
        "ml-train/horizontalpodautoscaler-batch-worker.yaml",
        with_header(
            "profiles/train.kdl",
            &batch_hpa().replace("maxReplicas: 8", "maxReplicas: 12"),
        ),
    );
    (old, new)
}

#[test]
fn semantic_changes_describe_nodepool_changes_in_words() {
    let (old, new) = trees();
    let changes = semantic_changes(&old, &new);
    let summaries: Vec<&str> = changes.iter().map(|c| c.summary.as_str()).collect();
    assert_eq!(
        summaries,
        vec![
            "HorizontalPodAutoscaler inference/llm-server: added",
            "NodePool gpu-inference-spot: +g6e.xlarge, +g6e.2xlarge, -g5.xlarge, limit nvidia.com/gpu 40→48, \
             weight 50→60, consolidateAfter 5m→10m, at-limit (cheapest type) $/h 31.20→35.84 (+4.64), \
             worst case (steady state) $/h 112.00→130.40 (+18.40)",
            "PodDisruptionBudget inference/llm-server: removed",
            "HorizontalPodAutoscaler batch/batch-worker: spec.maxReplicas 8→12",
            "NodePool train-od: added (1 instance type, on-demand, limit nvidia.com/gpu 16, weight 20, \
             at-limit (cheapest type) $/h 98.32, worst case (steady state) $/h 196.64, budget $/h 150.00)",
        ]
    );
    let spot = changes
        .iter()
        .find(|c| c.name == "gpu-inference-spot")
        .unwrap();
    assert_eq!(spot.cluster, "ml-prod");
    assert_eq!(spot.change, ChangeKind::Modified);
    assert_eq!(
        spot.path,
        Path::new("ml-prod/nodepool-gpu-inference-spot.yaml")
    );
    assert_eq!(
        spot.details[0],
        Detail::InstanceTypes {
            added: vec!["g6e.xlarge".into(), "g6e.2xlarge".into()],
            removed: vec!["g5.xlarge".into()]
        }
    );
    assert!((spot.worst_case_delta().unwrap() - 18.40).abs() < 1e-9);
    // The re-formatted on-demand pool is not a semantic change.
    assert!(changes.iter().all(|c| c.name != "gpu-inference-od"));

    let costs = cluster_costs(&old, &new);
    let worst: Vec<&ClusterCost> = costs
        .iter()
        .filter(|c| c.measure == CostMeasure::WorstCase)
        .collect();
    assert_eq!(worst.len(), 2);
    // The budget is per profile: two pools of one profile count it once.
    let budget = costs
        .iter()
        .find(|c| c.measure == CostMeasure::Budget && c.cluster == "ml-prod")
        .unwrap();
    assert_eq!((budget.old, budget.new), (Some(150.0), Some(150.0)));
    assert_eq!(
        (worst[0].cluster.as_str(), worst[0].old, worst[0].new),
        ("ml-prod", Some(124.80), Some(143.20))
    );
    assert_eq!(
        (worst[1].cluster.as_str(), worst[1].old, worst[1].new),
        ("ml-train", None, Some(196.64))
    );
}

#[test]
fn other_nodepool_fields_and_other_kinds_by_json_path() {
    let base = nodepool(
        "p",
        &["g6.xlarge"],
        &["spot"],
        "8",
        10,
        "5m",
        "1.00",
        "2.00",
    );
    let changed = base
        .replace("expireAfter: 720h", "expireAfter: Never")
        .replace("\"23000\"", "\"46000\"")
        .replace(
            "- nodes: \"10%\"",
            "- nodes: \"0\"\n        schedule: \"0 9 * * 1-5\"\n        duration: 8h",
        )
        .replace(
            "            - spot\n",
            "            - spot\n            - on-demand\n",
        );
    let mut old = OutputTree::default();
    let mut new = OutputTree::default();
    old.insert("c/p.yaml", with_header(SRC, &base));
    new.insert("c/p.yaml", with_header(SRC, &changed));
    let c = semantic_changes(&old, &new);
    assert_eq!(c.len(), 1);
    assert_eq!(
        c[0].summary,
        "NodePool p: capacity types +on-demand, requirement karpenter.k8s.aws/instance-gpu-memory Gt [23000]→Gt [46000], \
         budgets [nodes 10%]→[nodes 0 schedule \"0 9 * * 1-5\" for 8h], spec.template.spec.expireAfter 720h→Never"
    );
}

#[test]
fn unchanged_trees_have_no_changes() {
    let (old, _) = trees();
    assert!(semantic_changes(&old, &old).is_empty());
    assert_eq!(render_diff(&old, &old, DiffFormat::Unified), "");
    assert_eq!(
        render_diff(&old, &old, DiffFormat::Markdown),
        "## gpuplan: no changes to out/\n"
    );
    assert_eq!(render_diff(&old, &old, DiffFormat::Json), "[]\n");
}

/// Out/ written before the at-limit figure got its name carries it as `gpuplan.dev/expected-usd-per-hour`: a base
/// revision's NodePool with the old name and a head's with the new one and the same value have the same cost.
#[test]
fn a_base_nodepool_with_the_former_expected_annotation_is_read_as_the_at_limit_cost() {
    let pool = |annotation: &str| nodepool("p", &["g5.xlarge"], &["spot"], "8", 10, "5m", "31.20", "112.00").replace("gpuplan.dev/at-limit-usd-per-hour", annotation);
    let (mut old, mut new) = (OutputTree::default(), OutputTree::default());
    old.insert("ml-prod/nodepool-p.yaml", with_header(SRC, &pool("gpuplan.dev/expected-usd-per-hour")));
    new.insert("ml-prod/nodepool-p.yaml", with_header(SRC, &pool("gpuplan.dev/at-limit-usd-per-hour")));
    // The file changes (the annotation's name), its figures do not.
    let changes = semantic_changes(&old, &new);
    assert!(changes.iter().all(|c| c.details.is_empty()), "a renamed annotation is no cost change: {changes:?}");
    let costs = cluster_costs(&old, &new);
    let at_limit = costs.iter().find(|c| c.measure == CostMeasure::AtLimit).expect("the at-limit figure of both");
    assert_eq!((at_limit.old, at_limit.new), (Some(31.2), Some(31.2)));
}

#[test]
fn markdown_snapshot() {
    let (old, new) = trees();
    insta::assert_snapshot!("markdown", render_diff(&old, &new, DiffFormat::Markdown));
}

#[test]
fn unified_snapshot() {
    let (old, new) = trees();
    let unified = render_diff(&old, &new, DiffFormat::Unified);
    assert!(unified.contains("--- a/out/ml-prod/nodepool-gpu-inference-spot.yaml\n"));
    assert!(unified.contains("+++ b/out/ml-prod/nodepool-gpu-inference-spot.yaml\n"));
    assert!(unified.contains("--- /dev/null\n+++ b/out/ml-train/nodepool-train-od.yaml\n"));
    assert!(unified.contains(
        "--- a/out/ml-prod/poddisruptionbudget-inference-llm-server.yaml\n+++ /dev/null\n"
    ));
    insta::assert_snapshot!("unified", unified);
}

#[test]
fn json_parses_as_the_object_change_list() {
    let (old, new) = trees();
    let json = render_diff(&old, &new, DiffFormat::Json);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let list = v.as_array().unwrap();
    assert_eq!(list.len(), 5);
    let spot = list
        .iter()
        .find(|o| o["name"] == "gpu-inference-spot")
        .unwrap();
    assert_eq!(spot["kind"], "NodePool");
    assert_eq!(spot["api_version"], "karpenter.sh/v1");
    assert_eq!(spot["cluster"], "ml-prod");
    assert_eq!(spot["change"], "modified");
    assert_eq!(spot["details"][0]["type"], "instance_types");
    assert_eq!(
        spot["details"][0]["added"],
        serde_json::json!(["g6e.xlarge", "g6e.2xlarge"])
    );
    let limit = spot["details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["type"] == "limit")
        .unwrap();
    assert_eq!(
        limit,
        &serde_json::json!({"type": "limit", "resource": "nvidia.com/gpu", "old": "40", "new": "48"})
    );
    let worst = spot["details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["measure"] == "worst_case")
        .unwrap();
    assert_eq!(worst["old"], 112.0);
    assert_eq!(worst["new"], 130.4);
    // Same content as semantic_changes.
    let direct: Vec<ObjectChange> = semantic_changes(&old, &new);
    assert_eq!(serde_json::to_value(&direct).unwrap(), v);
}

#[test]
fn unparsable_yaml_is_reported_not_fatal() {
    let mut old = OutputTree::default();
    let mut new = OutputTree::default();
    old.insert("c/bad.yaml", with_header(SRC, "a: [1, 2\n"));
    new.insert("c/bad.yaml", with_header(SRC, "a: [1, 3\n"));
    let c = semantic_changes(&old, &new);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].kind, "File");
    assert!(
        c[0].summary.contains("not compared as YAML"),
        "{}",
        c[0].summary
    );
}

/// A Kueue queue's accelerator quota that changes is a row of the comment's queue table (what a team may run at
/// once without borrowing); its cpu quota, which follows, is not.
#[test]
fn queue_quota_changes_are_a_table_in_the_comment() {
    let queue = |gpus: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: team-a\nspec:\n  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n    - name: training\n      resources:\n      - name: cpu\n        nominalQuota: \"{gpus}0\"\n      - name: nvidia.com/gpu\n        nominalQuota: \"{gpus}\"\n"
        )
    };
    let tree = |gpus: &str| {
        let mut t = OutputTree::default();
        t.insert("ml-prod/clusterqueue-team-a.yaml", with_header(SRC, &queue(gpus)));
        t
    };
    let md = render_diff(&tree("16"), &tree("8"), DiffFormat::Markdown);
    assert!(md.contains("#### Queues\n\n| ClusterQueue | Flavor | Resource | Nominal quota |\n|---|---|---|---|\n| `team-a` | `training` | nvidia.com/gpu | 16 → 8 |\n"), "{md}");
    assert!(!md.contains("| cpu |"), "{md}");
}

/// The examples' out/ with the llm-inference AMI bumped and a taint added to the training pool, drift judged on the
/// committed catalog: the JSON is docs/diff.schema.json's shape, and carries each verdict's roll or stuck drift.
#[test]
fn json_with_drift_matches_the_documented_schema() {
    use gpuplan::emit::diff::drift_review::{Running, attach, pool_drifts};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let old = gpuplan::emit::read_tree(&root.join("out")).unwrap();
    let mut new = old.clone();
    let edit = |tree: &mut OutputTree, file: &str, from: &str, to: &str| {
        let text = tree.files.get_mut(Path::new(file)).unwrap();
        assert!(text.contains(from), "{file} has no {from}");
        *text = text.replacen(from, to, 1);
    };
    edit(&mut new, "ml-prod/ec2nodeclass-llm-inference.yaml", "alias: al2023@v20251023", "alias: al2023@v20251111");
    // Both tiers of the pool: with one left as it was, the pods still fit there.
    for tier in ["ml-prod/nodepool-training.yaml", "ml-prod/nodepool-training-reserved.yaml"] {
        edit(&mut new, tier, "      taints:\n", "      taints:\n      - effect: NoSchedule\n        key: dedicated\n");
    }
    let catalog = gpuplan::catalog::Catalog::load(&root.join("catalogs"), "us-east-1").unwrap();
    let labels = gpuplan::simulate::instances::TypeLabels::new(&catalog);
    let running = Running { merge_unix: gpuplan::forecast::trace::START_UNIX, ..Running::default() };
    let drifts = pool_drifts(&old, &new, &|region: &str| (region == "us-east-1").then_some((&catalog, &labels)), &running);
    let roll = drifts.iter().find(|d| d.nodepool == "llm-inference-spot").and_then(|d| d.roll.clone()).expect("the AMI bump's roll");
    assert!(roll.replaced == roll.drifting && roll.drifting > 0 && roll.at_once >= 1, "{roll:?}");
    assert!(drifts.iter().any(|d| d.nodepool == "training" && d.stuck() && d.roll.is_none()), "{drifts:#?}");
    let mut changes = semantic_changes(&old, &new);
    attach(&mut changes, drifts);
    let value = serde_json::to_value(&changes).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(root.join("docs/diff.schema.json")).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let errors: Vec<String> = validator.iter_errors(&value).map(|e| format!("{e} at {}", e.instance_path())).take(10).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let plain = serde_json::from_str::<serde_json::Value>(&render_diff(&old, &new, DiffFormat::Json)).unwrap();
    assert!(validator.is_valid(&plain), "the list without drift is the same shape");
}
