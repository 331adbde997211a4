//! Every lint rule: one profile that triggers it (code, message, file:line:col, help) and the same profile with
//! the rule silenced by `allow`. Output-level rules that the solver never violates are triggered by mutating
//! the rendered manifests or by a `--templates` override, as a user's override would.

mod common;

use common::*;
use gpuplan::diagnostic::ProfileDiagnostic;
use gpuplan::lint::RULES;
use gpuplan::report::lint::lint;
use serde_json::json;

const AMI: &str = "al2023@v20251023";

#[track_caller]
fn assert_one<'d>(diagnostics: &'d [ProfileDiagnostic], code: &str, message: &str, location: &str) -> &'d ProfileDiagnostic {
    let found = with_code(diagnostics, code);
    assert_eq!(found.len(), 1, "expected one {code}, got:\n{}", gpuplan::diagnostic::render_plain(diagnostics));
    let d = found[0];
    assert!(d.message.contains(message), "{code} message `{}` lacks `{message}`", d.message);
    assert_eq!(d.location, location, "{code}: {}", d.message);
    assert!(!d.is_error(), "lint findings are warnings");
    let help = d.help.as_deref().unwrap_or("");
    assert!(help.contains(&format!("allow \"{code}\"")), "{code} help `{help}` says how to silence it");
    d
}

#[track_caller]
fn assert_none(diagnostics: &[ProfileDiagnostic], code: &str) {
    let found = with_code(diagnostics, code);
    assert!(found.is_empty(), "expected no {code}, got:\n{}", gpuplan::diagnostic::render_plain(diagnostics));
}

/// An on-demand L4 pool: nothing to lint.
fn clean_pool(extra: &str) -> String {
    format!("budget usd-per-hour=100\npool \"web\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"L4\"; per-node max=1; }}\n{extra}}}\n")
}

#[test]
fn rule_table_is_consistent() {
    // Ordered and unique (codes are assigned per issue, so one may land before its predecessor).
    for (i, rule) in RULES.iter().enumerate() {
        assert!(rule.code.as_str().len() == 5 && rule.code.as_str().starts_with("GP") && rule.code.as_str()[2..].parse::<u32>().is_ok(), "{}", rule.code);
        assert!(i == 0 || RULES[i - 1].code < rule.code, "codes are ordered: {} after {}", rule.code, RULES[i - 1].code);
        assert!(!rule.summary.is_empty() && !rule.name.is_empty());
    }
}

#[test]
fn clean_profile_has_no_findings() {
    let c = compile_one(profile("p", 10, AMI, &clean_pool("")));
    let d = c.lint();
    assert!(d.is_empty(), "{}", gpuplan::diagnostic::render_plain(&d));
}

#[test]
fn gp001_underutilized_consolidation() {
    let text = profile("p", 10, AMI, &clean_pool("    disruption { consolidation \"WhenEmptyOrUnderutilized\"; }\n"));
    let c = compile_one(text.clone());
    let d = c.lint();
    assert_one(&d, "GP001", "NodePool `web` consolidates WhenEmptyOrUnderutilized: Karpenter may delete a node that runs GPU pods whenever their nvidia.com/gpu requests fit on other or cheaper nodes, restarting long-running GPU work", &c.loc("p.kdl", "\"WhenEmptyOrUnderutilized\""));
    let c = compile_one(text.replace("disruption {", "allow \"GP001\"\n    disruption {"));
    assert_none(&c.lint(), "GP001");
}

#[test]
fn gp002_ami_latest_is_accepted_and_warned() {
    let c = compile_one(profile("p", 10, "al2023@latest", &clean_pool("")));
    let d = c.lint();
    let f = assert_one(&d, "GP002", "AMI alias `al2023@latest` (EC2NodeClass p) follows every AMI release", &c.loc("p.kdl", "\"al2023@latest\""));
    assert!(f.help.as_deref().unwrap().contains("al2023@v"));
    // Silenced at the top level of the profile.
    let c = compile_one(profile("p", 10, "al2023@latest", &format!("allow \"GP002\"\n{}", clean_pool(""))));
    assert_none(&c.lint(), "GP002");
}

#[test]
fn gp003_scheduled_budget_without_always_on() {
    let extra = "    disruption { budget nodes=\"0\" schedule=\"0 9 * * 1-5\" duration=\"8h\"; }\n";
    let c = compile_one(profile("p", 10, AMI, &clean_pool(extra)));
    let d = c.lint();
    assert_one(&d, "GP003", "no always-on budget for Empty, Underutilized, Drifted", &c.loc("p.kdl", "budget nodes=\"0\""));
    // An always-on budget for Drifted only still leaves the other reasons unbounded.
    let extra2 = "    disruption { budget nodes=\"0\" schedule=\"0 9 * * 1-5\" duration=\"8h\"; budget nodes=\"1\" reasons=\"Drifted\"; }\n";
    let c = compile_one(profile("p", 10, AMI, &clean_pool(extra2)));
    assert_one(&c.lint(), "GP003", "no always-on budget for Empty, Underutilized:", &c.loc("p.kdl", "budget nodes=\"0\""));
    // With an always-on budget: fine. Allowed: silent.
    let ok = "    disruption { budget nodes=\"0\" schedule=\"0 9 * * 1-5\" duration=\"8h\"; budget nodes=\"1\"; }\n";
    assert_none(&lint(compile_one(profile("p", 10, AMI, &clean_pool(ok))).ok()), "GP003");
    let allowed = format!("    allow \"GP003\"\n{extra}");
    assert_none(&lint(compile_one(profile("p", 10, AMI, &clean_pool(&allowed))).ok()), "GP003");
}

