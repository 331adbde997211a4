//! Browsing the catalog: the library's `CatalogQuery` on the bundled us-east-1 catalog (each filter against every
//! type it must keep or drop), and `gpuplan catalog list` / `catalog show` through the binary.

mod common;

use std::path::Path;
use std::process::Output;

use common::{stderr, stdout};

use gpuplan::catalog::query::{CatalogQuery, accelerator_names};
use gpuplan::catalog::{Arch, CapacityType, Catalog, EMBEDDED_US_EAST_1, InstanceType};

fn builtin() -> Catalog {
    Catalog::from_json(EMBEDDED_US_EAST_1, Path::new("us-east-1")).unwrap()
}

/// gpuplan run in the repository (its catalogs/).
fn gpuplan(args: &[&str]) -> Output {
    common::gpuplan(&common::repo(), args)
}

fn accelerated(catalog: &Catalog) -> impl Iterator<Item = &InstanceType> {
    catalog.instance_types.iter().filter(|t| !t.gpus.is_empty() || t.neuron.is_some())
}

fn names(rows: &[gpuplan::catalog::query::Row]) -> Vec<String> {
    rows.iter().map(|r| r.name.to_string()).collect()
}

#[test]
fn gpus_with_40_gib_or_more_are_l40s_a100_h100_class_and_never_l4() {
    let catalog = builtin();
    let rows = CatalogQuery { gpu_memory_min_mib: Some(40 * 1024), ..CatalogQuery::default() }.run(&catalog);
    let listed = names(&rows);
    for expected in ["g6e.xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5.4xlarge"] {
        assert!(listed.contains(&expected.to_string()), "{expected} missing from {listed:?}");
    }
    assert!(rows.iter().all(|r| r.accelerator.memory_mib >= 40 * 1024));
    for excluded in ["L4", "A10G", "T4", "T4g", "V100", "RTX PRO 4500"] {
        assert!(rows.iter().all(|r| r.accelerator.name != excluded), "{excluded} listed");
    }
}

#[test]
fn rows_are_sorted_by_on_demand_price_and_priceless_types_come_last() {
    let catalog = builtin();
    let rows = CatalogQuery::default().run(&catalog);
    let prices: Vec<Option<f64>> = rows.iter().map(|r| r.on_demand.as_ref().map(|q| q.usd_per_hour)).collect();
    let priced = prices.iter().take_while(|p| p.is_some()).count();
    assert!(priced > 0 && prices[priced..].iter().all(Option::is_none), "{prices:?}");
    assert!(prices[..priced].windows(2).all(|w| w[0].unwrap() <= w[1].unwrap()), "{prices:?}");
}

#[test]
fn every_accelerated_type_is_listed_once_and_nothing_else() {
    let catalog = builtin();
    let mut listed = names(&CatalogQuery::default().run(&catalog));
    listed.sort();
    let expected: Vec<String> = accelerated(&catalog).map(|t| t.name.clone()).collect();
    assert_eq!(listed, expected);
}

#[test]
fn the_gpu_filter_keeps_exactly_the_types_of_that_accelerator_for_every_name_in_any_case() {
    let catalog = builtin();
    for name in accelerator_names(&catalog, None) {
        let expected: Vec<&str> = accelerated(&catalog)
            .filter(|t| t.gpus.first().map(|g| g.name.as_str()).or(t.neuron.as_ref().map(|n| n.name.as_str())) == Some(name))
            .map(|t| t.name.as_str())
            .collect();
        for spelled in [name.to_string(), name.to_lowercase(), name.to_uppercase()] {
            let mut listed = names(&CatalogQuery { gpu: Some(spelled.clone()), ..CatalogQuery::default() }.run(&catalog));
            listed.sort();
            assert_eq!(listed, expected, "--gpu {spelled}");
        }
    }
}

#[test]
fn each_filter_keeps_exactly_the_types_that_satisfy_it() {
    let catalog = builtin();
    type Keeps = Box<dyn Fn(&InstanceType) -> bool>;
    let count = |t: &InstanceType| t.gpus.first().map(|g| g.count).or(t.neuron.as_ref().map(|n| n.count)).unwrap_or(0);
    let cases: Vec<(CatalogQuery, Keeps)> = vec![
        (CatalogQuery { gpus_min: Some(8), ..CatalogQuery::default() }, Box::new(move |t| count(t) >= 8)),
        (CatalogQuery { family: Some("G6".into()), ..CatalogQuery::default() }, Box::new(|t| t.family == "g6")),
        (CatalogQuery { arch: Some(Arch::Arm64), ..CatalogQuery::default() }, Box::new(|t| t.arch.contains(&Arch::Arm64))),
        (CatalogQuery { arch: Some(Arch::Amd64), ..CatalogQuery::default() }, Box::new(|t| t.arch.contains(&Arch::Amd64))),
        (CatalogQuery { capacity_type: Some(CapacityType::Spot), ..CatalogQuery::default() }, Box::new(|t| t.capacity_types.contains(&CapacityType::Spot))),
        (CatalogQuery { capacity_type: Some(CapacityType::OnDemand), ..CatalogQuery::default() }, Box::new(|t| t.capacity_types.contains(&CapacityType::OnDemand))),
    ];
    for (query, keeps) in cases {
        let mut listed = names(&query.run(&catalog));
        listed.sort();
        let expected: Vec<String> = accelerated(&catalog).filter(|t| keeps(t)).map(|t| t.name.clone()).collect();
        assert!(!expected.is_empty(), "{query:?} keeps nothing: a vacuous case");
        assert_eq!(listed, expected, "{query:?}");
    }
}

