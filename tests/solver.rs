//! The solver's sizing cases, one test each, against the real built-in catalog.

use gpuplan::compile::{compile, Compilation, CompileError, CompileOptions};
use gpuplan::profile::MaintenanceWindow;
use gpuplan::solve::{outside_window, PoolPlan};

const CLUSTER: &str = "cluster \"c\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\" \"us-east-1b\" \"us-east-1c\"\n    ami \"al2023@v20251023\"\n}\n";

fn compile_profiles(profiles: &[(&str, String)]) -> Result<Compilation, CompileError> {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in profiles {
        std::fs::write(dir.path().join(format!("{name}.kdl")), text).unwrap();
    }
    compile(&CompileOptions { profiles: vec![dir.path().to_path_buf()], catalogs_dir: dir.path().join("none"), templates_dir: None })
}

fn solve(body: &str) -> Compilation {
    match compile_profiles(&[("p", format!("{CLUSTER}{body}"))]) {
        Ok(c) => c,
        Err(CompileError::Profiles { diagnostics }) => panic!("{}", gpuplan::diagnostic::render_plain(&diagnostics)),
        Err(e) => panic!("{e}"),
    }
}

fn pool<'a>(c: &'a Compilation, name: &str) -> &'a PoolPlan {
    c.plan.clusters.iter().flat_map(|c| &c.pools).find(|p| p.name == name).unwrap_or_else(|| panic!("no pool {name}"))
}

/// The worst-case price per accelerator: spot at its ceiling (on-demand), with each node's EBS volumes, see `cost`.
fn worst_per_unit(p: &PoolPlan) -> f64 {
    p.candidates.iter().map(|c| (c.ceiling_usd_per_hour + p.node_storage_usd_per_hour) / f64::from(c.units)).fold(0.0, f64::max)
}

#[test]
fn budget_is_split_so_every_tier_carries_the_same_accelerators() {
    let c = solve("budget usd-per-hour=100\npool \"llm\" preset=\"inference-spot\" {\n    gpu { name \"A10G\" \"L4\"; per-node max=1; }\n}\n");
    let (spot, od) = (pool(&c, "llm-spot"), pool(&c, "llm-on-demand"));
    assert_eq!(spot.limit, od.limit);
    let worst = f64::from(spot.limit) * worst_per_unit(spot) + f64::from(od.limit) * worst_per_unit(od);
    assert!(worst <= 100.0 + 1e-6, "worst case {worst} over budget");
    // One more accelerator in each tier would break the budget: the split uses it all.
    let one_more = worst + worst_per_unit(spot) + worst_per_unit(od);
    assert!(one_more > 100.0);
    assert!(spot.limit_reason.starts_with("budget $100.00/h split evenly"), "{}", spot.limit_reason);
}

#[test]
fn a_capped_tier_leaves_its_share_to_the_others() {
    let c = solve("budget usd-per-hour=100\npool \"llm\" preset=\"tiered\" {\n    gpu { name \"A10G\"; per-node max=1; }\n    tier \"a\" capacity=\"spot\" { max-accelerators 4 }\n    tier \"b\" capacity=\"on-demand\" { }\n}\n");
    let (a, b) = (pool(&c, "llm-a"), pool(&c, "llm-b"));
    assert_eq!(a.limit, 4);
    assert!(a.limit_reason.starts_with("max-accelerators 4"), "{}", a.limit_reason);
    assert!(b.limit > 4);
    let worst = f64::from(a.limit) * worst_per_unit(a) + f64::from(b.limit) * worst_per_unit(b);
    assert!(worst <= 100.0 + 1e-6);
    assert!(worst + worst_per_unit(b) > 100.0, "the uncapped tier gets the rest of the budget");
}

#[test]
fn nodes_larger_than_the_limit_are_dropped() {
    let c = solve("pool \"big\" preset=\"inference-on-demand\" {\n    gpu { name \"A10G\"; }\n    price-ratio-max 10\n    max-accelerators 4\n}\n");
    let p = pool(&c, "big");
    assert_eq!(p.limit, 4);
    assert!(p.candidates.iter().all(|c| c.accelerators <= 4));
    let dropped = p.removed.iter().find(|r| r.constraint == "node accelerators ≤ limit 4").expect("a removal for the limit");
    assert!(dropped.types.contains(&"g5.48xlarge".to_string()));
    assert!(p.largest_node() <= p.limit);
}