#[test]
fn gp003_training_preset_window_is_paired() {
    let body = "pool \"train\" preset=\"training-on-demand\" {\n    gpu { name \"A100\"; per-node min=8; }\n    max-accelerators 16\n}\n";
    let c = compile_one(profile("p", 10, AMI, body));
    let d = c.lint();
    assert_none(&d, "GP003");
    assert_none(&d, "GP009");
}

/// A pool of 4-GPU nodes with max-accelerators 16, whose rendered limit is then lowered below 4.
fn four_gpu_pool(extra: &str) -> String {
    profile("p", 10, AMI, &format!("pool \"big\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"L4\"; per-node min=4 max=4; }}\n    max-accelerators 16\n{extra}}}\n"))
}

#[test]
fn gp004_limit_below_largest_node() {
    let mut c = compile_one(four_gpu_pool(""));
    object_mut(&mut c, "NodePool", "big")["spec"]["limits"]["nvidia.com/gpu"] = json!("2");
    let d = c.lint();
    assert_one(&d, "GP004", "NodePool `big` limits nvidia.com/gpu to 2, but its largest instance type g6.12xlarge has 4: that node can never launch", &c.loc("p.kdl", "16"));
    let mut c = compile_one(four_gpu_pool("    allow \"GP004\"\n"));
    object_mut(&mut c, "NodePool", "big")["spec"]["limits"]["nvidia.com/gpu"] = json!("2");
    assert_none(&c.lint(), "GP004");
}

#[test]
fn gp004_counts_time_slicing_replicas() {
    let mut c = compile_one(four_gpu_pool("    time-slicing replicas=4\n"));
    // 4 GPUs × 4 replicas = 16 schedulable units on the largest node; the solver's limit is 64.
    let np = object_mut(&mut c, "NodePool", "big");
    assert_eq!(np["spec"]["limits"]["nvidia.com/gpu"], json!("64"));
    np["spec"]["limits"]["nvidia.com/gpu"] = json!("8");
    let d = c.lint();
    assert_one(&d, "GP004", "has 16 (4 × time-slicing replicas 4)", &c.loc("p.kdl", "16"));
}

#[test]
fn gp005_equal_weights_in_rendered_output() {
    let body = "budget usd-per-hour=100\npool \"llm\" preset=\"inference-spot\" {\n    gpu { name \"L4\" \"A10G\" \"L40S\"; }\n    allow \"GP006\"\n}\n";
    let mut c = compile_one(profile("p", 10, AMI, body));
    assert_none(&c.lint(), "GP005");
    // A template override that hard-codes the weight ties the spot and on-demand pools.
    for name in ["llm-spot", "llm-on-demand"] {
        object_mut(&mut c, "NodePool", name)["spec"]["weight"] = json!(50);
    }
    let d = c.lint();
    assert_one(&d, "GP005", "NodePool `llm-spot` has weight 50 like overlapping NodePool `llm-on-demand` in cluster `ml`", &c.loc("p.kdl", "\"llm\""));

    let mut c = compile_one(profile("p", 10, AMI, &body.replace("allow \"GP006\"", "allow \"GP006\" \"GP005\"")));
    for name in ["llm-spot", "llm-on-demand"] {
        object_mut(&mut c, "NodePool", name)["spec"]["weight"] = json!(50);
    }
    assert_none(&c.lint(), "GP005");
}

#[test]
fn gp005_points_at_explicit_weight_across_profiles() {
    let a = profile("a", 10, AMI, &clean_pool(""));
    let b = profile("b", 20, AMI, "budget usd-per-hour=100\npool \"batch\" preset=\"inference-on-demand\" {\n    gpu { name \"L4\"; per-node max=1; }\n    weight 90\n}\n");
    let mut c = compile_profiles(&[("a.kdl", a), ("b.kdl", b)], &[]);
    object_mut(&mut c, "NodePool", "web")["spec"]["weight"] = json!(90);
    let d = c.lint();
    // `web` sorts after `batch`: Karpenter prefers `batch`, so the finding is on `web` (weight assigned).
    assert_one(&d, "GP005", "NodePool `web` has weight 90 like overlapping NodePool `batch`", &c.loc("a.kdl", "\"web\""));
    object_mut(&mut c, "NodePool", "web")["spec"]["weight"] = json!(100);
    object_mut(&mut c, "NodePool", "batch")["spec"]["weight"] = json!(100);
    let d = c.lint();
    assert_eq!(with_code(&d, "GP005").len(), 1);
}

#[test]
fn gp006_narrow_spot_pool_names_the_constraint() {
    let body = "budget usd-per-hour=50\npool \"vision\" preset=\"batch-spot\" {\n    gpu { name \"A10G\"; per-node max=1; }\n}\n";
    let c = compile_one(profile("p", 10, AMI, body));
    let d = c.lint();
    let f = assert_one(&d, "GP006", "spot NodePool `vision` has 4 instance types: few spot pools mean more interruptions and insufficient-capacity launch failures (and spot-to-spot consolidation, which also needs the SpotToSpotConsolidation feature gate and WhenEmptyOrUnderutilized, needs at least 15); `accelerator name in [A10G]` removed the most", &c.loc("p.kdl", "\"A10G\""));
    assert!(f.help.as_deref().unwrap().contains("more GPU names"));
    let c = compile_one(profile("p", 10, AMI, &body.replace("per-node max=1; }", "per-node max=1; }\n    allow \"GP006\"")));
    assert_none(&c.lint(), "GP006");
}

