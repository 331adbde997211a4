//! The generated PrometheusRules, run through promtool: `promtool check rules` on every group, and
//! `promtool test rules` on synthetic series that show each alert firing when it should and staying silent
//! when it should not. promtool is required (Debian/Ubuntu: `apt-get install -y prometheus`); without it
//! these tests fail rather than skip.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use gpuplan::compile::{compile, Compilation, CompileOptions};
use gpuplan::ops::alerts::{self, karpenter_resource_type, ksm_resource};
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
    for_: String,
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
                // Just under the threshold: silent. A pool whose types count their GPUs differently (MIG devices per
                // GPU model) is full once its smallest node no longer fits: one p4de (56 of 64) fires, one p4d does not.
                let by_percent = (f64::from(limit) * f64::from(monitoring.near_limit_percent) / 100.0).ceil() as u32 - 1;
                let per_gpu: std::collections::BTreeSet<u32> = pool.candidates.iter().map(|c| c.units_per_accelerator()).collect();
                let smallest = pool.candidates.iter().map(|c| c.units).min().unwrap_or(1);
                let under = if per_gpu.len() > 1 { by_percent.min(limit - smallest) } else { by_percent };
                // Full below the percentage (a usage whose percentage is whole, as humanizePercentage prints it): fires.
                if let Some(full) = (under + 1..=by_percent).find(|u| (u * 100) % limit == 0) {
                    tests.push(test(
                        vec![series("karpenter_nodepools_usage", &l, &format!("{full}x30")), series("karpenter_nodepools_limit", &l, &format!("{limit}x30"))],
                        vec![case(&rule.alert, "20m", vec![expected(rule, &l, &format!("{}%", full * 100 / limit))])],
                    ));
                }
                tests.push(test(
                    vec![series("karpenter_nodepools_usage", &l, &format!("{under}x30")), series("karpenter_nodepools_limit", &l, &format!("{limit}x30"))],
                    vec![case(&rule.alert, "20m", vec![])],
                ));
            }
            alerts::OVER_BUDGET => {
                // Karpenter's own spend gauge, per NodePool (kubernetes-sigs/karpenter v1.10.0
                // pkg/controllers/metrics/nodepool/controller.go `cost_total`); reservations, which Karpenter prices
                // near zero (karpenter-provider-aws reserved_capacity_resolver.go), are a constant in the rule.
                let profile = cluster.profiles.iter().find(|p| p.name == rule.labels["gpuplan_profile"]).unwrap();
                let budget = profile.budget_usd_per_hour.unwrap();
                let pools: Vec<_> = cluster.pools.iter().filter(|p| p.profile == profile.name).collect();
                let reserved = |p: &gpuplan::solve::PoolPlan| p.capacity_types.iter().all(|c| *c == gpuplan::catalog::CapacityType::Reserved);
                let fixed: f64 = pools.iter().filter(|p| reserved(p)).map(|p| format!("{:.2}", p.worst_case_usd_per_hour).parse::<f64>().unwrap()).sum();
                let metered: Vec<_> = pools.iter().filter(|p| !reserved(p)).collect();
                let cost = |p: &gpuplan::solve::PoolPlan, v: f64| series("karpenter_nodepools_cost_total", &[("nodepool", &p.name)], &format!("{v}x40"));
                // Spend just under the budget, split over the metered pools (and usage, which the old rule
                // priced, far over it): silent.
                let under = ((budget - fixed - 1.0) / metered.len().max(1) as f64).max(0.0);
                let mut input: Vec<Value> = metered.iter().map(|p| cost(p, under)).collect();
                input.extend(pools.iter().map(|p| series("karpenter_nodepools_usage", &[("nodepool", &p.name), ("resource_type", &karpenter_resource_type(p.resource()))], &format!("{}x40", p.limit * 10))));
                tests.push(test(input, vec![case(&rule.alert, "30m", vec![])]));
                // A renamed NodePool of this profile's pool still running beside the new one (its nodes keep the
                // template's gpuplan.dev/pool label: kube_node_labels, kube-state-metrics
                // docs/metrics/cluster/node-metrics.md): its $30/h counts, so spend under the budget on the current
                // NodePools goes over it. The same $30/h on a NodePool that is not gpuplan's does not count.
                if let Some(p) = metered.first() {
                    let old = format!("{}-renamed-away", p.name);
                    let current = budget - fixed - 20.0;
                    let input = |orphan: Value| vec![cost(p, current), series("karpenter_nodepools_cost_total", &[("nodepool", &old)], "30x40"), orphan];
                    tests.push(test(
                        input(node_labels("ip-10-1-0-1", &old, Some(&p.pool))),
                        vec![case(&rule.alert, "30m", vec![expected(rule, &[], &format!("{:.2}", current + 30.0 + fixed))])],
                    ));
                    tests.push(test(input(node_labels("ip-10-1-0-1", &old, None)), vec![case(&rule.alert, "30m", vec![])]));
                }
                // Real spend over the budget on one pool (an out-of-band edit, a price move): fires after 15m.
                if let Some(p) = metered.first() {
                    let spend = budget - fixed + 10.0;
                    tests.push(test(
                        vec![cost(p, spend)],
                        vec![
                            case(&rule.alert, "10m", vec![]),
                            case(&rule.alert, "30m", vec![expected(rule, &[], &format!("{:.2}", spend + fixed))]),
                        ],
                    ));
                }
            }
            alerts::OUTSIDE_PROFILES => outside_profiles_tests(cluster, rule, &mut tests),
            alerts::LOW_UTILIZATION if rule.labels["metric"] == "DCGM_FI_DEV_GPU_UTIL" => {
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
                // Busy whole GPUs next to MIG devices, which report GPU_UTIL as 0 (NVIDIA/dcgm-exporter#216): silent.
                let mig = |i: &'static str| [("Hostname", "ip-10-0-0-2"), ("gpu", "0"), ("GPU_I_PROFILE", "1g.10gb"), ("GPU_I_ID", i)];
                tests.push(test(
                    vec![
                        series("DCGM_FI_DEV_GPU_UTIL", &l("0"), "0x150"),
                        series("DCGM_FI_DEV_GPU_UTIL", &l("1"), "95x150"),
                        series("DCGM_FI_DEV_GPU_UTIL", &mig("1"), "0x150"),
                        series("DCGM_FI_DEV_GPU_UTIL", &mig("2"), "0x150"),
                        series("DCGM_FI_DEV_GPU_UTIL", &mig("3"), "0x150"),
                    ],
                    vec![case(&rule.alert, "90m", vec![])],
                ));
            }
            alerts::LOW_UTILIZATION => {
                // MIG devices: DCGM_FI_PROF_GR_ENGINE_ACTIVE, a 0–1 ratio (etc/dcp-metrics-included.csv).
                assert_eq!(rule.labels["metric"], "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
                let low = f64::from(monitoring.low_utilization_percent) / 100.0;
                let mig = |i: &'static str| [("Hostname", "ip-10-0-0-2"), ("gpu", "0"), ("GPU_I_PROFILE", "1g.10gb"), ("GPU_I_ID", i)];
                let idle = (low / 2.0 * 100.0).floor() / 100.0;
                tests.push(test(
                    vec![series("DCGM_FI_PROF_GR_ENGINE_ACTIVE", &mig("1"), &format!("{idle}x150")), series("DCGM_FI_PROF_GR_ENGINE_ACTIVE", &mig("2"), &format!("{idle}x150"))],
                    vec![
                        case(&rule.alert, "30m", vec![]),
                        case(&rule.alert, "90m", vec![expected(rule, &[], &format!("{}%", (idle * 100.0).round()))]),
                    ],
                ));
                // Busy MIG devices (a percentage threshold would call 0.9 idle); whole GPUs are not counted.
                tests.push(test(
                    vec![
                        series("DCGM_FI_PROF_GR_ENGINE_ACTIVE", &mig("1"), "0.9x150"),
                        series("DCGM_FI_PROF_GR_ENGINE_ACTIVE", &[("Hostname", "ip-10-0-0-1"), ("gpu", "0")], "0x150"),
                    ],
                    vec![case(&rule.alert, "90m", vec![])],
                ));
            }
            alerts::LAUNCH_FAILURES => {
                // Karpenter's `error` label (sigs.k8s.io/karpenter@v1.14.1 pkg/cloudprovider/metrics/cloudprovider.go,
                // GetErrorTypeLabelValue): "InsufficientCapacityError", "NodeClassNotReadyError",
                // "NodeClaimNotFoundError", or empty (absent) for any other error.
                let l = [("controller", "nodeclaim.lifecycle"), ("method", "Create"), ("provider", "aws"), ("error", "NodeClassNotReadyError")];
                let shown = [("controller", "nodeclaim.lifecycle"), ("method", "Create"), ("error", "NodeClassNotReadyError")];
                tests.push(test(
                    vec![series("karpenter_cloudprovider_errors_total", &l, "0+1x60")],
                    vec![case(&rule.alert, "10m", vec![]), case(&rule.alert, "40m", vec![expected(rule, &shown, "")])],
                ));
                // The spot tier finding no capacity for 40 minutes while its on-demand fallback launches (Karpenter
                // marks the offering unavailable and the next NodePool by weight takes the pod: the normal
                // spot → on-demand fallback), failures of other calls, and a Create counter that stopped growing:
                // silent.
                let ice = [("controller", "nodeclaim.lifecycle"), ("method", "Create"), ("provider", "aws"), ("error", "InsufficientCapacityError")];
                let other = [("controller", "nodeclaim.disruption"), ("method", "Delete"), ("provider", "aws"), ("error", "NodeClaimNotFoundError")];
                tests.push(test(
                    vec![
                        series("karpenter_cloudprovider_errors_total", &ice, "0+2x60"),
                        series("karpenter_cloudprovider_errors_total", &other, "0+1x60"),
                        series("karpenter_cloudprovider_errors_total", &l, "3x60"),
                    ],
                    vec![case(&rule.alert, "40m", vec![])],
                ));
            }
            alerts::PODS_PENDING => {
                // kube-state-metrics kube_pod_status_unschedulable (docs/metrics/workload/pod-metrics.md): the
                // scheduler could not place the pod. Phase Pending also covers pulling a multi-GB image.
                let resource = ksm_resource(cluster.pools.iter().map(|p| p.resource()).next().unwrap());
                let pending_for = gpuplan::profile::duration_minutes(&monitoring.pending_for).unwrap();
                let pod = |name: &'static str| [("namespace", "batch"), ("pod", name)];
                let request = |ns: &str, name: &str, r: &str| -> Value {
                    series("kube_pod_container_resource_requests", &[("namespace", ns), ("pod", name), ("container", "main"), ("resource", r), ("unit", "integer")], "1x60")
                };
                let unschedulable = |ns: &str, name: &str| series("kube_pod_status_unschedulable", &[("namespace", ns), ("pod", name), ("uid", "u")], "1x60");
                let mut input = vec![
                    // A GPU pod the scheduler cannot place for an hour: fires once `for` has passed.
                    unschedulable("batch", "gpu-unschedulable"),
                    request("batch", "gpu-unschedulable", &resource),
                    // An unschedulable pod that asks for no accelerator: silent.
                    unschedulable("batch", "cpu-unschedulable"),
                    request("batch", "cpu-unschedulable", "cpu"),
                    // A GPU pod Pending for an hour while it pulls its image (scheduled): silent.
                    series("kube_pod_status_phase", &[("namespace", "batch"), ("pod", "gpu-pulling"), ("phase", "Pending")], "1x60"),
                    request("batch", "gpu-pulling", &resource),
                ];
                // A Neuron pod that requests only cores (kube-state-metrics exports `aws.amazon.com/neuroncore` as
                // `aws_amazon_com_neuroncore`, internal/store/pod.go via the resource name sanitizer): fires too.
                let neuron = cluster.pools.iter().any(|p| p.accelerator == gpuplan::catalog::AcceleratorKind::Neuron);
                let mut firing = vec![expected(rule, &pod("gpu-unschedulable"), "")];
                if neuron {
                    input.push(unschedulable("batch", "neuroncore-unschedulable"));
                    input.push(request("batch", "neuroncore-unschedulable", "aws_amazon_com_neuroncore"));
                    firing.push(expected(rule, &pod("neuroncore-unschedulable"), ""));
                }
                // A declared workload's pod: its own alert fires instead.
                if let Some(w) = cluster.ops.workloads.first() {
                    let name = workload_pod(w);
                    input.push(unschedulable(&w.namespace, &name));
                    input.push(request(&w.namespace, &name, &resource));
                }
                tests.push(test(
                    input,
                    vec![
                        case(&rule.alert, &format!("{}m", pending_for.saturating_sub(2)), vec![]),
                        case(&rule.alert, &format!("{}m", pending_for + 5), firing),
                    ],
                ));
            }
            alerts::WORKLOAD_UNSCHEDULABLE => {
                let w = workload_of(cluster, rule);
                let pending_for = gpuplan::profile::duration_minutes(&monitoring.pending_for).unwrap();
                let name = workload_pod(w);
                let unschedulable = |ns: &str, pod: &str| series("kube_pod_status_unschedulable", &[("namespace", ns), ("pod", pod), ("uid", "u")], "1x60");
                let shown = [("namespace", w.namespace.as_str()), ("pod", name.as_str())];
                tests.push(test(
                    vec![
                        unschedulable(&w.namespace, &name),
                        // Same name in another namespace, and another workload whose name extends this one's: silent.
                        unschedulable("elsewhere", &name),
                        unschedulable(&w.namespace, &name.replacen(&w.name, &format!("{}-canary", w.name), 1)),
                    ],
                    vec![
                        case(&rule.alert, &format!("{}m", pending_for.saturating_sub(2)), vec![]),
                        case(&rule.alert, &format!("{}m", pending_for + 5), vec![expected(rule, &shown, "")]),
                    ],
                ));
            }
            alerts::WORKLOAD_LOW_UTILIZATION => {
                let w = workload_of(cluster, rule);
                let ratio = gpuplan::solve::ops::metrics::metric_is_ratio(&w.metric);
                let low = monitoring.low_utilization_percent / 2;
                let (idle, busy) = if ratio { (format!("{}", f64::from(low) / 100.0), "0.9".to_string()) } else { (low.to_string(), "90".to_string()) };
                let name = workload_pod(w);
                let l = |ns: &str, pod: &str| -> Vec<(String, String)> {
                    vec![("namespace".into(), ns.into()), ("pod".into(), pod.into()), ("gpu".into(), "0".into()), ("Hostname".into(), "ip-10-0-0-3".into())]
                };
                let s = |labels: Vec<(String, String)>, v: &str| {
                    let l: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                    series(&w.metric, &l, &format!("{v}x150"))
                };
                let value = if ratio { format!("{low}%") } else { low.to_string() };
                tests.push(test(
                    vec![s(l(&w.namespace, &name), &idle), s(l("elsewhere", "other-0"), &busy)],
                    vec![case(&rule.alert, "30m", vec![]), case(&rule.alert, "90m", vec![expected(rule, &[], &value)])],
                ));
                // The workload is busy; idle pods of other workloads and namespaces do not count.
                tests.push(test(
                    vec![s(l(&w.namespace, &name), &busy), s(l("elsewhere", &name), &idle), s(l(&w.namespace, "notebook-0"), &idle)],
                    vec![case(&rule.alert, "90m", vec![])],
                ));
            }
            other => panic!("no promtool test for alert {other}: add one"),
        }
    }
    (tests, covered)
}

