//! Operations manifests: PDB, HPA, PrometheusRule, ServiceMonitor, ClusterPolicy, time-slicing ConfigMap.
//! Every generated object is checked against its CRD schema (or, for built-in kinds, its required fields),
//! the objects are checked against the pools they serve, and each error class has a test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gpuplan::compile::{compile, Compilation, CompileError, CompileOptions};
use gpuplan::solve::mig::MigConfigs;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn options(profiles: Vec<PathBuf>) -> CompileOptions {
    CompileOptions { profiles, catalogs_dir: root().join("catalogs"), templates_dir: None }
}

fn examples() -> Compilation {
    compile(&options(vec![root().join("profiles")])).expect("the example profiles compile")
}

fn objects(c: &Compilation, kind: &str) -> Vec<Value> {
    c.manifests().into_iter().filter(|m| m.kind() == kind).map(|m| m.object).collect()
}

fn cluster_of(path: &Path) -> String {
    path.components().next().unwrap().as_os_str().to_string_lossy().into_owned()
}

// ---------------------------------------------------------------- schema checks (until src/validate lands)

/// The CRD's openAPIV3Schema for its served version.
fn crd_schema(file: &str) -> Value {
    let candidates = [root().join("src/crds").join(file), root().join("tests/fixtures/shared/schemas").join(file)];
    let path = candidates.iter().find(|p| p.exists()).unwrap_or_else(|| panic!("CRD {file} not found in {candidates:?}"));
    let crd: Value = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

/// A structural check: types, required fields, enums, unknown fields where the schema lists properties.
fn check(schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    if schema.get("x-kubernetes-int-or-string").and_then(Value::as_bool) == Some(true) {
        if !(value.is_i64() || value.is_u64() || value.is_string()) {
            errors.push(format!("{at}: want int or string, got {value}"));
        }
        return;
    }
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let ok = match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        _ => true,
    };
    if !ok {
        errors.push(format!("{at}: want {ty}, got {value}"));
        return;
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        if !values.contains(value) {
            errors.push(format!("{at}: {value} not in {values:?}"));
        }
    }
    if let Some(obj) = value.as_object() {
        for req in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !obj.contains_key(req.as_str().unwrap()) {
                errors.push(format!("{at}: missing required field {req}"));
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties");
        let preserve = schema.get("x-kubernetes-preserve-unknown-fields").and_then(Value::as_bool) == Some(true);
        for (k, v) in obj {
            if at.is_empty() && k == "metadata" {
                continue;
            }
            match (props.and_then(|p| p.get(k)), additional) {
                (Some(s), _) => check(s, v, &format!("{at}.{k}"), errors),
                (None, Some(a)) if a.is_object() => check(a, v, &format!("{at}.{k}"), errors),
                (None, _) if props.is_some() && !preserve => errors.push(format!("{at}: unknown field {k}")),
                _ => {}
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), value.as_array()) {
        for (i, v) in arr.iter().enumerate() {
            check(items, v, &format!("{at}[{i}]"), errors);
        }
    }
}

fn validate_crd(file: &str, object: &Value) {
    let mut errors = Vec::new();
    check(&crd_schema(file), object, "", &mut errors);
    assert!(errors.is_empty(), "{} {} violates {file}:\n{}", object["kind"], object["metadata"]["name"], errors.join("\n"));
}

fn metadata_ok(o: &Value, namespaced: bool) {
    let md = &o["metadata"];
    assert!(md["name"].as_str().is_some_and(|n| !n.is_empty() && n.len() <= 253), "{o}");
    assert_eq!(namespaced, md["namespace"].is_string(), "namespace of {}", md["name"]);
    assert_eq!(md["labels"]["app.kubernetes.io/managed-by"], "gpuplan", "{}", md["name"]);
    for key in ["gpuplan.dev/profile", "gpuplan.dev/source", "gpuplan.dev/catalog"] {
        assert!(md["annotations"][key].is_string(), "{} lacks {key}", md["name"]);
    }
}

#[test]
fn every_ops_object_validates() {
    let c = examples();
    let manifests = c.manifests();
    let kinds: BTreeSet<&str> = manifests.iter().map(|m| m.kind()).collect();
    for kind in ["PodDisruptionBudget", "HorizontalPodAutoscaler", "PrometheusRule", "ServiceMonitor", "ClusterPolicy", "ConfigMap"] {
        assert!(kinds.contains(kind), "the examples exercise {kind}: {kinds:?}");
    }
    // The project's validator (CRD schemas + CEL, built-in kinds): every object, ops or not (but the Argo CD /
    // Flux apps, whose CRDs gpuplan does not ship; tests/examples.rs checks those).
    let validator = gpuplan::validate::Validator::builtin();
    for m in manifests.iter().filter(|m| !gpuplan::render::is_gitops_app(&m.path)) {
        let violations = validator.validate(&m.object);
        assert!(violations.is_empty(), "{}: {violations:?}", m.path.display());
    }
    for o in &objects(&c, "PrometheusRule") {
        metadata_ok(o, true);
        validate_crd("prometheus-operator/monitoring.coreos.com_prometheusrules.yaml", o);
    }
    for o in &objects(&c, "ServiceMonitor") {
        metadata_ok(o, true);
        validate_crd("prometheus-operator/monitoring.coreos.com_servicemonitors.yaml", o);
    }
    // The checker itself catches what it should.
    let mut bad = objects(&c, "ClusterPolicy")[0].clone();
    bad["spec"]["driver"]["bogus"] = Value::Bool(true);
    bad["spec"]["mig"]["strategy"] = Value::String("half".into());
    bad["spec"].as_object_mut().unwrap().remove("gfd");
    let mut errors = Vec::new();
    check(&crd_schema("gpu-operator/nvidia.com_clusterpolicies.yaml"), &bad, "", &mut errors);
    assert_eq!(errors.len(), 3, "{errors:?}");
    for o in &objects(&c, "ClusterPolicy") {
        metadata_ok(o, false);
        validate_crd("gpu-operator/nvidia.com_clusterpolicies.yaml", o);
    }
    for o in &objects(&c, "PodDisruptionBudget") {
        metadata_ok(o, true);
        assert_eq!(o["apiVersion"], "policy/v1");
        let spec = o["spec"].as_object().unwrap();
        assert_eq!(spec.contains_key("minAvailable") as u8 + spec.contains_key("maxUnavailable") as u8, 1, "{o}");
        assert!(o["spec"]["selector"]["matchLabels"].as_object().is_some_and(|m| !m.is_empty()), "{o}");
    }
    for o in &objects(&c, "HorizontalPodAutoscaler") {
        metadata_ok(o, true);
        assert_eq!(o["apiVersion"], "autoscaling/v2");
        let spec = &o["spec"];
        assert!(["Deployment", "StatefulSet"].contains(&spec["scaleTargetRef"]["kind"].as_str().unwrap()));
        assert_eq!(spec["scaleTargetRef"]["apiVersion"], "apps/v1");
        assert!(spec["minReplicas"].as_u64().unwrap() >= 1);
        assert!(spec["minReplicas"].as_u64() <= spec["maxReplicas"].as_u64());
        let metric = &spec["metrics"][0];
        assert_eq!(metric["type"], "Pods");
        assert!(["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"].contains(&metric["pods"]["metric"]["name"].as_str().unwrap()), "{metric}");
        assert_eq!(metric["pods"]["target"]["type"], "AverageValue");
        assert!(metric["pods"]["target"]["averageValue"].is_string(), "a quantity is a string");
    }
    for o in &objects(&c, "ConfigMap") {
        metadata_ok(o, true);
        assert!(o["data"].as_object().unwrap().values().all(Value::is_string));
    }
}

#[test]
fn hpa_behavior_fits_the_intent() {
    let c = examples();
    let hpas = objects(&c, "HorizontalPodAutoscaler");
    let llm = hpas.iter().find(|h| h["metadata"]["name"] == "llm-server").expect("llm-server HPA");
    let b = &llm["spec"]["behavior"];
    assert_eq!(b["scaleUp"]["stabilizationWindowSeconds"], 0);
    assert!(b["scaleUp"]["policies"].as_array().unwrap().iter().any(|p| p["type"] == "Percent" && p["value"] == 100 && p["periodSeconds"] == 60));
    assert!(b["scaleUp"]["policies"].as_array().unwrap().iter().any(|p| p["type"] == "Pods" && p["value"] == 4));
    assert!(b["scaleDown"]["stabilizationWindowSeconds"].as_u64().unwrap() >= 600);
    assert_eq!(b["scaleDown"]["selectPolicy"], "Min");
    assert_eq!(llm["spec"]["metrics"][0]["pods"]["target"]["averageValue"], "70");
    assert_eq!((llm["spec"]["minReplicas"].as_u64(), llm["spec"]["maxReplicas"].as_u64()), (Some(2), Some(12)));
    // Training asks for no autoscaler: none is generated, but its PDB is.
    assert!(!hpas.iter().any(|h| h["metadata"]["name"] == "trainer"));
    let pdbs = objects(&c, "PodDisruptionBudget");
    let trainer = pdbs.iter().find(|p| p["metadata"]["name"] == "trainer").expect("trainer PDB");
    assert_eq!(trainer["metadata"]["namespace"], "training");
    assert_eq!(trainer["spec"]["maxUnavailable"], 1);
    assert_eq!(trainer["spec"]["selector"]["matchLabels"]["app"], "trainer");
    let llm_pdb = pdbs.iter().find(|p| p["metadata"]["name"] == "llm-server").unwrap();
    assert_eq!(llm_pdb["spec"]["minAvailable"], 1);
    assert_eq!(llm_pdb["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"], "llm-server");
}

#[test]
fn alerts_name_every_nodepool_and_budgeted_profile() {
    let c = examples();
    for cluster in &c.plan.clusters {
        let manifests = c.manifests();
        let rule = manifests
            .iter()
            .find(|m| m.kind() == "PrometheusRule" && cluster_of(&m.path) == cluster.name)
            .unwrap_or_else(|| panic!("PrometheusRule for {}", cluster.name));
        let rules: Vec<&Value> = rule.object["spec"]["groups"].as_array().unwrap().iter().flat_map(|g| g["rules"].as_array().unwrap()).collect();
        for r in &rules {
            assert!(r["for"].is_string(), "{r}");
            assert!(r["labels"]["severity"].is_string(), "{r}");
            for a in ["summary", "description", "runbook"] {
                assert!(r["annotations"][a].as_str().is_some_and(|s| !s.is_empty()), "{r} lacks {a}");
            }
        }
        for pool in &cluster.pools {
            let r = rules
                .iter()
                .find(|r| r["alert"] == "GpuplanNodePoolNearLimit" && r["labels"]["nodepool"] == pool.name.as_str())
                .unwrap_or_else(|| panic!("no near-limit alert for NodePool {}", pool.name));
            assert!(r["expr"].as_str().unwrap().contains(&format!("nodepool=\"{}\"", pool.name)));
            assert!(r["annotations"]["summary"].as_str().unwrap().contains(&pool.name));
        }
        for profile in cluster.profiles.iter().filter(|p| p.budget_usd_per_hour.is_some()) {
            let r = rules
                .iter()
                .find(|r| r["alert"] == "GpuplanProfileOverBudget" && r["labels"]["gpuplan_profile"] == profile.name.as_str())
                .unwrap_or_else(|| panic!("no budget alert for profile {}", profile.name));
            // Every metered NodePool of the profile is in the cost sum; reserved-only ones are a constant.
            let expr = r["expr"].as_str().unwrap();
            let listed: Vec<&str> = expr.split("nodepool=~\"").nth(1).and_then(|s| s.split('"').next()).map(|s| s.split('|').collect()).unwrap_or_default();
            for pool in cluster.pools.iter().filter(|p| p.profile == profile.name) {
                let reserved = pool.capacity_types.iter().all(|c| *c == gpuplan::catalog::CapacityType::Reserved);
                assert!(reserved || listed.contains(&pool.name.as_str()), "{} misses {}: {expr}", profile.name, pool.name);
            }
        }
        for name in ["GpuplanKarpenterLaunchFailures", "GpuplanAcceleratorPodsPending", "GpuplanGPUUtilizationLow"] {
            assert!(rules.iter().any(|r| r["alert"] == name), "{} lacks {name}", cluster.name);
        }
    }
}

#[test]
fn gpu_operator_agrees_with_the_pools() {
    let c = examples();
    let configs = MigConfigs::builtin();
    for cluster in &c.plan.clusters {
        let in_cluster = |kind: &str| -> Vec<Value> {
            c.manifests_of(&cluster.name).into_iter().filter(|m| m.kind() == kind).map(|m| m.object).collect::<Vec<Value>>()
        };
        let policies = in_cluster("ClusterPolicy");
        let nodepools = in_cluster("NodePool");
        let monitors = in_cluster("ServiceMonitor");
        assert!(monitors.iter().any(|m| m["metadata"]["name"] == "karpenter" && m["metadata"]["namespace"] == "kube-system"));
        if cluster.name == "ml-vision" {
            // The operator is managed elsewhere here: no ClusterPolicy, and its own dcgm-exporter ServiceMonitor
            // (configured by gpuplan's values) is the only one.
            assert!(policies.is_empty());
            assert!(!monitors.iter().any(|m| m["metadata"]["name"] == "nvidia-dcgm-exporter"), "the operator creates it and replaces any rival");
            continue;
        }
        assert_eq!(policies.len(), 1, "{}", cluster.name);
        assert!(!monitors.iter().any(|m| m["metadata"]["name"] == "nvidia-dcgm-exporter"), "the operator's own ServiceMonitor scrapes dcgm-exporter");
        let spec = &policies[0]["spec"];
        assert_eq!(spec["driver"]["enabled"], false, "EKS accelerated AMI");
        assert_eq!(spec["toolkit"]["enabled"], false);
        assert_eq!(spec["dcgmExporter"]["enabled"], true);
        assert_eq!(spec["dcgmExporter"]["serviceMonitor"]["enabled"], true);
        assert_eq!(spec["gfd"]["enabled"], true);
        // Every taint of an NVIDIA pool is tolerated by the operator's daemonsets (device plugin, exporter).
        let tolerations = spec["daemonsets"]["tolerations"].as_array().unwrap();
        for pool in cluster.pools.iter().filter(|p| p.resource() == "nvidia.com/gpu") {
            for t in &pool.taints {
                assert!(tolerations.iter().any(|x| x["key"] == t.key.as_str() && x["effect"] == t.effect.as_str()), "{} taint {}", pool.name, t.key);
            }
        }
        let ts_labels: BTreeSet<String> = nodepools
            .iter()
            .filter_map(|n| n["spec"]["template"]["metadata"]["labels"]["nvidia.com/device-plugin.config"].as_str().map(String::from))
            .collect();
        // The device-plugin config only (not prometheus-adapter's rules, not the add-ons' Helm values).
        let maps: Vec<Value> = in_cluster("ConfigMap").into_iter().filter(|m| m["metadata"]["name"] == "gpuplan-device-plugin-config").collect();
        if ts_labels.is_empty() {
            assert!(spec["devicePlugin"].get("config").is_none());
            assert!(maps.is_empty());
        } else {
            let map = maps.iter().find(|m| spec["devicePlugin"]["config"]["name"] == m["metadata"]["name"]).expect("devicePlugin.config names the ConfigMap");
            assert_eq!(map["metadata"]["namespace"], "gpu-operator");
            let data = map["data"].as_object().unwrap();
            assert!(data.contains_key(spec["devicePlugin"]["config"]["default"].as_str().unwrap()));
            for label in &ts_labels {
                let text = data.get(label).unwrap_or_else(|| panic!("ConfigMap has no key {label}")).as_str().unwrap();
                let config: Value = serde_saphyr::from_str(text).unwrap();
                let replicas: u64 = label.strip_prefix("time-slicing-").unwrap().parse().unwrap();
                assert_eq!(config["version"], "v1");
                assert_eq!(config["sharing"]["timeSlicing"]["resources"][0]["name"], "nvidia.com/gpu");
                assert_eq!(config["sharing"]["timeSlicing"]["resources"][0]["replicas"], replicas);
                assert!(replicas >= 2);
            }
        }
        let mig_pools: Vec<_> = cluster.pools.iter().filter(|p| p.labels.contains_key("nvidia.com/mig.config")).collect();
        if mig_pools.is_empty() {
            assert_eq!(spec["migManager"]["enabled"], false);
            assert_eq!(spec["mig"]["strategy"], "none");
        } else {
            assert_eq!(spec["migManager"]["enabled"], true);
            assert_eq!(spec["mig"]["strategy"], "single", "all-1g.10gb is one profile per GPU");
            for pool in mig_pools {
                let config = &pool.labels["nvidia.com/mig.config"];
                assert!(configs.exists(config));
                for cand in pool.candidates.iter() {
                    let t = c.catalogs[&cluster.region].get(&cand.name).unwrap();
                    let g = t.single_gpu_model().unwrap();
                    assert!(configs.applies(config, &g.name, g.memory_mib), "{} ({} {}) in MIG pool {}", cand.name, g.name, g.memory_mib, pool.name);
                }
            }
        }
    }
}

#[test]
fn compile_is_deterministic() {
    assert_eq!(examples().output_tree(), examples().output_tree());
}

// ---------------------------------------------------------------- profiles written by the tests

const CLUSTER: &str = r#"cluster "t" {
    region "us-east-1"
    zones "us-east-1a" "us-east-1b"
    ami "al2023@v20251023"
}
"#;

fn compile_text(text: &str) -> Result<Compilation, CompileError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.kdl");
    std::fs::write(&path, text).unwrap();
    compile(&options(vec![path]))
}

