//! The generated PrometheusRules, run through promtool: `promtool check rules` on every group, and
//! `promtool test rules` on synthetic series that show each alert firing when it should and staying silent
//! when it should not. promtool is required (Debian/Ubuntu: `apt-get install -y prometheus`); without it
//! these tests fail rather than skip.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use gpuplan::compile::{compile, Compilation, CompileOptions};
use gpuplan::ops::alerts::{self, karpenter_resource_type, ksm_resource, worst_price};
use gpuplan::render::to_yaml;
use gpuplan::solve::ClusterPlan;
use serde_json::{json, Value};

fn promtool() -> PathBuf {
    let bin = std::env::var_os("PROMTOOL").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("promtool"));
    match Command::new(&bin).arg("--version").output() {
        Ok(o) if o.status.success() => bin,
        _ => panic!(
            "promtool not found (looked for {}): install it with `apt-get update && apt-get install -y prometheus` \
             (the Debian package ships promtool), or set PROMTOOL=/path/to/promtool",
            bin.display()
        ),
    }
}

fn examples() -> Compilation {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    compile(&CompileOptions { profiles: vec![root.join("profiles")], catalogs_dir: root.join("catalogs"), templates_dir: None })
        .expect("the example profiles compile")
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run promtool");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// Expands the annotation templates the rules use, as Prometheus would for these labels and value.
fn expand(template: &str, labels: &BTreeMap<String, String>, value: &str) -> String {
    let mut s = template
        .replace("{{ $value | humanizePercentage }}", value)
        .replace("{{ $value | printf \"%.2f\" }}", value)
        .replace("{{ $value | printf \"%.0f\" }}", value);
    for (k, v) in labels {
        s = s.replace(&format!("{{{{ $labels.{k} }}}}"), v);
    }
    assert!(!s.contains("{{"), "unexpanded template in {s}");
    s
}

struct Rule {
    alert: String,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
}

fn series(name: &str, labels: &[(&str, &str)], values: &str) -> Value {
    let l: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    json!({ "series": format!("{name}{{{}}}", l.join(",")), "values": values })
}

/// An expected alert: the rule's static labels plus the series labels, annotations expanded.
fn expected(rule: &Rule, extra: &[(&str, &str)], value: &str) -> Value {
    let mut labels = rule.labels.clone();
    for (k, v) in extra {
        labels.insert(k.to_string(), v.to_string());
    }
    let annotations: BTreeMap<String, String> = rule.annotations.iter().map(|(k, v)| (k.clone(), expand(v, &labels, value))).collect();
    json!({ "exp_labels": labels, "exp_annotations": annotations })
}

fn case(alert: &str, eval: &str, alerts: Vec<Value>) -> Value {
    json!({ "eval_time": eval, "alertname": alert, "exp_alerts": alerts })
}

fn test(input: Vec<Value>, cases: Vec<Value>) -> Value {
    json!({ "interval": "1m", "input_series": input, "alert_rule_test": cases })
}

/// Unit tests for every rule of one cluster: a firing and a silent case per alert (and per NodePool and
/// budgeted profile), each from its own series.
fn unit_tests(cluster: &ClusterPlan, rules: &[Rule]) -> (Vec<Value>, BTreeMap<String, usize>) {
    let mut tests = Vec::new();
    let mut covered: BTreeMap<String, usize> = BTreeMap::new();
    let monitoring = &cluster.ops.monitoring;
    for rule in rules {
        *covered.entry(rule.alert.clone()).or_default() += 1;
        match rule.alert.as_str() {
            alerts::NEAR_LIMIT => {
                let pool = cluster.pools.iter().find(|p| p.name == rule.labels["nodepool"]).unwrap();
                let rt = karpenter_resource_type(pool.resource());
                let l = [("nodepool", pool.name.as_str()), ("resource_type", rt.as_str())];
                let limit = pool.limit;
                // At the limit for 30 minutes: fires after `for: 15m`, not before.
                tests.push(test(
                    vec![series("karpenter_nodepools_usage", &l, &format!("{limit}x30")), series("karpenter_nodepools_limit", &l, &format!("{limit}x30"))],
                    vec![
                        case(&rule.alert, "10m", vec![]),
                        case(&rule.alert, "20m", vec![expected(rule, &l, "100%")]),
                    ],
                ));
                // Just under the threshold: silent.
                let under = (f64::from(limit) * f64::from(monitoring.near_limit_percent) / 100.0).ceil() as u32 - 1;
                tests.push(test(
                    vec![series("karpenter_nodepools_usage", &l, &format!("{under}x30")), series("karpenter_nodepools_limit", &l, &format!("{limit}x30"))],
                    vec![case(&rule.alert, "20m", vec![])],
                ));
            }
            alerts::OVER_BUDGET => {
                let profile = cluster.profiles.iter().find(|p| p.name == rule.labels["gpuplan_profile"]).unwrap();
                let budget = profile.budget_usd_per_hour.unwrap();
                let pools: Vec<_> = cluster.pools.iter().filter(|p| p.profile == profile.name).collect();
                let price = |p: &gpuplan::solve::PoolPlan| -> f64 { format!("{:.4}", worst_price(p)).parse().unwrap() };
                // Every pool at its limit: the solver's bound says this stays within budget.
                let at_limit: Vec<Value> = pools
                    .iter()
                    .map(|p| series("karpenter_nodepools_usage", &[("nodepool", &p.name), ("resource_type", &karpenter_resource_type(p.resource()))], &format!("{}x40", p.limit)))
                    .collect();
                tests.push(test(at_limit, vec![case(&rule.alert, "30m", vec![])]));
                // One pool far past its limit (an out-of-band edit): over budget after 15 minutes.
                let p = pools[0];
                let usage = (budget / price(p)).floor() as u64 + 1;
                let value = usage as f64 * price(p);
                let l = [("nodepool", p.name.as_str()), ("resource_type", &karpenter_resource_type(p.resource()) as &str)];
                tests.push(test(
                    vec![series("karpenter_nodepools_usage", &l, &format!("{usage}x40"))],
                    vec![
                        case(&rule.alert, "10m", vec![]),
                        case(&rule.alert, "30m", vec![expected(rule, &[], &format!("{value:.2}"))]),
                    ],
                ));
            }
            alerts::LOW_UTILIZATION => {
                let low = monitoring.low_utilization_percent;
                let l = |gpu: &'static str| [("Hostname", "ip-10-0-0-1"), ("gpu", gpu), ("modelName", "NVIDIA A10G")];
                // Two GPUs averaging under the threshold for two hours: fires after an hour.
                let (a, b) = (low.saturating_sub(4), low.saturating_sub(2));
                tests.push(test(
                    vec![series("DCGM_FI_DEV_GPU_UTIL", &l("0"), &format!("{a}x150")), series("DCGM_FI_DEV_GPU_UTIL", &l("1"), &format!("{b}x150"))],
                    vec![
                        case(&rule.alert, "30m", vec![]),
                        case(&rule.alert, "90m", vec![expected(rule, &[], &format!("{:.0}", f64::from(a + b) / 2.0))]),
                    ],
                ));
                // One idle GPU, one busy: the average is fine.
                tests.push(test(
                    vec![series("DCGM_FI_DEV_GPU_UTIL", &l("0"), "0x150"), series("DCGM_FI_DEV_GPU_UTIL", &l("1"), "95x150")],
                    vec![case(&rule.alert, "90m", vec![])],
                ));
            }
            alerts::LAUNCH_FAILURES => {
                let l = [("controller", "nodeclaim.lifecycle"), ("method", "Create"), ("provider", "aws"), ("error", "InsufficientCapacityError")];
                let shown = [("controller", "nodeclaim.lifecycle"), ("method", "Create"), ("error", "InsufficientCapacityError")];
                tests.push(test(
                    vec![series("karpenter_cloudprovider_errors_total", &l, "0+1x60")],
                    vec![case(&rule.alert, "10m", vec![]), case(&rule.alert, "40m", vec![expected(rule, &shown, "")])],
                ));
                // Failures of other calls, and a Create counter that stopped growing: silent.
                let other = [("controller", "nodeclaim.disruption"), ("method", "Delete"), ("provider", "aws"), ("error", "NodeClaimNotFoundError")];
                tests.push(test(
                    vec![series("karpenter_cloudprovider_errors_total", &other, "0+1x60"), series("karpenter_cloudprovider_errors_total", &l, "3x60")],
                    vec![case(&rule.alert, "40m", vec![])],
                ));
            }
            alerts::PODS_PENDING => {
                let resource = ksm_resource(cluster.pools.iter().map(|p| p.resource()).next().unwrap());
                let pending_for = gpuplan::intent::duration_minutes(&monitoring.pending_for).unwrap();
                let pod = |name: &'static str| [("namespace", "inference"), ("pod", name)];
                let request = |name: &'static str, r: &str| -> Value {
                    series("kube_pod_container_resource_requests", &[("namespace", "inference"), ("pod", name), ("container", "main"), ("resource", r), ("unit", "integer")], "1x60")
                };
                let phase = |name: &'static str, phase: &str, v: &str| -> Value {
                    series("kube_pod_status_phase", &[("namespace", "inference"), ("pod", name), ("phase", phase)], v)
                };
                tests.push(test(
                    vec![
                        // A GPU pod pending for an hour: fires once `for` has passed.
                        phase("gpu-pending", "Pending", "1x60"),
                        phase("gpu-pending", "Running", "0x60"),
                        request("gpu-pending", &resource),
                        // A pending pod that asks for no accelerator, and a running GPU pod: silent.
                        phase("cpu-pending", "Pending", "1x60"),
                        request("cpu-pending", "cpu"),
                        phase("gpu-running", "Pending", "0x60"),
                        phase("gpu-running", "Running", "1x60"),
                        request("gpu-running", &resource),
                    ],
                    vec![
                        case(&rule.alert, &format!("{}m", pending_for.saturating_sub(2)), vec![]),
                        case(&rule.alert, &format!("{}m", pending_for + 5), vec![expected(rule, &pod("gpu-pending"), "")]),
                    ],
                ));
            }
            other => panic!("no promtool test for alert {other}: add one"),
        }
    }
    (tests, covered)
}