/// kube-state-metrics' `kube_node_labels` for a node of NodePool `nodepool`, with gpuplan's pool label or without
/// (a NodePool that is not gpuplan's). Each allowlisted node label becomes `label_<name>` with `.` and `/` turned
/// into `_` (kubernetes/kube-state-metrics docs/metrics/cluster/node-metrics.md, `kube_node_labels`, "controlled via
/// --metric-labels-allowlist", docs/developer/cli-arguments.md); Karpenter labels every node with its NodePool's
/// name (sigs.k8s.io/karpenter@v1.14.1 pkg/apis/v1/labels.go, `NodePoolLabelKey` = karpenter.sh/nodepool) and the
/// NodePool template's labels, gpuplan.dev/pool among them.
fn node_labels(node: &str, nodepool: &str, pool: Option<&str>) -> Value {
    let mut l = vec![("job", "kube-state-metrics"), ("node", node), ("label_karpenter_sh_nodepool", nodepool)];
    if let Some(pool) = pool {
        l.push(("label_gpuplan_dev_pool", pool));
    }
    series("kube_node_labels", &l, "1x300")
}

/// `GpuplanNodePoolOutsideProfiles`: a NodePool renamed away (old name, nodes still labelled with the pool, $30/h in
/// Karpenter's `karpenter_nodepools_cost_total{nodepool}`: sigs.k8s.io/karpenter@v1.14.1
/// pkg/controllers/metrics/nodepool/controller.go, `ClusterCost`, labelled by NodePool only) running beside the new
/// one fires once its nodes have outlived a drain (`for`), naming the old NodePool, its pool and its cost; the new
/// NodePool and a NodePool that is not gpuplan's (no pool label, $50/h) never fire.
fn outside_profiles_tests(cluster: &ClusterPlan, rule: &Rule, tests: &mut Vec<Value>) {
    let p = cluster.pools.iter().min_by(|a, b| a.name.cmp(&b.name)).unwrap();
    let old = format!("{}-renamed-away", p.name);
    assert!(cluster.pools.iter().all(|q| q.name != old));
    let for_minutes = gpuplan::profile::duration_minutes(&rule.for_).unwrap();
    let cost = |nodepool: &str, v: &str| series("karpenter_nodepools_cost_total", &[("nodepool", nodepool)], &format!("{v}x300"));
    let shown = [("nodepool", old.as_str()), ("gpuplan_pool", p.pool.as_str())];
    tests.push(test(
        vec![
            node_labels("ip-10-1-0-1", &old, Some(&p.pool)),
            node_labels("ip-10-1-0-2", &old, Some(&p.pool)),
            node_labels("ip-10-1-0-3", &p.name, Some(&p.pool)),
            node_labels("ip-10-1-0-4", "default", None),
            cost(&old, "30"),
            cost(&p.name, "20"),
            cost("default", "50"),
        ],
        vec![
            case(&rule.alert, &format!("{}m", for_minutes - 10), vec![]),
            case(&rule.alert, &format!("{}m", for_minutes + 10), vec![expected(rule, &shown, "30.00")]),
        ],
    ));
    // Without Karpenter's cost gauge (Karpenter < v1.10.0) the orphan still fires, at $0.00/h.
    tests.push(test(
        vec![node_labels("ip-10-1-0-1", &old, Some(&p.pool))],
        vec![case(&rule.alert, &format!("{}m", for_minutes + 10), vec![expected(rule, &shown, "0.00")])],
    ));
    // The current NodePools and a foreign one alone: silent.
    tests.push(test(
        vec![node_labels("ip-10-1-0-3", &p.name, Some(&p.pool)), node_labels("ip-10-1-0-4", "default", None), cost(&p.name, "20"), cost("default", "50")],
        vec![case(&rule.alert, &format!("{}m", for_minutes + 10), vec![])],
    ));
}