fn errors(text: &str) -> Vec<(String, String, String)> {
    match compile_text(text) {
        Ok(_) => panic!("expected errors for:\n{text}"),
        Err(CompileError::Profiles { diagnostics }) => diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| (d.code.to_string(), d.message.clone(), d.help.clone().unwrap_or_default()))
            .collect(),
        Err(other) => panic!("expected profile diagnostics, got {other}"),
    }
}

fn one_error(text: &str, code: &str) -> (String, String) {
    let errs = errors(text);
    let found: Vec<_> = errs.iter().filter(|e| e.0 == code).collect();
    assert_eq!(found.len(), 1, "want one {code}, got {errs:#?}");
    (found[0].1.clone(), found[0].2.clone())
}

const INFERENCE_POOL: &str = r#"pool "llm" preset="inference-on-demand" {
    gpu { name "A10G"; per-node max=1; }
    max-accelerators 8
}
"#;

#[test]
fn mig_config_the_gpu_lacks() {
    let text = format!("{CLUSTER}pool \"mig\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"A10G\"; }}\n    mig \"all-1g.10gb\"\n    max-accelerators 8\n}}\n");
    let (message, help) = one_error(&text, "E0173");
    assert!(message.contains("MIG config `all-1g.10gb` does not exist for A10G"), "{message}");
    assert!(help.contains("A10G (22 GiB) has no MIG") && help.contains("A100") && help.contains("H100"), "{help}");
    // A MIG-capable GPU with the wrong size of config: the help lists the configs that exist for it.
    let text = format!("{CLUSTER}pool \"mig\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"H100\"; }}\n    mig \"all-1g.5gb\"\n    max-accelerators 16\n}}\n");
    let (message, help) = one_error(&text, "E0173");
    assert!(message.contains("does not exist for H100"), "{message}");
    assert!(help.contains("MIG configs for H100 (80 GiB): ") && help.contains("all-1g.10gb") && help.contains("all-7g.80gb"), "{help}");
    // A typo: did you mean.
    let text = format!("{CLUSTER}pool \"mig\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"H100\"; }}\n    mig \"all-1g.10g\"\n    max-accelerators 16\n}}\n");
    let (message, help) = one_error(&text, "E0174");
    assert!(message.contains("unknown MIG config `all-1g.10g`"), "{message}");
    assert!(help.contains("did you mean `all-1g.10gb`?"), "{help}");
}