#[test]
fn gp006_on_demand_pools_are_not_checked() {
    let d = lint(compile_one(profile("p", 10, AMI, &clean_pool(""))).ok());
    assert_none(&d, "GP006");
}

fn template_without_gpu_taint() -> String {
    let builtin = gpuplan::render::BUILTIN_TEMPLATES.iter().find(|(n, _)| *n == "nodepool.yaml.j2").unwrap().1;
    // The GPU taint softened to PreferNoSchedule (a taint that keeps no pod, and so no add-on, off the node).
    let replaced = builtin.replace("effect: {{ taint.effect }}", "effect: {{ \"PreferNoSchedule\" if taint.key == pool.resource else taint.effect }}");
    assert_ne!(replaced, builtin, "the built-in template changed: update this override");
    replaced
}

#[test]
fn gp007_template_override_dropping_gpu_taint() {
    let c = compile_profiles(&[("p.kdl", profile("p", 10, AMI, &clean_pool("")))], &[("nodepool.yaml.j2", template_without_gpu_taint())]);
    let d = c.lint();
    assert_one(&d, "GP007", "NodePool `web` has no `nvidia.com/gpu` NoSchedule taint", &c.loc("p.kdl", "gpu {"));
    let c = compile_profiles(&[("p.kdl", profile("p", 10, AMI, &clean_pool("    allow \"GP007\"\n")))], &[("nodepool.yaml.j2", template_without_gpu_taint())]);
    assert_none(&c.lint(), "GP007");
}

#[test]
fn gp007_neuron_pools_need_the_neuron_taint() {
    let body = "pool \"inf\" preset=\"inference-on-demand\" {\n    neuron { name \"Inferentia2\"; }\n    max-accelerators 12\n}\n";
    let mut c = compile_one(profile("p", 10, AMI, body));
    assert_none(&c.lint(), "GP007");
    object_mut(&mut c, "NodePool", "inf")["spec"]["template"]["spec"]["taints"] = json!([{ "key": "nvidia.com/gpu", "effect": "PreferNoSchedule" }]);
    assert_one(&c.lint(), "GP007", "no `aws.amazon.com/neuron` NoSchedule taint", &c.loc("p.kdl", "neuron {"));
}

#[test]
fn gp008_fractional_gpu_types() {
    let extra = "    types \"g6.xlarge\" \"g6f.xlarge\"\n";
    let c = compile_one(profile("p", 10, AMI, &clean_pool(extra)));
    let d = c.lint();
    assert_one(&d, "GP008", "NodePool `web` admits g6f.xlarge, which EC2 reports with a fraction of a GPU (1/8 of one L4, 2861 MiB), named in `types`: Karpenter derives no whole `nvidia.com/gpu`", &c.loc("p.kdl", "\"g6f.xlarge\""));
    let c = compile_one(profile("p", 10, AMI, &clean_pool(&format!("{extra}    allow \"GP008\"\n"))));
    assert_none(&c.lint(), "GP008");
}

#[test]
fn gp008_slipped_in_by_template_points_at_gpu_block() {
    let mut c = compile_one(profile("p", 10, AMI, &clean_pool("")));
    let np = object_mut(&mut c, "NodePool", "web");
    let reqs = np["spec"]["template"]["spec"]["requirements"].as_array_mut().unwrap();
    let types = reqs.iter_mut().find(|r| r["key"] == "node.kubernetes.io/instance-type").unwrap();
    types["values"].as_array_mut().unwrap().push(json!("gr6f.4xlarge"));
    let d = c.lint();
    assert_one(&d, "GP008", "admits gr6f.4xlarge, which EC2 reports with a fraction of a GPU (1/2 of one L4, 11444 MiB): Karpenter derives no whole", &c.loc("p.kdl", "gpu {"));
}

#[test]
fn gp009_never_expire_without_drifted_budget() {
    let extra = "    disruption { expire-after \"Never\"; budget nodes=\"10%\"; }\n";
    let c = compile_one(profile("p", 10, AMI, &clean_pool(extra)));
    let d = c.lint();
    assert_one(&d, "GP009", "NodePool `web` never expires its nodes (expireAfter: Never) but no disruption budget names `Drifted`: drift (a new AMI, a NodeClass change) is their only replacement path", &c.loc("p.kdl", "\"Never\""));
    // Without explicit budgets the solver adds the Drifted budget itself.
    let c = compile_one(profile("p", 10, AMI, &clean_pool("    disruption { expire-after \"Never\"; }\n")));
    assert_none(&c.lint(), "GP009");
    let c = compile_one(profile("p", 10, AMI, &clean_pool(&format!("    allow \"GP009\"\n{extra}"))));
    assert_none(&c.lint(), "GP009");
}