#[test]
fn uniform_nodes_round_the_limit_down_to_whole_nodes() {
    let c = solve("budget usd-per-hour=200\npool \"train\" preset=\"training-on-demand\" {\n    gpu { name \"A100\"; per-node min=8; }\n}\n");
    let p = pool(&c, "train");
    assert_eq!(p.limit % 8, 0);
    assert!(p.limit_reason.contains("rounded down to whole 8-accelerator nodes"), "{}", p.limit_reason);
    assert!(p.worst_case_usd_per_hour <= 200.0);
}

/// The E0142 diagnostics of a profile that must fail.
fn e0142(body: &str) -> Vec<gpuplan::diagnostic::ProfileDiagnostic> {
    let Err(CompileError::Profiles { diagnostics }) = compile_profiles(&[("p", format!("{CLUSTER}{body}"))]) else { panic!("expected diagnostics for {body}") };
    assert!(diagnostics.iter().all(|d| d.code == "E0142"), "{}", gpuplan::diagnostic::render_plain(&diagnostics));
    diagnostics
}

/// The "at least $X/h" of an E0142's help.
fn budget_needed(d: &gpuplan::diagnostic::ProfileDiagnostic) -> f64 {
    let help = d.help.as_deref().unwrap_or_default();
    let at = help.find("at least $").unwrap_or_else(|| panic!("no budget in {help}")) + "at least $".len();
    help[at..].split('/').next().unwrap().parse().unwrap()
}

#[test]
fn a_budget_too_small_for_one_node_names_the_budget() {
    let d = &e0142("budget usd-per-hour=5\npool \"train\" preset=\"training-on-demand\" {\n    gpu { name \"A100\"; per-node min=8; }\n}\n")[0];
    assert!(d.message.contains("the budget $5.00/h cannot pay for one node of pool `train`"), "{}", d.message);
}

/// The case: $30/h on p5 with `max-accelerators 16`. The budget binds (one p5.48xlarge, 8 GPUs, costs more):
/// the diagnostic points at the budget, names the node and its price, never the cap nor a sentinel limit.
#[test]
fn e0142_names_the_budget_when_the_budget_binds_beside_a_larger_max_accelerators() {
    for cap in ["    max-accelerators 16\n", ""] {
        let body = format!("budget usd-per-hour=30\npool \"train\" preset=\"training-on-demand\" {{\n    gpu {{ name \"H100\"; per-node min=8; }}\n{cap}}}\n");
        let d = &e0142(&body)[0];
        assert!(d.location.ends_with("p.kdl:6:8"), "not at the budget: {}", d.location);
        assert!(d.message.contains("the budget $30.00/h cannot pay for one node of pool `train`: its cheapest node is p5.48xlarge (8 nvidia.com/gpu, up to $"), "{}", d.message);
        let text = format!("{} {}", d.message, d.help.as_deref().unwrap_or_default());
        assert!(!text.contains("1000000") && !text.contains("max-accelerators 16") && !text.contains("more accelerators than the limit"), "{text}");
    }
}

/// The smallest budget E0142 names is the one the solver's shares need: compiling with it succeeds, a cent less
/// fails. Over one pool, two pools sharing the budget (the share binds) and a pool beside a reservation.
#[test]
fn the_smallest_budget_e0142_names_compiles_and_a_cent_less_does_not() {
    let train = "pool \"train\" preset=\"training-on-demand\" {\n    gpu { name \"H100\"; per-node min=8; }\n}\n";
    let beside = "pool \"llm\" preset=\"inference-spot\" {\n    gpu { name \"A10G\" \"L4\"; per-node max=1; }\n}\n";
    for pools in [train.to_string(), format!("{train}{beside}")] {
        let d = &e0142(&format!("budget usd-per-hour=30\n{pools}"))[0];
        let needed = budget_needed(d);
        let c = solve(&format!("budget usd-per-hour={needed}\n{pools}"));
        assert!(pool(&c, "train").limit >= 8, "{}", pool(&c, "train").limit_reason);
        e0142(&format!("budget usd-per-hour={:.2}\n{pools}", needed - 0.01));
    }
}