#[test]
fn mig_pool_admits_only_gpus_with_the_config() {
    // No GPU names: the MIG filter alone keeps A10G, L4, T4 … out.
    let text = format!("{CLUSTER}budget usd-per-hour=400\npool \"mig\" preset=\"inference-on-demand\" {{\n    mig \"all-1g.10gb\"\n    price-ratio-max 10\n}}\n");
    let c = compile_text(&text).expect("compiles");
    let pool = &c.plan.clusters[0].pools[0];
    assert!(!pool.candidates.is_empty());
    for cand in pool.candidates.iter() {
        assert!(["A100", "H100"].contains(&cand.accelerator_name.as_str()), "{} ({}) in a MIG pool", cand.name, cand.accelerator_name);
    }
    assert!(pool.removed.iter().any(|r| r.constraint.contains("MIG config all-1g.10gb") && r.types.iter().any(|t| t.starts_with("g5."))));
}

#[test]
fn time_slicing_replicas_below_two_is_still_e0119() {
    let text = format!("{CLUSTER}pool \"ts\" preset=\"general\" {{\n    gpu {{ name \"T4\"; }}\n    time-slicing replicas=1\n    max-accelerators 4\n}}\n");
    let (message, _) = one_error(&text, "E0119");
    assert!(message.contains("between 2 and 64"), "{message}");
}

#[test]
fn pdb_that_can_never_be_satisfied() {
    for (budget, expect) in [
        ("min-available=4", "min-available=4 is at least max replicas (4)"),
        ("min-available=\"90%\"", "min-available=\"90%\" rounds up to 4 of 4 pods"),
        ("max-unavailable=0", "max-unavailable=\"0\" allows no pod to be evicted"),
    ] {
        let text = format!(
            "{CLUSTER}{INFERENCE_POOL}workload \"w\" namespace=\"ns\" pool=\"llm\" {{\n    selector \"app\" \"w\"\n    replicas min=2 max=4\n    disruption-budget {budget}\n}}\n"
        );
        let (message, help) = one_error(&text, "E0172");
        assert!(message.contains("can never be satisfied") && message.contains(expect), "{message}");
        assert!(help.contains("blocks node drains"), "{help}");
    }
    // 75% of 4 is 3: one pod may go. Fine.
    let text = format!("{CLUSTER}{INFERENCE_POOL}workload \"w\" namespace=\"ns\" pool=\"llm\" {{\n    selector \"app\" \"w\"\n    replicas min=2 max=4\n    disruption-budget min-available=\"75%\"\n}}\n");
    compile_text(&text).expect("75% of 4 leaves one eviction");
}

#[test]
fn hpa_min_above_max() {
    let text = format!("{CLUSTER}{INFERENCE_POOL}workload \"w\" namespace=\"ns\" pool=\"llm\" {{\n    selector \"app\" \"w\"\n    replicas min=6 max=3\n    autoscale gpu-utilization=70\n}}\n");
    let (message, help) = one_error(&text, "E0171");
    assert!(message.contains("replicas min=6 is above max=3"), "{message}");
    assert!(help.contains("minReplicas ≤ maxReplicas"), "{help}");
}

#[test]
fn workload_on_unknown_pool() {
    let text = format!("{CLUSTER}{INFERENCE_POOL}workload \"w\" namespace=\"ns\" pool=\"lm\" {{\n    selector \"app\" \"w\"\n    replicas 2\n}}\n");
    let (message, help) = one_error(&text, "E0170");
    assert!(message.contains("workload `w` runs on unknown pool `lm`"), "{message}");
    assert!(help.contains("did you mean `llm`?"), "{help}");
}

#[test]
fn workload_larger_than_its_pool() {
    let text = format!("{CLUSTER}{INFERENCE_POOL}workload \"w\" namespace=\"ns\" pool=\"llm\" {{\n    selector \"app\" \"w\"\n    replicas min=2 max=10\n}}\n");
    let (message, help) = one_error(&text, "E0176");
    assert!(message.contains("needs up to 10 nvidia.com/gpu") && message.contains("at most 8"), "{message}");
    assert!(help.contains("lower replicas max to 8"), "{help}");
}

#[test]
fn unknown_workload_child_gets_did_you_mean() {
    let text = format!("{CLUSTER}{INFERENCE_POOL}workload \"w\" namespace=\"ns\" pool=\"llm\" {{\n    selector \"app\" \"w\"\n    replica 2\n}}\n");
    let errs = errors(&text);
    assert!(errs.iter().any(|e| e.0 == "E0102" && e.2.contains("did you mean `replicas`?")), "{errs:#?}");
}

#[test]
fn self_managed_ami_enables_driver_and_toolkit() {
    let text = CLUSTER.replace("ami \"al2023@v20251023\"", "ami \"al2023@v20251023\"\n    accelerated-ami #false") + INFERENCE_POOL;
    let c = compile_text(&text).expect("compiles");
    let manifests = c.manifests();
    let policy = manifests.iter().find(|m| m.kind() == "ClusterPolicy").expect("ClusterPolicy");
    assert_eq!(policy.object["spec"]["driver"]["enabled"], true);
    assert_eq!(policy.object["spec"]["toolkit"]["enabled"], true);
    validate_crd("gpu-operator/nvidia.com_clusterpolicies.yaml", &policy.object);
}

#[test]
fn errors_exit_2_and_leave_out_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("bad.kdl");
    std::fs::write(&profile, format!("{CLUSTER}{INFERENCE_POOL}workload \"w\" namespace=\"ns\" pool=\"llm\" {{\n    selector \"app\" \"w\"\n    replicas min=6 max=3\n}}\n")).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("t")).unwrap();
    std::fs::write(out.join("t/keep.yaml"), "untouched\n").unwrap();
    let result = std::process::Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .current_dir(root())
        .args(["compile", profile.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(result.status.code(), Some(2), "{}", String::from_utf8_lossy(&result.stderr));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("E0171") && stderr.contains("bad.kdl:"), "{stderr}");
    let files: Vec<_> = walk(&out);
    assert_eq!(files, vec![out.join("t/keep.yaml")]);
    assert_eq!(std::fs::read_to_string(out.join("t/keep.yaml")).unwrap(), "untouched\n");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files.sort();
    files
}

#[test]
fn monitoring_block_sets_namespaces_and_labels() {
    let c = examples();
    let research = c.manifests_of("ml-research");
    let rule = research.iter().find(|m| m.kind() == "PrometheusRule").unwrap();
    assert_eq!(rule.object["metadata"]["namespace"], "monitoring");
    assert_eq!(rule.object["metadata"]["labels"]["release"], "kube-prometheus-stack");
    let expr: BTreeMap<String, String> = rule.object["spec"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["rules"].as_array().unwrap())
        .map(|r| {
            let (alert, metric, pool) = (r["alert"].as_str().unwrap(), r["labels"]["metric"].as_str().unwrap_or(""), r["labels"]["nodepool"].as_str().unwrap_or(""));
            (format!("{alert}{metric}{pool}"), r["expr"].as_str().unwrap().to_string())
        })
        .collect();
    assert!(expr["GpuplanNodePoolNearLimitnotebooks-shared"].contains(">= 0.85"));
    // The threshold in each metric's unit: percent for whole GPUs, a ratio for MIG devices.
    assert!(expr["GpuplanGPUUtilizationLowDCGM_FI_DEV_GPU_UTIL"].contains("< 15\n"));
    assert!(expr["GpuplanGPUUtilizationLowDCGM_FI_PROF_GR_ENGINE_ACTIVE"].contains("< 0.15\n"));
    let policy = research.iter().find(|m| m.kind() == "ClusterPolicy").unwrap();
    assert_eq!(policy.object["spec"]["dcgmExporter"]["serviceMonitor"]["additionalLabels"]["release"], "kube-prometheus-stack");
}

// ---------------------------------------------------------------- issue 9: behaviour-true ops objects

fn compile_with_templates(text: &str, templates: &[(&str, String)]) -> Result<Compilation, CompileError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.kdl");
    std::fs::write(&path, text).unwrap();
    let tdir = dir.path().join("templates");
    std::fs::create_dir_all(&tdir).unwrap();
    for (name, body) in templates {
        std::fs::write(tdir.join(name), body).unwrap();
    }
    compile(&CompileOptions { profiles: vec![path], catalogs_dir: root().join("catalogs"), templates_dir: Some(tdir) })
}

fn builtin_template(name: &str) -> String {
    std::fs::read_to_string(root().join("templates").join(name)).unwrap()
}

fn in_cluster(c: &Compilation, cluster: &str, kind: &str) -> Vec<Value> {
    c.manifests_of(cluster).into_iter().filter(|m| m.kind() == kind).map(|m| m.object).collect()
}

fn image_of(component: &Value) -> String {
    format!("{}/{}:{}", component["repository"].as_str().unwrap_or("?"), component["image"].as_str().unwrap_or("?"), component["version"].as_str().unwrap_or("?"))
}

