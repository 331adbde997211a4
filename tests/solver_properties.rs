//! Solver properties over random intents and the REAL us-east-1 catalog ("solver depth" item 10).
//!
//! Each case writes 1–3 random profiles of one cluster (presets, GPU names from the catalog, memory-min,
//! per-node bounds, budgets, max-accelerators, time-slicing, named fractional types, explicit weights) and
//! compiles them. A failed compile must be `CompileError::Profiles` (never a panic, never another error).
//! A successful one must satisfy, for every cluster:
//! * each profile's worst case, recomputed as Σ limit × priciest candidate $/accelerator-hour, ≤ its budget;
//! * every pool's limit ≥ the schedulable accelerators of its largest allowed node (× time-slicing replicas);
//! * NodePool weights distinct within the cluster (plan and rendered output);
//! * instance-type lists non-empty and sorted (rendered requirement);
//! * no fractional-GPU type unless named in `types`;
//! * lint's output-drift rules stay silent on the solver's own output, and explain works.

mod common;

use std::collections::BTreeSet;
use std::sync::OnceLock;

use common::*;
use gpuplan::catalog::{Catalog, CapacityType};
use gpuplan::compile::CompileError;
use proptest::prelude::*;

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::load(&repo().join("catalogs"), "us-east-1").unwrap())
}

/// GPU model names of the catalog's whole-GPU NVIDIA types, and Neuron device names.
fn names() -> &'static (Vec<String>, Vec<String>) {
    static NAMES: OnceLock<(Vec<String>, Vec<String>)> = OnceLock::new();
    NAMES.get_or_init(|| {
        let c = catalog();
        let gpus: BTreeSet<String> = c
            .instance_types
            .iter()
            .filter(|t| !t.has_partial_gpus())
            .filter_map(|t| t.single_gpu_model())
            .filter(|g| g.manufacturer.eq_ignore_ascii_case("nvidia"))
            .map(|g| g.name.clone())
            .collect();
        let neuron: BTreeSet<String> = c.instance_types.iter().filter_map(|t| t.neuron.as_ref()).map(|n| n.name.clone()).collect();
        (gpus.into_iter().collect(), neuron.into_iter().collect())
    })
}

const FRACTIONAL: [&str; 3] = ["g6f.xlarge", "g6f.4xlarge", "gr6f.4xlarge"];
const WHOLE: [&str; 4] = ["g6.xlarge", "g5.xlarge", "g6.12xlarge", "g4dn.xlarge"];

#[derive(Debug, Clone)]
struct Accel {
    neuron: bool,
    names: Vec<String>,
    memory_min_gib: Option<u32>,
    per_node_min: Option<u32>,
    per_node_max: Option<u32>,
}

