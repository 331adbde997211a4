//! Issue 32, items 2, 10 and 11: tiers and inference availability. A fallback tier carries the work alone (E0350),
//! on-demand fallback tiers of inference presets give pods a way back to spot, and inference workloads spread over
//! zones and hosts (blast radius).

mod common;

use gpuplan::compile::CompileError;
use gpuplan::diagnostic::render_plain;

/// An `inference-spot` pool of 24 GiB-class GPUs (spot widening admits g5.48xlarge at $2.036/GPU-h on demand) and one
/// workload of `replicas` 1-GPU replicas under a `budget` $/h.
fn spot_inference(budget: u32, replicas: u32, extra: &str) -> String {
    common::profile(
        "p",
        50,
        "al2023@v20251023",
        &format!(
            "budget usd-per-hour={budget}\npool \"llm\" preset=\"inference-spot\" {{\n    gpu {{ name \"A10G\" \"L4\" \"L40S\"; memory-min \"22GiB\"; per-node max=8; }}\n    arch \"amd64\"\n    generation-min 5\n    allow \"GP014\"\n{extra}}}\nworkload \"server\" namespace=\"inference\" pool=\"llm\" {{\n    selector \"app\" \"server\"\n    replicas min=2 max={replicas}\n}}\n"
        ),
    )
}

fn e0350(compiled: &common::Compiled) -> gpuplan::diagnostic::ProfileDiagnostic {
    let Err(CompileError::Profiles { diagnostics }) = &compiled.result else { panic!("compiled") };
    let found = common::with_code(diagnostics, "E0350");
    assert_eq!(found.len(), 1, "one diagnostic per pool, not per NodePool: {}", render_plain(diagnostics));
    found[0].clone()
}

// --- item 2: a fallback tier carries the work alone ----------------------------------------------------------------

// Karpenter schedules a NodePool's pods only while its limits leave room (sigs.k8s.io/karpenter@v1.14.1
// pkg/controllers/provisioning/scheduling/scheduler.go: "all available instance types exceed limits for nodepool",
// from `remainingResources`), so with spot dry (`simulate --unavailable '*:*:spot'`) only the on-demand tier's limit
// holds the workload. At $20/h each tier gets 5 GPUs (each node priced with its volumes): 10 replicas fit the two tiers together (E0180 passes) but not
// the fallback alone.
#[test]
fn fallback_tier_below_the_workload_is_e0350_saying_what_each_tier_holds() {
    let compiled = common::compile_one(spot_inference(20, 10, ""));
    let e = e0350(&compiled);
    assert!(e.is_error());
    assert!(e.location.ends_with(":8:6"), "at the pool line: {}", e.location);
    assert!(e.message.contains("llm-spot alone holds 5 of 10 replicas of inference/server (limit 5 nvidia.com/gpu)"), "{}", e.message);
    assert!(e.message.contains("llm-on-demand alone holds 5 of 10 replicas"), "{}", e.message);
    let help = e.help.unwrap();
    assert!(help.contains("need 10 nvidia.com/gpu on each tier") && help.contains("raise the budget from $20.00/h to about $35.00/h"), "{help}");
}

// The budget the help names is a real fix: at $35/h both tiers hold all 10 replicas, and explain says so.
#[test]
fn e0350_budget_figure_makes_every_tier_hold_the_workload_alone() {
    let compiled = common::compile_one(spot_inference(35, 10, ""));
    let c = compiled.ok();
    let placements = gpuplan::report::explain::workload_placements(c, &c.plan.clusters[0]);
    let alone: Vec<(String, u32, u32)> = placements[0].alone.iter().map(|t| (t.nodepool.clone(), t.held[0].replicas, t.held[0].max_replicas)).collect();
    assert_eq!(alone, [("llm-spot".to_string(), 10, 10), ("llm-on-demand".to_string(), 10, 10)]);
}