#[test]
fn gp010_reserved_without_selector_terms() {
    // The reservation is the pool's first tier, `web-reserved`, with its own EC2NodeClass.
    let extra = "    reserved { id \"cr-0123456789abcdef0\"; instance-type \"g6.xlarge\"; instances 2; }\n";
    let mut c = compile_one(profile("p", 10, AMI, &clean_pool(extra)));
    assert_none(&c.lint(), "GP010");
    object_mut(&mut c, "EC2NodeClass", "web-reserved")["spec"].as_object_mut().unwrap().remove("capacityReservationSelectorTerms");
    let d = c.lint();
    assert_one(&d, "GP010", "NodePool `web-reserved` launches reserved capacity, but its EC2NodeClass `web-reserved` has no capacityReservationSelectorTerms", &c.loc("p.kdl", "reserved {"));
    let mut c = compile_one(profile("p", 10, AMI, &clean_pool(&format!("{extra}    allow \"GP010\"\n"))));
    object_mut(&mut c, "EC2NodeClass", "web-reserved")["spec"].as_object_mut().unwrap().remove("capacityReservationSelectorTerms");
    assert_none(&c.lint(), "GP010");
}

#[test]
fn gp011_limits_over_budget() {
    let mut c = compile_one(profile("p", 10, AMI, &clean_pool("")));
    let np = object_mut(&mut c, "NodePool", "web");
    np["spec"]["limits"]["nvidia.com/gpu"] = json!("500");
    let d = c.lint();
    assert_one(&d, "GP011", "the NodePool limits of profile `p` allow a worst case of $", &c.loc("p.kdl", "usd-per-hour=100"));
    assert!(with_code(&d, "GP011")[0].message.contains("over its budget of $100.00/h: web (500 nvidia.com/gpu on "));
    // Silenced only at the top level of the profile.
    let mut c = compile_one(profile("p", 10, AMI, &format!("allow \"GP011\"\n{}", clean_pool(""))));
    object_mut(&mut c, "NodePool", "web")["spec"]["limits"]["nvidia.com/gpu"] = json!("500");
    assert_none(&c.lint(), "GP011");
}

#[test]
fn gp011_catches_added_pricier_types() {
    let mut c = compile_one(profile("p", 10, AMI, &clean_pool("")));
    let np = object_mut(&mut c, "NodePool", "web");
    let reqs = np["spec"]["template"]["spec"]["requirements"].as_array_mut().unwrap();
    let types = reqs.iter_mut().find(|r| r["key"] == "node.kubernetes.io/instance-type").unwrap();
    types["values"] = json!(["p5.48xlarge"]);
    let d = c.lint();
    assert_eq!(with_code(&d, "GP011").len(), 1, "{}", gpuplan::diagnostic::render_plain(&d));
    assert!(with_code(&d, "GP011")[0].message.contains("on 1 type(s)"), "{}", with_code(&d, "GP011")[0].message);
}

#[test]
fn gp012_cost_annotation_drift() {
    let mut c = compile_one(profile("p", 10, AMI, &clean_pool("")));
    let np = object_mut(&mut c, "NodePool", "web");
    np["metadata"]["annotations"]["gpuplan.dev/worst-case-usd-per-hour"] = json!("1.00");
    let d = c.lint();
    assert_one(&d, "GP012", "NodePool `web` cost annotations disagree with what it can launch: worst case $1.00/h, but ", &c.loc("p.kdl", "\"web\""));
    let mut c = compile_one(profile("p", 10, AMI, &clean_pool("    allow \"GP012\"\n")));
    object_mut(&mut c, "NodePool", "web")["metadata"]["annotations"]["gpuplan.dev/worst-case-usd-per-hour"] = json!("1.00");
    assert_none(&c.lint(), "GP012");
}

#[test]
fn gp013_limit_missing_or_numeric() {
    let mut c = compile_one(four_gpu_pool(""));
    object_mut(&mut c, "NodePool", "big")["spec"]["limits"]["nvidia.com/gpu"] = json!(16);
    let d = c.lint();
    assert_one(&d, "GP013", "NodePool `big` writes its `nvidia.com/gpu` limit as 16, not a string", &c.loc("p.kdl", "16"));
    object_mut(&mut c, "NodePool", "big")["spec"]["limits"] = json!({ "cpu": "1000" });
    let d = c.lint();
    assert_one(&d, "GP013", "NodePool `big` has no `nvidia.com/gpu` limit: the pool can grow without bound", &c.loc("p.kdl", "16"));
    let mut c = compile_one(four_gpu_pool("    allow \"GP013\"\n"));
    object_mut(&mut c, "NodePool", "big")["spec"]["limits"] = json!({});
    assert_none(&c.lint(), "GP013");
}

/// kube-prometheus-stack's Prometheus selects PrometheusRules and ServiceMonitors by `release: <release name>`
/// (prometheus-community/helm-charts charts/kube-prometheus-stack/templates/prometheus/prometheus.yaml,
/// `ruleSelectorNilUsesHelmValues: true` in values.yaml): a rule without a label is never loaded.
#[test]
fn gp015_monitoring_without_selector_label() {
    // The default label is there: no finding.
    let c = compile_one(profile("p", 10, AMI, &clean_pool("")));
    assert_none(&c.lint(), "GP015");
    // Cleared by the user: the warning points at the monitoring block.
    let body = format!("{}monitoring {{\n    label \"release\" #null\n}}\n", clean_pool(""));
    let c = compile_one(profile("p", 10, AMI, &body));
    let d = c.lint();
    let f = assert_one(&d, "GP015", "the PrometheusRule and ServiceMonitors of cluster", &c.loc("p.kdl", "monitoring"));
    assert!(f.message.contains("release: <its release>"), "{}", f.message);
    assert!(f.help.as_deref().unwrap().contains("label \"release\" \"kube-prometheus-stack\""));
    // Another label (a Prometheus with its own selector) is fine; so is allow at the top level.
    let c = compile_one(profile("p", 10, AMI, &body.replace("#null", "\"prom\"")));
    assert_none(&c.lint(), "GP015");
    let c = compile_one(profile("p", 10, AMI, &format!("allow \"GP015\"\n{body}")));
    assert_none(&c.lint(), "GP015");
}

