//! CPU pools (issue 19 item 3, "whole clusters"): `cpu { }` pools are parsed with located errors, sized in vCPUs
//! under the same worst-case bound as accelerated pools, rendered without an accelerator taint, linted without the
//! GPU rules, and simulated as Karpenter would place pods on them.
//!
//! Karpenter limits semantics (aws/karpenter-provider-aws `website/content/en/docs/concepts/nodepools.md`, section
//! "spec.limits", published at https://karpenter.sh/docs/concepts/nodepools/): `spec.limits` constrains the maximum
//! amount of resources (`cpu`, `memory`, extended resources such as `nvidia.com/gpu`) the NodePool's nodes can
//! consume; once a limit is exceeded, provisioning is prevented until some nodes have terminated. So `limits: {cpu: N}` bounds a CPU pool's nodes by their vCPUs, and the worst case
//! is N × the highest $/vCPU-hour among its types.

mod common;

use std::process::Command;

use common::{compile_one, profile, with_code};
use gpuplan::catalog::AcceleratorKind;
use serde_json::Value;

const AMI: &str = "al2023@v20251023";

fn errors_of(body: &str) -> String {
    let c = compile_one(profile("p", 10, AMI, body));
    match c.result {
        Err(gpuplan::compile::CompileError::Profiles { diagnostics }) => diagnostics
            .iter()
            .map(|d| format!("{} {} {}", d.code, c.dir.path().join("profiles/p.kdl").display(), gpuplan::diagnostic::render_plain(std::slice::from_ref(d))))
            .collect::<Vec<_>>()
            .join("\n"),
        Ok(_) => panic!("compiled: {body}"),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn cpu_pool_errors_are_located_and_say_what_to_write() {
    // (body, code, line:col of the offending node in the profile (the cluster block takes lines 1–6), message)
    let cases = [
        ("pool \"web\" {\n    cpu { name \"A10G\" }\n    max-cpu 64\n}\n", "E0260", "8:11", "`name` selects an accelerator"),
        ("pool \"web\" {\n    gpu { name \"L4\" }\n    cpu { }\n    max-cpu 64\n}\n", "E0261", "9:5", "says both `gpu`"),
        ("pool \"web\" {\n    cpu { }\n    max-accelerators 8\n}\n", "E0262", "9:22", "write max-cpu 8"),
        ("pool \"llm\" {\n    gpu { }\n    max-cpu 64\n}\n", "E0263", "9:13", "`max-cpu` limits a CPU pool"),
        (
            "pool \"mixed\" preset=\"tiered\" {\n    max-cpu 64\n    tier \"a\" capacity=\"spot\" { cpu { } }\n    tier \"b\" capacity=\"on-demand\" { gpu { }; max-accelerators 4 }\n}\n",
            "E0264",
            "",
            "a pool's tiers run on one kind of node",
        ),
        ("pool \"web\" {\n    cpu { }\n    max-cpu 64\n}\nqueue \"q\" namespace=\"ns\" pool=\"web\" { gpus nominal=4 }\n", "E0265", "11:26", "a CPU pool: gpuplan's queues hold accelerator quotas"),
        // The cpu limit of a CPU pool is its max-cpu: a second `cpu` key in the NodePool's limits would not render.
        ("pool \"web\" {\n    cpu { }\n    max-cpu 64\n    limits cpu=32\n}\n", "E0266", "", "a `cpu` pool's cpu limit is its `max-cpu`"),
        // DCGM reports nothing on a CPU node: the default GPU-utilization HPA would never see data.
        ("pool \"web\" {\n    cpu { }\n    max-cpu 64\n}\nworkload \"api\" namespace=\"ns\" pool=\"web\" {\n    selector \"app\" \"api\"\n    replicas min=1 max=4\n    autoscale gpu-utilization=70\n}\n", "E0267", "", "autoscales on GPU utilization, but pool `web` is a CPU pool"),
    ];
    for (body, code, at, message) in cases {
        let text = errors_of(body);
        assert!(text.contains(code) && text.contains(message), "{code}: {text}");
        if !at.is_empty() {
            assert!(text.contains(&format!("p.kdl:{at}")), "{code} at {at}: {text}");
        }
    }
}

#[test]
fn a_cpu_pool_beside_a_gpu_pool_shares_the_budget_and_the_worst_case_bound_holds() {
    let body = "budget usd-per-hour=30\npool \"web\" { cpu { per-node max=16 }; capacity \"on-demand\" }\npool \"llm\" preset=\"inference-on-demand\" { gpu { name \"L4\" } }\n";
    let c = compile_one(profile("p", 10, AMI, body));
    let plan = &c.ok().plan.clusters[0].pools;
    let web = plan.iter().find(|p| p.name == "web").unwrap();
    let llm = plan.iter().find(|p| p.name == "llm").unwrap();
    assert_eq!((web.accelerator, web.resource()), (AcceleratorKind::Cpu, "cpu"));
    // One step of the common limit is 8 vCPUs on the CPU pool, one GPU on the GPU pool.
    assert_eq!(web.limit % gpuplan::solve::VCPUS_PER_ACCELERATOR, 0, "{}", web.limit_reason);
    assert!(web.limit / gpuplan::solve::VCPUS_PER_ACCELERATOR >= llm.limit, "{} vs {}", web.limit, llm.limit);
    // Σ limit × worst $/unit-hour ≤ budget, each pool bounded by its own worst $/vCPU- or $/GPU-hour.
    // Each node also carries its EBS volumes (`catalog::ebs`), which weigh most per unit on the smallest nodes.
    let worst = |p: &gpuplan::solve::PoolPlan| f64::from(p.limit) * p.candidates.iter().map(|c| (c.ceiling_usd_per_hour + p.node_storage_usd_per_hour) / f64::from(c.units)).fold(0.0, f64::max);
    assert!(worst(web) + worst(llm) <= 30.0 + 1e-6, "{} + {}", worst(web), worst(llm));
    assert!(web.worst_case_usd_per_hour <= worst(web) + 0.01 && web.worst_case_usd_per_hour + llm.worst_case_usd_per_hour <= 30.0 + 0.01);
    assert!(web.candidates.iter().all(|c| c.vcpu <= 16));
}

#[test]
fn a_cpu_only_profile_counts_single_vcpus_and_prices_the_ratio_per_vcpu_hour() {
    let c = compile_one(profile("p", 10, AMI, "budget usd-per-hour=10\npool \"web\" { cpu { memory-min \"8GiB\" }; capacity \"on-demand\" }\n"));
    let web = &c.ok().plan.clusters[0].pools[0];
    let cheapest = web.candidates[0].usd_per_accelerator_hour;
    assert!(web.candidates.iter().all(|c| c.usd_per_accelerator_hour <= cheapest * 1.6 + 1e-9));
    assert!(web.removed.iter().any(|r| r.constraint.starts_with("$/vCPU-hour ≤ 1.6")), "{:?}", web.removed);
    assert!(web.removed.iter().any(|r| r.constraint == "memory per vCPU ≥ 8192 MiB"), "{:?}", web.removed);
    let per_vcpu = web.candidates.iter().map(|c| (c.ceiling_usd_per_hour + web.node_storage_usd_per_hour) / f64::from(c.units)).fold(0.0, f64::max);
    let worst = f64::from(web.limit) * per_vcpu;
    assert!(worst <= 10.0 + 1e-6 && worst + per_vcpu > 10.0, "{worst}: the budget is used, to within one vCPU's price");
}

#[test]
fn a_cpu_nodepool_limits_cpu_has_no_taint_and_no_gpu_add_ons_or_dcgm_alerts() {
    let c = compile_one(profile("p", 10, AMI, "pool \"web\" { cpu { }; max-cpu 64 }\n"));
    let manifests = c.ok().manifests();
    let np = manifests.iter().find(|m| m.kind() == "NodePool").unwrap();
    assert_eq!(np.object["spec"]["limits"], serde_json::json!({ "cpu": "64" }));
    // A general CPU pool must take ordinary pods, which tolerate nothing: no accelerator taint, no pool taint.
    assert!(np.object["spec"]["template"]["spec"]["taints"].is_null(), "{:#}", np.object["spec"]["template"]["spec"]);
    let kinds: Vec<&str> = manifests.iter().map(|m| m.kind()).collect();
    assert!(!kinds.contains(&"ClusterPolicy"), "{kinds:?}");
    let rules = serde_json::to_string(&manifests.iter().find(|m| m.kind() == "PrometheusRule").unwrap().object).unwrap();
    assert!(!rules.contains("DCGM") && rules.contains("raise max-cpu"), "{rules}");
    // A CPU pool of an isolating preset keeps its pool taint: only pods that select the pool land there.
    let c = compile_one(profile("p", 10, AMI, "pool \"batch\" preset=\"batch-spot\" { cpu { }; max-cpu 64 }\n"));
    let np = c.ok().manifests().into_iter().find(|m| m.kind() == "NodePool").unwrap();
    let taints = &np.object["spec"]["template"]["spec"]["taints"];
    assert_eq!(taints.as_array().map(Vec::len), Some(1), "{taints:#}");
    assert_eq!(taints[0]["key"], "gpuplan.dev/pool");
}

#[test]
fn lint_is_clean_on_a_cpu_pool_no_gpu_rule_misfires() {
    let c = compile_one(profile("p", 10, AMI, "pool \"web\" { cpu { }; capacity \"on-demand\"; disruption { consolidation \"WhenEmptyOrUnderutilized\" }; max-cpu 256 }\n"));
    let findings = c.lint();
    assert!(findings.is_empty(), "{}", gpuplan::diagnostic::render_plain(&findings));
    assert!(with_code(&findings, "GP007").is_empty() && with_code(&findings, "GP001").is_empty());
}

#[test]
fn simulate_puts_a_cpu_pod_on_the_cpu_pool_and_a_gpu_pod_never_there() {
    let c = compile_one(profile("p", 10, AMI, "pool \"web\" { cpu { }; capacity \"on-demand\"; max-cpu 64 }\npool \"llm\" { gpu { name \"L4\" }; max-accelerators 8 }\n"));
    let out = c.dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    for m in c.ok().manifests() {
        let file = out.join(format!("{}-{}.yaml", m.kind(), m.object["metadata"]["name"].as_str().unwrap()));
        std::fs::write(file, serde_json::to_string(&m.object).unwrap()).unwrap();
    }
    let pods = c.dir.path().join("pods.yaml");
    std::fs::write(
        &pods,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: default}\nspec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\", memory: 1Gi}}}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: gpu-1, namespace: default}\nspec:\n  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: \"1\"}}}]\n",
    )
    .unwrap();
    let catalogs = common::repo().join("catalogs");
    let run = Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .args(["simulate", "--manifests", out.to_str().unwrap(), "--pods", pods.to_str().unwrap(), "--catalogs", catalogs.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&run.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&run.stderr)));
    let pool_of = |pod: &str| report["nodeclaims"].as_array().unwrap().iter().find(|n| n["pods"].as_array().unwrap().iter().any(|p| p == pod)).map(|n| n["nodepool"].as_str().unwrap().to_string());
    assert_eq!(pool_of("default/web-1").as_deref(), Some("web"), "{report:#}");
    assert_eq!(pool_of("default/gpu-1").as_deref(), Some("llm"), "{report:#}");
}