/// NVIDIA/gpu-operator v26.7.0: the chart's operator Deployment (deployments/gpu-operator/templates/operator.yaml)
/// sets only DRIVER_MANAGER_IMAGE and VALIDATOR_IMAGE; `imagePath` (api/nvidia/v1/clusterpolicy_types.go) fails
/// any other component whose CR has no repository/image/version with "empty image path provided through both
/// ClusterPolicy CR and ENV". The images are deployments/gpu-operator/values.yaml's at the tag.
#[test]
fn cluster_policy_pins_every_enabled_component_to_one_release() {
    let c = examples();
    let expected = [
        ("devicePlugin", "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"),
        ("dcgmExporter", "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless"),
        ("gfd", "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"),
        ("nodeStatusExporter", "nvcr.io/nvidia/gpu-operator:v26.7.0"),
        ("validator", "nvcr.io/nvidia/gpu-operator:v26.7.0"),
    ];
    let policies = objects(&c, "ClusterPolicy");
    assert!(!policies.is_empty());
    for policy in &policies {
        let spec = &policy["spec"];
        for (component, image) in expected {
            assert_eq!(image_of(&spec[component]), image, "{component}");
        }
        // Disabled on the EKS accelerated AMI: no image needed, none emitted.
        assert!(spec["driver"].get("repository").is_none() && spec["toolkit"].get("repository").is_none());
        assert!(gpuplan::ops::gpu_operator::check_images(policy).is_empty());
    }
    let research = in_cluster(&c, "ml-research", "ClusterPolicy");
    assert_eq!(image_of(&research[0]["spec"]["migManager"]), "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.15.0", "MIG pools run the MIG manager");
    // The old ClusterPolicy (no images) is refused by the check.
    let mut bare = policies[0].clone();
    for component in ["devicePlugin", "dcgmExporter", "gfd"] {
        for key in ["repository", "image", "version"] {
            bare["spec"][component].as_object_mut().unwrap().remove(key);
        }
    }
    let problems = gpuplan::ops::gpu_operator::check_images(&bare);
    let pointers: Vec<&str> = problems.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(pointers, ["/spec/dcgmExporter", "/spec/devicePlugin", "/spec/gfd"]);
    assert!(problems[0].1.contains("empty image path provided through both ClusterPolicy CR and ENV"), "{}", problems[0].1);
}

#[test]
fn self_managed_ami_pins_driver_manager_and_toolkit_images() {
    let text = CLUSTER.replace("ami \"al2023@v20251023\"", "ami \"al2023@v20251023\"\n    accelerated-ami #false") + INFERENCE_POOL;
    let c = compile_text(&text).expect("compiles");
    let spec = &objects(&c, "ClusterPolicy")[0]["spec"];
    assert_eq!(image_of(&spec["driver"]), "nvcr.io/nvidia/driver:595.91.07");
    assert_eq!(image_of(&spec["driver"]["manager"]), "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.12.0");
    assert_eq!(image_of(&spec["toolkit"]), "nvcr.io/nvidia/k8s/container-toolkit:v1.20.0");
}

#[test]
fn gpu_operator_release_and_image_overrides() {
    let monitoring = "monitoring {\n    gpu-operator version=\"v26.7.0\" {\n        image \"devicePlugin\" repository=\"registry.example.com/nvidia\" version=\"v0.20.1\"\n        image \"dcgmExporter\" version=\"sha256:0123\"\n    }\n}\n";
    let c = compile_text(&format!("{CLUSTER}{INFERENCE_POOL}{monitoring}")).expect("compiles");
    let policy = &objects(&c, "ClusterPolicy")[0];
    let spec = &policy["spec"];
    assert_eq!(image_of(&spec["devicePlugin"]), "registry.example.com/nvidia/k8s-device-plugin:v0.20.1", "unset fields keep the release's");
    assert_eq!(image_of(&spec["dcgmExporter"]), "nvcr.io/nvidia/k8s/dcgm-exporter:sha256:0123");
    assert_eq!(image_of(&spec["gfd"]), "nvcr.io/nvidia/k8s-device-plugin:v0.20.0", "other components untouched");
    assert!(policy["metadata"]["annotations"]["gpuplan.dev/gpu-operator-release"].as_str().unwrap().starts_with("v26.7.0"));

    let bad = |m: &str| format!("{CLUSTER}{INFERENCE_POOL}monitoring {{\n    {m}\n}}\n");
    let (message, help) = one_error(&bad("gpu-operator version=\"v26.7\""), "E0179");
    assert_eq!(message, "unknown GPU Operator release `v26.7`");
    assert!(help.contains("did you mean `v26.7.0`?") && help.contains("src/profile/gpu_operator_releases.rs"), "{help}");
    let (message, help) = one_error(&bad("gpu-operator { image \"devicePlugn\" version=\"v1\"; }"), "E0118");
    assert_eq!(message, "unknown GPU Operator component `devicePlugn`");
    assert!(help.contains("did you mean `devicePlugin`?") && help.contains("migManager"), "{help}");
    let (message, _) = one_error(&bad("gpu-operator { image \"gfd\"; }"), "E0107");
    assert!(message.contains("overrides nothing"), "{message}");
}

#[test]
fn template_override_dropping_images_fails_the_compile() {
    // A --templates clusterpolicy.yaml.j2 that leaves three components without images (as before issue 9).
    let mut old = builtin_template("clusterpolicy.yaml.j2");
    for component in ["devicePlugin", "dcgmExporter", "gfd"] {
        let call = format!("{{{{ image(policy.images.{component}) }}}}");
        assert!(old.contains(&call), "{call}");
        old = old.replace(&call, "");
    }
    match compile_with_templates(&format!("{CLUSTER}{INFERENCE_POOL}"), &[("clusterpolicy.yaml.j2", old)]) {
        Err(CompileError::Invalid { violations }) => {
            let text: Vec<String> = violations.iter().map(|(p, v)| format!("{}: {v}", p.display())).collect();
            for component in ["devicePlugin", "dcgmExporter", "gfd"] {
                assert!(text.iter().any(|t| t.contains(&format!("clusterpolicy-cluster-policy.yaml: /spec/{component}: {component} is enabled but has no repository, image, version"))), "{text:#?}");
            }
        }
        Ok(_) => panic!("a ClusterPolicy without images compiled"),
        Err(other) => panic!("expected invalid objects, got {other}"),
    }
}