/// NVIDIA/gpu-operator v26.7.0 `deployments/gpu-operator/values.yaml`: `dcgmExporter.serviceMonitor` is on by
/// default with `honorLabels: false` and no `additionalLabels` (commit 2e241753f), and the operator replaces any
/// other writer's `nvidia-dcgm-exporter` (`controllers/object_controls.go` `ServiceMonitor`). With `values=#false`
/// gpuplan configures neither it nor a rival: GP042 at the monitoring block; with gpuplan's values, nothing.
#[test]
fn gp042_warns_when_nothing_configures_the_operators_dcgm_service_monitor() {
    // A pool without gpuplan's pool taint: the chart's default tolerations reach it (no E0184 with values=#false).
    let pool = "budget usd-per-hour=100\npool \"web\" preset=\"general\" {\n    gpu { name \"L4\"; per-node max=1; }\n}\n";
    let body = |props: &str| format!("{pool}monitoring {{\n    gpu-operator {props}\n}}\n");
    let c = compile_one(profile("p", 10, AMI, &body("manage=#false values=#false")));
    let d = c.lint();
    let f = assert_one(&d, "GP042", "runs the GPU Operator with Helm values gpuplan does not write", &c.loc("p.kdl", "monitoring"));
    assert!(f.help.as_deref().unwrap().contains("additionalLabels: {release: kube-prometheus-stack}"), "{:?}", f.help);
    for props in ["manage=#false", "manage=#true values=#false"] {
        assert_none(&compile_one(profile("p", 10, AMI, &body(props))).lint(), "GP042");
    }
}

#[test]
fn gp000_unknown_allow_code() {
    let c = compile_one(profile("p", 10, AMI, &format!("allow \"GP01\"\n{}", clean_pool("    allow \"GP006\" \"nonsense\"\n"))));
    let d = c.lint();
    let found = with_code(&d, "GP000");
    assert_eq!(found.len(), 2, "{}", gpuplan::diagnostic::render_plain(&d));
    assert_eq!(found[0].message, "`allow \"GP01\"` names no lint rule: it silences nothing");
    assert_eq!(found[0].location, c.loc("p.kdl", "\"GP01\""));
    assert!(found[0].help.as_deref().unwrap().starts_with("did you mean `GP001`?"), "{:?}", found[0].help);
    assert_eq!(found[1].location, c.loc("p.kdl", "\"nonsense\""));
}

#[test]
fn findings_are_sorted_and_deterministic() {
    let extra = "    disruption { consolidation \"WhenEmptyOrUnderutilized\"; expire-after \"Never\"; budget nodes=\"10%\"; }\n";
    let c = compile_one(profile("p", 10, "al2023@latest", &clean_pool(extra)));
    let a: Vec<String> = c.lint().iter().map(|d| format!("{} {}", d.code, d.location)).collect();
    // Linted again, on every core, on the objects parsed back from the files: the same findings, same order.
    let again = gpuplan::report::lint::lint_on(c.ok(), &c.ok().manifests());
    let b: Vec<String> = again.iter().map(|d| format!("{} {}", d.code, d.location)).collect();
    assert_eq!(a, b);
    let codes: Vec<&str> = a.iter().map(|s| &s[..5]).collect();
    assert_eq!(codes, ["GP002", "GP001", "GP009"], "sorted by position in the file");
}

/// The example profiles: what lint says about them, as a user sees it.
#[test]
fn examples_snapshot() {
    let c = gpuplan::compile::compile(&gpuplan::compile::CompileOptions::default()).unwrap();
    let d = lint(&c);
    // The solver's own output never trips the output-drift rules.
    for code in ["GP004", "GP005", "GP007", "GP010", "GP011", "GP012", "GP013"] {
        assert_none(&d, code);
    }
    insta::assert_snapshot!("examples", gpuplan::diagnostic::render_plain(&d));
}

/// GP014: the profile names H100 next to A100, and the default price-ratio-max (1.6) removes every p5 (an H100
/// costs ≈ 2.5 × an A100 per GPU-hour): without the warning the pool silently never gets an H100.
#[test]
fn gp014_named_gpu_removed_by_price_ratio() {
    let body = "budget usd-per-hour=400\npool \"t\" preset=\"training-on-demand\" {\n    gpu { name \"H100\" \"A100\"; per-node min=8; }\n}\n";
    let c = compile_one(profile("p", 10, AMI, body));
    let d = c.lint();
    let f = assert_one(&d, "GP014", "NodePool `t` never gets H100: price-ratio-max 1.6 removed every type that has it (p5.48xlarge", &c.loc("p.kdl", "\"H100\""));
    assert!(f.help.as_deref().unwrap().contains("raise `price-ratio-max`"));
    // A ratio that admits p5 keeps H100, and the warning goes.
    let c = compile_one(profile("p", 10, AMI, &body.replace("per-node min=8; }", "per-node min=8; }\n    price-ratio-max 2.6")));
    assert_none(&c.lint(), "GP014");
    let c = compile_one(profile("p", 10, AMI, &body.replace("per-node min=8; }", "per-node min=8; }\n    allow \"GP014\"")));
    assert_none(&c.lint(), "GP014");
}