/// A `max-accelerators` below the smallest node binds whatever the budget: E0142 points at it and says how far to
/// raise it.
#[test]
fn e0142_names_max_accelerators_when_it_is_below_the_smallest_node() {
    let d = &e0142("budget usd-per-hour=300\npool \"train\" preset=\"training-on-demand\" {\n    gpu { name \"H100\"; per-node min=8; }\n    max-accelerators 4\n}\n")[0];
    assert!(d.message.contains("`max-accelerators 4` is smaller than one node of pool `train`: its smallest node is p5.48xlarge (8 nvidia.com/gpu"), "{}", d.message);
    assert!(d.help.as_deref().unwrap_or_default().contains("raise `max-accelerators` to at least 8"), "{:?}", d.help);
}

#[test]
fn time_slicing_multiplies_the_limit_and_divides_the_price() {
    let c = solve("pool \"nb\" preset=\"inference-on-demand\" {\n    gpu { name \"T4\"; per-node max=1; }\n    time-slicing replicas=4\n    max-accelerators 8\n}\n");
    let p = pool(&c, "nb");
    assert_eq!(p.replicas(), 4);
    assert_eq!(p.limit, 32);
    let g4 = p.candidates.iter().find(|c| c.name == "g4dn.xlarge").unwrap();
    assert!((g4.usd_per_accelerator_hour - 0.526 / 4.0).abs() < 1e-9);
    assert_eq!(p.labels["nvidia.com/device-plugin.config"], "time-slicing-4");
}

#[test]
fn mig_counts_mig_devices_and_admits_only_mig_gpus() {
    let c = solve("pool \"mig\" preset=\"inference-on-demand\" {\n    gpu { per-node min=8; }\n    mig \"all-1g.10gb\"\n    max-accelerators 16\n}\n");
    let p = pool(&c, "mig");
    assert!(p.replicas() > 1);
    assert_eq!(p.limit, 16 * p.replicas());
    assert!(p.candidates.iter().all(|c| ["A100", "H100", "H200"].iter().any(|m| c.accelerator_name.contains(m))), "{:?}", p.candidates.iter().map(|c| &c.name).collect::<Vec<_>>());
    assert_eq!(p.labels["nvidia.com/mig.config"], "all-1g.10gb");
}

#[test]
fn fractional_gpu_types_only_when_named() {
    let c = solve("pool \"l4\" preset=\"inference-on-demand\" {\n    gpu { name \"L4\"; }\n    max-accelerators 4\n}\n");
    assert!(pool(&c, "l4").candidates.iter().all(|c| !c.name.starts_with("g6f") && !c.name.starts_with("gr6f")));
    let c = solve("pool \"frac\" preset=\"inference-on-demand\" {\n    gpu { name \"L4\"; }\n    types \"g6f.xlarge\" \"g6.xlarge\"\n    max-accelerators 4\n}\n");
    let names: Vec<&str> = pool(&c, "frac").candidates.iter().map(|c| c.name.as_str()).collect();
    assert!(names.contains(&"g6f.xlarge"), "{names:?}");
}

#[test]
fn an_nvidia_pool_never_admits_other_accelerators() {
    let c = solve("pool \"any\" preset=\"inference-on-demand\" {\n    gpu { memory-min \"1GiB\"; }\n    price-ratio-max 1000\n    max-accelerators 64\n}\n");
    let p = pool(&c, "any");
    assert!(p.candidates.iter().all(|c| !c.name.starts_with("inf") && !c.name.starts_with("trn") && !c.name.starts_with("g4ad")));
    assert_eq!(p.resource(), "nvidia.com/gpu");
    let c = solve("pool \"n\" preset=\"inference-on-demand\" {\n    neuron { name \"Inferentia2\"; }\n    max-accelerators 12\n}\n");
    let p = pool(&c, "n");
    assert!(p.candidates.iter().all(|c| c.name.starts_with("inf2")));
    assert_eq!(p.resource(), "aws.amazon.com/neuron");
    assert_eq!(p.taints[0].key, "aws.amazon.com/neuron");
}

