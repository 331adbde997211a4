//! `explain --why-not TYPE` against the solver, and `explain --format markdown|json`: every catalog type for every
//! example NodePool, the markdown's headings and rows for every example pool, the JSON's shape against the schema
//! committed in docs/.

mod common;

use std::collections::BTreeSet;

use common::gpuplan;
use gpuplan::compile::{Compilation, CompileOptions, compile};
use gpuplan::report::explain::{ExplainError, ExplainFormat, Verdict, explain, explain_why_not, explanation, why_not};

fn examples() -> Compilation {
    compile(&CompileOptions::default()).expect("the examples compile")
}

fn repo() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The instance types of a NodePool as rendered in out/ (its `node.kubernetes.io/instance-type In` requirement).
fn rendered_types(cluster: &str, nodepool: &str) -> BTreeSet<String> {
    let path = repo().join(format!("out/{cluster}/nodepool-{nodepool}.yaml"));
    let yaml: serde_json::Value = serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let requirements = yaml["spec"]["template"]["spec"]["requirements"].as_array().unwrap();
    let types = requirements.iter().find(|r| r["key"] == "node.kubernetes.io/instance-type").unwrap_or_else(|| panic!("{}: no instance-type requirement", path.display()));
    assert_eq!(types["operator"], "In");
    types["values"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

/// The class test: every type of every catalog of the examples, for every example NodePool: "candidate" exactly
/// when out/ lists the type in the NodePool, and otherwise a removal naming its constraint, the type's figure and
/// the profile line (or, for the limit, its reason).
#[test]
fn why_not_says_candidate_exactly_for_the_rendered_instance_types() {
    let c = examples();
    let all: BTreeSet<String> = c.catalogs.values().flat_map(|catalog| catalog.instance_types.iter().map(|t| t.name.clone())).collect();
    assert!(all.len() > 500, "{} types", all.len());
    let answers = why_not(&c, None, &all.iter().cloned().collect::<Vec<_>>()).unwrap();
    let pools: usize = c.plan.clusters.iter().map(|cl| cl.pools.len()).sum();
    let (mut candidates, mut removed) = (0, 0);
    let mut rendered = std::collections::BTreeMap::new();
    for answer in &answers {
        assert_eq!(answer.pools.len(), pools, "{}: one answer per NodePool", answer.instance_type);
        for pool in &answer.pools {
            let rendered = rendered.entry((pool.cluster.clone(), pool.nodepool.clone())).or_insert_with(|| rendered_types(&pool.cluster, &pool.nodepool));
            let region = &c.plan.clusters.iter().find(|cl| cl.name == pool.cluster).unwrap().region;
            let context = format!("{} in {}/{}: {:?}", answer.instance_type, pool.cluster, pool.nodepool, pool.verdict);
            match &pool.verdict {
                Verdict::Candidate { rank, of, .. } => {
                    candidates += 1;
                    assert!(rendered.contains(&answer.instance_type), "{context}");
                    assert!(*rank >= 1 && rank <= of && *of == rendered.len(), "{context}");
                }
                Verdict::Removed { constraint, figure, location, says, reason } => {
                    removed += 1;
                    assert!(!rendered.contains(&answer.instance_type), "{context}");
                    assert!(!constraint.is_empty() && !figure.is_empty(), "{context}");
                    // A type in none of the solver's lists is one the kind filter left out: it has another kind.
                    if constraint.ends_with("(the pool's kind)") {
                        let plan = c.plan.clusters.iter().flat_map(|cl| &cl.pools).find(|p| p.name == pool.nodepool).unwrap();
                        let t = c.catalogs[region].get(&answer.instance_type).unwrap();
                        assert!(!gpuplan::solve::has_only(plan.accelerator, t), "{context}");
                    }
                    match location {
                        Some(at) => assert!(at.starts_with("profiles/") && says.as_ref().is_some_and(|s| !s.is_empty()), "{context}"),
                        None => assert!(constraint.starts_with("node accelerators ≤ limit") && reason.as_ref().is_some_and(|r| !r.is_empty()), "{context}"),
                    }
                }
                Verdict::NotInRegion { region: r } => {
                    assert_eq!(r, region, "{context}");
                    assert!(c.catalogs[region].get(&answer.instance_type).is_none(), "{context}");
                }
            }
        }
    }
    let listed: usize = rendered.values().map(BTreeSet::len).sum();
    assert_eq!(candidates, listed, "every rendered type of every NodePool is a candidate");
    assert!(removed > candidates);
}

/// The figures are the numbers the constraint compared: a memory minimum names the type's GPU memory, a price ratio
/// its $/accelerator-hour, and the kind filter the accelerators it has.
#[test]
fn why_not_names_the_numbers() {
    let c = examples();
    let text = explain_why_not(&c, Some("llm-inference"), &["g5.12xlarge".into(), "inf2.xlarge".into()], ExplainFormat::Table).unwrap();
    assert!(text.starts_with("why not g5.12xlarge (4 × A10G 22.4 GiB)?\n"), "{text}");
    assert!(text.contains("ml-prod/llm-inference/llm-inference-spot: candidate, rank "), "{text}");
    assert!(
        text.contains("ml-prod/llm-inference/llm-inference-on-demand: removed by `$/accelerator-hour ≤ 1.6 × cheapest ($0.8048) [price-ratio-max]` at profiles/llm-inference.kdl:"),
        "{text}"
    );
    assert!(text.contains("(`pool \"llm-inference\" preset=\"inference-spot\" {`): $1.4180/accelerator-hour, 1.76 × cheapest\n"), "{text}");
    assert!(text.contains("removed by `has nvidia.com/gpu and no other accelerator (the pool's kind)` at profiles/llm-inference.kdl:17:5 (`gpu {`): 1 × Inferentia2 32 GiB"), "{text}");
}

/// A budget that leaves room for fewer accelerators than a node has: the removal names the node's price and the
/// limit's reason (the budget).
#[test]
fn why_not_a_node_above_the_limit_names_its_price_and_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = common::ML_PROD_CLUSTER;
    let profile = format!(
        "profile \"p\"\n{cluster}\nbudget usd-per-hour=10\npool \"serve\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"A10G\"; }}\n    types \"g5.xlarge\" \"g5.48xlarge\"\n}}\n"
    );
    std::fs::write(dir.path().join("p.kdl"), profile).unwrap();
    let c = compile(&CompileOptions { profiles: vec![dir.path().join("p.kdl")], ..CompileOptions::default() }).unwrap();
    let text = explain_why_not(&c, None, &["g5.48xlarge".into(), "g5.2xlarge".into()], ExplainFormat::Table).unwrap();
    assert_eq!(
        text,
        "why not g5.48xlarge (8 × A10G 22.4 GiB)?\n  ml-prod/p/serve: removed by `node accelerators ≤ limit 4`: 8 nvidia.com/gpu per node, $16.29/h for one node; the limit: budget $10.00/h split evenly across the profile's 1 usage-based pool(s): Σ worst case ≤ budget\n\
         why not g5.2xlarge (1 × A10G 22.4 GiB)?\n  ml-prod/p/serve: removed by `type in [g5.xlarge, g5.48xlarge]` at PATH:12:11 (`types \"g5.xlarge\" \"g5.48xlarge\"`): not listed\n"
            .replace("PATH", &dir.path().join("p.kdl").display().to_string())
    );
}

#[test]
fn unknown_type_suggests_a_catalog_name() {
    let c = examples();
    let err = why_not(&c, None, &["g6.xlarg".into()]).unwrap_err();
    assert_eq!(err, ExplainError::UnknownType { name: "g6.xlarg".into(), suggestion: Some("did you mean `g6.xlarge`?".into()) });
    let out = gpuplan(&repo(), &["explain", "--why-not", "g6.xlarg"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error: no instance type `g6.xlarg` in the catalogs of this compile (did you mean `g6.xlarge`?)"), "{stderr}");
}

/// `--why-not a,b` and `--why-not a --why-not b` are the same request; every format answers it.
#[test]
fn why_not_takes_a_list_or_repeats_in_every_format() {
    let listed = gpuplan(&repo(), &["explain", "training", "--why-not", "p5.48xlarge,g6.xlarge"]);
    let repeated = gpuplan(&repo(), &["explain", "training", "--why-not", "p5.48xlarge", "--why-not", "g6.xlarge"]);
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    assert_eq!(listed.stdout, repeated.stdout);
    let text = String::from_utf8(listed.stdout).unwrap();
    assert_eq!(text.matches("why not ").count(), 2, "{text}");
    let md = gpuplan(&repo(), &["explain", "training", "--why-not", "g6.xlarge", "--format", "markdown"]);
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.starts_with("## Why not `g6.xlarge` (1 × L4 22.4 GiB)?\n\n| cluster | profile | NodePool | answer |\n"), "{md}");
    let json = gpuplan(&repo(), &["explain", "training", "--why-not", "g6.xlarge", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["why_not"][0]["instance_type"], "g6.xlarge");
    assert_eq!(json["why_not"][0]["pools"][0]["verdict"], "removed");
}

/// Markdown: a heading per cluster, profile and NodePool of every example, a table row per candidate, and the same
/// profile figures as the table format.
#[test]
fn markdown_has_a_heading_per_pool_and_a_row_per_candidate() {
    let c = examples();
    let e = explanation(&c, None).unwrap();
    let md = explain(&c, None, ExplainFormat::Markdown).unwrap();
    let table = explain(&c, None, ExplainFormat::Table).unwrap();
    for cluster in &e.clusters {
        assert!(md.contains(&format!("\n# Cluster `{}` (", cluster.name)) || md.starts_with(&format!("# Cluster `{}` (", cluster.name)), "{}", cluster.name);
        for p in &cluster.profiles {
            assert!(md.contains(&format!("\n## Profile `{}` ({}, priority {})\n", p.name, p.source, p.priority)), "{}", p.name);
            for pool in &p.pools {
                assert!(md.contains(&format!("\n### NodePool {} (pool {},", pool.name, pool.pool)), "{}", pool.name);
                for cand in &pool.candidates {
                    assert!(md.contains(&format!("| {} | {} | {} |", cand.rank, cand.name, cand.accelerators)), "{} in {}", cand.name, pool.name);
                }
            }
        }
    }
    // The same words: every labelled line of the table format is a row of the markdown.
    for line in table.lines().filter(|l| l.starts_with("  budget ") || l.starts_with("    limit ")) {
        let (label, text) = line.trim().split_once(char::is_whitespace).unwrap();
        assert!(md.contains(&format!("| {label} | {} |", text.trim().replace('*', "\\*"))), "{line}");
    }
}

/// The JSON's shape is docs/explain.schema.json: every example, and a why-not answer of each verdict.
#[test]
fn json_matches_the_documented_schema() {
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(repo().join("docs/explain.schema.json")).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let c = examples();
    let text = explain_why_not(&c, None, &["g6.xlarge".into(), "inf2.xlarge".into(), "p5.48xlarge".into()], ExplainFormat::Json).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let verdicts: BTreeSet<&str> = value["why_not"].as_array().unwrap().iter().flat_map(|w| w["pools"].as_array().unwrap()).map(|p| p["verdict"].as_str().unwrap()).collect();
    assert!(verdicts.contains("candidate") && verdicts.contains("removed"), "{verdicts:?}");
    let errors: Vec<String> = validator.iter_errors(&value).map(|e| format!("{} at {}", e, e.instance_path())).take(10).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // A removal lists every type it removed, not a sample.
    for removal in value["clusters"].as_array().unwrap().iter().flat_map(|c| c["profiles"].as_array().unwrap()).flat_map(|p| p["pools"].as_array().unwrap()).flat_map(|p| p["removed"].as_array().unwrap()) {
        assert_eq!(removal["count"].as_u64().unwrap() as usize, removal["types"].as_array().unwrap().len());
    }
}