fn check_cluster(promtool: &Path, dir: &Path, c: &Compilation, cluster: &ClusterPlan) -> BTreeMap<String, usize> {
    let manifest = c
        .manifests
        .iter()
        .find(|m| m.kind() == "PrometheusRule" && m.path.starts_with(&cluster.name))
        .unwrap_or_else(|| panic!("no PrometheusRule for {}", cluster.name));
    // The rules file is the PrometheusRule's spec, as the operator hands it to Prometheus.
    let spec = &manifest.object["spec"];
    let rules_file = dir.join(format!("{}.rules.yaml", cluster.name));
    std::fs::write(&rules_file, to_yaml(spec)).unwrap();
    run(Command::new(promtool).args(["check", "rules"]).arg(&rules_file));

    let rules: Vec<Rule> = spec["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["rules"].as_array().unwrap())
        .map(|r| Rule {
            alert: r["alert"].as_str().unwrap().to_string(),
            labels: serde_json::from_value(r["labels"].clone()).unwrap(),
            annotations: serde_json::from_value(r["annotations"].clone()).unwrap(),
        })
        .collect();
    let (tests, covered) = unit_tests(cluster, &rules);
    let test_file = dir.join(format!("{}.test.yaml", cluster.name));
    let unit = json!({
        "rule_files": [rules_file.file_name().unwrap().to_str().unwrap()],
        "evaluation_interval": "1m",
        "tests": tests,
    });
    std::fs::write(&test_file, to_yaml(&unit)).unwrap();
    let out = run(Command::new(promtool).current_dir(dir).args(["test", "rules"]).arg(test_file.file_name().unwrap()));
    assert!(out.contains("SUCCESS"), "{out}");
    eprintln!("promtool test rules {}: {} unit tests, {} rules: {}", cluster.name, unit["tests"].as_array().unwrap().len(), rules.len(), out.trim());
    covered
}

#[test]
fn promtool_checks_and_tests_every_generated_rule() {
    let promtool = promtool();
    let c = examples();
    let dir = tempfile::tempdir().unwrap();
    // Also write what compile writes, as a user would get it.
    for (path, text) in c.output_tree().files {
        let full = dir.path().join("out").join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let mut total: BTreeMap<String, usize> = BTreeMap::new();
    for cluster in &c.plan.clusters {
        for (alert, n) in check_cluster(&promtool, dir.path(), &c, cluster) {
            *total.entry(alert).or_default() += n;
        }
    }
    for alert in [alerts::NEAR_LIMIT, alerts::OVER_BUDGET, alerts::LOW_UTILIZATION, alerts::LAUNCH_FAILURES, alerts::PODS_PENDING] {
        assert!(total.get(alert).is_some_and(|n| *n > 0), "{alert} was never tested: {total:?}");
    }
    let pools: usize = c.plan.clusters.iter().map(|c| c.pools.len()).sum();
    assert_eq!(total[alerts::NEAR_LIMIT], pools, "one near-limit rule per NodePool");
}

/// promtool must fail on a broken rule: the tests above would be worthless if it accepted anything.
#[test]
fn promtool_rejects_a_wrong_expectation() {
    let promtool = promtool();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.yaml"), "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    for: 5m\n").unwrap();
    std::fs::write(
        dir.path().join("t.yaml"),
        "rule_files: [r.yaml]\ntests:\n- interval: 1m\n  input_series:\n  - series: 'up{job=\"x\"}'\n    values: '1x30'\n  alert_rule_test:\n  - eval_time: 20m\n    alertname: A\n    exp_alerts:\n    - exp_labels: {job: x}\n",
    )
    .unwrap();
    let out = Command::new(&promtool).current_dir(dir.path()).args(["test", "rules", "t.yaml"]).output().unwrap();
    assert!(!out.status.success(), "promtool accepted an alert that cannot fire");
}