/// GP017 reads the rendered objects (`ops::addons`): a pool taint added after compile (a hand edit, an adopted
/// NodePool) that the NFD worker's tolerations in the values ConfigMap do not cover keeps the GPU Operator off the
/// node (NVIDIA/gpu-operator v26.7.0 `deployments/gpu-operator/values.yaml`, `node-feature-discovery.worker`).
#[test]
fn gp017_a_taint_the_nfd_worker_does_not_tolerate_is_reported_at_the_pool() {
    let mut c = compile_one(profile("p", 10, AMI, &clean_pool("")));
    let taints = object_mut(&mut c, "NodePool", "web")["spec"]["template"]["spec"]["taints"].as_array_mut().unwrap();
    taints.push(json!({ "key": "team", "value": "search", "effect": "NoExecute" }));
    let d = c.lint();
    let found = with_code(&d, "GP017");
    assert!(!found.is_empty(), "{}", gpuplan::diagnostic::render_plain(&d));
    let nfd = found.iter().find(|f| f.message.contains("gpu-operator-node-feature-discovery-worker")).expect("the NFD worker is named");
    assert!(nfd.message.contains("NodePool `web`") && nfd.message.contains("team:NoExecute"), "{}", nfd.message);
    assert_eq!(nfd.location, c.loc("p.kdl", "\"web\""));
    assert!(nfd.help.as_deref().unwrap_or("").contains("ConfigMap gpuplan-gpu-operator-values (values.yaml: node-feature-discovery.worker.tolerations)"), "{:?}", nfd.help);
}

#[test]
fn gp017_is_quiet_when_every_add_on_tolerates_the_pool() {
    assert_none(&compile_one(profile("p", 10, AMI, &clean_pool(""))).lint(), "GP017");
}

/// A replica of `cpu` on the clean L4 pool (g6.xlarge: 4 vCPU, 3.92 allocatable after kube-reserved; bigger g6 too).
fn l4_workload(cpu: &str, allow: &str) -> String {
    profile("p", 10, AMI, &format!("{}workload \"w\" namespace=\"ns\" pool=\"web\" {{\n    selector \"app\" \"w\"\n    replicas 1\n    requests cpu=\"{cpu}\"\n}}\n", clean_pool(allow)))
}

// A 4-vCPU replica does not fit a 4-vCPU node: Karpenter's allocatable is capacity − kube-reserved (6% of the first core,
// 1% of the second, 0.5% of the next two: aws/karpenter-provider-aws pkg/providers/instancetype/types.go
// `kubeReservedResources`), and the scheduler keeps only the types whose allocatable holds the pods' requests
// (kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/nodeclaim.go `CanAdd`, `filterInstanceTypesByRequirements`).
#[test]
fn gp018_replica_that_fills_a_whole_xlarge_does_not_fit_it() {
    let c = compile_one(l4_workload("4", ""));
    let d = c.lint();
    let found = assert_one(&d, "GP018", "one replica of workload `ns/w` does not fit on g6.xlarge (cpu 4.00 > 3.92 allocatable, 140m of it to DaemonSets)", &c.loc("p.kdl", "cpu=\"4\""));
    assert!(found.message.contains("the cheapest type it fits, g6.2xlarge"), "{}", found.message);
}

/// Every EKS node runs aws-node (25m: aws/eks-charts `stable/aws-vpc-cni/values.yaml` v1.23.0 `resources.requests`),
/// kube-proxy (100m: the EKS kube-proxy add-on, docs.aws.amazon.com/eks/latest/userguide/managing-kube-proxy.html),
/// ebs-csi-node (10m: kubernetes-sigs/aws-ebs-csi-driver `charts/aws-ebs-csi-driver/values.yaml` `node.resources`) and
/// eks-pod-identity-agent (aws/eks-pod-identity-agent `charts/eks-pod-identity-agent/values.yaml`: a pod slot), all
/// tolerating every taint; Karpenter subtracts them from each type before it fits a pod (kubernetes-sigs/karpenter
/// v1.14.1 scheduler.go `buildDaemonOverheadGroups`). g6.2xlarge has 7.91 CPU allocatable: 7.8 fits beside the GPU
/// Operator's 5m, not beside 140m.
#[test]
fn a_7800m_replica_on_g6_2xlarge_pends_once_the_eks_node_daemon_sets_are_counted() {
    let c = compile_one(l4_workload("7800m", ""));
    let Err(gpuplan::compile::CompileError::Profiles { diagnostics }) = &c.result else { panic!("compiled") };
    let e = diagnostics.iter().find(|d| d.code == "E0180").unwrap_or_else(|| panic!("{diagnostics:?}"));
    assert_eq!(e.location, c.loc("p.kdl", "1\n    requests cpu"), "{}", e.message);
    // `node-daemons "none"` (a cluster with its own CNI and no kube-proxy): only the GPU Operator's 5m, and it fits.
    let none = compile_one(l4_workload("7800m", "").replacen("    ami ", "    node-daemons \"none\"\n    ami ", 1));
    let d = none.lint();
    assert!(with_code(&d, "GP018").iter().all(|f| !f.message.contains("g6.2xlarge (")), "{d:?}");
}