#[test]
fn spot_pools_widen_for_diversity_and_ask_for_two_families() {
    let c = solve("budget usd-per-hour=100\npool \"s\" preset=\"batch-spot\" {\n    gpu { memory-min \"16GiB\"; per-node max=8; }\n}\n");
    let p = pool(&c, "s");
    let cheapest = p.candidates[0].usd_per_accelerator_hour;
    // Beyond the 1.6 price ratio to get closer to 15 types, never beyond 3×.
    assert!(p.candidates.iter().any(|c| c.usd_per_accelerator_hour > cheapest * 1.6), "the pool was widened");
    assert!(p.candidates.iter().all(|c| c.usd_per_accelerator_hour <= cheapest * 3.0 + 1e-9));
    assert!(p.candidates.len() > 10, "{}", p.candidates.len());
    let family = p.requirements.iter().find(|r| r.key == "karpenter.k8s.aws/instance-family").unwrap();
    assert_eq!(family.min_values, Some(2));
}

#[test]
fn weights_follow_priority_and_tier_order_and_keep_explicit_ones() {
    let a = format!("profile \"a\" priority=90\n{CLUSTER}budget usd-per-hour=50\npool \"a\" preset=\"inference-spot\" {{\n    gpu {{ name \"A10G\"; }}\n}}\n");
    let b = format!("profile \"b\" priority=10\n{CLUSTER}pool \"b\" preset=\"batch-spot\" {{\n    gpu {{ name \"T4\"; }}\n    max-accelerators 4\n    weight 5\n}}\n");
    let c = compile_profiles(&[("a", a), ("b", b)]).unwrap_or_else(|e| panic!("{e}"));
    let (spot, od, batch) = (pool(&c, "a-spot"), pool(&c, "a-on-demand"), pool(&c, "b"));
    assert_eq!(spot.weight, 100);
    assert!(od.weight < spot.weight && od.weight > batch.weight);
    assert_eq!(batch.weight, 5);
}

#[test]
fn equal_explicit_weights_are_an_error() {
    let body = format!("{CLUSTER}budget usd-per-hour=50\npool \"x\" preset=\"tiered\" {{\n    gpu {{ name \"A10G\"; }}\n    tier \"a\" capacity=\"spot\" {{ weight 50 }}\n    tier \"b\" capacity=\"on-demand\" {{ weight 50 }}\n}}\n");
    let CompileError::Profiles { diagnostics } = compile_profiles(&[("p", body)]).unwrap_err() else { panic!() };
    assert!(diagnostics.iter().any(|d| d.code == "E0153" && d.message.contains("both have weight 50")));
}

#[test]
fn maintenance_window_complement() {
    let w = |weekday, start, minutes| MaintenanceWindow { weekday, start_minute_of_day: start, duration_minutes: minutes, nodes: "1".into() };
    assert_eq!(outside_window(&w(0, 120, 240)), ("0 6 * * 0".into(), "164h".into()));
    // Saturday 22:00 for 4h ends Sunday 02:00.
    assert_eq!(outside_window(&w(6, 22 * 60, 240)), ("0 2 * * 0".into(), "164h".into()));
    assert_eq!(outside_window(&w(3, 90, 150)), ("0 4 * * 3".into(), "165h30m".into()));
}

#[test]
fn training_budgets_protect_the_pool() {
    let c = solve("budget usd-per-hour=200\npool \"t\" preset=\"training-on-demand\" {\n    gpu { name \"A100\"; per-node min=8; }\n}\n");
    let d = &pool(&c, "t").disruption;
    assert_eq!(d.expire_after, "Never");
    assert_eq!(d.consolidation_policy, "WhenEmpty");
    assert_eq!(d.termination_grace_period.as_deref(), Some("2h"));
    // Outside the window: no drift or consolidation (scoped by reasons, so empty nodes still go); always: one
    // node at a time. The separate `Drifted: 1` budget would change nothing next to the always-on `1`: gone.
    assert_eq!(d.budgets[0].nodes, "0");
    assert!(d.budgets[0].schedule.is_some() && d.budgets[0].duration.is_some());
    assert_eq!(d.budgets[0].reasons, ["Drifted", "Underutilized"]);
    assert!(d.budgets.iter().any(|b| b.schedule.is_none() && b.reasons.is_empty() && b.nodes == "1"), "an always-on budget");
    assert_eq!(d.budgets.len(), 2, "{:?}", d.budgets);
}