#[derive(Debug, Clone)]
struct PoolSpec {
    preset: &'static str,
    accel: Accel,
    /// For preset tiered: (capacity, GPU names) per tier.
    tiers: Vec<(&'static str, Vec<String>)>,
    max_accelerators: Option<u32>,
    time_slicing: Option<u32>,
    types: Vec<String>,
    weight: Option<u32>,
}

#[derive(Debug, Clone)]
struct ProfileSpec {
    priority: u32,
    budget: Option<u32>,
    pools: Vec<PoolSpec>,
}

fn accel() -> impl Strategy<Value = Accel> {
    let (gpus, neuron) = names().clone();
    (
        prop::bool::weighted(0.1),
        prop::sample::subsequence(gpus, 0..=3),
        prop::sample::subsequence(neuron, 0..=2),
        prop::option::weighted(0.5, prop::sample::select(vec![8u32, 16, 22, 24, 40, 44, 80])),
        prop::option::weighted(0.2, 1u32..=8),
        prop::option::weighted(0.5, prop::sample::select(vec![1u32, 2, 4, 8])),
    )
        .prop_map(|(is_neuron, gpus, neuron, memory_min_gib, per_node_min, per_node_max)| Accel {
            neuron: is_neuron,
            names: if is_neuron { neuron } else { gpus },
            memory_min_gib: if is_neuron { None } else { memory_min_gib },
            per_node_min,
            per_node_max,
        })
}

fn pool() -> impl Strategy<Value = PoolSpec> {
    let (gpus, _) = names().clone();
    let tier = (prop::sample::select(vec!["spot", "on-demand"]), prop::sample::subsequence(gpus, 0..=2));
    (
        prop::sample::select(vec!["general", "inference-spot", "inference-on-demand", "training-on-demand", "batch-spot", "tiered"]),
        accel(),
        prop::collection::vec(tier, 1..=3),
        prop::option::weighted(0.5, 1u32..=64),
        prop::option::weighted(0.15, prop::sample::select(vec![2u32, 4, 7])),
        prop::option::weighted(0.15, (prop::sample::select(FRACTIONAL.to_vec()), prop::sample::subsequence(WHOLE.to_vec(), 0..=2))),
        prop::option::weighted(0.1, 1u32..=100),
    )
        .prop_map(|(preset, accel, tiers, max_accelerators, time_slicing, types, weight)| PoolSpec {
            preset,
            time_slicing: if accel.neuron { None } else { time_slicing },
            accel,
            tiers: if preset == "tiered" { tiers } else { Vec::new() },
            max_accelerators,
            types: types.map(|(f, w)| std::iter::once(f).chain(w).map(String::from).collect()).unwrap_or_default(),
            weight,
        })
}

fn profile_spec() -> impl Strategy<Value = ProfileSpec> {
    (0u32..=200, prop::option::weighted(0.85, 5u32..=400), prop::collection::vec(pool(), 1..=2))
        .prop_map(|(priority, budget, pools)| ProfileSpec { priority, budget, pools })
}

fn quoted(v: &[String]) -> String {
    v.iter().map(|s| format!("\"{s}\"")).collect::<Vec<_>>().join(" ")
}

fn accel_kdl(a: &Accel, names: &[String]) -> String {
    let mut inner = Vec::new();
    if !names.is_empty() {
        inner.push(format!("name {}", quoted(names)));
    }
    if let Some(m) = a.memory_min_gib {
        inner.push(format!("memory-min \"{m}GiB\""));
    }
    let bounds: Vec<String> = [("min", a.per_node_min), ("max", a.per_node_max)].iter().filter_map(|(k, v)| v.map(|v| format!("{k}={v}"))).collect();
    if !bounds.is_empty() {
        inner.push(format!("per-node {}", bounds.join(" ")));
    }
    format!("{} {{ {} }}", if a.neuron { "neuron" } else { "gpu" }, inner.iter().map(|s| format!("{s}; ")).collect::<String>())
}

fn kdl(index: usize, p: &ProfileSpec) -> String {
    let mut body = String::new();
    if let Some(b) = p.budget {
        body.push_str(&format!("budget usd-per-hour={b}\n"));
    }
    for (j, pool) in p.pools.iter().enumerate() {
        body.push_str(&format!("pool \"p{index}-{j}\" preset=\"{}\" {{\n", pool.preset));
        body.push_str(&format!("    {}\n", accel_kdl(&pool.accel, &pool.accel.names)));
        if let Some(m) = pool.max_accelerators {
            body.push_str(&format!("    max-accelerators {m}\n"));
        }
        if let Some(r) = pool.time_slicing {
            body.push_str(&format!("    time-slicing replicas={r}\n"));
        }
        if !pool.types.is_empty() {
            body.push_str(&format!("    types {}\n", quoted(&pool.types)));
        }
        if let Some(w) = pool.weight {
            body.push_str(&format!("    weight {w}\n"));
        }
        for (k, (capacity, names)) in pool.tiers.iter().enumerate() {
            let gpu = if names.is_empty() || pool.accel.neuron { String::new() } else { accel_kdl(&pool.accel, names) };
            body.push_str(&format!("    tier \"t{k}\" capacity=\"{capacity}\" {{ {gpu} }}\n"));
        }
        body.push_str("}\n");
    }
    profile(&format!("p{index}"), p.priority, "al2023@v20251023", &body)
}

fn check(specs: &[ProfileSpec]) -> Result<bool, TestCaseError> {
    let files: Vec<(String, String)> = specs.iter().enumerate().map(|(i, p)| (format!("p{i}.kdl"), kdl(i, p))).collect();
    let refs: Vec<(&str, String)> = files.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let compiled = compile_profiles(&refs, &[]);
    let c = match &compiled.result {
        Ok(c) => c,
        Err(CompileError::Profiles { diagnostics }) => {
            prop_assert!(diagnostics.iter().any(|d| d.is_error()), "a failed compile reports an error");
            return Ok(false);
        }
        Err(other) => return Err(TestCaseError::fail(format!("compile failed with a non-profile error: {other}\n{files:#?}"))),
    };
    let catalog = catalog();
    for cluster in &c.plan.clusters {
        // Weights distinct within the cluster, in the plan and in the rendered NodePools.
        let weights: BTreeSet<u32> = cluster.pools.iter().map(|p| p.weight).collect();
        prop_assert_eq!(weights.len(), cluster.pools.len(), "weights distinct in cluster {}", cluster.name);
        let rendered: BTreeSet<u64> = c
            .manifests()
            .iter()
            .filter(|m| m.kind() == "NodePool")
            .map(|m| m.object["spec"]["weight"].as_u64().unwrap())
            .collect();
        prop_assert_eq!(rendered.len(), cluster.pools.len());

        for summary in &cluster.profiles {
            let pools: Vec<_> = cluster.pools.iter().filter(|p| p.profile == summary.name).collect();
            let worst: f64 = pools
                .iter()
                .map(|p| f64::from(p.limit) * p.candidates.iter().map(|c| c.usd_per_accelerator_hour).fold(0.0, f64::max))
                .sum();
            if let Some(budget) = summary.budget_usd_per_hour {
                prop_assert!(worst <= budget + 1e-6, "profile {}: worst case {worst} > budget {budget}", summary.name);
                // The summary adds per-pool figures rounded to cents: at most half a cent over per pool.
                let slack = 0.005 * pools.len() as f64 + 1e-9;
                prop_assert!(summary.worst_case_usd_per_hour <= budget + slack, "profile {} summary worst case over budget", summary.name);
            }
        }
        for pool in &cluster.pools {
            prop_assert!(!pool.candidates.is_empty(), "pool {} has candidates", pool.name);
            let largest = pool.candidates.iter().map(|c| c.accelerators).max().unwrap() * pool.replicas();
            prop_assert!(pool.limit >= largest, "pool {}: limit {} < largest node {largest}", pool.name, pool.limit);
            prop_assert!(pool.limit > 0);
            // No fractional type unless named.
            let profile = c.profiles.iter().find(|p| p.name.value == pool.profile).unwrap();
            let tier = profile.pools.iter().flat_map(|p| &p.tiers).find(|t| t.name.value == pool.name).unwrap();
            for cand in pool.candidates.iter() {
                let t = catalog.get(&cand.name).unwrap();
                if t.has_partial_gpus() {
                    prop_assert!(tier.settings.types.iter().any(|n| n.value == cand.name), "pool {}: fractional {} not named", pool.name, cand.name);
                }
                if pool.capacity_types.contains(&CapacityType::Spot) {
                    prop_assert!(!t.spot.is_empty(), "spot pool {} has {} without a spot price", pool.name, cand.name);
                }
            }
            // The rendered instance-type list: non-empty, sorted, the candidates.
            let manifests = c.manifests();
            let np = manifests
                .iter()
                .find(|m| m.kind() == "NodePool" && m.object["metadata"]["name"] == pool.name.as_str())
                .unwrap();
            let reqs = np.object["spec"]["template"]["spec"]["requirements"].as_array().unwrap();
            let types: Vec<&str> = reqs
                .iter()
                .find(|r| r["key"] == "node.kubernetes.io/instance-type")
                .and_then(|r| r["values"].as_array())
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            prop_assert!(!types.is_empty());
            prop_assert!(types.windows(2).all(|w| w[0] < w[1]), "pool {}: types sorted and unique: {:?}", pool.name, types);
            let mut cands: Vec<&str> = pool.candidates.iter().map(|c| c.name.as_str()).collect();
            cands.sort();
            prop_assert_eq!(cands, types);
        }
    }
    // Lint's output-drift rules never fire on the solver's own output; explain always works.
    let findings = gpuplan::report::lint::lint(c);
    for d in &findings {
        prop_assert!(
            !["GP004", "GP005", "GP007", "GP010", "GP011", "GP012", "GP013"].contains(&d.code.as_str()),
            "lint {} fired on solver output: {}\n{files:#?}",
            d.code,
            d.message
        );
    }
    gpuplan::report::explain::explain(c, None, gpuplan::report::explain::ExplainFormat::Json).unwrap();
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, max_shrink_iters: 200, ..ProptestConfig::default() })]

    #[test]
    fn solver_invariants_hold(specs in prop::collection::vec(profile_spec(), 1..=3)) {
        check(&specs)?;
    }
}

/// Not a property: makes sure the generator produces enough successful compiles to mean something.
#[test]
fn generator_yields_successful_compiles() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = prop::collection::vec(profile_spec(), 1..=3);
    let mut ok = 0;
    for _ in 0..12 {
        let specs = strategy.new_tree(&mut runner).unwrap().current();
        if check(&specs).unwrap() {
            ok += 1;
        }
    }
    assert!(ok >= 2, "only {ok} of 12 random intents compiled; the generator is too hostile to test the solver");
}
