//! The catalog importer against the real data (tests/fixtures/shared/data, vendored from the workplace shared data, origin in its README), and the
//! committed snapshot.

use std::path::{Path, PathBuf};

use gpuplan::catalog::{AcceleratorKind, Catalog, CapacityType};
use gpuplan::catalog::import::{import, ImportInputs, SOURCE_SPOT_ESTIMATE};

fn shared(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shared/data").join(path)
}

fn imported() -> Catalog {
    import(&ImportInputs {
        region: "us-east-1".into(),
        instance_types: shared("ec2-instance-types.json"),
        offerings: shared("offerings/availability-zone/us-east-1.json"),
        on_demand_prices: shared("ec2-ondemand-prices.json"),
        price_region: None,
    })
    .expect("the shared data imports")
}

#[test]
fn committed_snapshot_is_what_import_produces() {
    let fresh = imported();
    let committed = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs/us-east-1.json")).unwrap();
    assert!(
        fresh.to_json() == committed,
        "catalogs/us-east-1.json is stale: run `gpuplan catalog import --region us-east-1 --instance-types tests/fixtures/shared/data/ec2-instance-types.json --offerings tests/fixtures/shared/data/offerings/availability-zone/us-east-1.json --prices tests/fixtures/shared/data/ec2-ondemand-prices.json`"
    );
    // The embedded copy is the committed file.
    assert_eq!(gpuplan::catalog::EMBEDDED_US_EAST_1, committed);
}

#[test]
fn all_types_not_only_gpus() {
    let c = imported();
    assert_eq!(c.instance_types.len(), 1395);
    assert!(c.get("m5.large").is_some());
    assert_eq!(c.zones, ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f"]);
    let g5 = c.get("g5.xlarge").unwrap();
    assert_eq!(g5.gpus[0].name, "A10G");
    assert_eq!(g5.gpus[0].memory_mib, 22888);
    assert_eq!(g5.accelerators(AcceleratorKind::Nvidia), 1);
    assert_eq!(g5.on_demand.as_ref().unwrap().usd_per_hour, 1.006);
    let inf2 = c.get("inf2.48xlarge").unwrap();
    assert_eq!(inf2.accelerators(AcceleratorKind::Neuron), 12);
    assert_eq!(inf2.accelerators(AcceleratorKind::Nvidia), 0);
}

#[test]
fn fractional_gpu_types_are_flagged() {
    let c = imported();
    for name in ["g6f.large", "g6f.xlarge", "g6f.2xlarge", "g6f.4xlarge", "gr6f.4xlarge"] {
        let t = c.get(name).unwrap();
        assert!(t.has_partial_gpus(), "{name}");
        assert_eq!(t.accelerators(AcceleratorKind::Nvidia), 0, "{name}");
    }
    assert!(!c.get("g6.xlarge").unwrap().has_partial_gpus());
}

#[test]
fn every_price_records_its_source_and_spot_is_labelled_an_estimate() {
    let c = imported();
    let mut spot = 0;
    for t in &c.instance_types {
        if let Some(p) = &t.on_demand {
            assert!(c.sources.contains_key(&p.source), "{}: unknown source {}", t.name, p.source);
            assert!(!c.is_estimate(p));
        }
        for (zone, p) in &t.spot {
            assert!(t.zones.contains(zone));
            assert_eq!(p.source, SOURCE_SPOT_ESTIMATE);
            assert!(c.is_estimate(p), "{}: spot must be an estimate offline", t.name);
            spot += 1;
        }
        if !t.spot.is_empty() {
            assert!(t.capacity_types.contains(&CapacityType::Spot));
        }
    }
    assert!(spot > 1000);
    assert!(c.sources[SOURCE_SPOT_ESTIMATE].description.contains("ESTIMATE"));
    assert_eq!(c.sources["on-demand-price-table"].fetched_at.as_deref(), Some("2026-07-20T13:44:30Z"));
}

/// Category, family, generation and size must be exactly the labels Karpenter puts on nodes.
#[test]
fn name_parts_match_karpenter_labels() {
    let c = imported();
    let reference: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shared("karpenter-instance-types.json")).unwrap()).unwrap();
    let mut checked = 0;
    for entry in reference["instance_types"].as_array().unwrap() {
        let name = entry["name"].as_str().unwrap();
        let Some(t) = c.get(name) else { continue };
        let label = |k: &str| entry["labels"][format!("karpenter.k8s.aws/{k}")].as_str().unwrap().to_string();
        assert_eq!(t.category, label("instance-category"), "{name}");
        assert_eq!(t.family, label("instance-family"), "{name}");
        assert_eq!(t.generation.to_string(), label("instance-generation"), "{name}");
        assert_eq!(t.size, label("instance-size"), "{name}");
        checked += 1;
    }
    assert!(checked > 1300, "checked {checked}");
}

