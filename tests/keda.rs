//! KEDA (issue 20 part 2): a workload that scales to zero or on a trigger compiles to a ScaledObject instead of an
//! HPA; its profile errors are located; the ScaledObject passes its CRD and KEDA's webhook rules; the PDB never
//! blocks a drain at one replica.

mod common;

use common::*;
use gpuplan::compile::CompileError;
use gpuplan::diagnostic::ProfileDiagnostic;
use gpuplan::render::Manifest;
use serde_json::{json, Value};

const AMI: &str = "al2023@v20251023";

fn pool() -> &'static str {
    "budget usd-per-hour=100\npool \"web\" preset=\"inference-on-demand\" {\n    gpu { name \"L4\"; per-node max=1; }\n}\n"
}

/// A profile with the L4 pool and one workload of body `body`.
fn with_workload(body: &str) -> String {
    profile("p", 10, AMI, &format!("{}workload \"batch\" namespace=\"inference\" pool=\"web\" {{\n    selector \"app\" \"batch\"\n{body}}}\n", pool()))
}

const SCALE_TO_ZERO: &str = "    replicas min=0 max=4\n    scale-to-zero cooldown=\"15m\" polling=\"20s\"\n    trigger \"prometheus\" query=\"sum(queue_depth{queue=\\\"batch\\\"})\" threshold=20 activation=2\n    autoscale gpu-utilization=70\n";

fn errors(c: &Compiled) -> Vec<ProfileDiagnostic> {
    match &c.result {
        Err(CompileError::Profiles { diagnostics }) => diagnostics.iter().filter(|d| d.is_error()).cloned().collect(),
        Err(e) => panic!("expected profile errors, got {e}"),
        Ok(_) => panic!("expected profile errors, the profile compiled"),
    }
}

#[track_caller]
fn assert_error(text: &str, code: &str, at: &str, message: &str) -> ProfileDiagnostic {
    let c = compile_one(text.to_string());
    let errors = errors(&c);
    let found = with_code(&errors, code);
    assert_eq!(found.len(), 1, "want one {code}:\n{}", gpuplan::diagnostic::render_plain(&errors));
    assert_eq!(found[0].location, c.loc("p.kdl", at), "{code} located at `{at}`");
    assert!(found[0].message.contains(message), "{code}: `{}` lacks `{message}`", found[0].message);
    assert!(found[0].help.as_deref().is_some_and(|h| !h.is_empty()), "{code} says what to do");
    found[0].clone()
}

fn objects(c: &Compiled, kind: &str) -> Vec<Manifest> {
    c.ok().manifests().into_iter().filter(|m| m.kind() == kind).collect()
}

// ---------------------------------------------------------------------------------------------- profile errors

#[test]
fn replicas_min_zero_without_scale_to_zero_is_e0220_at_the_min() {
    assert_error(&with_workload("    replicas min=0 max=4\n    autoscale\n"), "E0220", "min=0", "replicas min=0 but no `scale-to-zero`");
}

#[test]
fn scale_to_zero_with_a_floor_is_e0221_at_scale_to_zero() {
    let text = with_workload("    replicas min=2 max=4\n    scale-to-zero\n    trigger \"kueue-pending\" cluster-queue=\"research\"\n");
    assert_error(&text, "E0221", "scale-to-zero", "scales to zero, but its replicas min is 2");
}

#[test]
fn scale_to_zero_with_min_available_is_e0222_at_the_budget() {
    let text = with_workload(&format!("{SCALE_TO_ZERO}    disruption-budget min-available=1\n"));
    assert_error(&text, "E0222", "min-available=1", "min-available blocks every node drain while it runs one replica");
}

#[test]
fn scale_to_zero_on_gpu_utilization_alone_is_e0223_it_would_never_wake() {
    let text = with_workload("    replicas min=0 max=4\n    scale-to-zero\n    autoscale gpu-utilization=70\n");
    let d = assert_error(&text, "E0223", "scale-to-zero", "only GPU utilization (`autoscale`), which no pod reports at zero replicas");
    assert!(d.help.unwrap().contains("trigger \"kueue-pending\""));
}