/// A pod name the workload's controller would create: `<name>-<pod-template-hash>-<suffix>` for a Deployment
/// (kubernetes pkg/controller/deployment: ReplicaSet `<name>-<hash>`, pods `<rs>-<5 chars>`), `<name>-0` for a
/// StatefulSet.
fn workload_pod(w: &gpuplan::solve::ops::workload::WorkloadPlan) -> String {
    match w.kind.as_str() {
        "StatefulSet" => format!("{}-0", w.name),
        _ => format!("{}-5d8f9c7b6d-x2x4z", w.name),
    }
}

fn workload_of<'c>(cluster: &'c ClusterPlan, rule: &Rule) -> &'c gpuplan::solve::ops::workload::WorkloadPlan {
    cluster.ops.workloads.iter().find(|w| format!("{}/{}", w.namespace, w.name) == rule.labels["gpuplan_workload"]).expect("the rule's workload")
}

fn check_cluster(promtool: &Path, dir: &Path, c: &Compilation, cluster: &ClusterPlan) -> BTreeMap<String, usize> {
    let manifests = c.manifests_of(&cluster.name);
    let manifest = manifests
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
            for_: r["for"].as_str().unwrap().to_string(),
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
    for alert in [
        alerts::NEAR_LIMIT,
        alerts::OVER_BUDGET,
        alerts::LOW_UTILIZATION,
        alerts::LAUNCH_FAILURES,
        alerts::PODS_PENDING,
        alerts::WORKLOAD_UNSCHEDULABLE,
        alerts::WORKLOAD_LOW_UTILIZATION,
        alerts::OUTSIDE_PROFILES,
    ] {
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