/// An unknown name in `node-daemons` is E0118, with the list.
#[test]
fn node_daemons_with_an_unknown_name_is_e0118() {
    let c = compile_one(l4_workload("1", "").replacen("    ami ", "    node-daemons \"calico-node\"\n    ami ", 1));
    let Err(gpuplan::compile::CompileError::Profiles { diagnostics }) = &c.result else { panic!("compiled") };
    assert!(diagnostics.iter().any(|d| d.code == "E0118" && d.message.contains("calico-node")), "{diagnostics:?}");
}

#[test]
fn gp018_is_silent_when_the_replica_fits_every_type() {
    assert_none(&compile_one(l4_workload("3500m", "")).lint(), "GP018");
}

#[test]
fn gp018_is_silenced_by_allow_in_the_pool() {
    assert_none(&compile_one(l4_workload("4", "    allow \"GP018\"\n")).lint(), "GP018");
}

/// An EFA training pool on `gpu { name … }`.
fn efa_pool(names: &str, allow: &str) -> String {
    profile("p", 10, AMI, &format!("budget usd-per-hour=300\npool \"train\" preset=\"training-on-demand\" {{\n    gpu {{ name {names}; per-node min=8; }}\n    price-ratio-max 3\n    efa #true\n{allow}}}\n"))
}

// NCCL collectives proceed at the pace of the slowest rank (NVIDIA NCCL docs, "Collective operations": every rank takes
// part in each step), and nothing in an EFA pool keeps one job's pods on one GPU model.
#[test]
fn gp019_efa_pool_admitting_a100_and_h100_is_reported() {
    let c = compile_one(efa_pool("\"A100\" \"H100\"", ""));
    let d = c.lint();
    assert_one(&d, "GP019", "EFA pool `train` admits GPU models A100, H100", &c.loc("p.kdl", "#true"));
}

#[test]
fn gp019_is_silent_for_one_gpu_model_and_silenced_by_allow() {
    assert_none(&compile_one(efa_pool("\"H100\"", "")).lint(), "GP019");
    assert_none(&compile_one(efa_pool("\"A100\" \"H100\"", "    allow \"GP019\"\n")).lint(), "GP019");
}

/// The clean L4 pool with a workload KEDA scales to zero (woken by a Kueue queue), `allow` at the top level.
fn scale_to_zero_workload(allow: &str) -> String {
    profile("p", 10, AMI, &format!("{allow}{}workload \"w\" namespace=\"ns\" pool=\"web\" {{\n    selector \"app\" \"w\"\n    replicas min=0 max=4\n    scale-to-zero\n    trigger \"kueue-pending\" cluster-queue=\"q\"\n}}\n", clean_pool("")))
}

/// The cluster's objects plus an HPA someone applied by hand on the workload's Deployment.
fn with_hand_written_hpa(c: &mut Compiled) {
    let mut manifests = c.edited.take().unwrap_or_else(|| c.ok().manifests());
    let so = manifests.iter().find(|m| m.kind() == "ScaledObject").expect("a ScaledObject").clone();
    let mut hpa = so;
    hpa.path = "ml/horizontalpodautoscaler-ns-w-by-hand.yaml".into();
    hpa.object = json!({ "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": { "name": "w-by-hand", "namespace": "ns" },
        "spec": { "scaleTargetRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": "w" }, "minReplicas": 1, "maxReplicas": 4 } });
    manifests.push(hpa);
    c.edited = Some(manifests);
}

// kedacore/keda v2.20.2 apis/keda/v1alpha1/scaledobject_webhook.go `verifyHpas`: "the workload '%s' of type '%s' is
// already managed by the hpa '%s'".
#[test]
fn gp024_scaled_object_and_hand_written_hpa_on_one_deployment_is_reported_at_the_workload() {
    let mut c = compile_one(scale_to_zero_workload(""));
    assert_none(&c.lint(), "GP024");
    with_hand_written_hpa(&mut c);
    let d = c.lint();
    assert_one(&d, "GP024", "Deployment ns/w is scaled by ScaledObject `w` and by HorizontalPodAutoscaler `w-by-hand`", &c.loc("p.kdl", "\"w\" namespace"));
}

#[test]
fn gp024_is_silenced_by_allow_in_the_profile() {
    let mut c = compile_one(scale_to_zero_workload("allow \"GP024\"\n"));
    with_hand_written_hpa(&mut c);
    assert_none(&c.lint(), "GP024");
}

// At one replica a PDB with minAvailable 1 allows no eviction (kubernetes.io/docs/tasks/run-application/configure-pdb/:
// "When you set zero voluntary evictions … you cannot successfully drain a Node running one of those Pods").
#[test]
fn gp025_scale_to_zero_workload_whose_pdb_keeps_min_available_one_is_reported() {
    let mut c = compile_one(scale_to_zero_workload(""));
    assert_none(&c.lint(), "GP025");
    let spec = &mut object_mut(&mut c, "PodDisruptionBudget", "w")["spec"];
    spec.as_object_mut().unwrap().remove("maxUnavailable");
    spec["minAvailable"] = json!(1);
    let d = c.lint();
    assert_one(&d, "GP025", "workload `ns/w` scales to zero, and PodDisruptionBudget `w` keeps minAvailable 1 of its pods", &c.loc("p.kdl", "\"w\" namespace"));
}

