//! `explain`: snapshots of both formats for the example profiles, plus the pieces a reader relies on.

mod common;

use common::*;
use gpuplan::compile::{compile, Compilation, CompileOptions};
use gpuplan::report::explain::{explain, explanation, ExplainError, ExplainFormat};

fn examples() -> Compilation {
    compile(&CompileOptions::default()).expect("the examples compile")
}

/// Snapshot text without the catalog digest, so a catalog refresh that changes no number used here does not
/// churn every snapshot.
fn redact(c: &Compilation, text: String) -> String {
    c.plan.clusters.iter().fold(text, |t, cluster| t.replace(&cluster.catalog_digest, "<digest>"))
}

#[test]
fn table_snapshots_per_example_profile() {
    let c = examples();
    for name in ["general-gpu", "inferentia", "llm-inference", "tiered-fallback", "training"] {
        let text = explain(&c, Some(name), ExplainFormat::Table).unwrap();
        insta::assert_snapshot!(format!("table-{name}"), redact(&c, text));
    }
}

#[test]
fn json_snapshot_of_all_examples() {
    let c = examples();
    let text = explain(&c, None, ExplainFormat::Json).unwrap();
    insta::assert_snapshot!("json-all", redact(&c, text.clone()));
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["clusters"].as_array().unwrap().len(), 4, "ml-batch-west (us-west-2), ml-prod, ml-research, ml-vision");
}

#[test]
fn deterministic() {
    let a = explain(&examples(), None, ExplainFormat::Table).unwrap();
    let b = explain(&examples(), None, ExplainFormat::Table).unwrap();
    assert_eq!(a, b);
}

#[test]
fn unknown_profile_suggests_a_name() {
    let c = examples();
    let err = explain(&c, Some("llm-inferense"), ExplainFormat::Table).unwrap_err();
    let ExplainError::UnknownProfile { suggestion, known, .. } = &err else { panic!("{err}") };
    assert_eq!(suggestion.as_deref(), Some("did you mean `llm-inference`?"));
    assert_eq!(known.len(), 7);
    assert_eq!(
        err.to_string(),
        "no profile `llm-inferense` in this compile (did you mean `llm-inference`?); profiles: batch-west, general-gpu, inferentia, llm-inference, notebooks, tiered-fallback, training"
    );
    let err = explain(&c, Some("zzzzzzzz"), ExplainFormat::Json).unwrap_err();
    assert!(!err.to_string().contains("did you mean"));
}

#[test]
fn spot_estimates_are_flagged_with_footnote() {
    let c = examples();
    let e = explanation(&c, Some("llm-inference")).unwrap();
    let p = &e.clusters[0].profiles[0];
    let spot = p.pools.iter().find(|p| p.name == "llm-inference-spot").unwrap();
    let od = p.pools.iter().find(|p| p.name == "llm-inference-on-demand").unwrap();
    assert!(spot.candidates.iter().all(|c| c.estimate && c.estimate_source.as_deref() == Some("spot-estimate")));
    assert!(od.candidates.iter().all(|c| !c.estimate && c.estimate_source.is_none()));
    // The at-limit cost uses the estimated spot prices; the worst case does not: spot is bounded by the
    // (real) on-demand price, since Karpenter sets no spot max price.
    assert!(spot.at_limit_is_estimate && p.at_limit_is_estimate);
    assert!(!spot.worst_case_is_estimate && !od.worst_case_is_estimate && !p.worst_case_is_estimate);
    assert_eq!(p.worst_case_bound, gpuplan::catalog::cost::Bound::Guaranteed);
    assert_eq!(e.estimate_sources.len(), 1);
    assert!(e.estimate_sources[0].description.starts_with("ESTIMATE: spot = on-demand"));
    let text = explain(&c, Some("llm-inference"), ExplainFormat::Table).unwrap();
    assert!(text.contains("* estimate [spot-estimate]: ESTIMATE: spot = on-demand"));
    // On-demand only: no footnote.
    let text = explain(&c, Some("training"), ExplainFormat::Table).unwrap();
    assert!(!text.contains('*'), "{text}");
}

#[test]
fn costs_add_up_and_respect_budget() {
    let c = examples();
    let e = explanation(&c, None).unwrap();
    for p in e.clusters.iter().flat_map(|c| &c.profiles) {
        let worst: f64 = p.pools.iter().map(|p| p.worst_case_usd_per_hour).sum();
        assert!((worst - p.worst_case_usd_per_hour).abs() < 0.01, "{}", p.name);
        if let Some(b) = p.budget_usd_per_hour {
            assert!(p.worst_case_usd_per_hour <= b + 1e-9);
            assert!(p.worst_case_budget_share.unwrap() <= 1.0);
        }
        for pool in &p.pools {
            let ranks: Vec<usize> = pool.candidates.iter().map(|c| c.rank).collect();
            assert_eq!(ranks, (1..=pool.candidates.len()).collect::<Vec<_>>());
            assert!(pool.candidates.windows(2).all(|w| w[0].usd_per_accelerator_hour <= w[1].usd_per_accelerator_hour));
        }
    }
}

#[test]
fn weight_reasons_name_explicit_weights_and_priorities() {
    let c = examples();
    let e = explanation(&c, Some("tiered-fallback")).unwrap();
    let pool = &e.clusters[0].profiles[0].pools[0];
    assert_eq!(pool.name, "vision-a10g-spot");
    assert!(pool.weight_explicit);
    assert_eq!(pool.weight_reason, "explicit `weight 100` at profiles/tiered-fallback.kdl:29:16");
    let e = explanation(&c, Some("llm-inference")).unwrap();
    let pool = &e.clusters[0].profiles[0].pools[1];
    assert_eq!(pool.name, "llm-inference-on-demand");
    assert!(pool.weight_reason.starts_with("assigned: profile priority 100 ranks 1 of 4 in cluster `ml-prod`, tier 2 of 2"), "{}", pool.weight_reason);
}

#[test]
fn lint_findings_are_listed_under_their_pool() {
    let c = compile_one(profile(
        "p",
        10,
        "al2023@latest",
        "allow \"GP050\"\nbudget usd-per-hour=40\npool \"web\" preset=\"batch-spot\" {\n    gpu { name \"T4\"; per-node max=1; }\n}\n",
    ));
    let e = explanation(c.ok(), Some("p")).unwrap();
    let p = &e.clusters[0].profiles[0];
    assert_eq!(p.findings.iter().map(|f| f.code.as_str()).collect::<Vec<_>>(), ["GP002"]);
    assert_eq!(p.pools[0].findings.iter().map(|f| f.code.as_str()).collect::<Vec<_>>(), ["GP006"]);
    let text = explain(c.ok(), Some("p"), ExplainFormat::Table).unwrap();
    assert!(text.contains("    lint\n      GP006 "), "{text}");
    assert!(text.contains("  lint\n    GP002 "), "{text}");
}