/// Issue 21 (200,000 pools in one file within seconds): tiers that select the same way share one selection, and
/// sharing never changes a decision. Each pool below is solved the same as when it is alone in its profile.
#[test]
fn pools_with_the_same_settings_share_one_selection_without_changing_any_decision() {
    let same = "    gpu { name \"A10G\" \"L4\"; per-node max=1; }\n";
    let body = format!(
        "budget usd-per-hour=100\npool \"a\" preset=\"batch-spot\" {{\n{same}}}\npool \"b\" preset=\"batch-spot\" {{\n{same}}}\npool \"c\" preset=\"batch-spot\" {{\n    gpu {{ name \"A10G\"; per-node max=1; }}\n}}\n"
    );
    let c = solve(&body);
    let (a, b, other) = (pool(&c, "a"), pool(&c, "b"), pool(&c, "c"));
    assert!(std::sync::Arc::ptr_eq(&a.candidates, &b.candidates), "same settings: one selection");
    assert!(!std::sync::Arc::ptr_eq(&a.candidates, &other.candidates), "another GPU name: its own selection");
    assert_ne!(a.candidates.len(), other.candidates.len());
    // Alone, each pool selects and ranks the same types, with the same removals.
    for (name, settings) in [("a", same.to_string()), ("c", "    gpu { name \"A10G\"; per-node max=1; }\n".to_string())] {
        let alone = solve(&format!("budget usd-per-hour=100\npool \"{name}\" preset=\"batch-spot\" {{\n{settings}}}\n"));
        let (shared, single) = (pool(&c, name), pool(&alone, name));
        assert_eq!(shared.candidates, single.candidates);
        assert_eq!(shared.removed.iter().map(|r| &r.constraint).collect::<Vec<_>>(), single.removed.iter().map(|r| &r.constraint).collect::<Vec<_>>());
    }
    // The budget split counts each of the three pools (a shared selection is priced once per pool, not once).
    let worst: f64 = [a, b, other].iter().map(|p| f64::from(p.limit) * worst_per_unit(p)).sum();
    assert!(worst <= 100.0 + 1e-6, "worst case {worst} over budget");
    assert!(worst + [a, b, other].iter().map(|p| worst_per_unit(p)).sum::<f64>() > 100.0, "the split uses the budget");
}

/// The diagnostics of a profile that must not compile: (code, location, message, help).
fn rejected(body: &str) -> Vec<(String, String, String, String)> {
    match compile_profiles(&[("p", format!("{CLUSTER}{body}"))]) {
        Err(CompileError::Profiles { diagnostics }) => diagnostics.iter().map(|d| (d.code.to_string(), d.location.clone(), d.message.clone(), d.help.clone().unwrap_or_default())).collect(),
        Ok(_) => panic!("compiled: {body}"),
        Err(e) => panic!("{e}"),
    }
}

fn requirement<'a>(p: &'a PoolPlan, key: &str) -> Option<&'a gpuplan::solve::Requirement> {
    p.requirements.iter().find(|r| r.key == key)
}

#[test]
fn require_on_instance_category_keeps_only_matching_types_and_the_nodepool_carries_it() {
    let c = solve("pool \"x\" preset=\"general\" {\n    max-accelerators 8\n    require \"karpenter.k8s.aws/instance-category\" \"In\" \"p\"\n}\n");
    let p = pool(&c, "x");
    assert!(!p.candidates.is_empty());
    assert!(p.candidates.iter().all(|t| t.name.starts_with('p')), "{:?}", p.candidates.iter().map(|t| &t.name).collect::<Vec<_>>());
    assert!(p.removed.iter().any(|r| r.constraint == "require karpenter.k8s.aws/instance-category In [p]" && r.types.iter().any(|t| t.starts_with("g"))), "{:?}", p.removed);
    let r = requirement(p, "karpenter.k8s.aws/instance-category").expect("the NodePool carries the requirement");
    assert_eq!((r.operator.as_str(), r.values.clone()), ("In", vec!["p".to_string()]));
}