// When the budget leaves room for the work on every tier once the spot tier's dearest types go (its worst case is
// priced at its dearest admitted type, on demand), the help names them, and excluding them compiles.
#[test]
fn e0350_names_fewer_cheaper_spot_types_and_naming_them_in_the_spot_tier_compiles() {
    let compiled = common::compile_one(spot_inference(25, 8, ""));
    let help = e0350(&compiled).help.unwrap();
    assert!(help.contains("admit fewer, cheaper spot types: llm-spot's worst case is priced at its dearest type, g6.8xlarge ($2.1126/nvidia.com/gpu"), "{help}");
    assert!(help.contains("keeping the 10 types at most $1.8150/nvidia.com/gpu"), "{help}");
    assert!(help.contains("make the pool `tiered` and name them in its spot tier's `types`"), "{help}");
    let kept = "\"g6.xlarge\" \"g6.2xlarge\" \"g5.xlarge\" \"g6.12xlarge\" \"g5.2xlarge\" \"g6.4xlarge\" \"g5.12xlarge\" \"gr6.4xlarge\" \"g5.4xlarge\" \"g6.24xlarge\"";
    let body = format!("budget usd-per-hour=25\nallow \"GP006\"\npool \"llm\" preset=\"tiered\" {{\n    gpu {{ name \"A10G\" \"L4\" \"L40S\"; memory-min \"22GiB\"; per-node max=8; }}\n    arch \"amd64\"\n    generation-min 5\n    allow \"GP014\"\n    tier \"spot\" capacity=\"spot\" {{\n        types {kept}\n        weight 100\n    }}\n    tier \"on-demand\" capacity=\"on-demand\" {{\n        weight 90\n    }}\n}}\nworkload \"server\" namespace=\"inference\" pool=\"llm\" {{\n    selector \"app\" \"server\"\n    replicas min=2 max=8\n}}\n");
    let fixed = common::compile_one(common::profile("p", 50, "al2023@v20251023", &body));
    assert!(fixed.result.is_ok(), "{:?}", fixed.result.as_ref().err().map(|e| e.to_string()));
}

// Issue 32's severity rule: on a pool `adopt` wrote (`admit "as-required"`) the YAML already had the problem, so the
// shortfall is a warning and the compile succeeds. Without a budget the help names the tier limits.
#[test]
fn e0350_is_a_warning_on_an_adopted_pool() {
    let body = "allow \"GP006\"\npool \"vision\" preset=\"tiered\" {\n    gpu { name \"A10G\"; per-node max=1; }\n    admit \"as-required\"\n    tier \"spot\" capacity=\"spot\" {\n        max-accelerators 10\n        weight 100\n    }\n    tier \"fallback\" capacity=\"on-demand\" {\n        max-accelerators 4\n        weight 10\n    }\n}\nworkload \"detector\" namespace=\"vision\" pool=\"vision\" {\n    selector \"app\" \"detector\"\n    replicas 10\n}\n";
    let compiled = common::compile_one(common::profile("p", 50, "al2023@v20251023", body));
    let c = compiled.ok();
    let found: Vec<_> = c.findings.iter().filter(|f| f.code == "E0350").collect();
    assert_eq!(found.len(), 1);
    assert!(!found[0].diagnostic.is_error());
    assert!(found[0].diagnostic.message.contains("vision-fallback alone holds 4 of 10"), "{}", found[0].diagnostic.message);
    assert!(found[0].diagnostic.help.as_deref().unwrap().contains("raise max-accelerators to 10 (it caps vision-fallback)"));
}

// A reservation is the first tier, smaller by design (its size is bought): only the fallbacks must hold it all.
#[test]
fn reserved_first_tier_smaller_than_the_workload_is_not_e0350() {
    let text = std::fs::read_to_string(common::repo().join("profiles/training.kdl")).unwrap();
    let compiled = common::compile_one(text);
    let c = compiled.ok();
    let placements = gpuplan::report::explain::workload_placements(c, &c.plan.clusters[0]);
    let trainer = placements.iter().find(|w| w.name == "trainer").unwrap();
    assert_eq!(trainer.alone[0].nodepool, "training-reserved");
    assert_eq!(trainer.alone[0].held[0].replicas, 2, "two reserved p5 hold 2 of the 4 8-GPU replicas");
    assert!(c.findings.iter().all(|f| f.code != "E0350"));
}

// --- item 10: back from the fallback --------------------------------------------------------------------------------

fn disruption(c: &gpuplan::compile::Compilation, nodepool: &str) -> serde_json::Value {
    let m = c.manifests_of("ml").into_iter().find(|m| m.kind() == "NodePool" && m.object["metadata"]["name"] == nodepool).unwrap();
    m.object["spec"]["disruption"].clone()
}

// Karpenter v1.14.1 has a third policy, `Balanced` (sigs.k8s.io/karpenter@v1.14.1 pkg/apis/v1/nodepool.go:
// `ConsolidationPolicyBalanced`, scored with the fixed `BalancedK int32 = 2`; no feature gate in
// pkg/operator/options/options.go), and consolidation replaces an on-demand node by a spot one
// (pkg/controllers/disruption/consolidation.go: "consolidating a node from OD -> [OD,Spot]"). The on-demand fallback
// of `inference-spot` uses it, so pods return to spot after a shortage; the spot tier stays WhenEmpty. The compile
// validates the NodePool against the pinned CRD (src/crds/karpenter/karpenter.sh_nodepools.yaml lists Balanced).
#[test]
fn inference_spot_on_demand_fallback_consolidates_balanced() {
    let compiled = common::compile_one(spot_inference(35, 10, ""));
    let c = compiled.ok();
    let od = disruption(c, "llm-on-demand");
    assert_eq!((od["consolidationPolicy"].as_str(), od["consolidateAfter"].as_str()), (Some("Balanced"), Some("30m")));
    assert_eq!(disruption(c, "llm-spot")["consolidationPolicy"], "WhenEmpty");
    let crd = std::fs::read_to_string(common::repo().join("src/crds/karpenter/karpenter.sh_nodepools.yaml")).unwrap();
    assert!(crd.contains("- Balanced"), "the pinned CRD accepts Balanced");
}