#[test]
fn unknown_trigger_type_is_e0225_with_did_you_mean() {
    let text = with_workload("    replicas min=1 max=4\n    trigger \"promethues\" query=\"up\" threshold=1\n");
    let d = assert_error(&text, "E0225", "\"promethues\"", "unknown trigger type `promethues`");
    assert!(d.help.unwrap().contains("did you mean `prometheus`?"));
}

#[test]
fn prometheus_trigger_without_threshold_is_e0225() {
    assert_error(&with_workload("    replicas min=1 max=4\n    trigger \"prometheus\" query=\"up\"\n"), "E0225", "trigger", "needs a non-empty query= and a positive threshold=");
}

#[test]
fn the_same_trigger_twice_is_e0225_at_the_second() {
    let t = "    trigger \"kueue-pending\" cluster-queue=\"research\"\n";
    let text = with_workload(&format!("    replicas min=1 max=4\n{t}    autoscale\n{t}"));
    let c = compile_one(text.clone());
    let errors = errors(&c);
    let found = with_code(&errors, "E0225");
    assert_eq!(found.len(), 1);
    let second = text.rfind("trigger \"kueue").unwrap();
    let line = text[..second].matches('\n').count() + 1;
    assert!(found[0].location.ends_with(&format!(":{line}:5")), "{}", found[0].location);
}

#[test]
fn cooldown_that_is_no_duration_is_e0121() {
    let text = with_workload("    replicas min=0 max=4\n    scale-to-zero cooldown=\"1d\"\n    trigger \"kueue-pending\" cluster-queue=\"q\"\n");
    assert_error(&text, "E0121", "cooldown=\"1d\"", "`1d` is not a duration");
}

#[test]
fn polling_beyond_an_hour_is_e0226() {
    let text = with_workload("    replicas min=0 max=4\n    scale-to-zero polling=\"2h\"\n    trigger \"kueue-pending\" cluster-queue=\"q\"\n");
    assert_error(&text, "E0226", "polling=", "polling=\"2h\" is out of range");
}

#[test]
fn embedded_keda_crds_are_the_shared_schemas() {
    // What the binary validates ScaledObjects against (tests/validate.rs compares every embedded CRD byte for byte).
    let crds: Vec<&str> = gpuplan::validate::EMBEDDED_CRDS.iter().filter(|c| c.group == "keda.sh").map(|c| c.kind).collect();
    assert_eq!(crds, ["ScaledObject", "TriggerAuthentication"]);
}

#[test]
fn prometheus_url_that_is_not_http_is_e0227() {
    let text = profile("p", 10, AMI, &format!("{}monitoring {{\n    prometheus url=\"prometheus:9090\"\n}}\n", pool()));
    assert_error(&text, "E0227", "url=", "is not an http:// or https:// URL");
}

// ---------------------------------------------------------------------------------------------- emitted objects

#[test]
fn scale_to_zero_workload_gets_exactly_this_scaled_object() {
    let c = compile_one(with_workload(SCALE_TO_ZERO));
    let so = objects(&c, "ScaledObject");
    assert_eq!(so.len(), 1);
    let spec = gpuplan::render::to_yaml(&so[0].object["spec"]);
    let want = r#"advanced:
  horizontalPodAutoscalerConfig:
    behavior:
      scaleDown:
        policies:
        - periodSeconds: 120
          type: Pods
          value: 1
        - periodSeconds: 120
          type: Percent
          value: 10
        selectPolicy: Min
        stabilizationWindowSeconds: 600
      scaleUp:
        policies:
        - periodSeconds: 60
          type: Percent
          value: 100
        - periodSeconds: 60
          type: Pods
          value: 4
        selectPolicy: Max
        stabilizationWindowSeconds: 0
cooldownPeriod: 900
maxReplicaCount: 4
minReplicaCount: 0
pollingInterval: 20
scaleTargetRef:
  apiVersion: apps/v1
  kind: Deployment
  name: batch
triggers:
- metadata:
    query: sum(avg by (namespace, pod) (DCGM_FI_DEV_GPU_UTIL{namespace="inference",pod=~"batch-[a-z0-9]{1,10}-[a-z0-9]{5}"}))
    serverAddress: http://kube-prometheus-stack-prometheus.monitoring.svc:9090
    threshold: "70"
  metricType: AverageValue
  name: gpu-utilization
  type: prometheus
- metadata:
    activationThreshold: "2"
    query: sum(queue_depth{queue="batch"})
    serverAddress: http://kube-prometheus-stack-prometheus.monitoring.svc:9090
    threshold: "20"
  metricType: AverageValue
  name: prometheus-1
  type: prometheus
"#;
    assert_eq!(spec, want);
    assert_eq!(so[0].object["apiVersion"], "keda.sh/v1alpha1");
    assert_eq!(so[0].path, std::path::Path::new("ml/scaledobject-inference-batch.yaml"));
}