#[test]
fn require_with_a_numeric_operator_compares_the_catalogs_label_as_karpenter_does() {
    let c = solve("pool \"x\" preset=\"general\" {\n    max-accelerators 64\n    price-ratio-max 100\n    require \"karpenter.k8s.aws/instance-cpu\" \"Gte\" 48\n}\n");
    let p = pool(&c, "x");
    assert!(!p.candidates.is_empty());
    assert!(p.candidates.iter().all(|t| t.vcpu >= 48), "{:?}", p.candidates.iter().map(|t| (&t.name, t.vcpu)).collect::<Vec<_>>());
    assert!(p.removed.iter().any(|r| r.constraint.starts_with("require karpenter.k8s.aws/instance-cpu Gte [48]")));
    // The local NVMe label is the instance store in GB (absent without one): Gte 1000 keeps the types with at least 1 TB.
    let c = solve("pool \"x\" preset=\"general\" {\n    max-accelerators 64\n    price-ratio-max 100\n    require \"karpenter.k8s.aws/instance-local-nvme\" \"Gte\" 1000\n}\n");
    let catalog = gpuplan::catalog::Catalog::load(std::path::Path::new("none"), "us-east-1").unwrap();
    let p = pool(&c, "x");
    assert!(!p.candidates.is_empty());
    for t in p.candidates.iter() {
        assert!(catalog.get(&t.name).and_then(|t| t.local_nvme_gb).is_some_and(|gb| gb >= 1000), "{} has less than 1 TB of NVMe", t.name);
    }
    assert!(p.removed.iter().any(|r| r.constraint == "require karpenter.k8s.aws/instance-local-nvme Gte [1000]" && r.types.contains(&"g4dn.xlarge".to_string())), "{:?}", p.removed);
}

#[test]
fn require_on_a_key_the_catalog_has_no_label_for_is_carried_and_noted_not_checked() {
    let c = solve("pool \"x\" preset=\"general\" {\n    max-accelerators 8\n    require \"karpenter.k8s.aws/instance-hypervisor\" \"In\" \"nitro\"\n}\n");
    let p = pool(&c, "x");
    assert!(requirement(p, "karpenter.k8s.aws/instance-hypervisor").is_some());
    assert!(p.notes.iter().any(|n| n.starts_with("require karpenter.k8s.aws/instance-hypervisor: the catalog has no such label")), "{:?}", p.notes);
    // A label of the user's is a node label requirement: carried, and not noted (it selects no instance type).
    let c = solve("pool \"x\" preset=\"general\" {\n    max-accelerators 8\n    require \"example.com/team\" \"In\" \"ml\" min-values=1\n}\n");
    let p = pool(&c, "x");
    assert_eq!(requirement(p, "example.com/team").map(|r| r.min_values), Some(Some(1)));
    assert!(p.notes.iter().all(|n| !n.starts_with("require")), "{:?}", p.notes);
}

#[test]
fn a_tiers_require_replaces_its_pools_on_the_same_key() {
    let c = solve("pool \"x\" preset=\"tiered\" {\n    max-accelerators 8\n    require \"karpenter.k8s.aws/instance-category\" \"In\" \"g\"\n    tier \"a\" capacity=\"spot\" { require \"karpenter.k8s.aws/instance-category\" \"In\" \"p\"; }\n    tier \"b\" capacity=\"on-demand\" { }\n}\n");
    assert_eq!(requirement(pool(&c, "x-a"), "karpenter.k8s.aws/instance-category").map(|r| r.values.clone()), Some(vec!["p".to_string()]));
    assert_eq!(requirement(pool(&c, "x-b"), "karpenter.k8s.aws/instance-category").map(|r| r.values.clone()), Some(vec!["g".to_string()]));
}