/// Review fix (stop 20): the findings a CPU pool can get speak of its nodes and vCPUs, not of GPUs. GP002 (an `@latest`
/// AMI) names the profile's NodePools, not a "GPU fleet"; GP006 (a narrow spot pool) suggests more types, not more GPU
/// names; GP018 prices the types per vCPU-hour.
#[test]
fn findings_on_cpu_pools_speak_of_nodes_and_vcpus_not_gpus() {
    let body = "pool \"web\" preset=\"general\" {\n    cpu { }\n    capacity \"spot\"\n    types \"m5.xlarge\" \"m5.2xlarge\" \"m5.4xlarge\"\n    max-cpu 64\n}\nworkload \"api\" namespace=\"ns\" pool=\"web\" {\n    selector \"app\" \"api\"\n    replicas min=1 max=2\n    gpus-per-replica 4\n    requests cpu=\"6\"\n}\n";
    let c = compile_one(profile("p", 10, "al2023@latest", body));
    let findings = c.lint();
    let text = |code: &str| with_code(&findings, code).iter().map(|d| gpuplan::diagnostic::render_plain(&[(*d).clone()])).collect::<String>();
    for code in ["GP002", "GP006", "GP018"] {
        assert!(!text(code).is_empty(), "{code} fires: {}", gpuplan::diagnostic::render_plain(&findings));
        assert!(!text(code).contains("GPU"), "{code} speaks of GPUs on a CPU pool: {}", text(code));
    }
    assert!(text("GP002").contains("replaces every node of profile `p`'s NodePools"), "{}", text("GP002"));
    assert!(text("GP006").contains("more `types`"), "{}", text("GP006"));
    assert!(text("GP018").contains("/vCPU-hour"), "{}", text("GP018"));
}