#[test]
fn a_workload_keda_scales_gets_no_hpa_and_no_adapter_rule() {
    let c = compile_one(with_workload(SCALE_TO_ZERO));
    assert!(objects(&c, "HorizontalPodAutoscaler").is_empty(), "KEDA creates and owns the HPA");
    let adapter = objects(&c, "ConfigMap").into_iter().find(|m| m.object["metadata"]["name"] == gpuplan::ops::adapter::CONFIG_MAP);
    assert!(adapter.is_none(), "KEDA reads Prometheus itself: no prometheus-adapter rule for it");
}

#[test]
fn the_same_workload_without_keda_keeps_its_hpa() {
    let c = compile_one(with_workload("    replicas min=1 max=4\n    autoscale gpu-utilization=70\n"));
    assert_eq!(objects(&c, "HorizontalPodAutoscaler").len(), 1);
    assert!(objects(&c, "ScaledObject").is_empty());
}

#[test]
fn a_trigger_alone_keeps_the_floor_and_sets_no_cooldown_or_polling() {
    let c = compile_one(with_workload("    replicas min=2 max=6\n    trigger \"kueue-pending\" cluster-queue=\"research\" per-replica=3\n"));
    let so = &objects(&c, "ScaledObject")[0].object["spec"];
    assert_eq!(so["minReplicaCount"], 2);
    // KEDA warns that both are "not relevant" unless minReplicaCount is 0 (scaledobject_webhook.go verifyScaledObjects).
    assert!(so.get("cooldownPeriod").is_none() && so.get("pollingInterval").is_none(), "{so}");
    assert_eq!(so["triggers"], json!([{
        "type": "prometheus", "name": "kueue-pending-research", "metricType": "AverageValue",
        "metadata": {
            "serverAddress": "http://kube-prometheus-stack-prometheus.monitoring.svc:9090",
            "query": "sum(kueue_pending_workloads{cluster_queue=\"research\",status=\"active\"})",
            "threshold": "3", "activationThreshold": "0",
        },
    }]));
}

#[test]
fn triggers_read_the_prometheus_the_monitoring_block_names() {
    let text = profile("p", 10, AMI, &format!("{}monitoring namespace=\"obs\" {{\n    prometheus url=\"https://thanos.obs.svc:10902\"\n}}\nworkload \"batch\" namespace=\"inference\" pool=\"web\" {{\n    selector \"app\" \"batch\"\n{SCALE_TO_ZERO}}}\n", pool()));
    let c = compile_one(text);
    let so = &objects(&c, "ScaledObject")[0].object;
    for t in so["spec"]["triggers"].as_array().unwrap() {
        assert_eq!(t["metadata"]["serverAddress"], "https://thanos.obs.svc:10902");
    }
}

#[test]
fn default_prometheus_follows_the_monitoring_namespace() {
    let text = profile("p", 10, AMI, &format!("{}monitoring namespace=\"obs\"\nworkload \"batch\" namespace=\"inference\" pool=\"web\" {{\n    selector \"app\" \"batch\"\n{SCALE_TO_ZERO}}}\n", pool()));
    let c = compile_one(text);
    assert_eq!(objects(&c, "ScaledObject")[0].object["spec"]["triggers"][0]["metadata"]["serverAddress"], "http://kube-prometheus-stack-prometheus.obs.svc:9090");
}

#[test]
fn scale_to_zero_pdb_is_max_unavailable_one() {
    let c = compile_one(with_workload(SCALE_TO_ZERO));
    let pdb = &objects(&c, "PodDisruptionBudget")[0].object["spec"];
    assert_eq!(pdb["maxUnavailable"], 1);
    assert!(pdb.get("minAvailable").is_none());
}