#[test]
fn gp025_counts_a_percentage_as_at_least_one_pod_and_ignores_a_floor_above_zero() {
    let mut c = compile_one(scale_to_zero_workload(""));
    let spec = &mut object_mut(&mut c, "PodDisruptionBudget", "w")["spec"];
    spec.as_object_mut().unwrap().remove("maxUnavailable");
    spec["minAvailable"] = json!("10%");
    assert_eq!(with_code(&c.lint(), "GP025").len(), 1);
    object_mut(&mut c, "ScaledObject", "w")["spec"]["minReplicaCount"] = json!(2);
    assert_none(&c.lint(), "GP025");
}

/// `gpuplan lint --manifests`: what `kubectl get hpa -A -o yaml` printed (a List) is linted with the compiled objects,
/// so an HPA someone applied beside gpuplan's ScaledObject is found before KEDA's webhook refuses the next apply.
#[test]
fn gp024_lint_reads_a_kubectl_list_from_the_cluster() {
    let c = compile_one(scale_to_zero_workload(""));
    let dir = c.dir.path();
    let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: autoscaling/v2\n  kind: HorizontalPodAutoscaler\n  metadata: {name: w-by-hand, namespace: ns}\n  spec:\n    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: w}\n    maxReplicas: 4\n";
    std::fs::write(dir.join("live.yaml"), list).unwrap();
    let catalogs = repo().join("catalogs");
    let run = |extra: &[&str]| {
        let mut args = vec!["lint", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--manifests", "live.yaml"];
        args.extend_from_slice(extra);
        std::process::Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir).env("NO_COLOR", "1").args(&args).output().unwrap()
    };
    let out = run(&["--deny-warnings"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("GP024") && stderr.contains("HorizontalPodAutoscaler `w-by-hand`"), "{stderr}");
    let wrong = run(&["--cluster", "other"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("--cluster other: the profiles define cluster(s) ml"));
}

#[test]
fn gp024_the_cluster_copy_of_gpuplans_own_scaled_object_is_no_clash() {
    let c = compile_one(scale_to_zero_workload(""));
    let own = c.ok().manifests();
    let so = own.iter().find(|m| m.kind() == "ScaledObject").unwrap();
    let file = c.dir.path().join("live.yaml");
    std::fs::write(&file, gpuplan::render::to_yaml(&so.object)).unwrap();
    let all = gpuplan::report::lint::with_cluster_objects("ml", own.clone(), &[file]).unwrap();
    assert_eq!(all.len(), own.len(), "the live copy replaces the compiled one");
    assert_none(&gpuplan::report::lint::lint_on(c.ok(), &all), "GP024");
}

/// GP039 fires exactly when the budget keeps a capped pool's limit below its `max-accelerators`, and the budget its
/// help names is the smallest that reaches the cap: with it the NodePool's limit is the cap and GP039 is silent, a
/// cent less and it still fires. Over budgets from far below to above the cap's cost, for a pool alone (p5, 8 GPUs a
/// node) and for a capped pool beside an uncapped one (the common limit grows both, so the needed budget pays both).
#[test]
fn gp039_cap_above_budget_names_the_budget_that_reaches_it() {
    let alone = |budget: f64| format!("budget usd-per-hour={budget}\npool \"training\" preset=\"training-on-demand\" {{\n    gpu {{ name \"H100\"; per-node min=8; }}\n    max-accelerators 32\n}}\n");
    let beside = |budget: f64| format!("budget usd-per-hour={budget}\npool \"capped\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"L4\"; per-node max=1; }}\n    max-accelerators 6\n}}\npool \"open\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"A10G\"; per-node max=1; }}\n}}\n");
    let cases: [(&str, &dyn Fn(f64) -> String, &str, u64); 2] = [("training", &alone, "training", 32), ("capped", &beside, "capped", 6)];
    let needed_in = |help: &str| -> f64 { help.split("at least $").nth(1).and_then(|r| r.split("/h").next()).and_then(|n| n.parse().ok()).expect(help) };
    for (pool, body, nodepool, cap) in cases {
        let mut fired = 0;
        for budget in [60.0, 100.0, 160.0, 200.0, 240.0, 400.0].map(|b| if cap == 6 { b / 20.0 } else { b }) {
            let mut c = compile_one(profile("p", 10, AMI, &body(budget)));
            let limit: u64 = object_mut(&mut c, "NodePool", nodepool)["spec"]["limits"]["nvidia.com/gpu"].as_str().unwrap().parse().unwrap();
            let d = c.lint();
            let found = with_code(&d, "GP039");
            assert_eq!(found.len(), usize::from(limit < cap), "{pool} at ${budget}/h: limit {limit} of cap {cap}:\n{}", gpuplan::diagnostic::render_plain(&d));
            let Some(finding) = found.first() else { continue };
            fired += 1;
            assert!(finding.message.contains(&format!("`max-accelerators {cap}` is never reached")), "{}", finding.message);
            let needed = needed_in(finding.help.as_deref().unwrap());
            let mut at = compile_one(profile("p", 10, AMI, &body(needed)));
            assert_eq!(object_mut(&mut at, "NodePool", nodepool)["spec"]["limits"]["nvidia.com/gpu"], json!(cap.to_string()), "{pool} at the named ${needed}/h");
            assert_none(&at.lint(), "GP039");
            let below = ((needed - 0.01) * 100.0).round() / 100.0;
            assert_eq!(with_code(&compile_one(profile("p", 10, AMI, &body(below))).lint(), "GP039").len(), 1, "{pool} at ${below}/h, a cent below the named budget");
        }
        assert!(fired >= 2, "{pool}: the budgets tried should keep the cap out of reach at least twice");
    }
}