#[test]
fn require_refuses_what_karpenter_refuses_with_located_errors_and_did_you_mean() {
    let cases: [(&str, &str, &str); 7] = [
        ("require \"karpenter.k8s.aws/instance-categry\" \"In\" \"g\"", "E0280", "karpenter.k8s.aws/instance-category"),
        ("require \"instance-size\" \"In\" \"xlarge\"", "E0280", "did you mean `karpenter.k8s.aws/instance-size`?"),
        ("require \"karpenter.sh/capacity-type\" \"In\" \"spot\"", "E0281", "capacity"),
        ("require \"karpenter.k8s.aws/instance-cpu\" \"gte\" 8", "E0282", "did you mean `Gte`?"),
        ("require \"karpenter.k8s.aws/instance-cpu\" \"Gt\" \"eight\"", "E0283", "instance-cpu"),
        ("require \"karpenter.k8s.aws/instance-size\" \"Exists\" \"xlarge\"", "E0283", ""),
        ("require \"karpenter.k8s.aws/instance-size\" \"In\" \"xlarge\" min-values=2", "E0284", "minValues"),
    ];
    for (line, code, help) in cases {
        let found = rejected(&format!("pool \"x\" preset=\"general\" {{\n    max-accelerators 8\n    {line}\n}}\n"));
        let d = found.iter().find(|d| d.0 == code).unwrap_or_else(|| panic!("{line}: no {code} in {found:?}"));
        assert!(d.1.contains(":8:"), "{line}: located on its line: {d:?}");
        assert!(d.3.contains(help), "{line}: {d:?}");
    }
}

#[test]
fn a_require_no_type_satisfies_names_itself_in_e0140() {
    let found = rejected("pool \"x\" preset=\"general\" {\n    max-accelerators 8\n    require \"karpenter.k8s.aws/instance-category\" \"In\" \"c\"\n}\n");
    assert!(found.iter().any(|d| d.0 == "E0140" && d.2.contains("`require karpenter.k8s.aws/instance-category In [c]` removed the last")), "{found:?}");
}

fn nodepool_text<'a>(c: &'a Compilation, name: &str) -> &'a str {
    c.generated.iter().find(|g| g.kind == "NodePool" && g.path.to_string_lossy().ends_with(&format!("nodepool-{name}.yaml"))).map(|g| g.text.as_str()).unwrap_or_else(|| panic!("no NodePool {name}"))
}

#[test]
fn cpu_and_memory_limits_are_carried_beside_the_accelerator_limit_and_only_lower_the_worst_case() {
    let body = |limits: &str| format!("pool \"x\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"A10G\"; per-node max=1; }}\n    max-accelerators 16\n    {limits}\n}}\n");
    let free = solve(&body(""));
    let capped = solve(&body("limits cpu=16 memory=\"64Gi\""));
    let (f, p) = (pool(&free, "x"), pool(&capped, "x"));
    // The accelerator limit is sized as before: the cpu and memory limits do not buy or cost accelerators.
    assert_eq!((f.limit, p.limit), (16, 16));
    assert_eq!(p.cpu_limit, Some(16));
    let text = nodepool_text(&capped, "x");
    assert!(text.contains("nvidia.com/gpu: \"16\"") && text.contains("cpu: \"16\"") && text.contains("memory: 64Gi"), "{text}");
    // 16 vCPU hold at most 4 g5.xlarge-sized nodes: the bound is what the tightest limit allows, at the priciest $/vCPU.
    let node = |c: &gpuplan::solve::Candidate| c.ceiling_usd_per_hour + p.node_storage_usd_per_hour;
    let per_vcpu = p.candidates.iter().map(|c| node(c) / f64::from(c.vcpu)).fold(0.0, f64::max);
    let per_mib = p.candidates.iter().map(|c| node(c) / c.memory_mib as f64).fold(0.0, f64::max);
    let expected_bound = f.worst_case_usd_per_hour.min(16.0 * per_vcpu).min(64.0 * 1024.0 * per_mib);
    assert!((p.worst_case_usd_per_hour - expected_bound).abs() < 0.011, "{} vs {expected_bound}", p.worst_case_usd_per_hour);
    assert!(p.worst_case_usd_per_hour < f.worst_case_usd_per_hour);
    assert!(p.at_limit_usd_per_hour <= p.worst_case_usd_per_hour);
    // A generous limit changes no figure.
    let generous = solve(&body("limits cpu=100000"));
    assert_eq!(pool(&generous, "x").worst_case_usd_per_hour, f.worst_case_usd_per_hour);
}