#[test]
fn scale_to_zero_to_one_replica_has_no_pdb() {
    let c = compile_one(with_workload("    replicas min=0 max=1\n    scale-to-zero\n    trigger \"kueue-pending\" cluster-queue=\"q\"\n"));
    assert!(objects(&c, "PodDisruptionBudget").is_empty(), "one pod at most: nothing a budget could keep up");
}

#[test]
fn training_pool_workload_gets_the_slow_behaviour() {
    let text = profile("p", 10, AMI, "pool \"train\" preset=\"training-on-demand\" {\n    gpu { name \"A10G\"; per-node max=1; }\n    max-accelerators 8\n}\nworkload \"w\" namespace=\"ml\" pool=\"train\" {\n    selector \"app\" \"w\"\n    replicas min=1 max=4\n    trigger \"kueue-pending\" cluster-queue=\"q\"\n}\n");
    let c = compile_one(text);
    let behavior = &objects(&c, "ScaledObject")[0].object["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"];
    assert_eq!(behavior["scaleDown"]["stabilizationWindowSeconds"], 3600);
}

// ---------------------------------------------------------------------------------------------- schema and webhook

#[test]
fn emitted_scaled_objects_pass_the_keda_crd() {
    let c = compile_one(with_workload(SCALE_TO_ZERO));
    let so = &objects(&c, "ScaledObject")[0].object;
    let violations = gpuplan::validate::Validator::builtin().validate(so);
    assert!(violations.is_empty(), "{violations:?}");
}

#[test]
fn keda_crd_rejects_min_above_max() {
    let c = compile_one(with_workload(SCALE_TO_ZERO));
    let mut so = objects(&c, "ScaledObject")[0].object.clone();
    so["spec"]["minReplicaCount"] = json!(5);
    let violations = gpuplan::validate::Validator::builtin().validate(&so);
    assert!(violations.iter().any(|v| v.message.contains("minReplicaCount must be less than or equal to maxReplicaCount")), "{violations:?}");
}

#[test]
fn keda_webhook_rules_reject_duplicate_trigger_names_and_long_hpa_names() {
    // kedacore/keda v2.20.2 apis/keda/v1alpha1: scaletriggers_types.go ValidateTriggers; scaledobject_webhook.go verifyName.
    let c = compile_one(with_workload(SCALE_TO_ZERO));
    let mut so: Value = objects(&c, "ScaledObject")[0].object.clone();
    assert!(gpuplan::ops::keda::check_scaled_object(&so).is_empty());
    so["spec"]["triggers"][1]["name"] = json!("gpu-utilization");
    so["metadata"]["name"] = json!("x".repeat(60));
    let messages: Vec<String> = gpuplan::ops::keda::check_scaled_object(&so).into_iter().map(|v| v.message).collect();
    assert!(messages.iter().any(|m| m.contains("triggerName \"gpu-utilization\" is defined multiple times")), "{messages:?}");
    assert!(messages.iter().any(|m| m.contains("the HPA KEDA derives, `keda-hpa-xxx")), "{messages:?}");
}

#[test]
fn a_template_that_also_writes_an_hpa_for_the_target_fails_the_compile() {
    // A --templates override of the ScaledObject template that renders an HPA-scaled twin is caught by KEDA's
    // verifyHpas rule in check::ops; here the two objects are checked directly.
    let c = compile_one(with_workload(SCALE_TO_ZERO));
    let so = objects(&c, "ScaledObject").remove(0);
    let mut hpa = so.clone();
    hpa.object = json!({ "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": { "name": "batch-hpa", "namespace": "inference" },
        "spec": { "scaleTargetRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": "batch" }, "maxReplicas": 4 } });
    hpa.path = "ml/horizontalpodautoscaler-inference-batch-hpa.yaml".into();
    let violations = gpuplan::check::ops::rendered(&[so, hpa]);
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert!(violations[0].1.message.contains("Deployment inference/batch is also scaled by HorizontalPodAutoscaler batch-hpa"), "{violations:?}");
}

#[test]
fn same_target_in_two_clusters_is_no_clash() {
    let c = compile_one(with_workload(SCALE_TO_ZERO));
    let so = objects(&c, "ScaledObject").remove(0);
    let mut other = so.clone();
    other.path = "other/scaledobject-inference-batch.yaml".into();
    assert!(gpuplan::check::ops::rendered(&[so, other]).is_empty());
}