#[test]
fn snapshot_round_trips_and_digest_is_stable() {
    let c = imported();
    let again = Catalog::from_json(&c.to_json(), Path::new("x")).unwrap();
    assert_eq!(c, again);
    assert_eq!(c.digest(), again.digest());
    assert_eq!(c.digest().len(), 12);
}

#[test]
fn digest_ignores_fetch_times_but_not_prices() {
    let c = imported();
    let mut refetched = c.clone();
    for source in refetched.sources.values_mut() {
        source.fetched_at = Some("2030-01-01T00:00:00Z".into());
    }
    assert_eq!(c.digest(), refetched.digest(), "a refresh that changes nothing but the fetch time keeps the digest");
    let mut repriced = c.clone();
    repriced.instance_types[0].on_demand.as_mut().unwrap().usd_per_hour += 0.01;
    assert_ne!(c.digest(), repriced.digest());
}

/// compile reads the digest off the snapshot's text (`load_with_digest`) instead of serializing the catalog
/// again: for every committed snapshot it must be the catalog's own digest, fetch times left out.
#[test]
fn digest_of_a_loaded_snapshot_is_the_catalog_digest() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    for region in ["us-east-1", "us-west-2"] {
        let (catalog, digest) = Catalog::load_with_digest(&dir, region).unwrap();
        assert_eq!(digest, catalog.digest(), "{region}");
        assert!(catalog.sources.values().any(|s| s.fetched_at.is_some()), "{region}: the test needs fetch times to leave out");
    }
    // The built-in snapshot too (no file on disk).
    let (catalog, digest) = Catalog::load_with_digest(Path::new("/nonexistent"), "us-east-1").unwrap();
    assert_eq!(digest, catalog.digest());
}

/// `catalog import` applies `catalog refresh`'s shrink checks (src/catalog/plausible.rs): a truncated
/// DescribeInstanceTypes export (two types) would replace the 1,395-type snapshot and silently narrow every pool.
/// It is refused with exit 2 and the snapshot unchanged; `--accept-shrink` accepts it and says so.
#[test]
fn a_truncated_import_is_refused_and_leaves_the_snapshot_unchanged_unless_the_shrink_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = dir.path().join("us-east-1.json");
    let committed = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs/us-east-1.json")).unwrap();
    std::fs::write(&snapshot, &committed).unwrap();
    let all: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(shared("ec2-instance-types.json")).unwrap()).unwrap();
    let types: Vec<serde_json::Value> = all.as_array().cloned().or_else(|| all["InstanceTypes"].as_array().cloned()).unwrap_or_else(|| all.as_object().unwrap().values().cloned().collect());
    let two: Vec<&serde_json::Value> = types.iter().filter(|t| ["m5.large", "g5.xlarge"].contains(&t["InstanceType"].as_str().unwrap_or(""))).collect();
    assert_eq!(two.len(), 2);
    let truncated = dir.path().join("types.json");
    std::fs::write(&truncated, serde_json::to_string(&two).unwrap()).unwrap();
    let (offerings, prices) = (shared("offerings/availability-zone/us-east-1.json"), shared("ec2-ondemand-prices.json"));
    let import = |extra: &[&str]| {
        let mut args = vec!["catalog", "import", "--region", "us-east-1", "--out", dir.path().to_str().unwrap()];
        args.extend(["--instance-types", truncated.to_str().unwrap(), "--offerings", offerings.to_str().unwrap(), "--prices", prices.to_str().unwrap()]);
        args.extend(extra);
        std::process::Command::new(env!("CARGO_BIN_EXE_gpuplan")).args(&args).output().unwrap()
    };
    let refused = import(&[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("import of us-east-1 refused") && stderr.contains("the answer has 2 instance types") && stderr.contains("--accept-shrink"), "{stderr}");
    assert!(stderr.contains("accelerator families of the previous snapshot are missing"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&snapshot).unwrap(), committed, "the snapshot is unchanged");
    let accepted = import(&["--accept-shrink"]);
    assert!(accepted.status.success(), "{}", String::from_utf8_lossy(&accepted.stderr));
    assert!(String::from_utf8_lossy(&accepted.stderr).contains("accepted with --accept-shrink"));
    assert_eq!(Catalog::load(dir.path(), "us-east-1").unwrap().instance_types.len(), 2);
}