// A consolidation the profile writes is kept: the preset's default changes, not the user's choice.
#[test]
fn explicit_consolidation_on_the_pool_is_kept_on_the_fallback() {
    let compiled = common::compile_one(spot_inference(35, 10, "    disruption { consolidation \"WhenEmpty\"; }\n"));
    assert_eq!(disruption(compiled.ok(), "llm-on-demand")["consolidationPolicy"], "WhenEmpty");
}

// GP001's advice on an on-demand fallback of spot is the policy that brings pods back (Balanced), not WhenEmpty.
#[test]
fn gp001_on_an_on_demand_fallback_advises_balanced() {
    let compiled = common::compile_one(spot_inference(35, 10, "    disruption { consolidation \"WhenEmptyOrUnderutilized\"; }\n"));
    let c = compiled.ok();
    let gp001: Vec<_> = c.findings.iter().filter(|f| f.code == "GP001").collect();
    let od = gp001.iter().find(|f| f.pool.as_deref() == Some("llm-on-demand")).unwrap();
    assert!(od.diagnostic.help.as_deref().unwrap().starts_with("use `consolidation \"Balanced\"` in the tier's disruption block"), "{:?}", od.diagnostic.help);
    let spot = gp001.iter().find(|f| f.pool.as_deref() == Some("llm-spot")).unwrap();
    assert!(spot.diagnostic.help.as_deref().unwrap().starts_with("use `consolidation \"WhenEmpty\"`"), "{:?}", spot.diagnostic.help);
}

// explain says how pods return from each fallback tier of a spot tier.
#[test]
fn explain_says_how_pods_return_from_the_fallback() {
    let compiled = common::compile_one(spot_inference(35, 10, ""));
    let text = gpuplan::report::explain::explain(compiled.ok(), None, gpuplan::report::explain::ExplainFormat::Table).unwrap();
    assert!(text.contains("way back   Balanced consolidation: 30m after a node's last pod change, Karpenter replaces it by a cheaper node of llm-spot"), "{text}");
}

// --- item 11: high availability ---------------------------------------------------------------------------------------

// The finding: 12 `llm-server` replicas without a spread pack 8 on one spot g6.48xlarge, all in one zone.
// simulate reports it per workload (a spot interruption ignores disruption budgets).
#[test]
fn simulate_reports_the_blast_radius_of_a_packed_workload() {
    let repo = common::repo();
    let out = common::gpuplan(&repo, &["simulate", "--manifests", "out/ml-prod", "--pods", "tests/fixtures/llm-server-12-replicas.yaml"]);
    let text = common::text(&out);
    assert!(text.contains("inference/llm-server: one node's interruption takes 8 of 12 replicas (llm-inference-spot-1), one zone's 12 (us-east-1a)"), "{text}");
}

// Inference presets tell pods to spread over zones and hosts ("pods need"), as preferences (ScheduleAnyway): Karpenter
// tries a preference as required before relaxing it (sigs.k8s.io/karpenter@v1.14.1
// pkg/controllers/provisioning/scheduling/preferences.go `removeTopologySpreadScheduleAnyway`).
#[test]
fn inference_pools_tell_pods_to_spread_over_zones_and_hosts() {
    let compiled = common::compile_one(spot_inference(35, 10, ""));
    let text = gpuplan::report::explain::explain(compiled.ok(), None, gpuplan::report::explain::ExplainFormat::Table).unwrap();
    assert!(text.contains("topologySpreadConstraint {topologyKey: topology.kubernetes.io/zone, maxSkew: 1, whenUnsatisfiable: ScheduleAnyway}"), "{text}");
    assert!(text.contains("topologySpreadConstraint {topologyKey: kubernetes.io/hostname, maxSkew: 1, whenUnsatisfiable: ScheduleAnyway}"), "{text}");
}