#[test]
fn spot_rows_are_sorted_by_spot_price_and_their_per_gpu_price_is_spot_and_estimated() {
    let catalog = builtin();
    let rows = CatalogQuery { capacity_type: Some(CapacityType::Spot), gpu: Some("L4".into()), ..CatalogQuery::default() }.run(&catalog);
    let spot: Vec<f64> = rows.iter().map(|r| r.spot.as_ref().unwrap().usd_per_hour).collect();
    assert!(spot.windows(2).all(|w| w[0] <= w[1]), "{spot:?}");
    let g6 = rows.iter().find(|r| r.name == "g6.xlarge").unwrap();
    let per_gpu = g6.per_accelerator.as_ref().unwrap();
    assert_eq!((per_gpu.usd_per_hour, per_gpu.estimate), (0.32192, true));
    assert!(!g6.on_demand.as_ref().unwrap().estimate, "us-east-1's on-demand prices are the price table's");
    // A fractional GPU has no price per whole GPU.
    assert!(rows.iter().find(|r| r.name == "g6f.large").unwrap().per_accelerator.is_none());
}

#[test]
fn catalog_list_answers_the_40_gib_question_in_one_command() {
    let o = gpuplan(&["catalog", "list", "--gpu-memory-min", "40GiB"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let first = out.lines().next().unwrap();
    for column in ["type", "GPU", "count", "GPU memory", "vCPU", "memory", "on-demand $/h", "spot $/h", "on-demand $/GPU-h", "zones"] {
        assert!(first.contains(column), "{column} not in {first}");
    }
    assert!(out.lines().any(|l| l.starts_with("p5.48xlarge ") && l.contains("H100") && l.contains("55.0400")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("g6e.xlarge ") && l.contains("L40S")), "{out}");
    assert!(!out.contains(" L4 ") && !out.contains("g6.xlarge"), "{out}");
    assert!(out.contains("* estimated (spot-estimate): ESTIMATE: spot = on-demand × 0.40"), "{out}");
}

#[test]
fn catalog_list_json_has_the_library_rows_and_markdown_a_table() {
    let o = gpuplan(&["catalog", "list", "--gpu", "h100", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let value: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let types: Vec<&str> = value["types"].as_array().unwrap().iter().map(|t| t["type"].as_str().unwrap()).collect();
    assert_eq!(types, names(&CatalogQuery { gpu: Some("H100".into()), ..CatalogQuery::default() }.run(&builtin())));
    assert_eq!(value["types"][0]["spot"]["estimate"], serde_json::Value::Bool(true));

    let o = gpuplan(&["catalog", "list", "--family", "p5", "--format", "markdown"]);
    assert!(stdout(&o).starts_with("| type | GPU | count |"), "{}", stdout(&o));
    assert!(stdout(&o).contains("| p5.48xlarge | H100 | 8 |"), "{}", stdout(&o));
}

#[test]
fn another_regions_catalog_is_read_from_the_catalogs_dir_and_its_estimated_on_demand_prices_are_marked() {
    let o = gpuplan(&["catalog", "list", "--region", "us-west-2", "--catalogs", "catalogs", "--gpu", "L4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().any(|l| l.starts_with("g6.xlarge ") && l.contains("0.8048*")), "{out}");
    assert!(out.contains("in the us-west-2 catalog") && out.contains("* estimated (on-demand-price-table)"), "{out}");
}

#[test]
fn catalog_usage_errors_are_plain_messages_with_exit_2() {
    for (args, expected) in [
        (&["catalog", "list", "--gpu", "A100-80GB"][..], "error: the us-east-1 catalog has no GPU or Neuron device named `A100-80GB`\ndid you mean `A100` (with `--gpu-memory-min \"80GiB\"`)?"),
        (&["catalog", "list", "--gpu", "h10"][..], "error: the us-east-1 catalog has no GPU or Neuron device named `h10`\ndid you mean `H100`?"),
        (&["catalog", "list", "--gpu-memory-min", "40GB"][..], "error: invalid value '40GB' for '--gpu-memory-min <SIZE>': unknown memory unit `GB`"),
        (&["catalog", "list", "--region", "eu-north-1"][..], "error: no catalog for region eu-north-1"),
        (&["catalog", "show", "g6.xlarg"][..], "error: the us-east-1 catalog has no instance type `g6.xlarg`\ndid you mean `g6.xlarge`?"),
    ] {
        let o = gpuplan(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).starts_with(expected), "{args:?}:\n{}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{args:?}");
    }
}

#[test]
fn catalog_show_prints_what_the_catalog_knows_of_the_type() {
    let o = gpuplan(&["catalog", "show", "p5.48xlarge"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for expected in [
        "GPU          8 × NVIDIA H100, 80 GiB (81920 MiB) each",
        "vCPU         192",
        "EFA          yes, up to 32 interfaces (vpc.amazonaws.com/efa)",
        "local NVMe   30400 GB",
        "network      2 ENIs × 50 IPv4 addresses (default network card)",
        "max pods     100 (ENI-limited, Karpenter's default)",
        "capacity     spot, on-demand, reserved",
        "us-east-1a    55.0400  22.0160*",
    ] {
        assert!(out.contains(expected), "{expected:?} not in:\n{out}");
    }
}

#[test]
fn catalog_show_works_for_every_accelerated_type() {
    let catalog = builtin();
    for t in accelerated(&catalog) {
        let o = gpuplan(&["catalog", "show", &t.name, "--format", "json"]);
        assert!(o.status.success(), "{}: {}", t.name, stderr(&o));
        let value: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(value["instance_type"]["name"], t.name.as_str());
        assert_eq!(value["instance_type"]["zones"].as_array().unwrap().len(), t.zones.len());
    }
}