#[test]
fn a_cpu_limit_below_a_shared_pools_backstop_replaces_it() {
    let body = |limits: &str| format!("pool \"x\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"A10G\"; per-node max=1; }}\n    time-slicing replicas=4\n    max-accelerators 8\n    {limits}\n}}\n");
    let backstop = pool(&solve(&body("")), "x").cpu_limit.expect("a shared pool has a cpu backstop");
    assert_eq!(pool(&solve(&body("limits cpu=8")), "x").cpu_limit, Some(8.min(backstop)));
    assert_eq!(pool(&solve(&body("limits cpu=100000")), "x").cpu_limit, Some(backstop));
}

#[test]
fn limits_refuse_what_is_not_a_quantity() {
    for (line, code) in [("limits cpu=\"lots\"", "E0285"), ("limits memory=\"0.5Mi\"", "E0285"), ("limits", "E0286")] {
        let found = rejected(&format!("pool \"x\" preset=\"general\" {{\n    max-accelerators 8\n    {line}\n}}\n"));
        assert!(found.iter().any(|d| d.0 == code && d.1.contains(":8:")), "{line}: {found:?}");
    }
}

#[test]
fn accelerator_taint_false_leaves_the_nodepool_untainted_and_lint_gp007_points_at_the_line() {
    let c = solve("pool \"x\" preset=\"general\" {\n    max-accelerators 8\n    accelerator-taint #false\n}\n");
    let p = pool(&c, "x");
    assert!(p.taints.is_empty(), "{:?}", p.taints);
    assert!(!nodepool_text(&c, "x").contains("taints:"));
    let gp007 = c.findings.iter().find(|f| f.code == "GP007").expect("GP007 warns");
    assert!(gp007.diagnostic.location.contains(":8:") && gp007.diagnostic.message.contains("accelerator-taint #false"), "{:?}", gp007.diagnostic);
    // The default keeps the taint, and no warning.
    let c = solve("pool \"x\" preset=\"general\" {\n    max-accelerators 8\n}\n");
    assert_eq!(pool(&c, "x").taints.first().map(|t| t.key.as_str()), Some("nvidia.com/gpu"));
    assert!(c.findings.iter().all(|f| f.code != "GP007"));
}

#[test]
fn user_data_is_carried_verbatim_and_may_not_set_the_device_plugin_a_time_sliced_pool_sets() {
    let bottlerocket = CLUSTER.replace("al2023@v20251023", "bottlerocket@1.50.0").replace("}\n", "    user-data \"[settings.kubernetes]\\nmax-pods = 110\\n\"\n}\n");
    let compile = |pool: &str| compile_profiles(&[("p", format!("{bottlerocket}pool \"x\" preset=\"general\" {{\n    max-accelerators 8\n    {pool}\n}}\n"))]);
    let c = compile("time-slicing replicas=4").unwrap_or_else(|e| panic!("{e}"));
    let class = c.generated.iter().find(|g| g.kind == "EC2NodeClass").unwrap();
    // The user's settings first, then gpuplan's time-slicing table.
    let user = class.text.find("max-pods = 110").expect("user data carried");
    let ours = class.text.find("device-sharing-strategy").expect("time-slicing settings");
    assert!(user < ours, "{}", class.text);
    let conflicting = CLUSTER.replace("al2023@v20251023", "bottlerocket@1.50.0").replace("}\n", "    user-data \"[settings.kubelet-device-plugins.nvidia]\\ndevice-sharing-strategy = \\\"none\\\"\\n\"\n}\n");
    match compile_profiles(&[("p", format!("{conflicting}pool \"x\" preset=\"general\" {{\n    max-accelerators 8\n    time-slicing replicas=4\n}}\n"))]) {
        Err(CompileError::Profiles { diagnostics }) => assert!(diagnostics.iter().any(|d| d.code == "E0287" && d.location.contains(":5:")), "{}", gpuplan::diagnostic::render_plain(&diagnostics)),
        other => panic!("compiled: {:?}", other.map(|_| ())),
    }
}