// compile's simulation carries the spread: the example's llm-server no longer packs onto one node.
#[test]
fn compiled_placement_of_llm_server_spreads_one_replica_per_node() {
    let text = std::fs::read_to_string(common::repo().join("profiles/llm-inference.kdl")).unwrap();
    let compiled = common::compile_one(text);
    let c = compiled.ok();
    let placements = gpuplan::report::explain::workload_placements(c, &c.plan.clusters[0]);
    let server = placements.iter().find(|w| w.name == "llm-server").unwrap();
    let per_node: Vec<usize> = server.nodeclaims.iter().map(|n| n.pods.iter().filter(|p| p.starts_with("inference/llm-server-")).count()).collect();
    assert_eq!(per_node.iter().sum::<usize>(), 12);
    assert!(per_node.iter().all(|&n| n == 1), "{per_node:?}");
    let zones: std::collections::BTreeSet<&str> = server.nodeclaims.iter().map(|n| n.zone.as_str()).collect();
    assert_eq!(zones.len(), 3);
}

// `max-per-node 2` caps the replicas on one node: a hard host spread of skew 2, which Karpenter satisfies by launching
// nodes (a node it may create is a host domain with none of the pods: sigs.k8s.io/karpenter@v1.14.1
// pkg/controllers/provisioning/scheduling/topologygroup.go). Without it, 4-GPU nodes take 4 replicas each.
#[test]
fn max_per_node_caps_replicas_on_one_node() {
    let profile = |cap: &str| {
        common::profile("p", 50, "al2023@v20251023", &format!("pool \"g\" preset=\"general\" {{\n    gpu {{ name \"L4\"; }}\n    types \"g6.12xlarge\"\n    max-accelerators 32\n}}\nworkload \"w\" namespace=\"ns\" pool=\"g\" {{\n    selector \"app\" \"w\"\n    replicas 8\n{cap}}}\n"))
    };
    let most = |cap: &str| {
        let compiled = common::compile_one(profile(cap));
        let c = compiled.ok();
        let placements = gpuplan::report::explain::workload_placements(c, &c.plan.clusters[0]);
        placements[0].nodeclaims.iter().map(|n| n.pods.len()).max().unwrap()
    };
    assert_eq!(most(""), 4);
    assert_eq!(most("    max-per-node 2\n"), 2);
    // 1 is a required anti-affinity (k8s.io/kubernetes pkg/scheduler/framework/plugins/interpodaffinity/filtering.go:
    // a node with a matching pod fails the filter), the strict cap a skew cannot give.
    assert_eq!(most("    max-per-node 1\n"), 1);
    // The workload's objects tell its pods the same (the gpuplan.dev/placement annotation).
    let compiled = common::compile_one(profile("    max-per-node 2\n"));
    let described = compiled.ok().plan.clusters[0].ops.workloads[0].placement.describe();
    assert!(described.contains("topologySpreadConstraint {topologyKey: kubernetes.io/hostname, maxSkew: 2, whenUnsatisfiable: DoNotSchedule}"), "{described}");
}

fn packed(extra: &str) -> String {
    common::profile("p", 50, "al2023@v20251023", &format!("pool \"g\" preset=\"general\" {{\n    gpu {{ name \"L4\"; }}\n    types \"g6.12xlarge\"\n    max-accelerators 32\n}}\nworkload \"w\" namespace=\"ns\" pool=\"g\" {{\n    selector \"app\" \"w\"\n    replicas 8\n    disruption-budget max-unavailable=1\n{extra}}}\n"))
}

// A PodDisruptionBudget bounds evictions only (k8s.io/kubernetes pkg/controller/disruption/disruption.go
// `disruptionsAllowed`); a spot interruption takes the node after a two-minute notice whatever it says
// (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html). 8 replicas on
// 4-GPU nodes put 4 on one node against max-unavailable=1: GP038 at the disruption-budget line.
#[test]
fn gp038_warns_when_one_node_holds_more_than_the_budget_allows() {
    let compiled = common::compile_one(packed(""));
    let c = compiled.ok();
    let found: Vec<_> = c.findings.iter().filter(|f| f.code == "GP038").collect();
    assert_eq!(found.len(), 1);
    let d = &found[0].diagnostic;
    assert!(d.location.contains(":15:"), "at the disruption-budget line: {}", d.location);
    assert!(d.message.contains("at 8 replicas one node holds 4 of workload `ns/w`") && d.message.contains("lets go at once (1)"), "{}", d.message);
    assert!(d.help.as_deref().unwrap().starts_with("add `max-per-node 1`"));
}

// Its fix: `max-per-node 1` puts one replica per node (8 nodes: the pool's limit must hold 8 × 4 GPUs, or E0180 says
// which replicas pend), and GP038 is silent.
#[test]
fn gp038_is_silent_when_max_per_node_fits_the_budget() {
    let compiled = common::compile_one(packed("    max-per-node 1\n"));
    assert!(compiled.ok().findings.iter().all(|f| f.code != "GP038"));
}