/// NVIDIA/k8s-device-plugin v0.20.0: with MIG_STRATEGY=mixed MIG devices are `nvidia.com/mig-<profile>`
/// resources (README, internal/rm/rm.go `AddDefaultResourcesToConfig`); Karpenter (kubernetes-sigs/karpenter)
/// knows an instance type's resources from EC2 DescribeInstanceTypes (whole `nvidia.com/gpu`), so a pod asking
/// for a mig-<profile> resource fits no instance type and nothing launches.
#[test]
fn mig_config_that_needs_mixed_strategy_is_refused() {
    let text = format!("{CLUSTER}pool \"mig\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"H100\"; }}\n    mig \"all-balanced\"\n    max-accelerators 16\n}}\n");
    let errs = errors(&text);
    let found: Vec<_> = errs.iter().filter(|e| e.0 == "E0178").collect();
    assert_eq!(found.len(), 1, "{errs:#?}");
    let (_, message, help) = found[0];
    assert_eq!(message, "MIG config `all-balanced` mixes MIG profiles on a GPU, which Karpenter cannot provision");
    assert!(help.contains("nvidia.com/mig-<profile>") && help.contains("no instance type advertises to Karpenter"), "{help}");
    assert!(help.contains("all-1g.10gb") && help.contains("advertises each MIG device as nvidia.com/gpu"), "{help}");
    // The diagnostic points at the config text.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.kdl");
    std::fs::write(&path, &text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(root()).args(["compile", "--check", path.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("E0178") && stderr.contains("t.kdl:8:9"), "{stderr}");
    // Single-profile configs stay fine: strategy single, MIG devices as nvidia.com/gpu.
    let c = compile_text(&text.replace("all-balanced", "all-1g.10gb")).expect("compiles");
    assert_eq!(objects(&c, "ClusterPolicy")[0]["spec"]["mig"]["strategy"], "single");
}

/// dcgm-exporter reports no DCGM_FI_DEV_GPU_UTIL for MIG devices (NVIDIA/dcgm-exporter#216, #430: use
/// DCGM_FI_PROF_GR_ENGINE_ACTIVE, enabled in etc/dcp-metrics-included.csv, "Ratio of time the graphics engine is
/// active"): MIG pools scale and alert on it, in its unit (0–1). Only workloads with `autoscale` get an HPA.
#[test]
fn hpa_only_when_asked_with_the_pool_metric_in_its_unit() {
    let c = examples();
    let hpas = objects(&c, "HorizontalPodAutoscaler");
    assert!(!hpas.iter().any(|h| h["metadata"]["name"] == "jupyter"), "jupyter never asked for autoscale");
    let metric = |name: &str| {
        let h = hpas.iter().find(|h| h["metadata"]["name"] == name).unwrap_or_else(|| panic!("{name} HPA"));
        let m = &h["spec"]["metrics"][0]["pods"];
        (m["metric"]["name"].as_str().unwrap().to_string(), m["target"]["averageValue"].as_str().unwrap().to_string())
    };
    assert_eq!(metric("embeddings"), ("DCGM_FI_PROF_GR_ENGINE_ACTIVE".to_string(), "600m".to_string()), "MIG pool: 60% as a ratio");
    assert_eq!(metric("llm-server"), ("DCGM_FI_DEV_GPU_UTIL".to_string(), "70".to_string()));
    assert_eq!(gpuplan::solve::ops::metrics::quantity("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 100), "1");
    assert_eq!(gpuplan::solve::ops::metrics::quantity("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 5), "50m");
    // Alerts on MIG devices use the same metric and unit.
    let rule = &in_cluster(&c, "ml-research", "PrometheusRule")[0];
    let exprs: Vec<&str> = rule["spec"]["groups"].as_array().unwrap().iter().flat_map(|g| g["rules"].as_array().unwrap()).map(|r| r["expr"].as_str().unwrap()).collect();
    assert!(exprs.contains(&"avg(DCGM_FI_PROF_GR_ENGINE_ACTIVE{GPU_I_PROFILE!=\"\"}) < 0.15\n"), "{exprs:#?}");
    assert!(exprs.contains(&"avg(DCGM_FI_DEV_GPU_UTIL{GPU_I_PROFILE=\"\"}) < 15\n"), "{exprs:#?}");
    assert!(exprs.iter().any(|e| e.starts_with("avg(DCGM_FI_PROF_GR_ENGINE_ACTIVE{namespace=\"inference\",pod=~\"embeddings-")), "{exprs:#?}");
}

/// dcgm-exporter labels a GPU's series with the pod/namespace using it (internal/pkg/transformation/const.go);
/// a ServiceMonitor without honorLabels makes Prometheus rename them exported_pod/exported_namespace and put
/// the exporter's own there, so per-pod HPAs and per-workload alerts see nothing. The operator copies
/// `dcgmExporter.serviceMonitor.honorLabels` onto its ServiceMonitor (NVIDIA/gpu-operator
/// controllers/object_controls.go `applyServiceMonitorCustomEdits`).
#[test]
fn dcgm_service_monitors_honor_the_exporters_labels() {
    let c = examples();
    for policy in objects(&c, "ClusterPolicy") {
        assert_eq!(policy["spec"]["dcgmExporter"]["serviceMonitor"]["honorLabels"], true);
    }
    let values = gpu_operator_values(&c, "ml-vision");
    assert_eq!(values["dcgmExporter"]["serviceMonitor"]["honorLabels"], true);
    let vision = in_cluster(&c, "ml-vision", "ServiceMonitor");
    let karpenter = vision.iter().find(|m| m["metadata"]["name"] == "karpenter").unwrap();
    assert_eq!(karpenter["spec"]["endpoints"][0]["honorLabels"], false);
}

/// prometheus-community/helm-charts charts/prometheus-adapter: with `rules.existing: <ConfigMap>` the Deployment
/// mounts that ConfigMap at /etc/adapter and runs `--config=/etc/adapter/config.yaml`
/// (templates/deployment.yaml); the file's shape is kubernetes-sigs/prometheus-adapter pkg/config/config.go.
#[test]
fn prometheus_adapter_rules_serve_every_hpa_metric() {
    let c = examples();
    for cluster in &c.plan.clusters {
        let hpas = in_cluster(&c, &cluster.name, "HorizontalPodAutoscaler");
        let maps: Vec<Value> = in_cluster(&c, &cluster.name, "ConfigMap").into_iter().filter(|m| m["metadata"]["name"] == "gpuplan-prometheus-adapter").collect();
        if hpas.is_empty() {
            assert!(maps.is_empty(), "{}: no HPA, no adapter rules", cluster.name);
            continue;
        }
        assert_eq!(maps.len(), 1, "{}", cluster.name);
        assert_eq!(maps[0]["metadata"]["namespace"], "monitoring");
        let config = gpuplan::check::ops::adapter_config(&maps[0]).expect("config.yaml reads as an adapter config");
        for hpa in hpas {
            let metric = hpa["spec"]["metrics"][0]["pods"]["metric"]["name"].as_str().unwrap();
            let rule = config.rules.iter().find(|r| gpuplan::ops::adapter::serves(r, metric)).unwrap_or_else(|| panic!("no rule for {metric}"));
            assert_eq!(rule.series_query, format!("{metric}{{namespace!=\"\",pod!=\"\"}}"));
            assert_eq!(rule.resources.overrides["pod"].resource, "pod");
            assert_eq!(rule.resources.overrides["namespace"].resource, "namespace");
            assert!(rule.metrics_query.contains("<<.Series>>{<<.LabelMatchers>>}"));
            assert!(hpa["metadata"]["annotations"]["gpuplan.dev/metric"].as_str().unwrap().contains("gpuplan-prometheus-adapter"));
        }
    }
    // Unknown fields are what the adapter silently ignores: refused.
    assert!(gpuplan::ops::adapter::parse("rules:\n- seriesQuery: x\n  resource: {}\n  name: {matches: x}\n").is_err());
}

#[test]
fn template_override_breaking_the_adapter_rules_fails_the_compile() {
    let text = format!("{CLUSTER}{INFERENCE_POOL}workload \"w\" namespace=\"ns\" pool=\"llm\" {{\n    selector \"app\" \"w\"\n    replicas min=1 max=4\n    autoscale gpu-utilization=60\n}}\n");
    compile_text(&text).expect("compiles with the built-in templates");
    let broken = builtin_template("prometheus-adapter-configmap.yaml.j2").replace("data: {{ data }}", "data: {\"config.yaml\": \"rules: []\\n\"}");
    match compile_with_templates(&text, &[("prometheus-adapter-configmap.yaml.j2", broken)]) {
        Err(CompileError::Invalid { violations }) => {
            let text: Vec<String> = violations.iter().map(|(p, v)| format!("{}: {v}", p.display())).collect();
            assert!(text.iter().any(|t| t.contains("horizontalpodautoscaler-ns-w.yaml") && t.contains("no prometheus-adapter rule serves Pods metric `DCGM_FI_DEV_GPU_UTIL`")), "{text:#?}");
        }
        Ok(_) => panic!("an HPA without an adapter rule compiled"),
        Err(other) => panic!("expected invalid objects, got {other}"),
    }
}

/// kube-prometheus-stack selects PrometheusRules and ServiceMonitors by `release: <release>` by default
/// (charts/kube-prometheus-stack/templates/prometheus/prometheus.yaml, ruleSelectorNilUsesHelmValues /
/// serviceMonitorSelectorNilUsesHelmValues: true in values.yaml).
#[test]
fn every_cluster_gets_the_kube_prometheus_stack_release_label() {
    let c = examples();
    for kind in ["PrometheusRule", "ServiceMonitor"] {
        for o in objects(&c, kind) {
            assert_eq!(o["metadata"]["labels"]["release"], "kube-prometheus-stack", "{kind} {}", o["metadata"]["name"]);
        }
    }
    for o in &objects(&c, "ClusterPolicy") {
        assert_eq!(o["spec"]["dcgmExporter"]["serviceMonitor"]["additionalLabels"]["release"], "kube-prometheus-stack");
    }
    // `label "release" #null` removes it (lint GP015 then warns); another value replaces it.
    let c = compile_text(&format!("{CLUSTER}{INFERENCE_POOL}monitoring {{\n    label \"release\" #null\n    label \"team\" \"ml\"\n}}\n")).unwrap();
    let labels = &objects(&c, "PrometheusRule")[0]["metadata"]["labels"];
    assert!(labels.get("release").is_none() && labels["team"] == "ml", "{labels}");
}

/// kube-state-metrics `kube_pod_status_unschedulable` (docs/metrics/workload/pod-metrics.md): the scheduler
/// could not place the pod — unlike phase Pending, which includes image pulls of multi-GB images. Karpenter
/// (kubernetes-sigs/karpenter v1.10.0, pkg/controllers/metrics/nodepool/controller.go) exports
/// `karpenter_nodepools_cost_total{nodepool}`: real spend, spot at its observed price.
#[test]
fn alerts_use_unschedulable_pods_and_karpenters_cost() {
    let c = examples();
    for rule in objects(&c, "PrometheusRule") {
        let rules: Vec<&Value> = rule["spec"]["groups"].as_array().unwrap().iter().flat_map(|g| g["rules"].as_array().unwrap()).collect();
        for r in &rules {
            let expr = r["expr"].as_str().unwrap();
            assert!(!expr.contains("kube_pod_status_phase"), "{expr}");
        }
        let pending = rules.iter().find(|r| r["alert"] == "GpuplanAcceleratorPodsPending").unwrap();
        assert!(pending["expr"].as_str().unwrap().starts_with("max by (namespace, pod) (kube_pod_status_unschedulable) == 1\n"));
        for budget in rules.iter().filter(|r| r["alert"] == "GpuplanProfileOverBudget") {
            let expr = budget["expr"].as_str().unwrap();
            assert!(expr.contains("karpenter_nodepools_cost_total{nodepool=~\"") && !expr.contains("karpenter_nodepools_usage"), "{expr}");
            assert!(budget["annotations"]["requires"].as_str().unwrap().contains("Karpenter >= v1.10.0"));
        }
    }
    let prod = &in_cluster(&c, "ml-prod", "PrometheusRule")[0];
    let budget = prod["spec"]["groups"].as_array().unwrap().iter().flat_map(|g| g["rules"].as_array().unwrap()).find(|r| r["alert"] == "GpuplanProfileOverBudget" && r["labels"]["gpuplan_profile"] == "llm-inference").unwrap();
    // Plus the NodePools renamed or removed but still running whose nodes carry one of the profile's pools
    // (kube-state-metrics kube_node_labels, docs/metrics/cluster/node-metrics.md; promtool runs it in tests/promtool.rs).
    assert_eq!(
        budget["expr"],
        concat!(
            "(\n  (sum(karpenter_nodepools_cost_total{nodepool=~\"llm-inference-on-demand|llm-inference-spot\"}) or vector(0))\n",
            "  + (sum(karpenter_nodepools_cost_total and on (nodepool) max by (nodepool, gpuplan_pool) (label_replace(label_replace(",
            "kube_node_labels{label_gpuplan_dev_pool=~\"llm-inference\",label_karpenter_sh_nodepool!=\"\",",
            "label_karpenter_sh_nodepool!~\"llm-inference-spot|llm-inference-on-demand|training-reserved|training|neuron-inference|gpu-general\"}, ",
            "\"nodepool\", \"$1\", \"label_karpenter_sh_nodepool\", \"(.+)\"), \"gpuplan_pool\", \"$1\", \"label_gpuplan_dev_pool\", \"(.+)\"))) or vector(0))\n",
            ") > 150\n"
        )
    );
}

/// Pools are isolated by the `gpuplan.dev/pool` node label and, for every preset but `general`, the
/// `gpuplan.dev/pool=<pool>:NoSchedule` taint (issue 9 item 10): a workload's objects say what its pods need,
/// and its alerts only count its own pods (namespace + the pod names a Deployment/StatefulSet creates).
#[test]
fn workload_objects_and_alerts_refer_to_their_pool_only() {
    let c = examples();
    let pdbs = objects(&c, "PodDisruptionBudget");
    let llm = pdbs.iter().find(|p| p["metadata"]["name"] == "llm-server").unwrap();
    assert_eq!(
        llm["metadata"]["annotations"]["gpuplan.dev/placement"],
        "pods need nodeSelector {gpuplan.dev/pool: llm-inference}, toleration {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}, toleration {key: gpuplan.dev/pool, operator: Equal, value: llm-inference, effect: NoSchedule}, topologySpreadConstraint {topologyKey: topology.kubernetes.io/zone, maxSkew: 1, whenUnsatisfiable: ScheduleAnyway} and topologySpreadConstraint {topologyKey: kubernetes.io/hostname, maxSkew: 1, whenUnsatisfiable: ScheduleAnyway} to run on pool llm-inference only"
    );
    let rule = &in_cluster(&c, "ml-prod", "PrometheusRule")[0];
    let rules: Vec<&Value> = rule["spec"]["groups"].as_array().unwrap().iter().flat_map(|g| g["rules"].as_array().unwrap()).collect();
    let unsched = rules.iter().find(|r| r["alert"] == "GpuplanWorkloadPodsUnschedulable" && r["labels"]["gpuplan_workload"] == "inference/llm-server").expect("workload alert");
    assert_eq!(unsched["expr"], "max by (namespace, pod) (kube_pod_status_unschedulable{namespace=\"inference\",pod=~\"llm-server-[a-z0-9]{1,10}-[a-z0-9]{5}\"}) == 1\n");
    assert_eq!(unsched["labels"]["gpuplan_pool"], "llm-inference");
    let description = unsched["annotations"]["description"].as_str().unwrap();
    assert!(description.contains("NodePools llm-inference-on-demand, llm-inference-spot"), "{description}");
    // The cluster-wide alert leaves the workload's pods to it.
    let pending = rules.iter().find(|r| r["alert"] == "GpuplanAcceleratorPodsPending").unwrap();
    assert!(pending["expr"].as_str().unwrap().contains("unless on (namespace, pod)\nkube_pod_status_unschedulable{namespace=\"inference\",pod=~\"llm-server-"));
    // A general pool has no taint: the nodeSelector alone.
    let text = format!("{CLUSTER}pool \"any\" preset=\"general\" {{\n    gpu {{ name \"L4\"; per-node max=1; }}\n    max-accelerators 4\n}}\nworkload \"w\" namespace=\"ns\" pool=\"any\" kind=\"StatefulSet\" {{\n    selector \"app\" \"w\"\n    replicas 2\n}}\n");
    let c = compile_text(&text).unwrap();
    let pdb = &objects(&c, "PodDisruptionBudget")[0];
    assert_eq!(pdb["metadata"]["annotations"]["gpuplan.dev/placement"], "pods need nodeSelector {gpuplan.dev/pool: any} and toleration {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule} to run on pool any only");
    let rule = &objects(&c, "PrometheusRule")[0];
    let exprs: Vec<&str> = rule["spec"]["groups"].as_array().unwrap().iter().flat_map(|g| g["rules"].as_array().unwrap()).map(|r| r["expr"].as_str().unwrap()).collect();
    assert!(exprs.contains(&"max by (namespace, pod) (kube_pod_status_unschedulable{namespace=\"ns\",pod=~\"w-[0-9]+\"}) == 1\n"), "{exprs:#?}");
}

/// Every workload's unschedulable alert — the one object every workload has — records its replica count and
/// selector for `gpuplan adopt` (`gpuplan_replicas`, `gpuplan_selector`: alert annotation names must be Prometheus
/// label names), in a form that parses back; the PrometheusRule names the profile whose `monitoring` block applies.
#[test]
fn workload_alerts_record_replicas_and_selector() {
    use gpuplan::ops::workload::{parse_replicas_record, parse_selector_record};
    let c = examples();
    let mut recorded = BTreeMap::new();
    for rule in objects(&c, "PrometheusRule") {
        for r in rule["spec"]["groups"].as_array().unwrap().iter().flat_map(|g| g["rules"].as_array().unwrap()) {
            if r["alert"] == "GpuplanWorkloadPodsUnschedulable" {
                let annotations = &r["annotations"];
                recorded.insert(r["labels"]["gpuplan_workload"].as_str().unwrap().to_string(), (annotations["gpuplan_replicas"].as_str().unwrap().to_string(), annotations["gpuplan_selector"].as_str().unwrap().to_string()));
            }
        }
    }
    let expected = [
        ("inference/embeddings", "2-16", "app=embeddings"),
        // Scales to zero: adopt reads its replicas from its ScaledObject (a `0-…` record alone is no replica count
        // a profile can have without `scale-to-zero`, E0220, so parse_replicas_record refuses it).
        ("inference/llm-batch", "0-4", "app.kubernetes.io/name=llm-batch"),
        ("inference/llm-server", "2-12", "app.kubernetes.io/name=llm-server"),
        ("notebooks/jupyter", "1-24", "app=jupyter"),
        ("training/trainer", "4", "app=trainer"),
    ];
    assert_eq!(recorded, expected.iter().map(|(w, r, s)| (w.to_string(), (r.to_string(), s.to_string()))).collect::<BTreeMap<_, _>>());
    assert_eq!(parse_replicas_record("4"), Ok((4, 4)));
    assert_eq!(parse_replicas_record("1-24"), Ok((1, 24)));
    assert_eq!(parse_selector_record("app.kubernetes.io/name=x,tier=api"), Ok(vec![("app.kubernetes.io/name".into(), "x".into()), ("tier".into(), "api".into())]));

    let owner = |cluster: &str| in_cluster(&c, cluster, "PrometheusRule")[0]["metadata"]["annotations"]["gpuplan.dev/monitoring-profile"].clone();
    assert_eq!(owner("ml-research"), "notebooks");
    assert_eq!(owner("ml-vision"), "tiered-fallback");
    assert!(owner("ml-prod").is_null(), "ml-prod's profiles have no monitoring block");
}

/// A hand-edited record parses the way the profile would: spaces around keys, values and counts are trimmed on
/// both sides (the replica parser trimmed, the selector parser did not: `app = jupyter` became `"app "`), and
/// what gpuplan cannot have written is an error with the reason, not a selector the profile then rejects or
/// silently narrows (`app=x,app=y`: the profile keeps the last).
#[test]
fn hand_edited_replicas_and_selector_records_parse_or_say_why_not() {
    use gpuplan::ops::workload::{parse_replicas_record, parse_selector_record};
    let labels = |kv: &[(&str, &str)]| Ok(kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>());
    assert_eq!(parse_selector_record("app = jupyter"), labels(&[("app", "jupyter")]));
    assert_eq!(parse_selector_record(" app=jupyter , tier=api "), labels(&[("app", "jupyter"), ("tier", "api")]));
    assert_eq!(parse_selector_record("app="), labels(&[("app", "")]), "an empty label value is a value");
    for (record, reason) in [
        ("", "it is empty"),
        ("app=a=b", "label value `a=b` of `app`: a label value must be alphanumeric characters"),
        ("app=x,app=y", "label key `app` is given twice"),
        ("app=jupyter,", "an empty label (a stray comma?)"),
        ("=x", "`=x` has no key"),
        ("app", "`app` is not key=value"),
        ("a/b/c=x", "label key `a/b/c`: a label key has at most one '/'"),
        ("Example.com/app=x", "label key `Example.com/app`: the prefix `Example.com` must be a lowercase DNS subdomain"),
    ] {
        let error = parse_selector_record(record).unwrap_err();
        assert!(error.starts_with(reason), "{record:?}: {error}");
    }
    assert_eq!(parse_replicas_record(" 1 - 24 "), Ok((1, 24)));
    for (record, reason) in [
        ("0-3", "a workload has at least 1 replica"),
        ("3-2", "min 3 is above max 2"),
        ("two", "`two` is not a replica count (want `4`, or `1-24` for min=1 max=24)"),
        ("1-", "a count is missing (want `4`, or `1-24` for min=1 max=24)"),
    ] {
        assert_eq!(parse_replicas_record(record).unwrap_err(), reason, "{record:?}");
    }
}


// ---------------------------------------------------------------- issue 18: the add-ons reach every accelerator node

/// The Helm values gpuplan hands a chart (`ops::addons`), parsed from the rendered ConfigMap.
fn helm_values(c: &Compilation, cluster: &str, config_map: &str) -> Value {
    let cm = in_cluster(c, cluster, "ConfigMap").into_iter().find(|m| m["metadata"]["name"] == config_map).unwrap_or_else(|| panic!("no ConfigMap {config_map} in {cluster}"));
    serde_saphyr::from_str(cm["data"]["values.yaml"].as_str().expect("values.yaml")).expect("values.yaml is YAML")
}

fn toleration_keys(list: &Value) -> BTreeSet<String> {
    list.as_array().into_iter().flatten().filter_map(|t| t["key"].as_str().map(str::to_string)).collect()
}

const OPERATOR_AT_CHART_DEFAULTS: &str = "monitoring {\n    gpu-operator manage=#false values=#false\n}\n";

/// NVIDIA/gpu-operator v26.7.0 `deployments/gpu-operator/values.yaml`: `node-feature-discovery.worker.tolerations`
/// is control-plane and `nvidia.com/gpu` only. The examples' pools carry `gpuplan.dev/pool` (and `workload`) taints,
/// so every NVIDIA pool but `gpu-general` was unreachable before the values ConfigMap: the NFD worker never labelled
/// the node and the device plugin never started.
#[test]
fn every_example_nodepool_is_reached_by_the_add_ons_its_nodes_need() {
    let c = examples();
    for cluster in &c.plan.clusters {
        let unreachable = gpuplan::ops::addons::unreachable(&cluster.pools, &c.manifests_of(&cluster.name));
        assert!(unreachable.is_empty(), "{}: {unreachable:#?}", cluster.name);
    }
    let values = helm_values(&c, "ml-prod", "gpuplan-gpu-operator-values");
    let nfd = toleration_keys(&values["node-feature-discovery"]["worker"]["tolerations"]);
    for key in ["node-role.kubernetes.io/control-plane", "nvidia.com/gpu", "gpuplan.dev/pool", "workload"] {
        assert!(nfd.contains(key), "NFD worker does not tolerate {key}: {nfd:?}");
    }
}

#[test]
fn pool_taint_is_e0184_when_the_gpu_operator_runs_with_its_chart_defaults() {
    // One error: every GPU Operator DaemonSet is kept off by the same taint and configured in the same chart.
    let (message, help) = one_error(&format!("{CLUSTER}{INFERENCE_POOL}{OPERATOR_AT_CHART_DEFAULTS}"), "E0184");
    assert!(message.starts_with("NodePool `llm` would never get its devices: DaemonSets gpu-operator-node-feature-discovery-worker, nvidia-operator-validator, nvidia-device-plugin-daemonset, gpu-feature-discovery, nvidia-dcgm-exporter do not tolerate the node's taint gpuplan.dev/pool=llm:NoSchedule"), "{message}");
    assert!(help.contains("the chart's default tolerations, NVIDIA GPU Operator v26.7.0") && help.contains("key: gpuplan.dev/pool, operator: Exists"), "{help}");
}

#[test]
fn general_pool_reaches_the_chart_defaults_without_values() {
    // A `general` pool carries only the nvidia.com/gpu taint, which every GPU Operator DaemonSet tolerates by default.
    let pool = "pool \"shared\" preset=\"general\" {\n    gpu { name \"T4\"; }\n    max-accelerators 4\n}\n";
    let c = compile_text(&format!("{CLUSTER}{pool}{OPERATOR_AT_CHART_DEFAULTS}")).expect("a general pool compiles with the chart's defaults");
    assert!(in_cluster(&c, "t", "ConfigMap").iter().all(|m| m["metadata"]["name"] != "gpuplan-gpu-operator-values"), "values=#false writes no values");
}

/// One owner per object: the chart's templates/clusterpolicy.yaml renders `cluster-policy` only
/// `if .Values.clusterPolicy.deployCR` (NVIDIA/gpu-operator v26.7.0), so gpuplan's own ClusterPolicy comes with values
/// that turn the chart's off.
#[test]
fn managed_cluster_policy_comes_with_values_that_stop_the_chart_creating_one() {
    let c = compile_text(&format!("{CLUSTER}{INFERENCE_POOL}")).expect("compiles");
    assert_eq!(in_cluster(&c, "t", "ClusterPolicy").len(), 1);
    let values = helm_values(&c, "t", "gpuplan-gpu-operator-values");
    assert_eq!(values["clusterPolicy"]["deployCR"], false, "{values}");
    assert!(values.get("daemonsets").is_none(), "the operands' tolerations live in gpuplan's ClusterPolicy: {values}");
}

#[test]
fn unmanaged_cluster_policy_gets_its_operand_tolerations_through_the_values() {
    let c = compile_text(&format!("{CLUSTER}{INFERENCE_POOL}monitoring {{\n    gpu-operator manage=#false\n}}\n")).expect("compiles");
    assert!(in_cluster(&c, "t", "ClusterPolicy").is_empty());
    let values = helm_values(&c, "t", "gpuplan-gpu-operator-values");
    assert!(values.get("clusterPolicy").is_none(), "the chart creates the ClusterPolicy: {values}");
    let operands = toleration_keys(&values["daemonsets"]["tolerations"]);
    assert!(operands.contains("nvidia.com/gpu") && operands.contains("gpuplan.dev/pool"), "{operands:?}");
}

/// aws-neuron/neuron-helm-charts `charts/neuron-helm-chart/values.yaml`: `devicePlugin.tolerations` =
/// CriticalAddonsOnly and `aws.amazon.com/neuron`; aws/eks-charts `stable/aws-efa-k8s-device-plugin/values.yaml`
/// v0.5.30: `tolerations: []`. The values keep the chart defaults and add every pool taint.
#[test]
fn neuron_and_efa_device_plugins_get_values_tolerating_their_pools() {
    let c = examples();
    let neuron = toleration_keys(&helm_values(&c, "ml-prod", "gpuplan-neuron-values")["devicePlugin"]["tolerations"]);
    assert_eq!(neuron, BTreeSet::from(["CriticalAddonsOnly".to_string(), "aws.amazon.com/neuron".into(), "gpuplan.dev/pool".into()]));
    let efa = toleration_keys(&helm_values(&c, "ml-prod", "gpuplan-efa-device-plugin-values")["tolerations"]);
    assert_eq!(efa, BTreeSet::from(["gpuplan.dev/pool".to_string(), "nvidia.com/gpu".into(), "workload".into()]));
}

// aws-neuron/neuron-helm-charts `charts/neuron-helm-chart/values.yaml` `neuronInstances` (the device plugin's required
// node affinity, templates/device-plugin-daemonset.yaml) lists trn1, inf1 and inf2 sizes but no trn2: with the chart's
// default a Trainium2 node never runs the plugin and its devices never become allocatable.
#[test]
fn a_trainium2_pool_adds_its_types_to_the_neuron_device_plugins_instance_list() {
    // The bundled catalogs offer trn2 in no zone of theirs; this copy offers it in two.
    let catalogs = tempfile::tempdir().unwrap();
    let mut catalog: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(root().join("catalogs/us-east-1.json")).unwrap()).unwrap();
    for t in catalog["instance_types"].as_array_mut().unwrap().iter_mut().filter(|t| t["family"] == "trn2") {
        t["zones"] = serde_json::json!(["us-east-1a", "us-east-1b"]);
        t["on_demand"] = serde_json::json!({ "usd_per_hour": 44.7, "source": "on-demand-price-table" });
    }
    std::fs::write(catalogs.path().join("us-east-1.json"), catalog.to_string()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.kdl");
    std::fs::write(&path, format!("{CLUSTER}pool \"trn\" preset=\"training-on-demand\" {{\n    neuron {{ name \"Trainium2\"; }}\n    max-accelerators 32\n}}\n")).unwrap();
    let c = compile(&CompileOptions { profiles: vec![path], catalogs_dir: catalogs.path().to_path_buf(), templates_dir: None }).expect("compiles");
    let types: Vec<String> = helm_values(&c, "t", "gpuplan-neuron-values")["neuronInstances"].as_array().expect("a neuronInstances list").iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert!(types.iter().any(|t| t.starts_with("trn2")), "{types:?}");
    assert!(types.contains(&"inf2.xlarge".to_string()), "the chart's own types stay: {types:?}");
}

#[test]
fn an_inferentia2_pool_keeps_the_charts_neuron_instance_list() {
    let values = helm_values(&examples(), "ml-prod", "gpuplan-neuron-values");
    assert!(values.get("neuronInstances").is_none(), "inf2 is in the chart's default: {values}");
}

#[test]
fn template_override_dropping_the_values_is_e0184() {
    let empty = builtin_template("helm-values-configmap.yaml.j2").replace("data: {{ data }}", "data: {}");
    match compile_with_templates(&format!("{CLUSTER}{INFERENCE_POOL}"), &[("helm-values-configmap.yaml.j2", empty)]) {
        Err(CompileError::Profiles { diagnostics }) => {
            let codes: Vec<&str> = diagnostics.iter().map(|d| d.code.as_str()).collect();
            assert!(codes.contains(&"E0184"), "{codes:?}");
            assert!(diagnostics.iter().any(|d| d.message.contains("gpu-operator-node-feature-discovery-worker")), "{}", gpuplan::diagnostic::render_plain(&diagnostics));
        }
        Ok(_) => panic!("a cluster whose NFD worker cannot reach its pools compiled"),
        Err(other) => panic!("expected E0184, got {other}"),
    }
}

// ---------------------------------------------------------------- issue 23 item 9: Bottlerocket GPU nodes

const BOTTLEROCKET_CLUSTER: &str = r#"cluster "t" {
    region "us-east-1"
    zones "us-east-1a" "us-east-1b"
    ami "bottlerocket@v1.50.0"
}
"#;

const SHARED_T4: &str = "pool \"shared\" preset=\"general\" {\n    gpu { name \"T4\"; }\n    time-slicing replicas=4\n    max-accelerators 4\n}\n";

/// bottlerocket-os/bottlerocket QUICKSTART-EKS.md: the `aws-k8s-*-nvidia` variants run the NVIDIA device plugin on
/// the host, so the GPU Operator's must not run there; the operator honours a node's preset
/// `nvidia.com/gpu.deploy.<operand>` label (NVIDIA/gpu-operator v26.7.0 controllers/state_manager.go
/// `addGPUStateLabels`).
#[test]
fn bottlerocket_gpu_nodes_keep_the_operators_device_plugin_and_mig_manager_off() {
    let c = compile_text(&format!("{BOTTLEROCKET_CLUSTER}{SHARED_T4}")).expect("compiles");
    let np = in_cluster(&c, "t", "NodePool").pop().unwrap();
    let labels = &np["spec"]["template"]["metadata"]["labels"];
    assert_eq!(labels["nvidia.com/gpu.deploy.device-plugin"], "false", "{labels}");
    assert_eq!(labels["nvidia.com/gpu.deploy.mig-manager"], "false", "{labels}");
    assert!(labels.get("nvidia.com/device-plugin.config").is_none(), "the host plugin reads no ConfigMap: {labels}");
    assert!(in_cluster(&c, "t", "ConfigMap").iter().all(|m| m["metadata"]["name"] != "gpuplan-device-plugin-config"));
    // The check needs no device-plugin DaemonSet on these nodes, the NFD worker and the other operands still.
    let cluster = &c.plan.clusters[0];
    assert!(gpuplan::ops::addons::unreachable(&cluster.pools, &c.manifests_of("t")).is_empty());
}

/// Issue 32 item 13: GFD, the validator and dcgm-exporter are still scheduled on Bottlerocket GPU nodes, on purpose.
/// Upstream state (NVIDIA/gpu-operator read with the `fetch` tool at v26.7.0 and at HEAD a22dbf671): no code path,
/// value or doc names Bottlerocket. The only per-node switches are the `nvidia.com/gpu.deploy.<operand>` labels
/// and `nvidia.com/gpu.deploy.operands=false` (controllers/state_manager.go `updateGPUStateLabels`,
/// `hasOperandsDisabled`). Switching off the validator alone would strand GFD and dcgm-exporter: both wait in their
/// `toolkit-validation` init container for the validator's `/run/nvidia/validations/toolkit-ready`
/// (assets/gpu-feature-discovery/0500_daemonset.yaml, assets/state-dcgm-exporter/0800_daemonset.yaml); switching
/// off every operand removes dcgm-exporter, the source of the GPU-utilization alerts and the HPA metric. So gpuplan
/// switches off only what the host already does (device plugin, MIG manager) and the README says how to opt a
/// pool out of the rest (`label "nvidia.com/gpu.deploy.operands" "false"`, losing its DCGM metrics).
#[test]
fn bottlerocket_gpu_nodes_keep_gfd_the_validator_and_dcgm_exporter_which_depend_on_each_other() {
    let c = compile_text(&format!("{BOTTLEROCKET_CLUSTER}{SHARED_T4}")).expect("compiles");
    let np = in_cluster(&c, "t", "NodePool").pop().unwrap();
    let node = gpuplan::ops::addons::node_of(&np);
    let running: Vec<&str> = gpuplan::ops::addons::daemons(&c.manifests_of("t")).into_iter().filter(|d| d.runs_on(&node)).map(|d| d.add_on.daemonset).collect();
    for operand in ["nvidia-operator-validator", "gpu-feature-discovery", "nvidia-dcgm-exporter"] {
        assert!(running.contains(&operand), "{operand} not on the node: {running:?}");
    }
    assert!(!running.contains(&"nvidia-device-plugin-daemonset"), "{running:?}");
    assert!(np["spec"]["template"]["metadata"]["labels"].get("nvidia.com/gpu.deploy.operands").is_none());
}

/// bottlerocket.dev API settings "kubelet-device-plugins", NVIDIA Time-Slicing: `device-sharing-strategy =
/// "time-slicing"` and `time-slicing.replicas`; `rename-by-default = false` keeps advertising `nvidia.com/gpu`.
#[test]
fn bottlerocket_time_slicing_is_written_into_the_node_class_user_data() {
    let c = compile_text(&format!("{BOTTLEROCKET_CLUSTER}{SHARED_T4}")).expect("compiles");
    let np = in_cluster(&c, "t", "NodePool").pop().unwrap();
    let class_name = np["spec"]["template"]["spec"]["nodeClassRef"]["name"].as_str().unwrap().to_string();
    assert!(class_name.ends_with("-ts4"), "{class_name}");
    let class = in_cluster(&c, "t", "EC2NodeClass").into_iter().find(|n| n["metadata"]["name"] == class_name.as_str()).expect("the pool's class");
    let user_data = class["spec"]["userData"].as_str().expect("userData");
    for line in ["[settings.kubelet-device-plugins.nvidia]", "device-sharing-strategy = \"time-slicing\"", "replicas = 4", "rename-by-default = false", "fail-requests-greater-than-one = true"] {
        assert!(user_data.contains(line), "{user_data}");
    }
}

#[test]
fn mig_on_bottlerocket_is_e0185() {
    let pool = "pool \"mig\" preset=\"inference-on-demand\" {\n    gpu { name \"H100\"; }\n    mig \"all-1g.10gb\"\n    max-accelerators 16\n}\n";
    let (message, help) = one_error(&format!("{BOTTLEROCKET_CLUSTER}{pool}"), "E0185");
    assert!(message.contains("MIG on Bottlerocket: pool `mig`"), "{message}");
    assert!(help.contains("al2023"), "{help}");
}

/// The GPU Operator chart values gpuplan wrote for a cluster.
fn gpu_operator_values(c: &Compilation, cluster: &str) -> Value {
    helm_values(c, cluster, "gpuplan-gpu-operator-values")
}

/// NVIDIA/gpu-operator v26.7.0 `deployments/gpu-operator/values.yaml`: `dcgmExporter.serviceMonitor.enabled: true`
/// (commit 2e241753f "dcgm-exporter: enable ServiceMonitor by default"), and `controllers/object_controls.go`
/// `ServiceMonitor` replaces ServiceMonitor `nvidia-dcgm-exporter` in the operator's namespace on every reconcile.
/// With `manage=#false` (ml-vision) gpuplan configures that object through the chart's values (copied into the
/// chart's ClusterPolicy by `templates/clusterpolicy.yaml`) with the monitoring block's labels, and writes none itself.
#[test]
fn dcgm_service_monitor_is_configured_through_the_values_when_the_chart_owns_the_cluster_policy() {
    let c = examples();
    let monitor = &gpu_operator_values(&c, "ml-vision")["dcgmExporter"]["serviceMonitor"];
    assert_eq!(monitor["enabled"], true);
    assert_eq!(monitor["interval"], "30s");
    assert_eq!(monitor["additionalLabels"]["release"], "kube-prometheus-stack");
    assert!(!in_cluster(&c, "ml-vision", "ServiceMonitor").iter().any(|m| m["metadata"]["name"] == "nvidia-dcgm-exporter"));
}

/// The same object with `manage=#true`: the ClusterPolicy's `dcgmExporter.serviceMonitor` (labels from the
/// monitoring block), and the chart's values leave it alone.
#[test]
fn dcgm_service_monitor_is_configured_through_the_cluster_policy_when_gpuplan_owns_it() {
    let c = examples();
    let policy = in_cluster(&c, "ml-prod", "ClusterPolicy").pop().expect("ml-prod's ClusterPolicy");
    assert_eq!(policy["spec"]["dcgmExporter"]["serviceMonitor"]["additionalLabels"]["release"], "kube-prometheus-stack");
    assert!(gpu_operator_values(&c, "ml-prod").get("dcgmExporter").is_none());
}

/// Every example's output against the hand-kept table of what NVIDIA/gpu-operator v26.7.0 creates by default
/// (`src/charts/gpu_operator.rs` `OWNED`, each row citing its `assets/` or chart template): gpuplan emits none of
/// them in the operator's namespace (nor the chart's ClusterPolicy while its values let the chart create it).
#[test]
fn no_example_emits_an_object_the_gpu_operator_creates() {
    let c = examples();
    for cluster in &c.plan.clusters {
        let manifests = c.manifests_of(&cluster.name);
        let collisions = gpuplan::check::ops::operator_owned(&manifests, &cluster.ops.monitoring.gpu_operator_namespace);
        assert!(collisions.is_empty(), "{}: {collisions:?}", cluster.name);
    }
}

/// The check itself: a rival `nvidia-dcgm-exporter` ServiceMonitor in the operator's namespace (what ml-vision had)
/// is reported with the upstream file that creates it; the same name in another namespace is not the operator's.
#[test]
fn a_rival_dcgm_service_monitor_in_the_operator_namespace_is_reported() {
    let c = examples();
    let mut manifests = c.manifests_of("ml-vision");
    let mut rival = manifests.iter().find(|m| m.kind() == "ServiceMonitor").unwrap().clone();
    rival.object["metadata"]["name"] = "nvidia-dcgm-exporter".into();
    rival.object["metadata"]["namespace"] = "gpu-operator".into();
    rival.path = PathBuf::from("ml-vision/servicemonitor-nvidia-dcgm-exporter.yaml");
    manifests.push(rival.clone());
    let collisions = gpuplan::check::ops::operator_owned(&manifests, "gpu-operator");
    assert_eq!(collisions.len(), 1, "{collisions:?}");
    assert!(collisions[0].1.message.contains("assets/state-dcgm-exporter/0500_service_monitor.yaml"), "{}", collisions[0].1.message);
    assert!(gpuplan::check::ops::operator_owned(&manifests, "nvidia").is_empty());
}

/// `templates/clusterpolicy.yaml` renders only `{{- if .Values.clusterPolicy.deployCR }}`: gpuplan's own
/// `cluster-policy` is a rival unless its values set `deployCR: false` (they do with `manage=#true`).
#[test]
fn gpuplans_cluster_policy_is_a_rival_only_when_its_values_let_the_chart_create_one() {
    let c = examples();
    let mut manifests = c.manifests_of("ml-prod");
    assert!(gpuplan::check::ops::operator_owned(&manifests, "gpu-operator").is_empty());
    let values = manifests.iter_mut().find(|m| m.object["metadata"]["name"] == "gpuplan-gpu-operator-values").unwrap();
    let text = values.object["data"]["values.yaml"].as_str().unwrap().replace("deployCR: false", "deployCR: true");
    values.object["data"]["values.yaml"] = text.into();
    let collisions = gpuplan::check::ops::operator_owned(&manifests, "gpu-operator");
    assert_eq!(collisions.len(), 1, "{collisions:?}");
    assert!(collisions[0].1.message.contains("ClusterPolicy cluster-policy"), "{}", collisions[0].1.message);
}
